//! Guidance on the remote-centre-of-motion cone: [`RcmCone`].

use nalgebra::{Isometry3, Point3, Rotation3, Unit, Vector3};

use super::geometry::{tangent_basis, twist};
use super::guidance::{Guidance, GuidanceSource};
use crate::error::Error;

/// The remote-centre-of-motion cone of sec. IV (eqs. 12-16): the tool axis should sweep a cone
/// of half-angle `γ` about `axis` with apex at the RCM point `center`.
///
/// At tool pose `x` with tool axis `z = R·tool_axis`, the nearest cone generator `n` is the one
/// at the same azimuth about `axis`. Then
/// * `D = [a × (p − c); a]`: rotation about the cone axis `a` through the RCM point `c`
///   (eq. 12 when `a = e_z` and the tool point `p` is the RCM point, as on the Steady-Hand RCM
///   module);
/// * `u = [ω × (p − c); ω]` with `ω = z × n` (eq. 16), which rotates `z` towards `n` about `c`
///   and is orthogonal to `D`'s angular part.
///
/// `z` on the axis (no azimuth) uses the azimuth of the base x axis.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RcmCone {
    center: Point3<f64>,
    axis: Unit<Vector3<f64>>,
    half_angle: f64,
    tool_axis: Unit<Vector3<f64>>,
    error_gain: f64,
}

impl RcmCone {
    /// Checked constructor: `half_angle ∈ [0, π/2]`, non-zero axes.
    pub fn new(
        center: Point3<f64>,
        axis: Vector3<f64>,
        half_angle: f64,
        tool_axis: Vector3<f64>,
    ) -> Result<Self, Error> {
        if !center
            .iter()
            .chain(axis.iter())
            .chain(tool_axis.iter())
            .all(|x| x.is_finite())
            || !half_angle.is_finite()
        {
            return Err(Error::NonFinite { what: "RCM cone" });
        }
        if !(0.0..=std::f64::consts::FRAC_PI_2).contains(&half_angle) {
            return Err(Error::OutOfRange {
                what: "cone half angle",
                value: half_angle,
                expected: "0 ..= pi/2 rad",
            });
        }
        let axis = Unit::try_new(axis, 1e-12).ok_or(Error::Degenerate("cone axis is zero"))?;
        let tool_axis =
            Unit::try_new(tool_axis, 1e-12).ok_or(Error::Degenerate("tool axis is zero"))?;
        Ok(Self {
            center,
            axis,
            half_angle,
            tool_axis,
            error_gain: 1.0,
        })
    }

    /// Gain `g` of the error command, `ω = g (z × n)` (default 1, dimensionless).
    pub fn with_error_gain(mut self, gain: f64) -> Self {
        self.error_gain = gain;
        self
    }

    /// Nearest cone generator to a unit tool direction `z` (local form).
    pub fn nearest_generator(&self, z: &Vector3<f64>) -> Vector3<f64> {
        let a = self.axis.into_inner();
        let radial = z - a * a.dot(z);
        let radial = if radial.norm() > 1e-12 {
            radial.normalize()
        } else {
            let (e1, _) = tangent_basis(&a);
            let x = Vector3::x() - a * a.x;
            if x.norm() > 1e-12 {
                x.normalize()
            } else {
                e1
            }
        };
        a * self.half_angle.cos() + radial * self.half_angle.sin()
    }

    /// Angle between the tool direction `z` and the cone surface \[rad\] (positive outside).
    pub fn angle_error(&self, z: &Vector3<f64>) -> f64 {
        z.normalize().dot(&self.axis).clamp(-1.0, 1.0).acos() - self.half_angle
    }

    /// The tool direction in the base frame for rotation `r`.
    pub fn tool_direction(&self, r: &Rotation3<f64>) -> Vector3<f64> {
        r * self.tool_axis.into_inner()
    }
}

impl GuidanceSource for RcmCone {
    fn evaluate(&mut self, x: &Isometry3<f64>, out: &mut Guidance) {
        let z = x.rotation * self.tool_axis.into_inner();
        let n = self.nearest_generator(&z);
        let w = z.cross(&n) * self.error_gain;
        let r = Point3::from(x.translation.vector) - self.center;
        let a = self.axis.into_inner();
        out.set1(twist(a.cross(&r), a), twist(w.cross(&r), w));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::Vector6;
    use proptest::prelude::*;
    use std::f64::consts::PI;

    proptest! {
        #[test]
        fn cone_u_is_orthogonal_and_points_inward(phi in 0.0f64..(2.0 * PI), beta in 0.05f64..1.4, gamma in 0.1f64..1.2) {
            let mut cone = RcmCone::new(Point3::origin(), Vector3::z(), gamma, Vector3::z()).unwrap();
            let z = Vector3::new(beta.sin() * phi.cos(), beta.sin() * phi.sin(), beta.cos());
            let rot = Rotation3::rotation_between(&Vector3::z(), &z).unwrap();
            let x = Isometry3::from_parts(nalgebra::Translation3::identity(), rot.into());
            let mut g = Guidance::empty();
            cone.evaluate(&x, &mut g);
            // eq. 12 at the RCM point
            prop_assert!((g.columns()[0] - Vector6::new(0.0, 0.0, 0.0, 0.0, 0.0, 1.0)).norm() < 1e-12);
            // rule 3: <D>u = u
            prop_assert!(g.u.dot(&g.columns()[0]).abs() < 1e-12);
            // rotating z by u reduces the angle error
            let w = g.u.fixed_rows::<3>(3).into_owned();
            let z2 = Rotation3::new(w * 1e-3) * z;
            prop_assert!(cone.angle_error(&z2).abs() <= cone.angle_error(&z).abs() + 1e-15);
            prop_assert!((w.norm() - (beta - gamma).abs().sin()).abs() < 1e-9);
        }

    }
}
