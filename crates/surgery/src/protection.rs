//! The protection meshes a tool must not enter: named, shared, posed triangle models.

use std::sync::Arc;

use nalgebra::{Isometry3, Point3};
use rpq_kinematics::TriMesh;
use rpq_proximity::{segment_within, Model, SegmentHit, SweepWorkspace};

use crate::SurgeryError;

/// What a protection mesh is (for displays and reports; the navigation treats all alike).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProtectionKind {
    /// The shield over the patient (eq. 4), with its adaptation disc if any.
    Shield,
    /// The inner cover of the cutting aid (eq. 5).
    CuttingAid,
    /// The patient's own surface (e.g. the cranium phantom).
    Patient,
    /// Anything else loaded from a file.
    Other,
}

impl ProtectionKind {
    /// Lower-case name (`"shield"`, `"cutting_aid"`, `"patient"`, `"other"`).
    pub fn name(self) -> &'static str {
        match self {
            ProtectionKind::Shield => "shield",
            ProtectionKind::CuttingAid => "cutting_aid",
            ProtectionKind::Patient => "patient",
            ProtectionKind::Other => "other",
        }
    }
}

/// One protection: a mesh with its hierarchy, placed in the controller's base frame.
///
/// Meshes are oriented with their triangles' normals (`(v2 − v1) × (v3 − v1)`) toward the
/// allowed side; the navigation uses that only to break a tie (a point tool lying exactly on a
/// triangle's plane).
#[derive(Clone, Debug)]
pub struct Protection {
    /// Unique name in its set.
    pub name: String,
    /// What it protects.
    pub kind: ProtectionKind,
    /// The mesh (shared: cloning a set copies no triangles).
    pub model: Arc<Model>,
    /// Pose of the mesh frame in the base frame.
    pub pose: Isometry3<f64>,
}

impl Protection {
    /// From a plain mesh (validated and given a hierarchy here), at `pose`.
    pub fn from_mesh(
        name: impl Into<String>,
        kind: ProtectionKind,
        mesh: &TriMesh,
        pose: Isometry3<f64>,
    ) -> Result<Protection, SurgeryError> {
        let model = Model::new(mesh.vertices.clone(), mesh.triangles.clone())?;
        Ok(Protection {
            name: name.into(),
            kind,
            model: Arc::new(model),
            pose,
        })
    }

    /// The triangle `i` in the base frame.
    pub fn triangle(&self, i: usize) -> [Point3<f64>; 3] {
        self.model.triangle(i).map(|p| self.pose * p)
    }
}

/// Where a tool is with respect to a protection set ([`ProtectionSet::placement`]).
#[derive(Clone, Debug, PartialEq)]
pub enum Placement {
    /// Clear of every protection (farther than the tool radius) and on the allowed side of
    /// the nearest triangle of each protection within reach.
    Clear,
    /// Within the tool radius of a protection.
    Overlapping {
        /// The protection.
        name: String,
        /// Distance from the tool point to it [m].
        distance: f64,
    },
    /// On the forbidden side of a protection (behind the nearest triangle's normal): inside
    /// a closed mesh, under the shield or the cutting aid.
    ForbiddenSide {
        /// The protection.
        name: String,
        /// Distance from the tool point to it [m].
        distance: f64,
    },
}

/// The set of protections a [`crate::SurfaceNavigator`] keeps the tool out of. Cheap to
/// clone (meshes are shared), so a new set can be prepared beside the running one and
/// swapped in at once.
#[derive(Clone, Debug, Default)]
pub struct ProtectionSet {
    items: Vec<Protection>,
}

impl ProtectionSet {
    /// An empty set (the tool moves freely).
    pub fn new() -> ProtectionSet {
        ProtectionSet::default()
    }

    /// Adds a protection, replacing one of the same name (its position in the set is kept).
    pub fn insert(&mut self, p: Protection) {
        match self.items.iter_mut().find(|q| q.name == p.name) {
            Some(q) => *q = p,
            None => self.items.push(p),
        }
    }

    /// Builder form of [`ProtectionSet::insert`].
    pub fn with(mut self, p: Protection) -> ProtectionSet {
        self.insert(p);
        self
    }

    /// Removes the protection of that name; `true` if there was one.
    pub fn remove(&mut self, name: &str) -> bool {
        let n = self.items.len();
        self.items.retain(|p| p.name != name);
        self.items.len() != n
    }

    /// Removes every protection.
    pub fn clear(&mut self) {
        self.items.clear();
    }

    /// The protections, in insertion order.
    pub fn items(&self) -> &[Protection] {
        &self.items
    }

    /// The protection of that name.
    pub fn get(&self, name: &str) -> Option<&Protection> {
        self.items.iter().find(|p| p.name == name)
    }

    /// Number of protections.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// No protection at all?
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Triangles over all protections.
    pub fn num_triangles(&self) -> usize {
        self.items.iter().map(|p| p.model.num_triangles()).sum()
    }

    /// Where a tool of `radius` at `p` is with respect to the set, looking `reach` [m] around
    /// it: the nearest triangle of each protection within reach decides the side (its normal
    /// points to the allowed side). A controller should load a new set only when the tool is
    /// [`Placement::Clear`] of it: the navigation keeps the tool on the side it is on, so a
    /// protection loaded over the tool would hold it inside.
    ///
    /// Cheap enough to ask every control period: the nearest triangle is looked for in balls
    /// growing from `radius` to `reach` (every triangle within a ball is gathered, so the
    /// nearest one found is the nearest of the mesh), not by gathering every triangle within
    /// `reach` (all of a small shield or cutting aid).
    pub fn placement(&self, p: &Point3<f64>, radius: f64, reach: f64) -> Placement {
        let mut ws = SweepWorkspace::new();
        let mut hits: Vec<SegmentHit> = Vec::new();
        let reach = reach.max(radius);
        for prot in &self.items {
            let mut ball = radius.max(1e-4).min(reach);
            loop {
                segment_within(&prot.pose, &prot.model, p, p, ball, &mut ws, &mut hits);
                if !hits.is_empty() || ball >= reach || !ball.is_finite() {
                    break;
                }
                ball = (ball * 4.0).min(reach);
            }
            let Some(h) = hits.iter().min_by(|a, b| a.distance.total_cmp(&b.distance)) else {
                continue;
            };
            if h.distance <= radius {
                return Placement::Overlapping {
                    name: prot.name.clone(),
                    distance: h.distance,
                };
            }
            let t = &h.corners;
            if (t[1] - t[0])
                .cross(&(t[2] - t[0]))
                .dot(&(p - h.point_triangle))
                < 0.0
            {
                return Placement::ForbiddenSide {
                    name: prot.name.clone(),
                    distance: h.distance,
                };
            }
        }
        Placement::Clear
    }
}
