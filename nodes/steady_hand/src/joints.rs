//! From a tool twist to joint velocities through the robot's Jacobian, with the joint limits
//! respected by **uniform scaling** of the whole joint-velocity vector (never by clipping one
//! joint, which would change the direction of the tool motion and break the fixture).

use nalgebra::{DVector, Isometry3, Matrix6xX, Point3, Vector6};
use rpq_kinematics::Robot;

use crate::NodeError;

/// Result of [`JointMapper::solve`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Solution {
    /// Smallest singular value of the 6 × n tool Jacobian.
    pub sigma_min: f64,
    /// Uniform factor applied for the joint limits (1 = none).
    pub scale: f64,
}

/// Maps tool twists to joint velocities for one robot and tool link; preallocated buffers.
#[derive(Debug, Clone)]
pub struct JointMapper {
    robot: Robot,
    tool: usize,
    poses: Vec<Isometry3<f64>>,
    jacobian: Matrix6xX<f64>,
    /// Margin kept from the position limits [rad or m].
    pub position_margin: f64,
    /// Look-ahead for the position limits [s]: a joint may not cross `limit − margin` within it.
    pub lookahead: f64,
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
            position_margin: 0.01,
            lookahead: 0.01,
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

    /// Joint velocities `out` (URDF order) that realise the tool twist `v` (base frame, about
    /// the tool origin) at `q`: least-squares solution through the Jacobian's SVD, then one
    /// uniform factor so every joint keeps within its velocity limit and does not cross its
    /// position limit minus `position_margin` within `lookahead`. Calls
    /// [`JointMapper::update`] itself.
    pub fn solve(
        &mut self,
        q: &[f64],
        v: &Vector6<f64>,
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
        self.update(q)?;
        self.robot.jacobian_into(
            self.tool,
            &Point3::origin(),
            &self.poses,
            &mut self.jacobian,
        )?;
        let svd = self.jacobian.clone().svd(true, true);
        let sigma_max = svd.singular_values.max();
        let sigma_min = svd.singular_values.min();
        let tol = (sigma_max * 1e-12).max(1e-300);
        let qd: DVector<f64> = svd
            .solve(v, tol)
            .map_err(|e| NodeError::bad("Jacobian pseudo-inverse", e))?;
        // nalgebra 0.34's SVD can return wrong factors for rank-deficient input: with at least
        // six joints the twist must be reproduced exactly, so check it.
        if n >= 6 && sigma_min > tol {
            let residual = (&self.jacobian * &qd - v).norm();
            if residual > 1e-6 * (1.0 + v.norm()) {
                return Err(NodeError::bad(
                    "Jacobian pseudo-inverse",
                    format!("inaccurate (residual {residual:.1e})"),
                ));
            }
        }
        let mut scale: f64 = 1.0;
        for (i, l) in self.robot.joint_limits().iter().enumerate() {
            let w = qd[i];
            if w.abs() > l.velocity && l.velocity.is_finite() {
                scale = scale.min(l.velocity / w.abs());
            }
            let room = if w > 0.0 {
                l.upper - self.position_margin - q[i]
            } else {
                q[i] - (l.lower + self.position_margin)
            };
            if w != 0.0 && room.is_finite() {
                let allowed = room.max(0.0) / self.lookahead;
                if w.abs() > allowed {
                    scale = scale.min(allowed / w.abs());
                }
            }
        }
        for (o, w) in out.iter_mut().zip(qd.iter()) {
            *o = w * scale;
        }
        Ok(Solution { sigma_min, scale })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let s = m.solve(&q, &v, &mut qd).unwrap();
        assert_eq!(s.scale, 1.0);
        assert!(s.sigma_min > 1e-3);
        let j = m.robot().jacobian("tool0", &q).unwrap();
        assert!((&j * DVector::from_column_slice(&qd) - v).norm() < 1e-10);
        // a huge twist: scaled uniformly, so J qd stays parallel to v
        let big = v * 1e3;
        let s = m.solve(&q, &big, &mut qd).unwrap();
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
        let s = m.solve(&q, &v, &mut qd).unwrap();
        assert_eq!(s.scale, 0.0);
        assert!(qd.iter().all(|w| *w == 0.0));
        // moving away is allowed
        let s = m.solve(&q, &(-v), &mut qd).unwrap();
        assert_eq!(s.scale, 1.0);
    }

    #[test]
    fn singular_pose_reports_small_sigma() {
        let mut m = mapper();
        // arm straight up, wrist aligned: joints 4 and 6 are collinear
        let mut qd = vec![0.0; 6];
        let s = m.solve(&[0.0; 6], &Vector6::zeros(), &mut qd).unwrap();
        assert!(s.sigma_min < 1e-9, "{}", s.sigma_min);
        assert!(m
            .solve(&[0.0; 6], &Vector6::repeat(f64::NAN), &mut qd)
            .is_err());
        assert!(m.solve(&[0.0; 5], &Vector6::zeros(), &mut qd).is_err());
    }
}
