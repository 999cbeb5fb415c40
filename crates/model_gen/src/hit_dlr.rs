//! HIT/DLR four-finger hand (Hu et al., section II-B): `urdf/hit_dlr_hand.urdf` and one
//! closed binary STL per link in `meshes/hit_dlr_hand/`.
//!
//! 13 DOF: a thumb palm joint (0-90°, about the palm's `x` axis) and four identical fingers
//! (thumb, index, middle, ring; links 60/35/30 mm, about 1.5× a human index finger), each
//! with abduction ±20° (`<f>_abd_joint`, axis `z`), flexion ±75° (`<f>_flex_joint`) and two
//! joints coupled 1:1 by a linkage, 0-90° (`<f>_mid_joint`, `<f>_dist_joint`). The URDF
//! lists the coupled pair as two independent revolute joints (no `<mimic>`, which
//! rpq_kinematics rejects); commanders must keep them equal (`rpq_hand::robot`).
//!
//! Frames match `rpq_hand::robot`: palm `x` towards the fingertips, `z` palmar, `y` radial;
//! finger base `x` along the stretched finger; flexion about `−y` curls towards `+z`.
//! The numbers below duplicate `rpq_hand::robot`'s constants; a test in rpq_hand loads the
//! URDF and compares fingertips.

use nalgebra::{UnitQuaternion, Vector3};

use crate::geometry::{Frame, Mesh, Profile, Section};
use crate::Error;

/// Robot name (file stems).
pub const ROBOT_NAME: &str = "hit_dlr_hand";
const L: [f64; 3] = [0.060, 0.035, 0.030];
const THUMB_ROOT: [f64; 3] = [0.020, 0.030, 0.010];
const THUMB_OFFSET: f64 = 0.025;
const THUMB_YAW: f64 = 60.0 * std::f64::consts::PI / 180.0;
const BASES: [(&str, [f64; 3]); 3] = [
    ("index", [0.100, 0.030, 0.0]),
    ("middle", [0.105, 0.0, 0.0]),
    ("ring", [0.100, -0.030, 0.0]),
];
const FINGERS: [&str; 4] = ["thumb", "index", "middle", "ring"];

/// Links with meshes, in file order.
pub fn links() -> Vec<String> {
    let mut v = vec!["palm".to_string(), "thumb_rotation".to_string()];
    for f in FINGERS {
        for s in ["base", "proximal", "middle", "distal"] {
            v.push(format!("{f}_{s}"));
        }
    }
    v
}

/// Mesh path of a link, relative to the repository root.
pub fn mesh_path(link: &str) -> String {
    format!("meshes/{ROBOT_NAME}/{link}.stl")
}

/// URDF path relative to the repository root.
pub fn urdf_path() -> String {
    format!("urdf/{ROBOT_NAME}.urdf")
}

/// Mesh of one link in its link frame.
pub fn link_mesh(link: &str) -> Result<Mesh, Error> {
    let mut m = Mesh::default();
    let seg = |p: f64, r: f64, len: f64, tip: bool| {
        // a phalanx along +x from `p` to `len` (the fingertip dome ends exactly at `len`)
        let s = Section::rounded_rect(r, r * 0.9);
        let end = if tip { len - r * 0.9 } else { len - r * 0.6 };
        let pr = Profile::dome_start(p, s, r * 0.6, 4).side(end, s.scaled(0.9), 3);
        if tip {
            pr.dome_end(r * 0.9, 5)
        } else {
            pr.flat_end(r * 0.3, 2)
        }
    };
    match link {
        "palm" => {
            let s = Section::rounded_rect(0.048, 0.014);
            let p = Profile::flat_start(-0.03, s, 0.006, 3)
                .side(0.088, s, 4)
                .flat_end(0.006, 3);
            m.add_loft("palm", Frame::along_x(0.0, 0.0, 0.0), &p, 48)?;
        }
        "thumb_rotation" => {
            // frame: z along the palm x axis; the arm reaches to the thumb base along x
            let c = Section::circle(0.011);
            let p = Profile::flat_start(-0.012, c, 0.003, 2)
                .side(0.012, c, 2)
                .flat_end(0.003, 2);
            m.add_loft("palm joint housing", Frame::along_z(0.0, 0.0, 0.0), &p, 32)?;
            let s = Section::rounded_rect(0.008, 0.008);
            let p = Profile::flat_start(0.0, s, 0.002, 2)
                .side(THUMB_OFFSET - 0.004, s, 2)
                .flat_end(0.002, 2);
            m.add_loft("thumb arm", Frame::along_x(0.0, 0.0, 0.0), &p, 24)?;
        }
        _ => {
            let (_, part) = link
                .split_once('_')
                .ok_or_else(|| Error::UnknownLink { link: link.into() })?;
            match part {
                "base" => {
                    let c = Section::circle(0.011);
                    let p = Profile::dome_start(-0.01, c, 0.004, 3)
                        .side(0.01, c, 2)
                        .dome_end(0.004, 3);
                    m.add_loft("knuckle", Frame::along_z(0.0, 0.0, 0.0), &p, 32)?;
                }
                "proximal" => m.add_loft(
                    "proximal",
                    Frame::along_x(0.0, 0.0, 0.0),
                    &seg(0.004, 0.010, L[0], false),
                    32,
                )?,
                "middle" => m.add_loft(
                    "middle",
                    Frame::along_x(0.0, 0.0, 0.0),
                    &seg(0.004, 0.009, L[1], false),
                    32,
                )?,
                "distal" => m.add_loft(
                    "distal",
                    Frame::along_x(0.0, 0.0, 0.0),
                    &seg(0.004, 0.008, L[2], true),
                    32,
                )?,
                _ => return Err(Error::UnknownLink { link: link.into() }),
            }
        }
    }
    Ok(m)
}

