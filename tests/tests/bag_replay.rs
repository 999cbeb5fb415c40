//! The rosbag2 replay harness against the real `robot_sim` node.
//!
//! `tests/bags/robot_sim_commands/` is a bag written by a third-party writer (`rosbags`, from
//! `tests/bags/robot_sim_commands.yaml`): position commands, invalid commands, a velocity burst
//! and trajectories for the RX60. `rpq_bag replay` plays it into a running `robot_sim` with the
//! recorded timing and records `/joint_states`, `/robot_sim/status` and `/robot_description`
//! into a new bag. The test then checks
//! * that bag against `tests/bags/robot_sim_commands.expected.yaml` (joint positions the
//!   commands lead to, rejected-command counts, motion starting when each command was due),
//!   and every joint state against the URDF's limits;
//! * the expectations against the input bag itself (targets = commanded values) and the URDF
//!   (every move fits its time slot at the joints' velocity limits);
//! * that two third-party readers (`rosbags`, `mcap-ros2-support`) decode the bag identically
//!   (`tests/python/bag_check.py`).
//!
//! Opens DDS sockets: runs only inside the private network namespace (tests/run_all.sh).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rpq_bag::live::{KEY_FIRST_LOG_TIME, KEY_MAX_LATENESS, KEY_RATE, KEY_SENT, KEY_START_TIME};
use rpq_bag::{BagMessage, BagReader};
use rpq_kinematics::Robot;
use rpq_ros::cdr;
use rpq_ros::interfaces::rpq_interfaces::msg::DriverStatus;
use rpq_ros::msg::{sensor_msgs::JointState, std_msgs, trajectory_msgs::JointTrajectory};
use rpq_tests::{bin, peer_script, python, repo_root, run_with_timeout, NodeProcess, TestEnv};
use serde::Deserialize;

const POSITION_TOPIC: &str = "/forward_position_controller/commands";
const VELOCITY_TOPIC: &str = "/forward_velocity_controller/commands";
const TRAJECTORY_TOPIC: &str = "/joint_trajectory_controller/joint_trajectory";
const STATUS_TOPIC: &str = "/robot_sim/status";

/// Still at rest this long before a command was due.
const REST_BEFORE: f64 = 0.02;
/// Moving this long after a command was due (delivery + one joint-state period, with margin
/// for a loaded machine; every slot is at least 0.5 s).
const MOVING_AFTER: f64 = 0.2;
/// Latency allowed between a command being due and robot_sim getting it, in the reachability
/// check of the expectations.
const LATENCY_MARGIN: f64 = 0.15;

#[derive(Debug, Deserialize)]
struct Expected {
    robot_sim_parameters: BTreeMap<String, serde_yaml::Value>,
    joints: Vec<String>,
    initial: Vec<f64>,
    holds: Vec<Hold>,
    starts: Vec<Start>,
    passes: Vec<Pass>,
    rejected_total: u32,
}

#[derive(Debug, Deserialize)]
struct Hold {
    name: String,
    from: f64,
    until: f64,
    tolerance: f64,
    rejected: u32,
    mode: String,
    positions: Vec<f64>,
}

#[derive(Debug, Deserialize)]
struct Start {
    name: String,
    t: f64,
    kind: String,
    rest: String,
    ends: String,
}

#[derive(Debug, Deserialize)]
struct Pass {
    name: String,
    from: f64,
    until: f64,
    tolerance: f64,
    positions: Vec<f64>,
}

