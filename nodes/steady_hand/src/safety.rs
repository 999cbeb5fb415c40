//! The admittance controller's safety state machine (pure; no clock of its own).
//!
//! Every period [`AdmittanceCore`](crate::admittance::AdmittanceCore) asks [`SafetyMonitor::decide`]
//! with the verdict of its input checks. Any of these stops the robot (zero command from that
//! period on, repeated every period, with the reason logged and published):
//! * no `/clock` yet (sim time), a driver whose joints differ from the URDF's;
//! * no wrench yet, or the last wrench older than `wrench_timeout`, non-finite, or in an unknown
//!   frame; no joint state yet, or the last one older than `joint_state_timeout`;
//! * no fresh fixture while one is required;
//! * a failure of the control step itself ([`StopReason::ControlFault`]: a non-finite twist or
//!   joint velocity, a degenerate Jacobian), which latches ([`SafetyMonitor::decide`]'s
//!   `computed` rule): it clears only after the step has run cleanly, on fresh wrenches, for
//!   `fault_hold` seconds without interruption;
//! * a motion filter's halt.
//!
//! Ages are measured from the messages' stamps when usable ([`crate::stamp`]).
//!
//! **Re-arm.** After a stop caused by a stale or invalid input ([`StopReason::needs_rearm`])
//! once the controller has been active, it does not resume by itself when the input comes back:
//! it stays stopped ([`StopReason::AwaitingRearm`]) until every fresh wrench has been below the
//! deadband for `rearm_hold` seconds without interruption (hands off: the law's shaped wrench
//! is zero; a push, or a stale input, restarts the hold) or `~/enable` is called
//! ([`SafetyMonitor::enable`]) while every input is fresh. A driver that restarts while the user
//! still pushes therefore never makes the robot move on its own.
//!
//! [`joint_names_match`] is the start-up check that the driver's `/joint_states` names are
//! exactly the controller's joints: a controller whose URDF has other joints than the driver
//! must not report `active` while the driver refuses every command.

use std::fmt;

/// Thresholds of the [`SafetyMonitor`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SafetyConfig {
    /// Largest age of the last wrench [s].
    pub wrench_timeout: f64,
    /// Largest age of the last joint state [s].
    pub joint_state_timeout: f64,
    /// How long the control step must run cleanly before a [`StopReason::ControlFault`] clears
    /// [s] (0: the first clean step on a fresh wrench).
    pub fault_hold: f64,
    /// How long the wrench must stay below the deadband (hands off, every fresh wrench of
    /// that time) before a pending re-arm clears by itself [s] (0: the first hands-off
    /// wrench).
    pub rearm_hold: f64,
}

/// Why the controller stopped.
#[derive(Debug, Clone, PartialEq)]
pub enum StopReason {
    /// `use_sim_time` and no `/clock` message yet.
    NoClock,
    /// The driver's joints are not the URDF's (see [`joint_names_match`]).
    DriverMismatch(String),
    /// No wrench received yet.
    NoWrench,
    /// The last wrench is older than the timeout.
    StaleWrench {
        /// Its age [s].
        age: f64,
    },
    /// The last wrench had a NaN or infinite component.
    NonFiniteWrench,
    /// The last wrench names a frame that is neither a URDF link nor known from `/tf`.
    UnknownFrame(String),
    /// No joint state received yet.
    NoJointState,
    /// The last joint state is older than the timeout.
    StaleJointState {
        /// Its age [s].
        age: f64,
    },
    /// `fixture.required` and no fresh fixture.
    NoFixture,
    /// The control step itself failed (non-finite twist or joint velocity, degenerate
    /// Jacobian); latched, see [`SafetyMonitor::decide`].
    ControlFault(String),
    /// The motion filter asked for a halt.
    FilterHalt(String),
    /// Stopped earlier for this reason; waiting for hands-off or `~/enable`.
    AwaitingRearm(Box<StopReason>),
}

