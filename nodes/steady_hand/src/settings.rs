//! Parameters of the three nodes. Each has one definition, `params/<node>.yaml`; the build
//! generates from it the declarations, the typed struct (`<Node>Params`) and the documented
//! `config/<node>.yaml` (checked by a test). This file adds the topic names and the
//! conversions into the library types ([`ControllerConfig`], [`SafetyConfig`], [`UserModel`]).
//!
//! ```
//! use rpq_ros::params::Params;
//! use steady_hand::settings::{admittance_controller, AdmittanceControllerParams};
//!
//! let yaml = "admittance_controller:\n  ros__parameters:\n    robot_description_file: r.urdf\n    \
//!             limits:\n      max_linear_velocity: 0.05\n";
//! let decls = admittance_controller::declarations();
//! let p = Params::resolve(&decls, "/admittance_controller", &[("p.yaml", yaml)], &[])?;
//! let s = AdmittanceControllerParams::load(&p)?;
//! assert_eq!(s.limits.max_linear_velocity, 0.05);
//! assert_eq!(s.control()?.limits.linear_velocity, 0.05);
//! # Ok::<(), steady_hand::NodeError>(())
//! ```

use nalgebra::Vector3;
use rpq_ros::params::Params;
use rpq_virtual_fixtures::{
    Compliance, ControllerConfig, Limits, Mode, RankTolerance, Shaping, UserModel,
};

use crate::admittance::{CoreConfig, Gains};
use crate::joints::MappingConfig;
use crate::safety::SafetyConfig;
use crate::wrench::FtConfig;
use crate::NodeError;

/// Generated from `params/admittance_controller.yaml`.
pub mod admittance_controller {
    include!(concat!(env!("OUT_DIR"), "/admittance_controller.rs"));
}
/// Generated from `params/steady_hand_guidance.yaml`.
pub mod steady_hand_guidance {
    include!(concat!(env!("OUT_DIR"), "/steady_hand_guidance.rs"));
}
/// Generated from `params/simulated_user.yaml`.
pub mod simulated_user {
    include!(concat!(env!("OUT_DIR"), "/simulated_user.rs"));
}
/// Generated from `params/netft_driver.yaml`.
pub mod netft_driver {
    include!(concat!(env!("OUT_DIR"), "/netft_driver.rs"));
}
/// Generated from `params/netft_emulator.yaml`.
pub mod netft_emulator {
    include!(concat!(env!("OUT_DIR"), "/netft_emulator.rs"));
}

pub use admittance_controller::{
    declarations as controller_declarations, AdmittanceControllerParams,
};
pub use simulated_user::{declarations as user_declarations, SimulatedUserParams};
pub use steady_hand_guidance::{declarations as guidance_declarations, SteadyHandGuidanceParams};

/// Default node name of the admittance controller.
pub const CONTROLLER_NODE: &str = admittance_controller::NODE_NAME;
/// Default node name of the guidance node.
pub const GUIDANCE_NODE: &str = steady_hand_guidance::NODE_NAME;
/// Default node name of the simulated user.
pub const USER_NODE: &str = simulated_user::NODE_NAME;
/// Default node name of the F/T sensor driver.
pub const NETFT_DRIVER_NODE: &str = netft_driver::NODE_NAME;
/// Default node name of the emulated F/T sensor.
pub const NETFT_EMULATOR_NODE: &str = netft_emulator::NODE_NAME;

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
/// Topic of the moving frames (absolute, as tf2 uses it).
pub const TF_TOPIC: &str = "/tf";
/// Topic of the fixed frames (absolute, latched).
pub const TF_STATIC_TOPIC: &str = "/tf_static";
/// Tare service of the controller (private).
pub const ZERO_FT_SERVICE: &str = "~/zero_ft";
/// Re-arm service of the controller (private).
pub const ENABLE_SERVICE: &str = "~/enable";

impl AdmittanceControllerParams {
    /// Reads the parameters and checks what the definition cannot: the admittance law's
    /// configuration as a whole, in free and in closed-loop mode.
    pub fn load(p: &Params) -> Result<Self, NodeError> {
        let s = Self::from_params(p)?;
        if s.limits.joint_slowdown_time < 1.0 / s.update_rate {
            return Err(NodeError::config(
                "limits.joint_slowdown_time",
                format!(
                    "{} s is shorter than one period (1 / update_rate = {} s): a joint could \
                     cross its limit margin within one period",
                    s.limits.joint_slowdown_time,
                    1.0 / s.update_rate
                ),
            ));
        }
        let control = s.control()?;
        ControllerConfig {
            mode: Mode::ClosedLoop {
                k_d: s.admittance.k_d,
            },
            ..control
        }
        .validate()?;
        Ok(s)
    }

