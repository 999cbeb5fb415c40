//! The JHU Steady-Hand robot as the paper models it (sec. II-A, IV): a purely kinematic
//! Cartesian device with joints `q = [x y z θ₁ θ₂ θ₃]` (eq. 14): three translations
//! (`T_xyz = I`) and x-y-z Euler rotations `R = R_x(θ₁) R_y(θ₂) R_z(θ₃)` about the RCM point.
//!
//! [`SteadyHandRobot`] integrates a commanded twist with explicit Euler steps at the control
//! period, optionally with the imperfections of a real device ([`RobotImperfections`]): a
//! velocity-servo lag, a small kinematic calibration error and encoder quantisation. These are
//! our stand-ins for the paper's "mechanical effects" and "inaccuracy" of encoder-based
//! orientation; without them an open-loop fixture drifts only through the integration error.

use nalgebra::{Isometry3, Matrix3, Rotation3, Translation3, UnitQuaternion, Vector3, Vector6};

/// Eq. 15: `R_xyz(θ₁, θ₂)`, which maps base-frame vectors into the frame rotated by
/// `R_x(θ₁) R_y(θ₂)`; equal to `(R_x(θ₁) R_y(θ₂))'`. Eq. 13: `D_t = R_xyz D`.
pub fn r_xyz(theta1: f64, theta2: f64) -> Matrix3<f64> {
    let (s1, c1) = theta1.sin_cos();
    let (s2, c2) = theta2.sin_cos();
    Matrix3::new(c2, s1 * s2, -c1 * s2, 0.0, c1, s1, s2, -s1 * c2, c1 * c2)
}

/// Angular-velocity Jacobian of the x-y-z Euler joints: `ω = J(θ₁, θ₂) [θ̇₁ θ̇₂ θ̇₃]'` in the
/// base frame (independent of θ₃). Singular when `cos θ₂ = 0`.
pub fn euler_xyz_jacobian(theta1: f64, theta2: f64) -> Matrix3<f64> {
    let (s1, c1) = theta1.sin_cos();
    let (s2, c2) = theta2.sin_cos();
    Matrix3::new(1.0, 0.0, s2, 0.0, c1, -s1 * c2, 0.0, s1, c1 * c2)
}

/// The tool rotation `R_x(θ₁) R_y(θ₂) R_z(θ₃)`.
pub fn euler_xyz(theta: &Vector3<f64>) -> Rotation3<f64> {
    Rotation3::from_axis_angle(&Vector3::x_axis(), theta.x)
        * Rotation3::from_axis_angle(&Vector3::y_axis(), theta.y)
        * Rotation3::from_axis_angle(&Vector3::z_axis(), theta.z)
}

/// Deviations of the simulated robot from the ideal kinematic model. All zero by default.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RobotImperfections {
    /// Time constant of the first-order velocity servo \[s\] (0 = perfect tracking).
    pub servo_time_constant: f64,
    /// Linear calibration error: the realised translation rate is `(I + E) v` \[1\].
    pub linear_error: Matrix3<f64>,
    /// Relative scale error of the three rotary joints \[1\].
    pub joint_scale_error: Vector3<f64>,
    /// Encoder resolution of the rotary joints \[rad\] (0 = exact); the controller sees the
    /// quantised angles.
    pub encoder_resolution: f64,
}

impl Default for RobotImperfections {
    fn default() -> Self {
        Self {
            servo_time_constant: 0.0,
            linear_error: Matrix3::zeros(),
            joint_scale_error: Vector3::zeros(),
            encoder_resolution: 0.0,
        }
    }
}

impl RobotImperfections {
    /// The values used by the reproduction: 30 ms servo lag, a 2° rotation plus 1 % scale
    /// error of the translation stage, ±0.5 % rotary scale errors, 1e-4 rad encoders.
    pub fn typical() -> Self {
        let rot = Rotation3::from_axis_angle(&Vector3::z_axis(), 2f64.to_radians()).into_inner();
        Self {
            servo_time_constant: 0.03,
            linear_error: rot * 1.01 - Matrix3::identity(),
            joint_scale_error: Vector3::new(0.005, -0.005, 0.0),
            encoder_resolution: 1e-4,
        }
    }
}

/// The simulated Steady-Hand robot (preallocated state, no allocation per step).
#[derive(Debug, Clone)]
pub struct SteadyHandRobot {
    q: Vector6<f64>,
    v: Vector6<f64>,
    imperfections: RobotImperfections,
}

impl SteadyHandRobot {
    /// At joint position `q`, at rest.
    pub fn new(q: Vector6<f64>, imperfections: RobotImperfections) -> Self {
        Self {
            q,
            v: Vector6::zeros(),
            imperfections,
        }
    }

