//! Triangle meshes as the suite reads them: STL parsing (binary and ASCII) into `f64` vertices
//! and indexed triangles, and the one validation rule every crate applies to a mesh.
//!
//! # The mesh rule
//!
//! A mesh is refused ([`MeshError`]) when it has no triangle or no vertex, a vertex with a NaN
//! or infinite coordinate, or a triangle index out of range. Triangles that carry no surface
//! are not errors: CAD exports contain them, and other proximity libraries accept such meshes.
//! They are **skipped** ([`validate`] counts them in [`Skipped`], [`classify`] says which):
//!
//! * a **degenerate** triangle: two of its indices are equal, or twice its area is at most
//!   [`DEGENERATE_RATIO`] times its longest edge squared (its height over the longest edge is
//!   at most `DEGENERATE_RATIO`), or that test is NaN. The rule depends on the shape only,
//!   not on the unit: a mesh scaled by any factor (a millimetre mesh with a URDF scale of
//!   0.001, say) keeps and skips the same triangles, up to rounding;
//! * a **duplicate**: the same three vertex indices (in any order) as an earlier triangle.
//!
//! A mesh left with no triangle is refused ([`MeshError::NothingLeft`]). [`read_stl_file`]
//! prints one warning per file that had triangles skipped, with the counts.
//!
//! ```
//! use rpq_base::mesh::{validate, MeshError, Skipped};
//! let v = [[0.0, 0.0, 0.0], [1e-6, 0.0, 0.0], [0.0, 1e-6, 0.0], [2e-6, 0.0, 0.0]];
//! assert_eq!(validate(&v, &[[0, 1, 2]]).unwrap(), Skipped::default()); // small, well shaped
//! let s = validate(&v, &[[0, 1, 2], [0, 1, 3], [2, 1, 0]]).unwrap(); // collinear, repeated
//! assert_eq!((s.degenerate, s.duplicate), (1, 1));
//! assert!(matches!(validate(&v, &[[0, 1, 3]]), Err(MeshError::NothingLeft { triangles: 1 })));
//! ```

use std::path::{Path, PathBuf};

/// Largest ratio `2 · area / longest edge²` (dimensionless) of a triangle counted as
/// degenerate: see the module docs.
pub const DEGENERATE_RATIO: f64 = 1e-12;

/// What is wrong with a mesh or its STL data.
#[derive(Debug, thiserror::Error)]
pub enum MeshError {
    /// The mesh has no triangles or no vertices.
    #[error("empty mesh: no triangles or no vertices")]
    Empty,
    /// A vertex coordinate is NaN or infinite.
    #[error("vertex {index} is not finite: {value:?}")]
    NonFiniteVertex {
        /// Index of the vertex.
        index: usize,
        /// Its coordinates.
        value: [f64; 3],
    },
    /// A triangle refers to a vertex that does not exist.
    #[error("triangle {triangle} refers to vertex {index}, but the mesh has {count} vertices")]
    IndexOutOfRange {
        /// Index of the triangle.
        triangle: usize,
        /// The vertex index out of range.
        index: u32,
        /// Number of vertices of the mesh.
        count: usize,
    },
    /// Every triangle is skipped (degenerate or a duplicate): no surface is left.
    #[error("no surface left: all {triangles} triangles are degenerate (zero area) or duplicates")]
    NothingLeft {
        /// Number of triangles of the mesh.
        triangles: usize,
    },
    /// The bytes are not readable STL data.
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
    /// An STL file was refused before reading: not a regular file (a device, FIFO, socket or
    /// directory), a file under `/proc`, `/sys` or `/dev`, or larger than [`MAX_STL_BYTES`].
    #[error("cannot read STL file: {0}")]
    Refused(#[source] crate::file::FileError),
    /// An STL file was read, but its data are malformed or its mesh is invalid.
    #[error("invalid mesh in {path}: {source}")]
    File {
        /// The file.
        path: PathBuf,
        /// What is wrong with its data or mesh (never `Io` or `File`).
        #[source]
        source: Box<MeshError>,
    },
}

/// An indexed triangle mesh as read from STL, not yet validated.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StlMesh {
    /// Vertex positions, in the file's length unit; identical vertices are merged.
    pub vertices: Vec<[f64; 3]>,
    /// Triangles as indices into `vertices`, in the file's order and winding.
    pub triangles: Vec<[u32; 3]>,
}

