//! Closed-form RX60 IK: FK ∘ IK round trips, agreement with rpq_kinematics' FK, singular
//! and unreachable poses.

mod common;

use nalgebra::Isometry3;
use proptest::prelude::*;
use rpq_scene::{ArmConfiguration, IkError, Rx60Ik};

fn limits() -> [(f64, f64); 6] {
    Rx60Ik::rx60b().limits
}

fn close(a: &Isometry3<f64>, b: &Isometry3<f64>, tol: f64) -> bool {
    (a.translation.vector - b.translation.vector).norm() < tol
        && a.rotation.angle_to(&b.rotation) < tol
}

#[test]
fn solver_matches_the_urdf_forward_kinematics() {
    let robot = common::rx60();
    let (ik, flange) = robot.ik().expect("the RX60 gets closed-form IK");
    assert_eq!(flange, "tool0");
    assert!((ik.d1 - 0.341).abs() < 1e-12 && (ik.a2 - 0.290).abs() < 1e-12);
    assert!((ik.d4 - 0.310).abs() < 1e-12 && (ik.d6 - 0.065).abs() < 1e-12);
    let mut rng = rpq_base::SplitMix64::new(7);
    for _ in 0..200 {
        let q = common::random_q(robot, &mut rng);
        let fk = robot.kinematics().link_pose("tool0", &q).unwrap();
        let q6: [f64; 6] = q.clone().try_into().unwrap();
        assert!(close(&fk, &ik.forward(&q6), 1e-12));
        // World-frame FK of the scene robot = base * kinematics FK.
        let world = robot.forward_kinematics(&q).unwrap();
        let k = robot.kinematics().link_index("tool0").unwrap();
        assert!(close(&world[k], &(robot.base() * fk), 1e-12));
    }
}

#[test]
fn non_rx60_chains_get_no_solver() {
    // A 6-joint chain with a different geometry is rejected by the FK check.
    let robot = common::rx60();
    let mut ik = Rx60Ik::rx60b();
    ik.d4 = 0.4;
    let q = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6];
    let fk = robot.kinematics().link_pose("tool0", &q).unwrap();
    assert!(!close(&fk, &ik.forward(&q), 1e-6));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn fk_of_ik_is_the_target(
        u in proptest::array::uniform6(0.0f64..1.0),
    ) {
        let ik = Rx60Ik::rx60b();
        let l = limits();
        let mut q = [0.0; 6];
        for k in 0..6 {
            q[k] = l[k].0 + u[k] * (l[k].1 - l[k].0);
        }
        // Joints 4 and 6 are returned in (-pi, pi]: draw them there.
        q[3] = (u[3] - 0.5) * 2.0 * std::f64::consts::PI * 0.999;
        q[5] = (u[5] - 0.5) * 2.0 * std::f64::consts::PI * 0.999;
        let target = ik.forward(&q);
        let config = ik.configuration_of(&q);
        match ik.solve(&target, config) {
            Ok(s) => {
                for k in 0..6 {
                    prop_assert!((s[k] - q[k]).abs() < 1e-7, "joint {} {} vs {}", k + 1, s[k], q[k]);
                }
            }
            // Only near-singular draws may fail.
            Err(IkError::WristSingular) => prop_assert!(q[4].abs() < 1e-6),
            Err(IkError::ShoulderSingular) => prop_assert!(false, "random draw on the shoulder axis"),
            Err(e) => prop_assert!(false, "{e}"),
        }
        let all = ik.solve_all(&target).unwrap();
        prop_assert!(!all.is_empty() && all.len() <= 8);
        let mut seen = std::collections::HashSet::new();
        for (c, s) in &all {
            prop_assert!(seen.insert(*c));
            prop_assert!(close(&ik.forward(s), &target, 1e-9));
            prop_assert_eq!(ik.configuration_of(s), *c);
            for k in 0..6 {
                prop_assert!(s[k] >= l[k].0 && s[k] <= l[k].1);
            }
        }
    }
}

#[test]
fn eight_configurations_without_limits_and_all_eight_within_them_somewhere() {
    let ik = Rx60Ik::rx60b();
    let robot = common::rx60();
    let mut rng = rpq_base::SplitMix64::new(11);
    let mut full = 0;
    for _ in 0..3000 {
        let q: [f64; 6] = common::random_q(robot, &mut rng).try_into().unwrap();
        let target = ik.forward(&q);
        // Ignoring limits, every configuration reaches the pose (8 distinct solutions).
        let mut sols = Vec::new();
        for c in ArmConfiguration::ALL {
            let s = ik.solve_unlimited(&target, c).unwrap();
            assert!(close(&ik.forward(&s), &target, 1e-9), "{c:?}");
            assert_eq!(ik.configuration_of(&s), c);
            sols.push(s);
        }
        if ik.solve_all(&target).unwrap().len() == 8 {
            full += 1;
        }
    }
    // Within the RX60 limits some poses admit all eight.
    assert!(full > 0);
}

#[test]
fn singular_and_unreachable_poses_are_clear_errors() {
    let robot = common::rx60();
    let ik = Rx60Ik::rx60b();
    let up = ik.forward(&[0.0, 0.0, 0.0, 0.0, 0.3, 0.0]);
    // Wrist centre on the joint-1 axis.
    assert_eq!(ik.solve_all(&up), Err(IkError::ShoulderSingular));
    let q = [0.4, 0.6, 0.7, 0.5, 0.0, -0.2];
    let p = ik.forward(&q);
    assert_eq!(
        ik.solve(&p, ik.configuration_of(&q)),
        Err(IkError::WristSingular)
    );
    assert!(matches!(
        ik.solve_all(&Isometry3::translation(0.0, 1.0, 0.4)),
        Err(IkError::Unreachable { .. })
    ));
    let nan = Isometry3::translation(f64::NAN, 0.0, 0.4);
    assert_eq!(ik.solve_all(&nan), Err(IkError::NonFinite));
    // Out of limits: elbow bent beyond 134.5°.
    let bent = ik.forward(&[0.2, 0.3, 2.5, 0.1, 0.4, 0.1]);
    let c = ik.configuration_of(&[0.2, 0.3, 2.5, 0.1, 0.4, 0.1]);
    assert!(matches!(
        ik.solve(&bent, c),
        Err(IkError::OutOfLimits { joint: 3, .. })
    ));
    // World-frame IK through a moved base.
    let moved = robot.instance("moved", Isometry3::translation(1.0, 2.0, 0.0));
    let q = [0.3, -0.4, 1.0, 0.2, 0.9, -0.5];
    let world =
        moved.forward_kinematics(&q).unwrap()[moved.kinematics().link_index("tool0").unwrap()];
    let s = moved
        .inverse_kinematics(&world, ik.configuration_of(&q))
        .unwrap();
    for k in 0..6 {
        assert!((s[k] - q[k]).abs() < 1e-9);
    }
}
