//! Conversions between ROS messages and the `rpq_hand` types.

use rpq_hand::mapping::MappedHand;
use rpq_hand::model::Finger;
use rpq_hand::robot::HitDlrHand;
use rpq_ros::interfaces::rpq_interfaces::msg::GloveReading;
use rpq_ros::msg::builtin_interfaces::{Duration, Time};
use rpq_ros::msg::sensor_msgs::JointState;
use rpq_ros::msg::std_msgs::Header;
use rpq_ros::msg::trajectory_msgs::{JointTrajectory, JointTrajectoryPoint};

use crate::guard::{Rejection, SENSORS};

/// The 20 finger sensor names in mapping order: `thumb_0..3, index_0..3, …, little_0..3`.
pub fn sensor_names() -> Vec<String> {
    Finger::ALL
        .iter()
        .flat_map(|f| (0..4).map(move |k| format!("{}_{k}", f.name())))
        .collect()
}

/// Orders a reading into the 20 finger sensors: by name when `names` is given (extra names
/// ignored), positionally when it is empty.
pub fn order_reading(msg: &GloveReading) -> Result<(Vec<f64>, Vec<String>), Rejection> {
    if msg.names.is_empty() {
        return Ok((msg.raw.clone(), sensor_names()));
    }
    if msg.names.len() != msg.raw.len() {
        return Err(Rejection::Count {
            expected: msg.names.len(),
            got: msg.raw.len(),
        });
    }
    let want = sensor_names();
    let mut out = Vec::with_capacity(SENSORS);
    for n in &want {
        let i = msg
            .names
            .iter()
            .position(|m| m == n)
            .ok_or_else(|| Rejection::MissingName(n.clone()))?;
        out.push(msg.raw[i]);
    }
    Ok((out, want))
}

/// A glove reading message with the 20 sensors in mapping order.
pub fn glove_reading(stamp: Time, frame_id: &str, raw: &[f64; SENSORS]) -> GloveReading {
    GloveReading {
        header: Header {
            stamp,
            frame_id: frame_id.to_string(),
        },
        names: sensor_names(),
        raw: raw.to_vec(),
    }
}

/// Human joint names and angles (thumb T0, T1, Ttwist, T2, T3; fingers X0..X3): 21 joints.
pub fn human_joints(m: &MappedHand) -> (Vec<String>, Vec<f64>) {
    let mut pos = Vec::with_capacity(21);
    for f in Finger::ALL {
        pos.extend_from_slice(&m.human[f.index()][..f.chain_joints()]);
    }
    (rpq_hand::HandModel::joint_names(), pos)
}

/// `sensor_msgs/JointState` of the calibrated human hand.
pub fn human_joint_state(m: &MappedHand, stamp: Time, prefix: &str) -> JointState {
    let (names, position) = human_joints(m);
    JointState {
        header: Header {
            stamp,
            frame_id: String::new(),
        },
        name: names.into_iter().map(|n| format!("{prefix}{n}")).collect(),
        position,
        velocity: Vec::new(),
        effort: Vec::new(),
    }
}

/// Margin (rad) kept from every joint limit in the commands: a trajectory controller that
/// blends a new command into the motion in progress (robot_sim starts the segment with the
/// current velocity) overshoots a target at the limit by up to about 1 mrad, and a driver that
/// checks the interpolated positions against the URDF limits would refuse it.
pub const LIMIT_MARGIN: f64 = 0.01;

/// The 17 URDF joint positions commanded for the 13 DOF `q`: coupled pairs equal, each kept
/// [`LIMIT_MARGIN`] inside its limits.
pub fn command_positions(q: &[f64; 13]) -> [f64; 17] {
    let mut inner = *q;
    for (v, (lo, hi)) in inner.iter_mut().zip(HitDlrHand::limits()) {
        *v = v.clamp(lo + LIMIT_MARGIN, hi - LIMIT_MARGIN);
    }
    HitDlrHand::urdf_positions(&inner)
}

/// `sensor_msgs/JointState` of the HIT/DLR hand: the 17 URDF joints (coupled pairs equal,
/// [`command_positions`]).
pub fn robot_joint_state(q: &[f64; 13], stamp: Time) -> JointState {
    JointState {
        header: Header {
            stamp,
            frame_id: String::new(),
        },
        name: HitDlrHand::urdf_joint_names(),
        position: command_positions(q).to_vec(),
        velocity: Vec::new(),
        effort: Vec::new(),
    }
}

/// The 17 URDF joint positions of the HIT/DLR hand from a joint state naming them all (in
/// any order, others ignored); `None` when one is missing or not finite.
pub fn urdf_state(js: &JointState, names: &[String]) -> Option<[f64; 17]> {
    let mut q = [0.0; 17];
    for (k, n) in names.iter().enumerate().take(17) {
        let i = js.name.iter().position(|m| m == n)?;
        q[k] = *js.position.get(i).filter(|v| v.is_finite())?;
    }
    Some(q)
}

fn duration(s: f64) -> Duration {
    let s = s.max(0.0);
    Duration {
        sec: s.floor() as i32,
        nanosec: ((s - s.floor()) * 1e9) as u32,
    }
}

/// A one-point `trajectory_msgs/JointTrajectory` for a ros2_control joint_trajectory_controller
/// of the hand: reach `q` (17 URDF joints) `time_from_start` seconds after receipt (stamp 0 =
/// start now), with zero final velocity. Used both for commands and for the stop (the current
/// command with zero velocity).
pub fn robot_trajectory(q: &[f64; 13], time_from_start: f64) -> JointTrajectory {
    let positions = command_positions(q).to_vec();
    JointTrajectory {
        header: Header::default(),
        joint_names: HitDlrHand::urdf_joint_names(),
        points: vec![JointTrajectoryPoint {
            velocities: vec![0.0; positions.len()],
            positions,
            accelerations: Vec::new(),
            effort: Vec::new(),
            time_from_start: duration(time_from_start),
        }],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_by_name_and_ignores_extras() {
        let mut names = sensor_names();
        names.reverse();
        names.push("wrist_pitch".into());
        let mut raw: Vec<f64> = (0..20).map(|i| (19 - i) as f64).collect();
        raw.push(999.0);
        let msg = GloveReading {
            header: Header::default(),
            names,
            raw,
        };
        let (v, _) = order_reading(&msg).unwrap();
        assert_eq!(v, (0..20).map(|i| i as f64).collect::<Vec<_>>());
        let mut bad = msg.clone();
        bad.names[0] = "x".into();
        assert!(matches!(
            order_reading(&bad),
            Err(Rejection::MissingName(_))
        ));
    }

    #[test]
    fn trajectory_and_states_have_17_joints() {
        let q = [0.1; 13];
        let t = robot_trajectory(&q, 0.05);
        assert_eq!(t.joint_names.len(), 17);
        assert_eq!(t.points[0].positions.len(), 17);
        assert_eq!(t.points[0].time_from_start.nanosec, 50_000_000);
        assert_eq!(robot_joint_state(&q, Time::default()).name.len(), 17);
    }
}
