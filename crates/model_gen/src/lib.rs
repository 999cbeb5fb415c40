//! Deterministic generator of the suite's robot model: `urdf/rx60b.urdf` and one closed,
//! watertight binary STL per link in `meshes/rx60b/`.
//!
//! ```text
//! cargo run -p rpq_model_gen -- rx60 --out-dir .          # (re)write the files
//! cargo run -p rpq_model_gen -- rx60 --out-dir . --check  # fail if any is stale
//! ```
//!
//! The model is a Stäubli RX60B-like 6-axis arm. Links are `base_link`, `link_1` …
//! `link_6` and a mesh-less `tool0` at the flange; joints are `joint_1` … `joint_6`
//! (revolute) and `joint_6-tool0` (fixed). Standard DH, `θi = qi + offset` (details and
//! the URDF frame convention in [`rx60`]):
//!
//! | joint | offset | d (m) | a (m) | α    | limits (°)      |
//! |-------|--------|-------|-------|------|-----------------|
//! | 1     | 0      | 0.341 | 0     | −π/2 | ±160            |
//! | 2     | −π/2   | 0     | 0.290 | 0    | ±127.5          |
//! | 3     | +π/2   | 0     | 0     | +π/2 | ±134.5          |
//! | 4     | 0      | 0.310 | 0     | −π/2 | ±270            |
//! | 5     | 0      | 0     | 0     | +π/2 | −109.5 / +120.5 |
//! | 6     | 0      | 0.065 | 0     | 0    | ±270            |
//!
//! At `q = 0` the arm stands straight up (Stäubli's zero): flange at z = 1.006 m.
//!
//! | link        | shells                                            |
//! |-------------|---------------------------------------------------|
//! | `base_link` | foot plate + column (one loft), cable connector    |
//! | `link_1`    | turret column, J2 shoulder housing, J2 motor cover |
//! | `link_2`    | shoulder boss, elbow boss, tapered beam (+y side)  |
//! | `link_3`    | elbow housing, J4 sleeve                           |
//! | `link_4`    | forearm tube, yoke, two wrist lugs                 |
//! | `link_5`    | wrist body (J5), J6 housing                        |
//! | `link_6`    | flange disc                                        |
//!
//! Meshes: each link is a union of closed parametric shells (lofted superellipse sections
//! with filleted or domed ends, see [`geometry`]), so every shell is watertight and
//! consistently oriented by construction; shells of a link may overlap but share no
//! vertex. The files hold about 23,000 triangles in total, the size of the paper's RX60B
//! models. Output is byte-identical on every run: the STL writer ([`stl`]) fixes the
//! header and rounds vertices to a 0.1 µm grid before `f32`, and the URDF is formatted by
//! hand.
//!
//! ```
//! let files = rpq_model_gen::rx60_files().unwrap();
//! assert_eq!(files[0].path, std::path::Path::new("urdf/rx60b.urdf"));
//! assert_eq!(files.len(), 1 + rpq_model_gen::rx60::LINKS.len());
//! ```
#![warn(missing_docs)]

pub mod geometry;
pub mod hit_dlr;
pub mod mass;
pub mod rx60;
pub mod stl;

use std::path::{Path, PathBuf};

/// Errors of the model generator.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A shell description cannot produce a valid closed mesh.
    #[error("invalid shell `{shell}`: {reason}")]
    InvalidShell {
        /// Shell name.
        shell: String,
        /// What is wrong.
        reason: String,
    },
    /// A link name the model does not have.
    #[error("unknown link `{link}`")]
    UnknownLink {
        /// The name asked for.
        link: String,
    },
    /// Reading or writing a file failed.
    #[error("cannot access {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}

/// One generated file: a path relative to the output root and its exact bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GeneratedFile {
    /// Path relative to the output (repository) root, e.g. `meshes/rx60b/link_1.stl`.
    pub path: PathBuf,
    /// File contents.
    pub bytes: Vec<u8>,
}

/// Generates the RX60B model in memory: the URDF first, then one STL per link in
/// [`rx60::LINKS`] order.
pub fn rx60_files() -> Result<Vec<GeneratedFile>, Error> {
    let meshes = rx60_meshes()?;
    let mass = rx60::mass_properties(&meshes);
    let mut files = vec![GeneratedFile {
        path: PathBuf::from(rx60::urdf_path()),
        bytes: rx60::urdf_text(&mass).into_bytes(),
    }];
    for (link, mesh) in &meshes {
        let header = format!(
            "rpq_model_gen {} {link}: binary STL, metres, link frame",
            rx60::ROBOT_NAME
        );
        files.push(GeneratedFile {
            path: PathBuf::from(rx60::mesh_path(link)),
            bytes: stl::encode(mesh, &header),
        });
    }
    Ok(files)
}

/// Generates the HIT/DLR hand in memory: the URDF first, then one STL per link in
/// [`hit_dlr::links`] order.
pub fn hit_dlr_files() -> Result<Vec<GeneratedFile>, Error> {
    let mut files = vec![GeneratedFile {
        path: PathBuf::from(hit_dlr::urdf_path()),
        bytes: hit_dlr::urdf_text().into_bytes(),
    }];
    for link in hit_dlr::links() {
        let mesh = hit_dlr::link_mesh(&link)?;
        let header = format!(
            "rpq_model_gen {} {link}: binary STL, metres, link frame",
            hit_dlr::ROBOT_NAME
        );
        files.push(GeneratedFile {
            path: PathBuf::from(hit_dlr::mesh_path(&link)),
            bytes: stl::encode(&mesh, &header),
        });
    }
    Ok(files)
}

/// The link meshes of the RX60B, in [`rx60::LINKS`] order, in their link frames.
pub fn rx60_meshes() -> Result<Vec<(&'static str, geometry::Mesh)>, Error> {
    rx60::LINKS
        .iter()
        .map(|&l| Ok((l, rx60::link_mesh(l)?)))
        .collect()
}

/// Writes `files` below `out_dir`, creating directories as needed.
pub fn write_files(files: &[GeneratedFile], out_dir: &Path) -> Result<(), Error> {
    for f in files {
        let path = out_dir.join(&f.path);
        let io = |source| Error::Io {
            path: path.clone(),
            source,
        };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        std::fs::write(&path, &f.bytes).map_err(io)?;
    }
    Ok(())
}

/// Compares `files` with what is below `out_dir`; returns the paths that are missing or
/// differ (empty when everything is up to date).
pub fn stale_files(files: &[GeneratedFile], out_dir: &Path) -> Vec<PathBuf> {
    files
        .iter()
        .filter(|f| std::fs::read(out_dir.join(&f.path)).ok().as_deref() != Some(&f.bytes[..]))
        .map(|f| f.path.clone())
        .collect()
}
