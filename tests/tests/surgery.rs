//! `virtual_protection` against real rclpy (Fast DDS): the services called with good and bad
//! requests, the shield and cutting aid compared with `rpq_surgery` called directly on the same
//! outline, the STL saved only inside the output directory, the latched protection meshes and
//! their markers decoded with `rpq_interfaces` built by rosidl and `visualization_msgs` from
//! PyPI, and the tool-patient distance marker for a joint state rclpy publishes, against the
//! engine's distance.
//!
//! Every test opens DDS sockets: run inside `../shared/netns-run` (tests/run_all.sh does).

use std::time::Duration;

use nalgebra::{Isometry3, Point3, Vector3};
use rpq_proximity::{distance, DistanceRequest, Model, QueryWorkspace};
use rpq_surgery::scenario::DrillArm;
use rpq_surgery::{generate_cutting_aid, CuttingAidSpec};
use rpq_tests::{bin, repo_root, NodeProcess, PeerOutput, TestEnv};
use serde_yaml::Value;

mod surgery_common;
use surgery_common::{points_yaml, Patient};

const READY: &str = "virtual_protection ready";

fn f(v: &Value) -> f64 {
    v.as_f64()
        .or_else(|| v.as_i64().map(|i| i as f64))
        .unwrap_or_else(|| panic!("not a number: {v:?}"))
}

fn seq(v: &Value) -> &Vec<Value> {
    v.as_sequence()
        .unwrap_or_else(|| panic!("not a sequence: {v:?}"))
}

fn call(env: &TestEnv, service: &str, ty: &str, requests: &[String]) -> Vec<Value> {
    env.call_service(service, ty, requests, &["--timeout", "60"])
}

/// The latched `~/protections` message as rclpy decodes it (its `data`).
fn protections(env: &TestEnv) -> Value {
    let out = echo(
        env,
        "/virtual_protection/protections",
        "rpq_interfaces/msg/ProtectionMeshes",
        "latched",
    );
    out.record("message")["data"].clone()
}

/// Name and triangle count of each mesh of a protections message.
fn meshes(msg: &Value) -> Vec<(String, usize)> {
    seq(&msg["meshes"])
        .iter()
        .map(|m| {
            (
                m["name"].as_str().unwrap().to_string(),
                seq(&m["triangles"]).len() / 3,
            )
        })
        .collect()
}

fn echo(env: &TestEnv, topic: &str, ty: &str, qos: &str) -> PeerOutput {
    let out = env.run_peer(
        "rclpy_peer.py",
        &[
            "echo",
            "--topic",
            topic,
            "--type",
            ty,
            "--count",
            "1",
            "--qos",
            qos,
            "--timeout",
            "60",
        ],
    );
    out.assert_ok(&format!("rclpy echo of {topic}"));
    out
}

fn ok(r: &Value) {
    assert_eq!(r["success"].as_bool(), Some(true), "{r:?}");
}

fn refused(r: &Value, word: &str) {
    assert_eq!(
        r["success"].as_bool(),
        Some(false),
        "must be refused: {r:?}"
    );
    let m = r["message"].as_str().unwrap_or_default();
    assert!(m.contains(word), "message `{m}` must name `{word}`");
}

/// The vertices and triangles of a decoded `ProtectionMesh`.
fn mesh(v: &Value) -> (Vec<[f64; 3]>, Vec<u32>) {
    let vs = seq(&v["vertices"])
        .iter()
        .map(|p| [f(&p["x"]), f(&p["y"]), f(&p["z"])])
        .collect();
    let ts = seq(&v["triangles"]).iter().map(|t| f(t) as u32).collect();
    (vs, ts)
}

/// The node's `joint_state_timeout` in this test: how long it draws a joint state after the
/// last one arrived.
const JOINT_STATE_TIMEOUT: Duration = Duration::from_millis(500);

