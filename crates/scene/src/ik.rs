//! Closed-form inverse kinematics of the Stäubli RX60 (a 6R arm with a spherical wrist).
//!
//! Geometry (URDF frames of `urdf/rx60b.urdf`): joint 1 about the vertical axis at height
//! `d1`; joints 2 and 3 about parallel horizontal axes, upper arm `a2`, forearm `d4` (from
//! the elbow to the wrist centre, along the joint-4 axis); the wrist axes 4, 5, 6
//! (z, y, z) meet at the wrist centre; the flange (`tool0`) sits `d6` beyond it along
//! the joint-6 axis. With `R = Rz(q1) Ry(q2+q3) Rz(q4) Ry(q5) Rz(q6)` the flange pose is
//! `p = w + d6 R ez`, with the wrist centre
//! `w = Rz(q1) (a2 sin q2 + d4 sin(q2+q3), 0, d1 + a2 cos q2 + d4 cos(q2+q3))`.
//!
//! A reachable flange pose has up to eight solutions, one per [`ArmConfiguration`]:
//! shoulder (wrist centre in front of the joint-1 axis: [`Shoulder::Righty`], behind it:
//! [`Shoulder::Lefty`]), elbow (sign of `q3`) and wrist (sign of `q5`), Stäubli's
//! naming. Solutions outside the joint limits are dropped. Joints 4 and 6 are returned in
//! `(-π, π]` (the RX60 allows ±270°; add 2π yourself to unwind).
//!
//! Singular poses (wrist centre on the joint-1 axis: any `q1` works; `q5 = 0`: only
//! `q4 + q6` is defined) are reported as errors rather than answered with an arbitrary
//! pick.

use nalgebra::{Isometry3, Matrix3, Rotation3, Translation3, UnitQuaternion, Vector3};

/// Which side of the joint-1 axis the wrist centre is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Shoulder {
    /// Wrist centre in front of the shoulder (the arm plane's x > 0).
    Righty,
    /// Wrist centre behind the shoulder (reaching over backwards).
    Lefty,
}

/// Sign of the elbow joint `q3`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Elbow {
    /// `q3 >= 0`.
    Positive,
    /// `q3 < 0`.
    Negative,
}

/// Sign of the wrist joint `q5`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Wrist {
    /// `q5 > 0`.
    Positive,
    /// `q5 < 0` (the flipped wrist).
    Negative,
}

/// One of the eight arm configurations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ArmConfiguration {
    /// Shoulder side.
    pub shoulder: Shoulder,
    /// Elbow sign.
    pub elbow: Elbow,
    /// Wrist sign.
    pub wrist: Wrist,
}

impl ArmConfiguration {
    /// All eight configurations.
    pub const ALL: [ArmConfiguration; 8] = {
        const fn c(shoulder: Shoulder, elbow: Elbow, wrist: Wrist) -> ArmConfiguration {
            ArmConfiguration {
                shoulder,
                elbow,
                wrist,
            }
        }
        use Shoulder::{Lefty, Righty};
        [
            c(Righty, Elbow::Positive, Wrist::Positive),
            c(Righty, Elbow::Positive, Wrist::Negative),
            c(Righty, Elbow::Negative, Wrist::Positive),
            c(Righty, Elbow::Negative, Wrist::Negative),
            c(Lefty, Elbow::Positive, Wrist::Positive),
            c(Lefty, Elbow::Positive, Wrist::Negative),
            c(Lefty, Elbow::Negative, Wrist::Positive),
            c(Lefty, Elbow::Negative, Wrist::Negative),
        ]
    };
}

