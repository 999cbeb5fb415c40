//! Interop with real rclpy (ROS 2 Jazzy from PyPI, rmw_fastrtps_cpp): `robot_sim` seen and
//! driven from `tests/python/rclpy_peer.py`, and negative controls showing that these checks
//! fail when a message's field order is wrong.
//!
//! Every test opens DDS sockets: run inside `../shared/netns-run` (tests/run_all.sh does).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rpq_ros::{
    args::RosArgs,
    env::RosEnv,
    interfaces::rpq_interfaces::msg::DriverStatus,
    msg::{builtin_interfaces::Time, sensor_msgs::JointState, std_msgs::Header},
    node::RosNode,
    qos,
};
use rpq_tests::{
    as_f64s, as_strings, assert_pose_is_fk, csv_f64, rx60_urdf, spawn_robot_sim, yaml_f64_list,
    PeerOutput, TestEnv,
};
use serde::{Deserialize, Serialize};

const JOINTS: [&str; 6] = [
    "joint_1", "joint_2", "joint_3", "joint_4", "joint_5", "joint_6",
];
/// Start positions given to robot_sim (all different, none zero: a decoder that mixes up
/// fields or joints cannot produce them by accident).
const INITIAL: [f64; 6] = [0.3, -0.4, 0.5, 0.2, -0.6, 0.7];
/// Joint positions for the forward-kinematics service.
const FK_Q: [f64; 6] = [0.25, -0.8, 1.1, -1.3, 0.9, 2.0];
/// Target of the position command.
const TARGET: [f64; 6] = [-0.5, 0.35, -0.25, 1.0, 0.4, -1.5];

fn robot_sim_args() -> Vec<String> {
    vec![
        "-p".into(),
        format!("initial_positions:={}", yaml_f64_list(&INITIAL)),
    ]
}

fn peer(env: &TestEnv, args: &[&str]) -> PeerOutput {
    env.run_peer("rclpy_peer.py", args)
}

fn sha256_of_file(path: &std::path::Path) -> String {
    let out = std::process::Command::new("sha256sum")
        .arg(path)
        .output()
        .expect("sha256sum (coreutils) runs");
    assert!(out.status.success(), "sha256sum {}", path.display());
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .to_string()
}

