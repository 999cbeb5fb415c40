//! Harness for the suite's cross-crate, interop and rosbag replay tests.
//!
//! Every test that opens DDS sockets calls [`require_private_netns`] first: the suite's rule is
//! that DDS traffic never leaves loopback, so such tests run only inside the private network
//! namespace that `tests/run_all.sh` sets up (via `../shared/netns-run`). Tests run in parallel
//! inside that one namespace, so each takes its own ROS domain from [`next_domain_id`].
#![warn(missing_docs)]

pub mod controller_bag;
pub mod fuzz;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The repository root (the workspace directory).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf()
}

/// Panics with an explanation unless this process runs in a network namespace whose only
/// interface is loopback. Call it at the start of every test that opens DDS sockets.
pub fn require_private_netns() {
    // /proc/self/net/dev lists the interfaces of this process's network namespace
    // (/sys/class/net may still show the host's, since sysfs is not remounted by `unshare`).
    let ifaces = net_interfaces();
    assert!(
        ifaces == ["lo"],
        "this test opens DDS sockets and must run inside a private loopback-only network \
         namespace (found interfaces {ifaces:?}); run it through tests/run_all.sh or \
         `../shared/netns-run cargo test ...`"
    );
}

/// Names of the network interfaces of this process's namespace, sorted.
pub fn net_interfaces() -> Vec<String> {
    let text = std::fs::read_to_string("/proc/self/net/dev").unwrap_or_default();
    let mut ifaces: Vec<String> = text
        .lines()
        .skip(2)
        .filter_map(|l| l.split(':').next())
        .map(|n| n.trim().to_string())
        .filter(|n| !n.is_empty())
        .collect();
    ifaces.sort();
    ifaces
}

static NEXT_DOMAIN: AtomicU16 = AtomicU16::new(0);

/// A ROS domain id no other test of this process uses (1..=200, cycling).
pub fn next_domain_id() -> u16 {
    1 + NEXT_DOMAIN.fetch_add(1, Ordering::Relaxed) % 200
}

/// Directory holding the workspace's binaries for the profile this test was built with
/// (`target/release` or `target/debug`).
pub fn bin_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    // target/<profile>/deps/<test-binary>
    exe.parent()
        .and_then(Path::parent)
        .expect("test binary lives in target/<profile>/deps")
        .to_path_buf()
}

/// Path of a workspace binary; panics with a hint if it was not built.
pub fn bin(name: &str) -> PathBuf {
    let p = bin_dir().join(name);
    assert!(
        p.is_file(),
        "binary {} is missing: build the workspace first (`cargo build --release --workspace`)",
        p.display()
    );
    p
}

/// The Python interpreter of the peers' venv (`$RPQ_PYENV/bin/python`).
///
/// Panics with instructions if the venv was not prepared: tests against third-party peers must
/// fail, not skip, when the peers are missing.
pub fn python() -> PathBuf {
    let venv = std::env::var_os("RPQ_PYENV").map(PathBuf::from).unwrap_or_else(|| {
        panic!("RPQ_PYENV is not set: run the tests through tests/run_all.sh, which creates the peers' venv")
    });
    let py = venv.join("bin").join("python");
    assert!(
        py.is_file(),
        "no Python at {}: run tests/setup_pyenv.sh {}",
        py.display(),
        venv.display()
    );
    py
}

/// A Python peer script from `tests/python/`.
pub fn peer_script(name: &str) -> PathBuf {
    repo_root().join("tests").join("python").join(name)
}

/// Environment shared by every process of one test: its ROS domain and the Cyclone config.
#[derive(Debug, Clone)]
pub struct TestEnv {
    /// ROS_DOMAIN_ID for all processes of the test.
    pub domain_id: u16,
    /// Extra environment variables (name, value).
    pub vars: Vec<(String, String)>,
}

