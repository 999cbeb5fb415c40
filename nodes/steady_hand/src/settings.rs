//! Parameter declarations and settings of the three nodes (the same as
//! `config/admittance_controller.yaml`, `config/steady_hand_guidance.yaml` and the
//! `simulated_user` section of the latter; a test keeps them in sync).

use rpq_ros::params::{ParamDecl, Params};
use rpq_virtual_fixtures::{
    Compliance, ControllerConfig, Limits, Mode, RankTolerance, Shaping, UserModel,
};

use crate::safety::SafetyConfig;
use crate::NodeError;

/// Default node names.
pub const CONTROLLER_NODE: &str = "admittance_controller";
/// Default node name of the guidance node.
pub const GUIDANCE_NODE: &str = "steady_hand_guidance";
/// Default node name of the simulated user.
pub const USER_NODE: &str = "simulated_user";

/// Topic of the force sensor (relative).
pub const WRENCH_TOPIC: &str = "wrench";
/// Topic of the active fixture (relative).
pub const FIXTURE_TOPIC: &str = "virtual_fixture";
/// Topic of the joint states (relative).
pub const JOINT_STATES_TOPIC: &str = "joint_states";
/// Topic of the joint velocity commands (relative).
pub const VELOCITY_COMMANDS_TOPIC: &str = "forward_velocity_controller/commands";
/// Topic of the Cartesian twist commands when `output` is `twist` (relative).
pub const TWIST_TOPIC: &str = "twist_command";
/// Topic of the controller status (private).
pub const STATUS_TOPIC: &str = "~/status";

/// Parameters of `admittance_controller`.
pub fn controller_declarations() -> Vec<ParamDecl> {
    vec![
        ParamDecl::string_required("robot_description_file")
            .describe("URDF of the robot (Jacobian, joint limits)")
            .read_only(),
        ParamDecl::string_array("joint_names", vec![])
            .describe("order of the velocity command; empty: URDF order")
            .read_only(),
        ParamDecl::string("tool_link", "tool0")
            .describe("link whose origin is the controlled point")
            .read_only(),
        ParamDecl::string("sensor_frame", "tool0")
            .describe("URDF link of the force sensor, used when a wrench's frame_id is empty")
            .read_only(),
        ParamDecl::string("output", "joint_velocity")
            .describe("joint_velocity (Float64MultiArray) or twist (TwistStamped)")
            .read_only(),
        ParamDecl::double("rate_hz", 500.0)
            .describe("watchdog and status rate [Hz]; a step also runs on every wrench")
            .range(1.0, 10_000.0)
            .read_only(),
        ParamDecl::double("c", 0.01)
            .describe("compliance c [m/s per shaped unit]")
            .range(0.0, 100.0)
            .read_only(),
        ParamDecl::double("c_tau", 0.0)
            .describe("attenuation of non-preferred directions (0 hard, 1 isotropic)")
            .range(0.0, 100.0)
            .read_only(),
        ParamDecl::double("k_d", 0.08)
            .describe("closed-loop gain of eq. 11")
            .range(0.0, 0.999)
            .read_only(),
        ParamDecl::double("force_scale", 1.0)
            .describe("scale of forces [1/N]")
            .read_only(),
        ParamDecl::double("torque_scale", 10.0)
            .describe("scale of torques [1/(N m)]")
            .read_only(),
        ParamDecl::double("force_deadband", 0.2)
            .describe("force deadband [N]")
            .range(0.0, 1e6)
            .read_only(),
        ParamDecl::double("torque_deadband", 0.02)
            .describe("torque deadband [N m]")
            .range(0.0, 1e6)
            .read_only(),
        ParamDecl::double("max_linear_velocity", 0.1)
            .describe("[m/s]")
            .range(1e-9, 1e6)
            .read_only(),
        ParamDecl::double("max_angular_velocity", 0.5)
            .describe("[rad/s]")
            .range(1e-9, 1e6)
            .read_only(),
        ParamDecl::double("max_linear_acceleration", 1.0)
            .describe("[m/s^2]")
            .range(1e-9, 1e9)
            .read_only(),
        ParamDecl::double("max_angular_acceleration", 5.0)
            .describe("[rad/s^2]")
            .range(1e-9, 1e9)
            .read_only(),
        ParamDecl::double("wrench_timeout_s", 0.05)
            .describe("older wrench stops the robot [s]")
            .range(1e-4, 60.0)
            .read_only(),
        ParamDecl::double("joint_state_timeout_s", 0.2)
            .describe("older joint state stops the robot [s]")
            .range(1e-4, 60.0)
            .read_only(),
        ParamDecl::double("fixture_timeout_s", 0.5)
            .describe("older fixture counts as none [s]")
            .range(1e-4, 3600.0)
            .read_only(),
        ParamDecl::bool("require_fixture", false)
            .describe("stop without a fresh fixture (false: free motion)")
            .read_only(),
        ParamDecl::double("min_singular_value", 0.01)
            .describe("smaller Jacobian singular value stops the robot")
            .range(0.0, 1e3)
            .read_only(),
        ParamDecl::double("position_margin", 0.02)
            .describe("distance kept from joint position limits [rad or m]")
            .range(0.0, 10.0)
            .read_only(),
    ]
}

