//! The relative pose of `b` in `a`'s frame: the one non-finite-pose guard of every query, and
//! the matrix form the traversals use (points and leaf triangles of b placed in a's frame).

use nalgebra::{Isometry3, Matrix3, Point3, Vector3};

use super::QueryWorkspace;
use crate::model::{Model, Node, LEAF_SIZE};

/// Are all seven numbers of the pose finite? (O(1).)
#[inline(always)]
pub fn pose_is_finite(pose: &Isometry3<f64>) -> bool {
    pose.translation.vector.iter().all(|x| x.is_finite())
        && pose.rotation.coords.iter().all(|x| x.is_finite())
}

/// The relative pose as a rotation matrix and a translation, or `None` if it is not finite.
/// This is the guard of all the unchecked queries: on `None` they give their fail-safe answer
/// (see the crate docs) without traversing.
#[inline]
pub(super) fn finite_split(b_in_a: &Isometry3<f64>) -> Option<(Matrix3<f64>, Vector3<f64>)> {
    pose_is_finite(b_in_a).then(|| {
        (
            b_in_a.rotation.to_rotation_matrix().into_inner(),
            b_in_a.translation.vector,
        )
    })
}

/// [`finite_split`] for a query that counts its tests in `ws`: a refused pose leaves both
/// counts at 0.
#[inline]
pub(super) fn guard(
    b_in_a: &Isometry3<f64>,
    ws: &mut QueryWorkspace,
) -> Option<(Matrix3<f64>, Vector3<f64>)> {
    let rt = finite_split(b_in_a);
    if rt.is_none() {
        ws.set_counts(0, 0);
    }
    rt
}

/// Maps a point of b's frame into a's frame.
#[inline(always)]
pub(super) fn xf(r: &Matrix3<f64>, t: &Vector3<f64>, p: &Point3<f64>) -> Point3<f64> {
    Point3::from(r * p.coords + t)
}

/// The triangles of leaf `n` of `b`, placed in a's frame by `r`, `t` (the first `n.count`
/// entries): each of b's triangles once for all of a's in a leaf pair.
#[inline(always)]
pub(super) fn placed_leaf(
    b: &Model,
    n: &Node,
    r: &Matrix3<f64>,
    t: &Vector3<f64>,
) -> [[Point3<f64>; 3]; LEAF_SIZE] {
    let mut placed = [[Point3::origin(); 3]; LEAF_SIZE];
    let first = n.tri as usize;
    for (p, t3) in placed
        .iter_mut()
        .zip(&b.leaf_tris[first..first + n.count as usize])
    {
        *p = t3.map(|q| xf(r, t, &q));
    }
    placed
}
