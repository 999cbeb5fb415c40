//! Guidance on a plane: [`PlaneSurface`].

use nalgebra::{Isometry3, Point3, Unit, Vector3, Vector6};

use super::geometry::{tangent_basis, twist};
use super::guidance::{Guidance, GuidanceSource};
use crate::error::Error;

/// A plane through `origin` with unit `normal`: `D` = two in-plane unit directions (plus the
/// three rotations if `free_rotation`), `u = [−((p − o)·n) n; 0]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlaneSurface {
    origin: Point3<f64>,
    normal: Unit<Vector3<f64>>,
    e1: Vector3<f64>,
    e2: Vector3<f64>,
    free_rotation: bool,
}

impl PlaneSurface {
    /// Checked constructor (finite, non-zero normal).
    pub fn new(
        origin: Point3<f64>,
        normal: Vector3<f64>,
        free_rotation: bool,
    ) -> Result<Self, Error> {
        if !origin.iter().chain(normal.iter()).all(|x| x.is_finite()) {
            return Err(Error::NonFinite { what: "plane" });
        }
        let normal =
            Unit::try_new(normal, 1e-12).ok_or(Error::Degenerate("plane normal is zero"))?;
        let (e1, e2) = tangent_basis(&normal);
        Ok(Self {
            origin,
            normal,
            e1,
            e2,
            free_rotation,
        })
    }

    /// Signed distance of `p` from the plane (positive on the normal's side).
    pub fn signed_distance(&self, p: &Point3<f64>) -> f64 {
        (p - self.origin).dot(&self.normal)
    }
}

impl GuidanceSource for PlaneSurface {
    fn evaluate(&mut self, x: &Isometry3<f64>, out: &mut Guidance) {
        let p = Point3::from(x.translation.vector);
        let u = twist(
            -self.normal.into_inner() * self.signed_distance(&p),
            Vector3::zeros(),
        );
        out.cols[0] = twist(self.e1, Vector3::zeros());
        out.cols[1] = twist(self.e2, Vector3::zeros());
        out.n = 2;
        if self.free_rotation {
            for k in 0..3 {
                out.cols[2 + k] = Vector6::ith(3 + k, 1.0);
            }
            out.n = 5;
        }
        out.u = u;
    }
}
