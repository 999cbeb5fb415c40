//! Property tests: the hierarchical queries against the all-pairs oracle.

mod common;
use common::*;

use nalgebra::{Isometry3, Point3, Vector3};
use proptest::prelude::*;
use rpq_proximity::*;

/// A random mesh: a triangle soup, a closed box or a tessellated sphere.
fn mesh_strategy() -> impl Strategy<Value = Model> {
    prop_oneof![
        prop::collection::vec(prop::array::uniform9(-0.5f64..0.5), 1..40).prop_filter_map(
            "degenerate",
            |ts| {
                let mut v = Vec::new();
                let mut t = Vec::new();
                for (k, c) in ts.iter().enumerate() {
                    // small triangles spread over the cube
                    let base = Vector3::new(c[0], c[1], c[2]);
                    for i in 0..3 {
                        v.push(Point3::from(
                            base + Vector3::new(c[3 * i], c[3 * i + 1], c[3 * i + 2]) * 0.4,
                        ));
                    }
                    let k = 3 * k as u32;
                    t.push([k, k + 1, k + 2]);
                }
                Model::new(v, t).ok()
            }
        ),
        (0.05f64..0.6, 0.05f64..0.6, 0.05f64..0.6)
            .prop_map(|(x, y, z)| box_mesh(Vector3::new(x, y, z))),
        (0.05f64..0.5, 3usize..10).prop_map(|(r, n)| sphere_mesh(r, n)),
    ]
}

fn pose_strategy() -> impl Strategy<Value = Isometry3<f64>> {
    (
        prop::array::uniform3(-1.0f64..1.0),
        prop::array::uniform3(-3.2f64..3.2),
    )
        .prop_map(|(t, r)| pose(t, r))
}

fn dist_point_triangle(p: &Point3<f64>, t: &[Point3<f64>; 3]) -> f64 {
    let q =
        triangle::closest_point_on_triangle(&p.coords, &t[0].coords, &t[1].coords, &t[2].coords);
    (p.coords - q).norm()
}

