//! RPQ robot layer (Hernansanz et al., *RPQ: Robotic Proximity Queries*, ICINCO 2007,
//! §3): a [`Scenario`] of objects in one world frame — simple objects (one mesh) and
//! complex objects / [`Robot`]s (kinematic chains of meshes from URDF, with forward
//! kinematics, Jacobians and closed-form RX60 inverse kinematics) — and proximity
//! queries between them on top of the `rpq_proximity` mesh engine, with the paper's three
//! optimizations, each switchable through [`QueryOptions`]:
//!
//! * resolution levels (L1 box of the whole robot, L2 box of each link, L3 meshes);
//! * the [`WeightMatrix`] ordering link-pair queries by online-updated probabilities;
//! * the [`CollisionMatrix`] of link pairs that never collide, proven by bounds or found by
//!   sampling and local search ([`generate_collision_matrix`]).
//!
//! Robot–robot and robot–object minimum distance names the two closest links with
//! witness points and prunes link pairs by box lower bounds.
//!
//! A [`World`] wraps a scenario for the `proximity_query` node and planners: queries by
//! body and object name between selections, per-body padding, a run-time
//! allowed-collision matrix and batches of configurations on all cores.
//!
//! ```no_run
//! use rpq_scene::{load_scene, QueryOptions};
//! let mut scene = load_scene("config/rx60_pair.scene.yaml")?;
//! let left = scene.scenario.object_index("left")?;
//! scene.scenario.set_joint_positions(left, &[0.0, 0.5, 0.5, 0.0, 0.0, 0.0])?;
//! let c = scene.scenario.collide(&QueryOptions::ALL_ON);
//! let d = scene.scenario.min_distance(&QueryOptions::ALL_ON).unwrap();
//! println!("{} {} {}", c.colliding, d.distance, scene.scenario.body_name(d.body_a));
//! # Ok::<(), rpq_scene::SceneError>(())
//! ```
#![warn(missing_docs)]

mod batch;
pub mod broadphase;
pub mod cmatrix;
pub mod cmatrix_generator;
mod error;
pub mod eval;
pub mod ik;
mod object;
mod options;
mod pose;
mod posing;
mod scenario;
pub mod spec;
mod state;
mod text;
mod weights;
pub mod world;

pub use batch::{BatchAnswer, BatchQuery};
pub use cmatrix::{CollisionMatrix, GeneratorSettings};
pub use cmatrix_generator::{generate_collision_matrix, Progress};
pub use error::SceneError;
pub use ik::{ArmConfiguration, Elbow, IkError, Rx60Ik, Shoulder, Wrist};
pub use object::{Body, Object, Robot, SimpleObject};
pub use options::{QueryOptions, ResolutionLevels};
pub use pose::PoseSpec;
pub use scenario::{BodyId, CollisionReport, DistanceReport, QueryStats, Scenario};
pub use spec::{load_scene, ConfigTable, SceneSpec};
pub use state::ScenarioState;
pub use weights::WeightMatrix;
pub use world::{
    BodyPairContact, CollisionAnswer, ContactMode, Selection, StateAnswer, ToleranceAnswer,
    TolerancePair, World,
};
