//! The kinematic model: links, joints and the validated tree they form.

use std::collections::HashMap;

use nalgebra::{Isometry3, Translation3, Unit, UnitQuaternion, Vector3};

use crate::Error;

/// The motion a joint allows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JointKind {
    /// Rigid connection, no joint variable.
    Fixed,
    /// Rotation about the axis, within limits (rad).
    Revolute,
    /// Rotation about the axis without limits (rad).
    Continuous,
    /// Translation along the axis, within limits (m).
    Prismatic,
}

impl JointKind {
    /// True for joints with a joint variable.
    pub fn is_movable(self) -> bool {
        self != JointKind::Fixed
    }
}

/// Limits of a movable joint. Continuous joints have infinite position limits.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JointLimits {
    /// Lower position limit (rad or m).
    pub lower: f64,
    /// Upper position limit (rad or m).
    pub upper: f64,
    /// Velocity limit (rad/s or m/s).
    pub velocity: f64,
    /// Effort limit (N·m or N).
    pub effort: f64,
}

impl JointLimits {
    /// Unlimited position, velocity and effort.
    pub const UNLIMITED: JointLimits = JointLimits {
        lower: f64::NEG_INFINITY,
        upper: f64::INFINITY,
        velocity: f64::INFINITY,
        effort: f64::INFINITY,
    };

    /// True if `value` lies in `[lower, upper]`.
    pub fn contains(&self, value: f64) -> bool {
        value >= self.lower && value <= self.upper
    }
}

/// A geometry attached to a link (visual or collision).
#[derive(Clone, Debug, PartialEq)]
pub enum Geometry {
    /// A mesh file, as written in the URDF (resolve it with [`crate::MeshResolver`]).
    Mesh {
        /// The file name or URI.
        filename: String,
        /// Per-axis scale.
        scale: Vector3<f64>,
    },
    /// A box with full side lengths.
    Box {
        /// Side lengths (m).
        size: Vector3<f64>,
    },
    /// A cylinder along z, centred.
    Cylinder {
        /// Radius (m).
        radius: f64,
        /// Length (m).
        length: f64,
    },
    /// A capsule along z, centred.
    Capsule {
        /// Radius (m).
        radius: f64,
        /// Length of the cylindrical part (m).
        length: f64,
    },
    /// A sphere.
    Sphere {
        /// Radius (m).
        radius: f64,
    },
}

impl Geometry {
    /// Lower-case name of the geometry type, as in URDF.
    pub fn kind(&self) -> &'static str {
        match self {
            Geometry::Mesh { .. } => "mesh",
            Geometry::Box { .. } => "box",
            Geometry::Cylinder { .. } => "cylinder",
            Geometry::Capsule { .. } => "capsule",
            Geometry::Sphere { .. } => "sphere",
        }
    }
}

/// A geometry placed in its link frame.
#[derive(Clone, Debug, PartialEq)]
pub struct Shape {
    /// Pose of the geometry in the link frame.
    pub origin: Isometry3<f64>,
    /// The geometry.
    pub geometry: Geometry,
}

/// Description of a link, input to [`Robot::new`].
#[derive(Clone, Debug, PartialEq)]
pub struct LinkSpec {
    /// Unique name.
    pub name: String,
    /// Visual geometries.
    pub visual: Vec<Shape>,
    /// Collision geometries.
    pub collision: Vec<Shape>,
}

impl LinkSpec {
    /// A link without geometry.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            visual: Vec::new(),
            collision: Vec::new(),
        }
    }
}

/// Description of a joint, input to [`Robot::new`].
#[derive(Clone, Debug, PartialEq)]
pub struct JointSpec {
    /// Unique name.
    pub name: String,
    /// Motion type.
    pub kind: JointKind,
    /// Parent link name.
    pub parent: String,
    /// Child link name.
    pub child: String,
    /// Pose of the child frame in the parent frame at joint value 0.
    pub origin: Isometry3<f64>,
    /// Axis in the child (= joint) frame; normalized by [`Robot::new`].
    pub axis: Vector3<f64>,
    /// Limits (ignored for fixed joints; position limits ignored for continuous ones).
    pub limits: JointLimits,
}

/// A link of a validated [`Robot`].
#[derive(Clone, Debug, PartialEq)]
pub struct Link {
    /// Unique name.
    pub name: String,
    /// Index (into [`Robot::joints`]) of the joint whose child this link is; `None` for
    /// the root.
    pub parent_joint: Option<usize>,
    /// Index (into [`Robot::links`]) of the parent link; `None` for the root.
    pub parent_link: Option<usize>,
    /// Visual geometries.
    pub visual: Vec<Shape>,
    /// Collision geometries.
    pub collision: Vec<Shape>,
}

