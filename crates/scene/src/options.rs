//! Switches for the three RPQ optimizations.

use serde::{Deserialize, Serialize};

/// Which resolution levels a collision query walks through (paper §3.2.1, Fig. 2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ResolutionLevels {
    /// Meshes only (every link pair goes straight to the mesh engine).
    L3,
    /// Oriented box of each link, then the meshes of the pairs whose boxes overlap.
    L2L3,
    /// Box of the whole complex object first, then link boxes, then meshes.
    L1L2L3,
}

impl ResolutionLevels {
    /// All three settings, lowest resolution last.
    pub const ALL: [ResolutionLevels; 3] = [
        ResolutionLevels::L3,
        ResolutionLevels::L2L3,
        ResolutionLevels::L1L2L3,
    ];

    /// Short label (`L3`, `L2+L3`, `L1+L2+L3`).
    pub fn label(self) -> &'static str {
        match self {
            ResolutionLevels::L3 => "L3",
            ResolutionLevels::L2L3 => "L2+L3",
            ResolutionLevels::L1L2L3 => "L1+L2+L3",
        }
    }

    pub(crate) fn uses_l2(self) -> bool {
        self != ResolutionLevels::L3
    }

    pub(crate) fn uses_l1(self) -> bool {
        self == ResolutionLevels::L1L2L3
    }
}

/// The three optimizations, each switchable; they change speed, never answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueryOptions {
    /// Resolution levels walked by collision queries; for distance queries, any setting
    /// with L2 orders and prunes link pairs by the lower bound of their boxes.
    pub resolution_levels: ResolutionLevels,
    /// Order link-pair queries by the online-updated weight matrix (paper §3.2.2).
    pub weight_matrix: bool,
    /// Skip link pairs the collision matrix marks as never colliding (paper §3.2.3).
    /// Used by collision queries only: distances stay exact.
    pub collision_matrix: bool,
}

impl QueryOptions {
    /// Every optimization on (the default).
    pub const ALL_ON: QueryOptions = QueryOptions {
        resolution_levels: ResolutionLevels::L1L2L3,
        weight_matrix: true,
        collision_matrix: true,
    };
    /// Every optimization off: plain pairwise mesh queries in index order.
    pub const ALL_OFF: QueryOptions = QueryOptions {
        resolution_levels: ResolutionLevels::L3,
        weight_matrix: false,
        collision_matrix: false,
    };
}

impl QueryOptions {
    /// The default: all resolution levels and the collision matrix, without the weight
    /// matrix, whose effect on time was mixed on the two-RX60 sweep (`rpq_eval`; see
    /// [`crate::WeightMatrix`]).
    pub const RECOMMENDED: QueryOptions = QueryOptions {
        resolution_levels: ResolutionLevels::L1L2L3,
        weight_matrix: false,
        collision_matrix: true,
    };
}

impl Default for QueryOptions {
    /// [`QueryOptions::RECOMMENDED`].
    fn default() -> Self {
        QueryOptions::RECOMMENDED
    }
}
