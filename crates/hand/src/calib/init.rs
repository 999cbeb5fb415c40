//! An initial guess of a finger's parameters that does not need the starting model to be
//! close to the hand (issue 16 item 1).
//!
//! Plain Levenberg-Marquardt from the nominal model lands in a wrong local minimum when the
//! hand is far from it (gains ×1.3 and offsets +15° gave negative lengths or 10 mm residuals).
//! This guess treats the joint angles of every pose as unknowns of their own and alternates
//! three small problems, each solved exactly or by a few Gauss-Newton steps:
//!
//! 1. **per-pose inverse kinematics**: the chain angles `θ_p` that bring the fingertip to the
//!    measured one, regularised towards the angles the current sensor model predicts
//!    (`min |tip(θ) − m_p|² + λ |θ − (g σ_p + β)|²`; the finger has one and the thumb two
//!    redundant angles, which the regulariser fixes);
//! 2. **linear fit of the sensor model** `θ = g σ + β` per joint (eqs. 3-4: the thumb's T0,
//!    T1 and twist on both cross-coupled sensors) to those angles;
//! 3. **linear fit of the lengths**: with the angles fixed the fingertip is linear in them.
//!
//! `λ` is lowered over the rounds (from 10 mm to 0.5 mm of fingertip per radian), so the
//! angles follow the measured tips more and more closely; the full nonlinear fit of
//! [`super::calibrate_finger`] starts from the result.

use nalgebra::{DMatrix, DVector, SMatrix, SVector, Vector3};

use crate::data::Sample;
use crate::model::{ChainFrames, Finger, FingerParams, ThumbCoupling};

/// Regularisation weights of the rounds, (m/rad)², and the alternations per round.
const LAMBDAS: [f64; 6] = [1e-4, 2.5e-5, 6.25e-6, 1.6e-6, 4e-7, 1e-7];
const ALTERNATIONS: usize = 6;
const IK_STEPS: usize = 6;

/// Regressor columns of each chain joint's sensor model: which readings (0..3) it depends on
/// (plus a constant offset).
fn regressors(finger: Finger) -> &'static [&'static [usize]] {
    if finger == Finger::Thumb {
        &[&[0, 1], &[0, 1], &[0, 1], &[2], &[3]]
    } else {
        &[&[0], &[1], &[2], &[3]]
    }
}

/// Current sensor model as per-joint coefficient vectors `[c_1, …, c_k, β]` (regressor
/// order of [`regressors`]).
fn sensor_coefficients(p: &FingerParams, finger: Finger) -> Vec<Vec<f64>> {
    let g = p.gains;
    let b = &p.offsets;
    if finger == Finger::Thumb {
        let c = p.coupling.unwrap_or_default();
        vec![
            vec![g[0], c.t0_s1, b[0]],
            vec![c.t1_s0, g[1], b[1]],
            vec![c.twist_s0, c.twist_s1, b[2]],
            vec![g[2], b[3]],
            vec![g[3], b[4]],
        ]
    } else {
        (0..4).map(|k| vec![g[k], b[k]]).collect()
    }
}

#[allow(clippy::needless_range_loop)]
fn set_sensor_coefficients(p: &mut FingerParams, finger: Finger, c: &[Vec<f64>]) {
    if finger == Finger::Thumb {
        p.gains = [c[0][0], c[1][1], c[3][0], c[4][0]];
        p.offsets = vec![c[0][2], c[1][2], c[2][2], c[3][1], c[4][1]];
        p.coupling = Some(ThumbCoupling {
            t0_s1: c[0][1],
            t1_s0: c[1][0],
            twist_s0: c[2][0],
            twist_s1: c[2][1],
        });
    } else {
        for k in 0..4 {
            p.gains[k] = c[k][0];
            p.offsets[k] = c[k][1];
        }
    }
}

/// Least squares `min |A x − b|² + μ |x − x0|²` with a tiny `μ` (relative to `AᵀA`), so a
/// sensor that does not move keeps its gain instead of making the system singular.
fn ridge(a: &DMatrix<f64>, b: &DVector<f64>, x0: &[f64]) -> Option<Vec<f64>> {
    let ata = a.transpose() * a;
    let n = ata.nrows();
    let mu = 1e-9 * (0..n).map(|i| ata[(i, i)]).fold(0.0, f64::max).max(1e-30);
    let x0 = DVector::from_column_slice(x0);
    let lhs = &ata + DMatrix::identity(n, n) * mu;
    let rhs = a.transpose() * b + &x0 * mu;
    let x = lhs.cholesky()?.solve(&rhs);
    x.iter()
        .all(|v| v.is_finite())
        .then(|| x.iter().copied().collect())
}