/// A joint of a validated [`Robot`].
#[derive(Clone, Debug, PartialEq)]
pub struct Joint {
    /// Unique name.
    pub name: String,
    /// Motion type.
    pub kind: JointKind,
    /// Parent link index (into [`Robot::links`]).
    pub parent: usize,
    /// Child link index (into [`Robot::links`]).
    pub child: usize,
    /// Pose of the child frame in the parent frame at joint value 0.
    pub origin: Isometry3<f64>,
    /// Unit axis in the child frame.
    pub axis: Unit<Vector3<f64>>,
    /// Limits (infinite position limits for continuous joints, all zero for fixed ones).
    pub limits: JointLimits,
    /// Position of this joint's value in joint vectors; `None` for fixed joints.
    pub dof_index: Option<usize>,
}

impl Joint {
    /// Pose of the child frame in the parent frame at joint value `q`.
    pub fn transform(&self, q: f64) -> Isometry3<f64> {
        match self.kind {
            JointKind::Fixed => self.origin,
            JointKind::Revolute | JointKind::Continuous => {
                self.origin * UnitQuaternion::from_axis_angle(&self.axis, q)
            }
            JointKind::Prismatic => self.origin * Translation3::from(self.axis.into_inner() * q),
        }
    }
}

/// A validated kinematic tree.
///
/// Links are stored in topological order (the root first, every parent before its
/// children: depth first, children in input order), joints in the order of their child
/// links, and movable joints numbered in that same order: that numbering is the order of
/// joint vectors `q` everywhere in this crate.
#[derive(Clone, Debug)]
pub struct Robot {
    pub(crate) name: String,
    pub(crate) links: Vec<Link>,
    pub(crate) joints: Vec<Joint>,
    /// Joint index of each degree of freedom.
    pub(crate) dofs: Vec<usize>,
    pub(crate) limits: Vec<JointLimits>,
    pub(crate) link_by_name: HashMap<String, usize>,
    pub(crate) dof_by_name: HashMap<String, usize>,
}

fn finite_iso(iso: &Isometry3<f64>) -> bool {
    iso.translation.vector.iter().all(|x| x.is_finite())
        && iso.rotation.coords.iter().all(|x| x.is_finite())
}

