//! Starting, watching and stopping the processes of a [`LaunchPlan`].
//!
//! Behaviour, as ROS 2 launch:
//! - each process gets its own process group, stdin from `/dev/null`, and its output lines are
//!   printed as `[label] line` (stdout only to the log file with `output="log"`);
//! - a process that exits is reported (`process has finished cleanly` / `process has died`);
//!   the others keep running, unless it has `on_exit="shutdown"`; `respawn="true"` restarts it
//!   after `respawn_delay`, as ROS 2 does, with a back-off when it keeps exiting within
//!   [`QUICK_EXIT`] of starting ([`respawn_backoff`]), and gives up on it after
//!   [`MAX_QUICK_FAILURES`] quick failures in a row;
//! - the launcher ends when every process has ended;
//! - on SIGINT, SIGTERM or SIGHUP every process group gets SIGINT, then SIGTERM after
//!   `sigterm_timeout` (5 s), then SIGKILL after `sigkill_timeout` (5 s) more; further
//!   signals to the launcher are ignored while this runs, as in ROS 2.
//!
//! Exit status of the launcher: 0 when every process ended cleanly (exit code 0, or
//! stopped by the SIGINT/SIGTERM of a shutdown), 1 otherwise.
//!
//! Children die with the launcher, even with `kill -9`: each is started through the launcher's
//! own binary in [`EXEC_CHILD_FLAG`] mode ([`exec_child`]), which sets the Linux parent-death
//! signal (`PR_SET_PDEATHSIG`, SIGTERM, which the nodes answer with their stop) and then
//! executes the node in its place (same pid). This keeps the crate free of `unsafe`
//! (a `pre_exec` hook would need it). Only the direct child gets the signal: a process that a
//! `launch-prefix` wrapper starts does not.

use std::ffi::OsString;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

use crate::error::LaunchError;
use crate::limits::{respawn_backoff, MAX_QUICK_FAILURES, QUICK_EXIT};
use crate::parse::OutputMode;
use crate::resolve::{LaunchPlan, ProcessSpec};

/// Where launcher and process output goes: the screen (stdout) and an optional log file.
pub struct Console {
    screen: Mutex<Box<dyn Write + Send>>,
    log: Option<Mutex<File>>,
}

impl Console {
    /// A console printing to stdout and, if given, appending to `log`.
    pub fn new(log: Option<File>) -> Self {
        Console {
            screen: Mutex::new(Box::new(std::io::stdout())),
            log: log.map(Mutex::new),
        }
    }

    fn write_screen(&self, line: &str) {
        if let Ok(mut s) = self.screen.lock() {
            // A closed stdout must not stop the supervision.
            let _ = s.write_all(format!("{line}\n").as_bytes());
            let _ = s.flush();
        }
    }

    fn write_log(&self, line: &str) {
        if let Some(log) = &self.log {
            if let Ok(mut f) = log.lock() {
                let t = SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .unwrap_or_default()
                    .as_secs_f64();
                let _ = writeln!(f, "{t:.7} {line}");
            }
        }
    }

    /// A message of the launcher itself: `[LEVEL] [source]: message`.
    pub fn launcher(&self, level: &str, source: &str, message: &str) {
        let line = format!("[{level}] [{source}]: {message}");
        self.write_screen(&line);
        self.write_log(&line);
    }

    fn process_line(&self, label: &str, line: &str, screen: bool, log: bool) {
        let line = format!("[{label}] {line}");
        if screen {
            self.write_screen(&line);
        }
        if log {
            self.write_log(&line);
        }
    }
}

/// How one process ended, for the summary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessOutcome {
    /// Its label.
    pub label: String,
    /// Whether it counts as a failure.
    pub failed: bool,
}

enum Stage {
    Int,
    Term,
    Kill,
}

enum State {
    Running {
        child: Child,
        pid: i32,
        stop: Option<(Stage, Instant)>,
    },
    Reaping {
        status: ExitStatus,
        pid: i32,
        since: Instant,
    },
    Waiting {
        until: Instant,
    },
    Done,
}

