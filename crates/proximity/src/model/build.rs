//! Top-down construction of the bounding-volume hierarchy.
//!
//! A node of up to [`FACE_FRAME_MAX`] triangles takes the frame of [`face_frame`] (the largest
//! triangle's normal and the edge giving the smallest box); larger nodes the principal axes of
//! their corners.
//! The corners of every triangle are copied once into one array; the recursion partitions
//! an array of triangle indices. Each internal node makes one pass over its triangles that
//! projects their corners on the node's axes (no per-vertex bookkeeping, no branches) and
//! partitions them without branches. The long dependency chains of the box frames (the
//! principal axes of the two children of a node, the frames of the one-triangle leaves,
//! which are fitted after the recursion) are computed several side by side so that they
//! overlap. Every value is computed with the same operations in the same order as the
//! straightforward scalar code, so the hierarchy is the same to the bit.

use nalgebra::{Matrix3, Point3, Vector3};

use super::{store_box, Node, NodeBox, LEAF_SIZE};
use crate::obb::{
    grow_max, grow_min, orthonormal_basis, orthonormal_basis_lanes, principal_axes,
    principal_axes_lanes, FIT_SLACK,
};
use crate::query::ChildBoxes;

type V = Vector3<f64>;

/// What the build hands to [`super::Model`].
pub(super) struct Hierarchy {
    /// The nodes, depth first (left child next to its parent).
    pub nodes: Vec<Node>,
    /// Every node's box: the root's in entry 0 (lane 0), then the children's boxes of each
    /// internal node, in node order (`Node::tri` points here).
    pub boxes: Vec<ChildBoxes>,
    /// Triangle corners in leaf order.
    pub leaf_tris: Vec<[Point3<f64>; 3]>,
    /// For each leaf-ordered triangle, its index in the triangle list given to [`build`].
    pub order: Vec<u32>,
    /// Axis-aligned box of all corners, `(min, max)`.
    pub aabb: (V, V),
}

/// Per-triangle moments (computed once per triangle, summed at every level).
#[derive(Clone, Copy)]
struct BuildTri {
    /// Sum of the three corners (three times the centroid).
    sum: V,
    /// Upper triangle of the sum of outer products of the three vertices: xx, xy, xz, yy, yz, zz.
    outer: [f64; 6],
}

impl BuildTri {
    #[inline(always)]
    fn of(c: &[Point3<f64>; 3]) -> BuildTri {
        let mut outer = [0.0; 6];
        let mut sum = V::zeros();
        for p in c {
            let v = p.coords;
            sum += v;
            outer[0] += v.x * v.x;
            outer[1] += v.x * v.y;
            outer[2] += v.x * v.z;
            outer[3] += v.y * v.y;
            outer[4] += v.y * v.z;
            outer[5] += v.z * v.z;
        }
        BuildTri { sum, outer }
    }

    /// Just the sum (the same additions as in [`BuildTri::of`]).
    #[inline(always)]
    fn sum(c: &[Point3<f64>; 3]) -> V {
        let mut sum = V::zeros();
        for p in c {
            sum += p.coords;
        }
        sum
    }
}

/// Sums of the corners and of their outer products over a set of triangles: what the
/// covariance of the set's vertices is computed from.
#[derive(Clone, Copy)]
struct Moments {
    count: usize,
    sum: V,
    outer: [f64; 6],
}

impl Moments {
    const ZERO: Moments = Moments {
        count: 0,
        sum: V::new(0.0, 0.0, 0.0),
        outer: [0.0; 6],
    };

    /// The moments of the set `self` without its subset `part`.
    fn minus(&self, part: &Moments) -> Moments {
        let mut outer = self.outer;
        for (o, x) in outer.iter_mut().zip(&part.outer) {
            *o -= x;
        }
        Moments {
            count: self.count - part.count,
            sum: self.sum - part.sum,
            outer,
        }
    }

