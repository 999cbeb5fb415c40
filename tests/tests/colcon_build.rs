//! The suite as a ROS 2 colcon workspace, checked the way a ROS 2 user would use it.
//!
//! `tests/colcon_check.sh` does the work (read its header): it copies the repository into a
//! workspace `ws/src/rpq-ros`, runs `colcon build` with colcon-ros-cargo, checks the install
//! space (executables under `lib/<pkg>/`, `package.xml` and launch/config/URDF/mesh files under
//! `share/<pkg>/`, the ament resource index), sources `install/setup.bash` in an empty
//! environment and asks `ament_index_python` for every package, runs the installed `robot_sim`
//! (directly and through the installed `rpq_launch robot_sim rx60_sim.launch.xml`) and reads
//! it from rclpy, rebuilds from a sourced shell, and checks that the checkout is untouched and
//! plain cargo still resolves and builds in it.
//!
//! In this test it builds `robot_sim` and `rpq_launch` (the packages it runs) at opt-level 0
//! (the script's defaults; `RPQ_COLCON_PACKAGES=all RPQ_COLCON_OPT_LEVEL=3` builds every package
//! as a user's `colcon build --cargo-args --release` does). Slow the first time; later runs
//! reuse `target/colcon-cache/ws/build` and take well under a minute when nothing changed.
//! Needs the venv of `tests/setup_pyenv.sh` with `tests/setup_colcon.sh` applied
//! (`tests/run_all.sh` does both) and the crates of Cargo.lock in the cargo cache: it runs
//! offline.

use std::io::Write;
use std::process::Command;
use std::time::Duration;

use rpq_tests::{next_domain_id, python, repo_root, require_private_netns, run_with_timeout};

#[test]
fn colcon_build_gives_a_working_ros2_install_space() {
    require_private_netns();
    let python = python(); // panics with instructions when the venv is missing
    let venv = python
        .parent()
        .and_then(|bin| bin.parent())
        .expect("venv/bin/python has a venv");
    assert!(
        venv.join("bin").join("colcon").is_file(),
        "no colcon in {}: run tests/setup_colcon.sh {} (tests/run_all.sh does)",
        venv.display(),
        venv.display()
    );
    let script = repo_root().join("tests").join("colcon_check.sh");
    let domain = next_domain_id();
    let mut cmd = Command::new("bash");
    cmd.arg(&script)
        .env("RPQ_PYENV", venv)
        .env("ROS_DOMAIN_ID", domain.to_string())
        .env_remove("RMW_IMPLEMENTATION")
        .env_remove("RPQ_COLCON_NO_DDS");
    // A cold colcon build takes ~10 min on a loaded 2-core machine: bound it generously.
    let out = run_with_timeout(
        &script.display().to_string(),
        cmd,
        Duration::from_secs(30 * 60),
    );
    let (stdout, stderr) = (&out.stdout, &out.stderr);
    assert!(
        out.success,
        "{} failed (exit code {:?}):\n--- stdout ---\n{stdout}\n--- stderr ---\n{stderr}",
        script.display(),
        out.code
    );
    assert!(
        stdout.contains("all colcon checks passed"),
        "colcon_check.sh exited 0 without reporting success:\n{stdout}\n{stderr}"
    );
    // The timings are worth seeing on every run: write them past the test harness's capture.
    if let Some(at) = stdout.find("colcon check timings") {
        let _ = std::io::stderr().write_all(format!("\n{}", &stdout[at..]).as_bytes());
    }
}