/// Parses STL data, binary or ASCII (recognised by content). The mesh is not validated: pass
/// it to [`validate`] (the crates' mesh constructors do).
pub fn parse_stl(bytes: &[u8]) -> Result<StlMesh, MeshError> {
    let stl = stl_io::read_stl(&mut std::io::Cursor::new(bytes)).map_err(MeshError::Stl)?;
    Ok(StlMesh {
        vertices: stl
            .vertices
            .iter()
            .map(|v| [v[0], v[1], v[2]].map(f64::from))
            .collect(),
        triangles: stl
            .faces
            .iter()
            .map(|f| f.vertices.map(|i| i as u32))
            .collect(),
    })
}

/// Largest STL file [`read_stl_file`] reads: 256 MiB (about 5 million binary triangles).
pub const MAX_STL_BYTES: u64 = 256 << 20;

/// Reads an STL file (binary or ASCII), parses it with [`parse_stl`] and checks it with
/// [`validate`] (a warning on stderr counts skipped triangles). Errors name the file: [`MeshError::Io`] when it cannot be read,
/// [`MeshError::File`] (wrapping the parse or validation error) when its content is refused.
pub fn read_stl_file(path: &Path) -> Result<StlMesh, MeshError> {
    let bytes = crate::file::read_bounded(path, MAX_STL_BYTES).map_err(|e| match e {
        crate::file::FileError::Io { path, source } => MeshError::Io { path, source },
        other => MeshError::Refused(other),
    })?;
    let in_file = |e| MeshError::File {
        path: path.to_owned(),
        source: Box::new(e),
    };
    let mesh = parse_stl(&bytes).map_err(in_file)?;
    let skipped = validate(&mesh.vertices, &mesh.triangles).map_err(in_file)?;
    warn_skipped(&path.display().to_string(), &skipped, mesh.triangles.len());
    Ok(mesh)
}

/// Encodes triangles (three corners each, in the mesh's length unit) as binary STL data: an
/// 80-byte header, the triangle count and one 50-byte record per triangle, normals left zero.
/// Readers that need normals (most do not) recompute them from the winding.
pub fn binary_stl(triangles: &[[[f32; 3]; 3]]) -> Vec<u8> {
    let mut out = Vec::with_capacity(84 + 50 * triangles.len());
    out.extend_from_slice(&[b' '; 80]);
    out.extend_from_slice(&(triangles.len() as u32).to_le_bytes());
    for t in triangles {
        out.extend_from_slice(&[0u8; 12]);
        for c in t.iter().flatten() {
            out.extend_from_slice(&c.to_le_bytes());
        }
        out.extend_from_slice(&[0, 0]);
    }
    out
}

/// How many triangles of a mesh the rule skips (module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Skipped {
    /// Degenerate triangles (repeated index, or no area relative to their size).
    pub degenerate: usize,
    /// Repeats of an earlier triangle's three vertex indices.
    pub duplicate: usize,
}

impl Skipped {
    /// Degenerate and duplicate triangles together.
    pub fn total(&self) -> usize {
        self.degenerate + self.duplicate
    }
}

impl std::fmt::Display for Skipped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} degenerate (zero-area) and {} duplicate triangles skipped",
            self.degenerate, self.duplicate
        )
    }
}

/// Checks a mesh (module docs): at least one triangle and one vertex, finite vertices,
/// indices in range; errors name the first offence, checked in that order. Returns how many
/// triangles are skipped (degenerate or duplicate); a mesh left with none is refused.
pub fn validate<P>(vertices: &[P], triangles: &[[u32; 3]]) -> Result<Skipped, MeshError>
where
    P: Copy + Into<[f64; 3]>,
{
    classify(vertices, triangles).map(|(_, skipped)| skipped)
}

