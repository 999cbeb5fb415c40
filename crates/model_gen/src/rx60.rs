//! The Stäubli RX60B-like arm: DH table, joints, link shapes and URDF text.
//!
//! # Kinematics (standard Denavit–Hartenberg)
//!
//! `T(i-1 → i) = Rz(θi) · Tz(di) · Tx(ai) · Rx(αi)` with `θi = qi + offset_i`:
//!
//! | i | offset | d (m) | a (m) | α      |
//! |---|--------|-------|-------|--------|
//! | 1 | 0      | 0.341 | 0     | −π/2   |
//! | 2 | −π/2   | 0     | 0.290 | 0      |
//! | 3 | +π/2   | 0     | 0     | +π/2   |
//! | 4 | 0      | 0.310 | 0     | −π/2   |
//! | 5 | 0      | 0     | 0     | +π/2   |
//! | 6 | 0      | 0.065 | 0     | 0      |
//!
//! J1 is vertical, J2 and J3 are parallel horizontal axes, J4–J5–J6 form a spherical wrist
//! (their axes meet at the wrist centre). At `q = 0` the arm stands straight up, as
//! Stäubli's own zero: the wrist centre is at z = 0.341 + 0.290 + 0.310 = 0.941 m and the
//! flange (DH frame 6) at z = 1.006 m, with the same orientation as the base.
//!
//! # URDF frames
//!
//! The URDF does not copy the DH frames. Its link frames follow the ROS-Industrial habit:
//! at `q = 0` every link frame is parallel to `base_link`, each sits on its joint's axis,
//! and every joint axis is ±x/y/z. Link origins at `q = 0`: `link_1` and `link_2` at the
//! shoulder (0, 0, 0.341), `link_3` and `link_4` at the elbow (0, 0, 0.631), `link_5` at
//! the wrist centre (0, 0, 0.941), `link_6` and `tool0` at the flange (0, 0, 1.006).
//! Positive joint motion equals positive DH `θ`: J1, J4, J6 turn about +z, J2, J3, J5
//! about +y of their parent frames. `link_3`, `link_5`, `link_6` coincide with DH frames
//! 3, 5 and 6 for every `q`; the others differ from their DH frame by a constant transform.

use std::f64::consts::FRAC_PI_2;

use nalgebra::{Matrix3, Vector3};

use crate::geometry::{Frame, Mesh, Profile, Section};
use crate::mass::{union_mass_properties, MassProperties};
use crate::Error;

/// One row of a standard DH table.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DhRow {
    /// Constant added to the joint variable: `θ = q + theta_offset` (rad).
    pub theta_offset: f64,
    /// Offset along the previous z axis (m).
    pub d: f64,
    /// Length along the new x axis (m).
    pub a: f64,
    /// Twist about the new x axis (rad).
    pub alpha: f64,
}

/// The RX60 DH table (standard convention; see the module docs).
pub const RX60_DH: [DhRow; 6] = [
    DhRow {
        theta_offset: 0.0,
        d: 0.341,
        a: 0.0,
        alpha: -FRAC_PI_2,
    },
    DhRow {
        theta_offset: -FRAC_PI_2,
        d: 0.0,
        a: 0.290,
        alpha: 0.0,
    },
    DhRow {
        theta_offset: FRAC_PI_2,
        d: 0.0,
        a: 0.0,
        alpha: FRAC_PI_2,
    },
    DhRow {
        theta_offset: 0.0,
        d: 0.310,
        a: 0.0,
        alpha: -FRAC_PI_2,
    },
    DhRow {
        theta_offset: 0.0,
        d: 0.0,
        a: 0.0,
        alpha: FRAC_PI_2,
    },
    DhRow {
        theta_offset: 0.0,
        d: 0.065,
        a: 0.0,
        alpha: 0.0,
    },
];

/// Shoulder height d1 (m).
pub const D1: f64 = 0.341;
/// Upper arm length a2 (m).
pub const A2: f64 = 0.290;
/// Forearm length d4 (m).
pub const D4: f64 = 0.310;
/// Wrist centre to flange d6 (m).
pub const D6: f64 = 0.065;

/// Robot name used in the URDF and the file names.
pub const ROBOT_NAME: &str = "rx60b";

/// Links that carry a mesh, base to flange.
pub const LINKS: [&str; 7] = [
    "base_link",
    "link_1",
    "link_2",
    "link_3",
    "link_4",
    "link_5",
    "link_6",
];

