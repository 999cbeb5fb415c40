//! Glove-data validation and the hold/timeout state machine of `hand_mapping`.
//!
//! A reading is accepted when it has the 20 finger sensors, every value is finite and within
//! `[raw.min, raw.max]`. A rejected reading is reported (the node logs it) and the last valid
//! command stays in force; when no valid reading has arrived for `hold_timeout`, the guard
//! asks once for the hand to be stopped, and accepts the next valid reading as a restart.

/// Number of finger sensors the mapping needs (5 fingers × 4).
pub const SENSORS: usize = 20;

/// Why a reading was rejected.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum Rejection {
    /// Wrong number of values.
    #[error("expected {expected} raw values, got {got}")]
    Count {
        /// Expected.
        expected: usize,
        /// Received.
        got: usize,
    },
    /// NaN or infinite value.
    #[error("sensor {index} ({name}) is not finite")]
    NonFinite {
        /// Sensor index.
        index: usize,
        /// Sensor name.
        name: String,
    },
    /// A value outside the valid raw range.
    #[error("sensor {index} ({name}) = {value} outside [{min}, {max}] counts")]
    OutOfRange {
        /// Sensor index.
        index: usize,
        /// Sensor name.
        name: String,
        /// Value.
        value: f64,
        /// Lower bound.
        min: f64,
        /// Upper bound.
        max: f64,
    },
    /// A required sensor name is missing from the names.
    #[error("sensor `{0}` missing from names")]
    MissingName(String),
}

/// What the node should do after a timer tick.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TickAction {
    /// Nothing new.
    None,
    /// The hold timeout expired: stop the hand (sent once per outage).
    Stop,
}

/// State of the guard.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GuardState {
    /// No valid reading yet.
    Waiting,
    /// Valid readings arriving (or holding the last within the timeout).
    Active,
    /// Timed out; the hand was stopped.
    Stopped,
}

/// Validation and hold/timeout logic.
#[derive(Clone, Debug)]
pub struct GloveGuard {
    /// Smallest valid raw value (counts).
    pub raw_min: f64,
    /// Largest valid raw value (counts).
    pub raw_max: f64,
    /// Longest time the last valid command is held without a new valid reading (s).
    pub hold_timeout_s: f64,
    last_valid: Option<f64>,
    state: GuardState,
    rejected: u64,
}

impl GloveGuard {
    /// New guard.
    pub fn new(raw_min: f64, raw_max: f64, hold_timeout_s: f64) -> Self {
        GloveGuard {
            raw_min,
            raw_max,
            hold_timeout_s,
            last_valid: None,
            state: GuardState::Waiting,
            rejected: 0,
        }
    }

    /// Current state.
    pub fn state(&self) -> GuardState {
        self.state
    }

    /// Readings rejected so far.
    pub fn rejected(&self) -> u64 {
        self.rejected
    }

    /// Checks a reading already ordered as the 20 finger sensors (`names` for messages).
    /// On success the reading becomes the command and the hold timer restarts.
    pub fn accept(
        &mut self,
        now: f64,
        raw: &[f64],
        names: &[String],
    ) -> Result<[f64; SENSORS], Rejection> {
        let r = self.check(raw, names);
        match &r {
            Ok(_) => {
                self.last_valid = Some(now);
                self.state = GuardState::Active;
            }
            Err(_) => self.rejected += 1,
        }
        r
    }

    fn check(&self, raw: &[f64], names: &[String]) -> Result<[f64; SENSORS], Rejection> {
        if raw.len() != SENSORS {
            return Err(Rejection::Count {
                expected: SENSORS,
                got: raw.len(),
            });
        }
        let name = |i: usize| names.get(i).cloned().unwrap_or_else(|| format!("#{i}"));
        let mut out = [0.0; SENSORS];
        for (i, &v) in raw.iter().enumerate() {
            if !v.is_finite() {
                return Err(Rejection::NonFinite {
                    index: i,
                    name: name(i),
                });
            }
            if v < self.raw_min || v > self.raw_max {
                return Err(Rejection::OutOfRange {
                    index: i,
                    name: name(i),
                    value: v,
                    min: self.raw_min,
                    max: self.raw_max,
                });
            }
            out[i] = v;
        }
        Ok(out)
    }

    /// Timer tick: returns [`TickAction::Stop`] once when the hold timeout has expired.
    pub fn tick(&mut self, now: f64) -> TickAction {
        match (self.state, self.last_valid) {
            (GuardState::Active, Some(t)) if now - t > self.hold_timeout_s => {
                self.state = GuardState::Stopped;
                TickAction::Stop
            }
            _ => TickAction::None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok() -> Vec<f64> {
        vec![100.0; SENSORS]
    }

    #[test]
    fn validates_count_nan_and_range() {
        let mut g = GloveGuard::new(0.0, 255.0, 0.5);
        assert!(g.accept(0.0, &ok(), &[]).is_ok());
        assert!(matches!(
            g.accept(0.0, &ok()[..19], &[]),
            Err(Rejection::Count { got: 19, .. })
        ));
        let mut v = ok();
        v[3] = f64::NAN;
        assert!(matches!(
            g.accept(0.0, &v, &[]),
            Err(Rejection::NonFinite { index: 3, .. })
        ));
        v[3] = 300.0;
        assert!(matches!(
            g.accept(0.0, &v, &[]),
            Err(Rejection::OutOfRange { index: 3, .. })
        ));
        v[3] = -1.0;
        assert!(g.accept(0.0, &v, &[]).is_err());
        assert_eq!(g.rejected(), 4);
    }

    #[test]
    fn holds_then_stops_once_then_restarts() {
        let mut g = GloveGuard::new(0.0, 255.0, 0.5);
        assert_eq!(g.tick(10.0), TickAction::None, "no stop before any reading");
        g.accept(1.0, &ok(), &[]).unwrap();
        // invalid data within the timeout: still active (last command held)
        assert!(g.accept(1.2, &[f64::NAN; SENSORS], &[]).is_err());
        assert_eq!(g.tick(1.4), TickAction::None);
        assert_eq!(g.state(), GuardState::Active);
        // timeout counts from the last VALID reading
        assert_eq!(g.tick(1.51), TickAction::Stop);
        assert_eq!(g.state(), GuardState::Stopped);
        assert_eq!(g.tick(2.0), TickAction::None, "stop sent once");
        g.accept(3.0, &ok(), &[]).unwrap();
        assert_eq!(g.state(), GuardState::Active);
        assert_eq!(g.tick(3.4), TickAction::None);
        assert_eq!(g.tick(3.6), TickAction::Stop);
    }
}
