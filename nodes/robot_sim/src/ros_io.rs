//! Conversions between ROS messages and the simulation core, and the node's pure request
//! handling: what the `robot_sim` binary does between receiving a message and calling
//! [`SimHardware`](crate::hardware::SimHardware), as plain functions that open no sockets.
//!
//! * the robot: [`joint_specs`] turns the URDF's movable joints into the core's joints;
//! * commands: position and velocity commands pass `Float64MultiArray.data` to the core as is
//!   (the core checks length, finiteness and limits); [`trajectory_from_msg`] converts a
//!   `JointTrajectory`, mapping its `header.stamp` (node clock: wall or `/clock` time) onto the
//!   core's clock;
//! * outputs: [`joint_state_msg`], [`status_msg`], [`dynamic_transforms`] and
//!   [`static_transforms`] (what `robot_state_publisher` publishes on `/tf` and `/tf_static`),
//!   and [`base_transform`] (the robot's place in a shared frame such as `world`);
//! * services: [`compute_fk`] answers `~/compute_fk`.
//!
//! ```
//! use robot_sim::ros_io::{compute_fk, joint_specs};
//! use rpq_ros::interfaces::rpq_interfaces::srv::ComputeForwardKinematicsRequest;
//! use rpq_ros::msg::builtin_interfaces::Time;
//!
//! let robot = rpq_kinematics::Robot::from_urdf_str(include_str!("../../../urdf/rx60b.urdf"))?;
//! assert_eq!(joint_specs(&robot).len(), 6);
//! // Joint 3 at 90°, the others at 0: the flange is at (0.375, 0, 0.631) in base_link.
//! let request = ComputeForwardKinematicsRequest {
//!     joint_names: vec!["joint_3".into()],
//!     positions: vec![90f64.to_radians()],
//!     link_name: String::new(),
//! };
//! let response = compute_fk(&robot, &[0.0; 6], &request, "", Time::default());
//! assert!(response.success, "{}", response.message);
//! assert_eq!(response.pose.header.frame_id, "base_link");
//! assert!((response.pose.pose.position.x - 0.375).abs() < 1e-12);
//! # Ok::<(), rpq_kinematics::Error>(())
//! ```

use nalgebra::{Isometry3, Translation3, UnitQuaternion};
use rpq_kinematics::{JointKind, Robot};
use rpq_ros::interfaces::rpq_interfaces::msg::DriverStatus;
use rpq_ros::interfaces::rpq_interfaces::srv::{
    ComputeForwardKinematicsRequest, ComputeForwardKinematicsResponse,
};
use rpq_ros::msg::builtin_interfaces::{Duration, Time};
use rpq_ros::msg::geometry_msgs::{Pose, PoseStamped, Transform, TransformStamped};
use rpq_ros::msg::sensor_msgs::JointState as JointStateMsg;
use rpq_ros::msg::std_msgs::Header;
use rpq_ros::msg::tf2_msgs::TFMessage;
use rpq_ros::msg::trajectory_msgs::JointTrajectory;

use crate::hardware::{JointSpec, JointState, Mode, Status, Trajectory, TrajectoryPoint};
use crate::NodeError;

/// Topic of position commands (relative: `<ns>/forward_position_controller/commands`).
pub const POSITION_COMMANDS_TOPIC: &str = "forward_position_controller/commands";
/// Topic of velocity commands (relative).
pub const VELOCITY_COMMANDS_TOPIC: &str = "forward_velocity_controller/commands";
/// Topic of trajectories (relative).
pub const TRAJECTORY_TOPIC: &str = "joint_trajectory_controller/joint_trajectory";
/// Topic of the joint states (relative, as `joint_state_broadcaster` publishes it).
pub const JOINT_STATES_TOPIC: &str = "joint_states";
/// Topic of the URDF text (relative, latched, as `robot_state_publisher` publishes it).
pub use rpq_ros::robot_description::ROBOT_DESCRIPTION_TOPIC;
/// Topic of the moving links' transforms (absolute, as tf2's broadcaster uses it).
pub const TF_TOPIC: &str = "/tf";
/// Topic of the fixed links' transforms (absolute, latched).
pub const TF_STATIC_TOPIC: &str = "/tf_static";
/// Topic of the driver status (private).
pub const STATUS_TOPIC: &str = "~/status";
/// Forward-kinematics service (private).
pub const COMPUTE_FK_SERVICE: &str = "~/compute_fk";
/// Hold service (private).
pub const HOLD_SERVICE: &str = "~/hold";
/// Reset service (private).
pub const RESET_SERVICE: &str = "~/reset";