/// Settings of `admittance_controller`.
#[derive(Debug, Clone, PartialEq)]
pub struct ControllerSettings {
    /// `robot_description_file`.
    pub robot_description_file: String,
    /// `joint_names`.
    pub joint_names: Vec<String>,
    /// `tool_link`.
    pub tool_link: String,
    /// `sensor_frame`.
    pub sensor_frame: String,
    /// `true` for `output: twist`.
    pub twist_output: bool,
    /// `rate_hz`.
    pub rate_hz: f64,
    /// `k_d`.
    pub k_d: f64,
    /// The library configuration (mode set per fixture).
    pub control: ControllerConfig,
    /// Safety thresholds.
    pub safety: SafetyConfig,
    /// `fixture_timeout_s`.
    pub fixture_timeout: f64,
    /// `require_fixture`.
    pub require_fixture: bool,
    /// `position_margin`.
    pub position_margin: f64,
}

impl ControllerSettings {
    /// Reads and checks the parameters.
    pub fn from_params(p: &Params) -> Result<Self, NodeError> {
        let twist_output = match p.str("output")? {
            "joint_velocity" => false,
            "twist" => true,
            other => {
                return Err(NodeError::config(
                    "output",
                    format!("`{other}` is neither joint_velocity nor twist"),
                ))
            }
        };
        let control = ControllerConfig {
            compliance: Compliance::new(p.f64("c")?, p.f64("c_tau")?)?,
            mode: Mode::Free,
            shaping: Shaping {
                force_deadband: p.f64("force_deadband")?,
                torque_deadband: p.f64("torque_deadband")?,
                force_scale: p.f64("force_scale")?,
                torque_scale: p.f64("torque_scale")?,
            },
            limits: Limits {
                linear_velocity: p.f64("max_linear_velocity")?,
                angular_velocity: p.f64("max_angular_velocity")?,
                linear_acceleration: p.f64("max_linear_acceleration")?,
                angular_acceleration: p.f64("max_angular_acceleration")?,
            },
            rank_tolerance: RankTolerance::default(),
        };
        control.validate()?;
        let k_d = p.f64("k_d")?;
        ControllerConfig {
            mode: Mode::ClosedLoop { k_d },
            ..control
        }
        .validate()?;
        Ok(Self {
            robot_description_file: p.str("robot_description_file")?.to_string(),
            joint_names: p.str_array("joint_names")?.to_vec(),
            tool_link: p.str("tool_link")?.to_string(),
            sensor_frame: p.str("sensor_frame")?.to_string(),
            twist_output,
            rate_hz: p.f64("rate_hz")?,
            k_d,
            control,
            safety: SafetyConfig {
                wrench_timeout: p.f64("wrench_timeout_s")?,
                joint_state_timeout: p.f64("joint_state_timeout_s")?,
                min_singular_value: p.f64("min_singular_value")?,
            },
            fixture_timeout: p.f64("fixture_timeout_s")?,
            require_fixture: p.bool("require_fixture")?,
            position_margin: p.f64("position_margin")?,
        })
    }
}

