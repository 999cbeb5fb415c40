//! Segment sweep: every triangle of a model within a distance of a segment, i.e. every
//! triangle a sphere of that radius touches while its centre moves along the segment (the
//! query behind surface navigation). With radius 0 it is a segment (ray) cast.
//!
//! The hierarchy is descended with one conservative test per node: the segment, in the node's
//! box frame, against the box grown by the radius (slab clipping). A leaf triangle is then
//! decided by the exact segment-triangle distance: 0 when the segment crosses or touches the
//! triangle, otherwise the least of the two end points' distances to the triangle and the
//! three edge-segment distances.

use nalgebra::{Isometry3, Point3, Vector3};

use crate::model::Model;
use crate::triangle::{closest_point_on_triangle, segment_segment};

type V = Vector3<f64>;

/// One triangle found by [`segment_within`] / [`segment_within_local`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SegmentHit {
    /// Index of the triangle in the model (as given to [`Model::new`]).
    pub triangle: u32,
    /// Distance between the segment and the triangle (0 when they touch or cross).
    pub distance: f64,
    /// Closest point on the segment.
    pub point_segment: Point3<f64>,
    /// Closest point on the triangle.
    pub point_triangle: Point3<f64>,
    /// The triangle's corners (same frame as the points).
    pub corners: [Point3<f64>; 3],
}

/// Reusable traversal stack of the sweep queries (one per thread; no allocation once it has
/// grown to the model's depth).
#[derive(Clone, Debug, Default)]
pub struct SweepWorkspace {
    stack: Vec<u32>,
    bv_tests: usize,
    triangle_tests: usize,
}

impl SweepWorkspace {
    /// A new, empty workspace.
    pub fn new() -> SweepWorkspace {
        SweepWorkspace::default()
    }

    /// `(bounding-volume tests, triangle tests)` of the last query run with this workspace.
    pub fn last_counts(&self) -> (usize, usize) {
        (self.bv_tests, self.triangle_tests)
    }
}

/// Does the segment `a + t (b - a)`, `t ∈ [0, 1]`, meet the axis-aligned box `[-h, h]`?
#[inline(always)]
fn segment_meets_box(a: &V, b: &V, h: &V) -> bool {
    let d = b - a;
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    for i in 0..3 {
        if d[i] == 0.0 {
            if a[i].abs() > h[i] {
                return false;
            }
        } else {
            let inv = 1.0 / d[i];
            let mut t0 = (-h[i] - a[i]) * inv;
            let mut t1 = (h[i] - a[i]) * inv;
            if t0 > t1 {
                std::mem::swap(&mut t0, &mut t1);
            }
            lo = lo.max(t0);
            hi = hi.min(t1);
            if lo > hi {
                return false;
            }
        }
    }
    true
}

/// Where the segment `p0 p1` crosses or touches the triangle `t`, if it does (not for
/// segments lying in the triangle's plane: those are decided by the edge distances).
#[inline]
fn crossing(p0: &V, p1: &V, t: &[V; 3]) -> Option<V> {
    let n = (t[1] - t[0]).cross(&(t[2] - t[0]));
    let d0 = n.dot(&(p0 - t[0]));
    let d1 = n.dot(&(p1 - t[0]));
    if (d0 > 0.0 && d1 > 0.0) || (d0 < 0.0 && d1 < 0.0) || d0 == d1 {
        return None;
    }
    let x = p0 + (p1 - p0) * (d0 / (d0 - d1));
    for k in 0..3 {
        let e = t[(k + 1) % 3] - t[k];
        if e.cross(&(x - t[k])).dot(&n) < 0.0 {
            return None;
        }
    }
    Some(x)
}

/// Exact distance between the segment `p0 p1` and the triangle `t`, with the closest points
/// (on the segment, on the triangle).
pub fn segment_triangle_distance(
    p0: &Point3<f64>,
    p1: &Point3<f64>,
    t: &[Point3<f64>; 3],
) -> (f64, Point3<f64>, Point3<f64>) {
    let o = t[0].coords;
    let (a, b) = (p0.coords - o, p1.coords - o);
    let tv = [V::zeros(), t[1].coords - o, t[2].coords - o];
    let (d, s, q) = segment_triangle_rel(&a, &b, &tv);
    (d, Point3::from(s + o), Point3::from(q + o))
}

fn segment_triangle_rel(a: &V, b: &V, t: &[V; 3]) -> (f64, V, V) {
    if let Some(x) = crossing(a, b, t) {
        return (0.0, x, x);
    }
    let mut best = {
        let q = closest_point_on_triangle(a, &t[0], &t[1], &t[2]);
        ((q - a).norm_squared(), *a, q)
    };
    let q = closest_point_on_triangle(b, &t[0], &t[1], &t[2]);
    let d2 = (q - b).norm_squared();
    if d2 < best.0 {
        best = (d2, *b, q);
    }
    for k in 0..3 {
        let (s, e) = segment_segment(a, b, &t[k], &t[(k + 1) % 3]);
        let d2 = (e - s).norm_squared();
        if d2 < best.0 {
            best = (d2, s, e);
        }
    }
    (best.0.sqrt(), best.1, best.2)
}