    /// The library configuration (free mode; the mode is set per fixture).
    pub fn control(&self) -> Result<ControllerConfig, NodeError> {
        let control = ControllerConfig {
            compliance: Compliance::new(self.admittance.c, self.admittance.c_tau)?,
            mode: Mode::Free,
            shaping: Shaping {
                force_deadband: self.shaping.force_deadband,
                torque_deadband: self.shaping.torque_deadband,
                force_scale: self.shaping.force_scale,
                torque_scale: self.shaping.torque_scale,
            },
            limits: Limits {
                linear_velocity: self.limits.max_linear_velocity,
                angular_velocity: self.limits.max_angular_velocity,
                linear_acceleration: self.limits.max_linear_acceleration,
                angular_acceleration: self.limits.max_angular_acceleration,
            },
            rank_tolerance: RankTolerance::default(),
        };
        control.validate()?;
        Ok(control)
    }

    /// The safety monitor's thresholds.
    pub fn safety_config(&self) -> SafetyConfig {
        SafetyConfig {
            wrench_timeout: self.safety.wrench_timeout,
            joint_state_timeout: self.safety.joint_state_timeout,
            fault_hold: self.safety.fault_hold,
            rearm_hold: self.safety.rearm_hold,
        }
    }

    /// The settings of [`crate::admittance::AdmittanceCore`].
    pub fn core_config(&self) -> Result<CoreConfig, NodeError> {
        Ok(CoreConfig {
            control: self.control()?,
            k_d: self.admittance.k_d,
            ft: FtConfig {
                cutoff: self.ft.filter_cutoff,
                deadband: self.ft.deadband,
                tool_mass: self.ft.tool_mass,
                tool_com: Vector3::from(self.ft.tool_com),
                gravity: Vector3::from(self.ft.gravity),
            },
            mapping: MappingConfig {
                position_margin: self.limits.position_margin,
                slowdown_time: self.limits.joint_slowdown_time,
                damping_threshold: self.singularity.damping_threshold,
                max_damping: self.singularity.max_damping,
            },
            safety: self.safety_config(),
            clock_tolerance: self.safety.clock_tolerance,
            fixture_timeout: self.fixture.timeout,
            fixture_required: self.fixture.required,
            ramp_time: self.runtime.ramp_time,
            filter_blend: self.runtime.filter_blend,
            tare_max_linear_speed: self.ft.tare_max_linear_speed,
            tare_max_angular_speed: self.ft.tare_max_angular_speed,
            sensor_frame: self.sensor_frame.clone(),
            tool_link: self.tool_link.clone(),
            period: 1.0 / self.update_rate,
        })
    }

    /// The run-time gains as set now.
    pub fn gains(&self) -> Gains {
        Gains {
            c: self.admittance.c,
            c_tau: self.admittance.c_tau,
            k_d: self.admittance.k_d,
            force_scale: self.shaping.force_scale,
            torque_scale: self.shaping.torque_scale,
            max_linear_velocity: self.limits.max_linear_velocity,
            max_angular_velocity: self.limits.max_angular_velocity,
        }
    }

    /// Whether the command is a Cartesian twist (`output: twist`) rather than joint velocities.
    pub fn twist_output(&self) -> bool {
        self.output == "twist"
    }
}

impl SteadyHandGuidanceParams {
    /// The guidance sources of the parameters (plane, point, cone, gains; no path yet).
    pub fn sources(&self) -> Result<crate::fixture_manager::Sources, NodeError> {
        let v = |a: [f64; 3]| Vector3::from(a);
        crate::fixture_manager::Sources::new(
            (v(self.plane.origin).into(), v(self.plane.normal)),
            v(self.point.target).into(),
            (
                v(self.rcm.center).into(),
                v(self.rcm.axis),
                self.rcm.half_angle,
                v(self.rcm.tool_axis),
            ),
            self.error_gain,
            self.rcm.error_gain,
            self.free_rotation,
        )
    }
}

