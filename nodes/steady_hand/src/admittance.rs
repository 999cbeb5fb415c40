//! [`AdmittanceCore`]: the admittance controller's rule on plain Rust/nalgebra types, the split
//! of ros2_controllers' `AdmittanceRule` from its controller. The node `admittance_controller`
//! only converts messages, calls the core and publishes what it returns.
//!
//! Inputs (times in seconds on the node's clock, wall or `/clock`):
//! * [`AdmittanceCore::on_joint_state`], [`AdmittanceCore::on_fixture`],
//!   [`AdmittanceCore::on_transform`] (`/tf`, `/tf_static`),
//!   [`AdmittanceCore::set_driver_mismatch`], [`AdmittanceCore::set_clock_running`];
//! * [`AdmittanceCore::on_wrench`]: runs one control period on the new sample and returns the
//!   command to publish;
//! * [`AdmittanceCore::tick`]: the watchdog period (`update_rate`): returns the command to
//!   publish: the stop while stopped (every period, for both output kinds), else the last
//!   command again (a driver with a command deadline gets one every period);
//! * [`AdmittanceCore::zero_ft`] (`~/zero_ft`), [`AdmittanceCore::enable`] (`~/enable`),
//!   [`AdmittanceCore::set_gains`] (run-time parameters), [`AdmittanceCore::set_motion_filter`];
//! * [`AdmittanceCore::record_publish`]: the node reports every publish, a failure is counted.
//!
//! One period on a wrench:
//!
//! ```text
//! raw wrench (frame_id) ─ filter ─ − tare − tool weight ─ deadband ─ to the tool point (base)
//!   ─ law (fixture, gains, velocity and acceleration limits) ─ motion filter (linear part)
//!   ─ damped least squares, fixture kept, joint-limit slow-down ─ joint velocities / twist
//! ```
//!
//! **Never a jump.** Nothing is published before the controller has been active (`Output::Nothing`:
//! until the first valid wrench and joint state); the first command starts from the measured
//! twist (`J q̇` of the joint state's velocities, zero when at rest) and the acceleration limit
//! ramps it to the law's output. Run-time changes of gains, compliances and velocity limits are
//! ramped linearly over `ramp_time` ([`AdmittanceCore::set_gains`]), and a change of fixture or
//! mode goes through the acceleration limit, so the twist never changes by more than
//! `acceleration limit · Δt` per period while active. A stop is immediate (zero), resuming
//! ramps again from rest.
//!
//! **Time of a sample.** The step's `Δt` (acceleration limit) and the filter's `Δt` come from
//! the wrenches' stamps (receive times when unusable, see [`crate::stamp`]), so the same inputs
//! always give the same commands, replayed or live.

use nalgebra::{Isometry3, Matrix6, Point3, Vector3, Vector6};
use rpq_kinematics::Robot;
use rpq_virtual_fixtures::{AdmittanceController, Compliance, ControllerConfig, Guidance, Mode};

use crate::convert::{Fixture, FixtureMode};
use crate::frames::FrameTree;
use crate::joints::{JointMapper, MappingConfig};
use crate::motion_filter::{FilterSlot, ToolMotionFilter};
use crate::safety::{check_age, SafetyConfig, SafetyMonitor, StopReason, Transition};
use crate::stamp::StampClock;
use crate::wrench::{shift_wrench, FtConfig, WrenchProcessor};
use crate::NodeError;

/// The gains that can change at run time (ramped, see [`AdmittanceCore::set_gains`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Gains {
    /// Compliance `c` of eq. 8.
    pub c: f64,
    /// Attenuation `c_τ` of eq. 8.
    pub c_tau: f64,
    /// `k_d` of eq. 11 (closed loop).
    pub k_d: f64,
    /// Scale of the force [1/N].
    pub force_scale: f64,
    /// Scale of the torque [1/(N m)].
    pub torque_scale: f64,
    /// Tool speed limit [m/s].
    pub max_linear_velocity: f64,
    /// Tool angular speed limit [rad/s].
    pub max_angular_velocity: f64,
}

