//! Calibration data: the CSV format, a seeded simulator and a small deterministic RNG.
//!
//! # CSV format
//! One row per pose and finger, with a header line:
//!
//! ```text
//! pose,finger,s0,s1,s2,s3,x,y,z
//! 0,thumb,121,88,140,97,0.0213,0.0531,0.0312
//! 0,index,130,85,101,77,0.1032,0.0031,0.0410
//! ```
//!
//! `pose` is an integer pose id (rows of one pose share it), `finger` one of
//! `thumb,index,middle,ring,little`, `s0..s3` the raw glove readings of that finger's four
//! sensors (counts; thumb: T0, T1, T2, T3 sensors; fingers: abduction, MCP, PIP, DIP), `x,y,z`
//! the measured fingertip (marker) position in the hand base frame `O0`, metres.

use std::io::{Read, Write};

use nalgebra::Vector3;

use crate::model::{Finger, HandModel};
use crate::HandError;

/// One measured pose of one finger.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample {
    /// Pose id.
    pub pose: usize,
    /// Finger.
    pub finger: Finger,
    /// Raw readings s0..s3 (counts).
    pub readings: [f64; 4],
    /// Measured fingertip in `O0` (m).
    pub tip: Vector3<f64>,
}

/// Reads samples from CSV text (see the module documentation for the format).
pub fn read_csv<R: Read>(reader: R) -> Result<Vec<Sample>, HandError> {
    let mut rdr = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .comment(Some(b'#'))
        .from_reader(reader);
    let headers = rdr
        .headers()
        .map_err(|e| HandError::Parse(format!("CSV header: {e}")))?
        .clone();
    let want = ["pose", "finger", "s0", "s1", "s2", "s3", "x", "y", "z"];
    if headers.len() != want.len() || headers.iter().zip(want).any(|(a, b)| a != b) {
        return Err(HandError::Parse(format!(
            "CSV header must be `{}`, found `{}`",
            want.join(","),
            headers.iter().collect::<Vec<_>>().join(",")
        )));
    }
    let mut out = Vec::new();
    for (i, rec) in rdr.records().enumerate() {
        let line = i + 2;
        let rec = rec.map_err(|e| HandError::Parse(format!("CSV line {line}: {e}")))?;
        let num = |k: usize| -> Result<f64, HandError> {
            let v: f64 = rec[k].parse().map_err(|_| {
                HandError::Parse(format!("CSV line {line}: `{}` is not a number", &rec[k]))
            })?;
            if v.is_finite() {
                Ok(v)
            } else {
                Err(HandError::Parse(format!(
                    "CSV line {line}: non-finite value"
                )))
            }
        };
        let pose: usize = rec[0]
            .parse()
            .map_err(|_| HandError::Parse(format!("CSV line {line}: bad pose id `{}`", &rec[0])))?;
        let finger: Finger = rec[1].parse().map_err(|_| {
            HandError::Parse(format!("CSV line {line}: unknown finger `{}`", &rec[1]))
        })?;
        out.push(Sample {
            pose,
            finger,
            readings: [num(2)?, num(3)?, num(4)?, num(5)?],
            tip: Vector3::new(num(6)?, num(7)?, num(8)?),
        });
    }
    Ok(out)
}

/// Reads a CSV file.
pub fn read_csv_file(path: impl AsRef<std::path::Path>) -> Result<Vec<Sample>, HandError> {
    let path = path.as_ref();
    let f = std::fs::File::open(path).map_err(|e| HandError::Io {
        path: path.display().to_string(),
        source: e,
    })?;
    read_csv(std::io::BufReader::new(f)).map_err(|e| match e {
        HandError::Parse(m) => HandError::Parse(format!("{}: {m}", path.display())),
        o => o,
    })
}

/// Writes samples as CSV (readings with 3 decimals, positions with 0.1 µm resolution).
pub fn write_csv<W: Write>(mut w: W, samples: &[Sample]) -> std::io::Result<()> {
    writeln!(w, "pose,finger,s0,s1,s2,s3,x,y,z")?;
    for s in samples {
        writeln!(
            w,
            "{},{},{:.3},{:.3},{:.3},{:.3},{:.7},{:.7},{:.7}",
            s.pose,
            s.finger.name(),
            s.readings[0],
            s.readings[1],
            s.readings[2],
            s.readings[3],
            s.tip.x,
            s.tip.y,
            s.tip.z
        )?;
    }
    Ok(())
}

/// Small deterministic generator (SplitMix64) with uniform and normal draws; used so that
/// simulated data sets are reproducible from a seed on every platform.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// New generator from a seed.
    pub fn new(seed: u64) -> Self {
        Rng(seed ^ 0x5DEE_CE66_D1CE_4E5B)
    }
    /// Next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1).
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// Uniform in [lo, hi).
    pub fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.uniform()
    }
    /// Standard normal (Box-Muller).
    pub fn normal(&mut self) -> f64 {
        let u1 = 1.0 - self.uniform();
        let u2 = self.uniform();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }
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
    /// Seed.
    pub seed: u64,
    /// Pose design: `None` = Latin hypercube over the sensor ranges; `Some((model, k))` =
    /// draw `k × poses` Latin-hypercube candidates and keep the D-optimal `poses` for the
    /// experimenter's (initial) `model` (see [`crate::calib::d_optimal_poses`]).
    pub design: Option<(HandModel, usize)>,
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
    let mut rng = Rng::new(opts.seed);
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
            let idx = crate::calib::d_optimal_poses(model.finger(f), f, &cand, m);
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
    let mut rng = Rng::new(seed.wrapping_mul(31).wrapping_add(7));
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

#[cfg(test)]
mod tests {
    use super::*;

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
        let mut r = Rng::new(3);
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
