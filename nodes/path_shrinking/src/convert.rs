//! Messages to and from the library's types: poses, required spans, motion commands, the
//! joint trajectory and the result message.

use nalgebra::{Isometry3, Quaternion, Translation3, UnitQuaternion, Vector3};
use rpq_pathshrink::motion::{CommandKind, MotionCommand};
use rpq_pathshrink::program::Outcome;
use rpq_pathshrink::robot::{config_name, JointProgram};
use rpq_pathshrink::{Environment, RequiredSpan, WorkpiecePath};
use rpq_ros::interfaces::rpq_interfaces::msg::{
    MotionCommand as CommandMsg, RequiredContact, ShrunkPath,
};
use rpq_ros::interfaces::rpq_interfaces::srv::ShrinkPathResponse;
use rpq_ros::msg::builtin_interfaces::{Duration, Time};
use rpq_ros::msg::geometry_msgs::{
    Point, Pose, Quaternion as RosQuaternion, Vector3 as RosVector3,
};
use rpq_ros::msg::std_msgs::Header;
use rpq_ros::msg::trajectory_msgs::{JointTrajectory, JointTrajectoryPoint};

/// A pose message as an isometry. Every number must be finite; the quaternion must not be
/// (near) zero and is normalised. `what` names the pose in the error.
pub fn pose_from_msg(what: &str, p: &Pose) -> Result<Isometry3<f64>, String> {
    let (t, q) = (&p.position, &p.orientation);
    let all = [t.x, t.y, t.z, q.x, q.y, q.z, q.w];
    if !all.iter().all(|x| x.is_finite()) {
        return Err(format!("{what} is not finite"));
    }
    if all[..3].iter().any(|x| x.abs() > 1e3) {
        return Err(format!("{what} is more than 1 km from the origin"));
    }
    let quat = Quaternion::new(q.w, q.x, q.y, q.z);
    let norm = quat.norm();
    if norm < 1e-6 {
        return Err(format!("{what} has a zero quaternion"));
    }
    // A unit quaternion is taken bit for bit (the same path gives the same program as the
    // library's); others are normalised.
    let rotation = if (norm - 1.0).abs() < 1e-12 {
        UnitQuaternion::new_unchecked(quat)
    } else {
        UnitQuaternion::from_quaternion(quat)
    };
    Ok(Isometry3::from_parts(
        Translation3::new(t.x, t.y, t.z),
        rotation,
    ))
}

/// An isometry as a pose message.
pub fn pose_msg(p: &Isometry3<f64>) -> Pose {
    let (t, q) = (p.translation.vector, p.rotation);
    Pose {
        position: Point {
            x: t.x,
            y: t.y,
            z: t.z,
        },
        orientation: RosQuaternion {
            x: q.i,
            y: q.j,
            z: q.k,
            w: q.w,
        },
    }
}

fn vec_msg(v: &Vector3<f64>) -> RosVector3 {
    RosVector3 {
        x: v.x,
        y: v.y,
        z: v.z,
    }
}

/// Required spans from messages: object names become obstacle indices of `env`.
pub fn spans_from_msg(
    env: &Environment,
    spans: &[RequiredContact],
) -> Result<Vec<RequiredSpan>, String> {
    spans
        .iter()
        .enumerate()
        .map(|(k, s)| {
            let objects = s
                .objects
                .iter()
                .map(|n| {
                    env.obstacle_index(n)
                        .map_err(|e| format!("required_contacts[{k}]: {e}"))
                })
                .collect::<Result<Vec<_>, _>>()?;
            Ok(RequiredSpan {
                first: s.first as usize,
                last: s.last as usize,
                objects,
            })
        })
        .collect()
}

/// Required spans as messages.
pub fn spans_msg(env: &Environment, spans: &[RequiredSpan]) -> Vec<RequiredContact> {
    spans
        .iter()
        .map(|s| RequiredContact {
            first: s.first as u32,
            last: s.last as u32,
            objects: s
                .objects
                .iter()
                .map(|&i| env.obstacles[i].name.clone())
                .collect(),
        })
        .collect()
}

