//! Live replay and recording over DDS: the rosbag2 replay harness.
//!
//! [`replay`] plays the input topics of a bag into running nodes with the recorded timing
//! (scaled by a rate), records the nodes' outputs meanwhile and writes them to a new bag;
//! [`record`] only records. Both run on a [`RosNode`] (so `--ros-args` remaps and the ROS
//! environment apply) inside a tokio runtime, and open DDS sockets: run them only inside a
//! private network namespace in tests.
//!
//! How a replay goes:
//! 1. The input bag is read and planned ([`crate::replay::Plan`]); every message to play must be
//!    of a [registered type](crate::types) and decode as it, or nothing is sent.
//! 2. For each recorded topic the harness waits until another participant publishes it, takes
//!    the type from that publisher and adapts the QoS as `ros2 bag record` does: reliable unless
//!    a publisher is best effort, transient local (latched) when every publisher is.
//! 3. It creates one publisher per played topic, with the QoS the bag offers (reliability,
//!    durability; a history deep enough for the whole topic), and waits until every played
//!    topic has a subscriber and every recorded topic a matched publisher, then `start_delay`.
//! 4. It publishes each message at its offset (`log time - first log time) / rate`), all at
//!    once for rate 0, records during `settle` after the last one, and writes the output bag
//!    (log time = receive time) with `metadata.yaml`. Its `custom_data` holds the replay's
//!    clock: `rpq_bag.replay.start_time_ns` (wall time of offset 0) and
//!    `rpq_bag.replay.first_log_time_ns` (input log time at offset 0), so an input time `t`
//!    was due at `start + (t - first) / rate`.
//!
//! With [`ReplayOptions::clock`] set (`--clock HZ`, like `ros2 bag play --clock`) the harness
//! also publishes the bag's time on `/clock` (`rosgraph_msgs/msg/Clock`, best effort) for nodes
//! running with `use_sim_time`: the first played log time while it matches peers and waits,
//! then `first + elapsed × rate` at `HZ` (and, just before each message, that message's log
//! time exactly) through the settle time. The published time never goes backwards; with rate 0
//! it steps from message to message.
//!
//! SIGINT/SIGTERM (a [`Shutdown`]) stops early; what was recorded so far is still written.
//!
//! Recorded messages go to the output bag as they arrive (log time = receive time, in arrival
//! order), through a [`BagWriter`] that writes a chunk to disk every
//! [`WriterOptions::chunk_size`] bytes or [`WriterOptions::chunk_interval`] (768 KiB, 1 s by
//! default), also when no message comes: memory stays bounded however long the recording, and
//! a recorder killed outright leaves every chunk completed before the kill on disk, to be
//! recovered with [`crate::reindex`] (`rpq_bag reindex`). The output directory is created
//! once the recorded topics are discovered; a run that fails before its peers matched removes
//! it again (no bag), one that fails later finishes it with what was recorded.
//!
//! ```no_run
//! use std::time::Duration;
//! use rpq_bag::live::{replay, ReplayOptions};
//! use rpq_ros::{node::RosNode, shutdown::Shutdown};
//!
//! #[tokio::main(flavor = "current_thread")]
//! async fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let (mut node, _rest) = RosNode::from_process("rpq_bag", &[])?;
//!     let mut options = ReplayOptions::new("tests/bags/robot_sim_commands", "/tmp/out");
//!     options.record = vec!["/joint_states".into()];
//!     options.settle = Duration::from_secs(1);
//!     let report = replay(&mut node, &options, &Shutdown::new()).await?;
//!     println!("sent {}, recorded {}", report.sent, report.metadata.message_count);
//!     Ok(())
//! }
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use futures::stream::{self, StreamExt};
use ros2_client::qos::{Durability as DdsDurability, History, Reliability as DdsReliability};
use ros2_client::Publisher;
use rpq_ros::clock::{clock_qos, time_from_nanos, CLOCK_TOPIC};
use rpq_ros::msg::rosgraph_msgs::Clock as ClockMsg;
use rpq_ros::node::RosNode;
use rpq_ros::shutdown::Shutdown;
use rpq_ros::{qos as ros_qos, ros_info, ros_warn};
use rustdds::policy::{Durability as SedpDurability, Reliability as SedpReliability};
use rustdds::RTPSEntity;
use tokio::time::Instant;

use crate::metadata::BagMetadata;
use crate::qos::{Durability, QosProfile, Reliability};
use crate::reader::{BagReader, TopicInfo};
use crate::replay::{Plan, PlanOptions, TopicSelection};
use crate::types::{self, MessageType, RawPublisher, RawSubscription, Received};
use crate::writer::{BagWriter, TopicSpec, WriterOptions};
use crate::{validate_topic_name, BagError, Result};

