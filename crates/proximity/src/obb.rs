//! Oriented bounding boxes: fitting, the exact separating-axis overlap test and a box-box
//! distance lower bound.

use nalgebra::{Isometry3, Matrix3, Point3, Rotation3, SymmetricEigen, Vector3};

type V = Vector3<f64>;

/// An oriented bounding box: `center + axes * [-h, h]` for `h = half_extents`.
///
/// The columns of `axes` are the box's edge directions, expressed in the frame the box lives in.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Obb {
    /// Centre of the box.
    pub center: Point3<f64>,
    /// Orientation: column `i` is the direction of the box's `i`-th edge.
    pub axes: Rotation3<f64>,
    /// Half edge lengths along each column of `axes` (non-negative).
    pub half_extents: Vector3<f64>,
}

/// Tiny relative inflation applied to fitted boxes so that rounding never makes them miss a
/// vertex (the queries rely on the boxes being conservative).
pub(crate) const FIT_SLACK: f64 = 1e-12;

impl Obb {
    /// A box fitted to points: principal axes of the points' covariance, or the coordinate
    /// axes when that gives a smaller volume. `None` for no points or non-finite points.
    pub fn from_points(points: &[Point3<f64>]) -> Option<Obb> {
        if points.is_empty()
            || points
                .iter()
                .any(|p| !p.coords.iter().all(|x| x.is_finite()))
        {
            return None;
        }
        let n = points.len() as f64;
        let mean = points.iter().fold(V::zeros(), |s, p| s + p.coords) / n;
        let mut cov = Matrix3::zeros();
        for p in points {
            let d = p.coords - mean;
            cov += d * d.transpose();
        }
        let pca = principal_axes(&(cov / n));
        let a = fit_box(&pca, points.iter().map(|p| p.coords));
        let b = fit_box(&Matrix3::identity(), points.iter().map(|p| p.coords));
        Some(if volume(&b) <= volume(&a) { b } else { a })
    }

    /// The same box after a rigid motion.
    pub fn transformed(&self, pose: &Isometry3<f64>) -> Obb {
        Obb {
            center: pose * self.center,
            axes: pose.rotation.to_rotation_matrix() * self.axes,
            half_extents: self.half_extents,
        }
    }

    /// Exact separating-axis overlap test (15 axes); touching counts as overlapping.
    /// Both boxes must be expressed in the same frame.
    pub fn intersects(&self, other: &Obb) -> bool {
        let (r, t) = self.relative(other);
        !disjoint(&r, &t, &self.half_extents, &other.half_extents)
    }

    /// A lower bound of the distance between the two boxes (0 when they overlap): the largest
    /// gap between their projections on the 15 separating-axis candidates.
    pub fn distance_lower_bound(&self, other: &Obb) -> f64 {
        let (r, t) = self.relative(other);
        gap(&r, &t, &self.half_extents, &other.half_extents)
    }

    /// The eight corners.
    pub fn corners(&self) -> [Point3<f64>; 8] {
        let m = self.axes.matrix();
        let h = self.half_extents;
        let mut out = [self.center; 8];
        for (k, c) in out.iter_mut().enumerate() {
            let s = V::new(
                if k & 1 == 0 { -h.x } else { h.x },
                if k & 2 == 0 { -h.y } else { h.y },
                if k & 4 == 0 { -h.z } else { h.z },
            );
            *c = self.center + m * s;
        }
        out
    }

    /// Does the box contain the point (boundary included)?
    pub fn contains(&self, p: &Point3<f64>) -> bool {
        let l = self.axes.matrix().transpose() * (p - self.center);
        (0..3).all(|i| l[i].abs() <= self.half_extents[i])
    }

    fn relative(&self, other: &Obb) -> (Matrix3<f64>, V) {
        let at = self.axes.matrix().transpose();
        (at * other.axes.matrix(), at * (other.center - self.center))
    }
}

/// Component-wise `lo = min(lo, p)` (plain comparisons: much cheaper than nalgebra's `inf`).
#[inline(always)]
pub(crate) fn grow_min(lo: &mut V, p: &V) {
    if p.x < lo.x {
        lo.x = p.x;
    }
    if p.y < lo.y {
        lo.y = p.y;
    }
    if p.z < lo.z {
        lo.z = p.z;
    }
}

/// Component-wise `hi = max(hi, p)`.
#[inline(always)]
pub(crate) fn grow_max(hi: &mut V, p: &V) {
    if p.x > hi.x {
        hi.x = p.x;
    }
    if p.y > hi.y {
        hi.y = p.y;
    }
    if p.z > hi.z {
        hi.z = p.z;
    }
}

