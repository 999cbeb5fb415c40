//! Objects of a scenario: simple objects (one mesh) and complex objects (kinematic chains
//! of meshes), of which robots loaded from URDF are the usual case.

use std::path::Path;
use std::sync::Arc;

use nalgebra::{Isometry3, Matrix6xX, Point3};
use rpq_kinematics::{MeshResolver, TriMesh};
use rpq_proximity::{Model, Obb};

use crate::error::SceneError;
use crate::ik::{ArmConfiguration, IkError, Rx60Ik};
use crate::posing::{LocalBox, PosePlan};

/// One rigid body: a mesh with its precomputed hierarchy and box, in its own frame.
#[derive(Clone, Debug)]
pub struct Body {
    /// Name (the link name for robot links, the object name for simple objects).
    pub name: String,
    /// The mesh and its bounding-volume hierarchy (shared between copies).
    pub model: Arc<Model>,
    /// The oriented box of the mesh in the body frame (resolution level L2).
    pub local_box: Obb,
}

impl Body {
    /// Builds a body from a validated mesh.
    pub fn from_trimesh(name: impl Into<String>, mesh: &TriMesh) -> Result<Body, SceneError> {
        let name = name.into();
        let model =
            Model::new(mesh.vertices.clone(), mesh.triangles.clone()).map_err(|source| {
                SceneError::Proximity {
                    name: name.clone(),
                    source,
                }
            })?;
        Ok(Body::from_model(name, Arc::new(model)))
    }

    /// Wraps an already built model.
    pub fn from_model(name: impl Into<String>, model: Arc<Model>) -> Body {
        let local_box = model.bounding_box();
        Body {
            name: name.into(),
            model,
            local_box,
        }
    }
}

/// A simple object: one body with a fixed pose in the world.
#[derive(Clone, Debug)]
pub struct SimpleObject {
    /// Name, unique in the scenario.
    pub name: String,
    /// The mesh (in the object frame) and its bounding boxes.
    pub body: Body,
    /// Pose of the body frame in the world.
    pub pose: Isometry3<f64>,
}

impl SimpleObject {
    /// Loads a simple object from a binary or ASCII STL file (metres).
    pub fn from_stl_file(
        name: impl Into<String>,
        path: impl AsRef<Path>,
        pose: Isometry3<f64>,
    ) -> Result<SimpleObject, SceneError> {
        let name = name.into();
        let mesh = TriMesh::from_stl_file(path.as_ref())?;
        Ok(SimpleObject {
            body: Body::from_trimesh(name.clone(), &mesh)?,
            name,
            pose,
        })
    }
}

/// A complex object: an open kinematic chain (or tree) of bodies with revolute and
/// prismatic joints, based at a pose in the world. A robot is a complex object built from
/// URDF that may also carry closed-form inverse kinematics.
#[derive(Clone, Debug)]
pub struct Robot {
    name: String,
    kinematics: Arc<rpq_kinematics::Robot>,
    bodies: Vec<Body>,
    /// Index into `kinematics.links()` of each body.
    body_links: Vec<usize>,
    base: Isometry3<f64>,
    ik: Option<(Rx60Ik, usize)>,
    /// Forward kinematics prepared for posing.
    plan: Arc<PosePlan>,
    /// Each body's box in its link frame, prepared for posing.
    local_boxes: Vec<LocalBox>,
}

impl Robot {
    /// Builds a complex object from a kinematic model and one optional mesh per link (in
    /// [`rpq_kinematics::Robot::links`] order, link frame). Links without a mesh carry no
    /// body. RX60-type arms get closed-form IK for their last link automatically.
    pub fn new(
        name: impl Into<String>,
        kinematics: Arc<rpq_kinematics::Robot>,
        meshes: &[Option<TriMesh>],
        base: Isometry3<f64>,
    ) -> Result<Robot, SceneError> {
        let name = name.into();
        if meshes.len() != kinematics.links().len() {
            return Err(SceneError::Invalid(format!(
                "`{name}`: {} meshes for {} links",
                meshes.len(),
                kinematics.links().len()
            )));
        }
        let mut bodies = Vec::new();
        let mut body_links = Vec::new();
        for (k, m) in meshes.iter().enumerate() {
            if let Some(m) = m {
                bodies.push(Body::from_trimesh(kinematics.links()[k].name.clone(), m)?);
                body_links.push(k);
            }
        }
        Robot::from_bodies(name, kinematics, bodies, body_links, base)
    }