/// `custom_data` key: wall-clock time (ns since the epoch) of replay offset 0.
pub const KEY_START_TIME: &str = "rpq_bag.replay.start_time_ns";
/// `custom_data` key: log time (ns) of the first played message of the input bag.
pub const KEY_FIRST_LOG_TIME: &str = "rpq_bag.replay.first_log_time_ns";
/// `custom_data` key: the replay rate.
pub const KEY_RATE: &str = "rpq_bag.replay.rate";
/// `custom_data` key: the input bag path.
pub const KEY_INPUT: &str = "rpq_bag.replay.input";
/// `custom_data` key: number of messages played.
pub const KEY_SENT: &str = "rpq_bag.replay.sent";
/// `custom_data` key: largest delay (ns) of a send behind its planned time.
pub const KEY_MAX_LATENESS: &str = "rpq_bag.replay.max_lateness_ns";
/// `custom_data` key of [`record`]: wall-clock time (ns since the epoch) when every topic had
/// matched and the recording's duration started.
pub const KEY_RECORD_START: &str = "rpq_bag.record.start_time_ns";

/// Largest history depth given to a replay publisher.
const MAX_PLAY_DEPTH: usize = 100_000;
/// History depth of recording subscriptions.
const RECORD_DEPTH: usize = 1000;
/// Polling period while waiting for peers.
const POLL: Duration = Duration::from_millis(20);

/// What [`replay`] does.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayOptions {
    /// Bag to play (directory or `.mcap`).
    pub input: PathBuf,
    /// Bag directory to write (must not exist).
    pub output: PathBuf,
    /// Recorded topics of the input to play; empty: all of them.
    pub play: Vec<String>,
    /// `(from, to)`: publish recorded topic `from` as `to`.
    pub remap: Vec<(String, String)>,
    /// Topics to record (resolved against the node like any topic name).
    pub record: Vec<String>,
    /// Playback speed: 1 keeps the recorded timing, 2 is twice as fast, 0 sends at once.
    pub rate: f64,
    /// Wait after every peer matched, before the first message.
    pub start_delay: Duration,
    /// Keep recording this long after the last message.
    pub settle: Duration,
    /// Longest wait for subscribers of the played topics and publishers of the recorded ones.
    pub wait_timeout: Duration,
    /// Publish the bag's time on `/clock` at this rate (Hz); `None`: no `/clock`.
    pub clock: Option<f64>,
}

impl ReplayOptions {
    /// Plays every topic of `input` with the recorded timing, records nothing; start delay
    /// 0.5 s, settle 1 s, wait timeout 20 s.
    pub fn new(input: impl Into<PathBuf>, output: impl Into<PathBuf>) -> Self {
        Self {
            input: input.into(),
            output: output.into(),
            play: Vec::new(),
            remap: Vec::new(),
            record: Vec::new(),
            rate: 1.0,
            start_delay: Duration::from_millis(500),
            settle: Duration::from_secs(1),
            wait_timeout: Duration::from_secs(20),
            clock: None,
        }
    }
}

/// What [`record`] does.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordOptions {
    /// Bag directory to write (must not exist).
    pub output: PathBuf,
    /// Topics to record.
    pub topics: Vec<String>,
    /// Stop after this long (from when every topic matched); `None`: at SIGINT/SIGTERM.
    pub duration: Option<Duration>,
    /// Longest wait for a publisher of each topic.
    pub wait_timeout: Duration,
}

/// What a replay or recording did.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveReport {
    /// Messages published.
    pub sent: usize,
    /// Largest delay of a send behind its planned time.
    pub max_lateness: Duration,
    /// Wall-clock time (ns since the epoch) of offset 0 (replay) or of the recording start.
    pub start_time_ns: u64,
    /// Whether a shutdown request cut the run short.
    pub interrupted: bool,
    /// Recorded-topic samples that could not be taken or re-encoded (logged, not written).
    pub dropped: usize,
    /// Metadata of the bag written.
    pub metadata: BagMetadata,
}

/// A played topic: its publisher and the QoS it uses.
struct Player {
    topic: String,
    publisher: Box<dyn RawPublisher>,
}

/// A recorded topic.
struct Recorded {
    topic: String,
    ty: &'static dyn MessageType,
    offered: QosProfile,
    subscription: Box<dyn RawSubscription>,
}

/// How the recording subscribes, from the publishers discovered on a topic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Adapted {
    best_effort: bool,
    latched: bool,
}

