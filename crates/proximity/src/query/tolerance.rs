//! Tolerance: is the distance between two models below a threshold? Stops at the first
//! triangle pair found closer.

use nalgebra::Isometry3;

use super::distance::{distance_impl, DistanceRequest, DistanceResult};
use super::pose::guard;
use super::QueryWorkspace;
use crate::model::Model;

/// Result of a tolerance query.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ToleranceResult {
    /// Is the distance strictly below the tolerance?
    pub closer_than: bool,
    /// When closer: a triangle pair closer than the tolerance, with its distance and points
    /// (not necessarily the closest pair).
    pub witness: Option<DistanceResult>,
}

/// Tolerance query with `b`'s pose given in `a`'s frame: is the distance `< tolerance`?
pub fn tolerance_local(
    b_in_a: &Isometry3<f64>,
    a: &Model,
    b: &Model,
    tolerance: f64,
    ws: &mut QueryWorkspace,
) -> ToleranceResult {
    let Some((r, t)) = guard(b_in_a, ws) else {
        return ToleranceResult {
            closer_than: true,
            witness: None,
        };
    };
    let req = DistanceRequest {
        upper_bound: tolerance,
        ..DistanceRequest::default()
    };
    let witness = distance_impl(&r, &t, a, b, &req, true, ws);
    ToleranceResult {
        closer_than: witness.is_some(),
        witness,
    }
}

/// Tolerance query between posed models: is the distance strictly below `tolerance`?
/// Stops at the first triangle pair found closer than `tolerance`.
pub fn tolerance(
    pose_a: &Isometry3<f64>,
    a: &Model,
    pose_b: &Isometry3<f64>,
    b: &Model,
    tolerance: f64,
    ws: &mut QueryWorkspace,
) -> ToleranceResult {
    let mut r = tolerance_local(&pose_a.inv_mul(pose_b), a, b, tolerance, ws);
    r.witness = r.witness.map(|d| d.transformed(pose_a));
    r
}
