//! A seeded simulator of calibration sessions ([`simulate`]) and of individual hands
//! ([`perturb`]), for tests, benchmarks and the `glove_calib simulate` command. The same seed
//! gives the same data set on every platform.

use nalgebra::Vector3;
use rpq_base::rng::SplitMix64;

use crate::calib::design::{cond_optimal_poses, d_optimal_poses};
use crate::data::Sample;
use crate::model::{Finger, HandModel};

/// The simulator's generator for `seed`: the suite's [`SplitMix64`] started from `seed` mixed
/// with a fixed constant, so that the simulated data sets of a seed stay those of earlier
/// releases.
pub fn generator(seed: u64) -> SplitMix64 {
    SplitMix64::new(seed ^ 0x5DEE_CE66_D1CE_4E5B)
}

/// Options of [`simulate`].
#[derive(Clone, Debug)]
pub struct SimOptions {
    /// Number of poses (each pose has one row per finger).
    pub poses: usize,
    /// Id of the first pose.
    pub first_pose: usize,
    /// Vision noise: standard deviation per axis of the measured fingertip (m).
    pub vision_noise: f64,
    /// Glove sensor noise: standard deviation of the raw readings (counts).
    pub sensor_noise: f64,
    /// Round readings to whole counts, as the glove's 8-bit converters do.
    pub quantize: bool,
    /// Seed of the generator ([`generator`]): the same seed gives the same data set.
    pub seed: u64,
    /// Pose design: `None` = Latin hypercube over the sensor ranges; `Some((model, k))` =
    /// draw `k × poses` Latin-hypercube candidates and keep the D-optimal `poses` for the
    /// experimenter's (initial) `model` (see [`crate::calib::d_optimal_poses`]).
    pub design: Option<(HandModel, usize)>,
    /// How `design` picks the poses among the candidates.
    pub planner: Planner,
}

/// Pose planners of [`SimOptions::design`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Planner {
    /// Largest determinant of the scaled information matrix
    /// ([`crate::calib::d_optimal_poses`]).
    #[default]
    DOptimal,
    /// Smallest condition number of the scaled problem
    /// ([`crate::calib::design::cond_optimal_poses`]).
    CondOptimal,
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions {
            poses: 60,
            first_pose: 0,
            vision_noise: 1e-3,
            sensor_noise: 0.5,
            quantize: true,
            seed: 1,
            design: None,
            planner: Planner::DOptimal,
        }
    }
}

/// Simulates a calibration session with the hand `truth`: every finger's true readings are
/// spread over its `sensor_range` by Latin-hypercube sampling (each sensor visits every one of
/// `poses` equal sub-ranges once, in random combination with the other sensors), the fingertip follows from the
/// model, then vision noise is added to the fingertip and sensor noise (and quantisation) to
/// the recorded readings.
#[allow(clippy::needless_range_loop)]
pub fn simulate(truth: &HandModel, opts: &SimOptions) -> Vec<Sample> {
    let mut rng = generator(opts.seed);
    let m = opts.poses;
    let factor = opts.design.as_ref().map_or(1, |d| d.1.max(1));
    // per finger: Latin-hypercube readings (each sensor visits every one of the equal
    // sub-ranges once), optionally thinned to a D-optimal subset
    let mut readings: Vec<Vec<[f64; 4]>> = Vec::new();
    for f in Finger::ALL {
        let fp = truth.finger(f);
        let k = m * factor;
        let mut cand = vec![[0.0; 4]; k];
        for s in 0..4 {
            let mut perm: Vec<usize> = (0..k).collect();
            for i in (1..k).rev() {
                let j = (rng.next_u64() % (i as u64 + 1)) as usize;
                perm.swap(i, j);
            }
            let [lo, hi] = fp.sensor_range[s];
            for (p, c) in cand.iter_mut().enumerate() {
                c[s] = lo + (hi - lo) * (perm[p] as f64 + rng.uniform()) / k as f64;
            }
        }
        if let Some((model, _)) = &opts.design {
            let idx = match opts.planner {
                Planner::DOptimal => d_optimal_poses(model.finger(f), f, &cand, m),
                Planner::CondOptimal => cond_optimal_poses(model.finger(f), f, &cand, m, 3),
            };
            let mut picked: Vec<[f64; 4]> = idx.iter().map(|&i| cand[i]).collect();
            picked.sort_by(|a, b| a[0].total_cmp(&b[0]).then(a[1].total_cmp(&b[1])));
            cand = picked;
        }
        readings.push(cand);
    }
    let mut out = Vec::with_capacity(m * 5);
    for p in 0..m {
        for f in Finger::ALL {
            let fp = truth.finger(f);
            let s = readings[f.index()][p];
            let tip = fp.tip(f, &s);
            let noise = Vector3::new(rng.normal(), rng.normal(), rng.normal()) * opts.vision_noise;
            let mut rec = s;
            for r in &mut rec {
                *r += opts.sensor_noise * rng.normal();
                if opts.quantize {
                    *r = r.round();
                }
            }
            out.push(Sample {
                pose: opts.first_pose + p,
                finger: f,
                readings: rec,
                tip: tip + noise,
            });
        }
    }
    out
}

