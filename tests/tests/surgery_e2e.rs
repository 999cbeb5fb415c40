//! The suite's main job end to end: `rpq_launch launch/surgery.launch.xml` with a short
//! duration (robot_sim with the drill, virtual_protection, steady_hand_guidance,
//! admittance_controller in forbidden-region mode, simulated_surgeon, rpq_bag record) prints
//! a status line every second and a summary with 0 penetrations, ends by itself, and leaves the
//! summary, the plots and an MCAP bag of the topics in the output folder it was given.

use std::time::Duration;

use rpq_tests::{bin, repo_root, run_with_timeout, TestEnv};

#[test]
fn the_surgical_scenario_runs_end_to_end_without_penetrations() {
    let out = tempfile::tempdir().unwrap();
    let logs = tempfile::tempdir().unwrap();
    let run = out.path().join("run");
    let env = TestEnv::new().with("ROS_LOG_DIR", &logs.path().display().to_string());
    let mut cmd = env.command(bin("rpq_launch"));
    cmd.arg(repo_root().join("launch/surgery.launch.xml"))
        .arg("duration:=6")
        .arg("seed:=2")
        .arg("push_interval:=1.5")
        .arg(format!("output_directory:={}", run.display()));
    let o = run_with_timeout(
        "rpq_launch surgery.launch.xml",
        cmd,
        Duration::from_secs(90),
    );
    let all = format!("{}\n{}", o.stdout, o.stderr);
    assert!(o.success, "the launch failed\n{all}");
    let surgeon: Vec<&str> = all
        .lines()
        .filter_map(|l| l.strip_prefix("[simulated_surgeon-5] "))
        .collect();
    let status: Vec<&&str> = surgeon.iter().filter(|l| l.starts_with("t = ")).collect();
    assert!(status.len() >= 5, "status lines: {status:?}\n{all}");
    for l in &status {
        for field in ["tool (", "patient", "contact", "speed"] {
            assert!(l.contains(field), "{l}");
        }
    }
    let summary = surgeon.join("\n");
    assert!(
        summary.contains("penetrations of the protected region: 0"),
        "{summary}"
    );
    assert!(
        summary.contains("cut accuracy: mean deviation"),
        "{summary}"
    );
    assert!(summary.contains("control loop timing"), "{summary}");
    // the surgeon pushed into forbidden regions and the controller held the tool at them
    let pushed = !summary.contains("pushed into forbidden regions 0 times");
    let contact = status.iter().any(|l| l.contains("contact yes"));
    assert!(pushed && contact, "{summary}");
    for f in ["summary.txt", "trajectory.csv", "path.svg", "distance.svg"] {
        assert!(run.join(f).is_file(), "{f} missing in {}", run.display());
    }
    let text = std::fs::read_to_string(run.join("summary.txt")).unwrap();
    assert!(
        text.contains("penetrations of the protected region: 0"),
        "{text}"
    );
    // the bag: every recorded topic has messages
    let bag = rpq_bag::BagReader::open(run.join("bag")).unwrap();
    for topic in [
        "/joint_states",
        "/wrench",
        "/virtual_fixture",
        "/forward_velocity_controller/commands",
        "/admittance_controller/status",
    ] {
        let n = bag.messages().iter().filter(|m| m.topic == topic).count();
        assert!(n > 50, "{topic}: {n} messages");
    }
}