/// Why no joint vector is returned.
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
pub enum IkError {
    /// The target pose is not finite.
    #[error("the target pose is not finite")]
    NonFinite,
    /// The wrist centre is farther than the arm reaches (or closer than it folds).
    #[error(
        "the wrist centre is out of reach (arm spans [{min:.4}, {max:.4}] m, needed {needed:.4} m)"
    )]
    Unreachable {
        /// Shortest shoulder–wrist distance the arm can make.
        min: f64,
        /// Longest shoulder–wrist distance the arm can make (m).
        max: f64,
        /// Shoulder–wrist distance the target pose needs (m).
        needed: f64,
    },
    /// The wrist centre is on the joint-1 axis: joint 1 is undetermined.
    #[error("shoulder singularity: the wrist centre is on the joint-1 axis")]
    ShoulderSingular,
    /// Joint 5 is zero: only `q4 + q6` is determined.
    #[error("wrist singularity: q5 = 0, only q4 + q6 is defined")]
    WristSingular,
    /// The solution of this configuration violates a joint limit.
    #[error("joint {joint} at {value:.6} rad is outside its limits")]
    OutOfLimits {
        /// 1-based joint number.
        joint: usize,
        /// The joint value the solution needs (rad).
        value: f64,
    },
    /// No configuration gives a solution within the limits.
    #[error("no configuration reaches the pose within the joint limits")]
    NoSolution,
}

/// Closed-form IK of an RX60-type arm (see the module documentation).
#[derive(Clone, Debug, PartialEq)]
pub struct Rx60Ik {
    /// Shoulder height above the base frame (m).
    pub d1: f64,
    /// Upper-arm length (m).
    pub a2: f64,
    /// Elbow to wrist centre (m).
    pub d4: f64,
    /// Wrist centre to flange (m).
    pub d6: f64,
    /// Lower and upper position limits of joints 1..6 (rad).
    pub limits: [(f64, f64); 6],
}

/// Distance below which the wrist centre is taken to be on the joint-1 axis (m), and
/// `sin q5` below which the wrist is taken to be singular.
pub const SINGULARITY_EPS: f64 = 1e-9;

fn wrap(a: f64) -> f64 {
    let mut a = a % std::f64::consts::TAU;
    if a > std::f64::consts::PI {
        a -= std::f64::consts::TAU;
    } else if a <= -std::f64::consts::PI {
        a += std::f64::consts::TAU;
    }
    a
}

fn ry(a: f64) -> Matrix3<f64> {
    *Rotation3::from_axis_angle(&Vector3::y_axis(), a).matrix()
}
fn rz(a: f64) -> Matrix3<f64> {
    *Rotation3::from_axis_angle(&Vector3::z_axis(), a).matrix()
}

impl Rx60Ik {
    /// The Stäubli RX60B of `urdf/rx60b.urdf` (d1 0.341, a2 0.290, d4 0.310, d6 0.065 m,
    /// limits ±160°, ±127.5°, ±134.5°, ±270°, −109.5°..+120.5°, ±270°).
    pub fn rx60b() -> Self {
        let d = f64::to_radians;
        Rx60Ik {
            d1: 0.341,
            a2: 0.290,
            d4: 0.310,
            d6: 0.065,
            limits: [
                (-d(160.0), d(160.0)),
                (-d(127.5), d(127.5)),
                (-d(134.5), d(134.5)),
                (-d(270.0), d(270.0)),
                (-d(109.5), d(120.5)),
                (-d(270.0), d(270.0)),
            ],
        }
    }

