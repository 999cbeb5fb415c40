//! Mesh generators shared by the integration tests.
#![allow(dead_code)]

use nalgebra::{Isometry3, Point3, Translation3, UnitQuaternion, Vector3};
use rpq_proximity::Model;

/// Closed box mesh (12 triangles) with half extents `h`, centred at the origin.
pub fn box_mesh(h: Vector3<f64>) -> Model {
    let mut v = Vec::new();
    for k in 0..8 {
        v.push(Point3::new(
            if k & 1 == 0 { -h.x } else { h.x },
            if k & 2 == 0 { -h.y } else { h.y },
            if k & 4 == 0 { -h.z } else { h.z },
        ));
    }
    let t = vec![
        [0, 2, 1],
        [1, 2, 3], // z-
        [4, 5, 6],
        [5, 7, 6], // z+
        [0, 1, 4],
        [1, 5, 4], // y-
        [2, 6, 3],
        [3, 6, 7], // y+
        [0, 4, 2],
        [2, 4, 6], // x-
        [1, 3, 5],
        [3, 7, 5], // x+
    ];
    Model::new(v, t).unwrap()
}

/// UV sphere of radius `r` with `n` rings and `2n` segments (vertices on the sphere).
pub fn sphere_mesh(r: f64, n: usize) -> Model {
    let seg = 2 * n;
    let mut v = vec![Point3::new(0.0, 0.0, r)];
    for i in 1..n {
        let th = std::f64::consts::PI * i as f64 / n as f64;
        for j in 0..seg {
            let ph = 2.0 * std::f64::consts::PI * j as f64 / seg as f64;
            v.push(Point3::new(
                r * th.sin() * ph.cos(),
                r * th.sin() * ph.sin(),
                r * th.cos(),
            ));
        }
    }
    v.push(Point3::new(0.0, 0.0, -r));
    let south = (v.len() - 1) as u32;
    let ring = |i: usize, j: usize| (1 + (i - 1) * seg + (j % seg)) as u32;
    let mut t = Vec::new();
    for j in 0..seg {
        t.push([0, ring(1, j), ring(1, j + 1)]);
    }
    for i in 1..n - 1 {
        for j in 0..seg {
            t.push([ring(i, j), ring(i + 1, j), ring(i + 1, j + 1)]);
            t.push([ring(i, j), ring(i + 1, j + 1), ring(i, j + 1)]);
        }
    }
    for j in 0..seg {
        t.push([south, ring(n - 1, j + 1), ring(n - 1, j)]);
    }
    Model::new(v, t).unwrap()
}

/// Pose from a translation and a rotation vector.
pub fn pose(t: [f64; 3], rv: [f64; 3]) -> Isometry3<f64> {
    Isometry3::from_parts(
        Translation3::new(t[0], t[1], t[2]),
        UnitQuaternion::from_scaled_axis(Vector3::new(rv[0], rv[1], rv[2])),
    )
}