    #[inline(always)]
    fn add(&mut self, d: &BuildTri) {
        self.count += 1;
        self.sum += d.sum;
        for (o, x) in self.outer.iter_mut().zip(&d.outer) {
            *o += x;
        }
    }

    fn of(tm: &[BuildTri], ids: &[u32]) -> Moments {
        let mut m = Moments::ZERO;
        for &i in ids {
            m.add(&tm[i as usize]);
        }
        m
    }

    /// Principal axes of the vertices' covariance.
    fn axes(&self) -> Matrix3<f64> {
        principal_axes(&self.covariance())
    }

    /// The principal axes of two sets (computed side by side, see [`principal_axes_lanes`]).
    fn axes2(a: &Moments, b: &Moments) -> [Matrix3<f64>; 2] {
        principal_axes_lanes(&[a.covariance(), b.covariance()])
    }

    /// Covariance of the vertices.
    fn covariance(&self) -> Matrix3<f64> {
        let n = 3.0 * self.count as f64;
        let m = self.sum / n;
        let o = &self.outer;
        Matrix3::new(
            o[0] / n - m.x * m.x,
            o[1] / n - m.x * m.y,
            o[2] / n - m.x * m.z,
            o[1] / n - m.y * m.x,
            o[3] / n - m.y * m.y,
            o[4] / n - m.y * m.z,
            o[2] / n - m.z * m.x,
            o[4] / n - m.z * m.y,
            o[5] / n - m.z * m.z,
        )
    }
}

/// What the recursion appends to.
struct Out {
    nodes: Vec<Node>,
    /// The one-triangle leaves, in leaf order (their boxes are fitted after the recursion).
    leaves: Vec<u32>,
    /// The boxes (see [`Hierarchy::boxes`]).
    boxes: Vec<ChildBoxes>,
}

/// The hierarchy of `triangles` (all used), with the leaf order of the triangles and the
/// axis-aligned box of their corners.
pub(super) fn build(vertices: &[Point3<f64>], triangles: &[[u32; 3]]) -> Hierarchy {
    let n = triangles.len();
    let corners: Vec<[Point3<f64>; 3]> = triangles
        .iter()
        .map(|t| {
            [
                vertices[t[0] as usize],
                vertices[t[1] as usize],
                vertices[t[2] as usize],
            ]
        })
        .collect();
    let mut order: Vec<u32> = (0..n as u32).collect();
    let tm: Vec<BuildTri> = corners.iter().map(BuildTri::of).collect();
    let all = Moments::of(&tm, &order);
    let mut out = Out {
        nodes: Vec::with_capacity(2 * n - 1),
        leaves: Vec::with_capacity(n),
        boxes: Vec::with_capacity(n),
    };
    // (entry 0: the root's box)
    out.boxes.push(ChildBoxes::ZERO);
    let rot = if n > 1 {
        all.axes()
    } else {
        Matrix3::identity()
    };
    let aabb = build_node(&corners, &tm, &mut order, 0, all, rot, 0, &mut out);
    drop(tm);
    // The corners in leaf order, gathered again from the vertices into the same array (no
    // second array: less memory to map in).
    let mut leaf_tris = corners;
    for (c, &k) in leaf_tris.iter_mut().zip(&order) {
        *c = triangles[k as usize].map(|v| vertices[v as usize]);
    }
    let (mut nodes, mut boxes) = (out.nodes, out.boxes);
    fit_leaves(&mut nodes, &mut boxes, &out.leaves, &leaf_tris);
    Hierarchy {
        nodes,
        boxes,
        leaf_tris,
        order,
        aabb,
    }
}

/// The box frame of a one-triangle leaf: first axis along its longest edge, third along its
/// normal.
fn triangle_frame(t: &[Point3<f64>; 3]) -> Matrix3<f64> {
    let e = [t[1] - t[0], t[2] - t[1], t[0] - t[2]];
    let k = (0..3)
        .max_by(|&i, &j| e[i].norm_squared().total_cmp(&e[j].norm_squared()))
        .unwrap_or(0);
    let n = e[0].cross(&e[1]);
    let e1 = n.cross(&e[k]);
    orthonormal_basis(&e[k], &e1)
}