/// A motion command as a message.
pub fn command_msg(env: &Environment, c: &MotionCommand) -> CommandMsg {
    CommandMsg {
        r#type: match c.kind {
            CommandKind::GuardedGrasp => CommandMsg::GUARDED_GRASP,
            CommandKind::Line => CommandMsg::LINE,
        },
        node: c.node as u32,
        workpiece: pose_msg(&c.workpiece),
        flange: pose_msg(&c.flange),
        approach: c.approach.as_ref().map(pose_msg).unwrap_or_default(),
        speed: c.speed,
        angular_speed: c.angular_speed,
        slow: c.slow,
        bias: vec_msg(&c.bias),
        guard_force: c.guard_force,
        contact_objects: c
            .contacts
            .iter()
            .map(|x| env.obstacles[x.obstacle].name.clone())
            .collect(),
        contact_normals: c.contacts.iter().map(|x| vec_msg(&x.normal)).collect(),
        expected_forces: c.contacts.iter().map(|x| x.force).collect(),
    }
}

/// The joint trajectory message of a program (`header.stamp` zero: start when received).
pub fn trajectory_msg(p: &JointProgram) -> JointTrajectory {
    JointTrajectory {
        header: Header::default(),
        joint_names: p.joint_names.clone(),
        points: p
            .points
            .iter()
            .map(|pt| JointTrajectoryPoint {
                positions: pt.q.to_vec(),
                time_from_start: Duration::from_secs_f64(pt.time).unwrap_or_default(),
                ..JointTrajectoryPoint::default()
            })
            .collect(),
    }
}

fn poses(path: &WorkpiecePath) -> Vec<Pose> {
    path.nodes.iter().map(|n| pose_msg(&n.pose)).collect()
}

/// The result message of a program.
pub fn result_msg(
    env: &Environment,
    o: &Outcome,
    program: Option<&JointProgram>,
    figures: Vec<String>,
    frame: &str,
    stamp: Time,
) -> ShrunkPath {
    ShrunkPath {
        header: Header {
            stamp,
            frame_id: frame.to_string(),
        },
        recorded: poses(&o.recorded),
        modified: poses(&o.modified),
        modified_in_contact: o
            .modified
            .nodes
            .iter()
            .map(|n| !n.contacts.is_empty())
            .collect(),
        modified_required: spans_msg(env, &o.modified.spans),
        reduced: poses(&o.reduced),
        reduced_required: spans_msg(env, &o.reduced.spans),
        commands: o.commands.iter().map(|c| command_msg(env, c)).collect(),
        trajectory: program.map(trajectory_msg).unwrap_or_default(),
        arm_configuration: program
            .map(|p| config_name(p.configuration))
            .unwrap_or_default(),
        figures,
        sweeps: o.shrink.sweeps as u32,
        stabilised: o.shrink.stabilised,
        stabilise_time: o.shrink.seconds,
        length_recorded: o.stats.length_recorded,
        length_modified: o.stats.length_modified,
        length_reduced: o.stats.length_reduced,
        min_clearance: o.stats.min_clearance_modified,
        required_contacts_kept: o.stats.required_kept,
        max_line_error: program.map_or(0.0, |p| p.max_position_error),
        max_orientation_error: program.map_or(0.0, |p| p.max_orientation_error),
    }
}

/// `result` without its lists (the poses, contacts, commands and trajectory points), for a
/// service reply that could not carry them (see [`rpq_ros::service::MAX_REPLY_BYTES`]): header,
/// joint names, figures and the scalar figures stay.
pub fn result_summary(mut result: ShrunkPath) -> ShrunkPath {
    result.recorded.clear();
    result.modified.clear();
    result.modified_in_contact.clear();
    result.modified_required.clear();
    result.reduced.clear();
    result.reduced_required.clear();
    result.commands.clear();
    result.trajectory.points.clear();
    result
}

