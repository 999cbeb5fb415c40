//! Rectangle swept spheres (RSS): exact rectangle-rectangle distance and the node distance
//! lower bound used by the distance and tolerance traversals.

use nalgebra::{Matrix3, Vector3};

use crate::model::{Model, Node};
use crate::obb;
use crate::triangle::segment_segment;

type V = Vector3<f64>;

/// Which bound the distance traversal uses (for measurements; the one in use is [`BOUND`],
/// currently [`Bound::Obb`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Bound {
    /// The OBBs' 16-axis projection gap.
    #[allow(dead_code)]
    Obb,
    /// Exact rectangle distance minus the radii.
    #[allow(dead_code)]
    Rss,
    /// OBB gap first, then the RSS bound for the pairs the OBB gap cannot prune.
    #[allow(dead_code)]
    Both,
}

pub(crate) const BOUND: Bound = Bound::Obb;

/// Lower bound of the distance between node `na` (a's frame) and node `nb` (b's frame, with
/// `b` placed in a's frame by `r`, `t`). When the bound is known to be `>= prune` it may be
/// returned early (any value `>= prune`).
#[inline(always)]
pub(crate) fn node_distance(
    a: &Model,
    ia: u32,
    b: &Model,
    ib: u32,
    r: &Matrix3<f64>,
    t: &V,
    prune: f64,
) -> f64 {
    let na: &Node = &a.nodes[ia as usize];
    let nb: &Node = &b.nodes[ib as usize];
    let rat = na.rot.transpose();
    let m = rat * (r * nb.rot);
    match BOUND {
        Bound::Obb => {
            let tt = rat * (r * nb.center + t - na.center);
            obb::gap_pruned(&m, &tt, &na.half, &nb.half, prune)
        }
        Bound::Both => {
            let tt = rat * (r * nb.center + t - na.center);
            let g = obb::gap_pruned(&m, &tt, &na.half, &nb.half, prune);
            if g >= prune {
                return g;
            }
            let (sa, sb) = (&a.rss[ia as usize], &b.rss[ib as usize]);
            let c = rat * (r * sb.center + t - sa.center);
            rect_distance(sa.half, &m, &c, sb.half, sa.radius + sb.radius, prune).max(g)
        }
        Bound::Rss => {
            let (sa, sb) = (&a.rss[ia as usize], &b.rss[ib as usize]);
            let c = rat * (r * sb.center + t - sa.center);
            rect_distance(sa.half, &m, &c, sb.half, sa.radius + sb.radius, prune)
        }
    }
}

