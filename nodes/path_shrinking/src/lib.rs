//! The `path_shrinking` node's pure parts: settings, the request handling around the
//! `rpq_pathshrink` library, the demonstration state and the RViz markers. The binary only
//! wires them to DDS, so everything here is tested without a network.
//!
//! - [`settings`]: parameters, generated from `params/path_shrinking.yaml`, made into the
//!   library's parameters.
//! - [`shrinker`]: [`shrinker::Shrinker`]: from a request to the result message, the joint
//!   trajectory and the figures; refuses bad requests with a message naming the problem.
//! - [`demo`]: the demonstration mode (dragger wrench → simulator step → recorded path).
//! - [`convert`]: messages to and from the library's types.
//! - [`markers`]: `visualization_msgs/MarkerArray` of the scene, workpiece and paths.
#![warn(missing_docs)]

pub mod convert;
pub mod demo;
pub mod markers;
pub mod settings;
pub mod shrinker;

/// Errors of the path_shrinking node: the errors every node shares.
#[derive(Debug, thiserror::Error)]
pub enum NodeError {
    /// Parameters, transport, message fields and conversions.
    #[error(transparent)]
    Node(#[from] rpq_ros::NodeError),
}

rpq_ros::wrap_node_error!(NodeError);
