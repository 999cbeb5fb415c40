//! Path modification (§5.1) and node reduction: the band shortens zig-zag paths in free space
//! to within 1 % of the straight line (random zig-zags, not tuned on), never leaves free space
//! (random demonstrations among obstacles, nodes and segments checked with the engine), keeps
//! every required contact, and the reduction respects its position and orientation tolerance
//! (every dropped node checked against a brute-force projection on its replacing segment).

mod common;

use std::sync::Arc;

use common::{assert_free, clutter, env, on_table, slab, table};
use nalgebra::{Isometry3, Vector3};
use rpq_base::SplitMix64;
use rpq_pathshrink::demo::Demonstration;
use rpq_pathshrink::geometry::{interpolate, rotation_angle};
use rpq_pathshrink::reduce::{reduce, ReduceParams};
use rpq_pathshrink::shrink::{shrink, ShrinkParams};
use rpq_pathshrink::{
    ContactSimulator, Environment, PathNode, RequiredSpan, SimParams, WorkpiecePath, Wrench,
};
use rpq_proximity::QueryWorkspace;

fn node(x: f64, y: f64, z: f64, yaw: f64) -> PathNode {
    PathNode {
        pose: Isometry3::new(Vector3::new(x, y, z), Vector3::new(0.0, 0.0, yaw)),
        contacts: vec![],
    }
}

#[test]
fn the_band_shortens_random_zigzags_in_free_space_to_within_1_percent() {
    let e = env(vec![]);
    let mut rng = SplitMix64::new(21);
    for case in 0..6 {
        let n = 8 + (rng.next_u64() % 20) as usize;
        let amplitude = rng.range(0.005, 0.04);
        let nodes: Vec<PathNode> = (0..n)
            .map(|k| {
                let side = if k % 2 == 0 { 1.0 } else { -1.0 };
                let (y, z) = if k == 0 || k == n - 1 {
                    (0.0, 0.1)
                } else {
                    (side * amplitude, 0.1 + rng.range(-amplitude, amplitude))
                };
                node(k as f64 * 0.015, y, z, rng.range(-0.3, 0.3))
            })
            .collect();
        let mut path = WorkpiecePath {
            nodes,
            spans: vec![],
        };
        let straight = (path.nodes[n - 1].pose.translation.vector
            - path.nodes[0].pose.translation.vector)
            .norm();
        let before = path.length(&e);
        let mut sim = ContactSimulator::new(e.clone(), SimParams::default()).unwrap();
        let r = shrink(&mut sim, &mut path, &ShrinkParams::default());
        let after = path.length(&e);
        assert!(
            r.stabilised,
            "case {case}: not stabilised in {} sweeps",
            r.sweeps
        );
        assert!(
            after <= 1.01 * straight,
            "case {case}: {n} nodes, zig-zag {before:.4} m -> {after:.4} m, straight line {straight:.4} m"
        );
        // The orientations end up spread between the fixed ends: no node turned beyond them.
        let (a, b) = (path.nodes[0].pose, path.nodes[n - 1].pose);
        let span = rotation_angle(&a, &b);
        for nd in &path.nodes {
            assert!(rotation_angle(&a, &nd.pose) <= span + 1e-3);
        }
    }
}

/// A demonstration by random dragger forces that wander among the obstacles, pressed onto
/// the table (valid input: the simulator made it).
fn random_demo(e: &Arc<Environment>, seed: u64, steps: usize) -> WorkpiecePath {
    let mut rng = SplitMix64::new(seed);
    let mut ws = QueryWorkspace::new();
    let start = loop {
        let p = on_table(
            rng.range(-0.1, 0.0),
            rng.range(-0.03, 0.03),
            0.001,
            rng.range(-1.0, 1.0),
        );
        if e.clearance(&p, &mut ws).is_some_and(|(d, _)| d > 5e-4) {
            break p;
        }
    };
    let mut demo = Demonstration::new(e.clone(), SimParams::default(), start).unwrap();
    demo.start_recording();
    let mut dir = Vector3::new(rng.range(-1.0, 1.0), rng.range(-1.0, 1.0), 0.0);
    for _ in 0..steps {
        dir += Vector3::new(rng.range(-0.5, 0.5), rng.range(-0.5, 0.5), 0.0);
        dir = dir.cap_magnitude(1.5);
        let up = rng.range(-1.2, 0.6);
        demo.step(&Wrench::force(Vector3::new(dir.x, dir.y, up)))
            .unwrap();
    }
    demo.finish()
}

#[test]
fn the_band_never_leaves_free_space() {
    let e = clutter();
    for seed in 1..=4 {
        let recorded = random_demo(&e, seed, 120);
        let mut ws = QueryWorkspace::new();
        recorded
            .validate(&e, 0.002, &mut ws)
            .expect("simulated demonstrations are valid");
        let (mut path, _) = rpq_pathshrink::shrink::thin(&recorded, &e, 0.015, &mut ws);
        let before = path.length(&e);
        let mut sim = ContactSimulator::new(e.clone(), SimParams::default()).unwrap();
        let r = shrink(&mut sim, &mut path, &ShrinkParams::default());
        assert_free(&e, &path, &format!("seed {seed}"));
        assert!(
            path.length(&e) <= before + 1e-9,
            "seed {seed}: the path got longer"
        );
        assert!(r.stabilised, "seed {seed}: {r:?}");
        assert_eq!(r.lcp_failures, 0, "seed {seed}");
    }
}

