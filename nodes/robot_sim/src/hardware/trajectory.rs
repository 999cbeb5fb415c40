//! Joint trajectories: validation against the robot, and interpolation.
//!
//! Interpolation follows ros2_control's `joint_trajectory_controller`: between two knots that both
//! give positions, velocities and accelerations a quintic polynomial matches all three at both
//! ends; with positions and velocities a cubic Hermite polynomial; otherwise a straight line.
//! The first segment starts at the moment the trajectory is accepted, from the current state
//! (current positions, current velocities, zero accelerations), and ends at the first point.

use super::{JointSpec, SimConfig, SimError};

/// A joint trajectory (the plain-data twin of `trajectory_msgs/JointTrajectory`).
///
/// Between two points that both give velocities and accelerations the joints follow a quintic
/// polynomial, with velocities only a cubic Hermite polynomial, otherwise a straight line. The
/// first segment starts at acceptance from the current positions and velocities (zero
/// acceleration). A first point due at acceptance or earlier must match the current positions
/// within `trajectory_start_tolerance` and is replaced by them; every other point must be due
/// after acceptance.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Trajectory {
    /// Joints the points refer to, in the order of the point vectors.
    pub joint_names: Vec<String>,
    /// Waypoints, in strictly increasing `time_from_start` order.
    pub points: Vec<TrajectoryPoint>,
    /// Absolute time (s, on the clock of `now`) that `time_from_start` counts from;
    /// `0` means "when the trajectory is accepted".
    pub start_time: f64,
}

/// One waypoint (the plain-data twin of `trajectory_msgs/JointTrajectoryPoint`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TrajectoryPoint {
    /// Positions (rad or m), one per named joint.
    pub positions: Vec<f64>,
    /// Velocities (rad/s or m/s), one per named joint, or empty.
    pub velocities: Vec<f64>,
    /// Accelerations (rad/s² or m/s²), one per named joint, or empty (needs velocities).
    pub accelerations: Vec<f64>,
    /// Time after `start_time` at which the point is reached (s).
    pub time_from_start: f64,
}

/// Polynomial `c0 + c1 s + ... + c5 s^5` on the normalised segment time `s ∈ [0, 1]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Poly([f64; 6]);

impl Poly {
    /// Straight line from `p0` to `p1`.
    pub(crate) fn linear(p0: f64, p1: f64) -> Self {
        Self([p0, p1 - p0, 0.0, 0.0, 0.0, 0.0])
    }

    /// Cubic Hermite: value `p` and slope `m` (velocity × duration) at both ends.
    pub(crate) fn cubic(p0: f64, m0: f64, p1: f64, m1: f64) -> Self {
        let d = p1 - p0;
        Self([
            p0,
            m0,
            3.0 * d - 2.0 * m0 - m1,
            -2.0 * d + m0 + m1,
            0.0,
            0.0,
        ])
    }

    /// Quintic: value `p`, slope `m` (velocity × duration) and curvature `q`
    /// (acceleration × duration²) at both ends.
    pub(crate) fn quintic(p0: f64, m0: f64, q0: f64, p1: f64, m1: f64, q1: f64) -> Self {
        let d = p1 - p0;
        Self([
            p0,
            m0,
            0.5 * q0,
            10.0 * d - 6.0 * m0 - 4.0 * m1 - 0.5 * (3.0 * q0 - q1),
            -15.0 * d + 8.0 * m0 + 7.0 * m1 + 0.5 * (3.0 * q0 - 2.0 * q1),
            6.0 * d - 3.0 * m0 - 3.0 * m1 - 0.5 * (q0 - q1),
        ])
    }

    pub(crate) fn eval(&self, s: f64) -> f64 {
        self.0.iter().rev().fold(0.0, |acc, &c| acc * s + c)
    }

    pub(crate) fn derivative(&self) -> Self {
        let c = &self.0;
        Self([c[1], 2.0 * c[2], 3.0 * c[3], 4.0 * c[4], 5.0 * c[5], 0.0])
    }

    /// True when every value of the polynomial and of its derivative on `[0, 1]` is a finite
    /// number: the sums of the absolute coefficients bound them, so these sums must be finite.
    pub(crate) fn is_bounded(&self) -> bool {
        let sum = |p: &Poly| p.0.iter().map(|c| c.abs()).sum::<f64>();
        sum(self).is_finite() && sum(&self.derivative()).is_finite()
    }

