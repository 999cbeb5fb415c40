//! The simulated hardware: joints that follow position, velocity and trajectory commands within
//! their limits, integrated at a fixed rate, with time passed in by the caller.
//!
//! # Behaviour (ros2_control with mock hardware, made safe)
//!
//! * **The latest accepted command wins.** A position, velocity or trajectory command replaces
//!   whatever command was active (as if the matching ros2_control controller were switched in).
//! * **A rejected command is ignored** and the previous command goes on, as in ros2_control
//!   (a forward command controller keeps its last valid command; the trajectory controller keeps
//!   its active trajectory). The reason is returned as a typed [`SimError`], counted in
//!   [`Status::rejected_commands`] and kept in [`Status::last_error`]. A rejected velocity command
//!   does not refresh the velocity watchdog, so the last valid velocities never outlive
//!   `velocity_command_timeout_s` after they were received.
//! * **Position commands** move each joint toward its target at most at its velocity limit (and
//!   within its acceleration limit when one is configured), or jump there in
//!   [`PositionCommandMode::Instant`]. Targets outside the limits are rejected.
//! * **Velocity commands** are integrated (ramped within the acceleration limit when configured).
//!   A joint that reaches a position limit stops there like a joint on its hard stop: its velocity
//!   becomes zero while the other joints go on; the event is recorded in [`Status::last_error`]
//!   and [`Status::at_limit`]. Velocities beyond the velocity limit are rejected. When the newest
//!   valid velocity command is older than the timeout, the joints are integrated up to exactly
//!   the timeout and then stop dead (zero velocity, [`Status::holding`]), reason recorded. A
//!   command's age counts from when it was *sent* when the caller knows it
//!   ([`SimHardware::command_velocity_sent`]): a command already older than the timeout when it
//!   arrives (queued during a stall) is rejected as stale, and a fresh one is in force for the
//!   timeout minus its age, so a dead commander moves the robot for at most one timeout after
//!   its last command was sent.
//! * **Trajectories** are checked in full before they are accepted: names, lengths, finite
//!   values, strictly increasing times, waypoints and the whole interpolated path within the
//!   position and velocity limits, zero final velocity (unless allowed). They are then followed
//!   exactly (mock hardware tracks perfectly): linear, cubic Hermite or quintic interpolation
//!   (see [`Trajectory`]), starting from the current state at the moment of
//!   acceptance; the last point is held afterwards. Acceleration limits do not apply to them.
//! * **Hold** ([`SimHardware::hold`]) cancels the active command: the joints stop dead where
//!   they are and hold that position ([`Mode::Position`]). It is not a command and is never
//!   rejected. [`SimHardware::initial_positions`] gives the start positions (for a reset).
//! * **Positions never leave the limits and no NaN enters the state**, whatever the commands.
//!   Trajectories whose interpolation would overflow (finite but huge velocities or
//!   accelerations) are rejected; and should any motion law still produce a non-finite value,
//!   it is not written: the joints hold their last finite positions (zero velocity,
//!   [`Mode::Position`]) and the fault is recorded in [`Status::last_error`].
//! * **Time** is monotonic seconds passed in by the caller; a command at time `now` first brings
//!   the simulation up to `now` under the previous command. A command stamped earlier than the
//!   simulation's time takes effect at the simulation's time; such a step is ignored (noted in
//!   [`Status::last_error`]).
//!
//! ```
//! use robot_sim::hardware::{JointSpec, SimConfig, SimHardware};
//!
//! let joints = vec![
//!     JointSpec::revolute("shoulder", -2.0, 2.0, 1.0),
//!     JointSpec::revolute("elbow", -2.0, 2.0, 1.0),
//! ];
//! let mut robot = SimHardware::new(joints, SimConfig::default())?;
//! robot.step(0.0);
//! robot.command_velocity(&[0.5, -0.25], 0.0)?;
//! let state = robot.step(0.2);
//! assert!((state.positions[0] - 0.1).abs() < 1e-12);
//! assert!((state.positions[1] + 0.05).abs() < 1e-12);
//! // A NaN command is refused and changes nothing.
//! assert!(robot.command_velocity(&[f64::NAN, 0.0], 0.2).is_err());
//! assert_eq!(robot.status().rejected_commands, 1);
//! # Ok::<(), robot_sim::hardware::SimError>(())
//! ```