/// 512 cases by default; `PROPTEST_CASES=N` for a longer run.
fn config() -> ProptestConfig {
    let mut c = ProptestConfig::default();
    if std::env::var_os("PROPTEST_CASES").is_none() {
        c.cases = 512;
    }
    c
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn collision_matches_brute(a in mesh_strategy(), b in mesh_strategy(), pa in pose_strategy(), pb in pose_strategy()) {
        let mut ws = QueryWorkspace::default();
        let brute_all = brute::collide(&pa, &a, &pb, &b, CollisionMode::AllContacts);
        let all = collide(&pa, &a, &pb, &b, CollisionMode::AllContacts, &mut ws);
        let mut p1 = all.pairs.clone();
        p1.sort_unstable();
        let mut p2 = brute_all.pairs.clone();
        p2.sort_unstable();
        prop_assert_eq!(all.colliding, brute_all.colliding);
        prop_assert_eq!(p1, p2);
        let first = collide(&pa, &a, &pb, &b, CollisionMode::FirstContact, &mut ws);
        prop_assert_eq!(first.colliding, brute_all.colliding);
        prop_assert_eq!(first.pairs.len(), usize::from(brute_all.colliding));
        if let Some(p) = first.pairs.first() {
            prop_assert!(brute_all.pairs.contains(p));
        }
        prop_assert_eq!(intersects(&pa, &a, &pb, &b, &mut ws), brute_all.colliding);
        // local form
        let local = collide_local(&pa.inv_mul(&pb), &a, &b, CollisionMode::FirstContact, &mut ws);
        prop_assert_eq!(local.colliding, brute_all.colliding);
    }

    #[test]
    fn distance_matches_brute(a in mesh_strategy(), b in mesh_strategy(), pa in pose_strategy(), pb in pose_strategy(),
                              frac in 0.2f64..2.0, rel in 0.0f64..0.5, abs in 0.0f64..0.1) {
        let mut ws = QueryWorkspace::default();
        let bd = brute::distance(&pa, &a, &pb, &b);
        let colliding = brute::collide(&pa, &a, &pb, &b, CollisionMode::FirstContact).colliding;
        prop_assert_eq!(bd.distance == 0.0, colliding);
        for _repeat in 0..2 { // second round starts from the cached pair
            let d = distance(&pa, &a, &pb, &b, &DistanceRequest::default(), &mut ws).unwrap();
            prop_assert!((d.distance - bd.distance).abs() <= 1e-9 * bd.distance.max(1e-12),
                "bvh {} brute {}", d.distance, bd.distance);
            // witnesses on their triangles (world frame) and at the reported distance
            let ta = a.triangle(d.triangle_a as usize).map(|p| pa * p);
            let tb = b.triangle(d.triangle_b as usize).map(|p| pb * p);
            prop_assert!(dist_point_triangle(&d.point_a, &ta) < 1e-9);
            prop_assert!(dist_point_triangle(&d.point_b, &tb) < 1e-9);
            prop_assert!(((d.point_a - d.point_b).norm() - d.distance).abs() < 1e-9);
        }
        // local form: points in a's frame
        let dl = distance_local(&pa.inv_mul(&pb), &a, &b, &DistanceRequest::default(), &mut ws).unwrap();
        prop_assert!((dl.distance - bd.distance).abs() <= 1e-9 * bd.distance.max(1e-12));
        prop_assert!(dist_point_triangle(&dl.point_a, &a.triangle(dl.triangle_a as usize)) < 1e-9);
        // upper bound: None iff distance >= bound
        let ub = bd.distance * frac;
        let mut fresh = QueryWorkspace::default();
        let r = distance(&pa, &a, &pb, &b, &DistanceRequest::with_upper_bound(ub), &mut fresh);
        prop_assert_eq!(r.is_none(), bd.distance >= ub);
        if let Some(r) = r {
            prop_assert!((r.distance - bd.distance).abs() <= 1e-9 * bd.distance.max(1e-12));
        }
        // error allowances
        let req = DistanceRequest { rel_err: rel, abs_err: abs, upper_bound: f64::INFINITY };
        let r = distance(&pa, &a, &pb, &b, &req, &mut fresh).unwrap();
        // (never below the true distance beyond rounding: the query works in a's frame, the brute
        // force in the world frame, so the two differ by a few ulps of the coordinates — 3e-17 m
        // on a 3e-5 m distance in a saved case, 1e-12 of it)
        prop_assert!(r.distance >= bd.distance - 1e-9 * bd.distance.max(1e-12),
            "{} below the brute force {}", r.distance, bd.distance);
        prop_assert!(r.distance - bd.distance <= (rel * bd.distance).max(abs) + 1e-12);
        let ta = a.triangle(r.triangle_a as usize).map(|p| pa * p);
        prop_assert!(dist_point_triangle(&r.point_a, &ta) < 1e-9);
        // tolerance
        for t in [bd.distance * frac, bd.distance * 0.999, bd.distance * 1.001, 0.0] {
            let tr = tolerance(&pa, &a, &pb, &b, t, &mut ws);
            prop_assert_eq!(tr.closer_than, bd.distance < t, "t {} d {}", t, bd.distance);
            if let Some(w) = tr.witness {
                prop_assert!(w.distance < t && w.distance >= bd.distance - 1e-9 * bd.distance.max(1e-12));
            }
        }
        // root lower bound
        prop_assert!(distance_lower_bound(&pa, &a, &pb, &b) <= bd.distance * (1.0 + 1e-12) + 1e-15);
        // box-level bound via the public Obb
        let oa = a.bounding_box().transformed(&pa);
        let ob = b.bounding_box().transformed(&pb);
        prop_assert!(oa.distance_lower_bound(&ob) <= bd.distance * (1.0 + 1e-12) + 1e-15);
        if colliding {
            prop_assert!(oa.intersects(&ob));
        }
    }
}
