//! The collision matrix (paper §3.2.3): body pairs that can never collide, skipped by
//! collision queries.
//!
//! * [`CollisionMatrix`]: the pairs as `object/body` names with the object poses they are
//!   valid for, like MoveIt's allowed-collision matrix; it does not know any scenario.
//! * Its YAML file: [`CollisionMatrix::to_yaml`], [`CollisionMatrix::from_yaml`],
//!   [`CollisionMatrix::load`], [`CollisionMatrix::save`].
//! * What the generator records in it: [`GeneratorSettings`] and one [`PairDecision`] per
//!   body pair.
//!
//! The generator, which needs a scenario, is [`crate::cmatrix_generator`].

mod matrix;
mod record;
mod yaml;

pub use matrix::{CollisionMatrix, MatrixObject};
pub use record::{
    GeneratorSettings, PairDecision, Reason, MIN_REFINE_EVALUATIONS, MIN_REFINE_STARTS, MIN_SAMPLES,
};
