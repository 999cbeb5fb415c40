//! Non-negative, non-penetrating contact forces (§4.1, Baraff's formulation).
//!
//! With first-order dynamics the workpiece's spatial velocity is `u = M (w_a + Jᵀλ)`:
//! `M = diag(d_t I, d_r I)` (eq. 1), `w_a` the applied wrench, row `i` of `J` the unit normal
//! `n_i` and the moment arm `r_i × n_i` of contact `i`, `λ_i` its normal force. The normal
//! velocities `v = J u = A λ + b`, with `A = J M Jᵀ` (symmetric, positive semi-definite) and
//! `b = J M w_a`, must satisfy the linear complementarity problem
//!
//! ```text
//! λ ≥ 0,   v = A λ + b ≥ 0,   λ_i v_i = 0
//! ```
//!
//! (no pulling force, no approach, a force only where the contact stays closed; the simulator
//! adds to `b_i` the approach velocity a contact may still make, `(d_i − ε_b)/Δt ≥ 0`, which
//! keeps the problem convex and bounded below). It is the
//! optimality condition of the convex QP `min ½ λᵀAλ + bᵀλ, λ ≥ 0`, equivalently of projecting
//! the free velocity `M w_a` onto the cone `J u ≥ 0` in the metric `M⁻¹`, so the velocity `u`
//! is unique even where redundant contacts make `λ` not unique.
//!
//! Two solvers, both ending with the same **convergence test**: the natural residual
//! `max_i |min(A_ii λ_i, v_i)|` (velocity units; zero exactly at a solution) must be at most
//! `tolerance × max(‖b‖∞, 1e-12)`.
//!
//! * [`solve_active_set`] (the simulator's): since `A = BᵀB` and `b = Bᵀc` with
//!   `B = M^½ Jᵀ`, `c = M^½ w_a`, the QP is the non-negative least-squares problem
//!   `min ‖Bλ + c‖², λ ≥ 0`, solved exactly in finitely many steps by Lawson and Hanson's
//!   active-set method written on `A` and `b` (each step solves `A_PP λ_P = −b_P` on the
//!   passive set by Cholesky). Redundant contacts (four coplanar corner points of a face on a
//!   table, plus edge points) are what it handles well.
//! * [`solve_pgs`]: projected Gauss–Seidel, `λ_i ← max(0, λ_i − v_i / A_ii)` in turn, which
//!   converges for symmetric positive semi-definite `A` with a positive diagonal (coordinate
//!   descent on the QP), but only linearly, and slowly on redundant contacts. The simulator
//!   uses it as the fallback should the active-set solve miss the tolerance (warm-started from
//!   it), and the tests check both against enumeration of all active sets.
//!
//! A solve that does not pass the test within `max_iterations` reports `converged = false`
//! with its residual (the simulator counts these, and its conservative advancement still rules
//! out penetration whatever the forces).

/// Iteration limits of the solvers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LcpSettings {
    /// Largest number of active-set changes, and of Gauss–Seidel sweeps.
    pub max_iterations: usize,
    /// Relative residual at which the solve has converged.
    pub tolerance: f64,
}

impl Default for LcpSettings {
    fn default() -> Self {
        LcpSettings {
            max_iterations: 2000,
            tolerance: 1e-9,
        }
    }
}

/// How a solve went.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct LcpReport {
    /// Sweeps made.
    pub iterations: usize,
    /// Natural residual at the end, relative to `max(‖b‖∞, 1e-12)`.
    pub residual: f64,
    /// Did the residual reach the tolerance?
    pub converged: bool,
}

/// The natural residual `max_i |min(A_ii λ_i, (Aλ + b)_i)|` (unscaled).
pub fn residual(a: &[f64], b: &[f64], lambda: &[f64]) -> f64 {
    let n = b.len();
    let mut r: f64 = 0.0;
    for i in 0..n {
        let row = &a[i * n..(i + 1) * n];
        let v: f64 = row.iter().zip(lambda).map(|(x, l)| x * l).sum::<f64>() + b[i];
        r = r.max((a[i * n + i] * lambda[i]).min(v).abs());
    }
    r
}

