//! Non-finite input (fail-safe unchecked answers, errors from the checked forms) and the
//! agreement of `intersects`, `distance == 0` and `tolerance` at contacts that exist only up
//! to rounding.

mod common;
use common::*;

use nalgebra::{Isometry3, Point3, Quaternion, Translation3, UnitQuaternion, Vector3};
use proptest::prelude::*;
use rpq_proximity::*;

fn bad_poses() -> Vec<Isometry3<f64>> {
    let nan_q = UnitQuaternion::new_unchecked(Quaternion::new(f64::NAN, 0.0, 0.0, 0.0));
    vec![
        Isometry3::translation(f64::NAN, 0.0, 0.0),
        Isometry3::translation(0.0, f64::INFINITY, 0.0),
        Isometry3::translation(0.0, 0.0, f64::NEG_INFINITY),
        Isometry3::from_parts(Translation3::identity(), nan_q),
        Isometry3::from_parts(
            Translation3::identity(),
            UnitQuaternion::from_scaled_axis(Vector3::new(f64::NAN, 0.0, 0.0)),
        ),
    ]
}

#[test]
fn non_finite_poses_are_fail_safe_and_cheap() {
    // 4,800 triangles each: enumerating all pairs would take seconds and hundreds of MB
    let a = sphere_mesh(0.5, 40);
    let n = a.num_triangles();
    assert!(n > 3000, "{n}");
    let good = Isometry3::translation(0.2, 0.0, 0.0);
    let mut ws = QueryWorkspace::new();
    for bad in bad_poses() {
        for (pa, pb) in [(good, bad), (bad, good)] {
            assert!(!pose_is_finite(&pa.inv_mul(&pb)));
            assert!(intersects(&pa, &a, &pb, &a, &mut ws));
            assert_eq!(ws.last_counts(), (0, 0));
            let c = collide(&pa, &a, &pb, &a, CollisionMode::AllContacts, &mut ws);
            assert!(c.colliding && c.invalid_pose && c.pairs.is_empty());
            assert_eq!((c.bv_tests, c.triangle_tests), (0, 0));
            let d = distance(&pa, &a, &pb, &a, &DistanceRequest::default(), &mut ws).unwrap();
            assert_eq!(d.distance, 0.0);
            assert!(d.point_a.x.is_nan() && d.point_b.x.is_nan());
            let d = distance(
                &pa,
                &a,
                &pb,
                &a,
                &DistanceRequest::with_upper_bound(0.1),
                &mut ws,
            );
            assert_eq!(d.unwrap().distance, 0.0);
            let t = tolerance(&pa, &a, &pb, &a, 0.01, &mut ws);
            assert!(t.closer_than && t.witness.is_none());
            assert_eq!(distance_lower_bound(&pa, &a, &pb, &a), 0.0);
            // the checked forms reject the pose
            let req = DistanceRequest::default();
            assert!(matches!(
                try_intersects(&pa, &a, &pb, &a, &mut ws),
                Err(ProximityError::NonFinitePose)
            ));
            assert!(matches!(
                try_collide(&pa, &a, &pb, &a, CollisionMode::FirstContact, &mut ws),
                Err(ProximityError::NonFinitePose)
            ));
            assert!(matches!(
                try_distance(&pa, &a, &pb, &a, &req, &mut ws),
                Err(ProximityError::NonFinitePose)
            ));
            assert!(matches!(
                try_tolerance(&pa, &a, &pb, &a, 0.1, &mut ws),
                Err(ProximityError::NonFinitePose)
            ));
        }
    }
    // finite poses: the checked forms give the unchecked answers
    let far = Isometry3::translation(2.0, 0.0, 0.0);
    let id = Isometry3::identity();
    for pb in [good, far] {
        let req = DistanceRequest::default();
        assert_eq!(
            try_intersects(&id, &a, &pb, &a, &mut ws).unwrap(),
            intersects(&id, &a, &pb, &a, &mut ws)
        );
        let c = try_collide(&id, &a, &pb, &a, CollisionMode::AllContacts, &mut ws).unwrap();
        assert!(!c.invalid_pose);
        assert_eq!(
            c,
            collide(&id, &a, &pb, &a, CollisionMode::AllContacts, &mut ws)
        );
        assert_eq!(
            try_distance(&id, &a, &pb, &a, &req, &mut ws).unwrap(),
            distance(&id, &a, &pb, &a, &req, &mut ws)
        );
        assert_eq!(
            try_tolerance(&id, &a, &pb, &a, 1.05, &mut ws).unwrap(),
            tolerance(&id, &a, &pb, &a, 1.05, &mut ws)
        );
    }
    let d_far = distance(&id, &a, &far, &a, &DistanceRequest::default(), &mut ws).unwrap();
    assert!(d_far.distance > 0.9 && d_far.distance < 1.0);
}

