//! From a tool twist to joint velocities through the robot's Jacobian: damped least squares
//! near singularities, the fixture's forbidden directions kept exactly, and the joint limits
//! respected by **uniform scaling** of the whole joint-velocity vector (never by clipping one
//! joint, which would change the direction of the tool motion and break the fixture).
//!
//! # Damping law
//!
//! With `σ_min` the smallest singular value of the 6 × n tool Jacobian `J` (of its six largest
//! for n > 6), the damping `λ` of the damped least-squares inverse
//! `q̇ = Jᵀ(J Jᵀ + λ² I)⁻¹ v` is (Nakamura and Hanafusa's law, as used by Maciejewski and Klein)
//!
//! ```text
//! λ² = 0                              if σ_min ≥ ε
//! λ² = λ_max² (1 − (σ_min / ε)²)      if σ_min < ε
//! ```
//!
//! `ε` = `singularity.damping_threshold`, `λ_max` = `singularity.max_damping`. Away from
//! singularities the twist is realised exactly; inside the region each singular direction `i`
//! gets the gain `σ_i / (σ_i² + λ²)` instead of `1 / σ_i`, at most `1 / (2 λ_max)`: near the
//! singularity the tool slows down along the lost direction instead of demanding unbounded joint
//! speeds, and it can always be pulled back out (the gain is not zero for `σ_i > 0`). The law is
//! continuous in `σ_min`, so the command has no jump entering or leaving the region. Only a
//! Jacobian that is not finite or has no singular value above 1e-9 (degenerate beyond recovery)
//! is an error: the controller stops.
//!
//! # The fixture's forbidden directions
//!
//! Damping changes the realised twist `J q̇` and could add motion in directions a hard fixture
//! forbids. With `K` the projector onto the fixture's non-preferred subspace (`<D>`), the
//! mapping realises the requested component `K v` through the (damped) inverse of `K J` and
//! moves only inside the null space of `K J` for the rest, so `K J q̇` is the damped `K v` and
//! exactly zero when `K v` is zero: the robot never leaves a hard fixture's subspace, singular
//! or not.
//!
//! # Joint limits
//!
//! One factor `s ∈ [0, 1]` scales the whole vector so that every joint keeps within its
//! velocity limit and, moving towards a position limit, within the position-dependent bound
//! `|q̇_i| ≤ max(0, d_i) / τ`, where `d_i` is its distance to `limit − position_margin` and `τ`
//! = `limits.joint_slowdown_time`. A joint therefore approaches `limit − margin` no faster than
//! exponentially with time constant `τ` and never reaches it (with command periods shorter than
//! `τ`); moving away from the limit is not restricted.

use nalgebra::{DMatrix, DVector, Isometry3, Matrix6, Matrix6xX, Point3, SymmetricEigen, Vector6};
use rpq_kinematics::Robot;

use crate::NodeError;

/// Settings of a [`JointMapper`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MappingConfig {
    /// Distance kept from each position limit [rad or m].
    pub position_margin: f64,
    /// Time constant `τ` of the approach to a position limit [s] (> 0).
    pub slowdown_time: f64,
    /// `ε`: smallest singular value below which damping starts [m or 1] (> 0).
    pub damping_threshold: f64,
    /// `λ_max`: damping at the singularity [m or 1] (> 0).
    pub max_damping: f64,
}

impl Default for MappingConfig {
    fn default() -> Self {
        Self {
            position_margin: 0.02,
            slowdown_time: 0.1,
            damping_threshold: 0.04,
            max_damping: 0.02,
        }
    }
}

impl MappingConfig {
    /// `λ` of the damping law for a smallest singular value `sigma_min`.
    pub fn damping(&self, sigma_min: f64) -> f64 {
        if sigma_min >= self.damping_threshold {
            0.0
        } else {
            let r = (sigma_min / self.damping_threshold).max(0.0);
            self.max_damping * (1.0 - r * r).sqrt()
        }
    }
}

