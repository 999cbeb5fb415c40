//! The `rpq_query` command: a scene + CSV round trip through the binary, identical output
//! with and without optimizations, bad inputs rejected with line numbers.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

fn scene(dir: &Path, extra: &str) -> PathBuf {
    let urdf = repo().join("urdf/rx60b.urdf");
    let p = dir.join("scene.yaml");
    std::fs::write(
        &p,
        format!(
            "robots:\n  - name: left\n    urdf: {u}\n    base: {{xyz: [0, 0, 0], rpy: [0, 0, 0]}}\n  - name: right\n    urdf: {u}\n    base: {{xyz: [0.6, 0, 0], rpy: [0, 0, 3.141592653589793]}}\n{extra}",
            u = urdf.display()
        ),
    )
    .unwrap();
    p
}

const HEADER: &str = "left/joint_1,left/joint_2,left/joint_3,left/joint_4,left/joint_5,left/joint_6,right/joint_6,right/joint_5,right/joint_4,right/joint_3,right/joint_2,right/joint_1";

fn run(args: &[&std::ffi::OsStr]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_rpq_query"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn scene_and_configurations_round_trip_through_the_binary() {
    let dir = tempfile::tempdir().unwrap();
    let sc = scene(dir.path(), "");
    let cm = dir.path().join("cm.yaml");
    let (ok, _, err) = run(&[
        sc.as_os_str(),
        "--generate-collision-matrix".as_ref(),
        cm.as_os_str(),
        "--samples".as_ref(),
        "5000".as_ref(),
    ]);
    assert!(ok, "{err}");
    // Scene with the matrix and options.
    let sc = scene(
        dir.path(),
        "collision_matrix: cm.yaml\noptions: {resolution_levels: L1L2L3, weight_matrix: true, collision_matrix: true}\n",
    );
    let csv = dir.path().join("q.csv");
    // Note the right arm's columns in reverse order.
    std::fs::write(
        &csv,
        format!(
            "{HEADER}\n# a comment line\n0,0,0,0,0,0, 0,0,0,0,0,0\n0,0.8,0.5,0,0,0,0,0,0,0.5,0.8,0\n0.3,0.4,1.0,0,0.5,0,0,0,0,-1.2,-0.5,0.2\n"
        ),
    )
    .unwrap();
    let out = dir.path().join("out.csv");
    let (ok, _, err) = run(&[
        sc.as_os_str(),
        csv.as_os_str(),
        "-o".as_ref(),
        out.as_os_str(),
    ]);
    assert!(ok, "{err}");
    let text = std::fs::read_to_string(&out).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        "index,colliding,min_distance,link_a,link_b,ax,ay,az,bx,by,bz"
    );
    assert_eq!(lines.len(), 4);
    let row = |k: usize| lines[k].split(',').collect::<Vec<_>>();
    // Both arms straight up: bases 0.6 m apart, the closest pair is the two bases.
    assert_eq!(row(1)[1], "0");
    assert_eq!(row(1)[3..5], ["left/base_link", "right/base_link"]);
    // Both leaning towards each other: colliding, distance 0.
    assert_eq!(row(2)[1], "1");
    assert_eq!(row(2)[2].parse::<f64>().unwrap(), 0.0);
    // All optimizations off: the same bytes.
    let (ok, stdout, err) = run(&[
        sc.as_os_str(),
        csv.as_os_str(),
        "--no-optimizations".as_ref(),
    ]);
    assert!(ok, "{err}");
    assert_eq!(stdout, text);
}

