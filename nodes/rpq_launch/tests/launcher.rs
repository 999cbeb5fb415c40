//! Runs the `rpq_launch` binary on small launch files whose nodes are shell scripts in a fake
//! colcon install space (AMENT_PREFIX_PATH points at a temporary directory). Checks argv,
//! output prefixing, signal forwarding, escalation, respawn and exit codes, and the hardening
//! against hostile launch files and a killed launcher (issue 12). No DDS here.
//!
//! `RPQ_LAUNCH_UNDER_TEST=<path>` runs another `rpq_launch` binary (e.g. an older build, to see
//! a regression test fail on it).

use std::fs;
use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::thread;
use std::time::{Duration, Instant};

const LAUNCHER: &str = env!("CARGO_BIN_EXE_rpq_launch");

/// The fake node: prints its argv, one stderr line and an env variable, then behaves as its
/// first argument says. Its waiting loops end by themselves after ~10 s so that nothing can
/// outlive a failed test for long.
const NODE_SCRIPT: &str = r#"#!/bin/sh
for a in "$@"; do echo "argv: $a"; done
echo "stderr: hello" >&2
echo "env: ${FAKE_VAR:-unset}"
wait_loop() { i=0; while [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done; }
case "$1" in
  exit3) exit 3 ;;
  wait) trap 'echo "got SIGINT"; exit 0' INT; echo ready; wait_loop; exit 9 ;;
  stubborn) trap '' INT TERM; echo ready; wait_loop; exit 9 ;;
  late) sleep 0.6; echo "late output"; exit 0 ;;
  guard) mark="$2"; trap 'echo "got TERM" >> "$mark"; exit 0' TERM; echo ready; wait_loop; exit 9 ;;
  crash) echo "start $(date +%s.%N)"; exit 1 ;;
  *) exit 0 ;;
esac
"#;

struct World {
    dir: tempfile::TempDir,
}

impl World {
    fn new() -> World {
        let dir = tempfile::tempdir().unwrap();
        let install = dir.path().join("install");
        let marker = install.join("share/ament_index/resource_index/packages/fake_pkg");
        fs::create_dir_all(marker.parent().unwrap()).unwrap();
        fs::write(&marker, "").unwrap();
        let node = install.join("lib/fake_pkg/talker");
        fs::create_dir_all(node.parent().unwrap()).unwrap();
        fs::write(&node, NODE_SCRIPT).unwrap();
        fs::set_permissions(&node, fs::Permissions::from_mode(0o755)).unwrap();
        fs::create_dir_all(dir.path().join("logs")).unwrap();
        World { dir }
    }

    fn install(&self) -> PathBuf {
        self.dir.path().join("install")
    }

    fn talker(&self) -> String {
        self.install()
            .join("lib/fake_pkg/talker")
            .display()
            .to_string()
    }

    /// Writes a launch file and returns its path.
    fn launch_file(&self, name: &str, body: &str) -> PathBuf {
        let p = self.dir.path().join(name);
        fs::write(&p, format!("<launch>\n{body}\n</launch>\n")).unwrap();
        p
    }

    fn command(&self, args: &[&str]) -> Command {
        let launcher = std::env::var("RPQ_LAUNCH_UNDER_TEST").unwrap_or(LAUNCHER.to_string());
        // At most 2 GiB of address space: a launcher that grew without bound would be stopped
        // by an allocation failure instead of exhausting the machine.
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "ulimit -v 2097152 && exec \"$0\" \"$@\"", &launcher])
            .args(args)
            .current_dir(self.dir.path())
            .env("AMENT_PREFIX_PATH", self.install())
            .env("ROS_LOG_DIR", self.dir.path().join("logs"))
            .env_remove("FAKE_VAR")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        cmd
    }

    fn spawn(&self, args: &[&str]) -> Running {
        Running::new(self.command(args).spawn().unwrap())
    }

    /// Runs to completion (at most `limit`).
    fn run(&self, args: &[&str], limit: Duration) -> Finished {
        self.spawn(args).finish(limit)
    }
}