/// Result of [`JointMapper::solve`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Solution {
    /// Smallest singular value of the 6 × n tool Jacobian.
    pub sigma_min: f64,
    /// Damping `λ` used (0 away from singularities).
    pub damping: f64,
    /// Uniform factor applied for the joint limits (1 = none).
    pub scale: f64,
    /// The joint whose limit set `scale` (if below 1).
    pub limiting_joint: Option<usize>,
}

/// Maps tool twists to joint velocities for one robot and tool link.
#[derive(Debug, Clone)]
pub struct JointMapper {
    robot: Robot,
    tool: usize,
    poses: Vec<Isometry3<f64>>,
    jacobian: Matrix6xX<f64>,
    /// Settings (damping law, limits).
    pub config: MappingConfig,
}

/// Relative tolerance on eigenvalues of `JᵀJ` (singular values below 1e-6 σ_max count as zero
/// when no damping is applied).
const RANK_TOL: f64 = 1e-12;

/// `Σ_i w_i (w_iᵀ b) / (μ_i + λ²)` over the eigenpairs of a Gram matrix, skipping eigenvalues
/// at or below `tol` when `λ = 0` (the pseudo-inverse).
fn damped_solve(
    e: &SymmetricEigen<f64, nalgebra::Dyn>,
    b: &DVector<f64>,
    l2: f64,
    tol: f64,
) -> DVector<f64> {
    let mut x = DVector::zeros(b.len());
    for (i, &mu) in e.eigenvalues.iter().enumerate() {
        if l2 == 0.0 && mu <= tol {
            continue;
        }
        let w = e.eigenvectors.column(i);
        let c = w.dot(b) / (mu.max(0.0) + l2);
        x.axpy(c, &w, 1.0);
    }
    x
}

impl JointMapper {
    /// For `robot` and the link `tool_link` whose origin is the controlled point.
    pub fn new(robot: Robot, tool_link: &str) -> Result<Self, NodeError> {
        let tool = robot.link_index(tool_link)?;
        let n = robot.dof();
        let links = robot.links().len();
        Ok(Self {
            robot,
            tool,
            poses: vec![Isometry3::identity(); links],
            jacobian: Matrix6xX::zeros(n),
            config: MappingConfig::default(),
        })
    }

    /// The robot.
    pub fn robot(&self) -> &Robot {
        &self.robot
    }

    /// Forward kinematics for `q` (URDF joint order); afterwards [`JointMapper::link_pose`]
    /// gives each link's pose.
    pub fn update(&mut self, q: &[f64]) -> Result<(), NodeError> {
        self.robot.forward_kinematics_into(q, &mut self.poses)?;
        Ok(())
    }

    /// Pose of link `index` after the last [`JointMapper::update`].
    pub fn link_pose(&self, index: usize) -> &Isometry3<f64> {
        &self.poses[index]
    }

    /// Pose of the tool link after the last [`JointMapper::update`].
    pub fn tool_pose(&self) -> &Isometry3<f64> {
        &self.poses[self.tool]
    }

    /// The tool Jacobian of the last [`JointMapper::solve`] or [`JointMapper::jacobian_at`].
    pub fn jacobian(&self) -> &Matrix6xX<f64> {
        &self.jacobian
    }

    /// Updates the poses and the tool Jacobian for `q`.
    pub fn jacobian_at(&mut self, q: &[f64]) -> Result<&Matrix6xX<f64>, NodeError> {
        self.update(q)?;
        self.robot.jacobian_into(
            self.tool,
            &Point3::origin(),
            &self.poses,
            &mut self.jacobian,
        )?;
        Ok(&self.jacobian)
    }

    /// The tool twist the joint velocities `qd` give with the last Jacobian.
    pub fn twist_of(&self, qd: &[f64]) -> Vector6<f64> {
        let mut v = Vector6::zeros();
        for (j, w) in qd.iter().enumerate() {
            v += self.jacobian.column(j) * *w;
        }
        v
    }

