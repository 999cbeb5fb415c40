//! The generated `urdf/hit_dlr_hand.urdf` (loaded by rpq_kinematics) and `rpq_hand::robot`
//! agree on every fingertip, with the coupled joints commanded equal.

use rpq_hand::data::Rng;
use rpq_hand::robot::{HitDlrHand, RobotFinger};
use rpq_kinematics::Robot;

#[test]
fn urdf_fingertips_match_rpq_hand() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../urdf/hit_dlr_hand.urdf");
    let robot = Robot::from_urdf_file(path).expect("URDF loads");
    assert_eq!(robot.dof(), 17);
    let names: Vec<String> = robot.joint_names().map(str::to_string).collect();
    let order = HitDlrHand::urdf_joint_names();
    let mut rng = Rng::new(7);
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
        }
    }
}
