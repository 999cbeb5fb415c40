//! Worlds built in code for the library tests: a 30 mm block workpiece, a table, walls and
//! thin plates (boxes from `rpq_pathshrink::puzzle::box_triangles`).
#![allow(dead_code)]

use std::sync::Arc;

use nalgebra::{Isometry3, Vector3};
use rpq_pathshrink::path::{penetrated, swept_free};
use rpq_pathshrink::puzzle::{box_triangles, centred_box};
use rpq_pathshrink::{model_from_triangles, Environment, Obstacle, Pose, Workpiece, WorkpiecePath};
use rpq_proximity::QueryWorkspace;

/// Half edge of the block (m).
pub const H: f64 = 0.015;

pub fn block() -> Workpiece {
    Workpiece::new("block", model_from_triangles(&centred_box([H; 3])).unwrap())
}

/// A box obstacle from its corners (world frame).
pub fn slab(name: &str, lo: [f64; 3], hi: [f64; 3]) -> Obstacle {
    Obstacle::new(
        name,
        model_from_triangles(&box_triangles(lo, hi)).unwrap(),
        Isometry3::identity(),
    )
}

/// The table: top at z = 0, 1 m square around the origin.
pub fn table() -> Obstacle {
    slab("table", [-0.5, -0.5, -0.03], [0.5, 0.5, 0.0])
}

pub fn env(obstacles: Vec<Obstacle>) -> Arc<Environment> {
    Arc::new(Environment::new(block(), obstacles))
}

/// The block resting `gap` above the table at (x, y), turned by `yaw`.
pub fn on_table(x: f64, y: f64, gap: f64, yaw: f64) -> Pose {
    Isometry3::new(Vector3::new(x, y, H + gap), Vector3::new(0.0, 0.0, yaw))
}

/// A cluttered table: a wall, a post and a low bar.
pub fn clutter() -> Arc<Environment> {
    env(vec![
        table(),
        slab("wall", [0.05, -0.1, 0.0], [0.062, 0.1, 0.04]),
        slab("post", [-0.06, -0.07, 0.0], [-0.04, -0.05, 0.08]),
        slab("bar", [-0.12, 0.04, 0.0], [0.03, 0.05, 0.012]),
    ])
}

/// Every node outside the obstacles and every segment free (swept check of the engine).
pub fn assert_free(e: &Environment, path: &WorkpiecePath, what: &str) {
    let mut ws = QueryWorkspace::new();
    for (k, n) in path.nodes.iter().enumerate() {
        assert!(
            penetrated(e, &n.pose, &mut ws).is_none(),
            "{what}: node {k} penetrates"
        );
    }
    for k in 1..path.nodes.len() {
        assert!(
            swept_free(
                e,
                &path.nodes[k - 1].pose,
                &path.nodes[k].pose,
                0.0,
                &mut ws
            )
            .is_ok(),
            "{what}: segment {} - {k} passes through an obstacle",
            k - 1
        );
    }
}