/// The core's joints for the movable joints of `robot`, in joint-vector order, with their
/// position limits and velocity limit. The core refuses joints without a finite, positive
/// velocity limit when it is built.
pub fn joint_specs(robot: &Robot) -> Vec<JointSpec> {
    robot
        .movable_joints()
        .zip(robot.joint_limits())
        .map(|(j, l)| match j.kind {
            JointKind::Prismatic => JointSpec::prismatic(&j.name, l.lower, l.upper, l.velocity),
            JointKind::Continuous => JointSpec::continuous(&j.name, l.velocity),
            // `movable_joints` yields no fixed joint; revolute is the remaining kind.
            JointKind::Revolute | JointKind::Fixed => {
                JointSpec::revolute(&j.name, l.lower, l.upper, l.velocity)
            }
        })
        .collect()
}

/// `sensor_msgs/JointState` for a core state: names, positions, velocities, empty effort (the
/// simulated joints have no effort interface), `header.stamp` = `stamp`, empty `frame_id`.
pub fn joint_state_msg(state: &JointState, stamp: Time) -> JointStateMsg {
    JointStateMsg {
        header: Header {
            stamp,
            frame_id: String::new(),
        },
        name: state.names.clone(),
        position: state.positions.clone(),
        velocity: state.velocities.clone(),
        effort: Vec::new(),
    }
}

/// `rpq_interfaces/DriverStatus` for a core status.
pub fn status_msg(status: &Status, stamp: Time) -> DriverStatus {
    DriverStatus {
        header: Header {
            stamp,
            frame_id: String::new(),
        },
        mode: mode_code(status.mode),
        holding: status.holding,
        rejected_commands: status.rejected_commands,
        last_error: status.last_error.clone(),
    }
}

/// The `DriverStatus::MODE_*` constant of a mode.
pub fn mode_code(mode: Mode) -> u8 {
    match mode {
        Mode::Idle => DriverStatus::MODE_IDLE,
        Mode::Position => DriverStatus::MODE_POSITION,
        Mode::Velocity => DriverStatus::MODE_VELOCITY,
        Mode::Trajectory => DriverStatus::MODE_TRAJECTORY,
    }
}

/// True when two statuses differ in anything but their header (the node publishes `~/status`
/// at once when this is true, and periodically anyway).
pub fn status_changed(previous: &DriverStatus, next: &DriverStatus) -> bool {
    previous.mode != next.mode
        || previous.holding != next.holding
        || previous.rejected_commands != next.rejected_commands
        || previous.last_error != next.last_error
}

/// How long before `now` a command was sent [s]: from its DDS source timestamp (the publisher's
/// clock) while that clock is usable, else from when the DDS layer received it (so a command
/// that waited in our queue during a stall still shows its age); 0 without either. All times
/// are wall-clock seconds since the epoch. A source timestamp later than the receive time by
/// more than `tolerance` means the publisher's clock is ahead of ours: `*source_usable` is
/// cleared and receive times are used from then on. A publisher whose clock lags ours by more
/// than the timeout has every command refused as stale (fail-safe; keep clocks synchronised).
///
/// ```
/// use robot_sim::ros_io::command_age;
/// let mut usable = true;
/// // sent 1 ms before it arrived, read 1 ms later
/// assert!((command_age(10.002, Some(10.000), Some(10.001), 0.01, &mut usable) - 0.002).abs() < 1e-9);
/// // a publisher clock 1 s ahead: receive times from now on
/// assert!((command_age(10.002, Some(11.0), Some(10.001), 0.01, &mut usable) - 0.001).abs() < 1e-9);
/// assert!(!usable);
/// ```
pub fn command_age(
    now: f64,
    source: Option<f64>,
    received: Option<f64>,
    tolerance: f64,
    source_usable: &mut bool,
) -> f64 {
    if let (Some(s), Some(r)) = (source, received) {
        if s > r + tolerance {
            *source_usable = false;
        }
    }
    let sent = match (source.filter(|_| *source_usable), received) {
        (Some(s), _) => s,
        (None, Some(r)) => r,
        (None, None) => now,
    };
    (now - sent).max(0.0)
}

fn duration_secs(what: impl FnOnce() -> String, d: &Duration) -> Result<f64, NodeError> {
    if d.nanosec >= 1_000_000_000 {
        return Err(NodeError::bad(
            what(),
            format!("nanosec {} is not below 1e9", d.nanosec),
        ));
    }
    Ok(d.as_secs_f64())
}

