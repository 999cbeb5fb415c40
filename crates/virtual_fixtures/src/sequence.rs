//! Sequencing fixtures: an ordered list of steps (e.g. approach a point, then follow a path,
//! then hold an RCM cone), each active until its completion criterion is met.
//!
//! [`Sequencer`] is a pure state machine, generic over the step's fixture description `F`;
//! the caller evaluates the active fixture and reports its error (and, for paths, the
//! remaining arc length) through [`Sequencer::update`] every cycle.
//!
//! ```text
//!            load            start             criterion met on the last step
//!   Empty ─────────► Ready ─────────► Running ───────────────────────────────► Finished
//!                      ▲   ◄── reset ──  │ ▲                                       │
//!                      │          stop   ▼ │ start (resumes the same step)         │
//!                      │               Stopped                                     │
//!                      └────────────────────────────── reset / start (from step 0) ┘
//! ```
//!
//! `advance` (the operator's "step") moves to the next step in any state but `Empty`
//! (Finished after the last). While `Running` or `Finished` the sequence owns the fixture
//! ([`Sequencer::active`]; Finished holds the last step's fixture); otherwise the caller's
//! own fixture applies.

use crate::error::Error;

/// When a step is complete.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Completion {
    /// Only by [`Sequencer::advance`] (the operator).
    Manual,
    /// The error stays at or below `threshold` for `dwell` seconds without interruption.
    ErrorBelow {
        /// Error threshold, in the unit of the reported error (≥ 0).
        threshold: f64,
        /// Dwell time \[s\] (≥ 0; 0 completes on the first error below the threshold).
        dwell: f64,
    },
    /// The remaining path length is at or below `tolerance` (a path step).
    PathEnd {
        /// Remaining arc length \[m\] (≥ 0).
        tolerance: f64,
    },
    /// After `seconds` in the step.
    Duration {
        /// Step duration \[s\] (> 0).
        seconds: f64,
    },
}

impl Completion {
    /// Errors on NaN, infinite or negative parameters.
    pub fn validate(&self) -> Result<(), Error> {
        let check = |what: &'static str, v: f64, strict: bool| {
            if !v.is_finite() {
                Err(Error::NonFinite { what })
            } else if v < 0.0 || (strict && v == 0.0) {
                Err(Error::OutOfRange {
                    what,
                    value: v,
                    expected: if strict { "> 0" } else { ">= 0" },
                })
            } else {
                Ok(())
            }
        };
        match *self {
            Self::Manual => Ok(()),
            Self::ErrorBelow { threshold, dwell } => {
                check("completion threshold", threshold, false)?;
                check("completion dwell time", dwell, false)
            }
            Self::PathEnd { tolerance } => check("path end tolerance", tolerance, false),
            Self::Duration { seconds } => check("step duration", seconds, true),
        }
    }
}

/// One step: a fixture description and its completion criterion.
#[derive(Debug, Clone, PartialEq)]
pub struct Step<F> {
    /// What the caller should activate (e.g. source names and mode).
    pub fixture: F,
    /// When to move on.
    pub completion: Completion,
}

/// State of a [`Sequencer`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SequenceState {
    /// Nothing loaded.
    Empty,
    /// Loaded, not started (or reset).
    Ready,
    /// The current step is active.
    Running,
    /// Paused by `stop`; `start` resumes the same step.
    Stopped,
    /// The last step completed; its fixture stays active.
    Finished,
}

impl SequenceState {
    /// Lower-case name: `empty`, `ready`, `running`, `stopped`, `finished`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::Empty => "empty",
            Self::Ready => "ready",
            Self::Running => "running",
            Self::Stopped => "stopped",
            Self::Finished => "finished",
        }
    }
}

/// What the active fixture reports each cycle.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepProgress {
    /// Distance to the motion objective (the caller's unit, e.g. m or rad); NaN never
    /// satisfies a criterion.
    pub error: f64,
    /// Remaining arc length of a path step \[m\]; `None` for other sources.
    pub remaining: Option<f64>,
}

/// A change of step reported by [`Sequencer::update`] or [`Sequencer::advance`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transition {
    /// Nothing changed.
    None,
    /// Step `from` completed; step `to` is now active.
    Advanced {
        /// Completed step.
        from: usize,
        /// New step.
        to: usize,
    },
    /// The last step completed.
    Finished,
}

/// The fixture-sequence state machine; see the documentation of `src/sequence.rs`.
#[derive(Debug, Clone)]
pub struct Sequencer<F> {
    steps: Vec<Step<F>>,
    index: usize,
    state: SequenceState,
    step_start: Option<f64>,
    below_since: Option<f64>,
}

impl<F> Default for Sequencer<F> {
    fn default() -> Self {
        Self::new()
    }
}

impl<F> Sequencer<F> {
    /// An empty sequencer.
    pub fn new() -> Self {
        Self {
            steps: Vec::new(),
            index: 0,
            state: SequenceState::Empty,
            step_start: None,
            below_since: None,
        }
    }

