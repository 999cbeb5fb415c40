//! `path_shrinking`: Lloyd & Pai's path shrinking as a ROS 2 node.
//!
//! ```text
//! path_shrinking --ros-args --params-file config/path_shrinking.yaml -p scene_file:=config/puzzle.scene.yaml
//! ```
//!
//! | interface | type | behaviour |
//! |---|---|---|
//! | srv `~/shrink_path` | `rpq_interfaces/ShrinkPath` | workpiece path → modified path, reduced nodes, motion commands, joint trajectory, figures; optionally executed |
//! | sub `<demo.wrench_topic>` | `geometry_msgs/WrenchStamped` | demonstration: one simulator step per wrench |
//! | pub `~/workpiece_pose` | `geometry_msgs/PoseStamped` | demonstration: the workpiece after each step |
//! | pub `/tf` | `tf2_msgs/TFMessage` | demonstration: world → `<workpiece>` |
//! | srv `~/start_recording`, `~/reset` | `std_srvs/Trigger` | demonstration: start recording; back to the start |
//! | srv `~/set_capture` | `rpq_interfaces/SetCapture` | demonstration: contacts to keep |
//! | srv `~/finish` | `rpq_interfaces/FinishDemonstration` | demonstration: recorded path → program, optionally executed |
//! | pub `~/result` | `rpq_interfaces/ShrunkPath` (latched) | the last program |
//! | pub `~/markers` | `visualization_msgs/MarkerArray` | scene, workpiece, paths |
//! | sub `<robot_io.joint_states_topic>` | `sensor_msgs/JointState` | the robot's joints (needed to execute) |
//! | pub `<robot_io.trajectory_topic>` | `trajectory_msgs/JointTrajectory` | the program, when executed |
//! | client `<robot_io.hold_service>` | `std_srvs/Trigger` | stop on exit while a program may run |
//!
//! A program is computed off the event loop (the demonstration keeps stepping meanwhile); a
//! second request while one is computed is answered "busy". Nothing is sent to the robot for a
//! refused request.

use std::error::Error;
use std::pin::pin;
use std::time::Duration;

use futures::StreamExt;
use path_shrinking::convert::{fit_reply, pose_from_msg, trajectory_msg};
use path_shrinking::demo::DemoState;
use path_shrinking::markers::{markers, Shown};
use path_shrinking::settings::{self, services, Settings};
use path_shrinking::shrinker::{Computed, Shrinker};
use ros2_client::RmwRequestId;
use rpq_pathshrink::Pose;
use rpq_ros::interfaces::rpq_interfaces::msg::ShrunkPath;
use rpq_ros::interfaces::rpq_interfaces::srv::{
    FinishDemonstration, FinishDemonstrationResponse, SetCapture, SetCaptureResponse, ShrinkPath,
    ShrinkPathResponse,
};
use rpq_ros::log::WarnThrottle;
use rpq_ros::msg::geometry_msgs::{PoseStamped, Transform, TransformStamped, WrenchStamped};
use rpq_ros::msg::sensor_msgs::JointState;
use rpq_ros::msg::std_msgs::Header;
use rpq_ros::msg::tf2_msgs::TFMessage;
use rpq_ros::msg::trajectory_msgs::JointTrajectory;
use rpq_ros::msg::visualization_msgs::MarkerArray;
use rpq_ros::run::NodeStart;
use rpq_ros::srv::std_srvs::{Trigger, TriggerRequest, TriggerResponse};
use rpq_ros::{qos, ros_info, ros_warn};
use tokio::task::JoinHandle;
use tokio::time::{interval, MissedTickBehavior};

fn main() -> std::process::ExitCode {
    rpq_ros::run_node(settings::NODE_NAME, &settings::declarations(), run)
}

/// Which service a computation answers.
enum Reply {
    Shrink(RmwRequestId),
    Finish(RmwRequestId),
}

/// A computation running off the event loop.
struct Pending {
    reply: Reply,
    execute: bool,
    task: JoinHandle<Result<Computed, String>>,
}

