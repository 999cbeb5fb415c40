//! The `virtual_protection` node's pure parts: settings, the request handling around
//! `rpq_surgery` (outline checks, shield and cutting aid generation, STL saving inside the
//! configured directory, the protection set in force) and the RViz markers. The binary only
//! wires them to DDS, so everything here is tested without a network.
//!
//! - [`settings`]: parameters, generated from `params/virtual_protection.yaml`, and the rules
//!   that link them.
//! - [`server`]: [`server::ProtectionServer`]: the patient, the shield and the cutting aid in
//!   force; one function per service that turns a request into a response and never panics on
//!   bad input; the `rpq_interfaces/ProtectionMeshes` message.
//! - [`markers`]: `visualization_msgs/MarkerArray` of the meshes and of the tool-patient
//!   distance.
#![warn(missing_docs)]

pub mod markers;
pub mod server;
pub mod settings;

/// Errors of the virtual_protection node: the errors every node shares plus the protection
/// library's.
#[derive(Debug, thiserror::Error)]
pub enum NodeError {
    /// Parameters, transport, message fields and conversions.
    #[error(transparent)]
    Node(#[from] rpq_ros::NodeError),
    /// The protection library refused an input (patient mesh, phantom).
    #[error(transparent)]
    Surgery(#[from] rpq_surgery::SurgeryError),
}

rpq_ros::wrap_node_error!(NodeError);
