//! Minimum distance between two models, with witness points and triangles, exact or within
//! error allowances, pruned by an upper bound; and the O(1) root-box lower bound.

use nalgebra::{Isometry3, Matrix3, Point3, Vector3};

use super::pose::{finite_split, guard, placed_leaf, xf};
use super::traverse::{relative, split_a_for_distance};
use super::workspace::HeapPair;
use super::QueryWorkspace;
use crate::model::Model;
use crate::{obb, triangle};

type V = Vector3<f64>;

/// Options of a distance query.
///
/// The result `d` satisfies `d_true <= d` and `d - d_true <= max(rel_err * d_true, abs_err)`
/// (a subtree is skipped when its lower bound `lb` satisfies `lb * (1 + rel_err) >= best` or
/// `lb + abs_err >= best`). `upper_bound` prunes exactly: the query returns `None` if and
/// only if the true distance is `>= upper_bound` (errors are applied only below a distance
/// actually found).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DistanceRequest {
    /// Allowed relative error (>= 0; NaN or negative counts as 0).
    pub rel_err: f64,
    /// Allowed absolute error (>= 0, metres; NaN or negative counts as 0).
    pub abs_err: f64,
    /// Distances at or above this are not wanted (`+inf`: no bound; NaN also counts as no
    /// bound, fail-safe).
    pub upper_bound: f64,
}

impl Default for DistanceRequest {
    fn default() -> Self {
        DistanceRequest {
            rel_err: 0.0,
            abs_err: 0.0,
            upper_bound: f64::INFINITY,
        }
    }
}

impl DistanceRequest {
    /// Exact distance, no bound.
    pub fn exact() -> Self {
        Self::default()
    }

    /// Exact distance, `None` at or above `upper_bound`.
    pub fn with_upper_bound(upper_bound: f64) -> Self {
        DistanceRequest {
            upper_bound,
            ..Self::default()
        }
    }
}

/// Result of a distance query.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DistanceResult {
    /// Distance between the surfaces (0 when they intersect).
    pub distance: f64,
    /// Closest point on a (world frame for the posed form, a's frame for the local form).
    pub point_a: Point3<f64>,
    /// Closest point on b (same frame as `point_a`).
    pub point_b: Point3<f64>,
    /// Triangle of a holding `point_a`.
    pub triangle_a: u32,
    /// Triangle of b holding `point_b`.
    pub triangle_b: u32,
}

impl DistanceResult {
    pub(super) fn transformed(mut self, pose: &Isometry3<f64>) -> Self {
        self.point_a = pose * self.point_a;
        self.point_b = pose * self.point_b;
        self
    }
}

/// The fail-safe distance answer for a non-finite relative pose: distance 0, NaN points.
fn invalid_distance() -> DistanceResult {
    let nan = Point3::new(f64::NAN, f64::NAN, f64::NAN);
    DistanceResult {
        distance: 0.0,
        point_a: nan,
        point_b: nan,
        triangle_a: 0,
        triangle_b: 0,
    }
}

/// Lower bound of the distance between nodes `ia` of `a` and `ib` of `b` (`b` placed in a's
/// frame by `r`, `t`): the boxes' projection gap, possibly stopped early at any value `>= prune`.
#[inline(always)]
fn node_lb(a: &Model, ia: u32, b: &Model, ib: u32, r: &Matrix3<f64>, t: &V, prune: f64) -> f64 {
    let na = a.node_box(&a.nodes[ia as usize]);
    let nb = b.node_box(&b.nodes[ib as usize]);
    let (rr, tt) = relative(&na, &nb, r, t);
    obb::gap_pruned(&rr, &tt, &na.half, &nb.half, prune)
}

struct Best {
    d: f64,
    have: bool,
    pa: Point3<f64>,
    pb: Point3<f64>,
    la: u32,
    lb: u32,
}

