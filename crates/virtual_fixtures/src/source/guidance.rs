//! What a guidance source gives: [`Guidance`] (`D` and `u` at one pose) and the
//! [`GuidanceSource`] trait.

use nalgebra::{Isometry3, Vector6};

use crate::error::Error;
use crate::projection::{Projection, RankTolerance};

/// `D` (up to six columns, stored inline) and `u` at one pose. No heap allocation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Guidance {
    /// The columns of `D`; only the first `n` are meaningful.
    pub(super) cols: [Vector6<f64>; 6],
    /// Number of columns of `D` (0 ..= 6).
    pub(super) n: usize,
    /// The error command `u` (a twist: linear [m/s-like], angular [rad/s-like]).
    pub u: Vector6<f64>,
}

impl Default for Guidance {
    fn default() -> Self {
        Self::empty()
    }
}

impl Guidance {
    /// No preferred direction (`n = 0`) and `u = 0`.
    pub fn empty() -> Self {
        Self {
            cols: [Vector6::zeros(); 6],
            n: 0,
            u: Vector6::zeros(),
        }
    }

    /// From explicit columns (0 ..= 6) and `u`; checked.
    pub fn from_columns(cols: &[Vector6<f64>], u: Vector6<f64>) -> Result<Self, Error> {
        let mut g = Self::empty();
        g.set(cols, u)?;
        Ok(g)
    }

    /// Overwrites `D` and `u` in place; checked.
    pub fn set(&mut self, cols: &[Vector6<f64>], u: Vector6<f64>) -> Result<(), Error> {
        if cols.len() > 6 {
            return Err(Error::WrongLength {
                what: "preferred-direction matrix D",
                got: cols.len(),
                expected: "at most 6 columns",
            });
        }
        self.n = cols.len();
        self.cols[..cols.len()].copy_from_slice(cols);
        self.u = u;
        self.check()
    }

    /// Sets `D` to one column (unchecked; for sources).
    pub(super) fn set1(&mut self, d: Vector6<f64>, u: Vector6<f64>) {
        self.cols[0] = d;
        self.n = 1;
        self.u = u;
    }

    /// The columns of `D`.
    pub fn columns(&self) -> &[Vector6<f64>] {
        &self.cols[..self.n]
    }

    /// Number of columns `n`.
    pub fn n(&self) -> usize {
        self.n
    }

    /// `D` flattened column-major (6·n values), the layout of the ROS message.
    pub fn flattened(&self) -> impl Iterator<Item = f64> + '_ {
        self.columns().iter().flat_map(|c| c.iter().copied())
    }

    /// Builds from a column-major flattened `D` (length 6·n) and `u`; checked.
    pub fn from_flattened(d: &[f64], n: usize, u: &[f64]) -> Result<Self, Error> {
        if n > 6 {
            return Err(Error::WrongLength {
                what: "D columns",
                got: n,
                expected: "at most 6",
            });
        }
        if d.len() != 6 * n {
            return Err(Error::WrongLength {
                what: "flattened D",
                got: d.len(),
                expected: "6 * n",
            });
        }
        if u.len() != 6 {
            return Err(Error::WrongLength {
                what: "u",
                got: u.len(),
                expected: "6",
            });
        }
        let mut g = Self::empty();
        g.n = n;
        for j in 0..n {
            g.cols[j] = Vector6::from_column_slice(&d[6 * j..6 * j + 6]);
        }
        g.u = Vector6::from_column_slice(u);
        g.check()?;
        Ok(g)
    }

    /// Errors if any entry is not finite.
    pub fn check(&self) -> Result<(), Error> {
        if self
            .columns()
            .iter()
            .all(|c| c.iter().all(|x| x.is_finite()))
            && self.u.iter().all(|x| x.is_finite())
        {
            Ok(())
        } else {
            Err(Error::NonFinite {
                what: "guidance (D, u)",
            })
        }
    }
}

impl Guidance {
    /// Combines two fixtures in parallel (the paper's open problem of combining guidance
    /// modes): the preferred directions become `span(D_a) ∩ span(D_b)` — motion allowed by both
    /// — and `u = u_a + u_b`. The intersection is the null space of `<D_a> + <D_b>` (a sum of
    /// projectors, symmetric positive semi-definite), taken from its eigen-decomposition with
    /// eigenvalues below `1e-9`. `None` if either projection fails.
    ///
    /// The two sides are not treated alike where the inputs are nearly dependent: each column
    /// of the result is projected onto `span(D_a)`, so it lies in `a`'s subspace to rounding,
    /// and in `b`'s within the rank tolerance (a direction within ~3e-5 of both subspaces
    /// counts as common: its eigenvalue, a squared distance, falls under `1e-9`). Pass the
    /// fixture that must never be left — `combine`'s primary — as `a`.
    pub fn intersect(a: &Guidance, b: &Guidance, tol: &RankTolerance) -> Option<Guidance> {
        let pa = Projection::of_columns_unchecked(a.columns(), tol)?;
        let pb = Projection::of_columns_unchecked(b.columns(), tol)?;
        let s = pa.kernel() + pb.kernel();
        let eig = nalgebra::SymmetricEigen::try_new(s, 5.0 * f64::EPSILON, 10_000)?;
        let mut g = Guidance::empty();
        for i in 0..6 {
            if eig.eigenvalues[i].abs() < 1e-9 {
                // (unit eigenvectors within ~3e-5 of span(D_a): the projection keeps them
                // unit to ~1e-9 and as independent as they were)
                g.cols[g.n] = pa.span_of(&eig.eigenvectors.column(i).into_owned());
                g.n += 1;
            }
        }
        g.u = a.u + b.u;
        Some(g)
    }
}

