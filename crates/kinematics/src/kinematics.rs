//! Forward kinematics, Jacobians, joint limits and joint-name handling.

use nalgebra::{Isometry3, Matrix6xX, Point3, Vector3};

use crate::model::{Joint, JointKind, JointLimits, Link, Robot};
use crate::Error;

/// Kinematics of a robot behind a trait, so that control laws can be tested against a
/// mock. [`Robot`] implements it.
pub trait Kinematics {
    /// Number of joint variables.
    fn dof(&self) -> usize;

    /// Number of link frames [`Kinematics::forward_kinematics_into`] fills.
    fn link_count(&self) -> usize;

    /// Writes the pose of every link in the root frame into `poses` (length
    /// [`Kinematics::link_count`]) without allocating.
    fn forward_kinematics_into(&self, q: &[f64], poses: &mut [Isometry3<f64>])
        -> Result<(), Error>;

    /// Writes the geometric Jacobian (6 × dof, linear rows then angular rows, root frame)
    /// of the point `point` (in the frame of link `link`) into `out`, given the link poses
    /// `poses` that [`Kinematics::forward_kinematics_into`] computed for the same `q`.
    fn jacobian_into(
        &self,
        link: usize,
        point: &Point3<f64>,
        poses: &[Isometry3<f64>],
        out: &mut Matrix6xX<f64>,
    ) -> Result<(), Error>;
}

impl Robot {
    /// Robot name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Links in topological order (root first).
    pub fn links(&self) -> &[Link] {
        &self.links
    }

    /// Joints, in the order of their child links.
    pub fn joints(&self) -> &[Joint] {
        &self.joints
    }

    /// The root link.
    pub fn root_link(&self) -> &Link {
        &self.links[0]
    }

    /// Number of joint variables (movable joints).
    pub fn dof(&self) -> usize {
        self.dofs.len()
    }

