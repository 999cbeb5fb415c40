//! The held-out calibration sweep of issue 16 (`glove_calib sweep`): hands far from the
//! nominal model (gains ×0.7…×1.3, offsets ±15°, lengths ±15 %, thumb coupling ×3, alone and
//! combined), 10 truth seeds each, calibrated from simulated 60-pose sessions and validated on
//! 200 other noise-free poses per finger; and the pose designs' condition numbers.
//!
//! Every run goes the way a user's does: [`crate::calib::calibrate`], then
//! [`crate::calib::CalibrationReport::ensure_passed`], then the written YAML is parsed back.
//! A run *passes* when it was accepted and every finger's validation error stays below the
//! bar (5 mm, Hu et al. III-E); it is *refused* when the calibration gave an error (a
//! non-zero exit with a message); it is *wrong* when it was accepted but a finger misses the
//! bar — the case that must never happen.

use crate::calib::{self, CalibOptions};
use crate::model::HandModel;
use crate::sim::{self, Deviation, SimOptions};

/// A perturbation class: a name and how the true hand of a seed is made from the nominal one.
#[derive(Clone, Debug)]
pub struct Class {
    /// Name printed in the table.
    pub name: String,
    /// Systematic deviation; `None`: every parameter drawn at random ([`sim::deviate_randomly`]).
    pub deviation: Option<Deviation>,
}

/// The classes of issue 16: each deviation alone at both ends of its range, four corner
/// combinations and one with every parameter drawn independently. Every true hand is first
/// perturbed individually ([`sim::perturb`] scale 1 with the truth seed).
pub fn classes() -> Vec<Class> {
    let deg = std::f64::consts::PI / 180.0;
    let d = |gain: f64, off: f64, length: f64, coupling: f64| Deviation {
        gain,
        offset: off * deg,
        length,
        coupling,
    };
    let mut v: Vec<(&str, Option<Deviation>)> = vec![
        ("perturbed only", Some(d(1.0, 0.0, 1.0, 1.0))),
        ("gains x0.7", Some(d(0.7, 0.0, 1.0, 1.0))),
        ("gains x1.3", Some(d(1.3, 0.0, 1.0, 1.0))),
        ("offsets -15deg", Some(d(1.0, -15.0, 1.0, 1.0))),
        ("offsets +15deg", Some(d(1.0, 15.0, 1.0, 1.0))),
        ("lengths -15%", Some(d(1.0, 0.0, 0.85, 1.0))),
        ("lengths +15%", Some(d(1.0, 0.0, 1.15, 1.0))),
        ("coupling x3", Some(d(1.0, 0.0, 1.0, 3.0))),
        ("x1.3 +15deg", Some(d(1.3, 15.0, 1.0, 1.0))),
        ("x0.7 -15deg", Some(d(0.7, -15.0, 1.0, 1.0))),
        ("x1.3 +15deg +15% c3", Some(d(1.3, 15.0, 1.15, 3.0))),
        ("x0.7 -15deg -15% c3", Some(d(0.7, -15.0, 0.85, 3.0))),
        ("x1.3 -15deg -15% c3", Some(d(1.3, -15.0, 0.85, 3.0))),
        ("x0.7 +15deg +15% c3", Some(d(0.7, 15.0, 1.15, 3.0))),
    ];
    v.push(("all random, c3", None));
    v.into_iter()
        .map(|(n, deviation)| Class {
            name: n.to_string(),
            deviation,
        })
        .collect()
}

/// The true hand of `class` for `seed`.
pub fn truth(nominal: &HandModel, class: &Class, seed: u64) -> HandModel {
    let base = sim::perturb(nominal, 1.0, seed);
    match &class.deviation {
        Some(d) => sim::deviate(&base, d),
        None => sim::deviate_randomly(&base, seed),
    }
}

