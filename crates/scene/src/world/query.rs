//! Collision, distance and tolerance queries of the world between body selections.

use rpq_proximity::DistanceRequest;

use super::{Selection, World};
use crate::scenario::{BodyId, ContactQuery, DistanceReport, PairHit};
use crate::state::ScenarioState;

/// What a collision query reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ContactMode {
    /// Stop at the first colliding pair.
    First,
    /// Every colliding body pair.
    AllPairs,
    /// Every colliding body pair with its intersecting triangle pairs.
    AllPairsWithTriangles,
}

/// Answer of [`World::check_collision`].
#[derive(Clone, Debug, PartialEq)]
pub struct CollisionAnswer {
    /// Does any considered pair collide?
    pub colliding: bool,
    /// The colliding pairs, in `(a, b)` order ([`ContactMode::First`]: at most one, the
    /// first found).
    pub pairs: Vec<BodyPairContact>,
}

/// A colliding body pair.
#[derive(Clone, Debug, PartialEq)]
pub struct BodyPairContact {
    /// Body of the lower object index.
    pub a: BodyId,
    /// Body of the higher object index.
    pub b: BodyId,
    /// Intersecting triangle pairs `(triangle of a, triangle of b)`, only with
    /// [`ContactMode::AllPairsWithTriangles`]; empty when the pair collides only through
    /// its padding (surfaces apart but closer than the paddings).
    pub triangles: Vec<(u32, u32)>,
}

/// Answer of [`World::check_tolerance`].
#[derive(Clone, Debug, PartialEq)]
pub struct ToleranceAnswer {
    /// Is any considered pair closer than the tolerance plus its paddings?
    pub closer: bool,
    /// Such pairs in `(a, b)` order: all of them when asked per pair, else the first
    /// found.
    pub pairs: Vec<TolerancePair>,
}

/// A body pair closer than the tolerance.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TolerancePair {
    /// Body of the lower object index.
    pub a: BodyId,
    /// Body of the higher object index.
    pub b: BodyId,
    /// Exact surface distance less the two paddings, clamped at 0 (m).
    pub distance: f64,
}

impl World {
    /// Collision between bodies of different objects, over the pairs with one body in `a`
    /// and the other in `b` (either order; an empty selection is every body). Allowed
    /// pairs are skipped ([`World::is_allowed`]); a pair with paddings `pa + pb > 0`
    /// collides when its surfaces are closer than `pa + pb`, touching always counts.
    pub fn check_collision(
        &mut self,
        a: &Selection,
        b: &Selection,
        mode: ContactMode,
    ) -> CollisionAnswer {
        let mut hits = std::mem::take(&mut self.hits);
        let mut st = self.scenario.take_state();
        let r = self.collision_in(&mut st, &mut hits, a, b, mode);
        self.scenario.put_state(st);
        self.hits = hits;
        r
    }

    /// [`World::check_collision`] at the configuration of `state` (a state of this world's
    /// scenario, [`World::new_state`]); `&self`, so threads can share the world.
    pub fn check_collision_with(
        &self,
        state: &mut ScenarioState,
        a: &Selection,
        b: &Selection,
        mode: ContactMode,
    ) -> CollisionAnswer {
        self.collision_in(state, &mut Vec::new(), a, b, mode)
    }

    fn collision_in(
        &self,
        st: &mut ScenarioState,
        hits: &mut Vec<PairHit>,
        a: &Selection,
        b: &Selection,
        mode: ContactMode,
    ) -> CollisionAnswer {
        if mode == ContactMode::First && a.is_all() && b.is_all() && self.rules.is_plain() {
            let r = self.scenario.collide_with(st, &self.options);
            return CollisionAnswer {
                colliding: r.colliding,
                pairs: first_pair(r.pair),
            };
        }
        let q = ContactQuery {
            clearance: 0.0,
            all: mode != ContactMode::First,
            triangles: mode == ContactMode::AllPairsWithTriangles,
            distances: false,
        };
        let first = self.contact(st, hits, a, b, &q);
        let pairs = if q.all {
            hits.drain(..)
                .map(|h| BodyPairContact {
                    a: h.a,
                    b: h.b,
                    triangles: h.triangles,
                })
                .collect()
        } else {
            first_pair(first)
        };
        CollisionAnswer {
            colliding: first.is_some(),
            pairs,
        }
    }

