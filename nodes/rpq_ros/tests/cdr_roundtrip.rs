//! Property tests of the CDR layer on generated message types: round trips in both byte orders,
//! truncated payloads are errors, random bytes never panic.

use proptest::prelude::*;
use rpq_ros::cdr;
use rpq_ros::interfaces::rpq_interfaces::{
    msg::DriverStatus, srv::ComputeForwardKinematicsRequest,
};
use rpq_ros::msg::{
    builtin_interfaces::{Duration, Time},
    geometry_msgs as gm, sensor_msgs, std_msgs, tf2_msgs, trajectory_msgs, RosMessage,
};

fn finite() -> impl Strategy<Value = f64> {
    prop::num::f64::NORMAL | prop::num::f64::SUBNORMAL | prop::num::f64::ZERO
}

fn text() -> impl Strategy<Value = String> {
    "\\PC{0,10}"
}

fn header() -> impl Strategy<Value = std_msgs::Header> {
    (any::<i32>(), 0u32..1_000_000_000, text()).prop_map(|(sec, nanosec, frame_id)| {
        std_msgs::Header {
            stamp: Time { sec, nanosec },
            frame_id,
        }
    })
}

fn pose() -> impl Strategy<Value = gm::Pose> {
    prop::array::uniform7(finite()).prop_map(|v| gm::Pose {
        position: gm::Point {
            x: v[0],
            y: v[1],
            z: v[2],
        },
        orientation: gm::Quaternion {
            x: v[3],
            y: v[4],
            z: v[5],
            w: v[6],
        },
    })
}

fn transform_stamped() -> impl Strategy<Value = gm::TransformStamped> {
    (header(), text(), pose()).prop_map(|(header, child_frame_id, p)| gm::TransformStamped {
        header,
        child_frame_id,
        transform: gm::Transform {
            translation: gm::Vector3 {
                x: p.position.x,
                y: p.position.y,
                z: p.position.z,
            },
            rotation: p.orientation,
        },
    })
}

fn joint_state() -> impl Strategy<Value = sensor_msgs::JointState> {
    let v = || prop::collection::vec(finite(), 0..8);
    (header(), prop::collection::vec(text(), 0..8), v(), v(), v()).prop_map(
        |(header, name, position, velocity, effort)| sensor_msgs::JointState {
            header,
            name,
            position,
            velocity,
            effort,
        },
    )
}

fn trajectory() -> impl Strategy<Value = trajectory_msgs::JointTrajectory> {
    let point = (
        prop::collection::vec(finite(), 0..4),
        prop::collection::vec(finite(), 0..4),
        any::<i32>(),
        0u32..1_000_000_000,
    )
        .prop_map(|(positions, velocities, sec, nanosec)| {
            trajectory_msgs::JointTrajectoryPoint {
                positions,
                velocities,
                time_from_start: Duration { sec, nanosec },
                ..Default::default()
            }
        });
    (
        header(),
        prop::collection::vec(text(), 0..4),
        prop::collection::vec(point, 0..4),
    )
        .prop_map(
            |(header, joint_names, points)| trajectory_msgs::JointTrajectory {
                header,
                joint_names,
                points,
            },
        )
}

fn driver_status() -> impl Strategy<Value = DriverStatus> {
    (header(), any::<u8>(), any::<bool>(), any::<u32>(), text()).prop_map(
        |(header, mode, holding, rejected_commands, last_error)| DriverStatus {
            header,
            mode,
            holding,
            rejected_commands,
            last_error,
        },
    )
}

fn check<M: RosMessage>(msg: &M) -> Result<(), TestCaseError> {
    let le = cdr::to_vec(msg).unwrap();
    prop_assert_eq!(&le[..4], &cdr::CDR_LE_HEADER);
    prop_assert_eq!(&cdr::from_bytes::<M>(&le).unwrap(), msg);
    let be = cdr::to_vec_big_endian(msg).unwrap();
    prop_assert_eq!(le.len(), be.len());
    prop_assert_eq!(&cdr::from_bytes::<M>(&be).unwrap(), msg);
    // Every strict prefix is incomplete: an error, not a wrong message or a panic.
    for cut in 4..le.len() {
        prop_assert!(
            cdr::from_bytes::<M>(&le[..cut]).is_err(),
            "prefix of {} bytes",
            cut
        );
    }
    Ok(())
}

proptest! {
    #[test]
    fn joint_state_round_trip(msg in joint_state()) {
        check(&msg)?;
    }

    #[test]
    fn tf_round_trip(transforms in prop::collection::vec(transform_stamped(), 0..4)) {
        check(&tf2_msgs::TFMessage { transforms })?;
    }

    #[test]
    fn pose_stamped_round_trip(header in header(), pose in pose()) {
        check(&gm::PoseStamped { header, pose })?;
    }

    #[test]
    fn trajectory_round_trip(msg in trajectory()) {
        check(&msg)?;
    }

    #[test]
    fn multi_array_round_trip(data in prop::collection::vec(finite(), 0..20), label in text()) {
        let msg = std_msgs::Float64MultiArray {
            layout: std_msgs::MultiArrayLayout {
                dim: vec![std_msgs::MultiArrayDimension { label, size: data.len() as u32, stride: 1 }],
                data_offset: 0,
            },
            data,
        };
        check(&msg)?;
    }

    #[test]
    fn suite_interfaces_round_trip(
        status in driver_status(),
        names in prop::collection::vec(text(), 0..6),
        positions in prop::collection::vec(finite(), 0..6),
        link in text(),
    ) {
        check(&status)?;
        check(&ComputeForwardKinematicsRequest { joint_names: names, positions, link_name: link })?;
    }

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        let mut payload = cdr::CDR_LE_HEADER.to_vec();
        payload.extend(&bytes);
        let _ = cdr::from_bytes::<sensor_msgs::JointState>(&payload);
        let _ = cdr::from_bytes::<tf2_msgs::TFMessage>(&payload);
        let _ = cdr::from_bytes::<DriverStatus>(&payload);
        let _ = cdr::from_bytes::<sensor_msgs::JointState>(&bytes);
    }
}