fn volume(b: &Obb) -> f64 {
    b.half_extents.x * b.half_extents.y * b.half_extents.z
}

/// Fits a box with the given axes (columns, orthonormal) to points.
pub(crate) fn fit_box(axes: &Matrix3<f64>, points: impl Iterator<Item = V>) -> Obb {
    let at = axes.transpose();
    let mut lo = V::repeat(f64::INFINITY);
    let mut hi = V::repeat(f64::NEG_INFINITY);
    for p in points {
        let l = at * p;
        grow_min(&mut lo, &l);
        grow_max(&mut hi, &l);
    }
    let mid = (lo + hi) * 0.5;
    let scale = (hi - lo).amax() + mid.amax();
    let half = (hi - lo) * 0.5 + V::repeat(FIT_SLACK * scale);
    Obb {
        center: Point3::from(axes * mid),
        axes: Rotation3::from_matrix_unchecked(*axes),
        half_extents: half,
    }
}

/// Orthonormal right-handed eigenvector basis of a symmetric 3x3 matrix, columns sorted by
/// decreasing eigenvalue. Falls back to the identity on numerical failure.
pub(crate) fn principal_axes(cov: &Matrix3<f64>) -> Matrix3<f64> {
    let a = cov;
    let p1 = a[(0, 1)] * a[(0, 1)] + a[(0, 2)] * a[(0, 2)] + a[(1, 2)] * a[(1, 2)];
    let q = (a[(0, 0)] + a[(1, 1)] + a[(2, 2)]) / 3.0;
    let d0 = a[(0, 0)] - q;
    let d1 = a[(1, 1)] - q;
    let d2 = a[(2, 2)] - q;
    let p2 = d0 * d0 + d1 * d1 + d2 * d2 + 2.0 * p1;
    let p = (p2 / 6.0).sqrt();
    if p.is_nan() || p <= 1e-300 || p1 <= 1e-30 * p2 {
        // (nearly) diagonal or isotropic: the Jacobi solver handles it robustly
        return principal_axes_jacobi(cov);
    }
    // Closed-form eigenvalues (trigonometric method), largest and smallest: the eigenvalues
    // are q + p β for the roots β = 2 cos(φ + 2πk/3), φ = acos(r) / 3, of β³ - 3β - 2r
    // (r = det(b) / 2, b = (a - q I) / p). One `acos` and one `sin_cos`, no iteration; the
    // box fit accepts any orthonormal frame, so a root a little off only costs tightness.
    let b = (a - Matrix3::from_diagonal_element(q)) / p;
    let r = (b.determinant() * 0.5).clamp(-1.0, 1.0);
    let (s, c) = sin_cos_third_acos(r);
    // cos(φ + 2π/3) = -cos φ / 2 - sin φ √3/2 (the smallest root)
    let l_max = q + p * 2.0 * c;
    let l_min = q + p * (-c - 3f64.sqrt() * s);
    let (Some(v_max), Some(v_min)) = (null_vector(a, l_max), null_vector(a, l_min)) else {
        return principal_axes_jacobi(cov);
    };
    let mid = v_min.cross(&v_max);
    orthonormal_basis(&v_max, &mid)
}

/// `(sin φ, cos φ)` for `φ = acos(r) / 3`, `r` in `[-1, 1]`: `cos φ` is the largest root of
/// `4 c³ - 3 c = r` (the triple-angle formula), found by Newton's method from a quadratic
/// fit (four steps: the root is simple and at least 0.62 for `r >= -0.9`, where the fit is
/// within 0.02 of it); `sin φ = √((1 - cos φ)(1 + cos φ))` (`φ` is in `[0, π/3]`). Near
/// `r = -1` the root becomes double: there (and for NaN) `acos` and `sin_cos` are used.
/// Within 3e-16 (cosine) and 1e-13 (sine) of the trigonometric functions, at a fraction of
/// their cost (both are ill-conditioned at `r = ±1`, where two eigenvalues meet).
#[inline(always)]
fn sin_cos_third_acos(r: f64) -> (f64, f64) {
    if r.is_nan() || r < -0.9 {
        return (r.acos() / 3.0).sin_cos();
    }
    let mut c = 0.866 + r * (0.205 - 0.071 * r);
    for _ in 0..4 {
        let c2 = c * c;
        c -= ((4.0 * c2 - 3.0) * c - r) / (12.0 * c2 - 3.0);
    }
    let c = c.min(1.0);
    (((1.0 - c) * (1.0 + c)).sqrt(), c)
}