impl TestEnv {
    /// A fresh environment on its own domain; checks the network namespace first.
    pub fn new() -> Self {
        require_private_netns();
        let cyclone = repo_root().join("tests").join("cyclonedds.xml");
        TestEnv {
            domain_id: next_domain_id(),
            vars: vec![(
                "CYCLONEDDS_URI".into(),
                format!("file://{}", cyclone.display()),
            )],
        }
    }

    /// Adds or replaces a variable.
    pub fn with(mut self, name: &str, value: &str) -> Self {
        self.vars.retain(|(n, _)| n != name);
        self.vars.push((name.into(), value.into()));
        self
    }

    /// A command with this environment applied (`ROS_DOMAIN_ID` and the extra variables).
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut c = Command::new(program);
        c.env("ROS_DOMAIN_ID", self.domain_id.to_string());
        c.env_remove("RMW_IMPLEMENTATION");
        for (n, v) in &self.vars {
            c.env(n, v);
        }
        c
    }

    /// Runs a Python peer script to completion. The peer bounds its own run time with
    /// `--timeout` (default 20 s); should its watchdog fail, the peer is killed 30 s after that
    /// and the test fails (see [`run_with_timeout`]).
    pub fn run_peer(&self, script: &str, args: &[&str]) -> PeerOutput {
        let mut cmd = self.command(python());
        cmd.arg(peer_script(script)).args(args);
        let bound = Duration::from_secs_f64(peer_timeout_s(args)) + Duration::from_secs(30);
        run_with_timeout(&format!("python peer {script}"), cmd, bound)
    }
}

impl Default for TestEnv {
    fn default() -> Self {
        Self::new()
    }
}

/// What a peer printed: stdout parsed as one JSON value per line, plus the raw streams.
#[derive(Debug)]
pub struct PeerOutput {
    /// Exit status success.
    pub success: bool,
    /// Raw standard output.
    pub stdout: String,
    /// Raw standard error.
    pub stderr: String,
    /// Exit code (`None` if a signal ended the process).
    pub code: Option<i32>,
}

impl From<Output> for PeerOutput {
    fn from(o: Output) -> Self {
        PeerOutput {
            success: o.status.success(),
            code: o.status.code(),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }
}

impl PeerOutput {
    /// Panics with both streams unless the peer exited successfully.
    pub fn assert_ok(&self, what: &str) -> &Self {
        assert!(
            self.success,
            "{what} failed\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.stdout, self.stderr
        );
        self
    }

    /// Lines of stdout that parse as YAML/JSON mappings (JSON is YAML).
    pub fn records(&self) -> Vec<serde_yaml::Value> {
        self.stdout
            .lines()
            .filter(|l| l.trim_start().starts_with('{'))
            .filter_map(|l| serde_yaml::from_str(l).ok())
            .collect()
    }
}

/// A running node (child process) whose output is collected; stopped with SIGINT on drop.
pub struct NodeProcess {
    name: String,
    child: Option<Child>,
    lines: Arc<Mutex<Vec<String>>>,
}

impl std::fmt::Debug for NodeProcess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NodeProcess")
            .field("name", &self.name)
            .finish()
    }
}

impl NodeProcess {
    /// Starts `cmd` with piped stdout/stderr; `name` labels its output in failure messages.
    pub fn spawn(name: &str, mut cmd: Command) -> Self {
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {name}: {e}"));
        let lines = Arc::new(Mutex::new(Vec::new()));
        for stream in [
            child
                .stdout
                .take()
                .map(|s| Box::new(s) as Box<dyn std::io::Read + Send>),
            child
                .stderr
                .take()
                .map(|s| Box::new(s) as Box<dyn std::io::Read + Send>),
        ]
        .into_iter()
        .flatten()
        {
            let lines = Arc::clone(&lines);
            std::thread::spawn(move || {
                for line in BufReader::new(stream).lines().map_while(Result::ok) {
                    lines.lock().unwrap().push(line);
                }
            });
        }
        NodeProcess {
            name: name.to_string(),
            child: Some(child),
            lines,
        }
    }

