//! Human-to-robot hand mapping (section IV of Hu et al.).
//!
//! - [`MappingMode::JointSpace`] (power grasps): calibrated human joint angles go straight to
//!   the robot joints, clamped to the robot limits: abduction ← X0, flexion ← X1,
//!   coupled ← mean of X2 and X3; thumb palm joint ← T0, thumb abduction ← ψ − T1 (ψ the
//!   thumb base yaw, so that equal angles point the same way), thumb flexion ← T2,
//!   thumb coupled ← T3. Little finger: not mapped (the robot has four fingers).
//! - [`MappingMode::Fingertip`] (precision grasps, the modified fingertip mapping of
//!   section IV-B): human fingertips by the calibrated forward kinematics; each expressed
//!   in its finger's common reference frame (fingers: the MCP frame; thumb: the frame after
//!   T0), scaled by `scale` (1.5) and placed in the matching robot finger frame; robot finger
//!   IK with the coupling. The robot thumb palm joint always follows the human T0 (the
//!   paper's first step for targets out of the workspace; doing it always keeps the map
//!   continuous); each robot finger reaches its target exactly when it is reachable and the
//!   closest reachable point otherwise ([`crate::robot::finger_ik`]), through a
//!   [`crate::robot::FingerIkTracker`] that keeps the previous branch within a hysteresis and
//!   bounds the joint step per glove count.

use nalgebra::Vector3;

use crate::error::HandError;
use crate::model::{ChainFrames, Finger, HandModel};
use crate::robot::{FingerIkTracker, HitDlrHand, RobotFinger, THUMB_YAW};

/// Mapping mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum MappingMode {
    /// Joint-space mapping (power grasps).
    JointSpace,
    /// Modified fingertip mapping (precision grasps).
    #[default]
    Fingertip,
}

impl std::str::FromStr for MappingMode {
    type Err = crate::error::HandError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "joint" | "joint_space" | "power" => Ok(MappingMode::JointSpace),
            "fingertip" | "cartesian" | "precision" => Ok(MappingMode::Fingertip),
            _ => Err(crate::error::HandError::InvalidParameter(format!(
                "mapping mode `{s}` (expected joint_space or fingertip)"
            ))),
        }
    }
}

/// Result of mapping one glove sample.
#[derive(Clone, Debug, PartialEq)]
pub struct MappedHand {
    /// Human chain joint angles per finger (thumb: T0, T1, Ttwist, T2, T3; fingers X0..X3, 0).
    pub human: [[f64; 5]; 5],
    /// Human fingertips in `O0` (m).
    pub human_tips: [Vector3<f64>; 5],
    /// Robot joint vector (13 DOF, see [`crate::robot`]).
    pub robot: [f64; 13],
    /// Per robot finger: distance from the reached fingertip to the scaled human target (m);
    /// 0 in joint-space mode.
    pub tip_error: [f64; 4],
    /// Per robot finger (thumb, index, middle, ring): the scaled human fingertip in the robot
    /// finger's base frame (m), the target of its IK; zero in joint-space mode.
    pub targets: [Vector3<f64>; 4],
}

/// Maps raw glove readings to HIT/DLR joint commands.
#[derive(Clone, Debug)]
pub struct HandMapper {
    /// Calibrated human hand model.
    pub human: HandModel,
    /// Joint-space or fingertip mapping (section IV-B).
    pub mode: MappingMode,
    /// Linear fingertip scale (human → robot), 1.5 by default.
    pub scale: f64,
    /// Fingertip mode: one IK tracker per robot finger (branch hysteresis and the joint step
    /// bound per glove count; see [`FingerIkTracker`]).
    pub trackers: [FingerIkTracker; 4],
    frames: ChainFrames,
}

const ROBOT_OF_HUMAN: [(RobotFinger, Finger); 4] = [
    (RobotFinger::Thumb, Finger::Thumb),
    (RobotFinger::Index, Finger::Index),
    (RobotFinger::Middle, Finger::Middle),
    (RobotFinger::Ring, Finger::Ring),
];

impl HandMapper {
    /// New mapper (fingertip mode, scale 1.5).
    pub fn new(human: HandModel) -> Self {
        HandMapper {
            human,
            mode: MappingMode::Fingertip,
            scale: 1.5,
            trackers: Default::default(),
            frames: ChainFrames::default(),
        }
    }