/// [`principal_axes`] of `L` matrices side by side: the same operations in the same order
/// (so the same axes to the bit), interleaved so that the long dependency chain of one matrix
/// (square roots, divisions, `acos`, `sin_cos`) overlaps those of the others. A matrix that
/// takes one of the fallback paths is handed to [`principal_axes`].
pub(crate) fn principal_axes_lanes<const L: usize>(cov: &[Matrix3<f64>; L]) -> [Matrix3<f64>; L] {
    let mut ok = [true; L];
    let mut q = [0.0; L];
    let mut p = [0.0; L];
    let mut r = [0.0; L];
    for l in 0..L {
        let a = &cov[l];
        let p1 = a[(0, 1)] * a[(0, 1)] + a[(0, 2)] * a[(0, 2)] + a[(1, 2)] * a[(1, 2)];
        q[l] = (a[(0, 0)] + a[(1, 1)] + a[(2, 2)]) / 3.0;
        let d0 = a[(0, 0)] - q[l];
        let d1 = a[(1, 1)] - q[l];
        let d2 = a[(2, 2)] - q[l];
        let p2 = d0 * d0 + d1 * d1 + d2 * d2 + 2.0 * p1;
        p[l] = (p2 / 6.0).sqrt();
        ok[l] = !(p[l].is_nan() || p[l] <= 1e-300 || p1 <= 1e-30 * p2);
        // b = (a - q I) / p and its determinant, as nalgebra computes it
        let b = |i: usize, j: usize| (a[(i, j)] - if i == j { q[l] } else { 0.0 }) / p[l];
        let det = b(0, 0) * (b(1, 1) * b(2, 2) - b(2, 1) * b(1, 2))
            - b(0, 1) * (b(1, 0) * b(2, 2) - b(2, 0) * b(1, 2))
            + b(0, 2) * (b(1, 0) * b(2, 1) - b(2, 0) * b(1, 1));
        r[l] = (det * 0.5).clamp(-1.0, 1.0);
    }
    let mut l_max = [0.0; L];
    let mut l_min = [0.0; L];
    for l in 0..L {
        let (s, c) = sin_cos_third_acos(r[l]);
        l_max[l] = q[l] + p[l] * 2.0 * c;
        l_min[l] = q[l] + p[l] * (-c - 3f64.sqrt() * s);
    }
    let v_max = null_vector_lanes(cov, &l_max, &mut ok);
    let v_min = null_vector_lanes(cov, &l_min, &mut ok);
    let mid: [V; L] = std::array::from_fn(|l| v_min[l].cross(&v_max[l]));
    let basis = orthonormal_basis_lanes(&v_max, &mid);
    std::array::from_fn(|l| match (ok[l], basis[l]) {
        (true, Some(m)) => m,
        _ => principal_axes(&cov[l]),
    })
}

/// [`null_vector`] of `a[l] - l[l] I` for each lane; clears `ok[l]` where it has none.
fn null_vector_lanes<const L: usize>(
    a: &[Matrix3<f64>; L],
    ls: &[f64; L],
    ok: &mut [bool; L],
) -> [V; L] {
    let mut out = [V::zeros(); L];
    for l in 0..L {
        let (v, found) = null_vector_candidate(&a[l], ls[l]);
        ok[l] &= found;
        out[l] = v;
    }
    out
}

/// [`orthonormal_basis`] of `L` vector pairs side by side (the same operations in the same
/// order, so the same bases to the bit); `None` for a pair that takes one of its special
/// cases (a zero `u`, a `v` along `u`, non-finite numbers).
pub(crate) fn orthonormal_basis_lanes<const L: usize>(
    u: &[V; L],
    v: &[V; L],
) -> [Option<Matrix3<f64>>; L] {
    // nalgebra's `norm` and `dot`, spelled out in its order
    let norm = |a: &[[f64; L]; 3], l: usize| {
        (0.0 + ((a[0][l] * a[0][l] + a[1][l] * a[1][l]) + a[2][l] * a[2][l])).sqrt()
    };
    let mut ok = [true; L];
    let mut uu = [[0.0; L]; 3];
    let mut vv = [[0.0; L]; 3];
    for l in 0..L {
        for j in 0..3 {
            uu[j][l] = u[l][j];
            vv[j][l] = v[l][j];
        }
    }
    let mut e0 = [[0.0; L]; 3];
    for l in 0..L {
        let n = norm(&uu, l);
        ok[l] &= n > 1e-300;
        for j in 0..3 {
            e0[j][l] = uu[j][l] / n;
        }
    }
    let mut w = [[0.0; L]; 3];
    for l in 0..L {
        let d = (e0[0][l] * vv[0][l] + e0[1][l] * vv[1][l]) + e0[2][l] * vv[2][l];
        for j in 0..3 {
            w[j][l] = vv[j][l] - e0[j][l] * d;
        }
    }
    let mut e1 = [[0.0; L]; 3];
    for l in 0..L {
        let n = norm(&w, l);
        ok[l] &= n > 1e-150;
        for j in 0..3 {
            e1[j][l] = w[j][l] / n;
        }
    }
    std::array::from_fn(|l| {
        let a = V::new(e0[0][l], e0[1][l], e0[2][l]);
        let b = V::new(e1[0][l], e1[1][l], e1[2][l]);
        let c = a.cross(&b);
        (ok[l] && (a.sum() + b.sum() + c.sum()).is_finite())
            .then(|| Matrix3::from_columns(&[a, b, c]))
    })
}

