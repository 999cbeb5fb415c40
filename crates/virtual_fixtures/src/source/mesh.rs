//! Guidance on a triangle-mesh surface: [`TriangleMeshSurface`].

use nalgebra::{Isometry3, Point3, Vector3};

use super::geometry::{tangent_basis, twist};
use super::guidance::{Guidance, GuidanceSource};
use crate::error::Error;

/// A triangle-mesh surface: the closest point over all triangles (exhaustive), `D` = the
/// closest triangle's two tangent directions, `u = [q − p; 0]`.
#[derive(Debug, Clone)]
pub struct TriangleMeshSurface {
    vertices: Vec<Point3<f64>>,
    triangles: Vec<[usize; 3]>,
    normals: Vec<Vector3<f64>>,
}

/// Closest point on triangle `abc` to `p`: the proximity engine's triangle primitive.
fn closest_on_triangle(
    a: &Point3<f64>,
    b: &Point3<f64>,
    c: &Point3<f64>,
    p: &Point3<f64>,
) -> Point3<f64> {
    Point3::from(rpq_proximity::triangle::closest_point_on_triangle(
        &p.coords, &a.coords, &b.coords, &c.coords,
    ))
}

impl TriangleMeshSurface {
    /// Checked constructor: finite vertices, indices in range, no zero-area triangle, at least
    /// one triangle.
    pub fn new(vertices: Vec<Point3<f64>>, triangles: Vec<[usize; 3]>) -> Result<Self, Error> {
        if triangles.is_empty() {
            return Err(Error::Degenerate("mesh has no triangles"));
        }
        if vertices.iter().any(|p| !p.iter().all(|x| x.is_finite())) {
            return Err(Error::NonFinite {
                what: "mesh vertex",
            });
        }
        let mut normals = Vec::with_capacity(triangles.len());
        for t in &triangles {
            if t.iter().any(|&i| i >= vertices.len()) {
                return Err(Error::WrongLength {
                    what: "mesh vertex index",
                    got: *t.iter().max().unwrap_or(&0),
                    expected: "< number of vertices",
                });
            }
            let n = (vertices[t[1]] - vertices[t[0]]).cross(&(vertices[t[2]] - vertices[t[0]]));
            if n.norm() < 1e-18 {
                return Err(Error::Degenerate("zero-area triangle"));
            }
            normals.push(n.normalize());
        }
        Ok(Self {
            vertices,
            triangles,
            normals,
        })
    }

    /// Closest point and the index of its triangle (local form).
    pub fn closest_point(&self, p: &Point3<f64>) -> (Point3<f64>, usize) {
        let mut best = (f64::INFINITY, self.vertices[self.triangles[0][0]], 0);
        for (k, t) in self.triangles.iter().enumerate() {
            let q = closest_on_triangle(
                &self.vertices[t[0]],
                &self.vertices[t[1]],
                &self.vertices[t[2]],
                p,
            );
            let d = (q - p).norm_squared();
            if d < best.0 {
                best = (d, q, k);
            }
        }
        (best.1, best.2)
    }
}

impl GuidanceSource for TriangleMeshSurface {
    fn evaluate(&mut self, x: &Isometry3<f64>, out: &mut Guidance) {
        let p = Point3::from(x.translation.vector);
        let (q, k) = self.closest_point(&p);
        let (e1, e2) = tangent_basis(&self.normals[k]);
        out.cols[0] = twist(e1, Vector3::zeros());
        out.cols[1] = twist(e2, Vector3::zeros());
        out.n = 2;
        out.u = twist(q - p, Vector3::zeros());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::projection::{Projection, RankTolerance};
    use crate::source::geometry::at;
    use crate::source::plane::PlaneSurface;
    use nalgebra::Vector6;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn triangle_closest_matches_sampling(v in proptest::array::uniform9(-1.0f64..1.0), q in proptest::array::uniform3(-2.0f64..2.0)) {
            let a = Point3::new(v[0], v[1], v[2]);
            let b = Point3::new(v[3], v[4], v[5]);
            let c = Point3::new(v[6], v[7], v[8]);
            prop_assume!((b - a).cross(&(c - a)).norm() > 1e-3);
            let q = Point3::from(q);
            let cp = closest_on_triangle(&a, &b, &c, &q);
            let n = 300;
            let mut brute = f64::INFINITY;
            for i in 0..=n {
                for j in 0..=(n - i) {
                    let (s, t) = (i as f64 / n as f64, j as f64 / n as f64);
                    brute = brute.min((a + (b - a) * s + (c - a) * t - q).norm());
                }
            }
            prop_assert!((cp - q).norm() <= brute + 1e-12);
            prop_assert!((cp - q).norm() >= brute - 0.02);
        }
    }

    #[test]
    fn plane_and_mesh_agree_on_a_flat_square() {
        let mut plane = PlaneSurface::new(
            Point3::new(0.0, 0.0, 0.1),
            Vector3::new(0.0, 0.0, 2.0),
            false,
        )
        .unwrap();
        let mut mesh = TriangleMeshSurface::new(
            vec![
                Point3::new(-1.0, -1.0, 0.1),
                Point3::new(1.0, -1.0, 0.1),
                Point3::new(1.0, 1.0, 0.1),
                Point3::new(-1.0, 1.0, 0.1),
            ],
            vec![[0, 1, 2], [0, 2, 3]],
        )
        .unwrap();
        let x = at(Point3::new(0.2, -0.3, 0.5));
        let (mut g1, mut g2) = (Guidance::empty(), Guidance::empty());
        plane.evaluate(&x, &mut g1);
        mesh.evaluate(&x, &mut g2);
        assert!((g1.u - Vector6::new(0.0, 0.0, -0.4, 0.0, 0.0, 0.0)).norm() < 1e-15);
        assert!((g2.u - g1.u).norm() < 1e-15);
        let tol = RankTolerance::default();
        let p1 = Projection::of_columns(g1.columns(), &tol).unwrap().unwrap();
        let p2 = Projection::of_columns(g2.columns(), &tol).unwrap().unwrap();
        assert!((p1.span - p2.span).abs().max() < 1e-12);
        assert!(p1.kernel_of(&g1.u).norm() > 0.0 && (p1.kernel_of(&g1.u) - g1.u).norm() < 1e-15);
        assert!(TriangleMeshSurface::new(vec![Point3::origin(); 3], vec![[0, 1, 2]]).is_err());
        assert!(TriangleMeshSurface::new(vec![Point3::origin(); 3], vec![[0, 1, 5]]).is_err());
        assert!(PlaneSurface::new(Point3::origin(), Vector3::zeros(), false).is_err());
    }
}