/// Nodes of up to this many triangles take the frame of [`face_frame`] instead of principal
/// axes.
const FACE_FRAME_MAX: usize = 2;

/// The box frame of a small node (triangles `ids`): third axis along the normal of its
/// largest triangle, first along whichever of that triangle's edges gives the smallest
/// rectangle around the corners in the plane (cheaper than the principal axes and, on meshes,
/// tighter: the triangles of a small node are mostly neighbours on one face).
fn face_frame(tris: &[[Point3<f64>; 3]], ids: &[u32]) -> Matrix3<f64> {
    let normal = |t: &[Point3<f64>; 3]| (t[1] - t[0]).cross(&(t[2] - t[0]));
    let mut t = &tris[ids[0] as usize];
    let mut n = normal(t);
    for &i in &ids[1..] {
        let m = normal(&tris[i as usize]);
        if m.norm_squared() > n.norm_squared() {
            (t, n) = (&tris[i as usize], m);
        }
    }
    // The rectangle of the corners in the plane, along edge `e` and `n x e` (neither
    // normalised: the area is the product of the two spans over |e|^2 |n|, and |n| is common;
    // the extent along the normal is the same for the three frames).
    // (the three candidates in one pass over the corners: the same numbers as one pass
    // per candidate)
    let e: [V; 3] = std::array::from_fn(|k| t[(k + 1) % 3] - t[k]);
    let w: [V; 3] = std::array::from_fn(|k| n.cross(&e[k]));
    let (mut lo, mut hi) = ([[f64::INFINITY; 2]; 3], [[f64::NEG_INFINITY; 2]; 3]);
    for &i in ids {
        for p in &tris[i as usize] {
            for k in 0..3 {
                let v = [e[k].dot(&p.coords), w[k].dot(&p.coords)];
                for i in 0..2 {
                    lo[k][i] = if v[i] < lo[k][i] { v[i] } else { lo[k][i] };
                    hi[k][i] = if v[i] > hi[k][i] { v[i] } else { hi[k][i] };
                }
            }
        }
    }
    let mut best = (f64::INFINITY, 0);
    for k in 0..3 {
        let area = (hi[k][0] - lo[k][0]) * (hi[k][1] - lo[k][1]) / e[k].norm_squared();
        if area < best.0 {
            best = (area, k);
        }
    }
    let (e, w) = (e[best.1], w[best.1]);
    // (w is perpendicular to e already: no Gram-Schmidt step unless a norm is tiny)
    let (ne, nw) = (e.norm(), w.norm());
    if ne > 1e-150 && nw > 1e-150 && (ne + nw).is_finite() {
        let (u, v) = (e / ne, w / nw);
        Matrix3::from_columns(&[u, v, u.cross(&v)])
    } else {
        orthonormal_basis(&e, &w)
    }
}

/// How many leaf frames [`triangle_frames`] computes side by side.
const LANES: usize = 4;

/// [`triangle_frame`] of `LANES` triangles side by side: the same operations in the same
/// order (so the same frames to the bit), interleaved so that the long chains of square roots
/// and divisions of one triangle overlap those of the others. `None` for a triangle that
/// takes one of [`orthonormal_basis`]'s special cases: [`triangle_frame`] handles it.
fn triangle_frames(ts: &[[Point3<f64>; 3]]) -> [Option<Matrix3<f64>>; LANES] {
    let mut ok = [true; LANES];
    let mut u = [V::zeros(); LANES];
    let mut v = [V::zeros(); LANES];
    for (l, t) in ts.iter().enumerate().take(LANES) {
        let e = [t[1] - t[0], t[2] - t[1], t[0] - t[2]];
        let n2 = e.map(|e| e.norm_squared());
        ok[l] = n2.iter().all(|x| x.is_finite());
        // the last of the longest, as `max_by` picks it
        let k01 = if n2[1] >= n2[0] { 1 } else { 0 };
        let k = if n2[2] >= n2[k01] { 2 } else { k01 };
        u[l] = e[k];
        v[l] = e[0].cross(&e[1]).cross(&e[k]);
    }
    let b = orthonormal_basis_lanes(&u, &v);
    std::array::from_fn(|l| if ok[l] { b[l] } else { None })
}