/// Density (kg/m³) giving the meshes a total mass close to the RX60's 41 kg.
pub const DENSITY: f64 = 2150.0;

/// Spacing (m) of the rays used to integrate mass properties.
pub const MASS_RAY_SPACING: f64 = 0.0015;

/// A revolute joint of the model.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JointSpec {
    /// Joint name.
    pub name: &'static str,
    /// Parent link.
    pub parent: &'static str,
    /// Child link.
    pub child: &'static str,
    /// Origin of the child frame in the parent frame at q = 0 (m).
    pub origin: [f64; 3],
    /// Rotation axis in the child (= parent at q = 0) frame.
    pub axis: [f64; 3],
    /// Lower limit (degrees).
    pub lower_deg: f64,
    /// Upper limit (degrees).
    pub upper_deg: f64,
    /// Velocity limit (degrees per second).
    pub velocity_deg: f64,
    /// Effort limit (N·m).
    pub effort: f64,
}

/// The six joints. Velocity limits are the RX60's nominal joint speeds, efforts are
/// plausible peak torques for an arm of this size.
pub const JOINTS: [JointSpec; 6] = [
    JointSpec {
        name: "joint_1",
        parent: "base_link",
        child: "link_1",
        origin: [0.0, 0.0, D1],
        axis: [0.0, 0.0, 1.0],
        lower_deg: -160.0,
        upper_deg: 160.0,
        velocity_deg: 287.0,
        effort: 150.0,
    },
    JointSpec {
        name: "joint_2",
        parent: "link_1",
        child: "link_2",
        origin: [0.0, 0.0, 0.0],
        axis: [0.0, 1.0, 0.0],
        lower_deg: -127.5,
        upper_deg: 127.5,
        velocity_deg: 287.0,
        effort: 150.0,
    },
    JointSpec {
        name: "joint_3",
        parent: "link_2",
        child: "link_3",
        origin: [0.0, 0.0, A2],
        axis: [0.0, 1.0, 0.0],
        lower_deg: -134.5,
        upper_deg: 134.5,
        velocity_deg: 319.0,
        effort: 70.0,
    },
    JointSpec {
        name: "joint_4",
        parent: "link_3",
        child: "link_4",
        origin: [0.0, 0.0, 0.0],
        axis: [0.0, 0.0, 1.0],
        lower_deg: -270.0,
        upper_deg: 270.0,
        velocity_deg: 410.0,
        effort: 20.0,
    },
    JointSpec {
        name: "joint_5",
        parent: "link_4",
        child: "link_5",
        origin: [0.0, 0.0, D4],
        axis: [0.0, 1.0, 0.0],
        lower_deg: -109.5,
        upper_deg: 120.5,
        velocity_deg: 320.0,
        effort: 20.0,
    },
    JointSpec {
        name: "joint_6",
        parent: "link_5",
        child: "link_6",
        origin: [0.0, 0.0, D6],
        axis: [0.0, 0.0, 1.0],
        lower_deg: -270.0,
        upper_deg: 270.0,
        velocity_deg: 700.0,
        effort: 10.0,
    },
];

/// Origin of each meshed link's frame in `base_link` at q = 0 (frames are parallel then).
pub fn link_origin_at_zero(link: &str) -> Option<Vector3<f64>> {
    let mut p = Vector3::zeros();
    if link == "base_link" {
        return Some(p);
    }
    for j in &JOINTS {
        p += Vector3::from(j.origin);
        if j.child == link {
            return Some(p);
        }
    }
    None
}

