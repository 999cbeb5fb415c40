//! Open-loop kinematic calibration (section III-C/D of Hu et al.).
//!
//! Per finger, the fingertip errors of `m` poses are stacked (eq. 5-6) and the calibrated
//! parameters are found by damped least squares on the scaled problem (eq. 12): the
//! Jacobian `C` is the analytic identification Jacobian (eqs. 7-9,
//! [`FingerParams::identification_jacobian`]), scaled column-wise by the extremal scaling
//! `h_j = min_p 1 mm / ‖column_j(C_p)‖` (eq. 11). The solver is the `levenberg-marquardt`
//! crate (an SVD-free, QR-based trust-region LM, the damped version of eq. 10).
//!
//! Before fitting, the scaled Jacobian at the initial parameters is decomposed by SVD: a
//! singular value below `rank_tol · σ1` means a parameter combination the data cannot
//! identify (the right singular vector names it). Such a combination is **reported** and the
//! parameter with the largest weight in it is held at its initial value, never silently
//! fitted. After the fit the condition number `κ = σ1/σr` of the scaled Jacobian (eq. 13) is
//! reported; above `cond_warn` (100, Schroer) a warning names the parameters of the weakest
//! direction and the glove sensors whose range the new poses should cover.

use levenberg_marquardt::{LeastSquaresProblem, LevenbergMarquardt};
use nalgebra::{DMatrix, DVector, Dyn, Owned, Vector3};
use serde::Serialize;

use crate::data::Sample;
use crate::error::HandError;
use crate::model::{param_names, ChainFrames, Finger, FingerParams, HandModel};

/// Calibration settings.
#[derive(Clone, Debug)]
pub struct CalibOptions {
    /// Relative singular value below which a direction is unidentifiable.
    pub rank_tol: f64,
    /// Condition number above which a warning is issued (eq. 13; Schroer: 100).
    pub cond_warn: f64,
    /// Reference endpoint displacement of the extremal scaling (eq. 11), m.
    pub scaling_displacement: f64,
    /// LM `patience` (the function-evaluation budget is `patience · (n + 1)`).
    pub patience: usize,
    /// LM relative tolerance on the objective and on the scaled step.
    pub tol: f64,
}

impl Default for CalibOptions {
    fn default() -> Self {
        CalibOptions {
            rank_tol: 1e-6,
            cond_warn: 100.0,
            scaling_displacement: 1e-3,
            patience: 100,
            tol: 1e-10,
        }
    }
}

/// Change of one parameter.
#[derive(Clone, Debug, Serialize)]
pub struct ParamChange {
    /// Parameter name (see [`param_names`]).
    pub name: String,
    /// Value before calibration.
    pub initial: f64,
    /// Value after calibration.
    pub calibrated: f64,
    /// Whether the parameter was fitted (false: held, unidentifiable from the data).
    pub fitted: bool,
}

/// Fingertip error statistics over a data set (m).
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct ErrorStats {
    /// Number of samples.
    pub samples: usize,
    /// Root-mean-square error norm.
    pub rms: f64,
    /// Largest error norm.
    pub max: f64,
    /// Mean error norm.
    pub mean: f64,
}

impl ErrorStats {
    /// Statistics of error norms.
    pub fn from_errors(e: &[f64]) -> Self {
        if e.is_empty() {
            return ErrorStats::default();
        }
        let n = e.len() as f64;
        ErrorStats {
            samples: e.len(),
            rms: (e.iter().map(|x| x * x).sum::<f64>() / n).sqrt(),
            max: e.iter().cloned().fold(0.0, f64::max),
            mean: e.iter().sum::<f64>() / n,
        }
    }
}

/// Result of calibrating one finger.
#[derive(Clone, Debug, Serialize)]
pub struct FingerReport {
    /// The calibrated finger.
    pub finger: Finger,
    /// Poses of this finger used in the fit.
    pub poses: usize,
    /// Errors with the initial parameters.
    pub before: ErrorStats,
    /// Errors with the calibrated parameters.
    pub after: ErrorStats,
    /// Condition number of the scaled identification Jacobian at the solution (eq. 13).
    pub condition_number: f64,
    /// Singular values of the scaled Jacobian at the solution, largest first.
    pub singular_values: Vec<f64>,
    /// Whether the solver met its convergence test.
    pub converged: bool,
    /// Solver termination reason.
    pub termination: String,
    /// Residual evaluations used by the solver.
    pub evaluations: usize,
    /// Parameter values before and after.
    pub params: Vec<ParamChange>,
    /// Unidentifiable combinations found, as `a·name + b·name …` strings.
    pub unidentifiable: Vec<String>,
    /// Warnings and advice (condition number, sensor coverage).
    pub warnings: Vec<String>,
    /// Error norms of every calibration sample after calibration (m).
    #[serde(skip)]
    pub errors: Vec<f64>,
}

