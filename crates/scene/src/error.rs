//! The crate's error type.

use std::path::PathBuf;

/// Everything that can go wrong in this crate: bad scene or configuration files, unknown
/// names, invalid joint values, mesh loading problems and unreachable IK targets.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SceneError {
    /// An error from the kinematics crate (URDF, joint vectors, meshes).
    #[error(transparent)]
    Kinematics(#[from] rpq_kinematics::Error),
    /// An error from the proximity engine (mesh validation).
    #[error("mesh of `{name}`: {source}")]
    Proximity {
        /// Object or link the mesh belongs to.
        name: String,
        /// The engine's error.
        #[source]
        source: rpq_proximity::ProximityError,
    },
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file that could not be read or written.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A YAML file is malformed; `line` is 1-based when known.
    #[error("{path}{}: {message}", line.map(|l| format!(":{l}")).unwrap_or_default())]
    Yaml {
        /// The malformed YAML file.
        path: PathBuf,
        /// Line of the problem, if known.
        line: Option<usize>,
        /// What is wrong.
        message: String,
    },
    /// A CSV file is malformed; `line` is 1-based.
    #[error("{path}:{line}: {message}")]
    Csv {
        /// The file (or `<input>`).
        path: PathBuf,
        /// Line of the problem.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// An object, robot or link name that does not exist.
    #[error("unknown {what} `{name}`")]
    UnknownName {
        /// `robot`, `object`, `link`, `joint`.
        what: &'static str,
        /// The name asked for.
        name: String,
    },
    /// Two objects share a name.
    #[error("duplicate object name `{name}`")]
    DuplicateName {
        /// The repeated name.
        name: String,
    },
    /// A non-finite number where a finite one is required.
    #[error("{what} is not finite")]
    NonFinite {
        /// Which value is not finite (e.g. `pose of `table``).
        what: String,
    },
    /// A collision matrix that does not fit the scenario.
    #[error("collision matrix: {message}")]
    CollisionMatrix {
        /// What does not fit.
        message: String,
    },
    /// A complex object without any link mesh.
    #[error("`{name}` has no link with a collision mesh")]
    NoGeometry {
        /// Name of the object without meshes.
        name: String,
    },
    /// A collision-matrix generator setting too small for the search to give evidence: a
    /// pair would be listed as never colliding without (enough) distance queries.
    #[error(
        "collision-matrix generator: {setting} = {value} is below the minimum {minimum} \
         (a smaller search would list pairs as never colliding without evidence)"
    )]
    GeneratorSetting {
        /// The setting (`samples`, `refine_starts`, `refine_evaluations`).
        setting: &'static str,
        /// The value given.
        value: usize,
        /// The smallest accepted value.
        minimum: usize,
    },
    /// Invalid argument to a query or builder.
    #[error("{0}")]
    Invalid(String),
}
