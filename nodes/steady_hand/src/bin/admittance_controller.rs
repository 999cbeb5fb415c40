//! `admittance_controller`: the virtual-fixture admittance law of Marayong et al. (2003) for a
//! robot arm driven by joint velocities (or a Cartesian twist). The rule is
//! `steady_hand::admittance::AdmittanceCore`; this binary converts messages, calls it and
//! publishes what it returns.
//!
//! ```text
//! admittance_controller --ros-args --params-file config/admittance_controller.yaml
//! ```
//!
//! | interface | type | behaviour |
//! |---|---|---|
//! | sub `wrench` | `geometry_msgs/WrenchStamped` | best effort (accepts reliable publishers); every message runs one control step |
//! | sub `joint_states` | `sensor_msgs/JointState` | reliable, depth 10 |
//! | sub `virtual_fixture` | `rpq_interfaces/VirtualFixture` | reliable; `D`, `u`, mode from `steady_hand_guidance` |
//! | sub `/tf`, `/tf_static` | `tf2_msgs/TFMessage` | frames that are not URDF links (a sensor mount) |
//! | pub `forward_velocity_controller/commands` | `std_msgs/Float64MultiArray` | joint velocities in `joint_names` order (`output: joint_velocity`) |
//! | pub `twist_command` | `geometry_msgs/TwistStamped` | tool twist in the root frame (`output: twist`) |
//! | pub `~/status` | `rpq_interfaces/AdmittanceStatus` | 10 Hz and on every change |
//! | srv `~/zero_ft` | `std_srvs/srv/Trigger` | tare: the current wrench becomes the offset (refused while moving) |
//! | srv `~/enable` | `std_srvs/srv/Trigger` | re-arm after a stale-input stop (refused while an input is stale) |
//! | sub `forbidden_region.topic` | `rpq_interfaces/ProtectionMeshes` | latched; with `forbidden_region.enabled`: each set replaces the protections (`steady_hand::protection_filter`) |
//!
//! Every period (`update_rate`) the command is published again: the stop while stopped (for
//! both output kinds), else the last command unless a wrench step published one within the last
//! half period; a failed publish is logged (throttled) and counted in `~/status`. On SIGINT/SIGTERM or a fatal error, a controller that has commanded motion
//! sends its zero command three times, 10 ms apart, before it exits.

use std::error::Error;
use std::pin::pin;
use std::process::ExitCode;
use std::time::Duration;

use futures::StreamExt;
use rpq_kinematics::Robot;
use rpq_ros::clock::Clock;
use rpq_ros::interfaces::rpq_interfaces::msg::{
    AdmittanceStatus, ProtectionMeshes, VirtualFixture,
};
use rpq_ros::log::{Logger, WarnThrottle};
use rpq_ros::msg::geometry_msgs::{TwistStamped, Vector3 as RosVector3, Wrench, WrenchStamped};
use rpq_ros::msg::sensor_msgs::JointState;
use rpq_ros::msg::std_msgs::{Float64MultiArray, Header};
use rpq_ros::msg::tf2_msgs::TFMessage;
use rpq_ros::node::Publisher;
use rpq_ros::robot_description::RobotDescription;
use rpq_ros::run::NodeStart;
use rpq_ros::srv::std_srvs::{Trigger, TriggerResponse};
use rpq_ros::{qos, ros_error, ros_info, ros_warn};
use steady_hand::admittance::{AdmittanceCore, Gains, JointInput, Output};
use steady_hand::convert::{
    command_message, fixture_from_msg, time_seconds, wrench_input, CommandMessage, JointOrder,
    OutputKind,
};
use steady_hand::protection_filter::{
    self, protections_from_msg, ProtectionFilter, ProtectionInbox,
};
use steady_hand::safety::{joint_names_match, Transition};
use steady_hand::settings::{self, admittance_controller::names, AdmittanceControllerParams};
use tokio::time::{interval, Instant, MissedTickBehavior};