    /// Builds a complex object from bodies already built (shared models), `body_links[i]`
    /// being the kinematic link of `bodies[i]`.
    pub fn from_bodies(
        name: impl Into<String>,
        kinematics: Arc<rpq_kinematics::Robot>,
        bodies: Vec<Body>,
        body_links: Vec<usize>,
        base: Isometry3<f64>,
    ) -> Result<Robot, SceneError> {
        let name = name.into();
        if bodies.is_empty() {
            return Err(SceneError::NoGeometry { name });
        }
        if bodies.len() != body_links.len()
            || body_links.iter().any(|&l| l >= kinematics.links().len())
        {
            return Err(SceneError::Invalid(format!(
                "`{name}`: body/link index mismatch"
            )));
        }
        check_pose(&base, &format!("base pose of `{name}`"))?;
        let last = kinematics.links().len() - 1;
        let ik = Rx60Ik::for_robot(&kinematics, &kinematics.links()[last].name)
            .ok()
            .map(|ik| (ik, last));
        let plan = Arc::new(PosePlan::new(&kinematics));
        let local_boxes = bodies.iter().map(|b| LocalBox::new(b.local_box)).collect();
        Ok(Robot {
            name,
            kinematics,
            bodies,
            body_links,
            base,
            ik,
            plan,
            local_boxes,
        })
    }

    /// Loads a robot from a URDF file; meshes are resolved relative to the file.
    pub fn from_urdf_file(
        name: impl Into<String>,
        urdf: impl AsRef<Path>,
        base: Isometry3<f64>,
    ) -> Result<Robot, SceneError> {
        let path = urdf.as_ref();
        // The kinematics crate's error, as when it reads the file itself.
        let text = rpq_base::file::read_to_string_bounded(path, rpq_base::file::TEXT_MAX_BYTES)
            .map_err(|e| rpq_kinematics::Error::Io {
                path: path.to_owned(),
                source: e.into_io(),
            })?;
        Robot::from_urdf_str(name, &text, &MeshResolver::for_urdf_file(path), base)
    }

    /// Builds a robot from URDF text (e.g. a `robot_description` message); `resolver`
    /// finds the files of its collision-mesh URIs.
    pub fn from_urdf_str(
        name: impl Into<String>,
        urdf_text: &str,
        resolver: &MeshResolver,
        base: Isometry3<f64>,
    ) -> Result<Robot, SceneError> {
        let kin = rpq_kinematics::Robot::from_urdf_str(urdf_text)?;
        let meshes = kin.collision_meshes(resolver)?;
        Robot::new(name, Arc::new(kin), &meshes, base)
    }

    /// A copy with another name and base pose that shares the meshes and hierarchies.
    pub fn instance(&self, name: impl Into<String>, base: Isometry3<f64>) -> Robot {
        Robot {
            name: name.into(),
            base,
            ..self.clone()
        }
    }

    /// Name, unique in the scenario.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The kinematic model.
    pub fn kinematics(&self) -> &rpq_kinematics::Robot {
        &self.kinematics
    }

    /// The bodies (links with a mesh).
    pub fn bodies(&self) -> &[Body] {
        &self.bodies
    }

    /// Kinematic link index of each body.
    pub fn body_links(&self) -> &[usize] {
        &self.body_links
    }

    pub(crate) fn pose_plan(&self) -> &PosePlan {
        &self.plan
    }

    pub(crate) fn local_boxes(&self) -> &[LocalBox] {
        &self.local_boxes
    }

    /// Number of joint variables.
    pub fn dof(&self) -> usize {
        self.kinematics.dof()
    }

    /// Pose of the base (root link) in the world.
    pub fn base(&self) -> &Isometry3<f64> {
        &self.base
    }

    /// Moves the base.
    pub fn set_base(&mut self, base: Isometry3<f64>) -> Result<(), SceneError> {
        check_pose(&base, &format!("base pose of `{}`", self.name))?;
        self.base = base;
        Ok(())
    }

    /// Pose of every kinematic link in the world.
    pub fn forward_kinematics(&self, q: &[f64]) -> Result<Vec<Isometry3<f64>>, SceneError> {
        let mut p = self.kinematics.forward_kinematics(q)?;
        for x in &mut p {
            *x = self.base * *x;
        }
        Ok(p)
    }

