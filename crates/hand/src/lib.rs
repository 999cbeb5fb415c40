//! Data-glove calibration, human hand model and HIT/DLR hand mapping, after Hu et al.,
//! "Calibrating Human Hand for Teleoperating the HIT/DLR Hand".
//!
//! - [`model`]: the five-finger human hand model of section III-A (DH chains, eqs. 1-2) and
//!   the glove sensor model `θ = gσ + β` with the thumb cross-coupling of eq. 4.
//! - [`calib`]: open-loop calibration (eqs. 5-13): stacked fingertip errors, analytic
//!   identification Jacobian, extremal scaling, Levenberg-Marquardt, condition number and
//!   unidentifiable-combination detection.
//! - [`data`]: a measured sample and the calibration CSV format.
//! - [`sim`]: a seeded simulator of calibration sessions and of individual hands.
//! - [`robot`]: the HIT/DLR four-finger hand (13 DOF): forward and inverse kinematics with
//!   the 1:1 coupled distal joints.
//! - [`sweep`]: the held-out calibration sweep and pose-design table of `glove_calib sweep`.
//! - [`mapping`]: joint-space mapping and the modified fingertip mapping of section IV-B.
//!
//! Pure library: no ROS types.
#![warn(missing_docs)]

pub mod calib;
pub mod data;
mod error;
pub mod mapping;
pub mod model;
pub mod robot;
pub mod sim;
pub mod sweep;

pub use calib::{calibrate, CalibOptions, CalibrationReport, FingerReport};
pub use data::Sample;
pub use error::HandError;
pub use model::{Finger, FingerParams, HandModel};
pub use sim::SimOptions;