struct Running {
    child: Child,
    lines: Receiver<String>,
    stdout: Vec<String>,
    stderr_thread: Option<thread::JoinHandle<String>>,
}

struct Finished {
    code: Option<i32>,
    stdout: Vec<String>,
    stderr: String,
    elapsed: Duration,
}

impl Running {
    fn new(mut child: Child) -> Running {
        let out = child.stdout.take().unwrap();
        let err = child.stderr.take().unwrap();
        let (tx, rx) = channel();
        thread::spawn(move || {
            for line in BufReader::new(out).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stderr_thread = thread::spawn(move || std::io::read_to_string(err).unwrap_or_default());
        Running {
            child,
            lines: rx,
            stdout: Vec::new(),
            stderr_thread: Some(stderr_thread),
        }
    }

    /// Waits until `count` stdout lines contain `needle`.
    fn wait_for(&mut self, needle: &str, count: usize, limit: Duration) {
        let deadline = Instant::now() + limit;
        while self.stdout.iter().filter(|l| l.contains(needle)).count() < count {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => self.stdout.push(line),
                Err(_) => {
                    let _ = self.child.kill();
                    panic!(
                        "timed out waiting for {needle:?}; output so far:\n{}",
                        self.stdout.join("\n")
                    );
                }
            }
        }
    }

    fn signal(&self, sig: nix::sys::signal::Signal) {
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(self.child.id() as i32), sig).unwrap();
    }

    fn finish(mut self, limit: Duration) -> Finished {
        let start = Instant::now();
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            if start.elapsed() > limit {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!(
                    "rpq_launch did not finish within {limit:?}; output:\n{}",
                    self.stdout.join("\n")
                );
            }
            thread::sleep(Duration::from_millis(10));
        };
        let elapsed = start.elapsed();
        while let Ok(line) = self.lines.recv_timeout(Duration::from_secs(2)) {
            self.stdout.push(line);
        }
        let stderr = self.stderr_thread.take().unwrap().join().unwrap();
        Finished {
            code: status.code(),
            stdout: self.stdout,
            stderr,
            elapsed,
        }
    }
}

impl Finished {
    fn has(&self, line: &str) -> bool {
        self.stdout.iter().any(|l| l == line)
    }

    fn index(&self, needle: &str) -> usize {
        self.stdout
            .iter()
            .position(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("no line with {needle:?} in:\n{}", self.stdout.join("\n")))
    }

    fn count(&self, needle: &str) -> usize {
        self.stdout.iter().filter(|l| l.contains(needle)).count()
    }

    fn dump(&self) -> String {
        format!(
            "stdout:\n{}\nstderr:\n{}",
            self.stdout.join("\n"),
            self.stderr
        )
    }
}

const LIMIT: Duration = Duration::from_secs(20);

