//! Robot–robot and robot–object minimum distance: equal to the minimum over every link
//! pair of the engine's exact distance, witness points on the surfaces at the reported
//! distance, brute force on the closest pair.

mod common;

use std::sync::Arc;

use nalgebra::{Isometry3, Point3, Vector3};
use rpq_proximity::{DistanceRequest, Model, QueryWorkspace};
use rpq_scene::{eval, Body, BodyId, QueryOptions, Scenario, SimpleObject};

fn surface_distance(s: &Scenario, id: BodyId, p: &Point3<f64>) -> f64 {
    let body = s.objects()[id.object].body(id.body);
    let pose = s.body_poses(id.object)[id.body];
    let local = pose.inverse() * p;
    (0..body.model.num_triangles())
        .map(|t| {
            let [a, b, c] = body.model.triangle(t);
            let q = rpq_proximity::triangle::closest_point_on_triangle(
                &local.coords,
                &a.coords,
                &b.coords,
                &c.coords,
            );
            (q - local.coords).norm()
        })
        .fold(f64::INFINITY, f64::min)
}

fn all_pairs_min(s: &Scenario, a: usize, b: usize) -> (f64, BodyId, BodyId) {
    let mut ws = QueryWorkspace::default();
    let mut best = (
        f64::INFINITY,
        BodyId { object: 0, body: 0 },
        BodyId { object: 0, body: 0 },
    );
    for i in 0..s.objects()[a].num_bodies() {
        for j in 0..s.objects()[b].num_bodies() {
            let r = rpq_proximity::distance(
                &s.body_poses(a)[i],
                &s.objects()[a].body(i).model,
                &s.body_poses(b)[j],
                &s.objects()[b].body(j).model,
                &DistanceRequest::default(),
                &mut ws,
            )
            .unwrap();
            if r.distance < best.0 {
                best = (
                    r.distance,
                    BodyId { object: a, body: i },
                    BodyId { object: b, body: j },
                );
            }
        }
    }
    best
}

#[test]
fn robot_robot_distance_is_the_minimum_over_all_link_pairs() {
    let g = eval::grid(common::rx60());
    let mut checked_brute = 0;
    for (n, d) in [0.4, 0.6, 0.8, 1.2].into_iter().enumerate() {
        let mut s = eval::pair_scenario(common::rx60(), d).unwrap();
        for k in common::grid_subset(1511, 3 * n) {
            eval::set_pair(&mut s, &g, k).unwrap();
            let r = s.min_distance(&QueryOptions::ALL_ON).unwrap();
            let (m, ba, bb) = all_pairs_min(&s, 0, 1);
            assert!(
                (r.distance - m).abs() <= 1e-12 * m.max(1.0),
                "d = {d}, pair {k}: {} vs {m}",
                r.distance
            );
            if r.distance > 0.0 {
                assert_eq!((r.body_a, r.body_b), (ba, bb));
                assert!(((r.point_a - r.point_b).norm() - r.distance).abs() < 1e-12);
                assert!(surface_distance(&s, r.body_a, &r.point_a) < 1e-9);
                assert!(surface_distance(&s, r.body_b, &r.point_b) < 1e-9);
            }
            // Brute force (all triangle pairs) on the closest pair when the meshes are small.
            let (ma, mb) = (
                &s.objects()[0].body(r.body_a.body).model,
                &s.objects()[1].body(r.body_b.body).model,
            );
            if ma.num_triangles() * mb.num_triangles() < 5_000_000 {
                let b = rpq_proximity::brute::distance(
                    &s.body_poses(0)[r.body_a.body],
                    ma,
                    &s.body_poses(1)[r.body_b.body],
                    mb,
                );
                assert!((b.distance - r.distance).abs() <= 1e-9 * r.distance.max(1e-3));
                checked_brute += 1;
            }
            // And on the two wrist links, whatever the closest pair (once per distance).
            if k >= 1511 {
                continue;
            }
            let (a, b) = (BodyId { object: 0, body: 6 }, BodyId { object: 1, body: 5 });
            let e = s.body_distance(a, b).unwrap();
            let bf = rpq_proximity::brute::distance(
                &s.body_poses(0)[6],
                &s.objects()[0].body(6).model,
                &s.body_poses(1)[5],
                &s.objects()[1].body(5).model,
            );
            assert!((e.distance - bf.distance).abs() <= 1e-9 * bf.distance.max(1e-3));
            checked_brute += 1;
        }
    }
    assert!(checked_brute >= 4);
}

fn box_model(half: Vector3<f64>) -> Model {
    let (v, t) = common::box_mesh(half);
    Model::new(v, t).unwrap()
}

#[test]
fn robot_object_distance_and_collision() {
    let mut s = Scenario::new();
    let arm = s
        .add_robot(common::rx60().instance("arm", Isometry3::identity()))
        .unwrap();
    let table = s
        .add_object(SimpleObject {
            name: "table".into(),
            body: Body::from_model("table", Arc::new(box_model(Vector3::new(0.2, 0.3, 0.02)))),
            pose: Isometry3::translation(0.5, 0.0, 0.3),
        })
        .unwrap();
    let mut rng = rpq_base::SplitMix64::new(5);
    let mut hits = 0;
    for _ in 0..40 {
        let q = common::random_q(common::rx60(), &mut rng);
        s.set_joint_positions(arm, &q).unwrap();
        let r = s
            .distance_between(arm, table, &QueryOptions::ALL_ON)
            .unwrap();
        let (m, _, _) = all_pairs_min(&s, arm, table);
        assert!((r.distance - m).abs() <= 1e-12 * m.max(1.0));
        assert_eq!(
            r.body_b,
            BodyId {
                object: table,
                body: 0
            }
        );
        let on = s.collide(&QueryOptions::ALL_ON).colliding;
        let off = s.collide(&QueryOptions::ALL_OFF).colliding;
        assert_eq!(on, off);
        assert_eq!(on, m == 0.0);
        hits += usize::from(on);
    }
    assert!(hits > 0 && hits < 40, "{hits}");
}