#[test]
fn bad_inputs_are_rejected_with_line_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let sc = scene(dir.path(), "");
    let cases: Vec<(String, &str)> = vec![
        (
            format!("{HEADER}\n0,0,0,0,0,0,0,0,0,0,0,0\n0,0,nan,0,0,0,0,0,0,0,0,0\n"),
            ":3:",
        ),
        (
            format!("{HEADER}\n0,0,0,0,0,0,0,0,0,0,0,0\n\n0,0,0,0,0,0,0,0,0,0,0\n"),
            ":4:",
        ),
        (format!("{HEADER}\n0,0,0,0,0,0,0,0,abc,0,0,0\n"), ":2:"),
        (
            HEADER.replace("right/joint_1", "middle/joint_1") + "\n",
            "unknown robot `middle`",
        ),
        (
            HEADER.replace("right/joint_1", "right/joint_7") + "\n",
            "no movable joint `joint_7`",
        ),
        (
            HEADER.replace(",right/joint_1", "") + "\n",
            "missing column `right/joint_1`",
        ),
        (
            format!("{HEADER}\n0,0,0,0,0,0,0,0,0,0,0,inf\n"),
            "not finite",
        ),
    ];
    for (csv, want) in cases {
        let p = dir.path().join("bad.csv");
        std::fs::write(&p, &csv).unwrap();
        let (ok, _, err) = run(&[sc.as_os_str(), p.as_os_str()]);
        assert!(!ok, "accepted:\n{csv}");
        assert!(err.contains(want), "wanted `{want}` in: {err}");
        assert!(err.contains("bad.csv"), "{err}");
    }
    // Bad YAML: unknown key, with its line.
    let bad = dir.path().join("bad.yaml");
    std::fs::write(
        &bad,
        "robots:\n  - name: left\n    urdf: x.urdf\n    bsae: {xyz: [0, 0, 0]}\n",
    )
    .unwrap();
    let (ok, _, err) = run(&[bad.as_os_str(), "q.csv".as_ref()]);
    assert!(!ok);
    assert!(err.contains("bad.yaml:") && err.contains("bsae"), "{err}");
    // Non-finite base pose.
    std::fs::write(
        &bad,
        "robots:\n  - name: left\n    urdf: x.urdf\n    base: {xyz: [.nan, 0, 0]}\n",
    )
    .unwrap();
    let (ok, _, err) = run(&[bad.as_os_str(), "q.csv".as_ref()]);
    assert!(!ok && err.contains("not finite"), "{err}");
    // Collision-matrix file that does not exist.
    let sc2 = scene(dir.path(), "collision_matrix: missing.yaml\n");
    let (ok, _, err) = run(&[sc2.as_os_str(), "q.csv".as_ref()]);
    assert!(!ok && err.contains("missing.yaml"), "{err}");
}

#[test]
fn collision_matrix_search_too_small_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let sc = scene(dir.path(), "");
    let cm = dir.path().join("cm.yaml");
    for (flag, value, minimum) in [
        ("--samples", "0", "100"),
        ("--samples", "99", "100"),
        ("--refine-evaluations", "0", "50"),
        ("--refine-starts", "0", "1"),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_rpq_query"))
            .args([sc.as_os_str(), "--generate-collision-matrix".as_ref()])
            .arg(&cm)
            .args([flag, value])
            .output()
            .unwrap();
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(2), "{flag} {value}: {err}");
        let setting = flag.trim_start_matches("--").replace('-', "_");
        assert!(
            err.contains("error:")
                && err.contains(&format!("{setting} = {value}"))
                && err.contains(&format!("minimum {minimum}")),
            "{flag} {value}: {err}"
        );
        assert!(!cm.exists(), "{flag} {value} wrote {}", cm.display());
    }
    // The smallest accepted search still keeps the pose with both arms leaning towards each
    // other colliding (issue 12: with `--samples 0` it was answered as free).
    let (ok, _, err) = run(&[
        sc.as_os_str(),
        "--generate-collision-matrix".as_ref(),
        cm.as_os_str(),
        "--samples".as_ref(),
        "100".as_ref(),
        "--refine-starts".as_ref(),
        "1".as_ref(),
        "--refine-evaluations".as_ref(),
        "50".as_ref(),
    ]);
    assert!(ok, "{err}");
    let csv = dir.path().join("q.csv");
    std::fs::write(&csv, format!("{HEADER}\n0,0.8,0.5,0,0,0,0,0,0,0.5,0.8,0\n")).unwrap();
    let (ok, stdout, err) = run(&[
        sc.as_os_str(),
        csv.as_os_str(),
        "--collision-matrix-file".as_ref(),
        cm.as_os_str(),
        "--collision-matrix".as_ref(),
        "true".as_ref(),
    ]);
    assert!(ok, "{err}");
    let row: Vec<&str> = stdout.lines().nth(1).unwrap().split(',').collect();
    assert_eq!(row[1], "1", "{stdout}");
}

