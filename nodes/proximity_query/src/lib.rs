//! The `proximity_query` node's pure parts: settings, the request handling around
//! [`rpq_scene::World`] (joint-state freshness, request checks, answers), the distance stream's
//! groups and the RViz markers. The binary only wires them to DDS, so everything here is
//! tested without a network.
//!
//! - [`settings`]: parameters, generated from `params/proximity_query.yaml`, and the rules that
//!   link them (padding list, stream groups, joint-state topics).
//! - [`server`]: [`server::Server`]: the scene, each robot's last joint state, and one function
//!   per service that turns a request into a response and never panics on bad input.
//! - [`markers`]: `visualization_msgs/MarkerArray` of the distance stream.
//! - [`protections`]: surgical protection meshes (`rpq_interfaces/ProtectionMeshes`) as simple
//!   objects added to, replaced in and removed from the scene at run time.
#![warn(missing_docs)]

pub mod markers;
pub mod protections;
pub mod server;
pub mod settings;

/// Errors of the proximity_query node: the errors every node shares plus the scene library's.
#[derive(Debug, thiserror::Error)]
pub enum NodeError {
    /// Parameters, transport, message fields and conversions.
    #[error(transparent)]
    Node(#[from] rpq_ros::NodeError),
    /// The scene library refused an input (scene file, names, paddings).
    #[error(transparent)]
    Scene(#[from] rpq_scene::SceneError),
}

rpq_ros::wrap_node_error!(NodeError);