/// A unit vector in the null space of `a - l I` (largest cross product of two rows).
fn null_vector(a: &Matrix3<f64>, l: f64) -> Option<V> {
    let (v, found) = null_vector_candidate(a, l);
    found.then_some(v)
}

/// [`null_vector`]'s candidate (the normalised largest cross product of two rows of
/// `a - l I`) and whether it is one (that cross product is not negligible).
#[inline(always)]
fn null_vector_candidate(a: &Matrix3<f64>, l: f64) -> (V, bool) {
    let m = a - Matrix3::from_diagonal_element(l);
    let r0 = m.row(0).transpose();
    let r1 = m.row(1).transpose();
    let r2 = m.row(2).transpose();
    let c = [r0.cross(&r1), r0.cross(&r2), r1.cross(&r2)];
    let n = [
        c[0].norm_squared(),
        c[1].norm_squared(),
        c[2].norm_squared(),
    ];
    let k = if n[0] >= n[1] && n[0] >= n[2] {
        0
    } else if n[1] >= n[2] {
        1
    } else {
        2
    };
    let scale = m.norm_squared();
    (c[k] / n[k].sqrt(), n[k] > 1e-20 * scale * scale)
}

fn principal_axes_jacobi(cov: &Matrix3<f64>) -> Matrix3<f64> {
    let (vals, vecs) = jacobi_eigen(cov);
    let mut idx = [0usize, 1, 2];
    idx.sort_by(|&i, &j| vals[j].total_cmp(&vals[i]));
    let e0 = vecs.column(idx[0]).into_owned();
    let e1 = vecs.column(idx[1]).into_owned();
    orthonormal_basis(&e0, &e1)
}

/// Cyclic Jacobi eigen-decomposition of a symmetric 3x3 matrix: (eigenvalues, eigenvectors
/// as columns). A few sweeps suffice for box fitting; falls back to nalgebra on non-convergence.
fn jacobi_eigen(m: &Matrix3<f64>) -> ([f64; 3], Matrix3<f64>) {
    let mut a = *m;
    let mut v = Matrix3::<f64>::identity();
    for _sweep in 0..8 {
        let off = a[(0, 1)].abs() + a[(0, 2)].abs() + a[(1, 2)].abs();
        let diag = a[(0, 0)].abs() + a[(1, 1)].abs() + a[(2, 2)].abs();
        if off <= 1e-10 * diag || off == 0.0 {
            return ([a[(0, 0)], a[(1, 1)], a[(2, 2)]], v);
        }
        for (p, q) in [(0usize, 1usize), (0, 2), (1, 2)] {
            let apq = a[(p, q)];
            if apq == 0.0 {
                continue;
            }
            let theta = (a[(q, q)] - a[(p, p)]) / (2.0 * apq);
            let sgn = if theta >= 0.0 { 1.0 } else { -1.0 };
            let t = sgn / (theta.abs() + (theta * theta + 1.0).sqrt());
            let c = 1.0 / (t * t + 1.0).sqrt();
            let s = t * c;
            // A <- J^T A J with the rotation in the (p, q) plane
            for k in 0..3 {
                let akp = a[(k, p)];
                let akq = a[(k, q)];
                a[(k, p)] = c * akp - s * akq;
                a[(k, q)] = s * akp + c * akq;
            }
            for k in 0..3 {
                let apk = a[(p, k)];
                let aqk = a[(q, k)];
                a[(p, k)] = c * apk - s * aqk;
                a[(q, k)] = s * apk + c * aqk;
            }
            for k in 0..3 {
                let vkp = v[(k, p)];
                let vkq = v[(k, q)];
                v[(k, p)] = c * vkp - s * vkq;
                v[(k, q)] = s * vkp + c * vkq;
            }
        }
    }
    let eig = SymmetricEigen::new(*m);
    (
        [eig.eigenvalues[0], eig.eigenvalues[1], eig.eigenvalues[2]],
        eig.eigenvectors,
    )
}

