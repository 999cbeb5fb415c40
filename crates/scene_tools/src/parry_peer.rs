//! parry3d-f64 as a peer engine on the same scenario (benchmarks and cross-checks). Every
//! body becomes a parry `TriMesh` (f64); queries run over every body pair of every object
//! pair, as a generic engine without the robot layer would.

use nalgebra::Isometry3;
use parry3d_f64::math::{Pose, Rotation, Vector};
use parry3d_f64::shape::TriMesh;

use rpq_scene::{BodyId, Scenario, SceneError};

/// parry meshes of every body of a scenario's objects.
pub struct ParryScene {
    meshes: Vec<Vec<TriMesh>>,
}

impl std::fmt::Debug for ParryScene {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ParryScene")
            .field("objects", &self.meshes.len())
            .finish()
    }
}

/// parry pose of a nalgebra isometry.
pub fn to_pose(p: &Isometry3<f64>) -> Pose {
    let q = p.rotation.coords; // [i, j, k, w]
    let t = p.translation.vector;
    Pose::from_parts(
        Vector::new(t.x, t.y, t.z),
        Rotation::from_xyzw(q[0], q[1], q[2], q[3]),
    )
}

/// One body's parry mesh (building its BVH).
pub fn trimesh(model: &rpq_proximity::Model) -> Result<TriMesh, SceneError> {
    trimesh_from(mesh_input(model))
}

/// A model's vertices and triangles in parry's types: the input of [`trimesh_from`].
pub type MeshInput = (Vec<Vector>, Vec<[u32; 3]>);

/// A model's mesh converted for parry (what [`trimesh`] converts before building).
pub fn mesh_input(model: &rpq_proximity::Model) -> MeshInput {
    let v = model
        .vertices()
        .iter()
        .map(|p| Vector::new(p.x, p.y, p.z))
        .collect();
    (v, model.triangles().to_vec())
}

/// parry's mesh (its BVH built) of converted input: what a build benchmark times.
pub fn trimesh_from((v, t): MeshInput) -> Result<TriMesh, SceneError> {
    TriMesh::new(v, t).map_err(|e| SceneError::Invalid(format!("parry rejects a mesh: {e:?}")))
}

impl ParryScene {
    /// Converts every body of `scenario`.
    pub fn new(scenario: &Scenario) -> Result<ParryScene, SceneError> {
        let mut meshes = Vec::new();
        for o in scenario.objects() {
            let mut m = Vec::new();
            for i in 0..o.num_bodies() {
                m.push(trimesh(&o.body(i).model)?);
            }
            meshes.push(m);
        }
        Ok(ParryScene { meshes })
    }

    /// The parry mesh of a body.
    pub fn mesh(&self, id: BodyId) -> &TriMesh {
        &self.meshes[id.object][id.body]
    }

    /// Do the two meshes, at poses already converted, intersect (parry `intersection_test`)?
    pub fn intersects_posed(&self, pa: &Pose, a: BodyId, pb: &Pose, b: BodyId) -> bool {
        parry3d_f64::query::intersection_test(pa, self.mesh(a), pb, self.mesh(b))
            .map(|r| r.intersecting)
            .unwrap_or(false)
    }

    /// Do the two bodies' surfaces intersect (parry `intersection_test`)?
    pub fn intersects(&self, scenario: &Scenario, a: BodyId, b: BodyId) -> bool {
        let pa = to_pose(&scenario.body_poses(a.object)[a.body]);
        let pb = to_pose(&scenario.body_poses(b.object)[b.body]);
        parry3d_f64::query::intersection_test(
            &pa,
            &self.meshes[a.object][a.body],
            &pb,
            &self.meshes[b.object][b.body],
        )
        .map(|r| r.intersecting)
        .unwrap_or(false)
    }

    /// Distance between the two bodies (parry `distance`).
    pub fn distance(&self, scenario: &Scenario, a: BodyId, b: BodyId) -> f64 {
        let pa = to_pose(&scenario.body_poses(a.object)[a.body]);
        let pb = to_pose(&scenario.body_poses(b.object)[b.body]);
        parry3d_f64::query::distance(
            &pa,
            &self.meshes[a.object][a.body],
            &pb,
            &self.meshes[b.object][b.body],
        )
        .map(|r| r.distance)
        .unwrap_or(f64::NAN)
    }

    /// Every body pair of every object pair in index order, stopping at the first
    /// intersection.
    pub fn collide(&self, scenario: &Scenario) -> Option<(BodyId, BodyId)> {
        for (a, b) in scenario.object_pairs() {
            for i in 0..self.meshes[a].len() {
                for j in 0..self.meshes[b].len() {
                    let (x, y) = (BodyId { object: a, body: i }, BodyId { object: b, body: j });
                    if self.intersects(scenario, x, y) {
                        return Some((x, y));
                    }
                }
            }
        }
        None
    }

    /// Minimum distance over every body pair (all pairs computed), with the pair (ties
    /// to the smallest indices).
    pub fn min_distance(&self, scenario: &Scenario) -> Option<(f64, BodyId, BodyId)> {
        let mut best: Option<(f64, BodyId, BodyId)> = None;
        for (a, b) in scenario.object_pairs() {
            for i in 0..self.meshes[a].len() {
                for j in 0..self.meshes[b].len() {
                    let (x, y) = (BodyId { object: a, body: i }, BodyId { object: b, body: j });
                    let d = self.distance(scenario, x, y);
                    if best.is_none_or(|(bd, _, _)| d < bd) {
                        best = Some((d, x, y));
                    }
                }
            }
        }
        best
    }
}