/// The initial guess for `finger` from `data`, starting at `start` (usually the nominal
/// model). Never fails: an alternation step that cannot be solved keeps the previous values.
pub fn initial_guess(start: &FingerParams, finger: Finger, data: &[Sample]) -> FingerParams {
    let mut p = start.clone();
    let nj = finger.chain_joints();
    let regs = regressors(finger);
    let mut frames = ChainFrames::default();
    let mut dq = [Vector3::zeros(); 5];
    let mut dl = [Vector3::zeros(); 4];
    // latent chain angles of every pose, from the starting sensor model
    let mut theta: Vec<[f64; 5]> = data
        .iter()
        .map(|s| {
            let mut q = [0.0; 5];
            p.joint_angles(finger, &s.readings, &mut q);
            q
        })
        .collect();
    let min_len: Vec<f64> = start.lengths.iter().map(|l| 0.2 * l.abs()).collect();
    for &lambda in &LAMBDAS {
        for _ in 0..ALTERNATIONS {
            // 1. regularised per-pose IK
            for (s, q) in data.iter().zip(theta.iter_mut()) {
                let mut pred = [0.0; 5];
                p.joint_angles(finger, &s.readings, &mut pred);
                for _ in 0..IK_STEPS {
                    let tip = p.chain_derivatives(finger, q, &mut frames, &mut dq, &mut dl);
                    let e = s.tip - tip;
                    let mut h = SMatrix::<f64, 5, 5>::identity() * lambda;
                    let mut g = SVector::<f64, 5>::zeros();
                    for a in 0..nj {
                        g[a] = dq[a].dot(&e) + lambda * (pred[a] - q[a]);
                        for b in 0..nj {
                            h[(a, b)] += dq[a].dot(&dq[b]);
                        }
                    }
                    let Some(step) = h.cholesky().map(|c| c.solve(&g)) else {
                        break;
                    };
                    // at most 0.5 rad per step: the linearisation holds
                    let scale = (0.5 / step.amax().max(1e-300)).min(1.0);
                    for a in 0..nj {
                        q[a] += scale * step[a];
                    }
                    if step.amax() < 1e-9 {
                        break;
                    }
                }
            }
            // 2. linear sensor model per joint
            let mut coef = sensor_coefficients(&p, finger);
            for (j, reg) in regs.iter().enumerate() {
                let a = DMatrix::from_fn(data.len(), reg.len() + 1, |r, c| {
                    reg.get(c).map_or(1.0, |&k| data[r].readings[k])
                });
                let b = DVector::from_fn(data.len(), |r, _| theta[r][j]);
                if let Some(x) = ridge(&a, &b, &coef[j]) {
                    coef[j] = x;
                }
            }
            set_sensor_coefficients(&mut p, finger, &coef);
            // 3. lengths: the fingertip is linear in them at fixed angles
            let mut a = DMatrix::zeros(3 * data.len(), 4);
            let mut b = DVector::zeros(3 * data.len());
            let base = Vector3::from(p.base_xyz);
            for (r, (s, q)) in data.iter().zip(&theta).enumerate() {
                p.chain_derivatives(finger, q, &mut frames, &mut dq, &mut dl);
                for k in 0..3 {
                    for (c, d) in dl.iter().enumerate() {
                        a[(3 * r + k, c)] = d[k];
                    }
                    b[3 * r + k] = s.tip[k] - base[k];
                }
            }
            if let Some(x) = ridge(&a, &b, &p.lengths) {
                for k in 0..4 {
                    p.lengths[k] = x[k].max(min_len[k]);
                }
            }
        }
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::HandModel;
    use crate::sim::{simulate, SimOptions};

    /// A hand far from nominal (gains ×1.3, offsets +15°): the guess alone already puts every
    /// finger within a few millimetres, where plain LM from nominal found a wrong minimum.
    #[test]
    fn guess_is_close_for_a_hand_far_from_nominal() {
        let nominal = HandModel::nominal();
        let mut truth = nominal.clone();
        for f in Finger::ALL {
            let p = truth.finger_mut(f);
            p.gains.iter_mut().for_each(|g| *g *= 1.3);
            p.offsets.iter_mut().for_each(|b| *b += 15f64.to_radians());
        }
        let data = simulate(
            &truth,
            &SimOptions {
                poses: 40,
                vision_noise: 0.0,
                sensor_noise: 0.0,
                quantize: false,
                seed: 4,
                ..Default::default()
            },
        );
        for f in Finger::ALL {
            let d: Vec<Sample> = data.iter().filter(|s| s.finger == f).copied().collect();
            let g = initial_guess(nominal.finger(f), f, &d);
            let rms = (d
                .iter()
                .map(|s| (g.tip(f, &s.readings) - s.tip).norm_squared())
                .sum::<f64>()
                / d.len() as f64)
                .sqrt();
            assert!(rms < 3e-3, "{f:?}: rms {rms}");
        }
    }
}
