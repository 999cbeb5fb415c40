//! Stretching and shrinking the path (§5.1, after Quinlan's elastic bands).
//!
//! Each node `k` that is not fixed (fixed: both ends of the path and of every required span)
//! is pulled by
//!
//! * a **constant tension** `T` towards each of its two neighbours in position,
//!   `f_t = T (û_prev + û_next)`, and `T_r` in orientation, `m_t = T_r (ŵ_prev + ŵ_next)`
//!   (`û`: unit vector to the neighbour's centre; `ŵ`: unit rotation axis to the neighbour's
//!   orientation, world frame). As the paper found, constant tension between very close nodes
//!   makes them jitter: nearer than `min_spacing` (or `min_angle`) the pull is proportional
//!   to the distance (angle) instead, i.e. `T u / min_spacing`;
//! * a **spring-like repulsion** from every obstacle whose contact is not required at the
//!   node, `k_r (d_r − d) n` for `d < d_r` (engine distance `d` and witness direction `n`),
//!   translation only, with its component along the path tangent
//!   `t = unit(c_next − c_prev)` removed so that nodes do not drift along the path.
//!
//! The sum is the applied wrench of one step of the contact simulator ([`crate::sim`]) with
//! the node's required objects as capture objects, so a node never enters an obstacle and
//! never loses a required contact. The step's mobilities are chosen per node as a relaxation
//! step: `d_t Δt = 2α / (2T/h + Σ k_r)` over the node's stiffness across the path (tension
//! `2T/h`, `h` the distance to the nearer neighbour, plus every active repulsion spring) and
//! `d_r Δt = α φ / T_r` (`φ` the angle to the nearer neighbour). With `step_fraction` α = ½
//! a node between two straight neighbours lands on their chord (Gauss–Seidel); larger α
//! over-relaxes (default 0.8). Near concave obstacles the repulsion turns quickly with
//! position and a node can flip between two sides: a node whose displacement (or rotation)
//! reverses gets its α for translation (or rotation) halved, down to 2 %, and steady progress
//! lets it grow back by 25 % per move. The
//! equilibrium is set by the forces alone (`T`, `T_r`, `k_r`, `d_r`), not by these step
//! sizes. A move that would make a segment to a neighbour pass
//! through an obstacle (conservative advancement along the segment) is not made, so the path
//! stays a collision-free polyline.
//!
//! Nodes are moved in turn, sweeping forwards and backwards alternately. **Stabilisation
//! criterion**: the path has stabilised after a sweep in which no node moved more than
//! `stable_translation` (m) and turned more than `stable_rotation` (rad); the search gives up
//! after `max_sweeps` sweeps (reported as not stabilised).
//!
//! Before that the recorded path is thinned to about `node_spacing` between nodes (the paper:
//! nodes "on the order of 15 mm" apart), keeping every fixed node and only dropping a node if
//! the segment that replaces it is collision-free.

use std::time::Instant;

use nalgebra::Vector3;
use rpq_proximity::{distance_lower_bound, QueryWorkspace};

use crate::contact::{obstacle_contacts, Contact, ContactScratch};
use crate::error::{check_positive, check_range, PathShrinkError};
use crate::geometry::{difference, Pose, Wrench};
use crate::path::{certified_clearance, segment_perturbation, swept_free, unit, WorkpiecePath};
use crate::sim::{ContactSimulator, StepOptions};

/// Parameters of the path modification (units in brackets).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ShrinkParams {
    /// `T` [N]: constant tension towards each neighbour.
    pub tension: f64,
    /// `T_r` [N·m]: constant rotational tension.
    pub rotational_tension: f64,
    /// `k_r` [N/m]: stiffness of the repulsion from unwanted obstacles.
    pub repulsion_gain: f64,
    /// `d_r` [m]: the repulsion acts closer than this.
    pub repulsion_distance: f64,
    /// [m]: the recorded path is thinned to about this spacing (0: keep every node).
    pub node_spacing: f64,
    /// [m]: neighbours closer than this pull in proportion to their distance.
    pub min_spacing: f64,
    /// [rad]: orientations closer than this pull in proportion to their angle.
    pub min_angle: f64,
    /// α: the tension alone moves a node this fraction of the distance to its nearer
    /// neighbour.
    pub step_fraction: f64,
    /// [m]: stabilised when no node moves more in a sweep...
    pub stable_translation: f64,
    /// [rad]: ...and none turns more.
    pub stable_rotation: f64,
    /// Largest number of sweeps.
    pub max_sweeps: usize,
}