impl StopReason {
    /// A stable name of the reason's kind (for de-duplicating logs and status, and for tests).
    pub fn kind(&self) -> &'static str {
        match self {
            Self::NoClock => "no_clock",
            Self::DriverMismatch(_) => "driver_mismatch",
            Self::NoWrench => "no_wrench",
            Self::StaleWrench { .. } => "stale_wrench",
            Self::NonFiniteWrench => "non_finite_wrench",
            Self::UnknownFrame(_) => "unknown_frame",
            Self::NoJointState => "no_joint_state",
            Self::StaleJointState { .. } => "stale_joint_state",
            Self::NoFixture => "no_fixture",
            Self::ControlFault(_) => "control_fault",
            Self::FilterHalt(_) => "filter_halt",
            Self::AwaitingRearm(_) => "awaiting_rearm",
        }
    }

    /// Whether this stop, after the controller was active, requires a re-arm (hands off or
    /// `~/enable`): every stale, missing or invalid input.
    pub fn needs_rearm(&self) -> bool {
        matches!(
            self,
            Self::NoClock
                | Self::NoWrench
                | Self::StaleWrench { .. }
                | Self::NonFiniteWrench
                | Self::UnknownFrame(_)
                | Self::NoJointState
                | Self::StaleJointState { .. }
                | Self::NoFixture
        )
    }
}

impl fmt::Display for StopReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoClock => write!(f, "no /clock received yet (use_sim_time)"),
            Self::DriverMismatch(s) => write!(f, "{s}"),
            Self::NoWrench => write!(f, "no wrench received yet"),
            Self::StaleWrench { age } => write!(f, "wrench is stale ({:.1} ms old)", age * 1e3),
            Self::NonFiniteWrench => write!(f, "wrench has a NaN or infinite component"),
            Self::UnknownFrame(s) => write!(
                f,
                "wrench frame `{s}` is neither a URDF link nor known from /tf or /tf_static"
            ),
            Self::NoJointState => write!(f, "no joint state received yet"),
            Self::StaleJointState { age } => {
                write!(f, "joint state is stale ({:.1} ms old)", age * 1e3)
            }
            Self::NoFixture => write!(f, "no fresh virtual_fixture (fixture.required)"),
            Self::ControlFault(s) => write!(f, "control fault: {s}"),
            Self::FilterHalt(s) => write!(f, "motion filter halt: {s}"),
            Self::AwaitingRearm(r) => write!(
                f,
                "waiting to be re-armed (hands off or ~/enable) after: {r}"
            ),
        }
    }
}

/// A state change worth logging.
#[derive(Debug, Clone, PartialEq)]
pub enum Transition {
    /// The controller stopped for this reason (or the reason's kind changed).
    Stopped(StopReason),
    /// The controller resumed.
    Resumed,
    /// A pending re-arm was cleared (hands off, or `~/enable`).
    Rearmed(&'static str),
}

/// Decides run/stop each period; see the module docs.
#[derive(Debug, Clone)]
pub struct SafetyMonitor {
    config: SafetyConfig,
    stopped: Option<StopReason>,
    ever_active: bool,
    stops: u32,
    /// A latched control fault: its message and since when the steps have been clean [s].
    latched: Option<(String, Option<f64>)>,
    /// The stop that requires a re-arm.
    rearm: Option<StopReason>,
    /// Since when every fresh wrench has been hands off while a re-arm is pending [s].
    hands_off_since: Option<f64>,
}

/// Checks that the driver's joint names (`/joint_states`) are exactly the controller's joints
/// (its URDF's movable joints), in any order: a joint the driver lacks cannot be read, and a
/// driver joint the controller does not command makes the driver refuse every command.
/// The error lists both sides.
pub fn joint_names_match(controller: &[String], driver: &[String]) -> Result<(), String> {
    let missing: Vec<&str> = controller
        .iter()
        .filter(|n| !driver.contains(n))
        .map(String::as_str)
        .collect();
    let extra: Vec<&str> = driver
        .iter()
        .filter(|n| !controller.contains(n))
        .map(String::as_str)
        .collect();
    if missing.is_empty() && extra.is_empty() {
        return Ok(());
    }
    Err(format!(
        "the driver's joint_states joints [{}] do not match the controller's URDF joints [{}] \
         (missing from the driver: [{}]; not in the URDF: [{}]); not going active",
        driver.join(", "),
        controller.join(", "),
        missing.join(", "),
        extra.join(", ")
    ))
}

/// Age of an input at `now`: `Err(missing)` without one, `Err(stale(age))` past `timeout`.
pub fn check_age(
    now: f64,
    last: Option<f64>,
    timeout: f64,
    missing: StopReason,
    stale: impl FnOnce(f64) -> StopReason,
) -> Result<(), StopReason> {
    match last {
        None => Err(missing),
        Some(t) if now - t > timeout => Err(stale(now - t)),
        Some(_) => Ok(()),
    }
}

impl SafetyMonitor {
    /// A monitor that has seen nothing yet.
    pub fn new(config: SafetyConfig) -> Self {
        Self {
            config,
            stopped: Some(StopReason::NoWrench),
            ever_active: false,
            stops: 0,
            latched: None,
            rearm: None,
            hands_off_since: None,
        }
    }