mod config;
mod error;
mod joint;
mod motion;
mod trajectory;

#[cfg(test)]
mod tests;

pub use config::{PositionCommandMode, SimConfig};
pub use error::SimError;
pub use joint::{JointKind, JointSpec};
pub use trajectory::{Trajectory, TrajectoryPoint};

use trajectory::Plan;

/// Most integration sub-steps in one call (bounds the work after a very long pause).
const MAX_SUBSTEPS: f64 = 1.0e6;

/// The command interface that drives the joints now (`DriverStatus.mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// No command received yet: the joints hold their initial positions.
    Idle,
    /// Following a position command.
    Position,
    /// Following a velocity command (or stopped by its timeout).
    Velocity,
    /// Following (or holding the end of) a trajectory.
    Trajectory,
}

impl Mode {
    /// The mode's name, as in logs: `idle`, `position`, `velocity` or `trajectory` (the status
    /// message carries the `DriverStatus.MODE_*` number instead, see `ros_io::mode_code`).
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Idle => "idle",
            Mode::Position => "position",
            Mode::Velocity => "velocity",
            Mode::Trajectory => "trajectory",
        }
    }
}

/// Joint positions and velocities at one time (the data of `sensor_msgs/JointState`; the node
/// publishes an empty effort vector, the simulated joints having no effort interface).
#[derive(Debug, Clone, PartialEq)]
pub struct JointState {
    /// Time of the state (s); 0 until the first call that passes a time.
    pub time: f64,
    /// Joint names, in the robot's order.
    pub names: Vec<String>,
    /// Positions (rad or m).
    pub positions: Vec<f64>,
    /// Velocities (rad/s or m/s).
    pub velocities: Vec<f64>,
}

/// What the driver is doing (the data of `rpq_interfaces/DriverStatus`, plus per-joint limits).
#[derive(Debug, Clone, PartialEq)]
pub struct Status {
    /// Active command interface.
    pub mode: Mode,
    /// True while the robot holds still: idle, position target reached, velocity command timed
    /// out or all zero with the joints at rest, trajectory finished.
    pub holding: bool,
    /// Number of commands rejected since start (saturating).
    pub rejected_commands: u32,
    /// Reason for the most recent rejection or stop (timeout, joint stopped at a limit, clock
    /// going backwards); empty if there was none.
    pub last_error: String,
    /// Per joint: the position is at its lower or upper limit.
    pub at_limit: Vec<bool>,
}

#[derive(Debug, Clone)]
enum Active {
    Idle,
    Position,
    /// In force until `deadline` [s].
    Velocity {
        deadline: f64,
        timed_out: bool,
    },
    Trajectory {
        plan: Plan,
        finished: bool,
    },
}

/// The simulated robot hardware. See the [module documentation](self) for its behaviour.
#[derive(Debug, Clone)]
pub struct SimHardware {
    joints: Vec<JointSpec>,
    bounds: Vec<(f64, f64)>,
    accel: Vec<Option<f64>>,
    config: SimConfig,
    period: f64,
    /// Start positions (resolved from the configuration).
    initial: Vec<f64>,
    time: Option<f64>,
    state: JointState,
    status: Status,
    active: Active,
    /// Position or velocity target of the active command (one per joint).
    target: Vec<f64>,
}

