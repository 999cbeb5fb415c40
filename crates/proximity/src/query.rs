//! The hierarchical queries: collision, distance and tolerance.

use nalgebra::{Isometry3, Matrix3, Point3, Vector3};

use crate::model::{Model, Node};
use crate::ProximityError;
use crate::{obb, rss, triangle};

type V = Vector3<f64>;

/// Number of slots of the closest-pair cache of a [`QueryWorkspace`].
pub const PAIR_CACHE_SLOTS: usize = 64;

/// One slot of the closest-pair cache: model ids and the leaf pair found last time.
#[derive(Clone, Copy, Debug)]
struct CacheSlot {
    ids: (u64, u64),
    leaves: (u32, u32),
}

/// Reusable traversal state: stacks and a small cache of the last closest triangle pair per
/// model pair (the initial guess of the next distance query).
///
/// Memory is bounded: the cache is a direct-mapped table of [`PAIR_CACHE_SLOTS`] slots
/// (allocated once, on the first distance query), indexed by a hash of the two model ids;
/// a pair whose slot is taken by another pair simply starts without a guess (the answer is
/// the same, only the traversal may be a little longer). The stacks grow to the deepest
/// traversal seen and are then reused. Once both have reached their size, queries do not
/// allocate, except the pair list of [`CollisionMode::AllContacts`] results.
///
/// One workspace per thread; it can be shared by any number of model pairs.
#[derive(Default, Debug)]
pub struct QueryWorkspace {
    pair_stack: Vec<(u32, u32)>,
    dist_stack: Vec<(u32, u32, f64)>,
    last_pair: Vec<Option<CacheSlot>>,
    bv_tests: usize,
    triangle_tests: usize,
}

#[inline(always)]
fn cache_slot(ids: (u64, u64)) -> usize {
    let h = ids
        .0
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add(ids.1.wrapping_mul(0xC2B2_AE3D_27D4_EB4F));
    (h >> 58) as usize % PAIR_CACHE_SLOTS
}

impl QueryWorkspace {
    /// A new, empty workspace.
    pub fn new() -> QueryWorkspace {
        QueryWorkspace::default()
    }

    /// `(bounding-volume tests, triangle tests)` of the last query run with this workspace.
    pub fn last_counts(&self) -> (usize, usize) {
        (self.bv_tests, self.triangle_tests)
    }

    /// Forgets the cached closest triangle pairs.
    pub fn clear_cache(&mut self) {
        self.last_pair.iter_mut().for_each(|s| *s = None);
    }

    /// Number of model pairs currently holding a cached closest pair (at most
    /// [`PAIR_CACHE_SLOTS`]).
    pub fn cached_pairs(&self) -> usize {
        self.last_pair.iter().filter(|s| s.is_some()).count()
    }

    fn cached(&self, ids: (u64, u64)) -> Option<(u32, u32)> {
        match self.last_pair.get(cache_slot(ids)) {
            Some(Some(slot)) if slot.ids == ids => Some(slot.leaves),
            _ => None,
        }
    }

    fn remember(&mut self, ids: (u64, u64), leaves: (u32, u32)) {
        if self.last_pair.is_empty() {
            self.last_pair = vec![None; PAIR_CACHE_SLOTS];
        }
        self.last_pair[cache_slot(ids)] = Some(CacheSlot { ids, leaves });
    }
}

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
    fn transformed(mut self, pose: &Isometry3<f64>) -> Self {
        self.point_a = pose * self.point_a;
        self.point_b = pose * self.point_b;
        self
    }
}

/// Result of a tolerance query.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ToleranceResult {
    /// Is the distance strictly below the tolerance?
    pub closer_than: bool,
    /// When closer: a triangle pair closer than the tolerance, with its distance and points
    /// (not necessarily the closest pair).
    pub witness: Option<DistanceResult>,
}

