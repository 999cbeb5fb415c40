//! Simulated robot driver with the behaviour of a ros2_control stack running mock hardware
//! (`forward_position_controller`, `forward_velocity_controller`, `joint_trajectory_controller`)
//! plus `robot_state_publisher`, for any URDF arm.
//!
//! * [`hardware`]: the pure simulation core: plain `f64` slices, joint names and seconds, no ROS
//!   types and no clocks;
//! * [`ros_io`]: pure conversions between ROS messages and the core, TF and forward-kinematics
//!   answers from [`rpq_kinematics`];
//! * [`settings`]: the node's parameters, generated from `params/robot_sim.yaml` (with the
//!   documented `config/robot_sim.yaml`);
//! * [`trajectory_loop`]: the `trajectory_loop` node's parameters, loop schedule and messages.
//!
//! The `robot_sim` binary is the thin ROS 2 node around them: it reads the parameters and the
//! URDF, then converts messages and calls the core on a monotonic clock. The `trajectory_loop`
//! binary drives a joint_trajectory_controller (robot_sim's) around a loop of waypoints, for
//! demos.
#![warn(missing_docs)]

mod error;
pub mod hardware;
pub mod ros_io;
pub mod settings;
pub mod trajectory_loop;

pub use error::NodeError;