fn main() -> ExitCode {
    rpq_ros::run_node(
        settings::CONTROLLER_NODE,
        &settings::controller_declarations(),
        run,
    )
}

/// Zero commands sent on exit (SIGINT/SIGTERM or a fatal error), so that one lost sample on a
/// best-effort path does not leave the robot moving.
const EXIT_STOP_COUNT: u32 = 3;
/// Time between the exit's zero commands, and after the last one before the process ends
/// (3 commands: 30 ms in all).
const EXIT_STOP_SPACING: Duration = Duration::from_millis(10);

/// The node's time in seconds (wall or `/clock` time since the epoch), the core's time base.
fn now(clock: &Clock) -> f64 {
    time_seconds(&clock.now()).unwrap_or(0.0)
}

/// When a message arrived: the DDS layer's receive instant (wall clock) unless sim time is used.
fn received(clock: &Clock, at: Option<i64>) -> f64 {
    match at {
        Some(ns) if !clock.is_sim() => ns as f64 * 1e-9,
        _ => now(clock),
    }
}

/// The publishers of the command, in the configured output order.
struct Outputs {
    /// When the last command went out, and half a period: a tick repeats the command only if
    /// no wrench step published one within that time.
    last: Option<Instant>,
    half_period: Duration,
    kind: OutputKind,
    out_map: Vec<usize>,
    root: String,
    vel: Publisher<Float64MultiArray>,
    twist_pub: Publisher<TwistStamped>,
    throttle: WarnThrottle,
}

impl Outputs {
    /// Publishes `out`; `None` if there was nothing to publish, else whether it went out.
    fn publish(&mut self, out: Output<'_>, clock: &Clock, log: &Logger) -> Option<bool> {
        let msg = command_message(out, self.kind, &self.out_map, clock.now(), &self.root)?;
        self.last = Some(Instant::now());
        let result = match msg {
            CommandMessage::Twist(m) => self
                .twist_pub
                .publish(m)
                .map_err(|e| format!("cannot publish the twist command: {e}")),
            CommandMessage::JointVelocity(m) => self
                .vel
                .publish(m)
                .map_err(|e| format!("cannot publish the velocity command: {e}")),
        };
        Some(match result {
            Ok(()) => true,
            Err(e) => {
                self.throttle.warn(log, &e, now(clock));
                false
            }
        })
    }
}

fn status_msg(
    core: &AdmittanceCore,
    protections: Option<&ProtectionInbox>,
    clock: &Clock,
    root: &str,
) -> AdmittanceStatus {
    let s = core.status();
    let state = match (&s.reason, s.waiting) {
        (None, _) => AdmittanceStatus::STATE_ACTIVE,
        (Some(_), true) => AdmittanceStatus::STATE_WAITING,
        (Some(_), false) => AdmittanceStatus::STATE_STOPPED,
    };
    let (fixture_type, mode) = s.fixture.map_or(
        (VirtualFixture::TYPE_NONE, VirtualFixture::MODE_FREE),
        |(t, m)| (t, m.code()),
    );
    let w = &s.wrench;
    let v3 = |x, y, z| RosVector3 { x, y, z };
    AdmittanceStatus {
        header: Header {
            stamp: clock.now(),
            frame_id: root.to_string(),
        },
        state,
        reason: s
            .reason
            .as_ref()
            .map(ToString::to_string)
            .unwrap_or_default(),
        min_singular_value: s.sigma_min,
        limit_scale: s.limit_scale,
        fixture_type,
        mode,
        stops: s.stops,
        rearm_required: s.rearm_required,
        damping: s.damping,
        publish_failures: s.publish_failures,
        wrench: Wrench {
            force: v3(w[0], w[1], w[2]),
            torque: v3(w[3], w[4], w[5]),
        },
        motion_filter: core.motion_filter_name().to_string(),
        filter_contact: s.filter_contact,
        protections_stamp: protection_filter::tag_stamp(protections.map_or(0, |p| p.in_force())),
        protections_waiting: protections.and_then(|p| p.waiting()).unwrap_or_default(),
    }
}

