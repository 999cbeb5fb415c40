//! The simultaneous descent of two hierarchies: the pose of one node in the other's box frame,
//! and which of the two nodes to split.

use nalgebra::{Matrix3, Vector3};

use crate::model::Node;

/// Rotation and centre offset of `nb`'s box in `na`'s box frame, `b` placed in a's frame by
/// `r`, `t`: the arguments of the box tests in `crate::obb`.
#[inline(always)]
pub(super) fn relative(
    na: &Node,
    nb: &Node,
    r: &Matrix3<f64>,
    t: &Vector3<f64>,
) -> (Matrix3<f64>, Vector3<f64>) {
    let rat = na.rot.transpose();
    (rat * (r * nb.rot), rat * (r * nb.center + t - na.center))
}

/// Split `na` (rather than `nb`)? The larger node is split, and a leaf never is.
#[inline(always)]
pub(super) fn descend_a(na: &Node, nb: &Node) -> bool {
    nb.is_leaf() || (!na.is_leaf() && na.size >= nb.size)
}