fn f(x: f64) -> String {
    let s = format!("{x:.6}");
    let s = s.trim_end_matches('0').trim_end_matches('.').to_string();
    if s == "-0" {
        "0".into()
    } else {
        s
    }
}

fn xyz(v: [f64; 3]) -> String {
    format!("{} {} {}", f(v[0]), f(v[1]), f(v[2]))
}

fn link_xml(name: &str) -> String {
    let mesh = format!("../{}", mesh_path(name));
    format!(
        "  <link name=\"{name}\">\n    <visual>\n      <origin xyz=\"0 0 0\" rpy=\"0 0 0\"/>\n      <geometry>\n        <mesh filename=\"{mesh}\"/>\n      </geometry>\n      <material name=\"hit_dlr_grey\"/>\n    </visual>\n    <collision>\n      <origin xyz=\"0 0 0\" rpy=\"0 0 0\"/>\n      <geometry>\n        <mesh filename=\"{mesh}\"/>\n      </geometry>\n    </collision>\n  </link>\n"
    )
}

#[allow(clippy::too_many_arguments)]
fn joint_xml(
    name: &str,
    kind: &str,
    parent: &str,
    child: &str,
    o: [f64; 3],
    rpy: [f64; 3],
    axis: [f64; 3],
    lim: Option<(f64, f64)>,
) -> String {
    let mut s = format!(
        "  <joint name=\"{name}\" type=\"{kind}\">\n    <parent link=\"{parent}\"/>\n    <child link=\"{child}\"/>\n    <origin xyz=\"{}\" rpy=\"{}\"/>\n",
        xyz(o),
        xyz(rpy)
    );
    if let Some((lo, hi)) = lim {
        s.push_str(&format!(
            "    <axis xyz=\"{}\"/>\n    <limit lower=\"{}\" upper=\"{}\" effort=\"5\" velocity=\"3\"/>\n",
            xyz(axis),
            f(lo),
            f(hi)
        ));
    }
    s.push_str("  </joint>\n");
    s
}

/// The URDF text.
pub fn urdf_text() -> String {
    let d = |x: f64| x.to_radians();
    let mut s = String::from(
        "<?xml version=\"1.0\"?>\n<!-- Generated by rpq_model_gen (hit-dlr): do not edit. HIT/DLR four-finger hand, 13 DOF.\n     The joints <finger>_mid_joint and <finger>_dist_joint of each finger are mechanically\n     coupled 1:1 (one DOF); they are listed as independent joints (no mimic) and must be\n     commanded equal. Frames: palm x towards the fingertips, z palmar, y radial. -->\n<robot name=\"hit_dlr_hand\">\n  <material name=\"hit_dlr_grey\">\n    <color rgba=\"0.6 0.62 0.65 1\"/>\n  </material>\n",
    );
    for l in links() {
        s.push_str(&link_xml(&l));
    }
    for fi in FINGERS {
        s.push_str(&format!("  <link name=\"{fi}_tip\"/>\n"));
    }
    s.push_str(&joint_xml(
        "thumb_palm_joint",
        "revolute",
        "palm",
        "thumb_rotation",
        THUMB_ROOT,
        [
            std::f64::consts::FRAC_PI_2,
            0.0,
            std::f64::consts::FRAC_PI_2,
        ],
        [0.0, 0.0, 1.0],
        Some((0.0, d(90.0))),
    ));
    let q = UnitQuaternion::from_euler_angles(std::f64::consts::FRAC_PI_2, 0.0, 0.0)
        * UnitQuaternion::from_euler_angles(0.0, 0.0, THUMB_YAW)
        * UnitQuaternion::from_euler_angles(std::f64::consts::PI, 0.0, 0.0);
    let (r, p, y) = q.euler_angles();
    let mut bases: Vec<(&str, &str, [f64; 3], [f64; 3])> = vec![(
        "thumb",
        "thumb_rotation",
        [THUMB_OFFSET, 0.0, 0.0],
        [r, p, y],
    )];
    for (n, b) in BASES {
        bases.push((n, "palm", b, [0.0; 3]));
    }
    let flex_axis = [0.0, -1.0, 0.0];
    for (n, parent, o, rpy) in bases {
        s.push_str(&joint_xml(
            &format!("{n}_abd_joint"),
            "revolute",
            parent,
            &format!("{n}_base"),
            o,
            rpy,
            [0.0, 0.0, 1.0],
            Some((-d(20.0), d(20.0))),
        ));
        s.push_str(&joint_xml(
            &format!("{n}_flex_joint"),
            "revolute",
            &format!("{n}_base"),
            &format!("{n}_proximal"),
            [0.0; 3],
            [0.0; 3],
            flex_axis,
            Some((-d(75.0), d(75.0))),
        ));
        s.push_str(&joint_xml(
            &format!("{n}_mid_joint"),
            "revolute",
            &format!("{n}_proximal"),
            &format!("{n}_middle"),
            [L[0], 0.0, 0.0],
            [0.0; 3],
            flex_axis,
            Some((0.0, d(90.0))),
        ));
        s.push_str(&joint_xml(
            &format!("{n}_dist_joint"),
            "revolute",
            &format!("{n}_middle"),
            &format!("{n}_distal"),
            [L[1], 0.0, 0.0],
            [0.0; 3],
            flex_axis,
            Some((0.0, d(90.0))),
        ));
        s.push_str(&joint_xml(
            &format!("{n}_tip_joint"),
            "fixed",
            &format!("{n}_distal"),
            &format!("{n}_tip"),
            [L[2], 0.0, 0.0],
            [0.0; 3],
            [0.0; 3],
            None,
        ));
    }
    s.push_str("</robot>\n");
    let _ = Vector3::<f64>::zeros();
    s
}