#[test]
fn bad_request_parameters() {
    let a = box_mesh(Vector3::new(0.5, 0.5, 0.5));
    let id = Isometry3::identity();
    let far = Isometry3::translation(3.0, 0.0, 0.0);
    let mut ws = QueryWorkspace::new();
    let exact = distance(&id, &a, &far, &a, &DistanceRequest::default(), &mut ws).unwrap();
    assert!((exact.distance - 2.0).abs() < 1e-12);
    for (rel_err, abs_err, upper_bound, name) in [
        (f64::NAN, 0.0, f64::INFINITY, "rel_err"),
        (-1.0, 0.0, f64::INFINITY, "rel_err"),
        (0.0, f64::NAN, f64::INFINITY, "abs_err"),
        (0.0, -0.5, f64::INFINITY, "abs_err"),
        (0.0, 0.0, f64::NAN, "upper_bound"),
    ] {
        let req = DistanceRequest {
            rel_err,
            abs_err,
            upper_bound,
        };
        match try_distance(&id, &a, &far, &a, &req, &mut ws) {
            Err(ProximityError::InvalidParameter { name: n, .. }) => assert_eq!(n, name),
            other => panic!("{name}: {other:?}"),
        }
        // unchecked: documented fail-safe reading (exact, no bound)
        let d = distance(&id, &a, &far, &a, &req, &mut ws).unwrap();
        assert_eq!(d.distance, exact.distance, "{name}");
    }
    assert!(matches!(
        try_tolerance(&id, &a, &far, &a, f64::NAN, &mut ws),
        Err(ProximityError::InvalidParameter {
            name: "tolerance",
            ..
        })
    ));
    assert!(tolerance(&id, &a, &far, &a, f64::NAN, &mut ws).closer_than);
    assert!(!tolerance(&id, &a, &far, &a, 1.5, &mut ws).closer_than);
}

/// A triangle `a` (random, at a random scale and offset) and a triangle `b` with one vertex
/// placed on `a` by barycentric combination: on an edge or inside the face. Such contacts
/// hold only up to rounding.
fn rounding_contact() -> impl Strategy<Value = ([Point3<f64>; 3], [Point3<f64>; 3])> {
    (
        prop::array::uniform9(-1.0f64..1.0),
        prop::array::uniform6(-1.0f64..1.0),
        (0.0f64..1.0, 0.0f64..1.0, any::<bool>()),
        (-6i32..4, prop::array::uniform3(-1.0f64..1.0), 0i32..7),
    )
        .prop_map(|(av, bv, (u, w, on_edge), (sc, off, oe))| {
            let scale = 10f64.powi(sc);
            let offset = Vector3::from(off) * 10f64.powi(oe);
            let pt = |c: &[f64], k: usize| {
                Vector3::new(c[3 * k], c[3 * k + 1], c[3 * k + 2]) * scale + offset
            };
            let a = [pt(&av, 0), pt(&av, 1), pt(&av, 2)].map(Point3::from);
            let (u, w) = if u + w > 1.0 {
                (1.0 - u, 1.0 - w)
            } else {
                (u, w)
            };
            let (u, w) = if on_edge { (u, 1.0 - u) } else { (u, w) };
            let p = a[0] + (a[1] - a[0]) * u + (a[2] - a[0]) * w;
            let r1 = Vector3::new(bv[0], bv[1], bv[2]) * scale;
            let r2 = Vector3::new(bv[3], bv[4], bv[5]) * scale;
            (a, [p, p + r1, p + r2])
        })
}

fn config() -> ProptestConfig {
    let mut c = ProptestConfig::default();
    if std::env::var_os("PROPTEST_CASES").is_none() {
        c.cases = 3000;
    }
    c
}

