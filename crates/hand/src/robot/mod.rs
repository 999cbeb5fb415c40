//! The HIT/DLR four-finger hand (section II-B, IV-A of Hu et al.): 13 DOF.
//!
//! Four identical fingers, each about 1.5× a human index finger (link lengths
//! [`LINKS`] = 60/35/30 mm): a base joint with intersecting, perpendicular abduction
//! (±20°) and flexion (±75°) axes, then two joints mechanically coupled 1:1 (0-90°, one
//! DOF). The thumb finger sits on an extra palm joint (0-90°) that turns it about the palm's
//! `x` axis, like the human `T0`.
//!
//! # Frames
//! `palm`: `x` towards the fingertips, `z` palmar (out of the palm), `y = z × x` radial
//! (thumb side of this left hand) — the same convention as the human `O0`. Each finger base
//! frame has `x` along the stretched finger and `z` along the abduction axis; positive
//! flexion curls towards `+z`. In the finger base frame the fingertip is
//! `(u cos q0, u sin q0, w)` with `(u, w) = L1 e(q1) + L2 e(q1+q2) + L3 e(q1+2 q2)`,
//! `e(a) = (cos a, sin a)`.
//!
//! # Joint vector (13 DOF)
//! `[thumb_palm, thumb_abd, thumb_flex, thumb_coupled, index_abd, index_flex,
//! index_coupled, middle_…, ring_…]`. The URDF (`urdf/hit_dlr_hand.urdf`) has 17 revolute
//! joints: each coupled DOF appears as `<finger>_mid_joint` and `<finger>_dist_joint`,
//! which must be commanded equal ([`HitDlrHand::urdf_positions`]); the URDF does not use
//! `<mimic>` so that every URDF loader of the suite (rpq_kinematics rejects mimic joints)
//! can read it.

use nalgebra::{Isometry3, Matrix3, Translation3, UnitQuaternion, Vector3};

/// Link lengths of every robot finger (m): proximal, middle, distal (to the fingertip).
pub const LINKS: [f64; 3] = [0.060, 0.035, 0.030];
/// Abduction limit (rad), symmetric.
pub const ABD_LIMIT: f64 = 20.0 * std::f64::consts::PI / 180.0;
/// Base flexion limit (rad), symmetric.
pub const FLEX_LIMIT: f64 = 75.0 * std::f64::consts::PI / 180.0;
/// Coupled joint range (rad).
pub const COUPLED_RANGE: [f64; 2] = [0.0, std::f64::consts::FRAC_PI_2];
/// Thumb palm joint range (rad).
pub const PALM_RANGE: [f64; 2] = [0.0, std::f64::consts::FRAC_PI_2];
/// Offset from the palm joint axis to the thumb finger base along the rotating radial axis (m).
pub const THUMB_OFFSET: f64 = 0.025;
/// Thumb root (palm joint) position in the palm frame (m).
pub const THUMB_ROOT: [f64; 3] = [0.020, 0.030, 0.010];
/// Finger base positions of index, middle, ring in the palm frame (m).
pub const FINGER_BASES: [[f64; 3]; 3] =
    [[0.100, 0.030, 0.0], [0.105, 0.0, 0.0], [0.100, -0.030, 0.0]];
/// Yaw ψ of the thumb finger base about the thumb frame's `z` (rad): 60°.
pub const THUMB_YAW: f64 = 60.0 * std::f64::consts::PI / 180.0;

/// The four robot fingers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RobotFinger {
    /// Thumb (on the palm joint).
    Thumb,
    /// Index (fore) finger.
    Index,
    /// Middle finger.
    Middle,
    /// Ring finger.
    Ring,
}

impl RobotFinger {
    /// All four, thumb first.
    pub const ALL: [RobotFinger; 4] = [
        RobotFinger::Thumb,
        RobotFinger::Index,
        RobotFinger::Middle,
        RobotFinger::Ring,
    ];
    /// Name prefix of links and joints.
    pub fn name(self) -> &'static str {
        match self {
            RobotFinger::Thumb => "thumb",
            RobotFinger::Index => "index",
            RobotFinger::Middle => "middle",
            RobotFinger::Ring => "ring",
        }
    }
    /// Index of the finger's abduction joint in the 13-DOF joint vector.
    pub fn first_joint(self) -> usize {
        match self {
            RobotFinger::Thumb => 1,
            RobotFinger::Index => 4,
            RobotFinger::Middle => 7,
            RobotFinger::Ring => 10,
        }
    }
}

/// Fingertip of one finger in its base frame for `[abd, flex, coupled]`.
pub fn finger_tip(q: &[f64; 3]) -> Vector3<f64> {
    let (u, w) = planar(q[1], q[2]);
    Vector3::new(u * q[0].cos(), u * q[0].sin(), w)
}