    /// World pose of every body, written into `link_buf` (one per kinematic link, scratch)
    /// and `out` (one per body), without allocating.
    pub fn body_poses_into(
        &self,
        q: &[f64],
        link_buf: &mut [Isometry3<f64>],
        out: &mut [Isometry3<f64>],
    ) -> Result<(), SceneError> {
        self.kinematics.forward_kinematics_into(q, link_buf)?;
        for (o, &l) in out.iter_mut().zip(&self.body_links) {
            *o = self.base * link_buf[l];
        }
        Ok(())
    }

    /// Geometric Jacobian (6 × dof, linear rows first, world frame) of the origin of
    /// link `link`.
    pub fn jacobian(&self, link: &str, q: &[f64]) -> Result<Matrix6xX<f64>, SceneError> {
        let mut j = self
            .kinematics
            .jacobian_at_point(link, &Point3::origin(), q)?;
        let r = self.base.rotation.to_rotation_matrix();
        for mut c in j.column_iter_mut() {
            let lin = r * c.fixed_rows::<3>(0).into_owned();
            let ang = r * c.fixed_rows::<3>(3).into_owned();
            c.fixed_rows_mut::<3>(0).copy_from(&lin);
            c.fixed_rows_mut::<3>(3).copy_from(&ang);
        }
        Ok(j)
    }

    /// The closed-form IK solver and the flange link it solves for, if this is an
    /// RX60-type arm.
    pub fn ik(&self) -> Option<(&Rx60Ik, &str)> {
        self.ik
            .as_ref()
            .map(|(ik, l)| (ik, self.kinematics.links()[*l].name.as_str()))
    }

    /// Joint vector placing the flange at `target` (world frame) in `config`, within the
    /// joint limits; `Err(IkError::NoSolution)` for robots without closed-form IK.
    pub fn inverse_kinematics(
        &self,
        target: &Isometry3<f64>,
        config: ArmConfiguration,
    ) -> Result<[f64; 6], IkError> {
        let (ik, _) = self.ik.as_ref().ok_or(IkError::NoSolution)?;
        ik.solve(&(self.base.inverse() * target), config)
    }

    /// Every within-limits IK solution for a world-frame flange target.
    pub fn inverse_kinematics_all(
        &self,
        target: &Isometry3<f64>,
    ) -> Result<Vec<(ArmConfiguration, [f64; 6])>, IkError> {
        let (ik, _) = self.ik.as_ref().ok_or(IkError::NoSolution)?;
        ik.solve_all(&(self.base.inverse() * target))
    }
}

/// An object of a scenario.
#[derive(Clone, Debug)]
pub enum Object {
    /// One mesh at a fixed pose.
    Simple(SimpleObject),
    /// A kinematic chain of meshes (a robot).
    Complex(Robot),
}

impl Object {
    /// The object's name.
    pub fn name(&self) -> &str {
        match self {
            Object::Simple(s) => &s.name,
            Object::Complex(r) => r.name(),
        }
    }

    /// Number of bodies.
    pub fn num_bodies(&self) -> usize {
        match self {
            Object::Simple(_) => 1,
            Object::Complex(r) => r.bodies().len(),
        }
    }

    /// Body `i`.
    pub fn body(&self, i: usize) -> &Body {
        match self {
            Object::Simple(s) => &s.body,
            Object::Complex(r) => &r.bodies()[i],
        }
    }

    /// Number of joint variables (0 for simple objects).
    pub fn dof(&self) -> usize {
        match self {
            Object::Simple(_) => 0,
            Object::Complex(r) => r.dof(),
        }
    }

    /// Where the object is in the world: the pose of a simple object, the base pose of a
    /// robot.
    pub fn pose(&self) -> Isometry3<f64> {
        match self {
            Object::Simple(s) => s.pose,
            Object::Complex(r) => *r.base(),
        }
    }
}

pub(crate) fn check_pose(p: &Isometry3<f64>, what: &str) -> Result<(), SceneError> {
    if p.translation
        .vector
        .iter()
        .chain(p.rotation.coords.iter())
        .all(|x| x.is_finite())
    {
        Ok(())
    } else {
        Err(SceneError::NonFinite { what: what.into() })
    }
}
