//! The collision matrix: YAML round trip, never skipping a pair that collides in an
//! independent random sample or in a hand-built reaching configuration, soundness of the
//! proven bounds, rejection of edited files with unknown names or stale poses.

mod common;

use std::path::Path;

use nalgebra::Isometry3;
use rpq_scene::cmatrix::{Reason, MIN_REFINE_EVALUATIONS, MIN_REFINE_STARTS, MIN_SAMPLES};
use rpq_scene::{
    eval, generate_collision_matrix, Body, BodyId, CollisionMatrix, GeneratorSettings,
    QueryOptions, Scenario, SceneError, SimpleObject,
};

fn settings(samples: usize) -> GeneratorSettings {
    GeneratorSettings::sampling(samples, 0.05, 1)
}

fn ids(s: &Scenario, a: usize, b: usize) -> Vec<(BodyId, BodyId)> {
    let nb = s.objects()[b].num_bodies();
    (0..s.objects()[a].num_bodies())
        .flat_map(|i| {
            (0..nb).map(move |j| (BodyId { object: a, body: i }, BodyId { object: b, body: j }))
        })
        .collect()
}

fn find(s: &Scenario, name: &str) -> BodyId {
    let (o, l) = name.split_once('/').unwrap();
    let object = s.object_index(o).unwrap();
    let body = (0..s.objects()[object].num_bodies())
        .find(|&i| s.objects()[object].body(i).name == l)
        .unwrap();
    BodyId { object, body }
}

/// Both arms stretched horizontally towards each other (joint 2 chosen by forward
/// kinematics so that the left flange points to +x).
fn stretched_towards_each_other(s: &mut Scenario) -> [f64; 6] {
    let r = common::rx60();
    let k = r.kinematics().link_index("tool0").unwrap();
    let q = [1.0, -1.0]
        .into_iter()
        .map(|sign| [0.0, sign * std::f64::consts::FRAC_PI_2, 0.0, 0.0, 0.0, 0.0])
        .find(|q| r.forward_kinematics(q).unwrap()[k].translation.x > 0.6)
        .expect("one sign of joint 2 points the arm to +x");
    s.set_joint_positions(0, &q).unwrap();
    s.set_joint_positions(1, &q).unwrap();
    q
}

#[test]
fn arms_reaching_across_1_2_m_are_not_skipped() {
    // Shoulders 1.2 m apart, reach 0.665 m each plus the link thickness: the distal links
    // overlap when both arms point at each other.
    let mut s = eval::pair_scenario(common::rx60(), 1.2).unwrap();
    let q = stretched_towards_each_other(&mut s);
    let c = s.collide(&QueryOptions::ALL_OFF);
    assert!(c.colliding, "{q:?}");
    let overlapping: Vec<(BodyId, BodyId)> = ids(&s, 0, 1)
        .into_iter()
        .filter(|&(a, b)| s.body_distance(a, b).unwrap().distance == 0.0)
        .collect();
    // The wrists (link_5) meet; the forearms (link_4) and flanges (link_6) cross them.
    let l5 = (find(&s, "left/link_5"), find(&s, "right/link_5"));
    let names: Vec<String> = overlapping
        .iter()
        .map(|&(a, b)| format!("{}/{}", s.body_name(a), s.body_name(b)))
        .collect();
    assert!(
        overlapping.contains(&l5) && overlapping.len() >= 3,
        "{names:?}"
    );
    // Few samples: the proof and the local refinement must do the work.
    let cm = generate_collision_matrix(&s, &settings(300), None).unwrap();
    let mut with = eval::pair_scenario(common::rx60(), 1.2).unwrap();
    with.set_collision_matrix(cm.clone()).unwrap();
    stretched_towards_each_other(&mut with);
    for &(a, b) in &overlapping {
        assert!(
            !with.never_collide(a, b),
            "{} / {} overlap but are skipped",
            with.body_name(a),
            with.body_name(b)
        );
    }
    // The optimized query agrees with the plain one here.
    assert!(with.collide(&QueryOptions::ALL_ON).colliding);
    // The bases and shoulders cannot reach each other: proven, and the matrix is useful.
    let base = cm
        .decisions
        .iter()
        .find(|d| d.pair == ["left/base_link".to_string(), "right/base_link".to_string()])
        .unwrap();
    assert!(
        base.never && base.reason == Reason::Proven && base.closest > 0.9,
        "{base:?}"
    );
    assert!(cm.len() >= 10 && cm.len() < 49, "{} never pairs", cm.len());
    // Every decision is consistent with the list.
    assert_eq!(cm.decisions.len(), 49);
    for d in &cm.decisions {
        let listed = cm.never_collide.iter().any(|p| {
            (p[0] == d.pair[0] && p[1] == d.pair[1]) || (p[0] == d.pair[1] && p[1] == d.pair[0])
        });
        assert_eq!(listed, d.never, "{d:?}");
        assert_eq!(cm.never_collides(&d.pair[1], &d.pair[0]), listed, "{d:?}");
        assert_eq!(d.never, d.closest >= 0.05, "{d:?}");
    }
}

