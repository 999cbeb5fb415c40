//! Shared helpers of the integration tests.
#![allow(dead_code)]

use std::sync::OnceLock;

use nalgebra::Point3;
use rpq_kinematics::TriMesh;

use rpq_scene::{eval, CollisionMatrix, GeneratorSettings, Rng, Robot, Scenario};

/// The RX60B of the repository, loaded once.
pub fn rx60() -> &'static Robot {
    static R: OnceLock<Robot> = OnceLock::new();
    R.get_or_init(|| eval::rx60().expect("rx60 loads"))
}

/// Two facing arms at `d` with a generated collision matrix.
pub fn pair_with_cm(d: f64) -> Scenario {
    let mut s = eval::pair_scenario(rx60(), d).unwrap();
    let cm = CollisionMatrix::generate(
        &s,
        &GeneratorSettings {
            samples: 20_000,
            margin: 0.05,
            seed: 1,
            ..GeneratorSettings::default()
        },
        None,
    )
    .unwrap();
    s.set_collision_matrix(cm).unwrap();
    s
}

/// A uniformly random joint vector within the limits.
pub fn random_q(r: &Robot, rng: &mut Rng) -> Vec<f64> {
    r.kinematics()
        .joint_limits()
        .iter()
        .map(|l| l.lower + (l.upper - l.lower) * rng.uniform())
        .collect()
}

/// Every `n`-th configuration pair of the 96 × 96 grid, offset by `off`.
pub fn grid_subset(n: usize, off: usize) -> Vec<usize> {
    (off..96 * 96).step_by(n).collect()
}

/// A closed axis-aligned cube of half-size `h` about the origin (12 outward triangles).
pub fn cube(h: f64) -> TriMesh {
    let mut v = Vec::new();
    for sx in [-h, h] {
        for sy in [-h, h] {
            for sz in [-h, h] {
                v.push(Point3::new(sx, sy, sz));
            }
        }
    }
    let t = vec![
        [0, 1, 3],
        [0, 3, 2],
        [4, 6, 7],
        [4, 7, 5],
        [0, 4, 5],
        [0, 5, 1],
        [2, 3, 7],
        [2, 7, 6],
        [0, 2, 6],
        [0, 6, 4],
        [1, 5, 7],
        [1, 7, 3],
    ];
    TriMesh::new(v, t).unwrap()
}