    /// True joint position.
    pub fn joints(&self) -> &Vector6<f64> {
        &self.q
    }

    /// Joint position as the encoders report it.
    pub fn measured_joints(&self) -> Vector6<f64> {
        let r = self.imperfections.encoder_resolution;
        let mut q = self.q;
        if r > 0.0 {
            for i in 3..6 {
                q[i] = (q[i] / r).round() * r;
            }
        }
        q
    }

    /// Tool pose for joints `q` (translation = RCM point, rotation = Euler x-y-z).
    pub fn pose_of(q: &Vector6<f64>) -> Isometry3<f64> {
        let r = euler_xyz(&Vector3::new(q[3], q[4], q[5]));
        Isometry3::from_parts(
            Translation3::new(q[0], q[1], q[2]),
            UnitQuaternion::from_rotation_matrix(&r),
        )
    }

    /// True tool pose.
    pub fn pose(&self) -> Isometry3<f64> {
        Self::pose_of(&self.q)
    }

    /// Tool pose computed from the encoder readings (what a controller sees).
    pub fn measured_pose(&self) -> Isometry3<f64> {
        Self::pose_of(&self.measured_joints())
    }

    /// One control period: the servo tracks the commanded twist `[v; ω]` (base frame), the
    /// joint rates follow from the inverse kinematics at the *measured* joints, and the joints
    /// move by an explicit Euler step. Returns `false` (and does not move) at the Euler
    /// singularity `cos θ₂ ≈ 0`.
    pub fn step(&mut self, command: &Vector6<f64>, dt: f64) -> bool {
        let imp = &self.imperfections;
        let alpha = if imp.servo_time_constant > 0.0 {
            dt / (imp.servo_time_constant + dt)
        } else {
            1.0
        };
        self.v += (command - self.v) * alpha;
        let qm = self.measured_joints();
        let Some(jinv) = euler_xyz_jacobian(qm[3], qm[4]).try_inverse() else {
            return false;
        };
        if qm[4].cos().abs() < 1e-6 {
            return false;
        }
        let lin = (Matrix3::identity() + imp.linear_error) * self.v.fixed_rows::<3>(0);
        let rates = jinv * self.v.fixed_rows::<3>(3);
        for i in 0..3 {
            self.q[i] += lin[i] * dt;
            self.q[3 + i] += rates[i] * (1.0 + imp.joint_scale_error[i]) * dt;
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn eq15_is_transpose_of_rx_ry(t1 in -1.5f64..1.5, t2 in -1.5f64..1.5) {
            let r = euler_xyz(&Vector3::new(t1, t2, 0.0));
            prop_assert!((r_xyz(t1, t2) - r.matrix().transpose()).abs().max() < 1e-14);
            // D_t = R_xyz e_z: the base z axis seen from the tool frame
            let dt = r_xyz(t1, t2) * Vector3::z();
            prop_assert!((r * dt - Vector3::z()).norm() < 1e-14);
        }

        #[test]
        fn jacobian_matches_finite_differences(t in proptest::array::uniform3(-1.2f64..1.2), rate in proptest::array::uniform3(-1.0f64..1.0)) {
            let t = Vector3::from(t);
            let rate = Vector3::from(rate);
            let h = 1e-5;
            let r0 = euler_xyz(&(t - rate * h));
            let r1 = euler_xyz(&(t + rate * h));
            // ω from the skew part of R1 R0' ≈ I + [ω] 2h
            let m = (r1 * r0.inverse()).into_inner();
            let w = Vector3::new(m[(2, 1)] - m[(1, 2)], m[(0, 2)] - m[(2, 0)], m[(1, 0)] - m[(0, 1)]) / (4.0 * h);
            prop_assert!((euler_xyz_jacobian(t.x, t.y) * rate - w).norm() < 1e-6);
        }
    }

    #[test]
    fn ideal_robot_tracks_a_rotation_about_z() {
        let gamma: f64 = 0.3;
        let mut robot = SteadyHandRobot::new(
            Vector6::new(0.0, 0.0, 0.0, gamma, 0.0, 0.0),
            RobotImperfections::default(),
        );
        let z0 = robot.pose().rotation * Vector3::z();
        let w = 0.5;
        for _ in 0..1000 {
            robot.step(&Vector6::new(0.0, 0.0, 0.0, 0.0, 0.0, w), 1e-4);
        }
        // after 0.1 s: rotated by 0.05 rad about z, angle to z kept to first order
        let z1 = robot.pose().rotation * Vector3::z();
        let expect = Rotation3::from_axis_angle(&Vector3::z_axis(), 0.05) * z0;
        assert!((z1 - expect).norm() < 1e-5, "{z1} vs {expect}");
    }
}
