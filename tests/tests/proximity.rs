//! `proximity_query` against real rclpy (Fast DDS): every service called with good and bad
//! requests, the distance stream and the RViz markers decoded with `rpq_interfaces` built by
//! rosidl and `visualization_msgs` from PyPI, every answer compared with `rpq_scene::World`
//! called directly on the same joint values; stale and missing joint states refuse answers.
//!
//! Every test opens DDS sockets: run inside `../shared/netns-run` (tests/run_all.sh does).

use std::time::Duration;

use rpq_base::SplitMix64;
use rpq_scene::{load_scene, ContactMode, Selection, World};
use rpq_tests::{bin, repo_file, repo_root, NodeProcess, PeerOutput, TestEnv};
use serde_yaml::Value;

const JOINTS: [&str; 6] = [
    "joint_1", "joint_2", "joint_3", "joint_4", "joint_5", "joint_6",
];
/// Current configurations the publishers send: apart (checked against the library below).
const QL: [f64; 6] = [0.3, 0.2, 0.3, 0.2, -0.4, 0.1];
const QR: [f64; 6] = [-0.2, 0.3, 0.2, 0.0, 0.3, 0.5];
/// Both arms reaching to the middle: colliding (given in requests).
const QC: [f64; 6] = [0.0, 0.8, 0.5, 0.0, 0.0, 0.0];
const READY: &str = "proximity_query ready";
const VALID: &str = "distance stream valid";

fn scene_file() -> String {
    repo_file("config/rx60_pair.scene.yaml")
}

fn library() -> World {
    World::new(load_scene(scene_file()).expect("scene loads"))
}

fn names() -> Vec<String> {
    JOINTS.iter().map(|j| j.to_string()).collect()
}

/// The library at left = `l`, right = `r`.
fn posed(l: &[f64], r: &[f64]) -> World {
    let mut w = library();
    let robots = w.robots();
    w.set_joint_state(robots[0], &names(), l).unwrap();
    w.set_joint_state(robots[1], &names(), r).unwrap();
    w
}

fn spawn_node(env: &TestEnv, extra: &[&str]) -> NodeProcess {
    let mut cmd = env.command(bin("proximity_query"));
    cmd.current_dir(repo_root())
        .arg("--ros-args")
        .arg("--params-file")
        .arg(repo_root().join("config/proximity_query.yaml"))
        .arg("-p")
        .arg(format!("scene_file:={}", scene_file()))
        .arg("-p")
        .arg("stream_groups:=[\"left|right\"]")
        .args(extra);
    let node = NodeProcess::spawn("proximity_query", cmd);
    node.wait_for_output(READY, Duration::from_secs(30));
    node
}

fn state_yaml(q: &[f64]) -> String {
    let v: Vec<String> = q.iter().map(|x| format!("{x:?}")).collect();
    format!(
        "{{name: [{}], position: [{}]}}",
        JOINTS.join(", "),
        v.join(", ")
    )
}

fn robot_state(robot: &str, q: &[f64]) -> String {
    format!("{{robot: {robot}, joint_state: {}}}", state_yaml(q))
}

/// The arguments of an rclpy peer publishing `q` on `/<robot>/joint_states` at 20 Hz, `count`
/// times, within `timeout` seconds.
fn publish_args(robot: &str, q: &[f64], count: u64, timeout: f64) -> Vec<String> {
    [
        "pub",
        "--topic",
        &format!("/{robot}/joint_states"),
        "--type",
        "sensor_msgs/msg/JointState",
        "--yaml",
        &state_yaml(q),
        "--rate",
        "20",
        "--count",
        &count.to_string(),
        "--timeout",
        &timeout.to_string(),
    ]
    .iter()
    .map(|a| a.to_string())
    .collect()
}

/// rclpy publishes `q` on `/<robot>/joint_states` at 20 Hz for `seconds`, then exits.
fn publish(env: &TestEnv, robot: &str, q: &[f64], seconds: f64) -> PeerOutput {
    let args = publish_args(robot, q, (seconds * 20.0).round() as u64, seconds + 20.0);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    env.run_peer("rclpy_peer.py", &args)
}

/// rclpy publishes `q` on `/<robot>/joint_states` at 20 Hz in the background until the returned
/// process is stopped (at most 10 min): the states stay fresh however long the test's service
/// calls take on a loaded machine.
fn publish_until_stopped(env: &TestEnv, robot: &str, q: &[f64]) -> NodeProcess {
    let mut cmd = env.command(rpq_tests::python());
    cmd.arg(rpq_tests::peer_script("rclpy_peer.py"))
        .args(publish_args(robot, q, 20 * 600, 620.0));
    NodeProcess::spawn(&format!("rclpy publisher of {robot}"), cmd)
}

