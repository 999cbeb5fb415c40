//! Logging as rcl does it: to the console (stderr) in rcl's default format and to `/rosout`
//! (`rcl_interfaces/msg/Log`), filtered by a level set with `--log-level`.
//!
//! Console lines look like rcl's default `RCUTILS_CONSOLE_OUTPUT_FORMAT`:
//!
//! ```text
//! [INFO] [1700000000.123456789] [robot_sim]: started at 250 Hz
//! ```
//!
//! The logger name is the node name, prefixed with its namespace in dotted form as in rclcpp
//! (`/arm/robot_sim` logs as `arm.robot_sim`). [`WarnThrottle`] collapses a warning that
//! repeats every cycle into one line every few seconds with a count.
//!
//! ```
//! use rpq_ros::log::{LogLevel, Logger};
//! let log = Logger::console_only("demo", LogLevel::Info);
//! rpq_ros::ros_info!(log, "started at {} Hz", 250);
//! rpq_ros::ros_debug!(log, "not shown at level info");
//! ```

use std::{
    fmt,
    io::Write,
    sync::{
        atomic::{AtomicU8, Ordering},
        Arc,
    },
    time::{SystemTime, UNIX_EPOCH},
};

use ros2_client::{builtin_interfaces::Time, rosout::RosoutRaw, NodeLoggingHandle};

/// Severity of a log message (the `rcl_interfaces/msg/Log` levels). Ordered: `Debug < Fatal`.
pub use ros2_client::ros2::LogLevel;

/// The console tag of a level, as rcl prints it.
pub fn level_tag(level: LogLevel) -> &'static str {
    match level {
        LogLevel::Debug => "DEBUG",
        LogLevel::Info => "INFO",
        LogLevel::Warn => "WARN",
        LogLevel::Error => "ERROR",
        LogLevel::Fatal => "FATAL",
    }
}

fn level_from_u8(v: u8) -> LogLevel {
    match v {
        0..=10 => LogLevel::Debug,
        11..=20 => LogLevel::Info,
        21..=30 => LogLevel::Warn,
        31..=40 => LogLevel::Error,
        _ => LogLevel::Fatal,
    }
}

/// One console line in rcl's default format, without the newline.
pub fn format_line(level: LogLevel, stamp: SystemTime, logger: &str, msg: &str) -> String {
    let d = stamp.duration_since(UNIX_EPOCH).unwrap_or_default();
    format!(
        "[{}] [{}.{:09}] [{}]: {}",
        level_tag(level),
        d.as_secs(),
        d.subsec_nanos(),
        logger,
        msg
    )
}

/// The logger name rclcpp gives a node: namespace tokens and node name joined by dots.
pub fn logger_name(namespace: &str, node: &str) -> String {
    namespace
        .split('/')
        .filter(|t| !t.is_empty())
        .chain(std::iter::once(node))
        .collect::<Vec<_>>()
        .join(".")
}

struct Inner {
    name: String,
    level: AtomicU8,
    console: bool,
    rosout: Option<NodeLoggingHandle>,
}

/// A node's logger; cheap to clone and usable from any thread.
#[derive(Clone)]
pub struct Logger {
    inner: Arc<Inner>,
}

impl fmt::Debug for Logger {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Logger")
            .field("name", &self.inner.name)
            .field("level", &self.level())
            .field("console", &self.inner.console)
            .field("rosout", &self.inner.rosout.is_some())
            .finish()
    }
}

impl Logger {
    /// A logger that writes to stderr only (before a node exists, or in tools).
    pub fn console_only(name: &str, level: LogLevel) -> Logger {
        Self::new(name, level, true, None)
    }

    /// A logger writing to stderr (if `console`) and to `/rosout` through `rosout`.
    pub fn new(
        name: &str,
        level: LogLevel,
        console: bool,
        rosout: Option<NodeLoggingHandle>,
    ) -> Logger {
        Logger {
            inner: Arc::new(Inner {
                name: name.to_string(),
                level: AtomicU8::new(level as u8),
                console,
                rosout,
            }),
        }
    }

    /// The logger name.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The minimum level that is logged.
    pub fn level(&self) -> LogLevel {
        level_from_u8(self.inner.level.load(Ordering::Relaxed))
    }

    /// Changes the minimum level for this logger and its clones.
    pub fn set_level(&self, level: LogLevel) {
        self.inner.level.store(level as u8, Ordering::Relaxed);
    }

    /// Whether a message at `level` would be logged.
    pub fn enabled(&self, level: LogLevel) -> bool {
        level >= self.level()
    }

