//! Lower bounds of the distance between a node's two children and another box, both children
//! at once.
//!
//! The distance traversal splits one node of a pair and bounds the distance of each child to
//! the other node. [`ChildBoxes`] keeps the two children's boxes of every internal node side
//! by side (each number as a pair, one per child), so that one pass of arithmetic computes both
//! bounds and the compiler can run the two in the two lanes of a vector register. The bound
//! is the one of [`crate::obb::gap_pruned`]: in each box's axes, the Euclidean gap to the box
//! enclosing the other; and the gap along the centre-to-centre direction.

// The lane loops index several arrays by the same lane on purpose (the shape the compiler
// vectorizes); iterators would hide that.
#![allow(clippy::needless_range_loop)]

use nalgebra::{Matrix3, Vector3};

use crate::model::NodeBox;
use crate::obb;

type V = Vector3<f64>;
/// One number per child.
type L = [f64; 2];

/// Relative rounding slack of the bounds (they must never exceed the true distance).
const SHRINK: f64 = 1.0 - 1e-12;
/// Absolute padding of the `|r|` entries: rounding on nearly parallel axes never hides a
/// contact.
const ABS_EPS: f64 = 1e-12;

/// The boxes of an internal node's two children (left = lane 0, right = lane 1).
#[derive(Clone, Copy, Debug)]
pub(crate) struct ChildBoxes {
    /// `rot[m][i]`: entry `(m, i)` of each child's box rotation (column `i` = axis `i`).
    rot: [[L; 3]; 3],
    /// Box centres.
    center: [L; 3],
    /// Half extents.
    half: [L; 3],
}

impl ChildBoxes {
    /// No boxes (all zeros), to be filled by [`ChildBoxes::set`].
    pub const ZERO: ChildBoxes = ChildBoxes {
        rot: [[[0.0; 2]; 3]; 3],
        center: [[0.0; 2]; 3],
        half: [[0.0; 2]; 3],
    };

    /// Stores `b` as the box of lane `l` (0 = left child, 1 = right child).
    #[inline(always)]
    pub fn set(&mut self, l: usize, b: &NodeBox) {
        for m in 0..3 {
            for i in 0..3 {
                self.rot[m][i][l] = b.rot[(m, i)];
            }
            self.center[m][l] = b.center[m];
            self.half[m][l] = b.half[m];
        }
    }

    /// The box of lane `l`.
    #[inline(always)]
    pub fn get(&self, l: usize) -> NodeBox {
        let r = &self.rot;
        NodeBox {
            rot: Matrix3::new(
                r[0][0][l], r[0][1][l], r[0][2][l], r[1][0][l], r[1][1][l], r[1][2][l], r[2][0][l],
                r[2][1][l], r[2][2][l],
            ),
            center: V::new(self.center[0][l], self.center[1][l], self.center[2][l]),
            half: V::new(self.half[0][l], self.half[1][l], self.half[2][l]),
        }
    }

    /// Bounds of the two children (in the model frame of `a`) against a box of the other model
    /// placed in that frame: axes `m` (columns), centre `c`, half extents `h`.
    #[inline(always)]
    pub fn against_placed(&self, m: &Matrix3<f64>, c: &V, h: &V) -> L {
        let (mut rr, mut tt, mut tb) = Default::default();
        self.placed(m, c, &mut rr, &mut tt, &mut tb);
        let hb = [[h[0]; 2], [h[1]; 2], [h[2]; 2]];
        gaps(&rr, &tt, &tb, &self.half, &hb)
    }

    /// Are the two children (in the model frame of `a`) disjoint from a box of the other model
    /// placed in that frame (axes `m`, centre `c`, half extents `h`)? The exact
    /// separating-axis test of [`crate::obb::disjoint`], per child.
    #[inline(always)]
    pub fn disjoint_placed(&self, m: &Matrix3<f64>, c: &V, h: &V) -> [bool; 2] {
        let (mut rr, mut tt, mut tb) = Default::default();
        self.placed(m, c, &mut rr, &mut tt, &mut tb);
        let sep = |l: usize| {
            let (r, t) = lane_pose(&rr, &tt, l);
            obb::disjoint(&r, &t, &lane_vec(&self.half, l), h)
        };
        [sep(0), sep(1)]
    }

    /// Are the two children disjoint from a box `a` (half extents `ha`), given as in
    /// [`ChildBoxes::seen_from`]? The exact separating-axis test, per child.
    #[inline(always)]
    pub fn disjoint_seen_from(&self, p: &Matrix3<f64>, q: &V, ha: &V) -> [bool; 2] {
        let (mut rr, mut tt, mut tb) = Default::default();
        self.seen(p, q, &V::zeros(), &mut rr, &mut tt, &mut tb);
        let sep = |l: usize| {
            let (r, t) = lane_pose(&rr, &tt, l);
            obb::disjoint(&r, &t, ha, &lane_vec(&self.half, l))
        };
        [sep(0), sep(1)]
    }

    /// The placed box in each child's axes: rotation, centre offset, and the offset in the
    /// placed box's axes.
    #[inline(always)]
    fn placed(
        &self,
        m: &Matrix3<f64>,
        c: &V,
        rr: &mut [[L; 3]; 3],
        tt: &mut [L; 3],
        tb: &mut [L; 3],
    ) {
        let mut d = [[0.0; 2]; 3];
        for k in 0..3 {
            for l in 0..2 {
                d[k][l] = c[k] - self.center[k][l];
            }
        }
        for i in 0..3 {
            for j in 0..3 {
                for l in 0..2 {
                    rr[i][j][l] = self.rot[0][i][l] * m[(0, j)]
                        + self.rot[1][i][l] * m[(1, j)]
                        + self.rot[2][i][l] * m[(2, j)];
                }
            }
            for l in 0..2 {
                tt[i][l] = self.rot[0][i][l] * d[0][l]
                    + self.rot[1][i][l] * d[1][l]
                    + self.rot[2][i][l] * d[2][l];
                // the centre offset in the placed box's axes: m^T (c - centre)
                tb[i][l] = m[(0, i)] * d[0][l] + m[(1, i)] * d[1][l] + m[(2, i)] * d[2][l];
            }
        }
    }

