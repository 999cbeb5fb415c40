//! Parameters and topic names of the three nodes. Each node's parameters have one definition,
//! `params/<node>.yaml`; the build generates from it the declarations, the typed struct
//! (`<Node>Params`) and the documented `config/<node>.yaml` (checked by a test).

use rpq_hand::mapping::MappingMode;
use rpq_ros::params::Params;

use crate::NodeError;

/// Generated from `params/hand_mapping.yaml`.
pub mod hand_mapping {
    include!(concat!(env!("OUT_DIR"), "/hand_mapping.rs"));
}
/// Generated from `params/glove_calibration.yaml`.
pub mod glove_calibration {
    include!(concat!(env!("OUT_DIR"), "/glove_calibration.rs"));
}
/// Generated from `params/simulated_glove.yaml`.
pub mod simulated_glove {
    include!(concat!(env!("OUT_DIR"), "/simulated_glove.rs"));
}

/// Generated from `params/cyberglove_driver.yaml`.
pub mod cyberglove_driver {
    include!(concat!(env!("OUT_DIR"), "/cyberglove_driver.rs"));
}
pub use cyberglove_driver::{declarations as driver_declarations, CybergloveDriverParams};
pub use glove_calibration::{declarations as calibration_declarations, GloveCalibrationParams};
pub use hand_mapping::{declarations as mapping_declarations, HandMappingParams};
pub use simulated_glove::{declarations as glove_declarations, SimulatedGloveParams};

/// Default node name of the mapping node.
pub const MAPPING_NODE: &str = hand_mapping::NODE_NAME;
/// Default node name of the calibration node.
pub const CALIBRATION_NODE: &str = glove_calibration::NODE_NAME;
/// Default node name of the CyberGlove driver.
pub const DRIVER_NODE: &str = cyberglove_driver::NODE_NAME;
/// Topic of `hand_mapping`'s RViz markers (`visualization_msgs/MarkerArray`).
pub const MARKERS_TOPIC: &str = "~/markers";
/// Default node name of the simulated glove.
pub const GLOVE_NODE: &str = simulated_glove::NODE_NAME;

/// Topic of raw glove readings (`rpq_interfaces/GloveReading`).
pub const GLOVE_TOPIC: &str = "glove/raw";
/// Topic of the calibrated human hand joints (`sensor_msgs/JointState`).
pub const HUMAN_JOINTS_TOPIC: &str = "human_hand/joint_states";
/// Topic of the robot hand joint command as joint states (`sensor_msgs/JointState`).
pub const ROBOT_JOINTS_TOPIC: &str = "hit_dlr_hand/joint_commands";
/// Topic of the robot hand's measured joints (`sensor_msgs/JointState`, e.g. robot_sim's),
/// read to time the trajectory commands.
pub const ROBOT_STATE_TOPIC: &str = "joint_states";
/// Topic of the robot hand trajectory command (`trajectory_msgs/JointTrajectory`).
pub const ROBOT_TRAJECTORY_TOPIC: &str = "hand_controller/joint_trajectory";
/// Mode switch service (`std_srvs/SetBool`: true = fingertip, false = joint space).
pub const SET_MODE_SERVICE: &str = "~/set_fingertip_mode";
/// Calibration service (`rpq_interfaces/CalibrateGlove`).
pub const CALIBRATE_SERVICE: &str = "~/calibrate";
/// Calibration report topic (`std_msgs/String`, latched).
pub const REPORT_TOPIC: &str = "~/report";

impl HandMappingParams {
    /// Reads the parameters and checks what the definition cannot: `raw.min` < `raw.max`, and
    /// the mode is a mapping mode.
    pub fn load(p: &Params) -> Result<Self, NodeError> {
        let s = Self::from_params(p)?;
        if s.raw.min >= s.raw.max {
            return Err(NodeError::config(
                hand_mapping::names::RAW__MIN,
                format!("must be below raw.max ({} >= {})", s.raw.min, s.raw.max),
            ));
        }
        s.mapping_mode()?;
        Ok(s)
    }

    /// The mapping mode at start (`mode`).
    pub fn mapping_mode(&self) -> Result<MappingMode, NodeError> {
        Ok(self.mode.parse()?)
    }
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

    #[test]
    fn config_files_are_the_generated_ones() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        for (file, text) in [
            (hand_mapping::CONFIG_FILE, hand_mapping::CONFIG_YAML),
            (
                glove_calibration::CONFIG_FILE,
                glove_calibration::CONFIG_YAML,
            ),
            (simulated_glove::CONFIG_FILE, simulated_glove::CONFIG_YAML),
            (
                cyberglove_driver::CONFIG_FILE,
                cyberglove_driver::CONFIG_YAML,
            ),
        ] {
            rpq_param_gen::check_file(&root.join(file), text);
        }
    }

    #[test]
    fn defaults_and_config_files_resolve() {
        let p = Params::resolve(&mapping_declarations(), "/hand_mapping", &[], &[]).unwrap();
        let s = HandMappingParams::load(&p).unwrap();
        assert_eq!(s.mapping_mode().unwrap(), MappingMode::Fingertip);
        assert_eq!(s.scale, 1.5);
        let config = [("config", hand_mapping::CONFIG_YAML)];
        let p = Params::resolve(&mapping_declarations(), "/hand_mapping", &config, &[]).unwrap();
        assert_eq!(HandMappingParams::load(&p).unwrap(), s);
        let config = [("config", glove_calibration::CONFIG_YAML)];
        let p = Params::resolve(
            &calibration_declarations(),
            "/glove_calibration",
            &config,
            &[],
        )
        .unwrap();
        assert_eq!(
            GloveCalibrationParams::from_params(&p)
                .unwrap()
                .condition_warning,
            100.0
        );
        let config = [("config", simulated_glove::CONFIG_YAML)];
        let p = Params::resolve(&glove_declarations(), "/simulated_glove", &config, &[]).unwrap();
        assert_eq!(SimulatedGloveParams::from_params(&p).unwrap().period, 4.0);
    }

    #[test]
    fn bad_values_are_refused() {
        let bad = "hand_mapping:\n  ros__parameters:\n    mode: sideways\n";
        assert!(
            Params::resolve(&mapping_declarations(), "/hand_mapping", &[("b", bad)], &[]).is_err()
        );
        let bad = "hand_mapping:\n  ros__parameters:\n    raw:\n      min: 300.0\n";
        let p =
            Params::resolve(&mapping_declarations(), "/hand_mapping", &[("b", bad)], &[]).unwrap();
        let err = HandMappingParams::load(&p).unwrap_err();
        assert!(err.to_string().contains("raw.min"), "{err}");
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