impl Robot {
    /// Validates and builds a robot from link and joint descriptions.
    ///
    /// Checks: at least one link; unique link and joint names; joints refer to existing
    /// links; every link has at most one parent joint; exactly one root; no cycles;
    /// finite origins; non-zero finite axes for movable joints; `lower <= upper` and
    /// finite position limits for revolute and prismatic joints.
    ///
    /// ```
    /// use nalgebra::{Isometry3, Vector3};
    /// use rpq_kinematics::{JointKind, JointLimits, JointSpec, LinkSpec, Robot};
    ///
    /// let joint = JointSpec {
    ///     name: "slide".into(),
    ///     kind: JointKind::Prismatic,
    ///     parent: "base".into(),
    ///     child: "carriage".into(),
    ///     origin: Isometry3::translation(0.0, 0.0, 0.1),
    ///     axis: Vector3::x(),
    ///     limits: JointLimits { lower: -0.5, upper: 0.5, velocity: 1.0, effort: 100.0 },
    /// };
    /// let robot = Robot::new("rail", vec![LinkSpec::new("base"), LinkSpec::new("carriage")], vec![joint])?;
    /// let pose = robot.link_pose("carriage", &[0.25])?;
    /// assert_eq!(pose.translation.vector, Vector3::new(0.25, 0.0, 0.1));
    /// # Ok::<(), rpq_kinematics::Error>(())
    /// ```
    pub fn new(
        name: impl Into<String>,
        links: Vec<LinkSpec>,
        joints: Vec<JointSpec>,
    ) -> Result<Robot, Error> {
        if links.is_empty() {
            return Err(Error::NoLinks);
        }
        let mut index: HashMap<&str, usize> = HashMap::new();
        for (i, l) in links.iter().enumerate() {
            if index.insert(&l.name, i).is_some() {
                return Err(Error::DuplicateLink {
                    name: l.name.clone(),
                });
            }
        }
        let mut joint_names: HashMap<&str, usize> = HashMap::new();
        let mut parent_of: Vec<Vec<usize>> = vec![Vec::new(); links.len()];
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); links.len()];
        for (ji, j) in joints.iter().enumerate() {
            if joint_names.insert(&j.name, ji).is_some() {
                return Err(Error::DuplicateJoint {
                    name: j.name.clone(),
                });
            }
            let find = |link: &str| {
                index
                    .get(link)
                    .copied()
                    .ok_or_else(|| Error::JointLinkNotFound {
                        joint: j.name.clone(),
                        link: link.to_owned(),
                    })
            };
            let (p, c) = (find(&j.parent)?, find(&j.child)?);
            parent_of[c].push(ji);
            children[p].push(ji);
            validate_joint(j)?;
        }
        for (li, ps) in parent_of.iter().enumerate() {
            if ps.len() > 1 {
                return Err(Error::MultipleParents {
                    link: links[li].name.clone(),
                    joints: ps.iter().map(|&j| joints[j].name.clone()).collect(),
                });
            }
        }
        let roots: Vec<usize> = (0..links.len())
            .filter(|&l| parent_of[l].is_empty())
            .collect();
        if roots.len() > 1 {
            return Err(Error::MultipleRoots {
                roots: roots.iter().map(|&l| links[l].name.clone()).collect(),
            });
        }
        let Some(&root) = roots.first() else {
            return Err(Error::Cycle {
                links: links.iter().map(|l| l.name.clone()).collect(),
            });
        };
        // Depth-first order from the root, children in input order.
        let mut order: Vec<usize> = Vec::with_capacity(links.len());
        let mut stack = vec![root];
        while let Some(l) = stack.pop() {
            order.push(l);
            for &ji in children[l].iter().rev() {
                stack.push(index[joints[ji].child.as_str()]);
            }
        }
        if order.len() < links.len() {
            let mut seen = vec![false; links.len()];
            for &l in &order {
                seen[l] = true;
            }
            return Err(Error::Cycle {
                links: (0..links.len())
                    .filter(|&l| !seen[l])
                    .map(|l| links[l].name.clone())
                    .collect(),
            });
        }
        let mut new_index = vec![0usize; links.len()];
        for (new, &old) in order.iter().enumerate() {
            new_index[old] = new;
        }
        let mut out_links: Vec<Link> = Vec::with_capacity(links.len());
        let mut out_joints: Vec<Joint> = Vec::with_capacity(joints.len());
        let mut dofs = Vec::new();
        let mut limits = Vec::new();
        for &old in &order {
            let spec = &links[old];
            let (parent_joint, parent_link) = match parent_of[old].first() {
                None => (None, None),
                Some(&ji) => {
                    let j = &joints[ji];
                    let parent = new_index[index[j.parent.as_str()]];
                    let dof_index = j.kind.is_movable().then_some(dofs.len());
                    let lim = match j.kind {
                        JointKind::Fixed => JointLimits {
                            lower: 0.0,
                            upper: 0.0,
                            velocity: 0.0,
                            effort: 0.0,
                        },
                        JointKind::Continuous => JointLimits {
                            lower: f64::NEG_INFINITY,
                            upper: f64::INFINITY,
                            ..j.limits
                        },
                        _ => j.limits,
                    };
                    let axis = if j.kind.is_movable() {
                        Unit::new_normalize(j.axis)
                    } else {
                        Unit::try_new(j.axis, 1e-12).unwrap_or_else(Vector3::x_axis)
                    };
                    if let Some(d) = dof_index {
                        dofs.push(out_joints.len());
                        limits.push(lim);
                        debug_assert_eq!(d + 1, dofs.len());
                    }
                    out_joints.push(Joint {
                        name: j.name.clone(),
                        kind: j.kind,
                        parent,
                        child: out_links.len(),
                        origin: j.origin,
                        axis,
                        limits: lim,
                        dof_index,
                    });
                    (Some(out_joints.len() - 1), Some(parent))
                }
            };
            out_links.push(Link {
                name: spec.name.clone(),
                parent_joint,
                parent_link,
                visual: spec.visual.clone(),
                collision: spec.collision.clone(),
            });
        }
        let link_by_name = out_links
            .iter()
            .enumerate()
            .map(|(i, l)| (l.name.clone(), i))
            .collect();
        let dof_by_name = dofs
            .iter()
            .enumerate()
            .map(|(d, &j)| (out_joints[j].name.clone(), d))
            .collect();
        Ok(Robot {
            name: name.into(),
            links: out_links,
            joints: out_joints,
            dofs,
            limits,
            link_by_name,
            dof_by_name,
        })
    }
}