/// Settings of the sweep.
#[derive(Clone, Debug)]
pub struct SweepOptions {
    /// Truth seeds per class (`first_seed..first_seed + seeds`).
    pub seeds: u64,
    /// First truth seed.
    pub first_seed: u64,
    /// Calibration poses per finger.
    pub poses: usize,
    /// Validation poses per finger (noise-free).
    pub validation_poses: usize,
    /// Vision noise levels of the calibration sessions (m, std per axis).
    pub noise_levels: Vec<f64>,
    /// Validation bar on every finger's largest error (m).
    pub bar: f64,
    /// Worker threads.
    pub threads: usize,
}

impl Default for SweepOptions {
    fn default() -> Self {
        SweepOptions {
            seeds: 10,
            first_seed: 100,
            poses: 60,
            validation_poses: 200,
            noise_levels: vec![0.0, 1e-3],
            bar: 5e-3,
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
        }
    }
}

/// Outcome of one calibration run.
#[derive(Clone, Debug)]
pub enum Outcome {
    /// Accepted; the worst finger's validation max error (m) and condition number.
    Accepted {
        /// Largest validation error over the fingers (m).
        max_error: f64,
        /// Largest full-problem condition number over the fingers.
        cond: f64,
    },
    /// Refused with this message.
    Refused(String),
}

/// One row of the table: a class at one noise level.
#[derive(Clone, Debug)]
pub struct Row {
    /// Class name.
    pub class: String,
    /// Vision noise of the calibration sessions (m).
    pub noise: f64,
    /// Runs (seeds).
    pub runs: usize,
    /// Accepted and within the bar.
    pub passed: usize,
    /// Refused with a message (non-zero exit).
    pub refused: usize,
    /// Accepted but a finger misses the bar (silently wrong).
    pub wrong: usize,
    /// Largest validation max error among accepted runs (m).
    pub worst_max: f64,
    /// Median validation max error among accepted runs (m).
    pub median_max: f64,
    /// Largest condition number among accepted runs.
    pub worst_cond: f64,
    /// One refusal message, if any.
    pub first_refusal: Option<String>,
}

/// Calibrates one session of `truth` and validates the result.
pub fn run_one(
    nominal: &HandModel,
    truth: &HandModel,
    noise: f64,
    seed: u64,
    o: &SweepOptions,
) -> Outcome {
    let train = sim::simulate(
        truth,
        &SimOptions {
            poses: o.poses,
            vision_noise: noise,
            seed: 1000 + seed,
            ..Default::default()
        },
    );
    let opts = CalibOptions::default();
    let result = calib::calibrate(nominal, &train, &opts, |_| {}).and_then(|(m, r)| {
        r.ensure_passed()?;
        // what the user's file gives back
        let back = HandModel::from_yaml_str(&m.to_yaml_string("sweep"))?;
        Ok((back, r))
    });
    let (model, report) = match result {
        Ok(x) => x,
        Err(e) => return Outcome::Refused(e.to_string()),
    };
    let val = sim::simulate(
        truth,
        &SimOptions {
            poses: o.validation_poses,
            first_pose: 100_000,
            vision_noise: 0.0,
            sensor_noise: 0.0,
            quantize: false,
            seed: 2000 + seed,
            ..Default::default()
        },
    );
    let max_error = calib::errors(&model, &val).into_iter().fold(0.0, f64::max);
    let cond = report
        .fingers
        .iter()
        .map(|r| r.full_condition_number)
        .fold(0.0, f64::max);
    Outcome::Accepted { max_error, cond }
}

fn run_parallel<T: Sync, R: Send>(
    jobs: Vec<T>,
    threads: usize,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results: Vec<std::sync::Mutex<Option<R>>> =
        jobs.iter().map(|_| std::sync::Mutex::new(None)).collect();
    std::thread::scope(|s| {
        for _ in 0..threads.max(1) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if i >= jobs.len() {
                    break;
                }
                let r = f(&jobs[i]);
                if let Ok(mut slot) = results[i].lock() {
                    *slot = Some(r);
                }
            });
        }
    });
    results
        .into_iter()
        .filter_map(|m| m.into_inner().ok().flatten())
        .collect()
}

