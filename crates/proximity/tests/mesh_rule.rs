//! One mesh rule: `rpq_kinematics` and `rpq_proximity` accept and refuse the same meshes, at
//! every scale (both validate through `rpq_base::mesh`).

use nalgebra::{Isometry3, Point3, Vector3};
use rpq_base::mesh::{binary_stl as stl, MeshError};
use rpq_kinematics::{Error, TriMesh};
use rpq_proximity::{Model, ProximityError};

/// A part drawn in millimetres: a 50 mm tetrahedron and a 1 µm (0.001 mm) facet, which in
/// metres has an area of 5e-13 m².
fn millimetre_part(sliver: bool) -> Vec<[[f32; 3]; 3]> {
    let (o, x, y, z) = (
        [0.0, 0.0, 0.0],
        [50.0, 0.0, 0.0],
        [0.0, 50.0, 0.0],
        [0.0, 0.0, 50.0],
    );
    let small = if sliver {
        // height 1e-13 of the longest edge: degenerate at any scale
        [[60.0, 0.0, 0.0], [61.0, 1e-13, 0.0], [62.0, 0.0, 0.0]]
    } else {
        [[60.0, 0.0, 0.0], [60.001, 0.0, 0.0], [60.0, 0.001, 0.0]]
    };
    vec![[o, y, x], [o, x, z], [o, z, y], [x, y, z], small]
}

/// The verdict of each crate on the STL mesh scaled by `scale` (as a URDF `<mesh scale>`
/// does): `Ok` or the index of the degenerate triangle.
fn verdicts(bytes: &[u8], scale: f64) -> (Result<(), usize>, Result<(), usize>) {
    let parsed = rpq_base::mesh::parse_stl(bytes).unwrap();
    let mut mesh = TriMesh {
        vertices: parsed.vertices.into_iter().map(Point3::from).collect(),
        triangles: parsed.triangles,
    };
    mesh.transform(&Vector3::repeat(scale), &Isometry3::identity());
    let kin = match mesh.validate() {
        Ok(()) => Ok(()),
        Err(Error::Mesh(MeshError::DegenerateTriangle { triangle, .. })) => Err(triangle),
        Err(e) => panic!("{e}"),
    };
    let prox = match Model::new(mesh.vertices.clone(), mesh.triangles.clone()) {
        Ok(_) => Ok(()),
        Err(ProximityError::Mesh(MeshError::DegenerateTriangle { triangle, .. })) => Err(triangle),
        Err(e) => panic!("{e}"),
    };
    (kin, prox)
}

#[test]
fn a_scaled_mesh_gets_the_same_verdict_from_both_crates() {
    let good = stl(&millimetre_part(false));
    for scale in [1.0, 1e-3, 1e-6, 1e3] {
        assert_eq!(verdicts(&good, scale), (Ok(()), Ok(())), "scale {scale}");
    }
    // the millimetre mesh loads unscaled in both crates too
    assert!(TriMesh::from_stl_bytes(&good).is_ok());
    assert!(Model::from_stl_bytes(&good).is_ok());

    // the sliver is refused by both, at every scale, naming the same triangle
    let bad = stl(&millimetre_part(true));
    assert!(matches!(
        TriMesh::from_stl_bytes(&bad),
        Err(Error::Mesh(MeshError::DegenerateTriangle {
            triangle: 4,
            ..
        }))
    ));
    assert!(matches!(
        Model::from_stl_bytes(&bad),
        Err(ProximityError::Mesh(MeshError::DegenerateTriangle {
            triangle: 4,
            ..
        }))
    ));
    for scale in [1.0, 1e-3, 1e-6, 1e3] {
        assert_eq!(verdicts(&bad, scale), (Err(4), Err(4)), "scale {scale}");
    }
    // collinear corners, at every scale
    let mut v = [Point3::origin(); 3];
    v[1].x = 1.0;
    v[2].x = 2.0;
    for scale in [1.0, 1e-3, 1e-6, 1e3] {
        let scaled: Vec<_> = v.iter().map(|p| p * scale).collect();
        assert!(TriMesh::new(scaled.clone(), vec![[0, 1, 2]]).is_err());
        assert!(Model::new(scaled, vec![[0, 1, 2]]).is_err());
    }
}
