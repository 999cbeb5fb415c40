//! Triangle-level primitives: the overlap test and the exact triangle-triangle distance.
//!
//! Both are used by the BVH traversals and by [`crate::brute`], so the hierarchical and the
//! brute-force answers agree bit for bit on every triangle pair they both examine.

use nalgebra::{Point3, Vector3};

type V = Vector3<f64>;

#[inline(always)]
fn separated_on(axis: &V, a: &[V; 3], b: &[V; 3]) -> bool {
    let pa0 = axis.dot(&a[0]);
    let pa1 = axis.dot(&a[1]);
    let pa2 = axis.dot(&a[2]);
    let pb0 = axis.dot(&b[0]);
    let pb1 = axis.dot(&b[1]);
    let pb2 = axis.dot(&b[2]);
    let amin = pa0.min(pa1).min(pa2);
    let amax = pa0.max(pa1).max(pa2);
    let bmin = pb0.min(pb1).min(pb2);
    let bmax = pb0.max(pb1).max(pb2);
    amax < bmin || bmax < amin
}

/// Do two triangles intersect? Touching (a shared point, edge or coplanar contact) counts.
///
/// A separating-axis test on the 17 candidate axes of two triangles (the two normals, the
/// nine edge-edge cross products and, for the coplanar case, the six normal-edge cross
/// products), preceded by the cheap plane-side rejections.
#[inline]
pub fn overlap(a: &[Point3<f64>; 3], b: &[Point3<f64>; 3]) -> bool {
    // Work relative to a[0] for precision.
    let o = a[0].coords;
    let av = [V::zeros(), a[1].coords - o, a[2].coords - o];
    let bv = [b[0].coords - o, b[1].coords - o, b[2].coords - o];
    overlap_rel(&av, &bv)
}

#[inline]
fn overlap_rel(a: &[V; 3], b: &[V; 3]) -> bool {
    let ea = [a[1] - a[0], a[2] - a[1], a[0] - a[2]];
    let na = ea[0].cross(&ea[1]);
    // Plane of a versus the vertices of b.
    let d0 = na.dot(&(b[0] - a[0]));
    let d1 = na.dot(&(b[1] - a[0]));
    let d2 = na.dot(&(b[2] - a[0]));
    if (d0 > 0.0 && d1 > 0.0 && d2 > 0.0) || (d0 < 0.0 && d1 < 0.0 && d2 < 0.0) {
        return false;
    }
    let eb = [b[1] - b[0], b[2] - b[1], b[0] - b[2]];
    let nb = eb[0].cross(&eb[1]);
    let e0 = nb.dot(&(a[0] - b[0]));
    let e1 = nb.dot(&(a[1] - b[0]));
    let e2 = nb.dot(&(a[2] - b[0]));
    if (e0 > 0.0 && e1 > 0.0 && e2 > 0.0) || (e0 < 0.0 && e1 < 0.0 && e2 < 0.0) {
        return false;
    }
    for ea_i in &ea {
        for eb_j in &eb {
            if separated_on(&ea_i.cross(eb_j), a, b) {
                return false;
            }
        }
    }
    for i in 0..3 {
        if separated_on(&na.cross(&ea[i]), a, b) || separated_on(&nb.cross(&eb[i]), a, b) {
            return false;
        }
    }
    true
}

/// Closest points of segments `p1q1` and `p2q2` (robust to parallel segments).
///
/// Returns the two points, the first on `p1q1`.
#[inline]
pub fn segment_segment(p1: &V, q1: &V, p2: &V, q2: &V) -> (V, V) {
    let d1 = q1 - p1;
    let d2 = q2 - p2;
    let r = p1 - p2;
    let a = d1.dot(&d1);
    let e = d2.dot(&d2);
    let f = d2.dot(&r);
    let (s, t);
    if a <= f64::MIN_POSITIVE && e <= f64::MIN_POSITIVE {
        return (*p1, *p2);
    }
    if a <= f64::MIN_POSITIVE {
        s = 0.0;
        t = (f / e).clamp(0.0, 1.0);
    } else {
        let c = d1.dot(&r);
        if e <= f64::MIN_POSITIVE {
            t = 0.0;
            s = (-c / a).clamp(0.0, 1.0);
        } else {
            let b = d1.dot(&d2);
            let denom = a * e - b * b;
            let mut s0 = if denom > 1e-14 * a * e {
                ((b * f - c * e) / denom).clamp(0.0, 1.0)
            } else {
                0.0 // parallel: any s; endpoints are handled by the caller's vertex cases too
            };
            let mut t0 = (b * s0 + f) / e;
            if t0 < 0.0 {
                t0 = 0.0;
                s0 = (-c / a).clamp(0.0, 1.0);
            } else if t0 > 1.0 {
                t0 = 1.0;
                s0 = ((b - c) / a).clamp(0.0, 1.0);
            }
            s = s0;
            t = t0;
        }
    }
    (p1 + d1 * s, p2 + d2 * t)
}

