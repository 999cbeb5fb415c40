//! The hierarchical queries, one file each: [`collide`](fn@collide) (and
//! [`intersects`](fn@intersects)), [`distance`](fn@distance), [`tolerance`](fn@tolerance), and
//! their checked forms (`try_*`, in `checked`). What they share: the reusable
//! [`QueryWorkspace`] (`workspace`), the one non-finite-pose guard and the relative pose in
//! matrix form (`pose`), and the rules of the simultaneous descent of two hierarchies
//! (`traverse`).

mod checked;
mod child_bounds;
mod collide;
mod distance;
mod pose;
mod tolerance;
mod traverse;
mod workspace;

pub use checked::{try_collide, try_distance, try_intersects, try_tolerance};
pub(crate) use child_bounds::ChildBoxes;
pub use collide::{
    collide, collide_local, intersects, intersects_local, CollisionMode, CollisionResult,
};
pub use distance::{
    distance, distance_local, distance_lower_bound, DistanceRequest, DistanceResult,
};
pub use pose::pose_is_finite;
pub use tolerance::{tolerance, tolerance_local, ToleranceResult};
pub use workspace::{QueryWorkspace, PAIR_CACHE_SLOTS};

mod sweep;
pub use sweep::{
    segment_triangle_distance, segment_within, segment_within_local, SegmentHit, SweepWorkspace,
};
