//! Force/torque handling between the sensor and the admittance law, on plain types.
//!
//! Per sample, in the sensor's frame `S` (the wrench message's `header.frame_id`):
//!
//! 1. **Filter**: a first-order exponential low-pass, `y += α (x − y)` with
//!    `α = 1 − exp(−2π f_c Δt)`, `Δt` the time between samples (stamps). This is the exact
//!    discretisation of `τ ẏ = x − y` with `τ = 1 / (2π f_c)` for a sample-and-hold input:
//!    its −3 dB frequency is `f_c` for sample rates well above `f_c` (measured in the tests:
//!    −3.0 dB ± 0.1 dB at 500 Hz sampling for `f_c` = 10 Hz); a step is followed within 1 %
//!    after `4.6 τ`. The first sample initialises the filter.
//! 2. **Tare** (`~/zero_ft`, [`WrenchProcessor::tare`]): `offset = filtered − gravity(pose)`,
//!    refused by the caller while the tool moves. Afterwards the compensated wrench is zero at
//!    the tare pose whatever the sensor's bias.
//! 3. **Gravity compensation** of a tool of mass `m` with centre of mass `c` (in `S`):
//!    `f_g = m Rᵀ g`, `τ_g = c × f_g` where `R` is `S`'s orientation in the base frame and `g`
//!    the gravity vector in the base frame; removed from the measurement. The sensor is taken to
//!    report the wrench its tool side receives, as ATI sensors do: a tool hanging at rest
//!    reads `f_g`.
//! 4. **Deadband per axis**: `x ↦ sign(x) max(0, |x| − d_i)` for each of the six components
//!    (continuous, no jump at the edge).
//!
//! Then the wrench is moved to the control point (the tool link's origin) in base axes with the
//! lever-arm term ([`shift_wrench`]). A change of `header.frame_id` re-expresses the filter
//! state and the tare offset in the new frame ([`reexpress`]), so neither jumps.

use nalgebra::{Isometry3, Point3, Vector3, Vector6};

/// Settings of a [`WrenchProcessor`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FtConfig {
    /// Cut-off frequency of the exponential filter [Hz] (> 0).
    pub cutoff: f64,
    /// Deadband of each component in the sensor frame [N, N, N, N m, N m, N m] (≥ 0).
    pub deadband: [f64; 6],
    /// Mass of the tool below the sensor [kg] (0: no gravity compensation).
    pub tool_mass: f64,
    /// Centre of mass of the tool in the sensor frame [m].
    pub tool_com: Vector3<f64>,
    /// Gravity in the base (root link) frame [m/s²].
    pub gravity: Vector3<f64>,
}

impl Default for FtConfig {
    fn default() -> Self {
        Self {
            cutoff: 1.0e4,
            deadband: [0.0; 6],
            tool_mass: 0.0,
            tool_com: Vector3::zeros(),
            gravity: Vector3::new(0.0, 0.0, -9.81),
        }
    }
}

/// The wrench `w` (force; torque about `from`'s origin, in `from`'s axes) as the same wrench
/// about `to`'s origin in `to`'s axes, both poses in one common frame.
pub fn reexpress(w: &Vector6<f64>, from: &Isometry3<f64>, to: &Isometry3<f64>) -> Vector6<f64> {
    let f = from.rotation * w.fixed_rows::<3>(0).into_owned();
    let t = from.rotation * w.fixed_rows::<3>(3).into_owned()
        + (from.translation.vector - to.translation.vector).cross(&f);
    let inv = to.rotation.inverse();
    let (f, t) = (inv * f, inv * t);
    Vector6::new(f.x, f.y, f.z, t.x, t.y, t.z)
}

/// A wrench measured in a sensor frame at pose `sensor` (base frame) as the equivalent wrench
/// about the point `point` (base frame), in base axes: `f_b = R f_s`,
/// `τ_b = R τ_s + (p_sensor − point) × f_b`.
pub fn shift_wrench(
    w: &Vector6<f64>,
    sensor: &Isometry3<f64>,
    point: &Point3<f64>,
) -> Vector6<f64> {
    let f = sensor.rotation * w.fixed_rows::<3>(0).into_owned();
    let t = sensor.rotation * w.fixed_rows::<3>(3).into_owned()
        + (sensor.translation.vector - point.coords).cross(&f);
    Vector6::new(f.x, f.y, f.z, t.x, t.y, t.z)
}