impl Expected {
    fn load() -> Expected {
        let path = repo_root().join("tests/bags/robot_sim_commands.expected.yaml");
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        serde_yaml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    fn hold(&self, name: &str) -> &Hold {
        self.holds
            .iter()
            .find(|h| h.name == name)
            .unwrap_or_else(|| panic!("expected.yaml names hold `{name}`, which it does not have"))
    }

    /// Positions and tolerance of a `rest` reference.
    fn rest(&self, name: &str) -> (&[f64], f64) {
        if name == "initial" {
            (&self.initial, 1e-9)
        } else {
            let h = self.hold(name);
            (&h.positions, h.tolerance)
        }
    }
}

fn max_abs_diff(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len(), "vector lengths differ: {a:?} vs {b:?}");
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

/// Seconds after the input bag's start (first message at 0) of each input message.
fn input_messages(input: &BagReader) -> Vec<(f64, &BagMessage)> {
    let start = input.start_time().expect("input bag has messages");
    input
        .messages()
        .iter()
        .map(|m| ((m.log_time - start) as f64 * 1e-9, m))
        .collect()
}

fn float_array(m: &BagMessage) -> Vec<f64> {
    cdr::from_bytes::<std_msgs::Float64MultiArray>(&m.data)
        .expect("Float64MultiArray")
        .data
}

/// Checks the expectations against the input bag and the robot model: each expected end state
/// is what its command says, and every position move fits its slot at the velocity limits.
fn check_expectations(expected: &Expected, input: &BagReader, robot: &Robot) {
    let names: Vec<&str> = robot.joint_names().collect();
    assert_eq!(names, expected.joints, "expected.yaml joints vs the URDF");
    let limits = robot.joint_limits();
    let timeout = expected.robot_sim_parameters["velocity_command_timeout"]
        .as_f64()
        .expect("velocity_command_timeout is a number");
    let msgs = input_messages(input);
    let at = |t: f64, topic: &str| -> &BagMessage {
        msgs.iter()
            .find(|(tm, m)| (tm - t).abs() < 1e-6 && m.topic == topic)
            .unwrap_or_else(|| panic!("input bag has no {topic} message at {t} s"))
            .1
    };
    for s in &expected.starts {
        let (rest, _) = expected.rest(&s.rest);
        let end = expected.hold(&s.ends);
        let derived: Vec<f64> = match s.kind.as_str() {
            "position" => {
                let target = float_array(at(s.t, POSITION_TOPIC));
                // Reachable within the slot at the joints' velocity limits.
                let needed = rest
                    .iter()
                    .zip(&target)
                    .zip(limits)
                    .map(|((a, b), l)| (a - b).abs() / l.velocity)
                    .fold(0.0, f64::max);
                assert!(
                    s.t + needed + LATENCY_MARGIN <= end.from,
                    "{}: the move needs {needed:.3} s, hold `{}` starts {:.3} s after it",
                    s.name,
                    end.name,
                    end.from - s.t
                );
                target
            }
            "velocity" => {
                let burst: Vec<(f64, Vec<f64>)> = msgs
                    .iter()
                    .filter(|(t, m)| m.topic == VELOCITY_TOPIC && *t >= s.t && *t < end.from)
                    .map(|(t, m)| (*t, float_array(m)))
                    .filter(|(_, v)| v.len() == rest.len())
                    .collect();
                let (first, v) = &burst[0];
                assert!(
                    burst.iter().all(|(_, w)| w == v),
                    "{}: one velocity",
                    s.name
                );
                let last = burst.last().unwrap().0;
                let moving = last - first + timeout;
                rest.iter().zip(v).map(|(p, v)| p + v * moving).collect()
            }
            "trajectory" => {
                let traj = cdr::from_bytes::<JointTrajectory>(&at(s.t, TRAJECTORY_TOPIC).data)
                    .expect("JointTrajectory");
                assert_eq!(traj.joint_names, expected.joints);
                for p in &expected.passes {
                    if p.from >= s.t && p.from < end.from {
                        assert!(
                            traj.points.iter().any(|pt| pt.positions == p.positions),
                            "{}: not a point of the trajectory at {} s",
                            p.name,
                            s.t
                        );
                    }
                }
                traj.points.last().unwrap().positions.clone()
            }
            other => panic!("unknown start kind {other}"),
        };
        assert!(
            max_abs_diff(&derived, &end.positions) < 1e-9,
            "{}: the input bag leads to {derived:?}, expected.yaml says {:?}",
            s.name,
            end.positions
        );
        for (p, l) in end.positions.iter().zip(limits) {
            assert!(l.contains(*p), "{}: {p} outside {l:?}", end.name);
        }
    }
}

/// The recorded bag, with the replay clock.
struct Recording {
    reader: BagReader,
    /// Wall time (ns) at which an input time (s after the input start) was due.
    start_ns: u64,
    input_offset_ns: i128,
    rate: f64,
}

impl Recording {
    fn wall(&self, t: f64) -> i128 {
        let since_first = t * 1e9 - self.input_offset_ns as f64;
        self.start_ns as i128 + (since_first / self.rate).round() as i128
    }

