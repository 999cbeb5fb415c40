//! Issue 13 point 4, "mesh out ... added to proximity_query's scene": `proximity_query`
//! subscribes to `virtual_protection`'s latched `~/protections` (parameter
//! `protections_topic`) and puts the meshes into its scene at run time. rclpy (Fast DDS) calls
//! `~/generate_shield`, then asks `proximity_query`'s `~/min_distance` between the RX60's
//! flange (`rx60/link_6`) and the shield, and between the flange and the patient; each answer
//! must be `rpq_scene`'s on the same robot, the shield `rpq_surgery` generates directly on the
//! same outline and the same phantom STL. `~/check_collision` must see the flange inside the
//! shield when it is moved there. Then `~/clear` removes the shield from the scene: a query
//! naming it is refused.
//!
//! Opens DDS sockets: run inside `../shared/netns-run` (tests/run_all.sh does).

use std::time::Duration;

use nalgebra::{Isometry3, Point3, Vector3};
use rpq_scene::{Body, BodyId, Robot, Scenario, SimpleObject};
use rpq_surgery::scenario::DrillArm;
use rpq_tests::{bin, repo_root, rx60_urdf, NodeProcess, TestEnv};
use serde_yaml::Value;

mod surgery_common;
use surgery_common::{points_yaml, Patient};

const N: usize = 32;

fn f(v: &Value) -> f64 {
    v.as_f64()
        .or_else(|| v.as_i64().map(|i| i as f64))
        .unwrap_or_else(|| panic!("not a number: {v:?}"))
}

/// A `~/min_distance` or `~/check_collision` request at the RX60's joints `q`.
fn request(q: &[f64; 6], a: &str, b: &str) -> String {
    let pos: Vec<String> = q.iter().map(|v| format!("{v:?}")).collect();
    format!(
        "{{robot_states: [{{robot: rx60, joint_state: {{name: [joint_1, joint_2, joint_3, \
         joint_4, joint_5, joint_6], position: [{}]}}}}], group_a: [{a}], group_b: [{b}]}}",
        pos.join(", ")
    )
}

fn min_distance(env: &TestEnv, requests: &[String]) -> Vec<Value> {
    env.call_service(
        "/proximity_query/min_distance",
        "rpq_interfaces/srv/MinDistance",
        requests,
        &["--timeout", "60"],
    )
}

fn point(v: &Value) -> Point3<f64> {
    Point3::new(f(&v["x"]), f(&v["y"]), f(&v["z"]))
}

