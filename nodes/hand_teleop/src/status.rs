//! The status line `hand_mapping` logs every second: reading rate, rejected readings, worst
//! fingertip error, mode, failed stop publications.

/// Counters between two status lines, and totals.
#[derive(Clone, Debug, Default)]
pub struct Status {
    readings: u64,
    rejected: u64,
    worst_error: f64,
    since: Option<f64>,
    /// Rejected readings since the start.
    pub rejected_total: u64,
    /// Stop trajectories that could not be published, since the start.
    pub failed_stops: u64,
}

impl Status {
    /// A mapped reading with its worst fingertip error (m).
    pub fn mapped(&mut self, worst_error: f64) {
        self.readings += 1;
        if worst_error.is_finite() {
            self.worst_error = self.worst_error.max(worst_error);
        }
    }

    /// A rejected reading.
    pub fn rejected(&mut self) {
        self.rejected += 1;
        self.rejected_total += 1;
    }

    /// A stop trajectory that could not be published.
    pub fn failed_stop(&mut self) {
        self.failed_stops += 1;
    }

    /// The status line when at least `period` s passed since the last one (the first call
    /// starts the clock); the window's counters restart.
    pub fn line(&mut self, now: f64, period: f64, mode: &str) -> Option<String> {
        let since = *self.since.get_or_insert(now);
        let dt = now - since;
        if dt < period {
            return None;
        }
        let s = format!(
            "status: {:.1} readings/s, {} rejected ({} total), worst fingertip error {:.1} mm, mode {mode}, {} failed stop publications",
            self.readings as f64 / dt,
            self.rejected,
            self.rejected_total,
            self.worst_error * 1e3,
            self.failed_stops
        );
        self.readings = 0;
        self.rejected = 0;
        self.worst_error = 0.0;
        self.since = Some(now);
        Some(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_every_period_with_the_windows_counts() {
        let mut s = Status::default();
        assert!(s.line(10.0, 1.0, "fingertip").is_none());
        for _ in 0..50 {
            s.mapped(0.002);
        }
        s.rejected();
        s.failed_stop();
        assert!(s.line(10.5, 1.0, "fingertip").is_none());
        let l = s.line(11.0, 1.0, "fingertip").unwrap();
        assert!(
            l.contains("50.0 readings/s") && l.contains("1 rejected"),
            "{l}"
        );
        assert!(l.contains("2.0 mm") && l.contains("1 failed stop"), "{l}");
        let l = s.line(12.0, 1.0, "joint_space").unwrap();
        assert!(
            l.contains("0.0 readings/s") && l.contains("(1 total)"),
            "{l}"
        );
    }
}
