//! The assisted cut end to end in one process (a few simulated seconds): zero penetrations,
//! the surgeon's deliberate pushes stopped, the cut followed, status lines every second, the
//! same summary for the same seed and another for another seed, no jump when the cutting aid
//! is loaded, and the report's files.

use std::sync::Arc;

use rpq_surgery::scenario::{report, run_on, Geometry, ScenarioConfig};

#[test]
fn short_scenario_end_to_end() {
    let cfg = ScenarioConfig {
        duration: 5.0,
        seed: 3,
        ..ScenarioConfig::default()
    };
    let mut cfg = cfg;
    cfg.surgeon.push_interval = 1.0;
    let geometry = Arc::new(Geometry::build(&cfg).unwrap());
    let mut lines = Vec::new();
    let r = run_on(&cfg, geometry.clone(), &mut |s| lines.push(s.to_string())).unwrap();
    let s = &r.summary;
    eprintln!("{}", report::summary_text(&cfg, &r));
    assert_eq!(s.penetrations, 0);
    assert!(s.min_clearance >= 0.0);
    assert!(s.min_patient_distance >= 0.0);
    assert_eq!(s.periods, 5000);
    assert_eq!(lines.len(), 5);
    assert!(lines[0].starts_with("t =    1.0 s"), "{}", lines[0]);
    assert_eq!(s.triangles, [50_784, 8192, 8128]);
    // the surgeon pushed into forbidden regions and the protections held
    assert!(s.pushes >= 2, "{s:?}");
    assert!(
        s.outcomes[1] > 100,
        "the tool never slid along a protection: {s:?}"
    );
    // the bit reached the bone and followed the cut: within the band of the cut width
    assert!(s.cutting_periods > 1000, "{s:?}");
    assert!(
        s.mean_deviation < 0.5e-3 && s.max_deviation < 2.5e-3,
        "{s:?}"
    );
    // loading the cutting aid at 1 s did not make the command jump (the acceleration limit
    // allows 0.5 mm/s per period)
    assert!(s.max_command_change.1 <= 0.5e-3 + 1e-12, "{s:?}");
    // determinism: the same seed gives the same summary, another seed another one
    let again = run_on(&cfg, geometry.clone(), &mut |_| {}).unwrap();
    assert_eq!(again.summary, r.summary);
    let other = run_on(
        &ScenarioConfig {
            seed: 4,
            ..cfg.clone()
        },
        geometry,
        &mut |_| {},
    )
    .unwrap();
    assert_ne!(other.summary, r.summary);
    assert_eq!(other.summary.penetrations, 0);
    // the report's files
    let dir = tempfile::tempdir().unwrap();
    let (files, note) = report::write(dir.path(), &cfg, &r).unwrap();
    assert!(files.iter().any(|f| f.ends_with("summary.txt")));
    let csv = std::fs::read_to_string(dir.path().join("trajectory.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 500);
    if note.is_none() {
        assert!(dir.path().join("path.png").is_file() && dir.path().join("distance.svg").is_file());
    }
    let text = std::fs::read_to_string(dir.path().join("summary.txt")).unwrap();
    assert!(text.contains("penetrations of the protected region: 0"));
}

#[test]
fn bad_settings_are_refused() {
    let bad = |f: &dyn Fn(&mut ScenarioConfig)| {
        let mut c = ScenarioConfig::default();
        f(&mut c);
        c.validate().is_err()
    };
    assert!(bad(&|c| c.dt = 0.0));
    assert!(bad(&|c| c.duration = f64::NAN));
    assert!(bad(&|c| c.cut_width = 0.002)); // narrower than the bit
    assert!(bad(&|c| c.tool_radius = -1.0));
    assert!(bad(&|c| c.admittance.compliance.c = -1.0));
    assert!(!bad(&|_| {}));
}