    fn messages(&self, topic: &str) -> impl Iterator<Item = &BagMessage> + '_ {
        let topic = topic.to_string();
        self.reader
            .messages()
            .iter()
            .filter(move |m| m.topic == topic)
    }
}

struct Sample {
    time: i128,
    state: JointState,
}

fn joint_states(rec: &Recording) -> Vec<Sample> {
    rec.messages("/joint_states")
        .map(|m| Sample {
            time: m.log_time as i128,
            state: cdr::from_bytes::<JointState>(&m.data).expect("JointState decodes"),
        })
        .collect()
}

/// The `DriverStatus::MODE_*` number of a mode as the expectations name it.
fn driver_mode(name: &str) -> u8 {
    match name {
        "idle" => DriverStatus::MODE_IDLE,
        "position" => DriverStatus::MODE_POSITION,
        "velocity" => DriverStatus::MODE_VELOCITY,
        "trajectory" => DriverStatus::MODE_TRAJECTORY,
        other => panic!("unknown DriverStatus mode `{other}` in the expectations"),
    }
}

fn statuses(rec: &Recording) -> Vec<(i128, DriverStatus)> {
    rec.messages(STATUS_TOPIC)
        .map(|m| {
            (
                m.log_time as i128,
                cdr::from_bytes::<DriverStatus>(&m.data).expect("DriverStatus decodes"),
            )
        })
        .collect()
}

/// The last joint state received at or before wall time `t`.
fn state_at(samples: &[Sample], t: i128) -> &Sample {
    let i = samples.partition_point(|s| s.time <= t);
    assert!(i > 0, "no joint state before {t}");
    &samples[i - 1]
}

fn check_recording(expected: &Expected, rec: &Recording, robot: &Robot) {
    let samples = joint_states(rec);
    let limits = robot.joint_limits();
    // Every state: our joints, finite, within the position and velocity limits.
    assert!(samples.len() > 500, "only {} joint states", samples.len());
    for s in &samples {
        let js = &s.state;
        assert_eq!(js.name, expected.joints);
        assert_eq!(js.position.len(), limits.len());
        for (i, (p, l)) in js.position.iter().zip(limits).enumerate() {
            assert!(
                p.is_finite() && *p >= l.lower && *p <= l.upper,
                "joint {i} at {p} outside {l:?}"
            );
        }
        for (v, l) in js.velocity.iter().zip(limits) {
            assert!(
                v.is_finite() && v.abs() <= l.velocity + 1e-9,
                "velocity {v}"
            );
        }
    }
    let status = statuses(rec);
    assert!(!status.is_empty(), "no /robot_sim/status recorded");
    assert!(
        status
            .windows(2)
            .all(|w| w[0].1.rejected_commands <= w[1].1.rejected_commands),
        "rejected_commands went down"
    );
    assert_eq!(
        status.last().unwrap().1.rejected_commands,
        expected.rejected_total
    );

    for h in &expected.holds {
        let (from, until) = (rec.wall(h.from), rec.wall(h.until));
        let window: Vec<&Sample> = samples
            .iter()
            .filter(|s| s.time >= from && s.time <= until)
            .collect();
        assert!(
            window.len() >= 10,
            "{}: only {} joint states in the window",
            h.name,
            window.len()
        );
        let first = &window[0].state.position;
        for s in &window {
            let err = max_abs_diff(&s.state.position, &h.positions);
            assert!(
                err <= h.tolerance,
                "{}: {:?} is {err:.3e} from {:?} at {:.3} s",
                h.name,
                s.state.position,
                h.positions,
                (s.time - rec.wall(0.0)) as f64 * 1e-9
            );
            assert!(
                max_abs_diff(&s.state.position, first) <= 1e-9,
                "{}: the robot moved within the window",
                h.name
            );
        }
        let (_, st) = status
            .iter()
            .rev()
            .find(|(t, _)| *t <= until)
            .unwrap_or_else(|| panic!("{}: no status before the window's end", h.name));
        assert_eq!(st.rejected_commands, h.rejected, "{}: {st:?}", h.name);
        assert_eq!(st.mode, driver_mode(&h.mode), "{}: {st:?}", h.name);
        assert!(st.holding, "{}: status not holding: {st:?}", h.name);
    }

    for s in &expected.starts {
        let (rest, tol) = expected.rest(&s.rest);
        let before = state_at(&samples, rec.wall(s.t - REST_BEFORE));
        assert!(
            max_abs_diff(&before.state.position, rest) <= tol,
            "{}: moved before the command was due: {:?}",
            s.name,
            before.state.position
        );
        let after = state_at(&samples, rec.wall(s.t + MOVING_AFTER));
        assert!(
            max_abs_diff(&after.state.position, rest) > 1e-3,
            "{}: not moving {MOVING_AFTER} s after the command was due",
            s.name
        );
    }

    for p in &expected.passes {
        let (from, until) = (rec.wall(p.from), rec.wall(p.until));
        let closest = samples
            .iter()
            .filter(|s| s.time >= from && s.time <= until)
            .map(|s| max_abs_diff(&s.state.position, &p.positions))
            .fold(f64::INFINITY, f64::min);
        assert!(
            closest <= p.tolerance,
            "{}: came no closer than {closest:.4}",
            p.name
        );
    }
}