pub(crate) fn planar(q1: f64, q2: f64) -> (f64, f64) {
    let [l1, l2, l3] = LINKS;
    let a1 = q1;
    let a2 = q1 + q2;
    let a3 = q1 + 2.0 * q2;
    (
        l1 * a1.cos() + l2 * a2.cos() + l3 * a3.cos(),
        l1 * a1.sin() + l2 * a2.sin() + l3 * a3.sin(),
    )
}

/// Jacobian of [`finger_tip`] with respect to `[abd, flex, coupled]`.
pub fn finger_jacobian(q: &[f64; 3]) -> Matrix3<f64> {
    let [l1, l2, l3] = LINKS;
    let (u, _) = planar(q[1], q[2]);
    let (s1, c1) = q[1].sin_cos();
    let (s2, c2) = (q[1] + q[2]).sin_cos();
    let (s3, c3) = (q[1] + 2.0 * q[2]).sin_cos();
    let du1 = -(l1 * s1 + l2 * s2 + l3 * s3);
    let dw1 = l1 * c1 + l2 * c2 + l3 * c3;
    let du2 = -(l2 * s2 + 2.0 * l3 * s3);
    let dw2 = l2 * c2 + 2.0 * l3 * c3;
    let (s0, c0) = q[0].sin_cos();
    Matrix3::new(
        -u * s0,
        du1 * c0,
        du2 * c0,
        u * c0,
        du1 * s0,
        du2 * s0,
        0.0,
        dw1,
        dw2,
    )
}

/// Distance from the finger base to the fingertip as a function of the coupled angle
/// (monotonically decreasing on 0-90°).
pub fn reach(q2: f64) -> f64 {
    let (u, w) = planar(0.0, q2);
    u.hypot(w)
}

/// Joint limits of one finger `[abd, flex, coupled]` as (min, max).
pub fn finger_limits() -> [(f64, f64); 3] {
    [
        (-ABD_LIMIT, ABD_LIMIT),
        (-FLEX_LIMIT, FLEX_LIMIT),
        (COUPLED_RANGE[0], COUPLED_RANGE[1]),
    ]
}

mod ik;
pub use ik::{finger_ik, finger_ik_candidates, FingerIk, FingerIkTracker};

/// The 13-DOF HIT/DLR hand model.
#[derive(Clone, Debug, Default)]
pub struct HitDlrHand;

impl HitDlrHand {
    /// Degrees of freedom.
    pub const DOF: usize = 13;

    /// Names of the 13 DOF, in joint-vector order (the coupled DOF takes the name of its
    /// first URDF joint, `<finger>_mid_joint`).
    pub fn joint_names() -> Vec<String> {
        let mut v = vec!["thumb_palm_joint".to_string()];
        for f in RobotFinger::ALL {
            for j in ["abd", "flex", "mid"] {
                v.push(format!("{}_{j}_joint", f.name()));
            }
        }
        v
    }

    /// Names of the 17 URDF joints, in [`HitDlrHand::urdf_positions`] order.
    pub fn urdf_joint_names() -> Vec<String> {
        let mut v = vec!["thumb_palm_joint".to_string()];
        for f in RobotFinger::ALL {
            for j in ["abd", "flex", "mid", "dist"] {
                v.push(format!("{}_{j}_joint", f.name()));
            }
        }
        v
    }

    /// Expands 13 DOF to the 17 URDF joint positions (distal = middle, the 1:1 coupling),
    /// each clamped into its limits as the URDF prints them (6 decimals, rounded inwards), so
    /// a driver that checks the URDF's limits accepts a command at a limit (π/2 > 1.570796).
    pub fn urdf_positions(q: &[f64; 13]) -> [f64; 17] {
        let lim = Self::limits();
        let inward = |v: f64, (lo, hi): (f64, f64)| {
            v.clamp((lo * 1e6).ceil() / 1e6, (hi * 1e6).floor() / 1e6)
        };
        let mut out = [0.0; 17];
        out[0] = inward(q[0], lim[0]);
        for (i, f) in RobotFinger::ALL.iter().enumerate() {
            let k = f.first_joint();
            out[1 + 4 * i] = inward(q[k], lim[k]);
            out[2 + 4 * i] = inward(q[k + 1], lim[k + 1]);
            out[3 + 4 * i] = inward(q[k + 2], lim[k + 2]);
            out[4 + 4 * i] = inward(q[k + 2], lim[k + 2]);
        }
        out
    }

    /// Joint limits (min, max) of the 13 DOF.
    pub fn limits() -> [(f64, f64); 13] {
        let mut l = [(0.0, 0.0); 13];
        l[0] = (PALM_RANGE[0], PALM_RANGE[1]);
        for f in RobotFinger::ALL {
            let k = f.first_joint();
            l[k..k + 3].copy_from_slice(&finger_limits());
        }
        l
    }