/// Parameters of `steady_hand_guidance`.
pub fn guidance_declarations() -> Vec<ParamDecl> {
    vec![
        ParamDecl::string_required("robot_description_file")
            .describe("URDF of the robot (tool pose from joint states)")
            .read_only(),
        ParamDecl::string("tool_link", "tool0")
            .describe("link whose pose is guided")
            .read_only(),
        ParamDecl::double("rate_hz", 200.0)
            .describe("fixture publication rate [Hz]")
            .range(0.1, 10_000.0)
            .read_only(),
        ParamDecl::string("mode", "closed_loop").describe("free, open_loop or closed_loop"),
        ParamDecl::string("fixture_type", "none").describe("none, path, plane, point or rcm_cone"),
        ParamDecl::double("error_gain", 100.0)
            .describe("gain of u for path/plane/point [1/m] (cone: use rcm_error_gain)")
            .range(0.0, 1e9),
        ParamDecl::bool("free_rotation", false)
            .describe("path/plane: leave the tool orientation free"),
        ParamDecl::string("path_file", "")
            .describe("text file of path vertices, x y z per line [m]"),
        ParamDecl::double_array("path_points", vec![])
            .describe("path vertices x1 y1 z1 x2 ... [m] (used if path_file is empty)"),
        ParamDecl::double_array("plane_origin", vec![0.4, 0.0, 0.4]).describe("[m]"),
        ParamDecl::double_array("plane_normal", vec![0.0, 0.0, 1.0]).describe("[1]"),
        ParamDecl::double_array("point_target", vec![0.4, 0.0, 0.4]).describe("[m]"),
        ParamDecl::double_array("rcm_center", vec![0.4, 0.0, 0.3]).describe("RCM point [m]"),
        ParamDecl::double_array("rcm_axis", vec![0.0, 0.0, 1.0]).describe("cone axis [1]"),
        ParamDecl::double("rcm_half_angle", 0.3)
            .describe("cone half-angle [rad]")
            .range(0.0, std::f64::consts::FRAC_PI_2),
        ParamDecl::double_array("rcm_tool_axis", vec![0.0, 0.0, 1.0])
            .describe("tool axis in the tool frame [1]"),
        ParamDecl::double("rcm_error_gain", 1.0)
            .describe("gain of the cone's u [1]")
            .range(0.0, 1e6),
    ]
}

/// Parameters of `simulated_user`.
pub fn user_declarations() -> Vec<ParamDecl> {
    vec![
        ParamDecl::double("rate_hz", 500.0)
            .describe("wrench publication rate [Hz]")
            .range(1.0, 10_000.0)
            .read_only(),
        ParamDecl::string("operator", "cooperative")
            .describe("cooperative (user model) or autonomous (scaled preferred direction)")
            .read_only(),
        ParamDecl::int("seed", 1)
            .describe("seed of the user model")
            .read_only(),
        ParamDecl::string("frame_id", "base_link")
            .describe("frame of the published wrench")
            .read_only(),
        ParamDecl::double("error_gain", 100.0)
            .describe("the guidance's error_gain, to turn u back into metres [1/m]")
            .range(1e-9, 1e9)
            .read_only(),
        ParamDecl::double_array("direction_hint", vec![1.0, 0.0, 0.0, 0.0, 0.0, 1.0])
            .describe("preferred sign of the push along D (twist) [1]")
            .read_only(),
        ParamDecl::double("push", 3.0)
            .describe("push along the path [N or N m]")
            .range(0.0, 1e4)
            .read_only(),
        ParamDecl::double("slow_down_error", 0.005)
            .describe("error that halves the push [m]")
            .range(1e-9, 1e3)
            .read_only(),
        ParamDecl::double("correction_gain", 200.0)
            .describe("correction force per error [N/m]")
            .range(0.0, 1e9)
            .read_only(),
        ParamDecl::double("bias", 0.3)
            .describe("constant bias force [N]")
            .range(0.0, 1e4)
            .read_only(),
        ParamDecl::double("tremor_amplitude", 0.15)
            .describe("[N]")
            .range(0.0, 1e4)
            .read_only(),
        ParamDecl::double("tremor_frequency", 9.0)
            .describe("[Hz]")
            .range(0.0, 1e3)
            .read_only(),
        ParamDecl::double("noise", 0.1)
            .describe("low-pass force noise std [N]")
            .range(0.0, 1e4)
            .read_only(),
        ParamDecl::double("reaction_delay", 0.2)
            .describe("[s]")
            .range(0.0, 10.0)
            .read_only(),
        ParamDecl::double("visual_rate", 30.0)
            .describe("[Hz]")
            .range(0.1, 1e4)
            .read_only(),
        ParamDecl::double("duration_s", 0.0)
            .describe("stop publishing after this time [s]; 0: never")
            .range(0.0, 1e9)
            .read_only(),
        ParamDecl::double("reverse_period_s", 0.0)
            .describe("turn round (push the other way along the fixture) every this many seconds [s]; 0: never")
            .range(0.0, 1e9)
            .read_only(),
    ]
}

