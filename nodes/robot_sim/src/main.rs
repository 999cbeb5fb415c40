//! `robot_sim`: a simulated robot driver, like a ros2_control stack with mock hardware
//! (`forward_position_controller`, `forward_velocity_controller`,
//! `joint_trajectory_controller`, `joint_state_broadcaster`) plus `robot_state_publisher`, for
//! the robot in `robot_description_file`.
//!
//! ```text
//! robot_sim --ros-args --params-file config/robot_sim.yaml [-p robot_description_file:=F]
//! ```
//!
//! Names below are relative to the node's namespace unless absolute; `~` is the node's own
//! name (`/robot_sim/...` by default). Parameters: `config/robot_sim.yaml`.
//!
//! | interface | type | QoS / behaviour |
//! |---|---|---|
//! | sub `forward_position_controller/commands` | `std_msgs/Float64MultiArray` | reliable, depth 10; one target per joint in URDF order |
//! | sub `forward_velocity_controller/commands` | `std_msgs/Float64MultiArray` | same; each command is in force until it is `velocity_command_timeout` old, counted from when it was sent (DDS source timestamp; stale ones are rejected) |
//! | sub `joint_trajectory_controller/joint_trajectory` | `trajectory_msgs/JointTrajectory` | same; `header.stamp` 0 = now |
//! | pub `joint_states` | `sensor_msgs/JointState` | reliable, depth 10, at `joint_state_rate`, wall-clock stamps |
//! | pub `robot_description` | `std_msgs/String` | latched (transient local): the URDF text, mesh file names as `package://` (installed) or `file://` URIs |
//! | pub `/tf`, `/tf_static` | `tf2_msgs/TFMessage` | movable joints with the joint states; fixed joints, and `base.parent_frame` → root link if set, once, latched (if `publish_tf`) |
//! | pub `~/status` | `rpq_interfaces/DriverStatus` | reliable, depth 10, at 10 Hz and on every change |
//! | srv `~/compute_fk` | `rpq_interfaces/srv/ComputeForwardKinematics` | pose of a link for the current or given joints |
//! | srv `~/hold` | `std_srvs/srv/Trigger` | cancels the active command; the joints stop where they are |
//! | srv `~/reset` | `std_srvs/srv/Trigger` | a position command to the initial positions (moves there under `position_command_mode`) |
//!
//! A rejected command (wrong length, unknown joint, NaN/inf, outside the limits, ...) is logged
//! at WARN with its reason (identical repeats collapsed), counted in `~/status`, and the previous
//! command goes on. The simulation runs on the node's clock: a monotonic clock and wall-clock
//! stamps, or with `use_sim_time` the `/clock` time for both (nothing moves before the first
//! `/clock` message). SIGINT/SIGTERM end the node cleanly with exit code 0; a startup error ends
//! it with code 1 and a message naming the cause.

use std::error::Error;
use std::fmt::Display;
use std::path::Path;
use std::pin::pin;
use std::process::ExitCode;
use std::time::Duration;

use futures::StreamExt;
use robot_sim::hardware::{PositionCommandMode, SimError, SimHardware};
use robot_sim::ros_io;
use robot_sim::settings::{self, RobotSimParams, STATUS_RATE_HZ};
use robot_sim::NodeError;
use rpq_kinematics::Robot;
use rpq_ros::clock::Clock;
use rpq_ros::interfaces::rpq_interfaces::msg::DriverStatus;
use rpq_ros::interfaces::rpq_interfaces::srv::{
    ComputeForwardKinematics, ComputeForwardKinematicsRequest, ComputeForwardKinematicsResponse,
};
use rpq_ros::log::{Logger, WarnThrottle};
use rpq_ros::msg::sensor_msgs::JointState;
use rpq_ros::msg::std_msgs::{Float64MultiArray, String as StringMsg};
use rpq_ros::msg::tf2_msgs::TFMessage;
use rpq_ros::msg::trajectory_msgs::JointTrajectory;
use rpq_ros::node::RosNode;
use rpq_ros::robot_description::RobotDescription;
use rpq_ros::run::NodeStart;
use rpq_ros::srv::std_srvs::{Trigger, TriggerResponse};
use rpq_ros::{qos, ros_info, ros_warn};
use tokio::time::{interval, Interval, MissedTickBehavior};