impl Default for ShrinkParams {
    fn default() -> Self {
        ShrinkParams {
            tension: 1.0,
            rotational_tension: 0.01,
            repulsion_gain: 200.0,
            repulsion_distance: 0.01,
            node_spacing: 0.015,
            min_spacing: 0.004,
            min_angle: 0.05,
            step_fraction: 0.8,
            stable_translation: 1e-5,
            stable_rotation: 5e-4,
            max_sweeps: 3000,
        }
    }
}

impl ShrinkParams {
    /// Refuses values outside their ranges.
    pub fn validate(&self) -> Result<(), PathShrinkError> {
        check_positive("tension", self.tension, 1e6)?;
        check_positive("rotational_tension", self.rotational_tension, 1e6)?;
        check_range("repulsion_gain", self.repulsion_gain, 0.0, 1e9)?;
        check_range("repulsion_distance", self.repulsion_distance, 0.0, 1.0)?;
        check_range("node_spacing", self.node_spacing, 0.0, 1.0)?;
        check_positive("min_spacing", self.min_spacing, 1.0)?;
        check_positive("min_angle", self.min_angle, 3.2)?;
        check_range("step_fraction", self.step_fraction, 0.05, 0.95)?;
        check_positive("stable_translation", self.stable_translation, 0.01)?;
        check_positive("stable_rotation", self.stable_rotation, 0.1)?;
        if self.max_sweeps == 0 {
            return Err(PathShrinkError::Parameter {
                name: "max_sweeps",
                value: 0.0,
                reason: "must be at least 1".into(),
            });
        }
        Ok(())
    }
}

/// How the modification went.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct ShrinkReport {
    /// Sweeps made.
    pub sweeps: usize,
    /// Did the criterion hold before `max_sweeps`?
    pub stabilised: bool,
    /// Wall time of the sweeps (s).
    pub seconds: f64,
    /// Node moves (simulator steps).
    pub moves: usize,
    /// Moves not made because a segment would have crossed an obstacle.
    pub refused_moves: usize,
    /// Largest translation (m) and rotation (rad) of a node in the last sweep.
    pub last_translation: f64,
    /// See `last_translation`.
    pub last_rotation: f64,
    /// Engine distance queries of the simulator steps.
    pub distance_queries: usize,
    /// Contact-force solves that missed their tolerance.
    pub lcp_failures: usize,
}

/// Thins `path` to about `spacing` between node centres: keeps both ends, every fixed node,
/// and a node whenever the next one would be farther than `spacing` from the last kept one,
/// or the segment skipping it would not be collision-free. Returns the thinned path (spans
/// renumbered) and the original index of each kept node. `spacing = 0` keeps every node.
pub fn thin(
    path: &WorkpiecePath,
    env: &crate::Environment,
    spacing: f64,
    ws: &mut QueryWorkspace,
) -> (WorkpiecePath, Vec<usize>) {
    let n = path.nodes.len();
    if spacing <= 0.0 || n < 3 {
        return (path.clone(), (0..n).collect());
    }
    let fixed = path.fixed();
    let c = env.workpiece.centre;
    let centre = |k: usize| path.nodes[k].pose * c;
    let mut keep = vec![0usize];
    let mut k = 1;
    while k < n - 1 {
        let last = *keep.last().expect("non-empty");
        // Farthest candidate within the spacing reachable by a free segment; fixed nodes are
        // never skipped.
        let mut j = k;
        while j + 1 < n
            && !fixed[j]
            && (centre(j + 1) - centre(last)).norm() <= spacing
            && swept_free(
                env,
                &path.nodes[last].pose,
                &path.nodes[j + 1].pose,
                0.0,
                ws,
            )
            .is_ok()
        {
            j += 1;
        }
        if j >= n - 1 {
            break;
        }
        keep.push(j);
        k = j + 1;
    }
    keep.push(n - 1);
    // A last interior node much closer to the end than the spacing is dropped when the
    // segment allows.
    if keep.len() >= 3 {
        let m = keep.len();
        let (a, b, e) = (keep[m - 3], keep[m - 2], keep[m - 1]);
        if !fixed[b]
            && (centre(e) - centre(b)).norm() < 0.5 * spacing
            && swept_free(env, &path.nodes[a].pose, &path.nodes[e].pose, 0.0, ws).is_ok()
        {
            keep.remove(m - 2);
        }
    }
    (path.subset(&keep), keep)
}

