//! Bounds on what a launch file may ask of the launcher, so that a hostile or broken file
//! fails at once with its place instead of exhausting the stack, memory or time. Each figure
//! is far above what a real launch file needs; the reasons are given with each.

use std::time::Duration;

/// Largest launch file (and included file) read, in bytes: 4 MiB. Hand-written launch files
/// are a few KiB; a generated one with thousands of nodes stays well below this.
pub const MAX_LAUNCH_FILE_BYTES: u64 = 4 << 20;

/// Largest parameter file (`<param from>`) accepted, in bytes: 16 MiB. The launcher does not
/// read it (the node does), but refuses a file the node could not sensibly load.
pub const MAX_PARAMETER_FILE_BYTES: u64 = 16 << 20;

/// Deepest element nesting within one file, `<launch>` counting as level 1: 64. Real files
/// nest 3 to 6 levels (`<launch><group><node><param><param>`); ROS 2's Python launcher itself
/// hits Python's recursion limit a few hundred levels down.
pub const MAX_ELEMENT_DEPTH: usize = 64;

/// Deepest nesting of `<group>`s and `<include>`s along one evaluation path, across included
/// files: 128. Bounds the evaluator's recursion (each level is a few stack frames).
pub const MAX_NESTING_DEPTH: usize = 128;

/// Deepest nesting of substitutions inside one attribute (`$(var $(var ...))`): 32.
pub const MAX_SUBSTITUTION_DEPTH: usize = 32;

/// Longest result of one attribute's substitutions, in bytes: 128 KiB. Linux refuses longer
/// single arguments and environment entries (`MAX_ARG_STRLEN`), so no longer value could
/// reach a process anyway; it also stops `<let>`s that double a value from growing it without
/// bound.
pub const MAX_VALUE_BYTES: usize = 128 << 10;

/// Total bytes produced by all substitutions and scope copies of one resolution: 64 MiB.
/// Bounds memory and time of files that repeat large values many times.
pub const MAX_EXPANSION_BYTES: usize = 64 << 20;

/// Largest time attribute (`respawn_delay`, `sigterm_timeout`, `sigkill_timeout`), in
/// seconds: 10^6 (11.6 days); larger values are refused instead of overflowing a timer.
pub const MAX_TIME_ATTRIBUTE_S: f64 = 1e6;

/// A respawned process that ran shorter than this exited "quickly": its restart is delayed
/// by the back-off of [`respawn_backoff`], and repeated quick failures end its respawning.
pub const QUICK_EXIT: Duration = Duration::from_secs(10);

/// First back-off delay after the second quick exit in a row (the first restart waits only
/// `respawn_delay`, as in ROS 2): 0.1 s, doubling with each further quick exit.
pub const BACKOFF_START: Duration = Duration::from_millis(100);

/// Longest back-off delay: 5 s. A `respawn_delay` longer than this is used as given.
pub const BACKOFF_CAP: Duration = Duration::from_secs(5);

/// After this many quick failures in a row (exit code not 0, or killed by a signal), the
/// launcher stops respawning the process and reports it as failed: 8 (about 6.3 s of trying
/// with the back-off above and no `respawn_delay`).
pub const MAX_QUICK_FAILURES: u32 = 8;

/// The delay before restarting a process that exited `quick_exits` times in a row within
/// [`QUICK_EXIT`] of starting (1 for the first such exit), given its `respawn_delay`.
///
/// ```
/// use std::time::Duration;
/// use rpq_launch::limits::respawn_backoff;
/// let ms = |n| Duration::from_millis(n);
/// assert_eq!(respawn_backoff(Duration::ZERO, 0), Duration::ZERO); // it ran long enough
/// assert_eq!(respawn_backoff(Duration::ZERO, 1), Duration::ZERO); // as ROS 2
/// assert_eq!(respawn_backoff(Duration::ZERO, 2), ms(100));
/// assert_eq!(respawn_backoff(Duration::ZERO, 4), ms(400));
/// assert_eq!(respawn_backoff(Duration::ZERO, 30), ms(5000));
/// assert_eq!(respawn_backoff(ms(300), 2), ms(300));
/// assert_eq!(respawn_backoff(Duration::from_secs(60), 9), Duration::from_secs(60));
/// ```
pub fn respawn_backoff(respawn_delay: Duration, quick_exits: u32) -> Duration {
    if quick_exits < 2 {
        return respawn_delay;
    }
    let doublings = (quick_exits - 2).min(16);
    let backoff = BACKOFF_START
        .saturating_mul(1 << doublings)
        .min(BACKOFF_CAP);
    backoff.max(respawn_delay)
}