/// Fits the boxes of the one-triangle leaves `leaves` (node indices; `tris` are the
/// triangles in leaf order).
fn fit_leaves(
    nodes: &mut [Node],
    boxes: &mut [ChildBoxes],
    leaves: &[u32],
    tris: &[[Point3<f64>; 3]],
) {
    let mut fit = |node: &mut Node, rot: &Matrix3<f64>| {
        let fitted = fit_node(rot, std::iter::once(&tris[node.tri as usize]));
        node.size = store_box(boxes, node.bx, &fitted);
    };
    let mut chunks = leaves.chunks_exact(LANES);
    for chunk in chunks.by_ref() {
        let ts: [[Point3<f64>; 3]; LANES] =
            std::array::from_fn(|l| tris[nodes[chunk[l] as usize].tri as usize]);
        let frames = triangle_frames(&ts);
        for ((&k, t), frame) in chunk.iter().zip(&ts).zip(frames) {
            let rot = frame.unwrap_or_else(|| triangle_frame(t));
            fit(&mut nodes[k as usize], &rot);
        }
    }
    for &k in chunks.remainder() {
        let node = &mut nodes[k as usize];
        let rot = triangle_frame(&tris[node.tri as usize]);
        fit(node, &rot);
    }
}

/// Builds the subtree of the triangles `ids` (whose moments are `moments`, whose principal
/// axes are `rot` if there are several, whose first triangle has leaf position `offset` and
/// whose root's box goes to slot `bx`, see [`Node::bx`]) and returns its axis-aligned box:
/// one pass over the triangles fits the node's box to their corners in its axes and splits
/// them at the mean of their centroids along the major axis.
#[allow(clippy::too_many_arguments)]
fn build_node(
    tris: &[[Point3<f64>; 3]],
    tm: &[BuildTri],
    ids: &mut [u32],
    offset: usize,
    moments: Moments,
    rot: Matrix3<f64>,
    bx: u32,
    out: &mut Out,
) -> (V, V) {
    let me = out.nodes.len();
    let len = ids.len();
    if len <= LEAF_SIZE {
        let mut lo = V::repeat(f64::INFINITY);
        let mut hi = V::repeat(f64::NEG_INFINITY);
        for &i in ids.iter() {
            for p in &tris[i as usize] {
                grow_min(&mut lo, &p.coords);
                grow_max(&mut hi, &p.coords);
            }
        }
        let mut size = 0.0;
        if len == 1 {
            // (its box is fitted later, with the other leaves': see `fit_leaves`)
            out.leaves.push(me as u32);
        } else {
            let mut b = fit_node(&rot, ids.iter().map(|&i| &tris[i as usize]));
            prefer_aabb(&mut b, lo, hi);
            size = store_box(&mut out.boxes, bx, &b);
        }
        out.nodes.push(Node {
            size,
            right: 0,
            tri: offset as u32,
            count: len as u32,
            bx,
        });
        return (lo, hi);
    }
    // Split along the major axis at the mean of the centroids (three times both sides).
    let axis = rot.column(0).into_owned();
    let mean3 = axis.dot(&moments.sum) / len as f64;
    let (lo, hi, mut left) = scan(tris, ids, &rot, mean3);
    let mut own = box_node(&rot, lo, hi);
    let pair = out.boxes.len() as u32;
    out.boxes.push(ChildBoxes::ZERO);
    out.nodes.push(Node {
        size: 0.0,
        right: 0,
        tri: pair,
        count: 0,
        bx,
    });
    if left == 0 || left == len {
        left = len / 2;
        ids.select_nth_unstable_by(left, |&a, &b| {
            let key = |i: u32| BuildTri::sum(&tris[i as usize]).dot(&axis);
            key(a).total_cmp(&key(b))
        });
    }
    // The smaller part's moments are summed, the other's are the rest.
    let (ml, mr) = if 2 * left <= len {
        let ml = Moments::of(tm, &ids[..left]);
        (ml, moments.minus(&ml))
    } else {
        let mr = Moments::of(tm, &ids[left..]);
        (moments.minus(&mr), mr)
    };
    // The children's axes (needed by those with more than one triangle), side by side when
    // both need them.
    // A child of at most `FACE_FRAME_MAX` triangles gets the frame of `face_frame` instead
    // (no eigen-solve; on the RX60 links, three triangles would need more box and triangle
    // tests in the distance queries).
    let (l, r) = ids.split_at_mut(left);
    let small = |ids: &[u32]| {
        if ids.len() > 1 {
            face_frame(tris, ids)
        } else {
            Matrix3::identity()
        }
    };
    let (lrot, rrot) = match (left > FACE_FRAME_MAX, len - left > FACE_FRAME_MAX) {
        (true, true) => {
            let [a, b] = Moments::axes2(&ml, &mr);
            (a, b)
        }
        (true, false) => (ml.axes(), small(r)),
        (false, true) => (small(l), mr.axes()),
        (false, false) => (small(l), small(r)),
    };
    let (llo, lhi) = build_node(tris, tm, l, offset, ml, lrot, 2 * pair, out);
    let right = out.nodes.len() as u32;
    let (rlo, rhi) = build_node(tris, tm, r, offset + left, mr, rrot, 2 * pair + 1, out);
    // The subtree's axis-aligned box, from the children's: often tighter than the PCA box
    // for CAD-like meshes; keep the smaller volume.
    let (lo, hi) = (llo.inf(&rlo), lhi.sup(&rhi));
    prefer_aabb(&mut own, lo, hi);
    let node = &mut out.nodes[me];
    node.right = right;
    node.size = store_box(&mut out.boxes, bx, &own);
    (lo, hi)
}

