//! The steady_hand nodes over DDS: `admittance_controller` against the virtual-fixture library,
//! with the simulated RX60 (`robot_sim`) and `steady_hand_guidance`.
//!
//! * `bag_replay_matches_library`: `tests/bags/steady_hand_wrenches/` (600 wrenches at 200 Hz,
//!   written with the rpq_bag writer by the ignored test `write_wrench_bag`) is played by
//!   `rpq_bag replay` into two controllers, one commanding the robot through joint velocities,
//!   one publishing its tool twist; the recorded twists must equal the library's output for
//!   the same wrenches (`vf_oracle`, the library outside ROS), and the joint commands mapped
//!   through the URDF Jacobian at the recorded joint states must give the same twists. After
//!   the bag ends the watchdog must command zero.
//! * `watchdog_stops_within_two_periods`: `simulated_user` stops publishing after 1.5 s; the
//!   first zero command must come at most `safety.wrench_timeout + 2 / update_rate` after the last
//!   wrench, with the reason logged.
//! * `sigint_stops_the_robot_at_once`: under a steady push, SIGINT to the controller must make
//!   robot_sim report zero joint velocities within 100 ms (its own command timeout is 0.5 s).
//! * `guidance_combines_and_sequences_fixtures`: the services `~/combine`, `~/load_sequence`
//!   and `~/sequence` of `steady_hand_guidance` called from a Rust client: bad requests are
//!   refused with a reason; a plane ∩ cone priority combination publishes the analytic `D`
//!   and `u` at the robot's pose; a two-step sequence (approach a point until the error is
//!   below a threshold for a dwell time, then hold plane + cone) advances, steps, finishes
//!   and stops, with the step in every published fixture.
//!
//! Binaries come from the target directory (build `steady_hand`, `rpq_virtual_fixtures`,
//! `robot_sim`, `rpq_bag` first). Opens DDS sockets: runs only inside the private network
//! namespace (tests/run_all.sh or ../shared/netns-run).

use std::io::Write;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use rpq_bag::writer::{BagWriter, TopicSpec};
use rpq_bag::{BagMessage, BagReader};
use rpq_ros::cdr;
use rpq_ros::msg::builtin_interfaces::Time;
use rpq_ros::msg::geometry_msgs::{TwistStamped, Vector3, Wrench, WrenchStamped};
use rpq_ros::msg::sensor_msgs::JointState;
use rpq_ros::msg::std_msgs::{Float64MultiArray, Header};
use rpq_ros::msg::RosMessage;
use rpq_tests::{
    bin, repo_root, run_with_timeout, rx60_robot, rx60_urdf, spawn_robot_sim, NodeProcess, TestEnv,
};

const WRENCH_TOPIC: &str = "/wrench";
const BAG_RATE_HZ: f64 = 200.0;
const BAG_COUNT: usize = 600;
/// Non-singular start pose of the RX60: tool at about (0.42, 0, 0.40) m pointing down.
const START: &str = "initial_positions:=[0.0, 0.5, 1.5, 0.0, 1.14, 0.0]";

/// The recorded wrench sequence: smooth, every sample distinct and above the deadband, forces
/// in all three directions (z is the plane's non-preferred direction), small torques.
fn wrench_sequence() -> Vec<[f64; 6]> {
    (0..BAG_COUNT)
        .map(|i| {
            let t = i as f64 / BAG_RATE_HZ;
            let tau = std::f64::consts::TAU;
            [
                2.0 * (tau * 0.5 * t).sin() + 0.5,
                1.5 * (tau * 0.7 * t).cos(),
                1.0 * (tau * 1.3 * t).sin(),
                0.05 * (tau * 0.9 * t).sin(),
                -0.03,
                0.02 * (tau * 0.4 * t).cos(),
            ]
        })
        .collect()
}

fn bag_dir() -> PathBuf {
    repo_root().join("tests/bags/steady_hand_wrenches")
}

/// Regenerates `tests/bags/steady_hand_wrenches/` (run with `--ignored`; the bag is checked in).
#[test]
#[ignore]
fn write_wrench_bag() {
    let dir = bag_dir();
    let _ = std::fs::remove_dir_all(&dir);
    let mut w = BagWriter::create(&dir).expect("create bag");
    w.add_topic(TopicSpec::new(
        WRENCH_TOPIC,
        WrenchStamped::TYPE_NAME,
        &WrenchStamped::definition(),
    ))
    .unwrap();
    let t0: u64 = 1_795_000_000_000_000_000;
    for (i, f) in wrench_sequence().iter().enumerate() {
        let t = t0 + (i as f64 * 1e9 / BAG_RATE_HZ) as u64;
        let msg = WrenchStamped {
            header: Header {
                stamp: Time {
                    sec: (t / 1_000_000_000) as i32,
                    nanosec: (t % 1_000_000_000) as u32,
                },
                frame_id: "base_link".into(),
            },
            wrench: Wrench {
                force: Vector3 {
                    x: f[0],
                    y: f[1],
                    z: f[2],
                },
                torque: Vector3 {
                    x: f[3],
                    y: f[4],
                    z: f[5],
                },
            },
        };
        w.write_to_topic(WRENCH_TOPIC, t, t, &cdr::to_vec(&msg).unwrap())
            .unwrap();
    }
    w.finish().unwrap();
}