struct Slot<'p> {
    spec: &'p ProcessSpec,
    state: State,
    retries: u64,
    /// When the current (or last) run started.
    started: Instant,
    /// Exits within [`QUICK_EXIT`] of starting, in a row.
    quick_exits: u32,
    /// Of those, failures (exit code not 0, or a signal) in a row.
    quick_failures: u32,
    failed: bool,
    killed: bool,
    readers: Arc<AtomicUsize>,
}

/// The exit code ROS 2 prints: the code, or minus the signal number.
fn exit_code(status: &ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(c), _) => c,
        (None, Some(s)) => -s,
        (None, None) => -1,
    }
}

fn signal_process_group(pid: i32, signal: Signal) {
    // ESRCH (group already gone) is fine.
    let _ = killpg(Pid::from_raw(pid), signal);
}

fn spawn_reader(
    stream: impl Read + Send + 'static,
    label: String,
    screen: bool,
    log: bool,
    console: Arc<Console>,
    readers: Arc<AtomicUsize>,
) {
    readers.fetch_add(1, Ordering::SeqCst);
    thread::spawn(move || {
        let mut reader = BufReader::new(stream);
        let mut buf = Vec::new();
        loop {
            buf.clear();
            match reader.read_until(b'\n', &mut buf) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    while buf.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
                        buf.pop();
                    }
                    console.process_line(&label, &String::from_utf8_lossy(&buf), screen, log);
                }
            }
        }
        readers.fetch_sub(1, Ordering::SeqCst);
    });
}

/// First argument of the launcher's binary run as a child trampoline: `rpq_launch
/// --rpq-launch-exec-child <launcher pid> <program> [args...]` ([`exec_child`]).
pub const EXEC_CHILD_FLAG: &str = "--rpq-launch-exec-child";

/// The signal a child gets when the launcher dies: SIGTERM, a shutdown request for every node
/// (each publishes its stop), and the end of any program that does not handle it.
pub const PARENT_DEATH_SIGNAL: Signal = Signal::SIGTERM;

/// The child trampoline ([`EXEC_CHILD_FLAG`]; `argv` are the words after it): sets the
/// parent-death signal, exits at once if the launcher with pid `argv[0]` is already gone (it
/// may die between the fork and the `prctl`), then replaces itself with the program `argv[1]`
/// and its arguments. Returns only on failure, with the exit code to use (127: the program
/// could not be executed).
pub fn exec_child(argv: &[OsString]) -> u8 {
    let launcher = argv
        .first()
        .and_then(|p| p.to_str())
        .and_then(|p| p.parse::<i32>().ok());
    let (Some(launcher), Some(program)) = (launcher, argv.get(1)) else {
        eprintln!("rpq_launch: {EXEC_CHILD_FLAG} is internal: <launcher pid> <program> [args]");
        return 2;
    };
    if let Err(e) = nix::sys::prctl::set_pdeathsig(PARENT_DEATH_SIGNAL) {
        eprintln!("rpq_launch: cannot set the parent-death signal ({e}): this process will not stop when the launcher dies");
    }
    if nix::unistd::getppid() != Pid::from_raw(launcher) {
        // The launcher died before the parent-death signal was set: nobody supervises us.
        return 1;
    }
    let err = Command::new(program).args(&argv[2..]).exec();
    eprintln!(
        "rpq_launch: cannot execute '{}': {err}",
        program.to_string_lossy()
    );
    127
}

