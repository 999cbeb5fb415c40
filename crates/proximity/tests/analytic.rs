//! Analytic cases (boxes, tessellated spheres), surface semantics, bad input, STL loading.

mod common;
use common::*;

use std::f64::consts::{FRAC_PI_2, FRAC_PI_4, SQRT_2};

use nalgebra::{Isometry3, Point3, Vector3};
use rpq_base::mesh::MeshError;
use rpq_proximity::*;

fn dist(pa: &Isometry3<f64>, a: &Model, pb: &Isometry3<f64>, b: &Model) -> DistanceResult {
    let mut ws = QueryWorkspace::default();
    distance(pa, a, pb, b, &DistanceRequest::default(), &mut ws).unwrap()
}

fn hit(pa: &Isometry3<f64>, a: &Model, pb: &Isometry3<f64>, b: &Model) -> bool {
    let mut ws = QueryWorkspace::default();
    let c = collide(pa, a, pb, b, CollisionMode::FirstContact, &mut ws).colliding;
    assert_eq!(c, intersects(pa, a, pb, b, &mut ws));
    assert_eq!(
        c,
        brute::collide(pa, a, pb, b, CollisionMode::FirstContact).colliding
    );
    c
}

#[test]
fn boxes_parallel_faces() {
    let a = box_mesh(Vector3::new(1.0, 1.0, 1.0));
    let id = Isometry3::identity();
    for g in [0.5, 0.25, 1e-3] {
        // face to face, also with b turned by 90 degrees (faces still parallel)
        for rot in [
            [0.0, 0.0, 0.0],
            [0.0, 0.0, FRAC_PI_2],
            [FRAC_PI_2, 0.0, 0.0],
        ] {
            let pb = pose([2.0 + g, 0.3, -0.2], rot);
            let d = dist(&id, &a, &pb, &a);
            assert!((d.distance - g).abs() < 1e-12, "{g}: {}", d.distance);
            assert!((d.point_a.x - 1.0).abs() < 1e-12 && (d.point_b.x - (1.0 + g)).abs() < 1e-12);
            assert!(!hit(&id, &a, &pb, &a));
            let mut ws = QueryWorkspace::default();
            assert!(tolerance(&id, &a, &pb, &a, g * 1.01, &mut ws).closer_than);
            assert!(!tolerance(&id, &a, &pb, &a, g * 0.99, &mut ws).closer_than);
        }
    }
    // touching faces: colliding, distance 0
    let pb = pose([2.0, 0.5, 0.5], [0.0, 0.0, 0.0]);
    assert!(hit(&id, &a, &pb, &a));
    assert_eq!(dist(&id, &a, &pb, &a).distance, 0.0);
    // overlapping
    let pb = pose([1.5, 0.5, 0.5], [0.3, 0.2, 0.1]);
    assert!(hit(&id, &a, &pb, &a));
    let d = dist(&id, &a, &pb, &a);
    assert_eq!(d.distance, 0.0);
    assert_eq!(d.point_a, d.point_b);
}

#[test]
fn boxes_edge_to_face_and_edge_to_edge() {
    let a = box_mesh(Vector3::new(1.0, 1.0, 1.0));
    let id = Isometry3::identity();
    for g in [0.7, 0.01] {
        // b turned 45 degrees about y: its edge (along y) faces a's face x = 1
        let pb = pose([1.0 + SQRT_2 + g, 0.0, 0.0], [0.0, FRAC_PI_4, 0.0]);
        let d = dist(&id, &a, &pb, &a);
        assert!(
            (d.distance - g).abs() < 1e-12,
            "edge-face {g}: {}",
            d.distance
        );
        // a turned 45 degrees about z (edge along z at x = sqrt 2), b as above: skew edges
        let pa = pose([0.0, 0.0, 0.0], [0.0, 0.0, FRAC_PI_4]);
        let pb = pose([2.0 * SQRT_2 + g, 0.0, 0.0], [0.0, FRAC_PI_4, 0.0]);
        let d = dist(&pa, &a, &pb, &a);
        assert!(
            (d.distance - g).abs() < 1e-12,
            "edge-edge {g}: {}",
            d.distance
        );
        assert!((d.point_a - Point3::new(SQRT_2, 0.0, 0.0)).norm() < 1e-9);
        assert!((d.point_b - Point3::new(SQRT_2 + g, 0.0, 0.0)).norm() < 1e-9);
        assert!(!hit(&pa, &a, &pb, &a));
    }
    // corner of b pointing at a's face: b rotated so that its diagonal is along x
    let diag = Vector3::new(1.0, 1.0, 1.0).normalize();
    let rot = nalgebra::UnitQuaternion::rotation_between(&diag, &-Vector3::x()).unwrap();
    let pb = Isometry3::from_parts(
        nalgebra::Translation3::new(1.0 + 3f64.sqrt() + 0.1, 0.2, 0.1),
        rot,
    );
    let d = dist(&id, &a, &pb, &a);
    assert!((d.distance - 0.1).abs() < 1e-12, "{}", d.distance);
}

