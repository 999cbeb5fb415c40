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

pub mod checks;
pub mod design;
mod init;

pub use design::d_optimal_poses;
pub use init::initial_guess;

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
    /// Start the fit from the data-driven initial guess ([`initial_guess`]) as well as from
    /// the initial model, and keep the better plausible result (true by default).
    pub robust_start: bool,
    /// Expected vision noise, standard deviation per axis (m): sets the residual test (a fit
    /// whose rms fingertip error exceeds `residual_factor · √3 · vision_noise`, at least
    /// 1 mm, fails) and the outlier test.
    pub vision_noise: f64,
    /// See `vision_noise`.
    pub residual_factor: f64,
    /// Condition number of the full scaled problem (eq. 13, every parameter) above which a
    /// finger fails: the poses do not determine its parameters (duplicate or too similar
    /// poses, a sensor that does not move). Between `cond_warn` and this: a warning.
    pub cond_max: f64,
    /// Valid raw readings `[min, max]` (counts) of the glove (8-bit: 0..255); rows outside
    /// are refused, naming them.
    pub raw_range: [f64; 2],
    /// Fingers to calibrate; `None`: all five, and a finger without rows is an error. Rows of
    /// fingers not named are ignored (they keep their initial parameters).
    pub fingers: Option<Vec<Finger>>,
    /// A fingertip error above `outlier_factor` × the median error (and above 3 mm) marks its
    /// row as an outlier: it is named, left out and the finger refitted.
    pub outlier_factor: f64,
    /// Largest share of a finger's rows that may be outliers before the finger fails.
    pub max_outlier_share: f64,
}