fn start(
    spec: &ProcessSpec,
    console: &Arc<Console>,
    readers: &Arc<AtomicUsize>,
) -> Result<(Child, i32), String> {
    let (program, args) = spec
        .command
        .split_first()
        .ok_or_else(|| "empty command".to_string())?;
    // The running launcher binary, by the kernel's link (valid even if the file was replaced
    // since), as the trampoline that sets the parent-death signal.
    let mut cmd = Command::new("/proc/self/exe");
    cmd.arg(EXEC_CHILD_FLAG)
        .arg(std::process::id().to_string())
        .arg(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    for (k, v) in &spec.env {
        match v {
            Some(v) => cmd.env(k, v),
            None => cmd.env_remove(k),
        };
    }
    if let Some(cwd) = &spec.cwd {
        cmd.current_dir(cwd);
    }
    let mut child = cmd.spawn().map_err(|e| e.to_string())?;
    let pid = i32::try_from(child.id()).map_err(|e| e.to_string())?;
    console.launcher(
        "INFO",
        &spec.label,
        &format!("process started with pid [{pid}]"),
    );
    let to_screen = true;
    let stdout_to_screen = spec.output != OutputMode::Log;
    let to_log = spec.output != OutputMode::Screen;
    if let Some(out) = child.stdout.take() {
        spawn_reader(
            out,
            spec.label.clone(),
            stdout_to_screen,
            to_log,
            console.clone(),
            readers.clone(),
        );
    }
    if let Some(err) = child.stderr.take() {
        spawn_reader(
            err,
            spec.label.clone(),
            to_screen,
            to_log,
            console.clone(),
            readers.clone(),
        );
    }
    Ok((child, pid))
}

/// Runs every process of `plan` until all have ended; returns how each ended.
pub fn run(plan: &LaunchPlan, console: Arc<Console>) -> Result<Vec<ProcessOutcome>, LaunchError> {
    const POLL: Duration = Duration::from_millis(20);
    const OUTPUT_GRACE: Duration = Duration::from_millis(500);

    let mut signals = Signals::new([SIGINT, SIGTERM, SIGHUP])
        .map_err(|e| LaunchError::Supervisor(e.to_string()))?;
    let mut slots: Vec<Slot> = plan
        .processes
        .iter()
        .map(|spec| Slot {
            spec,
            state: State::Done,
            retries: 0,
            started: Instant::now(),
            quick_exits: 0,
            quick_failures: 0,
            failed: false,
            killed: false,
            readers: Arc::new(AtomicUsize::new(0)),
        })
        .collect();

    let launch = |slot: &mut Slot| match start(slot.spec, &console, &slot.readers) {
        Ok((child, pid)) => {
            slot.started = Instant::now();
            slot.state = State::Running {
                child,
                pid,
                stop: None,
            }
        }
        Err(e) => {
            console.launcher(
                "ERROR",
                &slot.spec.label,
                &format!("failed to start '{}': {e}", slot.spec.command.join(" ")),
            );
            slot.failed = true;
            slot.state = State::Done;
        }
    };
    for slot in &mut slots {
        launch(slot);
    }

    let mut shutting_down = false;
    let shutdown = |slots: &mut [Slot], reason: &str| {
        console.launcher("INFO", "launch", &format!("shutting down: {reason}"));
        let now = Instant::now();
        for slot in slots.iter_mut() {
            match &mut slot.state {
                State::Running { pid, stop, .. } if stop.is_none() => {
                    signal_process_group(*pid, Signal::SIGINT);
                    *stop = Some((Stage::Int, now + slot.spec.sigterm_timeout));
                }
                State::Waiting { .. } => slot.state = State::Done,
                _ => {}
            }
        }
    };

    loop {
        for sig in signals.pending() {
            let name = match sig {
                SIGINT => "SIGINT",
                SIGTERM => "SIGTERM",
                _ => "SIGHUP",
            };
            if shutting_down {
                console.launcher(
                    "WARNING",
                    "launch",
                    &format!("{name} received again; already shutting down (escalation runs on its timers)"),
                );
            } else {
                shutting_down = true;
                shutdown(&mut slots, &format!("{name} received"));
            }
        }

        let now = Instant::now();
        let mut shutdown_reason: Option<String> = None;
        for slot in &mut slots {
            match &mut slot.state {
                State::Running { child, pid, stop } => {
                    let pid = *pid;
                    match child.try_wait() {
                        Ok(Some(status)) => {
                            slot.state = State::Reaping {
                                status,
                                pid,
                                since: now,
                            };
                        }
                        Ok(None) => {
                            if let Some((stage, deadline)) = stop {
                                if now >= *deadline {
                                    let label = &slot.spec.label;
                                    match stage {
                                        Stage::Int => {
                                            console.launcher("ERROR", label, &format!(
                                                "process[{label}] failed to terminate '{}' seconds after receiving 'SIGINT', escalating to 'SIGTERM'",
                                                slot.spec.sigterm_timeout.as_secs_f64()));
                                            signal_process_group(pid, Signal::SIGTERM);
                                            *stop = Some((
                                                Stage::Term,
                                                now + slot.spec.sigkill_timeout,
                                            ));
                                        }
                                        Stage::Term => {
                                            console.launcher("ERROR", label, &format!(
                                                "process[{label}] failed to terminate '{}' seconds after receiving 'SIGTERM', escalating to 'SIGKILL'",
                                                slot.spec.sigkill_timeout.as_secs_f64()));
                                            signal_process_group(pid, Signal::SIGKILL);
                                            slot.killed = true;
                                            *stop = Some((
                                                Stage::Kill,
                                                now + Duration::from_secs(3600),
                                            ));
                                        }
                                        Stage::Kill => {}
                                    }
                                }
                            }
                        }
                        Err(e) => {
                            console.launcher(
                                "ERROR",
                                &slot.spec.label,
                                &format!("cannot wait for process: {e}"),
                            );
                            slot.failed = true;
                            slot.state = State::Done;
                        }
                    }
                }
                State::Reaping { status, pid, since } => {
                    let (status, pid, since) = (*status, *pid, *since);
                    let output_done = slot.readers.load(Ordering::SeqCst) == 0;
                    if !output_done && now.duration_since(since) < OUTPUT_GRACE {
                        continue;
                    }
                    let code = exit_code(&status);
                    let label = &slot.spec.label;
                    if code == 0 {
                        console.launcher(
                            "INFO",
                            label,
                            &format!("process has finished cleanly [pid {pid}]"),
                        );
                    } else {
                        console.launcher(
                            "ERROR",
                            label,
                            &format!(
                                "process has died [pid {pid}, exit code {code}, cmd '{}'].",
                                slot.spec.command.join(" ")
                            ),
                        );
                    }
                    let stopped_by_us = shutting_down
                        && !slot.killed
                        && (code == 0 || code == -SIGINT || code == -SIGTERM);
                    slot.failed = !(code == 0 || stopped_by_us);
                    if since.duration_since(slot.started) < QUICK_EXIT {
                        slot.quick_exits += 1;
                        slot.quick_failures = if code == 0 {
                            0
                        } else {
                            slot.quick_failures + 1
                        };
                    } else {
                        slot.quick_exits = 0;
                        slot.quick_failures = 0;
                    }
                    let may_respawn = slot
                        .spec
                        .respawn
                        .is_some_and(|r| r.max_retries.is_none_or(|m| slot.retries < m));
                    if !shutting_down && may_respawn && slot.quick_failures >= MAX_QUICK_FAILURES {
                        console.launcher(
                            "ERROR",
                            label,
                            &format!(
                                "not respawning any more: the process failed {} times in a row \
                                 within {} s of starting (rpq_launch's limit)",
                                slot.quick_failures,
                                QUICK_EXIT.as_secs()
                            ),
                        );
                        slot.state = State::Done;
                    } else if !shutting_down && may_respawn {
                        slot.retries += 1;
                        let respawn_delay = slot.spec.respawn.map(|r| r.delay).unwrap_or_default();
                        let delay = respawn_backoff(respawn_delay, slot.quick_exits);
                        if delay > respawn_delay {
                            console.launcher(
                                "WARNING",
                                label,
                                &format!(
                                    "exited {} times in a row within {} s of starting: \
                                     respawning in {:.1} s",
                                    slot.quick_exits,
                                    QUICK_EXIT.as_secs(),
                                    delay.as_secs_f64()
                                ),
                            );
                        }
                        slot.state = State::Waiting { until: now + delay };
                    } else {
                        slot.state = State::Done;
                    }
                    if slot.spec.shutdown_on_exit && !shutting_down && shutdown_reason.is_none() {
                        shutdown_reason = Some(format!(
                            "process [{label}] exited and has on_exit=\"shutdown\""
                        ));
                    }
                }
                State::Waiting { until } => {
                    if now >= *until {
                        console.launcher(
                            "INFO",
                            &slot.spec.label,
                            &format!(
                                "respawning (restart {}{})",
                                slot.retries,
                                slot.spec
                                    .respawn
                                    .and_then(|r| r.max_retries)
                                    .map(|m| format!(" of {m}"))
                                    .unwrap_or_default()
                            ),
                        );
                        launch(slot);
                    }
                }
                State::Done => {}
            }
        }
        if let Some(reason) = shutdown_reason {
            shutting_down = true;
            shutdown(&mut slots, &reason);
        }
        if slots.iter().all(|s| matches!(s.state, State::Done)) {
            break;
        }
        thread::sleep(POLL);
    }

    Ok(slots
        .iter()
        .map(|s| ProcessOutcome {
            label: s.spec.label.clone(),
            failed: s.failed,
        })
        .collect())
}

/// The directory for this run's log file, as ROS 2 names it:
/// `$ROS_LOG_DIR` or `$ROS_HOME/log` or `~/.ros/log`, then `<UTC date-time>-<host>-<pid>`.
pub fn log_directory(env: &std::collections::BTreeMap<String, String>) -> Option<PathBuf> {
    let base = if let Some(d) = env.get("ROS_LOG_DIR").filter(|d| !d.is_empty()) {
        PathBuf::from(d)
    } else if let Some(h) = env.get("ROS_HOME").filter(|d| !d.is_empty()) {
        Path::new(h).join("log")
    } else {
        Path::new(env.get("HOME")?).join(".ros/log")
    };
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    Some(base.join(format!(
        "{}-{}-{}",
        utc_stamp(now),
        hostname(),
        std::process::id()
    )))
}

/// This machine's host name (for log directories and `$(anon)`).
pub fn hostname() -> String {
    nix::unistd::gethostname()
        .ok()
        .and_then(|h| h.into_string().ok())
        .unwrap_or_else(|| "localhost".to_string())
}

/// `YYYY-MM-DD-HH-MM-SS-ffffff` (UTC) for a time since the Unix epoch.
pub fn utc_stamp(since_epoch: Duration) -> String {
    let secs = since_epoch.as_secs();
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    let rem = secs % 86_400;
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}-{:02}-{:02}-{:02}-{:06}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        since_epoch.subsec_micros()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_stamps() {
        assert_eq!(utc_stamp(Duration::ZERO), "1970-01-01-00-00-00-000000");
        // 2000-02-29T12:34:56.789012Z
        assert_eq!(
            utc_stamp(Duration::new(951_827_696, 789_012_000)),
            "2000-02-29-12-34-56-789012"
        );
        // 2024-12-31T23:59:59Z
        assert_eq!(
            utc_stamp(Duration::from_secs(1_735_689_599)),
            "2024-12-31-23-59-59-000000"
        );
    }

    #[test]
    fn log_directory_precedence() {
        let env = |pairs: &[(&str, &str)]| {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect::<std::collections::BTreeMap<_, _>>()
        };
        let d = log_directory(&env(&[("HOME", "/h"), ("ROS_LOG_DIR", "/logs")])).unwrap();
        assert!(d.starts_with("/logs"));
        let d = log_directory(&env(&[("HOME", "/h"), ("ROS_HOME", "/rh")])).unwrap();
        assert!(d.starts_with("/rh/log"));
        let d = log_directory(&env(&[("HOME", "/h")])).unwrap();
        assert!(d.starts_with("/h/.ros/log"));
        assert!(d
            .to_string_lossy()
            .ends_with(&format!("-{}", std::process::id())));
        assert_eq!(log_directory(&env(&[])), None);
    }
}
