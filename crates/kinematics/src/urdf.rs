//! URDF input: the only module that touches `urdf_rs` types.

use std::path::Path;

use nalgebra::{Isometry3, Translation3, UnitQuaternion, Vector3};

use crate::model::{Geometry, JointKind, JointLimits, JointSpec, LinkSpec, Robot, Shape};
use crate::Error;

fn pose(p: &urdf_rs::Pose) -> Isometry3<f64> {
    let [x, y, z] = p.xyz.0;
    let [r, pi, ya] = p.rpy.0;
    // URDF rpy: fixed-axis roll about x, then pitch about y, then yaw about z.
    Isometry3::from_parts(
        Translation3::new(x, y, z),
        UnitQuaternion::from_euler_angles(r, pi, ya),
    )
}

/// A visual or collision element of a URDF link: its origin and geometry.
fn shape(origin: &urdf_rs::Pose, g: &urdf_rs::Geometry) -> Shape {
    Shape {
        origin: pose(origin),
        geometry: geometry(g),
    }
}

fn geometry(g: &urdf_rs::Geometry) -> Geometry {
    match g {
        urdf_rs::Geometry::Mesh { filename, scale } => Geometry::Mesh {
            filename: filename.clone(),
            scale: scale.map_or(Vector3::repeat(1.0), |s| Vector3::from(s.0)),
        },
        urdf_rs::Geometry::Box { size } => Geometry::Box {
            size: Vector3::from(size.0),
        },
        urdf_rs::Geometry::Cylinder { radius, length } => Geometry::Cylinder {
            radius: *radius,
            length: *length,
        },
        urdf_rs::Geometry::Capsule { radius, length } => Geometry::Capsule {
            radius: *radius,
            length: *length,
        },
        urdf_rs::Geometry::Sphere { radius } => Geometry::Sphere { radius: *radius },
    }
}

