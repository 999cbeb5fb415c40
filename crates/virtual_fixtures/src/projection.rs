//! Span and kernel projections of a preferred-direction matrix (eqs. 2-5).
//!
//! For a 6 × n matrix `D` of preferred directions, `[D] = D (D'D)⁺ D'` projects onto the
//! column space of `D` and `<D> = I − [D]` onto its orthogonal complement. Both are computed
//! from a rank-revealing decomposition of `D` (column-pivoted QR, see
//! [`Projection::of_matrix`]): `[D] = Σ_{i < rank} qᵢ qᵢ'`, which is `D (D'D)⁺ D'` with the
//! pseudo-inverse truncated at the same tolerance.
//!
//! **Rank tolerance.** A direction counts when its pivot (the singular value's stand-in)
//! `|R_ii| > max(absolute, relative · |R_00|)`
//! ([`RankTolerance`], defaults `absolute = 1e-12` in the units of `D`, `relative = 1e-9`).
//! `D = 0` (or every column below `absolute`) has rank 0: `[D] = 0` and `<D> = I`, i.e. no
//! preferred direction, so eq. 8 degenerates to the uniform compliance `c · c_τ`.
//!
//! The inner product is the plain Euclidean one of ℝ⁶, as in the paper; make the linear and
//! angular parts commensurate with [`crate::Shaping`] before projecting.

use nalgebra::{Matrix6, Vector6};

use crate::error::Error;

/// When a singular value of `D` counts towards its rank; see the documentation of
/// `src/projection.rs`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RankTolerance {
    /// Absolute floor, in the units of `D` (default `1e-12`).
    pub absolute: f64,
    /// Fraction of the largest singular value (default `1e-9`).
    pub relative: f64,
}

impl Default for RankTolerance {
    fn default() -> Self {
        Self {
            absolute: 1e-12,
            relative: 1e-9,
        }
    }
}

impl RankTolerance {
    fn threshold(&self, sigma_max: f64) -> f64 {
        self.absolute.max(self.relative * sigma_max)
    }
}

/// The span projector `[D]` of a preferred-direction matrix and its rank.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Projection {
    /// `[D]`, symmetric and idempotent.
    pub span: Matrix6<f64>,
    /// Numerical rank of `D` (0 ..= 6).
    pub rank: usize,
}

impl Projection {
    /// The projection of `D = 0`: `[D] = 0`, rank 0.
    pub fn zero() -> Self {
        Self {
            span: Matrix6::zeros(),
            rank: 0,
        }
    }

    /// The kernel projector `<D> = I − [D]`.
    pub fn kernel(&self) -> Matrix6<f64> {
        Matrix6::identity() - self.span
    }

    /// `[D] x`.
    pub fn span_of(&self, x: &Vector6<f64>) -> Vector6<f64> {
        self.span * x
    }

    /// `<D> x = x − [D] x`.
    pub fn kernel_of(&self, x: &Vector6<f64>) -> Vector6<f64> {
        x - self.span * x
    }

    /// Projection onto the line spanned by one direction `d` (`[d] = d d' / d'd`); rank 0 when
    /// `‖d‖ ≤ tol.absolute`. Allocation-free and SVD-free (the closed-loop path, eq. 11).
    pub fn of_direction(d: &Vector6<f64>, tol: &RankTolerance) -> Self {
        let n2 = d.norm_squared();
        if n2.is_nan() || n2.sqrt() <= tol.absolute {
            return Self::zero();
        }
        Self {
            span: d * d.transpose() / n2,
            rank: 1,
        }
    }

    /// Projection onto the column space of `D` given as `columns` (0 ..= 6 columns, each a
    /// twist: linear part first). Zero columns and linearly dependent columns are allowed.
    ///
    /// Errors on more than six columns or non-finite entries. Returns `Ok(None)` only if the
    /// decomposition is not finite (never observed for finite input).
    pub fn of_columns(
        columns: &[Vector6<f64>],
        tol: &RankTolerance,
    ) -> Result<Option<Self>, Error> {
        if columns.len() > 6 {
            return Err(Error::WrongLength {
                what: "preferred-direction matrix D",
                got: columns.len(),
                expected: "at most 6 columns",
            });
        }
        if columns.iter().any(|c| !c.iter().all(|x| x.is_finite())) {
            return Err(Error::NonFinite {
                what: "preferred-direction matrix D",
            });
        }
        Ok(Self::of_columns_unchecked(columns, tol))
    }

