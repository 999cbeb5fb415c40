//! The generated `urdf/hit_dlr_hand.urdf` (loaded by rpq_kinematics) and `rpq_hand::robot`
//! agree on every fingertip, with the coupled joints commanded equal.

use rpq_hand::robot::{HitDlrHand, RobotFinger};
use rpq_kinematics::Robot;

#[test]
fn urdf_fingertips_match_rpq_hand() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../urdf/hit_dlr_hand.urdf");
    let robot = Robot::from_urdf_file(path).expect("URDF loads");
    assert_eq!(robot.dof(), 17);
    let names: Vec<String> = robot.joint_names().map(str::to_string).collect();
    let order = HitDlrHand::urdf_joint_names();
    let mut rng = rpq_hand::sim::generator(7);
    for _ in 0..200 {
        let mut q = [0.0; 13];
        for (v, (lo, hi)) in q.iter_mut().zip(HitDlrHand::limits()) {
            *v = rng.range(lo, hi);
        }
        let u = HitDlrHand::urdf_positions(&q);
        let qv: Vec<f64> = names
            .iter()
            .map(|n| u[order.iter().position(|o| o == n).expect("known joint")])
            .collect();
        let tips = HitDlrHand::fingertips(&q);
        for (i, f) in RobotFinger::ALL.iter().enumerate() {
            let p = robot.link_pose(&format!("{}_tip", f.name()), &qv).unwrap();
            let d = (p.translation.vector - tips[i]).norm();
            // the URDF prints angles with 6 decimals (1e-6 rad × 0.15 m)
            assert!(d < 1e-6, "{f:?}: {d}");
            let dp = robot
                .link_pose(&format!("{}_distal", f.name()), &qv)
                .unwrap();
            let mine = HitDlrHand::distal_pose(*f, &q);
            assert!((dp.translation.vector - mine.translation.vector).norm() < 1e-6);
            assert!(dp.rotation.angle_to(&mine.rotation) < 1e-6);
        }
    }
}

#[test]
fn generated_meshes_are_closed_and_outward() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../meshes/hit_dlr_hand");
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        let m = rpq_kinematics::TriMesh::from_stl_file(&p).expect("valid STL");
        assert!(m.is_closed(), "{} not closed", p.display());
        assert!(m.signed_volume() > 0.0, "{} inside out", p.display());
        n += 1;
    }
    assert_eq!(n, 18);
}