    /// Names of the movable joints, in joint-vector order.
    pub fn joint_names(&self) -> impl ExactSizeIterator<Item = &str> + '_ {
        self.dofs.iter().map(|&j| self.joints[j].name.as_str())
    }

    /// The movable joints, in joint-vector order.
    pub fn movable_joints(&self) -> impl ExactSizeIterator<Item = &Joint> + '_ {
        self.dofs.iter().map(|&j| &self.joints[j])
    }

    /// Limits of the movable joints, in joint-vector order.
    pub fn joint_limits(&self) -> &[JointLimits] {
        &self.limits
    }

    /// Position of the movable joint `name` in joint vectors.
    pub fn joint_index(&self, name: &str) -> Result<usize, Error> {
        self.dof_by_name
            .get(name)
            .copied()
            .ok_or_else(|| Error::UnknownJoint {
                name: name.to_owned(),
            })
    }

    /// Index of the link `name` in [`Robot::links`] (and in FK outputs).
    pub fn link_index(&self, name: &str) -> Result<usize, Error> {
        self.link_by_name
            .get(name)
            .copied()
            .ok_or_else(|| Error::UnknownLink {
                name: name.to_owned(),
            })
    }

    /// Checks that `q` has one finite value per movable joint.
    #[inline]
    pub fn check_joint_vector(&self, q: &[f64]) -> Result<(), Error> {
        // `0 v` is ±0 for finite `v` and NaN otherwise: one pass without branches (this runs
        // for every configuration a scene is set to), the culprit looked for only on failure
        if q.len() == self.dofs.len() && q.iter().fold(0.0, |acc, &v| acc + 0.0 * v) == 0.0 {
            return Ok(());
        }
        self.joint_vector_error(q)
    }

    /// The error [`Robot::check_joint_vector`] reports for `q`.
    #[cold]
    fn joint_vector_error(&self, q: &[f64]) -> Result<(), Error> {
        if q.len() != self.dofs.len() {
            return Err(Error::WrongLength {
                what: "joint vector",
                expected: self.dofs.len(),
                got: q.len(),
            });
        }
        match q.iter().position(|v| !v.is_finite()) {
            Some(d) => Err(Error::NonFinite {
                joint: self.joints[self.dofs[d]].name.clone(),
                value: q[d],
            }),
            None => Ok(()),
        }
    }

    /// Builds a joint vector from named values (as in a `JointState` message): every
    /// movable joint exactly once, in any order.
    ///
    /// ```
    /// # let robot = rpq_kinematics::Robot::from_urdf_str(include_str!("../../../urdf/rx60b.urdf"))?;
    /// let names = ["joint_6", "joint_5", "joint_4", "joint_3", "joint_2", "joint_1"];
    /// let q = robot.positions_from_named(&names, &[6.0, 5.0, 4.0, 3.0, 2.0, 1.0])?;
    /// assert_eq!(q, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    /// assert!(robot.positions_from_named(&["elbow"], &[0.0]).is_err());
    /// # Ok::<(), rpq_kinematics::Error>(())
    /// ```
    pub fn positions_from_named<S: AsRef<str>>(
        &self,
        names: &[S],
        values: &[f64],
    ) -> Result<Vec<f64>, Error> {
        if names.len() != values.len() {
            return Err(Error::WrongLength {
                what: "joint values (one per name)",
                expected: names.len(),
                got: values.len(),
            });
        }
        let mut q = vec![f64::NAN; self.dofs.len()];
        let mut set = vec![false; self.dofs.len()];
        for (name, &v) in names.iter().zip(values) {
            let d = self.joint_index(name.as_ref())?;
            if set[d] {
                return Err(Error::DuplicateValue {
                    joint: name.as_ref().to_owned(),
                });
            }
            set[d] = true;
            q[d] = v;
        }
        if let Some(d) = set.iter().position(|s| !s) {
            return Err(Error::MissingJoint {
                joint: self.joints[self.dofs[d]].name.clone(),
            });
        }
        self.check_joint_vector(&q)?;
        Ok(q)
    }

    /// True if every value of `q` is within its joint's position limits.
    ///
    /// Errors only for a wrong length or non-finite values.
    pub fn within_limits(&self, q: &[f64]) -> Result<bool, Error> {
        self.check_joint_vector(q)?;
        Ok(q.iter().zip(&self.limits).all(|(&v, l)| l.contains(v)))
    }

    /// `Ok` if `q` is valid and within limits; otherwise the first offending joint.
    pub fn check_limits(&self, q: &[f64]) -> Result<(), Error> {
        self.check_joint_vector(q)?;
        for (d, (&v, l)) in q.iter().zip(&self.limits).enumerate() {
            if !l.contains(v) {
                return Err(Error::OutOfLimits {
                    joint: self.joints[self.dofs[d]].name.clone(),
                    value: v,
                    lower: l.lower,
                    upper: l.upper,
                });
            }
        }
        Ok(())
    }

    /// `q` with every value clamped into its joint's position limits.
    ///
    /// ```
    /// # let robot = rpq_kinematics::Robot::from_urdf_str(include_str!("../../../urdf/rx60b.urdf"))?;
    /// let q = robot.clamp(&[10.0, 0.0, 0.0, 0.0, -10.0, 0.0])?;
    /// assert_eq!(q[0], 160f64.to_radians());
    /// assert_eq!(q[4], -109.5f64.to_radians());
    /// assert!(robot.within_limits(&q)?);
    /// # Ok::<(), rpq_kinematics::Error>(())
    /// ```
    pub fn clamp(&self, q: &[f64]) -> Result<Vec<f64>, Error> {
        let mut out = q.to_vec();
        self.clamp_in_place(&mut out)?;
        Ok(out)
    }

    /// Clamps `q` into the position limits in place.
    pub fn clamp_in_place(&self, q: &mut [f64]) -> Result<(), Error> {
        self.check_joint_vector(q)?;
        for (v, l) in q.iter_mut().zip(&self.limits) {
            *v = v.clamp(l.lower, l.upper);
        }
        Ok(())
    }

    /// Pose of every link in the root frame, in [`Robot::links`] order.
    ///
    /// ```
    /// # let robot = rpq_kinematics::Robot::from_urdf_str(include_str!("../../../urdf/rx60b.urdf"))?;
    /// let poses = robot.forward_kinematics(&[0.0; 6])?;
    /// let flange = poses[robot.link_index("link_6")?];
    /// assert!((flange.translation.z - 1.006).abs() < 1e-12);
    /// # Ok::<(), rpq_kinematics::Error>(())
    /// ```
    pub fn forward_kinematics(&self, q: &[f64]) -> Result<Vec<Isometry3<f64>>, Error> {
        let mut poses = vec![Isometry3::identity(); self.links.len()];
        self.forward_kinematics_into(q, &mut poses)?;
        Ok(poses)
    }

    /// Allocation-free [`Robot::forward_kinematics`]: `poses` must have one entry per link.
    pub fn forward_kinematics_into(
        &self,
        q: &[f64],
        poses: &mut [Isometry3<f64>],
    ) -> Result<(), Error> {
        self.check_joint_vector(q)?;
        if poses.len() != self.links.len() {
            return Err(Error::WrongLength {
                what: "pose buffer (one per link)",
                expected: self.links.len(),
                got: poses.len(),
            });
        }
        poses[0] = Isometry3::identity();
        for (k, link) in self.links.iter().enumerate().skip(1) {
            // Every non-root link has a parent joint and link, stored before it.
            if let (Some(j), Some(p)) = (link.parent_joint, link.parent_link) {
                let joint = &self.joints[j];
                let v = joint.dof_index.map_or(0.0, |d| q[d]);
                poses[k] = poses[p] * joint.transform(v);
            }
        }
        Ok(())
    }

    /// Pose of link `name` in the root frame (only its ancestors are computed).
    pub fn link_pose(&self, name: &str, q: &[f64]) -> Result<Isometry3<f64>, Error> {
        let mut k = self.link_index(name)?;
        self.check_joint_vector(q)?;
        let mut pose = Isometry3::identity();
        while let Some(j) = self.links[k].parent_joint {
            let joint = &self.joints[j];
            let v = joint.dof_index.map_or(0.0, |d| q[d]);
            pose = joint.transform(v) * pose;
            k = joint.parent;
        }
        Ok(pose)
    }

    /// Geometric Jacobian (6 × dof; rows: linear velocity then angular velocity, both in
    /// the root frame) of the origin of link `name`. Columns of joints that do not move
    /// the link are zero.
    ///
    /// ```
    /// # let robot = rpq_kinematics::Robot::from_urdf_str(include_str!("../../../urdf/rx60b.urdf"))?;
    /// let j = robot.jacobian("link_6", &[0.0; 6])?;
    /// // At the zero pose J1 spins the flange in place about the vertical axis.
    /// assert!(j.fixed_view::<3, 1>(0, 0).norm() < 1e-12);
    /// assert!((j[(5, 0)] - 1.0).abs() < 1e-12);
    /// # Ok::<(), rpq_kinematics::Error>(())
    /// ```
    pub fn jacobian(&self, name: &str, q: &[f64]) -> Result<Matrix6xX<f64>, Error> {
        self.jacobian_at_point(name, &Point3::origin(), q)
    }

    /// Geometric Jacobian of the point `point` given in the frame of link `name`.
    pub fn jacobian_at_point(
        &self,
        name: &str,
        point: &Point3<f64>,
        q: &[f64],
    ) -> Result<Matrix6xX<f64>, Error> {
        let link = self.link_index(name)?;
        let poses = self.forward_kinematics(q)?;
        let mut out = Matrix6xX::zeros(self.dof());
        self.jacobian_into(link, point, &poses, &mut out)?;
        Ok(out)
    }

    /// Allocation-free Jacobian from precomputed link poses; see [`Kinematics::jacobian_into`].
    pub fn jacobian_into(
        &self,
        link: usize,
        point: &Point3<f64>,
        poses: &[Isometry3<f64>],
        out: &mut Matrix6xX<f64>,
    ) -> Result<(), Error> {
        if link >= self.links.len() {
            return Err(Error::UnknownLink {
                name: format!("#{link}"),
            });
        }
        if poses.len() != self.links.len() {
            return Err(Error::WrongLength {
                what: "pose buffer (one per link)",
                expected: self.links.len(),
                got: poses.len(),
            });
        }
        if out.ncols() != self.dof() {
            return Err(Error::WrongLength {
                what: "Jacobian columns",
                expected: self.dof(),
                got: out.ncols(),
            });
        }
        if !point.coords.iter().all(|x| x.is_finite()) {
            return Err(Error::NonFinite {
                joint: format!("(point on link {})", self.links[link].name),
                value: point
                    .coords
                    .iter()
                    .copied()
                    .find(|x| !x.is_finite())
                    .unwrap_or(f64::NAN),
            });
        }
        out.fill(0.0);
        let p = poses[link] * point;
        let mut k = link;
        while let Some(j) = self.links[k].parent_joint {
            let joint = &self.joints[j];
            if let Some(d) = joint.dof_index {
                // The joint frame is the child frame; the axis is fixed in it.
                let frame = &poses[joint.child];
                let z: Vector3<f64> = frame.rotation * joint.axis.into_inner();
                let (lin, ang) = match joint.kind {
                    JointKind::Prismatic => (z, Vector3::zeros()),
                    _ => (z.cross(&(p - frame.translation.vector).coords), z),
                };
                out.fixed_view_mut::<3, 1>(0, d).copy_from(&lin);
                out.fixed_view_mut::<3, 1>(3, d).copy_from(&ang);
            }
            k = joint.parent;
        }
        Ok(())
    }
}