    /// [`Projection::of_columns`] without the input checks (the caller guarantees at most six
    /// finite columns); the hot path of [`crate::AdmittanceController`].
    pub fn of_columns_unchecked(columns: &[Vector6<f64>], tol: &RankTolerance) -> Option<Self> {
        match columns.len() {
            0 => return Some(Self::zero()),
            1 => return Some(Self::of_direction(&columns[0], tol)),
            _ => {}
        }
        let mut d = Matrix6::zeros();
        for (j, c) in columns.iter().enumerate() {
            d.set_column(j, c);
        }
        Self::of_matrix(&d, tol)
    }

    /// Projection onto the column space of a 6 × 6 matrix (unused columns zero).
    ///
    /// Computed with a column-pivoted Householder QR, `D P = Q R`, which is rank revealing:
    /// the rank is the number of diagonal entries with `|R_ii| > max(absolute, relative · |R_00|)`
    /// and `[D] = Q_r Q_r'` (the first `r` columns of `Q` span the column space). This equals
    /// `D (D'D)⁺ D'` with the pseudo-inverse truncated at the same tolerance. (nalgebra 0.34's
    /// SVD returns wrong factors for some rank-deficient 6 × 6 matrices — reconstruction error
    /// 1.7e-4 on a rank-2 matrix with two scaled copies, a case kept in the tests — so the SVD
    /// is not used here.)
    pub fn of_matrix(d: &Matrix6<f64>, tol: &RankTolerance) -> Option<Self> {
        let qr = d.col_piv_qr();
        let r = qr.r();
        let q = qr.q();
        let r00 = r[(0, 0)].abs();
        if !r00.is_finite() {
            return None;
        }
        let thr = tol.threshold(r00);
        let mut span = Matrix6::zeros();
        let mut rank = 0;
        for i in 0..6 {
            if r[(i, i)].abs() > thr {
                let qi = q.column(i);
                span += qi * qi.transpose();
                rank += 1;
            } else {
                break;
            }
        }
        Some(Self { span, rank })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn close(a: &Matrix6<f64>, b: &Matrix6<f64>, tol: f64) -> bool {
        (a - b).abs().max() <= tol
    }

    #[test]
    fn zero_matrix_has_rank_zero() {
        let p = Projection::of_columns(
            &[Vector6::zeros(), Vector6::zeros()],
            &RankTolerance::default(),
        )
        .unwrap()
        .unwrap();
        assert_eq!(p.rank, 0);
        assert_eq!(p.span, Matrix6::zeros());
        assert_eq!(p.kernel(), Matrix6::identity());
        let p = Projection::of_columns(&[], &RankTolerance::default())
            .unwrap()
            .unwrap();
        assert_eq!(p.rank, 0);
    }

    #[test]
    fn coordinate_plane_is_diagonal() {
        // Paper sec. II-A: translation in the x-y plane only.
        let p = Projection::of_columns(
            &[Vector6::x() * 3.0, Vector6::y() * -0.5],
            &RankTolerance::default(),
        )
        .unwrap()
        .unwrap();
        let mut expect = Matrix6::zeros();
        expect[(0, 0)] = 1.0;
        expect[(1, 1)] = 1.0;
        assert_eq!(p.rank, 2);
        assert!(close(&p.span, &expect, 1e-14));
    }

    #[test]
    fn full_rank_matches_normal_equations() {
        // [D] = D (D'D)^-1 D' for a full-column-rank D, against the closed form.
        let d = nalgebra::Matrix6x3::new(
            1.0, 0.2, -0.3, 0.5, 1.0, 0.1, 0.0, 0.3, 2.0, 0.1, -0.4, 0.0, 0.7, 0.0, 0.2, 0.0, 0.9,
            1.1,
        );
        let cols: Vec<_> = (0..3).map(|j| d.column(j).into_owned()).collect();
        let p = Projection::of_columns(&cols, &RankTolerance::default())
            .unwrap()
            .unwrap();
        let closed = d * (d.transpose() * d).try_inverse().unwrap() * d.transpose();
        assert_eq!(p.rank, 3);
        assert!(close(&p.span, &closed, 1e-12));
    }

    #[test]
    fn rank_two_with_scaled_copies() {
        // nalgebra 0.34's SVD gets this one wrong (see of_matrix).
        let a = Vector6::new(
            0.23872519039206977,
            1.8047164729525569,
            1.1397986802018218,
            -0.7844816336099739,
            -1.2800641671027442,
            1.360388042596134,
        );
        let b = Vector6::new(
            0.0,
            -0.04617429824626119,
            -1.5118812769986758,
            -1.622398718207157,
            -1.9765328528071688,
            -1.0141840972029679,
        );
        let cols = [a, b, a * -0.38932, a * -0.10431];
        let p = Projection::of_columns(&cols, &RankTolerance::default())
            .unwrap()
            .unwrap();
        assert_eq!(p.rank, 2);
        for c in &cols {
            assert!((p.span_of(c) - c).norm() < 1e-12);
        }
    }

    #[test]
    fn rejects_bad_input() {
        let nan = Vector6::repeat(f64::NAN);
        assert!(matches!(
            Projection::of_columns(&[nan], &RankTolerance::default()),
            Err(Error::NonFinite { .. })
        ));
        let seven = [Vector6::x(); 7];
        assert!(matches!(
            Projection::of_columns(&seven, &RankTolerance::default()),
            Err(Error::WrongLength { .. })
        ));
    }

    #[test]
    fn tolerance_drops_tiny_directions() {
        let tol = RankTolerance::default();
        let p = Projection::of_columns(&[Vector6::x(), Vector6::y() * 1e-13], &tol)
            .unwrap()
            .unwrap();
        assert_eq!(p.rank, 1);
        let p = Projection::of_direction(&(Vector6::x() * 1e-13), &tol);
        assert_eq!(p.rank, 0);
    }

    fn arb_vec() -> impl Strategy<Value = Vector6<f64>> {
        proptest::array::uniform6(-2.0f64..2.0).prop_map(Vector6::from)
    }

    /// Up to 6 columns, some of them repeated or scaled copies (rank-deficient) or zero.
    fn arb_columns() -> impl Strategy<Value = Vec<Vector6<f64>>> {
        (
            proptest::collection::vec(arb_vec(), 0..=4),
            proptest::collection::vec((0usize..4, -2.0f64..2.0), 0..=2),
            any::<bool>(),
        )
            .prop_map(|(mut cols, copies, zero)| {
                for (i, s) in copies {
                    if !cols.is_empty() {
                        let c = cols[i % cols.len()] * s;
                        cols.push(c);
                    }
                }
                if zero && cols.len() < 6 {
                    cols.push(Vector6::zeros());
                }
                cols
            })
    }

    proptest! {
        #[test]
        fn projector_properties(cols in arb_columns(), x in arb_vec()) {
            let tol = RankTolerance::default();
            let p = Projection::of_columns(&cols, &tol).unwrap().unwrap();
            let s = p.span;
            let k = p.kernel();
            // idempotent and symmetric
            prop_assert!(close(&(s * s), &s, 1e-9));
            prop_assert!(close(&(k * k), &k, 1e-9));
            prop_assert!(close(&s, &s.transpose(), 1e-12));
            // complementary and orthogonal
            prop_assert!(close(&(s + k), &Matrix6::identity(), 1e-15));
            prop_assert!((p.span_of(&x)).dot(&p.kernel_of(&x)).abs() < 1e-9);
            prop_assert!(close(&(s * k), &Matrix6::zeros(), 1e-9));
            // rank equals the trace and the matrix rank of D
            prop_assert!((s.trace() - p.rank as f64).abs() < 1e-9);
            let mut d = Matrix6::zeros();
            for (j, c) in cols.iter().enumerate() { d.set_column(j, c); }
            prop_assert_eq!(p.rank, d.rank(1e-9));
            // [D] fixes every column of D; <D> annihilates them
            for c in &cols {
                prop_assert!((p.span_of(c) - c).norm() < 1e-8 * (1.0 + c.norm()));
                prop_assert!(p.kernel_of(c).norm() < 1e-8 * (1.0 + c.norm()));
            }
            // invariant under column scaling (span depends on the column space only)
            let scaled: Vec<_> = cols.iter().map(|c| c * 7.5).collect();
            let p2 = Projection::of_columns(&scaled, &tol).unwrap().unwrap();
            prop_assert!(close(&p2.span, &s, 1e-9));
        }
    }
}