fn path_str(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn print_shows_the_resolved_command_lines() {
    let w = World::new();
    let f = w.launch_file(
        "print.launch.xml",
        r#"<arg name="rate" default="10"/>
<node pkg="fake_pkg" exec="talker" name="t1" namespace="ns" args="a 'b c'">
  <param name="rate" value="$(var rate)"/>
  <param name="frame" value="$(var rate)" type="str"/>
  <remap from="in" to="out"/>
</node>
<node pkg="rpq_launch" exec="rpq_launch" args="--help"/>"#,
    );
    let r = w.run(&["--print", path_str(&f), "rate:=20"], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.dump());
    let expected = format!(
        "[talker-1] {} a 'b c' --ros-args -r __node:=t1 -r __ns:=/ns -p rate:=20 \
         -p 'frame:='\\''20'\\''' -r in:=out",
        w.talker()
    );
    assert!(r.has(&expected), "missing {expected}\n{}", r.dump());
    // A workspace binary resolves to the directory of the running rpq_launch.
    let target_dir = Path::new(LAUNCHER).parent().unwrap();
    let expected = format!(
        "[rpq_launch-2] {} --help --ros-args",
        target_dir.join("rpq_launch").display()
    );
    assert!(r.has(&expected), "missing {expected}\n{}", r.dump());
    // --print runs nothing
    assert_eq!(r.count("argv:"), 0);
}

#[test]
fn runs_nodes_with_prefixed_output_argv_and_environment() {
    let w = World::new();
    let f = w.launch_file(
        "run.launch.xml",
        r#"<set_env name="FAKE_VAR" value="from_set_env"/>
<node pkg="fake_pkg" exec="talker" name="first" args="plain 'two words'" output="screen">
  <param name="gain" value="2.0"/>
</node>
<node pkg="fake_pkg" exec="talker" exec_name="second" args="quiet">
  <env name="FAKE_VAR" value="from_env_child"/>
</node>"#,
    );
    let r = w.run(&[path_str(&f)], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.dump());
    for line in [
        "[talker-1] argv: plain",
        "[talker-1] argv: two words",
        "[talker-1] argv: --ros-args",
        "[talker-1] argv: -r",
        "[talker-1] argv: __node:=first",
        "[talker-1] argv: -p",
        "[talker-1] argv: gain:=2.0",
        "[talker-1] stderr: hello",
        "[talker-1] env: from_set_env",
        // output="log" (the default): stderr on the screen, stdout only in the log file
        "[second-2] stderr: hello",
    ] {
        assert!(r.has(line), "missing {line:?}\n{}", r.dump());
    }
    assert_eq!(r.count("[second-2] argv:"), 0, "{}", r.dump());
    assert_eq!(r.count("[talker-1] argv:"), 7, "{}", r.dump());
    assert!(
        r.index("[INFO] [talker-1]: process started with pid [")
            < r.index("[talker-1] argv: plain")
    );
    assert!(
        r.index("[talker-1] env: from_set_env")
            < r.index("[INFO] [talker-1]: process has finished cleanly")
    );
    assert!(r.count("[INFO] [second-2]: process has finished cleanly") == 1);

    // the log file has the stdout of the output="log" process
    let logs: Vec<_> = fs::read_dir(w.dir.path().join("logs")).unwrap().collect();
    assert_eq!(logs.len(), 1);
    let log = fs::read_to_string(logs[0].as_ref().unwrap().path().join("launch.log")).unwrap();
    assert!(log.contains("[second-2] argv: quiet"), "{log}");
    assert!(log.contains("[second-2] env: from_env_child"), "{log}");
    assert!(r.stdout[0].starts_with("[INFO] [launch]: All log files can be found below "));
}

#[test]
fn a_failing_node_sets_the_exit_code_and_the_others_keep_running() {
    let w = World::new();
    let f = w.launch_file(
        "fail.launch.xml",
        r#"<node pkg="fake_pkg" exec="talker" args="exit3" output="screen"/>
<node pkg="fake_pkg" exec="talker" args="late" output="screen"/>"#,
    );
    let r = w.run(&[path_str(&f)], LIMIT);
    assert_eq!(r.code, Some(1), "{}", r.dump());
    let died = r.index("[ERROR] [talker-1]: process has died [pid ");
    assert!(r.stdout[died].contains("exit code 3"), "{}", r.dump());
    assert!(
        r.stdout[died].contains(&format!("cmd '{} exit3 --ros-args'", w.talker())),
        "{}",
        r.dump()
    );
    // the other node was not stopped: its late line comes after the failure
    assert!(died < r.index("[talker-2] late output"), "{}", r.dump());
    assert!(
        r.has("[ERROR] [launch]: process(es) failed: talker-1"),
        "{}",
        r.dump()
    );
}

#[test]
fn sigint_is_forwarded_to_every_node() {
    let w = World::new();
    let f = w.launch_file(
        "wait.launch.xml",
        r#"<node pkg="fake_pkg" exec="talker" args="wait" output="screen"/>
<node pkg="fake_pkg" exec="talker" args="wait" output="screen"/>"#,
    );
    let mut run = w.spawn(&[path_str(&f)]);
    run.wait_for("] ready", 2, LIMIT);
    run.signal(nix::sys::signal::Signal::SIGINT);
    let r = run.finish(LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.dump());
    assert!(r.has("[talker-1] got SIGINT"), "{}", r.dump());
    assert!(r.has("[talker-2] got SIGINT"), "{}", r.dump());
    assert!(
        r.has("[INFO] [launch]: shutting down: SIGINT received"),
        "{}",
        r.dump()
    );
    assert_eq!(r.count("process has finished cleanly"), 2, "{}", r.dump());
    assert!(r.elapsed < Duration::from_secs(4), "{:?}", r.elapsed);
}

#[test]
fn a_node_ignoring_signals_is_escalated_to_sigkill() {
    let w = World::new();
    let f = w.launch_file(
        "stubborn.launch.xml",
        r#"<node pkg="fake_pkg" exec="talker" args="stubborn" output="screen"
      sigterm_timeout="0.3" sigkill_timeout="0.3"/>
<node pkg="fake_pkg" exec="talker" args="wait" output="screen"/>"#,
    );
    let mut run = w.spawn(&[path_str(&f)]);
    run.wait_for("] ready", 2, LIMIT);
    run.signal(nix::sys::signal::Signal::SIGTERM);
    let r = run.finish(LIMIT);
    assert_eq!(r.code, Some(1), "{}", r.dump());
    let to_term = r.index(
        "failed to terminate '0.3' seconds after receiving 'SIGINT', escalating to 'SIGTERM'",
    );
    let to_kill = r.index(
        "failed to terminate '0.3' seconds after receiving 'SIGTERM', escalating to 'SIGKILL'",
    );
    assert!(to_term < to_kill);
    assert!(r.stdout[r.index("[ERROR] [talker-1]: process has died")].contains("exit code -9"));
    assert!(r.has("[talker-2] got SIGINT"), "{}", r.dump());
    assert!(
        r.has("[ERROR] [launch]: process(es) failed: talker-1"),
        "{}",
        r.dump()
    );
    // well before the 10 s the stubborn script would need to end by itself
    assert!(r.elapsed < Duration::from_secs(5), "{:?}", r.elapsed);
}

#[test]
fn respawn_restarts_up_to_the_retry_limit() {
    let w = World::new();
    let f = w.launch_file(
        "respawn.launch.xml",
        r#"<node pkg="fake_pkg" exec="talker" args="once" output="screen" respawn="true"
      respawn_delay="0.1" respawn_max_retries="2"/>"#,
    );
    let r = w.run(&[path_str(&f)], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.dump());
    assert_eq!(r.count("[talker-1] argv: once"), 3, "{}", r.dump());
    assert_eq!(r.count("[INFO] [talker-1]: respawning"), 2, "{}", r.dump());
}

#[test]
fn on_exit_shutdown_stops_the_other_nodes() {
    let w = World::new();
    let f = w.launch_file(
        "on_exit.launch.xml",
        r#"<node pkg="fake_pkg" exec="talker" args="wait" output="screen"/>
<node pkg="fake_pkg" exec="talker" args="late" output="screen" on_exit="shutdown"/>"#,
    );
    let r = w.run(&[path_str(&f)], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.dump());
    assert!(
        r.index("[talker-2] late output") < r.index("[talker-1] got SIGINT"),
        "{}",
        r.dump()
    );
    assert!(r.elapsed < Duration::from_secs(5), "{:?}", r.elapsed);
}

#[test]
fn a_missing_executable_is_a_clear_error() {
    let w = World::new();
    let f = w.launch_file(
        "missing.launch.xml",
        r#"<node pkg="fake_pkg" exec="nope"/>"#,
    );
    let r = w.run(&[path_str(&f)], LIMIT);
    assert_eq!(r.code, Some(2), "{}", r.dump());
    assert!(
        r.stderr
            .contains("executable 'nope' of package 'fake_pkg' not found"),
        "{}",
        r.dump()
    );
    assert!(
        r.stderr
            .contains(&format!("{}/lib/fake_pkg/nope", w.install().display())),
        "{}",
        r.dump()
    );
    assert!(r.stderr.contains("missing.launch.xml:2:1"), "{}", r.dump());

    let f = w.launch_file("ghost.launch.xml", r#"<node pkg="ghost_pkg" exec="x"/>"#);
    let r = w.run(&["--print", path_str(&f)], LIMIT);
    assert_eq!(r.code, Some(2), "{}", r.dump());
    assert!(
        r.stderr
            .contains("'ghost_pkg' is not a package of the workspace"),
        "{}",
        r.dump()
    );
}

#[test]
fn argument_errors() {
    let w = World::new();
    let f = w.launch_file(
        "args.launch.xml",
        r#"<arg name="robot" description="the robot"/>
<arg name="rate" default="10"/>"#,
    );
    let r = w.run(&[path_str(&f)], LIMIT);
    assert_eq!(r.code, Some(2), "{}", r.dump());
    assert!(
        r.stderr
            .contains("required launch argument 'robot' was not given"),
        "{}",
        r.dump()
    );

    let r = w.run(&[path_str(&f), "robot:=x", "rat:=1"], LIMIT);
    assert_eq!(r.code, Some(2), "{}", r.dump());
    assert!(
        r.stderr
            .contains("unknown launch argument(s): rat; valid arguments: rate, robot"),
        "{}",
        r.dump()
    );

    let r = w.run(&[path_str(&f), "robot:=x"], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.dump());
    assert!(
        r.has("[INFO] [launch]: no processes to run"),
        "{}",
        r.dump()
    );
}

#[test]
fn unsupported_content_is_rejected_with_its_location() {
    let w = World::new();
    let f = w.launch_file(
        "bad.launch.xml",
        r#"<node pkg="fake_pkg" exec="talker"/>
<set-env name="A" value="1"/>"#,
    );
    let r = w.run(&[path_str(&f)], LIMIT);
    assert_eq!(r.code, Some(2), "{}", r.dump());
    assert!(
        r.stderr
            .contains("bad.launch.xml:3:1: unsupported tag <set-env>"),
        "{}",
        r.dump()
    );
    assert_eq!(r.count("argv:"), 0, "nothing may run: {}", r.dump());
}

#[test]
fn package_mode_and_show_args() {
    let w = World::new();
    let share = w.install().join("share/fake_pkg/launch");
    fs::create_dir_all(&share).unwrap();
    fs::write(
        share.join("demo.launch.xml"),
        r#"<launch>
  <arg name="mode" default="sim" description="sim or real"><choice value="sim"/><choice value="real"/></arg>
  <include file="$(dirname)/part.launch.xml"/>
</launch>"#,
    )
    .unwrap();
    fs::write(
        share.join("part.launch.xml"),
        r#"<launch><arg name="extra" default="1"/><node pkg="fake_pkg" exec="talker" args="$(var mode) $(var extra)" output="screen"/></launch>"#,
    )
    .unwrap();
    let r = w.run(&["fake_pkg", "demo.launch.xml", "--show-args"], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.dump());
    for line in [
        "Arguments (pass arguments as '<name>:=<value>'):",
        "    'mode':",
        "        sim or real",
        "        Valid choices are: ['sim', 'real']",
        "        (default: 'sim')",
        "    'extra':",
    ] {
        assert!(r.has(line), "missing {line:?}\n{}", r.dump());
    }
    let r = w.run(
        &["fake_pkg", "demo.launch.xml", "mode:=real", "extra:=7"],
        LIMIT,
    );
    assert_eq!(r.code, Some(0), "{}", r.dump());
    assert!(r.has("[talker-1] argv: real"), "{}", r.dump());
    assert!(r.has("[talker-1] argv: 7"), "{}", r.dump());

    let r = w.run(&["fake_pkg", "nope.launch.xml"], LIMIT);
    assert_eq!(r.code, Some(2), "{}", r.dump());
    assert!(
        r.stderr
            .contains("launch file 'nope.launch.xml': not found"),
        "{}",
        r.dump()
    );
}

/// The pid in a launcher line `[INFO] [label]: process started with pid [1234]`.
fn started_pid(line: &str) -> i32 {
    line.rsplit('[')
        .next()
        .and_then(|s| s.strip_suffix(']'))
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no pid in {line:?}"))
}

/// True while `pid` exists and is not a zombie.
fn alive(pid: i32) -> bool {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let state = stat
        .rsplit(')')
        .next()
        .unwrap_or("")
        .split_whitespace()
        .next();
    !matches!(state, None | Some("Z") | Some("X"))
}

#[test]
fn children_die_with_the_launcher_on_kill_9() {
    let w = World::new();
    let marks: Vec<PathBuf> = (1..=2)
        .map(|i| w.dir.path().join(format!("term-{i}")))
        .collect();
    let f = w.launch_file(
        "guard.launch.xml",
        &format!(
            r#"<node pkg="fake_pkg" exec="talker" args="guard {}" output="screen"/>
<node pkg="fake_pkg" exec="talker" args="guard {}" output="screen"/>"#,
            path_str(&marks[0]),
            path_str(&marks[1])
        ),
    );
    let mut run = w.spawn(&[path_str(&f)]);
    run.wait_for("] ready", 2, LIMIT);
    let pids: Vec<i32> = run
        .stdout
        .iter()
        .filter(|l| l.contains("process started with pid ["))
        .map(|l| started_pid(l))
        .collect();
    assert_eq!(pids.len(), 2, "{}", run.stdout.join("\n"));
    assert!(pids.iter().all(|p| alive(*p)));
    run.signal(nix::sys::signal::Signal::SIGKILL);
    let killed = Instant::now();
    let _ = run.child.wait();
    while pids.iter().any(|p| alive(*p)) && killed.elapsed() < Duration::from_secs(2) {
        thread::sleep(Duration::from_millis(10));
    }
    let left: Vec<i32> = pids.iter().copied().filter(|p| alive(*p)).collect();
    for p in &left {
        let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(*p), nix::sys::signal::SIGKILL);
    }
    assert!(
        left.is_empty(),
        "children {left:?} still running 2 s after kill -9 of the launcher"
    );
    // They were asked to stop (SIGTERM, which the nodes answer with their stop command).
    for m in &marks {
        let deadline = Instant::now() + Duration::from_secs(1);
        while !m.exists() && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(10));
        }
        let text = fs::read_to_string(m).unwrap_or_default();
        assert_eq!(text, "got TERM\n", "{}", m.display());
    }
}