impl Kinematics for Robot {
    fn dof(&self) -> usize {
        Robot::dof(self)
    }

    fn link_count(&self) -> usize {
        self.links.len()
    }

    fn forward_kinematics_into(
        &self,
        q: &[f64],
        poses: &mut [Isometry3<f64>],
    ) -> Result<(), Error> {
        Robot::forward_kinematics_into(self, q, poses)
    }

    fn jacobian_into(
        &self,
        link: usize,
        point: &Point3<f64>,
        poses: &[Isometry3<f64>],
        out: &mut Matrix6xX<f64>,
    ) -> Result<(), Error> {
        Robot::jacobian_into(self, link, point, poses, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{JointSpec, LinkSpec};

    /// A planar RRP arm: two revolute joints about z (unit links along x), then a
    /// prismatic joint along x.
    fn rrp() -> Robot {
        let spec = |name: &str, kind, parent: &str, child: &str, x: f64| JointSpec {
            name: name.into(),
            kind,
            parent: parent.into(),
            child: child.into(),
            origin: Isometry3::translation(x, 0.0, 0.0),
            axis: if kind == JointKind::Prismatic {
                Vector3::x()
            } else {
                Vector3::z()
            },
            limits: JointLimits {
                lower: -2.0,
                upper: 2.0,
                velocity: 1.0,
                effort: 1.0,
            },
        };
        Robot::new(
            "rrp",
            ["l0", "l1", "l2", "l3"].map(LinkSpec::new).to_vec(),
            vec![
                spec("r1", JointKind::Revolute, "l0", "l1", 0.0),
                spec("r2", JointKind::Revolute, "l1", "l2", 1.0),
                spec("p3", JointKind::Prismatic, "l2", "l3", 1.0),
            ],
        )
        .unwrap()
    }

    #[test]
    fn planar_arm_matches_closed_form() {
        let r = rrp();
        let (a, b, s) = (0.3, -0.7, 0.25);
        let p = r.link_pose("l3", &[a, b, s]).unwrap().translation.vector;
        let want = Vector3::new(
            a.cos() + (1.0 + s) * (a + b).cos(),
            a.sin() + (1.0 + s) * (a + b).sin(),
            0.0,
        );
        assert!((p - want).norm() < 1e-15);
        let j = r.jacobian("l3", &[a, b, s]).unwrap();
        let want_j = [
            [-want.y, want.x, 0.0, 0.0, 0.0, 1.0],
            [
                -(1.0 + s) * (a + b).sin(),
                (1.0 + s) * (a + b).cos(),
                0.0,
                0.0,
                0.0,
                1.0,
            ],
            [(a + b).cos(), (a + b).sin(), 0.0, 0.0, 0.0, 0.0],
        ];
        for (c, col) in want_j.iter().enumerate() {
            for k in 0..6 {
                assert!((j[(k, c)] - col[k]).abs() < 1e-15, "J[{k},{c}]");
            }
        }
    }

    #[test]
    fn bad_joint_vectors_are_errors() {
        let r = rrp();
        assert!(matches!(
            r.forward_kinematics(&[0.0, 0.0]),
            Err(Error::WrongLength {
                expected: 3,
                got: 2,
                ..
            })
        ));
        assert!(matches!(
            r.forward_kinematics(&[0.0, f64::NAN, 0.0]),
            Err(Error::NonFinite { joint, .. }) if joint == "r2"
        ));
        assert!(matches!(
            r.within_limits(&[0.0, 0.0, f64::INFINITY]),
            Err(Error::NonFinite { joint, .. }) if joint == "p3"
        ));
        assert!(r.clamp(&[f64::NAN, 0.0, 0.0]).is_err());
        let mut small = vec![Isometry3::identity(); 3];
        assert!(matches!(
            r.forward_kinematics_into(&[0.0; 3], &mut small),
            Err(Error::WrongLength {
                expected: 4,
                got: 3,
                ..
            })
        ));
        assert!(
            matches!(r.link_pose("nope", &[0.0; 3]), Err(Error::UnknownLink { name }) if name == "nope")
        );
        assert!(matches!(
            r.jacobian("nope", &[0.0; 3]),
            Err(Error::UnknownLink { .. })
        ));
        assert!(
            matches!(r.joint_index("nope"), Err(Error::UnknownJoint { name }) if name == "nope")
        );
        let poses = r.forward_kinematics(&[0.0; 3]).unwrap();
        let mut out = Matrix6xX::zeros(2);
        assert!(matches!(
            r.jacobian_into(3, &Point3::origin(), &poses, &mut out),
            Err(Error::WrongLength {
                expected: 3,
                got: 2,
                ..
            })
        ));
        let mut out = Matrix6xX::zeros(3);
        assert!(r
            .jacobian_into(9, &Point3::origin(), &poses, &mut out)
            .is_err());
        assert!(r
            .jacobian_into(3, &Point3::new(f64::NAN, 0.0, 0.0), &poses, &mut out)
            .is_err());
    }

    #[test]
    fn limits_report_the_offending_joint() {
        let r = rrp();
        assert!(r.within_limits(&[2.0, -2.0, 0.0]).unwrap());
        assert!(!r.within_limits(&[2.0, -2.0000001, 0.0]).unwrap());
        match r.check_limits(&[0.0, 0.0, 2.5]) {
            Err(Error::OutOfLimits {
                joint,
                value,
                lower,
                upper,
            }) => {
                assert_eq!(
                    (joint.as_str(), value, lower, upper),
                    ("p3", 2.5, -2.0, 2.0)
                );
            }
            other => panic!("{other:?}"),
        }
        let mut q = [3.0, -3.0, 1.0];
        r.clamp_in_place(&mut q).unwrap();
        assert_eq!(q, [2.0, -2.0, 1.0]);
    }

    #[test]
    fn named_positions_need_every_joint_once() {
        let r = rrp();
        assert_eq!(
            r.positions_from_named(&["p3", "r1", "r2"], &[3.0, 1.0, 2.0])
                .unwrap(),
            [1.0, 2.0, 3.0]
        );
        assert!(matches!(
            r.positions_from_named(&["r1", "r2"], &[1.0, 2.0]),
            Err(Error::MissingJoint { joint }) if joint == "p3"
        ));
        assert!(matches!(
            r.positions_from_named(&["r1", "r1", "p3"], &[1.0, 2.0, 3.0]),
            Err(Error::DuplicateValue { joint }) if joint == "r1"
        ));
        assert!(matches!(
            r.positions_from_named(&["r1", "r2", "x"], &[1.0, 2.0, 3.0]),
            Err(Error::UnknownJoint { name }) if name == "x"
        ));
        assert!(matches!(
            r.positions_from_named(&["r1", "r2", "p3"], &[1.0, 2.0]),
            Err(Error::WrongLength { .. })
        ));
        assert!(r
            .positions_from_named(&["r1", "r2", "p3"], &[1.0, f64::NAN, 0.0])
            .is_err());
    }

    #[test]
    fn trait_object_works_for_mocks() {
        let r = rrp();
        let k: &dyn Kinematics = &r;
        let mut poses = vec![Isometry3::identity(); k.link_count()];
        k.forward_kinematics_into(&[0.1, 0.2, 0.3], &mut poses)
            .unwrap();
        let mut j = Matrix6xX::zeros(k.dof());
        k.jacobian_into(3, &Point3::origin(), &poses, &mut j)
            .unwrap();
        assert_eq!(j, r.jacobian("l3", &[0.1, 0.2, 0.3]).unwrap());
    }
}