/// Every triangle of `model` within `radius` (inclusive) of the segment `p0 p1`, the segment
/// given in the model's frame; the hits are appended to `out` (cleared first) in no particular
/// order, in the model's frame. A non-finite end point or radius, or a negative radius, finds
/// nothing. `p0 == p1` is allowed (a sphere at rest).
pub fn segment_within_local(
    model: &Model,
    p0: &Point3<f64>,
    p1: &Point3<f64>,
    radius: f64,
    ws: &mut SweepWorkspace,
    out: &mut Vec<SegmentHit>,
) {
    out.clear();
    ws.bv_tests = 0;
    ws.triangle_tests = 0;
    let finite = p0
        .coords
        .iter()
        .chain(p1.coords.iter())
        .all(|x| x.is_finite());
    if !finite || !radius.is_finite() || radius < 0.0 {
        return;
    }
    let grow = V::repeat(radius);
    ws.stack.clear();
    ws.stack.push(0);
    while let Some(k) = ws.stack.pop() {
        let node = &model.nodes[k as usize];
        ws.bv_tests += 1;
        let nb = model.node_box(node);
        let rt = nb.rot.transpose();
        let a = rt * (p0.coords - nb.center);
        let b = rt * (p1.coords - nb.center);
        if !segment_meets_box(&a, &b, &(nb.half + grow)) {
            continue;
        }
        if node.is_leaf() {
            for i in node.tri..node.tri + node.count {
                ws.triangle_tests += 1;
                let t = &model.leaf_tris[i as usize];
                let (d, s, q) = segment_triangle_distance(p0, p1, t);
                if d <= radius {
                    out.push(SegmentHit {
                        triangle: model.leaf_ids[i as usize],
                        distance: d,
                        point_segment: s,
                        point_triangle: q,
                        corners: *t,
                    });
                }
            }
        } else {
            ws.stack.push(node.right);
            ws.stack.push(k + 1);
        }
    }
}