proptest! {
    #![proptest_config(config())]

    /// One contact predicate: `overlap` ⇔ `distance == 0`, for each argument order, and the
    /// same at mesh level for `intersects`, `distance` and `tolerance`.
    #[test]
    fn contact_predicates_agree_at_rounding_level((a, b) in rounding_contact(), flip in any::<bool>()) {
        let (a, b) = if flip { (b, a) } else { (a, b) };
        let ov = triangle::overlap(&a, &b);
        let (d, p, q) = triangle::distance(&a, &b);
        prop_assert_eq!(ov, d == 0.0, "overlap {} distance {:e}", ov, d);
        // (swapping the arguments may flip a rounding-level contact, but each order agrees
        // with itself)
        prop_assert_eq!(triangle::distance(&b, &a).0 == 0.0, triangle::overlap(&b, &a));
        if ov {
            prop_assert_eq!(p, q);
        }
        if let (Ok(ma), Ok(mb)) = (Model::new(a.to_vec(), vec![[0, 1, 2]]), Model::new(b.to_vec(), vec![[0, 1, 2]])) {
            let id = Isometry3::identity();
            let mut ws = QueryWorkspace::new();
            let i = intersects(&id, &ma, &id, &mb, &mut ws);
            let md = distance(&id, &ma, &id, &mb, &DistanceRequest::default(), &mut ws).unwrap().distance;
            prop_assert_eq!(i, ov);
            prop_assert_eq!(i, md == 0.0, "intersects {} distance {:e}", i, md);
            for t in [1e-300, f64::MIN_POSITIVE, 1e-9] {
                let tol = tolerance(&id, &ma, &id, &mb, t, &mut ws).closer_than;
                prop_assert_eq!(tol, md < t, "tolerance({:e}) {} distance {:e}", t, tol, md);
                if i {
                    prop_assert!(tol);
                }
            }
        }
    }
}

/// The reviewer's sweep (probe3): 200,000 pairs used to give 7,117 disagreements.
#[test]
fn no_disagreement_in_a_fixed_sweep() {
    let mut s = 42u64;
    let mut f = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    };
    let mut contacts = 0;
    for _ in 0..50_000 {
        let f = &mut f;
        let mut v = || Vector3::new(f(), f(), f());
        let a = [v(), v(), v()].map(Point3::from);
        let (r1, r2) = (v(), v());
        let (u, w) = (f().abs(), f().abs());
        let (u, w) = if u + w > 1.0 {
            (1.0 - u, 1.0 - w)
        } else {
            (u, w)
        };
        let (u, w) = if f() > 0.0 { (u, 1.0 - u) } else { (u, w) };
        let p = a[0] + (a[1] - a[0]) * u + (a[2] - a[0]) * w;
        let b = [p, p + r1, p + r2];
        let ov = triangle::overlap(&a, &b);
        let d = triangle::distance(&a, &b).0;
        assert_eq!(ov, d == 0.0, "a {a:?} b {b:?}: distance {d:e}");
        contacts += ov as usize;
    }
    assert!(contacts > 30_000, "{contacts}");
}

/// The closest-pair cache stays bounded however many model pairs a workspace sees, and a
/// pair evicted from it still gets the exact answer.
#[test]
fn workspace_cache_is_bounded() {
    let models: Vec<Model> = (0..40)
        .map(|k| sphere_mesh(0.1 + 0.01 * k as f64, 4))
        .collect();
    let id = Isometry3::identity();
    let far = Isometry3::translation(1.0, 0.2, 0.0);
    let mut ws = QueryWorkspace::new();
    assert_eq!(ws.cached_pairs(), 0);
    for round in 0..2 {
        for a in &models {
            for b in &models {
                let d = distance(&id, a, &far, b, &DistanceRequest::default(), &mut ws).unwrap();
                let bd = brute::distance(&id, a, &far, b);
                assert!((d.distance - bd.distance).abs() <= 1e-12, "round {round}");
                assert!(ws.cached_pairs() <= PAIR_CACHE_SLOTS);
            }
        }
    }
    // 1,600 model pairs went through: the table is (nearly) full, never larger
    assert!(
        ws.cached_pairs() > PAIR_CACHE_SLOTS / 2,
        "{}",
        ws.cached_pairs()
    );
    ws.clear_cache();
    assert_eq!(ws.cached_pairs(), 0);
}
