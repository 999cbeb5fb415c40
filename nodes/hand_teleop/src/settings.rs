//! Parameters of the three nodes (declarations with type, default, unit; the same as
//! `config/hand_mapping.yaml` and `config/glove_calibration.yaml`, kept in sync by tests).

use rpq_hand::mapping::MappingMode;
use rpq_ros::params::{ParamDecl, Params};

use crate::NodeError;

/// Default node names.
pub const MAPPING_NODE: &str = "hand_mapping";
/// Default node name of the calibration node.
pub const CALIBRATION_NODE: &str = "glove_calibration";
/// Default node name of the simulated glove.
pub const GLOVE_NODE: &str = "simulated_glove";

/// Topic of raw glove readings (`rpq_interfaces/GloveReading`).
pub const GLOVE_TOPIC: &str = "glove/raw";
/// Topic of the calibrated human hand joints (`sensor_msgs/JointState`).
pub const HUMAN_JOINTS_TOPIC: &str = "human_hand/joint_states";
/// Topic of the robot hand joint command as joint states (`sensor_msgs/JointState`).
pub const ROBOT_JOINTS_TOPIC: &str = "hit_dlr_hand/joint_commands";
/// Topic of the robot hand trajectory command (`trajectory_msgs/JointTrajectory`).
pub const ROBOT_TRAJECTORY_TOPIC: &str = "hand_controller/joint_trajectory";
/// Mode switch service (`std_srvs/SetBool`: true = fingertip, false = joint space).
pub const SET_MODE_SERVICE: &str = "~/set_fingertip_mode";
/// Calibration service (`rpq_interfaces/CalibrateGlove`).
pub const CALIBRATE_SERVICE: &str = "~/calibrate";
/// Calibration report topic (`std_msgs/String`, latched).
pub const REPORT_TOPIC: &str = "~/report";

/// Parameters of `hand_mapping`.
pub fn mapping_declarations() -> Vec<ParamDecl> {
    vec![
        ParamDecl::string("human_model_file", "config/hand_model_nominal.yaml")
            .describe("calibrated human hand model YAML (glove_calib / glove_calibration output)")
            .read_only(),
        ParamDecl::string("mode", "fingertip")
            .describe("fingertip (precision grasps) or joint_space (power grasps); switch at run time with ~/set_fingertip_mode"),
        ParamDecl::double("scale", 1.5)
            .describe("linear fingertip scale human -> robot [-]")
            .range(0.1, 10.0)
            .read_only(),
        ParamDecl::double("raw_min", 0.0)
            .describe("smallest valid raw glove value [counts]")
            .read_only(),
        ParamDecl::double("raw_max", 255.0)
            .describe("largest valid raw glove value [counts]")
            .read_only(),
        ParamDecl::double("hold_timeout_s", 0.5)
            .describe("the last valid command is held this long without valid glove data, then the hand is stopped [s]")
            .range(0.0, 60.0)
            .read_only(),
        ParamDecl::double("trajectory_time_s", 0.05)
            .describe("time_from_start of the one-point JointTrajectory commands [s]")
            .range(0.0, 10.0)
            .read_only(),
        ParamDecl::string("human_joint_prefix", "human_")
            .describe("prefix of the human joint names in human_hand/joint_states")
            .read_only(),
        ParamDecl::double_array("contact_boxes", Vec::new())
            .describe("objects for fingertip contact warnings: boxes [cx, cy, cz, hx, hy, hz] in the palm frame, 6 values each [m]; empty: no warnings")
            .read_only(),
        ParamDecl::double("contact_distance", 0.005)
            .describe("fingertip-object distance below which a contact warning is logged [m]")
            .range(0.0, 1.0)
            .read_only(),
        ParamDecl::string("mesh_dir", "meshes/hit_dlr_hand")
            .describe("directory of the HIT/DLR link meshes (<finger>_distal.stl used for contacts)")
            .read_only(),
    ]
}

/// Settings of `hand_mapping`.
#[derive(Clone, Debug, PartialEq)]
pub struct MappingSettings {
    /// `human_model_file`.
    pub human_model_file: String,
    /// `mode`.
    pub mode: MappingMode,
    /// `scale`.
    pub scale: f64,
    /// `raw_min`.
    pub raw_min: f64,
    /// `raw_max`.
    pub raw_max: f64,
    /// `hold_timeout_s`.
    pub hold_timeout_s: f64,
    /// `trajectory_time_s`.
    pub trajectory_time_s: f64,
    /// `human_joint_prefix`.
    pub human_joint_prefix: String,
    /// `contact_boxes`.
    pub contact_boxes: Vec<f64>,
    /// `contact_distance`.
    pub contact_distance: f64,
    /// `mesh_dir`.
    pub mesh_dir: String,
}

