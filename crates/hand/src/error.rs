//! The error type of every fallible `rpq_hand` function.

/// Errors of `rpq_hand`.
#[derive(Debug, thiserror::Error)]
pub enum HandError {
    /// A file could not be read or written.
    #[error("cannot access {path}: {source}")]
    Io {
        /// The file that could not be accessed.
        path: String,
        /// Why the operating system refused.
        #[source]
        source: std::io::Error,
    },
    /// A YAML or CSV file is malformed.
    #[error("parse error: {0}")]
    Parse(String),
    /// A model parameter is invalid (NaN, negative length, wrong count).
    #[error("invalid parameter: {0}")]
    InvalidParameter(String),
    /// Input data is invalid (wrong length, NaN, out of range).
    #[error("invalid data: {0}")]
    InvalidData(String),
    /// A finger name that is not thumb/index/middle/ring/little.
    #[error("unknown finger `{0}` (expected thumb, index, middle, ring or little)")]
    UnknownFinger(String),
    /// Fewer poses than the parameters of a finger need.
    #[error("{finger}: {got} poses, at least {needed} needed")]
    NotEnoughData {
        /// Name of the finger (`thumb`, `index`, ...).
        finger: String,
        /// Minimum number of poses.
        needed: usize,
        /// Poses of that finger in the data.
        got: usize,
    },
    /// A calibration ran but its result must not be used (residual, plausibility,
    /// identifiability); the message names every failing finger and why.
    #[error("calibration failed, nothing saved: {0}")]
    CalibrationFailed(String),
    /// Writing a plot failed.
    #[error("plot: {0}")]
    Plot(String),
}
