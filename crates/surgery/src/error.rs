//! The crate's error type.

use std::path::PathBuf;

/// Everything the surgical protections refuse: bad outlines and parameters, meshes the engine
/// refuses, and the scenario's files.
#[derive(Debug, thiserror::Error)]
pub enum SurgeryError {
    /// Fewer distinct outline points than a polygon needs.
    #[error("the outline needs at least 3 distinct points, got {got}")]
    TooFewPoints {
        /// Distinct points found.
        got: usize,
    },
    /// A NaN or infinite number in an input.
    #[error("{what} is not finite (NaN or infinite)")]
    NonFinite {
        /// Which input.
        what: &'static str,
    },
    /// The outline encloses no area or cannot be parametrized (collinear points, a spike).
    #[error("degenerate outline: {0}")]
    DegenerateOutline(String),
    /// Two edges of the outline cross or touch (numbered from 0, edge `k` joins points `k`
    /// and `k + 1` after consecutive duplicates are merged).
    #[error("the outline intersects itself: edge {a} meets edge {b}")]
    SelfIntersecting {
        /// First edge.
        a: usize,
        /// Second edge.
        b: usize,
    },
    /// A curve must be star-shaped from its parametrization origin and is not.
    #[error("{what} is not star-shaped from any point, so it cannot be parametrized radially")]
    NotStarShaped {
        /// Which curve.
        what: &'static str,
    },
    /// A parameter outside its range.
    #[error("{what} = {value} is out of range: expected {expected}")]
    OutOfRange {
        /// Parameter.
        what: &'static str,
        /// Its value.
        value: f64,
        /// The accepted range.
        expected: String,
    },
    /// The inward offset of the outline by the cut width does not leave a valid polygon.
    #[error(
        "the outline offset inward by the cut width {width} m is not a valid polygon: {reason}"
    )]
    OffsetTooLarge {
        /// The cut width Δx [m].
        width: f64,
        /// What went wrong.
        reason: String,
    },
    /// A curve point lies where the ground surface is absent (nothing below or above it).
    #[error("no ground surface under the point ({x:.4}, {y:.4}) m of the outline frame")]
    OffGround {
        /// x in the outline frame [m].
        x: f64,
        /// y in the outline frame [m].
        y: f64,
    },
    /// The proximity engine refused a mesh.
    #[error(transparent)]
    Mesh(#[from] rpq_proximity::ProximityError),
    /// Robot model or kinematics.
    #[error(transparent)]
    Kinematics(#[from] rpq_kinematics::Error),
    /// The virtual-fixture library refused an input.
    #[error(transparent)]
    Fixture(#[from] rpq_virtual_fixtures::Error),
    /// A file could not be written.
    #[error("cannot write {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

impl SurgeryError {
    /// An [`SurgeryError::OutOfRange`] with the expected range as text.
    pub(crate) fn range(what: &'static str, value: f64, expected: impl Into<String>) -> Self {
        SurgeryError::OutOfRange {
            what,
            value,
            expected: expected.into(),
        }
    }
}