impl SimHardware {
    /// A robot with `joints` (in the order of every command and state vector) at its initial
    /// positions, idle. The first call with a time sets the simulation's clock.
    pub fn new(joints: Vec<JointSpec>, config: SimConfig) -> Result<Self, SimError> {
        if joints.is_empty() {
            return Err(SimError::InvalidJoint {
                joint: String::new(),
                reason: "the robot has no movable joints".into(),
            });
        }
        for (i, j) in joints.iter().enumerate() {
            j.validate()?;
            if joints[..i].iter().any(|other| other.name == j.name) {
                return Err(SimError::InvalidJoint {
                    joint: j.name.clone(),
                    reason: "the name is used by another joint".into(),
                });
            }
        }
        let (initial, accel) = config.resolve(&joints)?;
        let n = joints.len();
        let bounds: Vec<(f64, f64)> = joints.iter().map(JointSpec::bounds).collect();
        let at_limit = initial
            .iter()
            .zip(&bounds)
            .map(|(&p, &(lo, hi))| p <= lo || p >= hi)
            .collect();
        Ok(Self {
            state: JointState {
                time: 0.0,
                names: joints.iter().map(|j| j.name.clone()).collect(),
                positions: initial.clone(),
                velocities: vec![0.0; n],
            },
            status: Status {
                mode: Mode::Idle,
                holding: true,
                rejected_commands: 0,
                last_error: String::new(),
                at_limit,
            },
            period: 1.0 / config.update_rate_hz,
            initial,
            joints,
            bounds,
            accel,
            config,
            time: None,
            active: Active::Idle,
            target: vec![0.0; n],
        })
    }

    /// The joints, in command order.
    pub fn joints(&self) -> &[JointSpec] {
        &self.joints
    }

    /// The configuration.
    pub fn config(&self) -> &SimConfig {
        &self.config
    }

    /// Integration period (s): `1 / update_rate_hz`.
    pub fn period(&self) -> f64 {
        self.period
    }

    /// The start positions: `initial_positions` from the configuration, or zero clamped into
    /// each joint's limits.
    pub fn initial_positions(&self) -> &[f64] {
        &self.initial
    }

    /// The simulation's time (s), `None` before the first call that passed one.
    pub fn time(&self) -> Option<f64> {
        self.time
    }

    /// The current joint state (as of the last call).
    pub fn state(&self) -> &JointState {
        &self.state
    }

    /// The current status.
    pub fn status(&self) -> &Status {
        &self.status
    }

    /// Advances the simulation to `now` and returns the joint state there. The node calls it
    /// every `1 / update_rate_hz` seconds; longer gaps are integrated in sub-steps of at most
    /// one period. A non-finite or earlier `now` leaves the state unchanged (noted in
    /// [`Status::last_error`]).
    pub fn step(&mut self, now: f64) -> &JointState {
        match self.time {
            _ if !now.is_finite() => {
                self.status.last_error = format!("ignored a step at non-finite time {now}");
            }
            Some(t) if now < t => {
                self.status.last_error =
                    format!("ignored a step at {now} s: the simulation is already at {t} s");
            }
            _ => self.advance(now),
        }
        &self.state
    }

    /// Position command (`/forward_position_controller/commands`): one target per joint, in
    /// joint order, each within its joint's limits.
    pub fn command_position(&mut self, positions: &[f64], now: f64) -> Result<(), SimError> {
        let checked = self
            .begin_command(now)
            .and_then(|_| self.check_positions(positions));
        if let Err(e) = checked {
            return self.reject(e);
        }
        self.target.copy_from_slice(positions);
        self.active = Active::Position;
        self.update_status();
        Ok(())
    }

    /// Velocity command (`/forward_velocity_controller/commands`): one velocity per joint, in
    /// joint order, each within its joint's velocity limit. It stays in force until the next
    /// accepted command or until it is `velocity_command_timeout_s` old.
    pub fn command_velocity(&mut self, velocities: &[f64], now: f64) -> Result<(), SimError> {
        self.command_velocity_sent(velocities, now, 0.0)
    }