#[test]
fn wrench_bag_holds_the_sequence() {
    let bag = BagReader::open(bag_dir()).expect("tests/bags/steady_hand_wrenches opens");
    let msgs: Vec<&BagMessage> = bag
        .messages()
        .iter()
        .filter(|m| m.topic == WRENCH_TOPIC)
        .collect();
    assert_eq!(msgs.len(), BAG_COUNT);
    for (m, f) in msgs.iter().zip(wrench_sequence()) {
        let w: WrenchStamped = cdr::from_bytes(&m.data).unwrap();
        let got = [
            w.wrench.force.x,
            w.wrench.force.y,
            w.wrench.force.z,
            w.wrench.torque.x,
            w.wrench.torque.y,
            w.wrench.torque.z,
        ];
        assert_eq!(got, f);
        assert_eq!(w.header.frame_id, "base_link");
    }
}

/// The library's twists for `wrenches`, through `vf_oracle`.
fn oracle(args: &[&str], wrenches: &[[f64; 6]]) -> Vec<[f64; 6]> {
    let mut child = std::process::Command::new(bin("vf_oracle"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("vf_oracle runs");
    {
        let mut stdin = child.stdin.take().unwrap();
        for f in wrenches {
            writeln!(
                stdin,
                "{} {} {} {} {} {}",
                f[0], f[1], f[2], f[3], f[4], f[5]
            )
            .unwrap();
        }
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "vf_oracle failed");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let v: Vec<f64> = l.split_whitespace().map(|x| x.parse().unwrap()).collect();
            [v[0], v[1], v[2], v[3], v[4], v[5]]
        })
        .collect()
}

fn dist(a: &[f64; 6], b: &[f64; 6]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).powi(2))
        .sum::<f64>()
        .sqrt()
}

fn spawn_node(env: &TestEnv, exec: &str, args: &[String], ready: &str) -> NodeProcess {
    let mut cmd = env.command(bin(exec));
    cmd.arg("--ros-args").args(args);
    let node = NodeProcess::spawn(exec, cmd);
    node.wait_for_output(ready, Duration::from_secs(20));
    node
}

fn p(s: &str) -> [String; 2] {
    ["-p".to_string(), s.to_string()]
}

