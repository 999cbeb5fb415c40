//! The node's parameters: their declarations (name, type, default, unit, the same as
//! `config/robot_sim.yaml`, which a test keeps in sync) and their conversion into the
//! simulation core's [`SimConfig`].
//!
//! ```
//! use robot_sim::settings::{declarations, Settings};
//! use rpq_ros::params::Params;
//!
//! let yaml = "robot_sim:\n  ros__parameters:\n    robot_description_file: urdf/rx60b.urdf\n    \
//!             position_command_mode: instant\n";
//! let params = Params::resolve(&declarations(), "/robot_sim", &[("p.yaml", yaml)], &[])?;
//! let settings = Settings::from_params(&params)?;
//! assert_eq!(settings.robot_description_file, "urdf/rx60b.urdf");
//! assert_eq!(settings.sim.update_rate_hz, 100.0);
//! # Ok::<(), robot_sim::NodeError>(())
//! ```

use rpq_ros::params::{ParamDecl, Params};

use crate::hardware::{PositionCommandMode, SimConfig, SimError};
use crate::NodeError;

/// The node's default name.
pub const NODE_NAME: &str = "robot_sim";

/// Rate of the periodic `~/status` messages (Hz); a change of status is published at once too.
pub const STATUS_RATE_HZ: f64 = 10.0;

/// `joint_state_rate_hz` value (its default) meaning "publish at `update_rate_hz`", so that a
/// user who lowers only `update_rate_hz` gets no error about a parameter never set.
pub const FOLLOW_UPDATE_RATE: f64 = 0.0;

/// Smallest explicit `joint_state_rate_hz` (Hz).
const MIN_JOINT_STATE_RATE_HZ: f64 = 0.1;

/// Every parameter the node reads (`use_sim_time` is added by the transport).
pub fn declarations() -> Vec<ParamDecl> {
    let d = SimConfig::default();
    vec![
        ParamDecl::string_required("robot_description_file")
            .describe("path of the robot's URDF (relative: to the working directory)")
            .read_only(),
        ParamDecl::double("update_rate_hz", d.update_rate_hz)
            .describe("simulation (integration) rate [Hz]")
            .range(0.1, 10_000.0)
            .read_only(),
        ParamDecl::double("joint_state_rate_hz", FOLLOW_UPDATE_RATE)
            .describe("rate of joint_states and /tf [Hz], at most update_rate_hz; 0: update_rate_hz")
            .range(FOLLOW_UPDATE_RATE, 10_000.0)
            .read_only(),
        ParamDecl::double("velocity_command_timeout_s", d.velocity_command_timeout_s)
            .describe("a velocity command older than this stops the robot [s]")
            .read_only(),
        ParamDecl::string("position_command_mode", "rate_limited")
            .describe("rate_limited (velocity/acceleration limits) or instant (jump)")
            .read_only(),
        ParamDecl::double_array("initial_positions", d.initial_positions.clone())
            .describe("start positions, one per joint in URDF order [rad or m]; empty: 0 clamped into the limits")
            .read_only(),
        ParamDecl::double_array("max_accelerations", d.max_accelerations.clone())
            .describe("acceleration limits, one per joint [rad/s^2 or m/s^2]; 0: unlimited; empty: none")
            .read_only(),
        ParamDecl::double("trajectory_start_tolerance", d.trajectory_start_tolerance)
            .describe("largest distance of a trajectory's first point due now from the current state [rad or m]")
            .read_only(),
        ParamDecl::bool("allow_partial_joints_goal", d.allow_partial_joints_goal)
            .describe("accept trajectories that name only some joints")
            .read_only(),
        ParamDecl::bool(
            "allow_nonzero_velocity_at_trajectory_end",
            d.allow_nonzero_velocity_at_trajectory_end,
        )
        .describe("accept trajectories whose last point has a non-zero velocity")
        .read_only(),
        ParamDecl::bool("publish_tf", true)
            .describe("publish link poses on /tf and /tf_static as robot_state_publisher does")
            .read_only(),
        ParamDecl::string("frame_prefix", "")
            .describe("prefix of every published frame name")
            .read_only(),
    ]
}