#[test]
fn mesh_inside_mesh_is_not_colliding() {
    let big = box_mesh(Vector3::new(1.0, 1.0, 1.0));
    let small = box_mesh(Vector3::new(0.2, 0.2, 0.2));
    let id = Isometry3::identity();
    let p = pose([0.5, 0.0, 0.0], [0.0, 0.0, 0.0]);
    // surface semantics: no triangle pair intersects
    assert!(!hit(&id, &big, &p, &small));
    let d = dist(&id, &big, &p, &small);
    assert!((d.distance - 0.3).abs() < 1e-12);
}

#[test]
fn tessellated_spheres() {
    let id = Isometry3::identity();
    for (r1, r2, n1, n2) in [(0.3, 0.2, 12, 8), (0.5, 0.5, 20, 20), (0.1, 0.4, 6, 16)] {
        let a = sphere_mesh(r1, n1);
        let b = sphere_mesh(r2, n2);
        // inscribed radius of each tessellation: nearest surface point to the centre
        let rin = |m: &Model| {
            (0..m.num_triangles())
                .map(|i| {
                    let t = m.triangle(i);
                    triangle::closest_point_on_triangle(
                        &Vector3::zeros(),
                        &t[0].coords,
                        &t[1].coords,
                        &t[2].coords,
                    )
                    .norm()
                })
                .fold(f64::INFINITY, f64::min)
        };
        let (i1, i2) = (rin(&a), rin(&b));
        assert!(i1 < r1 && i1 > 0.9 * r1);
        for k in 0..20 {
            let c = 0.05 + r1 + r2 + 0.03 * k as f64;
            let dir = Vector3::new((k as f64).cos(), (k as f64 * 0.7).sin(), 0.3).normalize() * c;
            let pb = pose([dir.x, dir.y, dir.z], [0.1 * k as f64, 0.2, -0.3]);
            let d = dist(&id, &a, &pb, &b);
            assert!(
                d.distance >= c - r1 - r2 - 1e-12,
                "{} < {}",
                d.distance,
                c - r1 - r2
            );
            assert!(
                d.distance <= c - i1 - i2 + 1e-12,
                "{} > {}",
                d.distance,
                c - i1 - i2
            );
            assert!(!hit(&id, &a, &pb, &b));
        }
        // overlapping spheres (centre distance below the inscribed radii sum, above |r1 - r2|)
        let c = 0.5 * (i1 + i2 + (r1 - r2).abs());
        let pb = pose([c, 0.0, 0.0], [0.0, 0.0, 0.0]);
        assert!(hit(&id, &a, &pb, &b));
        assert_eq!(dist(&id, &a, &pb, &b).distance, 0.0);
    }
}

#[test]
fn upper_bound_and_errors_on_boxes() {
    let a = box_mesh(Vector3::new(1.0, 1.0, 1.0));
    let id = Isometry3::identity();
    let pb = pose([2.5, 0.0, 0.0], [0.0, 0.0, 0.0]);
    let mut ws = QueryWorkspace::default();
    assert!(distance(
        &id,
        &a,
        &pb,
        &a,
        &DistanceRequest::with_upper_bound(0.5),
        &mut ws
    )
    .is_none());
    assert!(distance(
        &id,
        &a,
        &pb,
        &a,
        &DistanceRequest::with_upper_bound(0.5000001),
        &mut ws
    )
    .is_some());
    let req = DistanceRequest {
        rel_err: 0.1,
        abs_err: 0.0,
        upper_bound: f64::INFINITY,
    };
    let d = distance(&id, &a, &pb, &a, &req, &mut ws).unwrap();
    assert!(d.distance >= 0.5 && d.distance <= 0.55);
    assert!(distance_lower_bound(&id, &a, &pb, &a) <= 0.5 + 1e-12);
    assert!(distance_lower_bound(&id, &a, &pb, &a) > 0.4);
}

