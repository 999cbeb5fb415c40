//! The crate's error type.

/// Everything that can go wrong when building a [`crate::Model`] or calling a checked
/// query (`try_*`).
///
/// The unchecked queries never fail; see the crate docs for their answer on non-finite input.
#[derive(Debug, thiserror::Error)]
pub enum ProximityError {
    /// A pose given to a checked query (`try_*`) has a NaN or infinite component.
    #[error("pose is not finite (NaN or infinite translation or rotation)")]
    NonFinitePose,
    /// A query parameter is out of its domain (NaN tolerance or bound, negative or NaN error
    /// allowance).
    #[error("invalid query parameter {name} = {value}")]
    InvalidParameter {
        /// The parameter.
        name: &'static str,
        /// Its value.
        value: f64,
    },
    /// The mesh, its STL data or its STL file is refused by the suite's one mesh rule
    /// ([`rpq_base::mesh`], shared with `rpq_kinematics`): empty mesh, non-finite vertex,
    /// index out of range, degenerate triangle, malformed STL, unreadable file. Errors from
    /// [`crate::Model::from_stl_file`] name the file.
    #[error(transparent)]
    Mesh(#[from] rpq_base::mesh::MeshError),
    /// The mesh is too large for 32-bit triangle indices.
    #[error("mesh too large: {0} triangles (at most 2^31)")]
    TooLarge(usize),
}