    /// Replaces the sequence (state `Ready`, step 0). Errors on an empty list or a bad
    /// criterion (naming the step); the previous sequence is kept then.
    pub fn load(&mut self, steps: Vec<Step<F>>) -> Result<(), (usize, Error)> {
        if steps.is_empty() {
            return Err((0, Error::InvalidRequest("the sequence has no steps")));
        }
        for (i, s) in steps.iter().enumerate() {
            s.completion.validate().map_err(|e| (i, e))?;
        }
        self.steps = steps;
        self.reset();
        Ok(())
    }

    /// Back to step 0, state `Ready` (`Empty` if nothing is loaded).
    pub fn reset(&mut self) {
        self.index = 0;
        self.enter_step();
        self.state = if self.steps.is_empty() {
            SequenceState::Empty
        } else {
            SequenceState::Ready
        };
    }

    fn enter_step(&mut self) {
        self.step_start = None;
        self.below_since = None;
    }

    /// Runs the sequence: from step 0 when `Ready` or `Finished`, the same step when
    /// `Stopped`; no-op when `Running`. Errors when nothing is loaded.
    pub fn start(&mut self) -> Result<(), Error> {
        match self.state {
            SequenceState::Empty => {
                return Err(Error::InvalidRequest(
                    "no sequence loaded (call load_sequence first)",
                ))
            }
            SequenceState::Finished => self.index = 0,
            _ => {}
        }
        if self.state != SequenceState::Running {
            self.enter_step();
        }
        self.state = SequenceState::Running;
        Ok(())
    }

    /// Pauses a running sequence (the caller's own fixture applies again). Errors unless
    /// `Running` or `Finished`.
    pub fn stop(&mut self) -> Result<(), Error> {
        match self.state {
            SequenceState::Running | SequenceState::Finished => {
                self.state = SequenceState::Stopped;
                Ok(())
            }
            _ => Err(Error::InvalidRequest("the sequence is not running")),
        }
    }

    /// Moves to the next step now (the operator's "step"), keeping the state (`Ready` and
    /// `Stopped` stay so; `Running` continues with the next step); after the last step the
    /// state is `Finished`. Errors when `Empty` or `Finished`.
    pub fn advance(&mut self) -> Result<Transition, Error> {
        match self.state {
            SequenceState::Empty => Err(Error::InvalidRequest("no sequence loaded")),
            SequenceState::Finished => Err(Error::InvalidRequest("the sequence has finished")),
            _ => Ok(self.next()),
        }
    }

    fn next(&mut self) -> Transition {
        let from = self.index;
        self.enter_step();
        if from + 1 >= self.steps.len() {
            self.state = SequenceState::Finished;
            Transition::Finished
        } else {
            self.index = from + 1;
            Transition::Advanced {
                from,
                to: self.index,
            }
        }
    }

    /// One cycle at time `t` \[s\] (monotonic) with the active fixture's progress: checks the
    /// current step's criterion when `Running` and moves on when it is met.
    pub fn update(&mut self, t: f64, progress: &StepProgress) -> Transition {
        if self.state != SequenceState::Running {
            return Transition::None;
        }
        let start = *self.step_start.get_or_insert(t);
        let done = match self.steps[self.index].completion {
            Completion::Manual => false,
            Completion::Duration { seconds } => t - start >= seconds,
            Completion::PathEnd { tolerance } => progress.remaining.is_some_and(|r| r <= tolerance),
            Completion::ErrorBelow { threshold, dwell } => {
                if progress.error <= threshold {
                    let since = *self.below_since.get_or_insert(t);
                    t - since >= dwell
                } else {
                    self.below_since = None;
                    false
                }
            }
        };
        if done {
            self.next()
        } else {
            Transition::None
        }
    }

    /// State.
    pub fn state(&self) -> SequenceState {
        self.state
    }

    /// Index of the current (or, when `Finished`, the last) step; 0 when `Empty`.
    pub fn index(&self) -> usize {
        self.index
    }

    /// Number of steps.
    pub fn len(&self) -> usize {
        self.steps.len()
    }

    /// `true` when nothing is loaded.
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    /// The steps.
    pub fn steps(&self) -> &[Step<F>] {
        &self.steps
    }