#[test]
fn a_crash_looping_node_is_respawned_with_back_off_then_given_up() {
    let w = World::new();
    let f = w.launch_file(
        "crash.launch.xml",
        r#"<node pkg="fake_pkg" exec="talker" args="crash" output="screen" respawn="true"/>"#,
    );
    let r = w.run(&[path_str(&f)], Duration::from_secs(15));
    assert_eq!(r.code, Some(1), "{}", r.dump());
    let starts: Vec<f64> = r
        .stdout
        .iter()
        .filter_map(|l| l.strip_prefix("[talker-1] start "))
        .map(|t| t.trim().parse().unwrap())
        .collect();
    // 8 quick failures in a row, then no more restarts.
    assert_eq!(starts.len(), 8, "{}", r.dump());
    assert!(
        r.has(
            "[ERROR] [talker-1]: not respawning any more: the process failed 8 times in a row \
             within 10 s of starting (rpq_launch's limit)"
        ),
        "{}",
        r.dump()
    );
    // The first restart follows respawn_delay (0, as in ROS 2), then the delay doubles from
    // 0.1 s: 0, 0.1, 0.2, 0.4, 0.8, 1.6, 3.2 s between starts (plus the run time).
    let gaps: Vec<f64> = starts.windows(2).map(|p| p[1] - p[0]).collect();
    for (i, (gap, want)) in gaps
        .iter()
        .zip([0.0, 0.1, 0.2, 0.4, 0.8, 1.6, 3.2])
        .enumerate()
    {
        assert!(
            *gap >= want - 0.01 && *gap < want + 1.0,
            "gap {i} is {gap:.3} s, expected {want} s: {gaps:?}"
        );
    }
    assert!(
        r.has("[WARNING] [talker-1]: exited 7 times in a row within 10 s of starting: respawning in 3.2 s"),
        "{}",
        r.dump()
    );
}