    /// [`SimHardware::command_velocity`] for a command that was sent `age` seconds before
    /// `now` (its transport delay, or how long it waited in a queue; ≥ 0): it stays in force
    /// until it is `velocity_command_timeout_s` old counted from when it was sent, and is
    /// rejected as stale ([`SimError::Stale`]) if it already is.
    pub fn command_velocity_sent(
        &mut self,
        velocities: &[f64],
        now: f64,
        age: f64,
    ) -> Result<(), SimError> {
        let timeout = self.config.velocity_command_timeout_s;
        let checked = self.begin_command(now).and_then(|t| {
            self.check_velocities(velocities)?;
            let age = if age.is_finite() {
                age.max(0.0)
            } else {
                f64::INFINITY
            };
            if age >= timeout {
                return Err(SimError::Stale {
                    what: "velocity command".into(),
                    age,
                    timeout,
                });
            }
            Ok(t + timeout - age)
        });
        let deadline = match checked {
            Ok(d) => d,
            Err(e) => return self.reject(e),
        };
        self.target.copy_from_slice(velocities);
        self.active = Active::Velocity {
            deadline,
            timed_out: false,
        };
        self.update_status();
        Ok(())
    }

    /// Trajectory command (`/joint_trajectory_controller/joint_trajectory`). It replaces the
    /// active command from `now` on, starting from the current state.
    pub fn command_trajectory(
        &mut self,
        trajectory: &Trajectory,
        now: f64,
    ) -> Result<(), SimError> {
        let planned = self.begin_command(now).and_then(|t| {
            trajectory::plan(
                trajectory,
                &self.joints,
                &self.config,
                t,
                &self.state.positions,
                &self.state.velocities,
            )
            .map(|plan| (t, plan))
        });
        let (t, plan) = match planned {
            Ok(ok) => ok,
            Err(e) => return self.reject(e),
        };
        let (mut pos, mut vel) = (self.state.positions.clone(), self.state.velocities.clone());
        let finished = plan.sample(t, &mut pos, &mut vel);
        self.active = Active::Trajectory { plan, finished };
        self.set_all(&pos, &vel, "trajectory");
        self.update_status();
        Ok(())
    }

    /// Hold request (the node's `~/hold` service): brings the simulation up to `now` under the
    /// active command, then cancels that command and holds the positions reached. The joints
    /// stop dead there (zero velocity, even with acceleration limits, as mock hardware does),
    /// the mode becomes [`Mode::Position`] with the current positions as target, and
    /// [`Status::holding`] is true. Not a command: it is never rejected or counted; only a
    /// non-finite `now` is refused.
    ///
    /// ```
    /// use robot_sim::hardware::{JointSpec, Mode, SimConfig, SimHardware};
    ///
    /// let joints = vec![JointSpec::revolute("j", -2.0, 2.0, 1.0)];
    /// let mut robot = SimHardware::new(joints, SimConfig::default())?;
    /// robot.step(0.0);
    /// robot.command_position(&[1.5], 0.0)?;
    /// robot.hold(0.5)?;
    /// assert!((robot.state().positions[0] - 0.5).abs() < 1e-12);
    /// assert_eq!(robot.state().velocities[0], 0.0);
    /// assert!(robot.status().holding);
    /// assert_eq!(robot.status().mode, Mode::Position);
    /// assert!((robot.step(2.0).positions[0] - 0.5).abs() < 1e-12);
    /// # Ok::<(), robot_sim::hardware::SimError>(())
    /// ```
    pub fn hold(&mut self, now: f64) -> Result<(), SimError> {
        self.begin_command(now)?;
        self.stop_in_place();
        self.update_status();
        Ok(())
    }

    /// Records a command that was refused before it reached the simulation (for example a
    /// message the node could not convert): counts it in [`Status::rejected_commands`] and keeps
    /// `reason` in [`Status::last_error`], exactly as a command the core rejects. The active
    /// command goes on.
    pub fn reject_input(&mut self, reason: impl Into<String>) {
        self.status.rejected_commands = self.status.rejected_commands.saturating_add(1);
        self.status.last_error = reason.into();
    }

    // ---- internals ----

    /// Checks a command's time and brings the simulation up to it; returns the time the
    /// command takes effect.
    fn begin_command(&mut self, now: f64) -> Result<f64, SimError> {
        if !now.is_finite() {
            return Err(SimError::InvalidTime {
                what: "command time".into(),
                value: now,
            });
        }
        let t = self.time.map_or(now, |t| t.max(now));
        self.advance(t);
        Ok(t)
    }