    /// Logs a message (what the `ros_*!` macros call).
    pub fn log(&self, level: LogLevel, file: &str, function: &str, line: u32, msg: fmt::Arguments) {
        if !self.enabled(level) {
            return;
        }
        let text = msg.to_string();
        if self.inner.console {
            let line_text = format_line(level, SystemTime::now(), &self.inner.name, &text);
            // A closed stderr must not take the node down.
            let _ = writeln!(std::io::stderr().lock(), "{line_text}");
        }
        if let Some(h) = &self.inner.rosout {
            h.rosout_raw(
                Time::now(),
                level,
                &self.inner.name,
                &text,
                file,
                function,
                line,
            );
        }
    }

    /// Logs at `Debug`.
    pub fn debug(&self, msg: impl fmt::Display) {
        self.log(LogLevel::Debug, "", "", 0, format_args!("{msg}"));
    }
    /// Logs at `Info`.
    pub fn info(&self, msg: impl fmt::Display) {
        self.log(LogLevel::Info, "", "", 0, format_args!("{msg}"));
    }
    /// Logs at `Warn`.
    pub fn warn(&self, msg: impl fmt::Display) {
        self.log(LogLevel::Warn, "", "", 0, format_args!("{msg}"));
    }
    /// Logs at `Error`.
    pub fn error(&self, msg: impl fmt::Display) {
        self.log(LogLevel::Error, "", "", 0, format_args!("{msg}"));
    }
    /// Logs at `Fatal`.
    pub fn fatal(&self, msg: impl fmt::Display) {
        self.log(LogLevel::Fatal, "", "", 0, format_args!("{msg}"));
    }
}

/// Collapses repeated warnings: a message equal to one logged less than `window` seconds
/// before is suppressed, and the next time that message is logged it says how many were.
/// Each distinct message has its own window (the last [`WarnThrottle::KEPT`] distinct
/// messages are remembered), so two warnings that alternate — a rejected command, then the
/// stop it causes — are each logged at most once per window instead of every time.
///
/// Times are seconds on any clock that only moves forward (a node passes its
/// [`Clock::seconds`](crate::clock::Clock::seconds)).
///
/// ```
/// use rpq_ros::log::WarnThrottle;
/// let mut t = WarnThrottle::new(1.0);
/// assert_eq!(t.filter("bad", 0.0).as_deref(), Some("bad"));
/// assert_eq!(t.filter("other", 0.1).as_deref(), Some("other"));
/// assert_eq!(t.filter("bad", 0.5), None);
/// assert_eq!(t.filter("other", 0.6), None);
/// assert_eq!(t.filter("bad", 0.7), None);
/// assert_eq!(
///     t.filter("bad", 1.2).as_deref(),
///     Some("bad (repeated 2 more times in the last 1.2 s)")
/// );
/// ```
#[derive(Debug, Clone)]
pub struct WarnThrottle {
    window: f64,
    /// Recently logged messages: (text, when it was last logged, repeats suppressed since).
    recent: Vec<(String, f64, u64)>,
}

impl WarnThrottle {
    /// How many distinct messages a throttle remembers (the one logged longest ago is
    /// forgotten first).
    pub const KEPT: usize = 16;

    /// A throttle that suppresses repeats for `window` seconds after a message is logged.
    pub fn new(window: f64) -> Self {
        Self {
            window,
            recent: Vec::new(),
        }
    }

    /// The text to log for `msg` at time `now` (s), or `None` to stay silent.
    pub fn filter(&mut self, msg: &str, now: f64) -> Option<String> {
        if let Some(e) = self.recent.iter_mut().find(|e| e.0 == msg) {
            if now - e.1 < self.window {
                e.2 += 1;
                return None;
            }
            let text = if e.2 > 0 {
                format!(
                    "{msg} (repeated {} more times in the last {:.1} s)",
                    e.2,
                    now - e.1
                )
            } else {
                msg.to_string()
            };
            e.1 = now;
            e.2 = 0;
            return Some(text);
        }
        if self.recent.len() == Self::KEPT {
            // forget the message logged longest ago
            if let Some(k) = (0..self.recent.len())
                .min_by(|&a, &b| self.recent[a].1.total_cmp(&self.recent[b].1))
            {
                self.recent.swap_remove(k);
            }
        }
        self.recent.push((msg.to_string(), now, 0));
        Some(msg.to_string())
    }

    /// Logs `msg` at `Warn` on `logger` unless this throttle suppresses it at `now` (s).
    pub fn warn(&mut self, logger: &Logger, msg: &str, now: f64) {
        if let Some(text) = self.filter(msg, now) {
            logger.warn(text);
        }
    }
}

/// Logs with an explicit level: `ros_log!(logger, LogLevel::Warn, "x = {}", x)`.
#[macro_export]
macro_rules! ros_log {
    ($logger:expr, $level:expr, $($arg:tt)+) => {
        $crate::log::Logger::log(
            &$logger, $level, ::std::file!(), ::std::module_path!(), ::std::line!(),
            ::std::format_args!($($arg)+),
        )
    };
}