/// Panics with its output unless the background publisher still runs (it must not have failed).
fn assert_still_publishing(publisher: &mut NodeProcess, robot: &str) {
    assert!(
        publisher.is_running(),
        "the rclpy publisher of {robot} ended early:\n{}",
        publisher.output().join("\n")
    );
}

/// rclpy decodes `count` messages of type `ty` on `topic`; panics naming `what` if it cannot.
fn echo(env: &TestEnv, topic: &str, ty: &str, count: u32, what: &str) -> PeerOutput {
    let count = count.to_string();
    let out = env.run_peer(
        "rclpy_peer.py",
        &["echo", "--topic", topic, "--type", ty, "--count", &count],
    );
    out.assert_ok(what);
    out
}

fn call(env: &TestEnv, service: &str, ty: &str, requests: &[String]) -> Vec<Value> {
    let service = format!("/proximity_query/{service}");
    let ty = format!("rpq_interfaces/srv/{ty}");
    env.call_service(&service, &ty, requests, &["--timeout", "40"])
}

/// The items of a sequence value, each converted by `item`.
fn seq<T>(v: &Value, item: impl Fn(&Value) -> T) -> Vec<T> {
    v.as_sequence()
        .unwrap_or_else(|| panic!("not a sequence: {v:?}"))
        .iter()
        .map(item)
        .collect()
}

fn f(v: &Value) -> f64 {
    v.as_f64()
        .or_else(|| v.as_i64().map(|i| i as f64))
        .unwrap_or_else(|| panic!("not a number: {v:?}"))
}

fn s(v: &Value) -> &str {
    v.as_str().unwrap_or_else(|| panic!("not a string: {v:?}"))
}

fn point(v: &Value) -> [f64; 3] {
    [f(&v["x"]), f(&v["y"]), f(&v["z"])]
}

fn close3(a: [f64; 3], b: [f64; 3], tol: f64) -> bool {
    (0..3).all(|i| (a[i] - b[i]).abs() <= tol)
}

fn ok(r: &Value) {
    assert_eq!(r["success"].as_bool(), Some(true), "{r:?}");
}

/// `success: false` and a message containing every one of `words`.
fn refused(r: &Value, words: &[&str]) {
    assert_eq!(
        r["success"].as_bool(),
        Some(false),
        "must be refused: {r:?}"
    );
    let m = s(&r["message"]);
    for w in words {
        assert!(m.contains(w), "message `{m}` must name `{w}`");
    }
}

fn sel(w: &World, names: &[&str]) -> Selection {
    let n: Vec<String> = names.iter().map(|x| x.to_string()).collect();
    w.select(&n).unwrap()
}

