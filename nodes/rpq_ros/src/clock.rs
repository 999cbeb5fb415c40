//! The one clock of a node, as rclcpp gives it: the system clock, or the simulated time of the
//! `/clock` topic (`rosgraph_msgs/msg/Clock`) when the parameter `use_sim_time` is true.
//!
//! A [`Clock`] answers two questions:
//! * [`Clock::now`]: the time to stamp messages with (`builtin_interfaces/Time`): the wall
//!   clock, or the latest `/clock` time;
//! * [`Clock::seconds`]: seconds since the clock started, for ages, timeouts and watchdogs:
//!   a monotonic clock from the node's start, or the `/clock` time since the first `/clock`
//!   message. A simulation that pauses therefore pauses the watchdogs; a time that jumps
//!   backwards (a bag played again from its start) is passed on as it is.
//!
//! With sim time and no `/clock` message yet, [`Clock::now`] is zero and [`Clock::started`] is
//! false: a node must then treat every input as stale (command no motion), as rclcpp nodes do
//! while their clock reads zero.
//!
//! ```
//! let clock = rpq_ros::clock::Clock::system();
//! assert!(clock.started() && !clock.is_sim());
//! assert!(clock.now().sec > 1_600_000_000);
//! let t = clock.seconds();
//! assert!(clock.seconds() >= t);
//! ```
//!
//! Periodic timers (`tokio::time::interval`) stay on the system's monotonic clock: a node
//! checks its watchdogs on every tick against [`Clock::seconds`], so with sim time a timeout
//! expires when the simulated time has advanced past it, at the next tick.

use std::{
    pin::pin,
    sync::{
        atomic::{AtomicI64, Ordering},
        Arc,
    },
    time::Instant,
};

use futures::StreamExt;
use ros2_client::qos::{QosProfile, Reliability};

use crate::{
    msg::{builtin_interfaces::Time, rosgraph_msgs::Clock as ClockMsg},
    node::{RosError, RosNode},
    params::USE_SIM_TIME,
    qos,
};

/// Topic of the simulated time (absolute, as rclcpp subscribes to it).
pub const CLOCK_TOPIC: &str = "/clock";

/// The QoS of `/clock`: best effort, keep-last 1, as rclcpp's `ClockQoS`. A best-effort
/// subscription also matches a reliable publisher.
pub const fn clock_qos() -> QosProfile {
    qos::reliable(1).reliability(Reliability::BestEffort)
}

const NANOS_PER_SEC: i64 = 1_000_000_000;
/// `latest` before the first `/clock` message.
const NONE: i64 = i64::MIN;

#[derive(Debug)]
enum Source {
    System {
        start: Instant,
    },
    Sim {
        /// The latest `/clock` time in nanoseconds since the epoch, or [`NONE`].
        latest: AtomicI64,
        /// The first `/clock` time in nanoseconds, or [`NONE`].
        first: AtomicI64,
    },
}

/// A node's clock: system or simulated time (see the module docs). Cheap to clone; clones share
/// the time.
#[derive(Debug, Clone)]
pub struct Clock {
    source: Arc<Source>,
}

fn to_nanos(t: &Time) -> i64 {
    i64::from(t.sec) * NANOS_PER_SEC + i64::from(t.nanosec.min(999_999_999))
}

/// The message time `n` nanoseconds after the epoch (negative: before it); seconds beyond the
/// range of `i32` saturate.
pub fn time_from_nanos(n: i64) -> Time {
    Time {
        sec: n
            .div_euclid(NANOS_PER_SEC)
            .clamp(i32::MIN.into(), i32::MAX.into()) as i32,
        nanosec: n.rem_euclid(NANOS_PER_SEC) as u32,
    }
}

impl Clock {
    /// The system clock: wall time for stamps, a monotonic clock from now for
    /// [`Clock::seconds`].
    pub fn system() -> Clock {
        Clock {
            source: Arc::new(Source::System {
                start: Instant::now(),
            }),
        }
    }

    /// A simulated clock that reads zero until [`Clock::set`] is called (what
    /// [`Clock::for_node`] does with each `/clock` message).
    pub fn sim() -> Clock {
        Clock {
            source: Arc::new(Source::Sim {
                latest: AtomicI64::new(NONE),
                first: AtomicI64::new(NONE),
            }),
        }
    }

