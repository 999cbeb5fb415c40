//! The weight matrix (paper §3.2.2): for every pair of bodies of two objects a weight that
//! estimates how likely the pair is to collide; the pair queries of a collision query run
//! in decreasing weight, so that a collision, if any, is found early.
//!
//! **A priori** (the paper's rule): each body gets a collision probability — link `k`
//! (0-based, base first) of a complex object with `n` bodies `P = 0.1 + 0.8 (k + 1) / n`
//! (distal links higher: the base 0.1 + 0.8/n, the last link 0.9), a simple object 0.5 —
//! and the pair weight starts at `c_ij = (P_i + P_j) / 2` (the paper's `P_i + P_j`, halved
//! to stay in [0, 1]; the order is the same).
//!
//! **Online update** (only while the weight matrix is enabled): each pair counts its
//! mesh-level (L3) tests `n_ij` and collisions `h_ij`, and its weight is the smoothed
//! collision rate `c_ij = (h_ij + 2 c⁰_ij) / (n_ij + 2)` (`c⁰` the a priori weight, worth
//! two tests): it rises after a collision and falls after a clear test, as in the paper.
//! Pairs rejected by boxes or by the collision matrix do not update. The paper updates
//! one probability per link; we update each pair, since a per-link rule ranks every pair of
//! a link that once collided first. `reset()` forgets the counts.
//!
//! Measured by `rpq_eval` on the two-RX60 sweep: the weight matrix lowers the number of
//! pair queries per collision query (as the paper intends), but its effect on time is
//! mixed (on top of L1+L2+L3, faster at some base distances and slower at others),
//! because the pairs it ranks first (links that often collide) are also the ones whose
//! mesh test costs most; [`crate::QueryOptions::default`] therefore leaves it off.

use crate::object::Object;

/// Pair weights between the bodies of every pair of objects (module documentation).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WeightMatrix {
    /// A priori probability of every body of every object.
    prior: Vec<Vec<f64>>,
    /// Per object pair `a < b` (row-major over the strict upper triangle): `n_a × n_b`
    /// weights, row-major.
    w: Vec<Vec<f64>>,
    /// Per pair: (collisions, mesh tests) seen.
    counts: Vec<Vec<(f64, f64)>>,
    version: u64,
}

/// How many mesh tests the a priori weight counts for.
const PRIOR_WEIGHT: f64 = 2.0;

fn slot(n: usize, a: usize, b: usize) -> usize {
    a * n - a * (a + 1) / 2 + (b - a - 1)
}

impl WeightMatrix {
    pub(crate) fn push_object(&mut self, o: &Object) {
        let n = o.num_bodies();
        let prior: Vec<f64> = match o {
            Object::Simple(_) => vec![0.5],
            Object::Complex(_) => (0..n)
                .map(|k| 0.1 + 0.8 * (k + 1) as f64 / n as f64)
                .collect(),
        };
        self.prior.push(prior);
        self.reset();
    }

    /// A priori probability of body `i` of object `o`.
    pub fn prior(&self, o: usize, i: usize) -> f64 {
        self.prior[o][i]
    }

    /// Current weight of the pair (body `i` of object `a`, body `j` of object `b`).
    pub fn weight(&self, a: usize, i: usize, b: usize, j: usize) -> f64 {
        let (a, i, b, j) = if a < b { (a, i, b, j) } else { (b, j, a, i) };
        let nb = self.prior[b].len();
        self.w[slot(self.prior.len(), a, b)][i * nb + j]
    }

    /// Back to the a priori weights.
    pub fn reset(&mut self) {
        let n = self.prior.len();
        self.w.clear();
        self.counts.clear();
        for a in 0..n {
            for b in a + 1..n {
                let mut m = Vec::with_capacity(self.prior[a].len() * self.prior[b].len());
                for pa in &self.prior[a] {
                    for pb in &self.prior[b] {
                        m.push(0.5 * (pa + pb));
                    }
                }
                self.counts.push(vec![(0.0, 0.0); m.len()]);
                self.w.push(m);
            }
        }
        self.version += 1;
    }

    /// Changes whenever a weight changes (for caching the query order).
    pub fn version(&self) -> u64 {
        self.version
    }

    fn update(&mut self, a: usize, i: usize, b: usize, j: usize, hit: bool) {
        let nb = self.prior[b].len();
        let s = slot(self.prior.len(), a, b);
        let k = i * nb + j;
        let c = &mut self.counts[s][k];
        c.0 += f64::from(u8::from(hit));
        c.1 += 1.0;
        let prior = 0.5 * (self.prior[a][i] + self.prior[b][j]);
        self.w[s][k] = (c.0 + PRIOR_WEIGHT * prior) / (c.1 + PRIOR_WEIGHT);
        self.version += 1;
    }

    /// `a < b`.
    pub(crate) fn note_collision(&mut self, a: usize, i: usize, b: usize, j: usize) {
        self.update(a, i, b, j, true);
    }

    /// `a < b`.
    pub(crate) fn note_clear(&mut self, a: usize, i: usize, b: usize, j: usize) {
        self.update(a, i, b, j, false);
    }
}