/// Runs every class at every noise level over the seeds.
pub fn calibration_sweep(nominal: &HandModel, classes: &[Class], o: &SweepOptions) -> Vec<Row> {
    let mut jobs = Vec::new();
    for (ci, _) in classes.iter().enumerate() {
        for (ni, _) in o.noise_levels.iter().enumerate() {
            for seed in o.first_seed..o.first_seed + o.seeds {
                jobs.push((ci, ni, seed));
            }
        }
    }
    let outcomes = run_parallel(jobs.clone(), o.threads, |&(ci, ni, seed)| {
        let t = truth(nominal, &classes[ci], seed);
        run_one(nominal, &t, o.noise_levels[ni], seed, o)
    });
    let mut rows = Vec::new();
    for (ci, c) in classes.iter().enumerate() {
        for (ni, &noise) in o.noise_levels.iter().enumerate() {
            let mine: Vec<&Outcome> = jobs
                .iter()
                .zip(&outcomes)
                .filter(|((a, b, _), _)| *a == ci && *b == ni)
                .map(|(_, r)| r)
                .collect();
            let mut maxes = Vec::new();
            let mut row = Row {
                class: c.name.clone(),
                noise,
                runs: mine.len(),
                passed: 0,
                refused: 0,
                wrong: 0,
                worst_max: 0.0,
                median_max: 0.0,
                worst_cond: 0.0,
                first_refusal: None,
            };
            for r in mine {
                match r {
                    Outcome::Accepted { max_error, cond } => {
                        if *max_error < o.bar {
                            row.passed += 1;
                        } else {
                            row.wrong += 1;
                        }
                        maxes.push(*max_error);
                        row.worst_cond = row.worst_cond.max(*cond);
                    }
                    Outcome::Refused(m) => {
                        row.refused += 1;
                        row.first_refusal.get_or_insert_with(|| m.clone());
                    }
                }
            }
            maxes.sort_by(f64::total_cmp);
            row.worst_max = maxes.last().copied().unwrap_or(0.0);
            row.median_max = maxes.get(maxes.len() / 2).copied().unwrap_or(0.0);
            rows.push(row);
        }
    }
    rows
}

/// The calibration table as Markdown.
pub fn calibration_table(rows: &[Row], o: &SweepOptions) -> String {
    let mut s = format!(
        "| class | vision noise | runs | passed (max < {:.0} mm) | refused (exit 1) | wrong (accepted, max >= {:.0} mm) | median max (mm) | worst max (mm) | worst cond |\n|---|---|---|---|---|---|---|---|---|\n",
        o.bar * 1e3,
        o.bar * 1e3
    );
    let (mut runs, mut passed, mut refused, mut wrong) = (0, 0, 0, 0);
    for r in rows {
        s.push_str(&format!(
            "| {} | {:.0} mm | {} | {} | {} | {} | {:.2} | {:.2} | {:.0} |\n",
            r.class,
            r.noise * 1e3,
            r.runs,
            r.passed,
            r.refused,
            r.wrong,
            r.median_max * 1e3,
            r.worst_max * 1e3,
            r.worst_cond
        ));
        runs += r.runs;
        passed += r.passed;
        refused += r.refused;
        wrong += r.wrong;
    }
    s.push_str(&format!(
        "| **all** | | {runs} | {passed} ({:.1} %) | {refused} | {wrong} | | | |\n",
        100.0 * passed as f64 / runs.max(1) as f64
    ));
    let refusals: Vec<String> = rows
        .iter()
        .filter_map(|r| {
            r.first_refusal
                .as_ref()
                .map(|m| format!("- {} ({:.0} mm): {m}", r.class, r.noise * 1e3))
        })
        .collect();
    if !refusals.is_empty() {
        s.push_str("\nRefusals (first message per row):\n");
        s.push_str(&refusals.join("\n"));
        s.push('\n');
    }
    s
}

/// A pose design of the design table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Design {
    /// Latin hypercube over the sensor ranges.
    Lhs,
    /// D-optimal subset of 5× as many LHS candidates, planned on the nominal model.
    DOptimal,
    /// Condition-optimal subset (exchange algorithm on κ) of 5× as many LHS candidates.
    CondOptimal,
}

