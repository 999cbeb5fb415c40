//! Replay planning: which recorded messages to send, under which topic name, and when.
//!
//! [`Plan::new`] is pure: it selects and renames topics and turns log times into send
//! offsets from the start of playback. [`play`] sends a plan through any [`Publisher`]
//! following a [`Clock`]. The DDS player is [`crate::live::replay`].
//!
//! ```
//! use std::time::Duration;
//! use rpq_bag::replay::{Plan, PlanOptions, TopicSelection};
//! use rpq_bag::BagMessage;
//!
//! let msg = |topic: &str, t: u64| BagMessage {
//!     topic: topic.into(),
//!     type_name: "std_msgs/msg/String".into(),
//!     log_time: t,
//!     publish_time: t,
//!     sequence: 0,
//!     data: vec![0, 1, 0, 0, 1, 0, 0, 0, 0],
//! };
//! let messages = [msg("/a", 1_000_000_000), msg("/b", 1_500_000_000), msg("/a", 3_000_000_000)];
//! let options = PlanOptions {
//!     rate: 2.0, // twice as fast
//!     selection: TopicSelection::only(["/a"]).remap("/a", "/cmd").unwrap(),
//! };
//! let plan = Plan::new(&messages, &options).unwrap();
//! let offsets: Vec<_> = plan.steps().iter().map(|s| s.offset).collect();
//! assert_eq!(offsets, [Duration::ZERO, Duration::from_secs(1)]);
//! assert_eq!(plan.steps()[1].topic, "/cmd");
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Display;
use std::time::{Duration, Instant};

use crate::reader::BagMessage;
use crate::{validate_topic_name, BagError, Result};

/// Which topics to replay and under which names.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TopicSelection {
    include: BTreeSet<String>,
    exclude: BTreeSet<String>,
    remap: BTreeMap<String, String>,
}

impl TopicSelection {
    /// Every topic, names unchanged.
    pub fn all() -> Self {
        Self::default()
    }

    /// Only the listed (recorded) topics.
    pub fn only<I, S>(topics: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self {
            include: topics.into_iter().map(Into::into).collect(),
            ..Self::default()
        }
    }

    /// Also leaves out `topic` (a recorded name).
    pub fn exclude(mut self, topic: &str) -> Self {
        self.exclude.insert(topic.to_string());
        self
    }

    /// Publishes recorded topic `from` as `to`. Both must be fully qualified names, and
    /// `from` may be remapped only once.
    pub fn remap(mut self, from: &str, to: &str) -> Result<Self> {
        validate_topic_name(from)?;
        validate_topic_name(to)?;
        if let Some(prev) = self.remap.get(from) {
            if prev != to {
                return Err(BagError::InvalidSelection {
                    detail: format!("`{from}` remapped to both `{prev}` and `{to}`"),
                });
            }
        }
        self.remap.insert(from.to_string(), to.to_string());
        Ok(self)
    }

    /// The name a recorded topic is published under, or `None` if it is not selected.
    pub fn target<'a>(&'a self, recorded: &'a str) -> Option<&'a str> {
        let included = self.include.is_empty() || self.include.contains(recorded);
        if !included || self.exclude.contains(recorded) {
            return None;
        }
        Some(self.remap.get(recorded).map_or(recorded, String::as_str))
    }
}

/// How to turn a bag into a plan.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanOptions {
    /// Playback speed: 1.0 keeps the recorded timing, 2.0 plays twice as fast, 0 sends
    /// everything at once (as fast as possible).
    pub rate: f64,
    /// Topic selection and renaming.
    pub selection: TopicSelection,
}

impl Default for PlanOptions {
    fn default() -> Self {
        Self {
            rate: 1.0,
            selection: TopicSelection::all(),
        }
    }
}

/// One message to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedMessage {
    /// When to send it, from the start of playback.
    pub offset: Duration,
    /// Topic to publish on (after remapping).
    pub topic: String,
    /// Recorded topic.
    pub recorded_topic: String,
    /// Type name.
    pub type_name: String,
    /// Recorded log time (ns).
    pub log_time: u64,
    /// CDR payload with encapsulation header.
    pub data: Vec<u8>,
}