fn main() -> ExitCode {
    rpq_ros::run_node(settings::NODE_NAME, &settings::declarations(), run)
}

fn ticker(rate_hz: f64) -> Interval {
    let mut t = interval(Duration::from_secs_f64(1.0 / rate_hz));
    t.set_missed_tick_behavior(MissedTickBehavior::Skip);
    t
}

/// The simulation with everything the message handlers share.
struct Sim {
    hw: SimHardware,
    robot: Robot,
    clock: Clock,
    log: Logger,
    throttle: WarnThrottle,
    frame_prefix: String,
    /// `(rejected_commands, last_error)` as last seen, to log stop events once.
    seen: (u32, String),
    last_status: Option<DriverStatus>,
    /// Parameter `max_trajectory_points`: longer trajectories are rejected unread.
    max_trajectory_points: usize,
    /// Parameter `clock_tolerance` [s].
    clock_tolerance: f64,
    /// Velocity commands are timed by their source timestamps (cleared when the publisher's
    /// clock is ahead of ours).
    source_stamps_usable: bool,
}

impl Sim {
    /// Seconds on the core's clock (the node clock's [`Clock::seconds`]).
    fn now(&self) -> f64 {
        self.clock.seconds()
    }

    fn warn(&mut self, msg: &str) {
        let now = self.now();
        self.throttle.warn(&self.log, msg, now);
    }

    fn step(&mut self) {
        let now = self.now();
        self.hw.step(now);
        // A stop the core decided on (velocity timeout, joint at a limit) changes last_error
        // without counting a rejection: log it once.
        let status = self.hw.status();
        if status.last_error != self.seen.1 {
            let event = status.rejected_commands == self.seen.0;
            self.seen = (status.rejected_commands, status.last_error.clone());
            if event && !self.seen.1.is_empty() {
                let msg = self.seen.1.clone();
                self.warn(&msg);
            }
        }
    }

    /// Logs the outcome of a command from `topic`.
    fn report(&mut self, topic: &str, result: Result<(), impl Display>) {
        if let Err(e) = result {
            self.warn(&format!(
                "rejected a message on {topic}: {e}; the previous command goes on"
            ));
        }
        let status = self.hw.status();
        self.seen = (status.rejected_commands, status.last_error.clone());
    }

    /// Unpacks a stream item: a read error is logged (and, for commands, counted as a
    /// rejection); the end of the stream is fatal (it only ends when the node is torn down).
    fn take<A, B, E: Display>(
        &mut self,
        what: &str,
        item: Option<Result<(A, B), E>>,
        is_command: bool,
    ) -> Result<Option<(A, B)>, Box<dyn Error>> {
        match item {
            Some(Ok(pair)) => Ok(Some(pair)),
            Some(Err(e)) => {
                let msg = format!("cannot read a message on {what}: {e}");
                if is_command {
                    self.hw.reject_input(msg.clone());
                    let status = self.hw.status();
                    self.seen = (status.rejected_commands, status.last_error.clone());
                }
                self.warn(&msg);
                Ok(None)
            }
            None => Err(format!("the stream of {what} ended").into()),
        }
    }

    fn position(&mut self, topic: &str, msg: &Float64MultiArray) {
        let now = self.now();
        let r = self.hw.command_position(&msg.data, now);
        self.report(topic, r);
    }