/// Result of a whole-hand calibration.
#[derive(Clone, Debug, Serialize)]
pub struct CalibrationReport {
    /// One entry per finger that had data.
    pub fingers: Vec<FingerReport>,
}

impl CalibrationReport {
    /// Human-readable multi-line summary.
    pub fn summary(&self) -> String {
        let mut s = String::new();
        s.push_str(
            "finger   poses  rms_before  max_before  rms_after  max_after   cond   converged\n",
        );
        for r in &self.fingers {
            s.push_str(&format!(
                "{:<8} {:>5}  {:>8.3}mm  {:>8.3}mm  {:>7.3}mm  {:>7.3}mm  {:>6.1}  {} ({}, {} evals)\n",
                r.finger.name(),
                r.poses,
                r.before.rms * 1e3,
                r.before.max * 1e3,
                r.after.rms * 1e3,
                r.after.max * 1e3,
                r.condition_number,
                if r.converged { "yes" } else { "NO" },
                r.termination,
                r.evaluations
            ));
        }
        for r in &self.fingers {
            s.push_str(&format!(
                "\n[{}] parameter changes (initial -> calibrated):\n",
                r.finger.name()
            ));
            for p in &r.params {
                s.push_str(&format!(
                    "  {:<12} {:>12.6} -> {:>12.6}  ({:+.6}){}\n",
                    p.name,
                    p.initial,
                    p.calibrated,
                    p.calibrated - p.initial,
                    if p.fitted {
                        ""
                    } else {
                        "  HELD (unidentifiable)"
                    }
                ));
            }
            for u in &r.unidentifiable {
                s.push_str(&format!("  unidentifiable: {u}\n"));
            }
            for w in &r.warnings {
                s.push_str(&format!("  WARNING: {w}\n"));
            }
        }
        s
    }
}

/// Fingertip error norms (m) of `model` on `samples`.
pub fn errors(model: &HandModel, samples: &[Sample]) -> Vec<f64> {
    samples
        .iter()
        .map(|s| (model.finger(s.finger).tip(s.finger, &s.readings) - s.tip).norm())
        .collect()
}

/// Stacked identification Jacobian (3m × r, eq. 5) and residual `tip(φ) − measured`.
fn stacked(params: &FingerParams, f: Finger, data: &[Sample]) -> (DMatrix<f64>, DVector<f64>) {
    let n = f.param_count();
    let m = data.len();
    let mut c = DMatrix::zeros(3 * m, n);
    let mut r = DVector::zeros(3 * m);
    let mut frames = ChainFrames::default();
    let mut col = vec![0.0; 3 * n];
    for (p, s) in data.iter().enumerate() {
        let tip = params.identification_jacobian(f, &s.readings, &mut frames, &mut col);
        for j in 0..n {
            for k in 0..3 {
                c[(3 * p + k, j)] = col[3 * j + k];
            }
        }
        let e = tip - s.tip;
        for k in 0..3 {
            r[3 * p + k] = e[k];
        }
    }
    (c, r)
}

/// Extremal scaling (eq. 11): `h_j = min_p d / ‖column_j(C_p)‖`; `∞` when the column
/// vanishes at every pose.
pub fn extremal_scaling(c: &DMatrix<f64>, displacement: f64) -> Vec<f64> {
    let m = c.nrows() / 3;
    (0..c.ncols())
        .map(|j| {
            let mut best = f64::INFINITY;
            for p in 0..m {
                let n = Vector3::new(c[(3 * p, j)], c[(3 * p + 1, j)], c[(3 * p + 2, j)]).norm();
                if n > 0.0 {
                    best = best.min(displacement / n);
                }
            }
            best
        })
        .collect()
}