/// A motion objective `S` with its preferred directions and error command.
pub trait GuidanceSource {
    /// Writes `D(x)` and `u(x)` for the tool pose `x` (base frame) into `out`. `&mut self`
    /// lets a source keep a search hint between calls; the result does not depend on it.
    fn evaluate(&mut self, x: &Isometry3<f64>, out: &mut Guidance);
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn flattened_round_trip() {
        let g = Guidance::from_columns(
            &[Vector6::x(), Vector6::new(1.0, 2.0, 3.0, 4.0, 5.0, 6.0)],
            Vector6::z(),
        )
        .unwrap();
        let flat: Vec<f64> = g.flattened().collect();
        assert_eq!(flat.len(), 12);
        assert_eq!(
            Guidance::from_flattened(&flat, 2, g.u.as_slice()).unwrap(),
            g
        );
        assert!(Guidance::from_flattened(&flat, 3, g.u.as_slice()).is_err());
        assert!(Guidance::from_flattened(&flat, 2, &[0.0; 5]).is_err());
    }

    #[test]
    fn intersection_of_two_planes_is_their_line() {
        let tol = RankTolerance::default();
        let xy = Guidance::from_columns(&[Vector6::x(), Vector6::y()], Vector6::z()).unwrap();
        let xz = Guidance::from_columns(&[Vector6::x() + Vector6::z(), Vector6::z()], Vector6::y())
            .unwrap();
        let g = Guidance::intersect(&xy, &xz, &tol).unwrap();
        assert_eq!(g.n(), 1);
        assert!((g.columns()[0].abs() - Vector6::x()).norm() < 1e-12);
        assert_eq!(g.u, Vector6::y() + Vector6::z());
        // disjoint subspaces: nothing is allowed
        let z = Guidance::from_columns(&[Vector6::z()], Vector6::zeros()).unwrap();
        assert_eq!(Guidance::intersect(&xy, &z, &tol).unwrap().n(), 0);
    }

    proptest! {
        /// dim(A ∩ B) = dim A + dim B − dim(A + B), and every result column lies in both.
        #[test]
        fn intersection_dimension_and_membership(
            a in proptest::collection::vec(proptest::array::uniform6(-1.0f64..1.0), 0..5),
            b in proptest::collection::vec(proptest::array::uniform6(-1.0f64..1.0), 0..5),
            shared in proptest::collection::vec(proptest::array::uniform6(-1.0f64..1.0), 0..3),
        ) {
            let tol = RankTolerance::default();
            let mut ca: Vec<Vector6<f64>> = a.into_iter().map(Vector6::from).collect();
            let mut cb: Vec<Vector6<f64>> = b.into_iter().map(Vector6::from).collect();
            for s in shared {
                if ca.len() < 6 && cb.len() < 6 {
                    ca.push(Vector6::from(s));
                    cb.push(Vector6::from(s) * 2.0);
                }
            }
            let ga = Guidance::from_columns(&ca, Vector6::zeros()).unwrap();
            let gb = Guidance::from_columns(&cb, Vector6::zeros()).unwrap();
            let g = Guidance::intersect(&ga, &gb, &tol).unwrap();
            let pa = Projection::of_columns(&ca, &tol).unwrap().unwrap();
            let pb = Projection::of_columns(&cb, &tol).unwrap().unwrap();
            let all: Vec<_> = ca.iter().chain(&cb).copied().collect();
            // singular values relative to the largest: the dimensions are only defined when
            // none lies near the rank tolerance (random columns can be nearly dependent: a
            // smallest singular value of 1e-5 is rank 6 for the columns but vanishes from
            // their Gram matrix, whose eigenvalues are its square)
            let relative = |cols: &[Vector6<f64>]| -> Vec<f64> {
                if cols.is_empty() {
                    return Vec::new();
                }
                let s = nalgebra::Matrix6xX::from_columns(cols).singular_values();
                let max = s.max();
                s.iter().map(|x| if max > 0.0 { x / max } else { 0.0 }).collect()
            };
            // (`intersect` counts a direction as common when its squared distances to both
            // sides sum to under 1e-9, i.e. within ~3e-5: the band is that wide)
            let clear = |s: &[f64]| s.iter().all(|&x| x <= 1e-12 || x >= 1e-4);
            let (sa, sb, s_all) = (relative(&ca), relative(&cb), relative(&all));
            prop_assume!(clear(&sa) && clear(&sb) && clear(&s_all));
            let dim_sum = s_all.iter().filter(|&&x| x >= 1e-4).count();
            prop_assert_eq!(pa.rank, sa.iter().filter(|&&x| x >= 1e-4).count());
            prop_assert_eq!(pb.rank, sb.iter().filter(|&&x| x >= 1e-4).count());
            prop_assert_eq!(g.n(), pa.rank + pb.rank - dim_sum);
            for c in g.columns() {
                prop_assert!(pa.kernel_of(c).norm() < 1e-6);
                prop_assert!(pb.kernel_of(c).norm() < 1e-6);
            }
        }
    }
}