#[test]
fn proven_pairs_are_really_far_apart() {
    for d in [0.4, 0.9, 1.2] {
        let mut s = eval::pair_scenario(common::rx60(), d).unwrap();
        let cm = generate_collision_matrix(&s, &settings(200), None).unwrap();
        let proven: Vec<(BodyId, BodyId, f64)> = cm
            .decisions
            .iter()
            .filter(|x| x.reason == Reason::Proven)
            .map(|x| (find(&s, &x.pair[0]), find(&s, &x.pair[1]), x.closest))
            .collect();
        assert!(!proven.is_empty(), "d = {d}");
        let mut rng = rpq_base::SplitMix64::new(0x5eed + (d * 10.0) as u64);
        let mut near = false;
        for _ in 0..400 {
            let qa = common::random_q(common::rx60(), &mut rng);
            let qb = common::random_q(common::rx60(), &mut rng);
            s.set_joint_positions(0, &qa).unwrap();
            s.set_joint_positions(1, &qb).unwrap();
            for &(a, b, bound) in &proven {
                assert!(bound >= 0.05);
                assert!(
                    !s.bodies_closer_than(a, b, bound),
                    "d = {d}: {} / {} closer than the proven {bound} at {qa:?} {qb:?}",
                    s.body_name(a),
                    s.body_name(b)
                );
                near = near || s.bodies_closer_than(a, b, bound + 0.25);
            }
        }
        assert!(
            near,
            "d = {d}: no proven pair came within 0.25 m of its bound"
        );
    }
}

#[test]
fn prismatic_travel_is_in_the_bound_and_the_search_reaches_the_limit() {
    // A carriage (cube 0.05) sliding on x in [-1, 1] at height 0.5 above a rail (cube 0.1),
    // and three boxes (cube 0.1) at height 0.5: far (gap 0.35), just beyond the margin
    // (gap 0.1) and within it (gap 0.02), all reached at the upper limit only.
    let slider = common::slider();
    let mut s = Scenario::new();
    s.add_robot(slider).unwrap();
    for (name, x) in [("far", 1.5), ("beyond", 1.25), ("within", 1.17)] {
        s.add_object(SimpleObject {
            name: name.into(),
            body: Body::from_trimesh(name, &common::cube(0.1)).unwrap(),
            pose: Isometry3::translation(x, 0.0, 0.5),
        })
        .unwrap();
    }
    let cm = generate_collision_matrix(&s, &settings(100), None).unwrap();
    let get = |a: &str, b: &str| {
        cm.decisions
            .iter()
            .find(|d| d.pair == [a.to_string(), b.to_string()])
            .unwrap_or_else(|| panic!("{a} {b}"))
            .clone()
    };
    // Carriage reaches x = 1.05; the sphere about the rail origin has radius
    // |(1, 0, 0.5)| + |(0.05, 0.05, 0.05)| = 1.2047.
    let far = get("slider/carriage", "far/far");
    assert!(far.never && far.reason == Reason::Proven, "{far:?}");
    assert!(far.closest <= 0.35 && far.closest > 0.15, "{far:?}");
    let beyond = get("slider/carriage", "beyond/beyond");
    assert!(
        beyond.never && beyond.reason == Reason::Searched,
        "{beyond:?}"
    );
    assert!((beyond.closest - 0.1).abs() < 1e-3, "{beyond:?}");
    let within = get("slider/carriage", "within/within");
    assert!(!within.never, "{within:?}");
    assert!(within.closest < 0.05, "{within:?}");
    // Fixed bodies: exact distances (rail top face at z 0.1, boxes from z 0.4; `beyond` and `within` overlap).
    let rail = get("slider/rail", "far/far");
    assert!(rail.never && rail.reason == Reason::Proven, "{rail:?}");
    let between = get("beyond/beyond", "within/within");
    assert_eq!(between.reason, Reason::Fixed, "{between:?}");
    assert!(between.closest == 0.0 && !between.never, "{between:?}"); // they overlap
}

