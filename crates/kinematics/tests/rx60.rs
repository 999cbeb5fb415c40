//! The RX60B URDF against an independent standard-DH implementation of the RX60 table.

use nalgebra::{Isometry3, Matrix3, Matrix4, Point3, UnitQuaternion, Vector3};
use proptest::prelude::*;
use rpq_kinematics::{MeshResolver, Robot};
use std::f64::consts::{FRAC_PI_2, PI};

const URDF: &str = include_str!("../../../urdf/rx60b.urdf");

fn robot() -> Robot {
    Robot::from_urdf_str(URDF).unwrap()
}

/// Standard DH: Rz(theta) Tz(d) Tx(a) Rx(alpha), written out as a matrix.
fn dh(theta: f64, d: f64, a: f64, alpha: f64) -> Matrix4<f64> {
    let (st, ct) = theta.sin_cos();
    let (sa, ca) = alpha.sin_cos();
    Matrix4::new(
        ct,
        -st * ca,
        st * sa,
        a * ct, //
        st,
        ct * ca,
        -ct * sa,
        a * st, //
        0.0,
        sa,
        ca,
        d, //
        0.0,
        0.0,
        0.0,
        1.0,
    )
}

/// RX60 table from the issue: (theta offset, d, a, alpha).
const TABLE: [(f64, f64, f64, f64); 6] = [
    (0.0, 0.341, 0.0, -FRAC_PI_2),
    (-FRAC_PI_2, 0.0, 0.290, 0.0),
    (FRAC_PI_2, 0.0, 0.0, FRAC_PI_2),
    (0.0, 0.310, 0.0, -FRAC_PI_2),
    (0.0, 0.0, 0.0, FRAC_PI_2),
    (0.0, 0.065, 0.0, 0.0),
];

/// T_0i for i = 0..=6.
fn dh_frames(q: &[f64]) -> Vec<Matrix4<f64>> {
    let mut t = Matrix4::identity();
    let mut out = vec![t];
    for (qi, (off, d, a, alpha)) in q.iter().zip(TABLE) {
        t *= dh(qi + off, d, a, alpha);
        out.push(t);
    }
    out
}

fn homogeneous(rot: Matrix3<f64>, p: Vector3<f64>) -> Matrix4<f64> {
    let mut m = Matrix4::identity();
    m.fixed_view_mut::<3, 3>(0, 0).copy_from(&rot);
    m.fixed_view_mut::<3, 1>(0, 3).copy_from(&p);
    m
}

/// Constant transforms from DH frame i to the URDF link frame, derived by hand from the
/// frame conventions (URDF frames parallel to the base at q = 0, on their joint axes).
fn dh_to_link() -> [(usize, &'static str, Matrix4<f64>); 7] {
    // DH frames 1 and 4 are the base frame turned by -90° about x; the URDF frames are not.
    let rx_plus = Matrix3::new(1.0, 0.0, 0.0, 0.0, 0.0, -1.0, 0.0, 1.0, 0.0);
    // DH frame 2 has x2 = up, y2 = x0, z2 = y0 and sits at the elbow, a2 beyond link_2.
    let r2t = Matrix3::new(0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0).transpose();
    [
        (1, "link_1", homogeneous(rx_plus, Vector3::zeros())),
        (
            2,
            "link_2",
            homogeneous(r2t, Vector3::new(-0.290, 0.0, 0.0)),
        ),
        (3, "link_3", Matrix4::identity()),
        // DH frame 4 sits at the wrist centre, d4 beyond link_4's elbow origin.
        (
            4,
            "link_4",
            homogeneous(rx_plus, Vector3::new(0.0, 0.310, 0.0)),
        ),
        (5, "link_5", Matrix4::identity()),
        (6, "link_6", Matrix4::identity()),
        (6, "tool0", Matrix4::identity()),
    ]
}

fn check_against_dh(robot: &Robot, q: &[f64]) {
    let frames = dh_frames(q);
    let poses = robot.forward_kinematics(q).unwrap();
    for (i, link, c) in dh_to_link() {
        let want = frames[i] * c;
        let got = poses[robot.link_index(link).unwrap()].to_homogeneous();
        let err = (got - want).abs().max();
        assert!(
            err < 1e-12,
            "{link} at q = {q:?}: error {err:e}\n{got}\n{want}"
        );
    }
    let base = poses[robot.link_index("base_link").unwrap()];
    assert_eq!(base, Isometry3::identity());
}

#[test]
fn joint_names_limits_and_link_names() {
    let r = robot();
    assert_eq!(r.name(), "rx60b");
    assert_eq!(
        r.joint_names().collect::<Vec<_>>(),
        ["joint_1", "joint_2", "joint_3", "joint_4", "joint_5", "joint_6"]
    );
    let names: Vec<&str> = r.links().iter().map(|l| l.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "base_link",
            "link_1",
            "link_2",
            "link_3",
            "link_4",
            "link_5",
            "link_6",
            "tool0"
        ]
    );
    let deg = [
        (-160.0, 160.0),
        (-127.5, 127.5),
        (-134.5, 134.5),
        (-270.0, 270.0),
        (-109.5, 120.5),
        (-270.0, 270.0),
    ];
    for (l, (lo, hi)) in r.joint_limits().iter().zip(deg) {
        assert!((l.lower - f64::to_radians(lo)).abs() < 1e-15);
        assert!((l.upper - f64::to_radians(hi)).abs() < 1e-15);
        assert!(l.velocity > 0.0 && l.effort > 0.0);
    }
}

