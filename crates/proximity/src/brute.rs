//! Brute-force oracle: every triangle pair. Slow (O(n m)); for tests and cross-checks.

use nalgebra::Isometry3;

use crate::query::{split, xf};
use crate::{triangle, CollisionMode, CollisionResult, DistanceResult, Model};

/// Collision by testing all triangle pairs, `b` given in `a`'s frame.
pub fn collide_local(
    b_in_a: &Isometry3<f64>,
    a: &Model,
    b: &Model,
    mode: CollisionMode,
) -> CollisionResult {
    let (r, t) = split(b_in_a);
    let tb: Vec<_> = (0..b.num_triangles())
        .map(|j| b.triangle(j).map(|p| xf(&r, &t, &p)))
        .collect();
    let mut out = CollisionResult::default();
    for i in 0..a.num_triangles() {
        let ta = a.triangle(i);
        for (j, tbj) in tb.iter().enumerate() {
            out.triangle_tests += 1;
            if triangle::overlap(&ta, tbj) {
                out.colliding = true;
                out.pairs.push((i as u32, j as u32));
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
    let (r, t) = split(b_in_a);
    let tb: Vec<_> = (0..b.num_triangles())
        .map(|j| b.triangle(j).map(|p| xf(&r, &t, &p)))
        .collect();
    let mut best = DistanceResult {
        distance: f64::INFINITY,
        point_a: nalgebra::Point3::origin(),
        point_b: nalgebra::Point3::origin(),
        triangle_a: 0,
        triangle_b: 0,
    };
    for i in 0..a.num_triangles() {
        let ta = a.triangle(i);
        for (j, tbj) in tb.iter().enumerate() {
            let (d, p, q) = triangle::distance(&ta, tbj);
            if d < best.distance {
                best = DistanceResult {
                    distance: d,
                    point_a: p,
                    point_b: q,
                    triangle_a: i as u32,
                    triangle_b: j as u32,
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
