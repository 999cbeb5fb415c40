//! Coarse-to-fine stabilisation of a dense path (§5.1 at full resolution).
//!
//! The band's relaxation moves one node at a time, so a correction travels one node per
//! sweep: with `n` nodes the sweeps grow like `n²` (a 200-node path kept whole needs
//! thousands of sweeps). [`shrink_coarse_to_fine`] stabilises the path in two stages:
//!
//! 1. **coarse**: the path thinned to about `coarse_spacing` ([`crate::shrink::thin`], every
//!    fixed node kept, and every node inside a required span kept too) is stretched and
//!    shrunk by [`shrink`] until it stabilises to 10× the criterion thresholds (it is only
//!    the fine stage's starting point);
//! 2. **re-insertion**: between two consecutive *anchors* (the ends of the path and every node
//!    of a required span) the coarse nodes become nodes of the full path at places that give
//!    each coarse segment a node count in proportion to its length (as many nodes in all as
//!    the recording had there), and the nodes in between are spread at equal fractions of
//!    the straight motion of their coarse segment. That motion is the one the band certified
//!    collision-free (the interpolation of [`crate::path::swept_free`]), so every new node
//!    and every new segment is free; the nodes inside required spans are the coarse band's
//!    own (kept, with their contacts);
//! 3. **fine**: the band on all the nodes with the unchanged parameters, so the result
//!    satisfies the same stabilisation criterion at full resolution (no node moved more
//!    than `stable_translation`, none turned more than `stable_rotation` in the last sweep).
//!    As the re-inserted path is near its equilibrium except at a few places, this stage
//!    skips quiet nodes and grow a damped node's step back slowly (`relax` in
//!    [`crate::shrink`]); only a sweep over every node can end it.
//!
//! Equal spacing along the path is what the tension makes of nodes closer than
//! `min_spacing` (proportional pull), so the resampled path starts near the fine equilibrium
//! and mostly short-wave corrections remain for the fine sweeps.

use std::time::Instant;

use rpq_proximity::QueryWorkspace;

use crate::geometry::interpolate;
use crate::path::{PathNode, WorkpiecePath};
use crate::shrink::{relax, shrink, thin, ShrinkParams, ShrinkReport};
use crate::sim::ContactSimulator;

/// Spacing of the coarse stage used by [`crate::program::shrink_program`] when every node
/// is kept (`node_spacing = 0`) (m): the paper's ~15 mm.
pub const COARSE_SPACING: f64 = 0.015;

/// The coarse stage stops at this many times the criterion thresholds.
const COARSE_LOOSENESS: f64 = 10.0;

/// How a coarse-to-fine stabilisation went.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct CoarseToFineReport {
    /// Nodes of the coarse stage.
    pub coarse_nodes: usize,
    /// The coarse stage.
    pub coarse: ShrinkReport,
    /// The fine stage (all nodes); its `stabilised` is the result's.
    pub fine: ShrinkReport,
    /// Wall time of all three stages (s).
    pub seconds: f64,
}

impl CoarseToFineReport {
    /// Both stages as one report: sweeps, moves and queries added, the fine stage's
    /// criterion and last motions, the whole time.
    pub fn combined(&self) -> ShrinkReport {
        ShrinkReport {
            sweeps: self.coarse.sweeps + self.fine.sweeps,
            stabilised: self.fine.stabilised,
            seconds: self.seconds,
            moves: self.coarse.moves + self.fine.moves,
            refused_moves: self.coarse.refused_moves + self.fine.refused_moves,
            last_translation: self.fine.last_translation,
            last_rotation: self.fine.last_rotation,
            distance_queries: self.coarse.distance_queries + self.fine.distance_queries,
            lcp_failures: self.coarse.lcp_failures + self.fine.lcp_failures,
        }
    }
}

/// The nodes kept for the coarse stage: [`thin`]'s nodes at `spacing` and every node inside
/// a required span (increasing).
fn coarse_nodes(
    path: &WorkpiecePath,
    env: &crate::Environment,
    spacing: f64,
    ws: &mut QueryWorkspace,
) -> Vec<usize> {
    let (_, mut keep) = thin(path, env, spacing, ws);
    for s in &path.spans {
        keep.extend(s.first..=s.last);
    }
    keep.sort_unstable();
    keep.dedup();
    keep
}