/// The node's settings, read from the resolved parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// `robot_description_file`, as given.
    pub robot_description_file: String,
    /// Effective joint-state rate (Hz): `joint_state_rate_hz`, or `update_rate_hz` when that
    /// parameter is 0 (its default).
    pub joint_state_rate_hz: f64,
    /// `publish_tf`.
    pub publish_tf: bool,
    /// `frame_prefix`.
    pub frame_prefix: String,
    /// The rest: the simulation core's configuration.
    pub sim: SimConfig,
}

impl Settings {
    /// Reads every declared parameter. Checks what the core does not: the joint-state rate must
    /// not exceed the update rate, and the position mode must be a known one. The per-joint
    /// vectors are checked against the robot when the core is built.
    pub fn from_params(p: &Params) -> Result<Settings, NodeError> {
        let sim = SimConfig {
            update_rate_hz: p.f64("update_rate_hz")?,
            velocity_command_timeout_s: p.f64("velocity_command_timeout_s")?,
            position_command_mode: p
                .str("position_command_mode")?
                .parse::<PositionCommandMode>()?,
            initial_positions: p.f64_array("initial_positions")?.to_vec(),
            max_accelerations: p.f64_array("max_accelerations")?.to_vec(),
            trajectory_start_tolerance: p.f64("trajectory_start_tolerance")?,
            allow_partial_joints_goal: p.bool("allow_partial_joints_goal")?,
            allow_nonzero_velocity_at_trajectory_end: p
                .bool("allow_nonzero_velocity_at_trajectory_end")?,
        };
        let given = p.f64("joint_state_rate_hz")?;
        let invalid = |reason: String| {
            Err(SimError::InvalidConfig {
                parameter: "joint_state_rate_hz",
                reason,
            }
            .into())
        };
        let joint_state_rate_hz = if given == FOLLOW_UPDATE_RATE {
            sim.update_rate_hz
        } else if given < MIN_JOINT_STATE_RATE_HZ {
            return invalid(format!(
                "{given} Hz is below {MIN_JOINT_STATE_RATE_HZ} Hz (0 means update_rate_hz)"
            ));
        } else if given > sim.update_rate_hz {
            return invalid(format!(
                "{given} Hz is above update_rate_hz ({} Hz)",
                sim.update_rate_hz
            ));
        } else {
            given
        };
        Ok(Settings {
            robot_description_file: p.str("robot_description_file")?.to_string(),
            joint_state_rate_hz,
            publish_tf: p.bool("publish_tf")?,
            frame_prefix: p.str("frame_prefix")?.to_string(),
            sim,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rpq_ros::params::ParamError;

    const CONFIG: &str = include_str!("../../../config/robot_sim.yaml");

    fn resolve(yaml: &str) -> Result<Settings, NodeError> {
        let p = Params::resolve(&declarations(), "/robot_sim", &[("test.yaml", yaml)], &[])?;
        Settings::from_params(&p)
    }

    fn with(extra: &str) -> String {
        format!("robot_sim:\n  ros__parameters:\n    robot_description_file: r.urdf\n{extra}")
    }

    #[test]
    fn config_file_loads_and_gives_the_declared_defaults() {
        let s = resolve(CONFIG).unwrap();
        assert_eq!(s.robot_description_file, "urdf/rx60b.urdf");
        assert_eq!(s.sim, SimConfig::default());
        assert_eq!(s.joint_state_rate_hz, 100.0);
        assert!(s.publish_tf);
        assert_eq!(s.frame_prefix, "");
    }

    #[test]
    fn config_file_documents_every_parameter_with_its_default() {
        let p = Params::resolve(&declarations(), "/robot_sim", &[("config", CONFIG)], &[]).unwrap();
        for d in declarations() {
            // Each parameter has an entry (commented out for empty arrays, which rcl's YAML
            // parser cannot hold) preceded by a comment giving its type.
            let set = format!("\n    {}: ", d.name);
            let commented = format!("\n    # {}: ", d.name);
            let at = CONFIG
                .find(&set)
                .or_else(|| CONFIG.find(&commented))
                .unwrap_or_else(|| panic!("config/robot_sim.yaml does not document `{}`", d.name));
            let mut block: Vec<&str> = CONFIG[..at]
                .lines()
                .rev()
                .take_while(|l| l.trim_start().starts_with('#'))
                .collect();
            block.reverse();
            let comment = block.join("\n");
            let ty = d.ty.to_string();
            assert!(
                comment.trim_start().starts_with(&format!("# {ty},")),
                "`{}`: the comment above it must start with `# {ty},`:\n{comment}",
                d.name
            );
            match &d.default {
                Some(default) => {
                    assert_eq!(p.get(&d.name), Some(default), "`{}`", d.name);
                    assert!(
                        comment.contains("default"),
                        "`{}`: no default documented",
                        d.name
                    );
                }
                None => assert!(comment.contains("required"), "`{}`", d.name),
            }
        }
    }

    #[test]
    fn bad_values_are_startup_errors_naming_the_parameter() {
        let cases = [
            ("    position_command_mode: fast\n", "position_command_mode"),
            ("    update_rate_hz: 0.0\n", "update_rate_hz"),
            ("    update_rate_hz: fast\n", "update_rate_hz"),
            (
                "    update_rate_hz: 50.0\n    joint_state_rate_hz: 60.0\n",
                "joint_state_rate_hz",
            ),
            ("    publish_tf: 1\n", "publish_tf"),
            ("    initial_positions: [0.0, a]\n", "initial_positions"),
            ("    no_such_parameter: 1\n", "no_such_parameter"),
        ];
        for (extra, name) in cases {
            let err = resolve(&with(extra)).unwrap_err();
            assert!(err.to_string().contains(name), "{extra}: {err}");
        }
    }

    #[test]
    fn joint_state_rate_follows_a_lowered_update_rate_unless_set() {
        // Only update_rate_hz given (below the old 100 Hz default): no error, same rate.
        let s = resolve(&with("    update_rate_hz: 20.0\n")).unwrap();
        assert_eq!((s.sim.update_rate_hz, s.joint_state_rate_hz), (20.0, 20.0));
        // The shipped config with only update_rate_hz lowered.
        let lowered = CONFIG.replace("update_rate_hz: 100.0", "update_rate_hz: 30.0");
        assert_ne!(lowered, CONFIG);
        let s = resolve(&lowered).unwrap();
        assert_eq!((s.sim.update_rate_hz, s.joint_state_rate_hz), (30.0, 30.0));
        // Explicit 0 is the default's meaning; an explicit lower rate is kept.
        let s = resolve(&with(
            "    update_rate_hz: 20.0\n    joint_state_rate_hz: 0.0\n",
        ))
        .unwrap();
        assert_eq!(s.joint_state_rate_hz, 20.0);
        let s = resolve(&with(
            "    update_rate_hz: 20.0\n    joint_state_rate_hz: 5.0\n",
        ))
        .unwrap();
        assert_eq!(s.joint_state_rate_hz, 5.0);
        // An explicit rate above update_rate_hz, or positive below 0.1 Hz, stays an error.
        for extra in [
            "    update_rate_hz: 20.0\n    joint_state_rate_hz: 100.0\n",
            "    joint_state_rate_hz: 0.05\n",
            "    joint_state_rate_hz: -1.0\n",
        ] {
            let err = resolve(&with(extra)).unwrap_err();
            assert!(
                err.to_string().contains("joint_state_rate_hz"),
                "{extra}: {err}"
            );
        }
    }

    #[test]
    fn description_file_is_required() {
        let err = resolve("robot_sim:\n  ros__parameters:\n    publish_tf: false\n").unwrap_err();
        assert!(
            matches!(&err, NodeError::Param(ParamError::Missing { name, .. }) if name == "robot_description_file"),
            "{err}"
        );
    }

    #[test]
    fn values_reach_the_core_configuration() {
        let s = resolve(&with(
            "    update_rate_hz: 250\n    joint_state_rate_hz: 50.0\n    position_command_mode: instant\n    \
             initial_positions: [0.1, 0.2]\n    max_accelerations: [1.0, 0.0]\n    \
             velocity_command_timeout_s: 0.2\n    trajectory_start_tolerance: 0.05\n    \
             allow_partial_joints_goal: true\n    allow_nonzero_velocity_at_trajectory_end: true\n    \
             publish_tf: false\n    frame_prefix: robot1/\n",
        ))
        .unwrap();
        assert_eq!(
            s.sim,
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
        assert_eq!(s.joint_state_rate_hz, 50.0);
        assert!(!s.publish_tf);
        assert_eq!(s.frame_prefix, "robot1/");
    }
}