    /// The thresholds.
    pub fn config(&self) -> &SafetyConfig {
        &self.config
    }

    /// One period's decision. `inputs` is the verdict of the input checks and of the step
    /// (`Err` = stop); `computed`: a fresh wrench went through the whole control step this
    /// period; `hands_off`: that wrench was below the deadband. Returns the outcome and the
    /// transition to log, if any.
    pub fn decide(
        &mut self,
        now: f64,
        inputs: Result<(), StopReason>,
        computed: bool,
        hands_off: bool,
    ) -> (Result<(), StopReason>, Option<Transition>) {
        let mut rearmed = None;
        let outcome = match inputs {
            Err(StopReason::ControlFault(msg)) => {
                self.latched = Some((msg.clone(), None));
                Err(StopReason::ControlFault(msg))
            }
            Err(other) => {
                if let Some((_, clean_since)) = &mut self.latched {
                    *clean_since = None;
                }
                if self.ever_active && other.needs_rearm() && self.rearm.is_none() {
                    self.rearm = Some(other.clone());
                }
                self.hands_off_since = None;
                Err(other)
            }
            Ok(()) => {
                let fault = match &mut self.latched {
                    None => None,
                    Some((msg, clean_since)) => {
                        if computed {
                            let since = *clean_since.get_or_insert(now);
                            if now - since >= self.config.fault_hold {
                                None
                            } else {
                                Some(msg.clone())
                            }
                        } else {
                            Some(msg.clone())
                        }
                    }
                };
                match fault {
                    Some(msg) => Err(StopReason::ControlFault(msg)),
                    None => {
                        self.latched = None;
                        match self.rearm.take() {
                            None => Ok(()),
                            Some(_)
                                if computed && hands_off && {
                                    let since = *self.hands_off_since.get_or_insert(now);
                                    now - since >= self.config.rearm_hold
                                } =>
                            {
                                self.hands_off_since = None;
                                rearmed = Some(Transition::Rearmed("hands off"));
                                Ok(())
                            }
                            Some(cause) => {
                                if computed && !hands_off {
                                    self.hands_off_since = None;
                                }
                                let r = StopReason::AwaitingRearm(Box::new(cause.clone()));
                                self.rearm = Some(cause);
                                Err(r)
                            }
                        }
                    }
                }
            }
        };
        let transition = self.record(outcome.clone());
        (outcome, rearmed.or(transition))
    }

    /// `~/enable`: clears a pending re-arm if `inputs` (the input checks now) are fine.
    pub fn enable(&mut self, inputs: Result<(), StopReason>) -> Result<&'static str, String> {
        if let Some((msg, _)) = &self.latched {
            return Err(format!(
                "a control fault is latched ({msg}); it clears by itself after clean steps"
            ));
        }
        inputs.map_err(|r| format!("cannot enable: {r}"))?;
        self.hands_off_since = None;
        Ok(if self.rearm.take().is_some() {
            "re-armed"
        } else {
            "already armed"
        })
    }

    /// Whether a re-arm is pending.
    pub fn rearm_required(&self) -> bool {
        self.rearm.is_some()
    }

    fn record(&mut self, outcome: Result<(), StopReason>) -> Option<Transition> {
        match outcome {
            Ok(()) => {
                self.ever_active = true;
                self.stopped.take().map(|_| Transition::Resumed)
            }
            Err(reason) => {
                let same_kind = self
                    .stopped
                    .as_ref()
                    .is_some_and(|r| r.kind() == reason.kind());
                if self.stopped.is_none() {
                    self.stops += 1;
                }
                self.stopped = Some(reason.clone());
                (!same_kind).then_some(Transition::Stopped(reason))
            }
        }
    }