fn write_params(dir: &Path, params: &BTreeMap<String, serde_yaml::Value>) -> PathBuf {
    let mut doc = BTreeMap::new();
    doc.insert(
        "robot_sim",
        BTreeMap::from([("ros__parameters", params.clone())]),
    );
    let path = dir.join("robot_sim_params.yaml");
    std::fs::write(&path, serde_yaml::to_string(&doc).unwrap()).unwrap();
    path
}

/// Starts robot_sim with the parameter file `params`, the RX60 URDF and the further ROS
/// arguments `sim_args`, plays the robot_sim_commands bag into it with `rpq_bag replay` and
/// the options `replay_args` (recording into `output`), checks that both ran cleanly, stops
/// robot_sim and returns how long the replay took (s).
fn replay_into_robot_sim(
    env: &TestEnv,
    params: &Path,
    sim_args: &[&str],
    output: &Path,
    replay_args: &[&str],
) -> f64 {
    let urdf = repo_root().join("urdf/rx60b.urdf");
    let mut sim_cmd = env.command(bin("robot_sim"));
    sim_cmd.args(["--ros-args", "--params-file"]).arg(params);
    sim_cmd
        .arg("-p")
        .arg(format!("robot_description_file:={}", urdf.display()))
        .args(sim_args);
    let mut sim = NodeProcess::spawn("robot_sim", sim_cmd);
    sim.wait_for_output("robot_sim ready:", Duration::from_secs(20));

    let mut replay_cmd = env.command(bin("rpq_bag"));
    replay_cmd
        .arg("replay")
        .arg(repo_root().join("tests/bags/robot_sim_commands"))
        .arg("--output")
        .arg(output)
        .args(replay_args)
        .args(["--wait-timeout", "20"]);
    let t_replay = Instant::now();
    let mut replay = NodeProcess::spawn("rpq_bag replay", replay_cmd);
    let code = replay.wait_exit(Duration::from_secs(60));
    let replay_s = t_replay.elapsed().as_secs_f64();
    assert_eq!(
        code,
        Some(Some(0)),
        "rpq_bag replay {} failed (or hung for 60 s); output:\n{}",
        replay_args.join(" "),
        replay.output().join("\n")
    );
    assert!(
        sim.is_running(),
        "robot_sim died:\n{}",
        sim.output().join("\n")
    );
    sim.stop(Duration::from_secs(3));
    replay_s
}

