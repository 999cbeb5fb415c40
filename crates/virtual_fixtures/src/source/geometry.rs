//! Small geometric helpers shared by the guidance sources.

#[cfg(test)]
use nalgebra::{Isometry3, Point3};
use nalgebra::{Vector3, Vector6};

/// The twist (or wrench) `[lin; ang]`, linear part first.
pub(super) fn twist(lin: Vector3<f64>, ang: Vector3<f64>) -> Vector6<f64> {
    Vector6::new(lin.x, lin.y, lin.z, ang.x, ang.y, ang.z)
}

/// Two unit vectors that with the unit `n` form a right-handed orthonormal basis
/// `(e1, e2, n)`.
pub(super) fn tangent_basis(n: &Vector3<f64>) -> (Vector3<f64>, Vector3<f64>) {
    let helper = if n.x.abs() < 0.9 {
        Vector3::x()
    } else {
        Vector3::y()
    };
    let e1 = n.cross(&helper).normalize();
    (e1, n.cross(&e1))
}

/// The pose at `p` with the identity rotation (for tests).
#[cfg(test)]
pub(super) fn at(p: Point3<f64>) -> Isometry3<f64> {
    Isometry3::translation(p.x, p.y, p.z)
}