#[test]
fn zero_configuration_is_straight_up() {
    let r = robot();
    let q = [0.0; 6];
    let z = |link: &str| r.link_pose(link, &q).unwrap();
    for (link, height) in [
        ("link_1", 0.341),
        ("link_2", 0.341),
        ("link_3", 0.631),
        ("link_4", 0.631),
        ("link_5", 0.941),
        ("link_6", 1.006),
        ("tool0", 1.006),
    ] {
        let p = z(link);
        assert!(
            (p.translation.vector - Vector3::new(0.0, 0.0, height)).norm() < 1e-15,
            "{link}"
        );
        assert!(p.rotation.angle() < 1e-15, "{link}");
    }
    check_against_dh(&r, &q);
}

#[test]
fn matches_dh_at_limits_and_hand_picked_configurations() {
    let r = robot();
    let lim = r.joint_limits().to_vec();
    check_against_dh(&r, &lim.iter().map(|l| l.lower).collect::<Vec<_>>());
    check_against_dh(&r, &lim.iter().map(|l| l.upper).collect::<Vec<_>>());
    check_against_dh(&r, &[FRAC_PI_2, -FRAC_PI_2, PI / 3.0, -PI, 2.0, 4.0]);
    // Ready pose: forearm horizontal, tool pointing down.
    let q = [0.0, 0.0, FRAC_PI_2, 0.0, FRAC_PI_2, 0.0];
    let tool = r.link_pose("tool0", &q).unwrap();
    assert!((tool.translation.vector - Vector3::new(0.310, 0.0, 0.631 - 0.065)).norm() < 1e-12);
    assert!((tool.rotation * Vector3::z() + Vector3::z()).norm() < 1e-12);
}

#[test]
fn collision_meshes_load_closed_and_outward() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../urdf/rx60b.urdf");
    let r = Robot::from_urdf_file(path).unwrap();
    let meshes = r
        .collision_meshes(&MeshResolver::for_urdf_file(path))
        .unwrap();
    let mut total = 0;
    for (link, mesh) in r.links().iter().zip(&meshes) {
        if link.name == "tool0" {
            assert!(mesh.is_none());
            continue;
        }
        let m = mesh.as_ref().unwrap();
        m.validate().unwrap();
        assert!(m.is_closed(), "{}", link.name);
        assert!(m.signed_volume() > 0.0, "{}", link.name);
        total += m.triangles.len();
    }
    assert!((20_700..=25_300).contains(&total), "{total} triangles");
}

fn angle() -> impl Strategy<Value = f64> {
    -2.0 * PI..2.0 * PI
}

fn config() -> impl Strategy<Value = Vec<f64>> {
    proptest::collection::vec(angle(), 6)
}