fn validate_joint(j: &JointSpec) -> Result<(), Error> {
    let bad = |reason: String| Error::InvalidJoint {
        joint: j.name.clone(),
        reason,
    };
    if !finite_iso(&j.origin) {
        return Err(bad("origin is not finite".into()));
    }
    if j.kind.is_movable() {
        let n = j.axis.norm();
        if !n.is_finite() || n < 1e-9 {
            return Err(bad(format!(
                "axis {:?} is zero or not finite",
                j.axis.as_slice()
            )));
        }
    }
    let l = &j.limits;
    if matches!(j.kind, JointKind::Revolute | JointKind::Prismatic) {
        if !(l.lower.is_finite() && l.upper.is_finite()) {
            return Err(bad(format!(
                "position limits [{}, {}] are not finite",
                l.lower, l.upper
            )));
        }
        if l.lower > l.upper {
            return Err(bad(format!(
                "lower limit {} is above upper limit {}",
                l.lower, l.upper
            )));
        }
    }
    if j.kind.is_movable()
        && (l.velocity.is_nan() || l.velocity < 0.0 || l.effort.is_nan() || l.effort < 0.0)
    {
        return Err(bad(format!(
            "velocity {} and effort {} limits must be non-negative",
            l.velocity, l.effort
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn revolute(
        name: &str,
        parent: &str,
        child: &str,
        origin: Isometry3<f64>,
        axis: Vector3<f64>,
    ) -> JointSpec {
        JointSpec {
            name: name.into(),
            kind: JointKind::Revolute,
            parent: parent.into(),
            child: child.into(),
            origin,
            axis,
            limits: JointLimits {
                lower: -1.0,
                upper: 1.0,
                velocity: 1.0,
                effort: 1.0,
            },
        }
    }

    #[test]
    fn branches_are_ordered_depth_first_with_parents_first() {
        // Input order deliberately scrambled: a tree root -> {left -> left_tip, right}.
        let links = ["left_tip", "right", "root", "left"]
            .map(LinkSpec::new)
            .to_vec();
        let t = Isometry3::translation(1.0, 0.0, 0.0);
        let joints = vec![
            revolute("jl", "root", "left", t, Vector3::z()),
            revolute("jr", "root", "right", t, Vector3::z()),
            revolute("jlt", "left", "left_tip", t, Vector3::z()),
        ];
        let r = Robot::new("tree", links, joints).unwrap();
        let names: Vec<&str> = r.links().iter().map(|l| l.name.as_str()).collect();
        assert_eq!(names, ["root", "left", "left_tip", "right"]);
        assert_eq!(r.joint_names().collect::<Vec<_>>(), ["jl", "jlt", "jr"]);
        for (k, l) in r.links().iter().enumerate().skip(1) {
            assert!(l.parent_link.unwrap() < k);
            assert_eq!(r.joints()[l.parent_joint.unwrap()].child, k);
        }
        // Branch FK: right only depends on jr.
        let q = [0.5, 0.5, std::f64::consts::FRAC_PI_2];
        let right = r.link_pose("right", &q).unwrap();
        assert!((right.translation.vector - Vector3::new(1.0, 0.0, 0.0)).norm() < 1e-15);
        let tip = r
            .link_pose("left_tip", &[std::f64::consts::FRAC_PI_2, 0.0, 0.0])
            .unwrap();
        assert!((tip.translation.vector - Vector3::new(1.0, 1.0, 0.0)).norm() < 1e-15);
        // Jacobian of `right` has a zero column for the left branch's joints.
        let j = r.jacobian("right", &q).unwrap();
        assert_eq!(j.column(0).norm(), 0.0);
        assert_eq!(j.column(1).norm(), 0.0);
        assert!(j.column(2).norm() > 0.0);
    }

    #[test]
    fn single_link_robot_has_no_dof() {
        let r = Robot::new("one", vec![LinkSpec::new("only")], vec![]).unwrap();
        assert_eq!(r.dof(), 0);
        assert_eq!(
            r.forward_kinematics(&[]).unwrap(),
            vec![Isometry3::identity()]
        );
        assert!(matches!(
            Robot::new("none", vec![], vec![]),
            Err(Error::NoLinks)
        ));
    }

    #[test]
    fn non_finite_origins_and_limits_are_rejected() {
        let links = vec![LinkSpec::new("a"), LinkSpec::new("b")];
        let bad_origin = revolute(
            "j",
            "a",
            "b",
            Isometry3::translation(f64::NAN, 0.0, 0.0),
            Vector3::z(),
        );
        assert!(matches!(
            Robot::new("r", links.clone(), vec![bad_origin]),
            Err(Error::InvalidJoint { .. })
        ));
        let mut inf = revolute("j", "a", "b", Isometry3::identity(), Vector3::z());
        inf.limits.upper = f64::INFINITY;
        assert!(matches!(
            Robot::new("r", links.clone(), vec![inf]),
            Err(Error::InvalidJoint { .. })
        ));
        let mut neg = revolute("j", "a", "b", Isometry3::identity(), Vector3::z());
        neg.limits.velocity = -1.0;
        assert!(matches!(
            Robot::new("r", links, vec![neg]),
            Err(Error::InvalidJoint { .. })
        ));
    }
}
