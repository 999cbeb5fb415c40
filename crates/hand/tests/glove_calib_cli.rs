//! `glove_calib simulate → calibrate → validate` from the command line, as documented (a
//! smaller version of the reproduction: 30 poses to calibrate, 40 to validate).

use std::process::Command;

fn run(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_glove_calib"))
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .args(args)
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "glove_calib {args:?} failed:\n{text}");
    text
}

#[test]
fn simulate_calibrate_validate() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).display().to_string();
    run(&[
        "simulate",
        "--perturb",
        "1",
        "--truth-seed",
        "5",
        "--truth-out",
        &p("truth.yaml"),
        "--poses",
        "30",
        "--seed",
        "1",
        "--out",
        &p("train.csv"),
    ]);
    let cal = run(&[
        "calibrate",
        "--data",
        &p("train.csv"),
        "--out",
        &p("cal.yaml"),
        "--report-dir",
        &p("report"),
    ]);
    assert!(
        cal.contains("thumb") && cal.contains("parameter changes"),
        "{cal}"
    );
    for f in [
        "calibration_report.yaml",
        "calibration_errors.png",
        "calibration_errors.svg",
    ] {
        assert!(dir.path().join("report").join(f).is_file(), "{f} missing");
    }
    run(&[
        "simulate",
        "--params",
        &p("truth.yaml"),
        "--poses",
        "40",
        "--first-pose",
        "1000",
        "--seed",
        "2",
        "--out",
        &p("val.csv"),
    ]);
    let val = run(&[
        "validate",
        "--params",
        &p("cal.yaml"),
        "--data",
        &p("val.csv"),
        "--report-dir",
        &p("report"),
        "--max-error",
        "6",
    ]);
    assert!(val.contains("all errors below 6 mm"), "{val}");
    // the uncalibrated model fails the same check
    let out = Command::new(env!("CARGO_BIN_EXE_glove_calib"))
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .args([
            "validate",
            "--params",
            "config/hand_model_nominal.yaml",
            "--data",
            &p("val.csv"),
            "--report-dir",
            &p("report"),
            "--max-error",
            "6",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    // malformed input: clear error, no panic
    std::fs::write(p("bad.csv"), "pose,finger,s0\n1,index,3\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_glove_calib"))
        .args([
            "validate",
            "--params",
            &p("cal.yaml"),
            "--data",
            &p("bad.csv"),
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("CSV header"));
}
