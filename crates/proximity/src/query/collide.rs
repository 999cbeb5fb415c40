//! Collision: do the surfaces of two models intersect (touching counts)?

use nalgebra::{Isometry3, Matrix3, Vector3};

use super::pose::{guard, placed_leaf};
use super::traverse::{descend_a, relative};
use super::QueryWorkspace;
use crate::model::Model;
use crate::{obb, triangle};

type V = Vector3<f64>;

/// What a collision query reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum CollisionMode {
    /// Stop at the first intersecting triangle pair.
    #[default]
    FirstContact,
    /// Report every intersecting triangle pair.
    AllContacts,
}

/// Result of [`collide`] / [`collide_local`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CollisionResult {
    /// Do the surfaces intersect (touching counts)?
    pub colliding: bool,
    /// Intersecting pairs `(triangle of a, triangle of b)`, original indices: one pair in
    /// [`CollisionMode::FirstContact`], all of them in [`CollisionMode::AllContacts`].
    pub pairs: Vec<(u32, u32)>,
    /// Number of bounding-volume pair tests.
    pub bv_tests: usize,
    /// Number of triangle pair tests.
    pub triangle_tests: usize,
    /// The relative pose was not finite (NaN or infinite): no traversal was run, `colliding`
    /// is `true` (fail-safe) and `pairs` is empty. See the crate docs.
    pub invalid_pose: bool,
}

fn collide_impl(
    r: &Matrix3<f64>,
    t: &V,
    a: &Model,
    b: &Model,
    all: bool,
    pairs: Option<&mut Vec<(u32, u32)>>,
    ws: &mut QueryWorkspace,
) -> bool {
    let mut pairs = pairs;
    let mut colliding = false;
    let mut bv_tests = 0;
    let mut tri_tests = 0;
    let stack = &mut ws.pair_stack;
    stack.clear();
    // The stack holds pairs whose boxes overlap: both children of a split node are tested at
    // once (their boxes side by side, the other node placed once) before they are pushed.
    bv_tests += 1;
    let (ra, rb) = (a.node_box(&a.nodes[0]), b.node_box(&b.nodes[0]));
    let (rr, tt) = relative(&ra, &rb, r, t);
    if !obb::disjoint(&rr, &tt, &ra.half, &rb.half) {
        stack.push((0, 0));
    }
    'outer: while let Some((ia, ib)) = stack.pop() {
        let na = &a.nodes[ia as usize];
        let nb = &b.nodes[ib as usize];
        if na.is_leaf() && nb.is_leaf() {
            // (b's triangles placed once for all of a's)
            let tbs = placed_leaf(b, nb, r, t);
            for ka in na.tri..na.tri + na.count {
                let ta = &a.leaf_tris[ka as usize];
                for (kb, tb) in (nb.tri..).zip(&tbs[..nb.count as usize]) {
                    tri_tests += 1;
                    if triangle::overlap(ta, tb) {
                        colliding = true;
                        if let Some(p) = pairs.as_deref_mut() {
                            p.push((a.leaf_ids[ka as usize], b.leaf_ids[kb as usize]));
                        }
                        if !all {
                            break 'outer;
                        }
                    }
                }
            }
            continue;
        }
        bv_tests += 2;
        let (sep, left, right) = if descend_a(na, nb) {
            let bb = b.node_box(nb);
            let m = r * bb.rot;
            let c = r * bb.center + t;
            let sep = a.boxes[na.tri as usize].disjoint_placed(&m, &c, &bb.half);
            (sep, (ia + 1, ib), (na.right, ib))
        } else {
            let ba = a.node_box(na);
            let rat = ba.rot.transpose();
            let p = rat * r;
            let q = rat * (t - ba.center);
            let sep = b.boxes[nb.tri as usize].disjoint_seen_from(&p, &q, &ba.half);
            (sep, (ia, ib + 1), (ia, nb.right))
        };
        // (the left child's pair is taken first)
        if !sep[1] {
            stack.push(right);
        }
        if !sep[0] {
            stack.push(left);
        }
    }
    ws.set_counts(bv_tests, tri_tests);
    colliding
}

/// Collision query with `b`'s pose given in `a`'s frame.
pub fn collide_local(
    b_in_a: &Isometry3<f64>,
    a: &Model,
    b: &Model,
    mode: CollisionMode,
    ws: &mut QueryWorkspace,
) -> CollisionResult {
    let Some((r, t)) = guard(b_in_a, ws) else {
        return CollisionResult {
            colliding: true,
            invalid_pose: true,
            ..CollisionResult::default()
        };
    };
    let mut pairs = Vec::new();
    let colliding = collide_impl(
        &r,
        &t,
        a,
        b,
        mode == CollisionMode::AllContacts,
        Some(&mut pairs),
        ws,
    );
    CollisionResult {
        colliding,
        pairs,
        bv_tests: ws.last_counts().0,
        triangle_tests: ws.last_counts().1,
        invalid_pose: false,
    }
}

/// Collision query between posed models: do any two triangles intersect?
pub fn collide(
    pose_a: &Isometry3<f64>,
    a: &Model,
    pose_b: &Isometry3<f64>,
    b: &Model,
    mode: CollisionMode,
    ws: &mut QueryWorkspace,
) -> CollisionResult {
    collide_local(&pose_a.inv_mul(pose_b), a, b, mode, ws)
}

/// Boolean collision test between posed models (no allocation).
pub fn intersects(
    pose_a: &Isometry3<f64>,
    a: &Model,
    pose_b: &Isometry3<f64>,
    b: &Model,
    ws: &mut QueryWorkspace,
) -> bool {
    intersects_local(&pose_a.inv_mul(pose_b), a, b, ws)
}

/// Boolean collision test with `b`'s pose given in `a`'s frame (no allocation).
pub fn intersects_local(
    b_in_a: &Isometry3<f64>,
    a: &Model,
    b: &Model,
    ws: &mut QueryWorkspace,
) -> bool {
    let Some((r, t)) = guard(b_in_a, ws) else {
        return true;
    };
    collide_impl(&r, &t, a, b, false, None, ws)
}