fn scaled(c: &DMatrix<f64>, free: &[usize], h: &[f64]) -> DMatrix<f64> {
    DMatrix::from_fn(c.nrows(), free.len(), |i, j| c[(i, free[j])] * h[free[j]])
}

fn singular_values(a: &DMatrix<f64>) -> (Vec<f64>, Option<DMatrix<f64>>) {
    let svd = a.clone().svd(false, true);
    let mut idx: Vec<usize> = (0..svd.singular_values.len()).collect();
    idx.sort_by(|&a, &b| svd.singular_values[b].total_cmp(&svd.singular_values[a]));
    let sv = idx.iter().map(|&i| svd.singular_values[i]).collect();
    let vt = svd
        .v_t
        .map(|vt| DMatrix::from_fn(idx.len(), vt.ncols(), |i, j| vt[(idx[i], j)]));
    (sv, vt)
}

/// Condition number `σ1/σr` (eq. 13); ∞ for a rank-deficient matrix.
pub fn condition_number(a: &DMatrix<f64>) -> f64 {
    let (sv, _) = singular_values(a);
    match (sv.first(), sv.last()) {
        (Some(&a), Some(&b)) if b > 0.0 => a / b,
        _ => f64::INFINITY,
    }
}

struct Problem<'a> {
    finger: Finger,
    data: &'a [Sample],
    base: FingerParams,
    phi0: Vec<f64>,
    free: Vec<usize>,
    h: Vec<f64>,
    x: DVector<f64>,
    current: FingerParams,
}

impl Problem<'_> {
    fn params_for(&self, x: &DVector<f64>) -> FingerParams {
        let mut phi = self.phi0.clone();
        for (k, &j) in self.free.iter().enumerate() {
            phi[j] = self.phi0[j] + self.h[j] * x[k];
        }
        let mut p = self.base.clone();
        p.set_vector(self.finger, &phi);
        p
    }
}

impl LeastSquaresProblem<f64, Dyn, Dyn> for Problem<'_> {
    type ResidualStorage = Owned<f64, Dyn>;
    type JacobianStorage = Owned<f64, Dyn, Dyn>;
    type ParameterStorage = Owned<f64, Dyn>;

    fn set_params(&mut self, x: &DVector<f64>) {
        self.x.copy_from(x);
        self.current = self.params_for(x);
    }
    fn params(&self) -> DVector<f64> {
        self.x.clone()
    }
    fn residuals(&self) -> Option<DVector<f64>> {
        let mut r = DVector::zeros(3 * self.data.len());
        for (p, s) in self.data.iter().enumerate() {
            let e = self.current.tip(self.finger, &s.readings) - s.tip;
            for k in 0..3 {
                r[3 * p + k] = e[k];
            }
        }
        r.iter().all(|v| v.is_finite()).then_some(r)
    }
    fn jacobian(&self) -> Option<DMatrix<f64>> {
        let (c, _) = stacked(&self.current, self.finger, self.data);
        Some(scaled(&c, &self.free, &self.h))
    }
}

fn weakest_direction_names(
    vt: &DMatrix<f64>,
    free: &[usize],
    names: &[String],
) -> Vec<(usize, f64)> {
    let row = vt.nrows() - 1;
    let mut comps: Vec<(usize, f64)> = (0..free.len()).map(|k| (free[k], vt[(row, k)])).collect();
    comps.sort_by(|a, b| b.1.abs().total_cmp(&a.1.abs()));
    let _ = names;
    comps
}