/// Every service from rclpy, good and bad requests, against the library on the same joint
/// values; the stream and the markers decoded by rclpy.
#[test]
fn rclpy_calls_every_service_and_answers_equal_the_library() {
    let env = TestEnv::new();
    let node = spawn_node(&env, &["-p", "max_batch_size:=50"]);
    let mut apart = posed(&QL, &QR);
    let all = Selection::all();
    let d0 = apart.min_distance(&all, &all, 0.0, 0.0).unwrap();
    assert!(
        d0.distance > 0.02,
        "the current configurations must be apart: {d0:?}"
    );
    let mut touching = posed(&QC, &QC);
    assert!(
        touching
            .check_collision(&all, &all, ContactMode::First)
            .colliding
    );
    let given = format!(
        "[{}, {}]",
        robot_state("left", &QC),
        robot_state("right", &QC)
    );

    let mut pubs = [
        ("left", publish_until_stopped(&env, "left", &QL)),
        ("right", publish_until_stopped(&env, "right", &QR)),
    ];
    {
        node.wait_for_output(VALID, Duration::from_secs(30));

        // ~/min_distance
        let r = call(
            &env,
            "min_distance",
            "MinDistance",
            &[
                "{}".into(),
                "{group_a: [left], group_b: [right], frame_id: left/link_3}".into(),
                format!("{{robot_states: {given}}}"),
                "{rel_err: 0.1, abs_err: 0.0}".into(),
                "{group_a: [left/link_6], group_b: [right]}".into(),
                "{group_a: [nobody]}".into(),
                "{robot_states: [{robot: left, joint_state: {name: [joint_1], position: [0.0]}}]}"
                    .into(),
                format!(
                    "{{robot_states: [{}]}}",
                    robot_state("left", &[0.0, f64::NAN, 0.0, 0.0, 0.0, 0.0])
                        .replace("NaN", ".nan")
                ),
                "{frame_id: nowhere}".into(),
                "{rel_err: -1.0}".into(),
                format!("{{robot_states: [{}]}}", robot_state("middle", &QC)),
                format!(
                    "{{robot_states: [{}, {}]}}",
                    robot_state("left", &QC),
                    robot_state("left", &QC)
                ),
                "{}".into(),
            ],
        );
        ok(&r[0]);
        assert_eq!(f(&r[0]["distance"]), d0.distance);
        assert_eq!(s(&r[0]["body_a"]), apart.body_name(d0.body_a));
        assert_eq!(s(&r[0]["body_b"]), apart.body_name(d0.body_b));
        assert!(close3(
            point(&r[0]["point_a"]),
            d0.point_a.coords.into(),
            1e-12
        ));
        assert!(close3(
            point(&r[0]["point_b"]),
            d0.point_b.coords.into(),
            1e-12
        ));
        assert_eq!(s(&r[0]["header"]["frame_id"]), "world");
        // witness points in a link frame
        ok(&r[1]);
        let link3 = apart.body_id("left/link_3").unwrap();
        let pose = apart.scenario().body_poses(link3.object)[link3.body];
        assert_eq!(s(&r[1]["header"]["frame_id"]), "left/link_3");
        assert!(close3(
            point(&r[1]["point_a"]),
            pose.inverse_transform_point(&d0.point_a).coords.into(),
            1e-12
        ));
        ok(&r[2]);
        assert_eq!(f(&r[2]["distance"]), 0.0);
        ok(&r[3]);
        let d = f(&r[3]["distance"]);
        assert!(
            d >= d0.distance - 1e-15 && d <= d0.distance * 1.1 + 1e-15,
            "{d} vs {}",
            d0.distance
        );
        ok(&r[4]);
        let (a6, right) = (sel(&apart, &["left/link_6"]), sel(&apart, &["right"]));
        let d6 = apart.min_distance(&a6, &right, 0.0, 0.0).unwrap();
        assert_eq!(f(&r[4]["distance"]), d6.distance);
        assert_eq!(s(&r[4]["body_a"]), "left/link_6");
        refused(&r[5], &["nobody"]);
        refused(&r[6], &["left"]);
        refused(&r[7], &["NaN"]);
        refused(&r[8], &["nowhere"]);
        refused(&r[9], &["rel_err"]);
        refused(&r[10], &["middle"]);
        refused(&r[11], &["twice"]);
        ok(&r[12]); // still serving

        // ~/check_collision
        let r = call(
            &env,
            "check_collision",
            "CheckCollision",
            &[
                "{}".into(),
                format!("{{robot_states: {given}, all_pairs: true, with_triangles: true}}"),
                format!(
                    "{{robot_states: {given}, group_a: [left/link_1], group_b: [right/link_1]}}"
                ),
                format!("{{robot_states: {given}}}"),
                "{with_triangles: true}".into(),
                "{group_b: [right/link_99]}".into(),
            ],
        );
        ok(&r[0]);
        assert_eq!(r[0]["colliding"].as_bool(), Some(false));
        ok(&r[1]);
        assert_eq!(r[1]["colliding"].as_bool(), Some(true));
        let lib = touching.check_collision(&all, &all, ContactMode::AllPairsWithTriangles);
        let pairs = r[1]["pairs"].as_sequence().unwrap();
        assert_eq!(pairs.len(), lib.pairs.len());
        for (p, l) in pairs.iter().zip(&lib.pairs) {
            assert_eq!(s(&p["body_a"]), touching.body_name(l.a));
            assert_eq!(s(&p["body_b"]), touching.body_name(l.b));
            let ta: Vec<u64> = seq(&p["triangles_a"], |v| v.as_u64().unwrap());
            let tb: Vec<u64> = seq(&p["triangles_b"], |v| v.as_u64().unwrap());
            let la: Vec<u64> = l.triangles.iter().map(|t| u64::from(t.0)).collect();
            let lb: Vec<u64> = l.triangles.iter().map(|t| u64::from(t.1)).collect();
            assert!(!ta.is_empty() || l.triangles.is_empty());
            assert_eq!((ta, tb), (la, lb));
        }
        ok(&r[2]);
        let l1 = touching.check_collision(
            &sel(&touching, &["left/link_1"]),
            &sel(&touching, &["right/link_1"]),
            ContactMode::First,
        );
        assert_eq!(r[2]["colliding"].as_bool(), Some(l1.colliding));
        ok(&r[3]);
        assert_eq!(r[3]["colliding"].as_bool(), Some(true));
        assert_eq!(r[3]["pairs"].as_sequence().unwrap().len(), 1);
        refused(&r[4], &["all_pairs"]);
        refused(&r[5], &["link_99"]);

        // ~/check_tolerance
        let (above, below) = (d0.distance + 0.01, (d0.distance - 0.01).max(0.0));
        let r = call(
            &env,
            "check_tolerance",
            "CheckTolerance",
            &[
                format!("{{tolerance: {above:?}}}"),
                format!("{{tolerance: {below:?}}}"),
                "{tolerance: 0.3, per_pair: true}".into(),
                "{tolerance: -0.1}".into(),
                "{tolerance: .inf}".into(),
            ],
        );
        ok(&r[0]);
        assert_eq!(r[0]["closer"].as_bool(), Some(true));
        ok(&r[1]);
        assert_eq!(r[1]["closer"].as_bool(), Some(false));
        ok(&r[2]);
        let lib = apart.check_tolerance(0.3, &all, &all, true);
        let pairs = r[2]["pairs"].as_sequence().unwrap();
        assert_eq!(r[2]["closer"].as_bool(), Some(lib.closer));
        assert_eq!(pairs.len(), lib.pairs.len());
        for (p, l) in pairs.iter().zip(&lib.pairs) {
            assert_eq!(s(&p["body_a"]), apart.body_name(l.a));
            assert_eq!(f(&p["distance"]), l.distance);
            assert!(l.distance < 0.3);
        }
        refused(&r[3], &["tolerance"]);
        refused(&r[4], &["tolerance"]);

        // ~/check_states: random configurations (seeded) and the colliding one
        let joint_names: Vec<String> = ["left", "right"]
            .iter()
            .flat_map(|r| JOINTS.iter().map(move |j| format!("{r}/{j}")))
            .collect();
        let mut rng = SplitMix64::new(20261125);
        let mut positions: Vec<f64> = (0..40 * 12).map(|_| rng.range(-1.5, 1.5)).collect();
        positions.extend(QC.iter().chain(QC.iter()));
        let lib = library()
            .check_states(&joint_names, &positions, true)
            .unwrap();
        let list = |v: &[f64]| {
            v.iter()
                .map(|x| format!("{x:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let names_yaml = joint_names.join(", ");
        let r = call(
            &env,
            "check_states",
            "CheckStates",
            &[
                format!(
                    "{{joint_names: [{names_yaml}], positions: [{}], with_distance: true}}",
                    list(&positions)
                ),
                format!(
                    "{{joint_names: [{names_yaml}], positions: [{}]}}",
                    list(&positions)
                ),
                format!("{{joint_names: [{names_yaml}], positions: []}}"),
                format!("{{joint_names: [{names_yaml}], positions: [0.0, 1.0]}}"),
                format!(
                    "{{joint_names: [{}, left/joint_9], positions: [{}]}}",
                    joint_names[..11].join(", "),
                    list(&[0.0; 12])
                ),
                format!(
                    "{{joint_names: [{names_yaml}], positions: [{}]}}",
                    list(&vec![0.0; 51 * 12])
                ),
            ],
        );
        ok(&r[0]);
        let colliding: Vec<bool> = seq(&r[0]["colliding"], |v| v.as_bool().unwrap());
        let distance: Vec<f64> = seq(&r[0]["distance"], f);
        assert_eq!(colliding.len(), 41);
        assert_eq!(
            colliding,
            lib.iter().map(|a| a.colliding).collect::<Vec<_>>()
        );
        assert_eq!(distance, lib.iter().map(|a| a.distance).collect::<Vec<_>>());
        assert!(colliding[40]);
        assert!(colliding.iter().filter(|c| !**c).count() > 0);
        ok(&r[1]);
        assert!(r[1]["distance"].as_sequence().unwrap().is_empty());
        refused(&r[2], &["empty"]);
        refused(&r[3], &["rows"]);
        refused(&r[4], &["joint_9"]);
        refused(&r[5], &["max_batch_size"]);

        // ~/set_allowed_collision, then the colliding configuration is allowed; ~/get_scene
        let r = call(
            &env,
            "set_allowed_collision",
            "SetAllowedCollision",
            &[
                "{body_a: left, body_b: right, allowed: true}".into(),
                "{body_a: left, body_b: left/link_2, allowed: true}".into(),
                "{body_a: left, body_b: nobody, allowed: true}".into(),
            ],
        );
        ok(&r[0]);
        assert!(r[0]["pairs_changed"].as_u64().unwrap() > 0);
        refused(&r[1], &[]);
        refused(&r[2], &["nobody"]);
        let r = call(
            &env,
            "check_collision",
            "CheckCollision",
            &[format!("{{robot_states: {given}}}")],
        );
        ok(&r[0]);
        assert_eq!(
            r[0]["colliding"].as_bool(),
            Some(false),
            "every pair is allowed now"
        );
        let r = call(&env, "get_scene", "GetScene", &["{}".into()]);
        ok(&r[0]);
        assert_eq!(s(&r[0]["world_frame"]), "world");
        let bodies = r[0]["bodies"].as_sequence().unwrap();
        let n_bodies: usize = apart
            .scenario()
            .objects()
            .iter()
            .map(|o| o.num_bodies())
            .sum();
        assert_eq!(bodies.len(), n_bodies);
        for b in bodies {
            let id = apart.body_id(s(&b["name"])).unwrap();
            let p = apart.scenario().body_poses(id.object)[id.body];
            assert!(close3(
                point(&b["pose"]["position"]),
                p.translation.vector.into(),
                1e-12
            ));
            assert_eq!(s(&b["frame_id"]), s(&b["name"]));
        }
        assert_eq!(r[0]["joint_names"].as_sequence().unwrap().len(), 12);
        let runtime = r[0]["allowed_at_runtime"].as_sequence().unwrap();
        let n_runtime = runtime.iter().filter(|v| v.as_bool() == Some(true)).count();
        let per_robot = apart.scenario().objects()[0].num_bodies();
        assert_eq!(n_runtime, per_robot * per_robot);
        let r = call(
            &env,
            "set_allowed_collision",
            "SetAllowedCollision",
            &["{body_a: left, body_b: right, allowed: false}".into()],
        );
        ok(&r[0]);
        let r = call(
            &env,
            "check_collision",
            "CheckCollision",
            &[format!("{{robot_states: {given}}}")],
        );
        assert_eq!(r[0]["colliding"].as_bool(), Some(true), "forbidden again");

        // the stream and the markers, decoded by rclpy
        let out = echo(
            &env,
            "/proximity_query/distances",
            "rpq_interfaces/msg/GroupDistances",
            3,
            "rclpy echo of the distance stream",
        );
        for m in out.records_of("message") {
            let g = &m["data"]["groups"][0];
            assert_eq!(s(&g["group"]), "left|right");
            assert_eq!(g["valid"].as_bool(), Some(true), "{g:?}");
            assert_eq!(f(&g["distance"]), d0.distance);
            assert_eq!(s(&g["body_a"]), apart.body_name(d0.body_a));
            assert_eq!(s(&m["data"]["header"]["frame_id"]), "world");
        }
        let out = echo(
            &env,
            "/proximity_query/markers",
            "visualization_msgs/msg/MarkerArray",
            2,
            "rclpy echo of the markers",
        );
        let m = &out.records_of("message")[1]["data"]["markers"];
        let markers = m.as_sequence().unwrap();
        assert_eq!(markers[0]["action"].as_i64(), Some(3), "DELETEALL first");
        let line = markers
            .iter()
            .find(|x| x["ns"].as_str() == Some("closest"))
            .expect("closest-point line");
        let pts = line["points"].as_sequence().unwrap();
        assert!(close3(point(&pts[0]), d0.point_a.coords.into(), 1e-12));
        assert!(close3(point(&pts[1]), d0.point_b.coords.into(), 1e-12));
        let label = markers
            .iter()
            .find(|x| x["ns"].as_str() == Some("label"))
            .expect("label");
        assert!(s(&label["text"]).contains(&format!("{:.1} mm", d0.distance * 1000.0)));
        assert!(!markers
            .iter()
            .any(|x| x["ns"].as_str() == Some("colliding")));
        for (robot, p) in &mut pubs {
            assert_still_publishing(p, robot);
        }
    }
}

/// Missing and stale joint states: answers for the current configuration fail naming the
/// robot, the stream says invalid, and requests that give the configuration still work.
#[test]
fn missing_or_stale_joint_states_refuse_answers() {
    let env = TestEnv::new();
    let node = spawn_node(&env, &["-p", "joint_state_timeout:=0.3"]);
    let given_right = format!("[{}]", robot_state("right", &QR));
    // no joint state at all yet
    let r = call(&env, "min_distance", "MinDistance", &["{}".into()]);
    refused(&r[0], &["no joint state", "left"]);
    let mut left = publish_until_stopped(&env, "left", &QL);
    std::thread::scope(|scope| {
        let right = scope.spawn(|| publish(&env, "right", &QR, 1.5));
        node.wait_for_output(VALID, Duration::from_secs(30));
        right.join().unwrap().assert_ok("right publisher");
        std::thread::sleep(Duration::from_millis(1200));
        let r = call(
            &env,
            "min_distance",
            "MinDistance",
            &["{}".into(), format!("{{robot_states: {given_right}}}")],
        );
        refused(&r[0], &["right", "old"]);
        ok(&r[1]);
        assert_eq!(f(&r[1]["distance"]), {
            let mut w = posed(&QL, &QR);
            w.min_distance(&Selection::all(), &Selection::all(), 0.0, 0.0)
                .unwrap()
                .distance
        });
        let r = call(&env, "check_collision", "CheckCollision", &["{}".into()]);
        refused(&r[0], &["right"]);
        let out = echo(
            &env,
            "/proximity_query/distances",
            "rpq_interfaces/msg/GroupDistances",
            1,
            "rclpy echo",
        );
        let g = &out.record("message")["data"]["groups"][0];
        assert_eq!(g["valid"].as_bool(), Some(false));
        assert!(s(&g["message"]).contains("right"));
        node.wait_for_output("distance stream invalid", Duration::from_secs(5));
        assert_still_publishing(&mut left, "left");
    });
}

/// Robots given in the scene by their `robot_description` topic: two `robot_sim`s in the
/// namespaces `left` and `right` publish their URDF (mesh URIs rewritten to `file://` in a cargo
/// build) and joint states; the node builds the scene from the topics and answers as the library
/// built from the files.
#[test]
fn scene_robots_from_robot_description_topics() {
    let env = TestEnv::new();
    let init = |q: &[f64]| format!("initial_positions:={}", rpq_tests::yaml_f64_list(q));
    let (il, ir) = (init(&QL), init(&QR));
    let _left = rpq_tests::spawn_robot_sim(&env, &["-r", "__ns:=/left", "-p", &il]);
    let _right = rpq_tests::spawn_robot_sim(&env, &["-r", "__ns:=/right", "-p", &ir]);
    let dir = tempfile::tempdir().unwrap();
    let scene = dir.path().join("topics.scene.yaml");
    std::fs::write(
        &scene,
        "robots:\n  - name: left\n    robot_description: /left/robot_description\n  \
         - name: right\n    robot_description: /right/robot_description\n    \
         base: {xyz: [0.6, 0.0, 0.0], rpy: [0.0, 0.0, 3.141592653589793]}\n",
    )
    .unwrap();
    let mut cmd = env.command(bin("proximity_query"));
    cmd.arg("--ros-args")
        .arg("-p")
        .arg(format!("scene_file:={}", scene.display()));
    let node = NodeProcess::spawn("proximity_query", cmd);
    node.wait_for_output(READY, Duration::from_secs(30));
    node.wait_for_output(VALID, Duration::from_secs(30));
    let r = call(&env, "min_distance", "MinDistance", &["{}".into()]);
    ok(&r[0]);
    // The library on the same scene from files, without the collision matrix (the topic scene
    // names none; distances do not depend on it).
    let mut w = posed(&QL, &QR);
    let d = w
        .min_distance(&Selection::all(), &Selection::all(), 0.0, 0.0)
        .unwrap();
    assert_eq!(f(&r[0]["distance"]), d.distance);
    assert_eq!(s(&r[0]["body_a"]), w.body_name(d.body_a));
    assert_eq!(s(&r[0]["body_b"]), w.body_name(d.body_b));
    let r = call(
        &env,
        "check_collision",
        "CheckCollision",
        &[format!(
            "{{robot_states: [{}, {}]}}",
            robot_state("left", &QC),
            robot_state("right", &QC)
        )],
    );
    ok(&r[0]);
    assert_eq!(r[0]["colliding"].as_bool(), Some(true));
}