/// Are all seven numbers of the pose finite? (O(1).)
#[inline(always)]
pub fn pose_is_finite(pose: &Isometry3<f64>) -> bool {
    pose.translation.vector.iter().all(|x| x.is_finite())
        && pose.rotation.coords.iter().all(|x| x.is_finite())
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

/// Relative pose as a rotation matrix and a translation.
#[inline]
pub(crate) fn split(b_in_a: &Isometry3<f64>) -> (Matrix3<f64>, V) {
    (
        b_in_a.rotation.to_rotation_matrix().into_inner(),
        b_in_a.translation.vector,
    )
}

/// Maps a point of b's frame into a's frame (shared with the brute-force oracle so both see
/// bit-identical triangles).
#[inline(always)]
pub(crate) fn xf(r: &Matrix3<f64>, t: &V, p: &Point3<f64>) -> Point3<f64> {
    Point3::from(r * p.coords + t)
}

#[inline(always)]
fn relative(na: &Node, nb: &Node, r: &Matrix3<f64>, t: &V) -> (Matrix3<f64>, V) {
    let rat = na.rot.transpose();
    (rat * (r * nb.rot), rat * (r * nb.center + t - na.center))
}

#[inline(always)]
fn descend_a(na: &Node, nb: &Node) -> bool {
    nb.is_leaf() || (!na.is_leaf() && na.size >= nb.size)
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
    stack.push((0, 0));
    'outer: while let Some((ia, ib)) = stack.pop() {
        let na = &a.nodes[ia as usize];
        let nb = &b.nodes[ib as usize];
        bv_tests += 1;
        let (rr, tt) = relative(na, nb, r, t);
        if obb::disjoint(&rr, &tt, &na.half, &nb.half) {
            continue;
        }
        if na.is_leaf() && nb.is_leaf() {
            for ka in na.tri..na.tri + na.count {
                let ta = &a.leaf_tris[ka as usize];
                for kb in nb.tri..nb.tri + nb.count {
                    tri_tests += 1;
                    let tb = b.leaf_tris[kb as usize].map(|p| xf(r, t, &p));
                    if triangle::overlap(ta, &tb) {
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
        if descend_a(na, nb) {
            stack.push((na.right, ib));
            stack.push((ia + 1, ib));
        } else {
            stack.push((ia, nb.right));
            stack.push((ia, ib + 1));
        }
    }
    ws.bv_tests = bv_tests;
    ws.triangle_tests = tri_tests;
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
    if !pose_is_finite(b_in_a) {
        ws.bv_tests = 0;
        ws.triangle_tests = 0;
        return CollisionResult {
            colliding: true,
            invalid_pose: true,
            ..CollisionResult::default()
        };
    }
    let (r, t) = split(b_in_a);
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
        bv_tests: ws.bv_tests,
        triangle_tests: ws.triangle_tests,
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
    if !pose_is_finite(b_in_a) {
        ws.bv_tests = 0;
        ws.triangle_tests = 0;
        return true;
    }
    let (r, t) = split(b_in_a);
    collide_impl(&r, &t, a, b, false, None, ws)
}

/// Lower bound of the distance between two nodes.
#[inline(always)]
fn node_lb(a: &Model, ia: u32, b: &Model, ib: u32, r: &Matrix3<f64>, t: &V, prune: f64) -> f64 {
    rss::node_distance(a, ia, b, ib, r, t, prune)
}

struct Best {
    d: f64,
    have: bool,
    pa: Point3<f64>,
    pb: Point3<f64>,
    la: u32,
    lb: u32,
}

#[inline(always)]
fn leaf_pair(a: &Model, b: &Model, la: u32, lb: u32, r: &Matrix3<f64>, t: &V, best: &mut Best) {
    let ta = &a.leaf_tris[la as usize];
    let tb = b.leaf_tris[lb as usize].map(|p| xf(r, t, &p));
    let (d, p, q) = triangle::distance(ta, &tb);
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
fn distance_impl(
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
    let key = (a.id, b.id);
    if let Some((la, lb)) = ws.cached(key) {
        tri_tests += 1;
        leaf_pair(a, b, la, lb, r, t, &mut best);
    }
    if !(stop_on_first && best.have) {
        let stack = &mut ws.dist_stack;
        stack.clear();
        bv_tests += 1;
        // The pruning threshold, refreshed whenever `best` improves.
        let mut thr = threshold(&best);
        let d0 = node_lb(a, 0, b, 0, r, t, thr);
        if d0 < thr {
            stack.push((0, 0, d0));
        }
        while let Some((ia, ib, lbound)) = stack.pop() {
            if lbound >= thr {
                continue;
            }
            let na = &a.nodes[ia as usize];
            let nb = &b.nodes[ib as usize];
            if na.is_leaf() && nb.is_leaf() {
                for ka in na.tri..na.tri + na.count {
                    for kb in nb.tri..nb.tri + nb.count {
                        tri_tests += 1;
                        leaf_pair(a, b, ka, kb, r, t, &mut best);
                    }
                }
                if stop_on_first && best.have {
                    break;
                }
                thr = threshold(&best);
                continue;
            }
            let (c1, c2) = if descend_a(na, nb) {
                ((ia + 1, ib), (na.right, ib))
            } else {
                ((ia, ib + 1), (ia, nb.right))
            };
            let (d1, d2) = if rss::BOUND == rss::Bound::Obb {
                // Share the half of the relative transform common to both children.
                if c1.1 == ib {
                    let mb = r * nb.rot;
                    let cb = r * nb.center + t;
                    let lb = |k: u32| {
                        let nk = &a.nodes[k as usize];
                        let rkt = nk.rot.transpose();
                        obb::gap_pruned(
                            &(rkt * mb),
                            &(rkt * (cb - nk.center)),
                            &nk.half,
                            &nb.half,
                            thr,
                        )
                    };
                    (lb(c1.0), lb(c2.0))
                } else {
                    let rat = na.rot.transpose();
                    let p = rat * r;
                    let q = rat * (t - na.center);
                    let lb = |k: u32| {
                        let nk = &b.nodes[k as usize];
                        obb::gap_pruned(
                            &(p * nk.rot),
                            &(p * nk.center + q),
                            &na.half,
                            &nk.half,
                            thr,
                        )
                    };
                    (lb(c1.1), lb(c2.1))
                }
            } else {
                (
                    node_lb(a, c1.0, b, c1.1, r, t, thr),
                    node_lb(a, c2.0, b, c2.1, r, t, thr),
                )
            };
            bv_tests += 2;
            // push the farther first so the nearer is visited first
            let (near, dn, far, df) = if d1 <= d2 {
                (c1, d1, c2, d2)
            } else {
                (c2, d2, c1, d1)
            };
            if df < thr {
                stack.push((far.0, far.1, df));
            }
            if dn < thr {
                stack.push((near.0, near.1, dn));
            }
        }
    }
    ws.bv_tests = bv_tests;
    ws.triangle_tests = tri_tests;
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
    if !pose_is_finite(b_in_a) {
        ws.bv_tests = 0;
        ws.triangle_tests = 0;
        return Some(invalid_distance());
    }
    let (r, t) = split(b_in_a);
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

/// Tolerance query with `b`'s pose given in `a`'s frame: is the distance `< tolerance`?
pub fn tolerance_local(
    b_in_a: &Isometry3<f64>,
    a: &Model,
    b: &Model,
    tolerance: f64,
    ws: &mut QueryWorkspace,
) -> ToleranceResult {
    if !pose_is_finite(b_in_a) {
        ws.bv_tests = 0;
        ws.triangle_tests = 0;
        return ToleranceResult {
            closer_than: true,
            witness: None,
        };
    }
    let (r, t) = split(b_in_a);
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

/// A valid lower bound of the distance between two posed models from their root bounding
/// volumes (O(1)); 0 when the roots overlap.
pub fn distance_lower_bound(
    pose_a: &Isometry3<f64>,
    a: &Model,
    pose_b: &Isometry3<f64>,
    b: &Model,
) -> f64 {
    let rel = pose_a.inv_mul(pose_b);
    if !pose_is_finite(&rel) {
        return 0.0;
    }
    let (r, t) = split(&rel);
    let na = &a.nodes[0];
    let nb = &b.nodes[0];
    let (rr, tt) = relative(na, nb, &r, &t);
    // 15 separating axes + the centre direction on the root boxes
    obb::gap(&rr, &tt, &na.half, &nb.half)
}

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