    /// All output lines so far (stdout and stderr interleaved as read).
    pub fn output(&self) -> Vec<String> {
        self.lines.lock().unwrap().clone()
    }

    /// Waits until an output line contains `needle`; panics with the output on timeout.
    pub fn wait_for_output(&self, needle: &str, timeout: Duration) -> String {
        let t0 = Instant::now();
        loop {
            if let Some(l) = self.output().into_iter().find(|l| l.contains(needle)) {
                return l;
            }
            if t0.elapsed() > timeout {
                panic!(
                    "{} did not print {needle:?} within {timeout:?}; output:\n{}",
                    self.name,
                    self.output().join("\n")
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The process id, while the process has not been stopped or waited for.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// True while the process runs.
    pub fn is_running(&mut self) -> bool {
        matches!(self.child.as_mut().map(|c| c.try_wait()), Some(Ok(None)))
    }

    /// Sends SIGINT and waits up to `grace` for a clean exit (SIGKILL after that).
    /// Returns the exit code (None if killed by a signal).
    pub fn stop(&mut self, grace: Duration) -> Option<i32> {
        let mut child = self.child.take()?;
        signal(child.id(), "INT");
        let t0 = Instant::now();
        loop {
            if let Ok(Some(status)) = child.try_wait() {
                return status.code();
            }
            if t0.elapsed() > grace {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for NodeProcess {
    fn drop(&mut self) {
        self.stop(Duration::from_secs(3));
    }
}

/// Sends a signal by name (`INT`, `TERM`, ...) to a process with the `kill` command.
pub fn signal(pid: u32, name: &str) {
    let _ = Command::new("kill")
        .arg(format!("-{name}"))
        .arg(pid.to_string())
        .status();
}

/// The `--timeout` a peer's arguments give (`--timeout S` or `--timeout=S`), else the peers'
/// default of 20 s.
fn peer_timeout_s(args: &[&str]) -> f64 {
    let mut found = None;
    for (i, a) in args.iter().enumerate() {
        if *a == "--timeout" {
            found = args.get(i + 1).and_then(|v| v.parse::<f64>().ok());
        } else if let Some(v) = a.strip_prefix("--timeout=") {
            found = v.parse::<f64>().ok();
        }
    }
    found.filter(|t| t.is_finite() && *t >= 0.0).unwrap_or(20.0)
}

/// Runs `cmd` to completion with stdin closed and both output streams captured, but for at most
/// `timeout`: a test that waits on a process must fail, not hang, if the process never exits.
///
/// The process runs in a process group of its own. When `timeout` passes, SIGINT goes to that
/// group and to every descendant found then (launchers put their children in groups of their
/// own and forward SIGINT); whatever still runs 5 s later gets SIGKILL. Then this panics with
/// `what`, the bound and the output captured so far.
pub fn run_with_timeout(what: &str, mut cmd: Command, timeout: Duration) -> PeerOutput {
    use std::io::Read;
    use std::os::unix::process::CommandExt;

    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {what}: {e}"));
    let pid = child.id();
    let streams: Vec<Box<dyn Read + Send>> = vec![
        Box::new(child.stdout.take().expect("piped stdout")),
        Box::new(child.stderr.take().expect("piped stderr")),
    ];
    let buffers: Vec<Arc<Mutex<Vec<u8>>>> = streams
        .iter()
        .map(|_| Arc::new(Mutex::new(Vec::new())))
        .collect();
    let readers: Vec<std::thread::JoinHandle<()>> = streams
        .into_iter()
        .zip(&buffers)
        .map(|(mut stream, buf)| {
            let buf = Arc::clone(buf);
            std::thread::spawn(move || {
                let mut chunk = [0u8; 8192];
                while let Ok(n) = stream.read(&mut chunk) {
                    if n == 0 {
                        break;
                    }
                    buf.lock().unwrap().extend_from_slice(&chunk[..n]);
                }
            })
        })
        .collect();
    // Output written by descendants that outlive the process may keep the pipes open: wait for
    // the readers only a little, then take what they have.
    let drain = |readers: Vec<std::thread::JoinHandle<()>>, within: Duration| {
        let t0 = Instant::now();
        while t0.elapsed() < within && !readers.iter().all(|r| r.is_finished()) {
            std::thread::sleep(Duration::from_millis(20));
        }
        let text =
            |b: &Arc<Mutex<Vec<u8>>>| String::from_utf8_lossy(&b.lock().unwrap()).into_owned();
        (text(&buffers[0]), text(&buffers[1]))
    };

    let t0 = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                let (stdout, stderr) = drain(readers, Duration::from_secs(5));
                return PeerOutput {
                    success: status.success(),
                    code: status.code(),
                    stdout,
                    stderr,
                };
            }
            Ok(None) => {}
            Err(e) => panic!("cannot wait for {what} (pid {pid}): {e}"),
        }
        if t0.elapsed() > timeout {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }

    // Timed out: interrupt the whole tree, then kill what remains.
    let tree = descendants(pid);
    signal_group(pid, "INT");
    for &p in &tree {
        signal(p, "INT");
    }
    let alive = |p: &u32| Path::new(&format!("/proc/{p}")).exists();
    let grace = Duration::from_secs(5);
    let t1 = Instant::now();
    let mut tree_now = tree;
    while t1.elapsed() < grace {
        let exited = matches!(child.try_wait(), Ok(Some(_)));
        if exited && !tree_now.iter().any(alive) {
            break;
        }
        if !exited {
            tree_now.extend(descendants(pid));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    // Descendants may outlive the process: SIGKILL the group and every descendant still there.
    signal_group(pid, "KILL");
    for p in tree_now.iter().filter(|p| alive(p)) {
        signal(*p, "KILL");
    }
    let _ = child.kill();
    let _ = child.wait();
    let (stdout, stderr) = drain(readers, Duration::from_secs(5));
    panic!(
        "{what} did not exit within {timeout:?}: interrupted and killed it (and its children)\n\
         --- stdout ---\n{stdout}\n--- stderr ---\n{stderr}"
    );
}

/// Sends a signal by name to every process of the process group `pgid`.
fn signal_group(pgid: u32, name: &str) {
    let _ = Command::new("kill")
        .arg(format!("-{name}"))
        .arg("--")
        .arg(format!("-{pgid}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

/// Pids of every living descendant of `pid` (children, grandchildren, ...), read from /proc.
fn descendants(pid: u32) -> Vec<u32> {
    let mut parent_of = Vec::new();
    if let Ok(dir) = std::fs::read_dir("/proc") {
        for entry in dir.flatten() {
            let Some(p) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            // /proc/<pid>/stat: "pid (comm) state ppid ..."; comm may hold spaces or ')'.
            let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
                continue;
            };
            let ppid = stat
                .rfind(')')
                .and_then(|at| stat[at + 1..].split_whitespace().nth(1))
                .and_then(|v| v.parse::<u32>().ok());
            if let Some(ppid) = ppid {
                parent_of.push((p, ppid));
            }
        }
    }
    let mut found = vec![pid];
    let mut i = 0;
    while i < found.len() {
        let parent = found[i];
        found.extend(
            parent_of
                .iter()
                .filter(|(_, pp)| *pp == parent)
                .map(|(p, _)| *p),
        );
        i += 1;
    }
    found.remove(0);
    found
}

// ---------------------------------------------------------------------------------------------
// robot_sim and peer-output helpers of the interop tests (rclpy_interop, cyclone_interop,
// launch_bringup).

/// What `robot_sim` prints once its publishers, subscriptions and services exist.
pub const ROBOT_SIM_READY: &str = "robot_sim ready:";

/// The robot model every interop test drives: `urdf/rx60b.urdf`.
pub fn rx60_urdf() -> PathBuf {
    repo_root().join("urdf").join("rx60b.urdf")
}

/// Starts `robot_sim` on `env`'s domain with the RX60 URDF and the extra ROS arguments
/// `ros_args` (e.g. `["-p", "initial_positions:=[0.1, ...]"]`), and waits until it is ready.
pub fn spawn_robot_sim(env: &TestEnv, ros_args: &[&str]) -> NodeProcess {
    let mut cmd = env.command(bin("robot_sim"));
    cmd.arg("--ros-args")
        .arg("-p")
        .arg(format!("robot_description_file:={}", rx60_urdf().display()))
        .args(ros_args);
    let node = NodeProcess::spawn("robot_sim", cmd);
    node.wait_for_output(ROBOT_SIM_READY, Duration::from_secs(20));
    node
}

/// A `[a, b, c]` parameter value for `-p name:=...`, every number written so that it reads back
/// as the same `f64` (and as a double, not an integer).
pub fn yaml_f64_list(values: &[f64]) -> String {
    let items: Vec<String> = values.iter().map(|v| format!("{v:?}")).collect();
    format!("[{}]", items.join(", "))
}

/// `a,b,c` for the peers' `--values` / `--positions` options (exact round trip).
pub fn csv_f64(values: &[f64]) -> String {
    let items: Vec<String> = values.iter().map(|v| format!("{v:?}")).collect();
    items.join(",")
}

/// Reads a JSON/YAML list of numbers (a peer's `position`, `data`, ...) as `f64`s; panics
/// with the value if it is not one.
pub fn as_f64s(value: &serde_yaml::Value) -> Vec<f64> {
    value
        .as_sequence()
        .unwrap_or_else(|| panic!("expected a list of numbers, got {value:?}"))
        .iter()
        .map(|v| {
            v.as_f64()
                .unwrap_or_else(|| panic!("expected a number, got {v:?} in {value:?}"))
        })
        .collect()
}

/// Reads a JSON/YAML list of strings; panics with the value if it is not one.
pub fn as_strings(value: &serde_yaml::Value) -> Vec<String> {
    value
        .as_sequence()
        .unwrap_or_else(|| panic!("expected a list of strings, got {value:?}"))
        .iter()
        .map(|v| {
            v.as_str()
                .unwrap_or_else(|| panic!("expected a string, got {v:?} in {value:?}"))
                .to_string()
        })
        .collect()
}

/// `path` (relative to the repository root) as a string, e.g. a scene file for a node parameter.
pub fn repo_file(path: &str) -> String {
    repo_root().join(path).display().to_string()
}

impl TestEnv {
    /// A fresh, empty scratch directory `<base>/<name>_<pid>_<domain>` for one test (`base` is the
    /// test target's `env!("CARGO_TARGET_TMPDIR")`, which only test targets see).
    pub fn scratch(&self, base: &str, name: &str) -> PathBuf {
        let dir = Path::new(base).join(format!("{name}_{}_{}", std::process::id(), self.domain_id));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// Calls `service` (type `ty`, e.g. `rpq_interfaces/srv/MinDistance`) once per request
    /// (flow-style YAML mappings, sent in order) with the rclpy peer, which gets `peer_args` too
    /// (e.g. `["--timeout", "60"]`). Returns the responses in order; fails the test unless the
    /// peer succeeded and every request was answered.
    pub fn call_service(
        &self,
        service: &str,
        ty: &str,
        requests: &[String],
        peer_args: &[&str],
    ) -> Vec<serde_yaml::Value> {
        let yaml = format!("[{}]", requests.join(", "));
        let mut args = vec![
            "call",
            "--service",
            service,
            "--type",
            ty,
            "--requests-yaml",
            &yaml,
        ];
        args.extend_from_slice(peer_args);
        let out = self.run_peer("rclpy_peer.py", &args);
        out.assert_ok(&format!("rclpy calls of {service}"));
        let responses: Vec<serde_yaml::Value> = out
            .records_of("response")
            .into_iter()
            .map(|r| r["response"].clone())
            .collect();
        assert_eq!(responses.len(), requests.len(), "{}", out.stdout);
        responses
    }
}

impl PeerOutput {
    /// The first record of `kind`; panics with the peer's output if there is none.
    pub fn record(&self, kind: &str) -> serde_yaml::Value {
        self.records_of(kind).into_iter().next().unwrap_or_else(|| {
            panic!(
                "no {kind:?} record\n--- stdout ---\n{}\n--- stderr ---\n{}",
                self.stdout, self.stderr
            )
        })
    }

    /// Every record of `kind`, in output order.
    pub fn records_of(&self, kind: &str) -> Vec<serde_yaml::Value> {
        self.records()
            .into_iter()
            .filter(|r| r["kind"].as_str() == Some(kind))
            .collect()
    }
}

/// The RX60 model of `urdf/rx60b.urdf`, loaded with `rpq_kinematics` (the reference for what
/// the nodes compute).
pub fn rx60_robot() -> rpq_kinematics::Robot {
    rpq_kinematics::Robot::from_urdf_file(rx60_urdf()).expect("urdf/rx60b.urdf loads")
}

/// Checks a `geometry_msgs/PoseStamped` a peer decoded (`{header, pose: {position,
/// orientation}}`) against `rpq_kinematics`' forward kinematics of `link` at `q`: frame id =
/// root link, position and orientation within `tol` (quaternion sign aligned).
pub fn assert_pose_is_fk(pose_stamped: &serde_yaml::Value, link: &str, q: &[f64], tol: f64) {
    let robot = rx60_robot();
    let expected = robot.link_pose(link, q).expect("reference FK");
    let frame = pose_stamped["header"]["frame_id"].as_str();
    assert_eq!(
        frame,
        Some(robot.root_link().name.as_str()),
        "pose frame: {pose_stamped:?}"
    );
    let num = |v: &serde_yaml::Value, k: &str| {
        v[k].as_f64()
            .unwrap_or_else(|| panic!("no number {k} in {pose_stamped:?}"))
    };
    let p = &pose_stamped["pose"]["position"];
    let got_p = [num(p, "x"), num(p, "y"), num(p, "z")];
    let t = expected.translation.vector;
    let want_p = [t.x, t.y, t.z];
    let o = &pose_stamped["pose"]["orientation"];
    let got_q = [num(o, "x"), num(o, "y"), num(o, "z"), num(o, "w")];
    let r = expected.rotation;
    let mut want_q = [r.i, r.j, r.k, r.w];
    let dot: f64 = got_q.iter().zip(&want_q).map(|(a, b)| a * b).sum();
    if dot < 0.0 {
        want_q.iter_mut().for_each(|c| *c = -*c);
    }
    for (i, (g, w)) in got_p.iter().zip(&want_p).enumerate() {
        assert!(
            (g - w).abs() <= tol,
            "{link} position[{i}]: node {g}, rpq_kinematics {w} (q = {q:?})"
        );
    }
    for (i, (g, w)) in got_q.iter().zip(&want_q).enumerate() {
        assert!(
            (g - w).abs() <= tol,
            "{link} orientation[{i}] (x,y,z,w): node {g}, rpq_kinematics {w} (q = {q:?})"
        );
    }
}

// ---- bag replay (tests/tests/bag_replay.rs) ----

impl NodeProcess {
    /// Waits up to `timeout` for the process to exit on its own. Returns its exit code
    /// (`Some(None)` if a signal ended it), or `None` if it still runs (it is then left running;
    /// [`NodeProcess::stop`] or drop ends it).
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<Option<i32>> {
        let t0 = Instant::now();
        loop {
            let child = self.child.as_mut()?;
            if let Ok(Some(status)) = child.try_wait() {
                self.child = None;
                return Some(status.code());
            }
            if t0.elapsed() > timeout {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// A single-threaded tokio runtime for the benchmark binaries' Rust peers.
pub fn peer_runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
}

/// A plain node named `name` on the process environment's domain (no `--ros-args`), for the
/// benchmark binaries' Rust peers.
pub fn peer_node(name: &str) -> Result<rpq_ros::node::RosNode, Box<dyn std::error::Error>> {
    let env = rpq_ros::env::RosEnv::from_env()?;
    Ok(rpq_ros::node::RosNode::new(
        name,
        env,
        rpq_ros::args::RosArgs::default(),
        &[],
    )?)
}

/// `rpq_bag replay` of a controller input bag: plays `bag` in real time (1 s start delay,
/// publishing `/clock` at 1 kHz from the bag's time) and records the controller's
/// `/forward_velocity_controller/commands` and `/admittance_controller/status` to `output`
/// (0.3 s settle; waits up to 20 s for the controller's subscriptions).
pub fn controller_replay(env: &TestEnv, bag: &Path, output: &Path) -> Command {
    let mut replay = env.command(bin("rpq_bag"));
    replay
        .arg("replay")
        .arg(bag)
        .arg("--output")
        .arg(output)
        .args([
            "--record",
            "/forward_velocity_controller/commands",
            "/admittance_controller/status",
            "--rate",
            "1",
            "--start-delay",
            "1.0",
            "--settle",
            "0.3",
            "--wait-timeout",
            "20",
            "--clock",
            "1000",
        ]);
    replay
}

/// A controller status's header stamp (the replayed sim time) [s after `t0_ns`].
pub fn status_bag_time(
    s: &rpq_ros::interfaces::rpq_interfaces::msg::AdmittanceStatus,
    t0_ns: u64,
) -> f64 {
    f64::from(s.header.stamp.sec) + f64::from(s.header.stamp.nanosec) * 1e-9 - t0_ns as f64 * 1e-9
}

/// The `/forward_velocity_controller/commands` of a recorded bag, each at its time on the
/// replayed bag's clock [s after `t0_ns`]: log times mapped, piecewise linearly, through the
/// log times and header stamps (the replayed sim time) of the controller's `statuses`.
pub fn commands_on_bag_time(
    recorded: &rpq_bag::BagReader,
    statuses: &[(
        u64,
        rpq_ros::interfaces::rpq_interfaces::msg::AdmittanceStatus,
    )],
    t0_ns: u64,
) -> Vec<(f64, Vec<f64>)> {
    let map: Vec<(u64, f64)> = statuses
        .iter()
        .map(|(l, s)| (*l, status_bag_time(s, t0_ns)))
        .collect();
    assert!(map.len() >= 2, "{} controller statuses recorded", map.len());
    let bag_time = |log: u64| {
        let k = map
            .partition_point(|(l, _)| *l <= log)
            .clamp(1, map.len() - 1);
        let ((l0, t0), (l1, t1)) = (map[k - 1], map[k]);
        t0 + (t1 - t0) * (log as f64 - l0 as f64) / ((l1 as f64 - l0 as f64).max(1.0))
    };
    recorded
        .messages()
        .iter()
        .filter(|m| m.topic == "/forward_velocity_controller/commands")
        .map(|m| {
            let c: rpq_ros::msg::std_msgs::Float64MultiArray =
                rpq_ros::cdr::from_bytes(&m.data).unwrap();
            (bag_time(m.log_time), c.data)
        })
        .collect()
}

/// The non-zero commands that differ from the command before them, in order.
pub fn distinct_nonzero(commands: &[(f64, Vec<f64>)]) -> Vec<&(f64, Vec<f64>)> {
    let mut distinct: Vec<&(f64, Vec<f64>)> = Vec::new();
    for c in commands {
        if c.1.iter().any(|x| *x != 0.0) && distinct.last().is_none_or(|d| d.1 != c.1) {
            distinct.push(c);
        }
    }
    distinct
}

#[cfg(test)]
mod interop_helper_tests {
    use super::*;

    fn pose_value(link: &str, q: &[f64]) -> serde_yaml::Value {
        let robot = rx60_robot();
        let p = robot.link_pose(link, q).unwrap();
        let (t, r) = (p.translation.vector, p.rotation);
        serde_yaml::from_str(&format!(
            "{{header: {{frame_id: {}}}, pose: {{position: {{x: {:?}, y: {:?}, z: {:?}}}, \
             orientation: {{x: {:?}, y: {:?}, z: {:?}, w: {:?}}}}}}}",
            robot.root_link().name,
            t.x,
            t.y,
            t.z,
            -r.i,
            -r.j,
            -r.k,
            -r.w
        ))
        .unwrap()
    }

    #[test]
    fn pose_check_accepts_the_fk_pose_with_either_quaternion_sign() {
        let q = [0.1, -0.2, 0.3, -0.4, 0.5, -0.6];
        assert_pose_is_fk(&pose_value("tool0", &q), "tool0", &q, 1e-12);
    }

    #[test]
    #[should_panic(expected = "tool0 position")]
    fn pose_check_rejects_another_pose() {
        let q = [0.1, -0.2, 0.3, -0.4, 0.5, -0.6];
        let mut other = q;
        other[1] += 1e-6;
        assert_pose_is_fk(&pose_value("tool0", &other), "tool0", &q, 1e-9);
    }

    #[test]
    fn run_with_timeout_returns_code_and_both_streams() {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "echo out; echo err >&2; exit 3"]);
        let out = run_with_timeout("sh", cmd, Duration::from_secs(30));
        assert_eq!((out.success, out.code), (false, Some(3)));
        assert_eq!(
            (out.stdout.as_str(), out.stderr.as_str()),
            ("out\n", "err\n")
        );
    }

    #[test]
    fn run_with_timeout_kills_a_hung_tree_and_fails_with_its_output() {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("pid");
        // A child in a process group of its own that ignores SIGINT: only SIGKILL ends it.
        let mut cmd = Command::new("sh");
        cmd.arg("-c").arg(format!(
            "setsid sh -c 'trap \"\" INT; echo $$ > {}; exec sleep 300' & echo started; wait",
            pidfile.display()
        ));
        let t0 = Instant::now();
        let failure = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            run_with_timeout("hung sh", cmd, Duration::from_millis(500))
        }))
        .expect_err("a hung process must fail the test");
        assert!(t0.elapsed() < Duration::from_secs(20), "{:?}", t0.elapsed());
        let msg = failure
            .downcast_ref::<String>()
            .cloned()
            .unwrap_or_default();
        assert!(
            msg.contains("hung sh did not exit within") && msg.contains("started"),
            "{msg}"
        );
        let grandchild = std::fs::read_to_string(&pidfile)
            .unwrap()
            .trim()
            .to_string();
        let t1 = Instant::now();
        while Path::new(&format!("/proc/{grandchild}")).exists() {
            // Reaped by init (or left a zombie for a moment).
            let state =
                std::fs::read_to_string(format!("/proc/{grandchild}/stat")).unwrap_or_default();
            if state.contains(") Z") {
                break;
            }
            assert!(
                t1.elapsed() < Duration::from_secs(5),
                "grandchild {grandchild} survives"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    #[test]
    fn peer_timeout_is_read_from_the_arguments() {
        assert_eq!(peer_timeout_s(&["echo", "--timeout", "7.5"]), 7.5);
        assert_eq!(peer_timeout_s(&["echo", "--timeout=3"]), 3.0);
        assert_eq!(peer_timeout_s(&["echo", "--count", "2"]), 20.0);
    }

    #[test]
    fn number_lists_round_trip_exactly() {
        let v = [0.1, -2.5e-300, 1.0 / 3.0, 7.0];
        assert_eq!(
            yaml_f64_list(&v),
            "[0.1, -2.5e-300, 0.3333333333333333, 7.0]"
        );
        let parsed: serde_yaml::Value = serde_yaml::from_str(&yaml_f64_list(&v)).unwrap();
        assert_eq!(as_f64s(&parsed), v);
        let csv: Vec<f64> = csv_f64(&v).split(',').map(|s| s.parse().unwrap()).collect();
        assert_eq!(csv, v);
    }
}
