//! Parameters of `path_shrinking`. The one definition is `params/path_shrinking.yaml`; the
//! build generates the declarations, [`PathShrinkingParams`] and `config/path_shrinking.yaml`
//! (checked by a test). This file turns them into the library's [`ProgramParams`], whose
//! checks they must also pass.
//!
//! ```
//! use rpq_ros::params::Params;
//! use path_shrinking::settings::{declarations, Settings};
//!
//! let yaml = "path_shrinking:\n  ros__parameters:\n    scene_file: s.yaml\n    \
//!             motion:\n      contact_bias: 0.004\n";
//! let p = Params::resolve(&declarations(), "/path_shrinking", &[("p.yaml", yaml)], &[])?;
//! let s = Settings::load(&p)?;
//! assert_eq!(s.program.motion.contact_bias, 0.004);
//! # Ok::<(), path_shrinking::NodeError>(())
//! ```

use rpq_pathshrink::lcp::LcpSettings;
use rpq_pathshrink::motion::MotionParams;
use rpq_pathshrink::program::ProgramParams;
use rpq_pathshrink::reduce::ReduceParams;
use rpq_pathshrink::robot::RobotParams;
use rpq_pathshrink::shrink::ShrinkParams;
use rpq_pathshrink::SimParams;
use rpq_ros::params::Params;

use crate::NodeError;

/// Generated from `params/path_shrinking.yaml`.
pub mod path_shrinking {
    include!(concat!(env!("OUT_DIR"), "/path_shrinking.rs"));
}

pub use path_shrinking::{declarations, PathShrinkingParams, NODE_NAME};

/// Service names (private to the node).
pub mod services {
    /// `rpq_interfaces/ShrinkPath`.
    pub const SHRINK_PATH: &str = "~/shrink_path";
    /// `std_srvs/Trigger`: start (or restart) recording the demonstration.
    pub const START_RECORDING: &str = "~/start_recording";
    /// `rpq_interfaces/FinishDemonstration`.
    pub const FINISH: &str = "~/finish";
    /// `rpq_interfaces/SetCapture`.
    pub const SET_CAPTURE: &str = "~/set_capture";
    /// `std_srvs/Trigger`: the workpiece back to its start, recording and capture ended.
    pub const RESET: &str = "~/reset";
}

/// `geometry_msgs/PoseStamped` of the demonstration's workpiece, after every step.
pub const WORKPIECE_POSE_TOPIC: &str = "~/workpiece_pose";
/// `visualization_msgs/MarkerArray`.
pub const MARKERS_TOPIC: &str = "~/markers";
/// `rpq_interfaces/ShrunkPath`, latched: the last program made.
pub const RESULT_TOPIC: &str = "~/result";
/// `tf2_msgs/TFMessage`.
pub const TF_TOPIC: &str = "/tf";

/// The node's settings: the parameters and the library's parameters made of them.
#[derive(Clone, Debug)]
pub struct Settings {
    /// The parameters as declared.
    pub params: PathShrinkingParams,
    /// The library's parameters (checked).
    pub program: ProgramParams,
}

fn count(name: &'static str, v: i64) -> Result<usize, NodeError> {
    usize::try_from(v).map_err(|_| NodeError::config(name, "must not be negative"))
}

impl Settings {
    /// Reads and checks the parameters.
    pub fn load(p: &Params) -> Result<Settings, NodeError> {
        let params = PathShrinkingParams::from_params(p)?;
        let s = &params.simulation;
        let sh = &params.shrink;
        let m = &params.motion;
        let t = &params.trajectory;
        let program = ProgramParams {
            sim: SimParams {
                contact_distance: s.contact_distance,
                barrier_gain: s.barrier_gain,
                translational_mobility: s.translational_mobility,
                rotational_mobility: s.rotational_mobility,
                time_step: s.time_step,
                max_speed: s.max_speed,
                max_angular_speed: s.max_angular_speed,
                golden_tolerance: s.golden_tolerance,
                lcp: LcpSettings::default(),
                ..SimParams::default()
            },
            shrink: ShrinkParams {
                tension: sh.tension,
                rotational_tension: sh.rotational_tension,
                repulsion_gain: sh.repulsion_gain,
                repulsion_distance: sh.repulsion_distance,
                node_spacing: sh.node_spacing,
                min_spacing: sh.min_spacing,
                min_angle: sh.min_angle,
                step_fraction: sh.step_fraction,
                stable_translation: sh.stable_translation,
                stable_rotation: sh.stable_rotation,
                max_sweeps: count("shrink.max_sweeps", sh.max_sweeps)?,
            },
            reduce: ReduceParams {
                position_tolerance: params.reduce.position_tolerance,
                orientation_tolerance: params.reduce.orientation_tolerance,
                ..ReduceParams::default()
            },
            motion: MotionParams {
                contact_bias: m.contact_bias,
                contact_stiffness: m.contact_stiffness,
                speed: m.speed,
                contact_speed: m.contact_speed,
                near_distance: m.near_distance,
                angular_speed: m.angular_speed,
                approach_height: m.approach_height,
                guard_force: m.guard_force,
                grasp_offset: m.grasp_offset,
            },
            robot: RobotParams {
                line_tolerance: t.line_tolerance,
                orientation_tolerance: t.orientation_tolerance,
                velocity_scale: t.velocity_scale,
                max_points: count("trajectory.max_points", t.max_points)?,
            },
        };
        program
            .validate()
            .map_err(|e| NodeError::config("parameters", e.to_string()))?;
        Ok(Settings { params, program })
    }

    /// Largest path (and recording) length.
    pub fn max_path_nodes(&self) -> usize {
        usize::try_from(self.params.max_path_nodes).unwrap_or(2)
    }

    /// Largest service reply that carries the result's lists [B].
    pub fn reply_max_bytes(&self) -> usize {
        usize::try_from(self.params.reply_max_bytes).unwrap_or(1000)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(extra: &str) -> Result<Settings, NodeError> {
        let yaml = format!("path_shrinking:\n  ros__parameters:\n    scene_file: s.yaml\n{extra}");
        let p = Params::resolve(&declarations(), "/path_shrinking", &[("p", &yaml)], &[])?;
        Settings::load(&p)
    }

    #[test]
    fn config_file_is_the_generated_one() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        rpq_param_gen::check_file(
            &root.join(path_shrinking::CONFIG_FILE),
            path_shrinking::CONFIG_YAML,
        );
    }

    #[test]
    fn the_defaults_are_the_library_defaults() {
        // The node and the library compute the same program from the same path (the bag
        // replay test relies on it).
        assert_eq!(load("").unwrap().program, ProgramParams::default());
        // the reply limit is the suite's one-datagram limit
        assert_eq!(
            load("").unwrap().reply_max_bytes(),
            rpq_ros::service::MAX_REPLY_BYTES
        );
        let e = load("    reply_max_bytes: 100000\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("reply_max_bytes"), "{e}");
    }

    #[test]
    fn out_of_range_values_are_refused_naming_the_parameter() {
        for (yaml, name) in [
            (
                "    simulation:\n      contact_distance: 0.0\n",
                "contact_distance",
            ),
            ("    motion:\n      contact_bias: -0.001\n", "contact_bias"),
            ("    shrink:\n      max_sweeps: 0\n", "max_sweeps"),
            (
                "    trajectory:\n      velocity_scale: 2.0\n",
                "velocity_scale",
            ),
        ] {
            let e = load(yaml).unwrap_err().to_string();
            assert!(e.contains(name), "{e}");
        }
    }
}