impl Design {
    /// Name used on the command line and in the table.
    pub fn name(self) -> &'static str {
        match self {
            Design::Lhs => "lhs",
            Design::DOptimal => "d-optimal",
            Design::CondOptimal => "cond-optimal",
        }
    }
    /// Simulation options of a session with this design planned on `nominal`.
    pub fn apply(self, nominal: &HandModel, opts: &mut SimOptions) {
        match self {
            Design::Lhs => opts.design = None,
            Design::DOptimal => {
                opts.design = Some((nominal.clone(), 5));
                opts.planner = sim::Planner::DOptimal;
            }
            Design::CondOptimal => {
                opts.design = Some((nominal.clone(), 5));
                opts.planner = sim::Planner::CondOptimal;
            }
        }
    }
}

/// One row of the design table.
#[derive(Clone, Debug)]
pub struct DesignRow {
    /// Design.
    pub design: Design,
    /// Poses per finger.
    pub poses: usize,
    /// Worst finger's condition number per seed.
    pub conds: Vec<f64>,
    /// Seeds whose every finger has κ < 100.
    pub below_100: usize,
    /// Seeds whose every finger has max < 5 mm on 200 noise-free validation poses.
    pub within_bar: usize,
}

/// Condition numbers of the default hand (perturbed, scale 1) over the seeds for each design
/// and pose count; calibrated with 1 mm vision noise.
pub fn design_sweep(
    nominal: &HandModel,
    designs: &[(Design, usize)],
    o: &SweepOptions,
) -> Vec<DesignRow> {
    let mut jobs = Vec::new();
    for (di, _) in designs.iter().enumerate() {
        for seed in o.first_seed..o.first_seed + o.seeds {
            jobs.push((di, seed));
        }
    }
    let res = run_parallel(jobs.clone(), o.threads, |&(di, seed)| {
        let (design, poses) = designs[di];
        let t = sim::perturb(nominal, 1.0, seed);
        let mut so = SimOptions {
            poses,
            seed: 3000 + seed,
            ..Default::default()
        };
        design.apply(nominal, &mut so);
        let train = sim::simulate(&t, &so);
        let Ok((m, r)) = calib::calibrate(nominal, &train, &CalibOptions::default(), |_| {}) else {
            return (f64::INFINITY, f64::INFINITY);
        };
        let cond = r
            .fingers
            .iter()
            .map(|f| f.full_condition_number)
            .fold(0.0, f64::max);
        let val = sim::simulate(
            &t,
            &SimOptions {
                poses: o.validation_poses,
                first_pose: 100_000,
                vision_noise: 0.0,
                sensor_noise: 0.0,
                quantize: false,
                seed: 4000 + seed,
                ..Default::default()
            },
        );
        let max = calib::errors(&m, &val).into_iter().fold(0.0, f64::max);
        (cond, max)
    });
    designs
        .iter()
        .enumerate()
        .map(|(di, &(design, poses))| {
            let mine: Vec<(f64, f64)> = jobs
                .iter()
                .zip(&res)
                .filter(|((d, _), _)| *d == di)
                .map(|(_, r)| *r)
                .collect();
            DesignRow {
                design,
                poses,
                conds: mine.iter().map(|r| r.0).collect(),
                below_100: mine.iter().filter(|r| r.0 < 100.0).count(),
                within_bar: mine.iter().filter(|r| r.1 < o.bar).count(),
            }
        })
        .collect()
}

/// The design table as Markdown.
pub fn design_table(rows: &[DesignRow]) -> String {
    let mut s = String::from(
        "| design | poses per finger | seeds | cond < 100 (every finger) | max < 5 mm | worst-finger cond per seed |\n|---|---|---|---|---|---|\n",
    );
    for r in rows {
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} |\n",
            r.design.name(),
            r.poses,
            r.conds.len(),
            r.below_100,
            r.within_bar,
            r.conds
                .iter()
                .map(|c| format!("{c:.0}"))
                .collect::<Vec<_>>()
                .join(" ")
        ));
    }
    s
}