/// [`segment_within_local`] for a model placed at `pose`, the segment and the hits in the
/// world frame. A non-finite pose finds nothing.
pub fn segment_within(
    pose: &Isometry3<f64>,
    model: &Model,
    p0: &Point3<f64>,
    p1: &Point3<f64>,
    radius: f64,
    ws: &mut SweepWorkspace,
    out: &mut Vec<SegmentHit>,
) {
    if !super::pose::pose_is_finite(pose) {
        out.clear();
        return;
    }
    let a = pose.inverse_transform_point(p0);
    let b = pose.inverse_transform_point(p1);
    segment_within_local(model, &a, &b, radius, ws, out);
    for h in out.iter_mut() {
        h.point_segment = pose * h.point_segment;
        h.point_triangle = pose * h.point_triangle;
        h.corners = h.corners.map(|c| pose * c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::triangle;

    fn pt(x: f64, y: f64, z: f64) -> Point3<f64> {
        Point3::new(x, y, z)
    }

    /// Small deterministic generator (the crate has no RNG dependency of its own).
    struct Lcg(u64);
    impl Lcg {
        fn next(&mut self) -> f64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (self.0 >> 11) as f64 / (1u64 << 53) as f64
        }
        fn range(&mut self, lo: f64, hi: f64) -> f64 {
            lo + (hi - lo) * self.next()
        }
        fn point(&mut self, s: f64) -> Point3<f64> {
            pt(self.range(-s, s), self.range(-s, s), self.range(-s, s))
        }
    }

    /// Segment-triangle distance by the engine's triangle-triangle distance against a sliver
    /// triangle that contains the segment (independent of the code above), up to `1e-9`.
    fn oracle(p0: &Point3<f64>, p1: &Point3<f64>, t: &[Point3<f64>; 3]) -> f64 {
        let d = p1 - p0;
        let side = if d.norm() > 1e-9 {
            d.cross(&V::new(0.3, 0.5, 0.8)).normalize() * 1e-10
        } else {
            V::new(1e-10, 0.0, 0.0)
        };
        let q = if d.norm() > 1e-9 {
            *p1
        } else {
            p0 + V::new(0.0, 1e-10, 0.0)
        };
        triangle::distance(&[*p0, q, q + side], t).0
    }

    #[test]
    fn distance_cases() {
        let t = [pt(0.0, 0.0, 0.0), pt(1.0, 0.0, 0.0), pt(0.0, 1.0, 0.0)];
        // crossing the face
        let (d, s, _) = segment_triangle_distance(&pt(0.2, 0.2, -1.0), &pt(0.2, 0.2, 1.0), &t);
        assert_eq!(d, 0.0);
        assert!((s - pt(0.2, 0.2, 0.0)).norm() < 1e-15);
        // above the face, parallel
        let (d, ..) = segment_triangle_distance(&pt(0.1, 0.1, 0.5), &pt(0.3, 0.1, 0.5), &t);
        assert!((d - 0.5).abs() < 1e-15);
        // passing beside an edge
        let (d, ..) = segment_triangle_distance(&pt(0.5, -0.3, -1.0), &pt(0.5, -0.3, 1.0), &t);
        assert!((d - 0.3).abs() < 1e-15);
        // in the plane, through the triangle
        let (d, ..) = segment_triangle_distance(&pt(-1.0, 0.2, 0.0), &pt(2.0, 0.2, 0.0), &t);
        assert!(d < 1e-15);
        // a point
        let (d, ..) = segment_triangle_distance(&pt(2.0, 0.0, 0.0), &pt(2.0, 0.0, 0.0), &t);
        assert!((d - 1.0).abs() < 1e-15);
    }

    #[test]
    fn distance_matches_oracle() {
        let mut r = Lcg(3);
        for _ in 0..20_000 {
            let t = [r.point(1.0), r.point(1.0), r.point(1.0)];
            let (a, b) = (r.point(1.5), r.point(1.5));
            let (d, s, q) = segment_triangle_distance(&a, &b, &t);
            let o = oracle(&a, &b, &t);
            assert!((d - o).abs() < 1e-8, "{d} vs {o}");
            assert!(((s - q).norm() - d).abs() < 1e-12);
        }
    }

    /// The hierarchy finds exactly the triangles the brute force finds (away from the
    /// threshold), on random soups and a closed sphere-like mesh, local and posed.
    #[test]
    fn hierarchy_matches_brute_force() {
        let mut r = Lcg(11);
        let mut ws = SweepWorkspace::new();
        let mut hits = Vec::new();
        for round in 0..40 {
            let n = 50 + round * 20;
            let vertices: Vec<Point3<f64>> = (0..3 * n).map(|_| r.point(1.0)).collect();
            let triangles: Vec<[u32; 3]> = (0..n as u32)
                .map(|i| [3 * i, 3 * i + 1, 3 * i + 2])
                .collect();
            let Ok(m) = Model::new(vertices, triangles) else {
                continue;
            };
            let pose = Isometry3::new(r.point(1.0).coords, r.point(2.0).coords);
            for _ in 0..50 {
                let (a, b) = (r.point(1.2), r.point(1.2));
                let b = if r.next() < 0.2 { a } else { b };
                let radius = if r.next() < 0.2 {
                    0.0
                } else {
                    r.range(0.0, 0.3)
                };
                segment_within_local(&m, &a, &b, radius, &mut ws, &mut hits);
                let mut got: Vec<u32> = hits.iter().map(|h| h.triangle).collect();
                got.sort_unstable();
                for h in &hits {
                    assert!(h.distance <= radius);
                    assert_eq!(h.corners, m.triangle(h.triangle as usize));
                }
                for i in 0..m.num_triangles() {
                    let o = oracle(&a, &b, &m.triangle(i));
                    let found = got.binary_search(&(i as u32)).is_ok();
                    if (o - radius).abs() > 1e-8 {
                        assert_eq!(
                            found,
                            o <= radius,
                            "triangle {i}: oracle {o}, radius {radius}"
                        );
                    }
                }
                // posed form: the same triangles, points in the world frame
                let (wa, wb) = (pose * a, pose * b);
                let mut posed = Vec::new();
                segment_within(&pose, &m, &wa, &wb, radius, &mut ws, &mut posed);
                let mut ids: Vec<u32> = posed.iter().map(|h| h.triangle).collect();
                ids.sort_unstable();
                assert_eq!(ids, got);
                for h in &posed {
                    assert!(
                        ((h.point_segment - h.point_triangle).norm() - h.distance).abs() < 1e-9
                    );
                }
            }
        }
    }

    #[test]
    fn bad_input_finds_nothing() {
        let m = Model::new(
            vec![pt(0.0, 0.0, 0.0), pt(1.0, 0.0, 0.0), pt(0.0, 1.0, 0.0)],
            vec![[0, 1, 2]],
        )
        .unwrap();
        let mut ws = SweepWorkspace::new();
        let mut out = vec![];
        let (a, b) = (pt(0.2, 0.2, -1.0), pt(0.2, 0.2, 1.0));
        segment_within_local(&m, &a, &b, 0.0, &mut ws, &mut out);
        assert_eq!(out.len(), 1);
        for (a, b, r) in [
            (pt(f64::NAN, 0.0, 0.0), b, 0.1),
            (a, b, f64::NAN),
            (a, b, -1.0),
            (a, pt(0.0, f64::INFINITY, 0.0), 0.1),
        ] {
            segment_within_local(&m, &a, &b, r, &mut ws, &mut out);
            assert!(out.is_empty());
        }
        let mut bad = Isometry3::identity();
        bad.translation.vector.x = f64::NAN;
        segment_within(&bad, &m, &a, &b, 0.1, &mut ws, &mut out);
        assert!(out.is_empty());
    }
}