/// Solves the LCP `λ ≥ 0, Aλ + b ≥ 0, λ·(Aλ + b) = 0` for `A` (`n × n`, row-major,
/// symmetric positive semi-definite) by projected Gauss–Seidel, starting from `lambda`
/// (e.g. zeros). Rows with a non-positive diagonal get `λ_i = 0`.
///
/// ```
/// use rpq_pathshrink::lcp::{solve_pgs, LcpSettings};
/// // Two contacts pushing on the same normal: only the sum of the forces is determined.
/// let a = [2.0, 1.0, 1.0, 2.0];
/// let b = [-3.0, 1.0];
/// let mut l = [0.0, 0.0];
/// let r = solve_pgs(&a, &b, &mut l, &LcpSettings::default());
/// assert!(r.converged);
/// assert!((l[0] - 1.5).abs() < 1e-9 && l[1] == 0.0);
/// ```
pub fn solve_pgs(a: &[f64], b: &[f64], lambda: &mut [f64], settings: &LcpSettings) -> LcpReport {
    let n = b.len();
    debug_assert_eq!(a.len(), n * n);
    debug_assert_eq!(lambda.len(), n);
    let scale = b.iter().fold(0.0_f64, |m, x| m.max(x.abs())).max(1e-12);
    let goal = settings.tolerance * scale;
    let mut report = LcpReport::default();
    if n == 0 {
        report.converged = true;
        return report;
    }
    for it in 1..=settings.max_iterations.max(1) {
        for i in 0..n {
            let d = a[i * n + i];
            if d <= 0.0 {
                lambda[i] = 0.0;
                continue;
            }
            let row = &a[i * n..(i + 1) * n];
            let v: f64 = row
                .iter()
                .zip(lambda.iter())
                .map(|(x, l)| x * l)
                .sum::<f64>()
                + b[i];
            lambda[i] = (lambda[i] - v / d).max(0.0);
        }
        let r = residual(a, b, lambda);
        report.iterations = it;
        report.residual = r / scale;
        if r <= goal {
            report.converged = true;
            return report;
        }
    }
    report
}

/// Reusable buffers of [`solve_active_set`].
#[derive(Clone, Debug, Default)]
pub struct ActiveSetScratch {
    passive: Vec<usize>,
    is_passive: Vec<bool>,
    m: Vec<f64>,
    z: Vec<f64>,
    rhs: Vec<f64>,
}

/// Solves `A_PP x = rhs` in place (`m`: the `k × k` matrix, overwritten by its Cholesky
/// factor, regularised by a relative 1e-13 on the diagonal so that nearly dependent
/// contacts still factor). Returns `false` if the matrix is not positive.
fn cholesky_solve(m: &mut [f64], x: &mut [f64], k: usize) -> bool {
    let trace: f64 = (0..k).map(|i| m[i * k + i]).sum();
    let reg = 1e-13 * trace.max(1e-300);
    for j in 0..k {
        let mut d = m[j * k + j] + reg;
        for p in 0..j {
            d -= m[j * k + p] * m[j * k + p];
        }
        if d.is_nan() || d <= 0.0 {
            return false;
        }
        let d = d.sqrt();
        m[j * k + j] = d;
        for i in j + 1..k {
            let mut v = m[i * k + j];
            for p in 0..j {
                v -= m[i * k + p] * m[j * k + p];
            }
            m[i * k + j] = v / d;
        }
    }
    for i in 0..k {
        let mut v = x[i];
        for p in 0..i {
            v -= m[i * k + p] * x[p];
        }
        x[i] = v / m[i * k + i];
    }
    for i in (0..k).rev() {
        let mut v = x[i];
        for p in i + 1..k {
            v -= m[p * k + i] * x[p];
        }
        x[i] = v / m[i * k + i];
    }
    true
}

