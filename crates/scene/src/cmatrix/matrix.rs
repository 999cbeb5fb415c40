//! The collision-matrix type (after MoveIt's allowed-collision matrix): names and poses
//! only, no scenario.

use serde::{Deserialize, Serialize};

use super::record::{GeneratorSettings, PairDecision};
use crate::pose::PoseSpec;

/// An object the matrix was computed for.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MatrixObject {
    /// Object name as in the scenario.
    pub name: String,
    /// Base pose (robots) or pose (simple objects) in the world.
    pub pose: PoseSpec,
}

/// A collision matrix: the body pairs (`object/body` names) that never collide, the objects
/// and poses it is valid for, and how it was made. It knows names, not a scenario; a
/// scenario checks it against its objects when it takes it (`Scenario::set_collision_matrix`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CollisionMatrix {
    /// How it was generated (absent for hand-written files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generator: Option<GeneratorSettings>,
    /// Objects and the poses the matrix is valid for.
    pub objects: Vec<MatrixObject>,
    /// Body pairs (`object/body` names) that never collide.
    pub never_collide: Vec<[String; 2]>,
    /// The generator's record, one entry per body pair (absent for hand-written files;
    /// informational: `never_collide` alone decides what is skipped).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub decisions: Vec<PairDecision>,
}

impl CollisionMatrix {
    /// Number of pairs listed.
    pub fn len(&self) -> usize {
        self.never_collide.len()
    }

    /// True if no pair is listed.
    pub fn is_empty(&self) -> bool {
        self.never_collide.is_empty()
    }

    /// True if the pair `a`, `b` (`object/body` names, either order) is listed as never
    /// colliding.
    pub fn never_collides(&self, a: &str, b: &str) -> bool {
        self.never_collide
            .iter()
            .any(|[x, y]| (x == a && y == b) || (x == b && y == a))
    }
}
