//! Triangle-mesh proximity engine: collision, minimum distance and tolerance queries on
//! bounding-volume hierarchies (f64), in the manner of PQP.
//!
//! * [`Model`]: an immutable triangle mesh with its hierarchy (one triangle per leaf; each
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
mod rss;
pub mod triangle;

pub use error::ProximityError;
pub use model::Model;
pub use obb::Obb;
pub use query::{
    collide, collide_local, distance, distance_local, distance_lower_bound, intersects,
    intersects_local, tolerance, tolerance_local, CollisionMode, CollisionResult, DistanceRequest,
    DistanceResult, QueryWorkspace, ToleranceResult,
};
