//! Simulated robot driver with the behaviour of a ros2_control stack running mock hardware
//! (`forward_position_controller`, `forward_velocity_controller`, `joint_trajectory_controller`).
//!
//! The library holds the pure simulation core, [`hardware`]: plain `f64` slices, joint names and
//! seconds, no ROS types and no clocks. The `robot_sim` binary converts messages and calls it.
#![warn(missing_docs)]

pub mod hardware;