/// The pass over an internal node's triangles: fits the box with axes `rot` to their
/// corners (`(lo, hi)` along its axes) and moves those whose centroid lies below the mean
/// (`mean3`, three times the mean projection on `axis`) to the front, in the order they
/// come (the rest in the order a Lomuto partition leaves them). Returns the box and the
/// length of the front part.
fn scan(
    tris: &[[Point3<f64>; 3]],
    ids: &mut [u32],
    rot: &Matrix3<f64>,
    mean3: f64,
) -> (V, V, usize) {
    // `rt * p` as nalgebra evaluates it, `(c0 p.x + c1 p.y) + c2 p.z` with `c_j` the rows of
    // `rot`, on four lanes (the fourth unused) so that the compiler keeps it in vector
    // registers: the boxes are the same to the bit as with `rt * p`.
    let row = |j: usize| [rot[(j, 0)], rot[(j, 1)], rot[(j, 2)], 0.0];
    let r: [[f64; 4]; 3] = [row(0), row(1), row(2)];
    let mut lo = [f64::INFINITY; 4];
    let mut hi = [f64::NEG_INFINITY; 4];
    // The split is a Lomuto partition (the left part keeps its order) without branches: the
    // swap is done by selects, so the compiler emits no jump that the processor could
    // mispredict on these coin flips, and the partition's chain of dependent loads and stores
    // overlaps the projections.
    let mut left = 0;
    for k in 0..ids.len() {
        let x = ids[k];
        let t = &tris[x as usize];
        // (the centroid's projection on the split axis, three times: the sum of the corners'
        // projections on the first axis)
        let mut c3 = 0.0;
        for p in t {
            let mut l = [0.0; 4];
            for i in 0..4 {
                l[i] = (r[0][i] * p.x + r[1][i] * p.y) + r[2][i] * p.z;
            }
            for i in 0..4 {
                lo[i] = if l[i] < lo[i] { l[i] } else { lo[i] };
                hi[i] = if l[i] > hi[i] { l[i] } else { hi[i] };
            }
            c3 += l[0];
        }
        let y = ids[left];
        let go = c3 < mean3;
        ids[k] = if go { y } else { x };
        ids[left] = if go { x } else { y };
        left += go as usize;
    }
    (
        V::new(lo[0], lo[1], lo[2]),
        V::new(hi[0], hi[1], hi[2]),
        left,
    )
}