    /// The clock `node`'s parameter `use_sim_time` asks for. With sim time this subscribes to
    /// [`CLOCK_TOPIC`] and follows it from a task on the current tokio runtime for as long as
    /// the runtime runs; undecodable `/clock` samples are logged and skipped.
    pub fn for_node(node: &mut RosNode) -> Result<Clock, RosError> {
        if !node.params().bool(USE_SIM_TIME)? {
            return Ok(Clock::system());
        }
        let sub = node.subscription::<ClockMsg>(CLOCK_TOPIC, clock_qos())?;
        let clock = Clock::sim();
        let follower = clock.clone();
        let log = node.logger().clone();
        log.info("use_sim_time: following /clock; the time is zero until it arrives");
        tokio::spawn(async move {
            let mut stream = pin!(sub.async_stream());
            while let Some(item) = stream.next().await {
                match item {
                    Ok((msg, _)) => follower.set(&msg.clock),
                    Err(e) => log.warn(format!("cannot read /clock: {e}")),
                }
            }
        });
        Ok(clock)
    }

    /// Whether this is simulated time.
    pub fn is_sim(&self) -> bool {
        matches!(*self.source, Source::Sim { .. })
    }

    /// Whether the clock runs: always for the system clock; for sim time once a `/clock`
    /// message arrived.
    pub fn started(&self) -> bool {
        match &*self.source {
            Source::System { .. } => true,
            Source::Sim { latest, .. } => latest.load(Ordering::Acquire) != NONE,
        }
    }

    /// Sets the simulated time (a `/clock` message). Ignored by the system clock.
    pub fn set(&self, t: &Time) {
        if let Source::Sim { latest, first } = &*self.source {
            let n = to_nanos(t);
            // the first value also becomes the origin of `seconds`
            let _ = first.compare_exchange(NONE, n, Ordering::AcqRel, Ordering::Acquire);
            latest.store(n, Ordering::Release);
        }
    }

    /// The time now, to stamp messages with: wall time, or the latest `/clock` time (zero
    /// before the first).
    pub fn now(&self) -> Time {
        match &*self.source {
            Source::System { .. } => Time::now().unwrap_or_default(),
            Source::Sim { latest, .. } => match latest.load(Ordering::Acquire) {
                NONE => Time::default(),
                n => time_from_nanos(n),
            },
        }
    }

    /// Seconds since the clock started, for ages and timeouts (see the module docs): 0 for sim
    /// time before the first `/clock` message.
    pub fn seconds(&self) -> f64 {
        match &*self.source {
            Source::System { start } => start.elapsed().as_secs_f64(),
            Source::Sim { latest, first } => {
                let (l, f) = (
                    latest.load(Ordering::Acquire),
                    first.load(Ordering::Acquire),
                );
                if l == NONE || f == NONE {
                    0.0
                } else {
                    (l - f) as f64 * 1e-9
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sim_time_is_zero_until_the_first_clock_then_follows_it() {
        let c = Clock::sim();
        assert!(c.is_sim() && !c.started());
        assert_eq!(c.now(), Time::default());
        assert_eq!(c.seconds(), 0.0);
        let shared = c.clone();
        shared.set(&Time {
            sec: 1_700_000_000,
            nanosec: 250_000_000,
        });
        assert!(c.started());
        assert_eq!(c.now().sec, 1_700_000_000);
        assert_eq!(c.now().nanosec, 250_000_000);
        assert_eq!(c.seconds(), 0.0);
        shared.set(&Time {
            sec: 1_700_000_002,
            nanosec: 0,
        });
        assert!((c.seconds() - 1.75).abs() < 1e-9);
        assert_eq!(c.now().sec, 1_700_000_002);
    }

    #[test]
    fn system_clock_ignores_set() {
        let c = Clock::system();
        c.set(&Time::default());
        assert!(c.started() && !c.is_sim());
        assert!(c.now().sec > 1_600_000_000);
    }

    #[test]
    fn nanos_round_trip_before_and_after_the_epoch() {
        for t in [
            Time { sec: 5, nanosec: 7 },
            Time {
                sec: -3,
                nanosec: 999_999_999,
            },
        ] {
            assert_eq!(time_from_nanos(to_nanos(&t)), t);
        }
    }
}