    fn reject(&mut self, e: SimError) -> Result<(), SimError> {
        self.reject_input(e.to_string());
        Err(e)
    }

    fn check_length(&self, what: &str, values: &[f64]) -> Result<(), SimError> {
        if values.len() != self.joints.len() {
            return Err(SimError::LengthMismatch {
                what: what.into(),
                expected: self.joints.len(),
                got: values.len(),
            });
        }
        for (j, &value) in self.joints.iter().zip(values) {
            if !value.is_finite() {
                return Err(SimError::NotFinite {
                    what: what.into(),
                    joint: j.name.clone(),
                    value,
                });
            }
        }
        Ok(())
    }

    fn check_positions(&self, positions: &[f64]) -> Result<(), SimError> {
        const WHAT: &str = "position command";
        self.check_length(WHAT, positions)?;
        for ((j, &value), &(lower, upper)) in self.joints.iter().zip(positions).zip(&self.bounds) {
            if value < lower || value > upper {
                return Err(SimError::PositionOutOfLimits {
                    what: WHAT.into(),
                    joint: j.name.clone(),
                    value,
                    lower,
                    upper,
                });
            }
        }
        Ok(())
    }

    fn check_velocities(&self, velocities: &[f64]) -> Result<(), SimError> {
        const WHAT: &str = "velocity command";
        self.check_length(WHAT, velocities)?;
        for (j, &value) in self.joints.iter().zip(velocities) {
            if value.abs() > j.max_velocity {
                return Err(SimError::VelocityOutOfLimits {
                    what: WHAT.into(),
                    joint: j.name.clone(),
                    value,
                    limit: j.max_velocity,
                });
            }
        }
        Ok(())
    }

    /// Moves the simulation forward to `t` (finite) under the active command.
    fn advance(&mut self, t: f64) {
        let Some(t0) = self.time else {
            self.time = Some(t);
            self.state.time = t;
            return;
        };
        if t <= t0 {
            return;
        }
        match &mut self.active {
            Active::Idle => {}
            Active::Position => self.integrate(t0, t),
            &mut Active::Velocity {
                deadline,
                timed_out,
            } => {
                let timeout = self.config.velocity_command_timeout_s;
                if deadline > t0 {
                    self.integrate(t0, t.min(deadline));
                }
                // (unless a fault already replaced the command)
                let still_velocity = matches!(self.active, Active::Velocity { .. });
                if t > deadline && !timed_out && still_velocity {
                    self.active = Active::Velocity {
                        deadline,
                        timed_out: true,
                    };
                    self.state.velocities.fill(0.0);
                    // (the same text every time: a commander that streams too slowly gives one
                    // collapsed warning, not one per stop)
                    self.status.last_error = format!(
                        "velocity command timed out: no new valid command within {timeout} s of \
                         the last one being sent; the joints stopped"
                    );
                }
            }
            Active::Trajectory { plan, finished } => {
                let (mut pos, mut vel) =
                    (self.state.positions.clone(), self.state.velocities.clone());
                *finished = plan.sample(t, &mut pos, &mut vel);
                self.set_all(&pos, &vel, "trajectory");
            }
        }
        self.time = Some(t);
        self.state.time = t;
        self.update_status();
    }

    /// Integrates the position or velocity command from `t0` to `t1` in equal sub-steps of at
    /// most one period.
    fn integrate(&mut self, t0: f64, t1: f64) {
        let gap = t1 - t0;
        let n = (gap / self.period - 1e-9).ceil().clamp(1.0, MAX_SUBSTEPS);
        let dt = gap / n;
        let velocity_mode = matches!(self.active, Active::Velocity { .. });
        for _ in 0..n as usize {
            for j in 0..self.joints.len() {
                let (p, v, source) = if velocity_mode {
                    let (dp, v) = motion::follow_velocity(
                        self.state.velocities[j],
                        self.target[j],
                        self.accel[j],
                        dt,
                    );
                    (self.state.positions[j] + dp, v, "velocity command")
                } else {
                    let (p, v) = self.position_substep(j, dt);
                    (p, v, "position command")
                };
                if !self.set_joint(j, p, v, true, source) {
                    return;
                }
            }
            if self.at_rest() {
                break;
            }
        }
    }

