//! The RX60 holding a drill on its flange: forward kinematics of the drill tip, the tool
//! twist → joint velocity map, and the start configuration.

use nalgebra::{Isometry3, Matrix6, Matrix6xX, Point3, Vector3, Vector6};
use rpq_kinematics::Robot;

use crate::SurgeryError;

/// The suite's RX60B description (the robot of the paper's application).
pub const RX60_URDF: &str = include_str!("../../../../urdf/rx60b.urdf");

/// A robot arm with a drill of some length along its flange's z axis; the tool point is the
/// drill tip (the centre of the spherical bit).
#[derive(Clone, Debug)]
pub struct DrillArm {
    robot: Robot,
    flange: usize,
    tip: Point3<f64>,
    poses: Vec<Isometry3<f64>>,
    jacobian: Matrix6xX<f64>,
}

impl DrillArm {
    /// The arm `robot` with a drill of `length` [m] on link `flange`.
    pub fn new(robot: Robot, flange: &str, length: f64) -> Result<DrillArm, SurgeryError> {
        if !(length.is_finite() && (0.0..=1.0).contains(&length)) {
            return Err(SurgeryError::range("drill length", length, "0 to 1 m"));
        }
        let flange = robot.link_index(flange)?;
        let dof = robot.dof();
        if dof != 6 {
            return Err(SurgeryError::range(
                "robot joints",
                dof as f64,
                "6 (a 6-axis arm)",
            ));
        }
        Ok(DrillArm {
            poses: vec![Isometry3::identity(); robot.links().len()],
            jacobian: Matrix6xX::zeros(dof),
            robot,
            flange,
            tip: Point3::new(0.0, 0.0, length),
        })
    }

    /// The RX60B of `urdf/rx60b.urdf` with a drill of `length` on `tool0`.
    pub fn rx60(length: f64) -> Result<DrillArm, SurgeryError> {
        DrillArm::new(Robot::from_urdf_str(RX60_URDF)?, "tool0", length)
    }

    /// The robot.
    pub fn robot(&self) -> &Robot {
        &self.robot
    }

    /// Pose of the drill tip frame (the flange's orientation) at `q`, base frame.
    pub fn tip_pose(&mut self, q: &[f64]) -> Result<Isometry3<f64>, SurgeryError> {
        self.robot.forward_kinematics_into(q, &mut self.poses)?;
        let f = self.poses[self.flange];
        Ok(Isometry3::from_parts(
            (f * self.tip).coords.into(),
            f.rotation,
        ))
    }

    /// Joint velocities `qd` realising the tool twist `v` (base frame, about the drill tip)
    /// at `q`, scaled uniformly (direction kept) so that every joint keeps within its velocity
    /// limit and does not cross a position limit within `horizon` seconds. Returns the scale
    /// (1 = unscaled); `Ok(0.0)` with `qd = 0` near a singularity (the 6 × 6 Jacobian not
    /// invertible).
    pub fn joint_velocities(
        &mut self,
        q: &[f64],
        v: &Vector6<f64>,
        horizon: f64,
        qd: &mut [f64],
    ) -> Result<f64, SurgeryError> {
        self.robot.forward_kinematics_into(q, &mut self.poses)?;
        self.robot
            .jacobian_into(self.flange, &self.tip, &self.poses, &mut self.jacobian)?;
        let j = Matrix6::from_iterator(self.jacobian.iter().copied());
        qd.iter_mut().for_each(|x| *x = 0.0);
        let Some(sol) = j.lu().solve(v) else {
            return Ok(0.0);
        };
        if !sol.iter().all(|x| x.is_finite()) || (j * sol - v).norm() > 1e-9 * (1.0 + v.norm()) {
            return Ok(0.0);
        }
        let mut scale: f64 = 1.0;
        for (i, l) in self.robot.joint_limits().iter().enumerate() {
            let w = sol[i];
            if w.abs() > l.velocity && l.velocity.is_finite() {
                scale = scale.min(l.velocity / w.abs());
            }
            let room = if w > 0.0 {
                l.upper - q[i]
            } else {
                q[i] - l.lower
            };
            if w != 0.0 && room.is_finite() && w.abs() * horizon > room.max(0.0) {
                scale = scale.min(room.max(0.0) / (w.abs() * horizon));
            }
        }
        for (o, w) in qd.iter_mut().zip(sol.iter()) {
            *o = w * scale;
        }
        Ok(scale)
    }

    /// A configuration putting the drill tip at `tip` with the drill pointing along `axis`
    /// (unit, the direction from the flange to the tip), by damped least squares from
    /// `guess`; `None` if it does not converge within the joint limits.
    pub fn solve_ik(
        &mut self,
        tip: &Point3<f64>,
        axis: &Vector3<f64>,
        guess: &[f64],
    ) -> Option<Vec<f64>> {
        let mut q = guess.to_vec();
        let axis = axis.try_normalize(1e-12)?;
        for _ in 0..500 {
            let pose = self.tip_pose(&q).ok()?;
            let z = pose.rotation * Vector3::z();
            let ep = tip - Point3::from(pose.translation.vector);
            let er = z.cross(&axis);
            if ep.norm() < 1e-10 && er.norm() < 1e-10 && z.dot(&axis) > 0.0 {
                return self.robot.within_limits(&q).ok()?.then_some(q);
            }
            self.robot
                .jacobian_into(self.flange, &self.tip, &self.poses, &mut self.jacobian)
                .ok()?;
            let j = Matrix6::from_iterator(self.jacobian.iter().copied());
            let e = Vector6::new(ep.x, ep.y, ep.z, er.x, er.y, er.z);
            let lambda = 1e-3;
            let step = j.transpose()
                * (j * j.transpose() + Matrix6::identity() * lambda).try_inverse()?
                * e;
            for (qi, s) in q.iter_mut().zip(step.iter()) {
                *qi += s.clamp(-0.2, 0.2);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joint_velocities_reproduce_the_twist_and_ik_reaches_the_target() {
        let mut arm = DrillArm::rx60(0.12).unwrap();
        let tip = Point3::new(0.45, 0.02, 0.12);
        let q = arm
            .solve_ik(&tip, &-Vector3::z(), &[0.0, 0.5, 1.6, 0.0, 1.0, 0.0])
            .expect("reachable");
        let pose = arm.tip_pose(&q).unwrap();
        assert!((pose.translation.vector - tip.coords).norm() < 1e-9);
        assert!((pose.rotation * Vector3::z() + Vector3::z()).norm() < 1e-9);
        let v = Vector6::new(0.01, -0.02, 0.005, 0.0, 0.0, 0.0);
        let mut qd = [0.0; 6];
        let s = arm.joint_velocities(&q, &v, 0.01, &mut qd).unwrap();
        assert_eq!(s, 1.0);
        // a small step moves the tip by v dt to first order
        let dt = 1e-4;
        let q2: Vec<f64> = q.iter().zip(&qd).map(|(a, b)| a + b * dt).collect();
        let moved = arm.tip_pose(&q2).unwrap().translation.vector - pose.translation.vector;
        assert!((moved - v.fixed_rows::<3>(0) * dt).norm() < 1e-9);
        assert!((arm.tip_pose(&q2).unwrap().rotation.angle_to(&pose.rotation)) < 1e-9);
    }
}