impl Adapted {
    fn dds(self) -> ros2_client::QosProfile {
        let mut qos = ros_qos::reliable(RECORD_DEPTH);
        if self.best_effort {
            qos = qos.reliability(DdsReliability::BestEffort);
        }
        if self.latched {
            qos = qos.durability(DdsDurability::TransientLocal);
        }
        qos
    }

    /// The offered QoS written to the output bag.
    fn offered(self) -> QosProfile {
        let mut p = if self.latched {
            QosProfile::latched()
        } else {
            QosProfile::rclcpp_default()
        };
        if self.best_effort {
            p.reliability = Reliability::BestEffort;
        }
        p
    }
}

/// The QoS to play a topic with, from the profiles the bag offers for it and the number of
/// messages to send: same reliability and durability, a history that holds them all.
fn play_qos(offered: &[QosProfile], count: usize) -> ros2_client::QosProfile {
    let latched = offered
        .iter()
        .any(|p| p.durability == Durability::TransientLocal);
    let best_effort = !offered.is_empty()
        && offered
            .iter()
            .all(|p| p.reliability == Reliability::BestEffort);
    let recorded_depth = offered
        .iter()
        .map(|p| usize::try_from(p.depth).unwrap_or(MAX_PLAY_DEPTH))
        .max()
        .unwrap_or(0);
    let depth = if latched {
        recorded_depth.max(1)
    } else {
        recorded_depth.max(count).clamp(10, MAX_PLAY_DEPTH)
    };
    let mut qos = ros_qos::reliable(depth);
    if best_effort {
        qos = qos.reliability(DdsReliability::BestEffort);
    }
    if latched {
        qos = qos.durability(DdsDurability::TransientLocal);
    }
    debug_assert!(matches!(qos.history, History::KeepLast { .. }));
    qos
}

fn check_new_output(path: &Path) -> Result<()> {
    if path.exists() {
        return Err(BagError::AlreadyExists {
            path: path.to_path_buf(),
        });
    }
    Ok(())
}

/// The played part of a bag: its plan and the QoS of each target topic.
struct Prepared {
    plan: Plan,
    qos: BTreeMap<String, ros2_client::QosProfile>,
    first_log_time: u64,
}

