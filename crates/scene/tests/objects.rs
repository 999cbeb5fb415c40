//! Complex objects beyond URDF robots (a prismatic chain built in code), world-frame
//! Jacobians against finite differences, scenario bookkeeping errors.

mod common;

use nalgebra::{Isometry3, Vector3};
use rpq_scene::{Body, QueryOptions, Scenario, SceneError, SimpleObject};

#[test]
fn prismatic_complex_object_meets_a_simple_object_where_expected() {
    let mut s = Scenario::new();
    let sl = s.add_robot(common::slider()).unwrap();
    assert!(common::slider().ik().is_none());
    let wall = s
        .add_object(SimpleObject {
            name: "wall".into(),
            body: Body::from_trimesh("wall", &common::cube(0.1)).unwrap(),
            pose: Isometry3::translation(0.6, 0.0, 0.5),
        })
        .unwrap();
    // Carriage face at x + 0.05, wall face at 0.5: touching at x = 0.45.
    for (x, gap) in [(0.0, 0.45), (0.2, 0.25), (0.44, 0.01)] {
        s.set_joint_positions(sl, &[x]).unwrap();
        let r = s.distance_between(sl, wall, &QueryOptions::ALL_ON).unwrap();
        assert!((r.distance - gap).abs() < 1e-12, "{x}: {}", r.distance);
        assert_eq!(s.body_name(r.body_a), "slider/carriage");
        assert!(!s.collide(&QueryOptions::ALL_ON).colliding);
    }
    s.set_joint_positions(sl, &[0.5]).unwrap();
    let c = s.collide(&QueryOptions::ALL_ON);
    assert!(c.colliding);
    assert_eq!(s.body_name(c.pair.unwrap().0), "slider/carriage");
}

#[test]
fn world_jacobian_matches_finite_differences() {
    let r = common::rx60().instance(
        "moved",
        Isometry3::new(Vector3::new(0.3, -0.2, 0.1), Vector3::new(0.1, 0.2, 1.0)),
    );
    let q = [0.3, -0.5, 0.9, 0.4, 0.7, -0.2];
    let j = r.jacobian("tool0", &q).unwrap();
    let k = r.kinematics().link_index("tool0").unwrap();
    let h = 1e-6;
    for d in 0..6 {
        let mut qp = q;
        let mut qm = q;
        qp[d] += h;
        qm[d] -= h;
        let p = r.forward_kinematics(&qp).unwrap()[k];
        let m = r.forward_kinematics(&qm).unwrap()[k];
        let v = (p.translation.vector - m.translation.vector) / (2.0 * h);
        let w = (p.rotation * m.rotation.inverse()).scaled_axis() / (2.0 * h);
        assert!((j.fixed_view::<3, 1>(0, d) - v).norm() < 1e-6, "joint {d}");
        assert!((j.fixed_view::<3, 1>(3, d) - w).norm() < 1e-6, "joint {d}");
    }
}

#[test]
fn bookkeeping_errors_are_reported() {
    let mut s = Scenario::new();
    s.add_robot(common::slider()).unwrap();
    assert!(matches!(
        s.add_robot(common::slider()),
        Err(SceneError::DuplicateName { .. })
    ));
    assert!(matches!(
        s.object_index("nope"),
        Err(SceneError::UnknownName { .. })
    ));
    assert!(s.set_joint_positions(0, &[f64::NAN]).is_err());
    assert!(s.set_joint_positions(0, &[0.1, 0.2]).is_err());
    let bad = SimpleObject {
        name: "bad/name".into(),
        body: Body::from_trimesh("x", &common::cube(0.1)).unwrap(),
        pose: Isometry3::identity(),
    };
    assert!(s.add_object(bad).is_err());
    let nan_pose = SimpleObject {
        name: "nan".into(),
        body: Body::from_trimesh("x", &common::cube(0.1)).unwrap(),
        pose: Isometry3::translation(f64::NAN, 0.0, 0.0),
    };
    assert!(matches!(
        s.add_object(nan_pose),
        Err(SceneError::NonFinite { .. })
    ));
    // One object only: no pair to measure.
    assert!(s.min_distance(&QueryOptions::ALL_ON).is_none());
}

#[test]
fn rx60_self_collision_only_when_folded_onto_itself() {
    let mut s = Scenario::new();
    let r = s
        .add_robot(common::rx60().instance("arm", Isometry3::identity()))
        .unwrap();
    // Home pose: straight up, nothing touches.
    s.set_joint_positions(r, &[0.0; 6]).unwrap();
    assert!(!s.self_collide(r).colliding);
    // Agrees with testing every non-adjacent pair with the engine directly.
    let mut rng = rpq_base::SplitMix64::new(3);
    let mut hits = 0;
    let links = common::rx60().body_links().to_vec();
    let kin = common::rx60().kinematics();
    for _ in 0..300 {
        let q = common::random_q(common::rx60(), &mut rng);
        s.set_joint_positions(r, &q).unwrap();
        let got = s.self_collide(r).colliding;
        let mut want = false;
        let mut ws = rpq_proximity::QueryWorkspace::default();
        for i in 0..links.len() {
            for j in i + 1..links.len() {
                if kin.links()[links[j]].parent_link == Some(links[i]) {
                    continue;
                }
                want |= rpq_proximity::intersects(
                    &s.body_poses(r)[i],
                    &s.objects()[r].body(i).model,
                    &s.body_poses(r)[j],
                    &s.objects()[r].body(j).model,
                    &mut ws,
                );
            }
        }
        assert_eq!(got, want, "{q:?}");
        hits += usize::from(got);
    }
    assert!(hits > 0 && hits < 300, "{hits}");
}