impl Gains {
    fn lerp(&self, to: &Gains, s: f64) -> Gains {
        let l = |a: f64, b: f64| a + (b - a) * s;
        Gains {
            c: l(self.c, to.c),
            c_tau: l(self.c_tau, to.c_tau),
            k_d: l(self.k_d, to.k_d),
            force_scale: l(self.force_scale, to.force_scale),
            torque_scale: l(self.torque_scale, to.torque_scale),
            max_linear_velocity: l(self.max_linear_velocity, to.max_linear_velocity),
            max_angular_velocity: l(self.max_angular_velocity, to.max_angular_velocity),
        }
    }

    /// Checks the values the law accepts (finite, `c, c_τ ≥ 0`, `0 ≤ k_d < 1`, scales `≥ 0`,
    /// limits `> 0`).
    pub fn validate(&self) -> Result<(), String> {
        let all = [
            ("admittance.c", self.c, 0.0),
            ("admittance.c_tau", self.c_tau, 0.0),
            ("admittance.k_d", self.k_d, 0.0),
            ("shaping.force_scale", self.force_scale, 0.0),
            ("shaping.torque_scale", self.torque_scale, 0.0),
        ];
        for (name, v, min) in all {
            if !(v.is_finite() && v >= min) {
                return Err(format!("{name} = {v}: must be finite and >= {min}"));
            }
        }
        if self.k_d >= 1.0 {
            return Err(format!("admittance.k_d = {}: must be < 1", self.k_d));
        }
        for (name, v) in [
            ("limits.max_linear_velocity", self.max_linear_velocity),
            ("limits.max_angular_velocity", self.max_angular_velocity),
        ] {
            if !(v.is_finite() && v > 0.0) {
                return Err(format!("{name} = {v}: must be finite and > 0"));
            }
        }
        Ok(())
    }
}

/// Settings of an [`AdmittanceCore`].
#[derive(Debug, Clone, PartialEq)]
pub struct CoreConfig {
    /// The law: compliance, shaping (radial deadbands, scales), velocity and acceleration
    /// limits. Its mode is set per fixture; its gains are the start values of [`Gains`].
    pub control: ControllerConfig,
    /// `k_d` of eq. 11 for closed-loop fixtures.
    pub k_d: f64,
    /// Force/torque handling.
    pub ft: FtConfig,
    /// Joint mapping (damping law, joint-limit slow-down).
    pub mapping: MappingConfig,
    /// Watchdog timeouts and the control-fault hold.
    pub safety: SafetyConfig,
    /// How far a stamp may lead its receive time before the publisher's clock counts as
    /// unusable [s].
    pub clock_tolerance: f64,
    /// A fixture older than this counts as none [s].
    pub fixture_timeout: f64,
    /// Without a fresh fixture: stop (`true`) or free motion.
    pub fixture_required: bool,
    /// Run-time gain changes are ramped over this time [s].
    pub ramp_time: f64,
    /// A motion-filter swap blends over this time [s].
    pub filter_blend: f64,
    /// `~/zero_ft` is refused while the tool moves faster than this [m/s].
    pub tare_max_linear_speed: f64,
    /// ... or turns faster than this [rad/s].
    pub tare_max_angular_speed: f64,
    /// Frame of a wrench whose `frame_id` is empty.
    pub sensor_frame: String,
    /// Link whose origin is the controlled point.
    pub tool_link: String,
    /// The nominal period (`1 / update_rate`) [s]: the `Δt` of the first step after a start.
    pub period: f64,
}