/// [`validate`], and which triangles are kept: `keep[i]` is false for the skipped ones.
pub fn classify<P>(
    vertices: &[P],
    triangles: &[[u32; 3]],
) -> Result<(Vec<bool>, Skipped), MeshError>
where
    P: Copy + Into<[f64; 3]>,
{
    if triangles.is_empty() || vertices.is_empty() {
        return Err(MeshError::Empty);
    }
    if let Some(index) = vertices
        .iter()
        .position(|&v| !v.into().iter().all(|x| x.is_finite()))
    {
        return Err(MeshError::NonFiniteVertex {
            index,
            value: vertices[index].into(),
        });
    }
    for (triangle, &indices) in triangles.iter().enumerate() {
        if let Some(&index) = indices.iter().find(|&&k| k as usize >= vertices.len()) {
            return Err(MeshError::IndexOutOfRange {
                triangle,
                index,
                count: vertices.len(),
            });
        }
    }
    let mut keep = vec![true; triangles.len()];
    let mut skipped = Skipped::default();
    let mut seen = TriangleSet::with_capacity(triangles.len());
    for (k, &indices) in triangles.iter().enumerate() {
        let corners = indices.map(|i| vertices[i as usize].into());
        if degenerate(indices, corners).is_some() {
            keep[k] = false;
            skipped.degenerate += 1;
        } else if !seen.insert(indices) {
            keep[k] = false;
            skipped.duplicate += 1;
        }
    }
    if skipped.total() == triangles.len() {
        return Err(MeshError::NothingLeft {
            triangles: triangles.len(),
        });
    }
    Ok((keep, skipped))
}

/// A set of triangles by their sorted vertex indices: open addressing, multiplicative hash
/// (much cheaper than a `HashSet` with the default hasher on meshes of many triangles).
struct TriangleSet {
    slots: Vec<[u32; 3]>,
    mask: usize,
}

impl TriangleSet {
    const EMPTY: [u32; 3] = [u32::MAX; 3];

    fn with_capacity(n: usize) -> TriangleSet {
        let size = (2 * n).next_power_of_two().max(8);
        TriangleSet {
            slots: vec![Self::EMPTY; size],
            mask: size - 1,
        }
    }

    /// Adds the triangle; false if it was there already.
    fn insert(&mut self, t: [u32; 3]) -> bool {
        let mut t = t;
        t.sort_unstable();
        let h = (u64::from(t[0]).wrapping_mul(0x9E37_79B9_7F4A_7C15)
            ^ u64::from(t[1]).wrapping_mul(0xC2B2_AE3D_27D4_EB4F)
            ^ u64::from(t[2]).wrapping_mul(0x1656_67B1_9E37_79F9))
            >> 20;
        let mut k = h as usize & self.mask;
        loop {
            let s = &mut self.slots[k];
            if *s == Self::EMPTY {
                *s = t;
                return true;
            }
            if *s == t {
                return false;
            }
            k = (k + 1) & self.mask;
        }
    }
}

/// Prints the one warning of the mesh rule (stderr) when triangles of `what` (a file, a
/// link) are skipped.
pub fn warn_skipped(what: &str, skipped: &Skipped, triangles: usize) {
    if skipped.total() > 0 {
        eprintln!("warning: {what}: {skipped} (of {triangles})");
    }
}