/// `max(0, dist(rect A, rect B) - rr)`, where rect A is centred at the origin spanning the x
/// and y axes with half lengths `a`, and rect B is centred at `c` spanning the first two
/// columns of `m` with half lengths `b`. Returns early with a cheaper bound when that bound
/// is already `>= prune`.
#[inline(always)]
pub(crate) fn rect_distance(
    a: [f64; 2],
    m: &Matrix3<f64>,
    c: &V,
    b: [f64; 2],
    rr: f64,
    prune: f64,
) -> f64 {
    let u = m.column(0).into_owned();
    let v = m.column(1).into_owned();
    let w = m.column(2).into_owned();
    // Cheap projection bounds: A's normal, B's normal, the centre direction.
    let mut lb = c.z.abs() - b[0] * u.z.abs() - b[1] * v.z.abs();
    let cw = c.dot(&w);
    lb = lb.max(cw.abs() - a[0] * w.x.abs() - a[1] * w.y.abs());
    let cn2 = c.norm_squared();
    if cn2 > 0.0 {
        let cn = cn2.sqrt();
        let d = c / cn;
        let ra = a[0] * d.x.abs() + a[1] * d.y.abs();
        let rb = b[0] * d.dot(&u).abs() + b[1] * d.dot(&v).abs();
        lb = lb.max(cn - ra - rb);
    }
    let lb = (lb * (1.0 - 1e-12) - rr).max(0.0);
    if lb >= prune {
        return lb;
    }
    // Exact distance between the rectangles.
    let bu = u * b[0];
    let bv = v * b[1];
    let cb = [c - bu - bv, c + bu - bv, c + bu + bv, c - bu + bv]; // B corners, cyclic, A frame
    let ca = [
        V::new(-a[0], -a[1], 0.0),
        V::new(a[0], -a[1], 0.0),
        V::new(a[0], a[1], 0.0),
        V::new(-a[0], a[1], 0.0),
    ];
    // A corners in B's frame (origin at c, axes u, v, w)
    let mt = m.transpose();
    let ca_b = ca.map(|p| mt * (p - c));
    let mut best = f64::INFINITY;
    for k in 0..4 {
        // B corner to rect A
        let p = &cb[k];
        let dx = (p.x.abs() - a[0]).max(0.0);
        let dy = (p.y.abs() - a[1]).max(0.0);
        best = best.min(dx * dx + dy * dy + p.z * p.z);
        // A corner to rect B
        let q = &ca_b[k];
        let dx = (q.x.abs() - b[0]).max(0.0);
        let dy = (q.y.abs() - b[1]).max(0.0);
        best = best.min(dx * dx + dy * dy + q.z * q.z);
    }
    // Edges crossing the other rectangle: intersection.
    for k in 0..4 {
        let p = &cb[k];
        let q = &cb[(k + 1) % 4];
        if (p.z <= 0.0 && q.z >= 0.0) || (p.z >= 0.0 && q.z <= 0.0) {
            let dz = p.z - q.z;
            let x = if dz != 0.0 {
                p + (q - p) * (p.z / dz)
            } else {
                *p
            };
            if x.x.abs() <= a[0] && x.y.abs() <= a[1] {
                return 0.0;
            }
        }
        let p = &ca_b[k];
        let q = &ca_b[(k + 1) % 4];
        if (p.z <= 0.0 && q.z >= 0.0) || (p.z >= 0.0 && q.z <= 0.0) {
            let dz = p.z - q.z;
            let x = if dz != 0.0 {
                p + (q - p) * (p.z / dz)
            } else {
                *p
            };
            if x.x.abs() <= b[0] && x.y.abs() <= b[1] {
                return 0.0;
            }
        }
    }
    for i in 0..4 {
        for j in 0..4 {
            let (p, q) = segment_segment(&ca[i], &ca[(i + 1) % 4], &cb[j], &cb[(j + 1) % 4]);
            best = best.min((p - q).norm_squared());
        }
    }
    (best.sqrt() * (1.0 - 1e-12) - rr).max(lb)
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::{Rotation3, Vector3};

    /// Sampled rectangle-rectangle distance (an upper bound of the true one, tight as n grows).
    fn sampled(a: [f64; 2], m: &Matrix3<f64>, c: &V, b: [f64; 2], n: usize) -> f64 {
        let mut best = f64::INFINITY;
        let u = m.column(0).into_owned();
        let v = m.column(1).into_owned();
        for i in 0..=n {
            for j in 0..=n {
                let p = V::new(
                    a[0] * (2.0 * i as f64 / n as f64 - 1.0),
                    a[1] * (2.0 * j as f64 / n as f64 - 1.0),
                    0.0,
                );
                for k in 0..=n {
                    for l in 0..=n {
                        let q = c
                            + u * (b[0] * (2.0 * k as f64 / n as f64 - 1.0))
                            + v * (b[1] * (2.0 * l as f64 / n as f64 - 1.0));
                        best = best.min((p - q).norm());
                    }
                }
            }
        }
        best
    }

    #[test]
    fn rect_distance_is_a_tight_lower_bound() {
        let mut seed = 12345u64;
        let mut rnd = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        };
        for _ in 0..300 {
            let a = [rnd().abs() + 0.05, rnd().abs() + 0.05];
            let b = [rnd().abs() + 0.05, rnd().abs() + 0.05];
            let m =
                Rotation3::from_scaled_axis(Vector3::new(rnd() * 3.0, rnd() * 3.0, rnd() * 3.0))
                    .into_inner();
            let c = V::new(rnd() * 2.0, rnd() * 2.0, rnd() * 1.0);
            let d = rect_distance(a, &m, &c, b, 0.0, f64::INFINITY);
            let s = sampled(a, &m, &c, b, 24);
            // sampling error: at most half the sample spacing diagonal of both rectangles
            let h = (a[0].max(a[1]) + b[0].max(b[1])) * 2.0 / 24.0 * 2f64.sqrt();
            assert!(d <= s + 1e-12, "not a lower bound: {d} > {s}");
            assert!(s - d <= h, "not tight: {d} vs {s}");
        }
        // parallel coplanar: overlapping
        let d = rect_distance(
            [1.0, 1.0],
            &Matrix3::identity(),
            &V::new(0.5, 0.5, 0.0),
            [1.0, 1.0],
            0.0,
            f64::INFINITY,
        );
        assert_eq!(d, 0.0);
        // stacked parallel rectangles
        let d = rect_distance(
            [1.0, 1.0],
            &Matrix3::identity(),
            &V::new(0.5, 0.5, 0.3),
            [1.0, 1.0],
            0.1,
            f64::INFINITY,
        );
        assert!((d - 0.2).abs() < 1e-12);
    }
}
