//! ROS 2 transport for the rpq-ros nodes, on the pure-Rust `ros2-client` + `rustdds` stack.
//!
//! This crate is the only place where ROS messages meet the rest of the suite: the libraries in
//! `crates/` never see a ROS type, and a node is a thin loop of "read parameters, convert
//! messages, call a library, publish".
//!
//! * [`env`](mod@env), [`args`], [`params`]: the ROS environment variables, the `--ros-args` command line
//!   and parameter YAML files, as rclcpp understands them;
//! * [`qos`]: QoS presets that mirror rclcpp's;
//! * [`node`], [`service`], [`shutdown`], [`log`]: a node handle with remapping, service clients
//!   that survive the lost-first-reply race, SIGINT/SIGTERM handling and logging to `/rosout`;
//! * [`msg`], [`srv`], [`interfaces`]: standard ROS 2 message and service types with their ROS
//!   names and field order, and the suite's own interfaces generated from `msg/` at build time;
//! * [`cdr`]: CDR (XCDR1) encoding as on the wire and in rosbag2 files;
//! * [`convert`]: conversions between messages and `nalgebra` types.
#![warn(missing_docs)]

pub mod args;
pub mod cdr;
pub mod convert;
pub mod env;
pub mod interfaces;
pub mod log;
pub mod msg;
pub mod node;
pub mod params;
pub mod qos;
pub mod service;
pub mod shutdown;
pub mod srv;