#[test]
fn replaying_commands_into_robot_sim_gives_the_expected_joint_states() {
    let t_test = Instant::now();
    let env = TestEnv::new();
    let root = repo_root();
    let input_dir = root.join("tests/bags/robot_sim_commands");
    let urdf = root.join("urdf/rx60b.urdf");
    let robot = Robot::from_urdf_file(&urdf).expect("URDF loads");
    let expected = Expected::load();
    let input = BagReader::open(&input_dir).expect("input bag opens");
    check_expectations(&expected, &input, &robot);

    let work = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "bag_replay_{}_{}",
        std::process::id(),
        env.domain_id
    ));
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).unwrap();
    let params = write_params(&work, &expected.robot_sim_parameters);
    let output = work.join("recorded");

    let replay_s = replay_into_robot_sim(
        &env,
        &params,
        &[],
        &output,
        &[
            "--record",
            "/joint_states",
            STATUS_TOPIC,
            "/robot_description",
            "--rate",
            "1",
            "--start-delay",
            "0.5",
            "--settle",
            "1.5",
        ],
    );

    let reader = BagReader::open(&output).expect("recorded bag opens");
    let meta = reader.metadata().expect("metadata.yaml").clone();
    let custom = meta
        .custom_data
        .clone()
        .expect("replay clock in custom_data");
    let num = |k: &str| -> f64 {
        custom[k]
            .parse()
            .unwrap_or_else(|_| panic!("{k}: {}", custom[k]))
    };
    assert_eq!(num(KEY_SENT) as u64, input.message_count());
    let lateness_ms = num(KEY_MAX_LATENESS) * 1e-6;
    assert!(lateness_ms < 100.0, "sends up to {lateness_ms} ms late");
    let first_log: u64 = custom[KEY_FIRST_LOG_TIME].parse().unwrap();
    let rec = Recording {
        start_ns: custom[KEY_START_TIME].parse().unwrap(),
        input_offset_ns: first_log as i128 - input.start_time().unwrap() as i128,
        rate: num(KEY_RATE),
        reader,
    };
    assert_eq!(rec.rate, 1.0);
    let description = rec
        .messages("/robot_description")
        .next()
        .expect("latched /robot_description recorded");
    let text = cdr::from_bytes::<std_msgs::String>(&description.data).unwrap();
    assert!(text.data.contains("<robot"), "robot_description is a URDF");

    check_recording(&expected, &rec, &robot);

    // Third-party readers: rosbags and mcap-ros2-support decode the bag we wrote, identically.
    let mut check_cmd = env.command(python());
    check_cmd
        .arg(peer_script("bag_check.py"))
        .arg(&output)
        .args(["--expect", "/robot_description=1"])
        .args(["--expect", "/joint_states=+"])
        .args(["--expect", &format!("{STATUS_TOPIC}=+")]);
    let check = run_with_timeout("bag_check.py", check_cmd, Duration::from_secs(120));
    assert!(
        check.success,
        "bag_check.py refused the recorded bag:\n{}\n{}",
        check.stdout, check.stderr
    );
    eprintln!(
        "bag_replay: replay {replay_s:.1} s (sends at most {lateness_ms:.1} ms late), \
         {} messages recorded, test {:.1} s",
        meta.message_count,
        t_test.elapsed().as_secs_f64()
    );
    let _ = std::fs::remove_dir_all(&work);
}

