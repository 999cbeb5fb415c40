//! The barrier potentials of §4.2.
//!
//! Eq. 2, with `δ = d / ε_b`:
//!
//! ```text
//! U_i(d) = K [δ − 1 − ln δ]   for 0 < δ < 1,     0 for δ ≥ 1,     +∞ for d ≤ 0
//! ```
//!
//! It is 0 with zero slope at `d = ε_b` and grows without bound as the distance goes to 0.
//! For a **capture object** (a contact that must be kept) the potential also rises to
//! infinity at an outer boundary `ε_o` (here the contact distance `ε_c`, so a captured
//! object stays in contact): over the outer half of `[ε_b, ε_o]`, with `w = (ε_o − ε_b)/2`,
//! it is the mirror image `K [δ' − 1 − ln δ']`, `δ' = (ε_o − d) / w`, for
//! `ε_o − w < d < ε_o`, and `+∞` for `d ≥ ε_o` (zero in between, so a workpiece sliding
//! along a captured contact near ε_b feels no barrier).

/// A barrier: the constant `K` (J) and the barrier distance `ε_b` (m), with an optional
/// outer boundary for capture objects.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Barrier {
    /// `K` (J).
    pub gain: f64,
    /// `ε_b` (m).
    pub inner: f64,
    /// `ε_o` (m) for capture objects: the potential is infinite from there on.
    pub outer: Option<f64>,
}

impl Barrier {
    /// `U(d)` (J).
    ///
    /// ```
    /// use rpq_pathshrink::barrier::Barrier;
    /// let b = Barrier { gain: 1e-3, inner: 1e-3, outer: None };
    /// assert_eq!(b.potential(2e-3), 0.0);
    /// assert!(b.potential(0.0).is_infinite());
    /// let u = b.potential(0.5e-3); // δ = 0.5: K (0.5 − 1 + ln 2)
    /// assert!((u - 1e-3 * (-0.5 + 2f64.ln())).abs() < 1e-15);
    /// ```
    #[inline]
    pub fn potential(&self, d: f64) -> f64 {
        if d.is_nan() || d <= 0.0 {
            return f64::INFINITY;
        }
        if d < self.inner {
            let delta = d / self.inner;
            return self.gain * (delta - 1.0 - delta.ln());
        }
        match self.outer {
            None => 0.0,
            Some(o) if d >= o => f64::INFINITY,
            Some(o) => {
                let delta = (o - d) / (0.5 * (o - self.inner));
                if delta >= 1.0 {
                    0.0
                } else {
                    self.gain * (delta - 1.0 - delta.ln())
                }
            }
        }
    }

    /// `dU/dd` (N): negative inside `ε_b` (the potential falls as the distance grows, so the
    /// force `−dU/dd` pushes away), positive beyond it for a capture object (pulls back).
    #[inline]
    pub fn slope(&self, d: f64) -> f64 {
        if d <= 0.0 {
            return f64::NEG_INFINITY;
        }
        if d < self.inner {
            return self.gain * (1.0 / self.inner - 1.0 / d);
        }
        match self.outer {
            None => 0.0,
            Some(o) if d >= o => f64::INFINITY,
            Some(o) => {
                let w = 0.5 * (o - self.inner);
                let delta = (o - d) / w;
                if delta >= 1.0 {
                    return 0.0;
                }
                // d/dd K(δ' − 1 − ln δ') = K (1 − 1/δ') (−1/w)
                self.gain * (1.0 / delta - 1.0) / w
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slope_is_the_derivative_of_the_potential() {
        let plain = Barrier {
            gain: 2e-3,
            inner: 1e-3,
            outer: None,
        };
        let capture = Barrier {
            outer: Some(2e-3),
            ..plain
        };
        for b in [plain, capture] {
            for k in 1..40 {
                let d = k as f64 * 0.049e-3;
                let h = 1e-9;
                let num = (b.potential(d + h) - b.potential(d - h)) / (2.0 * h);
                let s = b.slope(d);
                assert!(
                    (num - s).abs() <= 1e-4 * (1.0 + s.abs()),
                    "d={d}: numeric {num} vs {s}"
                );
            }
        }
        assert!(capture.potential(2e-3).is_infinite());
        assert_eq!(capture.potential(1e-3), 0.0);
        assert_eq!(capture.potential(1.5e-3), 0.0);
        assert!(capture.slope(1.8e-3) > 0.0 && capture.slope(0.5e-3) < 0.0);
    }
}
