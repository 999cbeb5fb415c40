//! The crate's error type.

use std::path::PathBuf;

/// Everything that can go wrong in this crate: malformed models, bad inputs to the
/// kinematic functions, invalid meshes and unresolvable mesh paths.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The URDF text could not be parsed.
    #[error("malformed URDF: {message}")]
    Urdf {
        /// The parser's message.
        message: String,
    },
    /// A file could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The model has no links at all.
    #[error("the robot has no links")]
    NoLinks,
    /// Two links share a name.
    #[error("duplicate link name `{name}`")]
    DuplicateLink {
        /// The repeated name.
        name: String,
    },
    /// Two joints share a name.
    #[error("duplicate joint name `{name}`")]
    DuplicateJoint {
        /// The repeated name.
        name: String,
    },
    /// A joint names a parent or child link that does not exist.
    #[error("joint `{joint}` refers to unknown link `{link}`")]
    JointLinkNotFound {
        /// The joint.
        joint: String,
        /// The missing link.
        link: String,
    },
    /// A link is the child of more than one joint.
    #[error("link `{link}` is the child of several joints: {joints:?}")]
    MultipleParents {
        /// The link.
        link: String,
        /// The joints claiming it as child.
        joints: Vec<String>,
    },
    /// More than one link has no parent joint.
    #[error("the robot has several root links: {roots:?}")]
    MultipleRoots {
        /// The parentless links.
        roots: Vec<String>,
    },
    /// The joints form a cycle (some links are not reachable from a unique root).
    #[error("kinematic cycle: links {links:?} are not reachable from a root")]
    Cycle {
        /// The links on or hanging off the cycle.
        links: Vec<String>,
    },
    /// A joint type this crate does not model (floating, planar, spherical).
    #[error("joint `{joint}` has unsupported type `{kind}`")]
    UnsupportedJointType {
        /// The joint.
        joint: String,
        /// Its URDF type.
        kind: String,
    },
    /// Mimic joints are rejected rather than silently treated as independent.
    #[error("joint `{joint}` mimics `{mimicked}`; mimic joints are not supported")]
    MimicUnsupported {
        /// The mimicking joint.
        joint: String,
        /// The joint it follows.
        mimicked: String,
    },
    /// A joint with an invalid origin, axis or limits.
    #[error("joint `{joint}`: {reason}")]
    InvalidJoint {
        /// The joint.
        joint: String,
        /// What is wrong.
        reason: String,
    },
    /// A slice has the wrong number of elements.
    #[error("{what}: expected {expected} values, got {got}")]
    WrongLength {
        /// Which argument.
        what: &'static str,
        /// Required length.
        expected: usize,
        /// Given length.
        got: usize,
    },
    /// A joint value is NaN or infinite.
    #[error("joint `{joint}` has non-finite value {value}")]
    NonFinite {
        /// The joint.
        joint: String,
        /// The value.
        value: f64,
    },
    /// No movable joint has this name.
    #[error("unknown joint `{name}`")]
    UnknownJoint {
        /// The name asked for.
        name: String,
    },
    /// No link has this name.
    #[error("unknown link `{name}`")]
    UnknownLink {
        /// The name asked for.
        name: String,
    },
    /// A named joint value was given twice.
    #[error("joint `{joint}` is given more than once")]
    DuplicateValue {
        /// The joint.
        joint: String,
    },
    /// A movable joint has no value in a named assignment.
    #[error("no value for joint `{joint}`")]
    MissingJoint {
        /// The joint.
        joint: String,
    },
    /// A joint value lies outside the joint's limits.
    #[error("joint `{joint}` at {value} is outside its limits [{lower}, {upper}]")]
    OutOfLimits {
        /// The joint.
        joint: String,
        /// The value.
        value: f64,
        /// Lower limit.
        lower: f64,
        /// Upper limit.
        upper: f64,
    },
    /// A mesh, its STL data or its STL file is refused by the suite's one mesh rule
    /// ([`rpq_base::mesh`], shared with `rpq_proximity`): empty mesh, non-finite vertex,
    /// index out of range, degenerate triangle, malformed STL, unreadable file. Errors from
    /// [`crate::TriMesh::from_stl_file`] name the file.
    #[error(transparent)]
    Mesh(#[from] rpq_base::mesh::MeshError),
    /// A `package://` URI names a package the resolver does not know.
    #[error("unknown package `{package}` in `{uri}`")]
    UnknownPackage {
        /// The package name.
        package: String,
        /// The full URI.
        uri: String,
    },
    /// A mesh file name with a scheme this crate cannot resolve (e.g. `http://`).
    #[error("unsupported mesh URI `{uri}`")]
    UnsupportedUri {
        /// The URI.
        uri: String,
    },
    /// A link's collision geometry is a primitive, not a mesh.
    #[error("link `{link}` has a {geometry} collision geometry; only meshes can be loaded")]
    UnsupportedGeometry {
        /// The link.
        link: String,
        /// The primitive (`box`, `cylinder`, `sphere`, `capsule`).
        geometry: &'static str,
    },
}