/// The run-time gains as set on the node now (remote `set_parameters` included).
fn current_gains(node: &rpq_ros::node::RosNode, start: &Gains) -> Gains {
    let f = |name: &str, default: f64| match node.parameter(name) {
        Some(ros2_client::ParameterValue::Double(v)) => v,
        _ => default,
    };
    Gains {
        c: f(names::ADMITTANCE__C, start.c),
        c_tau: f(names::ADMITTANCE__C_TAU, start.c_tau),
        k_d: f(names::ADMITTANCE__K_D, start.k_d),
        force_scale: f(names::SHAPING__FORCE_SCALE, start.force_scale),
        torque_scale: f(names::SHAPING__TORQUE_SCALE, start.torque_scale),
        max_linear_velocity: f(
            names::LIMITS__MAX_LINEAR_VELOCITY,
            start.max_linear_velocity,
        ),
        max_angular_velocity: f(
            names::LIMITS__MAX_ANGULAR_VELOCITY,
            start.max_angular_velocity,
        ),
    }
}

fn log_transition(log: &Logger, t: &Option<Transition>, ever_active: bool) {
    match t {
        Some(Transition::Stopped(r)) if ever_active => ros_warn!(log, "stopping: {r}"),
        Some(Transition::Resumed) => ros_info!(log, "active"),
        Some(Transition::Rearmed(how)) => ros_info!(log, "re-armed ({how}): active"),
        _ => {}
    }
}

