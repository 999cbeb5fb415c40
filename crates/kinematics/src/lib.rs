//! Kinematics of robots described in URDF: a validated kinematic tree, forward
//! kinematics, geometric Jacobians, joint limits, and collision-mesh loading. No ROS types.
//!
//! * [`Robot::from_urdf_str`] parses a URDF document ([`Robot::from_urdf_file`] reads one);
//!   fixed, revolute, continuous and prismatic joints are supported, others and mimic
//!   joints are rejected. [`Robot::new`] builds the same model without XML.
//! * Joint vectors `q` list the movable joints in [`Robot::joint_names`] order (depth
//!   first from the root link). Wrong lengths, NaN/inf and unknown names are an [`Error`].
//! * [`Robot::forward_kinematics`] gives every link's pose in the root frame
//!   ([`Robot::forward_kinematics_into`] without allocating); [`Robot::jacobian`] the
//!   6 × n geometric Jacobian, linear rows first, in the root frame.
//! * [`TriMesh`] is a plain validated triangle mesh read from STL;
//!   [`Robot::collision_meshes`] loads each link's meshes through a [`MeshResolver`].
//!
//! ```
//! use rpq_kinematics::Robot;
//!
//! let robot = Robot::from_urdf_str(include_str!("../../../urdf/rx60b.urdf"))?;
//! assert_eq!(robot.joint_names().collect::<Vec<_>>(),
//!            ["joint_1", "joint_2", "joint_3", "joint_4", "joint_5", "joint_6"]);
//!
//! // Elbow at 90°: the forearm points forward (+x), the flange is level with the elbow.
//! let q = [0.0, 0.0, 90f64.to_radians(), 0.0, 0.0, 0.0];
//! let tool = robot.link_pose("tool0", &q)?;
//! assert!((tool.translation.vector - nalgebra::Vector3::new(0.375, 0.0, 0.631)).norm() < 1e-12);
//!
//! assert!(robot.forward_kinematics(&[0.0; 5]).is_err());
//! assert!(robot.check_limits(&[3.0, 0.0, 0.0, 0.0, 0.0, 0.0]).is_err());
//! # Ok::<(), rpq_kinematics::Error>(())
//! ```
#![warn(missing_docs)]

mod error;
mod kinematics;
mod mesh;
mod model;
mod resolve;
mod urdf;

pub use error::Error;
pub use kinematics::Kinematics;
pub use mesh::TriMesh;
pub use model::{Geometry, Joint, JointKind, JointLimits, JointSpec, Link, LinkSpec, Robot, Shape};
pub use resolve::MeshResolver;