/// The weight of the tool as the sensor at `sensor` (base frame) reads it (see the module docs).
pub fn gravity_wrench(cfg: &FtConfig, sensor: &Isometry3<f64>) -> Vector6<f64> {
    if cfg.tool_mass == 0.0 {
        return Vector6::zeros();
    }
    let f = sensor.rotation.inverse() * (cfg.gravity * cfg.tool_mass);
    let t = cfg.tool_com.cross(&f);
    Vector6::new(f.x, f.y, f.z, t.x, t.y, t.z)
}

/// The continuous per-axis deadband `x ↦ sign(x) max(0, |x| − d)`.
pub fn deadband(w: &Vector6<f64>, d: &[f64; 6]) -> Vector6<f64> {
    Vector6::from_fn(|i, _| {
        let x = w[i];
        x.signum() * (x.abs() - d[i]).max(0.0)
    })
}

/// The filter coefficient for a sample `dt` seconds after the previous one.
pub fn filter_alpha(cutoff: f64, dt: f64) -> f64 {
    1.0 - (-std::f64::consts::TAU * cutoff * dt.max(0.0)).exp()
}

/// Filter, tare offset and frame of the sensor stream (see the module docs).
#[derive(Debug, Clone)]
pub struct WrenchProcessor {
    cfg: FtConfig,
    /// Filtered raw wrench and the time of its last sample [s].
    filtered: Option<(Vector6<f64>, f64)>,
    /// Tare offset (sensor frame).
    offset: Vector6<f64>,
}

impl WrenchProcessor {
    /// A processor that has seen no sample and has no offset.
    pub fn new(cfg: FtConfig) -> Self {
        Self {
            cfg,
            filtered: None,
            offset: Vector6::zeros(),
        }
    }

    /// The settings.
    pub fn config(&self) -> &FtConfig {
        &self.cfg
    }

    /// The tare offset (sensor frame).
    pub fn offset(&self) -> &Vector6<f64> {
        &self.offset
    }

    /// Forgets the filter state (the next sample initialises it); keeps the offset.
    pub fn reset_filter(&mut self) {
        self.filtered = None;
    }

    /// The sensor frame changed: re-expresses the filter state and the offset from the old
    /// frame (pose `from`) in the new one (pose `to`), both poses in the base frame now.
    pub fn change_frame(&mut self, from: &Isometry3<f64>, to: &Isometry3<f64>) {
        if let Some((y, _)) = &mut self.filtered {
            *y = reexpress(y, from, to);
        }
        self.offset = reexpress(&self.offset, from, to);
    }

    /// Feeds a raw sample taken at `t` [s]; returns the filtered wrench.
    pub fn update(&mut self, raw: &Vector6<f64>, t: f64) -> Vector6<f64> {
        let y = match self.filtered {
            None => *raw,
            Some((y, t0)) => y + (raw - y) * filter_alpha(self.cfg.cutoff, t - t0),
        };
        // a sample older than the previous one filters with Δt = 0 and keeps the newer time
        let t = self.filtered.map_or(t, |(_, t0)| t.max(t0));
        self.filtered = Some((y, t));
        y
    }

    /// The filtered wrench (`None` before the first sample).
    pub fn filtered(&self) -> Option<Vector6<f64>> {
        self.filtered.map(|(y, _)| y)
    }

    /// Filtered, minus offset and tool weight, deadband applied: the wrench the user applies,
    /// in the sensor frame at pose `sensor`.
    pub fn compensated(&self, sensor: &Isometry3<f64>) -> Option<Vector6<f64>> {
        let y = self.filtered()?;
        let w = y - self.offset - gravity_wrench(&self.cfg, sensor);
        Some(deadband(&w, &self.cfg.deadband))
    }