/// Refuses a trajectory with more than `max_points` points (parameter
/// `max_trajectory_points`) before anything else looks at it: converting and checking a
/// 100k-point message stalled the simulation loop for most of a second.
pub fn check_trajectory_size(msg: &JointTrajectory, max_points: usize) -> Result<(), NodeError> {
    if msg.points.len() > max_points {
        return Err(NodeError::bad(
            "trajectory points",
            format!(
                "{} points, more than max_trajectory_points ({max_points})",
                msg.points.len()
            ),
        ));
    }
    Ok(())
}

/// Converts a `trajectory_msgs/JointTrajectory` for the core, whose clock reads `now_mono`
/// (seconds) while the wall clock reads `now_wall` (seconds since the epoch).
///
/// `header.stamp` zero means "start when accepted" (as in `joint_trajectory_controller`);
/// otherwise the stamp is a time on the node's clock (wall, or `/clock` with `use_sim_time`)
/// and becomes `now_mono + (stamp - now_wall)` on the
/// core's clock. A stamp from before the core's clock started (`now_wall - now_mono`) is
/// refused. `effort` is ignored. Everything else (names, lengths, finiteness, limits, timing)
/// is the core's to check.
pub fn trajectory_from_msg(
    msg: &JointTrajectory,
    now_mono: f64,
    now_wall: f64,
) -> Result<Trajectory, NodeError> {
    let stamp = &msg.header.stamp;
    let start_time = if stamp.sec == 0 && stamp.nanosec == 0 {
        0.0
    } else {
        if stamp.nanosec >= 1_000_000_000 {
            return Err(NodeError::bad(
                "trajectory header.stamp",
                format!("nanosec {} is not below 1e9", stamp.nanosec),
            ));
        }
        let start = now_mono + (stamp.as_secs_f64() - now_wall);
        if start <= 0.0 {
            return Err(NodeError::bad(
                "trajectory header.stamp",
                format!(
                    "{} s is before the node started ({} s); use 0 for \"now\"",
                    stamp.as_secs_f64(),
                    now_wall - now_mono
                ),
            ));
        }
        start
    };
    let points = msg
        .points
        .iter()
        .enumerate()
        .map(|(k, p)| {
            Ok(TrajectoryPoint {
                positions: p.positions.clone(),
                velocities: p.velocities.clone(),
                accelerations: p.accelerations.clone(),
                time_from_start: duration_secs(
                    || format!("trajectory point {k} time_from_start"),
                    &p.time_from_start,
                )?,
            })
        })
        .collect::<Result<Vec<_>, NodeError>>()?;
    Ok(Trajectory {
        joint_names: msg.joint_names.clone(),
        points,
        start_time,
    })
}

fn transform_stamped(
    parent: &str,
    child: &str,
    pose: &Isometry3<f64>,
    prefix: &str,
    stamp: Time,
) -> Result<TransformStamped, NodeError> {
    Ok(TransformStamped {
        header: Header {
            stamp,
            frame_id: format!("{prefix}{parent}"),
        },
        child_frame_id: format!("{prefix}{child}"),
        transform: Transform::try_from(pose)?,
    })
}

/// Transforms of the joints that `movable` selects, parent link -> child link.
fn transforms(
    robot: &Robot,
    movable: bool,
    q: &[f64],
    prefix: &str,
    stamp: Time,
) -> Result<TFMessage, NodeError> {
    let links = robot.links();
    let mut out = Vec::new();
    for joint in robot
        .joints()
        .iter()
        .filter(|j| j.kind.is_movable() == movable)
    {
        let value = match joint.dof_index {
            Some(d) => *q.get(d).ok_or_else(|| {
                NodeError::bad(
                    "joint positions",
                    format!("{} values for {} joints", q.len(), robot.dof()),
                )
            })?,
            None => 0.0,
        };
        out.push(transform_stamped(
            &links[joint.parent].name,
            &links[joint.child].name,
            &joint.transform(value),
            prefix,
            stamp,
        )?);
    }
    Ok(TFMessage { transforms: out })
}

/// What `robot_state_publisher` puts on `/tf` for joint positions `q` (joint-vector order): one
/// transform per movable joint, from its parent link to its child link, names prefixed with
/// `prefix`, all stamped `stamp`. Fails on a wrong length or non-finite value.
pub fn dynamic_transforms(
    robot: &Robot,
    q: &[f64],
    prefix: &str,
    stamp: Time,
) -> Result<TFMessage, NodeError> {
    transforms(robot, true, q, prefix, stamp)
}