/// A timed publishing plan, ordered by offset.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    steps: Vec<PlannedMessage>,
    publishers: BTreeMap<String, String>,
}

impl Plan {
    /// Plans the replay of `messages` (in any order; the plan follows log time, ties in
    /// input order). Offsets count from the first selected message.
    pub fn new(messages: &[BagMessage], options: &PlanOptions) -> Result<Self> {
        let rate = options.rate;
        if !rate.is_finite() || rate < 0.0 {
            return Err(BagError::InvalidRate { rate });
        }
        let mut selected: Vec<(&BagMessage, &str)> = messages
            .iter()
            .filter_map(|m| options.selection.target(&m.topic).map(|t| (m, t)))
            .collect();
        selected.sort_by_key(|(m, _)| m.log_time);
        let Some(first) = selected.first().map(|(m, _)| m.log_time) else {
            return Ok(Self::default());
        };
        let mut publishers: BTreeMap<String, String> = BTreeMap::new();
        let mut steps = Vec::with_capacity(selected.len());
        for (m, target) in selected {
            match publishers.get(target) {
                Some(t) if t != &m.type_name => {
                    return Err(BagError::InvalidSelection {
                        detail: format!("`{target}` would carry both `{t}` and `{}`", m.type_name),
                    })
                }
                Some(_) => {}
                None => {
                    publishers.insert(target.to_string(), m.type_name.clone());
                }
            }
            let since = m.log_time - first;
            let offset = if rate == 0.0 {
                Duration::ZERO
            } else if rate == 1.0 {
                Duration::from_nanos(since)
            } else {
                let scaled = (since as f64 / rate).round();
                if scaled >= u64::MAX as f64 {
                    return Err(BagError::InvalidRate { rate });
                }
                Duration::from_nanos(scaled as u64)
            };
            steps.push(PlannedMessage {
                offset,
                topic: target.to_string(),
                recorded_topic: m.topic.clone(),
                type_name: m.type_name.clone(),
                log_time: m.log_time,
                data: m.data.clone(),
            });
        }
        Ok(Self { steps, publishers })
    }

    /// The messages to send, in order.
    pub fn steps(&self) -> &[PlannedMessage] {
        &self.steps
    }

    /// Target topic → type: the publishers a player has to create before starting.
    pub fn publishers(&self) -> &BTreeMap<String, String> {
        &self.publishers
    }

    /// Offset of the last message.
    pub fn duration(&self) -> Duration {
        self.steps.last().map_or(Duration::ZERO, |s| s.offset)
    }

    /// Whether there is nothing to send.
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }
}

/// Sends raw CDR messages (the DDS implementation arrives with the transport).
pub trait Publisher {
    /// Why a publish failed.
    type Error: Display;

    /// Publishes one payload (with encapsulation header) on `topic` as type `type_name`.
    fn publish_raw(&mut self, topic: &str, type_name: &str, cdr: &[u8]) -> Result<(), Self::Error>;
}

/// Time source of [`play`].
pub trait Clock {
    /// Time since playback started.
    fn elapsed(&self) -> Duration;
    /// Waits for `duration`.
    fn sleep(&mut self, duration: Duration);
}

/// Wall-clock [`Clock`] starting at construction.
#[derive(Debug, Clone, Copy)]
pub struct SystemClock {
    start: Instant,
}

impl SystemClock {
    /// Starts the clock now.
    pub fn start() -> Self {
        Self {
            start: Instant::now(),
        }
    }
}

impl Clock for SystemClock {
    fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }

    fn sleep(&mut self, duration: Duration) {
        std::thread::sleep(duration);
    }
}

/// What [`play`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PlayReport {
    /// Messages sent.
    pub sent: usize,
    /// Largest delay of a send behind its planned offset.
    pub max_lateness: Duration,
}

