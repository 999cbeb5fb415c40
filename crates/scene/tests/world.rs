//! The world layer (`rpq_scene::World`) against brute force over `Scenario::body_distance`
//! on random configurations of the two-RX60 scene, and scene files naming
//! `robot_description` topics.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use rpq_base::SplitMix64;
use rpq_kinematics::MeshResolver;
use rpq_scene::spec::LoadedScene;
use rpq_scene::{load_scene, BodyId, ContactMode, Object, SceneError, SceneSpec, Selection, World};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn scene_path() -> PathBuf {
    repo().join("config/rx60_pair.scene.yaml")
}

/// Seeds of the brute-force comparisons: the first `RPQ_BRUTE_SEEDS` (default 2) of each test's
/// list; `RPQ_BRUTE_SEEDS=3` runs them all (the default test run keeps its time budget).
fn seeds(all: &[u64]) -> Vec<u64> {
    let n = std::env::var("RPQ_BRUTE_SEEDS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(2)
        .clamp(1, all.len());
    all[..n].to_vec()
}

/// The two-RX60 world, loaded once and cloned.
fn world() -> World {
    static W: OnceLock<World> = OnceLock::new();
    W.get_or_init(|| World::new(load_scene(scene_path()).unwrap()))
        .clone()
}

/// `robot/joint` names of every movable joint.
fn joint_names(w: &World) -> Vec<String> {
    let mut names = Vec::new();
    for &o in &w.robots() {
        let Object::Complex(r) = &w.scenario().objects()[o] else {
            unreachable!()
        };
        for j in r.kinematics().joint_names() {
            names.push(format!("{}/{j}", r.name()));
        }
    }
    names
}

/// Sets a uniformly random within-limits configuration of every robot; returns it in the
/// order of `joint_names`.
fn randomize(w: &mut World, rng: &mut SplitMix64) -> Vec<f64> {
    let mut all = Vec::new();
    for o in w.robots() {
        let Object::Complex(r) = &w.scenario().objects()[o] else {
            unreachable!()
        };
        let names: Vec<String> = r.kinematics().joint_names().map(String::from).collect();
        let q: Vec<f64> = r
            .kinematics()
            .joint_limits()
            .iter()
            .map(|l| l.lower + (l.upper - l.lower) * rng.uniform())
            .collect();
        w.set_joint_state(o, &names, &q).unwrap();
        all.extend(q);
    }
    all
}

/// Every body pair of different objects, `a.object < b.object`.
fn all_pairs(w: &World) -> Vec<(BodyId, BodyId)> {
    let objects = w.scenario().objects();
    let mut out = Vec::new();
    for (a, b) in w.scenario().object_pairs() {
        for i in 0..objects[a].num_bodies() {
            for j in 0..objects[b].num_bodies() {
                out.push((BodyId { object: a, body: i }, BodyId { object: b, body: j }));
            }
        }
    }
    out
}

fn all_bodies(w: &World) -> Vec<BodyId> {
    let objects = w.scenario().objects();
    (0..objects.len())
        .flat_map(|o| (0..objects[o].num_bodies()).map(move |body| BodyId { object: o, body }))
        .collect()
}

/// Exact surface distance of every body pair at the current configuration.
fn brute_distances(w: &World) -> Vec<(BodyId, BodyId, f64)> {
    let mut s = w.scenario().clone();
    all_pairs(w)
        .into_iter()
        .map(|(a, b)| (a, b, s.body_distance(a, b).unwrap().distance))
        .collect()
}

fn in_selection(a: &Selection, b: &Selection, x: BodyId, y: BodyId) -> bool {
    (a.contains(x) && b.contains(y)) || (a.contains(y) && b.contains(x))
}

/// A random non-empty selection of body names (objects or single links).
fn random_names(w: &World, rng: &mut SplitMix64) -> Vec<String> {
    let bodies = all_bodies(w);
    let mut names = Vec::new();
    if rng.below(4) == 0 {
        names.push(
            w.scenario().objects()[rng.below(2) as usize]
                .name()
                .to_owned(),
        );
    }
    let k = 1 + rng.below(5) as usize;
    for _ in 0..k {
        names.push(w.body_name(bodies[rng.below(bodies.len() as u64) as usize]));
    }
    names
}

#[test]
fn plain_world_answers_as_the_scenario() {
    for seed in [101, 202, 303] {
        let mut rng = SplitMix64::new(seed);
        let mut w = world();
        let everything = w.select(&["left".into(), "right".into()]).unwrap();
        assert!(!everything.is_all());
        let all = Selection::all();
        let (mut colliding, mut n) = (0, 0);
        // At least 150 configurations and 8 colliding ones (about 3% collide).
        while n < 150 || colliding < 8 {
            assert!(n < 5000, "seed {seed}: {colliding} colliding in {n}");
            n += 1;
            randomize(&mut w, &mut rng);
            let mut s = w.scenario().clone();
            let c = s.collide(w.options());
            let d = s.min_distance(w.options()).unwrap();
            let wc = w.check_collision(&all, &all, ContactMode::First);
            assert_eq!(wc.colliding, c.colliding);
            assert_eq!(wc.pairs.first().map(|p| (p.a, p.b)), c.pair);
            let wd = w.min_distance(&all, &all, 0.0, 0.0).unwrap();
            assert_eq!(
                (wd.distance, wd.body_a, wd.body_b),
                (d.distance, d.body_a, d.body_b)
            );
            // The general loops (an explicit selection of every body) agree.
            let gc = w.check_collision(&everything, &everything, ContactMode::First);
            assert_eq!(gc.colliding, c.colliding);
            let gd = w.min_distance(&everything, &everything, 0.0, 0.0).unwrap();
            assert_eq!(
                (gd.distance, gd.body_a, gd.body_b),
                (d.distance, d.body_a, d.body_b)
            );
            // Witness points may differ in the last bits (engine caches differ); in contact
            // they are some common point of the two surfaces, which depends on which
            // intersecting triangle pair the traversal meets first.
            if d.distance > 0.0 {
                assert!((gd.point_a - d.point_a).norm() + (gd.point_b - d.point_b).norm() < 1e-12);
            } else {
                assert_eq!(gd.point_a, gd.point_b);
                assert_eq!(d.point_a, d.point_b);
            }
            colliding += usize::from(c.colliding);
        }
        assert!(colliding < n, "seed {seed}: every configuration collides");
    }
}

#[test]
fn filtered_min_distance_is_the_brute_minimum() {
    for seed in seeds(&[7, 8, 9]) {
        let mut rng = SplitMix64::new(seed);
        let mut w = world();
        for _ in 0..60 {
            randomize(&mut w, &mut rng);
            let (na, nb) = (random_names(&w, &mut rng), random_names(&w, &mut rng));
            let (a, b) = (w.select(&na).unwrap(), w.select(&nb).unwrap());
            let dists = brute_distances(&w);
            let brute = dists
                .iter()
                .filter(|&&(x, y, _)| in_selection(&a, &b, x, y))
                .map(|&(_, _, d)| d)
                .fold(f64::INFINITY, f64::min);
            match w.min_distance(&a, &b, 0.0, 0.0) {
                None => assert!(brute.is_infinite(), "{na:?} {nb:?}"),
                Some(r) => {
                    assert!(
                        (r.distance - brute).abs() <= 1e-12,
                        "{} vs {brute}",
                        r.distance
                    );
                    assert!(in_selection(&a, &b, r.body_a, r.body_b));
                }
            }
            // Collision over the same pairs: any pair at distance 0 not skipped by the matrix.
            let brute_hit = dists
                .iter()
                .any(|&(x, y, d)| in_selection(&a, &b, x, y) && !w.is_allowed(x, y) && d == 0.0);
            let c = w.check_collision(&a, &b, ContactMode::First);
            assert_eq!(c.colliding, brute_hit, "{na:?} {nb:?}");
            if let Some(p) = c.pairs.first() {
                assert!(in_selection(&a, &b, p.a, p.b));
            }
        }
    }
}

#[test]
fn padding_matches_brute_force() {
    for seed in seeds(&[21, 22, 23]) {
        let mut rng = SplitMix64::new(seed);
        let mut w = world();
        for id in all_bodies(&w) {
            if rng.below(3) > 0 {
                let name = w.body_name(id);
                w.set_padding(&name, 0.04 * rng.uniform()).unwrap();
            }
        }
        let all = Selection::all();
        let mut checked = 0;
        let mut colliding = 0;
        for _ in 0..120 {
            randomize(&mut w, &mut rng);
            // (a, b, distance, padded distance, allowed)
            let rows: Vec<(BodyId, BodyId, f64, f64, bool)> = brute_distances(&w)
                .into_iter()
                .map(|(a, b, d)| (a, b, d, d - w.padding(a) - w.padding(b), w.is_allowed(a, b)))
                .collect();
            // Equality cases are ambiguous by rounding: skip configurations near one.
            if rows.iter().any(|r| r.3 != 0.0 && r.3.abs() < 1e-9) {
                continue;
            }
            checked += 1;
            let hit = |r: &&(BodyId, BodyId, f64, f64, bool)| !r.4 && (r.3 < 0.0 || r.2 == 0.0);
            let brute_hit = rows.iter().any(|r| hit(&r));
            let c = w.check_collision(&all, &all, ContactMode::First);
            assert_eq!(c.colliding, brute_hit, "seed {seed}");
            colliding += usize::from(brute_hit);
            let mut want: Vec<(BodyId, BodyId)> =
                rows.iter().filter(hit).map(|r| (r.0, r.1)).collect();
            want.sort();
            let got: Vec<(BodyId, BodyId)> = w
                .check_collision(&all, &all, ContactMode::AllPairs)
                .pairs
                .iter()
                .map(|p| (p.a, p.b))
                .collect();
            assert_eq!(got, want);
            let brute_d = rows
                .iter()
                .map(|r| r.3.max(0.0))
                .fold(f64::INFINITY, f64::min);
            let d = w.min_distance(&all, &all, 0.0, 0.0).unwrap();
            assert!(
                (d.distance - brute_d).abs() <= 1e-12,
                "{} vs {brute_d}",
                d.distance
            );
            if brute_hit {
                assert_eq!(d.distance, 0.0);
            }
            // Witness points on the unpadded surfaces.
            let mut s = w.scenario().clone();
            let raw = s.body_distance(d.body_a, d.body_b).unwrap();
            assert!((raw.distance - (d.point_a - d.point_b).norm()).abs() <= 1e-9);
        }
        assert!(checked > 100, "seed {seed}: {checked}");
        assert!(
            colliding > 5 && colliding < checked,
            "seed {seed}: {colliding}"
        );
    }
}

#[test]
fn padding_and_joint_state_are_validated() {
    let mut w = world();
    for bad in [f64::NAN, f64::INFINITY, -0.01, 1.01] {
        assert!(w.set_padding("left", bad).is_err(), "{bad}");
    }
    let e = w.set_padding("left/no_link", 0.1).unwrap_err().to_string();
    assert!(e.contains("left/no_link"), "{e}");
    assert!(w
        .set_padding("middle", 0.1)
        .unwrap_err()
        .to_string()
        .contains("middle"));
    w.set_padding("left", 0.02).unwrap();
    w.set_padding("left/link_2", 0.05).unwrap();
    let l2 = w.body_id("left/link_2").unwrap();
    let l1 = w.body_id("left/link_1").unwrap();
    assert_eq!((w.padding(l1), w.padding(l2)), (0.02, 0.05));
    assert_eq!(w.padding(w.body_id("right/link_1").unwrap()), 0.0);
    assert_eq!(w.body_name(l2), "left/link_2");
    assert!(w.body_id("left").is_err());
}

#[test]
fn all_pairs_collision_lists_the_overlapping_pairs() {
    let all = Selection::all();
    for seed in [31, 32, 33] {
        let mut rng = SplitMix64::new(seed);
        let mut w = world();
        let mut seen = 0;
        let mut multi = 0;
        while seen < 25 {
            randomize(&mut w, &mut rng);
            let mut want: Vec<(BodyId, BodyId)> = brute_distances(&w)
                .into_iter()
                .filter(|&(a, b, d)| d == 0.0 && !w.is_allowed(a, b))
                .map(|(a, b, _)| (a, b))
                .collect();
            want.sort();
            let c = w.check_collision(&all, &all, ContactMode::AllPairsWithTriangles);
            let got: Vec<(BodyId, BodyId)> = c.pairs.iter().map(|p| (p.a, p.b)).collect();
            assert_eq!(got, want);
            assert_eq!(c.colliding, !want.is_empty());
            assert!(c.pairs.iter().all(|p| !p.triangles.is_empty()));
            let plain = w.check_collision(&all, &all, ContactMode::AllPairs);
            assert_eq!(plain.pairs.len(), want.len());
            assert!(plain.pairs.iter().all(|p| p.triangles.is_empty()));
            if !want.is_empty() {
                seen += 1;
                multi += usize::from(want.len() > 1);
            }
        }
        assert!(
            multi > 0,
            "seed {seed}: no configuration with several pairs"
        );
    }
}

/// The first configuration (from `seed`) where exactly one body pair overlaps.
fn single_overlap(w: &mut World, seed: u64) -> (BodyId, BodyId) {
    let mut rng = SplitMix64::new(seed);
    let all = Selection::all();
    loop {
        randomize(w, &mut rng);
        let c = w.check_collision(&all, &all, ContactMode::AllPairs);
        if c.pairs.len() == 1 {
            return (c.pairs[0].a, c.pairs[0].b);
        }
    }
}

#[test]
fn run_time_allowed_collisions() {
    let all = Selection::all();
    let mut w = world();
    let matrix: Vec<(BodyId, BodyId, bool)> = w.allowed_pairs();
    assert_eq!(matrix.len(), w.scenario().collision_matrix().unwrap().len());
    assert!(matrix
        .iter()
        .all(|p| !p.2 && w.scenario().never_collide(p.0, p.1)));
    let (x, y) = single_overlap(&mut w, 5);
    let (xn, yn) = (w.body_name(x), w.body_name(y));
    assert!(!w.is_allowed(x, y));
    assert_eq!(w.set_allowed(&yn, &xn, true).unwrap(), 1);
    assert!(w.is_allowed(x, y) && w.is_allowed(y, x));
    assert!(w.allowed_pairs().contains(&(x, y, true)));
    assert!(!w.check_collision(&all, &all, ContactMode::First).colliding);
    assert!(w
        .check_collision(&all, &all, ContactMode::AllPairs)
        .pairs
        .is_empty());
    // Allowed pairs are skipped by distance and tolerance queries too.
    let d = w.min_distance(&all, &all, 0.0, 0.0).unwrap();
    assert!(d.distance > 0.0 && (d.body_a, d.body_b) != (x, y));
    let t = w.check_tolerance(0.0, &all, &all, true);
    assert!(!t.closer);
    let only = w.select(std::slice::from_ref(&xn)).unwrap();
    let other = w.select(std::slice::from_ref(&yn)).unwrap();
    assert!(w.min_distance(&only, &other, 0.0, 0.0).is_none());
    // Forbidding it again.
    assert_eq!(w.set_allowed(&xn, &yn, false).unwrap(), 1);
    assert!(!w.is_allowed(x, y));
    let c = w.check_collision(&all, &all, ContactMode::First);
    assert_eq!(c.pairs[0].a, x);
    // Every pair of the two robots.
    let (nl, nr) = (
        w.scenario().objects()[0].num_bodies(),
        w.scenario().objects()[1].num_bodies(),
    );
    assert_eq!(w.set_allowed("left", "right", true).unwrap(), nl * nr);
    assert_eq!(w.allowed_pairs().len(), nl * nr);
    assert!(w.allowed_pairs().iter().all(|p| p.2));
    assert!(w.min_distance(&all, &all, 0.0, 0.0).is_none());
    assert!(!w.check_collision(&all, &all, ContactMode::First).colliding);
    w.clear_allowed();
    assert_eq!(w.allowed_pairs(), matrix);
    // Refused: same object, unknown names.
    assert!(w.set_allowed("left/link_1", "left", true).is_err());
    let e = w
        .set_allowed("left", "nowhere/x", true)
        .unwrap_err()
        .to_string();
    assert!(e.contains("nowhere"), "{e}");
}

#[test]
fn forbidding_or_padding_a_matrix_pair_makes_it_checked() {
    let all = Selection::all();
    let mut probe = world();
    let (x, y) = single_overlap(&mut probe, 11);
    let (xn, yn) = (probe.body_name(x), probe.body_name(y));
    // A matrix (wrongly) listing the pair as never colliding.
    let mut scene: LoadedScene = load_scene(scene_path()).unwrap();
    let mut cm = scene.scenario.collision_matrix().unwrap().clone();
    cm.never_collide.push([xn.clone(), yn.clone()]);
    scene.scenario.set_collision_matrix(cm).unwrap();
    let mut w = World::new(scene);
    for o in w.robots() {
        let Object::Complex(r) = &w.scenario().objects()[o] else {
            unreachable!()
        };
        let names: Vec<String> = r.kinematics().joint_names().map(String::from).collect();
        let qv = probe.scenario().joint_positions(o).to_vec();
        w.set_joint_state(o, &names, &qv).unwrap();
    }
    assert!(w.is_allowed(x, y));
    assert!(w.allowed_pairs().contains(&(x, y, false)));
    assert!(!w.check_collision(&all, &all, ContactMode::First).colliding);
    // Distances ignore the matrix.
    assert_eq!(w.min_distance(&all, &all, 0.0, 0.0).unwrap().distance, 0.0);
    // A padding on one of the two bodies: the matrix no longer applies to the pair.
    w.set_padding(&xn, 0.001).unwrap();
    assert!(!w.is_allowed(x, y));
    assert!(w.check_collision(&all, &all, ContactMode::First).colliding);
    w.set_padding(&xn, 0.0).unwrap();
    assert!(!w.check_collision(&all, &all, ContactMode::First).colliding);
    // Forbidding it at run time.
    w.set_allowed(&xn, &yn, false).unwrap();
    assert!(!w.is_allowed(x, y));
    assert!(!w.allowed_pairs().iter().any(|p| (p.0, p.1) == (x, y)));
    let c = w.check_collision(&all, &all, ContactMode::First);
    assert!(c.colliding);
    assert_eq!((c.pairs[0].a, c.pairs[0].b), (x, y));
}

#[test]
fn tolerance_per_pair_matches_brute_force() {
    for seed in seeds(&[41, 42, 43]) {
        let mut rng = SplitMix64::new(seed);
        let mut w = world();
        w.set_padding("right/link_3", 0.01).unwrap();
        w.set_padding("left/link_5", 0.02).unwrap();
        let tol = 0.03;
        let mut checked = 0;
        for _ in 0..80 {
            randomize(&mut w, &mut rng);
            let (na, nb) = (random_names(&w, &mut rng), Vec::new());
            let (a, b) = (w.select(&na).unwrap(), w.select(&nb).unwrap());
            let rows: Vec<(BodyId, BodyId, f64, f64)> = brute_distances(&w)
                .into_iter()
                .filter(|&(x, y, _)| in_selection(&a, &b, x, y))
                .map(|(x, y, d)| (x, y, d, d - tol - w.padding(x) - w.padding(y)))
                .collect();
            if rows.iter().any(|r| r.3.abs() < 1e-9) {
                continue;
            }
            checked += 1;
            let want: Vec<(BodyId, BodyId, f64)> = rows
                .iter()
                .filter(|r| r.3 < 0.0)
                .map(|r| (r.0, r.1, (r.2 - w.padding(r.0) - w.padding(r.1)).max(0.0)))
                .collect();
            let t = w.check_tolerance(tol, &a, &b, true);
            assert_eq!(t.closer, !want.is_empty());
            assert_eq!(t.pairs.len(), want.len(), "{na:?}");
            for (p, q) in t.pairs.iter().zip(&want) {
                assert_eq!((p.a, p.b), (q.0, q.1));
                assert!(
                    (p.distance - q.2).abs() <= 1e-12,
                    "{} vs {}",
                    p.distance,
                    q.2
                );
            }
            let first = w.check_tolerance(tol, &a, &b, false);
            assert_eq!(first.closer, !want.is_empty());
            assert_eq!(first.pairs.len(), usize::from(!want.is_empty()));
            if let Some(p) = first.pairs.first() {
                let q = want.iter().find(|q| (q.0, q.1) == (p.a, p.b)).unwrap();
                assert!((p.distance - q.2).abs() <= 1e-12);
            }
        }
        assert!(checked > 60, "seed {seed}: {checked}");
    }
}

#[test]
fn check_states_equals_sequential_answers() {
    let all = Selection::all();
    for (seed, padded) in [(51, false), (52, true)] {
        let mut rng = SplitMix64::new(seed);
        let mut w = world();
        if padded {
            w.set_padding("left/link_3", 0.02).unwrap();
            w.set_allowed("left/link_6", "right", true).unwrap();
        }
        let names = joint_names(&w);
        // Columns in a shuffled order.
        let mut perm: Vec<usize> = (0..names.len()).collect();
        for k in (1..perm.len()).rev() {
            perm.swap(k, rng.below(k as u64 + 1) as usize);
        }
        let shuffled: Vec<String> = perm.iter().map(|&k| names[k].clone()).collect();
        let mut seq = w.clone();
        let mut positions = Vec::new();
        let mut want = Vec::new();
        for _ in 0..300 {
            let row = randomize(&mut seq, &mut rng);
            positions.extend(perm.iter().map(|&k| row[k]));
            let colliding = seq
                .check_collision(&all, &all, ContactMode::First)
                .colliding;
            let d = seq.min_distance(&all, &all, 0.0, 0.0).unwrap().distance;
            want.push((colliding, if colliding { 0.0 } else { d }));
        }
        let before = w.scenario().joint_positions(0).to_vec();
        let got = w.check_states(&shuffled, &positions, true).unwrap();
        assert_eq!(got.len(), want.len());
        for (g, (c, d)) in got.iter().zip(&want) {
            assert_eq!((g.colliding, g.distance), (*c, *d));
        }
        let fast = w.check_states(&shuffled, &positions, false).unwrap();
        for (g, (c, _)) in fast.iter().zip(&want) {
            assert_eq!(g.colliding, *c);
            assert!(g.distance.is_nan());
        }
        assert_eq!(w.scenario().joint_positions(0), &before[..]);
        assert!(w.check_states(&shuffled, &[], false).unwrap().is_empty());
    }
}

#[test]
fn check_states_refuses_bad_input() {
    let w = world();
    let names = joint_names(&w);
    let row = vec![0.1; names.len()];
    let err = |n: &[String], p: &[f64]| w.check_states(n, p, false).unwrap_err().to_string();
    let mut unknown = names.clone();
    unknown[3] = "left/joint_9".into();
    assert!(err(&unknown, &row).contains("joint_9"));
    let mut dup = names.clone();
    dup[2] = dup[1].clone();
    assert!(err(&dup, &row).contains("appears twice"));
    let missing = names[1..].to_vec();
    let e = err(&missing, &row[1..]);
    assert!(e.contains("missing") && e.contains(&names[0]), "{e}");
    let e = err(&names, &row[1..]);
    assert!(e.contains("whole number of rows"), "{e}");
    let mut rows = [row.clone(), row.clone(), row.clone()].concat();
    rows[2 * names.len() + 4] = f64::NAN;
    let e = err(&names, &rows);
    assert!(e.contains("row 2") && e.contains(&names[4]), "{e}");
    rows[2 * names.len() + 4] = f64::NEG_INFINITY;
    assert!(err(&names, &rows).contains("row 2"));
    assert!(err(&["middle/joint_1".to_string()], &[0.0]).contains("middle"));
}

#[test]
fn joint_state_by_name() {
    let mut w = world();
    let left = w.scenario().object_index("left").unwrap();
    let Object::Complex(r) = &w.scenario().objects()[left] else {
        unreachable!()
    };
    let joints: Vec<String> = r.kinematics().joint_names().map(String::from).collect();
    // Reversed order, with a gripper's joint the robot does not have (even NaN: ignored).
    let mut names: Vec<String> = joints.iter().rev().cloned().collect();
    let mut pos: Vec<f64> = (0..joints.len()).rev().map(|k| 0.1 * k as f64).collect();
    names.insert(2, "gripper_finger".into());
    pos.insert(2, f64::NAN);
    w.set_joint_state(left, &names, &pos).unwrap();
    let want: Vec<f64> = (0..joints.len()).map(|k| 0.1 * k as f64).collect();
    assert_eq!(w.scenario().joint_positions(left), &want[..]);
    let mut probe = w.scenario().clone();
    probe.set_joint_positions(left, &want).unwrap();
    assert_eq!(probe.body_poses(left), w.scenario().body_poses(left));

    let check = |w: &mut World, names: &[String], pos: &[f64], needle: &str| {
        let e = w.set_joint_state(left, names, pos).unwrap_err().to_string();
        assert!(e.contains(needle) && e.contains("left"), "{e}");
        assert_eq!(
            w.scenario().joint_positions(left),
            &want[..],
            "changed on error"
        );
    };
    let zeros = vec![0.0; joints.len()];
    check(&mut w, &joints[1..], &zeros[1..], &joints[0]);
    check(&mut w, &joints, &zeros[1..], "positions");
    let mut dup = joints.clone();
    dup.push(joints[3].clone());
    let mut dpos = zeros.clone();
    dpos.push(0.0);
    check(&mut w, &dup, &dpos, "twice");
    let mut nan = zeros.clone();
    nan[4] = f64::INFINITY;
    check(&mut w, &joints, &nan, &joints[4]);
    assert!(w.set_joint_state(7, &joints, &zeros).is_err());
}

#[test]
fn selection_by_names() {
    let w = world();
    assert!(w.select(&[]).unwrap().is_all());
    let s = w.select(&["right".into(), "left/link_2".into()]).unwrap();
    let nr = w.scenario().objects()[1].num_bodies();
    assert_eq!(s.bodies().len(), nr + 1);
    assert!(s.contains(w.body_id("left/link_2").unwrap()));
    assert!(!s.contains(w.body_id("left/link_3").unwrap()));
    let e = w.select(&["left".into(), "left/elbow".into()]).unwrap_err();
    assert!(e.to_string().contains("left/elbow"), "{e}");
    assert_eq!(w.robots(), vec![0, 1]);
}

// ---- scene files naming robot_description topics ----

fn topic_scene(robots: &str) -> SceneSpec {
    SceneSpec::from_yaml(
        &format!("robots:\n{robots}options: {{resolution_levels: L1L2L3, weight_matrix: false, collision_matrix: false}}\n"),
        Path::new("<test>"),
    )
    .unwrap()
}

#[test]
fn robots_from_topics_equal_robots_from_files() {
    let urdf = repo().join("urdf/rx60b.urdf");
    let spec = topic_scene(&format!(
        "  - name: left\n    robot_description: /left/robot_description\n  - name: right\n    urdf: {}\n    base: {{xyz: [0.6, 0, 0], rpy: [0, 0, 3.141592653589793]}}\n",
        urdf.display()
    ));
    assert_eq!(spec.robots[0].urdf, None);
    let mut asked = Vec::new();
    let scene = spec
        .build_with(Path::new("."), &mut |r| {
            asked.push((r.name.clone(), r.robot_description.clone()));
            Ok((
                std::fs::read_to_string(&urdf).unwrap(),
                MeshResolver::for_urdf_file(&urdf),
            ))
        })
        .unwrap();
    assert_eq!(
        asked,
        vec![(
            "left".to_string(),
            Some("/left/robot_description".to_string())
        )]
    );
    let files = topic_scene(&format!(
        "  - name: left\n    urdf: {u}\n  - name: right\n    urdf: {u}\n    base: {{xyz: [0.6, 0, 0], rpy: [0, 0, 3.141592653589793]}}\n",
        u = urdf.display()
    ))
    .build(Path::new("."))
    .unwrap();
    let (mut a, mut b) = (World::new(scene), World::new(files));
    let all = Selection::all();
    let mut rng = SplitMix64::new(61);
    for _ in 0..40 {
        let q = randomize(&mut a, &mut rng);
        let names = joint_names(&b);
        b.check_states(&names, &q, true).unwrap();
        let mut k = 0;
        for o in b.robots() {
            let Object::Complex(r) = &b.scenario().objects()[o] else {
                unreachable!()
            };
            let jn: Vec<String> = r.kinematics().joint_names().map(String::from).collect();
            let n = jn.len();
            b.set_joint_state(o, &jn, &q[k..k + n]).unwrap();
            k += n;
        }
        assert_eq!(a.scenario().body_poses(0), b.scenario().body_poses(0));
        assert_eq!(
            a.check_collision(&all, &all, ContactMode::First),
            b.check_collision(&all, &all, ContactMode::First)
        );
        assert_eq!(
            a.min_distance(&all, &all, 0.0, 0.0),
            b.min_distance(&all, &all, 0.0, 0.0)
        );
    }
    // The closure's error is passed on.
    let e = spec
        .build_with(Path::new("."), &mut |_| {
            Err(SceneError::Invalid("no publisher".into()))
        })
        .unwrap_err();
    assert_eq!(e.to_string(), "no publisher");
}

#[test]
fn build_refuses_topic_robots_and_bad_entries() {
    let spec = topic_scene("  - name: left\n    robot_description: /left/robot_description\n");
    let e = spec.build(Path::new(".")).unwrap_err().to_string();
    assert_eq!(
        e,
        "robot `left` names the topic /left/robot_description; only the proximity_query node \
         reads robot descriptions from topics — give `urdf:` for this tool"
    );
    let both = topic_scene("  - name: left\n    urdf: x.urdf\n    robot_description: /d\n");
    let e = both
        .build_with(Path::new("."), &mut |_| unreachable!())
        .unwrap_err();
    assert!(e.to_string().contains("both"), "{e}");
    let neither = topic_scene("  - name: left\n");
    let e = neither
        .build_with(Path::new("."), &mut |_| unreachable!())
        .unwrap_err();
    assert!(e.to_string().contains("neither"), "{e}");
    // Unknown keys are still refused.
    assert!(SceneSpec::from_yaml(
        "robots:\n  - name: left\n    robot_descripton: /d\n",
        Path::new("<test>")
    )
    .is_err());
}

/// Throughput of `check_states` (collision only, 10,000 random configurations, 2
/// threads): `cargo test --release -p rpq_scene --test world -- --ignored --nocapture`.
#[test]
#[ignore]
fn check_states_throughput() {
    let w = world();
    let names = joint_names(&w);
    let mut probe = w.clone();
    let mut rng = SplitMix64::new(71);
    let mut positions = Vec::new();
    for _ in 0..10_000 {
        positions.extend(randomize(&mut probe, &mut rng));
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    let mut best = f64::INFINITY;
    let mut colliding = 0;
    for _ in 0..5 {
        let t = std::time::Instant::now();
        let r = pool.install(|| w.check_states(&names, &positions, false).unwrap());
        best = best.min(t.elapsed().as_secs_f64());
        colliding = r.iter().filter(|a| a.colliding).count();
    }
    println!(
        "check_states: 10000 configurations (collision only, 2 threads) in {:.2} ms = {:.0} configurations/s ({colliding} colliding)",
        best * 1e3,
        10_000.0 / best
    );
}