/// Logs at `Debug`: `ros_debug!(logger, "x = {}", x)`.
#[macro_export]
macro_rules! ros_debug {
    ($logger:expr, $($arg:tt)+) => { $crate::ros_log!($logger, $crate::log::LogLevel::Debug, $($arg)+) };
}

/// Logs at `Info`: `ros_info!(logger, "x = {}", x)`.
#[macro_export]
macro_rules! ros_info {
    ($logger:expr, $($arg:tt)+) => { $crate::ros_log!($logger, $crate::log::LogLevel::Info, $($arg)+) };
}

/// Logs at `Warn`: `ros_warn!(logger, "x = {}", x)`.
#[macro_export]
macro_rules! ros_warn {
    ($logger:expr, $($arg:tt)+) => { $crate::ros_log!($logger, $crate::log::LogLevel::Warn, $($arg)+) };
}

/// Logs at `Error`: `ros_error!(logger, "x = {}", x)`.
#[macro_export]
macro_rules! ros_error {
    ($logger:expr, $($arg:tt)+) => { $crate::ros_log!($logger, $crate::log::LogLevel::Error, $($arg)+) };
}

/// Logs at `Fatal`: `ros_fatal!(logger, "x = {}", x)`.
#[macro_export]
macro_rules! ros_fatal {
    ($logger:expr, $($arg:tt)+) => { $crate::ros_log!($logger, $crate::log::LogLevel::Fatal, $($arg)+) };
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn console_format_matches_rcl() {
        let t = UNIX_EPOCH + Duration::new(1_700_000_000, 123_456_789);
        assert_eq!(
            format_line(LogLevel::Info, t, "node_name", "msg"),
            "[INFO] [1700000000.123456789] [node_name]: msg"
        );
        let t = UNIX_EPOCH + Duration::new(5, 7);
        assert_eq!(
            format_line(LogLevel::Warn, t, "a.b", "x"),
            "[WARN] [5.000000007] [a.b]: x"
        );
    }

    #[test]
    fn logger_names_follow_rclcpp() {
        assert_eq!(logger_name("/", "sim"), "sim");
        assert_eq!(logger_name("/arm/left", "sim"), "arm.left.sim");
    }

    #[test]
    fn level_filter() {
        let l = Logger::new("t", LogLevel::Warn, false, None);
        assert!(!l.enabled(LogLevel::Info));
        assert!(l.enabled(LogLevel::Error));
        l.clone().set_level(LogLevel::Debug);
        assert!(l.enabled(LogLevel::Debug));
        for v in [
            LogLevel::Debug,
            LogLevel::Info,
            LogLevel::Warn,
            LogLevel::Error,
            LogLevel::Fatal,
        ] {
            assert_eq!(level_from_u8(v as u8), v);
        }
    }

    #[test]
    fn throttle_collapses_repeats_and_reports_them() {
        let mut t = WarnThrottle::new(2.0);
        assert_eq!(t.filter("a", 0.0).as_deref(), Some("a"));
        for k in 1..=5 {
            assert_eq!(t.filter("a", 0.1 * k as f64), None);
        }
        assert_eq!(t.filter("b", 1.0).as_deref(), Some("b"));
        // two messages that alternate are each held back for the window
        for k in 0..10 {
            let now = 1.1 + 0.05 * k as f64;
            assert_eq!(t.filter("a", now), None);
            assert_eq!(t.filter("b", now + 0.01), None);
        }
        assert_eq!(
            t.filter("a", 2.0).as_deref(),
            Some("a (repeated 15 more times in the last 2.0 s)")
        );
        assert_eq!(
            t.filter("b", 3.0).as_deref(),
            Some("b (repeated 10 more times in the last 2.0 s)")
        );
        assert_eq!(t.filter("a", 4.1).as_deref(), Some("a"));
        assert_eq!(t.filter("a", 4.2), None);
        assert_eq!(
            t.filter("a", 6.2).as_deref(),
            Some("a (repeated 1 more times in the last 2.1 s)")
        );
    }

    #[test]
    fn throttle_forgets_the_oldest_message_beyond_its_capacity() {
        let mut t = WarnThrottle::new(10.0);
        for k in 0..=WarnThrottle::KEPT {
            let m = format!("m{k}");
            assert_eq!(t.filter(&m, k as f64 * 0.01).as_deref(), Some(m.as_str()));
        }
        // m0 was forgotten (the oldest): logged again at once, which forgets m1; m2 is still
        // held back
        assert_eq!(t.filter("m0", 1.0).as_deref(), Some("m0"));
        assert_eq!(t.filter("m2", 1.0), None);
        assert_eq!(t.recent.len(), WarnThrottle::KEPT);
    }
}
