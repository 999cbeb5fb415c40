//! The age of a message: from its header stamp when the publisher's clock is usable, else from
//! the time it was received.
//!
//! Watchdogs that measure age from when a node *reads* a message are fooled by a queue: after a
//! stall, the messages queued during it are read one after the other and each looks fresh. The
//! stamp says when the message was made, so a stalled-then-flushed queue is seen for what it is.
//!
//! Rules ([`StampClock::message_time`]), all times in seconds on the node's clock (wall time since
//! the epoch, or `/clock` time with `use_sim_time`):
//! * no stamp (zero, or a headerless message without a source timestamp): the receive time;
//! * a stamp later than the receive time by more than the tolerance: the publisher's clock is
//!   ahead of ours and cannot be used; from then on this stream is timed by receive times
//!   (logged once by the node through [`StampClock::take_notice`]);
//! * otherwise the stamp. A stamp far behind the receive time makes the message stale, as it
//!   should: a publisher whose clock lags ours by more than the timeout is refused (fail-safe;
//!   keep clocks synchronised, e.g. NTP/PTP, within a fraction of the timeouts).
//!
//! ```
//! use steady_hand::stamp::{StampClock, TimeSource};
//!
//! let mut clock = StampClock::new(0.005);
//! // stamped 2 ms before it arrived: the stamp is the message's time
//! assert_eq!(clock.message_time(Some(10.000), 10.002), (10.000, TimeSource::Stamp));
//! // queued during a 0.3 s stall: stamped long before it was read
//! assert_eq!(clock.message_time(Some(10.000), 10.300).0, 10.000);
//! // unset stamp: the receive time
//! assert_eq!(clock.message_time(None, 10.4), (10.4, TimeSource::Receive));
//! // a stamp from the future: this publisher's clock is ahead; receive times from now on
//! assert_eq!(clock.message_time(Some(11.0), 10.5), (10.5, TimeSource::Receive));
//! assert!(clock.take_notice().is_some());
//! assert_eq!(clock.message_time(Some(10.55), 10.6), (10.6, TimeSource::Receive));
//! ```

/// Where a message's time came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeSource {
    /// Its header stamp (or DDS source timestamp).
    Stamp,
    /// When it was received.
    Receive,
}

/// Decides, per input stream, whether stamps can be trusted (see the module docs).
#[derive(Debug, Clone)]
pub struct StampClock {
    tolerance: f64,
    unusable: bool,
    notice: Option<String>,
}

impl StampClock {
    /// A stream whose stamps may lead the receive time by at most `tolerance` seconds.
    pub fn new(tolerance: f64) -> Self {
        Self {
            tolerance,
            unusable: false,
            notice: None,
        }
    }

    /// Whether the stream is timed by receive times because its stamps led them.
    pub fn stamps_unusable(&self) -> bool {
        self.unusable
    }

    /// The time of a message stamped `stamp` (`None` or `Some(0.0)`: unset) and received at
    /// `received`, and where it came from.
    pub fn message_time(&mut self, stamp: Option<f64>, received: f64) -> (f64, TimeSource) {
        let stamp = match stamp {
            Some(s) if s != 0.0 && s.is_finite() && !self.unusable => s,
            _ => return (received, TimeSource::Receive),
        };
        if stamp > received + self.tolerance {
            self.unusable = true;
            self.notice = Some(format!(
                "stamps lead the receive time by {:.1} ms (more than {:.1} ms): the \
                 publisher's clock is ahead of ours; timing this input by receive times",
                (stamp - received) * 1e3,
                self.tolerance * 1e3
            ));
            return (received, TimeSource::Receive);
        }
        (stamp, TimeSource::Stamp)
    }

    /// A message to log once, when the stream switched to receive times.
    pub fn take_notice(&mut self) -> Option<String> {
        self.notice.take()
    }
}

/// Seconds of a `builtin_interfaces/Time`-like pair (`sec`, `nanosec`); `None` for zero (unset).
pub fn stamp_seconds(sec: i32, nanosec: u32) -> Option<f64> {
    (sec != 0 || nanosec != 0).then(|| f64::from(sec) + f64::from(nanosec) * 1e-9)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flushed_queue_keeps_its_stamps() {
        let mut c = StampClock::new(0.005);
        // ten commands made 2 ms apart during a stall, all read at 1.5 s
        for k in 0..10 {
            let made = 1.0 + 0.002 * k as f64;
            let (t, src) = c.message_time(Some(made), 1.5);
            assert_eq!((t, src), (made, TimeSource::Stamp));
        }
        assert!(!c.stamps_unusable());
        assert_eq!(stamp_seconds(0, 0), None);
        assert_eq!(stamp_seconds(2, 500_000_000), Some(2.5));
    }
}