/// A wrench sample (a `geometry_msgs/WrenchStamped`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WrenchInput<'a> {
    /// `header.frame_id` (empty: the configured sensor frame).
    pub frame_id: &'a str,
    /// Force [N] and torque [N m] about the frame's origin, in its axes.
    pub wrench: Vector6<f64>,
    /// `header.stamp` [s] (`None`: unset).
    pub stamp: Option<f64>,
    /// When it was received [s].
    pub received: f64,
}

/// A joint state (a `sensor_msgs/JointState` in URDF order).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JointInput<'a> {
    /// Positions [rad or m], finite.
    pub positions: &'a [f64],
    /// Velocities, if the driver reports them.
    pub velocities: Option<&'a [f64]>,
    /// `header.stamp` [s] (`None`: unset).
    pub stamp: Option<f64>,
    /// When it was received [s].
    pub received: f64,
}

/// What the node publishes for one period.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Output<'a> {
    /// Nothing (the controller has never been active).
    Nothing,
    /// The stop: zero joint velocities / zero twist.
    Stop,
    /// Motion.
    Motion {
        /// The realised tool twist `J q̇` (base frame, about the tool point).
        twist: &'a Vector6<f64>,
        /// Joint velocities, URDF order.
        joint_velocities: &'a [f64],
    },
}

/// The controller's state for `~/status`.
#[derive(Debug, Clone, PartialEq)]
pub struct CoreStatus {
    /// Never active yet (waiting for inputs).
    pub waiting: bool,
    /// Why it is stopped (`None`: active).
    pub reason: Option<StopReason>,
    /// A stale or invalid input stopped it: it resumes only hands off or on `~/enable`.
    pub rearm_required: bool,
    /// Smallest singular value of the tool Jacobian at the last step.
    pub sigma_min: f64,
    /// Damping of the last step.
    pub damping: f64,
    /// Joint-limit scale of the last step.
    pub limit_scale: f64,
    /// Fixture in use (its `VirtualFixture.TYPE_*`) and mode; `None` before the first.
    pub fixture: Option<(u8, FixtureMode)>,
    /// Stops after being active.
    pub stops: u32,
    /// Failed publishes.
    pub publish_failures: u32,
    /// The wrench the law saw at the last step (base frame, tool point).
    pub wrench: Vector6<f64>,
    /// The motion filter reported contact at the last step.
    pub filter_contact: bool,
}

/// What changed on a period, for the node's log (see also [`AdmittanceCore::take_notices`]).
pub type Event = Transition;

#[derive(Debug, Clone)]
struct Ramp {
    from: Gains,
    to: Gains,
    start: f64,
}

/// The admittance controller's rule; see the module docs.
pub struct AdmittanceCore {
    cfg: CoreConfig,
    mapper: JointMapper,
    sensor_link: usize,
    frames: FrameTree,
    law: AdmittanceController,
    gains: Ramp,
    ft: WrenchProcessor,
    safety: SafetyMonitor,
    filter: FilterSlot,
    clocks: [StampClock; 3],
    notices: Vec<String>,
    clock_running: bool,
    driver_mismatch: Option<String>,
    // inputs
    q: Vec<f64>,
    qd_measured: Option<Vec<f64>>,
    joint_time: Option<f64>,
    wrench_time: Option<f64>,
    wrench_finite: bool,
    /// The frame of the wrench stream (as resolved: anchor link and pose in it).
    wrench_frame: Option<(String, usize, Isometry3<f64>)>,
    unknown_frame: Option<String>,
    fixture: Option<(Fixture, f64)>,
    last_step: Option<f64>,
    // outputs
    active_output: bool,
    twist: Vector6<f64>,
    qd: Vec<f64>,
    // status
    sigma_min: f64,
    damping: f64,
    limit_scale: f64,
    fixture_label: Option<(u8, FixtureMode)>,
    publish_failures: u32,
    law_wrench: Vector6<f64>,
    filter_contact: bool,
}

impl std::fmt::Debug for AdmittanceCore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AdmittanceCore")
            .field("status", &self.status())
            .finish_non_exhaustive()
    }
}