async fn run(start: NodeStart) -> Result<(), Box<dyn Error>> {
    let (mut node, shutdown, clock, log) = start.into_parts();
    let s = AdmittanceControllerParams::load(node.params())?;
    let robot = RobotDescription::load(&mut node, &s.robot_description_file)
        .await?
        .parse(Robot::from_urdf_str)?;
    let order = JointOrder::new(robot.joint_names().map(str::to_string).collect());
    let out_map = order.output_map(&s.joint_names)?;
    let root = robot.root_link().name.clone();
    let n = robot.dof();
    let mut core = AdmittanceCore::new(robot, s.core_config()?)?;
    // forbidden-region mode: protections from files now, from a topic at run time
    let protection_inbox = start_forbidden_region(&mut core, &s, now(&clock), &log)?;
    let mut gains = s.gains();

    let mut outputs = Outputs {
        last: None,
        half_period: Duration::from_secs_f64(0.5 / s.update_rate),
        kind: if s.twist_output() {
            OutputKind::Twist
        } else {
            OutputKind::JointVelocity
        },
        out_map,
        root: root.clone(),
        vel: node
            .publisher::<Float64MultiArray>(settings::VELOCITY_COMMANDS_TOPIC, qos::default())?,
        twist_pub: node.publisher::<TwistStamped>(settings::TWIST_TOPIC, qos::default())?,
        throttle: WarnThrottle::new(2.0),
    };
    let status_pub = node.publisher::<AdmittanceStatus>(settings::STATUS_TOPIC, qos::default())?;
    let wrench_sub =
        node.subscription::<WrenchStamped>(settings::WRENCH_TOPIC, qos::sensor_data())?;
    let js_sub = node.subscription::<JointState>(settings::JOINT_STATES_TOPIC, qos::default())?;
    let fx_sub = node.subscription::<VirtualFixture>(settings::FIXTURE_TOPIC, qos::default())?;
    let tf_sub = node.subscription::<TFMessage>(settings::TF_TOPIC, qos::reliable(100))?;
    let tf_static_sub =
        node.subscription::<TFMessage>(settings::TF_STATIC_TOPIC, qos::latched())?;
    let zero_srv = node.service::<Trigger>(settings::ZERO_FT_SERVICE)?;
    let enable_srv = node.service::<Trigger>(settings::ENABLE_SERVICE)?;

    let mut wrenches = pin!(wrench_sub.async_stream());
    let mut joint_states = pin!(js_sub.async_stream());
    let mut fixtures = pin!(fx_sub.async_stream());
    let mut tfs = pin!(tf_sub.async_stream());
    let mut tf_statics = pin!(tf_static_sub.async_stream());
    let protection_sub = match (&protection_inbox, s.forbidden_region.topic.as_str()) {
        (Some(_), topic) if !topic.is_empty() => {
            Some(node.subscription::<ProtectionMeshes>(topic, qos::latched())?)
        }
        _ => None,
    };
    // without a protection topic: a stream that never yields
    let mut protection_msgs = pin!(match &protection_sub {
        Some(sub) => sub.async_stream().left_stream(),
        None => futures::stream::pending().right_stream(),
    });
    let mut protections_loaded = 0u64;
    let mut zero_requests = pin!(zero_srv.receive_request_stream());
    let mut enable_requests = pin!(enable_srv.receive_request_stream());
    let mut tick = interval(Duration::from_secs_f64(1.0 / s.update_rate));
    tick.set_missed_tick_behavior(MissedTickBehavior::Skip);
    let mut status_tick = interval(Duration::from_millis(100));
    status_tick.set_missed_tick_behavior(MissedTickBehavior::Skip);
    let mut last_status: Option<(u8, &'static str, u8, u8, bool)> = None;
    let mut driver_joints: Option<Vec<String>> = None;
    let mut q = vec![0.0; n];
    let mut qd = vec![0.0; n];
    let mut throttle = WarnThrottle::new(2.0);
    ros_info!(
        log,
        "admittance_controller ready: {} joints, tool {}, output {}",
        n,
        s.tool_link,
        if s.twist_output() {
            "twist"
        } else {
            "joint_velocity"
        }
    );

    let mut protection_msgs_received: u64 = 0;
    // `Ok` on SIGINT/SIGTERM, `Err` on a fatal error; either way the robot is stopped below
    let result: Result<(), Box<dyn Error>> = loop {
        let mut force_status = false;
        let mut transition = None;
        tokio::select! {
            _ = shutdown.wait() => break Ok(()),
            _ = tick.tick() => {
                core.set_clock_running(clock.started());
                let t = now(&clock);
                let (out, tr) = core.tick(t);
                transition = tr;
                let recent = outputs.last.is_some_and(|l| l.elapsed() < outputs.half_period);
                if !recent || matches!(out, Output::Stop) {
                    if let Some(ok) = outputs.publish(out, &clock, &log) {
                        core.record_publish(ok);
                    }
                }
            }
            _ = status_tick.tick() => {
                force_status = true;
                if let Some(inbox) = &protection_inbox {
                    let loaded = inbox.loaded();
                    if loaded != protections_loaded {
                        protections_loaded = loaded;
                        ros_info!(log, "forbidden region: protection set {loaded} in force");
                    }
                    if let Some(why) = inbox.waiting() {
                        throttle.warn(&log, &format!("forbidden region: a new protection set waits: {why}"), now(&clock));
                    }
                }
                let wanted = current_gains(&node, &gains);
                if wanted != gains {
                    match core.set_gains(wanted, now(&clock)) {
                        Ok(()) => {
                            ros_info!(log, "gains changed at run time (ramped over {} s): {wanted:?}", s.runtime.ramp_time);
                            gains = wanted;
                        }
                        Err(e) => ros_warn!(log, "run-time parameter change refused: {e}"),
                    }
                }
            }
            item = wrenches.next() => match item {
                Some(Ok((msg, info))) => {
                    core.set_clock_running(clock.started());
                    let rec = received(&clock, info.received_timestamp().map(|t| t.to_nanos()));
                    let (out, tr) = core.on_wrench(&wrench_input(&msg, rec), now(&clock));
                    transition = tr;
                    if let Some(ok) = outputs.publish(out, &clock, &log) {
                        core.record_publish(ok);
                    }
                }
                Some(Err(e)) => throttle.warn(&log, &format!("cannot read a wrench: {e}"), now(&clock)),
                None => break Err("the wrench stream ended".into()),
            },
            item = joint_states.next() => match item {
                Some(Ok((msg, info))) => {
                    // the driver's joints against ours: checked on the first joint state and
                    // whenever the names change; an error (logged once) keeps us from going active
                    if driver_joints.as_ref() != Some(&msg.name) {
                        let verdict = joint_names_match(order.names(), &msg.name);
                        if let Err(e) = &verdict {
                            ros_error!(log, "{e}");
                        }
                        core.set_driver_mismatch(verdict.err());
                        driver_joints = Some(msg.name.clone());
                    }
                    let rec = received(&clock, info.received_timestamp().map(|t| t.to_nanos()));
                    let velocities = (msg.velocity.len() == msg.name.len())
                        .then(|| order.velocities(&msg, &mut qd).ok())
                        .flatten();
                    let r = order.positions(&msg, &mut q).map_err(|e| e.to_string()).and_then(|()| {
                        core.on_joint_state(&JointInput {
                            positions: &q,
                            velocities: velocities.map(|()| qd.as_slice()),
                            stamp: time_seconds(&msg.header.stamp),
                            received: rec,
                        })
                    });
                    if let Err(e) = r {
                        throttle.warn(&log, &format!("ignoring a joint state: {e}"), now(&clock));
                    }
                }
                Some(Err(e)) => throttle.warn(&log, &format!("cannot read a joint state: {e}"), now(&clock)),
                None => break Err("the joint_states stream ended".into()),
            },
            item = fixtures.next() => match item {
                Some(Ok((msg, info))) => match fixture_from_msg(&msg) {
                    Ok(fx) => {
                        let rec = received(&clock, info.received_timestamp().map(|t| t.to_nanos()));
                        core.on_fixture(fx, time_seconds(&msg.header.stamp), rec);
                    }
                    Err(e) => throttle.warn(&log, &format!("ignoring a virtual fixture: {e}"), now(&clock)),
                },
                Some(Err(e)) => throttle.warn(&log, &format!("cannot read a virtual fixture: {e}"), now(&clock)),
                None => break Err("the virtual_fixture stream ended".into()),
            },
            item = tfs.next() => if let Some(Ok((msg, _))) = item {
                take_transforms(&mut core, &msg, false);
            },
            item = tf_statics.next() => if let Some(Ok((msg, _))) = item {
                take_transforms(&mut core, &msg, true);
            },
            item = zero_requests.next() => if let Some(Ok((id, _))) = item {
                let r = core.zero_ft(now(&clock));
                ros_info!(log, "~/zero_ft: {}", r.as_ref().unwrap_or_else(|e| e));
                let (success, message) = match r { Ok(m) => (true, m), Err(m) => (false, m) };
                if let Err(e) = zero_srv.async_send_response(id, TriggerResponse { success, message }).await {
                    ros_warn!(log, "cannot answer ~/zero_ft: {e}");
                }
            },
            item = protection_msgs.next() => match item {
                // meshes of ~50,000 triangles take a while to index: off the control loop
                Some(Ok((msg, _))) => if let Some(inbox) = protection_inbox.clone() {
                    let (root, log) = (root.clone(), log.clone());
                    // (numbered on arrival: of two sets indexed at once, the newer message's
                    // wins even when the older one's indexing ends last)
                    protection_msgs_received += 1;
                    let received = protection_msgs_received;
                    tokio::task::spawn_blocking(move || match protections_from_msg(&msg, &root) {
                        Ok(set) => {
                            let (n, triangles) = (set.len(), set.num_triangles());
                            if inbox.submit_received(set, protection_filter::stamp_tag(&msg.header.stamp), received) {
                                ros_info!(log, "forbidden region: received {n} protections ({triangles} triangles)");
                            } else {
                                ros_warn!(log, "forbidden region: dropped an older protection set ({n} protections): a newer one came in while it was being indexed");
                            }
                        }
                        Err(e) => ros_warn!(log, "forbidden region: ignoring a protection set: {e}"),
                    });
                },
                Some(Err(e)) => throttle.warn(&log, &format!("cannot read a protection set: {e}"), now(&clock)),
                None => break Err("the protections stream ended".into()),
            },
            item = enable_requests.next() => if let Some(Ok((id, _))) = item {
                core.set_clock_running(clock.started());
                let r = core.enable(now(&clock));
                ros_info!(log, "~/enable: {}", r.as_ref().map(|m| m.to_string()).unwrap_or_else(|e| e.clone()));
                let (success, message) = match r { Ok(m) => (true, m.to_string()), Err(m) => (false, m) };
                if let Err(e) = enable_srv.async_send_response(id, TriggerResponse { success, message }).await {
                    ros_warn!(log, "cannot answer ~/enable: {e}");
                }
            },
        }
        for notice in core.take_notices() {
            ros_warn!(log, "{notice}");
        }
        let status = core.status();
        log_transition(&log, &transition, !status.waiting);
        let msg = status_msg(&core, protection_inbox.as_ref(), &clock, &root);
        let key = (
            msg.state,
            status.reason.as_ref().map_or("", |r| r.kind()),
            msg.fixture_type,
            msg.mode,
            msg.rearm_required,
        );
        if force_status || last_status != Some(key) {
            last_status = Some(key);
            if let Err(e) = status_pub.publish(msg) {
                throttle.warn(
                    &log,
                    &format!("cannot publish the status: {e}"),
                    now(&clock),
                );
            }
        }
    };
    if !core.status().waiting {
        // the velocity interface has no timeout of its own: stop the robot before leaving
        let mut failed = 0;
        for k in 0..EXIT_STOP_COUNT {
            if outputs.publish(Output::Stop, &clock, &log) == Some(false) {
                failed += 1;
                core.record_publish(false);
            }
            if k + 1 < EXIT_STOP_COUNT {
                tokio::time::sleep(EXIT_STOP_SPACING).await;
            }
        }
        // let the DDS writer put the last sample on the wire before the process ends
        tokio::time::sleep(EXIT_STOP_SPACING).await;
        if failed > 0 {
            ros_warn!(log, "{failed} of {EXIT_STOP_COUNT} stop commands not sent");
        }
    }
    ros_info!(log, "shutting down");
    result
}

/// Plugs the forbidden-region filter into the core when `forbidden_region.enabled` (protections
/// from `forbidden_region.files` at once); returns its inbox for run-time sets.
fn start_forbidden_region(
    core: &mut AdmittanceCore,
    s: &AdmittanceControllerParams,
    now: f64,
    log: &Logger,
) -> Result<Option<ProtectionInbox>, Box<dyn Error>> {
    let Some(cfg) = protection_filter::config_from_params(&s.forbidden_region)? else {
        return Ok(None);
    };
    let p = &s.forbidden_region;
    let initial = if p.files.is_empty() {
        None
    } else {
        let set = protection_filter::load_stl_protections(
            &p.directory,
            &p.files,
            p.max_file_size.max(0) as u64,
        )?;
        ros_info!(
            log,
            "forbidden region: {} protections ({} triangles) from {}",
            set.len(),
            set.num_triangles(),
            p.directory
        );
        Some(set)
    };
    let filter = ProtectionFilter::new(cfg, initial)?;
    let inbox = filter.inbox();
    core.set_motion_filter(Some(Box::new(filter)), now);
    ros_info!(
        log,
        "forbidden region on: tool radius {} m + margin {} m, lookahead {} s{}",
        cfg.radius,
        cfg.margin,
        cfg.lookahead,
        if p.topic.is_empty() {
            String::new()
        } else {
            format!(", protections from {}", p.topic)
        }
    );
    Ok(Some(inbox))
}

/// Hands the transforms of a `/tf` or `/tf_static` message to the core.
fn take_transforms(core: &mut AdmittanceCore, msg: &TFMessage, is_static: bool) {
    for t in &msg.transforms {
        if let Ok(pose) = nalgebra::Isometry3::try_from(&t.transform) {
            core.on_transform(&t.header.frame_id, &t.child_frame_id, pose, is_static);
        }
    }
}
