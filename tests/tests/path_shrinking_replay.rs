//! Rosbag replay into `path_shrinking`'s demonstration mode, brought up by the suite's launcher
//! (`rpq_launch launch/path_shrinking.launch.xml record_on_start:=true`, which also starts
//! robot_sim; SIGINT to the launcher must stop both with status 0): a bag of the scripted
//! operator's dragger wrenches (the cornering task of Fig. 4, 20 Hz, written with
//! [`BagWriter`]) is played by `rpq_bag replay` into the node; every published workpiece pose
//! (recorded back into a bag) and the recorded, modified and reduced paths of `~/finish`
//! (called from rclpy) equal `rpq_pathshrink` run on the same wrenches, within 1e-9 m.
//!
//! Opens DDS sockets: runs only inside the private network namespace (tests/run_all.sh).

use std::path::Path;
use std::time::Duration;

use rpq_bag::{BagReader, BagWriter, QosProfile, TopicSpec};
use rpq_pathshrink::operator::Task;
use rpq_pathshrink::program::{shrink_program, ProgramParams};
use rpq_pathshrink::task::{demonstrate, Demonstrated, SEED};
use rpq_pathshrink::Pose;
use rpq_ros::cdr;
use rpq_ros::msg::builtin_interfaces::Time;
use rpq_ros::msg::geometry_msgs::{PoseStamped, Vector3, Wrench, WrenchStamped};
use rpq_ros::msg::std_msgs::Header;
use rpq_ros::msg::RosMessage;
use rpq_tests::{bin, repo_root, run_with_timeout, NodeProcess, TestEnv, ROBOT_SIM_READY};
use serde_yaml::Value;

/// Log time of the first wrench (ns since the epoch).
const BAG_START_NS: u64 = 1_700_000_000_000_000_000;
/// 20 Hz.
const PERIOD_NS: u64 = 50_000_000;
const TOLERANCE: f64 = 1e-9;

fn scene_file() -> String {
    repo_root()
        .join("config/puzzle.scene.yaml")
        .display()
        .to_string()
}

fn write_bag(dir: &Path, demo: &Demonstrated) {
    let mut writer = BagWriter::create(dir).expect("bag directory");
    let ty = WrenchStamped::TYPE_NAME;
    let def = WrenchStamped::definition();
    writer
        .add_topic(
            TopicSpec::new("/dragger_wrench", ty, &def)
                .with_qos(vec![QosProfile::rclcpp_default()]),
        )
        .expect("topic");
    for (k, (w, _)) in demo.inputs.iter().enumerate() {
        let t = BAG_START_NS + k as u64 * PERIOD_NS;
        let v = |x: &nalgebra::Vector3<f64>| Vector3 {
            x: x.x,
            y: x.y,
            z: x.z,
        };
        let msg = WrenchStamped {
            header: Header {
                stamp: Time {
                    sec: i32::try_from(t / 1_000_000_000).expect("stamp fits"),
                    nanosec: (t % 1_000_000_000) as u32,
                },
                frame_id: "world".into(),
            },
            wrench: Wrench {
                force: v(&w.force),
                torque: v(&w.torque),
            },
        };
        let data = cdr::to_vec(&msg).expect("WrenchStamped encodes");
        writer
            .write("/dragger_wrench", ty, &def, t, t, &data)
            .expect("write");
    }
    writer.finish().expect("bag finishes");
}

fn f(v: &Value) -> f64 {
    v.as_f64()
        .or_else(|| v.as_i64().map(|i| i as f64))
        .unwrap_or_else(|| panic!("not a number: {v:?}"))
}

fn diff(a: &Pose, b: &Pose) -> f64 {
    (a.translation.vector - b.translation.vector)
        .amax()
        .max((a.rotation.coords - b.rotation.coords).amax())
}

fn pose_of(m: &Value) -> Pose {
    let q = nalgebra::Quaternion::new(
        f(&m["orientation"]["w"]),
        f(&m["orientation"]["x"]),
        f(&m["orientation"]["y"]),
        f(&m["orientation"]["z"]),
    );
    Pose::from_parts(
        nalgebra::Translation3::new(
            f(&m["position"]["x"]),
            f(&m["position"]["y"]),
            f(&m["position"]["z"]),
        ),
        nalgebra::UnitQuaternion::new_unchecked(q),
    )
}

fn max_diff(list: &Value, poses: &[Pose], what: &str) -> f64 {
    let l = list
        .as_sequence()
        .unwrap_or_else(|| panic!("{what}: no list"));
    assert_eq!(l.len(), poses.len(), "{what}: pose count");
    l.iter()
        .zip(poses)
        .map(|(m, p)| diff(&pose_of(m), p))
        .fold(0.0, f64::max)
}