/// `--print` of a launch file with `body` inside `<launch>`: (exit code, stderr, time taken).
fn print_error(w: &World, name: &str, body: &str) -> (Option<i32>, String, Duration) {
    let f = w.launch_file(name, body);
    let r = w.run(&["--print", path_str(&f)], LIMIT);
    (r.code, r.stderr, r.elapsed)
}

#[test]
fn deep_nesting_is_a_clear_error_not_a_crash() {
    let w = World::new();
    for depth in [3_000, 100_000] {
        let body = format!("{}{}", "<group>".repeat(depth), "</group>".repeat(depth));
        let (code, stderr, took) = print_error(&w, "deep.launch.xml", &body);
        assert_eq!(code, Some(2), "{depth}: {stderr}");
        // <launch> is on line 1, the groups on line 2: the 64th group is the 65th level.
        assert!(
            stderr.contains("deep.launch.xml:2:442: elements nested deeper than 64 levels"),
            "{depth}: {stderr}"
        );
        assert!(took < Duration::from_secs(2), "{depth}: {took:?}");
    }
    // Nested <param>s count too.
    let body = format!(
        r#"<node pkg="fake_pkg" exec="talker">{}<param name="x" value="1"/>{}</node>"#,
        r#"<param name="p">"#.repeat(100_000),
        "</param>".repeat(100_000)
    );
    let (code, stderr, _) = print_error(&w, "params.launch.xml", &body);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("nested deeper than 64 levels"), "{stderr}");
    // Substitutions nested in one attribute.
    let body = format!(
        r#"<let name="a" value="{}x{}"/>"#,
        "$(var ".repeat(100_000),
        ")".repeat(100_000)
    );
    let (code, stderr, _) = print_error(&w, "subst.launch.xml", &body);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("subst.launch.xml:2:15: bad substitution syntax"),
        "{stderr}"
    );
    assert!(
        stderr.contains("substitutions nested deeper than 32 levels"),
        "{stderr}"
    );
    assert!(
        stderr.len() < 2000,
        "the whole attribute is echoed: {} bytes",
        stderr.len()
    );
    // Groups spread over included files count together: 62 groups and an include in each of
    // two files, then the third group of the last file is level 129.
    let groups = |n: usize, inner: &str| {
        format!(
            "<launch>{}{inner}{}</launch>",
            "<group>".repeat(n),
            "</group>".repeat(n)
        )
    };
    let inc_b = w.dir.path().join("inc_b.launch.xml");
    fs::write(&inc_b, groups(10, "")).unwrap();
    let inc_a = w.dir.path().join("inc_a.launch.xml");
    let include = |p: &Path| format!("<include file=\"{}\"/>", path_str(p));
    fs::write(&inc_a, groups(62, &include(&inc_b))).unwrap();
    let outer = w.dir.path().join("spread.launch.xml");
    fs::write(&outer, groups(62, &include(&inc_a))).unwrap();
    let r = w.run(&["--print", path_str(&outer)], LIMIT);
    assert_eq!(r.code, Some(2), "{}", r.dump());
    assert!(
        r.stderr.contains(&format!(
            "{}:1:23: <group>s and <include>s nested deeper than 128 levels",
            inc_b.display()
        )),
        "{}",
        r.dump()
    );
}