    /// Builds the solver for a kinematic model with the RX60 joint layout, taking the
    /// joint limits from the model and checking (forward kinematics on a few
    /// configurations) that the flange frame `flange` agrees with the closed form within
    /// 1e-9 m / rad. Errors if the model is not an RX60-type arm.
    pub fn for_robot(
        robot: &rpq_kinematics::Robot,
        flange: &str,
    ) -> Result<Self, crate::error::SceneError> {
        if robot.dof() != 6 {
            return Err(crate::error::SceneError::Invalid(format!(
                "RX60 IK needs 6 joints, `{}` has {}",
                robot.name(),
                robot.dof()
            )));
        }
        let mut ik = Rx60Ik::rx60b();
        let half = std::f64::consts::FRAC_PI_2;
        // Elbow at 90°: flange at (d4 + d6, 0, d1 + a2); wrist bent down as well: flange
        // at (d4, 0, d1 + a2 - d6); shoulder at 90°: flange at (a2 + d4 + d6, 0, d1).
        let p1 = robot.link_pose(flange, &[0.0, 0.0, half, 0.0, 0.0, 0.0])?;
        let p2 = robot.link_pose(flange, &[0.0, 0.0, half, 0.0, half, 0.0])?;
        let p3 = robot.link_pose(flange, &[0.0, half, 0.0, 0.0, 0.0, 0.0])?;
        ik.d6 = p1.translation.z - p2.translation.z;
        ik.d4 = p2.translation.x;
        ik.d1 = p3.translation.z;
        ik.a2 = p1.translation.z - ik.d1;
        for (k, l) in robot.joint_limits().iter().enumerate() {
            ik.limits[k] = (l.lower, l.upper);
        }
        // Verify on a few configurations.
        let samples = [
            [0.3, -0.4, 0.9, 0.5, 0.7, -0.2],
            [-1.2, 0.8, -0.6, -2.0, -0.9, 1.4],
            [2.0, 0.1, 1.7, 1.0, 1.5, 3.0],
        ];
        for q in samples {
            let fk = robot.link_pose(flange, &q)?;
            let mine = ik.forward(&q);
            let dp = (fk.translation.vector - mine.translation.vector).norm();
            let dr = fk.rotation.angle_to(&mine.rotation);
            if dp > 1e-9 || dr > 1e-9 {
                return Err(crate::error::SceneError::Invalid(format!(
                    "`{}` is not an RX60-type arm (closed form differs from FK by {dp:.3e} m, {dr:.3e} rad)",
                    robot.name()
                )));
            }
        }
        Ok(ik)
    }

    /// Flange pose of `q` from the closed form (same as the URDF's forward kinematics).
    pub fn forward(&self, q: &[f64; 6]) -> Isometry3<f64> {
        let r = rz(q[0]) * ry(q[1] + q[2]) * rz(q[3]) * ry(q[4]) * rz(q[5]);
        let w = rz(q[0])
            * Vector3::new(
                self.a2 * q[1].sin() + self.d4 * (q[1] + q[2]).sin(),
                0.0,
                self.d1 + self.a2 * q[1].cos() + self.d4 * (q[1] + q[2]).cos(),
            );
        let p = w + self.d6 * r.column(2);
        Isometry3::from_parts(
            Translation3::from(p),
            UnitQuaternion::from_rotation_matrix(&Rotation3::from_matrix_unchecked(r)),
        )
    }

    /// The configuration a joint vector is in.
    pub fn configuration_of(&self, q: &[f64; 6]) -> ArmConfiguration {
        let r = self.a2 * q[1].sin() + self.d4 * (q[1] + q[2]).sin();
        ArmConfiguration {
            shoulder: if r >= 0.0 {
                Shoulder::Righty
            } else {
                Shoulder::Lefty
            },
            elbow: if q[2] >= 0.0 {
                Elbow::Positive
            } else {
                Elbow::Negative
            },
            wrist: if q[4] >= 0.0 {
                Wrist::Positive
            } else {
                Wrist::Negative
            },
        }
    }

    /// The joint vector reaching flange pose `target` (in the robot's base frame) in
    /// configuration `config`, within the joint limits.
    pub fn solve(
        &self,
        target: &Isometry3<f64>,
        config: ArmConfiguration,
    ) -> Result<[f64; 6], IkError> {
        let q = self.solve_unlimited(target, config)?;
        for (k, (&v, &(lo, hi))) in q.iter().zip(&self.limits).enumerate() {
            if !(lo..=hi).contains(&v) {
                return Err(IkError::OutOfLimits {
                    joint: k + 1,
                    value: v,
                });
            }
        }
        Ok(q)
    }

    /// Every within-limits solution, with its configuration (at most eight). Errors if
    /// the pose is unreachable, on the shoulder singularity, or if no configuration
    /// gives a non-singular solution within the limits.
    pub fn solve_all(
        &self,
        target: &Isometry3<f64>,
    ) -> Result<Vec<(ArmConfiguration, [f64; 6])>, IkError> {
        let mut out = Vec::new();
        let mut last = IkError::NoSolution;
        for c in ArmConfiguration::ALL {
            match self.solve(target, c) {
                Ok(q) => out.push((c, q)),
                Err(
                    e @ (IkError::Unreachable { .. }
                    | IkError::ShoulderSingular
                    | IkError::NonFinite),
                ) => return Err(e),
                Err(e @ IkError::WristSingular) => last = e,
                Err(_) => {}
            }
        }
        if out.is_empty() {
            Err(if last == IkError::WristSingular {
                last
            } else {
                IkError::NoSolution
            })
        } else {
            Ok(out)
        }
    }