/// Right-handed orthonormal basis whose first column is along `u` and second in the `u, v` plane.
pub(crate) fn orthonormal_basis(u: &V, v: &V) -> Matrix3<f64> {
    let Some(e0) = u.try_normalize(1e-300) else {
        return Matrix3::identity();
    };
    let w = v - e0 * e0.dot(v);
    let e1 = match w.try_normalize(1e-150) {
        Some(e1) => e1,
        None => {
            // any perpendicular
            let helper = if e0.x.abs() < 0.6 { V::x() } else { V::y() };
            (helper - e0 * e0.dot(&helper)).normalize()
        }
    };
    let e2 = e0.cross(&e1);
    // NaN and infinities propagate through the sum.
    if !(e0.sum() + e1.sum() + e2.sum()).is_finite() {
        return Matrix3::identity();
    }
    Matrix3::from_columns(&[e0, e1, e2])
}

/// `|r| + 1e-12` entry by entry: the absolute rotation the separating-axis tests use, padded
/// so that rounding on nearly parallel edges never hides a contact.
#[inline(always)]
fn abs_eps(r: &Matrix3<f64>) -> [[f64; 3]; 3] {
    const EPS: f64 = 1e-12;
    let mut ar = [[0.0; 3]; 3];
    for (i, row) in ar.iter_mut().enumerate() {
        for (j, x) in row.iter_mut().enumerate() {
            *x = r[(i, j)].abs() + EPS;
        }
    }
    ar
}

/// Projection on the edge-edge axis `a_i x b_j` (not normalised) of the centre offset and of
/// the two boxes: `(|t . axis|, radius of a, radius of b)`; same arguments as [`disjoint`],
/// `ar` from [`abs_eps`].
#[inline(always)]
fn edge_axis(
    r: &Matrix3<f64>,
    ar: &[[f64; 3]; 3],
    t: &V,
    a: &V,
    b: &V,
    i: usize,
    j: usize,
) -> (f64, f64, f64) {
    let (i1, i2) = ((i + 1) % 3, (i + 2) % 3);
    let (j1, j2) = ((j + 1) % 3, (j + 2) % 3);
    (
        (t[i2] * r[(i1, j)] - t[i1] * r[(i2, j)]).abs(),
        a[i1] * ar[i2][j] + a[i2] * ar[i1][j],
        b[j1] * ar[i][j2] + b[j2] * ar[i][j1],
    )
}

/// Box-box separation test. `r` is the rotation of box b in a's axes, `t` the centre of b in
/// a's axes relative to a's centre, `a`, `b` the half extents. Touching is not disjoint.
#[inline(always)]
pub(crate) fn disjoint(r: &Matrix3<f64>, t: &V, a: &V, b: &V) -> bool {
    let ar = abs_eps(r);
    // a's face axes
    for i in 0..3 {
        let rb = b[0] * ar[i][0] + b[1] * ar[i][1] + b[2] * ar[i][2];
        if t[i].abs() > a[i] + rb {
            return true;
        }
    }
    // b's face axes
    for j in 0..3 {
        let tj = t[0] * r[(0, j)] + t[1] * r[(1, j)] + t[2] * r[(2, j)];
        let ra = a[0] * ar[0][j] + a[1] * ar[1][j] + a[2] * ar[2][j];
        if tj.abs() > ra + b[j] {
            return true;
        }
    }
    // edge-edge axes a_i x b_j
    for i in 0..3 {
        for j in 0..3 {
            let (tl, ra, rb) = edge_axis(r, &ar, t, a, b, i, j);
            if tl > ra + rb {
                return true;
            }
        }
    }
    false
}

/// Largest normalised projection gap over the 15 box-box axes: a lower bound of the distance
/// between the boxes (same arguments as [`disjoint`]); 0 when no axis separates them.
#[inline(always)]
pub(crate) fn gap(r: &Matrix3<f64>, t: &V, a: &V, b: &V) -> f64 {
    let ar = abs_eps(r);
    let mut best: f64 = 0.0;
    for i in 0..3 {
        let rb = b[0] * ar[i][0] + b[1] * ar[i][1] + b[2] * ar[i][2];
        best = best.max(t[i].abs() - a[i] - rb);
    }
    for j in 0..3 {
        let tj = t[0] * r[(0, j)] + t[1] * r[(1, j)] + t[2] * r[(2, j)];
        let ra = a[0] * ar[0][j] + a[1] * ar[1][j] + a[2] * ar[2][j];
        best = best.max(tj.abs() - ra - b[j]);
    }
    for i in 0..3 {
        let (i1, i2) = ((i + 1) % 3, (i + 2) % 3);
        for j in 0..3 {
            let (tl, ra, rb) = edge_axis(r, &ar, t, a, b, i, j);
            let g = tl - ra - rb;
            if g > best {
                // |a_i x b_j| = sqrt(r_i1j^2 + r_i2j^2); dividing by a slightly larger norm
                // keeps the bound valid.
                let n2 = r[(i1, j)] * r[(i1, j)] + r[(i2, j)] * r[(i2, j)];
                if n2 > 1e-12 {
                    best = best.max(g / (n2.sqrt() * (1.0 + 1e-12)));
                }
            }
        }
    }
    // The centre-to-centre direction: tight when the boxes are far apart.
    let tn2 = t.norm_squared();
    if tn2 > 0.0 {
        let tn = tn2.sqrt();
        let d = t / tn;
        let ra = a[0] * d[0].abs() + a[1] * d[1].abs() + a[2] * d[2].abs();
        let db = r.tr_mul(&d);
        let rb = b[0] * db[0].abs() + b[1] * db[1].abs() + b[2] * db[2].abs();
        best = best.max((tn - ra - rb) * (1.0 - 1e-12));
    }
    best
}

