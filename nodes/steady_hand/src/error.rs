//! The error type of the steady_hand node layer: the errors every node shares
//! ([`rpq_ros::NodeError`]: parameters, transport, robot description, messages) plus those of
//! the kinematics and virtual-fixture libraries.

/// Why a node cannot start, or why a message or request is refused.
#[derive(Debug, thiserror::Error)]
pub enum NodeError {
    /// Parameters, transport, robot description, message fields and conversions.
    #[error(transparent)]
    Node(#[from] rpq_ros::NodeError),
    /// The kinematics library refused an input (unknown link or joint, wrong length, NaN).
    #[error(transparent)]
    Kinematics(#[from] rpq_kinematics::Error),
    /// The virtual-fixture library refused an input.
    #[error(transparent)]
    Fixture(#[from] rpq_virtual_fixtures::Error),
}

rpq_ros::wrap_node_error!(NodeError);
