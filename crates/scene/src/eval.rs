//! The paper's evaluation set-up (§3.2): two RX60 arms facing each other at a base
//! distance, and an equidistributed grid of joint configurations; shared by the
//! `rpq_eval` and `rpq_bench` commands and the tests.

use std::path::PathBuf;

use nalgebra::{Isometry3, Translation3, UnitQuaternion};

use crate::error::SceneError;
use crate::object::Robot;
use crate::scenario::Scenario;

/// Table 1 of the paper: (base distance m, colliding, not colliding) of 9,216
/// configurations.
pub const PAPER_TABLE1: [(f64, u32, u32); 5] = [
    (0.4, 4864, 4352),
    (0.5, 3530, 5686),
    (0.6, 2500, 6716),
    (0.7, 1121, 8095),
    (0.8, 140, 9076),
];

/// Table 2 of the paper: (base distance m, % of pair queries solved by the collision
/// matrix).
pub const PAPER_TABLE2: [(f64, f64); 4] = [(0.4, 4.94), (0.6, 9.88), (0.9, 24.69), (1.2, 64.20)];

/// Samples per joint of the grid (joints 1..6); the product is 96.
pub const GRID_COUNTS: [usize; 6] = [3, 4, 8, 1, 1, 1];

/// Human-readable description of [`grid`].
pub const GRID_DESCRIPTION: &str = "96 configurations per robot: joints 1, 2, 3 at the centres of 3, 4 and 8 equal \
cells of their ranges (j1 ±160°: 0°, ±106.7°; j2 ±127.5°: ±31.9°, ±95.6°; j3 ±134.5°: ±16.8°, ±50.4°, ±84.1°, \
±117.7°), wrist joints 4, 5, 6 at 0 (flange along the forearm); joint 1 varies slowest. Both arms use the same \
grid in their own base frames; 96 × 96 = 9,216 configuration pairs.";

/// The equidistributed grid (see [`GRID_DESCRIPTION`]) for a 6-joint robot: joint `k`
/// takes the centres of `GRID_COUNTS[k]` equal cells of its range (0 if the count is 1).
/// Joint 1 varies slowest.
pub fn grid(robot: &Robot) -> Vec<Vec<f64>> {
    let lim = robot.kinematics().joint_limits();
    let values: Vec<Vec<f64>> = GRID_COUNTS
        .iter()
        .zip(lim)
        .map(|(&n, l)| {
            if n == 1 {
                vec![0.0]
            } else {
                (0..n)
                    .map(|k| l.lower + (k as f64 + 0.5) * (l.upper - l.lower) / n as f64)
                    .collect()
            }
        })
        .collect();
    let mut out = vec![Vec::new()];
    for v in &values {
        out = out
            .into_iter()
            .flat_map(|prefix| {
                v.iter().map(move |&x| {
                    let mut p = prefix.clone();
                    p.push(x);
                    p
                })
            })
            .collect();
    }
    out
}

/// Path of the RX60B URDF of this repository.
pub fn rx60_urdf() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../urdf/rx60b.urdf"
    ))
}

/// Base pose of the second ("right") arm: `distance` along +x, turned to face the first.
pub fn facing_base(distance: f64) -> Isometry3<f64> {
    Isometry3::from_parts(
        Translation3::new(distance, 0.0, 0.0),
        UnitQuaternion::from_euler_angles(0.0, 0.0, std::f64::consts::PI),
    )
}

/// Two copies of `proto` named `left` (at the origin) and `right` (at
/// [`facing_base`]`(distance)`), sharing meshes.
pub fn pair_scenario(proto: &Robot, distance: f64) -> Result<Scenario, SceneError> {
    let mut s = Scenario::new();
    s.add_robot(proto.instance("left", Isometry3::identity()))?;
    s.add_robot(proto.instance("right", facing_base(distance)))?;
    Ok(s)
}

/// Loads the RX60B of this repository.
pub fn rx60() -> Result<Robot, SceneError> {
    Robot::from_urdf_file("rx60", rx60_urdf(), Isometry3::identity())
}

/// Sets both arms of a [`pair_scenario`] to configuration pair `k` of the 96 × 96 sweep
/// over `grid` (left index `k / n`, right index `k % n`).
pub fn set_pair(scenario: &mut Scenario, grid: &[Vec<f64>], k: usize) -> Result<(), SceneError> {
    let n = grid.len();
    scenario.set_joint_positions(0, &grid[k / n])?;
    scenario.set_joint_positions(1, &grid[k % n])
}