    /// Joint velocities `out` (URDF order) for the tool twist `v` (base frame, about the tool
    /// origin) at `q`: the damped least-squares solution (module docs), keeping the component
    /// in `kernel` (a projector onto directions a fixture forbids; `None`: none) as requested,
    /// then one uniform factor for the velocity limits and the position-dependent bound.
    pub fn solve(
        &mut self,
        q: &[f64],
        v: &Vector6<f64>,
        kernel: Option<&Matrix6<f64>>,
        out: &mut [f64],
    ) -> Result<Solution, NodeError> {
        let n = self.robot.dof();
        if out.len() != n {
            return Err(NodeError::bad(
                "joint velocity buffer",
                format!("length {} for {n} joints", out.len()),
            ));
        }
        if !v.iter().all(|x| x.is_finite()) {
            return Err(NodeError::bad("tool twist", "not finite"));
        }
        self.jacobian_at(q)?;
        let j = DMatrix::from_column_slice(6, n, self.jacobian.as_slice());
        if !j.iter().all(|x| x.is_finite()) {
            return Err(NodeError::bad("Jacobian", "not finite"));
        }
        let gram = j.transpose() * &j;
        let eig = SymmetricEigen::new(gram);
        let mut ev: Vec<f64> = eig.eigenvalues.iter().map(|x| x.max(0.0)).collect();
        ev.sort_by(|a, b| b.total_cmp(a));
        let sigma_max = ev.first().copied().unwrap_or(0.0).sqrt();
        let sigma_min = ev
            .get(n.min(6).saturating_sub(1))
            .copied()
            .unwrap_or(0.0)
            .sqrt();
        if !(sigma_max.is_finite() && sigma_max > 1e-9) {
            return Err(NodeError::bad(
                "Jacobian",
                format!("degenerate (largest singular value {sigma_max:.1e})"),
            ));
        }
        let tol = RANK_TOL * sigma_max * sigma_max;
        let lambda = self.config.damping(sigma_min);
        let l2 = lambda * lambda;
        let vd = DVector::from_column_slice(v.as_slice());
        let qd = match kernel {
            None => damped_solve(&eig, &(j.transpose() * &vd), l2, tol),
            Some(k) => {
                let kd = DMatrix::from_column_slice(6, 6, k.as_slice());
                let a = &kd * &j;
                let ea = SymmetricEigen::new(a.transpose() * &a);
                // the requested forbidden-direction component, through the damped inverse of K J
                let qd_p = damped_solve(&ea, &(a.transpose() * &vd), l2, tol);
                // the rest inside null(K J), which moves only along the preferred directions
                let null: Vec<usize> = (0..n).filter(|&i| ea.eigenvalues[i] <= tol).collect();
                let mut qd = qd_p.clone();
                if !null.is_empty() {
                    let basis =
                        DMatrix::from_fn(n, null.len(), |r, c| ea.eigenvectors[(r, null[c])]);
                    let b = &j * &basis;
                    let r = &vd - &j * &qd_p;
                    let eb = SymmetricEigen::new(b.transpose() * &b);
                    let z = damped_solve(&eb, &(b.transpose() * r), l2, tol);
                    qd += basis * z;
                }
                qd
            }
        };
        if !qd.iter().all(|x| x.is_finite()) {
            return Err(NodeError::bad("joint velocities", "not finite"));
        }
        let cfg = self.config;
        let mut scale: f64 = 1.0;
        let mut limiting = None;
        for (i, l) in self.robot.joint_limits().iter().enumerate() {
            let w = qd[i];
            let mut bound = |allowed: f64| {
                if w.abs() > allowed && allowed / w.abs() < scale {
                    scale = allowed / w.abs();
                    limiting = Some(i);
                }
            };
            if l.velocity.is_finite() {
                bound(l.velocity);
            }
            let room = if w > 0.0 {
                l.upper - cfg.position_margin - q[i]
            } else {
                q[i] - (l.lower + cfg.position_margin)
            };
            if w != 0.0 && room.is_finite() {
                bound(room.max(0.0) / cfg.slowdown_time);
            }
        }
        for (o, w) in out.iter_mut().zip(qd.iter()) {
            *o = w * scale;
        }
        Ok(Solution {
            sigma_min,
            damping: lambda,
            scale,
            limiting_joint: limiting,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rpq_virtual_fixtures::{Projection, RankTolerance};

    fn mapper() -> JointMapper {
        let robot = Robot::from_urdf_str(include_str!("../../../urdf/rx60b.urdf")).unwrap();
        JointMapper::new(robot, "tool0").unwrap()
    }

    #[test]
    fn twist_is_realised_and_limits_scale_uniformly() {
        let mut m = mapper();
        let q = [0.1, 0.3, 1.2, 0.2, 0.5, -0.3];
        let v = Vector6::new(0.05, -0.02, 0.01, 0.0, 0.1, 0.0);
        let mut qd = vec![0.0; 6];
        let s = m.solve(&q, &v, None, &mut qd).unwrap();
        assert_eq!((s.scale, s.damping), (1.0, 0.0));
        assert!(s.sigma_min > 0.04);
        let j = m.robot().jacobian("tool0", &q).unwrap();
        assert!((&j * DVector::from_column_slice(&qd) - v).norm() < 1e-10);
        // a huge twist: scaled uniformly, so J qd stays parallel to v
        let big = v * 1e3;
        let s = m.solve(&q, &big, None, &mut qd).unwrap();
        assert!(s.scale < 1.0);
        let got = j * DVector::from_column_slice(&qd);
        assert!((got.normalize() - big.normalize()).norm() < 1e-9);
        let lim = m.robot().joint_limits().to_vec();
        assert!(qd
            .iter()
            .zip(&lim)
            .all(|(w, l)| w.abs() <= l.velocity + 1e-12));
        assert!(qd
            .iter()
            .zip(&lim)
            .any(|(w, l)| (w.abs() - l.velocity).abs() < 1e-9));
    }

    #[test]
    fn position_limit_stops_the_whole_motion() {
        let mut m = mapper();
        let upper = m.robot().joint_limits()[0].upper;
        let q = [upper - 0.005, 0.3, 1.2, 0.2, 0.5, -0.3];
        // rotate about the base z axis: joint 1 moves up into its limit
        let v = {
            let p = m.robot().link_pose("tool0", &q).unwrap().translation.vector;
            let w = nalgebra::Vector3::z() * 0.2;
            let lin = w.cross(&p);
            Vector6::new(lin.x, lin.y, lin.z, w.x, w.y, w.z)
        };
        let mut qd = vec![1.0; 6];
        let s = m.solve(&q, &v, None, &mut qd).unwrap();
        assert_eq!(s.scale, 0.0);
        assert_eq!(s.limiting_joint, Some(0));
        assert!(qd.iter().all(|w| *w == 0.0));
        // moving away is allowed
        let s = m.solve(&q, &(-v), None, &mut qd).unwrap();
        assert_eq!(s.scale, 1.0);
    }

    /// Item 6 of issue 15: at each joint's upper and lower limit, a command that drives the
    /// joint into it slows down before it and never reaches `limit − margin`.
    #[test]
    fn every_joint_slows_down_before_its_limits() {
        let mut m = mapper();
        let lim = m.robot().joint_limits().to_vec();
        let base = [0.1, 0.3, 1.2, 0.2, 0.5, -0.3];
        let dt = 0.002;
        let margin = m.config.position_margin;
        for (i, l) in lim.iter().enumerate() {
            for upper in [true, false] {
                // start 0.2 rad from the limit, drive joint i alone towards it at 1 rad/s
                let mut q = base;
                q[i] = if upper { l.upper - 0.2 } else { l.lower + 0.2 };
                let dir = if upper { 1.0 } else { -1.0 };
                let mut qd = vec![0.0; 6];
                let mut speeds = Vec::new();
                for _ in 0..2000 {
                    let mut wanted = [0.0; 6];
                    wanted[i] = dir;
                    let j = m.jacobian_at(&q).unwrap().clone();
                    let v = &j * DVector::from_column_slice(&wanted);
                    let v = Vector6::from_column_slice(v.as_slice());
                    m.solve(&q, &v, None, &mut qd).unwrap();
                    for k in 0..6 {
                        q[k] += qd[k] * dt;
                    }
                    speeds.push(qd[i].abs());
                    let room = if upper {
                        l.upper - margin - q[i]
                    } else {
                        q[i] - (l.lower + margin)
                    };
                    assert!(room > 0.0, "joint {i} reached its limit (upper {upper})");
                }
                let room = if upper {
                    l.upper - margin - q[i]
                } else {
                    q[i] - (l.lower + margin)
                };
                assert!(room < 1e-3, "joint {i} stopped far from its limit: {room}");
                // the speed decays towards the limit: no dead stop from full speed
                assert!(speeds.windows(2).all(|w| w[1] <= w[0] + 1e-9), "joint {i}");
                assert!(speeds[0] > 0.9 && *speeds.last().unwrap() < 0.02);
            }
        }
    }

    #[test]
    fn damping_bounds_speed_near_the_stretched_out_singularity_and_keeps_the_fixture() {
        let mut m = mapper();
        // elbow almost straight (q3 → 0): the arm stretched out
        for q3 in [0.3, 0.05, 1e-3, 0.0] {
            let q = [0.0, 0.5, q3, 0.0, 0.9, 0.0];
            let v = Vector6::new(0.05, 0.0, 0.0, 0.0, 0.0, 0.0);
            let mut qd = vec![0.0; 6];
            let s = m.solve(&q, &v, None, &mut qd).unwrap();
            let gain = 1.0 / (2.0 * m.config.max_damping);
            assert!(qd.iter().all(|w| w.is_finite()));
            let norm = DVector::from_column_slice(&qd).norm();
            assert!(norm <= gain * v.norm() * 1.0001, "q3 {q3}: |qd| {norm}");
            if s.sigma_min >= m.config.damping_threshold {
                assert_eq!(s.damping, 0.0);
            } else {
                assert!(s.damping > 0.0);
            }
            // a hard fixture along x and y: the realised twist has nothing outside it
            let d = [Vector6::x(), Vector6::y()];
            let p = Projection::of_columns(&d, &RankTolerance::default())
                .unwrap()
                .unwrap();
            let k = p.kernel();
            let v = Vector6::new(0.05, 0.03, 0.0, 0.0, 0.0, 0.0);
            m.solve(&q, &v, Some(&k), &mut qd).unwrap();
            let realised = m.twist_of(&qd);
            assert!(
                (k * realised).norm() < 1e-12,
                "q3 {q3}: leak {:e}",
                (k * realised).norm()
            );
            // without the constraint, damping leaks out of the fixture near the singularity
            if q3 < 0.01 {
                m.solve(&q, &v, None, &mut qd).unwrap();
                assert!((k * m.twist_of(&qd)).norm() > 1e-6);
            }
        }
        // continuity of the damping law
        let c = m.config;
        assert_eq!(c.damping(c.damping_threshold), 0.0);
        assert!((c.damping(c.damping_threshold * (1.0 - 1e-9))).abs() < 1e-5);
        assert!((c.damping(0.0) - c.max_damping).abs() < 1e-15);
    }

    #[test]
    fn degenerate_input_is_an_error() {
        let mut m = mapper();
        let mut qd = vec![0.0; 6];
        assert!(m
            .solve(&[0.0; 6], &Vector6::repeat(f64::NAN), None, &mut qd)
            .is_err());
        assert!(m
            .solve(&[0.0; 5], &Vector6::zeros(), None, &mut qd)
            .is_err());
        // straight up, wrist aligned: singular but not degenerate: damped, not refused
        let s = m.solve(&[0.0; 6], &Vector6::x(), None, &mut qd).unwrap();
        assert!(s.sigma_min < 1e-9 && s.damping > 0.0);
    }
}
