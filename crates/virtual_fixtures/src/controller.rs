//! The complete control step: deadband → gain shaping → fixture (open or closed loop) →
//! eq. 8 → velocity limits → acceleration limits, on preallocated state.

use nalgebra::{Matrix6, Vector3, Vector6};

use crate::error::Error;
use crate::law::{closed_loop_direction, Compliance};
use crate::projection::{Projection, RankTolerance};
use crate::source::Guidance;

/// Input conditioning of the wrench `f = [force; torque]` (paper sec. VI: "careful gain
/// shaping to accommodate the differing scales of forces and torques").
///
/// The deadband is radial and continuous: a part with magnitude `m` becomes
/// `max(0, m − deadband) / m` times itself, so forces below the deadband give no motion and
/// there is no jump at its edge. The scales then make the parts commensurate:
/// `f_s = [force_scale · force; torque_scale · torque]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Shaping {
    /// Deadband on the force magnitude \[N\] (default 0).
    pub force_deadband: f64,
    /// Deadband on the torque magnitude [N·m] (default 0).
    pub torque_deadband: f64,
    /// Scale of the force part [1/N] (default 1).
    pub force_scale: f64,
    /// Scale of the torque part [1/(N·m)] (default 1).
    pub torque_scale: f64,
}

impl Default for Shaping {
    fn default() -> Self {
        Self {
            force_deadband: 0.0,
            torque_deadband: 0.0,
            force_scale: 1.0,
            torque_scale: 1.0,
        }
    }
}

fn deadband3(x: Vector3<f64>, db: f64) -> Vector3<f64> {
    if db <= 0.0 {
        return x;
    }
    let m = x.norm();
    if m <= db {
        Vector3::zeros()
    } else {
        x * ((m - db) / m)
    }
}

impl Shaping {
    /// Deadband, then scaling (see the type docs).
    pub fn apply(&self, f: &Vector6<f64>) -> Vector6<f64> {
        let lin =
            deadband3(f.fixed_rows::<3>(0).into_owned(), self.force_deadband) * self.force_scale;
        let ang =
            deadband3(f.fixed_rows::<3>(3).into_owned(), self.torque_deadband) * self.torque_scale;
        Vector6::new(lin.x, lin.y, lin.z, ang.x, ang.y, ang.z)
    }
}

/// Velocity and acceleration limits of the output twist. Each limit scales the whole twist
/// (or the whole change of twist) uniformly, so the direction, and with it a hard fixture's
/// subspace, is kept. `f64::INFINITY` disables a limit (the default).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    /// Largest linear speed [m/s].
    pub linear_velocity: f64,
    /// Largest angular speed [rad/s].
    pub angular_velocity: f64,
    /// Largest linear acceleration [m/s²].
    pub linear_acceleration: f64,
    /// Largest angular acceleration [rad/s²].
    pub angular_acceleration: f64,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            linear_velocity: f64::INFINITY,
            angular_velocity: f64::INFINITY,
            linear_acceleration: f64::INFINITY,
            angular_acceleration: f64::INFINITY,
        }
    }
}

/// Largest `s ∈ [0, 1]` with `s‖lin(x)‖ ≤ max_lin` and `s‖ang(x)‖ ≤ max_ang`.
pub fn uniform_scale(x: &Vector6<f64>, max_lin: f64, max_ang: f64) -> f64 {
    let l = x.fixed_rows::<3>(0).norm();
    let a = x.fixed_rows::<3>(3).norm();
    let mut s: f64 = 1.0;
    if l > max_lin {
        s = s.min(max_lin / l);
    }
    if a > max_ang {
        s = s.min(max_ang / a);
    }
    s
}

/// How the fixture uses the guidance.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Mode {
    /// No fixture: `v = c f` (eq. 1).
    Free,
    /// Open loop: eq. 8 with the guidance's `D`.
    OpenLoop,
    /// Closed loop: eq. 8 with `D_g` of eq. 11 and this gain `k_d ∈ [0, 1)`.
    ClosedLoop {
        /// Error gain `k_d`.
        k_d: f64,
    },
}