#[test]
fn doubling_lets_are_a_clear_error_within_bounds() {
    let w = World::new();
    let body = format!(
        r#"<let name="x" value="ab"/>
{}"#,
        r#"<let name="x" value="$(var x)$(var x)"/>
"#
        .repeat(64)
    );
    let (code, stderr, took) = print_error(&w, "double.launch.xml", &body);
    assert_eq!(code, Some(2), "{stderr}");
    // 2 bytes doubled 16 times is 128 KiB; the 17th doubling (line 19) is refused.
    assert!(
        stderr.contains(
            "double.launch.xml:19:1: a substitution result is longer than 128 KiB \
             (rpq_launch's limit"
        ),
        "{stderr}"
    );
    assert!(took < Duration::from_secs(2), "{took:?}");

    // Many large values: the total is bounded too.
    let body = format!(
        r#"<let name="x" value="ab"/>
{}{}"#,
        r#"<let name="x" value="$(var x)$(var x)"/>
"#
        .repeat(15),
        r#"<let name="y" value="$(var x)"/>
"#
        .repeat(2_000)
    );
    let (code, stderr, took) = print_error(&w, "many.launch.xml", &body);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("substitutions expand to more than 64 MiB in total"),
        "{stderr}"
    );
    assert!(took < Duration::from_secs(2), "{took:?}");
}

