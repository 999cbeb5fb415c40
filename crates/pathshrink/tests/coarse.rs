//! Coarse-to-fine stabilisation of dense paths ([`rpq_pathshrink::coarse`]): on demonstrations
//! not used for tuning (random wander among obstacles with a captured slide along a wall in
//! the middle; seeds 101–103, the tuning was done on the puzzle's cornering task only), the
//! result keeps every node, satisfies the band's stabilisation criterion at full resolution
//! (its last sweep, over all nodes, moved none beyond the thresholds; and one more sweep of
//! a fresh band, steps undamped, moves it less than 4x the thresholds, as for the direct
//! result), keeps every required contact, fixed nodes unmoved,
//! stays in free space (every node and every segment checked with the engine), and its length
//! is within 1 % of the direct full-resolution stabilisation of the same path.
//!
//! The direct stabilisation is slow (its sweeps grow with the square of the node count), so
//! the default test uses ~150-node paths; `cargo test --release -p rpq_pathshrink --test
//! coarse -- --ignored` runs the same comparison on 200-node paths (seeds 201–203, ~15 s).

mod common;

use std::sync::Arc;

use common::{assert_free, clutter, on_table};
use nalgebra::Vector3;
use rpq_base::SplitMix64;
use rpq_pathshrink::coarse::{shrink_coarse_to_fine, COARSE_SPACING};
use rpq_pathshrink::demo::Demonstration;
use rpq_pathshrink::shrink::{shrink, ShrinkParams};
use rpq_pathshrink::{ContactSimulator, Environment, SimParams, WorkpiecePath, Wrench};
use rpq_proximity::QueryWorkspace;

/// Wander towards the wall, slide along it with table and wall captured, wander away;
/// `nodes` nodes in all (about).
fn demonstration(e: &Arc<Environment>, seed: u64, nodes: usize) -> WorkpiecePath {
    let mut rng = SplitMix64::new(seed);
    let start = on_table(
        rng.range(-0.01, 0.02),
        rng.range(-0.08, -0.04),
        0.001,
        rng.range(-0.5, 0.5),
    );
    let mut demo = Demonstration::new(e.clone(), SimParams::default(), start).unwrap();
    demo.start_recording();
    let free = (nodes - 15) / 2;
    let mut wander = |d: &mut Demonstration, base: [f64; 3], steps: usize| {
        for _ in 0..steps {
            let f = Vector3::new(
                base[0] + rng.range(-0.8, 0.8),
                base[1] + rng.range(-0.8, 0.8),
                base[2] + rng.range(-0.6, 0.3),
            );
            d.step(&Wrench::force(f)).unwrap();
        }
    };
    // Towards the wall until touching it.
    wander(&mut demo, [1.0, 0.2, -0.4], free);
    for _ in 0..200 {
        if demo.nodes().last().unwrap().contacts == vec![0, 1] {
            break;
        }
        demo.step(&Wrench::force(Vector3::new(1.0, 0.1, -0.5)))
            .unwrap();
    }
    demo.set_capture(vec![0, 1]);
    for _ in 0..15 {
        demo.step(&Wrench::force(Vector3::new(0.4, 1.0, -0.3)))
            .unwrap();
    }
    demo.set_capture(vec![]);
    wander(&mut demo, [-1.0, 0.5, 0.5], free);
    demo.finish()
}

fn compare(seed: u64, nodes: usize) {
    // A table, a wall (index 1) to slide along, a post and a bar to avoid.
    let e = clutter();
    let what = format!("seed {seed}");
    let recorded = demonstration(&e, seed, nodes);
    let mut ws = QueryWorkspace::new();
    recorded
        .validate(&e, 0.002, &mut ws)
        .expect("valid demonstration");
    assert_eq!(recorded.spans.len(), 1, "{what}: {:?}", recorded.spans);
    let p = ShrinkParams::default();
    let mut sim = ContactSimulator::new(e.clone(), SimParams::default()).unwrap();

    let mut fast = recorded.clone();
    let r = shrink_coarse_to_fine(&mut sim, &mut fast, &p, COARSE_SPACING);
    assert!(r.fine.stabilised, "{what}: {r:?}");
    assert!(r.coarse_nodes < recorded.nodes.len() / 2, "{what}: {r:?}");
    assert_eq!(fast.nodes.len(), recorded.nodes.len());
    assert_eq!(fast.spans, recorded.spans);
    assert_free(&e, &fast, &what);
    let s = &fast.spans[0];
    for k in s.first..=s.last {
        for &o in &s.objects {
            let d = e
                .distance(&fast.nodes[k].pose, o, 1.0, &mut ws)
                .unwrap()
                .distance;
            assert!(
                d > 0.0 && d < 0.002,
                "{what}: node {k} lost contact with {o} ({d} m)"
            );
        }
    }
    // Fixed nodes did not move.
    for (k, f) in recorded.fixed().iter().enumerate() {
        if *f {
            assert_eq!(
                fast.nodes[k].pose, recorded.nodes[k].pose,
                "{what}: node {k}"
            );
        }
    }

    let mut direct = recorded.clone();
    let d = shrink(&mut sim, &mut direct, &p);
    assert!(d.stabilised, "{what}: direct {d:?}");
    // One more sweep of a fresh band (every step undamped) moves either result about as
    // little: the coarse-to-fine path is as stable as the direct one.
    let fresh = |path: &WorkpiecePath, sim: &mut ContactSimulator| {
        let mut again = path.clone();
        let one = ShrinkParams { max_sweeps: 1, ..p };
        let r = shrink(sim, &mut again, &one);
        (r.last_translation, r.last_rotation)
    };
    let (ft, fr) = fresh(&fast, &mut sim);
    let (dt, dr) = fresh(&direct, &mut sim);
    eprintln!("{what}: fresh sweep moves coarse to fine {ft:.2e} m {fr:.2e} rad, direct {dt:.2e} m {dr:.2e} rad");
    // (The band's criterion is judged with its damped steps; a fresh sweep moves both
    // results beyond the thresholds, measured: coarse to fine up to 3.1x, direct up to 1.8x.)
    assert!(
        ft <= 4.0 * p.stable_translation && fr <= 4.0 * p.stable_rotation,
        "{what}: a fresh sweep moves the coarse-to-fine path {ft} m / {fr} rad"
    );
    let (lf, ld) = (fast.length(&e), direct.length(&e));
    eprintln!(
        "{what}: {} nodes, coarse to fine {:.2} mm in {} + {} sweeps ({:.0} ms), direct {:.2} mm \
         in {} sweeps ({:.0} ms), recorded {:.2} mm",
        recorded.nodes.len(),
        lf * 1e3,
        r.coarse.sweeps,
        r.fine.sweeps,
        r.seconds * 1e3,
        ld * 1e3,
        d.sweeps,
        d.seconds * 1e3,
        recorded.length(&e) * 1e3
    );
    assert!(
        (lf / ld - 1.0).abs() <= 0.01,
        "{what}: coarse to fine {lf} m vs direct {ld} m"
    );
    assert!(lf < recorded.length(&e), "{what}: not shortened");
}

#[test]
fn coarse_to_fine_matches_the_direct_stabilisation_at_full_resolution() {
    for seed in 101..=103 {
        compare(seed, 150);
    }
}

#[test]
#[ignore = "direct stabilisation of 200-node paths: ~15 s"]
fn coarse_to_fine_matches_the_direct_stabilisation_on_200_node_paths() {
    for seed in 201..=203 {
        compare(seed, 200);
    }
}