/// What `robot_state_publisher` puts on `/tf_static`, once: one transform per fixed joint.
pub fn static_transforms(robot: &Robot, prefix: &str, stamp: Time) -> Result<TFMessage, NodeError> {
    transforms(robot, false, &[], prefix, stamp)
}

/// The transform from `parent_frame` to the robot's root link (`prefix` + root link) for a
/// robot standing at `pose` = x y z (m), roll pitch yaw (rad, URDF convention) in that frame:
/// what a `static_transform_publisher` of the base would put on `/tf_static`. The parent frame
/// gets no prefix. Fails on a non-finite pose.
pub fn base_transform(
    robot: &Robot,
    parent_frame: &str,
    pose: &[f64; 6],
    prefix: &str,
    stamp: Time,
) -> Result<TransformStamped, NodeError> {
    let [x, y, z, roll, pitch, yaw] = *pose;
    let iso = Isometry3::from_parts(
        Translation3::new(x, y, z),
        UnitQuaternion::from_euler_angles(roll, pitch, yaw),
    );
    Ok(TransformStamped {
        header: Header {
            stamp,
            frame_id: parent_frame.to_string(),
        },
        child_frame_id: format!("{prefix}{}", robot.root_link().name),
        transform: Transform::try_from(&iso)?,
    })
}

/// The link `~/compute_fk` uses when the request names none: the last link in the robot's
/// depth-first link order, which for a serial chain is its tip (`tool0` for the RX60).
pub fn default_fk_link(robot: &Robot) -> &str {
    robot.links().last().map_or("", |l| l.name.as_str())
}

fn fk_pose(
    robot: &Robot,
    current: &[f64],
    req: &ComputeForwardKinematicsRequest,
) -> Result<(String, Pose), String> {
    if req.joint_names.len() != req.positions.len() {
        return Err(format!(
            "joint_names has {} entries but positions has {}",
            req.joint_names.len(),
            req.positions.len()
        ));
    }
    if current.len() != robot.dof() {
        return Err(format!(
            "the current state has {} values for {} joints",
            current.len(),
            robot.dof()
        ));
    }
    let mut q = current.to_vec();
    let mut seen = vec![false; q.len()];
    for (name, &value) in req.joint_names.iter().zip(&req.positions) {
        let i = robot.joint_index(name).map_err(|_| {
            format!(
                "unknown joint `{name}` (joints: {})",
                robot.joint_names().collect::<Vec<_>>().join(", ")
            )
        })?;
        if std::mem::replace(&mut seen[i], true) {
            return Err(format!("joint `{name}` is given more than once"));
        }
        if !value.is_finite() {
            return Err(format!("position of joint `{name}` is {value}, not finite"));
        }
        q[i] = value;
    }
    let link = if req.link_name.is_empty() {
        default_fk_link(robot)
    } else {
        req.link_name.as_str()
    };
    let pose = robot.link_pose(link, &q).map_err(|e| match e {
        rpq_kinematics::Error::UnknownLink { name } => format!(
            "unknown link `{name}` (links: {})",
            robot
                .links()
                .iter()
                .map(|l| l.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        other => other.to_string(),
    })?;
    let pose = Pose::try_from(&pose).map_err(|e| e.to_string())?;
    Ok((link.to_string(), pose))
}

/// Answers a `rpq_interfaces/srv/ComputeForwardKinematics` request for a robot whose joints are
/// at `current` (joint-vector order).
///
/// Empty `joint_names` and `positions` mean the current state; named joints override their
/// current value, the others keep it. Positions outside the joint limits are allowed (this is
/// geometry, not a command). `link_name` empty means [`default_fk_link`]. The pose is in the
/// root link's frame, `header.frame_id` = `frame_prefix` + root link, `header.stamp` = `stamp`.
/// Unknown joint or link names, a length mismatch, a repeated joint or a non-finite value give
/// `success = false` with the reason in `message` and an identity pose.
pub fn compute_fk(
    robot: &Robot,
    current: &[f64],
    req: &ComputeForwardKinematicsRequest,
    frame_prefix: &str,
    stamp: Time,
) -> ComputeForwardKinematicsResponse {
    let header = Header {
        stamp,
        frame_id: format!("{frame_prefix}{}", robot.root_link().name),
    };
    match fk_pose(robot, current, req) {
        Ok((_, pose)) => ComputeForwardKinematicsResponse {
            success: true,
            message: String::new(),
            pose: PoseStamped { header, pose },
        },
        Err(message) => ComputeForwardKinematicsResponse {
            success: false,
            message,
            pose: PoseStamped {
                header,
                pose: Pose::default(),
            },
        },
    }
}

#[cfg(test)]
mod tests;
