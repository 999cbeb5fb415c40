//! Virtual-fixture admittance controller and Steady-Hand guidance nodes: the pure part used by
//! the binaries `admittance_controller`, `steady_hand_guidance`, `simulated_user`,
//! `netft_driver` and `netft_emulator`, testable without DDS:
//!
//! * [`admittance::AdmittanceCore`]: the controller's rule (wrench handling, law, motion
//!   filter hook, joint mapping, watchdogs, stop policy) on plain types;
//! * [`fixture_manager::FixtureManager`]: the guidance node's fixtures (sources, combination,
//!   sequence, requests) on plain types;
//! * [`motion_filter::ToolMotionFilter`]: the hook for Cartesian motion filters (e.g. the
//!   forbidden regions of the surgical protections);
//! * [`protection_filter::ProtectionFilter`]: the forbidden-region mode (surgical protections,
//!   surface navigation of `rpq_surgery`);
//! * [`wrench`], [`frames`], [`joints`], [`safety`], [`stamp`]: the parts of the core;
//! * [`netft`]: the ATI Net F/T RDT protocol, its stream checks and an emulated sensor;
//! * [`convert`], [`settings`]: messages and parameters.
#![warn(missing_docs)]

pub mod admittance;
pub mod convert;
mod error;
pub mod fixture_manager;
pub mod frames;
pub mod joints;
pub mod motion_filter;
pub mod netft;
pub mod protection_filter;
pub mod safety;
pub mod settings;
pub mod stamp;
pub mod wrench;

pub use error::NodeError;
