//! `hand_mapping`: raw data-glove readings → calibrated human hand joints → HIT/DLR hand
//! joint commands (Hu et al. IV), at the glove rate.
//!
//! ```text
//! hand_mapping --ros-args --params-file config/hand_mapping.yaml [-p human_model_file:=F]
//! ```
//!
//! | interface | type | behaviour |
//! |---|---|---|
//! | sub `glove/raw` | `rpq_interfaces/GloveReading` | reliable, depth 10; 20 finger sensors by name (or positional) |
//! | pub `human_hand/joint_states` | `sensor_msgs/JointState` | 21 calibrated human joints, per valid reading |
//! | pub `hit_dlr_hand/joint_commands` | `sensor_msgs/JointState` | 17 robot URDF joints (coupled pairs equal), per valid reading |
//! | pub `hand_controller/joint_trajectory` | `trajectory_msgs/JointTrajectory` | one point, `trajectory_time`; on timeout: last command with zero velocity |
//! | srv `~/set_fingertip_mode` | `std_srvs/SetBool` | true: fingertip mapping, false: joint-space mapping |
//! | pub `~/markers` | `visualization_msgs/MarkerArray` | human hand model beside the robot, fingertip targets, contacts in red (frame `palm`) |
//!
//! Every second a status line: readings per second, rejected readings, worst fingertip
//! error, mode, failed stop publications.
//!
//! With `contact.boxes` set, a distal link closer than `contact.distance` to a box gives a
//! (throttled) "fingertip contact" warning (proximity engine, `rpq_proximity`).
//! The joint states carry the stamp of the glove reading they come from (now if it is 0).
//! Invalid readings (wrong count, missing names, NaN, outside `raw.min..raw.max`) are rejected
//! with a (throttled) warning and the last valid command is held; after `hold_timeout`
//! without valid data the hand is stopped and a warning logged.

use std::error::Error;
use std::pin::pin;
use std::process::ExitCode;
use std::time::Duration;

use futures::StreamExt;
use hand_teleop::contact::ContactMonitor;
use hand_teleop::convert;
use hand_teleop::guard::{GloveGuard, TickAction};
use hand_teleop::markers;
use hand_teleop::settings::{self, HandMappingParams};
use hand_teleop::status::Status;
use rpq_hand::mapping::{HandMapper, MappingMode};
use rpq_hand::HandModel;
use rpq_ros::interfaces::rpq_interfaces::msg::GloveReading;
use rpq_ros::log::WarnThrottle;
use rpq_ros::msg::builtin_interfaces::Time;
use rpq_ros::msg::sensor_msgs::JointState;
use rpq_ros::msg::trajectory_msgs::JointTrajectory;
use rpq_ros::msg::visualization_msgs::MarkerArray;
use rpq_ros::run::NodeStart;
use rpq_ros::srv::std_srvs::{SetBool, SetBoolResponse};
use rpq_ros::{qos, ros_info};

fn main() -> ExitCode {
    rpq_ros::run_node(
        settings::MAPPING_NODE,
        &settings::mapping_declarations(),
        run,
    )
}