/// The `~/markers` array the node publishes while rclpy publishes the RX60's joints `q`: the
/// last of three arrays received (none stems from an earlier call's state: each call waits,
/// before it returns, until the node no longer draws its state).
fn markers_for(env: &TestEnv, q: &[f64]) -> Vec<Value> {
    let state = format!(
        "{{name: [joint_1, joint_2, joint_3, joint_4, joint_5, joint_6], position: [{}]}}",
        q.iter()
            .map(|v| format!("{v:?}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let mut publisher = {
        let mut c = env.command(rpq_tests::python());
        c.arg(rpq_tests::peer_script("rclpy_peer.py")).args([
            "pub",
            "--topic",
            "/joint_states",
            "--type",
            "sensor_msgs/msg/JointState",
            "--yaml",
            &state,
            "--rate",
            "20",
            "--count",
            "2400",
            "--timeout",
            "150",
        ]);
        NodeProcess::spawn("rclpy joint_states", c)
    };
    let out = env.run_peer(
        "rclpy_peer.py",
        &[
            "echo",
            "--topic",
            "/virtual_protection/markers",
            "--type",
            "visualization_msgs/msg/MarkerArray",
            "--count",
            "3",
            "--timeout",
            "60",
        ],
    );
    out.assert_ok("rclpy echo of ~/markers");
    assert!(publisher.is_running(), "{}", publisher.output().join("\n"));
    publisher.stop(Duration::from_secs(5));
    // The node keeps drawing the last joint state it got for `joint_state_timeout`, then draws
    // nothing until a new one arrives. Waiting past that here keeps the next call's echo from
    // taking markers of this state (its rclpy echo can start before its publisher's first
    // state reaches the node; seen once in a CI run).
    std::thread::sleep(JOINT_STATE_TIMEOUT * 2 + Duration::from_millis(200));
    let last = out.records_of("message").pop().expect("a marker array");
    seq(&last["data"]["markers"]).clone()
}

#[test]
fn rclpy_generates_protections_and_reads_meshes_and_markers() {
    let env = TestEnv::new();
    let out_dir = tempfile::tempdir().unwrap();
    // a coarse phantom (3,456 triangles) as the patient's STL file, so that rclpy's decoding of
    // the whole set stays quick; the library reads the same file
    let patient = Patient::write(out_dir.path());
    let stl_file = &patient.stl_file;
    let patient_triangles = patient.bone.triangles.len();
    let mut cmd = env.command(bin("virtual_protection"));
    cmd.current_dir(repo_root())
        .arg("--ros-args")
        .arg("--params-file")
        .arg(repo_root().join("config/virtual_protection.yaml"))
        .arg("-p")
        .arg(format!("output_directory:={}", out_dir.path().display()))
        .arg("-p")
        .arg("marker_rate:=20.0")
        .arg("-p")
        .arg(format!(
            "joint_state_timeout:={}",
            JOINT_STATE_TIMEOUT.as_secs_f64()
        ))
        .arg("-p")
        .arg("patient.source:=file")
        .arg("-p")
        .arg(format!("patient.mesh_file:={}", stl_file.display()));
    let node = NodeProcess::spawn("virtual_protection", cmd);
    node.wait_for_output(READY, Duration::from_secs(60));

    // the library on the same phantom and outline
    let Patient {
        phantom,
        pose,
        points: pts,
        outline,
        ..
    } = &patient;
    let n = 32;
    let mut ground = patient.ground();
    let shield = patient.shield(n, &mut ground);
    let aid = generate_cutting_aid(
        outline,
        &CuttingAidSpec {
            width: 0.006,
            height: 0.012,
            resolution: n,
        },
        Some(&mut ground),
    )
    .unwrap();
    let good = format!(
        "{{outline: {}, resolution: {n}, save_as: shield.stl}}",
        points_yaml(pts)
    );
    let nan = {
        let mut p = pts.clone();
        p[3].x = f64::NAN;
        points_yaml(&p)
    };

    // ~/generate_shield, good and bad
    let bow = points_yaml(&[
        Point3::new(0.4, 0.0, 0.1),
        Point3::new(0.42, 0.02, 0.1),
        Point3::new(0.42, 0.0, 0.1),
        Point3::new(0.4, 0.01, 0.1),
    ]);
    let r = call(
        &env,
        "/virtual_protection/generate_shield",
        "rpq_interfaces/srv/GenerateShield",
        &[
            good.clone(),
            format!("{{outline: {bow}}}"),
            format!("{{outline: {}}}", points_yaml(&pts[..2])),
            format!("{{outline: {}, frame_id: tool0}}", points_yaml(pts)),
            format!("{{outline: {}, save_as: ../escape.stl}}", points_yaml(pts)),
            format!("{{outline: {}, resolution: 100000}}", points_yaml(pts)),
            format!("{{outline: {}, height: -0.01}}", points_yaml(pts)),
            format!("{{outline: {nan}}}"),
            good,
        ],
    );
    ok(&r[0]);
    assert_eq!(r[0]["adapted"].as_bool(), Some(false));
    let (vs, ts) = mesh(&r[0]["mesh"]);
    assert_eq!(r[0]["mesh"]["name"].as_str(), Some("shield"));
    assert_eq!(f(&r[0]["mesh"]["kind"]), 0.0);
    assert_eq!(vs.len(), shield.mesh.vertices.len());
    assert_eq!(ts.len(), 3 * shield.mesh.triangles.len());
    for (a, b) in vs.iter().zip(&shield.mesh.vertices) {
        assert!((Point3::from(*a) - b).norm() < 1e-12, "{a:?} vs {b:?}");
    }
    let saved = r[0]["saved_file"].as_str().unwrap().to_string();
    assert!(saved.ends_with("shield.stl"), "{saved}");
    let stl = rpq_kinematics::TriMesh::from_stl_file(out_dir.path().join("shield.stl")).unwrap();
    assert_eq!(stl.triangles.len(), 2 * n * n);
    refused(&r[1], "intersects itself");
    refused(&r[2], "at least 3");
    refused(&r[3], "tool0");
    refused(&r[4], "save_as");
    refused(&r[5], "resolution");
    refused(&r[6], "height");
    refused(&r[7], "not finite");
    ok(&r[8]); // still serving
    assert!(!out_dir.path().join("../escape.stl").exists());

    // ~/generate_cutting_aid
    let r = call(
        &env,
        "/virtual_protection/generate_cutting_aid",
        "rpq_interfaces/srv/GenerateCuttingAid",
        &[
            format!("{{outline: {}, resolution: {n}}}", points_yaml(pts)),
            format!("{{outline: {}, width: 0.05}}", points_yaml(pts)),
            format!("{{outline: {}, height: 0.5}}", points_yaml(pts)),
        ],
    );
    ok(&r[0]);
    let (vs, ts) = mesh(&r[0]["mesh"]);
    assert_eq!(
        (vs.len(), ts.len()),
        (aid.mesh.vertices.len(), 3 * aid.mesh.triangles.len())
    );
    for (a, b) in vs.iter().zip(&aid.mesh.vertices) {
        assert!((Point3::from(*a) - b).norm() < 1e-12);
    }
    refused(&r[1], "cut width");
    refused(&r[2], "height");

    // the tool 4 mm above the first outline point, the drill pointing down: the distance marker
    let mut arm = DrillArm::rx60(0.12).unwrap();
    let tip = pts[0] + Vector3::new(0.0, 0.0, 0.004);
    let q = arm
        .solve_ik(&tip, &-Vector3::z(), &[0.0, 0.5, 1.6, 0.0, 1.0, 0.0])
        .expect("reachable");
    let probe = Model::new(
        vec![
            Point3::origin(),
            Point3::new(1e-9, 0.0, 0.0),
            Point3::new(0.0, 1e-9, 0.0),
        ],
        vec![[0, 1, 2]],
    )
    .unwrap();
    let expect = distance(
        pose,
        phantom,
        &Isometry3::translation(tip.x, tip.y, tip.z),
        &probe,
        &DistanceRequest::exact(),
        &mut QueryWorkspace::new(),
    )
    .unwrap()
    .distance
        - 0.0015;
    let markers = markers_for(&env, &q);
    assert_eq!(markers[1]["ns"].as_str(), Some("distance"));
    assert_eq!(markers[1]["type"].as_i64(), Some(5)); // LINE_LIST
    assert!(f(&markers[1]["color"]["g"]) > 0.5, "clear: a green line");
    // (the shield rises from the outline: its wall is within the bit radius, drawn in red)
    assert!(markers.len() <= 4);
    let text = markers[2]["text"].as_str().unwrap();
    let shown: f64 = text
        .trim_start_matches("tool-patient ")
        .trim_end_matches(" mm")
        .parse()
        .unwrap_or_else(|_| panic!("label `{text}`"));
    assert!(
        (shown - expect * 1e3).abs() < 0.006,
        "label {shown} mm, engine {} mm",
        expect * 1e3
    );
    let line = seq(&markers[1]["points"]);
    assert!(
        (Point3::new(f(&line[0]["x"]), f(&line[0]["y"]), f(&line[0]["z"])) - tip).norm() < 1e-6
    );

    // the tool 1 mm above the bone, less than the bit radius: contact, red line and label, the
    // touched triangles in red
    let tip = pts[0] + Vector3::new(0.0, 0.0, 0.001);
    let q = arm.solve_ik(&tip, &-Vector3::z(), &q).expect("reachable");
    let markers = markers_for(&env, &q);
    let text = markers[2]["text"].as_str().unwrap();
    assert_eq!(text, "tool-patient: contact");
    for m in &markers[1..] {
        assert_eq!(f(&m["color"]["r"]), 1.0, "red in contact: {m:?}");
        assert!(f(&m["color"]["g"]) < 0.5, "red in contact: {m:?}");
    }
    assert_eq!(markers[3]["ns"].as_str(), Some("contact"));
    assert_eq!(markers[3]["type"].as_i64(), Some(11)); // TRIANGLE_LIST
    let touched = seq(&markers[3]["points"]);
    assert!(!touched.is_empty() && touched.len().is_multiple_of(3));

    // the latched set and its markers, decoded by rclpy (a late joiner must get only the set in
    // force: the node opens a fresh writer per change, see its main.rs)
    let msg = protections(&env);
    assert_eq!(msg["header"]["frame_id"].as_str(), Some("world"));
    let names: Vec<(String, usize)> = meshes(&msg);
    assert_eq!(
        names,
        [
            ("patient".to_string(), patient_triangles),
            ("shield".to_string(), 2 * n * n),
            ("cutting_aid".to_string(), 2 * n * n - n)
        ]
    );
    let out = echo(
        &env,
        "/virtual_protection/protection_markers",
        "visualization_msgs/msg/MarkerArray",
        "latched",
    );
    let markers = seq(&out.record("message")["data"]["markers"]).clone();
    assert_eq!(f(&markers[0]["action"]), 3.0); // DELETEALL
    let lists: Vec<(i64, usize)> = markers[1..]
        .iter()
        .map(|m| (m["type"].as_i64().unwrap(), seq(&m["points"]).len()))
        .collect();
    assert_eq!(
        lists,
        [
            (11, 3 * patient_triangles),
            (11, 3 * 2 * n * n),
            (11, 3 * (2 * n * n - n))
        ]
    );

    // ~/clear leaves the patient only
    let out = env.run_peer(
        "rclpy_peer.py",
        &["call-trigger", "--service", "/virtual_protection/clear"],
    );
    out.assert_ok("clear");
    assert_eq!(
        out.record("response")["response"]["success"].as_bool(),
        Some(true)
    );
    let names: Vec<String> = meshes(&protections(&env))
        .into_iter()
        .map(|(name, _)| name)
        .collect();
    assert_eq!(names, ["patient"]);

    // a shield too large for a reply in one datagram (N = 64: 8,192 triangles, ~200 kB): the
    // reply arrives without the mesh and says where it is; the set holds the whole shield
    let r = call(
        &env,
        "/virtual_protection/generate_shield",
        "rpq_interfaces/srv/GenerateShield",
        &[format!("{{outline: {}, resolution: 64}}", points_yaml(pts))],
    );
    assert_eq!(r[0]["success"].as_bool(), Some(true), "{:?}", r[0]);
    let message = r[0]["message"].as_str().unwrap();
    assert!(
        message.contains("8192 triangles") && message.contains("read it from ~/protections"),
        "{message}"
    );
    assert_eq!(r[0]["mesh"]["name"].as_str(), Some("shield"));
    assert!(
        seq(&r[0]["mesh"]["vertices"]).is_empty(),
        "{:?}",
        r[0]["mesh"]
    );
    let shield_triangles: Vec<usize> = meshes(&protections(&env))
        .into_iter()
        .filter(|(name, _)| name == "shield")
        .map(|(_, triangles)| triangles)
        .collect();
    assert_eq!(shield_triangles, [2 * 64 * 64]);
    drop(node);
}