/// Stretches and shrinks `path` in place, coarse to fine (module documentation), keeping
/// every node. The path must have passed [`WorkpiecePath::validate`]. `coarse_spacing` (m)
/// is the spacing of the coarse stage (the paper's 15 mm works).
pub fn shrink_coarse_to_fine(
    sim: &mut ContactSimulator,
    path: &mut WorkpiecePath,
    p: &ShrinkParams,
    coarse_spacing: f64,
) -> CoarseToFineReport {
    let start = Instant::now();
    let mut ws = QueryWorkspace::new();
    let env = sim.environment().clone();
    let n = path.nodes.len();
    let keep = coarse_nodes(path, &env, coarse_spacing, &mut ws);
    let mut report = CoarseToFineReport {
        coarse_nodes: keep.len(),
        ..Default::default()
    };
    if 2 * keep.len() > n {
        // Nothing to gain from a coarse stage.
        report.fine = shrink(sim, path, p);
        report.seconds = start.elapsed().as_secs_f64();
        return report;
    }
    // 1. Coarse.
    let mut coarse = path.subset(&keep);
    // (Only a starting point for the fine stage: a looser criterion will do.)
    let loose = ShrinkParams {
        stable_translation: COARSE_LOOSENESS * p.stable_translation,
        stable_rotation: COARSE_LOOSENESS * p.stable_rotation,
        ..*p
    };
    report.coarse = shrink(sim, &mut coarse, &loose);
    // 2. Re-insertion: the coarse nodes at nearly equal arc-length positions.
    let at = fine_positions(path, &keep, &coarse, &env);
    place(
        path,
        &coarse,
        &at,
        &env,
        sim.params().contact_distance,
        &mut ws,
    );
    // 3. Fine: the re-inserted path is near its equilibrium except at a few places, so
    //    quiet nodes are skipped (the criterion is still judged on full sweeps only).
    report.fine = relax(sim, path, p, true);
    report.seconds = start.elapsed().as_secs_f64();
    report
}

/// Where each coarse node goes in the full path (strictly increasing, first 0, last n − 1):
/// between two anchors (the path ends and the nodes of required spans, which keep their
/// places) the nodes of the recording are spread so that the coarse segments get node counts
/// in proportion to their length; where that is impossible, the coarse nodes keep their
/// recorded places.
fn fine_positions(
    path: &WorkpiecePath,
    keep: &[usize],
    coarse: &WorkpiecePath,
    env: &crate::Environment,
) -> Vec<usize> {
    let centre = env.workpiece.centre;
    let in_span = |k: usize| path.spans.iter().any(|s| (s.first..=s.last).contains(&k));
    let anchors: Vec<usize> = (0..keep.len())
        .filter(|&j| j == 0 || j + 1 == keep.len() || in_span(keep[j]))
        .collect();
    let mut at = keep.to_vec();
    for w in anchors.windows(2) {
        let (a, b) = (w[0], w[1]);
        if b - a < 2 {
            continue;
        }
        let count = (keep[b] - keep[a]) as f64;
        let mut cum = vec![0.0_f64];
        for j in a..b {
            let l = ((coarse.nodes[j + 1].pose * centre) - (coarse.nodes[j].pose * centre)).norm();
            cum.push(cum.last().expect("non-empty") + l);
        }
        let total = *cum.last().expect("non-empty");
        if total <= 0.0 {
            continue;
        }
        let mut cand: Vec<usize> = cum
            .iter()
            .map(|&s| keep[a] + (s / total * count).round() as usize)
            .collect();
        for i in 1..cand.len() {
            cand[i] = cand[i].max(cand[i - 1] + 1);
        }
        if *cand.last().expect("non-empty") == keep[b] {
            at[a..=b].copy_from_slice(&cand);
        }
    }
    at
}

/// Puts `coarse`'s node `j` at node `at[j]` of `path` and fills the nodes between `at[j]`
/// and `at[j + 1]` at equal fractions of the straight motion between the two coarse nodes
/// (the motion the band certified collision-free), with their contacts (`within`: ε_c).
fn place(
    path: &mut WorkpiecePath,
    coarse: &WorkpiecePath,
    at: &[usize],
    env: &crate::Environment,
    within: f64,
    ws: &mut QueryWorkspace,
) {
    let centre = env.workpiece.centre;
    for j in 0..at.len() {
        path.nodes[at[j]] = coarse.nodes[j].clone();
        if j + 1 == at.len() {
            break;
        }
        let count = at[j + 1] - at[j];
        for i in 1..count {
            let pose = interpolate(
                &coarse.nodes[j].pose,
                &coarse.nodes[j + 1].pose,
                &centre,
                i as f64 / count as f64,
            );
            path.nodes[at[j] + i] = PathNode {
                pose,
                contacts: env.touching(&pose, within, ws),
            };
        }
    }
}