async fn run(start: NodeStart) -> Result<(), Box<dyn Error>> {
    let (mut node, shutdown, clock, log) = start.into_parts();
    let s = HandMappingParams::load(node.params())?;
    let model = HandModel::from_yaml_file(&s.human_model_file)?;
    let mut mapper = HandMapper::new(model);
    mapper.mode = s.mapping_mode()?;
    mapper.scale = s.scale;
    let mut guard = GloveGuard::new(s.raw.min, s.raw.max, s.hold_timeout);
    let mut contacts =
        ContactMonitor::new(&s.contact.mesh_dir, &s.contact.boxes, s.contact.distance)?;

    let human_pub = node.publisher::<JointState>(settings::HUMAN_JOINTS_TOPIC, qos::default())?;
    let robot_pub = node.publisher::<JointState>(settings::ROBOT_JOINTS_TOPIC, qos::default())?;
    let traj_pub =
        node.publisher::<JointTrajectory>(settings::ROBOT_TRAJECTORY_TOPIC, qos::default())?;
    let glove_sub = node.subscription::<GloveReading>(settings::GLOVE_TOPIC, qos::default())?;
    let mode_srv = node.service::<SetBool>(settings::SET_MODE_SERVICE)?;
    let state_sub = node.subscription::<JointState>(settings::ROBOT_STATE_TOPIC, qos::default())?;
    let mut states = pin!(state_sub.async_stream());
    let urdf_names = rpq_hand::robot::HitDlrHand::urdf_joint_names();
    let mut robot_state: Option<(f64, [f64; 17])> = None;
    let marker_pub = node.publisher::<MarkerArray>(settings::MARKERS_TOPIC, qos::default())?;
    let human_offset = nalgebra::Vector3::new(0.0, 0.25, 0.0);
    let mut status = Status::default();

    let mut last_command: Option<[f64; 13]> = None;
    // The last trajectory sent: when it ends (node clock) and its largest joint step, to time the
    // next one safely while the hand's joint states are not (yet) heard.
    let (mut last_end, mut last_step) = (f64::NEG_INFINITY, 0.0_f64);
    let mut contact_warned: std::collections::HashMap<(&str, usize), f64> = Default::default();
    let mut readings = pin!(glove_sub.async_stream());
    let mut mode_requests = pin!(mode_srv.receive_request_stream());
    let mut tick = tokio::time::interval(Duration::from_millis(20));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    ros_info!(
        log,
        "hand_mapping ready: model {}, mode {:?}, scale {}",
        s.human_model_file,
        mapper.mode,
        mapper.scale
    );
    // identical warnings at most every 2 s
    let mut throttle = WarnThrottle::new(2.0);
    let mut warn = |msg: String, now: f64| throttle.warn(&log, &msg, now);
    loop {
        tokio::select! {
            _ = shutdown.wait() => break,
            _ = tick.tick() => {
                let now = clock.seconds();
                if guard.tick(now) == TickAction::Stop {
                    warn(format!("no valid glove data for {} s: stopping the hand", s.hold_timeout), now);
                    if let Some(q) = last_command {
                        if let Err(e) = traj_pub.publish(convert::robot_trajectory(&q, 0.0)) {
                            status.failed_stop();
                            warn(format!("cannot publish the stop trajectory: {e}"), now);
                        }
                    }
                }
                let mode = match mapper.mode { MappingMode::Fingertip => "fingertip", MappingMode::JointSpace => "joint_space" };
                if let Some(line) = status.line(now, 1.0, mode) {
                    ros_info!(log, "{}", line);
                }
            }
            item = readings.next() => {
                let now = clock.seconds();
                let msg = match item {
                    Some(Ok((m, _))) => m,
                    Some(Err(e)) => { warn(format!("cannot read glove/raw: {e}"), now); continue; }
                    None => return Err("the glove/raw stream ended".into()),
                };
                if !clock.started() {
                    // sim time without /clock: no valid time, so no command (the hand holds)
                    warn("rejected glove reading: no /clock received yet (use_sim_time); holding the last command".into(), now);
                    continue;
                }
                let ordered = convert::order_reading(&msg);
                let raw = match ordered.map_err(|e| e.to_string()).and_then(|(v, names)| guard.accept(now, &v, &names).map_err(|e| e.to_string())) {
                    Ok(r) => r,
                    Err(e) => {
                        status.rejected();
                        warn(format!("rejected glove reading: {e}; holding the last command"), now);
                        continue;
                    }
                };
                let mapped = match mapper.map(&raw) {
                    Ok(m) => m,
                    Err(e) => {
                        status.rejected();
                        warn(format!("rejected glove reading: {e}; holding the last command"), now);
                        continue;
                    }
                };
                status.mapped(mapped.tip_error.iter().cloned().fold(0.0, f64::max));
                // outputs carry the glove reading's stamp (acquisition time); 0 means now
                let t = if msg.header.stamp == Time::default() { clock.now() } else { msg.header.stamp };
                let _ = human_pub.publish(convert::human_joint_state(&mapped, t, &s.human_joint_prefix));
                let _ = robot_pub.publish(convert::robot_joint_state(&mapped.robot, t));
                // from where the hand is (its joint_states) or the last command: slow enough for
                // its velocity limits (a cubic segment peaks at 1.5x its mean speed)
                let target = convert::command_positions(&mapped.robot);
                let max_step = |from: &[f64; 17]| (0..17).map(|k| (target[k] - from[k]).abs()).fold(0.0, f64::max);
                let heard = robot_state.as_ref().filter(|(t, _)| now - t < 1.0).map(|(_, q)| max_step(q));
                let step = match (heard, &last_command) {
                    (Some(step), _) => step,
                    // Not heard: the hand may still be on its way to the last command, so add
                    // what that move may have left; nothing sent yet: half a turn, more than any
                    // hand joint's range.
                    (None, Some(last)) => {
                        max_step(&convert::command_positions(last)) + if now < last_end { last_step } else { 0.0 }
                    }
                    (None, None) => std::f64::consts::PI,
                };
                let duration = s.trajectory_time.max(1.5 * step / s.max_joint_velocity);
                (last_end, last_step) = (now + duration, step);
                let _ = traj_pub.publish(convert::robot_trajectory(&mapped.robot, duration));
                last_command = Some(mapped.robot);
                let found = contacts.check(&mapped.robot);
                let _ = marker_pub.publish(markers::build(&mapper.human, &mapped, &found, &human_offset, t));
                for c in found {
                    // one warning per finger and box every 2 s
                    let key = (c.finger.name(), c.object);
                    if contact_warned.get(&key).is_some_and(|t| now - t < 2.0) {
                        continue;
                    }
                    contact_warned.insert(key, now);
                    warn(format!("fingertip contact: {} within {:.1} mm of contact box {}", c.finger.name(), c.distance * 1e3, c.object), now);
                }
            }
            item = states.next() => {
                if let Some(Ok((js, _))) = item {
                    if let Some(q) = convert::urdf_state(&js, &urdf_names) {
                        robot_state = Some((clock.seconds(), q));
                    }
                }
            }
            item = mode_requests.next() => {
                if let Some(Ok((id, req))) = item {
                    mapper.mode = if req.data { MappingMode::Fingertip } else { MappingMode::JointSpace };
                    let message = format!("mode {:?}", mapper.mode);
                    ros_info!(log, "~/set_fingertip_mode: {}", message);
                    let _ = mode_srv.async_send_response(id, SetBoolResponse { success: true, message }).await;
                }
            }
        }
    }
    ros_info!(log, "shutting down");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rpq_ros::params::Params;

    /// Issue 12 item 9: `raw.min:=.nan` was accepted (no range, and NaN compares false), so
    /// every reading passed the raw-range check; raw.min/raw.max and the contact boxes are now
    /// bounded and every double must be finite.
    #[test]
    fn non_finite_or_absurd_raw_bounds_are_refused() {
        for extra in [
            "    raw:\n      min: .nan\n",
            "    raw:\n      max: .inf\n",
            "    raw:\n      min: -1.0e300\n",
            "    contact:\n      boxes: [0.0, 0.0, 0.0, 1.0, 1.0, .nan]\n",
        ] {
            let text = format!("hand_mapping:\n  ros__parameters:\n{extra}");
            let r = Params::resolve(
                &settings::mapping_declarations(),
                "/hand_mapping",
                &[("p.yaml", &text)],
                &[],
            );
            assert!(r.is_err(), "{extra} accepted");
        }
    }
}