/// The robot's joints in kinematic order from a joint state (matched by name).
fn joints_of(names: &[String], msg: &JointState) -> Option<[f64; 6]> {
    let mut q = [0.0; 6];
    if names.len() != 6 {
        return None;
    }
    for (j, n) in names.iter().enumerate() {
        let k = msg.name.iter().position(|m| m == n)?;
        q[j] = *msg.position.get(k)?;
        if !q[j].is_finite() {
            return None;
        }
    }
    Some(q)
}

async fn run(start: NodeStart) -> Result<(), Box<dyn Error>> {
    let (mut node, shutdown, clock, log) = start.into_parts();
    let s = Settings::load(node.params())?;
    let p = &s.params;
    let scene = rpq_scene::load_scene(&p.scene_file)
        .map_err(|e| rpq_ros::NodeError::config("scene_file", format!("{}: {e}", p.scene_file)))?;
    let reply_max_bytes = s.reply_max_bytes();
    let shrinker = Shrinker::new(
        scene,
        &p.robot,
        s.program,
        &p.world_frame,
        &p.output_directory,
        s.max_path_nodes(),
    )
    .map_err(|e| rpq_ros::NodeError::config("scene_file", e))?;
    let joint_names: Vec<String> = shrinker
        .robot()
        .map(|r| r.kinematics().joint_names().map(str::to_string).collect())
        .unwrap_or_default();
    let mut demo = if p.demo.workpiece.is_empty() {
        None
    } else {
        Some(
            DemoState::new(
                &shrinker,
                &p.demo.workpiece,
                &p.demo.obstacles,
                p.demo.record_on_start,
            )
            .map_err(|e| rpq_ros::NodeError::config("demo.workpiece", e))?,
        )
    };

    let shrink_srv = node.service::<ShrinkPath>(services::SHRINK_PATH)?;
    let start_srv = node.service::<Trigger>(services::START_RECORDING)?;
    let finish_srv = node.service::<FinishDemonstration>(services::FINISH)?;
    let capture_srv = node.service::<SetCapture>(services::SET_CAPTURE)?;
    let reset_srv = node.service::<Trigger>(services::RESET)?;
    let mut shrinks = pin!(shrink_srv.receive_request_stream());
    let mut starts = pin!(start_srv.receive_request_stream());
    let mut finishes = pin!(finish_srv.receive_request_stream());
    let mut captures = pin!(capture_srv.receive_request_stream());
    let mut resets = pin!(reset_srv.receive_request_stream());
    // Every dragger wrench is a simulator step: keep them all (reliable, deep queue).
    let wrench_sub =
        node.subscription::<WrenchStamped>(&p.demo.wrench_topic, qos::reliable(1000))?;
    let mut wrenches = pin!(wrench_sub.async_stream());
    let joint_sub =
        node.subscription::<JointState>(&p.robot_io.joint_states_topic, qos::default())?;
    let mut joint_states = pin!(joint_sub.async_stream());
    let pose_pub =
        node.publisher::<PoseStamped>(settings::WORKPIECE_POSE_TOPIC, qos::reliable(1000))?;
    let tf_pub = node.publisher::<TFMessage>(settings::TF_TOPIC, qos::default())?;
    let marker_pub = node.publisher::<MarkerArray>(settings::MARKERS_TOPIC, qos::default())?;
    let result_pub = node.publisher::<ShrunkPath>(settings::RESULT_TOPIC, qos::latched())?;
    let traj_pub =
        node.publisher::<JointTrajectory>(&p.robot_io.trajectory_topic, qos::default())?;
    let hold = node.client::<Trigger>(&p.robot_io.hold_service)?;

    let markers_on = p.marker_rate > 0.0;
    let mut marker_tick = interval(Duration::from_secs_f64(1.0 / p.marker_rate.max(0.01)));
    marker_tick.set_missed_tick_behavior(MissedTickBehavior::Skip);
    let mut throttle = WarnThrottle::new(5.0);
    let mut last_joints: Option<([f64; 6], f64)> = None;
    let mut pending: Option<Pending> = None;
    let mut last_result: Option<ShrunkPath> = None;
    // Until when a trajectory this node sent may still run (node clock, s).
    let mut running_until: Option<f64> = None;
    let frame = p.world_frame.clone();
    let fresh = |last: &Option<([f64; 6], f64)>, now: f64| {
        last.and_then(|(q, t)| (now - t <= p.robot_io.joint_state_timeout).then_some(q))
    };
    ros_info!(
        log,
        "path_shrinking ready: scene {} ({} robot), demonstration {}",
        p.scene_file,
        shrinker
            .robot()
            .map_or("no".to_string(), |r| format!("`{}` as the", r.name())),
        if p.demo.workpiece.is_empty() {
            "off".to_string()
        } else {
            format!("of `{}` on {}", p.demo.workpiece, p.demo.wrench_topic)
        }
    );

    loop {
        tokio::select! {
            _ = shutdown.wait() => break,
            done = async { (&mut pending.as_mut().expect("guarded").task).await }, if pending.is_some() => {
                let job = pending.take().expect("guarded");
                let outcome = done.unwrap_or_else(|e| Err(format!("the computation failed: {e}")));
                let (success, message, result) = match outcome {
                    Ok(c) => {
                        let mut message = c.summary.clone();
                        if job.execute {
                            match &c.program {
                                Some(prog) => {
                                    let end = prog.points.last().map_or(0.0, |x| x.time);
                                    match traj_pub.publish(trajectory_msg(prog)) {
                                        Ok(()) => {
                                            running_until = Some(clock.seconds() + end);
                                            message += "; trajectory sent";
                                        }
                                        Err(e) => message += &format!("; sending the trajectory failed: {e}"),
                                    }
                                }
                                None => message += "; no trajectory (no robot): nothing sent",
                            }
                        }
                        (true, message, c.result)
                    }
                    Err(e) => (false, e, ShrunkPath::default()),
                };
                if success {
                    ros_info!(log, "{message}");
                    if let Err(e) = result_pub.publish(result.clone()) {
                        ros_warn!(log, "cannot publish the result: {e}");
                    }
                    last_result = Some(result.clone());
                } else {
                    ros_warn!(log, "refused: {message}");
                }
                // the whole result is on ~/result; a reply DDS would fragment never arrives
                let said = message.len();
                let r = fit_reply(success, message, result, reply_max_bytes);
                if r.message.len() != said {
                    ros_info!(log, "{}", &r.message[said..].trim_start_matches("; "));
                }
                match job.reply {
                    Reply::Shrink(id) => {
                        if let Err(e) = shrink_srv.async_send_response(id, r).await {
                            ros_warn!(log, "cannot answer {}: {e}", services::SHRINK_PATH);
                        }
                    }
                    Reply::Finish(id) => {
                        let ShrinkPathResponse { success, message, result } = r;
                        let r = FinishDemonstrationResponse { success, message, result };
                        if let Err(e) = finish_srv.async_send_response(id, r).await {
                            ros_warn!(log, "cannot answer {}: {e}", services::FINISH);
                        }
                    }
                }
            }
            item = shrinks.next() => if let Some(Ok((id, req))) = item {
                let joints = fresh(&last_joints, clock.seconds());
                let checked = if pending.is_some() {
                    Err("busy: another program is being computed; try again".to_string())
                } else {
                    shrinker
                        .precheck(req.poses.len(), &req.figures, req.execute, joints.as_ref())
                        .and_then(|()| shrinker.path_of(&req))
                };
                match checked {
                    Ok((env, path, note)) => {
                        let sh = shrinker.clone();
                        let stamp = clock.now();
                        let figures = req.figures.clone();
                        let task = tokio::task::spawn_blocking(move || {
                            sh.compute(env, path, &figures, joints, stamp).map(|mut c| {
                                c.summary += &note;
                                c
                            })
                        });
                        pending = Some(Pending { reply: Reply::Shrink(id), execute: req.execute, task });
                    }
                    Err(message) => {
                        ros_warn!(log, "{}: refused: {message}", services::SHRINK_PATH);
                        let r = ShrinkPathResponse { success: false, message, ..ShrinkPathResponse::default() };
                        if let Err(e) = shrink_srv.async_send_response(id, r).await {
                            ros_warn!(log, "cannot answer {}: {e}", services::SHRINK_PATH);
                        }
                    }
                }
            },
            item = finishes.next() => if let Some(Ok((id, req))) = item {
                let joints = fresh(&last_joints, clock.seconds());
                let checked = match (&mut demo, pending.is_some()) {
                    (_, true) => Err("busy: another program is being computed; try again".to_string()),
                    (None, _) => Err("the demonstration mode is off (demo.workpiece is empty)".to_string()),
                    (Some(d), false) => shrinker
                        .precheck(d.recorded().len(), &req.figures, req.execute, joints.as_ref())
                        .and_then(|()| d.finish(&req.required_contacts))
                        .map(|path| (d.env().clone(), path)),
                };
                match checked {
                    Ok((env, path)) => {
                        let sh = shrinker.clone();
                        let stamp = clock.now();
                        let figures = req.figures.clone();
                        let task = tokio::task::spawn_blocking(move || sh.compute(env, path, &figures, joints, stamp));
                        pending = Some(Pending { reply: Reply::Finish(id), execute: req.execute, task });
                    }
                    Err(message) => {
                        ros_warn!(log, "{}: refused: {message}", services::FINISH);
                        let r = FinishDemonstrationResponse { success: false, message, ..FinishDemonstrationResponse::default() };
                        if let Err(e) = finish_srv.async_send_response(id, r).await {
                            ros_warn!(log, "cannot answer {}: {e}", services::FINISH);
                        }
                    }
                }
            },
            item = starts.next() => if let Some(Ok((id, _req))) = item {
                let r = match &mut demo {
                    Some(d) => {
                        d.start_recording();
                        ros_info!(log, "recording the demonstration");
                        TriggerResponse { success: true, message: "recording".into() }
                    }
                    None => TriggerResponse { success: false, message: "the demonstration mode is off (demo.workpiece is empty)".into() },
                };
                if let Err(e) = start_srv.async_send_response(id, r).await {
                    ros_warn!(log, "cannot answer {}: {e}", services::START_RECORDING);
                }
            },
            item = resets.next() => if let Some(Ok((id, _req))) = item {
                let r = match &mut demo {
                    Some(d) => {
                        d.reset();
                        TriggerResponse { success: true, message: "the workpiece is back at its start".into() }
                    }
                    None => TriggerResponse { success: false, message: "the demonstration mode is off (demo.workpiece is empty)".into() },
                };
                if let Err(e) = reset_srv.async_send_response(id, r).await {
                    ros_warn!(log, "cannot answer {}: {e}", services::RESET);
                }
            },
            item = captures.next() => if let Some(Ok((id, req))) = item {
                let r = match &mut demo {
                    Some(d) => match d.set_capture(&req.objects) {
                        Ok(()) => SetCaptureResponse { success: true, message: format!("capturing [{}]", req.objects.join(", ")) },
                        Err(message) => SetCaptureResponse { success: false, message },
                    },
                    None => SetCaptureResponse { success: false, message: "the demonstration mode is off (demo.workpiece is empty)".into() },
                };
                if !r.success {
                    ros_warn!(log, "{}: refused: {}", services::SET_CAPTURE, r.message);
                }
                if let Err(e) = capture_srv.async_send_response(id, r).await {
                    ros_warn!(log, "cannot answer {}: {e}", services::SET_CAPTURE);
                }
            },
            item = wrenches.next() => match item {
                Some(Ok((w, _))) => if let Some(d) = &mut demo {
                    match d.on_wrench(&w) {
                        Ok(note) => {
                            if let Some(n) = note {
                                ros_warn!(log, "{n}");
                            }
                            let pose = d.pose();
                            let header = Header { stamp: clock.now(), frame_id: frame.clone() };
                            if let Err(e) = pose_pub.publish(PoseStamped { header: header.clone(), pose: path_shrinking::convert::pose_msg(&pose) }) {
                                if let Some(m) = throttle.filter(&format!("cannot publish the workpiece pose: {e}"), clock.seconds()) {
                                    ros_warn!(log, "{m}");
                                }
                            }
                            let tf = TransformStamped {
                                header,
                                child_frame_id: p.demo.workpiece.clone(),
                                transform: Transform::try_from(&pose).unwrap_or_default(),
                            };
                            if let Err(e) = tf_pub.publish(TFMessage { transforms: vec![tf] }) {
                                if let Some(m) = throttle.filter(&format!("cannot publish /tf: {e}"), clock.seconds()) {
                                    ros_warn!(log, "{m}");
                                }
                            }
                        }
                        Err(e) => if let Some(m) = throttle.filter(&format!("ignoring a dragger wrench: {e}"), clock.seconds()) {
                            ros_warn!(log, "{m}");
                        },
                    }
                },
                Some(Err(e)) => if let Some(m) = throttle.filter(&format!("cannot read a dragger wrench: {e}"), clock.seconds()) {
                    ros_warn!(log, "{m}");
                },
                None => return Err("the dragger wrench stream ended".into()),
            },
            item = joint_states.next() => match item {
                Some(Ok((msg, _))) => match joints_of(&joint_names, &msg) {
                    Some(q) => last_joints = Some((q, clock.seconds())),
                    None => if !joint_names.is_empty() {
                        if let Some(m) = throttle.filter("ignoring a joint state without the robot's six joints", clock.seconds()) {
                            ros_warn!(log, "{m}");
                        }
                    },
                },
                Some(Err(e)) => if let Some(m) = throttle.filter(&format!("cannot read a joint state: {e}"), clock.seconds()) {
                    ros_warn!(log, "{m}");
                },
                None => return Err("the joint state stream ended".into()),
            },
            _ = marker_tick.tick(), if markers_on => {
                let env_pose: Option<(std::sync::Arc<rpq_pathshrink::Environment>, Pose)> =
                    demo.as_ref().map(|d| (d.env().clone(), d.pose()));
                if let Some((env, pose)) = env_pose {
                    let recorded = demo.as_ref().map(|d| d.recorded()).unwrap_or_default();
                    let to_poses = |v: &[rpq_ros::msg::geometry_msgs::Pose]| -> Vec<Pose> {
                        v.iter().filter_map(|p| pose_from_msg("result", p).ok()).collect()
                    };
                    let (modified, reduced) = last_result
                        .as_ref()
                        .map(|r| (to_poses(&r.modified), to_poses(&r.reduced)))
                        .unwrap_or_default();
                    let shown = Shown { workpiece: Some(pose), recorded: &recorded, modified: &modified, reduced: &reduced };
                    if let Err(e) = marker_pub.publish(markers(&env, &shown, &frame, &clock.now())) {
                        if let Some(m) = throttle.filter(&format!("cannot publish markers: {e}"), clock.seconds()) {
                            ros_warn!(log, "{m}");
                        }
                    }
                }
            }
        }
    }
    // Stop on exit: a trajectory this node sent may still run.
    if running_until.is_some_and(|t| clock.seconds() < t + 0.5) {
        match hold
            .call(TriggerRequest::default(), Duration::from_secs(1))
            .await
        {
            Ok(r) if r.success => ros_info!(log, "stopped the robot ({})", p.robot_io.hold_service),
            Ok(r) => ros_warn!(log, "the robot's hold was refused: {}", r.message),
            Err(e) => ros_warn!(
                log,
                "cannot stop the robot through {}: {e}",
                p.robot_io.hold_service
            ),
        }
    }
    if let Some(job) = pending.take() {
        job.task.abort();
    }
    ros_info!(log, "shutting down");
    Ok(())
}
