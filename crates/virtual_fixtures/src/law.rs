//! The admittance law of eq. 8 and the closed-loop preferred direction of eq. 11.

use nalgebra::Vector6;

use crate::error::Error;
use crate::projection::{Projection, RankTolerance};

/// Compliances of eq. 8: `v = c ([D] + c_τ <D>) f`.
///
/// * `c_tau = 0`: hard fixture (motion only along the preferred directions);
/// * `0 < c_tau < 1`: soft fixture; `c_tau = 1`: isotropic admittance `v = c f` (eq. 1);
/// * `c_tau > 1`: the non-preferred directions are the easier ones. As the paper suggests,
///   the roles are swapped: [`Compliance::effective`] returns the fixture on `<D>` with overall
///   compliance `c · c_τ` and attenuation `1 / c_τ < 1`, which is the same linear map.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Compliance {
    /// Overall compliance `c ≥ 0` (twist per unit of shaped wrench, see [`crate::Shaping`]).
    pub c: f64,
    /// Attenuation of the non-preferred component, `c_τ ≥ 0`.
    pub c_tau: f64,
}

/// The kind of fixture a [`Compliance`] describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FixtureKind {
    /// `c_τ = 0`.
    Hard,
    /// `0 < c_τ < 1`.
    Soft,
    /// `c_τ = 1`.
    Isotropic,
    /// `c_τ > 1`: the kernel `<D>` is the preferred subspace.
    Swapped,
}

/// A compliance rewritten so that the attenuated subspace is explicit (see
/// [`Compliance::effective`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EffectiveCompliance {
    /// Gain on the preferred subspace.
    pub c: f64,
    /// Attenuation (≤ 1) of the other subspace.
    pub c_tau: f64,
    /// `true` when the preferred subspace is `<D>` rather than `[D]`.
    pub swapped: bool,
}

impl Compliance {
    /// Checked constructor: `c` and `c_tau` finite and non-negative.
    pub fn new(c: f64, c_tau: f64) -> Result<Self, Error> {
        if !c.is_finite() || !c_tau.is_finite() {
            return Err(Error::NonFinite { what: "compliance" });
        }
        if c < 0.0 {
            return Err(Error::OutOfRange {
                what: "c",
                value: c,
                expected: "c >= 0",
            });
        }
        if c_tau < 0.0 {
            return Err(Error::OutOfRange {
                what: "c_tau",
                value: c_tau,
                expected: "c_tau >= 0",
            });
        }
        Ok(Self { c, c_tau })
    }

    /// Which kind of fixture this is.
    pub fn kind(&self) -> FixtureKind {
        if self.c_tau == 0.0 {
            FixtureKind::Hard
        } else if self.c_tau < 1.0 {
            FixtureKind::Soft
        } else if self.c_tau == 1.0 {
            FixtureKind::Isotropic
        } else {
            FixtureKind::Swapped
        }
    }

    /// The paper's role swap for `c_τ > 1`: `c([D] + c_τ<D>) = c c_τ (<D> + c_τ⁻¹ [D])`.
    pub fn effective(&self) -> EffectiveCompliance {
        if self.c_tau > 1.0 {
            EffectiveCompliance {
                c: self.c * self.c_tau,
                c_tau: 1.0 / self.c_tau,
                swapped: true,
            }
        } else {
            EffectiveCompliance {
                c: self.c,
                c_tau: self.c_tau,
                swapped: false,
            }
        }
    }

    /// Eq. 8: `v = c ([D] + c_τ <D>) f`, evaluated through [`Compliance::effective`].
    pub fn apply(&self, p: &Projection, f: &Vector6<f64>) -> Vector6<f64> {
        let e = self.effective();
        let fd = p.span_of(f);
        let ft = f - fd;
        if e.swapped {
            (ft + fd * e.c_tau) * e.c
        } else {
            (fd + ft * e.c_tau) * e.c
        }
    }
}

/// Eq. 11: `D_g = (1 − k_d) [D] f + k_d ‖f‖ <D> u`, the closed-loop preferred direction for a
/// guidance `(D, u)` with `0 < k_d < 1` (`k_d = 0` gives `[D] f`, i.e. the open-loop motion).
pub fn closed_loop_direction(
    p: &Projection,
    f: &Vector6<f64>,
    u: &Vector6<f64>,
    k_d: f64,
) -> Vector6<f64> {
    p.span_of(f) * (1.0 - k_d) + p.kernel_of(u) * (k_d * f.norm())
}