/// Settings of an [`AdmittanceController`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ControllerConfig {
    /// Compliances `c`, `c_τ`.
    pub compliance: Compliance,
    /// Open or closed loop.
    pub mode: Mode,
    /// Deadband and force/torque scales.
    pub shaping: Shaping,
    /// Output limits.
    pub limits: Limits,
    /// Rank tolerance of the projections.
    pub rank_tolerance: RankTolerance,
}

impl Default for ControllerConfig {
    fn default() -> Self {
        Self {
            compliance: Compliance { c: 1.0, c_tau: 0.0 },
            mode: Mode::OpenLoop,
            shaping: Shaping::default(),
            limits: Limits::default(),
            rank_tolerance: RankTolerance::default(),
        }
    }
}

impl ControllerConfig {
    /// Checks ranges: compliance (see [`Compliance::new`]), `k_d ∈ [0, 1)`, non-negative
    /// deadbands, finite scales, positive limits.
    pub fn validate(&self) -> Result<(), Error> {
        Compliance::new(self.compliance.c, self.compliance.c_tau)?;
        if let Mode::ClosedLoop { k_d } = self.mode {
            if !(0.0..1.0).contains(&k_d) {
                return Err(Error::OutOfRange {
                    what: "k_d",
                    value: k_d,
                    expected: "0 <= k_d < 1",
                });
            }
        }
        let s = &self.shaping;
        for (what, v) in [
            ("force_deadband", s.force_deadband),
            ("torque_deadband", s.torque_deadband),
        ] {
            if !v.is_finite() || v < 0.0 {
                return Err(Error::OutOfRange {
                    what,
                    value: v,
                    expected: "finite, >= 0",
                });
            }
        }
        for (what, v) in [
            ("force_scale", s.force_scale),
            ("torque_scale", s.torque_scale),
        ] {
            if !v.is_finite() {
                return Err(Error::NonFinite { what });
            }
        }
        let l = &self.limits;
        for (what, v) in [
            ("linear_velocity limit", l.linear_velocity),
            ("angular_velocity limit", l.angular_velocity),
            ("linear_acceleration limit", l.linear_acceleration),
            ("angular_acceleration limit", l.angular_acceleration),
        ] {
            if v.is_nan() || v <= 0.0 {
                return Err(Error::OutOfRange {
                    what,
                    value: v,
                    expected: "> 0 (infinity disables)",
                });
            }
        }
        Ok(())
    }
}

/// What a step did besides producing the twist.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct StepInfo {
    /// Rank of the projector used (of `D`, or of `D_g` in closed loop).
    pub rank: usize,
    /// Factor applied by the velocity limit (1 = not limited).
    pub velocity_scale: f64,
    /// Factor applied to the change of twist by the acceleration limit (1 = not limited).
    pub acceleration_scale: f64,
    /// The projector `[D]` (open loop) or `[D_g]` (closed loop) onto the preferred subspace the
    /// step used; `None` in free mode. Its complement `I − [D]` holds the directions a hard
    /// fixture forbids (used by a joint mapping that must not add motion there).
    pub preferred: Option<Matrix6<f64>>,
}

/// The virtual-fixture admittance controller: a pure step function on preallocated state (the
/// previous output twist, for the acceleration limit). No allocation per step.
#[derive(Debug, Clone)]
pub struct AdmittanceController {
    config: ControllerConfig,
    previous: Vector6<f64>,
}

impl AdmittanceController {
    /// A controller at rest.
    pub fn new(config: ControllerConfig) -> Result<Self, Error> {
        config.validate()?;
        Ok(Self {
            config,
            previous: Vector6::zeros(),
        })
    }

    /// Current settings.
    pub fn config(&self) -> &ControllerConfig {
        &self.config
    }

    /// Replaces the settings (checked); keeps the previous twist.
    pub fn set_config(&mut self, config: ControllerConfig) -> Result<(), Error> {
        config.validate()?;
        self.config = config;
        Ok(())
    }