/// Closest point to `p` on the triangle `(a, b, c)` (faces, edges and vertices).
#[inline]
pub fn closest_point_on_triangle(p: &V, a: &V, b: &V, c: &V) -> V {
    let ab = b - a;
    let ac = c - a;
    let ap = p - a;
    let d1 = ab.dot(&ap);
    let d2 = ac.dot(&ap);
    if d1 <= 0.0 && d2 <= 0.0 {
        return *a;
    }
    let bp = p - b;
    let d3 = ab.dot(&bp);
    let d4 = ac.dot(&bp);
    if d3 >= 0.0 && d4 <= d3 {
        return *b;
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        let v = d1 / (d1 - d3);
        return a + ab * v;
    }
    let cp = p - c;
    let d5 = ab.dot(&cp);
    let d6 = ac.dot(&cp);
    if d6 >= 0.0 && d5 <= d6 {
        return *c;
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        let w = d2 / (d2 - d6);
        return a + ac * w;
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0 {
        let w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        return b + (c - b) * w;
    }
    let denom = 1.0 / (va + vb + vc);
    let v = vb * denom;
    let w = vc * denom;
    a + ab * v + ac * w
}

/// Where segment `p0p1` crosses triangle `t` (not for segments lying in the triangle's plane).
#[inline]
fn segment_triangle_point(p0: &V, p1: &V, t: &[V; 3]) -> Option<V> {
    let n = (t[1] - t[0]).cross(&(t[2] - t[0]));
    let d0 = n.dot(&(p0 - t[0]));
    let d1 = n.dot(&(p1 - t[0]));
    if (d0 > 0.0 && d1 > 0.0) || (d0 < 0.0 && d1 < 0.0) || d0 == d1 {
        return None;
    }
    let s = d0 / (d0 - d1);
    let x = p0 + (p1 - p0) * s;
    // Inside test by edge half-planes (inclusive, with a tiny relative slack).
    let nn = n.norm_squared();
    let slack = -1e-12 * nn;
    for k in 0..3 {
        let e = t[(k + 1) % 3] - t[k];
        if e.cross(&(x - t[k])).dot(&n) < slack {
            return None;
        }
    }
    Some(x)
}

/// Exact distance between two triangles with the two closest points (first on `a`).
///
/// Zero, with both points equal to a common point, exactly when the triangles intersect
/// as decided by [`overlap`] (the one contact predicate of the crate). Otherwise the minimum
/// over the nine edge-edge and six vertex-face cases, which is exact for disjoint triangles;
/// it is positive even when the triangles are apart only by rounding (then at least
/// `f64::MIN_POSITIVE`).
#[inline]
pub fn distance(a: &[Point3<f64>; 3], b: &[Point3<f64>; 3]) -> (f64, Point3<f64>, Point3<f64>) {
    let o = a[0].coords;
    let av = [V::zeros(), a[1].coords - o, a[2].coords - o];
    let bv = [b[0].coords - o, b[1].coords - o, b[2].coords - o];
    let (d, p, q) = distance_rel(&av, &bv);
    (d, Point3::from(p + o), Point3::from(q + o))
}

/// Does the slab between the planes through `p` and `q`, normal to `q - p`, separate the
/// triangles? Then `(p, q)` is their closest pair (a self-certifying candidate).
#[inline(always)]
fn certifies(a: &[V; 3], b: &[V; 3], p: &V, q: &V) -> bool {
    let v = q - p;
    let pv = p.dot(&v);
    let qv = q.dot(&v);
    qv > pv
        && a[0].dot(&v) <= pv
        && a[1].dot(&v) <= pv
        && a[2].dot(&v) <= pv
        && b[0].dot(&v) >= qv
        && b[1].dot(&v) >= qv
        && b[2].dot(&v) >= qv
}

/// Squared distance below which a certified candidate is re-checked with [`overlap_rel`]:
/// `(1e-9 * scale)^2`, `scale` being the largest coordinate magnitude of the pair (relative
/// to `a[0]`). Far above rounding, so a contact that exists only up to rounding is decided by
/// the overlap test, never by the candidate arithmetic.
#[inline(always)]
fn near_contact(d2: f64, a: &[V; 3], b: &[V; 3]) -> bool {
    let s = a[1]
        .norm_squared()
        .max(a[2].norm_squared())
        .max(b[0].norm_squared())
        .max(b[1].norm_squared())
        .max(b[2].norm_squared());
    d2 <= 1e-18 * s
}

/// A common point of two triangles that [`overlap_rel`] says intersect; `(bp, bq)` is the
/// closest candidate pair (fallback).
#[inline]
fn common_point(a: &[V; 3], b: &[V; 3], bp: &V, bq: &V) -> V {
    for i in 0..3 {
        if let Some(x) = segment_triangle_point(&a[i], &a[(i + 1) % 3], b) {
            return x;
        }
        if let Some(x) = segment_triangle_point(&b[i], &b[(i + 1) % 3], a) {
            return x;
        }
    }
    (bp + bq) * 0.5
}

/// The distance of a pair that [`overlap_rel`] says is disjoint: never 0 (at worst the
/// smallest positive normal number, for contacts that exist only up to rounding).
#[inline(always)]
fn positive(d2: f64) -> f64 {
    d2.sqrt().max(f64::MIN_POSITIVE)
}

#[inline]
fn distance_rel(a: &[V; 3], b: &[V; 3]) -> (f64, V, V) {
    // Candidates: nine edge-edge pairs, six vertex-face pairs. A candidate whose connecting
    // vector separates the triangles is the answer (the usual exit); otherwise the triangles
    // intersect, or rounding defeated the certificate, and the minimum over all candidates
    // (exact for disjoint triangles) is used. Contact itself is decided by `overlap_rel`
    // alone (consulted only near contact), so the distance is 0 exactly when `overlap` says
    // the triangles touch.
    let certified = |d2: f64, p: V, q: V| {
        if near_contact(d2, a, b) && overlap_rel(a, b) {
            let x = common_point(a, b, &p, &q);
            (0.0, x, x)
        } else {
            (positive(d2), p, q)
        }
    };
    let mut best = f64::INFINITY;
    let mut bp = a[0];
    let mut bq = b[0];
    for i in 0..3 {
        for j in 0..3 {
            let (p, q) = segment_segment(&a[i], &a[(i + 1) % 3], &b[j], &b[(j + 1) % 3]);
            let d2 = (p - q).norm_squared();
            if d2 < best {
                if certifies(a, b, &p, &q) {
                    return certified(d2, p, q);
                }
                best = d2;
                bp = p;
                bq = q;
            }
        }
    }
    for k in 0..3 {
        let q = closest_point_on_triangle(&a[k], &b[0], &b[1], &b[2]);
        let d2 = (a[k] - q).norm_squared();
        if d2 < best {
            if certifies(a, b, &a[k], &q) {
                return certified(d2, a[k], q);
            }
            best = d2;
            bp = a[k];
            bq = q;
        }
        let p = closest_point_on_triangle(&b[k], &a[0], &a[1], &a[2]);
        let d2 = (b[k] - p).norm_squared();
        if d2 < best {
            if certifies(a, b, &p, &b[k]) {
                return certified(d2, p, b[k]);
            }
            best = d2;
            bp = p;
            bq = b[k];
        }
    }
    if overlap_rel(a, b) {
        let x = common_point(a, b, &bp, &bq);
        return (0.0, x, x);
    }
    (positive(best), bp, bq)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(x: f64, y: f64, z: f64) -> Point3<f64> {
        Point3::new(x, y, z)
    }

    #[test]
    fn coplanar_overlap_and_separation() {
        let a = [p(0.0, 0.0, 0.0), p(1.0, 0.0, 0.0), p(0.0, 1.0, 0.0)];
        let b = [p(0.2, 0.2, 0.0), p(2.0, 0.2, 0.0), p(0.2, 2.0, 0.0)];
        assert!(overlap(&a, &b));
        assert_eq!(distance(&a, &b).0, 0.0);
        let c = [p(1.0, 1.0, 0.0), p(2.0, 1.0, 0.0), p(1.0, 2.0, 0.0)];
        assert!(!overlap(&a, &c));
        let d = distance(&a, &c).0;
        assert!((d - 0.5f64.sqrt()).abs() < 1e-15, "{d}");
        // one inside the other
        let small = [p(0.1, 0.1, 0.0), p(0.2, 0.1, 0.0), p(0.1, 0.2, 0.0)];
        assert!(overlap(&a, &small) && overlap(&small, &a));
        assert_eq!(distance(&small, &a).0, 0.0);
    }

    #[test]
    fn edge_and_vertex_touching() {
        let a = [p(0.0, 0.0, 0.0), p(1.0, 0.0, 0.0), p(0.0, 1.0, 0.0)];
        // shares edge x=0..1, y=0, but bent out of plane
        let b = [p(0.0, 0.0, 0.0), p(1.0, 0.0, 0.0), p(0.0, -1.0, 1.0)];
        assert!(overlap(&a, &b));
        // vertex of b touches the face of a
        let c = [p(0.25, 0.25, 0.0), p(0.3, 0.3, 1.0), p(0.2, 0.4, 1.0)];
        assert!(overlap(&a, &c));
        let (d, pa, pb) = distance(&a, &c);
        assert_eq!(d, 0.0);
        assert!((pa - p(0.25, 0.25, 0.0)).norm() < 1e-15 && pa == pb);
        // lifted slightly: no contact, distance = lift
        let e = [p(0.25, 0.25, 1e-6), p(0.3, 0.3, 1.0), p(0.2, 0.4, 1.0)];
        assert!(!overlap(&a, &e));
        assert!((distance(&a, &e).0 - 1e-6).abs() < 1e-18);
        // coplanar, touching at one vertex
        let f = [p(1.0, 0.0, 0.0), p(2.0, 0.0, 0.0), p(2.0, 1.0, 0.0)];
        assert!(overlap(&a, &f));
    }

    #[test]
    fn piercing_and_crossing() {
        let a = [p(-1.0, -1.0, 0.0), p(1.0, -1.0, 0.0), p(0.0, 1.0, 0.0)];
        let b = [p(0.0, 0.0, -1.0), p(0.1, 0.0, 1.0), p(-0.1, 0.0, 1.0)];
        assert!(overlap(&a, &b) && overlap(&b, &a));
        let (d, pa, pb) = distance(&a, &b);
        assert_eq!(d, 0.0);
        assert_eq!(pa, pb);
        assert!(pa.z.abs() < 1e-15);
        // skew edges crossing above each other: edge-edge distance
        let c = [p(0.0, -2.0, 0.5), p(0.0, 2.0, 0.5), p(0.0, 0.0, 3.0)];
        let d = [p(-2.0, 0.0, 0.0), p(2.0, 0.0, 0.0), p(0.0, 0.0, -3.0)];
        assert!(!overlap(&c, &d));
        let (dist, pc, pd) = distance(&c, &d);
        assert!((dist - 0.5).abs() < 1e-15);
        assert!((pc - p(0.0, 0.0, 0.5)).norm() < 1e-15 && (pd - p(0.0, 0.0, 0.0)).norm() < 1e-15);
    }

    #[test]
    fn parallel_faces_and_segments() {
        let a = [p(0.0, 0.0, 0.0), p(1.0, 0.0, 0.0), p(0.0, 1.0, 0.0)];
        let b = [p(0.1, 0.1, 0.3), p(0.9, 0.05, 0.3), p(0.05, 0.9, 0.3)];
        assert!(!overlap(&a, &b));
        assert!((distance(&a, &b).0 - 0.3).abs() < 1e-15);
        // parallel segments, overlapping in projection
        let (x, y) = segment_segment(
            &V::new(0.0, 0.0, 0.0),
            &V::new(1.0, 0.0, 0.0),
            &V::new(0.5, 1.0, 0.0),
            &V::new(2.0, 1.0, 0.0),
        );
        assert!(((x - y).norm() - 1.0).abs() < 1e-15);
        // parallel segments, disjoint in projection: endpoint to endpoint
        let (x, y) = segment_segment(
            &V::new(0.0, 0.0, 0.0),
            &V::new(1.0, 0.0, 0.0),
            &V::new(3.0, 1.0, 0.0),
            &V::new(2.0, 1.0, 0.0),
        );
        assert!(((x - y).norm() - 2f64.sqrt()).abs() < 1e-15);
        // collinear
        let (x, y) = segment_segment(
            &V::new(0.0, 0.0, 0.0),
            &V::new(1.0, 0.0, 0.0),
            &V::new(3.0, 0.0, 0.0),
            &V::new(2.0, 0.0, 0.0),
        );
        assert!(((x - y).norm() - 1.0).abs() < 1e-15);
        // parallel edges of two coplanar triangles facing each other
        let c = [p(0.0, 2.0, 0.0), p(1.0, 2.0, 0.0), p(0.5, 3.0, 0.0)];
        let e = [p(0.0, 0.0, 0.0), p(1.0, 0.0, 0.0), p(0.5, -1.0, 0.0)];
        assert!((distance(&c, &e).0 - 2.0).abs() < 1e-15);
    }

    fn tri() -> impl proptest::strategy::Strategy<Value = [Point3<f64>; 3]> {
        use proptest::prelude::*;
        prop::array::uniform9(-1.0f64..1.0)
            .prop_filter("degenerate", |c| {
                let a = V::new(c[0], c[1], c[2]);
                let b = V::new(c[3], c[4], c[5]);
                let d = V::new(c[6], c[7], c[8]);
                (b - a).cross(&(d - a)).norm() > 1e-3
            })
            .prop_map(|c| {
                [
                    p(c[0], c[1], c[2]),
                    p(c[3], c[4], c[5]),
                    p(c[6], c[7], c[8]),
                ]
            })
    }

    proptest::proptest! {
        #[test]
        fn distance_is_symmetric_minimal_and_consistent(a in tri(), b in tri(), shift in proptest::array::uniform3(-1.0f64..1.0)) {
            let s = V::new(shift[0], shift[1], shift[2]);
            let b = b.map(|q| q + s);
            let (d, pa, pb) = distance(&a, &b);
            let (d2, _, _) = distance(&b, &a);
            proptest::prop_assert!((d - d2).abs() < 1e-12);
            proptest::prop_assert_eq!(overlap(&a, &b), overlap(&b, &a));
            proptest::prop_assert_eq!(d == 0.0, overlap(&a, &b));
            proptest::prop_assert!(((pa - pb).norm() - d).abs() < 1e-12);
            // witnesses on their triangles
            let on = |x: &Point3<f64>, t: &[Point3<f64>; 3]| {
                (x.coords - closest_point_on_triangle(&x.coords, &t[0].coords, &t[1].coords, &t[2].coords)).norm()
            };
            proptest::prop_assert!(on(&pa, &a) < 1e-12 && on(&pb, &b) < 1e-12);
            // no sampled pair of points is closer (barycentric grid)
            let n = 8;
            for i in 0..=n {
                for j in 0..=(n - i) {
                    let (u, v) = (i as f64 / n as f64, j as f64 / n as f64);
                    let x = a[0].coords * (1.0 - u - v) + a[1].coords * u + a[2].coords * v;
                    let y = b[0].coords * (1.0 - u - v) + b[1].coords * u + b[2].coords * v;
                    let qa = closest_point_on_triangle(&y, &a[0].coords, &a[1].coords, &a[2].coords);
                    let qb = closest_point_on_triangle(&x, &b[0].coords, &b[1].coords, &b[2].coords);
                    proptest::prop_assert!(d <= (y - qa).norm() + 1e-12);
                    proptest::prop_assert!(d <= (x - qb).norm() + 1e-12);
                }
            }
        }
    }
}