/// Whether the triangles `ta` and `tb` (in one frame, every corner within `reach` of its
/// origin) are at least `d` apart by the gap between their projections on the line through
/// their centroids (a lower bound of their distance: a few dozen operations, where the exact
/// distance takes several hundred).
#[inline(always)]
fn centroid_gap_exceeds(ta: &[Point3<f64>; 3], tb: &[Point3<f64>; 3], d: f64, reach: f64) -> bool {
    // The gap along `u` is the lower bound times |u|. A projection `u . p` is rounded by at
    // most a few ulps of |u| |p| <= |u| reach: 1e-14 |u| reach covers both projections, and
    // the factor 1e-12 the rounding of the squares.
    let ca = (ta[0].coords + ta[1].coords) + ta[2].coords;
    let cb = (tb[0].coords + tb[1].coords) + tb[2].coords;
    let u = cb - ca;
    let pa = ta.map(|p| u.dot(&p.coords));
    let pb = tb.map(|p| u.dot(&p.coords));
    let amax = pa[0].max(pa[1]).max(pa[2]);
    let bmin = pb[0].min(pb[1]).min(pb[2]);
    let gap = bmin - amax;
    let thr = d * (1.0 + 1e-12) + 1e-14 * reach;
    gap > 0.0 && gap * gap >= u.norm_squared() * (thr * thr)
}

/// How far from a's origin the corners of both models lie at most (`b` placed in a's frame
/// by translation `t`): what the rounding of a projection in [`centroid_gap_exceeds`] is
/// relative to.
fn reach(a: &Model, b: &Model, t: &V) -> f64 {
    let radius = |m: &Model| {
        let (lo, hi) = m.aabb();
        lo.coords.abs().sup(&hi.coords.abs()).norm()
    };
    radius(a).max(t.norm() + radius(b))
}

/// The triangle pair `la` of a, `lb` of b (`tb`, placed in a's frame; `reach` is [`reach`]):
/// skipped when the gap between their projections on the line through their
/// centroids is at least the best distance so far ([`centroid_gap_exceeds`]), else measured.
#[inline(always)]
fn leaf_pair(a: &Model, la: u32, lb: u32, tb: &[Point3<f64>; 3], reach: f64, best: &mut Best) {
    let ta = &a.leaf_tris[la as usize];
    if centroid_gap_exceeds(ta, tb, best.d, reach) {
        return;
    }
    let (d, p, q) = triangle::distance(ta, tb);
    if d < best.d {
        *best = Best {
            d,
            have: true,
            pa: p,
            pb: q,
            la,
            lb,
        };
    }
}

