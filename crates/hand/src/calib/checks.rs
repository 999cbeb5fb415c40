//! Checks that keep a calibration honest (issue 16 item 3): the data before the fit (units,
//! glove range, missing fingers, too few or identical poses) and the result after it
//! (plausible parameters, residual, outliers).

use nalgebra::Vector3;

use super::CalibOptions;
use crate::data::Sample;
use crate::error::HandError;
use crate::model::{Finger, FingerParams, HandModel};

/// At most this many rows are named in a message.
const NAMED_ROWS: usize = 8;

fn row_list(rows: &[String]) -> String {
    let mut s = rows
        .iter()
        .take(NAMED_ROWS)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if rows.len() > NAMED_ROWS {
        s.push_str(&format!(" and {} more", rows.len() - NAMED_ROWS));
    }
    s
}

/// Reach of the hand: the farthest a fingertip of `model` can be from `O0` (m), bounded by
/// its base offset plus the sum of its lengths.
fn hand_reach(model: &HandModel) -> f64 {
    Finger::ALL
        .iter()
        .map(|&f| {
            let p = model.finger(f);
            Vector3::from(p.base_xyz).norm() + p.lengths.iter().map(|l| l.abs()).sum::<f64>()
        })
        .fold(0.0, f64::max)
}

fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Checks the data before any fit and returns the fingers to calibrate (in
/// [`Finger::ALL`] order) and notes (rows ignored). Errors, each naming what is wrong and
/// what to do: no rows; fingertips not in metres (≫ or ≪ the hand's size); readings outside
/// `opts.raw_range` (naming the rows); a finger without rows when all five are to be
/// calibrated (or a named finger without rows); fewer poses, or fewer *distinct* poses, than
/// the finger has parameters.
pub fn check_data(
    initial: &HandModel,
    samples: &[Sample],
    opts: &CalibOptions,
) -> Result<(Vec<Finger>, Vec<String>), HandError> {
    if samples.is_empty() {
        return Err(HandError::InvalidData(
            "no calibration rows in the data".into(),
        ));
    }
    // units: the hand reaches ~0.2 m; millimetres give ~1000× that
    let reach = hand_reach(initial);
    let mut dist: Vec<f64> = samples.iter().map(|s| s.tip.norm()).collect();
    let med = median(&mut dist);
    if med.is_nan() || med > 3.0 * reach {
        return Err(HandError::InvalidData(format!(
            "the measured fingertips are {med:.3} (median) from O0 but this hand reaches at most \
             {reach:.3} m: x,y,z must be metres{}",
            if (med / 1000.0) <= 3.0 * reach {
                " (they look like millimetres: divide by 1000)"
            } else {
                ""
            }
        )));
    }
    if med < 0.05 * reach {
        return Err(HandError::InvalidData(format!(
            "the measured fingertips are {:.1} mm (median) from O0 but the hand's fingertips are \
             tens of mm away: x,y,z must be metres in the hand base frame O0",
            med * 1e3
        )));
    }
    // glove range
    let [lo, hi] = opts.raw_range;
    let bad: Vec<String> = samples
        .iter()
        .enumerate()
        .filter_map(|(i, s)| {
            let k = s.readings.iter().position(|&r| !(lo..=hi).contains(&r))?;
            Some(format!(
                "data row {} (pose {}, {} s{k} = {})",
                i + 1,
                s.pose,
                s.finger.name(),
                s.readings[k]
            ))
        })
        .collect();
    if !bad.is_empty() {
        return Err(HandError::InvalidData(format!(
            "{} row(s) with readings outside the glove's range {lo}..{hi} counts: {}",
            bad.len(),
            row_list(&bad)
        )));
    }
    // fingers
    let present: Vec<Finger> = Finger::ALL
        .iter()
        .copied()
        .filter(|f| samples.iter().any(|s| s.finger == *f))
        .collect();
    let mut notes = Vec::new();
    let wanted: Vec<Finger> = match &opts.fingers {
        None => {
            let missing: Vec<&str> = Finger::ALL
                .iter()
                .filter(|f| !present.contains(f))
                .map(|f| f.name())
                .collect();
            if !missing.is_empty() {
                return Err(HandError::InvalidData(format!(
                    "no rows for {}: every finger is calibrated unless the fingers are named \
                     (glove_calib calibrate --fingers {}; the others keep their initial \
                     parameters)",
                    missing.join(", "),
                    present
                        .iter()
                        .map(|f| f.name())
                        .collect::<Vec<_>>()
                        .join(",")
                )));
            }
            Finger::ALL.to_vec()
        }
        Some(list) => {
            let missing: Vec<&str> = list
                .iter()
                .filter(|f| !present.contains(f))
                .map(|f| f.name())
                .collect();
            if !missing.is_empty() {
                return Err(HandError::InvalidData(format!(
                    "no rows for {} although named to be calibrated",
                    missing.join(", ")
                )));
            }
            for f in present.iter().filter(|f| !list.contains(f)) {
                notes.push(format!(
                    "{} rows of {} ignored (not among the fingers to calibrate); it keeps its \
                     initial parameters",
                    samples.iter().filter(|s| s.finger == *f).count(),
                    f.name()
                ));
            }
            Finger::ALL
                .iter()
                .copied()
                .filter(|f| list.contains(f))
                .collect()
        }
    };
    // enough poses, and enough distinct ones
    for &f in &wanted {
        let rows: Vec<&Sample> = samples.iter().filter(|s| s.finger == f).collect();
        let n = f.param_count();
        if rows.len() < n {
            return Err(HandError::NotEnoughData {
                finger: f.name().to_string(),
                needed: n,
                got: rows.len(),
            });
        }
        let mut distinct: Vec<[u64; 4]> = rows
            .iter()
            .map(|s| s.readings.map(|r| (r + 0.0).to_bits()))
            .collect();
        distinct.sort_unstable();
        distinct.dedup();
        if distinct.len() < n {
            return Err(HandError::InvalidData(format!(
                "{}: only {} distinct glove readings among its {} rows (poses repeated); the {} \
                 parameters need at least {} distinct poses",
                f.name(),
                distinct.len(),
                rows.len(),
                n,
                n
            )));
        }
    }
    Ok((wanted, notes))
}

/// Largest rms fingertip error (m) a fit may leave: `residual_factor · √3 · vision_noise`,
/// at least 1 mm.
pub fn rms_limit(opts: &CalibOptions) -> f64 {
    (opts.residual_factor * 3f64.sqrt() * opts.vision_noise).max(1e-3)
}

/// Fingertip error above which a row is an outlier: `outlier_factor ×` the median error, at
/// least 3 mm and at least 4 × [`rms_limit`]'s noise share.
pub fn outlier_limit(errors: &[f64], opts: &CalibOptions) -> f64 {
    let mut e = errors.to_vec();
    let med = median(&mut e);
    (opts.outlier_factor * med)
        .max(3e-3)
        .max(4.0 * 3f64.sqrt() * opts.vision_noise)
}

/// Why calibrated parameters cannot describe a hand, if they cannot: a length not in
/// 1 mm..250 mm, a gain whose sign differs from the initial model's or whose size is more
/// than 5× off, or a joint whose angle over the sensor range leaves ±360° (a diverged fit).
pub fn implausible(initial: &FingerParams, p: &FingerParams, finger: Finger) -> Option<String> {
    if let Err(e) = p.check(finger) {
        return Some(e.to_string());
    }
    let names = crate::model::param_names(finger);
    let n_off = p.offsets.len();
    for (k, &l) in p.lengths.iter().enumerate() {
        if !(1e-3..=0.25).contains(&l) {
            return Some(format!(
                "{} = {:.1} mm is not a finger length",
                names[n_off + k],
                l * 1e3
            ));
        }
    }
    for k in 0..4 {
        let (g, g0) = (p.gains[k], initial.gains[k]);
        if g0 != 0.0 && (g.signum() != g0.signum() || !(0.2..=5.0).contains(&(g / g0))) {
            return Some(format!(
                "{} = {g:.6} rad/count against {g0:.6} initially (sign flipped or more than 5× \
                 off)",
                names[n_off + 4 + k]
            ));
        }
    }
    let mut q = [0.0; 5];
    for corner in 0..16 {
        let s: [f64; 4] = std::array::from_fn(|k| p.sensor_range[k][(corner >> k) & 1]);
        p.joint_angles(finger, &s, &mut q);
        if let Some(j) = q.iter().position(|a| a.abs() > std::f64::consts::TAU) {
            return Some(format!(
                "joint {} reaches {:.0}° within the sensor range",
                finger.joint_names()[j.min(finger.chain_joints() - 1)],
                q[j].to_degrees()
            ));
        }
    }
    None
}
