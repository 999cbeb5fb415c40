//! Spatial motion constraints (guidance virtual fixtures) after Marayong, Li, Okamura and
//! Hager, "Spatial Motion Constraints: Theory and Demonstrations for Robot Guidance Using
//! Virtual Fixtures" (ICRA 2003). No ROS types.
//!
//! * [`Projection`]: the span `[D] = D(D'D)⁺D'` and kernel `<D> = I − [D]` projectors of a
//!   6 × n preferred-direction matrix (eqs. 2-5), by rank-revealing QR with a documented
//!   [`RankTolerance`];
//!   rank-deficient `D` and `D = 0` are handled.
//! * [`Compliance`]: the admittance law `v = c([D] + c_τ<D>) f` (eq. 8) — hard, soft,
//!   isotropic, and `c_τ > 1` by swapping the roles of the subspaces.
//! * [`closed_loop_direction`]: `D_g = (1 − k_d)[D]f + k_d‖f‖<D>u` (eq. 11).
//! * Guidance sources ([`GuidanceSource`]) giving `D(x)` and `u(x)`: [`PolylinePath`],
//!   [`ParametricCurve`], [`PlaneSurface`], [`TriangleMeshSurface`], [`PointTarget`] and the
//!   remote-centre-of-motion cone [`RcmCone`] (eqs. 12-16).
//! * [`AdmittanceController`]: the complete step (deadband, force/torque gain shaping,
//!   fixture, velocity and acceleration limits) on preallocated state.
//! * [`SteadyHandRobot`] and [`SimulatedUser`]: the paper's kinematic robot (eqs. 14-15) and a
//!   seeded cooperative user; [`tasks`] runs the paper's two experiments.
//! * [`combine`]: two fixtures as one (intersection of the preferred subspaces, or the
//!   secondary inside the primary's subspace by null-space projection), and [`Sequencer`]:
//!   an ordered list of fixtures advanced by completion criteria — the paper's open problem
//!   of combining and sequencing guidance modes.
//!
//! Twists are `[v; ω]` and wrenches `[f; τ]` (linear part first), in the base frame.
//!
//! ```
//! use nalgebra::Vector6;
//! use rpq_virtual_fixtures::{AdmittanceController, Compliance, ControllerConfig, Guidance, Mode};
//!
//! // Hard fixture along x: a push along (1, 1) moves only along x.
//! let cfg = ControllerConfig { compliance: Compliance::new(0.01, 0.0)?, mode: Mode::OpenLoop, ..Default::default() };
//! let mut ctl = AdmittanceController::new(cfg)?;
//! let g = Guidance::from_columns(&[Vector6::x()], Vector6::zeros())?;
//! let (v, _) = ctl.step(&Vector6::new(2.0, 2.0, 0.0, 0.0, 0.0, 0.0), &g, 0.001)?;
//! assert!((v - Vector6::new(0.02, 0.0, 0.0, 0.0, 0.0, 0.0)).norm() < 1e-15);
//! # Ok::<(), rpq_virtual_fixtures::Error>(())
//! ```
#![warn(missing_docs)]

mod combine;
mod controller;
mod error;
mod law;
mod projection;
mod sequence;
mod source;
mod steady_hand;
pub mod tasks;
mod user;

pub use combine::{combine, Combination, Combined};
pub use controller::{
    uniform_scale, AdmittanceController, ControllerConfig, Limits, Mode, Shaping, StepInfo,
};
pub use error::Error;
pub use law::{
    closed_loop_direction, closed_loop_velocity, Compliance, EffectiveCompliance, FixtureKind,
};
pub use projection::{Projection, RankTolerance};
pub use sequence::{Completion, SequenceState, Sequencer, Step, StepProgress, Transition};
pub use source::{
    CurvePoint, Guidance, GuidanceSource, ParametricCurve, PlaneSurface, PointTarget, PolylinePath,
    RcmCone, TriangleMeshSurface,
};
pub use steady_hand::{euler_xyz, euler_xyz_jacobian, r_xyz, RobotImperfections, SteadyHandRobot};
pub use user::{autonomous_force, Observation, SimulatedUser, UserModel};
