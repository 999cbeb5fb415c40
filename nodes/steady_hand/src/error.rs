//! The error type of the steady_hand node layer.

/// Why a node cannot start, or why a message or request is refused.
#[derive(Debug, thiserror::Error)]
pub enum NodeError {
    /// A parameter file, override or value is unusable.
    #[error(transparent)]
    Param(#[from] rpq_ros::params::ParamError),
    /// The robot description file cannot be read or is not a valid URDF.
    #[error("robot_description_file {file}: {reason}")]
    RobotDescription {
        /// The file, as given.
        file: String,
        /// What is wrong.
        reason: String,
    },
    /// The kinematics library refused an input (unknown link or joint, wrong length, NaN).
    #[error(transparent)]
    Kinematics(#[from] rpq_kinematics::Error),
    /// The virtual-fixture library refused an input.
    #[error(transparent)]
    Fixture(#[from] rpq_virtual_fixtures::Error),
    /// A parameter value is inconsistent (e.g. unknown joint name, unknown mode).
    #[error("parameter {name}: {reason}")]
    Config {
        /// The parameter.
        name: String,
        /// What is wrong.
        reason: String,
    },
    /// A message field is unusable.
    #[error("{what}: {reason}")]
    BadMessage {
        /// Which message or field.
        what: String,
        /// What is wrong.
        reason: String,
    },
    /// A value could not be converted to or from a ROS message.
    #[error(transparent)]
    Message(#[from] rpq_ros::msg::MessageError),
}

impl NodeError {
    /// Shorthand for [`NodeError::BadMessage`].
    pub fn bad(what: impl Into<String>, reason: impl Into<String>) -> Self {
        Self::BadMessage {
            what: what.into(),
            reason: reason.into(),
        }
    }
    /// Shorthand for [`NodeError::Config`].
    pub fn config(name: impl Into<String>, reason: impl Into<String>) -> Self {
        Self::Config {
            name: name.into(),
            reason: reason.into(),
        }
    }
}
