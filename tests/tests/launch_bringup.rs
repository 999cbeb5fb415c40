//! `rpq_launch` runs the suite's ROS 2 XML launch file: the launched `robot_sim` is seen by
//! real rclpy, its output is prefixed, SIGINT to the launcher stops everything cleanly, `--print`
//! shows the resolved command, and an unsupported tag rejects the whole file.
//!
//! The tests that may start a node open DDS sockets: run inside `../shared/netns-run`.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rpq_tests::{
    as_strings, bin, repo_root, run_with_timeout, rx60_urdf, NodeProcess, TestEnv, ROBOT_SIM_READY,
};

fn launch_file() -> PathBuf {
    repo_root().join("launch").join("rx60_sim.launch.xml")
}

fn canonical(p: &str) -> PathBuf {
    Path::new(p)
        .canonicalize()
        .unwrap_or_else(|e| panic!("{p}: {e}"))
}

/// The pid in a launcher line `... process started with pid [1234]`.
fn started_pid(line: &str) -> u32 {
    line.rsplit('[')
        .next()
        .and_then(|s| s.strip_suffix(']'))
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no pid in {line:?}"))
}

/// True while `pid` is a live (not zombie) process running `exe`.
fn running(pid: u32, exe: &Path) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let state = stat
        .rsplit(')')
        .next()
        .unwrap_or("")
        .split_whitespace()
        .next();
    let same_exe = std::fs::read_link(format!("/proc/{pid}/exe")).is_ok_and(|e| e == exe);
    same_exe && !matches!(state, None | Some("Z") | Some("X"))
}

#[test]
fn rpq_launch_brings_up_robot_sim_for_rclpy_and_stops_it_on_sigint() {
    let logs = tempfile::tempdir().unwrap();
    let env = TestEnv::new().with("ROS_LOG_DIR", &logs.path().display().to_string());
    let mut cmd = env.command(bin("rpq_launch"));
    cmd.arg(launch_file());
    let mut launcher = NodeProcess::spawn("rpq_launch", cmd);

    // Node output is prefixed with the process label, the launcher reports the pid.
    let ready = launcher.wait_for_output(ROBOT_SIM_READY, Duration::from_secs(20));
    assert!(ready.starts_with("[robot_sim-1] "), "unprefixed: {ready:?}");
    let started = launcher.wait_for_output("process started with pid", Duration::from_secs(1));
    assert!(started.contains("[robot_sim-1]"), "{started:?}");
    let pid = started_pid(&started);
    let sim_exe = bin("robot_sim").canonicalize().unwrap();
    assert!(
        running(pid, &sim_exe),
        "pid {pid} is not a running robot_sim"
    );

    // rclpy sees the launched node, with the launch file's parameters.
    let (states, params) = std::thread::scope(|s| {
        let states = s.spawn(|| env.run_peer("rclpy_peer.py", &["joint-states", "--count", "2"]));
        let params = s.spawn(|| {
            env.run_peer(
                "rclpy_peer.py",
                &[
                    "param-get",
                    "--node",
                    "/robot_sim",
                    "--names",
                    "robot_description_file,update_rate,position_command_mode",
                ],
            )
        });
        (states.join().unwrap(), params.join().unwrap())
    });
    states.assert_ok("rclpy joint-states from the launched robot_sim");
    for m in states.records_of("joint_state") {
        assert_eq!(as_strings(&m["name"]).len(), 6, "{m:?}");
    }
    params.assert_ok("rclpy param-get on the launched robot_sim");
    let v = &params.record("parameter_values")["values"];
    let urdf = v["robot_description_file"].as_str().unwrap();
    assert_eq!(canonical(urdf), rx60_urdf().canonicalize().unwrap());
    assert_eq!(
        v["update_rate"].as_f64(),
        Some(100.0),
        "from config/robot_sim.yaml"
    );
    assert_eq!(v["position_command_mode"].as_str(), Some("rate_limited"));

    // SIGINT to the launcher: every process ends, the launcher exits 0, within a few seconds.
    let t0 = Instant::now();
    let code = launcher.stop(Duration::from_secs(15));
    let took = t0.elapsed();
    let out = launcher.output().join("\n");
    assert_eq!(code, Some(0), "launcher exit after SIGINT; output:\n{out}");
    assert!(took < Duration::from_secs(5), "shutdown took {took:?}");
    assert!(
        !running(pid, &sim_exe),
        "robot_sim (pid {pid}) survived the launcher"
    );
    assert!(out.contains("process has finished cleanly"), "{out}");
    eprintln!("launcher stopped in {:.2} s", took.as_secs_f64());
}