/// The reply of `~/shrink_path` (and, field for field, of `~/finish`): the whole result when
/// the reply fits in `max_bytes`; else [`result_summary`] and a message that says where the
/// whole result is (the latched `~/result`). A reply DDS has to fragment never arrives (see
/// [`rpq_ros::service::MAX_REPLY_BYTES`]): a long demonstration's poses, commands and
/// trajectory exceed it from a few hundred nodes on.
pub fn fit_reply(
    success: bool,
    message: String,
    result: ShrunkPath,
    max_bytes: usize,
) -> ShrinkPathResponse {
    let whole = ShrinkPathResponse {
        success,
        message,
        result,
    };
    let bytes = rpq_ros::service::reply_bytes(&whole);
    if bytes <= max_bytes {
        return whole;
    }
    let message = format!(
        "{}; the result's lists are not in this reply ({} kB, more than the {} kB a reply can \
         carry): read the whole result from ~/result (latched)",
        whole.message,
        bytes.div_ceil(1000),
        max_bytes / 1000
    );
    ShrinkPathResponse {
        success,
        message,
        result: result_summary(whole.result),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_result_too_large_for_a_reply_goes_without_its_lists() {
        let result = |n: usize| ShrunkPath {
            recorded: vec![Pose::default(); n],
            modified: vec![Pose::default(); n],
            modified_in_contact: vec![true; n],
            reduced: vec![Pose::default(); n / 2],
            trajectory: JointTrajectory {
                joint_names: vec!["joint_1".into(); 6],
                points: vec![
                    JointTrajectoryPoint {
                        positions: vec![0.1; 6],
                        ..JointTrajectoryPoint::default()
                    };
                    n
                ],
                ..JointTrajectory::default()
            },
            sweeps: 7,
            length_reduced: 0.25,
            figures: vec!["plot.svg".into()],
            ..ShrunkPath::default()
        };
        let max = rpq_ros::service::MAX_REPLY_BYTES;
        // a short path: the reply carries everything, unchanged
        let small = fit_reply(true, "done".into(), result(40), max);
        assert_eq!(small.result, result(40));
        assert_eq!(small.message, "done");
        assert!(rpq_ros::service::reply_bytes(&small) <= max);
        // a demonstration of 2,000 nodes (~0.4 MB): the lists stay on ~/result
        let whole = rpq_ros::service::reply_bytes(&fit_reply(
            true,
            "done".into(),
            result(2000),
            usize::MAX,
        ));
        assert!(whole > 300_000, "{whole}");
        let big = fit_reply(true, "done".into(), result(2000), max);
        assert!(big.success);
        assert!(rpq_ros::service::reply_bytes(&big) <= max);
        assert!(big
            .message
            .starts_with("done; the result's lists are not in this reply"));
        assert!(big.message.contains("~/result"), "{}", big.message);
        assert!(
            big.message
                .contains(&format!("{} kB", whole.div_ceil(1000))),
            "{}",
            big.message
        );
        let r = &big.result;
        assert!(r.recorded.is_empty() && r.modified.is_empty() && r.reduced.is_empty());
        assert!(r.modified_in_contact.is_empty() && r.trajectory.points.is_empty());
        assert_eq!((r.sweeps, r.length_reduced), (7, 0.25));
        assert_eq!(r.figures, ["plot.svg"]);
        assert_eq!(r.trajectory.joint_names.len(), 6);
    }

    #[test]
    fn poses_round_trip_and_bad_ones_are_named() {
        let iso = Isometry3::new(Vector3::new(0.1, -0.2, 0.3), Vector3::new(0.3, 0.2, -0.1));
        let back = pose_from_msg("p", &pose_msg(&iso)).unwrap();
        assert!((back.to_homogeneous() - iso.to_homogeneous()).amax() < 1e-15);
        let mut bad = pose_msg(&iso);
        bad.position.y = f64::NAN;
        assert_eq!(
            pose_from_msg("poses[3]", &bad).unwrap_err(),
            "poses[3] is not finite"
        );
        let mut zero = pose_msg(&iso);
        zero.orientation = RosQuaternion {
            x: 0.0,
            y: 0.0,
            z: 0.0,
            w: 0.0,
        };
        assert!(pose_from_msg("p", &zero)
            .unwrap_err()
            .contains("zero quaternion"));
    }
}