    /// Smallest and largest value on `[0, 1]`: the ends, a dense sampling, and the roots of the
    /// derivative located by sign changes between samples and refined by bisection. `None` if
    /// any value met is not finite (NaN would otherwise slip through `min`/`max`).
    pub(crate) fn range_on_unit(&self) -> Option<(f64, f64)> {
        const SAMPLES: usize = 64;
        let d = self.derivative();
        let (mut lo, mut hi) = (self.eval(0.0), self.eval(0.0));
        let mut finite = lo.is_finite();
        let mut take = |v: f64| {
            finite &= v.is_finite();
            lo = lo.min(v);
            hi = hi.max(v);
        };
        let (mut s0, mut g0) = (0.0, d.eval(0.0));
        for i in 1..=SAMPLES {
            let s1 = i as f64 / SAMPLES as f64;
            let g1 = d.eval(s1);
            take(self.eval(s1));
            if g0 * g1 < 0.0 {
                let (mut a, mut b, mut ga) = (s0, s1, g0);
                for _ in 0..60 {
                    let m = 0.5 * (a + b);
                    let gm = d.eval(m);
                    if ga * gm <= 0.0 {
                        b = m;
                    } else {
                        a = m;
                        ga = gm;
                    }
                }
                take(self.eval(0.5 * (a + b)));
            }
            (s0, g0) = (s1, g1);
        }
        (finite && lo.is_finite() && hi.is_finite()).then_some((lo, hi))
    }
}

#[derive(Debug, Clone)]
struct Segment {
    duration: f64,
    polys: Vec<Poly>,
}

/// A validated trajectory in absolute time, ready to be sampled.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    /// Absolute knot times; `knots[0]` is the time of acceptance.
    knots: Vec<f64>,
    /// `segments[i]` runs from `knots[i]` to `knots[i + 1]`.
    segments: Vec<Segment>,
    /// Positions held after the end.
    final_positions: Vec<f64>,
}

impl Plan {
    /// Time of the last knot.
    pub(crate) fn end_time(&self) -> f64 {
        *self
            .knots
            .last()
            .expect("a plan has at least its start knot")
    }

    /// Positions and velocities at absolute time `t` (not before acceptance). Returns true once
    /// the trajectory is over: the joints then hold the last point with zero velocity.
    pub(crate) fn sample(&self, t: f64, pos: &mut [f64], vel: &mut [f64]) -> bool {
        if t >= self.end_time() {
            pos.copy_from_slice(&self.final_positions);
            vel.fill(0.0);
            return true;
        }
        let i = self
            .knots
            .partition_point(|&k| k <= t)
            .saturating_sub(1)
            .min(self.segments.len() - 1);
        let seg = &self.segments[i];
        let s = ((t - self.knots[i]) / seg.duration).clamp(0.0, 1.0);
        for ((p, v), poly) in pos.iter_mut().zip(vel.iter_mut()).zip(&seg.polys) {
            *p = poly.eval(s);
            *v = poly.derivative().eval(s) / seg.duration;
        }
        false
    }
}

/// One knot in the robot's joint order.
struct Knot {
    t: f64,
    p: Vec<f64>,
    v: Option<Vec<f64>>,
    a: Option<Vec<f64>>,
    /// Index of the trajectory point, `None` for the current state.
    point: Option<usize>,
}

/// Relative slack for interpolated values, which are computed, not given.
const SLACK: f64 = 1e-9;

fn check_finite(what: &str, names: &[String], values: &[f64]) -> Result<(), SimError> {
    for (name, &value) in names.iter().zip(values) {
        if !value.is_finite() {
            return Err(SimError::NotFinite {
                what: what.into(),
                joint: name.clone(),
                value,
            });
        }
    }
    Ok(())
}