    /// The step whose fixture applies: the current one when `Running`, the last one when
    /// `Finished`, otherwise `None` (the caller's own fixture applies).
    pub fn active(&self) -> Option<(usize, &Step<F>)> {
        match self.state {
            SequenceState::Running | SequenceState::Finished => {
                Some((self.index, &self.steps[self.index]))
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(e: f64) -> StepProgress {
        StepProgress {
            error: e,
            remaining: None,
        }
    }

    fn three() -> Vec<Step<&'static str>> {
        vec![
            Step {
                fixture: "approach",
                completion: Completion::ErrorBelow {
                    threshold: 0.002,
                    dwell: 0.5,
                },
            },
            Step {
                fixture: "path",
                completion: Completion::PathEnd { tolerance: 0.001 },
            },
            Step {
                fixture: "rcm",
                completion: Completion::Manual,
            },
        ]
    }

    #[test]
    fn approach_follow_hold() {
        let mut s = Sequencer::new();
        assert_eq!(s.state(), SequenceState::Empty);
        assert!(s.start().is_err());
        s.load(three()).unwrap();
        assert_eq!(s.state(), SequenceState::Ready);
        assert!(s.active().is_none());
        // not running: no transitions
        assert_eq!(s.update(0.0, &err(0.0)), Transition::None);
        s.start().unwrap();
        assert_eq!(s.active().unwrap().1.fixture, "approach");
        // error dips below, interrupted, then stays below for the dwell time
        assert_eq!(s.update(0.0, &err(0.01)), Transition::None);
        assert_eq!(s.update(0.1, &err(0.001)), Transition::None);
        assert_eq!(s.update(0.4, &err(0.003)), Transition::None);
        assert_eq!(s.update(0.5, &err(0.001)), Transition::None);
        assert_eq!(s.update(0.99, &err(0.001)), Transition::None);
        assert_eq!(s.update(1.0, &err(f64::NAN)), Transition::None);
        assert_eq!(s.update(1.1, &err(0.001)), Transition::None);
        assert_eq!(
            s.update(1.6, &err(0.002)),
            Transition::Advanced { from: 0, to: 1 }
        );
        // path: the error does not matter, the remaining length does
        let path = |r| StepProgress {
            error: 0.0,
            remaining: Some(r),
        };
        assert_eq!(s.update(1.7, &err(0.0)), Transition::None);
        assert_eq!(s.update(1.8, &path(0.2)), Transition::None);
        assert_eq!(
            s.update(2.0, &path(0.0005)),
            Transition::Advanced { from: 1, to: 2 }
        );
        // manual hold never completes by itself
        assert_eq!(s.update(100.0, &err(0.0)), Transition::None);
        assert_eq!(s.advance().unwrap(), Transition::Finished);
        assert_eq!(s.state(), SequenceState::Finished);
        assert_eq!(s.active().unwrap().1.fixture, "rcm");
        assert!(s.advance().is_err());
        // start again from the beginning
        s.start().unwrap();
        assert_eq!(s.index(), 0);
        assert_eq!(s.state(), SequenceState::Running);
    }

    #[test]
    fn stop_resume_step_reset() {
        let mut s = Sequencer::new();
        s.load(three()).unwrap();
        assert!(s.stop().is_err());
        // stepping while ready selects the step without running it
        assert_eq!(
            s.advance().unwrap(),
            Transition::Advanced { from: 0, to: 1 }
        );
        assert_eq!(s.state(), SequenceState::Ready);
        s.start().unwrap();
        assert_eq!(s.index(), 1);
        s.stop().unwrap();
        assert!(s.active().is_none());
        assert_eq!(
            s.update(
                5.0,
                &StepProgress {
                    error: 0.0,
                    remaining: Some(0.0)
                }
            ),
            Transition::None
        );
        s.start().unwrap();
        assert_eq!(s.index(), 1);
        s.reset();
        assert_eq!((s.state(), s.index()), (SequenceState::Ready, 0));
    }

    #[test]
    fn duration_and_zero_dwell() {
        let mut s = Sequencer::new();
        s.load(vec![
            Step {
                fixture: 0,
                completion: Completion::Duration { seconds: 1.0 },
            },
            Step {
                fixture: 1,
                completion: Completion::ErrorBelow {
                    threshold: 0.1,
                    dwell: 0.0,
                },
            },
        ])
        .unwrap();
        s.start().unwrap();
        assert_eq!(s.update(10.0, &err(1.0)), Transition::None);
        assert_eq!(
            s.update(11.0, &err(1.0)),
            Transition::Advanced { from: 0, to: 1 }
        );
        assert_eq!(s.update(11.1, &err(0.2)), Transition::None);
        assert_eq!(s.update(11.2, &err(0.05)), Transition::Finished);
    }

    #[test]
    fn bad_sequences_are_refused() {
        let mut s: Sequencer<u8> = Sequencer::new();
        assert!(matches!(s.load(vec![]), Err((0, Error::InvalidRequest(_)))));
        let bad = |c| {
            vec![
                Step {
                    fixture: 0u8,
                    completion: Completion::Manual,
                },
                Step {
                    fixture: 1,
                    completion: c,
                },
            ]
        };
        for c in [
            Completion::ErrorBelow {
                threshold: f64::NAN,
                dwell: 0.0,
            },
            Completion::ErrorBelow {
                threshold: 0.1,
                dwell: -1.0,
            },
            Completion::PathEnd {
                tolerance: f64::INFINITY,
            },
            Completion::Duration { seconds: 0.0 },
        ] {
            assert!(matches!(s.load(bad(c)), Err((1, _))), "{c:?}");
        }
        assert_eq!(s.state(), SequenceState::Empty);
        // a failed load keeps the previous sequence
        s.load(bad(Completion::Manual)).unwrap();
        assert!(s.load(vec![]).is_err());
        assert_eq!(s.len(), 2);
    }
}
