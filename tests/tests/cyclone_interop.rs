//! Interop with Cyclone DDS (PyPI `cyclonedds`, no ROS at all): `tests/python/cyclone_peer.py`
//! declares the ROS types itself and speaks the rmw_cyclonedds_cpp conventions, against
//! `robot_sim` started with `RMW_IMPLEMENTATION=rmw_cyclonedds_cpp`. One topic each way, the
//! suite's own message and its custom service, and negative controls: the Fast DDS service
//! mapping and a reversed field order must not work.
//!
//! Every test opens DDS sockets: run inside `../shared/netns-run` (tests/run_all.sh does).

use std::time::{Duration, Instant};

use rpq_ros::interfaces::rpq_interfaces::msg::DriverStatus;
use rpq_tests::{
    as_f64s, as_strings, assert_pose_is_fk, csv_f64, spawn_robot_sim, yaml_f64_list, PeerOutput,
    TestEnv,
};

const JOINTS: [&str; 6] = [
    "joint_1", "joint_2", "joint_3", "joint_4", "joint_5", "joint_6",
];
const INITIAL: [f64; 6] = [-0.2, 0.6, -0.35, 0.9, 0.45, -1.1];
const FK_Q: [f64; 6] = [1.2, -0.3, 0.8, 2.1, -1.4, 0.6];
const TARGET: [f64; 6] = [0.4, -0.25, 0.7, -0.8, 1.0, 0.3];

fn cyclone(env: &TestEnv, args: &[&str]) -> PeerOutput {
    env.run_peer("cyclone_peer.py", args)
}

fn start_sim(env: &TestEnv) -> rpq_tests::NodeProcess {
    let init = format!("initial_positions:={}", yaml_f64_list(&INITIAL));
    spawn_robot_sim(env, &["-p", &init])
}

fn call_fk(env: &TestEnv, extra: &[&str]) -> PeerOutput {
    let names = format!("--joint-names={}", JOINTS.join(","));
    let positions = format!("--positions={}", csv_f64(&FK_Q));
    let mut args = vec![
        "call-fk",
        "--service",
        "/robot_sim/compute_fk",
        &names,
        &positions,
        "--link",
        "tool0",
    ];
    args.extend_from_slice(extra);
    cyclone(env, &args)
}

/// One `/joint_states` sample through Cyclone: (names, positions).
fn joint_state(env: &TestEnv) -> (Vec<String>, Vec<f64>) {
    let out = cyclone(
        env,
        &[
            "sub",
            "--topic",
            "/joint_states",
            "--type",
            "sensor_msgs/msg/JointState",
        ],
    );
    out.assert_ok("cyclone sub /joint_states");
    let data = &out.record("message")["data"];
    (as_strings(&data["name"]), as_f64s(&data["position"]))
}

fn status(env: &TestEnv) -> serde_yaml::Value {
    let out = cyclone(
        env,
        &[
            "sub",
            "--topic",
            "/robot_sim/status",
            "--type",
            "rpq_interfaces/msg/DriverStatus",
        ],
    );
    out.assert_ok("cyclone sub /robot_sim/status");
    out.record("message")["data"].clone()
}

fn command(values: &[f64]) -> String {
    format!("{{data: {}}}", yaml_f64_list(values))
}

fn publish_position(env: &TestEnv, values: &[f64], extra: &[&str]) -> PeerOutput {
    let yaml = command(values);
    let mut args = vec![
        "pub",
        "--topic",
        "/forward_position_controller/commands",
        "--type",
        "std_msgs/msg/Float64MultiArray",
        "--yaml",
        &yaml,
        "--count",
        "5",
        "--rate",
        "20",
    ];
    args.extend_from_slice(extra);
    cyclone(env, &args)
}

fn close(a: &[f64], b: &[f64], tol: f64) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() <= tol)
}

