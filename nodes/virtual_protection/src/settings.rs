//! Parameters of `virtual_protection`. The one definition is `params/virtual_protection.yaml`;
//! the build generates the declarations, [`VirtualProtectionParams`] and
//! `config/virtual_protection.yaml` (checked by a test). This file adds the rules linking
//! parameters.
//!
//! ```
//! use rpq_ros::params::Params;
//! use virtual_protection::settings::{declarations, Settings};
//!
//! let yaml = "virtual_protection:\n  ros__parameters:\n    patient:\n      source: phantom\n";
//! let p = Params::resolve(&declarations(), "/virtual_protection", &[("p.yaml", yaml)], &[])?;
//! let s = Settings::load(&p)?;
//! assert_eq!(s.params.patient.source, "phantom");
//! assert_eq!(s.params.shield.resolution, 64);
//! # Ok::<(), virtual_protection::NodeError>(())
//! ```

use rpq_ros::params::Params;

use crate::NodeError;

/// Generated from `params/virtual_protection.yaml`.
pub mod virtual_protection {
    include!(concat!(env!("OUT_DIR"), "/virtual_protection.rs"));
}

pub use virtual_protection::{declarations, VirtualProtectionParams, NODE_NAME};

/// Service names (private to the node).
pub mod services {
    /// `rpq_interfaces/GenerateShield`.
    pub const GENERATE_SHIELD: &str = "~/generate_shield";
    /// `rpq_interfaces/GenerateCuttingAid`.
    pub const GENERATE_CUTTING_AID: &str = "~/generate_cutting_aid";
    /// `std_srvs/Trigger`: removes the shield and the cutting aid.
    pub const CLEAR: &str = "~/clear";
}

/// The protection meshes in force (`rpq_interfaces/ProtectionMeshes`, latched).
pub const PROTECTIONS_TOPIC: &str = "~/protections";
/// The meshes as RViz markers (`visualization_msgs/MarkerArray`, latched).
pub const PROTECTION_MARKERS_TOPIC: &str = "~/protection_markers";
/// The tool-patient distance and the touched triangles (`visualization_msgs/MarkerArray`).
pub const MARKERS_TOPIC: &str = "~/markers";
/// The robot's joint states (`sensor_msgs/JointState`).
pub const JOINT_STATES_TOPIC: &str = "joint_states";

/// The node's settings.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    /// The parameters as declared.
    pub params: VirtualProtectionParams,
}

impl Settings {
    /// Reads and checks the parameters.
    pub fn load(p: &Params) -> Result<Settings, NodeError> {
        let params = VirtualProtectionParams::from_params(p)?;
        if params.frame_id.trim().is_empty() {
            return Err(rpq_ros::NodeError::config("frame_id", "must not be empty").into());
        }
        if params.patient.source == "file" && params.patient.mesh_file.trim().is_empty() {
            return Err(rpq_ros::NodeError::config(
                "patient.mesh_file",
                "is required when patient.source is file",
            )
            .into());
        }
        Ok(Settings { params })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(extra: &str) -> Result<Settings, NodeError> {
        let yaml = format!("virtual_protection:\n  ros__parameters:\n{extra}");
        let p = Params::resolve(&declarations(), "/virtual_protection", &[("p", &yaml)], &[])?;
        Settings::load(&p)
    }

    #[test]
    fn config_file_is_the_generated_one() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        rpq_param_gen::check_file(
            &root.join(virtual_protection::CONFIG_FILE),
            virtual_protection::CONFIG_YAML,
        );
    }

    #[test]
    fn reply_mesh_default_is_the_reply_limit() {
        // the parameter's default is the one reply limit of rpq_ros (one loopback datagram)
        let s = load("").unwrap();
        assert_eq!(
            usize::try_from(s.params.reply_mesh_max_bytes).unwrap(),
            rpq_ros::service::MAX_REPLY_BYTES
        );
    }

    #[test]
    fn bad_settings_are_refused_naming_the_parameter() {
        assert!(load("").is_ok());
        let err = |extra: &str| load(extra).unwrap_err().to_string();
        assert!(err("    patient:\n      source: file\n").contains("patient.mesh_file"));
        assert!(err("    patient:\n      source: skull\n").contains("patient.source"));
        assert!(err("    frame_id: \" \"\n").contains("frame_id"));
        assert!(err("    tool:\n      radius: -1.0\n").contains("tool.radius"));
        assert!(err("    shield:\n      resolution: 2\n").contains("shield.resolution"));
        assert!(err("    marker_rate: .nan\n").contains("marker_rate"));
    }
}