/// With `use_sim_time:=true` robot_sim runs on the bag's time, which `rpq_bag replay --clock`
/// publishes on `/clock` while playing the same commands at twice the recorded speed:
/// * before the first `/clock` the joint states carry a zero stamp and the robot does not move;
/// * afterwards every stamp is bag time (2023), not wall time, and runs at twice the speed of
///   the wall clock;
/// * every hold of the expectations, looked up by stamp in bag time, holds: the moves take
///   their time in bag time, and the velocity watchdog stops the burst `velocity_command_timeout_s`
///   of bag time after its last command (on the wall clock, at rate 2, it would run twice as
///   long and stop `0.5 s × v` further on, far outside the 0.02 rad tolerance).
#[test]
fn replay_with_sim_time_stamps_and_watchdogs_follow_the_bag_clock() {
    const RATE: f64 = 2.0;
    let env = TestEnv::new();
    let input_dir = repo_root().join("tests/bags/robot_sim_commands");
    let expected = Expected::load();
    let input = BagReader::open(&input_dir).expect("input bag opens");
    let bag_start = input.start_time().expect("input bag has messages") as i128;
    let bag_end = input.end_time().expect("input bag has messages") as i128;
    let work = env.scratch(env!("CARGO_TARGET_TMPDIR"), "bag_replay_sim_time");
    let params = write_params(&work, &expected.robot_sim_parameters);
    let output = work.join("recorded");

    let settle = 1.5;
    let (rate, settle_arg) = (RATE.to_string(), settle.to_string());
    replay_into_robot_sim(
        &env,
        &params,
        &["-p", "use_sim_time:=true"],
        &output,
        &[
            "--record",
            "/joint_states",
            STATUS_TOPIC,
            "--rate",
            &rate,
            "--clock",
            "200",
            "--start-delay",
            "0.5",
            "--settle",
            &settle_arg,
        ],
    );

    let reader = BagReader::open(&output).expect("recorded bag opens");
    let custom = reader
        .metadata()
        .and_then(|m| m.custom_data.clone())
        .expect("replay clock in custom_data");
    let start_ns: i128 = custom[KEY_START_TIME].parse().unwrap();
    let first_log: i128 = custom[KEY_FIRST_LOG_TIME].parse().unwrap();
    assert_eq!(first_log, bag_start, "every topic of the bag is played");
    let stamp_ns = |t: &rpq_ros::msg::builtin_interfaces::Time| {
        i128::from(t.sec) * 1_000_000_000 + i128::from(t.nanosec)
    };
    // (receive time on the wall clock, header stamp), both in ns
    let samples: Vec<(i128, i128, JointState)> = reader
        .messages()
        .iter()
        .filter(|m| m.topic == "/joint_states")
        .map(|m| {
            let js = cdr::from_bytes::<JointState>(&m.data).expect("JointState decodes");
            (m.log_time as i128, stamp_ns(&js.header.stamp), js)
        })
        .collect();

    // Zero stamps only before the first /clock, and the robot at rest there.
    let first_stamped = samples
        .iter()
        .position(|(_, s, _)| *s != 0)
        .expect("no joint state carries a /clock stamp");
    assert!(
        samples[first_stamped..].iter().all(|(_, s, _)| *s != 0),
        "a zero stamp after the clock started"
    );
    for (_, _, js) in &samples[..first_stamped] {
        assert!(
            max_abs_diff(&js.position, &expected.initial) < 1e-9,
            "moved before any /clock: {:?}",
            js.position
        );
    }
    let stamped = &samples[first_stamped..];
    assert!(
        stamped.len() > 200,
        "only {} stamped joint states",
        stamped.len()
    );

    // Bag time, not wall time, and at twice the wall clock's speed.
    let latest = bag_end + ((settle + 1.0) * RATE * 1e9) as i128;
    for w in stamped.windows(2) {
        assert!(
            w[0].1 <= w[1].1,
            "stamps went backwards: {} then {}",
            w[0].1,
            w[1].1
        );
    }
    for (recv, stamp, _) in stamped {
        assert!(
            *stamp >= bag_start && *stamp <= latest,
            "stamp {stamp} is outside the bag's time [{bag_start}, {latest}] (received at {recv})"
        );
        if *recv >= start_ns {
            let bag_time_then = first_log + (((*recv - start_ns) as f64) * RATE) as i128;
            let lag = (bag_time_then - *stamp) as f64 * 1e-9;
            assert!(
                (-0.05..0.5).contains(&lag),
                "stamp {:.3} s into the bag, but the bag clock read {:.3} s when it arrived",
                (*stamp - bag_start) as f64 * 1e-9,
                (bag_time_then - bag_start) as f64 * 1e-9
            );
        }
    }

    // The expectations, by stamp: moves and the velocity watchdog run on bag time.
    assert!(expected
        .holds
        .iter()
        .any(|h| h.name == "V stopped by watchdog"));
    for h in &expected.holds {
        let from = bag_start + (h.from * 1e9) as i128;
        let until = bag_start + (h.until * 1e9) as i128;
        let window: Vec<&JointState> = stamped
            .iter()
            .filter(|(_, s, _)| *s >= from && *s <= until)
            .map(|(_, _, js)| js)
            .collect();
        assert!(
            window.len() >= 3,
            "{}: only {} joint states stamped in [{}, {}] s of the bag",
            h.name,
            window.len(),
            h.from,
            h.until
        );
        for js in window {
            let err = max_abs_diff(&js.position, &h.positions);
            assert!(
                err <= h.tolerance,
                "{}: {:?} is {err:.3e} from {:?}",
                h.name,
                js.position,
                h.positions
            );
        }
    }
    let status: Vec<DriverStatus> = reader
        .messages()
        .iter()
        .filter(|m| m.topic == STATUS_TOPIC)
        .map(|m| cdr::from_bytes::<DriverStatus>(&m.data).expect("DriverStatus decodes"))
        .collect();
    let last = status.last().expect("no status recorded");
    assert_eq!(last.rejected_commands, expected.rejected_total);
    let s = stamp_ns(&last.header.stamp);
    assert!(
        s >= bag_start && s <= latest,
        "status stamp {s} is not bag time"
    );
    let _ = std::fs::remove_dir_all(&work);
}

