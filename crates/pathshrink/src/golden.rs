//! Golden-section search for the minimum of the net potential `U(s)` along the direction of
//! motion (§4.2; `U` is not smooth, so no derivatives are used).

/// `(1 − 1/φ)`: the golden section.
const G: f64 = 0.381_966_011_250_105_1;

/// Minimises `f` over `[lo, hi]` by golden-section search until the bracket is shorter than
/// `tolerance`; returns the best point evaluated (ends included, infinite values allowed)
/// and the number of evaluations of `f`.
///
/// For a unimodal `f` the result is within `tolerance` of the minimiser; otherwise it is a
/// local minimum, never worse than either end of the interval.
///
/// ```
/// use rpq_pathshrink::golden::golden_section;
/// let (s, u, n) = golden_section(0.0, 1.0, 1e-5, |s| (s - 0.3f64).abs());
/// assert!((s - 0.3).abs() < 1e-5 && u < 1e-5 && n < 30);
/// ```
pub fn golden_section(
    lo: f64,
    hi: f64,
    tolerance: f64,
    mut f: impl FnMut(f64) -> f64,
) -> (f64, f64, usize) {
    let (mut a, mut b) = (lo, hi);
    let mut best = (hi, f(hi));
    let mut evals = 1;
    let f_lo = f(lo);
    evals += 1;
    if f_lo < best.1 {
        best = (lo, f_lo);
    }
    if hi.is_nan() || lo.is_nan() || hi <= lo {
        return (best.0, best.1, evals);
    }
    let mut c = a + G * (b - a);
    let mut d = b - G * (b - a);
    let mut fc = f(c);
    let mut fd = f(d);
    evals += 2;
    for (x, fx) in [(c, fc), (d, fd)] {
        if fx < best.1 {
            best = (x, fx);
        }
    }
    while b - a > tolerance {
        // Ties (e.g. both infinite, or both flat zero) keep the lower part: moving less is
        // the safe choice when nothing tells the two apart.
        if fc <= fd {
            b = d;
            d = c;
            fd = fc;
            c = a + G * (b - a);
            fc = f(c);
            if fc < best.1 {
                best = (c, fc);
            }
        } else {
            a = c;
            c = d;
            fc = fd;
            d = b - G * (b - a);
            fd = f(d);
            if fd < best.1 {
                best = (d, fd);
            }
        }
        evals += 1;
    }
    (best.0, best.1, evals)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_interior_and_end_minima_of_a_barrier_plus_linear_potential() {
        // U(s) = -s + barrier rising to infinity at s = 0.7: minimum inside.
        let u = |s: f64| {
            let d = 0.7 - s;
            if d <= 0.0 {
                f64::INFINITY
            } else {
                -s + 0.01 * (1.0 / d)
            }
        };
        let (s, _, n) = golden_section(0.0, 1.0, 1e-6, u);
        // dU/ds = -1 + 0.01/d^2 = 0 at d = 0.1
        assert!((s - 0.6).abs() < 1e-5, "{s}");
        assert!(n <= 35);
        // Free motion: the minimum is the far end.
        let (s, _, _) = golden_section(0.0, 1.0, 1e-5, |s| -s);
        assert_eq!(s, 1.0);
    }
}