    /// A velocity command sent at `source` and received at `received` (DDS wall-clock times,
    /// seconds since the epoch): in force until the timeout counted from when it was sent.
    fn velocity(
        &mut self,
        topic: &str,
        msg: &Float64MultiArray,
        source: Option<f64>,
        received: Option<f64>,
    ) {
        let now = self.now();
        let age = if self.clock.is_sim() {
            // sim time: the DDS stamps are wall-clock times; the age counts from arrival
            0.0
        } else {
            let wall = self.clock.now().as_secs_f64();
            let usable = self.source_stamps_usable;
            let age = ros_io::command_age(
                wall,
                source,
                received,
                self.clock_tolerance,
                &mut self.source_stamps_usable,
            );
            if usable && !self.source_stamps_usable {
                ros_warn!(
                    self.log,
                    "{topic}: source timestamps lead the receive time by more than {} s (the \
                     publisher's clock is ahead): timing commands by their arrival",
                    self.clock_tolerance
                );
            }
            age
        };
        let r = self.hw.command_velocity_sent(&msg.data, now, age);
        if let Err(SimError::Stale { timeout, .. }) = &r {
            // one constant line (collapsed when repeated); the ages are in ~/status
            let msg = format!(
                "rejected stale velocity commands on {topic}: sent more than {} ms before they \
                 were read; the previous command goes on until its own deadline",
                timeout * 1e3
            );
            self.warn(&msg);
            let status = self.hw.status();
            self.seen = (status.rejected_commands, status.last_error.clone());
            return;
        }
        self.report(topic, r);
    }

    fn trajectory(&mut self, topic: &str, msg: &JointTrajectory) {
        let now = self.now();
        let stamp_now = self.clock.now().as_secs_f64();
        let r = match ros_io::check_trajectory_size(msg, self.max_trajectory_points)
            .and_then(|()| ros_io::trajectory_from_msg(msg, now, stamp_now))
        {
            Ok(t) => self.hw.command_trajectory(&t, now).map_err(NodeError::from),
            Err(e) => {
                self.hw.reject_input(e.to_string());
                Err(e)
            }
        };
        self.report(topic, r);
    }

    fn positions_text(&self) -> String {
        let p: Vec<String> = self
            .hw
            .state()
            .positions
            .iter()
            .map(|v| format!("{v:.6}"))
            .collect();
        format!("[{}]", p.join(", "))
    }

    fn hold(&mut self) -> TriggerResponse {
        let now = self.now();
        match self.hw.hold(now) {
            Ok(()) => {
                let message = format!("holding at {}", self.positions_text());
                ros_info!(self.log, "~/hold: {}", message);
                TriggerResponse {
                    success: true,
                    message,
                }
            }
            Err(e) => TriggerResponse {
                success: false,
                message: e.to_string(),
            },
        }
    }

    fn reset(&mut self) -> TriggerResponse {
        let now = self.now();
        let target = self.hw.initial_positions().to_vec();
        let verb = match self.hw.config().position_command_mode {
            PositionCommandMode::Instant => "jumping",
            PositionCommandMode::RateLimited => "moving",
        };
        match self.hw.command_position(&target, now) {
            Ok(()) => {
                let p: Vec<String> = target.iter().map(|v| format!("{v:.6}")).collect();
                let message = format!("{verb} to the initial positions [{}]", p.join(", "));
                ros_info!(self.log, "~/reset: {}", message);
                TriggerResponse {
                    success: true,
                    message,
                }
            }
            Err(e) => {
                let r: Result<(), SimError> = Err(e.clone());
                self.report("~/reset", r);
                TriggerResponse {
                    success: false,
                    message: e.to_string(),
                }
            }
        }
    }

    fn fk(&mut self, req: &ComputeForwardKinematicsRequest) -> ComputeForwardKinematicsResponse {
        self.step();
        let stamp = self.clock.now();
        ros_io::compute_fk(
            &self.robot,
            &self.hw.state().positions,
            req,
            &self.frame_prefix,
            stamp,
        )
    }

    /// The joint states (and link transforms) now.
    fn sample(&mut self, with_tf: bool) -> (JointState, Option<TFMessage>) {
        self.step();
        let stamp = self.clock.now();
        let state = self.hw.state();
        let js = ros_io::joint_state_msg(state, stamp);
        let tf = with_tf.then(|| {
            ros_io::dynamic_transforms(&self.robot, &state.positions, &self.frame_prefix, stamp)
        });
        match tf {
            Some(Err(e)) => {
                self.warn(&format!("cannot build /tf: {e}"));
                (js, None)
            }
            Some(Ok(tf)) => (js, Some(tf)),
            None => (js, None),
        }
    }