/// A cheaper lower bound than [`gap`] for the distance traversal, stopping as soon as the
/// bound reaches `prune` (then returning some value `>= prune`).
///
/// In each box's axes the other box is enclosed in the box aligned with those axes (its
/// projections on them): the exact distance between the first box and that enclosing box
/// (the Euclidean norm of the three face-axis gaps) is a lower bound, tighter than the largest
/// single gap when the boxes are apart along a diagonal. The larger of the two, and the gap
/// along the centre-to-centre direction, is returned.
#[inline(always)]
pub(crate) fn gap_pruned(r: &Matrix3<f64>, t: &V, a: &V, b: &V, prune: f64) -> f64 {
    const SHRINK: f64 = 1.0 - 1e-12;
    let ar = abs_eps(r);
    let mut sa = 0.0;
    for i in 0..3 {
        let rb = b[0] * ar[i][0] + b[1] * ar[i][1] + b[2] * ar[i][2];
        let g = (t[i].abs() - a[i] - rb).max(0.0);
        sa += g * g;
    }
    let tb = r.tr_mul(t); // centre of b's offset in b's axes
    let mut sb = 0.0;
    for j in 0..3 {
        let ra = a[0] * ar[0][j] + a[1] * ar[1][j] + a[2] * ar[2][j];
        let g = (tb[j].abs() - ra - b[j]).max(0.0);
        sb += g * g;
    }
    let mut best = sa.max(sb).sqrt() * SHRINK;
    if best >= prune {
        return best;
    }
    // centre direction d = t / |t|: gap = |t| - sum a_i |d_i| - sum b_j |(r^T d)_j|
    let tn2 = t.norm_squared();
    if tn2 > 0.0 {
        let s = tn2
            - (a[0] * t[0].abs() + a[1] * t[1].abs() + a[2] * t[2].abs())
            - (b[0] * tb[0].abs() + b[1] * tb[1].abs() + b[2] * tb[2].abs());
        if s > 0.0 {
            let g = s / tn2.sqrt() * SHRINK;
            if g > best {
                best = g;
            }
        }
    }
    best
}

