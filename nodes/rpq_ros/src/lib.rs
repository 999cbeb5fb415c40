//! ROS 2 transport for the rpq-ros nodes, on the pure-Rust `ros2-client` + `rustdds` stack.
//!
//! This crate is the only place where ROS messages meet the rest of the suite: the libraries in
//! `crates/` never see a ROS type, and a node is a thin loop of "read parameters, convert
//! messages, call a library, publish".
//!
//! * [`env`](mod@env), [`args`], [`params`]: the ROS environment variables, the `--ros-args` command line
//!   and parameter YAML files, as rclcpp understands them;
//! * [`names`]: the ROS name rules (node names, namespaces, topics, remaps, parameters) and
//!   topic/service name expansion, shared with `rpq_launch`;
//! * [`qos`]: QoS presets that mirror rclcpp's;
//! * [`node`], [`service`], [`shutdown`], [`log`]: a node handle with remapping, service clients
//!   that survive the lost-first-reply race, SIGINT/SIGTERM handling and logging to `/rosout`;
//! * [`msg`], [`srv`], [`interfaces`]: standard ROS 2 message and service types with their ROS
//!   names and field order, and the suite's own interfaces generated from `msg/` at build time;
//! * [`run`], [`clock`], [`error`], [`robot_description`]: the node skeleton (`main` in one
//!   line: runtime, signals, node, clock, error printing), the node's one clock (system or
//!   `/clock` with `use_sim_time`), the errors every node shares, and its URDF;
//! * [`cdr`]: CDR (XCDR1) encoding as on the wire and in rosbag2 files;
//! * [`convert`]: conversions between messages and `nalgebra` types.
#![warn(missing_docs)]

pub mod args;
pub mod cdr;
pub mod clock;
pub mod convert;
pub mod env;
pub mod error;
pub mod interfaces;
pub mod log;
pub mod msg;
pub mod names;
pub mod node;
pub mod params;
pub mod qos;
pub mod robot_description;
pub mod run;
pub mod service;
pub mod shutdown;
pub mod srv;

pub use error::NodeError;
pub use run::{run_node, NodeStart};