/// The tension on the node at `cur` from its neighbours (force, moment) and the step
/// scale (distance and angle to the nearer neighbour, at least the minimums).
fn tension(
    prev: &Pose,
    cur: &Pose,
    next: &Pose,
    centre: &nalgebra::Point3<f64>,
    p: &ShrinkParams,
) -> (Wrench, f64, f64) {
    let (u1, r1) = difference(cur, prev, centre);
    let (u2, r2) = difference(cur, next, centre);
    let pull = |u: &Vector3<f64>, min: f64| u / u.norm().max(min);
    let force = (pull(&u1, p.min_spacing) + pull(&u2, p.min_spacing)) * p.tension;
    let torque = (pull(&r1, p.min_angle) + pull(&r2, p.min_angle)) * p.rotational_tension;
    let h = u1.norm().min(u2.norm()).max(p.min_spacing);
    let phi = r1.norm().min(r2.norm()).max(p.min_angle);
    (Wrench { force, torque }, h, phi)
}

/// Stretches and shrinks `path` in place until it stabilises (module documentation). The
/// path must have passed [`WorkpiecePath::validate`].
pub fn shrink(
    sim: &mut ContactSimulator,
    path: &mut WorkpiecePath,
    p: &ShrinkParams,
) -> ShrinkReport {
    relax(sim, path, p, false)
}