/// Builds the mesh of one link in its own frame. Shapes are laid out in `base_link`
/// coordinates at q = 0 and then moved into the link frame.
///
/// Each link is a union of closed lofted shells (rounded cylinders, rounded-rectangle
/// beams, domed lugs); shells of one link may overlap, shells never share vertices.
pub fn link_mesh(link: &str) -> Result<Mesh, Error> {
    let mut m = Mesh::default();
    let c = Section::circle;
    // A cylinder of radius r along a frame, length len, both ends filleted.
    let cyl = |r: f64, len: f64, fillet: f64, fsteps: usize, side: usize| {
        Profile::flat_start(0.0, c(r), fillet, fsteps)
            .side(len - fillet, c(r), side)
            .flat_end(fillet, fsteps)
    };
    match link {
        "base_link" => {
            // Foot plate (rounded square) blending into the column, one shell.
            let plate = Section::superellipse(0.105, 0.105, 4.0);
            let p = Profile::flat_start(0.0, plate, 0.005, 3)
                .side(0.017, plate, 1)
                .fillet_in(0.005, 3)
                .step(c(0.085))
                .side(0.200, c(0.085), 6)
                .flat_end(0.012, 5);
            m.add_loft("foot and column", Frame::along_z(0.0, 0.0, 0.0), &p, 80)?;
            // Cable connector box on the back, its inner end buried in the column.
            let s = Section::rounded_rect(0.035, 0.04);
            let p = Profile::flat_start(0.0, s, 0.006, 3)
                .side(0.058, s, 2)
                .flat_end(0.0, 0);
            m.add_loft("connector", Frame::along_x(-0.118, 0.0, 0.09), &p, 32)?;
        }
        "link_1" => {
            // Turret: vertical column from the base to the shoulder axis.
            let p = Profile::flat_start(0.218, c(0.08), 0.008, 4)
                .side(D1, c(0.08), 6)
                .flat_end(0.0, 0);
            m.add_loft("turret", Frame::along_z(0.0, 0.0, 0.0), &p, 80)?;
            // Shoulder housing around the J2 axis (along y), open side at +y for the arm.
            m.add_loft(
                "shoulder housing",
                Frame::along_y(0.0, -0.12, D1),
                &cyl(0.09, 0.205, 0.012, 4, 6),
                80,
            )?;
            // J2 motor cover on the -y side.
            let p = Profile::flat_start(0.0, c(0.06), 0.01, 3)
                .side(0.04, c(0.06), 2)
                .flat_end(0.0, 0);
            m.add_loft("J2 motor cover", Frame::along_y(0.0, -0.155, D1), &p, 48)?;
        }
        "link_2" => {
            // Upper arm beside the shoulder (+y), rounded-rectangle beam between two bosses.
            m.add_loft(
                "shoulder boss",
                Frame::along_y(0.0, 0.09, D1),
                &cyl(0.085, 0.07, 0.01, 3, 3),
                80,
            )?;
            m.add_loft(
                "elbow boss",
                Frame::along_y(0.0, 0.092, D1 + A2),
                &cyl(0.066, 0.066, 0.01, 3, 3),
                64,
            )?;
            let p = Profile::flat_start(0.0, Section::rounded_rect(0.07, 0.03), 0.0, 0)
                .side(A2, Section::rounded_rect(0.055, 0.03), 12)
                .flat_end(0.0, 0);
            m.add_loft("beam", Frame::along_z(0.0, 0.125, D1), &p, 80)?;
        }
        "link_3" => {
            // Elbow housing around J3 (along y), centred on the forearm, plus the J4 sleeve.
            m.add_loft(
                "elbow housing",
                Frame::along_y(0.0, -0.065, D1 + A2),
                &cyl(0.062, 0.153, 0.01, 3, 6),
                64,
            )?;
            let p = Profile::flat_start(0.0, c(0.052), 0.0, 0)
                .side(0.099, c(0.052), 4)
                .flat_end(0.006, 3);
            m.add_loft("J4 sleeve", Frame::along_z(0.0, 0.0, D1 + A2), &p, 64)?;
        }
        "link_4" => {
            let elbow = D1 + A2;
            // Tapered forearm tube, its top buried in the yoke.
            let p = Profile::flat_start(0.108, c(0.05), 0.004, 3)
                .side(0.225, c(0.045), 8)
                .flat_end(0.0, 0);
            m.add_loft("forearm tube", Frame::along_z(0.0, 0.0, elbow), &p, 64)?;
            // Yoke carrying the two wrist lugs.
            let s = Section::rounded_rect(0.048, 0.056);
            let p = Profile::flat_start(0.0, s, 0.006, 3)
                .side(0.027, s, 2)
                .flat_end(0.006, 3);
            m.add_loft("yoke", Frame::along_z(0.0, 0.0, elbow + 0.212), &p, 48)?;
            // Wrist lugs (fork arms) on both sides of the J5 axis, domed around it.
            let s = Section::rounded_rect(0.036, 0.008);
            for (name, y) in [("lug +y", 0.046), ("lug -y", -0.046)] {
                let p = Profile::flat_start(0.0, s, 0.0, 0)
                    .side(0.075, s, 3)
                    .dome_end(0.036, 8);
                m.add_loft(name, Frame::along_z(0.0, y, elbow + 0.235), &p, 32)?;
            }
        }
        "link_5" => {
            let wrist = D1 + A2 + D4;
            m.add_loft(
                "wrist body",
                Frame::along_y(0.0, -0.036, wrist),
                &cyl(0.034, 0.072, 0.006, 3, 3),
                48,
            )?;
            let p = Profile::flat_start(0.0, c(0.03), 0.0, 0)
                .side(0.04, c(0.03), 3)
                .flat_end(0.004, 3);
            m.add_loft("J6 housing", Frame::along_z(0.0, 0.0, wrist), &p, 48)?;
        }
        "link_6" => {
            let flange = D1 + A2 + D4 + D6;
            m.add_loft(
                "flange",
                Frame::along_z(0.0, 0.0, flange - 0.019),
                &cyl(0.031, 0.019, 0.003, 3, 2),
                64,
            )?;
        }
        other => {
            return Err(Error::UnknownLink {
                link: other.to_owned(),
            })
        }
    }
    let origin = link_origin_at_zero(link).ok_or_else(|| Error::UnknownLink {
        link: link.to_owned(),
    })?;
    m.translate(-origin);
    Ok(m)
}

