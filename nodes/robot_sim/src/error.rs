//! The error type of the node layer (parameters, robot description, message conversion).

use crate::hardware::SimError;

/// Why the node cannot start, or why a message could not be turned into a command.
///
/// The pure simulation core has its own [`SimError`]; this type wraps it and adds what only the
/// node meets: parameters, the URDF file, and messages.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum NodeError {
    /// A parameter file, override or value is unusable (unknown name, wrong type, out of range).
    #[error(transparent)]
    Param(#[from] rpq_ros::params::ParamError),
    /// The robot description file cannot be read, is not a valid URDF, or describes a robot the
    /// simulator cannot drive.
    #[error("robot_description_file {file}: {reason}")]
    RobotDescription {
        /// The file, as given in the parameter.
        file: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The simulation core refused the configuration or a command.
    #[error(transparent)]
    Sim(#[from] SimError),
    /// A message field is unusable before it reaches the core.
    #[error("{what}: {reason}")]
    BadMessage {
        /// Which field, e.g. `trajectory header.stamp`.
        what: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A value could not be converted to a ROS message (non-finite pose, time out of range).
    #[error(transparent)]
    Message(#[from] rpq_ros::msg::MessageError),
}