/// Solves the same LCP as [`solve_pgs`] exactly by Lawson and Hanson's active-set method for
/// non-negative least squares (module documentation), from `λ = 0`. `max_iterations` bounds
/// the number of active-set changes; the convergence test is the same natural residual.
///
/// ```
/// use rpq_pathshrink::lcp::{solve_active_set, ActiveSetScratch, LcpSettings};
/// let a = [2.0, 1.0, 1.0, 2.0];
/// let b = [-3.0, 1.0];
/// let mut l = [0.0, 0.0];
/// let r = solve_active_set(&a, &b, &mut l, &LcpSettings::default(), &mut ActiveSetScratch::default());
/// assert!(r.converged);
/// assert!((l[0] - 1.5).abs() < 1e-12 && l[1] == 0.0);
/// ```
pub fn solve_active_set(
    a: &[f64],
    b: &[f64],
    lambda: &mut [f64],
    settings: &LcpSettings,
    sc: &mut ActiveSetScratch,
) -> LcpReport {
    let n = b.len();
    let scale = b.iter().fold(0.0_f64, |m, x| m.max(x.abs())).max(1e-12);
    let goal = settings.tolerance * scale;
    lambda.iter_mut().for_each(|l| *l = 0.0);
    sc.passive.clear();
    sc.is_passive.clear();
    sc.is_passive.resize(n, false);
    let mut report = LcpReport::default();
    let velocity = |lambda: &[f64], i: usize| -> f64 {
        a[i * n..(i + 1) * n]
            .iter()
            .zip(lambda)
            .map(|(x, l)| x * l)
            .sum::<f64>()
            + b[i]
    };
    let mut changes = 0;
    'outer: loop {
        // The most negative normal velocity outside the passive set enters it.
        let mut enter = None;
        let mut most = -goal;
        for i in (0..n).filter(|&i| !sc.is_passive[i] && a[i * n + i] > 0.0) {
            let v = velocity(lambda, i);
            if v < most {
                most = v;
                enter = Some(i);
            }
        }
        let Some(t) = enter else { break };
        sc.passive.push(t);
        sc.is_passive[t] = true;
        loop {
            changes += 1;
            if changes > settings.max_iterations.max(1) {
                break 'outer;
            }
            let k = sc.passive.len();
            sc.m.clear();
            sc.rhs.clear();
            for &i in &sc.passive {
                for &j in &sc.passive {
                    sc.m.push(a[i * n + j]);
                }
                sc.rhs.push(-b[i]);
            }
            sc.z.clear();
            sc.z.extend_from_slice(&sc.rhs);
            if !cholesky_solve(&mut sc.m, &mut sc.z, k) {
                // The entering contact depends on the others: drop it.
                let t = sc.passive.pop().expect("just pushed");
                sc.is_passive[t] = false;
                break 'outer;
            }
            if sc.z.iter().all(|&z| z > 0.0) {
                for (p, &i) in sc.passive.iter().enumerate() {
                    lambda[i] = sc.z[p];
                }
                break;
            }
            // Step from λ towards z until the first passive force reaches zero.
            let mut alpha = 1.0_f64;
            for (p, &i) in sc.passive.iter().enumerate() {
                if sc.z[p] <= 0.0 {
                    let denom = lambda[i] - sc.z[p];
                    if denom > 0.0 {
                        alpha = alpha.min(lambda[i] / denom);
                    } else {
                        alpha = 0.0;
                    }
                }
            }
            for (p, &i) in sc.passive.iter().enumerate() {
                lambda[i] += alpha * (sc.z[p] - lambda[i]);
            }
            let mut p = 0;
            while p < sc.passive.len() {
                let i = sc.passive[p];
                if lambda[i] <= 1e-15 * scale {
                    lambda[i] = 0.0;
                    sc.is_passive[i] = false;
                    sc.passive.swap_remove(p);
                } else {
                    p += 1;
                }
            }
            if sc.passive.is_empty() {
                break;
            }
        }
    }
    report.iterations = changes;
    let r = residual(a, b, lambda);
    report.residual = r / scale;
    report.converged = r <= goal;
    report
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::{DMatrix, DVector};
    use rpq_base::SplitMix64;

    /// The oracle: every active set S, λ_S from the pseudo-inverse of A_SS, kept if it solves
    /// the LCP. Returns the normal velocities (unique) of the first solution found.
    fn enumerate(a: &DMatrix<f64>, b: &DVector<f64>) -> Option<DVector<f64>> {
        let n = b.len();
        for mask in 0..(1u32 << n) {
            let s: Vec<usize> = (0..n).filter(|i| mask & (1 << i) != 0).collect();
            let mut l = DVector::zeros(n);
            if !s.is_empty() {
                let ass = DMatrix::from_fn(s.len(), s.len(), |i, j| a[(s[i], s[j])]);
                let bs = DVector::from_fn(s.len(), |i, _| -b[s[i]]);
                let x = ass.pseudo_inverse(1e-12).ok()? * bs;
                for (k, &i) in s.iter().enumerate() {
                    l[i] = x[k];
                }
            }
            let v = a * &l + b;
            let tol = 1e-9 * (1.0 + b.amax());
            if l.iter().all(|x| *x >= -tol)
                && v.iter().all(|x| *x >= -tol)
                && l.iter().zip(v.iter()).all(|(x, y)| (x * y).abs() <= tol)
            {
                return Some(v);
            }
        }
        None
    }

    #[test]
    fn pgs_agrees_with_active_set_enumeration_on_random_contact_problems() {
        let mut rng = SplitMix64::new(11);
        let mut checked = 0;
        let mut pgs_sweeps = 0;
        for _ in 0..300 {
            // Contact Jacobians of 1..=7 contacts (rank up to 6: often redundant): unit
            // normals and moment arms r × n with contact points up to 25 mm from the centre,
            // as for the 30 mm blocks.
            let n = 1 + (rng.next_u64() % 7) as usize;
            let mut j = DMatrix::zeros(n, 6);
            for i in 0..n {
                let nv = nalgebra::Vector3::from_fn(|_, _| rng.range(-1.0, 1.0)).normalize();
                let r = nalgebra::Vector3::from_fn(|_, _| rng.range(-0.025, 0.025));
                let t = r.cross(&nv);
                for k in 0..3 {
                    j[(i, k)] = nv[k];
                    j[(i, k + 3)] = t[k];
                }
            }
            let m = DMatrix::from_diagonal(&DVector::from_vec(vec![
                0.1, 0.1, 0.1, 250.0, 250.0, 250.0,
            ]));
            let a0 = &j * &m * j.transpose();
            let a = (&a0 + a0.transpose()) * 0.5; // exactly symmetric, as the simulator builds it
            let w = DVector::from_fn(6, |k, _| {
                rng.range(-2.0, 2.0) * if k < 3 { 1.0 } else { 0.02 }
            });
            let b = &j * &m * w;
            let Some(v_ref) = enumerate(&a, &b) else {
                continue;
            };
            checked += 1;
            let mut l = vec![0.0; n];
            let r = solve_active_set(
                a.as_slice(),
                b.as_slice(),
                &mut l,
                &LcpSettings::default(),
                &mut ActiveSetScratch::default(),
            );
            assert!(r.converged, "active set: {r:?} n={n}");
            let mut lp = vec![0.0; n];
            let rp = solve_pgs(
                a.as_slice(),
                b.as_slice(),
                &mut lp,
                &LcpSettings {
                    max_iterations: 100_000,
                    tolerance: 1e-7,
                },
            );
            assert!(rp.converged, "Gauss-Seidel: {rp:?} n={n}");
            pgs_sweeps = pgs_sweeps.max(rp.iterations);
            for (name, l) in [("active set", &l), ("Gauss-Seidel", &lp)] {
                assert!(l.iter().all(|x| *x >= 0.0));
                let v = &a * DVector::from_vec(l.to_vec()) + &b;
                let err = (&v - &v_ref).amax();
                assert!(
                    err <= 1e-6 * (1.0 + b.amax()),
                    "{name}: normal velocities differ by {err}: {v:?} vs {v_ref:?}"
                );
            }
        }
        assert!(checked > 250, "the oracle solved only {checked} problems");
        eprintln!("{checked} problems; Gauss-Seidel needed up to {pgs_sweeps} sweeps for 1e-7");
    }

    #[test]
    fn a_block_pushed_into_a_floor_gets_the_push_back_and_no_pull() {
        // One contact, normal up: pushing down is cancelled, pulling up is free.
        let a = [0.1];
        let mut l = [0.0];
        let r = solve_pgs(&a, &[-0.2], &mut l, &LcpSettings::default());
        assert!(r.converged && (l[0] - 2.0).abs() < 1e-12);
        let mut l = [0.0];
        solve_pgs(&a, &[0.2], &mut l, &LcpSettings::default());
        assert_eq!(l[0], 0.0);
    }
}