/// Sends every step of `plan` at its offset on `clock` (never early; late sends go out at
/// once). Stops at the first publish error.
pub fn play<P: Publisher, C: Clock>(
    plan: &Plan,
    publisher: &mut P,
    clock: &mut C,
) -> Result<PlayReport> {
    let mut report = PlayReport::default();
    for step in &plan.steps {
        let now = clock.elapsed();
        if step.offset > now {
            clock.sleep(step.offset - now);
        }
        let lateness = clock.elapsed().saturating_sub(step.offset);
        report.max_lateness = report.max_lateness.max(lateness);
        publisher
            .publish_raw(&step.topic, &step.type_name, &step.data)
            .map_err(|e| BagError::Publish {
                topic: step.topic.clone(),
                reason: e.to_string(),
            })?;
        report.sent += 1;
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(topic: &str, type_name: &str, t: u64, tag: u8) -> BagMessage {
        BagMessage {
            topic: topic.into(),
            type_name: type_name.into(),
            log_time: t,
            publish_time: t,
            sequence: 0,
            data: vec![0, 1, 0, 0, tag],
        }
    }

    fn sample() -> Vec<BagMessage> {
        // Deliberately out of log-time order.
        vec![
            msg("/b", "pkg/msg/B", 1_700_000_000_250_000_000, 2),
            msg("/a", "pkg/msg/A", 1_700_000_000_000_000_000, 1),
            msg("/a", "pkg/msg/A", 1_700_000_001_000_000_000, 3),
            msg("/c", "pkg/msg/A", 1_700_000_000_500_000_000, 4),
        ]
    }

    #[test]
    fn original_timing_matches_log_time_differences() {
        let messages = sample();
        let plan = Plan::new(&messages, &PlanOptions::default()).unwrap();
        let mut sorted = messages.clone();
        sorted.sort_by_key(|m| m.log_time);
        assert_eq!(plan.steps().len(), sorted.len());
        for (step, m) in plan.steps().iter().zip(&sorted) {
            assert_eq!(
                step.offset.as_nanos(),
                u128::from(m.log_time - sorted[0].log_time)
            );
            assert_eq!(step.data, m.data);
            assert_eq!(step.topic, m.topic);
        }
        assert_eq!(plan.duration(), Duration::from_secs(1));
    }

    #[test]
    fn rate_scales_and_zero_flattens() {
        let messages = sample();
        for rate in [0.5, 2.0, 3.0] {
            let plan = Plan::new(
                &messages,
                &PlanOptions {
                    rate,
                    ..PlanOptions::default()
                },
            )
            .unwrap();
            let expected = (1e9 / rate).round() as u128;
            assert_eq!(plan.duration().as_nanos(), expected, "rate {rate}");
        }
        let plan = Plan::new(
            &messages,
            &PlanOptions {
                rate: 0.0,
                ..PlanOptions::default()
            },
        )
        .unwrap();
        assert!(plan.steps().iter().all(|s| s.offset.is_zero()));
        // Still in log-time order.
        let tags: Vec<u8> = plan.steps().iter().map(|s| s.data[4]).collect();
        assert_eq!(tags, [1, 2, 4, 3]);
        for rate in [-1.0, f64::NAN, f64::INFINITY] {
            let options = PlanOptions {
                rate,
                ..PlanOptions::default()
            };
            assert!(matches!(
                Plan::new(&messages, &options),
                Err(BagError::InvalidRate { .. })
            ));
        }
    }

    #[test]
    fn selection_remap_and_offsets_from_first_selected() {
        let messages = sample();
        let selection = TopicSelection::only(["/b", "/a"])
            .exclude("/a")
            .remap("/b", "/ns/b")
            .unwrap();
        let plan = Plan::new(
            &messages,
            &PlanOptions {
                rate: 1.0,
                selection,
            },
        )
        .unwrap();
        assert_eq!(plan.steps().len(), 1);
        assert_eq!(plan.steps()[0].topic, "/ns/b");
        assert_eq!(plan.steps()[0].recorded_topic, "/b");
        assert_eq!(plan.steps()[0].offset, Duration::ZERO);
        assert_eq!(plan.publishers().get("/ns/b").unwrap(), "pkg/msg/B");
        assert!(TopicSelection::all().remap("/a", "bad name").is_err());
        assert!(TopicSelection::all()
            .remap("/a", "/x")
            .unwrap()
            .remap("/a", "/y")
            .is_err());
    }

    #[test]
    fn remapping_two_types_onto_one_topic_is_refused() {
        let selection = TopicSelection::all().remap("/b", "/a").unwrap();
        let err = Plan::new(
            &sample(),
            &PlanOptions {
                rate: 1.0,
                selection,
            },
        )
        .unwrap_err();
        assert!(matches!(err, BagError::InvalidSelection { .. }), "{err}");
        // Same type onto one topic is fine.
        let selection = TopicSelection::all().remap("/c", "/a").unwrap();
        let plan = Plan::new(
            &sample(),
            &PlanOptions {
                rate: 1.0,
                selection,
            },
        )
        .unwrap();
        assert_eq!(plan.publishers().len(), 2);
    }

    /// A clock that advances only when slept on.
    struct FakeClock {
        now: Duration,
    }

    impl Clock for FakeClock {
        fn elapsed(&self) -> Duration {
            self.now
        }
        fn sleep(&mut self, d: Duration) {
            self.now += d;
        }
    }

    struct Recorder {
        sent: Vec<(String, u8)>,
        fail_on: Option<u8>,
    }

    impl Publisher for Recorder {
        type Error = String;
        fn publish_raw(&mut self, topic: &str, _t: &str, cdr: &[u8]) -> Result<(), String> {
            if Some(cdr[4]) == self.fail_on {
                return Err("refused".into());
            }
            self.sent.push((topic.to_string(), cdr[4]));
            Ok(())
        }
    }

    #[test]
    fn play_sends_in_order_at_offsets() {
        let plan = Plan::new(
            &sample(),
            &PlanOptions {
                rate: 2.0,
                ..PlanOptions::default()
            },
        )
        .unwrap();
        // Record send times by wrapping the clock in the publisher's view.
        struct Timed<'a> {
            clock: &'a std::cell::Cell<Duration>,
            sent: Vec<(Duration, u8)>,
        }
        impl Publisher for Timed<'_> {
            type Error = String;
            fn publish_raw(&mut self, _: &str, _: &str, cdr: &[u8]) -> Result<(), String> {
                self.sent.push((self.clock.get(), cdr[4]));
                Ok(())
            }
        }
        struct CellClock<'a>(&'a std::cell::Cell<Duration>);
        impl Clock for CellClock<'_> {
            fn elapsed(&self) -> Duration {
                self.0.get()
            }
            fn sleep(&mut self, d: Duration) {
                self.0.set(self.0.get() + d);
            }
        }
        let time = std::cell::Cell::new(Duration::ZERO);
        let mut publisher = Timed {
            clock: &time,
            sent: Vec::new(),
        };
        let report = play(&plan, &mut publisher, &mut CellClock(&time)).unwrap();
        assert_eq!(report.sent, 4);
        assert_eq!(report.max_lateness, Duration::ZERO);
        let expected: Vec<(Duration, u8)> =
            plan.steps().iter().map(|s| (s.offset, s.data[4])).collect();
        assert_eq!(publisher.sent, expected);
        assert_eq!(publisher.sent[3].0, Duration::from_millis(500));
    }

    #[test]
    fn play_reports_lateness_and_publish_errors() {
        let plan = Plan::new(&sample(), &PlanOptions::default()).unwrap();
        // Start 2 s late: everything goes out immediately, 2 s behind the first offset.
        let mut clock = FakeClock {
            now: Duration::from_secs(2),
        };
        let mut rec = Recorder {
            sent: Vec::new(),
            fail_on: None,
        };
        let report = play(&plan, &mut rec, &mut clock).unwrap();
        assert_eq!(report.sent, 4);
        assert_eq!(report.max_lateness, Duration::from_secs(2));
        assert_eq!(clock.now, Duration::from_secs(2));

        let mut clock = FakeClock {
            now: Duration::ZERO,
        };
        let mut rec = Recorder {
            sent: Vec::new(),
            fail_on: Some(4),
        };
        let err = play(&plan, &mut rec, &mut clock).unwrap_err();
        assert!(matches!(err, BagError::Publish { ref topic, .. } if topic == "/c"));
        assert_eq!(rec.sent.len(), 2);
    }
}