    /// Bounds of a box `a` (half extents `ha`) against the two children, given as the
    /// rotation `p` and offset `q` that map the children's model frame into `a`'s box axes,
    /// and `cb`, the centre of `a` in the children's model frame.
    #[inline(always)]
    pub fn seen_from(&self, p: &Matrix3<f64>, q: &V, cb: &V, ha: &V) -> L {
        let (mut rr, mut tt, mut tb) = Default::default();
        self.seen(p, q, cb, &mut rr, &mut tt, &mut tb);
        let hav = [[ha[0]; 2], [ha[1]; 2], [ha[2]; 2]];
        gaps(&rr, &tt, &tb, &hav, &self.half)
    }

    /// Each child in the axes of box `a` (see [`ChildBoxes::seen_from`]): rotation, centre
    /// offset, and a's centre offset in the child's axes.
    #[inline(always)]
    fn seen(
        &self,
        p: &Matrix3<f64>,
        q: &V,
        cb: &V,
        rr: &mut [[L; 3]; 3],
        tt: &mut [L; 3],
        tb: &mut [L; 3],
    ) {
        let mut d = [[0.0; 2]; 3];
        for k in 0..3 {
            for l in 0..2 {
                d[k][l] = cb[k] - self.center[k][l];
            }
        }
        for i in 0..3 {
            for j in 0..3 {
                for l in 0..2 {
                    rr[i][j][l] = p[(i, 0)] * self.rot[0][j][l]
                        + p[(i, 1)] * self.rot[1][j][l]
                        + p[(i, 2)] * self.rot[2][j][l];
                }
            }
            for l in 0..2 {
                // the child's centre in a's axes, relative to a's centre
                tt[i][l] = p[(i, 0)] * self.center[0][l]
                    + p[(i, 1)] * self.center[1][l]
                    + p[(i, 2)] * self.center[2][l]
                    + q[i];
                // a's centre relative to the child's, in the child's axes (sign is irrelevant)
                tb[i][l] = self.rot[0][i][l] * d[0][l]
                    + self.rot[1][i][l] * d[1][l]
                    + self.rot[2][i][l] * d[2][l];
            }
        }
    }
}

/// Lane `l` of a rotation and an offset.
#[inline(always)]
fn lane_pose(rr: &[[L; 3]; 3], tt: &[L; 3], l: usize) -> (Matrix3<f64>, V) {
    (Matrix3::from_fn(|i, j| rr[i][j][l]), lane_vec(tt, l))
}

/// Lane `l` of a vector.
#[inline(always)]
fn lane_vec(v: &[L; 3], l: usize) -> V {
    V::new(v[0][l], v[1][l], v[2][l])
}

/// The bound for two lanes. `rr[i][j]`: rotation of box b in a's axes; `tt`: b's centre
/// offset in a's axes; `tb`: the offset in b's axes (up to sign); `a`, `b`: half extents.
#[inline(always)]
fn gaps(rr: &[[L; 3]; 3], tt: &[L; 3], tb: &[L; 3], a: &[L; 3], b: &[L; 3]) -> L {
    let mut out = [0.0; 2];
    for (l, o) in out.iter_mut().enumerate() {
        let ar = |i: usize, j: usize| rr[i][j][l].abs() + ABS_EPS;
        let (a00, a01, a02) = (ar(0, 0), ar(0, 1), ar(0, 2));
        let (a10, a11, a12) = (ar(1, 0), ar(1, 1), ar(1, 2));
        let (a20, a21, a22) = (ar(2, 0), ar(2, 1), ar(2, 2));
        let (b0, b1, b2) = (b[0][l], b[1][l], b[2][l]);
        let (h0, h1, h2) = (a[0][l], a[1][l], a[2][l]);
        let (t0, t1, t2) = (tt[0][l].abs(), tt[1][l].abs(), tt[2][l].abs());
        let (u0, u1, u2) = (tb[0][l].abs(), tb[1][l].abs(), tb[2][l].abs());
        let g0 = (t0 - h0 - (b0 * a00 + b1 * a01 + b2 * a02)).max(0.0);
        let g1 = (t1 - h1 - (b0 * a10 + b1 * a11 + b2 * a12)).max(0.0);
        let g2 = (t2 - h2 - (b0 * a20 + b1 * a21 + b2 * a22)).max(0.0);
        let sa = g0 * g0 + g1 * g1 + g2 * g2;
        let k0 = (u0 - b0 - (h0 * a00 + h1 * a10 + h2 * a20)).max(0.0);
        let k1 = (u1 - b1 - (h0 * a01 + h1 * a11 + h2 * a21)).max(0.0);
        let k2 = (u2 - b2 - (h0 * a02 + h1 * a12 + h2 * a22)).max(0.0);
        let sb = k0 * k0 + k1 * k1 + k2 * k2;
        let faces = sa.max(sb).sqrt();
        // centre direction d = t / |t|: gap = |t| - sum a_i |d_i| - sum b_j |(r^T d)_j|
        let tn2 = t0 * t0 + t1 * t1 + t2 * t2;
        let s = tn2 - (h0 * t0 + h1 * t1 + h2 * t2) - (b0 * u0 + b1 * u1 + b2 * u2);
        let centre = if s > 0.0 { s / tn2.sqrt() } else { 0.0 };
        *o = faces.max(centre) * SHRINK;
    }
    out
}
