//! The crate's error type.

use std::path::PathBuf;

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
    /// The mesh has no triangles (or no vertices).
    #[error("empty mesh: a model needs at least one triangle")]
    EmptyMesh,
    /// A vertex coordinate is NaN or infinite.
    #[error("vertex {index} is not finite: {value:?}")]
    NonFiniteVertex {
        /// Index of the offending vertex.
        index: usize,
        /// Its coordinates.
        value: [f64; 3],
    },
    /// A triangle refers to a vertex that does not exist.
    #[error("triangle {triangle} refers to vertex {index}, but the mesh has {count} vertices")]
    IndexOutOfRange {
        /// Index of the offending triangle.
        triangle: usize,
        /// The out-of-range vertex index.
        index: u32,
        /// Number of vertices in the mesh.
        count: usize,
    },
    /// A triangle has (numerically) zero area: a repeated index, or a height at most `1e-12`
    /// times its longest edge (the rule of [`rpq_base::mesh`], shared with `rpq_kinematics`).
    #[error("triangle {triangle} is degenerate (vertices {indices:?}, area {area:e})")]
    DegenerateTriangle {
        /// Index of the offending triangle.
        triangle: usize,
        /// Its vertex indices.
        indices: [u32; 3],
        /// Its area.
        area: f64,
    },
    /// The mesh is too large for 32-bit triangle indices.
    #[error("mesh too large: {0} triangles (at most 2^31)")]
    TooLarge(usize),
    /// The STL data could not be parsed.
    #[error("malformed STL data: {0}")]
    Stl(#[source] std::io::Error),
    /// An STL file could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// An STL file was read but its mesh is invalid.
    #[error("invalid mesh in {path}: {source}")]
    MeshFile {
        /// The file.
        path: PathBuf,
        /// What is wrong with the mesh.
        #[source]
        source: Box<ProximityError>,
    },
}

impl From<rpq_base::mesh::MeshError> for ProximityError {
    /// The shared mesh rule's verdict, as this crate's variant of the same meaning.
    fn from(e: rpq_base::mesh::MeshError) -> ProximityError {
        use rpq_base::mesh::MeshError as M;
        match e {
            M::Empty => ProximityError::EmptyMesh,
            M::NonFiniteVertex { index, value } => ProximityError::NonFiniteVertex { index, value },
            M::IndexOutOfRange {
                triangle,
                index,
                count,
            } => ProximityError::IndexOutOfRange {
                triangle,
                index,
                count,
            },
            M::DegenerateTriangle {
                triangle,
                indices,
                area,
            } => ProximityError::DegenerateTriangle {
                triangle,
                indices,
                area,
            },
            M::Stl(e) => ProximityError::Stl(e),
        }
    }
}
