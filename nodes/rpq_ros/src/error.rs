//! [`NodeError`]: the errors every node meets, whatever its job: the ROS set-up (environment,
//! command line, DDS entities), parameters, the robot description, files, and messages.
//!
//! A node crate keeps its own error type for what only it meets (the simulation core of
//! `robot_sim`, the kinematics of `steady_hand`, ...) and wraps this one in a transparent
//! variant, so the common cases are spelled, displayed and matched the same way in every node.
//!
//! ```
//! use rpq_ros::error::NodeError;
//! let e = NodeError::config("rate_hz", "must be positive");
//! assert_eq!(e.to_string(), "parameter rate_hz: must be positive");
//! ```

use crate::{msg::MessageError, node::RosError, params::ParamError};

/// Why a node cannot start, or why a message or request is refused.
#[derive(Debug, thiserror::Error)]
pub enum NodeError {
    /// The ROS set-up failed: environment variable, command line, name, or a publisher,
    /// subscription or service that `ros2-client` would not create.
    #[error(transparent)]
    Ros(#[from] RosError),
    /// A parameter file, override or value is unusable (unknown name, wrong type, out of range).
    #[error(transparent)]
    Param(#[from] ParamError),
    /// A parameter value passed its type and range checks but is still unusable (an unknown
    /// joint name, an inconsistent pair of values).
    #[error("parameter {name}: {reason}")]
    Config {
        /// The parameter.
        name: String,
        /// What is wrong with its value.
        reason: String,
    },
    /// The robot description cannot be read, is not a valid URDF, or describes a robot this
    /// node cannot use.
    #[error("{origin}: {reason}")]
    RobotDescription {
        /// Where it came from: `robot_description_file <file>` or `topic <name>`.
        origin: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A file or other operating-system resource cannot be used.
    #[error("{what}")]
    Io {
        /// What was being done, e.g. `cannot read config/x.yaml`.
        what: String,
        /// The operating system's answer.
        #[source]
        error: std::io::Error,
    },
    /// A message field is unusable.
    #[error("{what}: {reason}")]
    BadMessage {
        /// Which message or field, e.g. `trajectory header.stamp`.
        what: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A value could not be converted to or from a ROS message (non-finite pose, time out of
    /// range, CDR that does not decode).
    #[error(transparent)]
    Message(#[from] MessageError),
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

    /// Shorthand for [`NodeError::Io`].
    pub fn io(what: impl Into<String>, error: std::io::Error) -> Self {
        Self::Io {
            what: what.into(),
            error,
        }
    }
}

/// Makes a node crate's error type wrap [`NodeError`]: for an enum with a variant
/// `Node(rpq_ros::NodeError)`, implements `From` for the errors every node meets
/// ([`ParamError`], [`MessageError`], [`RosError`]) so `?` works on them, and the shorthands
/// `bad(what, reason)` ([`NodeError::BadMessage`]) and `config(name, reason)`
/// ([`NodeError::Config`]).
///
/// ```
/// #[derive(Debug, thiserror::Error)]
/// enum MyError {
///     #[error(transparent)]
///     Node(#[from] rpq_ros::NodeError),
///     #[error("the arm is folded")]
///     Folded,
/// }
/// rpq_ros::wrap_node_error!(MyError);
///
/// let e = MyError::config("rate_hz", "must be positive");
/// assert_eq!(e.to_string(), "parameter rate_hz: must be positive");
/// ```
#[macro_export]
macro_rules! wrap_node_error {
    ($ty:ty) => {
        impl ::std::convert::From<$crate::params::ParamError> for $ty {
            fn from(e: $crate::params::ParamError) -> Self {
                Self::Node(e.into())
            }
        }

        impl ::std::convert::From<$crate::msg::MessageError> for $ty {
            fn from(e: $crate::msg::MessageError) -> Self {
                Self::Node(e.into())
            }
        }

        impl ::std::convert::From<$crate::node::RosError> for $ty {
            fn from(e: $crate::node::RosError) -> Self {
                Self::Node(e.into())
            }
        }

        impl $ty {
            /// A message or field `what` is unusable for `reason`
            /// (`rpq_ros::NodeError::BadMessage`).
            #[allow(dead_code)]
            pub fn bad(
                what: impl ::std::convert::Into<String>,
                reason: impl ::std::convert::Into<String>,
            ) -> Self {
                Self::Node($crate::NodeError::bad(what, reason))
            }

            /// The parameter `name` has an unusable value (`rpq_ros::NodeError::Config`).
            #[allow(dead_code)]
            pub fn config(
                name: impl ::std::convert::Into<String>,
                reason: impl ::std::convert::Into<String>,
            ) -> Self {
                Self::Node($crate::NodeError::config(name, reason))
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error;

    #[test]
    fn io_errors_keep_the_os_error_as_their_cause() {
        let e = NodeError::io(
            "cannot read x.urdf",
            std::io::Error::new(std::io::ErrorKind::NotFound, "gone"),
        );
        assert_eq!(e.to_string(), "cannot read x.urdf");
        assert_eq!(e.source().unwrap().to_string(), "gone");
    }
}