/// Settings shared by the controllers of the replay test (no acceleration limit, so each
/// output depends on its wrench only, and no torque, so the tool-point transfer does not enter).
fn controller_args(extra: &[&str]) -> Vec<String> {
    let mut a: Vec<String> = Vec::new();
    for s in [
        format!("robot_description_file:={}", rx60_urdf().display()),
        "admittance.c:=0.01".into(),
        "admittance.c_tau:=0.3".into(),
        "shaping.torque_scale:=0.0".into(),
        "shaping.force_deadband:=0.2".into(),
        "limits.max_linear_velocity:=0.05".into(),
        "limits.max_linear_acceleration:=1e9".into(),
        "limits.max_angular_acceleration:=1e9".into(),
        "fixture.required:=true".into(),
        "safety.wrench_timeout:=0.05".into(),
        // the samples unfiltered (the library's law is the oracle), the bag's time as the clock
        // (the wrenches are stamped with it)
        "ft.filter_cutoff:=100000.0".into(),
        "safety.joint_state_timeout:=0.2".into(),
        "use_sim_time:=true".into(),
        "safety.clock_tolerance:=0.05".into(),
    ] {
        a.extend(p(&s));
    }
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

const ORACLE_ARGS: &[&str] = &[
    "--c",
    "0.01",
    "--c-tau",
    "0.3",
    "--mode",
    "open_loop",
    "--torque-scale",
    "0",
    "--force-deadband",
    "0.2",
    "--max-linear-velocity",
    "0.05",
    "--max-angular-velocity",
    "0.5",
    "--d",
    "1,0,0,0,0,0;0,1,0,0,0,0",
];

#[test]
fn bag_replay_matches_library() {
    let env = TestEnv::new();
    let work = env.scratch(env!("CARGO_TARGET_TMPDIR"), "steady_hand_replay");
    let mut sim = spawn_robot_sim(&env, &["-p", START, "-p", "update_rate:=500.0"]);
    let mut guidance = spawn_node(
        &env,
        "steady_hand_guidance",
        &[
            p(&format!(
                "robot_description_file:={}",
                rx60_urdf().display()
            )),
            p("fixture_type:=plane"),
            p("mode:=open_loop"),
        ]
        .concat(),
        "steady_hand_guidance ready",
    );
    let mut joint_ctl = spawn_node(
        &env,
        "admittance_controller",
        &controller_args(&[]),
        "admittance_controller ready",
    );
    let mut twist_ctl = spawn_node(
        &env,
        "admittance_controller",
        &controller_args(&["-p", "output:=twist", "-r", "__node:=admittance_twist"]),
        "admittance_controller ready",
    );

    let output = work.join("recorded");
    let mut cmd = env.command(bin("rpq_bag"));
    cmd.arg("replay")
        .arg(bag_dir())
        .arg("--output")
        .arg(&output)
        .args([
            "--record",
            "/twist_command",
            "/forward_velocity_controller/commands",
            "/joint_states",
        ])
        .args([
            "--rate",
            "1",
            "--start-delay",
            "1.0",
            "--settle",
            "1.0",
            "--wait-timeout",
            "20",
            "--clock",
            "1000",
        ]);
    let out = run_with_timeout("rpq_bag replay", cmd, Duration::from_secs(60));
    assert!(
        out.success,
        "rpq_bag replay failed:\n{}\n{}",
        out.stdout, out.stderr
    );
    for n in [&mut twist_ctl, &mut joint_ctl, &mut guidance, &mut sim] {
        n.stop(Duration::from_secs(3));
    }

    let wrenches = wrench_sequence();
    let expected = oracle(ORACLE_ARGS, &wrenches);
    assert_eq!(expected.len(), wrenches.len());
    let bag = BagReader::open(&output).expect("recorded bag opens");

    // 1. the twist controller: every non-zero twist is the library's twist of a wrench, in order
    let twists: Vec<[f64; 6]> = bag
        .messages()
        .iter()
        .filter(|m| m.topic == "/twist_command")
        .map(|m| {
            let t: TwistStamped = cdr::from_bytes(&m.data).unwrap();
            [
                t.twist.linear.x,
                t.twist.linear.y,
                t.twist.linear.z,
                t.twist.angular.x,
                t.twist.angular.y,
                t.twist.angular.z,
            ]
        })
        .collect();
    // the controller repeats its command every period: one of each run of equal commands
    let mut nonzero: Vec<&[f64; 6]> = Vec::new();
    for t in twists.iter().filter(|t| t.iter().any(|x| *x != 0.0)) {
        if nonzero.last() != Some(&t) {
            nonzero.push(t);
        }
    }
    let mut k = 0;
    let mut matched = 0;
    let mut worst: f64 = 0.0;
    for t in &nonzero {
        let j = (k..expected.len())
            .find(|&j| dist(t, &expected[j]) <= 1e-12)
            .unwrap_or_else(|| panic!("twist {t:?} (after wrench {k}) is no library output"));
        worst = worst.max(dist(t, &expected[j]));
        k = j + 1;
        matched += 1;
    }
    assert!(
        matched as f64 >= 0.9 * BAG_COUNT as f64,
        "only {matched} of {BAG_COUNT} wrenches gave a twist"
    );
    assert_eq!(
        twists.last().map(|t| t.iter().all(|x| *x == 0.0)),
        Some(true),
        "the watchdog must command zero after the bag ends"
    );

    // 2. the joint controller: J(q) qdot at the last joint state before each command
    let robot = rx60_robot();
    let mut q: Option<Vec<f64>> = None;
    let mut k = 0;
    let mut matched_joint = 0;
    let mut worst_joint: f64 = 0.0;
    let mut commands = 0;
    let mut previous: Option<Vec<f64>> = None;
    for m in bag.messages() {
        match m.topic.as_str() {
            "/joint_states" => {
                let js: JointState = cdr::from_bytes(&m.data).unwrap();
                let order: Vec<f64> = robot
                    .joint_names()
                    .map(|n| js.position[js.name.iter().position(|x| x == n).unwrap()])
                    .collect();
                q = Some(order);
            }
            "/forward_velocity_controller/commands" => {
                let cmd: Float64MultiArray = cdr::from_bytes(&m.data).unwrap();
                if cmd.data.iter().all(|x| *x == 0.0)
                    || previous.replace(cmd.data.clone()).as_ref() == Some(&cmd.data)
                {
                    continue;
                }
                commands += 1;
                let q = q.as_ref().expect("a joint state before the first command");
                let j = robot.jacobian("tool0", q).unwrap();
                let mut v = [0.0; 6];
                for (r, vr) in v.iter_mut().enumerate() {
                    *vr = cmd
                        .data
                        .iter()
                        .enumerate()
                        .map(|(c, w)| j[(r, c)] * w)
                        .sum();
                }
                if let Some(i) =
                    (k..(k + 20).min(expected.len())).find(|&i| dist(&v, &expected[i]) <= 5e-4)
                {
                    worst_joint = worst_joint.max(dist(&v, &expected[i]));
                    k = i + 1;
                    matched_joint += 1;
                }
            }
            _ => {}
        }
    }
    assert!(
        commands as f64 >= 0.9 * BAG_COUNT as f64,
        "only {commands} joint commands"
    );
    assert!(
        matched_joint as f64 >= 0.95 * commands as f64,
        "{matched_joint} of {commands} joint commands match the library's twist"
    );
    eprintln!(
        "steady_hand replay: {matched} twists equal to the library (worst {worst:.1e}), {matched_joint}/{commands} joint commands within 5e-4 (worst {worst_joint:.1e} m/s)"
    );
}

#[test]
fn watchdog_stops_within_two_periods() {
    let env = TestEnv::new();
    let work = env.scratch(env!("CARGO_TARGET_TMPDIR"), "steady_hand_watchdog");
    let rate = 100.0;
    let timeout = 0.05;
    let mut sim = spawn_robot_sim(&env, &["-p", START, "-p", "update_rate:=500.0"]);
    let cfg = repo_root().join("config");
    let mut guidance = spawn_node(
        &env,
        "steady_hand_guidance",
        &[
            vec![
                "--params-file".to_string(),
                cfg.join("steady_hand_guidance.yaml").display().to_string(),
            ],
            p(&format!(
                "robot_description_file:={}",
                rx60_urdf().display()
            ))
            .to_vec(),
        ]
        .concat(),
        "steady_hand_guidance ready",
    );
    let mut ctl = spawn_node(
        &env,
        "admittance_controller",
        &[
            vec![
                "--params-file".to_string(),
                cfg.join("admittance_controller.yaml").display().to_string(),
            ],
            p(&format!(
                "robot_description_file:={}",
                rx60_urdf().display()
            ))
            .to_vec(),
            p(&format!("update_rate:={rate:?}")).to_vec(),
            p(&format!("safety.wrench_timeout:={timeout:?}")).to_vec(),
        ]
        .concat(),
        "admittance_controller ready",
    );
    let output = work.join("recorded");
    let mut rec = env.command(bin("rpq_bag"));
    rec.args([
        "record",
        WRENCH_TOPIC,
        "/forward_velocity_controller/commands",
        "--duration",
        "3",
        "--wait-timeout",
        "20",
    ])
    .arg("--output")
    .arg(&output);
    let recorder = NodeProcess::spawn("rpq_bag record", rec);
    std::thread::sleep(Duration::from_millis(300));
    let mut user = spawn_node(
        &env,
        "simulated_user",
        &[
            vec![
                "--params-file".to_string(),
                cfg.join("simulated_user.yaml").display().to_string(),
            ],
            p("duration:=1.5").to_vec(),
        ]
        .concat(),
        "simulated_user ready",
    );
    let mut recorder = recorder;
    assert!(
        recorder.wait_exit(Duration::from_secs(40)).is_some(),
        "rpq_bag record hung"
    );
    let log = ctl.wait_for_output("stopping: wrench is stale", Duration::from_secs(5));
    for n in [&mut user, &mut ctl, &mut guidance, &mut sim] {
        n.stop(Duration::from_secs(3));
    }
    assert!(log.contains("stale"));

    let bag = BagReader::open(&output).expect("recorded bag opens");
    let last_wrench = bag
        .messages()
        .iter()
        .filter(|m| m.topic == WRENCH_TOPIC)
        .map(|m| m.log_time)
        .max()
        .expect("wrenches recorded");
    let commands: Vec<(u64, bool)> = bag
        .messages()
        .iter()
        .filter(|m| m.topic == "/forward_velocity_controller/commands")
        .map(|m| {
            let c: Float64MultiArray = cdr::from_bytes(&m.data).unwrap();
            (m.log_time, c.data.iter().all(|x| *x == 0.0))
        })
        .collect();
    assert!(
        commands
            .iter()
            .filter(|(t, zero)| *t <= last_wrench && !zero)
            .count()
            > 50,
        "the robot never moved"
    );
    let first_zero = commands
        .iter()
        .find(|(t, zero)| *t > last_wrench && *zero)
        .expect("a zero command after the last wrench")
        .0;
    assert!(
        commands
            .iter()
            .filter(|(t, _)| *t >= first_zero)
            .all(|(_, zero)| *zero),
        "only zero commands after the stop"
    );
    let delay = (first_zero - last_wrench) as f64 * 1e-9;
    let bound = timeout + 2.0 / rate;
    eprintln!(
        "steady_hand watchdog: zero command {:.1} ms after the last wrench (bound {:.1} ms)",
        delay * 1e3,
        bound * 1e3
    );
    assert!(
        delay <= bound,
        "zero command {delay:.4} s after the last wrench, bound {bound:.4} s"
    );
}

/// Third-party peer: rclpy (rmw_fastrtps_cpp) publishes the wrench and reads the controller's
/// twist; in free mode (no fixture) the twist must be eq. 1, `v = c f`.
#[test]
fn rclpy_peer_drives_the_controller() {
    let env = TestEnv::new();
    let mut ctl = spawn_node(
        &env,
        "admittance_controller",
        &[
            p(&format!(
                "robot_description_file:={}",
                rx60_urdf().display()
            ))
            .to_vec(),
            p("output:=twist").to_vec(),
            p("admittance.c:=0.01").to_vec(),
            p("shaping.force_deadband:=0.0").to_vec(),
            p("shaping.torque_scale:=0.0").to_vec(),
            p("limits.max_linear_acceleration:=1e9").to_vec(),
            p("limits.max_angular_acceleration:=1e9").to_vec(),
            p("safety.wrench_timeout:=1.0").to_vec(),
        ]
        .concat(),
        "admittance_controller ready",
    );
    // joint states for the controller (it needs them even for twist output)
    let mut sim = spawn_robot_sim(&env, &["-p", START]);
    let mut publisher = env.command(rpq_tests::python());
    publisher
        .arg(rpq_tests::peer_script("rclpy_peer.py"))
        .args(["pub", "--topic", WRENCH_TOPIC, "--type", "geometry_msgs/msg/WrenchStamped"])
        .args(["--yaml", "{header: {frame_id: base_link}, wrench: {force: {x: 1.0, y: -2.0, z: 0.5}, torque: {x: 0.3, y: 0.0, z: 0.0}}}"])
        .args(["--rate", "50", "--count", "400", "--timeout", "30"]);
    let mut publisher = NodeProcess::spawn("rclpy pub", publisher);
    let out = env.run_peer(
        "rclpy_peer.py",
        &[
            "echo",
            "--topic",
            "/twist_command",
            "--type",
            "geometry_msgs/msg/TwistStamped",
            "--count",
            "5",
            "--timeout",
            "20",
        ],
    );
    publisher.stop(Duration::from_secs(3));
    ctl.stop(Duration::from_secs(3));
    sim.stop(Duration::from_secs(3));
    out.assert_ok("rclpy echo of /twist_command");
    let msgs = out.records_of("message");
    assert_eq!(msgs.len(), 5);
    let expected = oracle(
        &[
            "--c",
            "0.01",
            "--mode",
            "free",
            "--torque-scale",
            "0",
            "--max-linear-velocity",
            "0.1",
            "--max-angular-velocity",
            "0.5",
        ],
        &[[1.0, -2.0, 0.5, 0.3, 0.0, 0.0]],
    )[0];
    assert!((expected[0] - 0.01).abs() < 1e-15 && (expected[1] + 0.02).abs() < 1e-15);
    for m in msgs {
        let t = &m["data"]["twist"];
        let got = [
            t["linear"]["x"].as_f64().unwrap(),
            t["linear"]["y"].as_f64().unwrap(),
            t["linear"]["z"].as_f64().unwrap(),
            t["angular"]["x"].as_f64().unwrap(),
            t["angular"]["y"].as_f64().unwrap(),
            t["angular"]["z"].as_f64().unwrap(),
        ];
        assert!(
            dist(&got, &expected) < 1e-12,
            "rclpy saw {got:?}, library gives {expected:?}"
        );
        assert_eq!(m["data"]["header"]["frame_id"].as_str(), Some("base_link"));
    }
}

mod combine_and_sequence {
    use super::*;
    use futures::StreamExt;
    use rpq_ros::interfaces::rpq_interfaces::msg::{FixtureStep, VirtualFixture};
    use rpq_ros::interfaces::rpq_interfaces::srv::{
        CombineFixtures, CombineFixturesRequest, LoadSequence, LoadSequenceRequest,
        SequenceControl, SequenceControlRequest,
    };
    use rpq_ros::{args::RosArgs, env::RosEnv, node::RosNode, qos};
    use std::time::Instant;

    type V3 = [f64; 3];
    fn sub(a: V3, b: V3) -> V3 {
        [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
    }
    fn cross(a: V3, b: V3) -> V3 {
        [
            a[1] * b[2] - a[2] * b[1],
            a[2] * b[0] - a[0] * b[2],
            a[0] * b[1] - a[1] * b[0],
        ]
    }
    fn norm(a: V3) -> f64 {
        (a[0] * a[0] + a[1] * a[1] + a[2] * a[2]).sqrt()
    }

    /// The expected plane-priority-cone fixture (config/steady_hand_guidance.yaml: plane z =
    /// 0.4 with error_gain 100, cone apex (0.4, 0, 0.3), axis z, half-angle 0.3, tool axis z,
    /// gain 1) at the tool pose `p`, tool axis `z`: `D = [e_z × (p − c)]_xy` normalised and
    /// `u = u_plane + <D>[D_plane] u_cone` (combine.rs, module docs).
    fn expected_plane_cone(p: V3, z: V3) -> ([f64; 6], [f64; 6]) {
        let c = [0.4, 0.0, 0.3];
        let r = sub(p, c);
        let a = [0.0, 0.0, 1.0];
        let d_lin = cross(a, r);
        let dn = norm([d_lin[0], d_lin[1], 0.0]);
        let d = [d_lin[0] / dn, d_lin[1] / dn, 0.0, 0.0, 0.0, 0.0];
        // nearest generator at the tool's azimuth
        let radial = [z[0], z[1], 0.0];
        let rn = norm(radial);
        let g = [
            radial[0] / rn * 0.3f64.sin(),
            radial[1] / rn * 0.3f64.sin(),
            0.3f64.cos(),
        ];
        let w = cross(z, g);
        let wr = cross(w, r);
        // [D_plane] u_cone = (wr_x, wr_y, 0, 0, 0, 0); remove the D component
        let dot = wr[0] * d[0] + wr[1] * d[1];
        let u = [
            wr[0] - dot * d[0],
            wr[1] - dot * d[1],
            -(p[2] - 0.4) * 100.0,
            0.0,
            0.0,
            0.0,
        ];
        (d, u)
    }

    /// Message numbers of the names the operator uses ("" is 0, "not given"); a name the
    /// interface does not know is 200, out of range.
    fn ty(name: &str) -> u8 {
        match name {
            "" => 0,
            "none" => VirtualFixture::TYPE_NONE,
            "path" => VirtualFixture::TYPE_PATH,
            "plane" => VirtualFixture::TYPE_PLANE,
            "point" => VirtualFixture::TYPE_POINT,
            "rcm_cone" => VirtualFixture::TYPE_RCM_CONE,
            _ => 200,
        }
    }
    fn md(name: &str) -> u8 {
        match name {
            "" => 0,
            "free" => VirtualFixture::MODE_FREE,
            "open_loop" => VirtualFixture::MODE_OPEN_LOOP,
            "closed_loop" => VirtualFixture::MODE_CLOSED_LOOP,
            _ => 200,
        }
    }
    fn comb(name: &str) -> u8 {
        match name {
            "" => 0,
            "intersect" => VirtualFixture::COMBINATION_INTERSECT,
            "priority" => VirtualFixture::COMBINATION_PRIORITY,
            _ => 200,
        }
    }
    fn seq(name: &str) -> u8 {
        match name {
            "empty" => VirtualFixture::SEQUENCE_EMPTY,
            "ready" => VirtualFixture::SEQUENCE_READY,
            "running" => VirtualFixture::SEQUENCE_RUNNING,
            "stopped" => VirtualFixture::SEQUENCE_STOPPED,
            "finished" => VirtualFixture::SEQUENCE_FINISHED,
            _ => 200,
        }
    }
    fn cmd(name: &str) -> u8 {
        match name {
            "start" => SequenceControlRequest::COMMAND_START,
            "stop" => SequenceControlRequest::COMMAND_STOP,
            "step" => SequenceControlRequest::COMMAND_STEP,
            "reset" => SequenceControlRequest::COMMAND_RESET,
            _ => 200,
        }
    }

    fn step(name: &str, primary: &str, secondary: &str, completion: &str) -> FixtureStep {
        FixtureStep {
            name: name.into(),
            primary: ty(primary),
            secondary: ty(secondary),
            completion: match completion {
                "" | "manual" => FixtureStep::COMPLETION_MANUAL,
                "error_below" => FixtureStep::COMPLETION_ERROR_BELOW,
                "path_end" => FixtureStep::COMPLETION_PATH_END,
                "duration" => FixtureStep::COMPLETION_DURATION,
                _ => 200,
            },
            ..Default::default()
        }
    }

    #[test]
    fn guidance_combines_and_sequences_fixtures() {
        let env = TestEnv::new();
        let mut sim = spawn_robot_sim(&env, &["-p", START, "-p", "update_rate:=500.0"]);
        let cfg = repo_root().join("config");
        let mut guidance = spawn_node(
            &env,
            "steady_hand_guidance",
            &[
                vec![
                    "--params-file".to_string(),
                    cfg.join("steady_hand_guidance.yaml").display().to_string(),
                ],
                p(&format!(
                    "robot_description_file:={}",
                    rx60_urdf().display()
                ))
                .to_vec(),
            ]
            .concat(),
            "steady_hand_guidance ready",
        );
        // the tool pose at the start configuration (the robot does not move: no controller)
        let q = [0.0, 0.5, 1.5, 0.0, 1.14, 0.0];
        let pose = rx60_robot().link_pose("tool0", &q).unwrap();
        let tp = [
            pose.translation.vector[0],
            pose.translation.vector[1],
            pose.translation.vector[2],
        ];
        let m = pose.rotation.to_rotation_matrix();
        let tz = [m[(0, 2)], m[(1, 2)], m[(2, 2)]];
        assert!(
            (tp[2] - 0.4).abs() > 1e-3,
            "the test needs the tool off the plane z = 0.4: {tp:?}"
        );

        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let domain = env.domain_id.to_string();
        runtime.block_on(async move {
            let ros_env =
                RosEnv::from_vars(|k| (k == "ROS_DOMAIN_ID").then(|| domain.clone())).unwrap();
            let mut node =
                RosNode::new("vf_sequence_client", ros_env, RosArgs::default(), &[]).unwrap();
            let fx_sub = node
                .subscription::<VirtualFixture>("/virtual_fixture", qos::default())
                .unwrap();
            let combine = node
                .client::<CombineFixtures>("/steady_hand_guidance/combine")
                .unwrap();
            let load = node
                .client::<LoadSequence>("/steady_hand_guidance/load_sequence")
                .unwrap();
            let control = node
                .client::<SequenceControl>("/steady_hand_guidance/sequence")
                .unwrap();
            node.wait_for_service(&combine, Duration::from_secs(20))
                .await
                .expect("service appears");
            node.wait_for_service(&load, Duration::from_secs(20))
                .await
                .expect("service appears");
            node.wait_for_service(&control, Duration::from_secs(20))
                .await
                .expect("service appears");
            let t = Duration::from_secs(10);
            let mut fixtures = std::pin::pin!(fx_sub.async_stream());
            // the next fixture that satisfies `pred`, within 5 s
            macro_rules! wait_for {
                ($what:expr, $pred:expr) => {{
                    let deadline = Instant::now() + Duration::from_secs(5);
                    loop {
                        let left = deadline.saturating_duration_since(Instant::now());
                        let item = tokio::time::timeout(left, fixtures.next())
                            .await
                            .unwrap_or_else(|_| panic!("no fixture with {} within 5 s", $what));
                        let (f, _) = item.expect("stream open").expect("fixture decodes");
                        let pred: &dyn Fn(&VirtualFixture) -> bool = &$pred;
                        if pred(&f) {
                            break f;
                        }
                    }
                }};
            }
            let combine_req = |p: &str, s: &str, c: &str, m: &str| CombineFixturesRequest {
                primary: ty(p),
                secondary: ty(s),
                combination: comb(c),
                mode: md(m),
            };
            let ctl = |c: &str| SequenceControlRequest { command: cmd(c) };

            // --- bad requests are refused with a reason
            for (req, needle) in [
                (
                    combine_req("cylinder", "plane", "", ""),
                    "unknown fixture type 200",
                ),
                (combine_req("plane", "plane", "", ""), "both"),
                (combine_req("path", "rcm_cone", "", ""), "no path"),
                (
                    combine_req("plane", "point", "union", ""),
                    "unknown combination 200",
                ),
                (combine_req("plane", "", "", ""), "secondary"),
            ] {
                let r = combine.call(req, t).await.unwrap();
                assert!(
                    !r.success && r.message.contains(needle),
                    "{needle}: {}",
                    r.message
                );
            }
            let r = load
                .call(
                    LoadSequenceRequest {
                        steps: vec![],
                        start: true,
                    },
                    t,
                )
                .await
                .unwrap();
            assert!(
                !r.success && r.message.contains("no steps"),
                "{}",
                r.message
            );
            let mut nan = step("approach", "point", "", "error_below");
            nan.threshold = f64::NAN;
            let r = load
                .call(
                    LoadSequenceRequest {
                        steps: vec![step("a", "plane", "", ""), nan],
                        start: true,
                    },
                    t,
                )
                .await
                .unwrap();
            assert!(
                !r.success && r.message.contains("step 1 `approach`"),
                "{}",
                r.message
            );
            let r = load
                .call(
                    LoadSequenceRequest {
                        steps: vec![step("x", "torus", "", "")],
                        start: false,
                    },
                    t,
                )
                .await
                .unwrap();
            assert!(
                !r.success && r.message.contains("unknown fixture type 200"),
                "{}",
                r.message
            );
            let r = control.call(ctl("start"), t).await.unwrap();
            assert!(
                !r.success && r.state == seq("empty") && r.step == -1,
                "{r:?}"
            );
            let r = control.call(ctl("jump"), t).await.unwrap();
            assert!(!r.success && r.message.contains("`200`"), "{}", r.message);

            // --- plane (primary) with the RCM cone inside it (priority)
            let r = combine
                .call(combine_req("plane", "rcm_cone", "priority", "open_loop"), t)
                .await
                .unwrap();
            assert!(r.success, "{}", r.message);
            let f = wait_for!("priority", |f: &VirtualFixture| f.combination
                == comb("priority"));
            assert_eq!(
                (f.fixture_type, f.secondary_type, f.mode),
                (ty("plane"), ty("rcm_cone"), md("open_loop"))
            );
            assert!(!f.fallback);
            assert_eq!((f.sequence_step, f.sequence_state), (-1, seq("empty")));
            assert_eq!(f.n, 1, "{f:?}");
            let (d, u) = expected_plane_cone(tp, tz);
            // D's sign is arbitrary
            let sign = if f.d[0] * d[0] + f.d[1] * d[1] < 0.0 {
                -1.0
            } else {
                1.0
            };
            for k in 0..6 {
                assert!((f.d[k] * sign - d[k]).abs() < 1e-9, "D {:?} vs {d:?}", f.d);
                assert!((f.u[k] - u[k]).abs() < 1e-9, "u {:?} vs {u:?}", f.u);
            }

            // --- plane ∩ point: no common direction off the plane: the plane alone, flagged
            let r = combine
                .call(combine_req("plane", "point", "intersect", ""), t)
                .await
                .unwrap();
            assert!(r.success, "{}", r.message);
            let f = wait_for!("intersect", |f: &VirtualFixture| f.combination
                == comb("intersect"));
            assert!(f.fallback, "{f:?}");
            assert_eq!(f.n, 2);
            for c in f.d.chunks(6) {
                assert!(c[2].abs() < 1e-12 && c[3..].iter().all(|x| x.abs() < 1e-12));
            }
            assert!((f.u[2] + (tp[2] - 0.4) * 100.0).abs() < 1e-9);

            // --- sequence: approach the point, then hold plane + cone
            let mut approach = step("approach", "point", "", "error_below");
            approach.threshold = 10.0; // m: met at once; the dwell time decides
            approach.dwell_s = 0.4;
            approach.mode = md("closed_loop");
            let hold = FixtureStep {
                combination: comb("priority"),
                ..step("hold", "plane", "rcm_cone", "manual")
            };
            let r = load
                .call(
                    LoadSequenceRequest {
                        steps: vec![approach, hold],
                        start: true,
                    },
                    t,
                )
                .await
                .unwrap();
            assert!(r.success && r.length == 2, "{}", r.message);
            let f0 = wait_for!("step 0", |f: &VirtualFixture| f.sequence_step == 0);
            let t0 = Instant::now();
            assert_eq!(
                (
                    f0.fixture_type,
                    f0.mode,
                    f0.sequence_state,
                    f0.sequence_step_name.as_str(),
                    f0.sequence_length
                ),
                (
                    ty("point"),
                    md("closed_loop"),
                    seq("running"),
                    "approach",
                    2
                )
            );
            assert_eq!(f0.combination, comb(""));
            let f1 = wait_for!("step 1", |f: &VirtualFixture| f.sequence_step == 1);
            let dwell = t0.elapsed().as_secs_f64();
            assert!(
                (0.3..2.0).contains(&dwell),
                "step 0 lasted {dwell} s (dwell 0.4 s)"
            );
            assert_eq!(
                (
                    f1.fixture_type,
                    f1.secondary_type,
                    f1.combination,
                    f1.sequence_step_name.as_str(),
                    f1.mode
                ),
                (
                    ty("plane"),
                    ty("rcm_cone"),
                    comb("priority"),
                    "hold",
                    md("open_loop")
                )
            );
            assert_eq!(f1.n, 1);
            // manual step: the operator moves on; the last step then holds
            let r = control.call(ctl("step"), t).await.unwrap();
            assert!(
                r.success && r.state == seq("finished") && r.step == 1,
                "{r:?}"
            );
            let f = wait_for!("finished", |f: &VirtualFixture| f.sequence_state
                == seq("finished"));
            assert_eq!((f.sequence_step, f.combination), (1, comb("priority")));
            // stop: the operator's fixture (plane ∩ point) is back
            let r = control.call(ctl("stop"), t).await.unwrap();
            assert!(r.success && r.state == seq("stopped"), "{r:?}");
            let f = wait_for!("stopped", |f: &VirtualFixture| f.sequence_state
                == seq("stopped"));
            assert_eq!(
                (f.sequence_step, f.combination, f.secondary_type),
                (-1, comb("intersect"), ty("point"))
            );
            // reset and start: step 0 again
            let r = control.call(ctl("reset"), t).await.unwrap();
            assert!(r.success && r.state == seq("ready") && r.step == 0, "{r:?}");
            let r = control.call(ctl("start"), t).await.unwrap();
            assert!(r.success && r.state == seq("running"), "{r:?}");
            let f = wait_for!("restart", |f: &VirtualFixture| f.sequence_state
                == seq("running"));
            assert_eq!(f.sequence_step, 0);
        });
        guidance.stop(Duration::from_secs(3));
        sim.stop(Duration::from_secs(3));
        let log = guidance.output().join("\n");
        assert!(
            log.contains("sequence: step 0 `approach` complete"),
            "{log}"
        );
        assert!(
            log.contains("is empty here"),
            "fallback warning logged: {log}"
        );
    }
}

/// Issue 12 item 2: the controller stops the robot itself when it exits, instead of leaving
/// it at its last velocity until robot_sim's command timeout.
mod stop_on_exit {
    use super::*;
    use futures::StreamExt;
    use rpq_ros::{args::RosArgs, env::RosEnv, node::RosNode, qos};
    use std::time::Instant;

    /// Largest joint speed of a joint state, rad/s.
    fn max_speed(js: &JointState) -> f64 {
        js.velocity.iter().fold(0.0_f64, |m, v| m.max(v.abs()))
    }

    /// A steady push moves the robot; SIGINT to the controller must bring robot_sim's reported
    /// joint velocities to zero within 100 ms, well before robot_sim's own 0.5 s command
    /// timeout would (the old controller left the robot moving until then).
    #[test]
    fn sigint_stops_the_robot_at_once() {
        let env = TestEnv::new();
        let bound = Duration::from_millis(100);
        let sim_timeout = 0.5;
        let _sim = spawn_robot_sim(
            &env,
            &[
                "-p",
                START,
                "-p",
                "update_rate:=500.0",
                "-p",
                &format!("velocity_command_timeout:={sim_timeout:?}"),
            ],
        );
        let cfg = repo_root().join("config");
        let ctl = spawn_node(
            &env,
            "admittance_controller",
            &[
                vec![
                    "--params-file".to_string(),
                    cfg.join("admittance_controller.yaml").display().to_string(),
                ],
                p(&format!(
                    "robot_description_file:={}",
                    rx60_urdf().display()
                ))
                .to_vec(),
                p("fixture.required:=false").to_vec(),
            ]
            .concat(),
            "admittance_controller ready",
        );

        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let domain = env.domain_id.to_string();
        let (signalled, states, stopper) = runtime.block_on(async move {
            let ros_env =
                RosEnv::from_vars(|k| (k == "ROS_DOMAIN_ID").then(|| domain.clone())).unwrap();
            let mut node =
                RosNode::new("stop_on_exit_pusher", ros_env, RosArgs::default(), &[]).unwrap();
            let wrench_pub = node
                .publisher::<WrenchStamped>(WRENCH_TOPIC, qos::default())
                .unwrap();
            let js_sub = node
                .subscription::<JointState>("/joint_states", qos::default())
                .unwrap();
            let mut joint_states = std::pin::pin!(js_sub.async_stream());
            let mut push = tokio::time::interval(Duration::from_millis(5));
            let t0 = Instant::now();
            let mut moving_since: Option<Instant> = None;
            let mut ctl = Some(ctl);
            let mut signalled: Option<Instant> = None;
            let mut stopper = None;
            // (arrival, largest joint speed) of every joint state after the signal
            let mut states: Vec<(Instant, f64)> = Vec::new();
            loop {
                tokio::select! {
                    _ = push.tick() => {
                        // 10 N along x of the tool frame: well above the deadband
                        let msg = WrenchStamped {
                            wrench: Wrench {
                                force: Vector3 { x: 10.0, y: 0.0, z: 0.0 },
                                ..Default::default()
                            },
                            ..Default::default()
                        };
                        wrench_pub.publish(msg).expect("wrench published");
                    }
                    item = joint_states.next() => {
                        let (js, _) = item.expect("joint_states stream").expect("joint state");
                        let now = Instant::now();
                        let speed = max_speed(&js);
                        if let Some(ts) = signalled {
                            states.push((now, speed));
                            if now - ts > Duration::from_secs_f64(0.8 * sim_timeout) {
                                break;
                            }
                        } else if speed > 1e-3 {
                            let since = *moving_since.get_or_insert(now);
                            if now - since > Duration::from_millis(300) {
                                // SIGINT from another thread (`stop` waits for the exit)
                                let mut c = ctl.take().unwrap();
                                signalled = Some(Instant::now());
                                stopper = Some(std::thread::spawn(move || {
                                    let code = c.stop(Duration::from_secs(3));
                                    (code, c.output())
                                }));
                            }
                        } else {
                            moving_since = None;
                        }
                    }
                }
                assert!(
                    t0.elapsed() < Duration::from_secs(8),
                    "the robot never moved under the push"
                );
            }
            (signalled.unwrap(), states, stopper.unwrap())
        });
        let (code, output) = stopper.join().unwrap();
        assert_eq!(code, Some(0), "controller output:\n{}", output.join("\n"));
        assert!(
            !output.iter().any(|l| l.contains("stop commands not sent")),
            "{output:?}"
        );
        assert!(!states.is_empty(), "no joint states after the signal");
        // the first joint state from which on every reported velocity is zero
        let last_moving = states.iter().rposition(|(_, v)| *v > 1e-9);
        let stopped_at = match last_moving {
            None => states[0].0,
            Some(k) => {
                assert!(
                    k + 1 < states.len(),
                    "the robot still moved {:.0} ms after SIGINT",
                    (states[k].0 - signalled).as_secs_f64() * 1e3
                );
                states[k + 1].0
            }
        };
        let latency = stopped_at.saturating_duration_since(signalled);
        eprintln!(
            "steady_hand stop on exit: joint velocities zero {:.1} ms after SIGINT (bound {:.0} ms, robot_sim timeout {:.0} ms)",
            latency.as_secs_f64() * 1e3,
            bound.as_secs_f64() * 1e3,
            sim_timeout * 1e3
        );
        assert!(
            latency <= bound,
            "joint velocities zero {latency:?} after SIGINT, bound {bound:?}"
        );
    }
}