const WRENCH: usize = 0;
const JOINTS: usize = 1;
const FIXTURE: usize = 2;

impl AdmittanceCore {
    /// A core for `robot`; checks the settings (links exist, law valid).
    pub fn new(robot: Robot, cfg: CoreConfig) -> Result<Self, NodeError> {
        let sensor_link = robot
            .link_index(&cfg.sensor_frame)
            .map_err(|e| NodeError::config("sensor_frame", e.to_string()))?;
        let n = robot.dof();
        let mut mapper = JointMapper::new(robot, &cfg.tool_link)
            .map_err(|e| NodeError::config("tool_link", e.to_string()))?;
        mapper.config = cfg.mapping;
        let mut control = cfg.control;
        control.mode = Mode::ClosedLoop { k_d: cfg.k_d };
        control.validate()?;
        control.mode = Mode::Free;
        let law = AdmittanceController::new(control)?;
        let g = Gains {
            c: control.compliance.c,
            c_tau: control.compliance.c_tau,
            k_d: cfg.k_d,
            force_scale: control.shaping.force_scale,
            torque_scale: control.shaping.torque_scale,
            max_linear_velocity: control.limits.linear_velocity,
            max_angular_velocity: control.limits.angular_velocity,
        };
        let tol = cfg.clock_tolerance;
        Ok(Self {
            mapper,
            sensor_link,
            frames: FrameTree::default(),
            law,
            gains: Ramp {
                from: g,
                to: g,
                start: f64::NEG_INFINITY,
            },
            ft: WrenchProcessor::new(cfg.ft),
            safety: SafetyMonitor::new(cfg.safety),
            filter: FilterSlot::default(),
            clocks: [
                StampClock::new(tol),
                StampClock::new(tol),
                StampClock::new(tol),
            ],
            notices: Vec::new(),
            clock_running: true,
            driver_mismatch: None,
            q: vec![0.0; n],
            qd_measured: None,
            joint_time: None,
            wrench_time: None,
            wrench_finite: true,
            wrench_frame: None,
            unknown_frame: None,
            fixture: None,
            last_step: None,
            active_output: false,
            twist: Vector6::zeros(),
            qd: vec![0.0; n],
            sigma_min: f64::NAN,
            damping: 0.0,
            limit_scale: 1.0,
            fixture_label: None,
            publish_failures: 0,
            law_wrench: Vector6::zeros(),
            filter_contact: false,
            cfg,
        })
    }

    /// The settings.
    pub fn config(&self) -> &CoreConfig {
        &self.cfg
    }

    /// The robot.
    pub fn robot(&self) -> &Robot {
        self.mapper.robot()
    }

    /// The joint mapper (poses and Jacobian of the last step).
    pub fn mapper(&self) -> &JointMapper {
        &self.mapper
    }

    /// The gains in force at `now` (ramping after [`AdmittanceCore::set_gains`]).
    pub fn gains(&self, now: f64) -> Gains {
        let r = &self.gains;
        let s = if self.cfg.ramp_time > 0.0 {
            ((now - r.start) / self.cfg.ramp_time).clamp(0.0, 1.0)
        } else {
            1.0
        };
        r.from.lerp(&r.to, s)
    }

    /// Run-time change of the gains: from the values in force at `now` to `target`, linearly
    /// over `ramp_time`. Refused (with the reason) if `target` is out of range.
    pub fn set_gains(&mut self, target: Gains, now: f64) -> Result<(), String> {
        target.validate()?;
        let from = self.gains(now);
        self.gains = Ramp {
            from,
            to: target,
            start: now,
        };
        Ok(())
    }

    /// Plugs in a motion filter (`None`: removes it), blended over `filter_blend` from `now`.
    pub fn set_motion_filter(&mut self, filter: Option<Box<dyn ToolMotionFilter>>, now: f64) {
        self.filter.set(filter, now, self.cfg.filter_blend);
    }