#[test]
fn the_band_keeps_every_required_contact() {
    // Slide along the wall's west face (captured wall and table) in the middle of a path.
    let e = env(vec![
        table(),
        slab("wall", [0.05, -0.1, 0.0], [0.062, 0.1, 0.04]),
    ]);
    let mut demo = Demonstration::new(
        e.clone(),
        SimParams::default(),
        on_table(-0.02, -0.06, 0.001, 0.2),
    )
    .unwrap();
    demo.start_recording();
    let push = |d: &mut Demonstration, f: [f64; 3], steps: usize| {
        for _ in 0..steps {
            d.step(&Wrench::force(Vector3::from(f))).unwrap();
        }
    };
    push(&mut demo, [1.0, 0.2, -0.5], 12);
    demo.set_capture(vec![0, 1]);
    push(&mut demo, [0.4, 1.0, -0.3], 25);
    demo.set_capture(vec![]);
    push(&mut demo, [-1.0, 0.6, 0.4], 12);
    let recorded = demo.finish();
    assert_eq!(recorded.spans.len(), 1, "{:?}", recorded.spans);
    let span = recorded.spans[0].clone();
    assert_eq!(span.objects, vec![0, 1]);
    assert!(span.last - span.first >= 20, "{span:?}");
    let mut ws = QueryWorkspace::new();
    recorded.validate(&e, 0.002, &mut ws).unwrap();
    let (mut path, _) = rpq_pathshrink::shrink::thin(&recorded, &e, 0.015, &mut ws);
    let mut sim = ContactSimulator::new(e.clone(), SimParams::default()).unwrap();
    shrink(&mut sim, &mut path, &ShrinkParams::default());
    assert_free(&e, &path, "required contact");
    let s = &path.spans[0];
    for k in s.first..=s.last {
        for &o in &s.objects {
            let d = e
                .distance(&path.nodes[k].pose, o, 1.0, &mut ws)
                .unwrap()
                .distance;
            assert!(
                d > 0.0 && d < 0.002,
                "node {k}: contact with {o} lost ({d} m)"
            );
        }
    }
    // And the unwanted contacts outside the span are gone.
    let fixed = path.fixed();
    for (k, n) in path.nodes.iter().enumerate() {
        if !fixed[k] && !(s.first..=s.last).contains(&k) {
            assert!(
                n.contacts.is_empty(),
                "node {k} still touches {:?}",
                n.contacts
            );
        }
    }
}

#[test]
fn node_reduction_respects_its_tolerances() {
    let e = clutter();
    let mut ws = QueryWorkspace::new();
    for (seed, tol, rot) in [(5u64, 0.002, 0.05), (6, 0.0005, 0.01), (7, 0.005, 0.2)] {
        let recorded = random_demo(&e, seed, 100);
        let params = ReduceParams {
            position_tolerance: tol,
            orientation_tolerance: rot,
            ..ReduceParams::default()
        };
        let (reduced, kept) = reduce(&e, &recorded, &params, 0.002, &mut ws);
        assert!(
            reduced.nodes.len() < recorded.nodes.len(),
            "seed {seed}: nothing dropped"
        );
        assert_eq!(kept[0], 0);
        assert_eq!(*kept.last().unwrap(), recorded.nodes.len() - 1);
        let c = e.workpiece.centre;
        for w in kept.windows(2) {
            let (a, b) = (&recorded.nodes[w[0]].pose, &recorded.nodes[w[1]].pose);
            for k in w[0] + 1..w[1] {
                // Brute force: the closest of 2000 points of the replacing segment.
                let pk = recorded.nodes[k].pose * c;
                let (mut best, mut best_t) = (f64::INFINITY, 0.0);
                for j in 0..=2000 {
                    let t = f64::from(j) / 2000.0;
                    let d = (interpolate(a, b, &c, t) * c - pk).norm();
                    if d < best {
                        (best, best_t) = (d, t);
                    }
                }
                assert!(
                    best <= tol + 1e-6,
                    "seed {seed}: node {k} is {best} m off its segment"
                );
                let on = interpolate(a, b, &c, best_t);
                assert!(
                    rotation_angle(&on, &recorded.nodes[k].pose) <= rot + 2e-3,
                    "seed {seed}: node {k} turned off its segment"
                );
            }
        }
        assert_free(&e, &reduced, &format!("reduced, seed {seed}"));
    }
    // Collinear nodes with one orientation reduce to the two ends; a required span's ends stay.
    let line = WorkpiecePath {
        nodes: (0..10)
            .map(|k| node(k as f64 * 0.01, 0.0, 0.2, 0.0))
            .collect(),
        spans: vec![],
    };
    let (r, _) = reduce(&e, &line, &ReduceParams::default(), 0.002, &mut ws);
    assert_eq!(r.nodes.len(), 2);
    // (A span without objects: only its ends matter here.)
    let spanned = WorkpiecePath {
        spans: vec![RequiredSpan {
            first: 3,
            last: 6,
            objects: vec![],
        }],
        ..line
    };
    let (_, kept) = reduce(&e, &spanned, &ReduceParams::default(), 0.002, &mut ws);
    assert_eq!(kept, vec![0, 3, 6, 9]);
}
