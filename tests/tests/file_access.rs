//! File access from services (issue 12, item 1 and the service half of item 6), against the
//! release binaries with an rclpy peer as the hostile caller.
//!
//! `glove_calibration ~/calibrate` (`data_file` read, `output_file` written) and
//! `steady_hand_guidance ~/load_path` (`file` read) get, besides good requests: names going up
//! with `..` (to a sibling directory and to `/tmp`), absolute paths outside the configured
//! directory, `/proc/self/environ`, `/dev/zero`, a FIFO inside the directory, a symbolic link
//! inside pointing out, a name with a newline, `/etc/passwd`, a file over the size limit, and
//! a data set whose fingertips are 1e300 m (calibration) or path points 1e300 m apart. Checked: each is refused
//! (`success: false`) without touching a file outside, neither the reply nor the node's log
//! carries file content (`root:` of `/etc/passwd`, a variable of the node's environment), and
//! the node still answers a good request afterwards. Each case is checked on its own and all
//! failures are listed together.
//!
//! The nodes run with their working directory set to the data directory, so a plain name
//! resolves to the same file whether the node sandboxes it or not.
//!
//! Opens DDS sockets: runs only inside the private network namespace (tests/run_all.sh).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use rpq_tests::{bin, repo_root, rx60_urdf, NodeProcess, TestEnv};
use serde_yaml::Value;

/// Text every node of these tests has in its environment; it must never reach a reply or log.
const SECRET_VAR: &str = "RPQ_FILE_ACCESS_SECRET";

/// Enough `..` to reach `/` from any working directory.
const UP: &str = "../../../../../../../../../../../../../../../..";

/// A request: a mapping of string fields.
fn request(fields: &[(&str, &str)]) -> Value {
    Value::Mapping(
        fields
            .iter()
            .map(|(k, v)| (Value::from(*k), Value::from(*v)))
            .collect(),
    )
}

/// Calls `service` once per request; returns the responses received, in order (fewer than the
/// requests when the node stopped answering).
fn call(env: &TestEnv, service: &str, ty: &str, requests: &[Value]) -> Vec<Value> {
    // Block-style YAML: names with a newline survive the trip to the peer.
    let yaml = serde_yaml::to_string(requests).unwrap();
    let out = env.run_peer(
        "rclpy_peer.py",
        &[
            "call",
            "--service",
            service,
            "--type",
            ty,
            "--requests-yaml",
            &yaml,
            "--timeout",
            "60",
            "--attempt-timeout",
            "15",
        ],
    );
    out.records_of("response")
        .into_iter()
        .map(|r| r["response"].clone())
        .collect()
}

fn mkfifo(path: &Path) {
    let st = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(st.success(), "mkfifo {}", path.display());
}

/// A fresh test directory with `data/`, `out/` and `outside/`.
fn work_dir(name: &str, env: &TestEnv) -> PathBuf {
    let work = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "file_access_{name}_{}_{}",
        std::process::id(),
        env.domain_id
    ));
    let _ = std::fs::remove_dir_all(&work);
    for d in ["data", "out", "outside"] {
        std::fs::create_dir_all(work.join(d)).unwrap();
    }
    work
}

/// One hostile request and what its reply must show.
struct Case {
    what: &'static str,
    request: Value,
    /// Files that must not exist after the call (writes that escaped).
    must_not_exist: Vec<PathBuf>,
}

/// Checks a refused reply: `success: false`, and neither the reply nor the log carry file
/// content. Returns the failures.
fn check_refused(what: &str, reply: Option<&Value>, secret: &str) -> Vec<String> {
    let Some(reply) = reply else {
        return vec![format!("{what}: no reply (the node stopped answering)")];
    };
    let mut failures = Vec::new();
    let text = serde_yaml::to_string(reply).unwrap();
    if reply["success"].as_bool() != Some(false) {
        failures.push(format!("{what}: answered success: {text}"));
    }
    for leak in ["root:", "PATH=", secret] {
        if text.contains(leak) {
            failures.push(format!(
                "{what}: reply carries file content ({leak:?}): {text}"
            ));
        }
    }
    failures
}

