//! Pose design and acquisition guidance (issue 16 item 2): which glove readings to record so
//! that the scaled identification problem is well conditioned (eq. 13, κ < 100).
//!
//! Everything here works on the *information matrix* `M = Σ_p C_pᵀ C_p` of the unscaled
//! identification Jacobian (eqs. 7-9) and the extremal scaling (eq. 11, `h_j = 1 mm /
//! max_p ‖column_j(C_p)‖`): the condition number of the scaled stacked Jacobian is
//! `√(λ_max/λ_min)` of `H M H`, so adding or swapping a pose is a rank-3 update of an `n × n`
//! matrix instead of a new SVD of the `3m × n` stack.

use nalgebra::{DMatrix, Vector3};

use super::{extremal_scaling, CalibOptions};
use crate::data::Sample;
use crate::model::{param_names, ChainFrames, Finger, FingerParams};

/// Most poses [`advise`] proposes.
pub const ADVICE_POSES: usize = 10;

/// What a glove sensor of `finger` measures.
pub fn sensor_label(finger: Finger, k: usize) -> &'static str {
    if finger == Finger::Thumb {
        ["T0 roll", "T1 abduction", "T2 MCP flexion", "T3 IP flexion"][k]
    } else {
        ["abduction", "MCP flexion", "PIP flexion", "DIP flexion"][k]
    }
}

/// Per-pose Jacobians (3 × n each, stacked) of `params` at `readings`.
fn jacobians(params: &FingerParams, finger: Finger, readings: &[[f64; 4]]) -> DMatrix<f64> {
    let n = finger.param_count();
    let mut frames = ChainFrames::default();
    let mut cols = vec![0.0; 3 * n];
    let mut c = DMatrix::zeros(3 * readings.len(), n);
    for (p, s) in readings.iter().enumerate() {
        params.identification_jacobian(finger, s, &mut frames, &mut cols);
        for j in 0..n {
            for r in 0..3 {
                c[(3 * p + r, j)] = cols[3 * j + r];
            }
        }
    }
    c
}

/// Largest column norm of each parameter per pose (the extremal scaling's denominator).
fn column_maxima(c: &DMatrix<f64>) -> Vec<f64> {
    let h = extremal_scaling(c, 1.0);
    h.iter()
        .map(|v| if v.is_finite() { 1.0 / v } else { 0.0 })
        .collect()
}

/// Condition number of the scaled problem from its information matrix and column maxima.
fn cond_of(info: &DMatrix<f64>, colmax: &[f64]) -> f64 {
    let n = info.nrows();
    if colmax.iter().any(|&m| m <= 0.0) {
        return f64::INFINITY;
    }
    let scaled = DMatrix::from_fn(n, n, |i, j| info[(i, j)] / (colmax[i] * colmax[j]));
    let ev = scaled.symmetric_eigenvalues();
    let max = ev.max();
    let min = ev.min();
    if min <= 0.0 || max <= 0.0 {
        f64::INFINITY
    } else {
        (max / min).sqrt()
    }
}

fn block_info(c: &DMatrix<f64>, p: usize) -> DMatrix<f64> {
    let a = c.rows(3 * p, 3);
    a.transpose() * a
}

/// Pose design: picks `m` of the candidate readings greedily so that the scaled
/// information matrix `(CH)ᵀ(CH)` of `params` has the largest determinant (D-optimal
/// design). Uses only the model the experimenter already has (the initial parameters), so it
/// is a valid way to plan which poses to record. Returns candidate indices in pick order.
pub fn d_optimal_poses(
    params: &FingerParams,
    finger: Finger,
    candidates: &[[f64; 4]],
    m: usize,
) -> Vec<usize> {
    let n = finger.param_count();
    let k = candidates.len();
    let mut c = jacobians(params, finger, candidates);
    let h = extremal_scaling(&c, 1e-3);
    for j in 0..n {
        let hj = if h[j].is_finite() { h[j] } else { 0.0 };
        for i in 0..3 * k {
            c[(i, j)] *= hj;
        }
    }
    let mut info = DMatrix::<f64>::identity(n, n) * 1e-6;
    let mut chosen = Vec::with_capacity(m);
    let mut used = vec![false; k];
    for _ in 0..m.min(k) {
        let Some(inv) = info.clone().try_inverse() else {
            break;
        };
        let mut best = (f64::NEG_INFINITY, usize::MAX);
        for p in (0..k).filter(|&p| !used[p]) {
            let a = c.rows(3 * p, 3);
            let g = nalgebra::Matrix3::<f64>::identity()
                + nalgebra::Matrix3::from_iterator((a * &inv * a.transpose()).iter().cloned());
            let d = g.determinant();
            if d > best.0 {
                best = (d, p);
            }
        }
        if best.1 == usize::MAX {
            break;
        }
        used[best.1] = true;
        chosen.push(best.1);
        let a = c.rows(3 * best.1, 3);
        info += a.transpose() * a;
    }
    chosen
}