/// Reads and plans the input; checks that every message to play has a registered type and
/// decodes as it. Opens no sockets.
fn prepare(options: &ReplayOptions) -> Result<Prepared> {
    let reader = BagReader::open(&options.input)?;
    for t in &options.play {
        if reader.topic(t).is_none() {
            return Err(BagError::InvalidSelection {
                detail: format!(
                    "--play {t}: the bag has no such topic (it has {})",
                    reader
                        .topics()
                        .iter()
                        .map(|t| t.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            });
        }
    }
    let mut selection = if options.play.is_empty() {
        TopicSelection::all()
    } else {
        TopicSelection::only(options.play.iter().cloned())
    };
    for (from, to) in &options.remap {
        selection = selection.remap(from, to)?;
    }
    let plan = Plan::new(
        reader.messages(),
        &PlanOptions {
            rate: options.rate,
            selection: selection.clone(),
        },
    )?;
    if plan.is_empty() {
        return Err(BagError::InvalidSelection {
            detail: format!("nothing to play in {}", options.input.display()),
        });
    }
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for step in plan.steps() {
        let ty = types::lookup(&step.type_name)?;
        ty.check_cdr(&step.data)
            .map_err(|reason| BagError::Undecodable {
                topic: step.recorded_topic.clone(),
                type_name: step.type_name.clone(),
                log_time: step.log_time,
                reason,
            })?;
        *counts.entry(step.topic.as_str()).or_default() += 1;
    }
    let mut qos = BTreeMap::new();
    for info in reader.topics() {
        let TopicInfo {
            name,
            offered_qos_profiles,
            ..
        } = info;
        if let Some(target) = selection.target(name) {
            if let Some(&count) = counts.get(target) {
                qos.insert(target.to_string(), play_qos(offered_qos_profiles, count));
            }
        }
    }
    let first_log_time = plan.steps()[0].log_time;
    Ok(Prepared {
        plan,
        qos,
        first_log_time,
    })
}

/// The writers other participants offer on ROS topic `topic` (fully qualified): their ROS
/// type names and the recording QoS they call for.
fn discovered_publishers(node: &RosNode, topic: &str) -> Vec<(String, Adapted)> {
    let participant = node.context().domain_participant();
    let own = participant.guid().prefix;
    let dds_topic = format!("rt{topic}");
    participant
        .discovered_writers()
        .into_iter()
        .filter(|w| {
            let data = &w.publication_topic_data;
            data.topic_name == dds_topic && data.key.prefix != own
        })
        .map(|w| {
            let data = w.publication_topic_data;
            let type_name = types::ros_type_name(&data.type_name).unwrap_or(data.type_name);
            let adapted = Adapted {
                best_effort: matches!(data.reliability, Some(SedpReliability::BestEffort) | None),
                latched: matches!(
                    data.durability,
                    Some(
                        SedpDurability::TransientLocal
                            | SedpDurability::Transient
                            | SedpDurability::Persistent
                    )
                ),
            };
            (type_name, adapted)
        })
        .collect()
}

/// Waits until every topic has a publisher in another participant; returns each topic's type
/// and adapted QoS.
async fn discover_recorded(
    node: &RosNode,
    topics: &[String],
    timeout: Duration,
    shutdown: &Shutdown,
) -> Result<Vec<(&'static dyn MessageType, Adapted)>> {
    let t0 = Instant::now();
    loop {
        let found: Vec<Vec<(String, Adapted)>> = topics
            .iter()
            .map(|t| discovered_publishers(node, t))
            .collect();
        if found.iter().all(|f| !f.is_empty()) {
            let mut out = Vec::with_capacity(topics.len());
            for (topic, writers) in topics.iter().zip(found) {
                let type_name = &writers[0].0;
                if let Some((other, _)) = writers.iter().find(|(t, _)| t != type_name) {
                    return Err(BagError::Record {
                        topic: topic.clone(),
                        reason: format!("publishers disagree on its type: {type_name} and {other}"),
                    });
                }
                let ty = types::lookup(type_name)?;
                let adapted = Adapted {
                    best_effort: writers.iter().any(|(_, a)| a.best_effort),
                    latched: writers.iter().all(|(_, a)| a.latched),
                };
                out.push((ty, adapted));
            }
            return Ok(out);
        }
        if t0.elapsed() > timeout || shutdown.requested() {
            let missing: Vec<&str> = topics
                .iter()
                .zip(&found)
                .filter(|(_, f)| f.is_empty())
                .map(|(t, _)| t.as_str())
                .collect();
            let why = if shutdown.requested() {
                "interrupted before a publisher of"
            } else {
                "no publisher of"
            };
            return Err(BagError::Timeout {
                waited_s: t0.elapsed().as_secs_f64(),
                detail: format!(
                    "{why} {} appeared (a recorded topic takes its type from its publisher; \
                     is the node running, on the same ROS_DOMAIN_ID?)",
                    missing.join(", ")
                ),
            });
        }
        tokio::time::sleep(POLL).await;
    }
}

/// Resolves and checks the names of the topics to record.
fn resolve_recorded(node: &RosNode, topics: &[String]) -> Result<Vec<String>> {
    let mut out: Vec<String> = Vec::with_capacity(topics.len());
    for t in topics {
        let fqn = node.resolve_name(t)?;
        validate_topic_name(&fqn)?;
        if out.contains(&fqn) {
            return Err(BagError::InvalidSelection {
                detail: format!("{fqn} is recorded twice"),
            });
        }
        out.push(fqn);
    }
    Ok(out)
}

async fn create_recorders(
    node: &mut RosNode,
    topics: &[String],
    timeout: Duration,
    shutdown: &Shutdown,
) -> Result<Vec<Recorded>> {
    let found = discover_recorded(node, topics, timeout, shutdown).await?;
    let mut recorders = Vec::with_capacity(topics.len());
    for (topic, (ty, adapted)) in topics.iter().zip(found) {
        let subscription = ty.subscription(node, topic, adapted.dds())?;
        ros_info!(
            node.logger(),
            "recording {topic} ({}{}{})",
            ty.type_name(),
            if adapted.best_effort {
                ", best effort"
            } else {
                ""
            },
            if adapted.latched { ", latched" } else { "" }
        );
        recorders.push(Recorded {
            topic: topic.clone(),
            ty,
            offered: adapted.offered(),
            subscription,
        });
    }
    Ok(recorders)
}

/// Where the run is.
enum Phase {
    Matching { since: Instant },
    Delay { until: Instant },
    Playing { start: Instant, next: usize },
    Settling { until: Option<Instant> },
}

/// The common loop: match peers, wait, play `plan` (may be empty), settle; records all along.
struct Run<'a> {
    node: &'a RosNode,
    players: &'a BTreeMap<String, Player>,
    recorders: &'a [Recorded],
    plan: &'a Plan,
    start_delay: Duration,
    /// `None`: until shutdown.
    settle: Option<Duration>,
    wait_timeout: Duration,
    clock: Option<BagClock>,
    /// The output bag, written as messages arrive.
    writer: &'a mut BagWriter,
}

/// Publishes the bag's time on `/clock` during a replay.
struct BagClock {
    publisher: Publisher<ClockMsg>,
    period: Duration,
    first_log_time: u64,
    rate: f64,
    /// The last time published (ns since the epoch): what is published never goes back.
    last: std::cell::Cell<u64>,
}

impl BagClock {
    /// The bag time `elapsed` after playback started (`None`: not started yet).
    fn bag_time(&self, elapsed: Option<Duration>) -> u64 {
        let since = elapsed.map_or(0, |e| (e.as_nanos() as f64 * self.rate).round() as u64);
        self.first_log_time.saturating_add(since)
    }

    /// Publishes `t` (ns), or the last time published if that is later; logs a failure.
    fn publish(&self, node: &RosNode, t: u64) {
        let t = t.max(self.last.get());
        self.last.set(t);
        let clock = time_from_nanos(i64::try_from(t).unwrap_or(i64::MAX));
        if let Err(e) = self.publisher.publish(ClockMsg { clock }) {
            ros_warn!(node.logger(), "cannot publish {CLOCK_TOPIC}: {e}");
        }
    }
}

#[derive(Default)]
struct RunResult {
    /// Whether every peer matched (the run got past the matching phase).
    matched: bool,
    dropped: usize,
    sent: usize,
    max_lateness: Duration,
    start_time_ns: u64,
    interrupted: bool,
}

impl Run<'_> {
    /// Writes a received message to the bag; a payload the bag refuses is dropped (logged).
    fn record(&mut self, i: usize, m: &Received, out: &mut RunResult) -> Result<()> {
        let topic = &self.recorders[i].topic;
        let written = self.writer.write_to_topic(
            topic,
            m.receive_time,
            m.source_time.unwrap_or(m.receive_time),
            &m.data,
        );
        match written {
            Ok(()) => Ok(()),
            Err(BagError::BadPayload { reason, .. }) => {
                out.dropped += 1;
                ros_warn!(self.node.logger(), "dropped a message on {topic}: {reason}");
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    fn unmatched(&self) -> Vec<String> {
        let mut missing = Vec::new();
        for p in self.players.values() {
            if p.publisher.matched_subscriptions(self.node) == 0 {
                missing.push(format!("no subscriber on played topic {}", p.topic));
            }
        }
        for r in self.recorders {
            if r.subscription.matched_publishers(self.node) == 0 {
                missing.push(format!(
                    "no matched publisher on recorded topic {}",
                    r.topic
                ));
            }
        }
        missing
    }

    /// Runs until done, interrupted or failed; `out` tells how far it got either way.
    async fn go(mut self, shutdown: &Shutdown, out: &mut RunResult) -> Result<()> {
        let mut merged = stream::select_all(
            self.recorders
                .iter()
                .enumerate()
                .map(|(i, r)| r.subscription.stream().map(move |m| (i, m))),
        );
        let mut streams_open = !self.recorders.is_empty();
        let steps = self.plan.steps();
        let mut phase = Phase::Matching {
            since: Instant::now(),
        };
        // for /clock: when playback started, and when the clock is due next
        let mut play_start: Option<Instant> = None;
        let mut next_clock = Instant::now();
        loop {
            // The chunk open longest goes to disk on time even when no message comes.
            self.writer.flush_if_due()?;
            let now = Instant::now();
            // Advance the phase as far as time allows; compute the next wake-up.
            let mut wake = loop {
                match phase {
                    Phase::Matching { since } => {
                        let missing = self.unmatched();
                        if missing.is_empty() {
                            ros_info!(self.node.logger(), "all peers matched");
                            out.matched = true;
                            phase = Phase::Delay {
                                until: now + self.start_delay,
                            };
                            continue;
                        }
                        if now.duration_since(since) > self.wait_timeout {
                            return Err(BagError::Timeout {
                                waited_s: now.duration_since(since).as_secs_f64(),
                                detail: missing.join("; "),
                            });
                        }
                        break now + POLL;
                    }
                    Phase::Delay { until } if until <= now => {
                        out.start_time_ns = types::now_ns();
                        if !steps.is_empty() {
                            ros_info!(
                                self.node.logger(),
                                "playing {} messages over {:.3} s",
                                steps.len(),
                                self.plan.duration().as_secs_f64()
                            );
                        }
                        let start = Instant::now();
                        play_start = Some(start);
                        phase = Phase::Playing { start, next: 0 };
                    }
                    Phase::Delay { until } => break until,
                    Phase::Playing { next, .. } if next >= steps.len() => {
                        phase = Phase::Settling {
                            until: self.settle.map(|s| Instant::now() + s),
                        };
                    }
                    Phase::Playing { start, next } => {
                        let step = &steps[next];
                        let due = start + step.offset;
                        let now = Instant::now();
                        if due > now {
                            break due;
                        }
                        out.max_lateness = out.max_lateness.max(now - due);
                        if let Some(clock) = &self.clock {
                            clock.publish(self.node, step.log_time);
                        }
                        let player = &self.players[&step.topic];
                        player.publisher.publish_cdr(&step.data).map_err(|reason| {
                            BagError::Publish {
                                topic: step.topic.clone(),
                                reason,
                            }
                        })?;
                        out.sent += 1;
                        phase = Phase::Playing {
                            start,
                            next: next + 1,
                        };
                    }
                    Phase::Settling { until: Some(until) } if until <= now => {
                        return Ok(());
                    }
                    Phase::Settling { until } => {
                        break until.unwrap_or(now + Duration::from_secs(3600));
                    }
                }
            };
            if let Some(clock) = &self.clock {
                let now = Instant::now();
                if now >= next_clock {
                    let elapsed = play_start.map(|s| now.duration_since(s));
                    clock.publish(self.node, clock.bag_time(elapsed));
                    next_clock = now + clock.period;
                }
                wake = wake.min(next_clock);
            }
            if let Some(due) = self.writer.flush_due() {
                wake = wake.min(Instant::from_std(due));
            }
            tokio::select! {
                biased;
                _ = shutdown.wait() => {
                    out.interrupted = true;
                    return Ok(());
                }
                item = merged.next(), if streams_open => match item {
                    Some((i, Ok(m))) => self.record(i, &m, out)?,
                    Some((i, Err(reason))) => {
                        // One bad sample (a peer's malformed message) does not end the run.
                        out.dropped += 1;
                        ros_warn!(
                            self.node.logger(),
                            "dropped a message on {}: {reason}",
                            self.recorders[i].topic
                        );
                    }
                    None => streams_open = false,
                },
                _ = tokio::time::sleep_until(wake) => {}
            }
        }
    }
}

/// Creates the output bag with a topic per recorder and puts their definitions on disk.
fn open_bag(output: &Path, recorders: &[Recorded]) -> Result<BagWriter> {
    let mut writer = BagWriter::create_with_options(output, WriterOptions::default())?;
    let added = recorders.iter().try_for_each(|r| {
        writer.add_topic(
            TopicSpec::new(&r.topic, r.ty.type_name(), &r.ty.definition())
                .with_qos(vec![r.offered.clone()]),
        )
    });
    if let Err(e) = added.and_then(|()| writer.flush()) {
        drop(writer);
        let _ = std::fs::remove_dir_all(output);
        return Err(e);
    }
    Ok(writer)
}

/// Ends a run that failed: before its peers matched, the bag is removed (a failed run
/// leaves none); later, it is finished with what was recorded. Returns the run's error.
fn abandon(writer: BagWriter, output: &Path, result: &RunResult, err: BagError) -> BagError {
    if result.matched {
        let _ = writer.finish();
    } else {
        drop(writer);
        let _ = std::fs::remove_dir_all(output);
    }
    err
}

/// Checks, without opening sockets, what [`replay`] checks first: the output does not exist,
/// the input opens, the selection and rate are valid, and every message to play has a
/// registered type and decodes as it.
pub fn check_replay(options: &ReplayOptions) -> Result<()> {
    check_new_output(&options.output)?;
    if let Some(hz) = options.clock {
        clock_period(hz)?;
    }
    prepare(options).map(drop)
}

/// The period of `/clock` at `hz`, which must be positive and at most 10 kHz.
fn clock_period(hz: f64) -> Result<Duration> {
    if hz.is_finite() && hz > 0.0 && hz <= 10_000.0 {
        Ok(Duration::from_secs_f64(1.0 / hz))
    } else {
        Err(BagError::InvalidSelection {
            detail: format!("--clock {hz}: the /clock rate must be in (0, 10000] Hz"),
        })
    }
}

/// Replays `options.input` into the running graph and records `options.record`; see the
/// [module docs](self).
pub async fn replay(
    node: &mut RosNode,
    options: &ReplayOptions,
    shutdown: &Shutdown,
) -> Result<LiveReport> {
    check_new_output(&options.output)?;
    let prepared = prepare(options)?;
    let recorded = resolve_recorded(node, &options.record)?;
    let mut players = BTreeMap::new();
    for (topic, type_name) in prepared.plan.publishers() {
        let fqn = node.resolve_name(topic)?;
        if recorded.contains(&fqn) {
            return Err(BagError::InvalidSelection {
                detail: format!("{fqn} is both played and recorded"),
            });
        }
        let qos = prepared.qos[topic].clone();
        let publisher = types::lookup(type_name)?.publisher(node, topic, qos)?;
        players.insert(
            topic.clone(),
            Player {
                topic: fqn,
                publisher,
            },
        );
    }
    let clock = match options.clock {
        Some(hz) => Some(BagClock {
            publisher: node.publisher::<ClockMsg>(CLOCK_TOPIC, clock_qos())?,
            period: clock_period(hz)?,
            first_log_time: prepared.first_log_time,
            rate: options.rate,
            last: std::cell::Cell::new(0),
        }),
        None => None,
    };
    let recorders = create_recorders(node, &recorded, options.wait_timeout, shutdown).await?;
    let mut writer = open_bag(&options.output, &recorders)?;
    let run = Run {
        node,
        players: &players,
        recorders: &recorders,
        plan: &prepared.plan,
        start_delay: options.start_delay,
        settle: Some(options.settle),
        wait_timeout: options.wait_timeout,
        clock,
        writer: &mut writer,
    };
    let mut result = RunResult::default();
    if let Err(e) = run.go(shutdown, &mut result).await {
        return Err(abandon(writer, &options.output, &result, e));
    }
    if result.interrupted {
        ros_warn!(
            node.logger(),
            "interrupted after {} of {} messages; writing what was recorded",
            result.sent,
            prepared.plan.steps().len()
        );
    }
    let mut custom = BTreeMap::new();
    custom.insert(KEY_INPUT.into(), options.input.display().to_string());
    custom.insert(KEY_RATE.into(), options.rate.to_string());
    custom.insert(KEY_START_TIME.into(), result.start_time_ns.to_string());
    custom.insert(
        KEY_FIRST_LOG_TIME.into(),
        prepared.first_log_time.to_string(),
    );
    custom.insert(KEY_SENT.into(), result.sent.to_string());
    custom.insert(
        KEY_MAX_LATENESS.into(),
        result.max_lateness.as_nanos().to_string(),
    );
    writer.custom_data_mut().extend(custom);
    let metadata = writer.finish()?;
    ros_info!(
        node.logger(),
        "sent {} messages (at most {:.1} ms late), recorded {} into {}",
        result.sent,
        result.max_lateness.as_secs_f64() * 1e3,
        metadata.message_count,
        options.output.display()
    );
    Ok(LiveReport {
        sent: result.sent,
        max_lateness: result.max_lateness,
        start_time_ns: result.start_time_ns,
        interrupted: result.interrupted,
        dropped: result.dropped,
        metadata,
    })
}

/// Records `options.topics` into a new bag until the duration passes or shutdown.
pub async fn record(
    node: &mut RosNode,
    options: &RecordOptions,
    shutdown: &Shutdown,
) -> Result<LiveReport> {
    check_new_output(&options.output)?;
    if options.topics.is_empty() {
        return Err(BagError::InvalidSelection {
            detail: "no topic to record".into(),
        });
    }
    let recorded = resolve_recorded(node, &options.topics)?;
    let recorders = create_recorders(node, &recorded, options.wait_timeout, shutdown).await?;
    let mut writer = open_bag(&options.output, &recorders)?;
    let players = BTreeMap::new();
    let plan = Plan::default();
    let run = Run {
        node,
        players: &players,
        recorders: &recorders,
        plan: &plan,
        start_delay: Duration::ZERO,
        settle: options.duration,
        wait_timeout: options.wait_timeout,
        clock: None,
        writer: &mut writer,
    };
    let mut result = RunResult::default();
    if let Err(e) = run.go(shutdown, &mut result).await {
        return Err(abandon(writer, &options.output, &result, e));
    }
    writer
        .custom_data_mut()
        .insert(KEY_RECORD_START.into(), result.start_time_ns.to_string());
    let metadata = writer.finish()?;
    ros_info!(
        node.logger(),
        "recorded {} messages into {}",
        metadata.message_count,
        options.output.display()
    );
    Ok(LiveReport {
        sent: 0,
        max_lateness: Duration::ZERO,
        start_time_ns: result.start_time_ns,
        interrupted: result.interrupted,
        dropped: result.dropped,
        metadata,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qos::QosTime;

    #[test]
    fn play_qos_follows_the_bag() {
        let q = play_qos(&[QosProfile::rclcpp_default()], 3);
        assert_eq!(q.history, History::KeepLast { depth: 10 });
        assert!(matches!(q.reliability, DdsReliability::Reliable { .. }));
        assert_eq!(q.durability, DdsDurability::Volatile);
        // Deep enough for a whole burst played at rate 0.
        let q = play_qos(&[QosProfile::rclcpp_default()], 250);
        assert_eq!(q.history, History::KeepLast { depth: 250 });
        // No profile recorded (rosbags without qos): rclcpp's default.
        let q = play_qos(&[], 1);
        assert!(matches!(q.reliability, DdsReliability::Reliable { .. }));
        let q = play_qos(&[QosProfile::latched()], 5);
        assert_eq!(q.durability, DdsDurability::TransientLocal);
        assert_eq!(q.history, History::KeepLast { depth: 1 });
        let q = play_qos(&[QosProfile::sensor_data()], 5);
        assert_eq!(q.reliability, DdsReliability::BestEffort);
        let mut huge = QosProfile::rclcpp_default();
        huge.depth = u64::MAX;
        huge.deadline = QosTime::UNSPECIFIED;
        let q = play_qos(&[huge], 5);
        assert_eq!(
            q.history,
            History::KeepLast {
                depth: MAX_PLAY_DEPTH
            }
        );
    }

    #[test]
    fn recording_qos_adapts_to_publishers() {
        let a = Adapted {
            best_effort: false,
            latched: true,
        };
        assert_eq!(a.dds().durability, DdsDurability::TransientLocal);
        assert_eq!(a.offered(), QosProfile::latched());
        let b = Adapted {
            best_effort: true,
            latched: false,
        };
        assert_eq!(b.dds().reliability, DdsReliability::BestEffort);
        assert_eq!(b.offered().reliability, Reliability::BestEffort);
        assert_eq!(
            Adapted {
                best_effort: false,
                latched: false
            }
            .offered(),
            QosProfile::rclcpp_default()
        );
    }

    fn write_input(dir: &Path) -> PathBuf {
        let path = dir.join("input");
        let mut w = BagWriter::create(&path).unwrap();
        let ty = types::lookup("std_msgs/msg/String").unwrap();
        let hi =
            rpq_ros::cdr::to_vec(&rpq_ros::msg::std_msgs::String { data: "hi".into() }).unwrap();
        w.write("/a", ty.type_name(), &ty.definition(), 10, 10, &hi)
            .unwrap();
        // A payload that is not a String (a JointState).
        let js = rpq_ros::cdr::to_vec(&rpq_ros::msg::sensor_msgs::JointState {
            name: vec!["j".into()],
            ..Default::default()
        })
        .unwrap();
        w.write("/b", ty.type_name(), &ty.definition(), 20, 20, &js)
            .unwrap();
        w.write(
            "/c",
            "pkg/msg/Unknown",
            "int32 x\n",
            30,
            30,
            &[0, 1, 0, 0, 1, 0, 0, 0],
        )
        .unwrap();
        w.finish().unwrap();
        path
    }

    #[test]
    fn prepare_refuses_what_cannot_be_played() {
        let tmp = tempfile::tempdir().unwrap();
        let input = write_input(tmp.path());
        let mut o = ReplayOptions::new(&input, tmp.path().join("out"));
        o.play = vec!["/a".into()];
        let p = prepare(&o).unwrap();
        assert_eq!(p.plan.steps().len(), 1);
        assert_eq!(p.first_log_time, 10);
        o.play = vec!["/b".into()];
        let err = prepare(&o).err().unwrap();
        assert!(
            matches!(err, BagError::Undecodable { ref topic, .. } if topic == "/b"),
            "{err}"
        );
        o.play = vec!["/c".into()];
        let err = prepare(&o).err().unwrap();
        assert!(matches!(err, BagError::UnsupportedType { .. }), "{err}");
        o.play = vec!["/nope".into()];
        let err = prepare(&o).err().unwrap();
        assert!(err.to_string().contains("/a, /b, /c"), "{err}");
        o.play = vec!["/a".into()];
        o.remap = vec![("/a".into(), "/x".into())];
        let p = prepare(&o).unwrap();
        assert_eq!(p.plan.steps()[0].topic, "/x");
        assert!(p.qos.contains_key("/x"));
        o.rate = -1.0;
        assert!(matches!(
            prepare(&o).err().unwrap(),
            BagError::InvalidRate { .. }
        ));
        assert!(check_new_output(&input).is_err());
        assert!(check_new_output(&tmp.path().join("fresh")).is_ok());
    }
}