#[test]
fn replayed_dragger_wrenches_give_the_library_demonstration_and_program() {
    let env = TestEnv::new();
    let work = tempfile::tempdir().expect("tempdir");
    let scene = rpq_scene::load_scene(scene_file()).unwrap();
    let params = ProgramParams::default();
    let demo = demonstrate(Task::Cornering, &scene, &params.sim, SEED).unwrap();
    let reference = shrink_program(demo.env.clone(), demo.path.clone(), &params).unwrap();
    let input = work.path().join("dragger");
    write_bag(&input, &demo);

    // The suite's launch file through the suite's launcher (robot_sim + path_shrinking on the
    // puzzle scene), recording from the start.
    let mut launch_cmd = env.command(bin("rpq_launch"));
    launch_cmd
        .arg(repo_root().join("launch/path_shrinking.launch.xml"))
        .args(["demo_workpiece:=block_1", "record_on_start:=true"]);
    let mut node = NodeProcess::spawn("rpq_launch", launch_cmd);
    let ready = node.wait_for_output("path_shrinking ready", Duration::from_secs(30));
    assert!(ready.starts_with("[path_shrinking-2] "), "{ready:?}");
    node.wait_for_output(ROBOT_SIM_READY, Duration::from_secs(30));

    let output = work.path().join("recorded");
    let mut replay_cmd = env.command(bin("rpq_bag"));
    replay_cmd
        .arg("replay")
        .arg(&input)
        .arg("--output")
        .arg(&output)
        .args(["--record", "/path_shrinking/workpiece_pose"])
        .args(["--rate", "2", "--start-delay", "0.5", "--settle", "1.0"])
        .args(["--wait-timeout", "20"]);
    let replay = run_with_timeout("rpq_bag replay", replay_cmd, Duration::from_secs(90));
    assert!(
        replay.success,
        "rpq_bag replay failed\n{}\n{}\n--- node ---\n{}",
        replay.stdout,
        replay.stderr,
        node.output().join("\n")
    );

    // Every step's pose, in order.
    let reader = BagReader::open(&output).expect("recorded bag opens");
    let published: Vec<Pose> = reader
        .messages()
        .iter()
        .filter(|m| m.topic == "/path_shrinking/workpiece_pose")
        .map(|m| {
            let p = cdr::from_bytes::<PoseStamped>(&m.data).expect("PoseStamped decodes");
            assert_eq!(p.header.frame_id, "world");
            Pose::try_from(&p.pose).expect("finite pose")
        })
        .collect();
    assert_eq!(
        published.len(),
        demo.inputs.len(),
        "one pose per wrench\n{}",
        node.output().join("\n")
    );
    let worst = published
        .iter()
        .zip(&demo.path.nodes[1..])
        .map(|(a, b)| diff(a, &b.pose))
        .fold(0.0, f64::max);
    assert!(
        worst <= TOLERANCE,
        "published poses differ from the library by {worst:e}"
    );

    // ~/finish from rclpy: the recorded path and its program.
    let out = env.run_peer(
        "rclpy_peer.py",
        &[
            "--timeout",
            "120",
            "--attempt-timeout",
            "60",
            "call",
            "--service",
            "/path_shrinking/finish",
            "--type",
            "rpq_interfaces/srv/FinishDemonstration",
            "--requests-yaml",
            "[{execute: false}, {}]",
        ],
    );
    out.assert_ok("rclpy call of ~/finish");
    let responses = out.records_of("response");
    let r = &responses[0]["response"];
    assert_eq!(r["success"].as_bool(), Some(true), "{:?}", r["message"]);
    let res = &r["result"];
    let d_rec = max_diff(&res["recorded"], &demo.path.poses(), "recorded");
    let d_mod = max_diff(&res["modified"], &reference.modified.poses(), "modified");
    let d_red = max_diff(&res["reduced"], &reference.reduced.poses(), "reduced");
    assert!(
        d_rec <= TOLERANCE && d_mod <= TOLERANCE && d_red <= TOLERANCE,
        "node vs library: recorded {d_rec:e}, modified {d_mod:e}, reduced {d_red:e}"
    );
    assert_eq!(
        res["commands"].as_sequence().unwrap().len(),
        reference.commands.len()
    );
    // A second ~/finish: nothing is being recorded any more.
    let again = &responses[1]["response"];
    assert_eq!(again["success"].as_bool(), Some(false));
    assert!(again["message"].as_str().unwrap().contains("not recording"));

    assert!(node.is_running(), "{}", node.output().join("\n"));
    let code = node.stop(Duration::from_secs(10));
    assert_eq!(
        code,
        Some(0),
        "the launcher stops cleanly on SIGINT\n{}",
        node.output().join("\n")
    );
    eprintln!(
        "path_shrinking_replay: {} wrenches -> {} poses (max difference {worst:.1e} m); program \
         {} -> {} -> {} nodes equal to the library",
        demo.inputs.len(),
        published.len(),
        demo.path.nodes.len(),
        reference.modified.nodes.len(),
        reference.reduced.nodes.len()
    );
}