    /// The solution of `config` ignoring joint limits (joints 4, 6 in `(-π, π]`).
    pub fn solve_unlimited(
        &self,
        target: &Isometry3<f64>,
        config: ArmConfiguration,
    ) -> Result<[f64; 6], IkError> {
        let p = target.translation.vector;
        let r = *target.rotation.to_rotation_matrix().matrix();
        if !(p.iter().chain(r.iter()).all(|x| x.is_finite())) {
            return Err(IkError::NonFinite);
        }
        let w = p - self.d6 * r.column(2);
        let rho = w.x.hypot(w.y);
        if rho < SINGULARITY_EPS {
            return Err(IkError::ShoulderSingular);
        }
        let (q1, rr) = match config.shoulder {
            Shoulder::Righty => (w.y.atan2(w.x), rho),
            Shoulder::Lefty => ((-w.y).atan2(-w.x), -rho),
        };
        let h = w.z - self.d1;
        let (a, b) = (self.a2, self.d4);
        let dd = rr * rr + h * h;
        let c3 = (dd - a * a - b * b) / (2.0 * a * b);
        if c3.abs() > 1.0 + 1e-12 {
            return Err(IkError::Unreachable {
                min: (a - b).abs(),
                max: a + b,
                needed: dd.sqrt(),
            });
        }
        let mut q3 = c3.clamp(-1.0, 1.0).acos();
        if config.elbow == Elbow::Negative {
            q3 = -q3;
        }
        let q2 = rr.atan2(h) - (b * q3.sin()).atan2(a + b * q3.cos());
        let m = (rz(q1) * ry(q2 + q3)).transpose() * r;
        let sb = m[(0, 2)].hypot(m[(1, 2)]);
        if sb < SINGULARITY_EPS {
            return Err(IkError::WristSingular);
        }
        let f = match config.wrist {
            Wrist::Positive => 1.0,
            Wrist::Negative => -1.0,
        };
        let q5 = f * sb.atan2(m[(2, 2)]);
        let q4 = (f * m[(1, 2)]).atan2(f * m[(0, 2)]);
        let q6 = (f * m[(2, 1)]).atan2(-f * m[(2, 0)]);
        Ok([wrap(q1), wrap(q2), wrap(q3), wrap(q4), q5, wrap(q6)])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_all_configurations() {
        let ik = Rx60Ik::rx60b();
        let q = [0.4, -0.5, 1.1, 0.7, 0.8, -1.3];
        let target = ik.forward(&q);
        let sols = ik.solve_all(&target).unwrap();
        assert!(sols
            .iter()
            .any(|(_, s)| s.iter().zip(&q).all(|(a, b)| (a - b).abs() < 1e-9)));
        for (c, s) in &sols {
            let back = ik.forward(s);
            assert!((back.translation.vector - target.translation.vector).norm() < 1e-9);
            assert!(back.rotation.angle_to(&target.rotation) < 1e-9);
            assert_eq!(ik.configuration_of(s), *c);
        }
    }

    #[test]
    fn singular_poses_are_errors() {
        let ik = Rx60Ik::rx60b();
        // Straight up: wrist centre on the joint-1 axis.
        let up = ik.forward(&[0.0; 6]);
        assert_eq!(ik.solve_all(&up).unwrap_err(), IkError::ShoulderSingular);
        // q5 = 0 with the wrist centre off the axis.
        let flat = ik.forward(&[0.3, 0.5, 0.6, 0.2, 0.0, 0.1]);
        let c = ik.configuration_of(&[0.3, 0.5, 0.6, 0.2, 0.0, 0.1]);
        assert_eq!(ik.solve(&flat, c).unwrap_err(), IkError::WristSingular);
        let far = Isometry3::translation(2.0, 0.0, 0.3);
        assert!(matches!(
            ik.solve_all(&far),
            Err(IkError::Unreachable { .. })
        ));
    }
}