/// Shared distance traversal. `stop_on_first`: tolerance mode (return as soon as some pair is
/// below `req.upper_bound`).
pub(super) fn distance_impl(
    r: &Matrix3<f64>,
    t: &V,
    a: &Model,
    b: &Model,
    req: &DistanceRequest,
    stop_on_first: bool,
    ws: &mut QueryWorkspace,
) -> Option<DistanceResult> {
    let rel = req.rel_err.max(0.0);
    let abs = req.abs_err.max(0.0);
    let mut best = Best {
        d: if req.upper_bound.is_nan() {
            f64::INFINITY
        } else {
            req.upper_bound
        },
        have: false,
        pa: Point3::origin(),
        pb: Point3::origin(),
        la: 0,
        lb: 0,
    };
    let threshold = |best: &Best| {
        if best.have {
            (best.d / (1.0 + rel)).min(best.d - abs)
        } else {
            best.d
        }
    };
    let mut bv_tests = 0;
    let mut tri_tests = 0;
    let reach = reach(a, b, t);
    let key = (a.id, b.id);
    if let Some((la, lb)) = ws.cached(key) {
        tri_tests += 1;
        let tb = b.leaf_tris[lb as usize].map(|p| xf(r, t, &p));
        leaf_pair(a, la, lb, &tb, reach, &mut best);
    }
    if !(stop_on_first && best.have) {
        // Best first: the pair with the smallest lower bound is taken from the heap, then
        // the traversal dives into the nearer child (the farther one goes to the heap) until
        // it reaches a leaf pair or a pair that can be pruned. The first pair taken whose
        // bound reaches the best distance found ends the query: every other bound is larger.
        let heap = &mut ws.dist_heap;
        heap.clear();
        bv_tests += 1;
        // The pruning threshold, refreshed whenever `best` improves.
        let mut thr = threshold(&best);
        let d0 = node_lb(a, 0, b, 0, r, t, thr);
        if d0 < thr {
            heap.push(HeapPair {
                bound: d0,
                a: 0,
                b: 0,
            });
        }
        'pairs: while let Some(top) = heap.pop() {
            if top.bound >= thr {
                break;
            }
            let (mut ia, mut ib) = (top.a, top.b);
            // The two nodes' boxes, carried down the dive (only the split side's changes).
            let mut ba = a.node_box(&a.nodes[ia as usize]);
            let mut bb = b.node_box(&b.nodes[ib as usize]);
            loop {
                let na = &a.nodes[ia as usize];
                let nb = &b.nodes[ib as usize];
                if na.is_leaf() && nb.is_leaf() {
                    // (b's triangles placed once for all of a's)
                    let tbs = placed_leaf(b, nb, r, t);
                    for ka in na.tri..na.tri + na.count {
                        for (kb, tb) in (nb.tri..).zip(&tbs[..nb.count as usize]) {
                            tri_tests += 1;
                            leaf_pair(a, ka, kb, tb, reach, &mut best);
                        }
                    }
                    if stop_on_first && best.have {
                        break 'pairs;
                    }
                    thr = threshold(&best);
                    break;
                }
                let split_a = split_a_for_distance(na, nb, &ba, &bb, r, t);
                let (c1, c2) = if split_a {
                    ((ia + 1, ib), (na.right, ib))
                } else {
                    ((ia, ib + 1), (ia, nb.right))
                };
                // Bounds of both children at once, the other node placed once.
                let (d1, d2) = if split_a {
                    let m = r * bb.rot;
                    let c = r * bb.center + t;
                    let [d1, d2] = a.boxes[na.tri as usize].against_placed(&m, &c, &bb.half);
                    (d1, d2)
                } else {
                    let rat = ba.rot.transpose();
                    let p = rat * r;
                    let q = rat * (t - ba.center);
                    // a's box centre in b's model frame
                    let cb = r.tr_mul(&(ba.center - t));
                    let [d1, d2] = b.boxes[nb.tri as usize].seen_from(&p, &q, &cb, &ba.half);
                    (d1, d2)
                };
                bv_tests += 2;
                let (near, dn, far, df, lane) = if d1 <= d2 {
                    (c1, d1, c2, d2, 0)
                } else {
                    (c2, d2, c1, d1, 1)
                };
                if df < thr {
                    heap.push(HeapPair {
                        bound: df,
                        a: far.0,
                        b: far.1,
                    });
                }
                if dn >= thr {
                    break;
                }
                if split_a {
                    ba = a.boxes[na.tri as usize].get(lane);
                } else {
                    bb = b.boxes[nb.tri as usize].get(lane);
                }
                (ia, ib) = near;
            }
        }
    }
    ws.set_counts(bv_tests, tri_tests);
    if !best.have {
        return None;
    }
    ws.remember(key, (best.la, best.lb));
    Some(DistanceResult {
        distance: best.d,
        point_a: best.pa,
        point_b: best.pb,
        triangle_a: a.leaf_ids[best.la as usize],
        triangle_b: b.leaf_ids[best.lb as usize],
    })
}

/// Minimum distance with `b`'s pose given in `a`'s frame; points in `a`'s frame.
///
/// `None` if and only if the distance is `>= req.upper_bound`.
pub fn distance_local(
    b_in_a: &Isometry3<f64>,
    a: &Model,
    b: &Model,
    req: &DistanceRequest,
    ws: &mut QueryWorkspace,
) -> Option<DistanceResult> {
    let Some((r, t)) = guard(b_in_a, ws) else {
        return Some(invalid_distance());
    };
    distance_impl(&r, &t, a, b, req, false, ws)
}

/// Minimum distance between posed models, with witness points in the world frame.
///
/// `None` if and only if the distance is `>= req.upper_bound`; 0 when the surfaces intersect.
pub fn distance(
    pose_a: &Isometry3<f64>,
    a: &Model,
    pose_b: &Isometry3<f64>,
    b: &Model,
    req: &DistanceRequest,
    ws: &mut QueryWorkspace,
) -> Option<DistanceResult> {
    distance_local(&pose_a.inv_mul(pose_b), a, b, req, ws).map(|d| d.transformed(pose_a))
}