/// Validates `traj` for a robot in state (`pos`, `vel`) at time `now` and builds its plan.
pub(crate) fn plan(
    traj: &Trajectory,
    joints: &[JointSpec],
    config: &SimConfig,
    now: f64,
    pos: &[f64],
    vel: &[f64],
) -> Result<Plan, SimError> {
    if !(traj.start_time.is_finite() && traj.start_time >= 0.0) {
        return Err(SimError::InvalidTime {
            what: "trajectory start time".into(),
            value: traj.start_time,
        });
    }
    if traj.points.is_empty() {
        return Err(SimError::EmptyTrajectory);
    }

    // Names: map every named joint to the robot's index.
    let mut index = Vec::with_capacity(traj.joint_names.len());
    for name in &traj.joint_names {
        let Some(j) = joints.iter().position(|js| &js.name == name) else {
            return Err(SimError::UnknownJoint { name: name.clone() });
        };
        if index.contains(&j) {
            return Err(SimError::DuplicateJoint { name: name.clone() });
        }
        index.push(j);
    }
    if index.is_empty() || (index.len() < joints.len() && !config.allow_partial_joints_goal) {
        let names = joints
            .iter()
            .enumerate()
            .filter(|(j, _)| !index.contains(j))
            .map(|(_, js)| js.name.clone())
            .collect();
        return Err(SimError::MissingJoints { names });
    }
    let names = &traj.joint_names;
    let m = names.len();

    // Points, one by one.
    for (k, pt) in traj.points.iter().enumerate() {
        let tfs = pt.time_from_start;
        if !(tfs.is_finite() && tfs >= 0.0) {
            return Err(SimError::InvalidTime {
                what: format!("trajectory point {k} time_from_start"),
                value: tfs,
            });
        }
        if k > 0 {
            let previous = traj.points[k - 1].time_from_start;
            if tfs <= previous {
                return Err(SimError::NonIncreasingTime {
                    point: k,
                    time: tfs,
                    previous,
                });
            }
        }
        for (field, values, optional) in [
            ("positions", &pt.positions, false),
            ("velocities", &pt.velocities, true),
            ("accelerations", &pt.accelerations, true),
        ] {
            if values.len() != m && !(optional && values.is_empty()) {
                return Err(SimError::LengthMismatch {
                    what: format!("trajectory point {k} {field}"),
                    expected: m,
                    got: values.len(),
                });
            }
        }
        if !pt.accelerations.is_empty() && pt.velocities.is_empty() {
            return Err(SimError::AccelerationsWithoutVelocities { point: k });
        }
        check_finite(
            &format!("trajectory point {k} position"),
            names,
            &pt.positions,
        )?;
        check_finite(
            &format!("trajectory point {k} velocity"),
            names,
            &pt.velocities,
        )?;
        check_finite(
            &format!("trajectory point {k} acceleration"),
            names,
            &pt.accelerations,
        )?;
        for (i, &j) in index.iter().enumerate() {
            let js = &joints[j];
            let (lower, upper) = js.bounds();
            let value = pt.positions[i];
            if value < lower || value > upper {
                return Err(SimError::PositionOutOfLimits {
                    what: format!("trajectory point {k} position"),
                    joint: js.name.clone(),
                    value,
                    lower,
                    upper,
                });
            }
            if let Some(&value) = pt.velocities.get(i) {
                if value.abs() > js.max_velocity {
                    return Err(SimError::VelocityOutOfLimits {
                        what: format!("trajectory point {k} velocity"),
                        joint: js.name.clone(),
                        value,
                        limit: js.max_velocity,
                    });
                }
            }
        }
    }
    let last = traj.points.last().expect("checked non-empty");
    if !config.allow_nonzero_velocity_at_trajectory_end {
        if let Some((name, &value)) = names.iter().zip(&last.velocities).find(|(_, v)| **v != 0.0) {
            return Err(SimError::NonzeroFinalVelocity {
                joint: name.clone(),
                value,
            });
        }
    }

    // Knots in the robot's joint order and absolute time.
    let base = if traj.start_time == 0.0 {
        now
    } else {
        traj.start_time
    };
    let n = joints.len();
    let mut knots = vec![Knot {
        t: now,
        p: pos.to_vec(),
        v: Some(vel.to_vec()),
        a: Some(vec![0.0; n]),
        point: None,
    }];
    for (k, pt) in traj.points.iter().enumerate() {
        let t = base + pt.time_from_start;
        if t <= now {
            if k == 0 {
                // Due now or earlier: acceptable only if the robot is there already; the
                // current state then stands in for the point (no jump).
                for (i, &j) in index.iter().enumerate() {
                    if (pt.positions[i] - pos[j]).abs() > config.trajectory_start_tolerance {
                        return Err(SimError::StartMismatch {
                            joint: joints[j].name.clone(),
                            current: pos[j],
                            first: pt.positions[i],
                            tolerance: config.trajectory_start_tolerance,
                        });
                    }
                }
                continue;
            }
            return Err(SimError::PointInPast {
                point: k,
                time: t,
                now,
            });
        }
        let previous = knots.last().expect("start knot").t;
        if t <= previous {
            // Distinct time_from_start values that collapse when added to a large start time.
            return Err(SimError::NonIncreasingTime {
                point: k,
                time: pt.time_from_start,
                previous: traj.points[k - 1].time_from_start,
            });
        }
        let fill = |values: &[f64], hold: &dyn Fn(usize) -> f64| -> Vec<f64> {
            let mut out: Vec<f64> = (0..n).map(hold).collect();
            for (i, &j) in index.iter().enumerate() {
                out[j] = values[i];
            }
            out
        };
        knots.push(Knot {
            t,
            p: fill(&pt.positions, &|j| pos[j]),
            v: (!pt.velocities.is_empty()).then(|| fill(&pt.velocities, &|_| 0.0)),
            a: (!pt.accelerations.is_empty()).then(|| fill(&pt.accelerations, &|_| 0.0)),
            point: Some(k),
        });
    }

    // Segments, checked against the limits along the whole interpolation.
    let mut segments = Vec::with_capacity(knots.len() - 1);
    for pair in knots.windows(2) {
        let (k0, k1) = (&pair[0], &pair[1]);
        let dt = k1.t - k0.t;
        let to = k1.point.expect("only the first knot is the current state");
        let mut polys = Vec::with_capacity(n);
        for (j, js) in joints.iter().enumerate() {
            let poly = match (&k0.v, &k1.v, &k0.a, &k1.a) {
                (Some(v0), Some(v1), Some(a0), Some(a1)) => Poly::quintic(
                    k0.p[j],
                    v0[j] * dt,
                    a0[j] * dt * dt,
                    k1.p[j],
                    v1[j] * dt,
                    a1[j] * dt * dt,
                ),
                (Some(v0), Some(v1), _, _) => Poly::cubic(k0.p[j], v0[j] * dt, k1.p[j], v1[j] * dt),
                _ => Poly::linear(k0.p[j], k1.p[j]),
            };
            // Huge velocities or accelerations (finite, but times dt or dt² beyond f64) would
            // make the polynomial overflow and its samples NaN, which no limit test catches.
            let ranges = if poly.is_bounded() {
                poly.range_on_unit().zip(poly.derivative().range_on_unit())
            } else {
                None
            };
            let Some(((lo, hi), (dlo, dhi))) = ranges else {
                return Err(SimError::InterpolationNotFinite {
                    point: to,
                    joint: js.name.clone(),
                    duration: dt,
                });
            };
            let (lower, upper) = js.bounds();
            let out_low = lower.is_finite() && lo < lower - SLACK * (1.0 + lower.abs());
            let out_high = upper.is_finite() && hi > upper + SLACK * (1.0 + upper.abs());
            if out_low || out_high {
                return Err(SimError::PositionOutOfLimits {
                    what: format!("interpolated position on the way to trajectory point {to}"),
                    joint: js.name.clone(),
                    value: if out_low { lo } else { hi },
                    lower,
                    upper,
                });
            }
            let peak = if dhi.abs() >= dlo.abs() { dhi } else { dlo } / dt;
            if !peak.is_finite() || peak.abs() > js.max_velocity * (1.0 + SLACK) {
                return Err(SimError::VelocityOutOfLimits {
                    what: format!("interpolated velocity on the way to trajectory point {to}"),
                    joint: js.name.clone(),
                    value: peak,
                    limit: js.max_velocity,
                });
            }
            polys.push(poly);
        }
        segments.push(Segment {
            duration: dt,
            polys,
        });
    }
    let final_positions = knots.last().expect("start knot").p.clone();
    Ok(Plan {
        knots: knots.iter().map(|k| k.t).collect(),
        segments,
        final_positions,
    })
}

