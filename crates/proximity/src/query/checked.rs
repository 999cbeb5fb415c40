//! The checked forms of the queries (`try_*`), for input from outside: a non-finite pose or an
//! out-of-domain parameter is an error instead of a fail-safe answer.

use nalgebra::Isometry3;

use super::pose::pose_is_finite;
use super::{
    collide, distance, intersects, tolerance, CollisionMode, CollisionResult, DistanceRequest,
    DistanceResult, QueryWorkspace, ToleranceResult,
};
use crate::model::Model;
use crate::ProximityError;

fn check_poses(pose_a: &Isometry3<f64>, pose_b: &Isometry3<f64>) -> Result<(), ProximityError> {
    if pose_is_finite(pose_a) && pose_is_finite(pose_b) && pose_is_finite(&pose_a.inv_mul(pose_b)) {
        Ok(())
    } else {
        Err(ProximityError::NonFinitePose)
    }
}

fn check_request(req: &DistanceRequest) -> Result<(), ProximityError> {
    for (name, value) in [("rel_err", req.rel_err), ("abs_err", req.abs_err)] {
        if value.is_nan() || value < 0.0 {
            return Err(ProximityError::InvalidParameter { name, value });
        }
    }
    if req.upper_bound.is_nan() {
        return Err(ProximityError::InvalidParameter {
            name: "upper_bound",
            value: req.upper_bound,
        });
    }
    Ok(())
}

/// [`collide`] for poses from outside: [`ProximityError::NonFinitePose`] if a pose (or the
/// relative pose) is not finite.
pub fn try_collide(
    pose_a: &Isometry3<f64>,
    a: &Model,
    pose_b: &Isometry3<f64>,
    b: &Model,
    mode: CollisionMode,
    ws: &mut QueryWorkspace,
) -> Result<CollisionResult, ProximityError> {
    check_poses(pose_a, pose_b)?;
    Ok(collide(pose_a, a, pose_b, b, mode, ws))
}

/// [`intersects`] for poses from outside: [`ProximityError::NonFinitePose`] if a pose (or
/// the relative pose) is not finite.
pub fn try_intersects(
    pose_a: &Isometry3<f64>,
    a: &Model,
    pose_b: &Isometry3<f64>,
    b: &Model,
    ws: &mut QueryWorkspace,
) -> Result<bool, ProximityError> {
    check_poses(pose_a, pose_b)?;
    Ok(intersects(pose_a, a, pose_b, b, ws))
}

/// [`distance`] for poses and requests from outside: [`ProximityError::NonFinitePose`] if a
/// pose is not finite, [`ProximityError::InvalidParameter`] for a NaN `upper_bound` or a
/// negative or NaN `rel_err` / `abs_err`.
pub fn try_distance(
    pose_a: &Isometry3<f64>,
    a: &Model,
    pose_b: &Isometry3<f64>,
    b: &Model,
    req: &DistanceRequest,
    ws: &mut QueryWorkspace,
) -> Result<Option<DistanceResult>, ProximityError> {
    check_poses(pose_a, pose_b)?;
    check_request(req)?;
    Ok(distance(pose_a, a, pose_b, b, req, ws))
}

/// [`tolerance`] for input from outside: [`ProximityError::NonFinitePose`] if a pose is not
/// finite, [`ProximityError::InvalidParameter`] for a NaN tolerance.
pub fn try_tolerance(
    pose_a: &Isometry3<f64>,
    a: &Model,
    pose_b: &Isometry3<f64>,
    b: &Model,
    tolerance_value: f64,
    ws: &mut QueryWorkspace,
) -> Result<ToleranceResult, ProximityError> {
    check_poses(pose_a, pose_b)?;
    if tolerance_value.is_nan() {
        return Err(ProximityError::InvalidParameter {
            name: "tolerance",
            value: tolerance_value,
        });
    }
    Ok(tolerance(pose_a, a, pose_b, b, tolerance_value, ws))
}