/// [`shrink`], optionally with *quiet nodes skipped* (for a path already near its
/// equilibrium): a node whose last move was below half of both criterion thresholds is
/// not moved again until a neighbour moves by more than that. Skipping sweeps never end the relaxation: whenever one has no move at
/// or above the criterion thresholds, a full sweep follows, and only a full sweep can
/// satisfy the (unchanged) stabilisation criterion.
pub(crate) fn relax(
    sim: &mut ContactSimulator,
    path: &mut WorkpiecePath,
    p: &ShrinkParams,
    skip_quiet: bool,
) -> ShrinkReport {
    let start = Instant::now();
    let env = sim.environment().clone();
    let centre = env.workpiece.centre;
    let n = path.nodes.len();
    let fixed = path.fixed();
    let required: Vec<Vec<usize>> = (0..n).map(|k| path.required_at(k)).collect();
    let mut report = ShrinkReport::default();
    let mut ws = QueryWorkspace::new();
    let movable: Vec<usize> = (0..n).filter(|&k| !fixed[k]).collect();
    let mut features: Vec<Contact> = Vec::new();
    let mut scratch = ContactScratch::default();
    // Per segment (k, k+1): a certified lower bound of its clearance, NaN until computed.
    let mut cert = vec![f64::NAN; n.saturating_sub(1)];
    // Per node: damping of the relaxation step and the last displacement (a node whose
    // displacement reverses is oscillating between two sides of a corner of the force field:
    // its step is halved; steady progress lets it grow back).
    let mut damping = vec![1.0_f64; n];
    let mut damping_r = vec![1.0_f64; n];
    let mut last_dp = vec![Vector3::<f64>::zeros(); n];
    let mut last_dr = vec![Vector3::<f64>::zeros(); n];
    if movable.is_empty() {
        report.stabilised = true;
        report.seconds = start.elapsed().as_secs_f64();
        return report;
    }
    let (quiet_p, quiet_r) = (0.5 * p.stable_translation, 0.5 * p.stable_rotation);
    let mut active = vec![true; n];
    let mut full = true;
    for sweep in 0..p.max_sweeps {
        let (mut max_dp, mut max_dr) = (0.0_f64, 0.0_f64);
        let order: Box<dyn Iterator<Item = &usize>> = if sweep % 2 == 0 {
            Box::new(movable.iter())
        } else {
            Box::new(movable.iter().rev())
        };
        for &k in order {
            if !full && !active[k] {
                continue;
            }
            let (prev, cur, next) = (
                path.nodes[k - 1].pose,
                path.nodes[k].pose,
                path.nodes[k + 1].pose,
            );
            let (mut w, h, phi) = tension(&prev, &cur, &next, &centre, p);
            // Repulsion from the obstacles whose contact is not required here.
            let tangent = unit(&((next * centre) - (prev * centre)));
            let mut rep = Vector3::zeros();
            let mut springs = 0.0;
            if p.repulsion_gain > 0.0 && p.repulsion_distance > 0.0 {
                for (i, ob) in env.obstacles.iter().enumerate() {
                    if required[k].contains(&i)
                        || distance_lower_bound(&cur, &env.workpiece.model, &ob.pose, &ob.model)
                            >= p.repulsion_distance
                    {
                        continue;
                    }
                    if let Some(r) = env.distance(&cur, i, p.repulsion_distance, &mut ws) {
                        // Direction: the features within d_r, weighted by (d_r − d_j)²,
                        // so that a node equally near two faces of a concave obstacle is
                        // pushed along their bisector instead of jumping between them.
                        features.clear();
                        obstacle_contacts(
                            &env,
                            &cur,
                            i,
                            p.repulsion_distance,
                            &r,
                            &mut scratch,
                            &mut features,
                        );
                        let dir: Vector3<f64> = features
                            .iter()
                            .map(|c| c.normal * (p.repulsion_distance - c.distance).powi(2))
                            .sum();
                        let n_dir = if dir.norm() > 0.0 {
                            dir.normalize()
                        } else {
                            unit(&(r.point_a.coords - r.point_b.coords))
                        };
                        rep += n_dir * (p.repulsion_gain * (p.repulsion_distance - r.distance));
                        springs += p.repulsion_gain;
                    }
                }
                rep -= tangent * rep.dot(&tangent);
            }
            w.force += rep;
            // Mobilities of a relaxation step: 2α over the node's stiffness (tension 2T/h
            // across the path, plus the active repulsion springs).
            let alpha = p.step_fraction * damping[k];
            let alpha_r = p.step_fraction * damping_r[k];
            let opt = StepOptions {
                translational_mobility: 2.0 * alpha / (2.0 * p.tension / h + springs),
                rotational_mobility: alpha_r * phi / p.rotational_tension,
                time_step: 1.0,
                max_speed: f64::INFINITY,
                max_angular_speed: f64::INFINITY,
            };
            let step = sim.step_with(&cur, &w, &required[k], &opt);
            report.moves += 1;
            report.distance_queries += step.distance_queries;
            if !step.lcp.converged {
                report.lcp_failures += 1;
            }
            let new = step.pose;
            let (dp, dr) = difference(&cur, &new, &centre);
            if dp.norm() == 0.0 && dr.norm() == 0.0 {
                active[k] = false;
                continue;
            }
            // The two segments stay collision-free: a move smaller than a segment's certified
            // clearance keeps it free; otherwise the segment is certified again.
            let mut keep_free = |seg: usize, fixed_end: &Pose, moved_from: &Pose| {
                let delta = segment_perturbation(&env, fixed_end, moved_from, &new);
                if cert[seg] > delta {
                    Some(cert[seg] - delta)
                } else {
                    certified_clearance(&env, fixed_end, &new, &mut ws)
                }
            };
            let (Some(c0), Some(c1)) = (keep_free(k - 1, &prev, &cur), keep_free(k, &next, &cur))
            else {
                report.refused_moves += 1;
                continue;
            };
            cert[k - 1] = c0;
            cert[k] = c1;
            for (d, last, damp) in [
                (dp, &mut last_dp[k], &mut damping[k]),
                (dr, &mut last_dr[k], &mut damping_r[k]),
            ] {
                if d.dot(last) < -0.5 * d.norm() * last.norm() {
                    *damp = (*damp * 0.5).max(0.02);
                } else {
                    *damp = (*damp * 1.25).min(1.0);
                }
                *last = d;
            }
            path.nodes[k].pose = new;
            path.nodes[k].contacts = sim.touching().to_vec();
            if skip_quiet {
                let loud = dp.norm() >= quiet_p || dr.norm() >= quiet_r;
                active[k] = loud;
                if loud {
                    active[k - 1] = true;
                    active[k + 1] = true;
                }
            }
            max_dp = max_dp.max(dp.norm());
            max_dr = max_dr.max(dr.norm());
        }
        report.sweeps = sweep + 1;
        report.last_translation = max_dp;
        report.last_rotation = max_dr;
        let calm = max_dp < p.stable_translation && max_dr < p.stable_rotation;
        if calm && full {
            report.stabilised = true;
            break;
        }
        // Without skipping every sweep is full; with it, a calm skipping sweep is checked by
        // a full one.
        full = !skip_quiet || calm;
    }
    report.seconds = start.elapsed().as_secs_f64();
    report
}
