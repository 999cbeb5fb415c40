//! Shared helpers of the integration tests.
#![allow(dead_code)]

use std::sync::{Arc, OnceLock};

use nalgebra::{Isometry3, Point3, Vector3};
use rpq_kinematics::{JointKind, JointLimits, JointSpec, LinkSpec, TriMesh};

use rpq_base::SplitMix64;
use rpq_scene::{eval, generate_collision_matrix, GeneratorSettings, Robot, Scenario};

/// The RX60B of the repository, loaded once.
pub fn rx60() -> &'static Robot {
    static R: OnceLock<Robot> = OnceLock::new();
    R.get_or_init(|| eval::rx60().expect("rx60 loads"))
}

/// Two facing arms at `d` with a generated collision matrix.
pub fn pair_with_cm(d: f64) -> Scenario {
    let mut s = eval::pair_scenario(rx60(), d).unwrap();
    let cm = generate_collision_matrix(
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
pub fn random_q(r: &Robot, rng: &mut SplitMix64) -> Vec<f64> {
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

/// The corners and the 12 outward triangles of the axis-aligned box of half extents `half`
/// about the origin (vertex index = 4 x + 2 y + z, the bits of the signs).
pub fn box_mesh(half: Vector3<f64>) -> (Vec<Point3<f64>>, Vec<[u32; 3]>) {
    let mut v = Vec::new();
    for sx in [-1.0, 1.0] {
        for sy in [-1.0, 1.0] {
            for sz in [-1.0, 1.0] {
                v.push(Point3::new(sx * half.x, sy * half.y, sz * half.z));
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
    (v, t)
}

/// A closed axis-aligned cube of half-size `h` about the origin (12 outward triangles).
pub fn cube(h: f64) -> TriMesh {
    let (v, t) = box_mesh(Vector3::repeat(h));
    TriMesh::new(v, t).unwrap()
}

/// A rail (fixed cube of half-size 0.1) with a carriage cube (half-size 0.05) sliding along
/// x in [-1, 1] m at height 0.5 m.
pub fn slider() -> Robot {
    let joint = JointSpec {
        name: "slide".into(),
        kind: JointKind::Prismatic,
        parent: "rail".into(),
        child: "carriage".into(),
        origin: Isometry3::translation(0.0, 0.0, 0.5),
        axis: Vector3::x(),
        limits: JointLimits {
            lower: -1.0,
            upper: 1.0,
            velocity: 1.0,
            effort: 1.0,
        },
    };
    let kin = rpq_kinematics::Robot::new(
        "slider",
        vec![LinkSpec::new("rail"), LinkSpec::new("carriage")],
        vec![joint],
    )
    .unwrap();
    Robot::new(
        "slider",
        Arc::new(kin),
        &[Some(cube(0.1)), Some(cube(0.05))],
        Isometry3::identity(),
    )
    .unwrap()
}