#[test]
fn rpq_launch_print_shows_the_resolved_command_line() {
    let mut cmd = std::process::Command::new(bin("rpq_launch"));
    cmd.arg("--print")
        .arg(launch_file())
        .arg("frame_unused_check:=1");
    let out = run_with_timeout("rpq_launch --print", cmd, Duration::from_secs(30));
    // An argument no launch file declares is an error that names the valid ones.
    assert_eq!(out.code, Some(2));
    let err = &out.stderr;
    assert!(err.contains("frame_unused_check"), "{err}");
    assert!(err.contains("robot_description_file"), "{err}");

    let other_urdf = "/tmp/rpq_elsewhere/robot.urdf";
    let mut cmd = std::process::Command::new(bin("rpq_launch"));
    cmd.arg("--print")
        .arg(launch_file())
        .arg(format!("robot_description_file:={other_urdf}"))
        .arg("namespace:=/arm");
    let out = run_with_timeout("rpq_launch --print", cmd, Duration::from_secs(30));
    let text = &out.stdout;
    assert!(out.success, "{text}\n{}", out.stderr);
    let line = text
        .lines()
        .find(|l| l.starts_with("[robot_sim-1] "))
        .unwrap_or_else(|| panic!("no robot_sim process in:\n{text}"));
    let words: Vec<&str> = line.split_whitespace().skip(1).collect();
    assert_eq!(
        canonical(words[0]),
        bin("robot_sim").canonicalize().unwrap()
    );
    let after = |flag: &str, value_prefix: &str| -> Vec<String> {
        words
            .windows(2)
            .filter(|w| w[0] == flag && w[1].starts_with(value_prefix))
            .map(|w| w[1].to_string())
            .collect()
    };
    assert!(words.contains(&"--ros-args"), "{line}");
    assert_eq!(after("-r", "__node:="), ["__node:=robot_sim"], "{line}");
    assert_eq!(after("-r", "__ns:="), ["__ns:=/arm"], "{line}");
    let params_file = after("--params-file", "");
    assert_eq!(params_file.len(), 1, "{line}");
    assert_eq!(
        canonical(&params_file[0]),
        repo_root()
            .join("config/robot_sim.yaml")
            .canonicalize()
            .unwrap()
    );
    assert_eq!(
        after("-p", "robot_description_file:="),
        [format!("robot_description_file:={other_urdf}")],
        "{line}"
    );
    // --print runs nothing: it returned at once, without a robot_sim.
}

#[test]
fn rpq_launch_rejects_an_unsupported_tag_before_starting_anything() {
    // In the namespace anyway: if the launcher ignored the bad tag it would start a node.
    let env = TestEnv::new();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.launch.xml");
    std::fs::write(
        &file,
        format!(
            "<launch>\n  <node pkg=\"robot_sim\" exec=\"robot_sim\" name=\"robot_sim\">\n    \
             <param name=\"robot_description_file\" value=\"{}\"/>\n  </node>\n  \
             <timer period=\"1.0\"/>\n</launch>\n",
            rx60_urdf().display()
        ),
    )
    .unwrap();
    let t0 = Instant::now();
    let mut cmd = env.command(bin("rpq_launch"));
    cmd.arg(&file).env("ROS_LOG_DIR", dir.path());
    // Should the launcher ever accept the tag, it would run robot_sim until stopped.
    let out = run_with_timeout("rpq_launch with <timer>", cmd, Duration::from_secs(30));
    let (stdout, stderr) = (&out.stdout, &out.stderr);
    assert_eq!(out.code, Some(2), "{stdout}\n{stderr}");
    assert!(t0.elapsed() < Duration::from_secs(5));
    let location = format!("{}:5:", file.display());
    assert!(
        stderr.contains("unsupported tag <timer>") && stderr.contains(&location),
        "error should name the tag and where it is:\n{stderr}"
    );
    assert!(
        !stdout.contains("process started") && !stderr.contains("process started"),
        "a process was started:\n{stdout}\n{stderr}"
    );
}