fn describe(comps: &[(usize, f64)], names: &[String]) -> String {
    comps
        .iter()
        .filter(|(_, w)| w.abs() > 0.1)
        .map(|(j, w)| format!("{w:+.2}·{}", names[*j]))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Which glove sensor (0..3) a parameter of `finger` depends on, if any.
fn sensor_of(finger: Finger, j: usize) -> Option<usize> {
    if finger == Finger::Thumb {
        match j {
            0 | 9 | 13 | 14 => Some(0),
            1 | 10 | 15 | 16 => Some(1),
            2 => Some(0),
            3 | 11 => Some(2),
            4 | 12 => Some(3),
            _ => None,
        }
    } else {
        match j {
            0..=3 => Some(j),
            8..=11 => Some(j - 8),
            _ => None,
        }
    }
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
    let mut frames = ChainFrames::default();
    let mut cols = vec![0.0; 3 * n];
    let mut c = DMatrix::zeros(3 * k, n);
    for (p, s) in candidates.iter().enumerate() {
        params.identification_jacobian(finger, s, &mut frames, &mut cols);
        for j in 0..n {
            for r in 0..3 {
                c[(3 * p + r, j)] = cols[3 * j + r];
            }
        }
    }
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

/// Calibrates one finger from its samples, starting at `initial`.
pub fn calibrate_finger(
    initial: &FingerParams,
    finger: Finger,
    data: &[Sample],
    opts: &CalibOptions,
) -> Result<(FingerParams, FingerReport), HandError> {
    let n = finger.param_count();
    if let Some(s) = data.iter().find(|s| s.finger != finger) {
        return Err(HandError::InvalidData(format!(
            "sample of pose {} is for {}, not {}",
            s.pose,
            s.finger.name(),
            finger.name()
        )));
    }
    if 3 * data.len() < n {
        return Err(HandError::NotEnoughData {
            finger: finger.name().to_string(),
            needed: n.div_ceil(3),
            got: data.len(),
        });
    }
    let names = param_names(finger);
    let phi0 = initial.to_vector(finger);
    let (c0, r0) = stacked(initial, finger, data);
    let before_err: Vec<f64> = (0..data.len())
        .map(|p| Vector3::new(r0[3 * p], r0[3 * p + 1], r0[3 * p + 2]).norm())
        .collect();
    let h = extremal_scaling(&c0, opts.scaling_displacement);
    let mut free: Vec<usize> = (0..n).filter(|&j| h[j].is_finite()).collect();
    let mut unidentifiable = Vec::new();
    let mut warnings = Vec::new();
    for j in 0..n {
        if !h[j].is_finite() {
            unidentifiable.push(format!(
                "{} (no effect on the fingertip in these poses)",
                names[j]
            ));
        }
    }
    // rank check: remove one parameter per null direction
    loop {
        if free.is_empty() {
            break;
        }
        let a = scaled(&c0, &free, &h);
        let (sv, vt) = singular_values(&a);
        let smax = sv[0];
        let smin = *sv.last().unwrap_or(&0.0);
        if smax > 0.0 && smin > opts.rank_tol * smax && free.len() <= a.nrows() {
            break;
        }
        let Some(vt) = vt else { break };
        let comps = weakest_direction_names(&vt, &free, &names);
        let (worst, _) = comps[0];
        unidentifiable.push(format!(
            "{} = const (σr/σ1 = {:.1e}); holding {} at its initial value",
            describe(&comps, &names),
            smin / smax.max(f64::MIN_POSITIVE),
            names[worst]
        ));
        free.retain(|&j| j != worst);
    }
    let mut problem = Problem {
        finger,
        data,
        base: initial.clone(),
        phi0: phi0.clone(),
        free: free.clone(),
        h: h.clone(),
        x: DVector::zeros(free.len()),
        current: initial.clone(),
    };
    problem.set_params(&DVector::zeros(free.len()));
    let (problem, report) = LevenbergMarquardt::new()
        .with_ftol(opts.tol)
        .with_xtol(opts.tol)
        .with_patience(opts.patience)
        .minimize(problem);
    let params = problem.current.clone();
    let converged = report.termination.was_successful();
    let (c1, r1) = stacked(&params, finger, data);
    let errors: Vec<f64> = (0..data.len())
        .map(|p| Vector3::new(r1[3 * p], r1[3 * p + 1], r1[3 * p + 2]).norm())
        .collect();
    let h1 = extremal_scaling(&c1, opts.scaling_displacement);
    let a1 = scaled(&c1, &free, &h1);
    let (sv, vt) = singular_values(&a1);
    let cond = match (sv.first(), sv.last()) {
        (Some(&a), Some(&b)) if b > 0.0 => a / b,
        _ => f64::INFINITY,
    };
    if cond > opts.cond_warn {
        let mut msg = format!(
            "condition number {cond:.0} > {:.0}: weakest parameter combination {}",
            opts.cond_warn,
            vt.as_ref()
                .map(|vt| describe(&weakest_direction_names(vt, &free, &names), &names))
                .unwrap_or_default()
        );
        if let Some(vt) = &vt {
            let comps = weakest_direction_names(vt, &free, &names);
            let mut sensors: Vec<usize> = comps
                .iter()
                .filter(|(_, w)| w.abs() > 0.3)
                .filter_map(|(j, _)| sensor_of(finger, *j))
                .collect();
            sensors.sort();
            sensors.dedup();
            if sensors.is_empty() {
                msg.push_str("; add poses with more varied flexion of the whole finger");
            } else {
                for k in sensors {
                    let (lo, hi) = data
                        .iter()
                        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), s| {
                            (a.min(s.readings[k]), b.max(s.readings[k]))
                        });
                    msg.push_str(&format!(
                        "; add poses that move sensor s{k} over a wider range (seen {lo:.0}..{hi:.0} counts), independently of the other joints"
                    ));
                }
            }
        }
        warnings.push(msg);
    }
    // coverage advice even when well conditioned
    for k in 0..4 {
        let v: Vec<f64> = data.iter().map(|s| s.readings[k]).collect();
        let mean = v.iter().sum::<f64>() / v.len() as f64;
        let sd = (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / v.len() as f64).sqrt();
        if sd < 5.0 {
            warnings.push(format!(
                "sensor s{k} barely moves in the data (std {sd:.1} counts): its gain/offset are poorly determined"
            ));
        }
    }
    if !converged {
        warnings.push(format!("solver did not converge: {:?}", report.termination));
    }
    let phi1 = params.to_vector(finger);
    let params_report = (0..n)
        .map(|j| ParamChange {
            name: names[j].clone(),
            initial: phi0[j],
            calibrated: phi1[j],
            fitted: free.contains(&j),
        })
        .collect();
    let termination = match report.termination {
        levenberg_marquardt::TerminationReason::Converged { ftol, xtol } => {
            format!("converged (ftol {ftol}, xtol {xtol})")
        }
        ref t => format!("{t:?}"),
    };
    Ok((
        params,
        FingerReport {
            finger,
            poses: data.len(),
            before: ErrorStats::from_errors(&before_err),
            after: ErrorStats::from_errors(&errors),
            condition_number: cond,
            singular_values: sv,
            converged,
            termination,
            evaluations: report.number_of_evaluations,
            params: params_report,
            unidentifiable,
            warnings,
            errors,
        },
    ))
}

