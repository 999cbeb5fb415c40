//! Triangle meshes: STL loading and validation, and a robot's collision meshes.

use std::collections::HashMap;
use std::path::Path;

use nalgebra::{Isometry3, Point3, Vector3};

use crate::model::{Geometry, Robot};
use crate::resolve::MeshResolver;
use crate::Error;

/// A plain indexed triangle mesh (metres).
///
/// The fields are public; meshes built by this crate's loaders have passed
/// [`TriMesh::validate`]: non-empty, finite vertices, indices in range, at least one triangle
/// with a surface. Degenerate triangles (a repeated vertex, or a height at most
/// [`rpq_base::mesh::DEGENERATE_RATIO`] times the longest edge) and duplicates are kept in the
/// mesh and skipped by the queries. The rule is the suite's one mesh rule
/// ([`rpq_base::mesh`]), shared with `rpq_proximity`, and does not depend on the length unit.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TriMesh {
    /// Vertex positions.
    pub vertices: Vec<Point3<f64>>,
    /// Triangles as indices into `vertices`, counter-clockwise seen from outside.
    pub triangles: Vec<[u32; 3]>,
}

impl TriMesh {
    /// Builds a mesh and validates it.
    ///
    /// ```
    /// use nalgebra::Point3;
    /// use rpq_base::mesh::MeshError;
    /// use rpq_kinematics::{Error, TriMesh};
    /// let v = vec![Point3::origin(), Point3::new(1.0, 0.0, 0.0), Point3::new(0.0, 1.0, 0.0)];
    /// assert!(TriMesh::new(v.clone(), vec![[0, 1, 2]]).is_ok());
    /// // a triangle with a repeated vertex is skipped by the queries, not refused ...
    /// assert!(TriMesh::new(v.clone(), vec![[0, 1, 2], [0, 1, 1]]).is_ok());
    /// // ... but a mesh of nothing else has no surface
    /// assert!(matches!(
    ///     TriMesh::new(v, vec![[0, 1, 1]]),
    ///     Err(Error::Mesh(MeshError::NothingLeft { triangles: 1 }))
    /// ));
    /// ```
    pub fn new(vertices: Vec<Point3<f64>>, triangles: Vec<[u32; 3]>) -> Result<TriMesh, Error> {
        let mesh = TriMesh {
            vertices,
            triangles,
        };
        mesh.validate()?;
        Ok(mesh)
    }

    /// Checks the invariants listed on [`TriMesh`]; returns how many triangles the queries
    /// skip (degenerate or duplicate).
    pub fn validate(&self) -> Result<rpq_base::mesh::Skipped, Error> {
        Ok(rpq_base::mesh::validate(&self.vertices, &self.triangles)?)
    }

    /// Area of triangle `t` (m²).
    pub fn triangle_area(&self, t: usize) -> f64 {
        let [a, b, c] = self.triangles[t].map(|i| self.vertices[i as usize]);
        0.5 * (b - a).cross(&(c - a)).norm()
    }

    /// Reads an STL file (binary or ASCII) from memory; identical vertices are merged.
    pub fn from_stl_bytes(bytes: &[u8]) -> Result<TriMesh, Error> {
        let stl = rpq_base::mesh::parse_stl(bytes)?;
        TriMesh::new(
            stl.vertices.into_iter().map(Point3::from).collect(),
            stl.triangles,
        )
    }

    /// Reads an STL file (binary or ASCII); identical vertices are merged. Errors name the
    /// file ([`rpq_base::mesh::read_stl_file`]).
    pub fn from_stl_file(path: impl AsRef<Path>) -> Result<TriMesh, Error> {
        let stl = rpq_base::mesh::read_stl_file(path.as_ref())?;
        Ok(TriMesh {
            vertices: stl.vertices.into_iter().map(Point3::from).collect(),
            triangles: stl.triangles,
        })
    }

    /// Applies a per-axis scale and then a rigid transform to every vertex.
    pub fn transform(&mut self, scale: &Vector3<f64>, pose: &Isometry3<f64>) {
        for v in &mut self.vertices {
            *v = pose * Point3::from(v.coords.component_mul(scale));
        }
        if scale.x * scale.y * scale.z < 0.0 {
            // A mirroring scale turns the surface inside out; restore outward winding.
            for t in &mut self.triangles {
                t.swap(1, 2);
            }
        }
    }

