//! A scene, URDF or configuration path naming a device or a FIFO fails at once with an error
//! naming it, instead of reading without end (issue 12, item 8).

use std::path::Path;
use std::time::{Duration, Instant};

use nalgebra::Isometry3;
use rpq_scene::{load_scene, Robot};

#[test]
fn devices_and_fifos_are_refused_at_once() {
    let t0 = Instant::now();
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("scene.yaml");
    // mkfifo(1): the libc call would need `unsafe`, which the workspace forbids.
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    for path in [Path::new("/dev/zero"), fifo.as_path()] {
        let e = load_scene(path).unwrap_err().to_string();
        assert!(e.contains(&path.display().to_string()), "{e}");
        let e = Robot::from_urdf_file("r", path, Isometry3::identity())
            .unwrap_err()
            .to_string();
        assert!(e.contains(&path.display().to_string()), "{e}");
    }
    assert!(t0.elapsed() < Duration::from_secs(2));
}