fn robot_from_urdf(urdf: &urdf_rs::Robot) -> Result<Robot, Error> {
    let links = urdf
        .links
        .iter()
        .map(|l| LinkSpec {
            name: l.name.clone(),
            visual: l
                .visual
                .iter()
                .map(|v| shape(&v.origin, &v.geometry))
                .collect(),
            collision: l
                .collision
                .iter()
                .map(|c| shape(&c.origin, &c.geometry))
                .collect(),
        })
        .collect();
    let joints = urdf
        .joints
        .iter()
        .map(|j| {
            if let Some(m) = &j.mimic {
                return Err(Error::MimicUnsupported {
                    joint: j.name.clone(),
                    mimicked: m.joint.clone(),
                });
            }
            let kind = match j.joint_type {
                urdf_rs::JointType::Fixed => JointKind::Fixed,
                urdf_rs::JointType::Revolute => JointKind::Revolute,
                urdf_rs::JointType::Continuous => JointKind::Continuous,
                urdf_rs::JointType::Prismatic => JointKind::Prismatic,
                ref other => {
                    return Err(Error::UnsupportedJointType {
                        joint: j.name.clone(),
                        kind: format!("{other:?}").to_lowercase(),
                    })
                }
            };
            Ok(JointSpec {
                name: j.name.clone(),
                kind,
                parent: j.parent.link.clone(),
                child: j.child.link.clone(),
                origin: pose(&j.origin),
                axis: Vector3::from(j.axis.xyz.0),
                limits: JointLimits {
                    lower: j.limit.lower,
                    upper: j.limit.upper,
                    velocity: j.limit.velocity,
                    effort: j.limit.effort,
                },
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Robot::new(urdf.name.clone(), links, joints)
}

impl Robot {
    /// Parses and validates a URDF document.
    ///
    /// Supported joints: fixed, revolute, continuous, prismatic; mimic joints and
    /// floating/planar/spherical joints are rejected with an error.
    ///
    /// ```
    /// use rpq_kinematics::Robot;
    /// let robot = Robot::from_urdf_str(include_str!("../../../urdf/rx60b.urdf"))?;
    /// assert_eq!(robot.dof(), 6);
    /// assert_eq!(robot.root_link().name, "base_link");
    /// assert!(Robot::from_urdf_str("<robot name='x'><link name='a'/>").is_err());
    /// # Ok::<(), rpq_kinematics::Error>(())
    /// ```
    pub fn from_urdf_str(urdf: &str) -> Result<Robot, Error> {
        let parsed = urdf_rs::read_from_string(urdf).map_err(|e| Error::Urdf {
            message: e.to_string(),
        })?;
        robot_from_urdf(&parsed)
    }

    /// Reads a URDF file and parses it with [`Robot::from_urdf_str`].
    pub fn from_urdf_file(path: impl AsRef<Path>) -> Result<Robot, Error> {
        let path = path.as_ref();
        let text = rpq_base::file::read_to_string_bounded(path, rpq_base::file::TEXT_MAX_BYTES)
            .map_err(|e| Error::Io {
                path: path.to_owned(),
                source: e.into_io(),
            })?;
        Robot::from_urdf_str(&text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Kinematics;

    fn chain(extra_links: &str, joints: &str) -> String {
        format!(
            r#"<robot name="t">
                 <link name="a"/><link name="b"/><link name="c"/>{extra_links}
                 {joints}
               </robot>"#
        )
    }

    const AB: &str = r#"<joint name="j1" type="revolute"><parent link="a"/><child link="b"/>
        <axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>"#;
    const BC: &str = r#"<joint name="j2" type="prismatic"><parent link="b"/><child link="c"/>
        <origin xyz="1 0 0" rpy="0 0 1.5707963267948966"/>
        <axis xyz="2 0 0"/><limit lower="0" upper="0.5" effort="1" velocity="1"/></joint>"#;

    #[test]
    fn parses_revolute_prismatic_chain_with_rpy_and_unnormalized_axis() {
        let r = Robot::from_urdf_str(&chain("", &format!("{AB}{BC}"))).unwrap();
        assert_eq!(r.dof(), 2);
        assert_eq!(r.joints()[1].kind, JointKind::Prismatic);
        // j1 turns 90°: b's x axis points along +y; c sits 1 m along it, turned by a
        // further 90° (rpy yaw), and slides 0.5 m along its own x (now -x of the root).
        let p = r
            .link_pose("c", &[std::f64::consts::FRAC_PI_2, 0.5])
            .unwrap();
        assert!((p.translation.vector - Vector3::new(-0.5, 1.0, 0.0)).norm() < 1e-15);
        let mut buf = vec![Isometry3::identity(); r.link_count()];
        Kinematics::forward_kinematics_into(&r, &[0.2, 0.1], &mut buf).unwrap();
        assert_eq!(buf[2], r.link_pose("c", &[0.2, 0.1]).unwrap());
    }

    #[test]
    fn rpy_is_fixed_axis_roll_pitch_yaw() {
        let p = urdf_rs::Pose {
            xyz: urdf_rs::Vec3([0.0; 3]),
            rpy: urdf_rs::Vec3([0.1, 0.2, 0.3]),
        };
        let want = nalgebra::Rotation3::from_axis_angle(&Vector3::z_axis(), 0.3)
            * nalgebra::Rotation3::from_axis_angle(&Vector3::y_axis(), 0.2)
            * nalgebra::Rotation3::from_axis_angle(&Vector3::x_axis(), 0.1);
        let got = pose(&p).rotation.to_rotation_matrix();
        assert!((got.matrix() - want.matrix()).abs().max() < 1e-15);
    }

    #[test]
    fn malformed_documents_are_errors() {
        for bad in [
            "",
            "not xml",
            "<robot name='x'><link name='a'/>",
            "<robot name='x'><link name='a'/><joint name='j' type='revolute'><parent link='a'/></joint></robot>",
            "<robot name='x'><link name='a'/><link name='b'/><joint name='j' type='revolute'><parent link='a'/><child link='b'/><limit lower='x' upper='1' velocity='1'/></joint></robot>",
        ] {
            assert!(matches!(Robot::from_urdf_str(bad), Err(Error::Urdf { .. }) | Err(Error::NoLinks)), "{bad:?}");
        }
    }

    #[test]
    fn structural_errors_name_the_culprit() {
        // b -> a closes a cycle a -> b -> c -> ... ; with a root missing entirely.
        let cyc = r#"<joint name="j3" type="fixed"><parent link="c"/><child link="a"/></joint>"#;
        match Robot::from_urdf_str(&chain("", &format!("{AB}{BC}{cyc}"))) {
            Err(Error::Cycle { links }) => assert_eq!(links.len(), 3),
            other => panic!("{other:?}"),
        }
        // A cycle b -> c -> b beside a root a.
        let back = r#"<joint name="j3" type="fixed"><parent link="c"/><child link="b"/></joint>"#;
        assert!(matches!(
            Robot::from_urdf_str(&chain("", &format!("{BC}{back}"))),
            Err(Error::Cycle { links }) if links == ["b", "c"]
        ));
        // Two roots.
        assert!(matches!(
            Robot::from_urdf_str(&chain("", AB)),
            Err(Error::MultipleRoots { roots }) if roots == ["a", "c"]
        ));
        // Two parents.
        let ac = r#"<joint name="j3" type="fixed"><parent link="a"/><child link="b"/></joint>"#;
        assert!(matches!(
            Robot::from_urdf_str(&chain("", &format!("{AB}{BC}{ac}"))),
            Err(Error::MultipleParents { link, .. }) if link == "b"
        ));
        // Unknown link, duplicate names.
        let ghost =
            r#"<joint name="j3" type="fixed"><parent link="c"/><child link="ghost"/></joint>"#;
        assert!(matches!(
            Robot::from_urdf_str(&chain("", &format!("{AB}{BC}{ghost}"))),
            Err(Error::JointLinkNotFound { joint, link }) if joint == "j3" && link == "ghost"
        ));
        assert!(matches!(
            Robot::from_urdf_str(&chain(r#"<link name="a"/>"#, &format!("{AB}{BC}"))),
            Err(Error::DuplicateLink { name }) if name == "a"
        ));
        let dup = BC.replace("j2", "j1");
        assert!(matches!(
            Robot::from_urdf_str(&chain("", &format!("{AB}{dup}"))),
            Err(Error::DuplicateJoint { name }) if name == "j1"
        ));
    }

    #[test]
    fn unsupported_joints_and_mimic_are_rejected() {
        let floating =
            r#"<joint name="f" type="floating"><parent link="b"/><child link="c"/></joint>"#;
        assert!(matches!(
            Robot::from_urdf_str(&chain("", &format!("{AB}{floating}"))),
            Err(Error::UnsupportedJointType { joint, kind }) if joint == "f" && kind == "floating"
        ));
        let mimic = r#"<joint name="m" type="revolute"><parent link="b"/><child link="c"/>
            <limit lower="-1" upper="1" effort="1" velocity="1"/><mimic joint="j1" multiplier="2"/></joint>"#;
        assert!(matches!(
            Robot::from_urdf_str(&chain("", &format!("{AB}{mimic}"))),
            Err(Error::MimicUnsupported { joint, mimicked }) if joint == "m" && mimicked == "j1"
        ));
        let zero_axis = AB.replace("0 0 1", "0 0 0");
        assert!(matches!(
            Robot::from_urdf_str(&chain("", &format!("{zero_axis}{BC}"))),
            Err(Error::InvalidJoint { joint, .. }) if joint == "j1"
        ));
        let inverted = AB.replace("lower=\"-1\" upper=\"1\"", "lower=\"1\" upper=\"-1\"");
        assert!(matches!(
            Robot::from_urdf_str(&chain("", &format!("{inverted}{BC}"))),
            Err(Error::InvalidJoint { joint, .. }) if joint == "j1"
        ));
    }

    #[test]
    fn continuous_joints_are_unlimited_and_fixed_joints_have_no_variable() {
        let cont = r#"<joint name="j1" type="continuous"><parent link="a"/><child link="b"/><axis xyz="0 1 0"/></joint>"#;
        let fixed = r#"<joint name="j2" type="fixed"><parent link="b"/><child link="c"/><origin xyz="0 0 1"/></joint>"#;
        let r = Robot::from_urdf_str(&chain("", &format!("{cont}{fixed}"))).unwrap();
        assert_eq!(r.dof(), 1);
        assert!(r.within_limits(&[1e6]).unwrap());
        let p = r.link_pose("c", &[std::f64::consts::FRAC_PI_2]).unwrap();
        assert!((p.translation.vector - Vector3::new(1.0, 0.0, 0.0)).norm() < 1e-15);
    }

    #[test]
    fn file_reading_reports_the_path() {
        match Robot::from_urdf_file("/nonexistent/robot.urdf") {
            Err(Error::Io { path, .. }) => assert_eq!(path, Path::new("/nonexistent/robot.urdf")),
            other => panic!("{other:?}"),
        }
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("r.urdf");
        std::fs::write(&f, chain("", &format!("{AB}{BC}"))).unwrap();
        assert_eq!(Robot::from_urdf_file(&f).unwrap().dof(), 2);
    }
}
