//! Tests of the message conversions against the kinematics library, the URDF's numbers and the
//! simulation core.

use std::collections::HashMap;

use nalgebra::{Isometry3, Vector3};
use rpq_ros::msg::std_msgs::Float64MultiArray;
use rpq_ros::msg::trajectory_msgs::JointTrajectoryPoint;

use super::*;
use crate::hardware::{JointKind as SimKind, Mode, SimConfig, SimError, SimHardware};

const RX60: &str = include_str!("../../../../urdf/rx60b.urdf");

fn rx60() -> Robot {
    Robot::from_urdf_str(RX60).unwrap()
}

fn sim(robot: &Robot) -> SimHardware {
    let mut hw = SimHardware::new(joint_specs(robot), SimConfig::default()).unwrap();
    hw.step(0.0);
    hw
}

fn stamp(sec: i32, nanosec: u32) -> Time {
    Time { sec, nanosec }
}

fn dur(secs: f64) -> Duration {
    Duration::from_secs_f64(secs).unwrap()
}

/// A few joint vectors inside the RX60's limits, including both ends of J5's asymmetric range.
fn samples() -> Vec<[f64; 6]> {
    vec![
        [0.0; 6],
        [0.3, -0.7, 1.1, -2.0, 0.4, 3.0],
        [-2.79, 2.2, -2.3, 4.7, -1.9, -4.7],
        [1.0, 0.5, 0.25, 0.125, 2.1, -0.5],
    ]
}

// ---------------------------------------------------------------- robot

#[test]
fn joint_specs_carry_the_urdf_limits() {
    let specs = joint_specs(&rx60());
    let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        ["joint_1", "joint_2", "joint_3", "joint_4", "joint_5", "joint_6"]
    );
    // Values as written in urdf/rx60b.urdf (J5 is the asymmetric one).
    assert_eq!(
        specs[4].kind,
        SimKind::Revolute {
            lower: -1.911135530933791,
            upper: 2.1031217486531673
        }
    );
    assert_eq!(specs[5].max_velocity, 12.217304763960307);
    // And they agree with the limits issue 2 gives in degrees.
    let deg = [160.0, 127.5, 134.5, 270.0, 120.5, 270.0];
    for (s, d) in specs.iter().zip(deg) {
        let (_, hi) = s.bounds();
        assert!((hi - f64::to_radians(d)).abs() < 1e-12, "{s:?}");
    }
}

const KINDS: &str = r#"<robot name="kinds">
  <link name="base"/><link name="a"/><link name="b"/><link name="c"/>
  <joint name="spin" type="continuous"><parent link="base"/><child link="a"/>
    <axis xyz="0 0 1"/><limit effort="1" velocity="2"/></joint>
  <joint name="slide" type="prismatic"><parent link="a"/><child link="b"/>
    <origin xyz="0 0 0.5"/><axis xyz="1 0 0"/><limit lower="-0.1" upper="0.3" effort="1" velocity="0.5"/></joint>
  <joint name="mount" type="fixed"><parent link="b"/><child link="c"/><origin xyz="0 0 0.1"/></joint>
</robot>"#;

#[test]
fn joint_kinds_map_to_the_core() {
    let robot = Robot::from_urdf_str(KINDS).unwrap();
    let specs = joint_specs(&robot);
    assert_eq!(specs.len(), 2);
    assert_eq!(specs[0], JointSpec::continuous("spin", 2.0));
    assert_eq!(specs[1], JointSpec::prismatic("slide", -0.1, 0.3, 0.5));
    assert!(SimHardware::new(specs, SimConfig::default()).is_ok());
}

