//! Guidance sources: geometry that gives, at the current tool pose `x`, the preferred
//! directions `D(x)` (6 × n, twists with the linear part first, base frame) and the error
//! command `u = f(x, S)` that drives the tool into the motion objective `S` (paper sec. III).
//!
//! Every source satisfies the paper's consistency rule 3 where the geometry allows it:
//! `<D> u = u`, i.e. the correction is orthogonal to the preferred directions (exactly for
//! the plane, the cone, and curve points inside a segment; at a polyline corner the
//! tangent is the mean of the two segments and the rule holds approximately).
//!
//! Each query has a local form (a point or a rotation) and the posed form
//! [`GuidanceSource::evaluate`] taking the tool pose.

mod cone;
mod curve;
mod geometry;
mod guidance;
mod mesh;
mod plane;
mod point;
mod polyline;

pub use cone::RcmCone;
pub use curve::ParametricCurve;
pub use guidance::{Guidance, GuidanceSource};
pub use mesh::TriangleMeshSurface;
pub use plane::PlaneSurface;
pub use point::PointTarget;
pub use polyline::{CurvePoint, PolylinePath};