    /// The last twist returned (zero after [`AdmittanceController::reset`]).
    pub fn previous(&self) -> &Vector6<f64> {
        &self.previous
    }

    /// Forgets the previous twist (e.g. after a safety stop, so the robot restarts from rest).
    pub fn reset(&mut self) {
        self.previous = Vector6::zeros();
    }

    /// Sets the previous twist, from which the acceleration limit ramps the next output (e.g.
    /// the measured twist of a robot that is already moving when the controller starts).
    /// A non-finite twist resets to rest.
    pub fn reset_to(&mut self, previous: Vector6<f64>) {
        self.previous = if previous.iter().all(|x| x.is_finite()) {
            previous
        } else {
            Vector6::zeros()
        };
    }

    /// One control period: from the measured wrench `f` ([N; N·m], base frame) and the
    /// guidance `(D, u)` at the current pose, the commanded twist ([m/s; rad/s], base frame).
    /// `dt` \[s\] is the period (for the acceleration limit).
    ///
    /// Errors on non-finite input or `dt ≤ 0`; the state is then left unchanged.
    pub fn step(
        &mut self,
        f: &Vector6<f64>,
        guidance: &Guidance,
        dt: f64,
    ) -> Result<(Vector6<f64>, StepInfo), Error> {
        if !f.iter().all(|x| x.is_finite()) {
            return Err(Error::NonFinite { what: "wrench" });
        }
        if !dt.is_finite() || dt <= 0.0 {
            return Err(Error::OutOfRange {
                what: "dt",
                value: dt,
                expected: "finite, > 0",
            });
        }
        guidance.check()?;
        let cfg = &self.config;
        let fs = cfg.shaping.apply(f);
        let (raw, rank, preferred) = match cfg.mode {
            Mode::Free => (fs * cfg.compliance.c, 6, None),
            Mode::OpenLoop => {
                let p = Projection::of_columns_unchecked(guidance.columns(), &cfg.rank_tolerance)
                    .unwrap_or_else(Projection::zero);
                (cfg.compliance.apply(&p, &fs), p.rank, Some(p.span))
            }
            Mode::ClosedLoop { k_d } => {
                let p = Projection::of_columns_unchecked(guidance.columns(), &cfg.rank_tolerance)
                    .unwrap_or_else(Projection::zero);
                let dg = closed_loop_direction(&p, &fs, &guidance.u, k_d);
                let pg = Projection::of_direction(&dg, &cfg.rank_tolerance);
                (cfg.compliance.apply(&pg, &fs), pg.rank, Some(pg.span))
            }
        };
        let l = &cfg.limits;
        let vs = uniform_scale(&raw, l.linear_velocity, l.angular_velocity);
        let limited = raw * vs;
        let delta = limited - self.previous;
        let as_ = uniform_scale(
            &delta,
            l.linear_acceleration * dt,
            l.angular_acceleration * dt,
        );
        let v = self.previous + delta * as_;
        self.previous = v;
        Ok((
            v,
            StepInfo {
                rank,
                velocity_scale: vs,
                acceleration_scale: as_,
                preferred,
            },
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn arb_vec() -> impl Strategy<Value = Vector6<f64>> {
        proptest::array::uniform6(-2.0f64..2.0).prop_map(Vector6::from)
    }

    #[test]
    fn deadband_is_continuous_and_radial() {
        let s = Shaping {
            force_deadband: 1.0,
            torque_deadband: 0.5,
            force_scale: 2.0,
            torque_scale: 10.0,
        };
        assert_eq!(
            s.apply(&Vector6::new(0.5, 0.5, 0.0, 0.3, 0.0, 0.0)),
            Vector6::zeros()
        );
        let out = s.apply(&Vector6::new(3.0, 0.0, 0.0, 0.0, 0.0, 1.5));
        assert!((out - Vector6::new(4.0, 0.0, 0.0, 0.0, 0.0, 10.0)).norm() < 1e-12);
        // continuity at the edge
        let out = s.apply(&Vector6::new(1.0 + 1e-9, 0.0, 0.0, 0.0, 0.0, 0.0));
        assert!(out.norm() < 1e-8);
    }

    #[test]
    fn config_validation() {
        let mut c = ControllerConfig {
            mode: Mode::ClosedLoop { k_d: 1.0 },
            ..Default::default()
        };
        assert!(c.validate().is_err());
        c.mode = Mode::ClosedLoop { k_d: 0.08 };
        assert!(c.validate().is_ok());
        c.limits.linear_velocity = 0.0;
        assert!(c.validate().is_err());
        c.limits.linear_velocity = f64::NAN;
        assert!(c.validate().is_err());
    }

    #[test]
    fn step_rejects_nan_and_keeps_state() {
        let mut ctl = AdmittanceController::new(ControllerConfig::default()).unwrap();
        let g = Guidance::from_columns(&[Vector6::x()], Vector6::zeros()).unwrap();
        ctl.step(&Vector6::x(), &g, 0.001).unwrap();
        let before = *ctl.previous();
        assert!(ctl.step(&Vector6::repeat(f64::NAN), &g, 0.001).is_err());
        assert!(ctl.step(&Vector6::x(), &g, 0.0).is_err());
        assert_eq!(*ctl.previous(), before);
    }

    #[test]
    fn limits_keep_direction() {
        let cfg = ControllerConfig {
            compliance: Compliance { c: 1.0, c_tau: 1.0 },
            mode: Mode::Free,
            limits: Limits {
                linear_velocity: 0.1,
                angular_velocity: 0.5,
                linear_acceleration: 1.0,
                angular_acceleration: 10.0,
            },
            ..Default::default()
        };
        let mut ctl = AdmittanceController::new(cfg).unwrap();
        let f = Vector6::new(3.0, 4.0, 0.0, 0.0, 0.0, 1.0);
        let g = Guidance::empty();
        let dt = 0.01;
        // acceleration-limited ramp: |Δv_lin| <= 1.0 * 0.01 per step
        let (v1, info) = ctl.step(&f, &g, dt).unwrap();
        assert!((v1.fixed_rows::<3>(0).norm() - 0.01).abs() < 1e-12);
        assert!(info.acceleration_scale < 1.0);
        let mut v = v1;
        for _ in 0..100 {
            v = ctl.step(&f, &g, dt).unwrap().0;
        }
        // settles at the velocity limit, direction of f
        assert!((v.fixed_rows::<3>(0).norm() - 0.1).abs() < 1e-12);
        assert!((v.normalize() - f.normalize()).norm() < 1e-12);
    }

    proptest! {
        /// A hard fixture with a fixed D never produces motion outside span(D), whatever the
        /// wrench sequence, limits included.
        #[test]
        fn hard_fixture_never_leaves_subspace(
            cols in proptest::collection::vec(arb_vec(), 1..4),
            forces in proptest::collection::vec(arb_vec(), 1..30),
            db in 0.0f64..0.5,
        ) {
            let cfg = ControllerConfig {
                compliance: Compliance { c: 0.7, c_tau: 0.0 },
                mode: Mode::OpenLoop,
                shaping: Shaping { force_deadband: db, torque_deadband: db, force_scale: 1.0, torque_scale: 3.0 },
                limits: Limits { linear_velocity: 0.5, angular_velocity: 1.0, linear_acceleration: 20.0, angular_acceleration: 50.0 },
                rank_tolerance: RankTolerance::default(),
            };
            let mut ctl = AdmittanceController::new(cfg).unwrap();
            let g = Guidance::from_columns(&cols, Vector6::zeros()).unwrap();
            let p = Projection::of_columns(&cols, &RankTolerance::default()).unwrap().unwrap();
            for f in &forces {
                let (v, _) = ctl.step(f, &g, 0.01).unwrap();
                prop_assert!(p.kernel_of(&v).norm() < 1e-9);
                prop_assert!(v.fixed_rows::<3>(0).norm() <= 0.5 + 1e-12);
                prop_assert!(v.fixed_rows::<3>(3).norm() <= 1.0 + 1e-12);
            }
        }
    }
}