#[test]
fn replay_without_a_subscriber_fails_clearly_and_writes_nothing() {
    let env = TestEnv::new();
    let work = env.scratch(env!("CARGO_TARGET_TMPDIR"), "bag_replay_nobody");
    let output = work.join("recorded");
    let mut cmd = env.command(bin("rpq_bag"));
    cmd.arg("replay")
        .arg(repo_root().join("tests/bags/robot_sim_commands"))
        .arg("--output")
        .arg(&output)
        .args(["--wait-timeout", "1"]);
    // --wait-timeout 1: it gives up after a second; 30 s more is a generous bound.
    let out = run_with_timeout("rpq_bag replay", cmd, Duration::from_secs(31));
    let stderr = &out.stderr;
    assert_eq!(out.code, Some(1), "{stderr}");
    for topic in [POSITION_TOPIC, VELOCITY_TOPIC, TRAJECTORY_TOPIC] {
        assert!(
            stderr.contains(&format!("no subscriber on played topic {topic}")),
            "{stderr}"
        );
    }
    assert!(!output.exists(), "a failed replay must not leave a bag");
    let _ = std::fs::remove_dir_all(&work);
}

#[test]
fn record_takes_type_and_qos_from_the_publishers() {
    let env = TestEnv::new();
    let work = env.scratch(env!("CARGO_TARGET_TMPDIR"), "bag_record");
    let output = work.join("recorded");
    let urdf = repo_root().join("urdf/rx60b.urdf");
    let mut sim_cmd = env.command(bin("robot_sim"));
    sim_cmd
        .args(["--ros-args", "-p"])
        .arg(format!("robot_description_file:={}", urdf.display()));
    let mut sim = NodeProcess::spawn("robot_sim", sim_cmd);
    sim.wait_for_output("robot_sim ready:", Duration::from_secs(20));
    let mut cmd = env.command(bin("rpq_bag"));
    cmd.args([
        "record",
        "/joint_states",
        "/robot_description",
        "--duration",
        "1",
    ])
    .arg("--output")
    .arg(&output);
    // --duration 1: it records for a second; 30 s more is a generous bound.
    let out = run_with_timeout("rpq_bag record", cmd, Duration::from_secs(31));
    assert!(out.success, "rpq_bag record failed:\n{}", out.stderr);
    sim.stop(Duration::from_secs(3));

    let bag = BagReader::open(&output).expect("recorded bag opens");
    let js = bag.topic("/joint_states").expect("/joint_states recorded");
    assert_eq!(js.type_name, "sensor_msgs/msg/JointState");
    assert_eq!(
        js.offered_qos_profiles,
        [rpq_bag::QosProfile::rclcpp_default()]
    );
    // 1 s at robot_sim's default 100 Hz.
    assert!(
        (50..=150).contains(&js.message_count),
        "{} joint states in 1 s",
        js.message_count
    );
    let desc = bag.topic("/robot_description").expect("/robot_description");
    assert_eq!(desc.type_name, "std_msgs/msg/String");
    // Latched by robot_sim, so recorded transient-local (and marked so for a replay).
    assert_eq!(desc.offered_qos_profiles, [rpq_bag::QosProfile::latched()]);
    assert_eq!(desc.message_count, 1);
    let text = bag
        .messages()
        .iter()
        .find(|m| m.topic == "/robot_description")
        .map(|m| cdr::from_bytes::<std_msgs::String>(&m.data).unwrap().data)
        .unwrap();
    // the URDF with its mesh names as the file:// URIs robot_sim publishes
    let published =
        rpq_ros::robot_description::RobotDescription::from_file(&urdf.display().to_string())
            .and_then(|d| d.with_resolvable_mesh_uris(&urdf))
            .unwrap();
    assert_eq!(text, published.urdf);
    let _ = std::fs::remove_dir_all(&work);
}
