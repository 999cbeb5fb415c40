//! One mesh rule: `rpq_kinematics` and `rpq_proximity` keep and skip the same triangles, at
//! every scale (both classify through `rpq_base::mesh`). Meshes as CAD exports them (zero-area
//! and repeated triangles) load; what is skipped changes no answer; NaN/inf vertices and bad
//! indices stay errors.

use nalgebra::{Isometry3, Point3, Vector3};
use rpq_base::mesh::{binary_stl as stl, MeshError, Skipped};
use rpq_kinematics::{Error, TriMesh};
use rpq_proximity::{
    brute, collide, distance, CollisionMode, DistanceRequest, Model, ProximityError, QueryWorkspace,
};

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

/// What each crate skips of the STL mesh scaled by `scale` (as a URDF `<mesh scale>` does).
fn verdicts(bytes: &[u8], scale: f64) -> (Skipped, Skipped) {
    let parsed = rpq_base::mesh::parse_stl(bytes).unwrap();
    let mut mesh = TriMesh {
        vertices: parsed.vertices.into_iter().map(Point3::from).collect(),
        triangles: parsed.triangles,
    };
    mesh.transform(&Vector3::repeat(scale), &Isometry3::identity());
    let kin = mesh.validate().unwrap();
    let prox = Model::new(mesh.vertices.clone(), mesh.triangles.clone())
        .unwrap()
        .skipped();
    (kin, prox)
}

#[test]
fn a_scaled_mesh_gets_the_same_verdict_from_both_crates() {
    let good = stl(&millimetre_part(false));
    for scale in [1.0, 1e-3, 1e-6, 1e3] {
        let none = Skipped::default();
        assert_eq!(verdicts(&good, scale), (none, none), "scale {scale}");
    }
    // the sliver is skipped by both, at every scale, the rest kept
    let bad = stl(&millimetre_part(true));
    let one = Skipped {
        degenerate: 1,
        duplicate: 0,
    };
    for scale in [1.0, 1e-3, 1e-6, 1e3] {
        assert_eq!(verdicts(&bad, scale), (one, one), "scale {scale}");
    }
    let m = Model::from_stl_bytes(&bad).unwrap();
    assert_eq!(m.num_triangles(), 5);
    assert_eq!(m.used_triangles(), [0, 1, 2, 3]);
    // (four triangles in leaves of one or two)
    assert!((3..2 * 4).contains(&m.num_nodes()), "{}", m.num_nodes());
    // collinear corners alone leave no surface: refused by both, at every scale
    let mut v = [Point3::origin(); 3];
    v[1].x = 1.0;
    v[2].x = 2.0;
    for scale in [1.0, 1e-3, 1e-6, 1e3] {
        let scaled: Vec<_> = v.iter().map(|p| p * scale).collect();
        assert!(matches!(
            TriMesh::new(scaled.clone(), vec![[0, 1, 2]]),
            Err(Error::Mesh(MeshError::NothingLeft { triangles: 1 }))
        ));
        assert!(matches!(
            Model::new(scaled, vec![[0, 1, 2]]),
            Err(ProximityError::Mesh(MeshError::NothingLeft {
                triangles: 1
            }))
        ));
    }
}

/// A closed box of 12 triangles with what CAD exports add: a zero-area triangle on an edge,
/// a triangle with a repeated vertex, and a repeated facet (same indices, rotated).
/// Vertices, the clean triangles, the same with the CAD extras.
type CadMesh = (Vec<Point3<f64>>, Vec<[u32; 3]>, Vec<[u32; 3]>);

fn cad_box(h: [f64; 3]) -> CadMesh {
    let mut v = Vec::new();
    for k in 0..8 {
        let s = |b: u32| if k & (1 << b) != 0 { 1.0 } else { -1.0 };
        v.push(Point3::new(s(0) * h[0], s(1) * h[1], s(2) * h[2]));
    }
    // midpoint of the edge 0-1: a zero-area triangle along that edge
    v.push(Point3::new(0.0, -h[1], -h[2]));
    let clean: Vec<[u32; 3]> = vec![
        [0, 2, 1],
        [1, 2, 3],
        [4, 5, 6],
        [5, 7, 6],
        [0, 1, 4],
        [1, 5, 4],
        [2, 6, 3],
        [3, 6, 7],
        [0, 4, 2],
        [2, 4, 6],
        [1, 3, 5],
        [3, 7, 5],
    ];
    let mut dirty = clean.clone();
    dirty.insert(3, [0, 8, 1]); // zero area
    dirty.insert(7, [5, 5, 7]); // repeated vertex
    dirty.push([2, 3, 1]); // repeat of [1, 2, 3]
    (v, clean, dirty)
}