/// Suite → Cyclone: /joint_states and the custom DriverStatus; Cyclone → suite: a position
/// command that moves the robot, and the custom service compute_fk with the Cyclone request
/// header. Negative controls in the same run: a command and a service request with their
/// fields reversed change nothing and get no answer.
#[test]
fn cyclone_dds_exchanges_topics_and_the_custom_service_with_robot_sim() {
    let env = TestEnv::new().with("RMW_IMPLEMENTATION", "rmw_cyclonedds_cpp");
    let sim = start_sim(&env);
    let t0 = Instant::now();

    // Phase 1, concurrently: state and FK through Cyclone; the two reversed negative controls.
    let (state, fk, fk_reversed, cmd_reversed) = std::thread::scope(|s| {
        let state = s.spawn(|| joint_state(&env));
        let fk = s.spawn(|| call_fk(&env, &[]));
        let fk_reversed = s.spawn(|| {
            call_fk(
                &env,
                &[
                    "--reverse-fields",
                    "--timeout",
                    "5",
                    "--attempt-timeout",
                    "1",
                ],
            )
        });
        let cmd_reversed = s.spawn(|| publish_position(&env, &TARGET, &["--reverse-fields"]));
        (
            state.join().unwrap(),
            fk.join().unwrap(),
            fk_reversed.join().unwrap(),
            cmd_reversed.join().unwrap(),
        )
    });
    assert_eq!(state.0, JOINTS);
    assert!(
        close(&state.1, &INITIAL, 1e-12),
        "{:?} != {INITIAL:?}",
        state.1
    );

    fk.assert_ok("cyclone call-fk");
    let r = fk.record("response");
    assert_eq!(
        r["request_topic"].as_str(),
        Some("rq/robot_sim/compute_fkRequest")
    );
    assert_eq!(r["response"]["success"].as_bool(), Some(true), "{r:?}");
    assert_pose_is_fk(&r["response"]["pose"], "tool0", &FK_Q, 1e-9);

    // Reversed request fields: robot_sim cannot read the request, so no answer comes back.
    assert!(
        !fk_reversed.success
            && fk_reversed
                .records_of("response")
                .iter()
                .all(|r| r["response"]["success"].as_bool() != Some(true)),
        "a request with reversed fields was answered:\n{}",
        fk_reversed.stdout
    );
    assert_request_unreadable(&sim);

    // Reversed command fields: delivered (matched) but refused; the robot stays put.
    cmd_reversed.assert_ok("cyclone pub --reverse-fields");
    assert!(cmd_reversed.record("published")["matched"].as_u64() >= Some(1));
    let st = status(&env);
    assert!(
        st["rejected_commands"].as_u64() >= Some(1),
        "the reversed command was not refused: {st:?}"
    );
    assert_eq!(
        st["mode"].as_u64(),
        Some(DriverStatus::MODE_IDLE.into()),
        "{st:?}"
    );
    let (_, still) = joint_state(&env);
    assert!(close(&still, &INITIAL, 1e-12), "robot moved: {still:?}");

    // Phase 2: the real command moves the robot; a second subscriber sees it arrive.
    publish_position(&env, &TARGET, &[]).assert_ok("cyclone pub Float64MultiArray");
    let deadline = Instant::now() + Duration::from_secs(15);
    let mut last = still;
    while !close(&last, &TARGET, 1e-6) {
        assert!(
            Instant::now() < deadline,
            "robot did not reach {TARGET:?}: {last:?}"
        );
        last = joint_state(&env).1;
    }
    let st = status(&env);
    assert_eq!(
        st["mode"].as_u64(),
        Some(DriverStatus::MODE_POSITION.into()),
        "{st:?}"
    );
    eprintln!("test body {:.1} s", t0.elapsed().as_secs_f64());
}

/// Negative control: with robot_sim on the Fast DDS service mapping (RMW_IMPLEMENTATION unset)
/// the same Cyclone call gets no answer, while topics still work: the mapping is what makes
/// the Cyclone service test pass.
#[test]
fn negative_control_fast_dds_mapping_does_not_answer_cyclone_clients() {
    let env = TestEnv::new();
    let sim = start_sim(&env);
    let (state, fk) = std::thread::scope(|s| {
        let state = s.spawn(|| joint_state(&env));
        let fk = s.spawn(|| call_fk(&env, &["--timeout", "5", "--attempt-timeout", "1"]));
        (state.join().unwrap(), fk.join().unwrap())
    });
    assert_eq!(
        state.0, JOINTS,
        "topics must work whatever the service mapping"
    );
    assert!(
        !fk.success
            && fk
                .records_of("response")
                .iter()
                .all(|r| r["response"]["success"].as_bool() != Some(true)),
        "the Fast DDS mapping answered a Cyclone-style request:\n{}\n{}",
        fk.stdout,
        fk.stderr
    );
    assert_request_unreadable(&sim);
}

/// The request reached robot_sim, which could not decode it (so the missing answer is not a
/// discovery failure).
fn assert_request_unreadable(sim: &rpq_tests::NodeProcess) {
    let log = sim.output();
    assert!(
        log.iter()
            .any(|l| l.contains("cannot read") && l.contains("compute_fk")),
        "robot_sim did not report an unreadable compute_fk request:\n{}",
        log.join("\n")
    );
}
