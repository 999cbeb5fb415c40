//! `path_shrinking` against real rclpy (Fast DDS): `~/shrink_path` with bad requests (each
//! refused with a message naming the problem, and nothing sent to the robot: robot_sim's status
//! stays idle with no rejected command), then a good request (the corner-rounding task's
//! recorded path with its required span) whose answer equals `rpq_pathshrink` called directly
//! (modified and reduced paths within 1e-9 m, the same motion commands and trajectory), with its
//! figures written in the output directory and its trajectory executed by `robot_sim` to the
//! last point; the demonstration services refuse what they must.
//!
//! Opens DDS sockets: run inside `../shared/netns-run` (tests/run_all.sh does).

use std::time::Duration;

use rpq_pathshrink::operator::Task;
use rpq_pathshrink::program::{shrink_program, ProgramParams};
use rpq_pathshrink::robot::{joint_program, scene_robots};
use rpq_pathshrink::task::{demonstrate, SEED};
use rpq_pathshrink::{Pose, WorkpiecePath};
use rpq_tests::{bin, repo_file, repo_root, spawn_robot_sim, NodeProcess, TestEnv};
use serde_yaml::Value;

const READY: &str = "path_shrinking ready";
/// Faster moves than the defaults, so the executed program is short (the reference uses the
/// same values).
const SPEED: f64 = 0.2;
const CONTACT_SPEED: f64 = 0.1;

fn scene_file() -> String {
    repo_file("config/puzzle.scene.yaml")
}

fn params() -> ProgramParams {
    let mut p = ProgramParams::default();
    p.motion.speed = SPEED;
    p.motion.contact_speed = CONTACT_SPEED;
    p
}

fn spawn_node(env: &TestEnv, extra: &[String]) -> NodeProcess {
    let mut cmd = env.command(bin("path_shrinking"));
    cmd.current_dir(repo_root())
        .arg("--ros-args")
        .arg("--params-file")
        .arg(repo_root().join("config/path_shrinking.yaml"))
        .arg("-p")
        .arg(format!("scene_file:={}", scene_file()))
        .args(["-p", &format!("motion.speed:={SPEED}")])
        .args(["-p", &format!("motion.contact_speed:={CONTACT_SPEED}")])
        .args(extra);
    let node = NodeProcess::spawn("path_shrinking", cmd);
    node.wait_for_output(READY, Duration::from_secs(30));
    node
}

fn pose_yaml(p: &Pose) -> String {
    let (t, q) = (p.translation.vector, p.rotation);
    format!(
        "{{position: {{x: {:?}, y: {:?}, z: {:?}}}, orientation: {{x: {:?}, y: {:?}, z: {:?}, w: {:?}}}}}",
        t.x, t.y, t.z, q.i, q.j, q.k, q.w
    )
}

fn poses_yaml(poses: &[Pose]) -> String {
    let p: Vec<String> = poses.iter().map(pose_yaml).collect();
    format!("[{}]", p.join(", "))
}

/// A request; `poses` is YAML (a list, or an alias of one defined earlier in the same call:
/// a call's requests travel in one command-line argument, which must stay below 128 KiB).
fn request(workpiece: &str, poses: &str, spans: &str, extra: &str) -> String {
    format!("{{workpiece: {workpiece}, poses: {poses}, required_contacts: [{spans}]{extra}}}")
}

fn call(env: &TestEnv, service: &str, ty: &str, requests: &[String]) -> Vec<Value> {
    let timeouts = ["--timeout", "120", "--attempt-timeout", "60"];
    env.call_service(service, ty, requests, &timeouts)
}

fn f(v: &Value) -> f64 {
    v.as_f64()
        .or_else(|| v.as_i64().map(|i| i as f64))
        .unwrap_or_else(|| panic!("not a number: {v:?}"))
}