    /// Clamps a joint vector into the limits.
    pub fn clamp(q: &mut [f64; 13]) {
        for (v, (lo, hi)) in q.iter_mut().zip(Self::limits()) {
            *v = v.clamp(lo, hi);
        }
    }

    /// Pose of the thumb frame "1" (after the palm joint and the fixed offset; the analogue
    /// of the human thumb frame after T0) in the palm frame.
    pub fn thumb_frame1(q_palm: f64) -> Isometry3<f64> {
        let root = Isometry3::from_parts(
            Translation3::from(Vector3::from(THUMB_ROOT)),
            UnitQuaternion::from_euler_angles(
                std::f64::consts::FRAC_PI_2,
                0.0,
                std::f64::consts::FRAC_PI_2,
            ),
        );
        let palm = Isometry3::rotation(Vector3::z() * q_palm);
        let off = Isometry3::from_parts(
            Translation3::new(THUMB_OFFSET, 0.0, 0.0),
            UnitQuaternion::from_euler_angles(std::f64::consts::FRAC_PI_2, 0.0, 0.0),
        );
        root * palm * off
    }

    /// Rotation of the thumb finger base within thumb frame "1": `Rz(ψ) Rx(π)`.
    pub fn thumb_base_in_frame1() -> UnitQuaternion<f64> {
        UnitQuaternion::from_euler_angles(0.0, 0.0, THUMB_YAW)
            * UnitQuaternion::from_euler_angles(std::f64::consts::PI, 0.0, 0.0)
    }

    /// Base frame of a finger in the palm frame (the thumb's depends on the palm joint).
    pub fn finger_base(f: RobotFinger, q_palm: f64) -> Isometry3<f64> {
        match f {
            RobotFinger::Thumb => {
                Self::thumb_frame1(q_palm)
                    * Isometry3::from_parts(Translation3::identity(), Self::thumb_base_in_frame1())
            }
            RobotFinger::Index => {
                Isometry3::translation(FINGER_BASES[0][0], FINGER_BASES[0][1], FINGER_BASES[0][2])
            }
            RobotFinger::Middle => {
                Isometry3::translation(FINGER_BASES[1][0], FINGER_BASES[1][1], FINGER_BASES[1][2])
            }
            RobotFinger::Ring => {
                Isometry3::translation(FINGER_BASES[2][0], FINGER_BASES[2][1], FINGER_BASES[2][2])
            }
        }
    }

    /// Pose of the distal link (`<finger>_distal`, frame at the distal joint) in the palm
    /// frame.
    pub fn distal_pose(f: RobotFinger, q: &[f64; 13]) -> Isometry3<f64> {
        let k = f.first_joint();
        let flex = |a: f64| Isometry3::rotation(Vector3::new(0.0, -a, 0.0));
        Self::finger_base(f, q[0])
            * Isometry3::rotation(Vector3::z() * q[k])
            * flex(q[k + 1])
            * Isometry3::translation(LINKS[0], 0.0, 0.0)
            * flex(q[k + 2])
            * Isometry3::translation(LINKS[1], 0.0, 0.0)
            * flex(q[k + 2])
    }

    /// Fingertip positions (thumb, index, middle, ring) in the palm frame.
    pub fn fingertips(q: &[f64; 13]) -> [Vector3<f64>; 4] {
        let mut out = [Vector3::zeros(); 4];
        for (i, f) in RobotFinger::ALL.iter().enumerate() {
            let k = f.first_joint();
            let local = finger_tip(&[q[k], q[k + 1], q[k + 2]]);
            out[i] = (Self::finger_base(*f, q[0]) * nalgebra::Point3::from(local)).coords;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reach_is_monotone() {
        let mut prev = f64::INFINITY;
        for i in 0..=900 {
            let r = reach(i as f64 * 0.1f64.to_radians());
            assert!(r < prev);
            prev = r;
        }
        assert!((reach(0.0) - LINKS.iter().sum::<f64>()).abs() < 1e-15);
    }

    #[test]
    fn jacobian_matches_finite_differences() {
        let q = [0.1, 0.4, 0.7];
        let j = finger_jacobian(&q);
        for k in 0..3 {
            let mut a = q;
            let mut b = q;
            a[k] += 1e-6;
            b[k] -= 1e-6;
            let fd = (finger_tip(&a) - finger_tip(&b)) / 2e-6;
            assert!((fd - j.column(k)).norm() < 1e-8);
        }
    }

    #[test]
    fn urdf_positions_duplicate_the_coupled_joint() {
        let q: [f64; 13] = std::array::from_fn(|i| i as f64 * 0.01);
        let u = HitDlrHand::urdf_positions(&q);
        assert_eq!(HitDlrHand::urdf_joint_names().len(), 17);
        assert_eq!(HitDlrHand::joint_names().len(), 13);
        for i in 0..4 {
            assert_eq!(u[3 + 4 * i], u[4 + 4 * i]);
        }
    }
}
