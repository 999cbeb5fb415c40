//! `trajectory_loop`: drives a `joint_trajectory_controller` (robot_sim's, or a real ros2_control
//! one) through a fixed loop of waypoints, forever, for demos such as
//! `launch/proximity.launch.xml`.
//!
//! ```text
//! trajectory_loop --ros-args --params-file config/trajectory_loop.yaml [-r __ns:=/left]
//! ```
//!
//! | interface | type | |
//! |---|---|---|
//! | pub `joint_trajectory_controller/joint_trajectory` | `trajectory_msgs/JointTrajectory` | reliable, depth 10: the loop, one trajectory per period; the hold on exit |
//! | sub `joint_states` | `sensor_msgs/JointState` | reliable, depth 10: the joints' positions, by name |
//!
//! The node waits for the first joint state with every joint of `joint_names` and for the
//! controller's subscription, then sends the loop on its clock's grid
//! ([`robot_sim::trajectory_loop`]) and sends it again each time it ends; an arm that is not at
//! the last waypoint when a loop ends is reported (throttled). On SIGINT/SIGTERM, or when an
//! input stream fails, it sends a one-point trajectory to the last joint-state positions with
//! zero velocity (reached after `stop_time`), so the arm stops, then exits (code 0, or 1 with
//! the error). Parameters: `config/trajectory_loop.yaml`.

use std::error::Error;
use std::pin::pin;
use std::process::ExitCode;
use std::time::Duration;

use futures::StreamExt;
use robot_sim::trajectory_loop::{
    declarations, TrajectoryLoopParams, END_TOLERANCE, JOINT_STATES_TOPIC, NODE_NAME,
    TRAJECTORY_TOPIC,
};
use rpq_ros::log::WarnThrottle;
use rpq_ros::msg::sensor_msgs::JointState;
use rpq_ros::msg::trajectory_msgs::JointTrajectory;
use rpq_ros::run::NodeStart;
use rpq_ros::{qos, ros_info, ros_warn};
use tokio::time::{interval, MissedTickBehavior};

fn main() -> ExitCode {
    rpq_ros::run_node(NODE_NAME, &declarations(), run)
}

/// How often the node looks at its clock for the end of the running loop.
const TICK: Duration = Duration::from_millis(5);
/// Time given to the DDS writer to put the hold on the wire before the process ends.
const EXIT_FLUSH: Duration = Duration::from_millis(200);

async fn run(start: NodeStart) -> Result<(), Box<dyn Error>> {
    let (mut node, shutdown, clock, log) = start.into_parts();
    let settings = TrajectoryLoopParams::load(node.params())?;
    let plan = settings.plan()?;
    let traj_topic = node.resolve_name(TRAJECTORY_TOPIC)?;
    let js_topic = node.resolve_name(JOINT_STATES_TOPIC)?;
    let traj_pub = node.publisher::<JointTrajectory>(TRAJECTORY_TOPIC, qos::default())?;
    let js_sub = node.subscription::<JointState>(JOINT_STATES_TOPIC, qos::default())?;
    let mut states = pin!(js_sub.async_stream());
    let mut tick = interval(TICK);
    tick.set_missed_tick_behavior(MissedTickBehavior::Skip);
    let mut throttle = WarnThrottle::new(5.0);

    ros_info!(
        log,
        "waiting for {js_topic} and for a subscriber of {traj_topic}"
    );
    // the latest positions of the loop's joints, and the end (node clock, s) of the loop sent
    let mut positions: Option<Vec<f64>> = None;
    let mut loop_end: Option<f64> = None;
    let mut matched = false;
    let result: Result<(), Box<dyn Error>> = loop {
        tokio::select! {
            _ = shutdown.wait() => break Ok(()),
            item = states.next() => match item {
                Some(Ok((msg, _))) => match plan.positions(&msg) {
                    Some(q) => positions = Some(q),
                    None => throttle.warn(
                        &log,
                        &format!(
                            "a joint state on {js_topic} lacks some of [{}]",
                            plan.joint_names().join(", ")
                        ),
                        clock.seconds(),
                    ),
                },
                Some(Err(e)) => throttle.warn(
                    &log,
                    &format!("cannot read a joint state on {js_topic}: {e}"),
                    clock.seconds(),
                ),
                None => break Err(format!("the stream of {js_topic} ended").into()),
            },
            _ = tick.tick() => {
                if positions.is_none() || !clock.started() {
                    continue;
                }
                if !matched {
                    matched = node.wait_for_subscriber(&traj_pub, TICK).await;
                    continue;
                }
                let now = clock.now().as_secs_f64();
                if loop_end.is_some_and(|end| now < end) {
                    continue;
                }
                if let (Some(_), Some(q)) = (loop_end, &positions) {
                    let off = plan.distance_from_last_waypoint(q);
                    if off > END_TOLERANCE {
                        throttle.warn(
                            &log,
                            &format!(
                                "the loop ended with the arm {off:.3} rad or m from its last \
                                 waypoint: did the controller refuse the trajectory? (see its log)"
                            ),
                            clock.seconds(),
                        );
                    }
                }
                let step = plan.next(now);
                if loop_end.is_none() {
                    ros_info!(
                        log,
                        "looping through {} waypoints every {} s, starting with waypoint {}",
                        plan.waypoints().len(),
                        plan.period(),
                        step.first_waypoint
                    );
                }
                if let Err(e) = traj_pub.publish(step.message) {
                    break Err(format!("cannot publish on {traj_topic}: {e}").into());
                }
                loop_end = Some(step.end);
            }
        }
    };
    if let (Some(_), Some(q)) = (loop_end, &positions) {
        let hold = plan.hold(q, settings.stop_time);
        match traj_pub.publish(hold) {
            Ok(()) => {
                let p: Vec<String> = q.iter().map(|v| format!("{v:.4}")).collect();
                ros_info!(log, "stopping: holding at [{}]", p.join(", "));
            }
            Err(e) => ros_warn!(log, "cannot send the hold on {traj_topic}: {e}"),
        }
        // let the DDS writer put the hold on the wire before the process ends
        tokio::time::sleep(EXIT_FLUSH).await;
    }
    ros_info!(log, "shutting down");
    result
}