impl SimulatedUserParams {
    /// The user model (forces in the plane and space: all six wrench components allowed; the
    /// fixture decides which ones move the robot).
    pub fn user_model(&self) -> UserModel {
        let m = &self.model;
        UserModel {
            push: m.push,
            slow_down_error: m.slow_down_error,
            correction_gain: m.correction_gain,
            bias: m.bias,
            tremor_amplitude: m.tremor_amplitude,
            tremor_frequency: m.tremor_frequency,
            noise: m.noise,
            reaction_delay: m.reaction_delay,
            visual_rate: m.visual_rate,
            mask: nalgebra::Vector6::new(1.0, 1.0, 1.0, 0.0, 0.0, 0.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rpq_ros::params::ParamDecl;

    fn resolve(decls: &[ParamDecl], node: &str, yaml: &str) -> Params {
        Params::resolve(decls, &format!("/{node}"), &[("p.yaml", yaml)], &[])
            .unwrap_or_else(|e| panic!("{node}: {e}"))
    }

    #[test]
    fn config_files_are_the_generated_ones() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        for (file, text) in [
            (
                admittance_controller::CONFIG_FILE,
                admittance_controller::CONFIG_YAML,
            ),
            (
                steady_hand_guidance::CONFIG_FILE,
                steady_hand_guidance::CONFIG_YAML,
            ),
            (simulated_user::CONFIG_FILE, simulated_user::CONFIG_YAML),
            (netft_driver::CONFIG_FILE, netft_driver::CONFIG_YAML),
            (netft_emulator::CONFIG_FILE, netft_emulator::CONFIG_YAML),
        ] {
            rpq_param_gen::check_file(&root.join(file), text);
        }
    }

    #[test]
    fn config_files_load() {
        let p = resolve(
            &controller_declarations(),
            CONTROLLER_NODE,
            admittance_controller::CONFIG_YAML,
        );
        let s = AdmittanceControllerParams::load(&p).unwrap();
        assert_eq!(s.tool_link, "tool0");
        assert!(!s.twist_output());
        let p = resolve(
            &guidance_declarations(),
            GUIDANCE_NODE,
            steady_hand_guidance::CONFIG_YAML,
        );
        let g = SteadyHandGuidanceParams::from_params(&p).unwrap();
        assert_eq!(g.fixture_type, "plane");
        assert_eq!(g.plane.origin, [0.4, 0.0, 0.4]);
        let p = resolve(&user_declarations(), USER_NODE, simulated_user::CONFIG_YAML);
        let u = SimulatedUserParams::from_params(&p).unwrap();
        assert_eq!(u.user_model().push, 3.0);
    }

    #[test]
    fn bad_values_are_refused() {
        let head =
            "admittance_controller:\n  ros__parameters:\n    robot_description_file: x.urdf\n";
        for (extra, name) in [
            ("    output: torque\n", "output"),
            (
                "    shaping:\n      force_scale: -1.0\n",
                "shaping.force_scale",
            ),
            (
                "    shaping:\n      torque_scale: -0.5\n",
                "shaping.torque_scale",
            ),
            (
                "    safety:\n      wrench_timeout: 0.0\n",
                "safety.wrench_timeout",
            ),
            (
                "    limits:\n      max_linear_velocity: 0.0\n",
                "limits.max_linear_velocity",
            ),
        ] {
            let text = format!("{head}{extra}");
            let err = Params::resolve(
                &controller_declarations(),
                "/admittance_controller",
                &[("p.yaml", &text)],
                &[],
            )
            .unwrap_err();
            assert!(err.to_string().contains(name), "{extra}: {err}");
        }
        let text =
            "steady_hand_guidance:\n  ros__parameters:\n    plane:\n      normal: [0.0, 1.0]\n";
        let err = Params::resolve(
            &guidance_declarations(),
            "/steady_hand_guidance",
            &[("p.yaml", text)],
            &[],
        )
        .unwrap_err();
        assert!(err.to_string().contains("plane.normal"), "{err}");
    }

    /// Issue 12 item 9: every gain, scale and timeout has a sane finite range (before: scales
    /// up to 1e6 1/N, speeds up to 1e6 m/s, user gains up to 1e9), and NaN/inf are refused.
    #[test]
    fn gains_scales_and_timeouts_have_sane_finite_ranges() {
        let controller =
            "admittance_controller:\n  ros__parameters:\n    robot_description_file: x.urdf\n";
        let user = "simulated_user:\n  ros__parameters:\n";
        let cases = [
            (
                controller,
                "    shaping:\n      force_scale: 1.0e5\n",
                "shaping.force_scale",
            ),
            (
                controller,
                "    shaping:\n      torque_scale: .inf\n",
                "shaping.torque_scale",
            ),
            (
                controller,
                "    limits:\n      max_linear_velocity: 1.0e5\n",
                "limits.max_linear_velocity",
            ),
            (
                controller,
                "    limits:\n      max_angular_velocity: 1.0e5\n",
                "limits.max_angular_velocity",
            ),
            (
                controller,
                "    safety:\n      wrench_timeout: .nan\n",
                "safety.wrench_timeout",
            ),
            (
                controller,
                "    safety:\n      fault_hold: 1.0e308\n",
                "safety.fault_hold",
            ),
            (user, "    error_gain: 1.0e9\n", "error_gain"),
            (
                user,
                "    model:\n      correction_gain: 1.0e9\n",
                "model.correction_gain",
            ),
            (user, "    duration: 1.0e308\n", "duration"),
        ];
        for (head, extra, name) in cases {
            let (decls, node) = if head == user {
                (user_declarations(), "/simulated_user")
            } else {
                (controller_declarations(), "/admittance_controller")
            };
            let text = format!("{head}{extra}");
            let err = Params::resolve(&decls, node, &[("p.yaml", &text)], &[]).unwrap_err();
            assert!(err.to_string().contains(name), "{extra}: {err}");
        }
    }
}
