//! Triangle-mesh proximity engine: collision, minimum distance and tolerance queries on
//! bounding-volume hierarchies (f64), in the manner of PQP.
//!
//! * [`Model`]: an immutable triangle mesh with its hierarchy (one or two triangles per leaf; each
//!   node has an oriented bounding box, used for overlap tests and as a distance lower bound).
//! * [`collide`] / [`intersects`]: do the surfaces intersect? Touching counts. A mesh lying
//!   entirely inside another without touching its surface is **not** colliding (surface
//!   semantics, as PQP).
//! * [`distance`]: minimum distance with witness points and triangles, exact or with PQP's
//!   relative/absolute error allowances, pruned by an upper bound.
//! * [`tolerance`]: is the distance below a threshold?
//! * Each query has a posed form (two world poses) and a local form (`b`'s pose in `a`'s frame).
//! * [`brute`]: all-pairs oracle; [`triangle`]: the triangle primitives.
//!
//! # Contact and distance agree
//!
//! One predicate decides contact: [`triangle::overlap`]. The distance of a triangle pair is 0
//! exactly when `overlap` says the pair touches, and positive otherwise, even for contacts that
//! exist only up to rounding, such as a vertex on an edge or a face. For meshes, it follows that
//! `intersects` is `true` ⇔ `distance == 0` ⇔ `tolerance(t).closer_than` for every `t > 0`
//! below the smallest positive triangle-pair distance.
//!
//! # Non-finite input
//!
//! The queries above take poses without checking them, so hot loops pay nothing for it. A
//! relative pose with a NaN or infinite component costs one O(1) check. No traversal then
//! runs, and the answer is **fail-safe**: a pose that is not finite must never look safe.
//! * [`intersects`] answers `true`.
//! * [`collide`] answers `colliding = true`, no `pairs`, and `invalid_pose = true`.
//! * [`distance`] answers `Some` with distance 0, NaN witness points and triangle indices 0.
//! * [`tolerance`] answers `closer_than = true` with no witness.
//! * [`distance_lower_bound`] answers 0.
//!
//! Request parameters follow the same rule. A NaN `upper_bound` or tolerance counts as no
//! bound, so the distance is computed and the tolerance query answers `true` if any pair is
//! found. A NaN or negative `rel_err` / `abs_err` counts as 0 (exact).
//!
//! Input from outside should go through the checked forms [`try_collide`], [`try_intersects`],
//! [`try_distance`] and [`try_tolerance`]. They return [`ProximityError::NonFinitePose`] or
//! [`ProximityError::InvalidParameter`] instead.
//!
//! ```
//! use nalgebra::{Isometry3, Point3, Vector3};
//! use rpq_proximity::*;
//! let v = vec![Point3::origin(), Point3::new(1.0, 0.0, 0.0), Point3::new(0.0, 1.0, 0.0)];
//! let m = Model::new(v, vec![[0, 1, 2]]).unwrap();
//! let mut ws = QueryWorkspace::default();
//! let up = Isometry3::translation(0.0, 0.0, 0.5);
//! assert!(!intersects(&Isometry3::identity(), &m, &up, &m, &mut ws));
//! let d = distance(&Isometry3::identity(), &m, &up, &m, &DistanceRequest::default(), &mut ws).unwrap();
//! assert!((d.distance - 0.5).abs() < 1e-12);
//! ```
#![warn(missing_docs)]

pub mod brute;
mod error;
mod model;
mod obb;
mod query;
pub mod triangle;

pub use error::ProximityError;
pub use model::Model;
pub use obb::Obb;
pub use query::{
    collide, collide_local, distance, distance_local, distance_lower_bound, intersects,
    intersects_local, pose_is_finite, tolerance, tolerance_local, try_collide, try_distance,
    try_intersects, try_tolerance, CollisionMode, CollisionResult, DistanceRequest, DistanceResult,
    QueryWorkspace, ToleranceResult, PAIR_CACHE_SLOTS,
};
pub use query::{
    segment_triangle_distance, segment_within, segment_within_local, SegmentHit, SweepWorkspace,
};