    /// Tare at the current pose: the filtered wrench minus the tool weight becomes the offset.
    /// `false` before the first sample.
    pub fn tare(&mut self, sensor: &Isometry3<f64>) -> bool {
        match self.filtered() {
            Some(y) => {
                self.offset = y - gravity_wrench(&self.cfg, sensor);
                true
            }
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::{Translation3, UnitQuaternion};

    fn pose(x: f64, y: f64, z: f64, r: f64, p: f64, yaw: f64) -> Isometry3<f64> {
        Isometry3::from_parts(
            Translation3::new(x, y, z),
            UnitQuaternion::from_euler_angles(r, p, yaw),
        )
    }

    #[test]
    fn filter_cutoff_is_minus_3_db() {
        // sinusoid at f_c through the filter at 500 Hz sampling: amplitude 1/sqrt(2)
        let (fs, fc) = (500.0, 10.0);
        let mut p = WrenchProcessor::new(FtConfig {
            cutoff: fc,
            ..FtConfig::default()
        });
        let mut peak: f64 = 0.0;
        for k in 0..5000 {
            let t = k as f64 / fs;
            let x = (std::f64::consts::TAU * fc * t).sin();
            let y = p.update(&Vector6::new(x, 0.0, 0.0, 0.0, 0.0, 0.0), t)[0];
            if t > 5.0 {
                peak = peak.max(y.abs());
            }
        }
        let db = 20.0 * peak.log10();
        assert!((db + 3.0).abs() < 0.1, "{db} dB at the cut-off");
        // a step reaches 99 % after 4.6 time constants, whatever the sample times
        let tau = 1.0 / (std::f64::consts::TAU * fc);
        let mut q = WrenchProcessor::new(FtConfig {
            cutoff: fc,
            ..FtConfig::default()
        });
        q.update(&Vector6::zeros(), 0.0);
        let mut t = 0.0;
        let mut y = 0.0;
        let mut k = 0;
        while t < 4.6 * tau {
            k += 1;
            t = (4.6 * tau).min(t + 0.0007 * (1 + k % 3) as f64);
            y = q.update(&Vector6::repeat(1.0), t)[0];
        }
        assert!((y - (1.0 - (-4.6f64).exp())).abs() < 1e-9, "{y}");
    }

    #[test]
    fn gravity_and_tare() {
        let cfg = FtConfig {
            tool_mass: 0.8,
            tool_com: Vector3::new(0.0, 0.01, 0.05),
            ..FtConfig::default()
        };
        let mut p = WrenchProcessor::new(cfg);
        // a tool hanging at rest, sensor rotated arbitrarily: the sensor reads the weight
        let s = pose(0.3, 0.1, 0.4, 0.4, -0.9, 0.3);
        let weight = gravity_wrench(&cfg, &s);
        assert!((weight.fixed_rows::<3>(0).norm() - 0.8 * 9.81).abs() < 1e-12);
        let bias = Vector6::new(0.3, -0.2, 0.1, 0.01, 0.0, -0.02);
        p.update(&(weight + bias), 0.0);
        // without a tare only the bias remains; after it nothing
        assert!((p.compensated(&s).unwrap() - bias).norm() < 1e-12);
        assert!(p.tare(&s));
        assert!(p.compensated(&s).unwrap().norm() < 1e-12);
        // in another orientation the weight changes; the compensation follows
        let s2 = pose(0.3, 0.1, 0.4, -1.0, 0.2, 2.0);
        let mut p2 = p.clone();
        p2.reset_filter();
        p2.update(&(gravity_wrench(&cfg, &s2) + bias), 1.0);
        assert!(p2.compensated(&s2).unwrap().norm() < 1e-12);
    }

    #[test]
    fn deadband_per_axis_and_frame_change() {
        let d = [0.5, 0.5, 0.5, 0.05, 0.05, 0.05];
        let w = Vector6::new(0.4, -1.5, 0.0, 0.06, -0.01, 0.0);
        let out = deadband(&w, &d);
        assert!((out - Vector6::new(0.0, -1.0, 0.0, 0.01, 0.0, 0.0)).norm() < 1e-15);
        // re-expressing and back is the identity; re-expressed wrenches act alike at the tool
        let a = pose(0.1, 0.0, 0.5, 0.3, 0.2, 0.1);
        let b = pose(0.1, 0.02, 0.47, -0.4, 0.0, 1.1);
        let w = Vector6::new(1.0, 2.0, -0.5, 0.1, -0.2, 0.05);
        let wb = reexpress(&w, &a, &b);
        assert!((reexpress(&wb, &b, &a) - w).norm() < 1e-12);
        let tool = Point3::new(0.2, 0.0, 0.3);
        assert!((shift_wrench(&w, &a, &tool) - shift_wrench(&wb, &b, &tool)).norm() < 1e-12);
        let mut p = WrenchProcessor::new(FtConfig::default());
        p.update(&w, 0.0);
        p.change_frame(&a, &b);
        assert!((p.filtered().unwrap() - wb).norm() < 1e-12);
    }
}