impl Default for CalibOptions {
    fn default() -> Self {
        CalibOptions {
            rank_tol: 1e-6,
            cond_warn: 100.0,
            scaling_displacement: 1e-3,
            patience: 100,
            tol: 1e-10,
            robust_start: true,
            vision_noise: 1e-3,
            residual_factor: 2.0,
            cond_max: 1.0e4,
            raw_range: [0.0, 255.0],
            fingers: None,
            outlier_factor: 5.0,
            max_outlier_share: 0.1,
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

/// A data row left out of the fit because its fingertip error is far above the others'.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Outlier {
    /// 0-based position of the row in the data given to [`calibrate`] (in the finger's data
    /// for [`calibrate_finger`]); data row `row + 1` in messages.
    pub row: usize,
    /// Its pose id.
    pub pose: usize,
    /// Its fingertip error under the fit made without it (m).
    pub error: f64,
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
    /// Condition number of the full scaled problem at the solution, every parameter
    /// included (eq. 13); ∞ when the poses do not determine them all.
    pub full_condition_number: f64,
    /// Where the kept fit started: `initial guess` (data-driven) or `initial model`.
    pub start: String,
    /// Rows left out of the fit as outliers.
    pub outliers: Vec<Outlier>,
    /// Reasons this finger's result must not be used (empty: it passed every check).
    pub failures: Vec<String>,
    /// Error norms of every calibration sample after calibration (m), outliers included.
    #[serde(skip)]
    pub errors: Vec<f64>,
}

/// Result of a whole-hand calibration.
#[derive(Clone, Debug, Serialize)]
pub struct CalibrationReport {
    /// One entry per calibrated finger.
    pub fingers: Vec<FingerReport>,
    /// Notes on the data as a whole (ignored rows of fingers not calibrated).
    pub notes: Vec<String>,
}

impl CalibrationReport {
    /// Every failure of every finger, as `finger: reason`.
    pub fn failures(&self) -> Vec<String> {
        self.fingers
            .iter()
            .flat_map(|r| {
                r.failures
                    .iter()
                    .map(move |f| format!("{}: {f}", r.finger.name()))
            })
            .collect()
    }

    /// `Ok` when every finger passed its checks; else an error listing every failure. Call it
    /// before using or saving the calibrated model.
    pub fn ensure_passed(&self) -> Result<(), HandError> {
        let f = self.failures();
        if f.is_empty() {
            Ok(())
        } else {
            Err(HandError::CalibrationFailed(f.join("; ")))
        }
    }

    /// Human-readable multi-line summary.
    pub fn summary(&self) -> String {
        let mut s = String::new();
        s.push_str(
            "finger   poses  rms_before  max_before  rms_after  max_after   cond  cond_all  result\n",
        );
        for r in &self.fingers {
            s.push_str(&format!(
                "{:<8} {:>5}  {:>8.3}mm  {:>8.3}mm  {:>7.3}mm  {:>7.3}mm  {:>6.1}  {:>8.1}  {} (start: {}, {}, {} evals)\n",
                r.finger.name(),
                r.poses,
                r.before.rms * 1e3,
                r.before.max * 1e3,
                r.after.rms * 1e3,
                r.after.max * 1e3,
                r.condition_number,
                r.full_condition_number,
                if r.failures.is_empty() { "ok" } else { "FAILED" },
                r.start,
                r.termination,
                r.evaluations
            ));
        }
        for n in &self.notes {
            s.push_str(&format!("note: {n}\n"));
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
            if !r.outliers.is_empty() {
                s.push_str(&format!(
                    "  WARNING: {} outlier row(s) left out of the fit (fingertip error far above the others): {}\n",
                    r.outliers.len(),
                    r.outliers
                        .iter()
                        .map(|o| format!(
                            "data row {} (pose {}, error {:.1} mm)",
                            o.row + 1,
                            o.pose,
                            o.error * 1e3
                        ))
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
            for w in &r.warnings {
                s.push_str(&format!("  WARNING: {w}\n"));
            }
            for f in &r.failures {
                s.push_str(&format!("  FAILED: {f}\n"));
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

/// One Levenberg-Marquardt fit from `start`: unidentifiable directions at `start` are held.
struct Fit {
    params: FingerParams,
    free: Vec<usize>,
    unidentifiable: Vec<String>,
    converged: bool,
    termination: String,
    evaluations: usize,
    cost: f64,
}

fn fit_from(start: &FingerParams, finger: Finger, data: &[Sample], opts: &CalibOptions) -> Fit {
    let n = finger.param_count();
    let names = param_names(finger);
    let phi0 = start.to_vector(finger);
    let (c0, _) = stacked(start, finger, data);
    let h = extremal_scaling(&c0, opts.scaling_displacement);
    let mut free: Vec<usize> = (0..n).filter(|&j| h[j].is_finite()).collect();
    let mut unidentifiable = Vec::new();
    for j in 0..n {
        if !h[j].is_finite() {
            unidentifiable.push(format!(
                "{} (no effect on the fingertip in these poses)",
                names[j]
            ));
        }
    }
    // rank check: remove one parameter per null direction
    while !free.is_empty() {
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
        base: start.clone(),
        phi0,
        free: free.clone(),
        h,
        x: DVector::zeros(free.len()),
        current: start.clone(),
    };
    problem.set_params(&DVector::zeros(free.len()));
    let (problem, report) = LevenbergMarquardt::new()
        .with_ftol(opts.tol)
        .with_xtol(opts.tol)
        .with_patience(opts.patience)
        .minimize(problem);
    let params = problem.current;
    let cost = errors_of(&params, finger, data)
        .iter()
        .map(|e| e * e)
        .sum::<f64>();
    let termination = match report.termination {
        levenberg_marquardt::TerminationReason::Converged { ftol, xtol } => {
            format!("converged (ftol {ftol}, xtol {xtol})")
        }
        ref t => format!("{t:?}"),
    };
    Fit {
        params,
        free,
        unidentifiable,
        converged: report.termination.was_successful(),
        termination,
        evaluations: report.number_of_evaluations,
        cost: if cost.is_finite() {
            cost
        } else {
            f64::INFINITY
        },
    }
}

/// Fingertip error norms (m) of one finger's parameters on its samples.
fn errors_of(p: &FingerParams, finger: Finger, data: &[Sample]) -> Vec<f64> {
    data.iter()
        .map(|s| (p.tip(finger, &s.readings) - s.tip).norm())
        .collect()
}

/// Fits from every start (the data-driven guess and the initial model when
/// `opts.robust_start`) and keeps the plausible fit with the smallest residual (any fit when
/// none is plausible). When that fit is implausible or leaves a residual above
/// [`checks::rms_limit`], more starts are tried: the data-driven guess from the initial
/// model with its gains ×0.7 / ×1.3 and its offsets −15° / +15°.
fn best_fit(
    initial: &FingerParams,
    finger: Finger,
    data: &[Sample],
    opts: &CalibOptions,
) -> (Fit, &'static str) {
    let mut best: Option<(bool, Fit, &'static str)> = None;
    let consider =
        |best: &mut Option<(bool, Fit, &'static str)>, start: FingerParams, name: &'static str| {
            let fit = fit_from(&start, finger, data, opts);
            let ok = checks::implausible(initial, &fit.params, finger).is_none();
            let better = match best {
                None => true,
                Some((bok, b, _)) => (ok && !*bok) || (ok == *bok && fit.cost < b.cost),
            };
            if better {
                *best = Some((ok, fit, name));
            }
        };
    if opts.robust_start {
        consider(
            &mut best,
            initial_guess(initial, finger, data),
            "initial guess",
        );
    }
    consider(&mut best, initial.clone(), "initial model");
    let acceptable = |b: &Option<(bool, Fit, &'static str)>| {
        b.as_ref().is_some_and(|(ok, f, _)| {
            *ok && (f.cost / data.len().max(1) as f64).sqrt() <= checks::rms_limit(opts)
        })
    };
    if opts.robust_start && !acceptable(&best) {
        let deg = std::f64::consts::PI / 180.0;
        for (gain, off) in [(1.3, 15.0), (0.7, -15.0), (1.3, -15.0), (0.7, 15.0)] {
            let mut start = initial.clone();
            start.gains.iter_mut().for_each(|g| *g *= gain);
            start.offsets.iter_mut().for_each(|b| *b += off * deg);
            consider(
                &mut best,
                initial_guess(&start, finger, data),
                "shifted initial guess",
            );
            if acceptable(&best) {
                break;
            }
        }
    }
    let (_, fit, name) = best.expect("at least one start");
    (fit, name)
}

/// Calibrates one finger from its samples, starting at `initial`: the fit from the
/// data-driven initial guess and from `initial` (see [`CalibOptions::robust_start`]),
/// outliers named and left out, then the checks of the result (residual, plausibility,
/// identifiability of the full problem) recorded in [`FingerReport::failures`].
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
    let before_err = errors_of(initial, finger, data);
    let (mut fit, mut start) = best_fit(initial, finger, data, opts);
    // outliers: rows far above the typical error are named, left out and the finger refitted
    let mut outliers = Vec::new();
    let mut kept: Vec<Sample> = data.to_vec();
    let mut kept_rows: Vec<usize> = (0..data.len()).collect();
    for _ in 0..3 {
        let e = errors_of(&fit.params, finger, &kept);
        let limit = checks::outlier_limit(&e, opts);
        let bad: Vec<usize> = (0..kept.len()).filter(|&i| e[i] > limit).collect();
        if bad.is_empty() || kept.len() - bad.len() < n {
            break;
        }
        for &i in &bad {
            outliers.push(Outlier {
                row: kept_rows[i],
                pose: kept[i].pose,
                error: e[i],
            });
        }
        let keep: Vec<usize> = (0..kept.len()).filter(|i| !bad.contains(i)).collect();
        kept = keep.iter().map(|&i| kept[i]).collect();
        kept_rows = keep.iter().map(|&i| kept_rows[i]).collect();
        (fit, start) = best_fit(initial, finger, &kept, opts);
    }
    outliers.sort_by_key(|o| o.row);
    let params = fit.params.clone();
    let free = &fit.free;
    let errors = errors_of(&params, finger, data);
    let kept_errors = errors_of(&params, finger, &kept);
    let (c1, _) = stacked(&params, finger, &kept);
    let h1 = extremal_scaling(&c1, opts.scaling_displacement);
    let a1 = scaled(&c1, free, &h1);
    let (sv, vt) = singular_values(&a1);
    let cond = match (sv.first(), sv.last()) {
        (Some(&a), Some(&b)) if b > 0.0 => a / b,
        _ => f64::INFINITY,
    };
    let all: Vec<usize> = (0..n).collect();
    let full_cond = if h1.iter().all(|h| h.is_finite()) {
        condition_number(&scaled(&c1, &all, &h1))
    } else {
        f64::INFINITY
    };
    let mut warnings = Vec::new();
    if cond > opts.cond_warn || full_cond > opts.cond_warn {
        let weakest = vt
            .as_ref()
            .map(|vt| describe(&weakest_direction_names(vt, free, &names), &names))
            .unwrap_or_default();
        let mut msg = format!(
            "condition number {:.0} > {:.0} (Schroer's bound): weakest parameter combination {weakest}",
            cond.max(full_cond),
            opts.cond_warn,
        );
        let advice = design::advise(&params, finger, &kept, opts, design::ADVICE_POSES);
        msg.push_str(&format!("; {}", advice.text));
        warnings.push(msg);
    }
    // coverage advice even when well conditioned
    for k in 0..4 {
        let v: Vec<f64> = kept.iter().map(|s| s.readings[k]).collect();
        let mean = v.iter().sum::<f64>() / v.len() as f64;
        let sd = (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / v.len() as f64).sqrt();
        if sd < 5.0 {
            warnings.push(format!(
                "sensor s{k} ({}) barely moves in the data (std {sd:.1} counts): its gain/offset are poorly determined; record poses that move it over its whole range",
                design::sensor_label(finger, k)
            ));
        }
    }
    if !fit.converged {
        warnings.push(format!("solver did not converge: {}", fit.termination));
    }
    let mut failures = Vec::new();
    if let Some(why) = checks::implausible(initial, &params, finger) {
        failures.push(format!("implausible parameters: {why}"));
    }
    let kept_stats = ErrorStats::from_errors(&kept_errors);
    let rms_limit = checks::rms_limit(opts);
    if kept_stats.rms.is_nan() || kept_stats.rms > rms_limit {
        failures.push(format!(
            "fingertip residual rms {:.2} mm after the fit exceeds {:.2} mm (what {:.1} mm vision \
             noise explains): the model does not describe these data (rows of another finger, \
             wrong units or frame, or a hand the fit could not reach)",
            kept_stats.rms * 1e3,
            rms_limit * 1e3,
            opts.vision_noise * 1e3
        ));
    }
    if full_cond.is_nan() || full_cond > opts.cond_max {
        failures.push(format!(
            "the poses do not determine the parameters: condition number of the full problem {} \
             > {:.0} ({} of {} parameters held as unidentifiable); record distinct poses that \
             move every sensor over its range",
            if full_cond.is_finite() {
                format!("{full_cond:.0}")
            } else {
                "infinite".to_string()
            },
            opts.cond_max,
            n - free.len(),
            n
        ));
    }
    if outliers.len() as f64 > opts.max_outlier_share * data.len() as f64 {
        failures.push(format!(
            "{} of {} rows are outliers (more than {:.0} %): the data are not consistent",
            outliers.len(),
            data.len(),
            opts.max_outlier_share * 100.0
        ));
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
    Ok((
        params,
        FingerReport {
            finger,
            poses: data.len(),
            before: ErrorStats::from_errors(&before_err),
            after: kept_stats,
            condition_number: cond,
            singular_values: sv,
            converged: fit.converged,
            termination: fit.termination.clone(),
            evaluations: fit.evaluations,
            params: params_report,
            unidentifiable: fit.unidentifiable.clone(),
            warnings,
            full_condition_number: full_cond,
            start: start.to_string(),
            outliers,
            failures,
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

/// Calibrates the fingers of `opts.fingers` (all five by default) after checking the data
/// ([`checks::check_data`]: units, glove range, missing fingers, too few or identical poses).
/// Fingers not calibrated keep their initial parameters. `progress` is called after each
/// finger. A finger whose result fails a check is reported in
/// [`FingerReport::failures`]: call [`CalibrationReport::ensure_passed`] before using the
/// model. Outlier rows are numbered by their position in `samples` (1-based).
pub fn calibrate(
    initial: &HandModel,
    samples: &[Sample],
    opts: &CalibOptions,
    mut progress: impl FnMut(Finger),
) -> Result<(HandModel, CalibrationReport), HandError> {
    initial.validate()?;
    let (fingers_to_fit, notes) = checks::check_data(initial, samples, opts)?;
    let mut model = initial.clone();
    let mut fingers = Vec::new();
    for f in fingers_to_fit {
        let rows: Vec<usize> = (0..samples.len())
            .filter(|&i| samples[i].finger == f)
            .collect();
        let data: Vec<Sample> = rows.iter().map(|&i| samples[i]).collect();
        let (p, mut r) = calibrate_finger(initial.finger(f), f, &data, opts)?;
        if r.failures.is_empty() {
            check_result(f, &p, &r)?;
        }
        // outlier rows as positions in the whole data set
        for o in &mut r.outliers {
            o.row = rows[o.row];
        }
        *model.finger_mut(f) = p;
        fingers.push(r);
        progress(f);
    }
    Ok((model, CalibrationReport { fingers, notes }))
}