    /// Forgets the previous solutions: the next reading is mapped without continuity (the
    /// closest reachable point, exact when reachable).
    pub fn reset(&mut self) {
        self.trackers.iter_mut().for_each(FingerIkTracker::reset);
    }

    /// Maps the 20 raw readings (finger-major: thumb s0..s3, index s0..s3, …). A reading that
    /// is not finite is an error (nothing is computed, the trackers keep their state). In
    /// fingertip mode each robot finger follows the closest reachable point of its scaled
    /// human fingertip (exact when reachable), kept on its previous branch within the
    /// trackers' hysteresis and moved at most their step per glove count.
    pub fn map(&mut self, raw: &[f64; 20]) -> Result<MappedHand, HandError> {
        if let Some(i) = raw.iter().position(|v| !v.is_finite()) {
            return Err(HandError::InvalidData(format!(
                "glove reading {i} ({} s{}) is {}",
                Finger::ALL[i / 4].name(),
                i % 4,
                raw[i]
            )));
        }
        let human = self.human.all_joint_angles(raw);
        let mut tips = [Vector3::zeros(); 5];
        let mut q = [0.0; 13];
        let mut tip_error = [0.0; 4];
        let mut targets = [Vector3::zeros(); 4];
        // robot thumb palm joint follows T0 in both modes
        q[0] = human[0][0];
        for f in Finger::ALL {
            tips[f.index()] = self.human.finger(f).tip_from_joints(f, &human[f.index()]);
        }
        match self.mode {
            MappingMode::JointSpace => {
                let t = &human[0];
                q[1] = THUMB_YAW - t[1];
                q[2] = t[3];
                q[3] = t[4];
                for (rf, hf) in &ROBOT_OF_HUMAN[1..] {
                    let h = &human[hf.index()];
                    let k = rf.first_joint();
                    q[k] = h[0];
                    q[k + 1] = h[1];
                    q[k + 2] = 0.5 * (h[2] + h[3]);
                }
                HitDlrHand::clamp(&mut q);
            }
            MappingMode::Fingertip => {
                HitDlrHand::clamp(&mut q);
                for (i, (rf, hf)) in ROBOT_OF_HUMAN.iter().enumerate() {
                    let p = self.human.finger(*hf);
                    p.frames(*hf, &human[hf.index()], &mut self.frames);
                    // human fingertip in the finger's common reference frame
                    let local = if *hf == Finger::Thumb {
                        // frame after T0: origin of element 1, rotation after element 0
                        let r = self.frames.rotations[0];
                        r.transpose() * (self.frames.tip - self.frames.origins[1])
                    } else {
                        // MCP frame: after the metacarpal element, base orientation
                        let r = p.base_rotation();
                        r.transpose() * (self.frames.tip - self.frames.origins[1])
                    };
                    let scaled = local * self.scale;
                    let target = if *rf == RobotFinger::Thumb {
                        HitDlrHand::thumb_base_in_frame1().inverse() * scaled
                    } else {
                        scaled
                    };
                    let h = hf.index();
                    let readings = [raw[4 * h], raw[4 * h + 1], raw[4 * h + 2], raw[4 * h + 3]];
                    let ik = self.trackers[i].solve(&target, &readings);
                    targets[i] = target;
                    let k = rf.first_joint();
                    q[k..k + 3].copy_from_slice(&ik.q);
                    tip_error[i] = ik.error;
                }
            }
        }
        if self.mode == MappingMode::JointSpace {
            // leaving fingertip mode: the next fingertip reading starts afresh
            self.reset();
        }
        Ok(MappedHand {
            human,
            human_tips: tips,
            robot: q,
            tip_error,
            targets,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw_for(model: &HandModel, theta: &[[f64; 4]; 5]) -> [f64; 20] {
        let mut raw = [0.0; 20];
        for f in Finger::ALL {
            let s = model.finger(f).readings_for(f, &theta[f.index()]).unwrap();
            raw[4 * f.index()..4 * f.index() + 4].copy_from_slice(&s);
        }
        raw
    }

    #[test]
    fn joint_space_copies_and_clamps() {
        let m = HandModel::nominal();
        let mut mapper = HandMapper::new(m.clone());
        mapper.mode = MappingMode::JointSpace;
        let d = |x: f64| x.to_radians();
        let theta = [
            [d(40.0), d(60.0), d(10.0), d(30.0)],
            [d(5.0), d(40.0), d(30.0), d(50.0)],
            [d(-30.0), d(100.0), d(0.0), d(0.0)],
            [d(0.0), d(0.0), d(120.0), d(120.0)],
            [0.0; 4],
        ];
        let out = mapper.map(&raw_for(&m, &theta)).unwrap();
        let q = out.robot;
        assert!((q[0] - d(40.0)).abs() < 1e-9);
        assert!((q[1] - d(0.0)).abs() < 1e-9); // ψ 60° − T1 60°
        assert!(
            (q[4] - d(5.0)).abs() < 1e-9
                && (q[5] - d(40.0)).abs() < 1e-9
                && (q[6] - d(40.0)).abs() < 1e-9
        );
        assert!((q[7] + d(20.0)).abs() < 1e-9, "abduction clamped");
        assert!((q[8] - d(75.0)).abs() < 1e-9, "flexion clamped");
        assert!((q[12] - d(90.0)).abs() < 1e-9, "coupled clamped");
    }

    #[test]
    fn fingertip_mapping_reproduces_scaled_tips_when_reachable() {
        let m = HandModel::nominal();
        let mut mapper = HandMapper::new(m.clone());
        let d = |x: f64| x.to_radians();
        // a human index pose whose DIP follows the PIP: the scaled tip is reachable
        let theta = [
            [d(60.0), d(60.0), d(10.0), d(20.0)],
            [d(5.0), d(30.0), d(30.0), d(30.0)],
            [d(0.0), d(20.0), d(20.0), d(20.0)],
            [d(-5.0), d(40.0), d(10.0), d(10.0)],
            [0.0; 4],
        ];
        let out = mapper.map(&raw_for(&m, &theta)).unwrap();
        assert!(out.tip_error[1] < 1e-6, "index error {}", out.tip_error[1]);
        // other fingers have other proportions than the robot finger: approximate but close
        for i in 2..4 {
            assert!(
                out.tip_error[i] < 0.02,
                "finger {i} error {}",
                out.tip_error[i]
            );
        }
        // robot index tip relative to its base = 1.5 × human index tip relative to the MCP
        let p = &m.index;
        let mcp =
            Vector3::from(p.base_xyz) + p.base_rotation() * Vector3::new(p.lengths[0], 0.0, 0.0);
        let human_local = p.base_rotation().transpose() * (out.human_tips[1] - mcp);
        let robot_tip = HitDlrHand::fingertips(&out.robot)[1];
        let base = HitDlrHand::finger_base(RobotFinger::Index, 0.0);
        let robot_local = base.inverse_transform_point(&robot_tip.into()).coords;
        assert!((robot_local - human_local * 1.5).norm() < 1e-6);
    }

    #[test]
    fn fingertip_mapping_is_continuous_along_a_human_motion() {
        // the human index closes into a fist (scaled tips leave the robot workspace); the
        // robot joints change by a bounded amount per 0.5° step of the human joints
        let m = HandModel::nominal();
        let mut mapper = HandMapper::new(m.clone());
        let mut prev: Option<[f64; 13]> = None;
        let mut left = false;
        for i in 0..=180 {
            let a = (i as f64 * 0.5).to_radians();
            let theta = [
                [0.5, 1.0, 0.2, 0.3],
                [0.05, a, a, 0.8 * a],
                [0.0, 0.3, 0.3, 0.3],
                [0.0, 0.3, 0.3, 0.3],
                [0.0; 4],
            ];
            let out = mapper.map(&raw_for(&m, &theta)).unwrap();
            left |= out.tip_error[1] > 1e-3;
            if let Some(p) = prev {
                let jump = (0..13)
                    .map(|k| (out.robot[k] - p[k]).abs())
                    .fold(0.0, f64::max);
                assert!(
                    jump < 4f64.to_radians(),
                    "step {i}: jump {:.2}°",
                    jump.to_degrees()
                );
            }
            prev = Some(out.robot);
        }
        assert!(left, "the motion must leave the robot workspace");
    }
}
