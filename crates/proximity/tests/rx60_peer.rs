//! RX60 link meshes: the hierarchy against the brute-force oracle and against parry3d-f64.

use nalgebra::{Isometry3, Translation3, UnitQuaternion, Vector3};
use parry3d_f64::math::{Pose, Rotation, Vector};
use rpq_proximity::*;

fn load(name: &str) -> Model {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../meshes/rx60b");
    Model::from_stl_file(format!("{dir}/{name}.stl")).unwrap()
}

fn to_parry(p: &Isometry3<f64>) -> Pose {
    let q = p.rotation.quaternion();
    Pose::from_parts(
        Vector::new(p.translation.x, p.translation.y, p.translation.z),
        Rotation::from_xyzw(q.i, q.j, q.k, q.w),
    )
}

fn parry_mesh(m: &Model) -> parry3d_f64::shape::TriMesh {
    let v = m
        .vertices()
        .iter()
        .map(|p| Vector::new(p.x, p.y, p.z))
        .collect();
    parry3d_f64::shape::TriMesh::new(v, m.triangles().to_vec()).unwrap()
}

/// Poses of b around a: random directions at 0.2-1.0 of the bounding radii sum.
fn poses(a: &Model, b: &Model, n: usize, seed: u64) -> Vec<Isometry3<f64>> {
    let (ba, bb) = (a.bounding_box(), b.bounding_box());
    let reach = ba.half_extents.norm() + bb.half_extents.norm();
    let mut s = seed;
    let mut rnd = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    };
    (0..n)
        .map(|_| {
            let dir = Vector3::new(rnd(), rnd(), rnd()).normalize() * reach * (0.6 + 0.4 * rnd());
            let t = ba.center.coords + dir - bb.center.coords;
            let r = UnitQuaternion::from_scaled_axis(Vector3::new(
                rnd() * 3.0,
                rnd() * 3.0,
                rnd() * 3.0,
            ));
            Isometry3::from_parts(Translation3::from(t), r)
        })
        .collect()
}

#[test]
fn rx60_links_match_parry() {
    let (a, b) = (load("link_3"), load("link_6"));
    let (pa, pb) = (parry_mesh(&a), parry_mesh(&b));
    let id = Isometry3::identity();
    let mut ws = QueryWorkspace::default();
    let (mut hits, mut misses) = (0, 0);
    for p in poses(&a, &b, 60, 0xDEADBEEF) {
        let ours = intersects(&id, &a, &p, &b, &mut ws);
        let theirs =
            parry3d_f64::query::intersection_test(&Pose::IDENTITY, &pa, &to_parry(&p), &pb)
                .unwrap()
                .intersecting;
        assert_eq!(ours, theirs, "collision differs at {p:?}");
        if ours {
            hits += 1;
        } else {
            misses += 1;
        }
        let d = distance(&id, &a, &p, &b, &DistanceRequest::default(), &mut ws).unwrap();
        let dp = parry3d_f64::query::distance(&Pose::IDENTITY, &pa, &to_parry(&p), &pb)
            .unwrap()
            .distance;
        assert!(
            (d.distance - dp).abs() <= 1e-9 * dp.max(1e-3),
            "distance {} vs parry {dp}",
            d.distance
        );
        assert_eq!(d.distance == 0.0, ours);
    }
    assert!(
        hits > 5 && misses > 5,
        "poses should mix contact and separation: {hits}/{misses}"
    );
}

#[test]
fn rx60_links_match_brute() {
    let (a, b) = (load("link_5"), load("link_6"));
    let id = Isometry3::identity();
    let mut ws = QueryWorkspace::default();
    for p in poses(&a, &b, 4, 0xC0FFEE) {
        let bd = brute::distance(&id, &a, &p, &b);
        let d = distance(&id, &a, &p, &b, &DistanceRequest::default(), &mut ws).unwrap();
        assert!((d.distance - bd.distance).abs() <= 1e-9 * bd.distance.max(1e-12));
        let all = collide(&id, &a, &p, &b, CollisionMode::AllContacts, &mut ws);
        let ball = brute::collide(&id, &a, &p, &b, CollisionMode::AllContacts);
        let (mut x, mut y) = (all.pairs, ball.pairs);
        x.sort_unstable();
        y.sort_unstable();
        assert_eq!(x, y);
    }
}

/// The hierarchy must prune: on RX60 link pairs, for poses where the links are apart, the
/// collision and distance traversals examine a small fraction of the `n * m` triangle pairs
/// (here: under 1 %; measured 2e-5 to 2e-3. A hierarchy that never prunes tests all of
/// them, plus the bounding-volume pairs).
#[test]
fn rx60_hierarchy_prunes() {
    let id = Isometry3::identity();
    let mut ws = QueryWorkspace::default();
    for (na, nb) in [
        ("link_2", "link_3"),
        ("link_3", "link_6"),
        ("base_link", "link_1"),
    ] {
        let (a, b) = (load(na), load(nb));
        let all = (a.num_triangles() * b.num_triangles()) as f64;
        let (mut worst_c, mut worst_d, mut worst_i, mut worst_t) = (0f64, 0f64, 0f64, 0f64);
        let mut separated = 0;
        for p in poses(&a, &b, 40, 0xBADC0DE) {
            let d = distance(&id, &a, &p, &b, &DistanceRequest::default(), &mut ws).unwrap();
            if d.distance <= 0.0 {
                continue;
            }
            separated += 1;
            let (bv, tri) = ws.last_counts();
            worst_d = worst_d.max((bv + tri) as f64 / all);
            let c = collide(&id, &a, &p, &b, CollisionMode::AllContacts, &mut ws);
            assert!(!c.colliding);
            worst_c = worst_c.max((c.bv_tests + c.triangle_tests) as f64 / all);
            assert!(!intersects(&id, &a, &p, &b, &mut ws));
            let (bv, tri) = ws.last_counts();
            worst_i = worst_i.max((bv + tri) as f64 / all);
            ws.clear_cache();
            let t = tolerance(&id, &a, &p, &b, d.distance * 1.01, &mut ws);
            assert!(t.closer_than);
            let (bv, tri) = ws.last_counts();
            worst_t = worst_t.max((bv + tri) as f64 / all);
        }
        println!(
            "{na} x {nb} ({all} pairs, {separated} separated poses): worst fraction of n*m \
             collide {worst_c:.2e} intersects {worst_i:.2e} distance {worst_d:.2e} \
             tolerance {worst_t:.2e}"
        );
        assert!(separated >= 10, "{na} x {nb}: {separated}");
        for (what, w) in [
            ("collide", worst_c),
            ("intersects", worst_i),
            ("distance", worst_d),
            ("tolerance", worst_t),
        ] {
            assert!(w < 0.01, "{na} x {nb}: {what} examined {w:.3} of all pairs");
        }
    }
}
