//! The error type of the node layer: the errors every node shares ([`rpq_ros::NodeError`]:
//! parameters, transport, robot description, messages) plus the simulation core's.

use crate::hardware::SimError;

/// Why the node cannot start, or why a message could not be turned into a command.
///
/// The pure simulation core has its own [`SimError`]; this type wraps it beside what every node
/// meets.
#[derive(Debug, thiserror::Error)]
pub enum NodeError {
    /// Parameters, transport, robot description, message fields and conversions.
    #[error(transparent)]
    Node(#[from] rpq_ros::NodeError),
    /// The simulation core refused the configuration or a command.
    #[error(transparent)]
    Sim(#[from] SimError),
}

rpq_ros::wrap_node_error!(NodeError);
