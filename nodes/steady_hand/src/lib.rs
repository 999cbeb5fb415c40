//! Virtual-fixture admittance controller and Steady-Hand guidance nodes: the pure part
//! (conversions, safety monitor, twist → joint velocities, settings) used by the binaries
//! `admittance_controller`, `steady_hand_guidance` and `simulated_user`, testable without DDS.
#![warn(missing_docs)]

pub mod convert;
mod error;
pub mod joints;
pub mod safety;
pub mod settings;

pub use error::NodeError;