#[test]
fn a_joint_without_velocity_limit_is_refused_by_name() {
    let urdf = KINDS.replace(r#"<limit effort="1" velocity="2"/>"#, "");
    let robot = Robot::from_urdf_str(&urdf).unwrap();
    let err = SimHardware::new(joint_specs(&robot), SimConfig::default()).unwrap_err();
    assert!(
        matches!(&err, SimError::InvalidJoint { joint, .. } if joint == "spin"),
        "{err}"
    );
}

// ---------------------------------------------------------------- commands

#[test]
fn bad_forward_commands_are_rejected_and_the_robot_keeps_its_command() {
    let robot = rx60();
    let mut hw = sim(&robot);
    let good = Float64MultiArray {
        data: vec![0.5, 0.0, 0.0, 0.0, 0.0, 0.0],
        ..Default::default()
    };
    hw.command_position(&good.data, 0.0).unwrap();
    let bad = [
        (vec![0.5; 5], "expected 6 values"),
        (vec![0.5; 7], "expected 6 values"),
        (vec![], "expected 6 values"),
        (
            vec![f64::NAN, 0.0, 0.0, 0.0, 0.0, 0.0],
            "not a finite number",
        ),
        (
            vec![0.0, 0.0, 0.0, 0.0, 0.0, f64::INFINITY],
            "not a finite number",
        ),
        (vec![0.0, 0.0, 0.0, 0.0, 2.2, 0.0], "outside its limits"),
    ];
    for (k, (data, reason)) in bad.iter().enumerate() {
        let msg = Float64MultiArray {
            data: data.clone(),
            ..Default::default()
        };
        let err = hw.command_position(&msg.data, 0.01 * k as f64).unwrap_err();
        assert!(err.to_string().contains(reason), "{data:?}: {err}");
        assert_eq!(hw.status().rejected_commands, k as u32 + 1);
        assert_eq!(hw.status().last_error, err.to_string());
        assert_eq!(hw.status().mode, Mode::Position);
    }
    // Velocities beyond the URDF's velocity limit (J1: 5.009 rad/s) are refused too.
    let err = hw
        .command_velocity(&[5.1, 0.0, 0.0, 0.0, 0.0, 0.0], 0.1)
        .unwrap_err();
    assert!(err.to_string().contains("velocity limit"), "{err}");
    // The good position command went on: J1 reaches 0.5 rad within 0.5 / 5.009 s.
    assert_eq!(hw.step(1.0).positions[0], 0.5);
}

fn trajectory(names: &[&str], points: Vec<(Vec<f64>, f64)>, header_stamp: Time) -> JointTrajectory {
    JointTrajectory {
        header: Header {
            stamp: header_stamp,
            frame_id: String::new(),
        },
        joint_names: names.iter().map(|s| s.to_string()).collect(),
        points: points
            .into_iter()
            .map(|(positions, t)| JointTrajectoryPoint {
                positions,
                time_from_start: dur(t),
                ..Default::default()
            })
            .collect(),
    }
}

const NAMES: [&str; 6] = [
    "joint_1", "joint_2", "joint_3", "joint_4", "joint_5", "joint_6",
];

#[test]
fn trajectory_fields_and_times_are_converted() {
    let mut msg = trajectory(
        &NAMES,
        vec![(vec![0.1; 6], 0.5), (vec![0.2; 6], 1.25)],
        stamp(0, 0),
    );
    msg.points[1].velocities = vec![0.0; 6];
    msg.points[1].accelerations = vec![0.0; 6];
    msg.points[1].effort = vec![9.0; 6];
    let t = trajectory_from_msg(&msg, 12.0, 1_700_000_000.0).unwrap();
    assert_eq!(t.start_time, 0.0, "zero stamp: start when accepted");
    assert_eq!(t.joint_names, NAMES);
    assert_eq!(t.points.len(), 2);
    assert_eq!(t.points[0].time_from_start, 0.5);
    assert_eq!(t.points[1].time_from_start, 1.25);
    assert_eq!(t.points[1].positions, vec![0.2; 6]);
    assert_eq!(t.points[1].velocities, vec![0.0; 6]);
    assert_eq!(t.points[1].accelerations, vec![0.0; 6]);
    assert!(t.points[0].velocities.is_empty());

    // A wall-clock stamp 1.5 s in the future starts 1.5 s later on the monotonic clock.
    msg.header.stamp = stamp(1_700_000_001, 500_000_000);
    let t = trajectory_from_msg(&msg, 12.0, 1_700_000_000.0).unwrap();
    assert!((t.start_time - 13.5).abs() < 1e-6, "{}", t.start_time);
    // A stamp in the recent past maps to an earlier, still positive core time.
    msg.header.stamp = stamp(1_699_999_995, 0);
    let t = trajectory_from_msg(&msg, 12.0, 1_700_000_000.0).unwrap();
    assert!((t.start_time - 7.0).abs() < 1e-6, "{}", t.start_time);
}

#[test]
fn malformed_trajectory_headers_and_durations_are_errors() {
    let mut msg = trajectory(&NAMES, vec![(vec![0.1; 6], 0.5)], stamp(1_000, 0));
    // Before the node started (wall 1e9 - 12 s).
    let err = trajectory_from_msg(&msg, 12.0, 1_000_000_000.0).unwrap_err();
    assert!(err.to_string().contains("before the node started"), "{err}");
    msg.header.stamp = stamp(1_000_000_000, 1_000_000_000);
    let err = trajectory_from_msg(&msg, 12.0, 1_000_000_000.0).unwrap_err();
    assert!(err.to_string().contains("header.stamp"), "{err}");
    msg.header.stamp = stamp(0, 0);
    msg.points[0].time_from_start = Duration {
        sec: 1,
        nanosec: 2_000_000_000,
    };
    let err = trajectory_from_msg(&msg, 12.0, 1_000_000_000.0).unwrap_err();
    assert!(
        err.to_string()
            .contains("trajectory point 0 time_from_start"),
        "{err}"
    );
}

/// Issue 12 item 11: a 100k-point trajectory stalled robot_sim for 0.83 s; more than
/// `max_trajectory_points` points are refused before conversion, naming the bound.
#[test]
fn too_long_trajectories_are_refused_before_conversion() {
    let mut msg = trajectory(&NAMES, vec![(vec![0.1; 6], 0.5)], stamp(0, 0));
    let point = msg.points[0].clone();
    msg.points = vec![point; 100_000];
    let err = check_trajectory_size(&msg, 10_000).unwrap_err();
    assert!(
        err.to_string().contains("100000 points")
            && err.to_string().contains("max_trajectory_points (10000)"),
        "{err}"
    );
    msg.points.truncate(10_000);
    assert!(check_trajectory_size(&msg, 10_000).is_ok());
}

#[test]
fn trajectories_the_core_refuses_keep_the_robot_still() {
    let robot = rx60();
    let mut hw = sim(&robot);
    let cases = [
        (
            trajectory(
                &["joint_1", "elbow"],
                vec![(vec![0.1, 0.1], 1.0)],
                stamp(0, 0),
            ),
            "unknown joint `elbow`",
        ),
        (
            trajectory(&NAMES[..3], vec![(vec![0.1; 3], 1.0)], stamp(0, 0)),
            "allow_partial_joints_goal",
        ),
        (
            trajectory(&NAMES, vec![(vec![0.1; 5], 1.0)], stamp(0, 0)),
            "expected 6 values",
        ),
        (
            trajectory(
                &NAMES,
                vec![(vec![0.1, 0.1, f64::NAN, 0.1, 0.1, 0.1], 1.0)],
                stamp(0, 0),
            ),
            "not a finite number",
        ),
        (
            trajectory(&NAMES, vec![(vec![3.0; 6], 1.0)], stamp(0, 0)),
            "outside its limits",
        ),
        (
            trajectory(
                &NAMES,
                vec![(vec![0.1; 6], 1.0), (vec![0.2; 6], 0.5)],
                stamp(0, 0),
            ),
            "is not after the previous point",
        ),
        (
            trajectory(&NAMES, vec![], stamp(0, 0)),
            "trajectory has no points",
        ),
    ];
    for (k, (msg, reason)) in cases.iter().enumerate() {
        let t = trajectory_from_msg(msg, 0.1, 1e9).unwrap();
        let err = hw.command_trajectory(&t, 0.1).unwrap_err();
        assert!(err.to_string().contains(reason), "case {k}: {err}");
        assert_eq!(hw.status().rejected_commands, k as u32 + 1);
    }
    assert_eq!(hw.status().mode, Mode::Idle);
    assert_eq!(hw.step(2.0).positions, vec![0.0; 6]);
    // A valid one is followed and ends on its last point.
    let ok = trajectory(&NAMES, vec![(vec![0.1; 6], 1.0)], stamp(0, 0));
    hw.command_trajectory(&trajectory_from_msg(&ok, 2.0, 1e9).unwrap(), 2.0)
        .unwrap();
    assert_eq!(hw.step(3.5).positions, vec![0.1; 6]);
}

// ---------------------------------------------------------------- outputs

#[test]
fn joint_state_and_status_messages_copy_the_core() {
    let robot = rx60();
    let mut hw = sim(&robot);
    hw.command_velocity(&[0.5, 0.0, 0.0, 0.0, 0.0, -0.25], 0.0)
        .unwrap();
    let state = hw.step(0.2).clone();
    let msg = joint_state_msg(&state, stamp(7, 8));
    assert_eq!(msg.header.stamp, stamp(7, 8));
    assert_eq!(msg.name, NAMES);
    assert_eq!(msg.position, state.positions);
    assert_eq!(msg.velocity, vec![0.5, 0.0, 0.0, 0.0, 0.0, -0.25]);
    assert!(msg.effort.is_empty());

    let s1 = status_msg(hw.status(), stamp(1, 0));
    assert_eq!(s1.mode, DriverStatus::MODE_VELOCITY);
    assert!(!s1.holding);
    assert_eq!(s1.rejected_commands, 0);
    assert_eq!(s1.last_error, "");
    // Only a stamp differs: no change. A timeout is one.
    let s2 = status_msg(hw.status(), stamp(2, 0));
    assert!(!status_changed(&s1, &s2));
    hw.step(1.0);
    let s3 = status_msg(hw.status(), stamp(3, 0));
    assert!(status_changed(&s2, &s3));
    assert!(s3.holding);
    assert!(s3.last_error.contains("timed out"), "{}", s3.last_error);
    let _ = hw.command_position(&[9.0; 6], 1.0);
    let s4 = status_msg(hw.status(), stamp(4, 0));
    assert!(status_changed(&s3, &s4));
    assert_eq!(s4.rejected_commands, 1);
    assert_eq!(s4.mode, DriverStatus::MODE_VELOCITY);
}

/// Link poses in the root frame composed from a set of transforms, as a tf2 listener would.
fn compose(tfs: &[TransformStamped], root: &str) -> HashMap<String, Isometry3<f64>> {
    let edges: HashMap<&str, (&str, Isometry3<f64>)> = tfs
        .iter()
        .map(|t| {
            (
                t.child_frame_id.as_str(),
                (
                    t.header.frame_id.as_str(),
                    Isometry3::try_from(&t.transform).unwrap(),
                ),
            )
        })
        .collect();
    let mut out = HashMap::new();
    for &child in edges.keys() {
        let mut pose = Isometry3::identity();
        let mut frame = child;
        while frame != root {
            let (parent, t) = edges[frame];
            pose = t * pose;
            frame = parent;
        }
        out.insert(child.to_string(), pose);
    }
    out
}

#[test]
fn tf_tree_reproduces_forward_kinematics() {
    let robot = rx60();
    let statics = static_transforms(&robot, "", stamp(1, 0)).unwrap();
    assert_eq!(statics.transforms.len(), 1);
    assert_eq!(statics.transforms[0].header.frame_id, "link_6");
    assert_eq!(statics.transforms[0].child_frame_id, "tool0");
    for q in samples() {
        let dynamic = dynamic_transforms(&robot, &q, "", stamp(5, 6)).unwrap();
        assert_eq!(dynamic.transforms.len(), 6);
        for (k, t) in dynamic.transforms.iter().enumerate() {
            assert_eq!(t.header.stamp, stamp(5, 6));
            let parent = if k == 0 {
                "base_link".to_string()
            } else {
                format!("link_{k}")
            };
            assert_eq!(t.header.frame_id, parent);
            assert_eq!(t.child_frame_id, format!("link_{}", k + 1));
        }
        let all: Vec<_> = dynamic
            .transforms
            .iter()
            .chain(&statics.transforms)
            .cloned()
            .collect();
        let tree = compose(&all, "base_link");
        let fk = robot.forward_kinematics(&q).unwrap();
        assert_eq!(tree.len(), robot.links().len() - 1);
        for (link, pose) in robot.links().iter().zip(&fk).skip(1) {
            let got = tree[&link.name];
            let dt = (got.translation.vector - pose.translation.vector).norm();
            let dr = got.rotation.angle_to(&pose.rotation);
            assert!(
                dt < 1e-12 && dr < 1e-12,
                "{}: {dt} {dr} at {q:?}",
                link.name
            );
        }
    }
}

#[test]
fn tf_frames_get_the_prefix_and_bad_vectors_are_errors() {
    let robot = rx60();
    let tf = dynamic_transforms(&robot, &[0.0; 6], "robot1/", stamp(0, 0)).unwrap();
    assert_eq!(tf.transforms[0].header.frame_id, "robot1/base_link");
    assert_eq!(tf.transforms[5].child_frame_id, "robot1/link_6");
    let st = static_transforms(&robot, "robot1/", stamp(0, 0)).unwrap();
    assert_eq!(st.transforms[0].child_frame_id, "robot1/tool0");
    assert!(dynamic_transforms(&robot, &[0.0; 5], "", stamp(0, 0)).is_err());
    let nan = [f64::NAN, 0.0, 0.0, 0.0, 0.0, 0.0];
    assert!(matches!(
        dynamic_transforms(&robot, &nan, "", stamp(0, 0)),
        Err(NodeError::Node(rpq_ros::NodeError::Message(_)))
    ));
}

#[test]
fn base_transform_places_the_prefixed_root_in_the_parent_frame() {
    let robot = rx60();
    let pose = [0.6, 0.1, -0.2, 0.0, 0.0, std::f64::consts::PI];
    let t = base_transform(&robot, "world", &pose, "right/", stamp(3, 0)).unwrap();
    assert_eq!(t.header.frame_id, "world");
    assert_eq!(t.header.stamp, stamp(3, 0));
    assert_eq!(t.child_frame_id, "right/base_link");
    let v = &t.transform.translation;
    assert_eq!((v.x, v.y, v.z), (0.6, 0.1, -0.2));
    // yaw pi: quaternion (0, 0, 1, 0) up to sign
    let r = &t.transform.rotation;
    assert!(
        r.x.abs() < 1e-12
            && r.y.abs() < 1e-12
            && (r.z.abs() - 1.0).abs() < 1e-12
            && r.w.abs() < 1e-12
    );
    // roll, pitch and yaw compose as in URDF (Rz * Ry * Rx), as rpq_kinematics reads <origin rpy>
    let rpy = [0.3, -0.4, 1.2];
    let t = base_transform(
        &robot,
        "w",
        &[0.0, 0.0, 0.0, rpy[0], rpy[1], rpy[2]],
        "",
        stamp(0, 0),
    )
    .unwrap();
    let q = &t.transform.rotation;
    let got =
        nalgebra::UnitQuaternion::from_quaternion(nalgebra::Quaternion::new(q.w, q.x, q.y, q.z));
    let want = nalgebra::Rotation3::from_axis_angle(&Vector3::z_axis(), rpy[2])
        * nalgebra::Rotation3::from_axis_angle(&Vector3::y_axis(), rpy[1])
        * nalgebra::Rotation3::from_axis_angle(&Vector3::x_axis(), rpy[0]);
    assert!(got
        .to_rotation_matrix()
        .matrix()
        .relative_eq(want.matrix(), 1e-12, 1e-12));
    let nan = [f64::NAN, 0.0, 0.0, 0.0, 0.0, 0.0];
    assert!(base_transform(&robot, "world", &nan, "", stamp(0, 0)).is_err());
}

// ---------------------------------------------------------------- compute_fk

fn fk_request(names: &[&str], positions: &[f64], link: &str) -> ComputeForwardKinematicsRequest {
    ComputeForwardKinematicsRequest {
        joint_names: names.iter().map(|s| s.to_string()).collect(),
        positions: positions.to_vec(),
        link_name: link.to_string(),
    }
}

fn pose_of(r: &ComputeForwardKinematicsResponse) -> Isometry3<f64> {
    Isometry3::try_from(&r.pose.pose).unwrap()
}

fn assert_pose(got: &Isometry3<f64>, want: &Isometry3<f64>) {
    let dt = (got.translation.vector - want.translation.vector).norm();
    let dr = got.rotation.angle_to(&want.rotation);
    assert!(dt < 1e-12 && dr < 1e-12, "got {got:?}, want {want:?}");
}

#[test]
fn fk_of_the_current_state_is_the_tool_pose() {
    let robot = rx60();
    assert_eq!(default_fk_link(&robot), "tool0");
    for q in samples() {
        let r = compute_fk(&robot, &q, &fk_request(&[], &[], ""), "", stamp(3, 4));
        assert!(r.success, "{}", r.message);
        assert_eq!(r.message, "");
        assert_eq!(r.pose.header.frame_id, "base_link");
        assert_eq!(r.pose.header.stamp, stamp(3, 4));
        assert_pose(&pose_of(&r), &robot.link_pose("tool0", &q).unwrap());
    }
    // The zero pose against the DH numbers of issue 2: 0.341 + 0.290 + 0.310 + 0.065 m up.
    let r = compute_fk(
        &robot,
        &[0.0; 6],
        &fk_request(&[], &[], ""),
        "",
        stamp(0, 0),
    );
    let p = pose_of(&r).translation.vector;
    assert!((p - Vector3::new(0.0, 0.0, 1.006)).norm() < 1e-12, "{p}");
}

#[test]
fn named_joints_override_the_current_state() {
    let robot = rx60();
    let current = samples()[1];
    let r = compute_fk(
        &robot,
        &current,
        &fk_request(&["joint_5", "joint_2"], &[0.9, -0.1], "link_5"),
        "arm/",
        stamp(0, 0),
    );
    assert!(r.success, "{}", r.message);
    assert_eq!(r.pose.header.frame_id, "arm/base_link");
    let mut q = current;
    q[4] = 0.9;
    q[1] = -0.1;
    assert_pose(&pose_of(&r), &robot.link_pose("link_5", &q).unwrap());
    // A full vector by name, in any order, does not depend on the current state; positions
    // beyond the limits are still geometry.
    let names = [
        "joint_6", "joint_5", "joint_4", "joint_3", "joint_2", "joint_1",
    ];
    let values = [0.1, 0.2, 0.3, 0.4, 0.5, 3.0];
    let r = compute_fk(
        &robot,
        &[0.0; 6],
        &fk_request(&names, &values, ""),
        "",
        stamp(0, 0),
    );
    assert!(r.success, "{}", r.message);
    let q = [3.0, 0.5, 0.4, 0.3, 0.2, 0.1];
    assert_pose(&pose_of(&r), &robot.link_pose("tool0", &q).unwrap());
    // The root link is the identity.
    let r = compute_fk(
        &robot,
        &q,
        &fk_request(&[], &[], "base_link"),
        "",
        stamp(0, 0),
    );
    assert_pose(&pose_of(&r), &Isometry3::identity());
}

#[test]
fn bad_fk_requests_fail_with_a_reason() {
    let robot = rx60();
    let cases = [
        (
            fk_request(&["joint_1"], &[], ""),
            "joint_names has 1 entries but positions has 0",
        ),
        (fk_request(&[], &[0.1], ""), "positions has 1"),
        (fk_request(&["elbow"], &[0.1], ""), "unknown joint `elbow`"),
        (fk_request(&["tool0"], &[0.1], ""), "unknown joint `tool0`"),
        (fk_request(&["joint_1"], &[f64::NAN], ""), "not finite"),
        (
            fk_request(&["joint_1"], &[f64::NEG_INFINITY], ""),
            "not finite",
        ),
        (
            fk_request(&["joint_1", "joint_1"], &[0.1, 0.2], ""),
            "more than once",
        ),
        (fk_request(&[], &[], "gripper"), "unknown link `gripper`"),
    ];
    for (req, reason) in cases {
        let r = compute_fk(&robot, &[0.0; 6], &req, "", stamp(0, 0));
        assert!(!r.success, "{req:?}");
        assert!(r.message.contains(reason), "{req:?}: {}", r.message);
        assert_eq!(r.pose.pose, Pose::default());
    }
    // A state of the wrong length (a node bug) is an error, not a panic.
    let r = compute_fk(
        &robot,
        &[0.0; 3],
        &fk_request(&[], &[], ""),
        "",
        stamp(0, 0),
    );
    assert!(!r.success);
}