    /// Whether a control fault is latched.
    pub fn fault_latched(&self) -> bool {
        self.latched.is_some()
    }

    /// The current stop reason (`None` while active).
    pub fn stopped(&self) -> Option<&StopReason> {
        self.stopped.as_ref()
    }

    /// Whether the controller has been active at least once.
    pub fn ever_active(&self) -> bool {
        self.ever_active
    }

    /// Number of stops after being active.
    pub fn stops(&self) -> u32 {
        self.stops
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn monitor() -> SafetyMonitor {
        SafetyMonitor::new(SafetyConfig {
            wrench_timeout: 0.05,
            joint_state_timeout: 0.2,
            fault_hold: 0.1,
            rearm_hold: 0.0,
        })
    }

    /// Issue 12 item 11: after a non-finite-twist fault the status flipped back to `active` at
    /// the next watchdog tick. The fault now holds through ticks and clears only after
    /// `fault_hold` of clean computed steps.
    #[test]
    fn a_control_fault_latches_until_the_steps_are_clean_for_fault_hold() {
        let mut m = monitor();
        assert_eq!(
            m.decide(0.0, Ok(()), true, false).1,
            Some(Transition::Resumed)
        );
        let fault = StopReason::ControlFault("twist is not finite".into());
        let (r, t) = m.decide(0.002, Err(fault.clone()), true, false);
        assert_eq!(
            (r, t),
            (Err(fault.clone()), Some(Transition::Stopped(fault.clone())))
        );
        for k in 2..200 {
            let (r, t) = m.decide(0.002 * k as f64, Ok(()), false, false);
            assert_eq!((r, t), (Err(fault.clone()), None));
        }
        let mut resumed_at = None;
        for k in 0..100 {
            let now = 1.0 + 0.002 * k as f64;
            let inputs = if k == 10 {
                Err(StopReason::FilterHalt("x".into()))
            } else {
                Ok(())
            };
            if m.decide(now, inputs, true, false).1 == Some(Transition::Resumed) {
                resumed_at = Some(now);
                break;
            }
        }
        let t = resumed_at.expect("resumes after clean steps");
        assert!(t > 1.122 - 1e-9 && t < 1.124 + 1e-9, "{t}");
        assert!(!m.fault_latched());
        assert_eq!(m.stops(), 1);
    }

    /// Issue 12 item 2: after a stale-input stop the controller resumes only hands off or on
    /// `~/enable`, never by itself when the input comes back.
    #[test]
    fn a_stale_input_stop_needs_a_rearm() {
        let mut m = monitor();
        let _ = m.decide(0.0, Ok(()), true, false);
        let stale = StopReason::StaleJointState { age: 0.3 };
        let _ = m.decide(0.1, Err(stale.clone()), false, false);
        assert!(m.rearm_required());
        // the driver is back and the user still pushes: stays stopped, every period
        for k in 0..50 {
            let (r, _) = m.decide(0.2 + 0.002 * k as f64, Ok(()), true, false);
            assert_eq!(r, Err(StopReason::AwaitingRearm(Box::new(stale.clone()))));
        }
        // hands off on a computed step re-arms
        let (r, t) = m.decide(0.4, Ok(()), true, true);
        assert_eq!((r, t), (Ok(()), Some(Transition::Rearmed("hands off"))));
        // a second stop; ~/enable refuses with stale inputs, then re-arms
        let _ = m.decide(
            0.5,
            Err(StopReason::StaleWrench { age: 0.06 }),
            false,
            false,
        );
        assert!(m
            .enable(Err(StopReason::StaleWrench { age: 0.07 }))
            .is_err());
        assert_eq!(m.enable(Ok(())), Ok("re-armed"));
        assert_eq!(m.decide(0.6, Ok(()), true, false).0, Ok(()));
        assert_eq!(m.stops(), 2);
        // a stop before the first activation needs no re-arm
        let mut fresh = monitor();
        let _ = fresh.decide(0.0, Err(StopReason::NoWrench), false, false);
        assert!(!fresh.rearm_required());
        assert_eq!(fresh.decide(0.1, Ok(()), true, false).0, Ok(()));
    }

    /// Issue 12 item 2: hands off must hold for `rearm_hold` without interruption; a push or a
    /// stale input in between starts the hold again, and watchdog ticks neither advance nor
    /// break it.
    #[test]
    fn hands_off_rearms_only_after_the_hold_time() {
        let mut m = SafetyMonitor::new(SafetyConfig {
            rearm_hold: 0.1,
            ..monitor().config
        });
        let _ = m.decide(0.0, Ok(()), true, false);
        let stale = StopReason::StaleJointState { age: 0.3 };
        let _ = m.decide(0.1, Err(stale.clone()), false, false);
        let waiting = Err(StopReason::AwaitingRearm(Box::new(stale.clone())));
        // hands off from 0.2 s, a push at 0.25 s: the hold restarts at 0.252 s
        let mut rearmed_at = None;
        for k in 0..200 {
            let now = 0.2 + 0.002 * k as f64;
            let push = k == 25;
            let (r, t) = m.decide(now, Ok(()), true, !push);
            // a watchdog tick between wrenches changes nothing
            assert_eq!(m.decide(now + 0.001, Ok(()), false, false).1, None);
            if t == Some(Transition::Rearmed("hands off")) {
                assert_eq!(r, Ok(()));
                rearmed_at = Some(now);
                break;
            }
            assert_eq!(r, waiting, "at {now}");
        }
        let t = rearmed_at.expect("re-arms after the hold");
        // 0.1 s after 0.252 s (one period more where the float sum falls just short)
        assert!(t > 0.352 - 1e-9 && t < 0.354 + 1e-9, "{t}");
        // a stale input during the hold starts it again
        let _ = m.decide(0.5, Err(stale.clone()), false, false);
        let _ = m.decide(0.51, Ok(()), true, true);
        let _ = m.decide(0.55, Err(stale.clone()), false, false);
        assert_eq!(m.decide(0.62, Ok(()), true, true).0, waiting);
        assert_eq!(m.decide(0.70, Ok(()), true, true).0, waiting);
        assert_eq!(m.decide(0.73, Ok(()), true, true).0, Ok(()));
    }

    /// Issue 12 item 9: a controller given a 5-joint (or 7-joint) URDF reported `active` while
    /// the driver refused every command; the names must match exactly, in any order.
    #[test]
    fn driver_joints_must_be_exactly_the_controllers() {
        let names = |n: usize| (1..=n).map(|k| format!("joint_{k}")).collect::<Vec<_>>();
        assert!(joint_names_match(&names(6), &names(6)).is_ok());
        let mut reversed = names(6);
        reversed.reverse();
        assert!(joint_names_match(&names(6), &reversed).is_ok());
        let e = joint_names_match(&names(5), &names(6)).unwrap_err();
        assert!(e.contains("not in the URDF: [joint_6]"), "{e}");
        let e = joint_names_match(&names(7), &names(6)).unwrap_err();
        assert!(e.contains("missing from the driver: [joint_7]"), "{e}");
    }

    #[test]
    fn ages_and_kinds() {
        let stale = |age| StopReason::StaleWrench { age };
        assert_eq!(
            check_age(1.0, None, 0.05, StopReason::NoWrench, stale),
            Err(StopReason::NoWrench)
        );
        assert!(check_age(1.0, Some(0.96), 0.05, StopReason::NoWrench, stale).is_ok());
        assert!(matches!(
            check_age(1.0, Some(0.9), 0.05, StopReason::NoWrench, stale),
            Err(StopReason::StaleWrench { .. })
        ));
        // reasons of one kind with other numbers are one status (issue 15: the status
        // de-duplication split the Display text)
        assert_eq!(stale(0.06).kind(), stale(0.5).kind());
        let mut m = monitor();
        let _ = m.decide(0.0, Ok(()), true, false);
        assert!(matches!(
            m.decide(0.1, Err(stale(0.06)), false, false).1,
            Some(Transition::Stopped(_))
        ));
        assert_eq!(m.decide(0.2, Err(stale(0.16)), false, false).1, None);
    }
}