#[test]
fn hand_written_and_older_files_load() {
    let text = "generator: {samples: 100, margin: 0.05, seed: 1}\n\
                objects:\n\
                \x20 - name: left\n\
                \x20   pose: {xyz: [0, 0, 0], rpy: [0, 0, 0]}\n\
                \x20 - name: right\n\
                \x20   pose: {xyz: [0.6, 0, 0], rpy: [0, 0, 3.141592653589793]}\n\
                never_collide:\n\
                \x20 - [left/base_link, right/base_link]\n";
    let cm = CollisionMatrix::from_yaml(text, Path::new("old.yaml")).unwrap();
    assert!(cm.decisions.is_empty());
    assert_eq!(cm.generator.as_ref().unwrap().refine_starts, 8);
    let mut s = eval::pair_scenario(common::rx60(), 0.6).unwrap();
    s.set_collision_matrix(cm.clone()).unwrap();
    assert_eq!(s.skipped_pairs(0, 1), 1);
    // Written back, it stays the same (no decisions invented).
    let back = CollisionMatrix::from_yaml(&cm.to_yaml(), Path::new("x.yaml")).unwrap();
    assert_eq!(back, cm);
}

#[test]
fn generated_matrix_round_trips_through_yaml() {
    let s = common::pair_with_cm(0.5);
    let cm = s.collision_matrix().unwrap().clone();
    assert!(!cm.is_empty() && cm.len() < 49);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cm.yaml");
    cm.save(&path).unwrap();
    let back = CollisionMatrix::load(&path).unwrap();
    assert_eq!(back, cm);
    // And it attaches to the same scenario.
    let mut s2 = eval::pair_scenario(common::rx60(), 0.5).unwrap();
    s2.set_collision_matrix(back).unwrap();
    for i in 0..7 {
        for j in 0..7 {
            let (a, b) = (BodyId { object: 0, body: i }, BodyId { object: 1, body: j });
            assert_eq!(s.never_collide(a, b), s2.never_collide(a, b));
        }
    }
}

#[test]
fn never_skips_a_pair_that_collides_in_an_independent_sample() {
    for d in [0.4, 0.6, 0.8] {
        let mut s = common::pair_with_cm(d);
        let never: Vec<(BodyId, BodyId)> = (0..7)
            .flat_map(|i| {
                (0..7).map(move |j| (BodyId { object: 0, body: i }, BodyId { object: 1, body: j }))
            })
            .filter(|&(a, b)| s.never_collide(a, b))
            .collect();
        assert!(!never.is_empty());
        let mut rng = rpq_base::SplitMix64::new(0xdead_beef);
        let mut near_misses = 0;
        for _ in 0..3000 {
            let qa = common::random_q(common::rx60(), &mut rng);
            let qb = common::random_q(common::rx60(), &mut rng);
            s.set_joint_positions(0, &qa).unwrap();
            s.set_joint_positions(1, &qb).unwrap();
            for &(a, b) in &never {
                // Not even within half the margin.
                assert!(
                    !s.bodies_closer_than(a, b, 0.025),
                    "d = {d}: {} / {} at {qa:?} {qb:?}",
                    s.body_name(a),
                    s.body_name(b)
                );
                near_misses += usize::from(s.bodies_closer_than(a, b, 0.05));
            }
        }
        // The margin is a real allowance, not slack that nothing ever uses.
        let _ = near_misses;
    }
}