/// rclpy decodes /joint_states and the latched /robot_description, calls the custom FK
/// service, sees robot_sim with its endpoints and types in the graph, and lists and reads its
/// parameters. The peers run concurrently against one robot_sim.
#[test]
fn rclpy_sees_robot_sim_state_description_services_graph_and_parameters() {
    let env = TestEnv::new();
    let args = robot_sim_args();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let _sim = spawn_robot_sim(&env, &args);
    let tmp = tempfile::tempdir().unwrap();
    let urdf_copy = tmp.path().join("robot_description.urdf");
    let urdf_copy_s = urdf_copy.display().to_string();
    let fk_positions = csv_f64(&FK_Q);
    let fk_names = JOINTS.join(",");
    let t0 = Instant::now();

    let (states, description, fk, fk_partial, graph, params, values) = std::thread::scope(|s| {
        let states = s.spawn(|| peer(&env, &["joint-states", "--count", "3"]));
        let description = s.spawn(|| peer(&env, &["robot-description", "--out", &urdf_copy_s]));
        let fk = s.spawn(|| {
            peer(
                &env,
                &[
                    "call-fk",
                    "--service",
                    "/robot_sim/compute_fk",
                    "--joint-names",
                    &fk_names,
                    &format!("--positions={fk_positions}"),
                ],
            )
        });
        // Two joints named: the others keep their current (= initial) positions.
        let fk_partial = s.spawn(|| {
            peer(
                &env,
                &[
                    "call-fk",
                    "--service",
                    "/robot_sim/compute_fk",
                    "--joint-names",
                    "joint_5,joint_2",
                    "--positions=1.25,-0.75",
                    "--link",
                    "link_3",
                ],
            )
        });
        let graph = s.spawn(|| {
            peer(
                &env,
                &[
                    "graph",
                    "--node",
                    "/robot_sim",
                    "--expect-publisher",
                    "/joint_states",
                    "--expect-publisher",
                    "/tf",
                    "--expect-publisher",
                    "/tf_static",
                    "--expect-publisher",
                    "/robot_description",
                    "--expect-publisher",
                    "/robot_sim/status",
                    "--expect-subscriber",
                    "/forward_position_controller/commands",
                    "--expect-subscriber",
                    "/forward_velocity_controller/commands",
                    "--expect-subscriber",
                    "/joint_trajectory_controller/joint_trajectory",
                    "--expect-service",
                    "/robot_sim/compute_fk",
                    "--expect-service",
                    "/robot_sim/hold",
                    "--expect-service",
                    "/robot_sim/reset",
                ],
            )
        });
        let params = s.spawn(|| peer(&env, &["param-list", "--node", "/robot_sim"]));
        let values = s.spawn(|| {
            peer(
                &env,
                &[
                    "param-get",
                    "--node",
                    "/robot_sim",
                    "--names",
                    "robot_description_file,initial_positions,update_rate",
                ],
            )
        });
        (
            states.join().unwrap(),
            description.join().unwrap(),
            fk.join().unwrap(),
            fk_partial.join().unwrap(),
            graph.join().unwrap(),
            params.join().unwrap(),
            values.join().unwrap(),
        )
    });
    eprintln!("peers done in {:.1} s", t0.elapsed().as_secs_f64());

    // /joint_states: the six joints in URDF order at exactly the initial positions.
    states.assert_ok("rclpy joint-states");
    let msgs = states.records_of("joint_state");
    assert_eq!(msgs.len(), 3, "{}", states.stdout);
    let mut last_stamp = (0i64, 0i64);
    for m in &msgs {
        assert_eq!(as_strings(&m["name"]), JOINTS, "{m:?}");
        let pos = as_f64s(&m["position"]);
        assert_eq!(pos.len(), 6);
        for (p, q) in pos.iter().zip(INITIAL) {
            assert!(
                p.is_finite() && (p - q).abs() < 1e-12,
                "position {pos:?} != {INITIAL:?}"
            );
        }
        let vel = as_f64s(&m["velocity"]);
        assert!(vel.is_empty() || vel.len() == 6, "velocity {vel:?}");
        assert!(
            vel.iter().all(|v| v.abs() < 1e-12),
            "idle robot moving: {vel:?}"
        );
        let stamp = (
            m["stamp"]["sec"].as_i64().unwrap(),
            m["stamp"]["nanosec"].as_i64().unwrap(),
        );
        assert!(
            stamp > (0, 0) && stamp >= last_stamp,
            "stamps {stamp:?} after {last_stamp:?}"
        );
        last_stamp = stamp;
    }

    // /robot_description: latched, byte for byte the URDF file with its mesh names as the
    // file:// URIs robot_sim publishes (rpq_ros::robot_description).
    description.assert_ok("rclpy robot-description");
    let d = description.record("robot_description");
    let file =
        rpq_ros::robot_description::RobotDescription::from_file(&rx60_urdf().display().to_string())
            .and_then(|d| d.with_resolvable_mesh_uris(&rx60_urdf()))
            .unwrap()
            .urdf
            .into_bytes();
    let expected = tmp.path().join("expected.urdf");
    std::fs::write(&expected, &file).unwrap();
    assert_eq!(
        d["sha256"].as_str(),
        Some(sha256_of_file(&expected).as_str())
    );
    assert_eq!(d["length"].as_u64(), Some(file.len() as u64));
    assert_eq!(
        std::fs::read(&urdf_copy).unwrap(),
        file,
        "received URDF differs from the file"
    );

    // compute_fk (custom rpq_interfaces service): rpq_kinematics' FK to 1e-9.
    fk.assert_ok("rclpy call-fk");
    let r = fk.record("response");
    assert_eq!(r["response"]["success"].as_bool(), Some(true), "{r:?}");
    assert_pose_is_fk(&r["response"]["pose"], "tool0", &FK_Q, 1e-9);
    fk_partial.assert_ok("rclpy call-fk (two joints)");
    let r = fk_partial.record("response");
    assert_eq!(r["response"]["success"].as_bool(), Some(true), "{r:?}");
    let mut q = INITIAL;
    q[4] = 1.25;
    q[1] = -0.75;
    assert_pose_is_fk(&r["response"]["pose"], "link_3", &q, 1e-9);

    // The ROS graph: the node, its endpoints and their types.
    graph.assert_ok("rclpy graph");
    let g = graph.record("graph");
    let has = |kind: &str, name: &str, ty: &str| {
        let types = g[kind][name]
            .as_sequence()
            .unwrap_or_else(|| panic!("{kind} {name} missing: {:?}", g[kind]));
        assert!(
            types.iter().any(|t| t.as_str() == Some(ty)),
            "{kind} {name}: types {types:?}, expected {ty}"
        );
    };
    has("publishers", "/joint_states", "sensor_msgs/msg/JointState");
    has("publishers", "/tf", "tf2_msgs/msg/TFMessage");
    has("publishers", "/tf_static", "tf2_msgs/msg/TFMessage");
    has("publishers", "/robot_description", "std_msgs/msg/String");
    has(
        "publishers",
        "/robot_sim/status",
        "rpq_interfaces/msg/DriverStatus",
    );
    let f64s = "std_msgs/msg/Float64MultiArray";
    has("subscribers", "/forward_position_controller/commands", f64s);
    has("subscribers", "/forward_velocity_controller/commands", f64s);
    has(
        "subscribers",
        "/joint_trajectory_controller/joint_trajectory",
        "trajectory_msgs/msg/JointTrajectory",
    );
    has(
        "services",
        "/robot_sim/compute_fk",
        "rpq_interfaces/srv/ComputeForwardKinematics",
    );
    has("services", "/robot_sim/hold", "std_srvs/srv/Trigger");
    has("services", "/robot_sim/reset", "std_srvs/srv/Trigger");
    has(
        "services",
        "/robot_sim/list_parameters",
        "rcl_interfaces/srv/ListParameters",
    );

    // Parameters, through the standard parameter services.
    params.assert_ok("rclpy param-list");
    let names = as_strings(&params.record("parameters")["names"]);
    for p in [
        "robot_description_file",
        "update_rate",
        "joint_state_rate",
        "velocity_command_timeout",
        "position_command_mode",
        "initial_positions",
        "publish_tf",
    ] {
        assert!(
            names.iter().any(|n| n == p),
            "parameter {p} not listed: {names:?}"
        );
    }
    values.assert_ok("rclpy param-get");
    let v = values.record("parameter_values");
    assert_eq!(
        v["values"]["robot_description_file"].as_str(),
        Some(rx60_urdf().display().to_string().as_str())
    );
    assert_eq!(as_f64s(&v["values"]["initial_positions"]), INITIAL);
    assert_eq!(v["types"]["update_rate"].as_u64(), Some(3), "double: {v:?}");
}

