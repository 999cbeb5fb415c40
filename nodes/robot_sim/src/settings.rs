//! The node's parameters. Their one definition is `params/robot_sim.yaml`; the build generates
//! from it the declarations ([`declarations`]), the typed struct ([`RobotSimParams`]) and the
//! documented `config/robot_sim.yaml` ([`CONFIG_YAML`], checked by a test). This file adds what a
//! definition cannot say: the rule between two rates, and the conversion into the simulation
//! core's [`SimConfig`].
//!
//! ```
//! use robot_sim::settings::{declarations, RobotSimParams};
//! use rpq_ros::params::Params;
//!
//! let yaml = "robot_sim:\n  ros__parameters:\n    robot_description_file: urdf/rx60b.urdf\n    \
//!             position_command_mode: instant\n";
//! let params = Params::resolve(&declarations(), "/robot_sim", &[("p.yaml", yaml)], &[])?;
//! let settings = RobotSimParams::load(&params)?;
//! assert_eq!(settings.robot_description_file, "urdf/rx60b.urdf");
//! assert_eq!(settings.sim_config()?.update_rate_hz, 100.0);
//! # Ok::<(), robot_sim::NodeError>(())
//! ```

use rpq_ros::params::Params;

use crate::hardware::{PositionCommandMode, SimConfig, SimError};
use crate::NodeError;

mod generated {
    include!(concat!(env!("OUT_DIR"), "/robot_sim.rs"));
}
pub use generated::{declarations, names, RobotSimParams, CONFIG_FILE, CONFIG_YAML, NODE_NAME};

/// Rate of the periodic `~/status` messages (Hz); a change of status is published at once too.
pub const STATUS_RATE_HZ: f64 = 10.0;

/// `joint_state_rate` value (its default) meaning "publish at `update_rate`", so that a user who
/// lowers only `update_rate` gets no error about a parameter never set.
pub const FOLLOW_UPDATE_RATE: f64 = 0.0;

/// Smallest explicit `joint_state_rate` (Hz).
const MIN_JOINT_STATE_RATE_HZ: f64 = 0.1;

impl RobotSimParams {
    /// Reads every parameter and checks what the definition cannot: an explicit
    /// `joint_state_rate` lies in [0.1 Hz, `update_rate`], and a non-zero `base.pose` comes
    /// with a `base.parent_frame`. The per-joint vectors are checked against the robot when the
    /// core is built.
    pub fn load(p: &Params) -> Result<RobotSimParams, NodeError> {
        let s = RobotSimParams::from_params(p)?;
        let given = s.joint_state_rate;
        let invalid = |reason: String| {
            Err(SimError::InvalidConfig {
                parameter: names::JOINT_STATE_RATE,
                reason,
            }
            .into())
        };
        if given != FOLLOW_UPDATE_RATE && given < MIN_JOINT_STATE_RATE_HZ {
            return invalid(format!(
                "{given} Hz is below {MIN_JOINT_STATE_RATE_HZ} Hz (0 means update_rate)"
            ));
        }
        if given > s.update_rate {
            return invalid(format!(
                "{given} Hz is above update_rate ({} Hz)",
                s.update_rate
            ));
        }
        if s.base.parent_frame.is_empty() && s.base.pose != [0.0; 6] {
            return Err(NodeError::config(
                names::BASE__POSE,
                "a base pose needs base.parent_frame, the frame it is given in",
            ));
        }
        Ok(s)
    }

    /// Effective joint-state rate (Hz): `joint_state_rate`, or `update_rate` when that
    /// parameter is 0 (its default).
    pub fn effective_joint_state_rate(&self) -> f64 {
        if self.joint_state_rate == FOLLOW_UPDATE_RATE {
            self.update_rate
        } else {
            self.joint_state_rate
        }
    }