#[cfg(test)]
impl Plan {
    /// Overwrites every coefficient with `value`, bypassing validation (tests of the state's
    /// own guard against non-finite values).
    pub(crate) fn corrupt(&mut self, value: f64) {
        for seg in &mut self.segments {
            for poly in &mut seg.polys {
                poly.0 = [value; 6];
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overflowing_polynomials_have_no_range() {
        // Finite coefficients whose sum overflows: the value at s = 1 is infinite.
        let big = Poly([0.0, 0.0, f64::MAX, f64::MAX, 0.0, 0.0]);
        assert!(!big.is_bounded());
        assert_eq!(big.range_on_unit(), None);
        // a·dt² overflowed to inf: the evaluation gives inf - inf = NaN, never a range.
        let nan = Poly::quintic(0.0, 0.0, 1e308 * 4.0, 0.0, 0.0, 0.0);
        assert!(nan.eval(1.0).is_nan());
        assert!(!nan.is_bounded());
        assert_eq!(nan.range_on_unit(), None);
        // The derivative alone may overflow (5 c5).
        let steep = Poly([0.0, 0.0, 0.0, 0.0, 0.0, f64::MAX / 2.0]);
        assert!(!steep.is_bounded());
        let fine = Poly::quintic(0.0, 1.0, -8.0, 0.2, 2.0, 9.0);
        assert!(fine.is_bounded() && fine.range_on_unit().is_some());
    }

    /// Coefficients of a polynomial in real time `t` on `[0, dur]`, with its derivatives.
    fn analytic(c: &[f64], t: f64) -> (f64, f64, f64) {
        let mut p = 0.0;
        let mut v = 0.0;
        let mut a = 0.0;
        for (i, &ci) in c.iter().enumerate() {
            let i32_ = i as i32;
            p += ci * t.powi(i32_);
            if i >= 1 {
                v += ci * i as f64 * t.powi(i32_ - 1);
            }
            if i >= 2 {
                a += ci * (i * (i - 1)) as f64 * t.powi(i32_ - 2);
            }
        }
        (p, v, a)
    }

    #[test]
    fn cubic_hermite_reproduces_any_cubic() {
        let c = [0.3, -0.7, 1.9, -1.1];
        let dur = 1.7;
        let (p0, v0, _) = analytic(&c, 0.0);
        let (p1, v1, _) = analytic(&c, dur);
        let poly = Poly::cubic(p0, v0 * dur, p1, v1 * dur);
        for i in 0..=50 {
            let t = dur * i as f64 / 50.0;
            let (p, v, _) = analytic(&c, t);
            let s = t / dur;
            assert!((poly.eval(s) - p).abs() < 1e-12, "t={t}");
            assert!((poly.derivative().eval(s) / dur - v).abs() < 1e-12, "t={t}");
        }
    }

    #[test]
    fn quintic_reproduces_any_quintic() {
        let c = [0.2, 0.5, -0.4, 0.9, -0.6, 0.15];
        let dur = 2.3;
        let (p0, v0, a0) = analytic(&c, 0.0);
        let (p1, v1, a1) = analytic(&c, dur);
        let poly = Poly::quintic(p0, v0 * dur, a0 * dur * dur, p1, v1 * dur, a1 * dur * dur);
        for i in 0..=50 {
            let t = dur * i as f64 / 50.0;
            let (p, v, a) = analytic(&c, t);
            let s = t / dur;
            assert!((poly.eval(s) - p).abs() < 1e-11, "t={t}");
            assert!((poly.derivative().eval(s) / dur - v).abs() < 1e-11, "t={t}");
            let acc = poly.derivative().derivative().eval(s) / (dur * dur);
            assert!((acc - a).abs() < 1e-10, "t={t}");
        }
    }

    #[test]
    fn range_matches_dense_brute_force() {
        let polys = [
            Poly::cubic(0.0, 3.0, 0.0, 3.0),
            Poly::cubic(1.0, -2.0, 0.5, 4.0),
            Poly::quintic(0.0, 1.0, -8.0, 0.2, 2.0, 9.0),
            Poly::linear(2.0, -1.0),
            Poly([0.1, 0.0, 0.0, 0.0, 0.0, 0.0]),
        ];
        for poly in polys {
            let (lo, hi) = poly.range_on_unit().unwrap();
            let n = 200_000;
            let (mut blo, mut bhi) = (f64::INFINITY, f64::NEG_INFINITY);
            for i in 0..=n {
                let v = poly.eval(i as f64 / n as f64);
                blo = blo.min(v);
                bhi = bhi.max(v);
            }
            // The analytic range contains every sample and is at most a hair wider.
            assert!(lo <= blo + 1e-15 && hi >= bhi - 1e-15, "{poly:?}");
            assert!(
                (lo - blo).abs() < 1e-9 && (hi - bhi).abs() < 1e-9,
                "{poly:?}"
            );
        }
    }
}