    /// The status to publish: always if `force`, else only when it changed.
    fn status(&mut self, force: bool) -> Option<DriverStatus> {
        let stamp = self.clock.now();
        let msg = ros_io::status_msg(self.hw.status(), stamp);
        let changed = self
            .last_status
            .as_ref()
            .is_none_or(|last| ros_io::status_changed(last, &msg));
        if !(force || changed) {
            return None;
        }
        self.last_status = Some(msg.clone());
        Some(msg)
    }
}

/// Publishes, logging (throttled) instead of failing.
macro_rules! publish {
    ($sim:expr, $publisher:expr, $msg:expr, $topic:expr) => {
        if let Err(e) = $publisher.publish($msg) {
            $sim.warn(&format!("cannot publish on {}: {e}", $topic));
        }
    };
}

/// Answers a service request, logging (throttled) a failed reply.
macro_rules! respond {
    ($sim:expr, $server:expr, $id:expr, $response:expr, $name:expr) => {
        if let Err(e) = $server.async_send_response($id, $response).await {
            $sim.warn(&format!("cannot answer {}: {e}", $name));
        }
    };
}

async fn run(start: NodeStart) -> Result<(), Box<dyn Error>> {
    let (mut node, shutdown, clock, log) = start.into_parts();
    let settings = RobotSimParams::load(node.params())?;
    // robot_sim publishes robot_description itself, so its URDF always comes from the file
    let description = RobotDescription::from_file(&settings.robot_description_file)?;
    let robot = description.parse(Robot::from_urdf_str)?;
    if robot.dof() == 0 {
        return Err(description
            .error("the robot has no movable (revolute, continuous or prismatic) joint")
            .into());
    }
    let hw = SimHardware::new(ros_io::joint_specs(&robot), settings.sim_config()?).map_err(
        |e| match e {
            SimError::InvalidJoint { .. } => NodeError::from(
                description.error(format!("the simulator cannot drive this robot: {e}")),
            ),
            other => other.into(),
        },
    )?;

    // The published text names its meshes so that RViz finds them without the file:
    // package://<pkg>/... in an installed share directory, else file://<absolute path>.
    let description =
        description.with_resolvable_mesh_uris(Path::new(&settings.robot_description_file))?;

    let fqn = |node: &RosNode, name: &str| node.resolve_name(name).unwrap_or(name.to_string());
    let pos_topic = fqn(&node, ros_io::POSITION_COMMANDS_TOPIC);
    let vel_topic = fqn(&node, ros_io::VELOCITY_COMMANDS_TOPIC);
    let traj_topic = fqn(&node, ros_io::TRAJECTORY_TOPIC);
    let js_topic = fqn(&node, ros_io::JOINT_STATES_TOPIC);
    let status_topic = fqn(&node, ros_io::STATUS_TOPIC);

    let js_pub = node.publisher::<JointState>(ros_io::JOINT_STATES_TOPIC, qos::default())?;
    let desc_pub = node.publisher::<StringMsg>(ros_io::ROBOT_DESCRIPTION_TOPIC, qos::latched())?;
    let status_pub = node.publisher::<DriverStatus>(ros_io::STATUS_TOPIC, qos::default())?;
    let tf_pubs = if settings.publish_tf {
        Some((
            // tf2's TransformBroadcaster: reliable, depth 100; static: latched.
            node.publisher::<TFMessage>(ros_io::TF_TOPIC, qos::reliable(100))?,
            node.publisher::<TFMessage>(ros_io::TF_STATIC_TOPIC, qos::latched())?,
        ))
    } else {
        None
    };
    let pos_sub =
        node.subscription::<Float64MultiArray>(ros_io::POSITION_COMMANDS_TOPIC, qos::default())?;
    let vel_sub =
        node.subscription::<Float64MultiArray>(ros_io::VELOCITY_COMMANDS_TOPIC, qos::default())?;
    let traj_sub =
        node.subscription::<JointTrajectory>(ros_io::TRAJECTORY_TOPIC, qos::default())?;
    let fk_srv = node.service::<ComputeForwardKinematics>(ros_io::COMPUTE_FK_SERVICE)?;
    let hold_srv = node.service::<Trigger>(ros_io::HOLD_SERVICE)?;
    let reset_srv = node.service::<Trigger>(ros_io::RESET_SERVICE)?;

    let mut sim = Sim {
        hw,
        robot,
        clock: clock.clone(),
        log: log.clone(),
        throttle: WarnThrottle::new(2.0),
        frame_prefix: settings.frame_prefix.clone(),
        seen: (0, String::new()),
        last_status: None,
        max_trajectory_points: usize::try_from(settings.max_trajectory_points).unwrap_or(1),
        clock_tolerance: settings.clock_tolerance,
        source_stamps_usable: true,
    };
    sim.step();

    desc_pub
        .publish(StringMsg {
            data: description.urdf,
        })
        .map_err(|e| format!("cannot publish robot_description: {e}"))?;
    if let Some((_, static_pub)) = &tf_pubs {
        let stamp = clock.now();
        let mut statics = ros_io::static_transforms(&sim.robot, &settings.frame_prefix, stamp)?;
        if !settings.base.parent_frame.is_empty() {
            statics.transforms.push(ros_io::base_transform(
                &sim.robot,
                &settings.base.parent_frame,
                &settings.base.pose,
                &settings.frame_prefix,
                stamp,
            )?);
        }
        static_pub
            .publish(statics)
            .map_err(|e| format!("cannot publish /tf_static: {e}"))?;
    }

    let mut positions = pin!(pos_sub.async_stream());
    let mut velocities = pin!(vel_sub.async_stream());
    let mut trajectories = pin!(traj_sub.async_stream());
    let mut fk_requests = pin!(fk_srv.receive_request_stream());
    let mut hold_requests = pin!(hold_srv.receive_request_stream());
    let mut reset_requests = pin!(reset_srv.receive_request_stream());
    let mut update = ticker(settings.update_rate);
    let mut publish = ticker(settings.effective_joint_state_rate());
    let mut status_tick = ticker(STATUS_RATE_HZ);

    ros_info!(
        log,
        "robot_sim ready: {} joints [{}], update {} Hz",
        sim.robot.dof(),
        sim.robot.joint_names().collect::<Vec<_>>().join(", "),
        settings.update_rate
    );
    loop {
        let mut force_status = false;
        tokio::select! {
            _ = shutdown.wait() => break,
            _ = update.tick() => sim.step(),
            _ = publish.tick() => {
                let (js, tf) = sim.sample(tf_pubs.is_some());
                publish!(sim, js_pub, js, js_topic);
                if let (Some(tf), Some((tf_pub, _))) = (tf, &tf_pubs) {
                    publish!(sim, tf_pub, tf, ros_io::TF_TOPIC);
                }
            }
            _ = status_tick.tick() => force_status = true,
            item = positions.next() => {
                if let Some((msg, _)) = sim.take(&pos_topic, item, true)? {
                    sim.position(&pos_topic, &msg);
                }
            }
            item = velocities.next() => {
                if let Some((msg, info)) = sim.take(&vel_topic, item, true)? {
                    let source = info.source_timestamp().map(|t| t.to_nanos() as f64 * 1e-9);
                    let received = info.received_timestamp().map(|t| t.to_nanos() as f64 * 1e-9);
                    sim.velocity(&vel_topic, &msg, source, received);
                }
            }
            item = trajectories.next() => {
                if let Some((msg, _)) = sim.take(&traj_topic, item, true)? {
                    sim.trajectory(&traj_topic, &msg);
                }
            }
            item = fk_requests.next() => {
                if let Some((id, req)) = sim.take("~/compute_fk requests", item, false)? {
                    let response = sim.fk(&req);
                    respond!(sim, fk_srv, id, response, "~/compute_fk");
                }
            }
            item = hold_requests.next() => {
                if let Some((id, _)) = sim.take("~/hold requests", item, false)? {
                    let response = sim.hold();
                    respond!(sim, hold_srv, id, response, "~/hold");
                }
            }
            item = reset_requests.next() => {
                if let Some((id, _)) = sim.take("~/reset requests", item, false)? {
                    let response = sim.reset();
                    respond!(sim, reset_srv, id, response, "~/reset");
                }
            }
        }
        if let Some(status) = sim.status(force_status) {
            publish!(sim, status_pub, status, status_topic);
        }
    }
    ros_info!(log, "shutting down");
    Ok(())
}
