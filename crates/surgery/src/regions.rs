//! The projection of a point onto a triangle by the regions of RPQ Fig. 7.
//!
//! The point is first projected onto the triangle's plane. Inside the triangle that is the
//! answer (region [`Region::Face`]). Outside, the plane is divided by the normals of the edges
//! applied at the vertices into six regions: three vertex regions `R1`, `R2`, `R3` (between
//! the two edge normals at a vertex) and three edge regions `R12`, `R23`, `R31` (between the
//! normals of one edge at its two ends). A point of a vertex region is projected onto that
//! vertex, a point of an edge region perpendicularly onto that edge: the nearest point of the
//! triangle's border. The regions are tested with the edge normals as the paper draws them,
//! not through barycentric coordinates, and the tests check them against the proximity
//! engine's closest-point routine.

use nalgebra::{Point3, Vector3};

/// Where the projection of a point onto a triangle's plane falls (RPQ Fig. 7); vertices are
/// numbered 1, 2, 3 as in the paper (corners 0, 1, 2 of the slice).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Region {
    /// Inside the triangle: the plane projection is kept.
    Face,
    /// Vertex region of corner 1 (between the normals of edges 31 and 12 at corner 1).
    R1,
    /// Vertex region of corner 2.
    R2,
    /// Vertex region of corner 3.
    R3,
    /// Edge region of edge 12 (outside that edge, between its normals at corners 1 and 2).
    R12,
    /// Edge region of edge 23.
    R23,
    /// Edge region of edge 31.
    R31,
}

impl Region {
    const VERTEX: [Region; 3] = [Region::R1, Region::R2, Region::R3];
    const EDGE: [Region; 3] = [Region::R12, Region::R23, Region::R31];

    /// The paper's name (`"R12"`, `"face"`).
    pub fn name(self) -> &'static str {
        match self {
            Region::Face => "face",
            Region::R1 => "R1",
            Region::R2 => "R2",
            Region::R3 => "R3",
            Region::R12 => "R12",
            Region::R23 => "R23",
            Region::R31 => "R31",
        }
    }
}

/// The unit normal `(v2 − v1) × (v3 − v1)` of a triangle, `None` for a degenerate one.
pub fn triangle_normal(t: &[Point3<f64>; 3]) -> Option<Vector3<f64>> {
    let n = (t[1] - t[0]).cross(&(t[2] - t[0]));
    let len = n.norm();
    (len > 0.0 && len.is_finite()).then(|| n / len)
}

/// The region of `q`'s projection onto the plane of `t` and the point it is projected to (the
/// plane projection for [`Region::Face`], the nearest border point of the region otherwise).
/// `None` for a degenerate triangle.
pub fn project(t: &[Point3<f64>; 3], q: &Point3<f64>) -> Option<(Region, Point3<f64>)> {
    let n = triangle_normal(t)?;
    let q0 = q - n * n.dot(&(q - t[0]));
    let e = [t[1] - t[0], t[2] - t[1], t[0] - t[2]];
    // outward normal of edge k in the plane: e_k × n (the triangle is counter-clockwise
    // about n)
    let outside = [0, 1, 2].map(|k| e[k].cross(&n).dot(&(q0 - t[k])) > 0.0);
    if !outside.iter().any(|&o| o) {
        return Some((Region::Face, q0));
    }
    // Vertex regions: behind the normals of both edges that meet at corner k.
    for k in 0..3 {
        let prev = (k + 2) % 3;
        let along_next = e[k].dot(&(q0 - t[k]));
        let along_prev = (-e[prev]).dot(&(q0 - t[k]));
        if along_next <= 0.0 && along_prev <= 0.0 {
            return Some((Region::VERTEX[k], t[k]));
        }
    }
    // Edge regions: outside edge k and between its normals at both ends.
    for k in 0..3 {
        if outside[k] {
            let len2 = e[k].norm_squared();
            let s = e[k].dot(&(q0 - t[k]));
            if s >= 0.0 && s <= len2 {
                return Some((Region::EDGE[k], t[k] + e[k] * (s / len2)));
            }
        }
    }
    // Only reachable by rounding at a region border: the nearest clamped edge projection.
    let mut best = (f64::INFINITY, Region::R12, t[0]);
    for k in 0..3 {
        let s = (e[k].dot(&(q0 - t[k])) / e[k].norm_squared()).clamp(0.0, 1.0);
        let p = t[k] + e[k] * s;
        let d = (p - q0).norm_squared();
        if d < best.0 {
            best = (d, Region::EDGE[k], p);
        }
    }
    Some((best.1, best.2))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rpq_proximity::triangle::closest_point_on_triangle;

    fn pt(x: f64, y: f64, z: f64) -> Point3<f64> {
        Point3::new(x, y, z)
    }

    /// The seven cases of Fig. 7 on the right triangle (0,0), (4,0), (0,3).
    #[test]
    fn each_region_of_fig7() {
        let t = [pt(0.0, 0.0, 0.0), pt(4.0, 0.0, 0.0), pt(0.0, 3.0, 0.0)];
        let cases = [
            (pt(1.0, 1.0, 2.0), Region::Face, pt(1.0, 1.0, 0.0)),
            (pt(-1.0, -1.0, -0.5), Region::R1, t[0]),
            (pt(5.0, -1.0, 1.0), Region::R2, t[1]),
            (pt(-0.5, 4.0, 1.0), Region::R3, t[2]),
            (pt(2.0, -1.0, 0.3), Region::R12, pt(2.0, 0.0, 0.0)),
            // edge 23 from (4,0) to (0,3): outward normal (3,4)/5; foot of (2,1.5)+(3,4)*0.2
            (pt(2.6, 2.3, -1.0), Region::R23, pt(2.0, 1.5, 0.0)),
            (pt(-2.0, 1.0, 0.0), Region::R31, pt(0.0, 1.0, 0.0)),
        ];
        for (q, region, p) in cases {
            let (r, got) = project(&t, &q).unwrap();
            assert_eq!(r, region, "{q:?}");
            assert!((got - p).norm() < 1e-12, "{q:?}: {got:?} vs {p:?}");
        }
        assert!(project(&[t[0], t[0], t[1]], &pt(0.0, 0.0, 1.0)).is_none());
    }

    /// Against the engine's closest point (a different formulation) on random triangles,
    /// obtuse and slender ones included.
    #[test]
    fn border_projection_is_the_closest_point_of_the_plane_projection() {
        let mut rng = rpq_base::SplitMix64::new(5);
        let mut seen = std::collections::HashSet::new();
        for _ in 0..100_000 {
            let mut p = || {
                pt(
                    rng.range(-1.0, 1.0),
                    rng.range(-1.0, 1.0),
                    rng.range(-1.0, 1.0),
                )
            };
            let t = [p(), p(), p()];
            let q = p() + (p() - Point3::origin()) * 2.0;
            let Some((region, got)) = project(&t, &q) else {
                continue;
            };
            let n = triangle_normal(&t).unwrap();
            let q0 = q - n * n.dot(&(q - t[0]));
            let c = closest_point_on_triangle(&q0.coords, &t[0].coords, &t[1].coords, &t[2].coords);
            let scale = 1.0 + (q - t[0]).norm();
            assert!(
                (got.coords - c).norm() < 1e-9 * scale,
                "{region:?}: {got:?} vs {c:?}"
            );
            seen.insert(region);
        }
        assert_eq!(seen.len(), 7);
    }
}