    /// Runs the scenario's contact loop with this world's rules; returns the first pair
    /// and leaves the pairs found (sorted) in `hits`.
    fn contact(
        &self,
        st: &mut ScenarioState,
        hits: &mut Vec<PairHit>,
        a: &Selection,
        b: &Selection,
        q: &ContactQuery,
    ) -> Option<(BodyId, BodyId)> {
        hits.clear();
        let rules = self.rules.pair_rules(a, b);
        let r = self.scenario.contact(st, &self.options, &rules, q, hits);
        hits.sort_unstable_by_key(|h| (h.a, h.b));
        r.pair
    }

    /// Minimum distance over the same pairs as [`World::check_collision`] (run-time
    /// allowed pairs skipped; the collision matrix does not apply to distances), each
    /// pair's surface distance less its paddings, clamped at 0; witness points on the
    /// unpadded surfaces, world frame. `rel_err` / `abs_err` as in
    /// [`rpq_proximity::DistanceRequest`] (0: exact). `None` when no pair is left.
    pub fn min_distance(
        &mut self,
        a: &Selection,
        b: &Selection,
        rel_err: f64,
        abs_err: f64,
    ) -> Option<DistanceReport> {
        let mut st = self.scenario.take_state();
        let r = self.min_distance_with(&mut st, a, b, rel_err, abs_err);
        self.scenario.put_state(st);
        r
    }

    /// [`World::min_distance`] at the configuration of `state`.
    pub fn min_distance_with(
        &self,
        state: &mut ScenarioState,
        a: &Selection,
        b: &Selection,
        rel_err: f64,
        abs_err: f64,
    ) -> Option<DistanceReport> {
        let req = DistanceRequest {
            rel_err,
            abs_err,
            ..DistanceRequest::default()
        };
        if a.is_all() && b.is_all() && self.rules.is_plain() && req == DistanceRequest::default() {
            return self.scenario.min_distance_with(state, &self.options);
        }
        let rules = self.rules.pair_rules(a, b);
        self.scenario
            .min_distance_ruled(state, &self.options, &rules, &req)
    }

    /// Is any pair (as in [`World::check_collision`], run-time allowed pairs skipped)
    /// closer than `tolerance` (m) plus its paddings? Touching always counts; a NaN
    /// tolerance counts as infinite (fail-safe), a negative one as 0. With `per_pair`
    /// every such pair is listed with its exact padded distance; otherwise the query stops
    /// at the first one found (listed with its exact padded distance).
    pub fn check_tolerance(
        &mut self,
        tolerance: f64,
        a: &Selection,
        b: &Selection,
        per_pair: bool,
    ) -> ToleranceAnswer {
        let mut hits = std::mem::take(&mut self.hits);
        let mut st = self.scenario.take_state();
        let r = self.tolerance_in(&mut st, &mut hits, tolerance, a, b, per_pair);
        self.scenario.put_state(st);
        self.hits = hits;
        r
    }

    /// [`World::check_tolerance`] at the configuration of `state`.
    pub fn check_tolerance_with(
        &self,
        state: &mut ScenarioState,
        tolerance: f64,
        a: &Selection,
        b: &Selection,
        per_pair: bool,
    ) -> ToleranceAnswer {
        self.tolerance_in(state, &mut Vec::new(), tolerance, a, b, per_pair)
    }

    fn tolerance_in(
        &self,
        st: &mut ScenarioState,
        hits: &mut Vec<PairHit>,
        tolerance: f64,
        a: &Selection,
        b: &Selection,
        per_pair: bool,
    ) -> ToleranceAnswer {
        let clearance = if tolerance.is_nan() {
            f64::INFINITY
        } else {
            tolerance.max(0.0)
        };
        let q = ContactQuery {
            clearance,
            all: per_pair,
            triangles: false,
            distances: per_pair,
        };
        let first = self.contact(st, hits, a, b, &q);
        let mut pairs: Vec<TolerancePair> = Vec::new();
        if per_pair {
            pairs.extend(hits.iter().map(|h| TolerancePair {
                a: h.a,
                b: h.b,
                distance: (h.distance - self.padding(h.a) - self.padding(h.b)).max(0.0),
            }));
        } else if let Some((x, y)) = first {
            let d = self
                .scenario
                .body_distance_with(st, x, y)
                .map_or(0.0, |r| r.distance);
            pairs.push(TolerancePair {
                a: x,
                b: y,
                distance: (d - self.padding(x) - self.padding(y)).max(0.0),
            });
        }
        hits.clear();
        ToleranceAnswer {
            closer: first.is_some(),
            pairs,
        }
    }
}

fn first_pair(p: Option<(BodyId, BodyId)>) -> Vec<BodyPairContact> {
    p.map(|(a, b)| BodyPairContact {
        a,
        b,
        triangles: Vec::new(),
    })
    .into_iter()
    .collect()
}