    /// The simulation core's configuration.
    pub fn sim_config(&self) -> Result<SimConfig, NodeError> {
        Ok(SimConfig {
            update_rate_hz: self.update_rate,
            velocity_command_timeout_s: self.velocity_command_timeout,
            position_command_mode: self.position_command_mode.parse::<PositionCommandMode>()?,
            initial_positions: self.initial_positions.clone(),
            max_accelerations: self.max_accelerations.clone(),
            trajectory_start_tolerance: self.trajectory_start_tolerance,
            allow_partial_joints_goal: self.allow_partial_joints_goal,
            allow_nonzero_velocity_at_trajectory_end: self.allow_nonzero_velocity_at_trajectory_end,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(yaml: &str) -> Result<RobotSimParams, NodeError> {
        let p = Params::resolve(&declarations(), "/robot_sim", &[("test.yaml", yaml)], &[])?;
        RobotSimParams::load(&p)
    }

    fn with(extra: &str) -> String {
        format!("robot_sim:\n  ros__parameters:\n    robot_description_file: r.urdf\n{extra}")
    }

    #[test]
    fn config_file_is_the_generated_one() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        rpq_param_gen::check_file(&root.join(CONFIG_FILE), CONFIG_YAML);
    }

    #[test]
    fn config_file_loads_and_gives_the_core_defaults() {
        let s = resolve(CONFIG_YAML).unwrap();
        assert_eq!(s.robot_description_file, "urdf/rx60b.urdf");
        assert_eq!(s.sim_config().unwrap(), SimConfig::default());
        assert_eq!(s.effective_joint_state_rate(), 100.0);
        assert!(s.publish_tf);
        assert_eq!(s.frame_prefix, "");
    }

    #[test]
    fn bad_values_are_startup_errors_naming_the_parameter() {
        let cases = [
            ("    position_command_mode: fast\n", "position_command_mode"),
            ("    update_rate: 0.0\n", "update_rate"),
            ("    update_rate: fast\n", "update_rate"),
            (
                "    update_rate: 50.0\n    joint_state_rate: 60.0\n",
                "joint_state_rate",
            ),
            ("    publish_tf: 1\n", "publish_tf"),
            ("    initial_positions: [0.0, a]\n", "initial_positions"),
            ("    max_accelerations: [1.0, -1.0]\n", "max_accelerations"),
            (
                "    velocity_command_timeout: 0.0\n",
                "velocity_command_timeout",
            ),
            ("    no_such_parameter: 1\n", "no_such_parameter"),
        ];
        for (extra, name) in cases {
            let err = resolve(&with(extra)).unwrap_err();
            assert!(err.to_string().contains(name), "{extra}: {err}");
        }
    }

    /// Issue 12 item 9: `velocity_command_timeout:=1e308` was accepted and one command moved
    /// the robot forever; every timeout, tolerance and limit now has a finite range.
    #[test]
    fn timeouts_and_limits_that_switch_a_check_off_are_refused() {
        let cases = [
            (
                "    velocity_command_timeout: 1.0e308\n",
                "velocity_command_timeout",
            ),
            (
                "    velocity_command_timeout: 11.0\n",
                "velocity_command_timeout",
            ),
            (
                "    velocity_command_timeout: .nan\n",
                "velocity_command_timeout",
            ),
            (
                "    trajectory_start_tolerance: 1.0e308\n",
                "trajectory_start_tolerance",
            ),
            (
                "    max_accelerations: [1.0, 1.0e308]\n",
                "max_accelerations",
            ),
            ("    max_trajectory_points: 0\n", "max_trajectory_points"),
            (
                "    base:\n      pose: [0.0, 0.0, .nan, 0.0, 0.0, 0.0]\n",
                "base.pose",
            ),
        ];
        for (extra, name) in cases {
            let err = resolve(&with(extra)).unwrap_err();
            assert!(err.to_string().contains(name), "{extra}: {err}");
        }
        let s = resolve(&with("    velocity_command_timeout: 10.0\n")).unwrap();
        assert_eq!(
            (s.velocity_command_timeout, s.max_trajectory_points),
            (10.0, 10000)
        );
    }

    #[test]
    fn joint_state_rate_follows_a_lowered_update_rate_unless_set() {
        // Only update_rate given (below the 100 Hz default): no error, same rate.
        let s = resolve(&with("    update_rate: 20.0\n")).unwrap();
        assert_eq!(
            (s.update_rate, s.effective_joint_state_rate()),
            (20.0, 20.0)
        );
        // The shipped config with only update_rate lowered.
        let lowered = CONFIG_YAML.replace("update_rate: 100.0", "update_rate: 30.0");
        assert_ne!(lowered, CONFIG_YAML);
        let s = resolve(&lowered).unwrap();
        assert_eq!(
            (s.update_rate, s.effective_joint_state_rate()),
            (30.0, 30.0)
        );
        // Explicit 0 is the default's meaning; an explicit lower rate is kept.
        let s = resolve(&with("    update_rate: 20.0\n    joint_state_rate: 0.0\n")).unwrap();
        assert_eq!(s.effective_joint_state_rate(), 20.0);
        let s = resolve(&with("    update_rate: 20.0\n    joint_state_rate: 5.0\n")).unwrap();
        assert_eq!(s.effective_joint_state_rate(), 5.0);
        // An explicit rate above update_rate, or positive below 0.1 Hz, stays an error.
        for extra in [
            "    update_rate: 20.0\n    joint_state_rate: 100.0\n",
            "    joint_state_rate: 0.05\n",
            "    joint_state_rate: -1.0\n",
        ] {
            let err = resolve(&with(extra)).unwrap_err();
            assert!(
                err.to_string().contains("joint_state_rate"),
                "{extra}: {err}"
            );
        }
    }

    #[test]
    fn base_pose_needs_its_frame() {
        let s = resolve(&with("")).unwrap();
        assert_eq!((s.base.parent_frame.as_str(), s.base.pose), ("", [0.0; 6]));
        let s = resolve(&with(
            "    base:\n      parent_frame: world\n      pose: [0.6, 0.0, 0.0, 0.0, 0.0, 2.5]\n",
        ))
        .unwrap();
        assert_eq!(s.base.parent_frame, "world");
        assert_eq!(s.base.pose, [0.6, 0.0, 0.0, 0.0, 0.0, 2.5]);
        for extra in [
            "    base:\n      pose: [0.6, 0.0, 0.0, 0.0, 0.0, 0.0]\n",
            "    base:\n      parent_frame: world\n      pose: [0.6, 0.0, 0.0]\n",
        ] {
            let err = resolve(&with(extra)).unwrap_err();
            assert!(err.to_string().contains("base.pose"), "{extra}: {err}");
        }
    }

    #[test]
    fn description_file_is_required() {
        let err = resolve("robot_sim:\n  ros__parameters:\n    publish_tf: false\n").unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("robot_description_file") && msg.contains("required"),
            "{msg}"
        );
    }

    #[test]
    fn values_reach_the_core_configuration() {
        let s = resolve(&with(
            "    update_rate: 250\n    joint_state_rate: 50.0\n    position_command_mode: instant\n    \
             initial_positions: [0.1, 0.2]\n    max_accelerations: [1.0, 0.0]\n    \
             velocity_command_timeout: 0.2\n    trajectory_start_tolerance: 0.05\n    \
             allow_partial_joints_goal: true\n    allow_nonzero_velocity_at_trajectory_end: true\n    \
             publish_tf: false\n    frame_prefix: robot1/\n",
        ))
        .unwrap();
        assert_eq!(
            s.sim_config().unwrap(),
            SimConfig {
                update_rate_hz: 250.0,
                velocity_command_timeout_s: 0.2,
                position_command_mode: PositionCommandMode::Instant,
                initial_positions: vec![0.1, 0.2],
                max_accelerations: vec![1.0, 0.0],
                trajectory_start_tolerance: 0.05,
                allow_partial_joints_goal: true,
                allow_nonzero_velocity_at_trajectory_end: true,
            }
        );
        assert_eq!(s.effective_joint_state_rate(), 50.0);
        assert!(!s.publish_tf);
        assert_eq!(s.frame_prefix, "robot1/");
    }
}
