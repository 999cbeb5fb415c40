//! Brute-force oracle: every triangle pair. Slow (O(n m)); for tests and cross-checks.
//!
//! It shares only the triangle primitives ([`triangle::overlap`], [`triangle::distance`]) and
//! the result types with the hierarchical queries: no hierarchy, no bounding volume, no cache,
//! and its own placement of `b` in `a`'s frame (nalgebra's isometry applied to each vertex,
//! where the queries use a rotation matrix), so that it checks their traversal and pose
//! handling independently.

use nalgebra::{Isometry3, Point3};

use crate::{triangle, CollisionMode, CollisionResult, DistanceResult, Model};

/// The used triangles of `b` (index, corners), placed in a's frame by `b_in_a`.
fn placed(b_in_a: &Isometry3<f64>, b: &Model) -> Vec<(u32, [Point3<f64>; 3])> {
    b.used_triangles()
        .iter()
        .map(|&j| (j, b.triangle(j as usize).map(|p| b_in_a * p)))
        .collect()
}

/// Collision by testing all triangle pairs, `b` given in `a`'s frame.
pub fn collide_local(
    b_in_a: &Isometry3<f64>,
    a: &Model,
    b: &Model,
    mode: CollisionMode,
) -> CollisionResult {
    let tb = placed(b_in_a, b);
    let mut out = CollisionResult::default();
    for &i in a.used_triangles() {
        let ta = a.triangle(i as usize);
        for &(j, ref tbj) in &tb {
            out.triangle_tests += 1;
            if triangle::overlap(&ta, tbj) {
                out.colliding = true;
                out.pairs.push((i, j));
                if mode == CollisionMode::FirstContact {
                    return out;
                }
            }
        }
    }
    out
}

/// Collision by testing all triangle pairs between posed models.
pub fn collide(
    pose_a: &Isometry3<f64>,
    a: &Model,
    pose_b: &Isometry3<f64>,
    b: &Model,
    mode: CollisionMode,
) -> CollisionResult {
    collide_local(&pose_a.inv_mul(pose_b), a, b, mode)
}

/// Exact minimum distance over all triangle pairs, `b` given in `a`'s frame (points in a's frame).
pub fn distance_local(b_in_a: &Isometry3<f64>, a: &Model, b: &Model) -> DistanceResult {
    let tb = placed(b_in_a, b);
    let mut best = DistanceResult {
        distance: f64::INFINITY,
        point_a: Point3::origin(),
        point_b: Point3::origin(),
        triangle_a: 0,
        triangle_b: 0,
    };
    for &i in a.used_triangles() {
        let ta = a.triangle(i as usize);
        for &(j, ref tbj) in &tb {
            let (d, p, q) = triangle::distance(&ta, tbj);
            if d < best.distance {
                best = DistanceResult {
                    distance: d,
                    point_a: p,
                    point_b: q,
                    triangle_a: i,
                    triangle_b: j,
                };
            }
        }
    }
    best
}

/// Exact minimum distance over all triangle pairs between posed models (points in the world frame).
pub fn distance(
    pose_a: &Isometry3<f64>,
    a: &Model,
    pose_b: &Isometry3<f64>,
    b: &Model,
) -> DistanceResult {
    let mut d = distance_local(&pose_a.inv_mul(pose_b), a, b);
    d.point_a = pose_a * d.point_a;
    d.point_b = pose_a * d.point_b;
    d
}
