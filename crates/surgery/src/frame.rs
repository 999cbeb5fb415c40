//! The outline frame: where the paper's planar curves (x, y) sit on a curved patient.
//!
//! Eqs. 4 and 5 describe curves in a plane and surfaces rising along z. On a cranium the
//! outline is drawn on a curved surface, so the suite places the equations in a local frame
//! fitted to the outline:
//!
//! * origin: the centroid of the outline points;
//! * z: the normal of the least-squares plane of the outline points, oriented to the side the
//!   tool comes from (the caller's "up", e.g. the outward normal of the skull there);
//! * x: the caller's x axis projected onto that plane (or its y axis when x is nearly
//!   normal to it), so the frame is reproducible.
//!
//! Outline points keep their own height `z` in this frame (a few millimetres on a skull), so
//! the curves of the protections lie exactly on the drawn outline, and heights `H` are
//! measured along this z.

use nalgebra::{
    Isometry3, Matrix3, Point2, Point3, Rotation3, Translation3, UnitQuaternion, Vector3,
};

use crate::SurgeryError;

/// A right-handed frame in the caller's frame (its pose maps frame coordinates to the caller's).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SurfaceFrame {
    /// Frame → caller's frame.
    pub pose: Isometry3<f64>,
}

impl SurfaceFrame {
    /// The frame at `origin` whose z axis is `normal` and whose x axis is the caller's x
    /// projected onto the plane (y if x is within 10° of the normal).
    pub fn new(origin: Point3<f64>, normal: &Vector3<f64>) -> Result<SurfaceFrame, SurgeryError> {
        if !origin
            .coords
            .iter()
            .chain(normal.iter())
            .all(|x| x.is_finite())
        {
            return Err(SurgeryError::NonFinite {
                what: "frame origin or normal",
            });
        }
        let z = normal
            .try_normalize(1e-12)
            .ok_or_else(|| SurgeryError::range("frame normal length", normal.norm(), "> 0"))?;
        let seed = if z.x.abs() < 0.985 {
            Vector3::x()
        } else {
            Vector3::y()
        };
        let x = (seed - z * z.dot(&seed)).normalize();
        let y = z.cross(&x);
        let rot = Rotation3::from_matrix_unchecked(Matrix3::from_columns(&[x, y, z]));
        Ok(SurfaceFrame {
            pose: Isometry3::from_parts(
                Translation3::from(origin.coords),
                UnitQuaternion::from_rotation_matrix(&rot),
            ),
        })
    }

    /// The frame fitted to `points` (see the module docs), z toward `up`.
    pub fn fit(points: &[Point3<f64>], up: &Vector3<f64>) -> Result<SurfaceFrame, SurgeryError> {
        if points.len() < 3 {
            return Err(SurgeryError::TooFewPoints { got: points.len() });
        }
        if !points
            .iter()
            .all(|p| p.coords.iter().all(|x| x.is_finite()))
        {
            return Err(SurgeryError::NonFinite {
                what: "outline point",
            });
        }
        let up = up
            .try_normalize(1e-12)
            .ok_or_else(|| SurgeryError::range("up vector length", up.norm(), "> 0"))?;
        let n = points.len() as f64;
        let c = points.iter().fold(Vector3::zeros(), |s, p| s + p.coords) / n;
        let mut cov = Matrix3::zeros();
        for p in points {
            let d = p.coords - c;
            cov += d * d.transpose();
        }
        let eig = cov.symmetric_eigen();
        let k = eig.eigenvalues.imin();
        let mut normal: Vector3<f64> = eig.eigenvectors.column(k).into_owned();
        if normal.dot(&up) < 0.0 {
            normal = -normal;
        }
        SurfaceFrame::new(Point3::from(c), &normal)
    }

    /// The frame's z axis in the caller's frame.
    pub fn normal(&self) -> Vector3<f64> {
        self.pose.rotation * Vector3::z()
    }

    /// A caller point in frame coordinates.
    pub fn to_local(&self, p: &Point3<f64>) -> Point3<f64> {
        self.pose.inverse_transform_point(p)
    }

    /// Frame coordinates `(x, y)` at height `z` in the caller's frame.
    pub fn to_parent(&self, xy: &Point2<f64>, z: f64) -> Point3<f64> {
        self.pose * Point3::new(xy.x, xy.y, z)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fitted_frame_of_a_tilted_circle() {
        let tilt = UnitQuaternion::from_euler_angles(0.3, -0.2, 0.5);
        let centre = Vector3::new(0.4, 0.1, 0.2);
        let pts: Vec<Point3<f64>> = (0..40)
            .map(|k| {
                let a = k as f64 / 40.0 * std::f64::consts::TAU;
                Point3::from(tilt * Vector3::new(0.02 * a.cos(), 0.03 * a.sin(), 0.0) + centre)
            })
            .collect();
        let up = tilt * Vector3::z();
        let f = SurfaceFrame::fit(&pts, &up).unwrap();
        assert!((f.normal() - up).norm() < 1e-12);
        assert!((f.pose.translation.vector - centre).norm() < 1e-12);
        for p in &pts {
            let l = f.to_local(p);
            assert!(l.z.abs() < 1e-12);
            assert!((f.to_parent(&Point2::new(l.x, l.y), l.z) - p).norm() < 1e-12);
        }
        // the other side when asked
        let g = SurfaceFrame::fit(&pts, &-up).unwrap();
        assert!((g.normal() + up).norm() < 1e-12);
        assert!(SurfaceFrame::fit(&pts[..2], &up).is_err());
        assert!(SurfaceFrame::new(Point3::origin(), &Vector3::zeros()).is_err());
    }
}
