//! Every optimization changes speed only: the same answers (colliding, minimum distance,
//! closest link pair) with any combination of options, on a sampled subset of the sweep.

mod common;

use rpq_scene::{eval, QueryOptions, ResolutionLevels};

fn all_options() -> Vec<QueryOptions> {
    let mut v = Vec::new();
    for resolution_levels in ResolutionLevels::ALL {
        for weight_matrix in [false, true] {
            for collision_matrix in [false, true] {
                v.push(QueryOptions {
                    resolution_levels,
                    weight_matrix,
                    collision_matrix,
                });
            }
        }
    }
    v
}

#[test]
fn collision_answers_do_not_depend_on_the_options() {
    let g = eval::grid(common::rx60());
    let opts = all_options();
    let mut colliding_seen = 0;
    for (n, d) in [0.4, 0.5, 0.6, 0.7, 0.8].into_iter().enumerate() {
        let base = common::pair_with_cm(d);
        // One scenario copy per option set, so each keeps its own weight matrix.
        let mut copies: Vec<_> = opts.iter().map(|_| base.clone()).collect();
        for k in common::grid_subset(23, n) {
            let mut answers = Vec::new();
            for (s, o) in copies.iter_mut().zip(&opts) {
                eval::set_pair(s, &g, k).unwrap();
                answers.push(s.collide(o).colliding);
            }
            assert!(
                answers.iter().all(|&a| a == answers[0]),
                "d = {d}, pair {k}: {answers:?}"
            );
            colliding_seen += usize::from(answers[0]);
        }
    }
    // The sample exercises both answers.
    assert!(colliding_seen > 20, "{colliding_seen}");
}

#[test]
fn query_rows_are_identical_with_all_options_on_and_off() {
    let g = eval::grid(common::rx60());
    for (n, d) in [0.4, 0.6, 0.8].into_iter().enumerate() {
        let mut on = common::pair_with_cm(d);
        let mut off = on.clone();
        for k in common::grid_subset(331, 7 * n) {
            eval::set_pair(&mut on, &g, k).unwrap();
            eval::set_pair(&mut off, &g, k).unwrap();
            let (c1, r1) = on.query(&QueryOptions::ALL_ON).unwrap();
            let (c2, r2) = off.query(&QueryOptions::ALL_OFF).unwrap();
            assert_eq!(c1, c2, "d = {d}, pair {k}");
            assert_eq!(r1.distance, r2.distance, "d = {d}, pair {k}");
            assert_eq!(
                (r1.body_a, r1.body_b),
                (r2.body_a, r2.body_b),
                "d = {d}, pair {k}"
            );
            assert_eq!(c1, r1.distance == 0.0);
        }
    }
}
