//! The weight matrix (paper §3.2.2): a collision probability per body, a priori higher
//! for distal links, updated online from query results; the weight of a body pair is the
//! sum of the two probabilities, and pair queries run in decreasing weight.
//!
//! **A priori**: link `k` (0-based, base first) of a complex object with `n` bodies gets
//! `P = 0.1 + 0.8 (k + 1) / n` (the base 0.1 + 0.8/n, the last link 0.9); a simple
//! object gets 0.5.
//!
//! **Update rule** (after each link-pair mesh query of a collision query, only when the
//! weight matrix is enabled): if the pair overlaps, both bodies move towards 1,
//! `P ← P + up·(1 − P)`; if the pair was tested at the mesh level and is clear, both move
//! towards 0, `P ← P − down·P`. Defaults `up = 0.05`, `down = 0.005` (collisions are the
//! rarer, more informative event); `P` stays in `[0.01, 0.99]`, so no pair is ever
//! starved forever. Pairs rejected by boxes or the collision matrix do not update.

use crate::object::Object;

/// Per-body collision probabilities of every object (see the module documentation).
#[derive(Clone, Debug, PartialEq)]
pub struct WeightMatrix {
    p: Vec<Vec<f64>>,
    prior: Vec<Vec<f64>>,
    /// Rate towards 1 after a collision.
    pub up: f64,
    /// Rate towards 0 after a clear mesh test.
    pub down: f64,
    version: u64,
}

impl Default for WeightMatrix {
    fn default() -> Self {
        WeightMatrix {
            p: Vec::new(),
            prior: Vec::new(),
            up: 0.05,
            down: 0.005,
            version: 0,
        }
    }
}

const P_MIN: f64 = 0.01;
const P_MAX: f64 = 0.99;

impl WeightMatrix {
    pub(crate) fn push_object(&mut self, o: &Object) {
        let n = o.num_bodies();
        let prior: Vec<f64> = match o {
            Object::Simple(_) => vec![0.5],
            Object::Complex(_) => (0..n)
                .map(|k| 0.1 + 0.8 * (k + 1) as f64 / n as f64)
                .collect(),
        };
        self.p.push(prior.clone());
        self.prior.push(prior);
        self.version += 1;
    }

    /// Current probability of body `i` of object `o`.
    pub fn probability(&self, o: usize, i: usize) -> f64 {
        self.p[o][i]
    }

    /// Weight `c_ij = P_i + P_j` of a body pair.
    pub fn weight(&self, a: usize, i: usize, b: usize, j: usize) -> f64 {
        self.p[a][i] + self.p[b][j]
    }

    /// Back to the a priori probabilities.
    pub fn reset(&mut self) {
        self.p.clone_from(&self.prior);
        self.version += 1;
    }

    /// Changes whenever a probability changes (for caching the query order).
    pub fn version(&self) -> u64 {
        self.version
    }

    pub(crate) fn note_collision(&mut self, a: usize, i: usize, b: usize, j: usize) {
        for (o, k) in [(a, i), (b, j)] {
            let p = &mut self.p[o][k];
            *p = (*p + self.up * (1.0 - *p)).clamp(P_MIN, P_MAX);
        }
        self.version += 1;
    }

    pub(crate) fn note_clear(&mut self, a: usize, i: usize, b: usize, j: usize) {
        for (o, k) in [(a, i), (b, j)] {
            let p = &mut self.p[o][k];
            *p = (*p - self.down * *p).clamp(P_MIN, P_MAX);
        }
        self.version += 1;
    }
}