#[test]
fn bad_input_is_an_error() {
    let p = |x: f64, y: f64, z: f64| Point3::new(x, y, z);
    let v = vec![
        p(0.0, 0.0, 0.0),
        p(1.0, 0.0, 0.0),
        p(0.0, 1.0, 0.0),
        p(2.0, 0.0, 0.0),
    ];
    assert!(matches!(
        Model::new(vec![], vec![]),
        Err(ProximityError::Mesh(MeshError::Empty))
    ));
    assert!(matches!(
        Model::new(v.clone(), vec![]),
        Err(ProximityError::Mesh(MeshError::Empty))
    ));
    let mut nan = v.clone();
    nan[2].y = f64::NAN;
    assert!(matches!(
        Model::new(nan, vec![[0, 1, 2]]),
        Err(ProximityError::Mesh(MeshError::NonFiniteVertex {
            index: 2,
            ..
        }))
    ));
    let mut inf = v.clone();
    inf[1].x = f64::INFINITY;
    assert!(matches!(
        Model::new(inf, vec![[0, 1, 2]]),
        Err(ProximityError::Mesh(MeshError::NonFiniteVertex {
            index: 1,
            ..
        }))
    ));
    // collinear vertices, repeated index: skipped (counted), an error only when nothing is left
    let m = Model::new(v.clone(), vec![[0, 1, 2], [0, 1, 3]]).unwrap();
    assert_eq!(m.skipped().degenerate, 1);
    assert_eq!(m.used_triangles(), [0]);
    let e = Model::new(v.clone(), vec![[2, 2, 1]]).unwrap_err();
    assert!(matches!(
        e,
        ProximityError::Mesh(MeshError::NothingLeft { triangles: 1 })
    ));
    assert!(e.to_string().contains("no surface left"), "{e}");
    let e = Model::new(v, vec![[0, 1, 2], [0, 1, 9]]).unwrap_err();
    assert!(matches!(
        e,
        ProximityError::Mesh(MeshError::IndexOutOfRange {
            triangle: 1,
            index: 9,
            count: 4
        })
    ));
    // malformed STL
    assert!(matches!(
        Model::from_stl_bytes(b"solid x\n facet normal 0 0 oops\n"),
        Err(ProximityError::Mesh(MeshError::Stl(_)))
    ));
    assert!(Model::from_stl_bytes(&[0u8; 10]).is_err());
    assert!(matches!(
        Model::from_stl_file("/nonexistent/none.stl"),
        Err(ProximityError::Mesh(MeshError::Io { .. }))
    ));
}

#[test]
fn stl_loading() {
    let ascii = "solid t\n\
        facet normal 0 0 1\n outer loop\n vertex 0 0 0\n vertex 1 0 0\n vertex 0 1 0\n endloop\n endfacet\n\
        facet normal 0 0 1\n outer loop\n vertex 1 0 0\n vertex 1 1 0\n vertex 0 1 0\n endloop\n endfacet\n\
        endsolid t\n";
    let m = Model::from_stl_bytes(ascii.as_bytes()).unwrap();
    assert_eq!(m.num_triangles(), 2);
    assert_eq!(m.vertices().len(), 4); // shared vertices merged
    assert!(m.num_nodes() <= 3);
    // a file of nothing but a degenerate facet is refused, naming the file
    let bad = "solid t\nfacet normal 0 0 1\n outer loop\n vertex 0 0 0\n vertex 1 0 0\n vertex 2 0 0\n endloop\n endfacet\nendsolid t\n";
    let dir = std::env::temp_dir().join(format!("rpq_proximity_test_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("bad.stl");
    std::fs::write(&f, bad).unwrap();
    let e = Model::from_stl_file(&f).unwrap_err();
    assert!(matches!(
        e,
        ProximityError::Mesh(MeshError::File { ref source, .. })
            if matches!(**source, MeshError::NothingLeft { triangles: 1 })
    ));
    assert!(e.to_string().contains("bad.stl"));
    std::fs::remove_dir_all(&dir).ok();
    // the RX60 meshes load, and the hierarchy has 2n - 1 nodes
    let meshes = concat!(env!("CARGO_MANIFEST_DIR"), "/../../meshes/rx60b");
    for name in ["base_link", "link_3", "link_6"] {
        let m = Model::from_stl_file(format!("{meshes}/{name}.stl")).unwrap();
        assert!(m.num_triangles() > 500);
        assert!(m.num_nodes() < 2 * m.num_triangles());
        let bb = m.bounding_box();
        assert!(m.vertices().iter().all(|p| bb.contains(p)));
        let (lo, hi) = m.aabb();
        assert!(m
            .vertices()
            .iter()
            .all(|p| (0..3).all(|i| p[i] >= lo[i] && p[i] <= hi[i])));
    }
}

#[test]
fn workspace_is_reusable_across_model_pairs() {
    let a = box_mesh(Vector3::new(1.0, 1.0, 1.0));
    let s = sphere_mesh(0.5, 10);
    let mut ws = QueryWorkspace::default();
    let id = Isometry3::identity();
    for k in 0..50 {
        let pb = pose(
            [1.6 + 0.01 * k as f64, 0.1, 0.0],
            [0.0, 0.1 * k as f64, 0.0],
        );
        let (m1, m2) = if k % 2 == 0 { (&a, &s) } else { (&s, &a) };
        let d = distance(&id, m1, &pb, m2, &DistanceRequest::default(), &mut ws).unwrap();
        let b = brute::distance(&id, m1, &pb, m2);
        assert!((d.distance - b.distance).abs() < 1e-12);
    }
}