/// A plausible individual hand around `model`: offsets ±`scale`·5°, lengths ±`scale`·10 %,
/// gains ±`scale`·10 %, cross gains ±`scale`·20 % of the main gain (uniform, seeded).
pub fn perturb(model: &HandModel, scale: f64, seed: u64) -> HandModel {
    let mut rng = generator(seed.wrapping_mul(31).wrapping_add(7));
    let mut m = model.clone();
    let deg = std::f64::consts::PI / 180.0;
    for f in Finger::ALL {
        let p = m.finger_mut(f);
        for b in &mut p.offsets {
            *b += scale * 5.0 * deg * rng.range(-1.0, 1.0);
        }
        for a in &mut p.lengths {
            *a *= 1.0 + scale * 0.1 * rng.range(-1.0, 1.0);
        }
        let g0 = p.gains;
        for g in &mut p.gains {
            *g *= 1.0 + scale * 0.1 * rng.range(-1.0, 1.0);
        }
        if let Some(c) = &mut p.coupling {
            c.t0_s1 += scale * 0.2 * g0[0] * rng.range(-1.0, 1.0);
            c.t1_s0 += scale * 0.2 * g0[1] * rng.range(-1.0, 1.0);
            c.twist_s0 += scale * 0.2 * g0[0] * rng.range(-1.0, 1.0);
            c.twist_s1 += scale * 0.2 * g0[1] * rng.range(-1.0, 1.0);
        }
    }
    m.name = format!("{} (perturbed x{scale}, seed {seed})", model.name);
    m
}

/// A systematic deviation of a hand from the model it was derived from (the issue 16
/// perturbation classes): every sensor gain × `gain`, every offset + `offset` (rad), every
/// length × `length`, the thumb cross-coupling gains × `coupling`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Deviation {
    /// Factor on every gain g0..g3.
    pub gain: f64,
    /// Added to every offset β (rad).
    pub offset: f64,
    /// Factor on every length.
    pub length: f64,
    /// Factor on the thumb's four cross-coupling gains.
    pub coupling: f64,
}

impl Default for Deviation {
    fn default() -> Self {
        Deviation {
            gain: 1.0,
            offset: 0.0,
            length: 1.0,
            coupling: 1.0,
        }
    }
}

/// `model` with the deviation `d` applied to every finger.
pub fn deviate(model: &HandModel, d: &Deviation) -> HandModel {
    let mut m = model.clone();
    for f in Finger::ALL {
        let p = m.finger_mut(f);
        p.gains.iter_mut().for_each(|g| *g *= d.gain);
        p.offsets.iter_mut().for_each(|b| *b += d.offset);
        p.lengths.iter_mut().for_each(|a| *a *= d.length);
        if let Some(c) = &mut p.coupling {
            c.t0_s1 *= d.coupling;
            c.t1_s0 *= d.coupling;
            c.twist_s0 *= d.coupling;
            c.twist_s1 *= d.coupling;
        }
    }
    m
}

/// A hand with every parameter drawn independently within the issue 16 ranges (seeded):
/// each gain × U(0.7, 1.3), each offset + U(−15°, 15°), each length × U(0.85, 1.15), thumb
/// cross-coupling × 3.
pub fn deviate_randomly(model: &HandModel, seed: u64) -> HandModel {
    let mut rng = generator(seed.wrapping_mul(7919).wrapping_add(13));
    let mut m = model.clone();
    let deg = std::f64::consts::PI / 180.0;
    for f in Finger::ALL {
        let p = m.finger_mut(f);
        p.gains.iter_mut().for_each(|g| *g *= rng.range(0.7, 1.3));
        p.offsets
            .iter_mut()
            .for_each(|b| *b += rng.range(-15.0, 15.0) * deg);
        p.lengths
            .iter_mut()
            .for_each(|a| *a *= rng.range(0.85, 1.15));
        if let Some(c) = &mut p.coupling {
            c.t0_s1 *= 3.0;
            c.t1_s0 *= 3.0;
            c.twist_s0 *= 3.0;
            c.twist_s1 *= 3.0;
        }
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{read_csv, write_csv};

    #[test]
    fn csv_roundtrip_and_errors() {
        let m = HandModel::nominal();
        let s = simulate(
            &m,
            &SimOptions {
                poses: 3,
                ..Default::default()
            },
        );
        let mut buf = Vec::new();
        write_csv(&mut buf, &s).unwrap();
        let back = read_csv(&buf[..]).unwrap();
        assert_eq!(back.len(), 15);
        for (a, b) in s.iter().zip(&back) {
            assert_eq!(a.finger, b.finger);
            assert!((a.tip - b.tip).norm() < 1e-7);
        }
        assert!(read_csv("pose,finger\n1,index\n".as_bytes()).is_err());
        let bad = "pose,finger,s0,s1,s2,s3,x,y,z\n0,pinky,1,2,3,4,0,0,0\n";
        assert!(read_csv(bad.as_bytes()).is_err());
        let bad = "pose,finger,s0,s1,s2,s3,x,y,z\n0,index,1,2,NaN,4,0,0,0\n";
        assert!(read_csv(bad.as_bytes()).is_err());
    }

    #[test]
    fn normal_has_unit_variance() {
        let mut r = generator(3);
        let n = 20000;
        let v: Vec<f64> = (0..n).map(|_| r.normal()).collect();
        let mean = v.iter().sum::<f64>() / n as f64;
        let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
        assert!(
            mean.abs() < 0.03 && (var - 1.0).abs() < 0.05,
            "{mean} {var}"
        );
    }
}
