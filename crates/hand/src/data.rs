//! Calibration data: one measured sample and its CSV format (the simulator is in
//! the `sim` module).
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

use crate::error::HandError;
use crate::model::Finger;

/// One measured pose of one finger.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample {
    /// Id of the hand pose; the rows of one pose (one per finger) share it.
    pub pose: usize,
    /// The finger these readings and this fingertip belong to.
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