/// Path of a link's mesh relative to the repository (output) root.
pub fn mesh_path(link: &str) -> String {
    format!("meshes/{ROBOT_NAME}/{link}.stl")
}

/// Path of the URDF relative to the repository (output) root.
pub fn urdf_path() -> String {
    format!("urdf/{ROBOT_NAME}.urdf")
}

/// Formats a number with 6 significant digits in exponent form (stable, parseable).
fn sig(x: f64) -> String {
    let s = format!("{x:.5e}");
    if s == "-0.00000e0" {
        "0.00000e0".to_owned()
    } else {
        s
    }
}

fn vec3(v: [f64; 3]) -> String {
    format!("{} {} {}", v[0], v[1], v[2])
}

/// Writes the URDF text, given each meshed link's mass properties (per unit density).
pub fn urdf_text(mass: &[(&str, MassProperties)]) -> String {
    let mut s = String::new();
    s.push_str("<?xml version=\"1.0\"?>\n");
    s.push_str(
        "<!-- Generated by rpq_model_gen (crates/model_gen). Do not edit by hand; regenerate from the\n     \
         repository root with: cargo run -p rpq_model_gen rx60\n\n     \
         Staubli RX60B-like 6-axis arm. Standard DH, T(i-1,i) = Rz(q_i + offset_i) Tz(d_i) Tx(a_i) Rx(alpha_i):\n       \
         i  offset   d (m)   a (m)   alpha\n",
    );
    for (i, r) in RX60_DH.iter().enumerate() {
        let ang = |x: f64| {
            if x == 0.0 {
                "0".to_owned()
            } else if x == FRAC_PI_2 {
                "+pi/2".to_owned()
            } else if x == -FRAC_PI_2 {
                "-pi/2".to_owned()
            } else {
                format!("{x}")
            }
        };
        s.push_str(&format!(
            "       {}  {:<7}  {:<6}  {:<6}  {}\n",
            i + 1,
            ang(r.theta_offset),
            format!("{:.3}", r.d),
            format!("{:.3}", r.a),
            ang(r.alpha)
        ));
    }
    s.push_str(
        "     Zero configuration: arm straight up; wrist centre at z = 0.941 m, flange (DH frame 6 = tool0)\n     \
         at z = 1.006 m, parallel to base_link. URDF link frames are parallel to base_link at q = 0 and sit on\n     \
         their joint axes (ROS-Industrial style); link_3, link_5, link_6 equal DH frames 3, 5, 6.\n     \
         Meshes: one closed binary STL per link, in the link frame, metres, union of closed shells.\n     \
         Inertials: union volume of the mesh shells at a uniform density of ",
    );
    s.push_str(&format!("{DENSITY} kg/m^3. -->\n"));
    s.push_str(&format!("<robot name=\"{ROBOT_NAME}\">\n"));
    s.push_str(
        "  <material name=\"rx60_body\">\n    <color rgba=\"0.92 0.9 0.84 1\"/>\n  </material>\n",
    );
    s.push_str("  <material name=\"rx60_flange\">\n    <color rgba=\"0.55 0.56 0.58 1\"/>\n  </material>\n");
    for (link, mp) in mass {
        let mass_kg = mp.volume * DENSITY;
        let i = mp.inertia * DENSITY;
        let material = if *link == "link_6" {
            "rx60_flange"
        } else {
            "rx60_body"
        };
        let file = format!("../{}", mesh_path(link));
        let c = mp.centroid;
        s.push_str(&format!("  <link name=\"{link}\">\n"));
        s.push_str("    <inertial>\n");
        s.push_str(&format!(
            "      <origin xyz=\"{} {} {}\" rpy=\"0 0 0\"/>\n",
            sig(c.x),
            sig(c.y),
            sig(c.z)
        ));
        s.push_str(&format!("      <mass value=\"{}\"/>\n", sig(mass_kg)));
        s.push_str(&format!(
            "      <inertia ixx=\"{}\" ixy=\"{}\" ixz=\"{}\" iyy=\"{}\" iyz=\"{}\" izz=\"{}\"/>\n",
            sig(i[(0, 0)]),
            sig(i[(0, 1)]),
            sig(i[(0, 2)]),
            sig(i[(1, 1)]),
            sig(i[(1, 2)]),
            sig(i[(2, 2)])
        ));
        s.push_str("    </inertial>\n");
        s.push_str("    <visual>\n      <origin xyz=\"0 0 0\" rpy=\"0 0 0\"/>\n");
        s.push_str(&format!(
            "      <geometry>\n        <mesh filename=\"{file}\"/>\n      </geometry>\n"
        ));
        s.push_str(&format!(
            "      <material name=\"{material}\"/>\n    </visual>\n"
        ));
        s.push_str("    <collision>\n      <origin xyz=\"0 0 0\" rpy=\"0 0 0\"/>\n");
        s.push_str(&format!(
            "      <geometry>\n        <mesh filename=\"{file}\"/>\n      </geometry>\n"
        ));
        s.push_str("    </collision>\n  </link>\n");
    }
    s.push_str("  <link name=\"tool0\"/>\n");
    for j in &JOINTS {
        s.push_str(&format!(
            "  <joint name=\"{}\" type=\"revolute\">\n",
            j.name
        ));
        s.push_str(&format!(
            "    <parent link=\"{}\"/>\n    <child link=\"{}\"/>\n",
            j.parent, j.child
        ));
        s.push_str(&format!(
            "    <origin xyz=\"{}\" rpy=\"0 0 0\"/>\n",
            vec3(j.origin)
        ));
        s.push_str(&format!("    <axis xyz=\"{}\"/>\n", vec3(j.axis)));
        s.push_str(&format!(
            "    <limit lower=\"{}\" upper=\"{}\" effort=\"{}\" velocity=\"{}\"/>\n",
            j.lower_deg.to_radians(),
            j.upper_deg.to_radians(),
            j.effort,
            j.velocity_deg.to_radians()
        ));
        s.push_str("  </joint>\n");
    }
    s.push_str("  <joint name=\"joint_6-tool0\" type=\"fixed\">\n");
    s.push_str("    <parent link=\"link_6\"/>\n    <child link=\"tool0\"/>\n");
    s.push_str("    <origin xyz=\"0 0 0\" rpy=\"0 0 0\"/>\n  </joint>\n");
    s.push_str("</robot>\n");
    s
}

/// Mass properties (per unit density) of every meshed link, in [`LINKS`] order.
pub fn mass_properties(meshes: &[(&'static str, Mesh)]) -> Vec<(&'static str, MassProperties)> {
    meshes
        .iter()
        .map(|(name, mesh)| (*name, union_mass_properties(mesh, MASS_RAY_SPACING)))
        .collect()
}

/// Inertia tensor check used by tests: symmetric positive definite with the triangle
/// inequality on principal moments.
pub fn plausible_inertia(i: &Matrix3<f64>) -> bool {
    let sym = (i - i.transpose()).norm() < 1e-12 * i.norm();
    let eig = i.symmetric_eigen().eigenvalues;
    let (a, b, c) = (eig[0], eig[1], eig[2]);
    sym && a > 0.0 && b > 0.0 && c > 0.0 && a + b >= c && b + c >= a && a + c >= b
}
