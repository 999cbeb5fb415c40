//! Broadphase over the objects of a scene with many bodies: the world-aligned box of every
//! object (the box enclosing its level-L1 box), then
//!
//! * for contact queries, **sweep and prune** along x: only object pairs whose boxes,
//!   grown by the query's clearance and paddings, overlap on all three axes go on to the
//!   per-pair loop (level L1 box, collision matrix, link boxes, meshes), in index order, so the
//!   first pair reported is the one the plain loop over all pairs reports;
//! * for distance queries, the object pairs sorted by the gap between their boxes (a lower
//!   bound of their distance): the pair loop stops at the first pair whose gap exceeds the
//!   best distance found.
//!
//! With a handful of objects the plain loop over every pair is as cheap, so the broadphase
//! runs from [`MIN_OBJECTS`] objects on, and only with level L1 on (the paper's L3 and L2+L3
//! modes stay what they were). It changes speed, never answers: a pair it drops has boxes
//! apart by more than any bound the pair loop would test.

use nalgebra::Vector3;

use crate::state::Posed;

type V = Vector3<f64>;

/// Fewest objects for which queries use the broadphase.
pub const MIN_OBJECTS: usize = 3;

/// Relative slack on the boxes and gaps (rounding never drops a pair).
const SLACK: f64 = 1e-12;

/// The broadphase's buffers (part of a query state, reused between queries).
#[derive(Clone, Debug, Default)]
pub(crate) struct Broadphase {
    lo: Vec<V>,
    hi: Vec<V>,
    by_x: Vec<u32>,
    /// Candidate object pairs `(a, b)`, `a < b`, sorted.
    pub pairs: Vec<(u32, u32)>,
    /// Every object pair with the gap of its boxes, sorted by gap.
    pub gaps: Vec<(f64, u32, u32)>,
}

impl Broadphase {
    /// The world-aligned box of every object, grown by `margin` on every side.
    fn boxes(&mut self, posed: &[Posed], margin: f64) {
        self.lo.clear();
        self.hi.clear();
        for p in posed {
            let w = &p.whole;
            let ext = w.axes.matrix().abs() * w.half_extents;
            let grow = ext.add_scalar(margin + SLACK * (ext.amax() + w.center.coords.amax()));
            self.lo.push(w.center.coords - grow);
            self.hi.push(w.center.coords + grow);
        }
    }

    /// Sweep and prune: fills [`Broadphase::pairs`] with the object pairs whose boxes,
    /// each grown by `margin`, overlap.
    pub fn overlapping(&mut self, posed: &[Posed], margin: f64) {
        self.boxes(posed, 0.5 * margin);
        let lo = &self.lo;
        self.by_x.clear();
        self.by_x.extend(0..posed.len() as u32);
        self.by_x
            .sort_unstable_by(|&x, &y| lo[x as usize].x.total_cmp(&lo[y as usize].x));
        self.pairs.clear();
        for (n, &i) in self.by_x.iter().enumerate() {
            let (li, hi_) = (&self.lo[i as usize], &self.hi[i as usize]);
            for &j in &self.by_x[n + 1..] {
                let (lj, hj) = (&self.lo[j as usize], &self.hi[j as usize]);
                if lj.x > hi_.x {
                    break;
                }
                if lj.y <= hi_.y && li.y <= hj.y && lj.z <= hi_.z && li.z <= hj.z {
                    self.pairs.push((i.min(j), i.max(j)));
                }
            }
        }
        self.pairs.sort_unstable();
    }

    /// Fills [`Broadphase::gaps`] with every object pair and the distance between their
    /// boxes, sorted by it.
    pub fn by_gap(&mut self, posed: &[Posed]) {
        self.boxes(posed, 0.0);
        self.gaps.clear();
        let n = posed.len();
        for a in 0..n {
            let (la, ha) = (self.lo[a], self.hi[a]);
            for b in a + 1..n {
                let (lb, hb) = (&self.lo[b], &self.hi[b]);
                let mut s = 0.0;
                for k in 0..3 {
                    let g = (lb[k] - ha[k]).max(la[k] - hb[k]).max(0.0);
                    s += g * g;
                }
                self.gaps
                    .push((s.sqrt() * (1.0 - SLACK), a as u32, b as u32));
            }
        }
        self.gaps
            .sort_unstable_by(|x, y| x.0.total_cmp(&y.0).then((x.1, x.2).cmp(&(y.1, y.2))));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::{Point3, Rotation3};
    use rpq_proximity::Obb;

    fn posed_at(c: [f64; 3], h: f64) -> Posed {
        let b = Obb {
            center: Point3::from(c),
            axes: Rotation3::identity(),
            half_extents: V::repeat(h),
        };
        Posed::fixed(b)
    }

    /// Sweep and prune finds exactly the pairs a brute-force box test finds.
    #[test]
    fn sweep_and_prune_matches_brute_force() {
        let mut s = 12345u64;
        let mut r = || {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (s >> 11) as f64 / (1u64 << 53) as f64
        };
        let posed: Vec<Posed> = (0..150)
            .map(|_| posed_at([4.0 * r(), 4.0 * r(), 2.0 * r()], 0.05 + 0.2 * r()))
            .collect();
        for margin in [0.0, 0.1] {
            let mut bp = Broadphase::default();
            bp.overlapping(&posed, margin);
            let mut want = Vec::new();
            for a in 0..posed.len() {
                for b in a + 1..posed.len() {
                    let (x, y) = (&posed[a].whole, &posed[b].whole);
                    let apart = (0..3).any(|k| {
                        (x.center[k] - y.center[k]).abs()
                            > x.half_extents[k] + y.half_extents[k] + margin + 1e-9
                    });
                    if !apart {
                        want.push((a as u32, b as u32));
                    }
                }
            }
            assert_eq!(bp.pairs, want, "margin {margin}");
            assert!(!want.is_empty() && want.len() < posed.len() * (posed.len() - 1) / 4);
            // the gaps are lower bounds of the box distance, sorted
            bp.by_gap(&posed);
            assert_eq!(bp.gaps.len(), posed.len() * (posed.len() - 1) / 2);
            assert!(bp.gaps.windows(2).all(|w| w[0].0 <= w[1].0));
            for &(g, a, b) in &bp.gaps {
                // axis-aligned cubes: the exact distance between them, computed apart
                let (x, y) = (&posed[a as usize].whole, &posed[b as usize].whole);
                let exact = (0..3)
                    .map(|k| {
                        let d = (x.center[k] - y.center[k]).abs()
                            - x.half_extents[k]
                            - y.half_extents[k];
                        d.max(0.0).powi(2)
                    })
                    .sum::<f64>()
                    .sqrt();
                assert!(g <= exact && g >= exact - 1e-9, "{g} {exact}");
            }
        }
    }
}
