//! `admittance_controller`: the virtual-fixture admittance law of Marayong et al. (2003) for a
//! robot arm driven by joint velocities.
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
//! | pub `forward_velocity_controller/commands` | `std_msgs/Float64MultiArray` | joint velocities in `joint_names` order (`output: joint_velocity`) |
//! | pub `twist_command` | `geometry_msgs/TwistStamped` | tool twist in the root frame (`output: twist`) |
//! | pub `~/status` | `rpq_interfaces/AdmittanceStatus` | 10 Hz and on every change |
//!
//! Safety: a stale or non-finite wrench, a stale joint state, or a near-singular Jacobian
//! commands zero velocity at the next watchdog period (`update_rate`) or at once, logs the reason
//! at WARN and publishes it on `~/status`; joint limits are kept by scaling the whole command.
//! On SIGINT/SIGTERM or a fatal error, a controller that has commanded motion sends its zero
//! command three times, 10 ms apart, before it exits.

use std::error::Error;
use std::pin::pin;
use std::process::ExitCode;
use std::time::Duration;

use futures::StreamExt;
use nalgebra::{Point3, Vector6};
use rpq_kinematics::Robot;
use rpq_ros::clock::Clock;
use rpq_ros::interfaces::rpq_interfaces::msg::{AdmittanceStatus, VirtualFixture};
use rpq_ros::log::WarnThrottle;
use rpq_ros::msg::geometry_msgs::{TwistStamped, WrenchStamped};
use rpq_ros::msg::sensor_msgs::JointState;
use rpq_ros::msg::std_msgs::{Float64MultiArray, Header};
use rpq_ros::node::Publisher;
use rpq_ros::robot_description::RobotDescription;
use rpq_ros::run::NodeStart;
use rpq_ros::{qos, ros_error, ros_info, ros_warn};
use rpq_virtual_fixtures::{AdmittanceController, ControllerConfig, Guidance, Mode};
use steady_hand::convert::{fixture_from_msg, wrench_to_base, Fixture, JointOrder};
use steady_hand::joints::JointMapper;
use steady_hand::safety::{joint_names_match, SafetyMonitor, StopReason, Transition};
use steady_hand::settings::{self, AdmittanceControllerParams};
use steady_hand::NodeError;
use tokio::time::{interval, MissedTickBehavior};

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

/// Why the controller stops while `use_sim_time` is on and no `/clock` arrived yet.
const NO_CLOCK: &str = "no /clock received yet (use_sim_time)";

struct State {
    s: AdmittanceControllerParams,
    order: JointOrder,
    out_map: Vec<usize>,
    mapper: JointMapper,
    sensor_link: usize,
    root: String,
    ctl: AdmittanceController,
    config: ControllerConfig,
    safety: SafetyMonitor,
    q: Vec<f64>,
    qd: Vec<f64>,
    out: Vec<f64>,
    wrench: Option<WrenchStamped>,
    fixture: Option<(Fixture, f64)>,
    last_step: Option<f64>,
    twist: Vector6<f64>,
    sigma_min: f64,
    scale: f64,
    fixture_label: (u8, u8),
    clock: Clock,
    /// The driver's joint names last checked and the verdict of [`joint_names_match`]; the
    /// controller never goes active while it is an error.
    driver_joints: Option<(Vec<String>, Result<(), String>)>,
    /// Repeats of the per-message warnings (bad joint states, wrenches, fixtures) collapsed.
    throttle: WarnThrottle,
}

impl State {
    /// Seconds on the node's clock, for the watchdogs.
    fn now(&self) -> f64 {
        self.clock.seconds()
    }

    /// Logs a per-message warning, identical repeats collapsed (a 500 Hz stream of bad
    /// messages gave 500 WARN lines/s).
    fn warn(&mut self, log: &rpq_ros::log::Logger, msg: &str) {
        let now = self.now();
        self.throttle.warn(log, msg, now);
    }

    /// The input watchdogs; with sim time and no `/clock` yet every input counts as stale.
    fn inputs_ok(&self, now: f64) -> Result<(), StopReason> {
        if !self.clock.started() {
            return Err(StopReason::Fault(NO_CLOCK.into()));
        }
        if let Some((_, Err(e))) = &self.driver_joints {
            return Err(StopReason::Fault(e.clone()));
        }
        self.safety.inputs_ok(now)
    }

