//! Data-glove calibration, human hand model and HIT/DLR hand mapping, after Hu et al.,
//! "Calibrating Human Hand for Teleoperating the HIT/DLR Hand".
//!
//! - [`model`]: the five-finger human hand model of section III-A (DH chains, eqs. 1-2) and
//!   the glove sensor model `θ = gσ + β` with the thumb cross-coupling of eq. 4.
//! - [`calib`]: open-loop calibration (eqs. 5-13): stacked fingertip errors, analytic
//!   identification Jacobian, extremal scaling, Levenberg-Marquardt, condition number and
//!   unidentifiable-combination detection.
//! - [`data`]: the calibration CSV format, a seeded simulator.
//! - [`robot`]: the HIT/DLR four-finger hand (13 DOF): forward and inverse kinematics with
//!   the 1:1 coupled distal joints.
//! - [`mapping`]: joint-space mapping and the modified fingertip mapping of section IV-B.
//!
//! Pure library: no ROS types.
#![warn(missing_docs)]

pub mod calib;
pub mod data;
pub mod mapping;
pub mod model;
pub mod robot;

pub use calib::{calibrate, CalibOptions, CalibrationReport, FingerReport};
pub use data::{Sample, SimOptions};
pub use model::{Finger, FingerParams, HandModel};

/// Errors of `rpq_hand`.
#[derive(Debug, thiserror::Error)]
pub enum HandError {
    /// A file could not be read or written.
    #[error("cannot access {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The cause.
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
        /// Finger.
        finger: String,
        /// Minimum number of poses.
        needed: usize,
        /// Poses found.
        got: usize,
    },
    /// Writing a plot failed.
    #[error("plot: {0}")]
    Plot(String),
}