/// `Some(area)` if the triangle with these indices and corners is degenerate (see the module
/// docs), `None` if it is valid.
pub fn degenerate(indices: [u32; 3], corners: [[f64; 3]; 3]) -> Option<f64> {
    let sub = |p: [f64; 3], q: [f64; 3]| [p[0] - q[0], p[1] - q[1], p[2] - q[2]];
    let dot = |u: [f64; 3], v: [f64; 3]| u[0] * v[0] + u[1] * v[1] + u[2] * v[2];
    let [p0, p1, p2] = corners;
    let (e0, e1, e2) = (sub(p1, p0), sub(p2, p0), sub(p2, p1));
    let cross = [
        e0[1] * e1[2] - e0[2] * e1[1],
        e0[2] * e1[0] - e0[0] * e1[2],
        e0[0] * e1[1] - e0[1] * e1[0],
    ];
    let twice_area = dot(cross, cross).sqrt();
    let longest = dot(e0, e0).max(dot(e1, e1)).max(dot(e2, e2));
    let repeated = indices[0] == indices[1] || indices[1] == indices[2] || indices[0] == indices[2];
    (repeated || twice_area.is_nan() || twice_area <= DEGENERATE_RATIO * longest)
        .then_some(0.5 * twice_area)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tetrahedron(scale: f64) -> (Vec<[f64; 3]>, Vec<[u32; 3]>) {
        let v = [
            [0.0, 0.0, 0.0],
            [1.0, 0.0, 0.0],
            [0.0, 1.0, 0.0],
            [0.0, 0.0, 1.0],
        ]
        .map(|p| p.map(|x| x * scale));
        (v.to_vec(), vec![[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])
    }

    #[test]
    fn the_rule_does_not_depend_on_the_unit() {
        for scale in [1e-9, 1e-6, 1e-3, 1.0, 1e3, 1e6] {
            let (v, t) = tetrahedron(scale);
            assert!(validate(&v, &t).is_ok(), "scale {scale}");
            // a sliver: height 1e-13 of the longest edge, skipped beside a good triangle
            let mut s = v.clone();
            s[3] = [0.5 * scale, 1e-13 * scale, 0.0];
            let (keep, skipped) = classify(&s, &[[0, 1, 2], [0, 1, 3]]).unwrap();
            assert_eq!(keep, [true, false], "scale {scale}");
            assert_eq!(skipped.degenerate, 1);
            // alone it leaves nothing
            let e = validate(&s, &[[0, 1, 3]]).unwrap_err();
            assert!(matches!(e, MeshError::NothingLeft { triangles: 1 }), "{e}");
            // height 1e-9 of the longest edge: thin but kept
            s[3] = [0.5 * scale, 1e-9 * scale, 0.0];
            assert_eq!(
                validate(&s, &[[0, 1, 3]]).unwrap(),
                Skipped::default(),
                "scale {scale}"
            );
        }
    }

    #[test]
    fn each_offence_has_its_error() {
        let (v, t) = tetrahedron(1.0);
        assert!(matches!(validate(&v, &[]), Err(MeshError::Empty)));
        assert!(matches!(
            validate::<[f64; 3]>(&[], &t),
            Err(MeshError::Empty)
        ));
        let mut nan = v.clone();
        nan[2][1] = f64::NAN;
        assert!(matches!(
            validate(&nan, &t),
            Err(MeshError::NonFiniteVertex { index: 2, .. })
        ));
        assert!(matches!(
            validate(&v, &[[0, 1, 2], [0, 1, 7]]),
            Err(MeshError::IndexOutOfRange {
                triangle: 1,
                index: 7,
                count: 4
            })
        ));
        // repeated index and duplicates are skipped, not errors; NaN and bad indices still are
        let (keep, skipped) =
            classify(&v, &[[0, 1, 2], [3, 1, 3], [2, 0, 1], [0, 1, 2], [0, 2, 1]]).unwrap();
        assert_eq!(keep, [true, false, false, false, false]);
        assert_eq!((skipped.degenerate, skipped.duplicate), (1, 3));
        assert_eq!(skipped.total(), 4);
        assert!(skipped.to_string().contains("1 degenerate"), "{skipped}");
        let e = validate(&v, &[[1, 1, 2], [2, 2, 2]]).unwrap_err();
        assert!(e.to_string().contains("all 2 triangles"), "{e}");
    }

    /// Many triangles through the hash set: every repeat is found, nothing else.
    #[test]
    fn duplicates_are_found_in_large_meshes() {
        let n = 3000u32;
        let v: Vec<[f64; 3]> = (0..n + 2)
            .map(|i| [f64::from(i), f64::from(i * i % 7), f64::from(i % 3)])
            .collect();
        let mut t: Vec<[u32; 3]> = (0..n).map(|i| [i, i + 1, i + 2]).collect();
        let keep_all = classify(&v, &t).unwrap().0.iter().filter(|&&k| k).count();
        t.extend((0..n).step_by(3).map(|i| [i + 2, i, i + 1]));
        let (keep, s) = classify(&v, &t).unwrap();
        assert_eq!(s.duplicate, (n as usize).div_ceil(3));
        assert_eq!(keep.iter().filter(|&&k| k).count(), keep_all);
    }

    #[test]
    fn binary_and_ascii_stl_parse_to_the_same_mesh() {
        // a unit square in the xy plane, as two triangles sharing an edge
        let corners = [
            [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]],
            [[1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 1.0, 0.0]],
        ];
        let mut ascii = String::from("solid t\n");
        for t in &corners {
            ascii += "facet normal 0 0 1\n outer loop\n";
            for [x, y, z] in t {
                ascii += &format!("  vertex {x} {y} {z}\n");
            }
            ascii += " endloop\nendfacet\n";
        }
        ascii += "endsolid t\n";
        let a = parse_stl(ascii.as_bytes()).unwrap();
        assert_eq!(a.triangles.len(), 2);
        assert_eq!(a.vertices.len(), 4); // shared vertices merged
        let bin = binary_stl(&corners);
        let b = parse_stl(&bin).unwrap();
        assert_eq!(a, b);
        assert!(validate(&b.vertices, &b.triangles).is_ok());
        assert!(matches!(
            parse_stl(b"solid x\n facet normal 0 0 oops\n"),
            Err(MeshError::Stl(_))
        ));
        assert!(parse_stl(&bin[..bin.len() - 10]).is_err());
    }

    #[test]
    fn file_errors_name_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let good = dir.path().join("good.stl");
        let (v, t) = tetrahedron(1.0);
        let corners: Vec<[[f32; 3]; 3]> = t
            .iter()
            .map(|t| t.map(|k| v[k as usize].map(|c| c as f32)))
            .collect();
        std::fs::write(&good, binary_stl(&corners)).unwrap();
        let m = read_stl_file(&good).unwrap();
        assert_eq!((m.vertices.len(), m.triangles.len()), (4, 4));
        let empty = dir.path().join("empty.stl");
        std::fs::write(&empty, binary_stl(&[])).unwrap();
        match read_stl_file(&empty) {
            Err(MeshError::File { path, source }) => {
                assert_eq!(path, empty);
                assert!(matches!(*source, MeshError::Empty));
            }
            other => panic!("{other:?}"),
        }
        let e = read_stl_file(&empty).unwrap_err();
        assert!(e.to_string().contains("empty.stl"), "{e}");
        let missing = dir.path().join("missing.stl");
        assert!(matches!(
            read_stl_file(&missing),
            Err(MeshError::Io { path, .. }) if path == missing
        ));
    }

    /// A mesh path naming a device or a FIFO (a URDF's or scene's typo, or a hostile file)
    /// fails at once instead of reading without end (issue 12, item 8).
    #[test]
    fn special_files_are_refused_at_once() {
        let t0 = std::time::Instant::now();
        let e = read_stl_file(Path::new("/dev/zero")).unwrap_err();
        assert!(matches!(e, MeshError::Refused(_)), "{e}");
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("link.stl");
        // mkfifo(1): the libc call would need `unsafe`, which the workspace forbids.
        let st = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(st.success());
        let e = read_stl_file(&fifo).unwrap_err();
        assert!(e.to_string().contains("link.stl"), "{e}");
        assert!(matches!(e, MeshError::Refused(_)), "{e}");
        assert!(t0.elapsed() < std::time::Duration::from_secs(1));
    }
}