    /// One control step; `Ok` = the command in `self.out` / `self.twist`.
    fn compute(&mut self, now: f64) -> Result<(), StopReason> {
        self.inputs_ok(now)?;
        let msg = self.wrench.as_ref().ok_or(StopReason::NoWrench)?;
        let fault = |e: NodeError| StopReason::Fault(e.to_string());
        // failures of the control computation itself latch (SafetyMonitor::latch)
        let control_fault = |e: NodeError| StopReason::ControlFault(e.to_string());
        self.mapper.update(&self.q).map_err(control_fault)?;
        let sensor = if msg.header.frame_id.is_empty() {
            *self.mapper.link_pose(self.sensor_link)
        } else {
            let k = self
                .mapper
                .robot()
                .link_index(&msg.header.frame_id)
                .map_err(|e| fault(e.into()))?;
            *self.mapper.link_pose(k)
        };
        let tool = Point3::from(self.mapper.tool_pose().translation.vector);
        let f =
            wrench_to_base(&msg.wrench, &sensor, &tool).map_err(|_| StopReason::NonFiniteWrench)?;
        let fresh = self
            .fixture
            .as_ref()
            .filter(|(_, t)| now - t <= self.s.fixture.timeout);
        let (guidance, mode, label) = match fresh {
            Some((fx, _)) => (
                fx.guidance,
                fx.mode.to_mode(self.s.admittance.k_d),
                (fx.fixture_type, fx.mode.code()),
            ),
            None if self.s.fixture.required => {
                return Err(StopReason::Fault(
                    "no fresh virtual_fixture (require_fixture)".into(),
                ))
            }
            None => (
                Guidance::empty(),
                Mode::Free,
                (VirtualFixture::TYPE_NONE, VirtualFixture::MODE_FREE),
            ),
        };
        self.fixture_label = label;
        if self.config.mode != mode {
            self.config.mode = mode;
            self.ctl
                .set_config(self.config)
                .map_err(|e| control_fault(e.into()))?;
        }
        let dt = self
            .last_step
            .map_or(1.0 / self.s.update_rate, |t| (now - t).clamp(1e-4, 0.1));
        let (v, _) = self
            .ctl
            .step(&f, &guidance, dt)
            .map_err(|e| control_fault(e.into()))?;
        self.last_step = Some(now);
        let sol = self
            .mapper
            .solve(&self.q, &v, &mut self.qd)
            .map_err(control_fault)?;
        self.sigma_min = sol.sigma_min;
        self.safety.jacobian_ok(sol.sigma_min)?;
        self.scale = sol.scale;
        // the realised twist after the joint-limit scaling
        self.twist = v * sol.scale;
        for (o, &k) in self.out.iter_mut().zip(&self.out_map) {
            *o = self.qd[k];
        }
        if !(self.twist.iter().all(|x| x.is_finite()) && self.out.iter().all(|x| x.is_finite())) {
            return Err(StopReason::ControlFault(
                "the commanded twist or joint velocity is not finite".into(),
            ));
        }
        Ok(())
    }

    fn stop_outputs(&mut self) {
        self.out.iter_mut().for_each(|x| *x = 0.0);
        self.twist = Vector6::zeros();
        self.ctl.reset();
        self.last_step = None;
    }

    fn status(&self) -> AdmittanceStatus {
        let (state, reason) = match self.safety.stopped() {
            None => (AdmittanceStatus::STATE_ACTIVE, String::new()),
            Some(r) if !self.safety.ever_active() => {
                (AdmittanceStatus::STATE_WAITING, r.to_string())
            }
            Some(r) => (AdmittanceStatus::STATE_STOPPED, r.to_string()),
        };
        AdmittanceStatus {
            header: Header {
                stamp: self.clock.now(),
                frame_id: self.root.clone(),
            },
            state,
            reason,
            min_singular_value: self.sigma_min,
            limit_scale: self.scale,
            fixture_type: self.fixture_label.0,
            mode: self.fixture_label.1,
            stops: self.safety.stops(),
        }
    }
}