/// Replaces the box by the axis-aligned box `lo..hi` if that has a smaller volume.
fn prefer_aabb(node: &mut NodeBox, lo: V, hi: V) {
    let mid = (lo + hi) * 0.5;
    let slack = FIT_SLACK * ((hi - lo).amax() + mid.amax());
    let half = (hi - lo) * 0.5 + V::repeat(slack);
    if half.x * half.y * half.z < node.half.x * node.half.y * node.half.z {
        node.rot = Matrix3::identity();
        node.center = mid;
        node.half = half;
    }
}

/// Fits the OBB with axes `rot` to the triangles `corners`.
fn fit_node<'a>(
    rot: &Matrix3<f64>,
    corners: impl Iterator<Item = &'a [Point3<f64>; 3]>,
) -> NodeBox {
    let rt = rot.transpose();
    let mut lo = V::repeat(f64::INFINITY);
    let mut hi = V::repeat(f64::NEG_INFINITY);
    for t in corners {
        for p in t {
            let l = rt * p.coords;
            grow_min(&mut lo, &l);
            grow_max(&mut hi, &l);
        }
    }
    box_node(rot, lo, hi)
}

/// The box with axes `rot` that spans `lo..hi` along them (a little slack added).
pub(super) fn box_node(rot: &Matrix3<f64>, lo: V, hi: V) -> NodeBox {
    let mid = (lo + hi) * 0.5;
    let slack = FIT_SLACK * ((hi - lo).amax() + mid.amax());
    let half = (hi - lo) * 0.5 + V::repeat(slack);
    NodeBox {
        rot: *rot,
        center: rot * mid,
        half,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::obb::test_rng as rng;

    fn bits(m: &Matrix3<f64>) -> Vec<u64> {
        m.iter().map(|x| x.to_bits()).collect()
    }

    /// Random triangles and the awkward ones: repeated corners, collinear, tiny, huge (the
    /// edge lengths overflow), ties between edge lengths, zeros of both signs.
    fn triangles() -> Vec<[Point3<f64>; 3]> {
        let mut r = rng(0x9e37_79b9_7f4a_7c15);
        let mut v: Vec<[Point3<f64>; 3]> = (0..400)
            .map(|_| [0; 3].map(|_| Point3::new(r() - 0.5, r() - 0.5, r() - 0.5)))
            .collect();
        let p = Point3::new(0.3, -0.2, 0.1);
        let q = Point3::new(1.0, 2.0, 3.0);
        v.extend([
            [p, p, p],
            [p, p, q],
            [p, q, Point3::from(p.coords * 2.0 - q.coords)],
            [p, q, Point3::from((p.coords + q.coords) * 0.5)],
            [
                Point3::origin(),
                Point3::new(1e-200, 0.0, 0.0),
                Point3::new(0.0, 1e-200, 0.0),
            ],
            [
                Point3::new(-1e300, 0.0, 0.0),
                Point3::new(1e300, 0.0, 0.0),
                Point3::new(0.0, 1e300, 0.0),
            ],
            [
                Point3::origin(),
                Point3::new(1.0, 0.0, 0.0),
                Point3::new(0.5, 3f64.sqrt() / 2.0, 0.0),
            ],
            [
                Point3::new(-0.0, 0.0, -0.0),
                Point3::new(0.0, -1.0, 0.0),
                Point3::new(1.0, 0.0, -0.0),
            ],
        ]);
        v
    }

    #[test]
    fn leaf_frames_side_by_side_are_the_scalar_frames() {
        let ts = triangles();
        let mut special = 0;
        for w in ts.windows(LANES) {
            let frames = triangle_frames(w);
            for (t, f) in w.iter().zip(frames) {
                match f {
                    Some(f) => assert_eq!(bits(&f), bits(&triangle_frame(t)), "{t:?}"),
                    None => special += 1,
                }
            }
        }
        assert!(special > 0, "the special cases were not exercised");
    }

    /// The principal axes of a random covariance-like matrix: a random frame.
    fn random_frame(r: &mut impl FnMut() -> f64) -> Matrix3<f64> {
        let mut x = || r();
        principal_axes(&Matrix3::new(
            1.0 + x(),
            x(),
            x(),
            x(),
            2.0 + x(),
            x(),
            x(),
            x(),
            0.5 + x(),
        ))
    }

    #[test]
    fn face_frame_fits_a_split_rectangle_tightly() {
        let mut r = rng(11);
        for _ in 0..50 {
            // a w x h rectangle in a random plane, split along a diagonal
            let rot = random_frame(&mut r);
            let (w, h) = (0.1 + r(), 0.1 + r());
            let o = V::new(r(), r(), r());
            let p = |x: f64, y: f64| Point3::from(o + rot * V::new(x, y, 0.0));
            let (a, b) = (
                [p(0.0, 0.0), p(w, 0.0), p(w, h)],
                [p(0.0, 0.0), p(w, h), p(0.0, h)],
            );
            let f = face_frame(&[a, b], &[0, 1]);
            assert!((f.transpose() * f - Matrix3::identity()).norm() < 1e-12);
            assert!((f.determinant() - 1.0).abs() < 1e-12);
            let fitted = fit_node(&f, [&a, &b].into_iter());
            let area = 4.0 * fitted.half.x * fitted.half.y;
            assert!((area - w * h).abs() < 1e-9 * w * h, "{area} vs {}", w * h);
            assert!(fitted.half.z < 1e-9);
        }
    }

    #[test]
    fn branch_free_scan_is_the_lomuto_partition() {
        let mut r = rng(7);
        let tris: Vec<[Point3<f64>; 3]> = (0..300)
            .map(|_| [0; 3].map(|_| Point3::new(r(), r(), (r() * 4.0).floor())))
            .collect();
        for trial in 0..20 {
            let rot = random_frame(&mut r);
            // (each axis of the frame in turn the first, the split axis)
            let k = trial % 3;
            let rot = Matrix3::from_columns(&[
                rot.column(k).into_owned(),
                rot.column((k + 1) % 3).into_owned(),
                rot.column((k + 2) % 3).into_owned(),
            ]);
            let axis = rot.column(0).into_owned();
            let mut ids: Vec<u32> = (0..tris.len() as u32).filter(|_| r() < 0.7).collect();
            let key = |i: u32| {
                tris[i as usize].iter().fold(0.0, |c, p| {
                    c + ((axis.x * p.x + axis.y * p.y) + axis.z * p.z)
                })
            };
            let mean3 = ids.iter().map(|&i| key(i)).sum::<f64>() / ids.len() as f64;
            // the reference: a Lomuto partition with branches, and the box of `fit_node`
            let mut want = ids.clone();
            let mut left = 0;
            for k in 0..want.len() {
                if key(want[k]) < mean3 {
                    want.swap(k, left);
                    left += 1;
                }
            }
            let fitted = fit_node(&rot, ids.iter().map(|&i| &tris[i as usize]));
            let (lo, hi, got_left) = scan(&tris, &mut ids, &rot, mean3);
            assert_eq!((got_left, &ids), (left, &want));
            let node = box_node(&rot, lo, hi);
            assert_eq!(
                (node.center.map(f64::to_bits), node.half.map(f64::to_bits)),
                (
                    fitted.center.map(f64::to_bits),
                    fitted.half.map(f64::to_bits)
                )
            );
        }
    }
}