#[test]
fn cad_meshes_load_and_skipped_triangles_change_no_answer() {
    let (v, clean, dirty) = cad_box([0.1, 0.2, 0.3]);
    let c = Model::new(v.clone(), clean).unwrap();
    let d = Model::new(v.clone(), dirty.clone()).unwrap();
    assert_eq!(d.num_triangles(), 15);
    assert_eq!(
        d.skipped(),
        Skipped {
            degenerate: 2,
            duplicate: 1
        }
    );
    assert_eq!(d.used_triangles().len(), 12);
    assert!(!d.used_triangles().contains(&3) && !d.used_triangles().contains(&7));
    // the same verdict through rpq_kinematics (the robot layer's loader)
    let k = TriMesh::new(v.clone(), dirty).unwrap();
    assert_eq!(k.validate().unwrap(), d.skipped());
    // answers equal those of the clean mesh, and the oracle's, over poses near and far
    let mut ws = QueryWorkspace::default();
    let a = Isometry3::identity();
    for (i, x) in [0.0, 0.15, 0.21, 0.25, 0.5, 1.0].iter().enumerate() {
        let b = Isometry3::new(
            Vector3::new(*x, 0.05 * i as f64, 0.02),
            Vector3::new(0.3, 0.1 * i as f64, 0.2),
        );
        let dc = distance(&a, &c, &b, &c, &DistanceRequest::default(), &mut ws).unwrap();
        let dd = distance(&a, &d, &b, &d, &DistanceRequest::default(), &mut ws).unwrap();
        let db = brute::distance(&a, &d, &b, &d);
        assert!((dc.distance - dd.distance).abs() < 1e-15, "{x}");
        assert!((db.distance - dd.distance).abs() < 1e-15, "{x}");
        let hc = collide(&a, &c, &b, &c, CollisionMode::FirstContact, &mut ws).colliding;
        let hd = collide(&a, &d, &b, &d, CollisionMode::AllContacts, &mut ws);
        assert_eq!(hc, hd.colliding, "{x}");
        // reported triangles are indices into the given (dirty) list, never skipped ones
        for (ta, tb) in &hd.pairs {
            assert!(d.used_triangles().contains(ta) && d.used_triangles().contains(tb));
        }
        let hb = brute::collide(&a, &d, &b, &d, CollisionMode::AllContacts);
        let mut got = hd.pairs.clone();
        got.sort_unstable();
        let mut want = hb.pairs.clone();
        want.sort_unstable();
        assert_eq!(got, want, "{x}");
    }
}

#[test]
fn broken_meshes_stay_errors() {
    let (v, clean, _) = cad_box([0.1, 0.1, 0.1]);
    let mut nan = v.clone();
    nan[2].y = f64::NAN;
    assert!(matches!(
        Model::new(nan.clone(), clean.clone()),
        Err(ProximityError::Mesh(MeshError::NonFiniteVertex { .. }))
    ));
    assert!(matches!(
        TriMesh::new(nan, clean.clone()),
        Err(Error::Mesh(MeshError::NonFiniteVertex { .. }))
    ));
    let mut inf = v.clone();
    inf[0].z = f64::INFINITY;
    assert!(Model::new(inf, clean.clone()).is_err());
    let mut bad = clean.clone();
    bad[4][1] = 99;
    assert!(matches!(
        Model::new(v.clone(), bad.clone()),
        Err(ProximityError::Mesh(MeshError::IndexOutOfRange { .. }))
    ));
    assert!(matches!(
        TriMesh::new(v, bad),
        Err(Error::Mesh(MeshError::IndexOutOfRange { .. }))
    ));
}