fn check_log(node: &NodeProcess, secret: &str) -> Vec<String> {
    node.output()
        .into_iter()
        .filter(|l| l.contains("root:") || l.contains("PATH=") || l.contains(secret))
        .map(|l| format!("node log carries file content: {l}"))
        .collect()
}

fn check_missing(case: &Case) -> Vec<String> {
    case.must_not_exist
        .iter()
        .filter(|p| p.exists())
        .map(|p| format!("{}: wrote {}", case.what, p.display()))
        .collect()
}

/// Adds the log check, stops the node and fails with every failure found (and the node's
/// output) if there is any or the node exited.
fn finish(mut node: NodeProcess, mut failures: Vec<String>, secret: &str) {
    failures.extend(check_log(&node, secret));
    if !node.is_running() {
        failures.push("the node exited".into());
    }
    node.stop(Duration::from_secs(3));
    assert!(
        failures.is_empty(),
        "{} failures:\n{}\n--- node output ---\n{}",
        failures.len(),
        failures.join("\n"),
        node.output().join("\n")
    );
}

/// `glove_calibration` started in `data` with the nominal hand, `data_directory` = `data` and
/// the extra `-p` parameters `params`; returns once it is ready.
fn spawn_calibration(env: &TestEnv, data: &Path, params: &[String]) -> NodeProcess {
    let root = repo_root();
    let mut cmd = env.command(bin("glove_calibration"));
    cmd.current_dir(data)
        .args(["--ros-args", "--params-file"])
        .arg(root.join("config/glove_calibration.yaml"))
        .arg("-p")
        .arg(format!(
            "initial_model_file:={}",
            root.join("config/hand_model_nominal.yaml").display()
        ))
        .arg("-p")
        .arg(format!("data_directory:={}", data.display()));
    for p in params {
        cmd.arg("-p").arg(p);
    }
    let node = NodeProcess::spawn("glove_calibration", cmd);
    node.wait_for_output("glove_calibration ready", Duration::from_secs(20));
    node
}

/// A simulated calibration session (60 poses) as CSV text.
fn simulated_csv(dir: &Path) -> String {
    simulated_csv_of(dir, 60)
}

/// A simulated calibration session of `poses` poses as CSV text.
fn simulated_csv_of(dir: &Path, poses: u32) -> String {
    let csv = dir.join("sim.csv");
    let poses = poses.to_string();
    let sim = Command::new(bin("glove_calib"))
        .current_dir(repo_root())
        .args([
            "simulate",
            "--perturb",
            "1",
            "--poses",
            &poses,
            "--seed",
            "3",
        ])
        .arg("--out")
        .arg(&csv)
        .output()
        .unwrap();
    assert!(
        sim.status.success(),
        "{}",
        String::from_utf8_lossy(&sim.stderr)
    );
    let text = std::fs::read_to_string(&csv).unwrap();
    std::fs::remove_file(&csv).unwrap();
    text
}