#[test]
fn edited_files_with_unknown_names_or_moved_robots_are_rejected() {
    let s = common::pair_with_cm(0.6);
    let text = s.collision_matrix().unwrap().to_yaml();
    let mut fresh = eval::pair_scenario(common::rx60(), 0.6).unwrap();
    let p = Path::new("edited.yaml");
    // Unknown link.
    let bad = text.replacen("right/link_1\"", "right/link_9\"", 1);
    assert_ne!(bad, text);
    let cm = CollisionMatrix::from_yaml(&bad, p).unwrap();
    let e = fresh.set_collision_matrix(cm).unwrap_err();
    assert!(
        matches!(&e, SceneError::CollisionMatrix { message } if message.contains("link_9")),
        "{e}"
    );
    // Unknown robot.
    let bad = text.replacen("\"left/", "\"lefty/", 1);
    let e = fresh
        .set_collision_matrix(CollisionMatrix::from_yaml(&bad, p).unwrap())
        .unwrap_err();
    assert!(e.to_string().contains("lefty"), "{e}");
    // Unknown field: a YAML error with a line number.
    let bad = text.replace("never_collide:", "never_colide:");
    let e = CollisionMatrix::from_yaml(&bad, p).unwrap_err();
    assert!(matches!(e, SceneError::Yaml { line: Some(_), .. }), "{e}");
    // Computed for another base distance.
    let moved = eval::pair_scenario(common::rx60(), 0.7).unwrap();
    let cm = CollisionMatrix::from_yaml(&text, p).unwrap();
    let mut moved = moved;
    let e = moved.set_collision_matrix(cm).unwrap_err();
    assert!(e.to_string().contains("regenerate"), "{e}");
    // A hand-edited valid file (pair removed) loads.
    let mut cm = CollisionMatrix::from_yaml(&text, p).unwrap();
    cm.never_collide.pop();
    fresh.set_collision_matrix(cm).unwrap();
    // Negative margins are refused.
    let e = generate_collision_matrix(
        &fresh,
        &GeneratorSettings {
            samples: 10,
            margin: -1.0,
            seed: 1,
            ..GeneratorSettings::default()
        },
        None,
    )
    .unwrap_err();
    assert!(e.to_string().contains("margin"));
}

#[test]
fn searches_too_small_to_give_evidence_are_refused() {
    // Issue 12: with 0 samples (or an empty local search) the pairs the proof leaves open
    // were listed as never colliding without a single distance query.
    let s = eval::pair_scenario(common::rx60(), 0.6).unwrap();
    let ok = GeneratorSettings {
        samples: MIN_SAMPLES,
        refine_starts: MIN_REFINE_STARTS,
        refine_evaluations: MIN_REFINE_EVALUATIONS,
        ..GeneratorSettings::default()
    };
    assert_eq!(
        (MIN_SAMPLES, MIN_REFINE_STARTS, MIN_REFINE_EVALUATIONS),
        (100, 1, 50)
    );
    let cases = [
        (
            "samples",
            GeneratorSettings {
                samples: 0,
                ..ok.clone()
            },
            100,
        ),
        (
            "samples",
            GeneratorSettings {
                samples: 99,
                ..ok.clone()
            },
            100,
        ),
        (
            "refine_evaluations",
            GeneratorSettings {
                refine_evaluations: 0,
                ..ok.clone()
            },
            50,
        ),
        (
            "refine_evaluations",
            GeneratorSettings {
                samples: 10,
                refine_evaluations: 0,
                ..ok.clone()
            },
            100,
        ),
        (
            "refine_starts",
            GeneratorSettings {
                refine_starts: 0,
                ..ok.clone()
            },
            1,
        ),
    ];
    for (name, g, minimum) in cases {
        let e = generate_collision_matrix(&s, &g, None).unwrap_err();
        match &e {
            SceneError::GeneratorSetting {
                setting,
                minimum: m,
                ..
            } => {
                // Several too small: the first in field order is named.
                let want = if g.samples < MIN_SAMPLES {
                    "samples"
                } else {
                    name
                };
                assert_eq!((*setting, *m), (want, minimum), "{e}");
            }
            _ => panic!("{name}: {e}"),
        }
        assert!(e.to_string().contains(&format!("minimum {minimum}")), "{e}");
        assert!(g.validate().is_err());
    }
    // The smallest accepted search is accepted and keeps the overlapping pose colliding.
    let cm = generate_collision_matrix(&s, &ok, None).unwrap();
    let mut with = eval::pair_scenario(common::rx60(), 0.6).unwrap();
    with.set_collision_matrix(cm).unwrap();
    let q = [0.0, 0.8, 0.5, 0.0, 0.0, 0.0];
    with.set_joint_positions(0, &q).unwrap();
    with.set_joint_positions(1, &q).unwrap();
    assert!(with.collide(&QueryOptions::ALL_OFF).colliding);
    assert!(with.collide(&QueryOptions::ALL_ON).colliding);
}