/// Condition-optimal design: starts from the D-optimal `m` of the candidates, then swaps
/// chosen poses for candidates while that lowers the condition number of the scaled problem
/// (eq. 13) of `params`, for at most `passes` passes over the chosen poses. Returns the
/// chosen candidate indices.
pub fn cond_optimal_poses(
    params: &FingerParams,
    finger: Finger,
    candidates: &[[f64; 4]],
    m: usize,
    passes: usize,
) -> Vec<usize> {
    let mut chosen = d_optimal_poses(params, finger, candidates, m);
    let c = jacobians(params, finger, candidates);
    let blocks: Vec<DMatrix<f64>> = (0..candidates.len()).map(|p| block_info(&c, p)).collect();
    // the scaling of the candidate set: extremal over every candidate
    let colmax = column_maxima(&c);
    let mut info = chosen.iter().fold(
        DMatrix::zeros(finger.param_count(), finger.param_count()),
        |acc, &p| acc + &blocks[p],
    );
    let mut cond = cond_of(&info, &colmax);
    let mut used = vec![false; candidates.len()];
    chosen.iter().for_each(|&p| used[p] = true);
    for _ in 0..passes {
        let mut improved = false;
        for slot in 0..chosen.len() {
            let without = &info - &blocks[chosen[slot]];
            let mut best = (cond, usize::MAX);
            for (p, b) in blocks.iter().enumerate() {
                if used[p] {
                    continue;
                }
                let k = cond_of(&(&without + b), &colmax);
                if k < best.0 * 0.999 {
                    best = (k, p);
                }
            }
            if best.1 != usize::MAX {
                used[chosen[slot]] = false;
                used[best.1] = true;
                info = without + &blocks[best.1];
                chosen[slot] = best.1;
                cond = best.0;
                improved = true;
            }
        }
        if !improved {
            break;
        }
    }
    chosen
}

/// Acquisition guidance: poses to add to the data.
#[derive(Clone, Debug)]
pub struct Advice {
    /// Proposed readings (counts), in the order they help most.
    pub poses: Vec<[f64; 4]>,
    /// Condition number of the scaled problem of the current model with the data alone.
    pub cond_before: f64,
    /// ... and with the proposed poses added.
    pub cond_after: f64,
    /// One-paragraph advice naming the sensors, the readings to reach and the angles.
    pub text: String,
}