    /// Writes a whole new state (positions, velocities), joint by joint through
    /// [`Self::set_joint`], stopping at the first non-finite value.
    fn set_all(&mut self, pos: &[f64], vel: &[f64], source: &str) {
        for (j, (&p, &v)) in pos.iter().zip(vel).enumerate() {
            if !self.set_joint(j, p, v, false, source) {
                return;
            }
        }
    }

    /// Stops every joint where it is and holds there (position mode, target = current state).
    fn stop_in_place(&mut self) {
        self.target.copy_from_slice(&self.state.positions);
        self.state.velocities.fill(0.0);
        self.active = Active::Position;
    }

    /// The only way new motion enters the state: writes position `p` and velocity `v` of joint
    /// `j` and keeps them within the limits ([`Self::limit_joint`]). A non-finite value is a
    /// fault, never written: the joints hold their last (finite) positions with zero velocity,
    /// the active command is cancelled (as [`Self::hold`] does) and the reason is recorded in
    /// [`Status::last_error`]. Returns false on such a fault.
    fn set_joint(&mut self, j: usize, p: f64, v: f64, hard_stop: bool, source: &str) -> bool {
        if !(p.is_finite() && v.is_finite()) {
            self.stop_in_place();
            self.status.last_error = format!(
                "fault: the {source} gave joint `{}` position {p} and velocity {v}, not finite; \
                 holding the last finite positions",
                self.joints[j].name
            );
            return false;
        }
        self.state.positions[j] = p;
        self.state.velocities[j] = v;
        self.limit_joint(j, hard_stop);
        true
    }

    fn position_substep(&self, j: usize, dt: f64) -> (f64, f64) {
        match self.config.position_command_mode {
            PositionCommandMode::Instant => (self.target[j], 0.0),
            PositionCommandMode::RateLimited => motion::move_to_target(
                self.state.positions[j],
                self.state.velocities[j],
                self.target[j],
                self.joints[j].max_velocity,
                self.accel[j],
                dt,
            ),
        }
    }

    /// Keeps joint `j` (just written, finite, by [`Self::set_joint`]) within its limits. With `hard_stop`, a joint pushed past a limit stops
    /// there with zero velocity and the event is recorded; otherwise (trajectories, whose path
    /// was checked, so only rounding can cross) the values are just clamped.
    fn limit_joint(&mut self, j: usize, hard_stop: bool) {
        let (lower, upper) = self.bounds[j];
        let vmax = self.joints[j].max_velocity;
        let p = self.state.positions[j];
        if p > upper || p < lower {
            let (limit, side) = if p > upper {
                (upper, "upper")
            } else {
                (lower, "lower")
            };
            self.state.positions[j] = limit;
            if hard_stop {
                self.state.velocities[j] = 0.0;
                if !self.status.at_limit[j] {
                    self.status.last_error = format!(
                        "joint `{}` stopped at its {side} limit {limit}",
                        self.joints[j].name
                    );
                }
            }
        }
        self.state.velocities[j] = self.state.velocities[j].clamp(-vmax, vmax);
        let p = self.state.positions[j];
        self.status.at_limit[j] = p <= lower || p >= upper;
    }

    /// True when further sub-steps cannot change the state.
    fn at_rest(&self) -> bool {
        let still = self.state.velocities.iter().all(|&v| v == 0.0);
        still
            && match self.active {
                Active::Position => self.state.positions == self.target,
                Active::Velocity { timed_out, .. } => {
                    timed_out || self.target.iter().all(|&v| v == 0.0)
                }
                Active::Idle => true,
                Active::Trajectory { finished, .. } => finished,
            }
    }

    fn update_status(&mut self) {
        self.status.mode = match self.active {
            Active::Idle => Mode::Idle,
            Active::Position => Mode::Position,
            Active::Velocity { .. } => Mode::Velocity,
            Active::Trajectory { .. } => Mode::Trajectory,
        };
        self.status.holding = self.at_rest();
    }
}