fn refused(r: &Value, words: &[&str]) {
    assert_eq!(
        r["success"].as_bool(),
        Some(false),
        "must be refused: {r:?}"
    );
    let m = r["message"].as_str().unwrap_or_default();
    for w in words {
        assert!(m.contains(w), "message `{m}` must name `{w}`");
    }
}

/// Largest difference between response poses and library poses (position and quaternion).
fn pose_diff(v: &Value, poses: &[Pose]) -> f64 {
    let list = v.as_sequence().expect("a pose list");
    assert_eq!(list.len(), poses.len(), "pose count");
    list.iter()
        .zip(poses)
        .map(|(m, p)| {
            let t = p.translation.vector;
            let q = p.rotation;
            [
                f(&m["position"]["x"]) - t.x,
                f(&m["position"]["y"]) - t.y,
                f(&m["position"]["z"]) - t.z,
                f(&m["orientation"]["x"]) - q.i,
                f(&m["orientation"]["y"]) - q.j,
                f(&m["orientation"]["z"]) - q.k,
                f(&m["orientation"]["w"]) - q.w,
            ]
            .iter()
            .fold(0.0_f64, |a, x| a.max(x.abs()))
        })
        .fold(0.0, f64::max)
}

fn driver_status(env: &TestEnv) -> Value {
    let out = env.run_peer(
        "rclpy_peer.py",
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
    out.assert_ok("rclpy echo of robot_sim's status");
    out.records_of("message")[0]["data"].clone()
}

#[test]
fn rclpy_shrink_path_refuses_bad_requests_and_answers_good_ones_like_the_library() {
    let env = TestEnv::new();
    let out_dir = tempfile::tempdir().expect("tempdir");
    let mut robot = spawn_robot_sim(&env, &[]);
    let mut node = spawn_node(
        &env,
        &[
            "-p".into(),
            format!("output_directory:={}", out_dir.path().display()),
        ],
    );

    // The library's answer for the corner-rounding task.
    let scene = rpq_scene::load_scene(scene_file()).unwrap();
    let params = params();
    let demo = demonstrate(Task::CornerRounding, &scene, &params.sim, SEED).unwrap();
    let poses = demo.path.poses();
    let span = &demo.path.spans[0];
    let span_yaml = format!(
        "{{first: {}, last: {}, objects: [frame, table]}}",
        span.first, span.last
    );
    assert_eq!(
        span.objects
            .iter()
            .map(|&i| demo.env.obstacles[i].name.as_str())
            .collect::<Vec<_>>(),
        ["frame", "table"]
    );
    let mut reference_path = WorkpiecePath::from_poses(
        &demo.env,
        &poses,
        demo.path.spans.clone(),
        params.sim.contact_distance,
        &mut rpq_proximity::QueryWorkspace::new(),
    );
    reference_path.nodes[0].contacts = demo.path.nodes[0].contacts.clone();
    let reference = shrink_program(demo.env.clone(), reference_path, &params).unwrap();
    let robot_model = scene_robots(&scene.scenario).next().cloned().unwrap();
    let program = joint_program(
        &demo.env,
        &robot_model,
        &reference.commands,
        &params.motion.grasp(&demo.env),
        Some(&[0.0; 6]),
        &params.robot,
    )
    .unwrap();

    // Bad requests first: each refused, nothing reaches the robot.
    let mut nan = poses.clone();
    nan[5].translation.vector.y = f64::NAN;
    let mut sunk = poses.clone();
    sunk[7].translation.vector.z -= 0.01;
    let far_span = format!(
        "{{first: 0, last: {}, objects: [tall_block]}}",
        poses.len() - 1
    );
    // The whole path once (anchor P), then aliases; the broken copies are short.
    let all = format!("&P {}", poses_yaml(&poses));
    let bad = vec![
        (
            request("no_such_block", &all, "", ""),
            vec!["unknown object `no_such_block`"],
        ),
        (
            request("block_2", "*P", "", ", obstacles: [table, chair]"),
            vec!["unknown object `chair`"],
        ),
        (
            request("block_2", &poses_yaml(&poses[..1]), "", ""),
            vec!["at least two"],
        ),
        (
            request("block_2", &poses_yaml(&nan[..12]), "", ""),
            vec!["poses[5] is not finite"],
        ),
        (
            request("block_2", &poses_yaml(&sunk[..12]), "", ""),
            vec!["node 7", "`table`"],
        ),
        (
            request("block_2", "*P", &far_span, ""),
            vec!["required contact with `tall_block` is absent at node 0"],
        ),
        (
            request("block_2", "*P", "{first: 3, last: 2, objects: [frame]}", ""),
            vec!["first < last"],
        ),
        (
            request("block_2", "*P", "", ", in_contact: [true, false]"),
            vec!["in_contact has 2 flags"],
        ),
        (
            request("block_2", "*P", "", ", figures: ../escape"),
            vec!["figures"],
        ),
        (request("rx60", "*P", "", ""), vec!["`rx60` is a robot"]),
    ];
    let requests: Vec<String> = bad
        .iter()
        .map(|(r, _)| r.replace("{workpiece", "{execute: true, workpiece"))
        .collect();
    let answers = call(
        &env,
        "/path_shrinking/shrink_path",
        "rpq_interfaces/srv/ShrinkPath",
        &requests,
    );
    for ((_, words), r) in bad.iter().zip(&answers) {
        refused(r, words);
    }
    let status = driver_status(&env);
    assert_eq!(
        status["mode"].as_i64(),
        Some(0),
        "robot_sim must still be idle: {status:?}"
    );
    assert_eq!(status["rejected_commands"].as_i64(), Some(0), "{status:?}");

    // The good request, executed.
    let good = request(
        "block_2",
        &poses_yaml(&poses),
        &span_yaml,
        ", execute: true, figures: rounding",
    );
    let r = &call(
        &env,
        "/path_shrinking/shrink_path",
        "rpq_interfaces/srv/ShrinkPath",
        &[good],
    )[0];
    assert_eq!(r["success"].as_bool(), Some(true), "{:?}", r["message"]);
    let res = &r["result"];
    assert_eq!(res["header"]["frame_id"].as_str(), Some("world"));
    let d_mod = pose_diff(&res["modified"], &reference.modified.poses());
    let d_red = pose_diff(&res["reduced"], &reference.reduced.poses());
    assert!(
        d_mod <= 1e-9 && d_red <= 1e-9,
        "node vs library: modified {d_mod:e}, reduced {d_red:e}"
    );
    assert_eq!(res["required_contacts_kept"].as_bool(), Some(true));
    assert_eq!(res["stabilised"].as_bool(), Some(true));
    let spans = res["modified_required"].as_sequence().unwrap();
    assert_eq!(spans.len(), 1);
    assert_eq!(
        f(&spans[0]["first"]) as usize,
        reference.modified.spans[0].first
    );
    let cmds = res["commands"].as_sequence().unwrap();
    assert_eq!(cmds.len(), reference.commands.len());
    assert_eq!(cmds[0]["type"].as_i64(), Some(0), "a guarded grasp first");
    for (m, c) in cmds.iter().zip(&reference.commands) {
        let forces: Vec<f64> = m["expected_forces"]
            .as_sequence()
            .unwrap()
            .iter()
            .map(f)
            .collect();
        let expect: Vec<f64> = c.contacts.iter().map(|x| x.force).collect();
        assert_eq!(forces.len(), expect.len());
        for (a, b) in forces.iter().zip(&expect) {
            assert!((a - b).abs() < 1e-9);
        }
        assert!((f(&m["speed"]) - c.speed).abs() < 1e-12);
    }
    let traj = res["trajectory"]["points"].as_sequence().unwrap();
    assert_eq!(traj.len(), program.points.len(), "trajectory points");
    for (m, pt) in traj.iter().zip(&program.points) {
        let q: Vec<f64> = m["positions"]
            .as_sequence()
            .unwrap()
            .iter()
            .map(f)
            .collect();
        assert_eq!(q.len(), 6, "joint count");
        for (j, (a, b)) in q.iter().zip(&pt.q).enumerate() {
            assert!((a - b).abs() < 1e-9, "joint {j}: {a} vs {b}");
        }
    }
    let figures: Vec<String> = res["figures"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    assert_eq!(figures.len(), 6, "{figures:?}");
    for name in &figures {
        let meta = std::fs::metadata(out_dir.path().join(name)).expect("figure written");
        assert!(meta.len() > 1000, "{name} is empty");
    }

    // The robot runs the program to its last point.
    let duration = program.points.last().unwrap().time;
    std::thread::sleep(Duration::from_secs_f64(duration + 1.0));
    let js = env.run_peer(
        "rclpy_peer.py",
        &[
            "echo",
            "--topic",
            "/joint_states",
            "--type",
            "sensor_msgs/msg/JointState",
            "--count",
            "1",
        ],
    );
    js.assert_ok("rclpy echo of joint_states");
    let q: Vec<f64> = js.records_of("message")[0]["data"]["position"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(f)
        .collect();
    let last = program.points.last().unwrap().q;
    for j in 0..6 {
        assert!(
            (q[j] - last[j]).abs() < 1e-6,
            "joint {j} ended at {} not {}",
            q[j],
            last[j]
        );
    }
    let status = driver_status(&env);
    assert_eq!(status["rejected_commands"].as_i64(), Some(0), "{status:?}");

    // Demonstration services with the mode off.
    let r = &call(
        &env,
        "/path_shrinking/finish",
        "rpq_interfaces/srv/FinishDemonstration",
        &["{}".into()],
    )[0];
    refused(r, &["demonstration mode is off"]);

    assert!(node.is_running(), "{}", node.output().join("\n"));
    node.stop(Duration::from_secs(3));
    robot.stop(Duration::from_secs(3));
}

/// A result larger than a reply can carry (`reply_max_bytes`; 60 kB by default, the one-datagram
/// limit of `rpq_ros::service::MAX_REPLY_BYTES`) reaches rclpy without its lists, with a message
/// saying so, instead of never (a reply DDS has to fragment is lost); the figures stay.
#[test]
fn rclpy_gets_a_result_too_large_for_a_reply_without_its_lists() {
    let env = TestEnv::new();
    let _node = spawn_node(&env, &["-p".into(), "reply_max_bytes:=4000".into()]);
    let scene = rpq_scene::load_scene(scene_file()).unwrap();
    let demo = demonstrate(Task::CornerRounding, &scene, &params().sim, SEED).unwrap();
    let span = &demo.path.spans[0];
    let span_yaml = format!(
        "{{first: {}, last: {}, objects: [frame, table]}}",
        span.first, span.last
    );
    let r = &call(
        &env,
        "/path_shrinking/shrink_path",
        "rpq_interfaces/srv/ShrinkPath",
        &[request(
            "block_2",
            &poses_yaml(&demo.path.poses()),
            &span_yaml,
            "",
        )],
    )[0];
    assert_eq!(r["success"].as_bool(), Some(true), "{:?}", r["message"]);
    let message = r["message"].as_str().unwrap();
    assert!(
        message.contains("the result's lists are not in this reply")
            && message.contains("~/result"),
        "{message}"
    );
    let res = &r["result"];
    for list in ["recorded", "modified", "reduced", "commands"] {
        assert_eq!(res[list].as_sequence().map(Vec::len), Some(0), "{list}");
    }
    assert_eq!(res["required_contacts_kept"].as_bool(), Some(true));
    assert_eq!(res["stabilised"].as_bool(), Some(true));
    assert!(f(&res["length_reduced"]) > 0.0);
}