/// Refuses a calibrated finger that must not be saved or used: a parameter that is not finite,
/// a length that is not positive (readings of 1e300 gave a negative one), or errors that
/// overflow (tips of 1e300 m). The error names the finger.
fn check_result(f: Finger, p: &FingerParams, r: &FingerReport) -> Result<(), HandError> {
    let unusable = |why: String| {
        Err(HandError::InvalidData(format!(
            "{}: calibration gave an unusable model ({why}); the data is far out of range, \
             nothing is saved",
            f.name()
        )))
    };
    p.check(f).or_else(|e| unusable(e.to_string()))?;
    if let Some(l) = p.lengths.iter().find(|&&l| !l.is_finite() || l <= 0.0) {
        return unusable(format!("length {l} m is not positive"));
    }
    let stats = [&r.before, &r.after];
    if stats
        .iter()
        .any(|s| !(s.rms.is_finite() && s.max.is_finite()))
    {
        return unusable(format!(
            "fingertip errors not finite: rms {} m, max {} m",
            r.after.rms, r.after.max
        ));
    }
    Ok(())
}

/// Calibrates every finger that has samples; fingers without data keep their initial
/// parameters. `progress` is called after each finger.
pub fn calibrate(
    initial: &HandModel,
    samples: &[Sample],
    opts: &CalibOptions,
    mut progress: impl FnMut(Finger),
) -> Result<(HandModel, CalibrationReport), HandError> {
    initial.validate()?;
    let mut model = initial.clone();
    let mut fingers = Vec::new();
    for f in Finger::ALL {
        let data: Vec<Sample> = samples.iter().filter(|s| s.finger == f).copied().collect();
        if !data.is_empty() {
            let (p, r) = calibrate_finger(initial.finger(f), f, &data, opts)?;
            check_result(f, &p, &r)?;
            *model.finger_mut(f) = p;
            fingers.push(r);
        }
        progress(f);
    }
    if fingers.is_empty() {
        return Err(HandError::InvalidData("no samples".into()));
    }
    Ok((model, CalibrationReport { fingers }))
}