/// Publishes the current output on the interface the node is configured for: `st.out` as joint
/// velocities, or `st.twist` as a `TwistStamped` in the root frame. After
/// [`State::stop_outputs`] that is the stop command.
fn publish_output(
    st: &State,
    vel_pub: &Publisher<Float64MultiArray>,
    twist_pub: &Publisher<TwistStamped>,
) -> Result<(), String> {
    if st.s.twist_output() {
        let t = &st.twist;
        let v3 = |x, y, z| rpq_ros::msg::geometry_msgs::Vector3 { x, y, z };
        let msg = TwistStamped {
            header: Header {
                stamp: st.clock.now(),
                frame_id: st.root.clone(),
            },
            twist: rpq_ros::msg::geometry_msgs::Twist {
                linear: v3(t[0], t[1], t[2]),
                angular: v3(t[3], t[4], t[5]),
            },
        };
        twist_pub
            .publish(msg)
            .map_err(|e| format!("cannot publish the twist: {e}"))
    } else {
        vel_pub
            .publish(Float64MultiArray {
                data: st.out.clone(),
                ..Default::default()
            })
            .map_err(|e| format!("cannot publish the velocity command: {e}"))
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
    let sensor_link = robot
        .link_index(&s.sensor_frame)
        .map_err(|e| NodeError::config("sensor_frame", e.to_string()))?;
    let root = robot.root_link().name.clone();
    let n = robot.dof();
    let mut mapper = JointMapper::new(robot, &s.tool_link)
        .map_err(|e| NodeError::config("tool_link", e.to_string()))?;
    mapper.position_margin = s.limits.position_margin;
    mapper.lookahead = 2.0 / s.update_rate;
    let ctl = AdmittanceController::new(s.control()?)?;

    let vel_pub =
        node.publisher::<Float64MultiArray>(settings::VELOCITY_COMMANDS_TOPIC, qos::default())?;
    let twist_pub = node.publisher::<TwistStamped>(settings::TWIST_TOPIC, qos::default())?;
    let status_pub = node.publisher::<AdmittanceStatus>(settings::STATUS_TOPIC, qos::default())?;
    let wrench_sub =
        node.subscription::<WrenchStamped>(settings::WRENCH_TOPIC, qos::sensor_data())?;
    let js_sub = node.subscription::<JointState>(settings::JOINT_STATES_TOPIC, qos::default())?;
    let fx_sub = node.subscription::<VirtualFixture>(settings::FIXTURE_TOPIC, qos::default())?;

    let rate = s.update_rate;
    let mut st = State {
        config: s.control()?,
        s,
        order,
        out_map,
        mapper,
        sensor_link,
        root,
        ctl,
        safety: SafetyMonitor::new(steady_hand::safety::SafetyConfig {
            wrench_timeout: 0.0,
            joint_state_timeout: 0.0,
            min_singular_value: 0.0,
            fault_hold: 0.0,
        }),
        q: vec![0.0; n],
        qd: vec![0.0; n],
        out: vec![0.0; n],
        wrench: None,
        fixture: None,
        last_step: None,
        twist: Vector6::zeros(),
        sigma_min: f64::NAN,
        scale: 1.0,
        fixture_label: (VirtualFixture::TYPE_NONE, VirtualFixture::MODE_FREE),
        clock: clock.clone(),
        driver_joints: None,
        throttle: WarnThrottle::new(2.0),
    };
    st.safety = SafetyMonitor::new(st.s.safety_config());

    let mut wrenches = pin!(wrench_sub.async_stream());
    let mut joint_states = pin!(js_sub.async_stream());
    let mut fixtures = pin!(fx_sub.async_stream());
    let mut tick = interval(Duration::from_secs_f64(1.0 / rate));
    tick.set_missed_tick_behavior(MissedTickBehavior::Skip);
    let mut status_tick = interval(Duration::from_millis(100));
    status_tick.set_missed_tick_behavior(MissedTickBehavior::Skip);
    let mut last_status: Option<(u8, String, u8, u8)> = None;
    ros_info!(
        log,
        "admittance_controller ready: {} joints, tool {}, output {}",
        n,
        st.s.tool_link,
        if st.s.twist_output() {
            "twist"
        } else {
            "joint_velocity"
        }
    );

    // `Ok` on SIGINT/SIGTERM, `Err` on a fatal error; either way the robot is stopped below
    let result: Result<(), Box<dyn Error>> = loop {
        // what happened: Some(true) = run a step and publish; Some(false) = watchdog check
        let mut step = None;
        let mut force_status = false;
        tokio::select! {
            _ = shutdown.wait() => break Ok(()),
            _ = tick.tick() => step = Some(false),
            _ = status_tick.tick() => force_status = true,
            item = wrenches.next() => match item {
                Some(Ok((msg, _))) => {
                    let now = st.now();
                    let w = &msg.wrench;
                    let finite = [w.force.x, w.force.y, w.force.z, w.torque.x, w.torque.y, w.torque.z].iter().all(|x| x.is_finite());
                    if st.clock.started() {
                        st.safety.wrench(now, finite);
                    }
                    st.wrench = Some(msg);
                    step = Some(true);
                }
                Some(Err(e)) => st.warn(&log, &format!("cannot read a wrench: {e}")),
                None => break Err("the wrench stream ended".into()),
            },
            item = joint_states.next() => match item {
                Some(Ok((msg, _))) => {
                    // the driver's joints against ours: checked on the first joint state and
                    // whenever the names change; an error (logged once) keeps us from going active
                    if st.driver_joints.as_ref().is_none_or(|(names, _)| *names != msg.name) {
                        let verdict = joint_names_match(st.order.names(), &msg.name);
                        if let Err(e) = &verdict {
                            ros_error!(log, "{e}");
                        }
                        st.driver_joints = Some((msg.name.clone(), verdict));
                    }
                    if st.driver_joints.as_ref().is_some_and(|(_, v)| v.is_ok()) {
                        let mut q = std::mem::take(&mut st.q);
                        match st.order.positions(&msg, &mut q) {
                            Ok(()) if st.clock.started() => { let now = st.now(); st.safety.joint_state(now); }
                            Ok(()) => {}
                            Err(e) => st.warn(&log, &format!("ignoring a joint state: {e}")),
                        }
                        st.q = q;
                    }
                }
                Some(Err(e)) => st.warn(&log, &format!("cannot read a joint state: {e}")),
                None => break Err("the joint_states stream ended".into()),
            },
            item = fixtures.next() => match item {
                Some(Ok((msg, _))) => match fixture_from_msg(&msg) {
                    Ok(fx) => { let now = st.now(); st.fixture = Some((fx, now)); }
                    Err(e) => st.warn(&log, &format!("ignoring a virtual fixture: {e}")),
                },
                Some(Err(e)) => st.warn(&log, &format!("cannot read a virtual fixture: {e}")),
                None => break Err("the virtual_fixture stream ended".into()),
            },
        }
        if let Some(run_step) = step {
            let now = st.now();
            let was_stopped = st.safety.stopped().is_some();
            let outcome = if run_step {
                st.compute(now)
            } else {
                // Between wrenches only the inputs' ages change; the Jacobian verdict of the
                // last step stands (a timer tick must not clear a singularity stop).
                st.inputs_ok(now).and_then(|()| {
                    if st.sigma_min.is_nan() {
                        Ok(())
                    } else {
                        st.safety.jacobian_ok(st.sigma_min)
                    }
                })
            };
            // a control fault holds until the computed steps are clean for safety.fault_hold
            let computed_ok = run_step && outcome.is_ok();
            let outcome = st.safety.latch(now, outcome, run_step);
            if computed_ok && outcome.is_err() {
                // held: the step's command is dropped
                st.stop_outputs();
            }
            let ok = outcome.is_ok();
            let transition = st.safety.record(outcome);
            match &transition {
                Some(Transition::Stopped(r)) if st.safety.ever_active() => {
                    ros_warn!(log, "stopping: {r}")
                }
                Some(Transition::Resumed) => ros_info!(log, "active"),
                _ => {}
            }
            let publish = if ok {
                run_step
            } else {
                // zero on the transition to stopped, then at the status cadence
                let first = !was_stopped || matches!(transition, Some(Transition::Stopped(_)));
                if st.safety.ever_active() && (first || force_status) {
                    st.stop_outputs();
                    true
                } else {
                    false
                }
            };
            if !ok && !was_stopped {
                st.stop_outputs();
            }
            if publish {
                if let Err(e) = publish_output(&st, &vel_pub, &twist_pub) {
                    ros_warn!(log, "{e}");
                }
            }
        } else if force_status && st.safety.stopped().is_some() && st.safety.ever_active() {
            // keep the robot stopped even if a zero command was lost
            st.stop_outputs();
            if !st.s.twist_output() {
                if let Err(e) = vel_pub.publish(Float64MultiArray {
                    data: st.out.clone(),
                    ..Default::default()
                }) {
                    ros_warn!(log, "cannot publish the zero velocity command: {e}");
                }
            }
        }
        let status = st.status();
        let kind = status
            .reason
            .split(" (")
            .next()
            .unwrap_or_default()
            .to_string();
        let key = (status.state, kind, status.fixture_type, status.mode);
        if force_status || last_status.as_ref() != Some(&key) {
            last_status = Some(key);
            if let Err(e) = status_pub.publish(status) {
                ros_warn!(log, "cannot publish the status: {e}");
            }
        }
    };
    if st.safety.ever_active() {
        // the velocity interface has no timeout of its own: stop the robot before leaving
        st.stop_outputs();
        let mut failed = 0;
        for k in 0..EXIT_STOP_COUNT {
            if let Err(e) = publish_output(&st, &vel_pub, &twist_pub) {
                failed += 1;
                ros_warn!(log, "stop command: {e}");
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
