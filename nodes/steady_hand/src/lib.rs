//! Virtual-fixture admittance controller and Steady-Hand guidance nodes: the pure part
//! (conversions, safety monitor, twist → joint velocities, settings) used by the binaries
//! `admittance_controller`, `steady_hand_guidance` and `simulated_user`, testable without DDS.
#![warn(missing_docs)]

pub mod convert;
mod error;
pub mod joints;
pub mod safety;
pub mod settings;

pub use error::NodeError;

/// Reads and parses a URDF file; failures name the file.
pub fn load_robot(file: &str) -> Result<rpq_kinematics::Robot, NodeError> {
    let bad = |reason: String| NodeError::RobotDescription {
        file: file.to_string(),
        reason,
    };
    let text = std::fs::read_to_string(file).map_err(|e| bad(format!("cannot read it: {e}")))?;
    rpq_kinematics::Robot::from_urdf_str(&text).map_err(|e| bad(e.to_string()))
}