impl MappingSettings {
    /// Reads the declared parameters.
    pub fn from_params(p: &Params) -> Result<Self, NodeError> {
        let s = MappingSettings {
            human_model_file: p.str("human_model_file")?.to_string(),
            mode: p.str("mode")?.parse()?,
            scale: p.f64("scale")?,
            raw_min: p.f64("raw_min")?,
            raw_max: p.f64("raw_max")?,
            hold_timeout_s: p.f64("hold_timeout_s")?,
            trajectory_time_s: p.f64("trajectory_time_s")?,
            human_joint_prefix: p.str("human_joint_prefix")?.to_string(),
            contact_boxes: p.f64_array("contact_boxes")?.to_vec(),
            contact_distance: p.f64("contact_distance")?,
            mesh_dir: p.str("mesh_dir")?.to_string(),
        };
        if s.raw_min >= s.raw_max {
            return Err(NodeError::BadParam {
                name: "raw_min".into(),
                reason: format!("must be below raw_max ({} >= {})", s.raw_min, s.raw_max),
            });
        }
        Ok(s)
    }
}

/// Parameters of `glove_calibration`.
pub fn calibration_declarations() -> Vec<ParamDecl> {
    vec![
        ParamDecl::string("initial_model_file", "config/hand_model_nominal.yaml")
            .describe("initial (nominal) human hand model YAML")
            .read_only(),
        ParamDecl::string("output_file", "hand_model_calibrated.yaml")
            .describe("where the calibrated model is saved when a request leaves output_file empty")
            .read_only(),
        ParamDecl::double("condition_warning", 100.0)
            .describe("condition number above which the report warns (Schroer: 100) [-]")
            .range(1.0, 1e12)
            .read_only(),
    ]
}

/// Parameters of `simulated_glove`.
pub fn glove_declarations() -> Vec<ParamDecl> {
    vec![
        ParamDecl::string("model_file", "config/hand_model_nominal.yaml")
            .describe("hand model whose sensor ranges the simulated readings sweep")
            .read_only(),
        ParamDecl::double("rate_hz", 100.0)
            .describe("publishing rate [Hz]")
            .range(0.1, 1000.0)
            .read_only(),
        ParamDecl::double("period_s", 4.0)
            .describe("period of the simulated open-close hand motion [s]")
            .range(0.1, 1000.0)
            .read_only(),
        ParamDecl::string("frame_id", "glove")
            .describe("header.frame_id of the readings")
            .read_only(),
    ]
}

/// Raw readings of the simulated glove at time `t`: every sensor sweeps its
/// `sensor_range` sinusoidally with period `period_s`, fingers phase-shifted.
pub fn simulated_reading(model: &rpq_hand::HandModel, t: f64, period_s: f64) -> [f64; 20] {
    let mut out = [0.0; 20];
    for f in rpq_hand::Finger::ALL {
        let p = model.finger(f);
        for k in 0..4 {
            let [lo, hi] = p.sensor_range[k];
            let phase = 0.4 * f.index() as f64 + 0.9 * k as f64;
            let s = (std::f64::consts::TAU * t / period_s + phase).sin();
            out[4 * f.index() + k] = (0.5 * (lo + hi) + 0.5 * (hi - lo) * s).round();
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn documents(config: &str, decls: &[ParamDecl], node: &str) {
        Params::resolve(decls, &format!("/{node}"), &[("config", config)], &[]).unwrap();
        for d in decls {
            let set = format!("\n    {}: ", d.name);
            // empty arrays are documented commented out (rcl's YAML parser cannot type them)
            let commented = format!("\n    # {}: ", d.name);
            let at = config
                .find(&set)
                .or_else(|| config.find(&commented))
                .unwrap_or_else(|| panic!("config for {node} does not document `{}`", d.name));
            let comment: Vec<&str> = config[..at]
                .lines()
                .rev()
                .take_while(|l| l.trim_start().starts_with('#'))
                .collect();
            let first = comment.last().copied().unwrap_or_default().trim_start();
            assert!(
                first.starts_with(&format!("# {},", d.ty)) && first.contains("default"),
                "`{}`: comment must start with `# {}, default ...`: {first}",
                d.name,
                d.ty
            );
        }
    }

    #[test]
    fn config_files_document_every_parameter() {
        let m = include_str!("../../../config/hand_mapping.yaml");
        documents(m, &mapping_declarations(), MAPPING_NODE);
        documents(m, &glove_declarations(), GLOVE_NODE);
        documents(
            include_str!("../../../config/glove_calibration.yaml"),
            &calibration_declarations(),
            CALIBRATION_NODE,
        );
    }

    #[test]
    fn defaults_resolve() {
        let p = Params::resolve(&mapping_declarations(), "/hand_mapping", &[], &[]).unwrap();
        let s = MappingSettings::from_params(&p).unwrap();
        assert_eq!(s.mode, MappingMode::Fingertip);
        assert_eq!(s.scale, 1.5);
        let bad = "hand_mapping:\n  ros__parameters:\n    mode: sideways\n";
        let p =
            Params::resolve(&mapping_declarations(), "/hand_mapping", &[("b", bad)], &[]).unwrap();
        assert!(MappingSettings::from_params(&p).is_err());
    }

    #[test]
    fn simulated_readings_stay_in_range() {
        let m = rpq_hand::HandModel::nominal();
        for i in 0..100 {
            let r = simulated_reading(&m, i as f64 * 0.037, 4.0);
            assert!(r.iter().all(|&v| (15.0..=240.0).contains(&v)), "{r:?}");
        }
    }
}