fn rotation_of(m: &Matrix4<f64>) -> Matrix3<f64> {
    m.fixed_view::<3, 3>(0, 0).into_owned()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn fk_matches_independent_dh(q in config()) {
        check_against_dh(&robot(), &q);
    }

    #[test]
    fn rotations_stay_orthonormal(q in config()) {
        let r = robot();
        for pose in r.forward_kinematics(&q).unwrap() {
            let m = pose.to_homogeneous();
            let rot = rotation_of(&m);
            prop_assert!((rot.transpose() * rot - Matrix3::identity()).abs().max() < 1e-13);
            prop_assert!((rot.determinant() - 1.0).abs() < 1e-13);
        }
    }

    #[test]
    fn jacobian_matches_finite_differences(q in config(), px in -0.1..0.1f64, py in -0.1..0.1f64, pz in -0.1..0.1f64) {
        let r = robot();
        let point = Point3::new(px, py, pz);
        for link in ["link_2", "link_4", "link_6", "tool0"] {
            let jac = r.jacobian_at_point(link, &point, &q).unwrap();
            let h = 1e-6;
            for i in 0..6 {
                let (mut qp, mut qm) = (q.clone(), q.clone());
                qp[i] += h;
                qm[i] -= h;
                let (tp, tm) = (r.link_pose(link, &qp).unwrap(), r.link_pose(link, &qm).unwrap());
                let lin = ((tp * point) - (tm * point)) / (2.0 * h);
                let drot: UnitQuaternion<f64> = tp.rotation * tm.rotation.inverse();
                let ang = drot.scaled_axis() / (2.0 * h);
                for k in 0..3 {
                    prop_assert!((jac[(k, i)] - lin[k]).abs() < 1e-8, "{link} lin {k},{i}");
                    prop_assert!((jac[(3 + k, i)] - ang[k]).abs() < 1e-8, "{link} ang {k},{i}");
                }
            }
        }
    }

    #[test]
    fn wrist_centre_depends_only_on_first_three_joints(q in config(), w in proptest::collection::vec(angle(), 3)) {
        let r = robot();
        let mut q2 = q.clone();
        q2[3..].copy_from_slice(&w);
        let a = r.link_pose("link_5", &q).unwrap().translation.vector;
        let b = r.link_pose("link_5", &q2).unwrap().translation.vector;
        prop_assert!((a - b).norm() < 1e-13);
        // And its distance from the shoulder follows the law of cosines in q3.
        let shoulder = Vector3::new(0.0, 0.0, 0.341);
        let d2 = 0.29f64.powi(2) + 0.31f64.powi(2) + 2.0 * 0.29 * 0.31 * q[2].cos();
        prop_assert!(((a - shoulder).norm_squared() - d2).abs() < 1e-13);
    }

    #[test]
    fn clamp_is_within_limits_and_idempotent(q in proptest::collection::vec(-10.0..10.0f64, 6)) {
        let r = robot();
        let c = r.clamp(&q).unwrap();
        prop_assert!(r.within_limits(&c).unwrap());
        prop_assert!(r.check_limits(&c).is_ok());
        prop_assert_eq!(r.clamp(&c).unwrap(), c.clone());
        let inside = r.joint_limits().iter().zip(&q).all(|(l, v)| l.lower <= *v && *v <= l.upper);
        prop_assert_eq!(r.within_limits(&q).unwrap(), inside);
        if inside { prop_assert_eq!(c, q); }
    }
}

#[test]
fn jacobian_columns_match_the_axes_at_zero() {
    // At q = 0 the flange is on the J1, J4 and J6 axes and 0.665 / 0.375 / 0.065 m above
    // the J2, J3, J5 axes (all along +y), so those columns are simple.
    let r = robot();
    let j = r.jacobian("link_6", &[0.0; 6]).unwrap();
    let expect = |lin: [f64; 3], ang: [f64; 3]| {
        let mut v = [0.0; 6];
        v[..3].copy_from_slice(&lin);
        v[3..].copy_from_slice(&ang);
        v
    };
    let cols = [
        expect([0.0, 0.0, 0.0], [0.0, 0.0, 1.0]),
        expect([0.665, 0.0, 0.0], [0.0, 1.0, 0.0]),
        expect([0.375, 0.0, 0.0], [0.0, 1.0, 0.0]),
        expect([0.0, 0.0, 0.0], [0.0, 0.0, 1.0]),
        expect([0.065, 0.0, 0.0], [0.0, 1.0, 0.0]),
        expect([0.0, 0.0, 0.0], [0.0, 0.0, 1.0]),
    ];
    for (i, c) in cols.iter().enumerate() {
        for k in 0..6 {
            assert!(
                (j[(k, i)] - c[k]).abs() < 1e-12,
                "J[{k},{i}] = {}",
                j[(k, i)]
            );
        }
    }
    // Joints beyond link_3 do not move it.
    let j3 = r
        .jacobian("link_3", &[0.3, 0.2, 0.1, 0.4, 0.5, 0.6])
        .unwrap();
    assert!(j3.columns(3, 3).norm() == 0.0);
}
