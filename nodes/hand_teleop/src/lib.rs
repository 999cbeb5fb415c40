//! Data-glove calibration and human-to-robot hand mapping nodes (library part: pure
//! conversions, parameter declarations and the glove-data guard used by the binaries, so they
//! are unit-testable without DDS).
//!
//! - [`guard`]: validation of raw glove readings (count, NaN, range) and the
//!   hold-then-stop state machine of `hand_mapping`.
//! - [`bag_input`]: calibration samples from a rosbag2 (glove readings + fingertip points).
//! - [`calibration`]: the `~/calibrate` service (request files inside configured directories,
//!   results checked before they are answered or saved).
//! - [`contact`]: fingertip contact warnings with the proximity engine.
//! - [`convert`]: `GloveReading` ↔ raw vectors, `JointState` / `JointTrajectory` builders.
//! - [`fixture`]: the glove stream of the rosbag replay test (`tests/bags/hand_glove/`) and
//!   the joint outputs `hand_mapping` must give for it.
//! - [`markers`]: RViz markers of `hand_mapping` (human hand, fingertip targets, contacts in red).
//! - [`status`]: the status line `hand_mapping` logs every second.
//! - [`cyberglove`]: the CyberGlove serial protocol of `cyberglove_driver` (framing, parsing, recovery).
//! - [`settings`]: parameters of the nodes, generated from `params/<node>.yaml` (with the
//!   documented `config/<node>.yaml`, checked by a test).
#![warn(missing_docs)]

pub mod bag_input;
pub mod calibration;
pub mod contact;
pub mod convert;
pub mod cyberglove;
pub mod fixture;
pub mod guard;
pub mod markers;
pub mod settings;
pub mod status;

/// Errors of the hand_teleop nodes: the errors every node shares ([`rpq_ros::NodeError`]:
/// parameters, transport, messages) plus the hand model library's.
#[derive(Debug, thiserror::Error)]
pub enum NodeError {
    /// Parameters, transport, message fields and conversions.
    #[error(transparent)]
    Node(#[from] rpq_ros::NodeError),
    /// The hand model library refused an input.
    #[error(transparent)]
    Hand(#[from] rpq_hand::HandError),
}

rpq_ros::wrap_node_error!(NodeError);