/// Issue 12 item 10: joint values far outside the limits (50 rad, 1e308) were answered as if
/// reachable. Now refused with the line and joint (exit 2), or, with --allow-outside-limits,
/// answered with a last column `within_limits` 0; 1e308 is beyond any use and always refused.
#[test]
fn configurations_outside_the_limits_are_refused_or_flagged() {
    let dir = tempfile::tempdir().unwrap();
    let sc = scene(dir.path(), "");
    let csv = dir.path().join("q.csv");
    std::fs::write(
        &csv,
        format!("{HEADER}\n0,0,0,0,0,0,0,0,0,0,0,0\n50,0,0,0,0,0,0,0,0,0,0,0\n"),
    )
    .unwrap();
    let (ok, out, err) = run(&[sc.as_os_str(), csv.as_os_str()]);
    assert!(!ok && out.is_empty(), "{out}");
    assert!(
        err.contains(":3:") && err.contains("joint_1") && err.contains("limits"),
        "{err}"
    );
    let (ok, out, err) = run(&[
        sc.as_os_str(),
        csv.as_os_str(),
        "--allow-outside-limits".as_ref(),
    ]);
    assert!(ok, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0],
        "index,colliding,min_distance,link_a,link_b,ax,ay,az,bx,by,bz,within_limits"
    );
    assert!(
        lines[1].ends_with(",1") && lines[2].ends_with(",0"),
        "{out}"
    );
    std::fs::write(&csv, format!("{HEADER}\n1e308,0,0,0,0,0,0,0,0,0,0,0\n")).unwrap();
    let (ok, _, err) = run(&[
        sc.as_os_str(),
        csv.as_os_str(),
        "--allow-outside-limits".as_ref(),
    ]);
    assert!(!ok && err.contains(":2:") && err.contains("1e308"), "{err}");
}

/// Issue 12 item 10: robots placed 1e308 m apart answered `colliding 0, min_distance 0` with
/// NaN witnesses; such a scene is refused with the robot named.
#[test]
fn absurd_base_poses_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let urdf = repo().join("urdf/rx60b.urdf");
    let sc = dir.path().join("far.yaml");
    for x in ["1e308", "2e6"] {
        std::fs::write(
            &sc,
            format!(
                "robots:\n  - name: left\n    urdf: {u}\n  - name: right\n    urdf: {u}\n    base: {{xyz: [{x}, 0, 0], rpy: [0, 0, 0]}}\n",
                u = urdf.display()
            ),
        )
        .unwrap();
        let csv = dir.path().join("q.csv");
        std::fs::write(&csv, format!("{HEADER}\n0,0,0,0,0,0,0,0,0,0,0,0\n")).unwrap();
        let (ok, out, err) = run(&[sc.as_os_str(), csv.as_os_str()]);
        assert!(!ok && !out.contains("NaN"), "{x}: {out}");
        assert!(err.contains("robot `right` base"), "{x}: {err}");
    }
}

/// Issue 12 item 11: a closed standard output (`rpq_query … | head`) ends the run quietly.
#[test]
fn a_closed_stdout_is_not_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let sc = scene(dir.path(), "");
    let csv = dir.path().join("q.csv");
    let row = "0,0,0,0,0,0,0,0,0,0,0,0\n";
    std::fs::write(&csv, format!("{HEADER}\n{}", row.repeat(2000))).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_rpq_query"))
        .args([sc.as_os_str(), csv.as_os_str()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && !err.contains("panicked"), "{err}");
}

/// A scene whose robot names a `robot_description` topic is for the node only.
#[test]
fn rpq_query_refuses_topic_robots() {
    let dir = tempfile::tempdir().unwrap();
    let scene = dir.path().join("s.scene.yaml");
    std::fs::write(
        &scene,
        "robots:\n  - name: left\n    robot_description: /left/robot_description\n",
    )
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rpq_query"))
        .arg(&scene)
        .arg(dir.path().join("c.csv"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("robot `left` names the topic /left/robot_description")
            && err.contains("give `urdf:` for this tool"),
        "{err}"
    );
}