    /// Appends the triangles of `other`.
    pub fn append(&mut self, other: &TriMesh) {
        let base = self.vertices.len() as u32;
        self.vertices.extend_from_slice(&other.vertices);
        self.triangles
            .extend(other.triangles.iter().map(|t| t.map(|i| i + base)));
    }

    /// Signed enclosed volume (m³): positive for a closed mesh with outward normals.
    pub fn signed_volume(&self) -> f64 {
        self.triangles
            .iter()
            .map(|t| {
                let [a, b, c] = t.map(|i| self.vertices[i as usize].coords);
                a.dot(&b.cross(&c)) / 6.0
            })
            .sum()
    }

    /// True if every edge is shared by exactly two triangles that traverse it in
    /// opposite directions (closed, consistently oriented two-manifold).
    pub fn is_closed(&self) -> bool {
        let mut directed: HashMap<(u32, u32), u32> =
            HashMap::with_capacity(3 * self.triangles.len());
        for t in &self.triangles {
            for k in 0..3 {
                *directed.entry((t[k], t[(k + 1) % 3])).or_default() += 1;
            }
        }
        directed
            .iter()
            .all(|(&(a, b), &n)| n == 1 && directed.get(&(b, a)) == Some(&1))
    }
}

impl Robot {
    /// Loads every link's collision meshes, merged into one [`TriMesh`] per link in the
    /// link frame (the URDF `<collision><origin>` and mesh `scale` applied), in
    /// [`Robot::links`] order; `None` for links without collision geometry.
    ///
    /// Primitive collision geometries (box, cylinder, sphere, capsule) are an error.
    ///
    /// ```
    /// use rpq_kinematics::{MeshResolver, Robot};
    /// let urdf = concat!(env!("CARGO_MANIFEST_DIR"), "/../../urdf/rx60b.urdf");
    /// let robot = Robot::from_urdf_file(urdf)?;
    /// let meshes = robot.collision_meshes(&MeshResolver::for_urdf_file(urdf))?;
    /// assert!(meshes[robot.link_index("link_2")?].as_ref().unwrap().is_closed());
    /// assert!(meshes[robot.link_index("tool0")?].is_none());
    /// # Ok::<(), rpq_kinematics::Error>(())
    /// ```
    pub fn collision_meshes(&self, resolver: &MeshResolver) -> Result<Vec<Option<TriMesh>>, Error> {
        self.links
            .iter()
            .map(|link| {
                let mut merged: Option<TriMesh> = None;
                for shape in &link.collision {
                    let Geometry::Mesh { filename, scale } = &shape.geometry else {
                        return Err(Error::UnsupportedGeometry {
                            link: link.name.clone(),
                            geometry: shape.geometry.kind(),
                        });
                    };
                    let mut mesh = TriMesh::from_stl_file(resolver.resolve(filename)?)?;
                    let before = mesh.validate()?.degenerate;
                    mesh.transform(scale, &shape.origin);
                    // A non-uniform or zero scale may flatten triangles (the file's own were
                    // reported when it was read).
                    let after = mesh.validate()?.degenerate;
                    if after > before {
                        eprintln!(
                            "warning: link `{}`: the scale {:?} of {filename} flattens {} more \
                             triangles (skipped)",
                            link.name,
                            scale.as_slice(),
                            after - before
                        );
                    }
                    match &mut merged {
                        Some(m) => m.append(&mesh),
                        None => merged = Some(mesh),
                    }
                }
                if let Some(m) = &merged {
                    m.validate()?;
                }
                Ok(merged)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rpq_base::mesh::{binary_stl as stl, MeshError};

    fn tetrahedron() -> Vec<[[f32; 3]; 3]> {
        let (o, x, y, z) = (
            [0.0, 0.0, 0.0],
            [1.0, 0.0, 0.0],
            [0.0, 1.0, 0.0],
            [0.0, 0.0, 1.0],
        );
        vec![[o, y, x], [o, x, z], [o, z, y], [x, y, z]]
    }

    #[test]
    fn tetrahedron_loads_closed_with_exact_volume() {
        let m = TriMesh::from_stl_bytes(&stl(&tetrahedron())).unwrap();
        assert_eq!(m.vertices.len(), 4);
        assert!(m.is_closed());
        assert!((m.signed_volume() - 1.0 / 6.0).abs() < 1e-15);
        let mut open = m.clone();
        open.triangles.pop();
        assert!(!open.is_closed());
        let mut flipped = m.clone();
        flipped.triangles[0].swap(1, 2);
        assert!(!flipped.is_closed());
    }

    #[test]
    fn invalid_meshes_are_rejected() {
        assert!(matches!(
            TriMesh::from_stl_bytes(&stl(&[])),
            Err(Error::Mesh(MeshError::Empty))
        ));
        let mut t = tetrahedron();
        t[3][2] = [f32::NAN, 0.0, 1.0];
        assert!(matches!(
            TriMesh::from_stl_bytes(&stl(&t)),
            Err(Error::Mesh(MeshError::NonFiniteVertex { .. }))
        ));
        // Triangles without surface (as CAD exports contain them) are counted, not refused.
        let skipped = |t: &[[[f32; 3]; 3]]| {
            TriMesh::from_stl_bytes(&stl(t))
                .unwrap()
                .validate()
                .unwrap()
        };
        let mut t = tetrahedron();
        t.push([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [2.0, 0.0, 0.0]]); // collinear
        t.push([[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 1.0, 0.0]]); // repeated vertex
        t.push([[0.0, 0.0, 0.0], [0.5, 1e-13, 0.0], [1.0, 0.0, 0.0]]); // a sliver
        t.push(tetrahedron()[3]); // a duplicate
        let s = skipped(&t);
        assert_eq!((s.degenerate, s.duplicate), (3, 1));
        assert_eq!(skipped(&tetrahedron()).total(), 0);
        // A small but well-shaped triangle is valid (the rule does not depend on the unit).
        let mut t = tetrahedron();
        t[0] = [[0.0, 0.0, 5.0], [0.0, 1e-7, 5.0], [1e-7, 0.0, 5.0]];
        assert!(TriMesh::from_stl_bytes(&stl(&t)).is_ok());
        let bytes = stl(&tetrahedron());
        assert!(matches!(
            TriMesh::from_stl_bytes(&bytes[..bytes.len() - 10]),
            Err(Error::Mesh(MeshError::Stl(_)))
        ));
        let bad = TriMesh {
            vertices: vec![Point3::origin()],
            triangles: vec![[0, 1, 2]],
        };
        assert!(matches!(
            bad.validate(),
            Err(Error::Mesh(MeshError::IndexOutOfRange {
                triangle: 0,
                index: 1,
                count: 1
            }))
        ));
    }

    #[test]
    fn file_errors_name_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("empty.stl");
        std::fs::write(&path, stl(&[])).unwrap();
        match TriMesh::from_stl_file(&path) {
            Err(Error::Mesh(MeshError::File { path: p, source })) => {
                assert_eq!(p, path);
                assert!(matches!(*source, MeshError::Empty));
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            TriMesh::from_stl_file(dir.path().join("missing.stl")),
            Err(Error::Mesh(MeshError::Io { .. }))
        ));
    }

    #[test]
    fn transform_applies_scale_then_pose_and_keeps_orientation() {
        let mut m = TriMesh::from_stl_bytes(&stl(&tetrahedron())).unwrap();
        let pose = Isometry3::translation(1.0, 2.0, 3.0);
        m.transform(&Vector3::new(2.0, 1.0, -1.0), &pose);
        assert!(m.vertices.contains(&Point3::new(3.0, 2.0, 3.0)));
        assert!(m.vertices.contains(&Point3::new(1.0, 2.0, 2.0)));
        // The mirror (negative scale) must not turn the volume negative.
        assert!((m.signed_volume() - 2.0 / 6.0).abs() < 1e-12);
        assert!(m.is_closed());
    }

    #[test]
    fn primitive_collision_geometry_is_an_error() {
        let urdf = r#"<robot name="r"><link name="a"><collision><geometry><box size="1 1 1"/></geometry></collision></link></robot>"#;
        let r = Robot::from_urdf_str(urdf).unwrap();
        assert!(matches!(
            r.collision_meshes(&MeshResolver::new("/")),
            Err(Error::UnsupportedGeometry { link, geometry: "box" }) if link == "a"
        ));
    }
}