/// A valid lower bound of the distance between two posed models from their root bounding
/// volumes (O(1)); 0 when the roots overlap.
pub fn distance_lower_bound(
    pose_a: &Isometry3<f64>,
    a: &Model,
    pose_b: &Isometry3<f64>,
    b: &Model,
) -> f64 {
    let Some((r, t)) = finite_split(&pose_a.inv_mul(pose_b)) else {
        return 0.0;
    };
    let na = a.node_box(&a.nodes[0]);
    let nb = b.node_box(&b.nodes[0]);
    let (rr, tt) = relative(&na, &nb, &r, &t);
    // 15 separating axes + the centre direction on the root boxes
    obb::gap(&rr, &tt, &na.half, &nb.half)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::obb::test_rng;

    /// Where the bound is tight (parallel triangles facing each other across the line of
    /// their centroids), a threshold just above the true distance is never skipped, however
    /// far from the origin (the rounding of the projections grows with the coordinates).
    #[test]
    fn centroid_gap_never_skips_a_nearer_pair() {
        let mut r = test_rng(0x5eed_0f9a9);
        // (coordinates on a binary grid and power-of-two scales: every sum below is exact,
        // so the true distance is `h`)
        // (fine enough that the projections are rounded: 2^-20 steps, up to 2^20 away)
        let grid = |r: &mut dyn FnMut() -> f64| (r() * 1048576.0).floor() / 1048576.0;
        for k in 0..100_000 {
            let scale = [2f64.powi(-20), 2f64.powi(-10), 1.0, 1024.0][k % 4];
            let far = [0.0, 1.0, 1024.0, 1048576.0][(k / 4) % 4];
            let o = V::new(grid(&mut r), grid(&mut r), grid(&mut r)) * far;
            let h = (1.0 + (r() * 1048576.0).floor()) / 16777216.0;
            let xy: [V; 3] = [0; 3].map(|_| V::new(grid(&mut r), grid(&mut r), 0.0));
            let ta = xy.map(|p| Point3::from((o + p) * scale));
            let tb = xy.map(|p| Point3::from((o + p + V::new(0.0, 0.0, h)) * scale));
            let d = h * scale;
            let reach = ta
                .iter()
                .chain(&tb)
                .map(|p| p.coords.norm())
                .fold(0.0, f64::max);
            assert!(
                !centroid_gap_exceeds(&ta, &tb, d.next_up(), reach),
                "skipped a pair {d:e} apart at {far} x {scale}"
            );
            // (and just below the distance the bound is tight enough to skip, near the origin)
            if far == 0.0 {
                assert!(centroid_gap_exceeds(&ta, &tb, d * 0.999, reach));
            }
        }
    }

    /// On random pairs, a threshold above the distance is never skipped, and a good share
    /// of pairs a few sizes apart is skipped at half their distance.
    #[test]
    fn centroid_gap_is_a_lower_bound() {
        let mut r = test_rng(0x0dd_ba11);
        let mut skipped = 0;
        let n = 50_000;
        for k in 0..n {
            let size = [1e-6, 1e-3, 1.0, 1e3][k % 4];
            let o = V::new(r() - 0.5, r() - 0.5, r() - 0.5) * [0.0, 1.0, 1e3, 1e6][(k / 4) % 4];
            let mut tri =
                |c: V| [0; 3].map(|_| Point3::from((o + c + V::new(r(), r(), r())) * size));
            let ta = tri(V::zeros());
            let away = tri(V::zeros())[0].coords / size - o;
            let tb = tri((away - V::repeat(0.5)) * 12.0);
            let reach = ta
                .iter()
                .chain(&tb)
                .map(|p| p.coords.norm())
                .fold(0.0, f64::max);
            let (d, _, _) = triangle::distance(&ta, &tb);
            // (above the computed distance by more than its rounding)
            for f in [1.0, 1.0001, 2.0] {
                let thr = d * f + 1e-13 * reach;
                assert!(
                    !centroid_gap_exceeds(&ta, &tb, thr, reach),
                    "{d:e} skipped at {thr:e}"
                );
            }
            skipped += centroid_gap_exceeds(&ta, &tb, 0.5 * d, reach) as usize;
        }
        assert!(skipped > n / 10, "only {skipped} of {n} pairs skipped");
    }
}