/// Eq. 11 followed by eq. 8: the closed-loop admittance step `v = c([D_g] + c_τ<D_g>) f`.
pub fn closed_loop_velocity(
    p: &Projection,
    f: &Vector6<f64>,
    u: &Vector6<f64>,
    k_d: f64,
    compliance: &Compliance,
    tol: &RankTolerance,
) -> Vector6<f64> {
    let dg = closed_loop_direction(p, f, u, k_d);
    compliance.apply(&Projection::of_direction(&dg, tol), f)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn arb_vec() -> impl Strategy<Value = Vector6<f64>> {
        proptest::array::uniform6(-2.0f64..2.0).prop_map(Vector6::from)
    }

    #[test]
    fn kinds_and_checks() {
        assert_eq!(Compliance::new(1.0, 0.0).unwrap().kind(), FixtureKind::Hard);
        assert_eq!(Compliance::new(1.0, 0.3).unwrap().kind(), FixtureKind::Soft);
        assert_eq!(
            Compliance::new(1.0, 1.0).unwrap().kind(),
            FixtureKind::Isotropic
        );
        assert_eq!(
            Compliance::new(1.0, 4.0).unwrap().kind(),
            FixtureKind::Swapped
        );
        assert!(Compliance::new(-1.0, 0.0).is_err());
        assert!(Compliance::new(1.0, -0.1).is_err());
        assert!(Compliance::new(f64::NAN, 0.0).is_err());
    }

    #[test]
    fn plane_example_from_section_two() {
        // D = [e_x e_y]: the hard fixture passes x, y and blocks z and rotations.
        let p = Projection::of_columns(&[Vector6::x(), Vector6::y()], &RankTolerance::default())
            .unwrap()
            .unwrap();
        let f = Vector6::new(1.0, 2.0, 3.0, 4.0, 5.0, 6.0);
        let v = Compliance::new(0.5, 0.0).unwrap().apply(&p, &f);
        assert!((v - Vector6::new(0.5, 1.0, 0.0, 0.0, 0.0, 0.0)).norm() < 1e-14);
        let v = Compliance::new(0.5, 0.2).unwrap().apply(&p, &f);
        assert!((v - Vector6::new(0.5, 1.0, 0.3, 0.4, 0.5, 0.6)).norm() < 1e-14);
    }

    proptest! {
        #[test]
        fn law_matches_matrix_form(d in arb_vec(), f in arb_vec(), c in 0.0f64..3.0, c_tau in 0.0f64..5.0) {
            let p = Projection::of_direction(&d, &RankTolerance::default());
            let comp = Compliance::new(c, c_tau).unwrap();
            let direct = (p.span + p.kernel() * c_tau) * f * c;
            prop_assert!((comp.apply(&p, &f) - direct).norm() < 1e-9 * (1.0 + direct.norm()));
            let e = comp.effective();
            prop_assert!(e.c_tau <= 1.0);
        }

        #[test]
        fn isotropic_is_eq_one(d in arb_vec(), f in arb_vec(), c in 0.0f64..3.0) {
            let p = Projection::of_direction(&d, &RankTolerance::default());
            prop_assert!((Compliance::new(c, 1.0).unwrap().apply(&p, &f) - f * c).norm() < 1e-12);
        }

        #[test]
        fn hard_fixture_stays_in_span(cols in proptest::collection::vec(arb_vec(), 0..4), f in arb_vec()) {
            let p = Projection::of_columns(&cols, &RankTolerance::default()).unwrap().unwrap();
            let v = Compliance::new(1.3, 0.0).unwrap().apply(&p, &f);
            prop_assert!(p.kernel_of(&v).norm() < 1e-9 * (1.0 + v.norm()));
        }

        #[test]
        fn closed_loop_direction_components(d in arb_vec(), f in arb_vec(), u in arb_vec(), k in 0.01f64..0.99) {
            let p = Projection::of_direction(&d, &RankTolerance::default());
            let dg = closed_loop_direction(&p, &f, &u, k);
            // the [D] part is (1-k)[D]f, the <D> part k|f|<D>u
            prop_assert!((p.span_of(&dg) - p.span_of(&f) * (1.0 - k)).norm() < 1e-9);
            prop_assert!((p.kernel_of(&dg) - p.kernel_of(&u) * (k * f.norm())).norm() < 1e-9);
            // hard closed-loop motion is along D_g only
            let v = closed_loop_velocity(&p, &f, &u, k, &Compliance::new(1.0, 0.0).unwrap(), &RankTolerance::default());
            let pg = Projection::of_direction(&dg, &RankTolerance::default());
            prop_assert!(pg.kernel_of(&v).norm() < 1e-9 * (1.0 + v.norm()));
        }
    }
}