#[test]
fn special_and_oversized_files_are_refused_at_once() {
    let w = World::new();
    let dir = w.dir.path();
    let fifo = dir.join("fifo.launch.xml");
    let status = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(status.success());
    let zero = dir.join("zero.launch.xml");
    std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
    let big = dir.join("big.launch.xml");
    fs::write(&big, format!("<launch>{}</launch>", " ".repeat(5 << 20))).unwrap();

    let cases = [
        (&fifo, "is a FIFO, not a regular file"),
        (&zero, "files under /proc, /sys and /dev are not read"),
        (&big, "larger than the limit of 4194304 bytes"),
    ];
    for (file, reason) in cases {
        // As the launch file.
        let r = w.run(&["--print", path_str(file)], LIMIT);
        assert_eq!(r.code, Some(2), "{}", r.dump());
        assert!(
            r.stderr
                .contains(&format!("cannot read '{}': {reason}", file.display())),
            "{}",
            r.dump()
        );
        assert!(r.elapsed < Duration::from_secs(1), "{:?}", r.elapsed);
        // As an included file.
        let f = w.launch_file(
            "includes.launch.xml",
            &format!(r#"<include file="{}"/>"#, path_str(file)),
        );
        let r = w.run(&["--print", path_str(&f)], LIMIT);
        assert_eq!(r.code, Some(2), "{}", r.dump());
        assert!(r.stderr.contains(reason), "{}", r.dump());
        assert!(r.elapsed < Duration::from_secs(1), "{:?}", r.elapsed);
    }

    // Parameter files are not read by the launcher, but must be regular files.
    for (from, reason) in [
        (path_str(&fifo), "parameter file is not a regular file"),
        ("/dev/zero", "parameter file is not a regular file"),
        (
            "/proc/self/environ",
            "parameter files under /proc, /sys and /dev are refused",
        ),
    ] {
        let (code, stderr, _) = print_error(
            &w,
            "param_from.launch.xml",
            &format!(r#"<node pkg="fake_pkg" exec="talker"><param from="{from}"/></node>"#),
        );
        assert_eq!(code, Some(2), "{stderr}");
        assert!(stderr.contains(reason), "{from}: {stderr}");
    }
}

#[test]
fn absurd_time_attributes_are_refused() {
    let w = World::new();
    for attr in ["respawn_delay", "sigterm_timeout", "sigkill_timeout"] {
        let (code, stderr, _) = print_error(
            &w,
            "time.launch.xml",
            &format!(r#"<node pkg="fake_pkg" exec="talker" respawn="true" {attr}="1e300"/>"#),
        );
        assert_eq!(code, Some(2), "{attr}: {stderr}");
        assert!(
            stderr.contains(&format!(
                "invalid value for '{attr}' on <node>: '1e300' is more than 1e6 s"
            )),
            "{stderr}"
        );
    }
}

#[test]
fn the_child_trampoline_sets_up_then_executes_or_refuses() {
    let trampoline = |launcher_pid: String, program: &str| {
        Command::new(LAUNCHER)
            .args(["--rpq-launch-exec-child", &launcher_pid, program, "hello"])
            .output()
            .unwrap()
    };
    // Started by the expected parent (this test): the program replaces the trampoline.
    let out = trampoline(std::process::id().to_string(), "echo");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "hello\n");
    // The launcher named is not the parent any more (it died before the parent-death signal
    // was set): the program is not started.
    let out = trampoline("1".to_string(), "echo");
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(out.stdout.is_empty(), "{out:?}");
    // A program that cannot be executed: 127 and the reason.
    let out = trampoline(std::process::id().to_string(), "/nonexistent/program");
    assert_eq!(out.status.code(), Some(127), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("rpq_launch: cannot execute '/nonexistent/program': No such file"),
        "{out:?}"
    );
}