    /// The name of the motion filter in use (`""`: none).
    pub fn motion_filter_name(&self) -> &str {
        self.filter.name()
    }

    /// With `use_sim_time`: whether `/clock` runs. Every input counts as stale until it does.
    pub fn set_clock_running(&mut self, running: bool) {
        self.clock_running = running;
    }

    /// The driver's joints differ from the URDF's (`Some(message)`): never active until fixed.
    pub fn set_driver_mismatch(&mut self, mismatch: Option<String>) {
        self.driver_mismatch = mismatch;
    }

    /// Messages to log once (an input's stamps became unusable).
    pub fn take_notices(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notices)
    }

    fn message_time(&mut self, which: usize, stamp: Option<f64>, received: f64) -> f64 {
        let t = self.clocks[which].message_time(stamp, received).0;
        if let Some(n) = self.clocks[which].take_notice() {
            let what = ["wrench", "joint_states", "virtual_fixture"][which];
            self.notices.push(format!("{what}: {n}"));
        }
        t
    }

    /// A joint state (URDF order). Non-finite or wrongly sized positions are refused.
    pub fn on_joint_state(&mut self, js: &JointInput) -> Result<(), String> {
        let n = self.q.len();
        if js.positions.len() != n || !js.positions.iter().all(|x| x.is_finite()) {
            return Err(format!(
                "joint state with {} positions (need {n} finite values)",
                js.positions.len()
            ));
        }
        let t = self.message_time(JOINTS, js.stamp, js.received);
        self.q.copy_from_slice(js.positions);
        self.qd_measured = js
            .velocities
            .filter(|v| v.len() == n && v.iter().all(|x| x.is_finite()))
            .map(<[f64]>::to_vec);
        self.joint_time = Some(self.joint_time.map_or(t, |old| old.max(t)));
        Ok(())
    }

    /// A fixture received (stamp and receive time as for wrenches).
    pub fn on_fixture(&mut self, fixture: Fixture, stamp: Option<f64>, received: f64) {
        let t = self.message_time(FIXTURE, stamp, received);
        self.fixture = Some((fixture, t));
    }

    /// A transform from `/tf` (`is_static` false) or `/tf_static`. Transforms of URDF links
    /// are ignored (forward kinematics gives them).
    pub fn on_transform(
        &mut self,
        parent: &str,
        child: &str,
        pose: Isometry3<f64>,
        is_static: bool,
    ) {
        if self.mapper.robot().link_index(child).is_err() {
            self.frames.set(parent, child, pose, is_static);
        }
    }

    /// Resolves a frame to (anchor link, pose in it).
    fn resolve(&self, frame: &str) -> Option<(usize, Isometry3<f64>)> {
        let robot = self.mapper.robot();
        self.frames.resolve(frame, |n| robot.link_index(n).ok())
    }

    /// The wrench frame's pose in the base frame after the last forward kinematics.
    fn sensor_pose(&self) -> Isometry3<f64> {
        match &self.wrench_frame {
            Some((_, link, local)) => self.mapper.link_pose(*link) * local,
            None => *self.mapper.link_pose(self.sensor_link),
        }
    }

    /// A wrench sample: filters it and runs one control period. Returns what to publish.
    ///
    /// A sample older than one already taken (reordered, or the rest of a flushed queue) is
    /// ignored; so is one already older than `wrench_timeout` when it arrives: neither ever
    /// reaches the law.
    pub fn on_wrench(&mut self, w: &WrenchInput, now: f64) -> (Output<'_>, Option<Event>) {
        let t = self.message_time(WRENCH, w.stamp, w.received);
        let newest = self.wrench_time.is_none_or(|old| t >= old);
        if newest {
            self.wrench_time = Some(t);
            self.wrench_finite = w.wrench.iter().all(|x| x.is_finite());
            let fresh = now - t <= self.cfg.safety.wrench_timeout;
            if self.wrench_finite && fresh {
                if w.frame_id.is_empty() {
                    // (taken out and put back: no allocation per sample)
                    let sensor = std::mem::take(&mut self.cfg.sensor_frame);
                    self.take_wrench_sample(&sensor, &w.wrench, t);
                    self.cfg.sensor_frame = sensor;
                } else {
                    self.take_wrench_sample(w.frame_id, &w.wrench, t);
                }
            }
        }
        let step = newest.then_some(t);
        self.period(now, step)
    }

    fn take_wrench_sample(&mut self, frame: &str, raw: &Vector6<f64>, t: f64) {
        let same = self
            .wrench_frame
            .as_ref()
            .is_some_and(|(f, _, _)| f == frame);
        if !same {
            let Some((link, local)) = self.resolve(frame) else {
                self.unknown_frame = Some(frame.to_string());
                return;
            };
            // re-express the filter and the tare offset in the new frame (poses at the
            // current joint state), or start afresh without one
            if let Some((_, old_link, old_local)) = &self.wrench_frame {
                if self.mapper.update(&self.q).is_ok() && self.joint_time.is_some() {
                    let from = self.mapper.link_pose(*old_link) * old_local;
                    let to = self.mapper.link_pose(link) * local;
                    self.ft.change_frame(&from, &to);
                } else {
                    self.ft.reset_filter();
                }
            }
            self.wrench_frame = Some((frame.to_string(), link, local));
        } else if let Some((_, link, local)) = &mut self.wrench_frame {
            // the mount may have been updated on /tf since
            if let Some((l, p)) = {
                let robot = self.mapper.robot();
                self.frames.resolve(frame, |n| robot.link_index(n).ok())
            } {
                (*link, *local) = (l, p);
            }
        }
        self.unknown_frame = None;
        self.ft.update(raw, t);
    }

    /// The watchdog period: returns what to publish now.
    pub fn tick(&mut self, now: f64) -> (Output<'_>, Option<Event>) {
        self.period(now, None)
    }

    /// The input checks at `now`.
    fn inputs_ok(&self, now: f64) -> Result<(), StopReason> {
        if !self.clock_running {
            return Err(StopReason::NoClock);
        }
        if let Some(m) = &self.driver_mismatch {
            return Err(StopReason::DriverMismatch(m.clone()));
        }
        self.joint_state_ok(now)?;
        let c = &self.cfg.safety;
        check_age(
            now,
            self.wrench_time,
            c.wrench_timeout,
            StopReason::NoWrench,
            |age| StopReason::StaleWrench { age },
        )?;
        if !self.wrench_finite {
            return Err(StopReason::NonFiniteWrench);
        }
        if let Some(f) = &self.unknown_frame {
            return Err(StopReason::UnknownFrame(f.clone()));
        }
        if self.ft.filtered().is_none() {
            return Err(StopReason::NoWrench);
        }
        if self.cfg.fixture_required && self.fresh_fixture(now).is_none() {
            return Err(StopReason::NoFixture);
        }
        Ok(())
    }

    /// The joint-state watchdog at `now`.
    fn joint_state_ok(&self, now: f64) -> Result<(), StopReason> {
        check_age(
            now,
            self.joint_time,
            self.cfg.safety.joint_state_timeout,
            StopReason::NoJointState,
            |age| StopReason::StaleJointState { age },
        )
    }

    fn fresh_fixture(&self, now: f64) -> Option<&Fixture> {
        self.fixture
            .as_ref()
            .filter(|(_, t)| now - t <= self.cfg.fixture_timeout)
            .map(|(f, _)| f)
    }

    fn period(&mut self, now: f64, step_time: Option<f64>) -> (Output<'_>, Option<Event>) {
        let mut inputs = self.inputs_ok(now);
        let mut hands_off = false;
        let computed = step_time.is_some() && inputs.is_ok();
        if let (Some(t), Ok(())) = (step_time, &inputs) {
            match self.step(now, t) {
                Ok(h) => hands_off = h,
                Err(r) => inputs = Err(r),
            }
        }
        let was_moving = self.active_output;
        let (outcome, event) = self.safety.decide(now, inputs, computed, hands_off);
        match outcome {
            Ok(()) if computed => {
                self.active_output = true;
                (self.motion(), event)
            }
            Ok(()) => {
                // a tick while active: the last command again
                if self.active_output {
                    (self.motion(), event)
                } else {
                    (self.stop_output(), event)
                }
            }
            Err(_) => {
                if was_moving || computed {
                    self.stop_outputs();
                }
                (self.stop_output(), event)
            }
        }
    }

    fn motion(&self) -> Output<'_> {
        Output::Motion {
            twist: &self.twist,
            joint_velocities: &self.qd,
        }
    }

    fn stop_output(&self) -> Output<'_> {
        if self.safety.ever_active() {
            Output::Stop
        } else {
            Output::Nothing
        }
    }

    /// Zero command, law and filters back to rest.
    fn stop_outputs(&mut self) {
        self.active_output = false;
        self.twist = Vector6::zeros();
        self.qd.iter_mut().for_each(|x| *x = 0.0);
        self.law.reset();
        self.filter.reset();
        self.last_step = None;
    }

    /// One control step on the filtered wrench at sample time `t`; `Ok(hands_off)`.
    fn step(&mut self, now: f64, t: f64) -> Result<bool, StopReason> {
        let fault = |e: String| StopReason::ControlFault(e);
        self.mapper
            .jacobian_at(&self.q)
            .map_err(|e| fault(e.to_string()))?;
        let sensor = self.sensor_pose();
        let tool = Point3::from(self.mapper.tool_pose().translation.vector);
        let comp = self.ft.compensated(&sensor).ok_or(StopReason::NoWrench)?;
        let f = shift_wrench(&comp, &sensor, &tool);
        // the fixture and the gains of this period
        let timeout = self.cfg.fixture_timeout;
        let fresh = self
            .fixture
            .as_ref()
            .filter(|(_, t)| now - t <= timeout)
            .map(|(fx, _)| fx);
        let empty = Guidance::empty();
        let (guidance, mode) = match fresh {
            Some(fx) => (&fx.guidance, fx.mode),
            None => (&empty, FixtureMode::Free),
        };
        self.fixture_label = fresh.map(|fx| (fx.fixture_type, fx.mode));
        let g = self.gains(now);
        let mut config = *self.law.config();
        config.compliance = Compliance::new(g.c, g.c_tau).map_err(|e| fault(e.to_string()))?;
        config.shaping.force_scale = g.force_scale;
        config.shaping.torque_scale = g.torque_scale;
        config.limits.linear_velocity = g.max_linear_velocity;
        config.limits.angular_velocity = g.max_angular_velocity;
        config.mode = mode.to_mode(g.k_d);
        self.law
            .set_config(config)
            .map_err(|e| fault(e.to_string()))?;
        if self.last_step.is_none() {
            // (re)starting: from the measured motion, so nothing jumps
            let measured = match &self.qd_measured {
                Some(qd) => self.mapper.twist_of(qd),
                None => Vector6::zeros(),
            };
            self.law.reset_to(measured);
        }
        let dt = self
            .last_step
            .map_or(self.cfg.period, |t0| (t - t0).clamp(1e-4, 0.1));
        let (v, info) = self
            .law
            .step(&f, guidance, dt)
            .map_err(|e| fault(e.to_string()))?;
        self.last_step = Some(self.last_step.map_or(t, |t0| t0.max(t)));
        self.law_wrench = f;
        let hands_off = config.shaping.apply(&f).iter().all(|x| *x == 0.0);
        // the motion filter: linear part only
        let lin = Vector3::new(v[0], v[1], v[2]);
        let out = self.filter.apply(&tool, &lin, dt, now);
        self.filter_contact = out.contact;
        if out.halt {
            return Err(StopReason::FilterHalt(out.note.to_string()));
        }
        let v = Vector6::new(
            out.linear_velocity.x,
            out.linear_velocity.y,
            out.linear_velocity.z,
            v[3],
            v[4],
            v[5],
        );
        let kernel: Option<Matrix6<f64>> = info.preferred.map(|p| Matrix6::identity() - p);
        let sol = self
            .mapper
            .solve(&self.q, &v, kernel.as_ref(), &mut self.qd)
            .map_err(|e| fault(e.to_string()))?;
        self.sigma_min = sol.sigma_min;
        self.damping = sol.damping;
        self.limit_scale = sol.scale;
        self.twist = self.mapper.twist_of(&self.qd);
        if !(self.twist.iter().all(|x| x.is_finite()) && self.qd.iter().all(|x| x.is_finite())) {
            return Err(fault(
                "the commanded twist or joint velocity is not finite".into(),
            ));
        }
        Ok(hands_off)
    }

    /// `~/zero_ft`: the current wrench becomes the offset (see [`crate::wrench`]). Refused
    /// without a wrench or joint state, or while the tool moves faster than the thresholds
    /// (measured joint velocities, else the commanded twist).
    pub fn zero_ft(&mut self, now: f64) -> Result<String, String> {
        self.joint_state_ok(now)
            .map_err(|r| format!("refused: {r}"))?;
        if self.ft.filtered().is_none() {
            return Err("refused: no wrench received yet".into());
        }
        self.mapper
            .jacobian_at(&self.q)
            .map_err(|e| format!("refused: {e}"))?;
        let moving = match &self.qd_measured {
            Some(qd) => self.mapper.twist_of(qd),
            None => self.twist,
        };
        let (lin, ang) = (
            moving.fixed_rows::<3>(0).norm(),
            moving.fixed_rows::<3>(3).norm(),
        );
        if lin > self.cfg.tare_max_linear_speed || ang > self.cfg.tare_max_angular_speed {
            return Err(format!(
                "refused: the tool moves ({:.4} m/s, {:.4} rad/s; tare needs at most {} m/s and \
                 {} rad/s)",
                lin, ang, self.cfg.tare_max_linear_speed, self.cfg.tare_max_angular_speed
            ));
        }
        let sensor = self.sensor_pose();
        self.ft.tare(&sensor);
        let o = self.ft.offset();
        Ok(format!(
            "offset [{:.4}, {:.4}, {:.4}] N, [{:.4}, {:.4}, {:.4}] N m",
            o[0], o[1], o[2], o[3], o[4], o[5]
        ))
    }

    /// `~/enable`: clears a pending re-arm if every input is fresh at `now`.
    pub fn enable(&mut self, now: f64) -> Result<&'static str, String> {
        let inputs = self.inputs_ok(now);
        self.safety.enable(inputs)
    }

    /// The node reports a publish of a command; failures are counted in the status.
    pub fn record_publish(&mut self, ok: bool) {
        if !ok {
            self.publish_failures = self.publish_failures.saturating_add(1);
        }
    }

    /// The tare offset (sensor frame).
    pub fn ft_offset(&self) -> &Vector6<f64> {
        self.ft.offset()
    }

    /// The current state for `~/status`.
    pub fn status(&self) -> CoreStatus {
        CoreStatus {
            waiting: !self.safety.ever_active(),
            reason: self.safety.stopped().cloned(),
            rearm_required: self.safety.rearm_required(),
            sigma_min: self.sigma_min,
            damping: self.damping,
            limit_scale: self.limit_scale,
            fixture: self.fixture_label,
            stops: self.safety.stops(),
            publish_failures: self.publish_failures,
            wrench: self.law_wrench,
            filter_contact: self.filter_contact,
        }
    }
}

#[cfg(test)]
mod tests;