#[test]
fn generated_shield_enters_and_leaves_proximity_querys_scene() {
    let env = TestEnv::new();
    let work = env.scratch(env!("CARGO_TARGET_TMPDIR"), "surgery_proximity");
    // a coarse phantom as the patient's STL (quick to send and to decode)
    let patient = Patient::write(&work);
    let Patient {
        stl_file,
        bone,
        pose,
        points: pts,
        ..
    } = &patient;
    let pose = *pose;
    let mut vp = env.command(bin("virtual_protection"));
    vp.current_dir(repo_root())
        .arg("--ros-args")
        .arg("--params-file")
        .arg(repo_root().join("config/virtual_protection.yaml"))
        .args(["-p", "marker_rate:=0.0", "-p", "patient.source:=file"])
        .arg("-p")
        .arg(format!("patient.mesh_file:={}", stl_file.display()));
    let vp = NodeProcess::spawn("virtual_protection", vp);
    let scene = work.join("rx60.scene.yaml");
    std::fs::write(
        &scene,
        format!(
            "robots:\n  - name: rx60\n    urdf: {}\n    base: {{xyz: [0.0, 0.0, 0.0], rpy: [0.0, 0.0, 0.0]}}\nobjects: []\n",
            rx60_urdf().display()
        ),
    )
    .unwrap();
    let mut pq = env.command(bin("proximity_query"));
    pq.arg("--ros-args")
        .arg("--params-file")
        .arg(repo_root().join("config/proximity_query.yaml"))
        .arg("-p")
        .arg(format!("scene_file:={}", scene.display()))
        .args([
            "-p",
            "protections_topic:=/virtual_protection/protections",
            "-p",
            "marker_rate:=0.0",
            "-p",
            "stream_rate:=10.0",
        ]);
    let pq = NodeProcess::spawn("proximity_query", pq);
    vp.wait_for_output("virtual_protection ready", Duration::from_secs(60));
    pq.wait_for_output("proximity_query ready", Duration::from_secs(60));
    // the latched set of the patient alone arrives first
    pq.wait_for_output("in the scene: [patient]", Duration::from_secs(30));

    // the library: the same phantom, outline and shield
    let shield = patient.shield(N, &mut patient.ground());
    let r = env.call_service(
        "/virtual_protection/generate_shield",
        "rpq_interfaces/srv/GenerateShield",
        &[format!(
            "{{outline: {}, resolution: {N}}}",
            points_yaml(pts)
        )],
        &["--timeout", "60"],
    );
    assert_eq!(r[0]["success"].as_bool(), Some(true), "{:?}", r[0]);
    let line = pq.wait_for_output("in the scene: [patient, shield]", Duration::from_secs(30));
    assert!(line.contains("1 added, 1 replaced, 0 removed"), "{line}");

    // rpq_scene directly: the RX60 of the same URDF, the patient and the library's shield
    let mut direct = Scenario::new();
    direct
        .add_robot(Robot::from_urdf_file("rx60", rx60_urdf(), Isometry3::identity()).unwrap())
        .unwrap();
    for (name, mesh, at) in [
        ("patient", bone, pose),
        ("shield", &shield.mesh, Isometry3::identity()),
    ] {
        direct
            .add_object(SimpleObject {
                name: name.into(),
                body: Body::from_trimesh(name, mesh).unwrap(),
                pose: at,
            })
            .unwrap();
    }
    let robot = &direct.objects()[0];
    let link6 = BodyId {
        object: 0,
        body: (0..robot.num_bodies())
            .find(|&i| robot.body(i).name == "link_6")
            .expect("link_6 has a mesh"),
    };
    // the drill tip 30 mm above the first outline point, then the flange pushed into the shield
    let mut arm = DrillArm::rx60(0.12).unwrap();
    let above = arm
        .solve_ik(
            &(pts[0] + Vector3::new(0.0, 0.0, 0.03)),
            &-Vector3::z(),
            &[0.0, 0.5, 1.6, 0.0, 1.0, 0.0],
        )
        .expect("reachable");
    let q: [f64; 6] = above.as_slice().try_into().unwrap();
    let answers = min_distance(
        &env,
        &[
            request(&q, "rx60/link_6", "shield"),
            request(&q, "rx60/link_6", "patient"),
        ],
    );
    direct.set_joint_positions(0, &q).unwrap();
    let mut worst: f64 = 0.0;
    for (ans, k) in answers.iter().zip([2usize, 1]) {
        assert_eq!(ans["success"].as_bool(), Some(true), "{ans:?}");
        let want = direct
            .body_distance(link6, BodyId { object: k, body: 0 })
            .unwrap();
        let got = f(&ans["distance"]);
        assert!(
            (got - want.distance).abs() < 1e-9,
            "{}: proximity_query {got} m, rpq_scene {} m",
            direct.objects()[k].name(),
            want.distance
        );
        assert!(
            (point(&ans["point_a"]) - want.point_a).norm() < 1e-6,
            "{ans:?}"
        );
        assert!(
            (point(&ans["point_b"]) - want.point_b).norm() < 1e-6,
            "{ans:?}"
        );
        assert_eq!(ans["body_a"].as_str(), Some("rx60/link_6"));
        worst = worst.max((got - want.distance).abs());
    }
    let d_shield = f(&answers[0]["distance"]);
    assert!(d_shield > 0.0 && d_shield < 0.5, "{d_shield}");

    // ~/check_collision: the flange 20 mm above the outline's first point (the drill through
    // the bone) is inside the shield's wall, 40 mm above it is clear
    let mut colliding = Vec::new();
    let mut requests = Vec::new();
    for h in [0.02, 0.06] {
        let low = arm
            .solve_ik(
                &(pts[0] + Vector3::new(0.0, 0.0, h - 0.12)),
                &-Vector3::z(),
                &q,
            )
            .expect("reachable");
        let low: [f64; 6] = low.as_slice().try_into().unwrap();
        direct.set_joint_positions(0, &low).unwrap();
        let want = direct
            .body_distance(link6, BodyId { object: 2, body: 0 })
            .unwrap()
            .distance;
        colliding.push(want == 0.0);
        requests.push(request(&low, "rx60/link_6", "shield"));
    }
    assert_eq!(
        colliding,
        [true, false],
        "the library's answers for the two poses"
    );
    let r = env.call_service(
        "/proximity_query/check_collision",
        "rpq_interfaces/srv/CheckCollision",
        &requests,
        &["--timeout", "60"],
    );
    for (ans, want) in r.iter().zip(&colliding) {
        assert_eq!(ans["success"].as_bool(), Some(true), "{ans:?}");
        assert_eq!(ans["colliding"].as_bool(), Some(*want), "{ans:?}");
    }

    // ~/clear: the shield leaves the scene
    let out = env.run_peer(
        "rclpy_peer.py",
        &["call-trigger", "--service", "/virtual_protection/clear"],
    );
    out.assert_ok("clear");
    let line = pq.wait_for_output("1 removed", Duration::from_secs(30));
    assert!(line.ends_with("in the scene: [patient]"), "{line}");
    let r = min_distance(&env, &[request(&q, "rx60/link_6", "shield")]);
    assert_eq!(r[0]["success"].as_bool(), Some(false), "{:?}", r[0]);
    assert!(
        r[0]["message"].as_str().unwrap().contains("shield"),
        "{:?}",
        r[0]
    );
    eprintln!(
        "surgery proximity: flange-shield {d_shield:.6} m, flange-patient {:.6} m, both within \
         {worst:.1e} m of rpq_scene; shield removed by ~/clear",
        f(&answers[1]["distance"])
    );
    drop((vp, pq));
}
