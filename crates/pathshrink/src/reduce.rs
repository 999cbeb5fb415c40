//! Node reduction after the deformation (§5.1: "a simplification scheme similar to a
//! polygonal path approximation algorithm").
//!
//! Greedy polygonal approximation with a tolerance in position and in orientation: from the
//! last kept node `a`, the next kept node is the farthest `b` such that
//!
//! * every dropped node `k` (`a < k < b`) lies within `position_tolerance` of the straight
//!   segment of centres `c_a c_b`, and its orientation within `orientation_tolerance` of the
//!   interpolated orientation at its projection on that segment;
//! * no fixed node (path or required-span end) is dropped;
//! * the motion from `a` to `b` ([`crate::geometry::interpolate`]) is collision-free
//!   (conservative advancement, a proof);
//! * inside a required span, every required object stays within ε_c + `position_tolerance`
//!   along the motion (checked every `check_step` of motion).

use rpq_proximity::QueryWorkspace;

use crate::environment::Environment;
use crate::error::{check_positive, PathShrinkError};
use crate::geometry::{interpolate, rotation_angle};
use crate::path::{swept_free, WorkpiecePath};

/// Tolerances of the reduction.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ReduceParams {
    /// [m] largest distance of a dropped node's centre from the segment that replaces it.
    pub position_tolerance: f64,
    /// [rad] largest orientation error of a dropped node.
    pub orientation_tolerance: f64,
    /// [m] spacing of the contact checks along a segment inside a required span.
    pub check_step: f64,
}

impl Default for ReduceParams {
    fn default() -> Self {
        ReduceParams {
            position_tolerance: 0.002,
            orientation_tolerance: 0.05,
            check_step: 0.001,
        }
    }
}

impl ReduceParams {
    /// Refuses values outside their ranges.
    pub fn validate(&self) -> Result<(), PathShrinkError> {
        check_positive("position_tolerance", self.position_tolerance, 1.0)?;
        check_positive("orientation_tolerance", self.orientation_tolerance, 3.2)?;
        check_positive("check_step", self.check_step, 1.0)?;
        Ok(())
    }
}

/// Position and orientation error of node `k` against the segment from node `a` to `b`.
pub fn deviation(
    env: &Environment,
    path: &WorkpiecePath,
    a: usize,
    b: usize,
    k: usize,
) -> (f64, f64) {
    let c = env.workpiece.centre;
    let (pa, pb, pk) = (
        path.nodes[a].pose * c,
        path.nodes[b].pose * c,
        path.nodes[k].pose * c,
    );
    let ab = pb - pa;
    let len2 = ab.norm_squared();
    let t = if len2 > 1e-18 {
        ((pk - pa).dot(&ab) / len2).clamp(0.0, 1.0)
    } else {
        // No translation: place the node by its share of the rotation.
        let total = rotation_angle(&path.nodes[a].pose, &path.nodes[b].pose);
        if total > 1e-12 {
            (rotation_angle(&path.nodes[a].pose, &path.nodes[k].pose) / total).clamp(0.0, 1.0)
        } else {
            0.0
        }
    };
    let on = interpolate(&path.nodes[a].pose, &path.nodes[b].pose, &c, t);
    (
        (on * c - pk).norm(),
        rotation_angle(&on, &path.nodes[k].pose),
    )
}

/// Reduces `path` (module documentation); `contact_distance` is ε_c. Returns the reduced
/// path (spans renumbered) and the original index of each kept node.
pub fn reduce(
    env: &Environment,
    path: &WorkpiecePath,
    p: &ReduceParams,
    contact_distance: f64,
    ws: &mut QueryWorkspace,
) -> (WorkpiecePath, Vec<usize>) {
    let n = path.nodes.len();
    let fixed = path.fixed();
    let mut keep = vec![0usize];
    let mut a = 0;
    while a < n - 1 {
        let mut b = a + 1;
        for cand in a + 2..n {
            if fixed[cand - 1] {
                break;
            }
            if !segment_ok(env, path, a, cand, p, contact_distance, ws) {
                break;
            }
            b = cand;
        }
        keep.push(b);
        a = b;
    }
    (path.subset(&keep), keep)
}

fn segment_ok(
    env: &Environment,
    path: &WorkpiecePath,
    a: usize,
    b: usize,
    p: &ReduceParams,
    contact_distance: f64,
    ws: &mut QueryWorkspace,
) -> bool {
    for k in a + 1..b {
        let (dp, dr) = deviation(env, path, a, b, k);
        if dp > p.position_tolerance || dr > p.orientation_tolerance {
            return false;
        }
    }
    let (pa, pb) = (&path.nodes[a].pose, &path.nodes[b].pose);
    if swept_free(env, pa, pb, 0.0, ws).is_err() {
        return false;
    }
    // Inside a required span: the contacts stay.
    if let Some(span) = path.spans.iter().find(|s| s.first <= a && b <= s.last) {
        let c = env.workpiece.centre;
        let (dp, dr) = crate::geometry::difference(pa, pb, &c);
        let motion = dp.norm() + dr.norm() * env.workpiece.radius;
        let steps = ((motion / p.check_step).ceil() as usize).clamp(1, 100_000);
        let reach = contact_distance + p.position_tolerance;
        for s in 0..=steps {
            let q = interpolate(pa, pb, &c, s as f64 / steps as f64);
            for &o in &span.objects {
                if env.distance(&q, o, reach, ws).is_none() {
                    return false;
                }
            }
        }
    }
    true
}
