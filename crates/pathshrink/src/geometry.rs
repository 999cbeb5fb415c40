//! Rigid motions of the workpiece: wrenches and twists about its centre, integration of a
//! twist, and the constant-twist interpolation between two poses (the straight line in
//! position and the shortest rotation, both about the workpiece centre).

use nalgebra::{Isometry3, Point3, Translation3, UnitQuaternion, Vector3};

/// A pose in the world frame (metres, unit quaternion).
pub type Pose = Isometry3<f64>;

/// A force and a moment acting on the workpiece, in the world frame; the moment is taken
/// about the workpiece centre.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Wrench {
    /// Force (N).
    pub force: Vector3<f64>,
    /// Moment about the workpiece centre (N·m).
    pub torque: Vector3<f64>,
}

impl Wrench {
    /// A pure force at the workpiece centre (the dragger's virtual force).
    pub fn force(f: Vector3<f64>) -> Wrench {
        Wrench {
            force: f,
            torque: Vector3::zeros(),
        }
    }

    /// Are all six numbers finite?
    pub fn is_finite(&self) -> bool {
        self.force
            .iter()
            .chain(self.torque.iter())
            .all(|x| x.is_finite())
    }
}

/// A spatial velocity of the workpiece: the velocity of its centre and its angular
/// velocity, world frame.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Twist {
    /// Velocity of the centre (m/s).
    pub linear: Vector3<f64>,
    /// Angular velocity (rad/s).
    pub angular: Vector3<f64>,
}

/// The pose reached from `pose` by moving the centre (`centre`, body frame) by `dp` and
/// rotating about it by the rotation vector `dr` (world frame).
pub fn displace(pose: &Pose, centre: &Point3<f64>, dp: &Vector3<f64>, dr: &Vector3<f64>) -> Pose {
    let c_world = pose * centre;
    let rot = UnitQuaternion::from_scaled_axis(*dr) * pose.rotation;
    let new_centre = c_world.coords + dp;
    let t = new_centre - rot * centre.coords;
    Isometry3::from_parts(Translation3::from(t), rot)
}

/// The pose after moving with `twist` for `dt` seconds (constant twist about the centre).
pub fn integrate(pose: &Pose, centre: &Point3<f64>, twist: &Twist, dt: f64) -> Pose {
    displace(pose, centre, &(twist.linear * dt), &(twist.angular * dt))
}

/// The centre displacement and the rotation vector (world frame) that take `a` to `b`.
pub fn difference(a: &Pose, b: &Pose, centre: &Point3<f64>) -> (Vector3<f64>, Vector3<f64>) {
    let dp = (b * centre) - (a * centre);
    let dr = (b.rotation * a.rotation.inverse()).scaled_axis();
    (dp, dr)
}

/// The pose a fraction `t` of the way from `a` to `b`: the centre on the straight line, the
/// orientation on the shortest rotation (slerp). This is the motion a Cartesian straight-line
/// command makes, and what the collision checks of segments sweep.
pub fn interpolate(a: &Pose, b: &Pose, centre: &Point3<f64>, t: f64) -> Pose {
    let (dp, dr) = difference(a, b, centre);
    displace(a, centre, &(dp * t), &(dr * t))
}

/// Angle between two orientations (rad, in [0, π]).
pub fn rotation_angle(a: &Pose, b: &Pose) -> f64 {
    a.rotation.angle_to(&b.rotation)
}

/// Are all seven numbers of the pose finite, and the quaternion of unit length (within
/// 1e-6)?
pub fn pose_is_valid(p: &Pose) -> bool {
    rpq_proximity::pose_is_finite(p) && (p.rotation.coords.norm() - 1.0).abs() < 1e-6
}

#[cfg(test)]
mod tests {
    use super::*;
    use approx::assert_relative_eq;

    #[test]
    fn interpolation_ends_at_both_poses_and_moves_the_centre_on_a_line() {
        let c = Point3::new(0.01, -0.02, 0.005);
        let a = Isometry3::new(Vector3::new(0.1, 0.2, 0.3), Vector3::new(0.1, -0.2, 0.3));
        let b = Isometry3::new(Vector3::new(-0.1, 0.0, 0.5), Vector3::new(-0.4, 0.2, 1.0));
        let at0 = interpolate(&a, &b, &c, 0.0);
        let at1 = interpolate(&a, &b, &c, 1.0);
        assert_relative_eq!(at0.to_homogeneous(), a.to_homogeneous(), epsilon = 1e-12);
        assert_relative_eq!(at1.to_homogeneous(), b.to_homogeneous(), epsilon = 1e-12);
        let mid = interpolate(&a, &b, &c, 0.5);
        let expect = ((a * c).coords + (b * c).coords) * 0.5;
        assert_relative_eq!((mid * c).coords, expect, epsilon = 1e-12);
        assert_relative_eq!(
            rotation_angle(&a, &mid),
            rotation_angle(&mid, &b),
            epsilon = 1e-12
        );
    }

    #[test]
    fn integrating_a_pure_rotation_keeps_the_centre() {
        let c = Point3::new(0.0, 0.0, 0.015);
        let p = Isometry3::translation(0.4, 0.1, 0.0);
        let tw = Twist {
            linear: Vector3::zeros(),
            angular: Vector3::new(0.0, 0.0, 2.0),
        };
        let q = integrate(&p, &c, &tw, 0.25);
        assert_relative_eq!((q * c).coords, (p * c).coords, epsilon = 1e-15);
        assert_relative_eq!(rotation_angle(&p, &q), 0.5, epsilon = 1e-12);
    }
}