/// The CSV with every fingertip coordinate replaced by 1e300 m.
fn huge_tips(csv: &str) -> String {
    csv.lines()
        .map(|l| {
            if l.starts_with("pose") || l.starts_with('#') || l.trim().is_empty() {
                return l.to_string();
            }
            let mut cols: Vec<&str> = l.split(',').collect();
            for c in cols.iter_mut().skip(6) {
                *c = "1e300";
            }
            cols.join(",")
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

#[test]
fn calibration_service_reads_and_writes_only_inside_its_directories() {
    let secret = format!("s3cr3t-{}", std::process::id());
    let env = TestEnv::new().with(SECRET_VAR, &secret);
    let work = work_dir("calib", &env);
    let (data, out, outside) = (work.join("data"), work.join("out"), work.join("outside"));
    let good = simulated_csv(&work);
    std::fs::write(data.join("good.csv"), &good).unwrap();
    std::fs::write(outside.join("good.csv"), &good).unwrap();
    let tmp_csv = PathBuf::from(format!("/tmp/rpq_file_access_{}.csv", env.domain_id));
    std::fs::write(&tmp_csv, &good).unwrap();
    std::fs::write(data.join("huge.csv"), huge_tips(&good)).unwrap();
    std::fs::write(data.join("a\nb.csv"), &good).unwrap();
    // A valid CSV over the limit of 100 kB given below (comments pad it).
    let pad = format!("# {}\n", "x".repeat(200)).repeat(600);
    std::fs::write(data.join("big.csv"), format!("{pad}{good}")).unwrap();
    std::os::unix::fs::symlink(outside.join("good.csv"), data.join("link.csv")).unwrap();
    mkfifo(&data.join("fifo.csv"));
    mkfifo(&out.join("fifo.yaml"));
    std::os::unix::fs::symlink(&outside, out.join("linkdir")).unwrap();
    std::fs::write(outside.join("target.yaml"), "untouched\n").unwrap();
    std::os::unix::fs::symlink(outside.join("target.yaml"), out.join("link.yaml")).unwrap();

    let node = spawn_calibration(
        &env,
        &data,
        &[
            format!("output_directory:={}", out.display()),
            "max_data_size:=100000".into(),
        ],
    );

    let req = |d: &str, o: &str| request(&[("data_file", d), ("output_file", o)]);
    let tmp_victim = PathBuf::from(format!(
        "/tmp/rpq_file_access_{}_victim.yaml",
        env.domain_id
    ));
    let _ = std::fs::remove_file(&tmp_victim);
    let case = |what, d: &str, o: &str, must_not_exist: Vec<PathBuf>| Case {
        what,
        request: req(d, o),
        must_not_exist,
    };
    let no_write = |o: &Path| vec![o.to_path_buf()];
    let cases = vec![
        case("data ../ to a sibling", "../outside/good.csv", "", vec![]),
        case(
            "data ../ to /tmp",
            &format!("{UP}{}", tmp_csv.display()),
            "",
            vec![],
        ),
        case(
            "data absolute outside",
            outside.join("good.csv").to_str().unwrap(),
            "",
            vec![],
        ),
        case("data /proc/self/environ", "/proc/self/environ", "", vec![]),
        case("data /dev/zero", "/dev/zero", "", vec![]),
        case("data symlink out", "link.csv", "", vec![]),
        case("data name with a newline", "a\nb.csv", "", vec![]),
        case("data /etc/passwd", "/etc/passwd", "", vec![]),
        case("data over the size limit", "big.csv", "", vec![]),
        case(
            "data with fingertips of 1e300",
            "huge.csv",
            "huge.yaml",
            no_write(&out.join("huge.yaml")),
        ),
        case(
            "output ../ to a sibling",
            "good.csv",
            "../outside/victim.yaml",
            no_write(&outside.join("victim.yaml")),
        ),
        case(
            "output ../ to /tmp",
            "good.csv",
            &format!("{UP}{}", tmp_victim.display()),
            no_write(&tmp_victim),
        ),
        case(
            "output absolute outside",
            "good.csv",
            outside.join("abs.yaml").to_str().unwrap(),
            no_write(&outside.join("abs.yaml")),
        ),
        case(
            "output /proc/self/comm",
            "good.csv",
            "/proc/self/comm",
            vec![],
        ),
        case(
            "output name with a newline",
            "good.csv",
            "a\nb.yaml",
            no_write(&out.join("a\nb.yaml")),
        ),
        case(
            "output through a symlinked directory",
            "good.csv",
            "linkdir/victim.yaml",
            no_write(&outside.join("victim.yaml")),
        ),
    ];
    // Blocking special files last: a node that opens them hangs.
    let blocking = vec![
        case("data FIFO inside", "fifo.csv", "", vec![]),
        case("output FIFO inside", "good.csv", "fifo.yaml", vec![]),
    ];
    let good_req = req("good.csv", "calibrated.yaml");
    let mut failures = Vec::new();
    let service = "/glove_calibration/calibrate";
    let ty = "rpq_interfaces/srv/CalibrateGlove";
    for batch in [cases, blocking] {
        let mut requests = vec![good_req.clone()];
        requests.extend(batch.iter().map(|c| c.request.clone()));
        requests.push(good_req.clone());
        let replies = call(&env, service, ty, &requests);
        for (i, what) in [
            (0, "good request first"),
            (requests.len() - 1, "good request after the bad ones"),
        ] {
            match replies.get(i) {
                Some(r) if r["success"].as_bool() == Some(true) => {}
                r => failures.push(format!("{what}: {r:?}")),
            }
        }
        for (k, c) in batch.iter().enumerate() {
            let reply = replies.get(k + 1);
            failures.extend(check_refused(c.what, reply, &secret));
            failures.extend(check_missing(c));
            if c.what.contains("1e300") {
                if let Some(r) = reply {
                    let figures = ["rms_error", "max_error", "condition_number"];
                    let text = serde_yaml::to_string(r).unwrap().to_lowercase();
                    if figures
                        .iter()
                        .any(|f| !r[*f].as_sequence().is_some_and(|s| s.is_empty()))
                        && (text.contains("inf") || text.contains("nan"))
                    {
                        failures.push(format!(
                            "{}: non-finite figures in the reply: {text}",
                            c.what
                        ));
                    }
                }
            }
        }
    }
    // A symlink inside the output directory is replaced, never followed.
    let r = call(&env, service, ty, &[req("good.csv", "link.yaml")]);
    if r.first().and_then(|r| r["success"].as_bool()) != Some(true) {
        failures.push(format!("output over a symlink inside: {r:?}"));
    }
    if std::fs::read_to_string(outside.join("target.yaml")).unwrap_or_default() != "untouched\n" {
        failures.push("output over a symlink inside: the file outside was written".into());
    }
    if !out.join("calibrated.yaml").is_file() {
        failures.push("the good request saved no calibrated.yaml in the output directory".into());
    }
    let _ = std::fs::remove_file(&tmp_csv);
    let _ = std::fs::remove_file(&tmp_victim);
    finish(node, failures, &secret);
}

#[test]
fn load_path_reads_only_inside_its_directory() {
    let secret = format!("s3cr3t-{}", std::process::id());
    let env = TestEnv::new().with(SECRET_VAR, &secret);
    let work = work_dir("path", &env);
    let (data, outside) = (work.join("data"), work.join("outside"));
    let path = "# x y z [m]\n0.40 -0.10 0.40\n0.40 0.10 0.40\n";
    std::fs::write(data.join("path.txt"), path).unwrap();
    std::fs::write(outside.join("path.txt"), path).unwrap();
    let tmp_path = PathBuf::from(format!("/tmp/rpq_file_access_{}_path.txt", env.domain_id));
    std::fs::write(&tmp_path, path).unwrap();
    std::fs::write(data.join("a\nb.txt"), path).unwrap();
    // Valid vertices over the limit of 10 kB given below.
    std::fs::write(
        data.join("big.txt"),
        "0.4 0.0 0.4\n0.4 0.1 0.4\n".repeat(1000),
    )
    .unwrap();
    // A file inside whose content is not a path: the error must not quote it.
    std::fs::write(data.join("passwd.txt"), "root:x:0:0:root:/root:/bin/bash\n").unwrap();
    std::os::unix::fs::symlink(outside.join("path.txt"), data.join("link.txt")).unwrap();
    mkfifo(&data.join("fifo.txt"));

    let mut cmd = env.command(bin("steady_hand_guidance"));
    cmd.current_dir(&data)
        .args(["--ros-args", "--params-file"])
        .arg(repo_root().join("config/steady_hand_guidance.yaml"))
        .arg("-p")
        .arg(format!("robot_description_file:={}", rx60_urdf().display()))
        .arg("-p")
        .arg(format!("path.directory:={}", data.display()))
        .args(["-p", "path.max_size:=10000"]);
    let node = NodeProcess::spawn("steady_hand_guidance", cmd);
    node.wait_for_output("steady_hand_guidance ready", Duration::from_secs(20));

    let req = |f: &str| request(&[("file", f)]);
    let case = |what, f: &str| Case {
        what,
        request: req(f),
        must_not_exist: vec![],
    };
    let cases = vec![
        case("../ to a sibling", "../outside/path.txt"),
        case("../ to /tmp", &format!("{UP}{}", tmp_path.display())),
        case(
            "absolute outside",
            outside.join("path.txt").to_str().unwrap(),
        ),
        case("/proc/self/environ", "/proc/self/environ"),
        case("symlink out", "link.txt"),
        case("name with a newline", "a\nb.txt"),
        case("/etc/passwd", "/etc/passwd"),
        case("a file inside that is not a path", "passwd.txt"),
        case("over the size limit", "big.txt"),
        Case {
            what: "points 1e300 apart (a non-finite length)",
            request: serde_yaml::from_str(
                "{points: [{x: 0.0, y: 0.0, z: 0.0}, {x: 1.0e+300, y: 1.0e+300, z: 1.0e+300}]}",
            )
            .unwrap(),
            must_not_exist: vec![],
        },
    ];
    // Special files that block or never end last: a node that opens them hangs.
    let blocking = vec![
        case("/dev/zero", "/dev/zero"),
        case("FIFO inside", "fifo.txt"),
    ];
    let mut failures = Vec::new();
    let service = "/steady_hand_guidance/load_path";
    let ty = "rpq_interfaces/srv/LoadPath";
    for batch in [cases, blocking] {
        let mut requests = vec![req("path.txt")];
        requests.extend(batch.iter().map(|c| c.request.clone()));
        requests.push(req("path.txt"));
        let replies = call(&env, service, ty, &requests);
        for (i, what) in [
            (0, "good request first"),
            (requests.len() - 1, "good request after the bad ones"),
        ] {
            match replies.get(i) {
                Some(r)
                    if r["success"].as_bool() == Some(true)
                        && r["length"].as_f64().is_some_and(|l| (l - 0.2).abs() < 1e-9) => {}
                r => failures.push(format!("{what}: {r:?}")),
            }
        }
        for (k, c) in batch.iter().enumerate() {
            failures.extend(check_refused(c.what, replies.get(k + 1), &secret));
            if c.what == "a file inside that is not a path" {
                let msg = replies
                    .get(k + 1)
                    .and_then(|r| r["message"].as_str())
                    .unwrap_or("");
                if !msg.contains("line 1") {
                    failures.push(format!(
                        "{}: the error does not name the line: {msg}",
                        c.what
                    ));
                }
            }
        }
    }
    let _ = std::fs::remove_file(&tmp_path);
    finish(node, failures, &secret);
}

/// A long calibration runs off the node's executor (issue 12, item 11): requests that arrive
/// meanwhile are answered at once with "busy" instead of waiting for it.
#[test]
fn a_long_calibration_does_not_block_the_service() {
    let env = TestEnv::new();
    let work = work_dir("busy", &env);
    let data = work.join("data");
    // 50,000 poses = 250,000 rows: a calibration of about a second or more.
    std::fs::write(data.join("long.csv"), simulated_csv_of(&work, 50_000)).unwrap();
    let _node = spawn_calibration(&env, &data, &[]);
    // A quick refused request first (warm-up), then the long one and two more at once.
    let reqs = [
        request(&[("data_file", "missing.csv")]),
        request(&[("data_file", "long.csv")]),
        request(&[("data_file", "long.csv")]),
        request(&[("data_file", "long.csv")]),
    ];
    let yaml = serde_yaml::to_string(&reqs[..]).unwrap();
    let out = env.run_peer(
        "rclpy_peer.py",
        &[
            "call",
            "--concurrent",
            "--service",
            "/glove_calibration/calibrate",
            "--type",
            "rpq_interfaces/srv/CalibrateGlove",
            "--requests-yaml",
            &yaml,
            "--timeout",
            "120",
        ],
    );
    out.assert_ok("concurrent calibrate calls");
    let responses = out.records_of("response");
    assert_eq!(responses.len(), 4, "{}", out.stdout);
    let ok: Vec<_> = responses
        .iter()
        .filter(|r| r["response"]["success"].as_bool() == Some(true))
        .collect();
    let busy: Vec<_> = responses
        .iter()
        .filter(|r| {
            r["response"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("busy") && m.contains("long.csv"))
        })
        .collect();
    assert_eq!((ok.len(), busy.len()), (1, 2), "{}", out.stdout);
    let t = |r: &serde_yaml::Value| r["elapsed_s"].as_f64().unwrap();
    for b in &busy {
        assert!(
            t(b) + 0.2 < t(ok[0]),
            "a busy answer came {} s after the calibration's own ({} s)",
            t(b),
            t(ok[0])
        );
    }
}