/// A small deterministic xorshift generator of numbers in `[0, 1)`, for tests.
#[cfg(test)]
pub(crate) fn test_rng(mut s: u64) -> impl FnMut() -> f64 {
    move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::{Translation3, UnitQuaternion};

    fn unit_box(center: Point3<f64>) -> Obb {
        Obb {
            center,
            axes: Rotation3::identity(),
            half_extents: V::new(0.5, 0.5, 0.5),
        }
    }

    #[test]
    fn axis_aligned_boxes() {
        let a = unit_box(Point3::origin());
        let b = unit_box(Point3::new(1.0, 0.0, 0.0));
        assert!(a.intersects(&b)); // touching faces
        let c = unit_box(Point3::new(3.0, 0.0, 0.0));
        assert!(!a.intersects(&c));
        assert!((a.distance_lower_bound(&c) - 2.0).abs() < 1e-9);
        assert_eq!(a.distance_lower_bound(&b), 0.0);
    }

    /// Are the corner sets of two boxes separated along `axis`?
    fn separated_along(axis: &V, a: &Obb, b: &Obb) -> bool {
        let proj = |o: &Obb| {
            let c = o.corners().map(|p| p.coords.dot(axis));
            let lo = c.iter().cloned().fold(f64::INFINITY, f64::min);
            let hi = c.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            (lo, hi)
        };
        let ((alo, ahi), (blo, bhi)) = (proj(a), proj(b));
        ahi < blo || bhi < alo
    }

    /// A unit cube rotated 45 degrees about y (top edge along y) and one rotated 45 degrees
    /// about x (bottom edge along x) above it, the two edges crossing at a gap `g`,
    /// expressed in the frame of the first cube.
    fn crossing_edges(g: f64) -> (Obb, Obb) {
        use std::f64::consts::{FRAC_PI_4, SQRT_2};
        let wa = Isometry3::from_parts(
            Translation3::identity(),
            UnitQuaternion::from_euler_angles(0.0, FRAC_PI_4, 0.0),
        );
        let wb = Isometry3::from_parts(
            Translation3::new(0.0, 0.0, SQRT_2 + g),
            UnitQuaternion::from_euler_angles(FRAC_PI_4, 0.0, 0.0),
        );
        let b_in_a = wa.inv_mul(&wb);
        (
            unit_box(Point3::origin()),
            unit_box(Point3::origin()).transformed(&b_in_a),
        )
    }

    #[test]
    fn rotated_edge_axis_separation() {
        for g in [0.05, 1e-3] {
            let (a, b) = crossing_edges(g);
            // none of the six face axes separates the boxes ...
            let faces = [a.axes.matrix(), b.axes.matrix()];
            for m in faces {
                for k in 0..3 {
                    let axis = m.column(k).into_owned();
                    assert!(!separated_along(&axis, &a, &b), "g {g}: face axis {k}");
                }
            }
            // ... but an edge-edge axis does, and the test finds it
            let mut edge_sep = false;
            for i in 0..3 {
                for j in 0..3 {
                    let axis = a.axes.matrix().column(i).cross(&b.axes.matrix().column(j));
                    if axis.norm() > 1e-9 && separated_along(&axis, &a, &b) {
                        edge_sep = true;
                    }
                }
            }
            assert!(edge_sep, "g {g}");
            assert!(!a.intersects(&b) && !b.intersects(&a), "g {g}");
            // the bound is valid: the two edges are exactly g apart
            let lb = a.distance_lower_bound(&b);
            assert!((0.0..=g * (1.0 + 1e-9)).contains(&lb), "g {g}: lb {lb}");
        }
        // crossing edges that interpenetrate: overlapping
        let (a, b) = crossing_edges(-0.05);
        assert!(a.intersects(&b) && b.intersects(&a));
        assert_eq!(a.distance_lower_bound(&b), 0.0);
    }

    #[test]
    fn gap_pruned_is_valid_and_prunes() {
        let mut rnd = test_rng(0x2545_f491_4f6c_dd1d);
        let mut positive = 0;
        for _ in 0..2000 {
            let a = V::new(rnd(), rnd(), rnd()) * 0.5 + V::repeat(0.01);
            let b = V::new(rnd(), rnd(), rnd()) * 0.5 + V::repeat(0.01);
            let rot = UnitQuaternion::from_scaled_axis(
                V::new(rnd(), rnd(), rnd()) * 6.0 - V::repeat(3.0),
            );
            let dir = (V::new(rnd(), rnd(), rnd()) - V::repeat(0.5)).normalize();
            let t = dir * (4.0 * rnd());
            let r = rot.to_rotation_matrix().into_inner();
            let g = gap_pruned(&r, &t, &a, &b, f64::INFINITY);
            // valid: never above the distance of any two points of the boxes (sampled)
            let mut upper = f64::INFINITY;
            for _ in 0..200 {
                let pa = V::new(rnd(), rnd(), rnd()).zip_map(&a, |u, h| (2.0 * u - 1.0) * h);
                let pb = V::new(rnd(), rnd(), rnd()).zip_map(&b, |u, h| (2.0 * u - 1.0) * h);
                upper = upper.min((r * pb + t - pa).norm());
            }
            assert!(
                g <= upper + 1e-12,
                "bound {g} above a point distance {upper}"
            );
            // prunes: boxes whose bounding spheres are apart get a positive bound
            let centre_gap = t.norm() - a.norm() - b.norm();
            if centre_gap > 0.0 {
                assert!(g > 0.0, "separated boxes, bound {g}");
                positive += 1;
            }
            // early exit: the answer reaches any threshold the full bound reaches
            let prune = g * rnd();
            assert!(gap_pruned(&r, &t, &a, &b, prune) >= prune);
        }
        assert!(positive > 100, "too few separated cases: {positive}");
    }

    #[test]
    fn jacobi_matches_definition() {
        let m = Matrix3::new(4.0, 1.0, 0.5, 1.0, 3.0, -0.7, 0.5, -0.7, 1.0);
        let (vals, vecs) = jacobi_eigen(&m);
        for (i, val) in vals.iter().enumerate() {
            let x = vecs.column(i).into_owned();
            assert!((m * x - x * *val).norm() < 1e-12);
        }
        assert!((vecs.transpose() * vecs - Matrix3::identity()).norm() < 1e-12);
    }

    #[test]
    fn third_angle_without_trigonometry() {
        for i in 0..=20_000 {
            let r = -1.0 + f64::from(i) / 10_000.0;
            let (s, c) = sin_cos_third_acos(r);
            let (s0, c0) = (r.acos() / 3.0).sin_cos();
            assert!((c - c0).abs() <= 3e-16 && (s - s0).abs() <= 1e-13, "{r}");
        }
        let (s, c) = sin_cos_third_acos(f64::NAN);
        assert!(s.is_nan() && c.is_nan());
    }

    #[test]
    fn principal_axes_are_eigenvectors() {
        for m in [
            Matrix3::new(4.0, 1.0, 0.5, 1.0, 3.0, -0.7, 0.5, -0.7, 1.0),
            Matrix3::new(1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0),
            Matrix3::new(2.0, 1e-9, 0.0, 1e-9, 2.0, 0.0, 0.0, 0.0, 0.1),
            Matrix3::new(1e-6, 2e-7, 1e-7, 2e-7, 3e-6, 0.0, 1e-7, 0.0, 5e-7),
        ] {
            let r = principal_axes(&m);
            assert!((r.transpose() * r - Matrix3::identity()).norm() < 1e-12);
            assert!((r.determinant() - 1.0).abs() < 1e-12);
            let d = r.transpose() * m * r; // diagonal, decreasing
            let off = d[(0, 1)].abs() + d[(0, 2)].abs() + d[(1, 2)].abs();
            assert!(off < 1e-6 * m.norm(), "{d}");
            assert!(
                d[(0, 0)] >= d[(1, 1)] - 1e-9 * m.norm()
                    && d[(1, 1)] >= d[(2, 2)] - 1e-9 * m.norm()
            );
        }
    }

    #[test]
    fn side_by_side_solvers_are_the_scalar_ones() {
        let mut rnd = test_rng(0x2545_f491_4f6c_dd1d);
        let bits = |m: &Matrix3<f64>| m.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        // random covariances (of random points), and the ones that take the fallbacks:
        // diagonal, isotropic, a double eigenvalue, zero, rank one
        let mut covs: Vec<Matrix3<f64>> = (0..300)
            .map(|_| {
                let a = Matrix3::from_fn(|_, _| rnd() - 0.5);
                a * a.transpose() * 10f64.powi((rnd() * 12.0) as i32 - 6)
            })
            .collect();
        let u = V::new(1.0, 2.0, 3.0);
        covs.extend([
            Matrix3::from_diagonal(&V::new(3.0, 2.0, 1.0)),
            Matrix3::identity(),
            Matrix3::from_diagonal(&V::new(2.0, 2.0, 1.0)),
            Matrix3::zeros(),
            u * u.transpose(),
            Matrix3::new(2.0, 1e-9, 0.0, 1e-9, 2.0, 0.0, 0.0, 0.0, 0.1),
        ]);
        for w in covs.windows(2) {
            let got = principal_axes_lanes(&[w[0], w[1]]);
            for (g, c) in got.iter().zip(w) {
                assert_eq!(bits(g), bits(&principal_axes(c)), "{c}");
            }
        }
        let vs: Vec<V> = (0..200)
            .map(|_| V::new(rnd() - 0.5, rnd() - 0.5, rnd() - 0.5))
            .chain([V::zeros(), V::x(), V::x() * 2.0, V::new(f64::NAN, 0.0, 1.0)])
            .collect();
        let mut special = 0;
        for w in vs.windows(4) {
            let (us, ws) = ([w[0], w[1], w[2], w[3]], [w[3], w[2], w[1], w[0]]);
            for (l, got) in orthonormal_basis_lanes(&us, &ws).iter().enumerate() {
                match got {
                    Some(m) => assert_eq!(bits(m), bits(&orthonormal_basis(&us[l], &ws[l]))),
                    None => special += 1,
                }
            }
        }
        assert!(special > 0);
    }

    #[test]
    fn from_points_contains_points() {
        let pts: Vec<_> = (0..50)
            .map(|i| {
                let t = i as f64 * 0.37;
                Point3::new(
                    t.cos() * 2.0,
                    t.sin() * 0.3 + 0.1 * t,
                    0.5 * (t * 1.7).sin(),
                )
            })
            .collect();
        let b = Obb::from_points(&pts).unwrap();
        assert!(pts.iter().all(|p| b.contains(p)));
        assert!(Obb::from_points(&[]).is_none());
        assert!(Obb::from_points(&[Point3::new(f64::NAN, 0.0, 0.0)]).is_none());
    }
}