/// Proposes poses to record next, until the condition number of the scaled problem (data
/// plus proposed poses, current model `params`) is below `0.8 · opts.cond_warn` (a margin:
/// the current model is an estimate) or `k` poses are proposed: greedily, from a grid of 5
/// levels per sensor over each sensor's `sensor_range`, the pose that lowers it most. The
/// text names each sensor's target reading (and the joint angle it gives) and which sensors
/// the weak parameter combination involves.
pub fn advise(
    params: &FingerParams,
    finger: Finger,
    data: &[Sample],
    opts: &CalibOptions,
    k: usize,
) -> Advice {
    let target = 0.8 * opts.cond_warn;
    let n = finger.param_count();
    let levels: usize = 5;
    let grid: Vec<[f64; 4]> = (0..levels * levels * levels * levels)
        .map(|i| {
            std::array::from_fn(|s| {
                let l = (i / levels.pow(s as u32)) % levels;
                let [lo, hi] = params.sensor_range[s];
                lo + (hi - lo) * l as f64 / (levels - 1) as f64
            })
        })
        .collect();
    let readings: Vec<[f64; 4]> = data.iter().map(|s| s.readings).collect();
    let cd = jacobians(params, finger, &readings);
    let cg = jacobians(params, finger, &grid);
    let mut info = cd.transpose() * &cd;
    let mut colmax = column_maxima(&cd);
    let gmax: Vec<Vec<f64>> = (0..grid.len())
        .map(|p| {
            (0..n)
                .map(|j| {
                    Vector3::new(cg[(3 * p, j)], cg[(3 * p + 1, j)], cg[(3 * p + 2, j)]).norm()
                })
                .collect()
        })
        .collect();
    let cond_before = cond_of(&info, &colmax);
    let mut poses = Vec::new();
    let mut cond = cond_before;
    for _ in 0..k {
        if cond < target {
            break;
        }
        let mut best = (f64::INFINITY, usize::MAX);
        for (p, gm) in gmax.iter().enumerate() {
            let cm: Vec<f64> = (0..n).map(|j| colmax[j].max(gm[j])).collect();
            let c = cond_of(&(&info + block_info(&cg, p)), &cm);
            if c < best.0 {
                best = (c, p);
            }
        }
        if best.1 == usize::MAX {
            break;
        }
        info += block_info(&cg, best.1);
        for j in 0..n {
            colmax[j] = colmax[j].max(gmax[best.1][j]);
        }
        cond = best.0;
        poses.push(grid[best.1]);
    }
    // which sensors the data's weakest direction involves
    let names = param_names(finger);
    let scaled = DMatrix::from_fn(n, n, |i, j| {
        let h = |j: usize| {
            if colmax[j] > 0.0 {
                1.0 / colmax[j]
            } else {
                0.0
            }
        };
        (cd.transpose() * &cd)[(i, j)] * h(i) * h(j)
    });
    let eig = scaled.symmetric_eigen();
    let imin = (0..n)
        .min_by(|&a, &b| eig.eigenvalues[a].total_cmp(&eig.eigenvalues[b]))
        .unwrap_or(0);
    let v = eig.eigenvectors.column(imin);
    let mut weak: Vec<(usize, f64)> = (0..n).map(|j| (j, v[j])).collect();
    weak.sort_by(|a, b| b.1.abs().total_cmp(&a.1.abs()));
    let mut sensors: Vec<usize> = weak
        .iter()
        .filter(|(_, w)| w.abs() > 0.25)
        .filter_map(|(j, _)| super::sensor_of(finger, *j))
        .collect();
    sensors.sort_unstable();
    sensors.dedup();
    let mut text = String::new();
    if !sensors.is_empty() {
        text.push_str(&format!(
            "the weak combination ({}) involves sensor(s) {}; ",
            weak.iter()
                .take(4)
                .map(|(j, w)| format!("{w:+.2}·{}", names[*j]))
                .collect::<Vec<_>>()
                .join(" "),
            sensors
                .iter()
                .map(|&s| format!("s{s} ({})", sensor_label(finger, s)))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    text.push_str(&format!(
        "record these {} pose(s) (condition number {:.0} -> {:.0} with them, on the current model):",
        poses.len(),
        cond_before,
        cond
    ));
    let mut q = [0.0; 5];
    for (i, s) in poses.iter().enumerate() {
        params.joint_angles(finger, s, &mut q);
        let sensed: [f64; 4] = if finger == Finger::Thumb {
            [q[0], q[1], q[3], q[4]]
        } else {
            [q[0], q[1], q[2], q[3]]
        };
        let parts: Vec<String> = (0..4)
            .map(|k| {
                let [lo, hi] = params.sensor_range[k];
                let where_ = if s[k] <= lo + 1e-9 {
                    "low end"
                } else if s[k] >= hi - 1e-9 {
                    "high end"
                } else {
                    "mid"
                };
                format!(
                    "s{k} {} {:.0} ({where_}, {:.0}°)",
                    sensor_label(finger, k),
                    s[k],
                    sensed[k].to_degrees()
                )
            })
            .collect();
        text.push_str(&format!(" [{}] {};", i + 1, parts.join(", ")));
    }
    if cond >= target {
        text.push_str(&format!(
            " more poses of this data set's kind cannot bring it below {:.0}: record a new \
             session planned for this hand (glove_calib plan --params <this model> --poses 60 \
             gives readings whose condition number is below 100 for 10 of 10 seeds of the \
             sweep in docs/hand_teleop.md)",
            opts.cond_warn
        ));
    }
    Advice {
        poses,
        cond_before,
        cond_after: cond,
        text,
    }
}
