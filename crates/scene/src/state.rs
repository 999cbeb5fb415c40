//! The per-configuration state of a scenario: what a query needs besides the scenario's
//! read-only objects (one per thread).

use nalgebra::{Isometry3, Vector3};
use rpq_proximity::{Obb, QueryWorkspace};

use crate::broadphase::Broadphase;
use crate::object::{Object, Robot};
use crate::posing::{self, LinkFrames};
use crate::scenario::aligned_box;
use crate::weights::WeightMatrix;

/// One object at the state's configuration.
#[derive(Clone, Debug)]
pub(crate) struct Posed {
    pub q: Vec<f64>,
    frames: LinkFrames,
    pub poses: Vec<Isometry3<f64>>,
    pub boxes: Vec<Obb>,
    /// Half extents of the world-aligned box around each body box (`|R| h`).
    pub extents: Vec<Vector3<f64>>,
    /// Radius of the sphere around each box (centre = box centre): a cheap L2 pre-test.
    pub radii: Vec<f64>,
    pub whole: Obb,
}

#[cfg(test)]
impl Posed {
    /// A one-body object at a fixed box (tests).
    pub(crate) fn fixed(b: Obb) -> Posed {
        Posed {
            q: Vec::new(),
            frames: LinkFrames::default(),
            poses: vec![Isometry3::identity()],
            boxes: vec![b],
            extents: vec![b.axes.matrix().abs() * b.half_extents],
            radii: vec![b.half_extents.norm()],
            whole: b,
        }
    }
}

/// A configuration of every object of a [`crate::Scenario`] and what queries at it reuse:
/// the posed bodies and their boxes (levels L2 and L1), the mesh engine's workspace, the
/// query-order buffers and the weight matrix (whose online counts learn from the queries
/// run with this state).
///
/// Made by [`crate::Scenario::new_state`] (a copy of the scenario's configuration), changed
/// by [`crate::Scenario::set_joint_positions_with`], used by the `*_with` queries. One per
/// thread; a state belongs to the scenario that made it.
#[derive(Debug, Default)]
pub struct ScenarioState {
    pub(crate) posed: Vec<Posed>,
    pub(crate) weights: WeightMatrix,
    pub(crate) ws: QueryWorkspace,
    pub(crate) order: Vec<(f64, u32)>,
    /// Per object pair: weight-matrix version and the pair order sorted for it.
    pub(crate) weighted_order: Vec<(u64, Vec<u32>)>,
    /// Buffers of the broadphase over objects.
    pub(crate) broadphase: Broadphase,
}

impl Clone for ScenarioState {
    /// The same configuration and weights, with fresh buffers and engine workspace.
    fn clone(&self) -> Self {
        ScenarioState {
            posed: self.posed.clone(),
            weights: self.weights.clone(),
            ws: QueryWorkspace::default(),
            order: Vec::new(),
            weighted_order: self.weighted_order.clone(),
            broadphase: Broadphase::default(),
        }
    }
}

impl ScenarioState {
    /// Room for one more object (placed by the caller).
    pub(crate) fn push_object(&mut self, object: &Object) {
        let n = object.num_bodies();
        let b0 = object.body(0).local_box;
        let radii = (0..n)
            .map(|i| object.body(i).local_box.half_extents.norm())
            .collect();
        self.posed.push(Posed {
            q: vec![0.0; object.dof()],
            frames: LinkFrames::default(),
            poses: vec![Isometry3::identity(); n],
            boxes: vec![b0; n],
            extents: vec![Vector3::zeros(); n],
            radii,
            whole: b0,
        });
        self.weights.push_object(object);
        let n = self.posed.len();
        self.weighted_order = vec![(u64::MAX, Vec::new()); n * n.saturating_sub(1) / 2];
    }

    /// Places simple object `k` at its pose.
    pub(crate) fn place_simple(&mut self, object: &Object, k: usize) {
        let p = &mut self.posed[k];
        let pose = object.pose();
        let b = object.body(0).local_box.transformed(&pose);
        p.poses[0] = pose;
        p.extents[0] = b.axes.matrix().abs() * b.half_extents;
        p.boxes[0] = b;
        p.whole = b;
    }

    /// Poses robot `k` at `q` (finite, right length).
    pub(crate) fn pose_robot(&mut self, robot: &Robot, k: usize, q: &[f64]) {
        let p = &mut self.posed[k];
        let (lo, hi) = posing::pose_robot(
            robot,
            q,
            &mut p.frames,
            &mut p.poses,
            &mut p.boxes,
            &mut p.extents,
        );
        p.whole = if p.boxes.len() == 1 {
            p.boxes[0]
        } else {
            aligned_box(lo, hi)
        };
        p.q.copy_from_slice(q);
    }

    /// Joint positions of `object` (empty for simple objects).
    pub fn joint_positions(&self, object: usize) -> &[f64] {
        &self.posed[object].q
    }

    /// World poses of the bodies of `object`.
    pub fn body_poses(&self, object: usize) -> &[Isometry3<f64>] {
        &self.posed[object].poses
    }

    /// World boxes of the bodies of `object` (level L2).
    pub fn body_boxes(&self, object: usize) -> &[Obb] {
        &self.posed[object].boxes
    }

    /// World box of the whole object (level L1).
    pub fn object_box(&self, object: usize) -> &Obb {
        &self.posed[object].whole
    }

    /// The weight matrix of this state.
    pub fn weights(&self) -> &WeightMatrix {
        &self.weights
    }

    /// Mutable access to this state's weight matrix.
    pub fn weights_mut(&mut self) -> &mut WeightMatrix {
        &mut self.weights
    }
}