/// rclpy's position command moves robot_sim to the target (seen in /joint_states); wrong-length,
/// NaN and out-of-limit commands are refused while the robot holds still, and the refusals show
/// in /robot_sim/status and the node's log; the std_srvs Trigger service /robot_sim/hold answers.
#[test]
fn rclpy_commands_move_robot_sim_and_invalid_ones_are_refused() {
    let env = TestEnv::new();
    let args = robot_sim_args();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let sim = spawn_robot_sim(&env, &args);
    let names = JOINTS.join(",");
    let t0 = Instant::now();

    let target = csv_f64(&TARGET);
    let moved = peer(
        &env,
        &[
            "command-position",
            &format!("--values={target}"),
            "--joint-names",
            &names,
            "--tolerance",
            "1e-6",
        ],
    );
    moved.assert_ok("rclpy command-position");
    let initial = moved.record("initial");
    assert_eq!(as_f64s(&initial["position"]), INITIAL, "{initial:?}");
    let reached = moved.record("reached");
    assert_eq!(as_strings(&reached["name"]), JOINTS);
    for (p, t) in as_f64s(&reached["position"]).iter().zip(TARGET) {
        assert!((p - t).abs() <= 1e-6, "reached {reached:?}");
    }
    eprintln!("target reached after {:.2} s", t0.elapsed().as_secs_f64());

    // Three kinds of invalid command, sent concurrently for 1.5 s each: the robot must not
    // move by more than 1e-9 (a refused command leaves the previous one, holding at TARGET).
    let bad = [
        ("wrong length", "0.1,0.2".to_string()),
        ("NaN", "nan,0,0,0,0,0".to_string()),
        ("beyond the joint_1 limit", "3.5,0,0,0,0,0".to_string()),
    ];
    let holds: Vec<PeerOutput> = std::thread::scope(|s| {
        let handles: Vec<_> = bad
            .iter()
            .map(|(_, values)| {
                let env = &env;
                s.spawn(move || {
                    peer(
                        env,
                        &[
                            "command-position",
                            &format!("--values={values}"),
                            "--expect-hold",
                            "--hold",
                            "1.5",
                            "--tolerance",
                            "1e-9",
                        ],
                    )
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut sent = 0;
    for ((what, _), out) in bad.iter().zip(&holds) {
        out.assert_ok(&format!("rclpy command-position --expect-hold ({what})"));
        let held = out.record("held");
        for (p, t) in as_f64s(&held["position"]).iter().zip(TARGET) {
            assert!(
                (p - t).abs() <= 1e-6,
                "{what}: robot left the target: {held:?}"
            );
        }
        sent += held["commands_sent"].as_u64().unwrap();
    }

    // The refusals are visible: DriverStatus (reliable, 10 Hz and on change) counts them and
    // names the last reason.
    let status = peer(
        &env,
        &[
            "echo",
            "--topic",
            "/robot_sim/status",
            "--type",
            "rpq_interfaces/msg/DriverStatus",
            "--count",
            "1",
        ],
    );
    status.assert_ok("rclpy echo /robot_sim/status");
    let st = &status.record("message")["data"];
    let rejected = st["rejected_commands"].as_u64().unwrap();
    assert!(
        (3..=sent).contains(&rejected),
        "rejected_commands {rejected}, {sent} invalid commands sent: {st:?}"
    );
    assert!(
        !st["last_error"].as_str().unwrap_or("").is_empty(),
        "{st:?}"
    );
    assert_eq!(
        st["mode"].as_u64(),
        Some(DriverStatus::MODE_POSITION.into()),
        "{st:?}"
    );
    assert_eq!(st["holding"].as_bool(), Some(true), "{st:?}");
    let log = sim.output().join("\n").to_lowercase();
    assert!(
        log.contains("reject"),
        "robot_sim logged no rejection:\n{log}"
    );

    // std_srvs/Trigger on a suite node.
    let hold = peer(&env, &["call-trigger", "--service", "/robot_sim/hold"]);
    hold.assert_ok("rclpy call-trigger /robot_sim/hold");
    let r = hold.record("response");
    assert_eq!(r["type"].as_str(), Some("std_srvs/srv/Trigger"));
    assert_eq!(r["response"]["success"].as_bool(), Some(true), "{r:?}");
    eprintln!("test body {:.1} s", t0.elapsed().as_secs_f64());
}

// ---------------------------------------------------------------------------------------------
// Negative controls: a Rust publisher in this test process sends messages under the real ROS
// type names, once with the real field order and once with fields reordered. rclpy must decode
// the real one to the expected values and must not decode a reordered one to them: the checks
// above depend on the field order of our types, not only on the names.

/// sensor_msgs/JointState with `velocity` and `position` swapped (same wire layout).
#[derive(Debug, Clone, Serialize, Deserialize)]
struct JointStateVelocityFirst {
    header: Header,
    name: Vec<String>,
    velocity: Vec<f64>,
    position: Vec<f64>,
    effort: Vec<f64>,
}

/// sensor_msgs/JointState with `name` before `header` (different wire layout).
#[derive(Debug, Clone, Serialize, Deserialize)]
struct JointStateNameFirst {
    name: Vec<String>,
    header: Header,
    position: Vec<f64>,
    velocity: Vec<f64>,
    effort: Vec<f64>,
}

/// rpq_interfaces/DriverStatus with `holding` before `mode`.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct DriverStatusHoldingFirst {
    header: Header,
    holding: bool,
    mode: u8,
    rejected_commands: u32,
    last_error: String,
}

fn sample_joint_state() -> JointState {
    JointState {
        header: Header {
            stamp: Time {
                sec: 1_700_000_123,
                nanosec: 456_789,
            },
            frame_id: "sample_frame".into(),
        },
        name: vec!["a".into(), "b".into(), "c".into()],
        position: vec![0.125, -2.5, 3.75],
        velocity: vec![10.5, 20.25, -30.0],
        effort: vec![],
    }
}

fn sample_status() -> DriverStatus {
    DriverStatus {
        header: sample_joint_state().header,
        mode: DriverStatus::MODE_TRAJECTORY,
        holding: true,
        rejected_commands: 42,
        last_error: "joint_7 is not a joint of this robot".into(),
    }
}

/// Publishes on a background runtime until dropped, remembering how many subscriptions each
/// publisher ever matched (so a failed decode is known not to be a failed discovery).
struct Feeder {
    runtime: tokio::runtime::Runtime,
    stop: Arc<AtomicBool>,
    matched: Arc<Mutex<Vec<usize>>>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl Feeder {
    /// `start(node)` creates the publishers and returns a closure that publishes once on each
    /// and returns their matched-subscription counts.
    fn new<F, P>(env: &TestEnv, start: F) -> Feeder
    where
        F: FnOnce(&mut RosNode) -> P + Send + 'static,
        P: FnMut(&RosNode) -> Vec<usize> + Send + 'static,
    {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let domain = env.domain_id.to_string();
        let ros_env =
            RosEnv::from_vars(|k| (k == "ROS_DOMAIN_ID").then(|| domain.clone())).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let matched = Arc::new(Mutex::new(Vec::new()));
        let (stop2, matched2) = (Arc::clone(&stop), Arc::clone(&matched));
        let task = runtime.spawn(async move {
            let mut node =
                RosNode::new("rpq_wrong_types", ros_env, RosArgs::default(), &[]).unwrap();
            let mut publish = start(&mut node);
            while !stop2.load(Ordering::SeqCst) {
                let counts = publish(&node);
                {
                    let mut m = matched2.lock().unwrap();
                    m.resize(counts.len(), 0);
                    for (max, c) in m.iter_mut().zip(counts) {
                        *max = (*max).max(c);
                    }
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        });
        Feeder {
            runtime,
            stop,
            matched,
            task: Some(task),
        }
    }

    /// Stops publishing; returns the most subscriptions each publisher matched.
    fn finish(mut self) -> Vec<usize> {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(task) = self.task.take() {
            self.runtime
                .block_on(task)
                .expect("the publishing node failed");
        }
        self.matched.lock().unwrap().clone()
    }
}

fn echo(env: &TestEnv, topic: &str, ty: &str, timeout: &str) -> PeerOutput {
    peer(
        env,
        &[
            "--timeout",
            timeout,
            "echo",
            "--topic",
            topic,
            "--type",
            ty,
            "--count",
            "1",
        ],
    )
}

/// Did rclpy decode a message with exactly these values?
fn decoded(out: &PeerOutput) -> Option<serde_yaml::Value> {
    out.records_of("message")
        .into_iter()
        .next()
        .map(|m| m["data"].clone())
}

/// Each publisher reached its rclpy subscriber: rclpy received a message on it, or the
/// publisher saw the subscription matched. Without this a control that "decoded nothing" could
/// be a discovery failure instead of a decoding one. (The matched count alone is not enough:
/// ros2-client updates it from discovery a little after the data already flows, so a peer
/// that exits at once may never be counted.)
fn assert_reached(matched: &[usize], peers: &[&PeerOutput]) {
    assert_eq!(matched.len(), peers.len());
    for (i, (m, p)) in matched.iter().zip(peers).enumerate() {
        assert!(
            *m >= 1 || decoded(p).is_some(),
            "publisher {i} never reached rclpy, so this control proves nothing\n{}\n{}",
            p.stdout,
            p.stderr
        );
    }
}

fn joint_state_as_sent(data: &serde_yaml::Value, sent: &JointState) -> bool {
    data["header"]["stamp"]["sec"].as_i64() == Some(sent.header.stamp.sec as i64)
        && data["header"]["frame_id"].as_str() == Some(sent.header.frame_id.as_str())
        && data["name"].as_sequence().map(|s| s.len()) == Some(sent.name.len())
        && as_strings(&data["name"]) == sent.name
        && as_f64s(&data["position"]) == sent.position
        && as_f64s(&data["velocity"]) == sent.velocity
        && as_f64s(&data["effort"]) == sent.effort
}

#[test]
fn negative_control_reordered_joint_state_is_not_decoded_by_rclpy() {
    let env = TestEnv::new();
    let sent = sample_joint_state();
    let s2 = sent.clone();
    let feeder = Feeder::new(&env, move |node| {
        let good = node
            .publisher::<JointState>("/js_real", qos::default())
            .unwrap();
        let swapped = node
            .create_publisher::<JointStateVelocityFirst>(
                "/js_velocity_first",
                "sensor_msgs/msg/JointState",
                qos::default(),
            )
            .unwrap();
        let name_first = node
            .create_publisher::<JointStateNameFirst>(
                "/js_name_first",
                "sensor_msgs/msg/JointState",
                qos::default(),
            )
            .unwrap();
        move |node: &RosNode| {
            let m = s2.clone();
            good.publish(m.clone()).unwrap();
            swapped
                .publish(JointStateVelocityFirst {
                    header: m.header.clone(),
                    name: m.name.clone(),
                    velocity: m.velocity.clone(),
                    position: m.position.clone(),
                    effort: m.effort.clone(),
                })
                .unwrap();
            name_first
                .publish(JointStateNameFirst {
                    name: m.name,
                    header: m.header,
                    position: m.position,
                    velocity: m.velocity,
                    effort: m.effort,
                })
                .unwrap();
            let n = node.inner();
            vec![
                good.get_subscription_count(n),
                swapped.get_subscription_count(n),
                name_first.get_subscription_count(n),
            ]
        }
    });
    let ty = "sensor_msgs/msg/JointState";
    let (real, velocity_first, name_first) = std::thread::scope(|s| {
        let a = s.spawn(|| echo(&env, "/js_real", ty, "15"));
        let b = s.spawn(|| echo(&env, "/js_velocity_first", ty, "15"));
        let c = s.spawn(|| echo(&env, "/js_name_first", ty, "6"));
        (a.join().unwrap(), b.join().unwrap(), c.join().unwrap())
    });
    let matched = feeder.finish();
    assert_reached(&matched, &[&real, &velocity_first, &name_first]);

    // The real layout: rclpy decodes every field as sent.
    real.assert_ok("rclpy echo of the real JointState");
    let data = decoded(&real).unwrap();
    assert!(
        joint_state_as_sent(&data, &sent),
        "real JointState misdecoded: {data:?}"
    );

    // position/velocity swapped: same wire layout, so rclpy decodes it -- into the wrong
    // fields. A check on values catches it; a check on "a message arrived" would not.
    velocity_first.assert_ok("rclpy echo of the swapped JointState");
    let data = decoded(&velocity_first).unwrap();
    assert!(
        !joint_state_as_sent(&data, &sent),
        "swap went unnoticed: {data:?}"
    );
    assert_eq!(as_f64s(&data["position"]), sent.velocity);

    // name before header: rclpy cannot decode it as sent (it drops it or reads garbage).
    match decoded(&name_first) {
        None => assert!(!name_first.success),
        Some(data) => assert!(
            !joint_state_as_sent(&data, &sent),
            "reordered JointState decoded as sent: {data:?}"
        ),
    }
    eprintln!(
        "negative control (name before header): rclpy {}",
        if name_first.success {
            "decoded garbage"
        } else {
            "decoded nothing"
        }
    );
}

#[test]
fn negative_control_reordered_custom_message_is_not_decoded_by_rclpy() {
    let env = TestEnv::new();
    let sent = sample_status();
    let s2 = sent.clone();
    let feeder = Feeder::new(&env, move |node| {
        let good = node
            .publisher::<DriverStatus>("/status_real", qos::default())
            .unwrap();
        let swapped = node
            .create_publisher::<DriverStatusHoldingFirst>(
                "/status_holding_first",
                "rpq_interfaces/msg/DriverStatus",
                qos::default(),
            )
            .unwrap();
        move |node: &RosNode| {
            good.publish(s2.clone()).unwrap();
            swapped
                .publish(DriverStatusHoldingFirst {
                    header: s2.header.clone(),
                    holding: s2.holding,
                    mode: s2.mode,
                    rejected_commands: s2.rejected_commands,
                    last_error: s2.last_error.clone(),
                })
                .unwrap();
            let n = node.inner();
            vec![
                good.get_subscription_count(n),
                swapped.get_subscription_count(n),
            ]
        }
    });
    let ty = "rpq_interfaces/msg/DriverStatus";
    let (real, holding_first) = std::thread::scope(|s| {
        let a = s.spawn(|| echo(&env, "/status_real", ty, "15"));
        let b = s.spawn(|| echo(&env, "/status_holding_first", ty, "6"));
        (a.join().unwrap(), b.join().unwrap())
    });
    let matched = feeder.finish();
    assert_reached(&matched, &[&real, &holding_first]);

    let as_sent = |d: &serde_yaml::Value| {
        d["header"]["frame_id"].as_str() == Some(sent.header.frame_id.as_str())
            && d["mode"].as_u64() == Some(sent.mode.into())
            && d["holding"].as_bool() == Some(sent.holding)
            && d["rejected_commands"].as_u64() == Some(sent.rejected_commands as u64)
            && d["last_error"].as_str() == Some(sent.last_error.as_str())
    };
    real.assert_ok("rclpy echo of the real DriverStatus");
    let data = decoded(&real).unwrap();
    assert!(as_sent(&data), "real DriverStatus misdecoded: {data:?}");
    match decoded(&holding_first) {
        None => assert!(!holding_first.success),
        Some(data) => assert!(
            !as_sent(&data),
            "reordered DriverStatus decoded as sent: {data:?}"
        ),
    }
    eprintln!(
        "negative control (holding before mode): rclpy {}",
        if holding_first.success {
            "decoded garbage"
        } else {
            "decoded nothing"
        }
    );
}