/// The user model of the `simulated_user` parameters (forces in the plane and space: all six
/// wrench components allowed; the fixture decides which ones move the robot).
pub fn user_model(p: &Params) -> Result<UserModel, NodeError> {
    Ok(UserModel {
        push: p.f64("push")?,
        slow_down_error: p.f64("slow_down_error")?,
        correction_gain: p.f64("correction_gain")?,
        bias: p.f64("bias")?,
        tremor_amplitude: p.f64("tremor_amplitude")?,
        tremor_frequency: p.f64("tremor_frequency")?,
        noise: p.f64("noise")?,
        reaction_delay: p.f64("reaction_delay")?,
        visual_rate: p.f64("visual_rate")?,
        mask: nalgebra::Vector6::new(1.0, 1.0, 1.0, 0.0, 0.0, 0.0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_yaml(file: &str, text: &str, node: &str, decls: &[ParamDecl]) -> Params {
        let params = Params::resolve(decls, &format!("/{node}"), &[(file, text)], &[])
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        // every parameter is documented in the file with its type and default
        for d in decls {
            let key = format!("{}:", d.name);
            let pos = text
                .find(&format!("    {key}"))
                .or_else(|| text.find(&format!("# {key}")))
                .unwrap_or_else(|| panic!("{file} does not list {}", d.name));
            let before = &text[..pos];
            let comment = before.rsplit("\n\n").next().unwrap_or("");
            assert!(
                comment.contains("default"),
                "{file}: {} has no documented default",
                d.name
            );
        }
        params
    }

    #[test]
    fn config_files_match_declarations() {
        let c = include_str!("../../../config/admittance_controller.yaml");
        let p = check_yaml(
            "admittance_controller.yaml",
            c,
            CONTROLLER_NODE,
            &controller_declarations(),
        );
        let s = ControllerSettings::from_params(&p).unwrap();
        assert_eq!(s.tool_link, "tool0");
        assert!(!s.twist_output);
        let g = include_str!("../../../config/steady_hand_guidance.yaml");
        check_yaml(
            "steady_hand_guidance.yaml",
            g,
            GUIDANCE_NODE,
            &guidance_declarations(),
        );
        let p = check_yaml(
            "steady_hand_guidance.yaml",
            g,
            USER_NODE,
            &user_declarations(),
        );
        user_model(&p).unwrap();
    }

    #[test]
    fn bad_output_is_refused() {
        let yaml = "admittance_controller:\n  ros__parameters:\n    robot_description_file: x.urdf\n    output: torque\n";
        let p = Params::resolve(
            &controller_declarations(),
            "/admittance_controller",
            &[("p.yaml", yaml)],
            &[],
        )
        .unwrap();
        assert!(matches!(
            ControllerSettings::from_params(&p),
            Err(NodeError::Config { .. })
        ));
    }
}
