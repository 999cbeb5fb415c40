//! The collision matrix (paper §3.2.3): body pairs that can never collide, skipped by
//! collision queries.
//!
//! [`CollisionMatrix::generate`] decides every pair of bodies of different objects in
//! two stages and lists as `never_collide` only the pairs it finds at least `margin`
//! apart:
//!
//! 1. **Proof** (sound, configuration independent). Every body of a robot is enclosed,
//!    for *all* joint values within the limits, in spheres about fixed points of the
//!    robot: the origin `p_A` of any link `A` on the body's path from the root whose
//!    origin does not move (the root, and e.g. the shoulder point of an arm whose first
//!    joints intersect). If the body hangs from link `L` through joints `m = k+1..n`
//!    below `A`, a point `x = p_L(q) + R_L(q) v` of its mesh (`v` a mesh vertex or a
//!    convex combination of vertices, in the link frame) satisfies, by the triangle
//!    inequality over the chain of joint frames,
//!    `|x − p_A| ≤ Σ_m |t_m(q_m)| + |v| ≤ Σ_m max_q |t_m| + max_v |v|`, where `t_m` is the
//!    translation of joint `m` in its parent frame (constant for revolute and fixed joints;
//!    for prismatic joints the larger of its norms at the two limits, the norm being convex
//!    in `q`). Bodies whose path has no movable joint (base links, simple objects) are
//!    fixed and keep their posed oriented box. A pair is *proven* never colliding when a
//!    lower bound of its distance is `≥ margin`: sphere–sphere `|c_a − c_b| − r_a − r_b`,
//!    sphere–box (distance of the centre to the posed box) `− r`, and for two fixed bodies
//!    the exact mesh distance.
//! 2. **Search** (MoveIt-like, not a proof). The pairs left are checked on `samples`
//!    random configurations of all robots (uniform within the joint limits, bases at their
//!    scenario poses); a pair that comes closer than `margin` in a sample may collide. For
//!    the others, a local search starts from the `refine_starts` samples with the smallest
//!    box lower bound for that pair and minimizes the pair's exact distance over the joints
//!    that move its two bodies (coordinate steps plus random perturbations of shrinking
//!    size, within the joint limits, `refine_evaluations` distance queries per start). A
//!    pair is listed as never colliding only if the smallest distance found stays
//!    `≥ margin`.
//!
//! "Never" therefore means either *proven* (stage 1: a guarantee) or *searched* (stage 2:
//! sampling plus descent found no approach below the margin; the margin is the allowance
//! for what the search might miss). The YAML file records per pair how it was decided and
//! the closest approach (see [`PairDecision`]).
//!
//! The YAML file (see [`CollisionMatrixFile`]) lists the objects with the base poses the
//! matrix was computed for (a scenario whose poses differ is rejected) and the
//! `never_collide` pairs as `object/body` names; users may edit the list (the
//! `decisions` record is informational; `never_collide` alone decides what is skipped, and
//! hand-written files need nothing else).

use std::collections::BTreeSet;
use std::path::Path;

use nalgebra::Point3;
use rayon::prelude::*;
use rpq_kinematics::JointKind;
use rpq_proximity::{DistanceRequest, Obb, QueryWorkspace};
use serde::{Deserialize, Serialize};

use crate::object::Object;
use crate::scenario::{BodyId, Scenario};
use crate::spec::PoseSpec;
use crate::{Rng, SceneError};

fn default_refine_starts() -> usize {
    8
}

fn default_refine_evaluations() -> usize {
    400
}

/// How a matrix was generated.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GeneratorSettings {
    /// Number of random configurations (of all robots at once).
    pub samples: usize,
    /// Safety margin (m): pairs that may come closer than this may collide.
    pub margin: f64,
    /// Seed of the sampler.
    pub seed: u64,
    /// Local searches per pair that no sample brought within the margin (from its closest
    /// samples); 0 disables the refinement.
    #[serde(default = "default_refine_starts")]
    pub refine_starts: usize,
    /// Distance queries per local search.
    #[serde(default = "default_refine_evaluations")]
    pub refine_evaluations: usize,
}

impl Default for GeneratorSettings {
    fn default() -> Self {
        GeneratorSettings {
            samples: 20_000,
            margin: 0.05,
            seed: 1,
            refine_starts: default_refine_starts(),
            refine_evaluations: default_refine_evaluations(),
        }
    }
}

impl GeneratorSettings {
    /// Default refinement with the given sampling settings.
    pub fn sampling(samples: usize, margin: f64, seed: u64) -> Self {
        GeneratorSettings {
            samples,
            margin,
            seed,
            ..GeneratorSettings::default()
        }
    }
}

/// How the generator decided a pair (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// Never colliding, proven: `closest` is a lower bound of the distance over all
    /// configurations (the exact distance for two fixed bodies).
    Proven,
    /// Never colliding as far as the search found: `closest` is the smallest distance
    /// found by sampling and local refinement (not a guarantee).
    Searched,
    /// Two fixed bodies closer than the margin: `closest` is their exact distance.
    Fixed,
    /// May collide: a random sample brought the pair within the margin (`closest`: the
    /// smallest such approach seen, 0 = overlapping).
    Sampled,
    /// May collide: the local refinement brought the pair within the margin (`closest`:
    /// the distance reached).
    Refined,
}

/// The generator's decision for one body pair.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PairDecision {
    /// The two bodies (`object/body`).
    pub pair: [String; 2],
    /// Listed in `never_collide`.
    pub never: bool,
    /// How it was decided.
    pub reason: Reason,
    /// Closest approach (m): a proven lower bound for [`Reason::Proven`], the closest
    /// distance found otherwise (`.inf` if nothing was measured).
    pub closest: f64,
}

/// An object the matrix was computed for.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MatrixObject {
    /// Object name.
    pub name: String,
    /// Base pose (robots) or pose (simple objects) in the world.
    pub pose: PoseSpec,
}

/// The collision matrix and its YAML form.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CollisionMatrixFile {
    /// How it was generated (absent for hand-written files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generator: Option<GeneratorSettings>,
    /// Objects and the poses the matrix is valid for.
    pub objects: Vec<MatrixObject>,
    /// Body pairs (`object/body` names) that never collide.
    pub never_collide: Vec<[String; 2]>,
    /// The generator's record, one entry per body pair (absent for hand-written files;
    /// informational: `never_collide` alone decides what is skipped).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub decisions: Vec<PairDecision>,
}

/// A collision matrix: the set of body pairs that never collide.
pub type CollisionMatrix = CollisionMatrixFile;

fn normalized(a: &str, b: &str) -> [String; 2] {
    if a <= b {
        [a.to_owned(), b.to_owned()]
    } else {
        [b.to_owned(), a.to_owned()]
    }
}

/// A configuration-independent enclosure of one body (stage 1).
#[derive(Clone, Debug)]
pub enum BodyBound {
    /// The body does not move: its posed box (world frame).
    Fixed(Obb),
    /// The body moves: spheres `(centre, radius)` (world frame), each containing the body
    /// in every configuration within the joint limits.
    Moving(Vec<(Point3<f64>, f64)>),
}

/// Bound on the norm of a joint's translation over its range (module documentation).
fn translation_bound(j: &rpq_kinematics::Joint) -> f64 {
    let t = j.origin.translation.vector;
    match j.kind {
        JointKind::Prismatic => {
            let (lo, hi) = (j.limits.lower, j.limits.upper);
            if !(lo.is_finite() && hi.is_finite()) {
                return f64::INFINITY;
            }
            let dir = j.origin.rotation * j.axis.into_inner();
            (t + dir * lo).norm().max((t + dir * hi).norm())
        }
        _ => t.norm(),
    }
}

/// The enclosures of every body of `object` at its scenario pose (module documentation).
pub fn body_bounds(object: &Object) -> Vec<BodyBound> {
    let r = match object {
        Object::Simple(s) => {
            return vec![BodyBound::Fixed(s.body.local_box.transformed(&s.pose))];
        }
        Object::Complex(r) => r,
    };
    let kin = r.kinematics();
    let q0 = kin
        .clamp(&vec![0.0; kin.dof()])
        .unwrap_or_else(|_| vec![0.0; kin.dof()]);
    let world = r
        .forward_kinematics(&q0)
        .expect("joint vector of the right length");
    let links = kin.links();
    let joints = kin.joints();
    r.body_links()
        .iter()
        .zip(r.bodies())
        .map(|(&l, body)| {
            // Path root -> l (link indices).
            let mut path = vec![l];
            while let Some(p) = links[*path.last().expect("non-empty")].parent_link {
                path.push(p);
            }
            path.reverse();
            let mesh_radius = body
                .model
                .vertices()
                .iter()
                .map(|v| v.coords.norm())
                .fold(0.0, f64::max);
            if path[1..].iter().all(|&k| {
                let j = &joints[links[k].parent_joint.expect("non-root link")];
                j.kind == JointKind::Fixed
            }) {
                return BodyBound::Fixed(body.local_box.transformed(&world[l]));
            }
            // cum[k]: sum of translation bounds from the root to path[k]; fixed[k]: is the
            // origin of path[k] independent of the configuration.
            let mut cum = vec![0.0; path.len()];
            let mut fixed = vec![true; path.len()];
            let mut rot_fixed = true;
            for k in 1..path.len() {
                let j = &joints[links[path[k]].parent_joint.expect("non-root link")];
                cum[k] = cum[k - 1] + translation_bound(j);
                let t_zero = j.origin.translation.vector.norm() < 1e-12;
                fixed[k] = fixed[k - 1] && j.kind != JointKind::Prismatic && (rot_fixed || t_zero);
                rot_fixed = rot_fixed && matches!(j.kind, JointKind::Fixed | JointKind::Prismatic);
            }
            let last = cum[path.len() - 1];
            let spheres: Vec<(Point3<f64>, f64)> = (0..path.len())
                .filter(|&k| fixed[k])
                .map(|k| {
                    (
                        Point3::from(world[path[k]].translation.vector),
                        last - cum[k] + mesh_radius,
                    )
                })
                .filter(|(_, rad)| rad.is_finite())
                .collect();
            BodyBound::Moving(spheres)
        })
        .collect()
}

/// Distance from a point to a box (0 inside).
fn point_box_distance(p: &Point3<f64>, b: &Obb) -> f64 {
    let local = b.axes.inverse() * (p - b.center);
    let excess = local.abs() - b.half_extents;
    excess.sup(&nalgebra::Vector3::zeros()).norm()
}

/// A lower bound of the distance between two enclosed bodies over all configurations
/// (`None` for two fixed bodies: measure them exactly).
pub fn bound_distance(a: &BodyBound, b: &BodyBound) -> Option<f64> {
    let best = |it: &mut dyn Iterator<Item = f64>| it.fold(f64::NEG_INFINITY, f64::max);
    match (a, b) {
        (BodyBound::Fixed(_), BodyBound::Fixed(_)) => None,
        (BodyBound::Moving(s), BodyBound::Fixed(bx))
        | (BodyBound::Fixed(bx), BodyBound::Moving(s)) => Some(best(
            &mut s.iter().map(|(c, r)| point_box_distance(c, bx) - r),
        )),
        (BodyBound::Moving(sa), BodyBound::Moving(sb)) => {
            Some(best(&mut sa.iter().flat_map(|(ca, ra)| {
                sb.iter().map(move |(cb, rb)| (ca - cb).norm() - ra - rb)
            })))
        }
    }
}

/// Joint values of object `k` drawn uniformly within the limits (±π for unlimited joints).
fn random_q(sc: &Scenario, k: usize, rng: &mut Rng) -> Vec<f64> {
    match &sc.objects()[k] {
        Object::Complex(r) => r
            .kinematics()
            .joint_limits()
            .iter()
            .map(|l| {
                let (lo, hi) = limits(l);
                lo + (hi - lo) * rng.uniform()
            })
            .collect(),
        Object::Simple(_) => Vec::new(),
    }
}

fn limits(l: &rpq_kinematics::JointLimits) -> (f64, f64) {
    if l.lower.is_finite() && l.upper.is_finite() {
        (l.lower, l.upper)
    } else {
        (-std::f64::consts::PI, std::f64::consts::PI)
    }
}

/// Indices of the joint variables that move body `i` of `object`.
fn active_dofs(object: &Object, i: usize) -> Vec<usize> {
    let Object::Complex(r) = object else {
        return Vec::new();
    };
    let kin = r.kinematics();
    let mut out = Vec::new();
    let mut l = r.body_links()[i];
    while let Some(j) = kin.links()[l].parent_joint {
        if let Some(d) = kin.joints()[j].dof_index {
            out.push(d);
        }
        l = kin.joints()[j].parent;
    }
    out.sort_unstable();
    out
}

/// A sample kept as a starting point of the refinement: box lower bound, joints of the
/// pair's two objects.
type Start = (f64, Vec<f64>, Vec<f64>);

/// Per-pair sampling state.
#[derive(Clone, Debug)]
struct PairSampling {
    /// Smallest approach below the margin seen (`+inf`: none).
    closest: f64,
    /// The samples with the smallest box lower bounds (at most `refine_starts`).
    starts: Vec<Start>,
}

fn push_start(starts: &mut Vec<Start>, keep: usize, s: Start) {
    if keep == 0 {
        return;
    }
    if starts.len() == keep {
        if s.0 >= starts[keep - 1].0 {
            return;
        }
        starts.pop();
    }
    let at = starts.partition_point(|x| x.0 <= s.0);
    starts.insert(at, s);
}

/// Exact distance between two bodies of `sc` at its current configuration, `None` if at
/// or above `bound`.
fn pair_distance(
    sc: &Scenario,
    a: BodyId,
    b: BodyId,
    bound: f64,
    ws: &mut QueryWorkspace,
) -> Option<f64> {
    rpq_proximity::distance(
        &sc.body_poses(a.object)[a.body],
        &sc.objects()[a.object].body(a.body).model,
        &sc.body_poses(b.object)[b.body],
        &sc.objects()[b.object].body(b.body).model,
        &DistanceRequest {
            upper_bound: bound,
            ..DistanceRequest::default()
        },
        ws,
    )
    .map(|r| r.distance)
}

/// Local search from `start` minimizing the distance of the pair (a, b) over the joints
/// that move them; stops below `margin`. Returns the smallest distance found.
#[allow(clippy::too_many_arguments)]
fn refine(
    sc: &mut Scenario,
    a: BodyId,
    b: BodyId,
    start: &Start,
    settings: &GeneratorSettings,
    margin: f64,
    rng: &mut Rng,
    ws: &mut QueryWorkspace,
) -> f64 {
    // Variables: (object, dof index, lower, upper).
    let mut vars: Vec<(usize, usize, f64, f64)> = Vec::new();
    for (id, _) in [(a, 0), (b, 1)] {
        if let Object::Complex(r) = &sc.objects()[id.object] {
            let lim = r.kinematics().joint_limits();
            for d in active_dofs(&sc.objects()[id.object], id.body) {
                let (lo, hi) = limits(&lim[d]);
                vars.push((id.object, d, lo, hi));
            }
        }
    }
    let mut q = [start.1.clone(), start.2.clone()];
    let slot = |o: usize| usize::from(o != a.object);
    let set = |sc: &mut Scenario, q: &[Vec<f64>; 2]| {
        for (k, obj) in [a.object, b.object].into_iter().enumerate() {
            if !q[k].is_empty() {
                sc.set_joint_positions(obj, &q[k]).expect("valid joints");
            }
        }
    };
    set(sc, &q);
    let mut best = pair_distance(sc, a, b, f64::INFINITY, ws).unwrap_or(f64::INFINITY);
    let mut evals = 1usize;
    let mut h = 0.1;
    while best >= margin && evals < settings.refine_evaluations && h > 1e-4 {
        let mut improved = false;
        'vars: for &(o, d, lo, hi) in &vars {
            for sign in [1.0, -1.0] {
                let mut trial = q.clone();
                let x = &mut trial[slot(o)][d];
                *x = (*x + sign * h * (hi - lo)).clamp(lo, hi);
                if *x == q[slot(o)][d] {
                    continue;
                }
                set(sc, &trial);
                evals += 1;
                if let Some(dist) = pair_distance(sc, a, b, best, ws) {
                    best = dist;
                    q = trial;
                    improved = true;
                    if best < margin {
                        break 'vars;
                    }
                    break;
                }
                if evals >= settings.refine_evaluations {
                    break 'vars;
                }
            }
        }
        if improved {
            h = (h * 1.25).min(0.25);
            continue;
        }
        // No coordinate step helped: a few random perturbations, then shrink.
        for _ in 0..2 {
            let mut trial = q.clone();
            for &(o, d, lo, hi) in &vars {
                let x = &mut trial[slot(o)][d];
                *x = (*x + h * (hi - lo) * (2.0 * rng.uniform() - 1.0)).clamp(lo, hi);
            }
            set(sc, &trial);
            evals += 1;
            if let Some(dist) = pair_distance(sc, a, b, best, ws) {
                best = dist;
                q = trial;
                improved = true;
                break;
            }
        }
        if !improved {
            h *= 0.5;
        }
    }
    best
}

impl CollisionMatrixFile {
    /// Decides every body pair of different objects: proof by configuration-independent
    /// bounds, then sampling and local refinement; lists the pairs never closer than
    /// `settings.margin` (module documentation). Runs on the rayon pool; the progress bar
    /// counts samples, then refined pairs.
    pub fn generate(
        scenario: &Scenario,
        settings: &GeneratorSettings,
        progress: Option<&indicatif::ProgressBar>,
    ) -> Result<CollisionMatrix, SceneError> {
        if !(settings.margin.is_finite() && settings.margin >= 0.0) {
            return Err(SceneError::Invalid(format!(
                "collision-matrix margin {} must be finite and >= 0",
                settings.margin
            )));
        }
        // A pair may collide if its distance can be below the margin or zero (touching):
        // with margin 0, only overlapping pairs count.
        let margin = settings.margin.max(f64::MIN_POSITIVE);
        let objects = scenario.objects();
        let bounds: Vec<Vec<BodyBound>> = objects.iter().map(body_bounds).collect();
        let mut pairs: Vec<(BodyId, BodyId)> = Vec::new();
        for (a, b) in scenario.object_pairs() {
            for i in 0..objects[a].num_bodies() {
                for j in 0..objects[b].num_bodies() {
                    pairs.push((BodyId { object: a, body: i }, BodyId { object: b, body: j }));
                }
            }
        }
        // Stage 1: proof.
        let mut ws = QueryWorkspace::default();
        let mut decided: Vec<Option<(bool, Reason, f64)>> = pairs
            .iter()
            .map(|&(a, b)| {
                let ba = &bounds[a.object][a.body];
                let bb = &bounds[b.object][b.body];
                match bound_distance(ba, bb) {
                    Some(lb) if lb >= margin => Some((true, Reason::Proven, lb)),
                    Some(_) => None,
                    None => {
                        let d = pair_distance(scenario, a, b, f64::INFINITY, &mut ws)
                            .unwrap_or(f64::INFINITY);
                        Some(if d >= margin {
                            (true, Reason::Proven, d)
                        } else {
                            (false, Reason::Fixed, d)
                        })
                    }
                }
            })
            .collect();
        let open: Vec<usize> = (0..pairs.len()).filter(|&k| decided[k].is_none()).collect();

        // Stage 2a: sampling.
        let keep = settings.refine_starts;
        let fresh = || {
            vec![
                PairSampling {
                    closest: f64::INFINITY,
                    starts: Vec::new(),
                };
                open.len()
            ]
        };
        let chunks = 64usize;
        let per = settings.samples.div_ceil(chunks).max(1);
        let sampled: Vec<PairSampling> = if open.is_empty() {
            if let Some(p) = progress {
                p.inc(settings.samples as u64);
            }
            Vec::new()
        } else {
            (0..chunks)
                .into_par_iter()
                .map(|c| {
                    let mut sc = scenario.clone();
                    let mut ws = QueryWorkspace::default();
                    let mut rng =
                        Rng::new(settings.seed ^ (c as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
                    let mut st = fresh();
                    let n = per.min(settings.samples.saturating_sub(c * per));
                    let mut qs: Vec<Vec<f64>> = vec![Vec::new(); sc.objects().len()];
                    for _ in 0..n {
                        for (k, qk) in qs.iter_mut().enumerate() {
                            *qk = random_q(&sc, k, &mut rng);
                            if !qk.is_empty() {
                                sc.set_joint_positions(k, qk).expect("valid sample");
                            }
                        }
                        for (s, &p) in st.iter_mut().zip(&open) {
                            let (a, b) = pairs[p];
                            let lb = sc.body_boxes(a.object)[a.body]
                                .distance_lower_bound(&sc.body_boxes(b.object)[b.body]);
                            let t = s.closest.min(margin);
                            if lb < t {
                                let r = rpq_proximity::tolerance(
                                    &sc.body_poses(a.object)[a.body],
                                    &sc.objects()[a.object].body(a.body).model,
                                    &sc.body_poses(b.object)[b.body],
                                    &sc.objects()[b.object].body(b.body).model,
                                    t,
                                    &mut ws,
                                );
                                if let Some(w) = r.witness {
                                    s.closest = s.closest.min(w.distance);
                                }
                            }
                            if s.closest >= margin
                                && keep > 0
                                && (s.starts.len() < keep || lb < s.starts[keep - 1].0)
                            {
                                push_start(
                                    &mut s.starts,
                                    keep,
                                    (lb, qs[a.object].clone(), qs[b.object].clone()),
                                );
                            }
                        }
                        if let Some(p) = progress {
                            p.inc(1);
                        }
                    }
                    st
                })
                .reduce(fresh, |mut x, y| {
                    for (a, b) in x.iter_mut().zip(y) {
                        a.closest = a.closest.min(b.closest);
                        for s in b.starts {
                            push_start(&mut a.starts, keep, s);
                        }
                    }
                    x
                })
        };

        // Stage 2b: local refinement of the pairs no sample brought within the margin.
        let todo: Vec<usize> = (0..open.len())
            .filter(|&k| sampled[k].closest >= margin)
            .collect();
        if let Some(p) = progress {
            p.inc_length(todo.len() as u64);
        }
        let refined: Vec<(usize, f64)> = todo
            .par_iter()
            .map(|&k| {
                let (a, b) = pairs[open[k]];
                let mut sc = scenario.clone();
                let mut ws = QueryWorkspace::default();
                let mut rng = Rng::new(settings.seed ^ 0x5eed ^ ((open[k] as u64) << 20));
                let mut best = f64::INFINITY;
                for s in &sampled[k].starts {
                    best = best.min(refine(
                        &mut sc, a, b, s, settings, margin, &mut rng, &mut ws,
                    ));
                    if best < margin {
                        break;
                    }
                }
                if let Some(p) = progress {
                    p.inc(1);
                }
                (k, best)
            })
            .collect();
        for (k, s) in sampled.iter().enumerate() {
            if s.closest < margin {
                decided[open[k]] = Some((false, Reason::Sampled, s.closest));
            }
        }
        for (k, best) in refined {
            decided[open[k]] = Some(if best < margin {
                (false, Reason::Refined, best)
            } else {
                (true, Reason::Searched, best)
            });
        }

        let mut never: BTreeSet<[String; 2]> = BTreeSet::new();
        let mut decisions = Vec::with_capacity(pairs.len());
        for (d, &(a, b)) in decided.iter().zip(&pairs) {
            let (is_never, reason, closest) = d.expect("every pair decided");
            // Rounded down to a micrometre (keeps proven bounds valid, and the file short).
            let closest = (closest * 1e6).floor() / 1e6;
            let pair = [scenario.body_name(a), scenario.body_name(b)];
            if is_never {
                never.insert(normalized(&pair[0], &pair[1]));
            }
            decisions.push(PairDecision {
                pair,
                never: is_never,
                reason,
                closest,
            });
        }
        Ok(CollisionMatrixFile {
            generator: Some(settings.clone()),
            objects: objects
                .iter()
                .map(|o| MatrixObject {
                    name: o.name().to_owned(),
                    pose: PoseSpec::from_isometry(&object_pose(o)),
                })
                .collect(),
            never_collide: never.into_iter().collect(),
            decisions,
        })
    }

    /// Number of pairs listed.
    pub fn len(&self) -> usize {
        self.never_collide.len()
    }

    /// True if no pair is listed.
    pub fn is_empty(&self) -> bool {
        self.never_collide.is_empty()
    }

    /// YAML text (with a header comment), one line per pair.
    pub fn to_yaml(&self) -> String {
        let num = |x: &f64| format!("{x:?}");
        let list = |v: &[f64; 3]| v.iter().map(num).collect::<Vec<_>>().join(", ");
        let mut out = String::from(
            "# RPQ collision matrix: body pairs (object/link) that never collide; collision queries\n\
             # skip them. Valid only for the object poses listed (a scene placing them elsewhere is\n\
             # rejected). Edit freely: names are checked when the file is loaded.\n",
        );
        if let Some(g) = &self.generator {
            out += &format!(
                "# generated: pairs proven at least {m} m apart for every configuration, then {} random\n\
                 # configurations and {} local searches of {} distance queries per remaining pair; a pair\n\
                 # is listed when nothing closer than {m} m was found (see `decisions`).\n\
                 generator: {{samples: {}, margin: {m}, seed: {}, refine_starts: {}, refine_evaluations: {}}}\n",
                g.samples,
                g.refine_starts,
                g.refine_evaluations,
                g.samples,
                g.seed,
                g.refine_starts,
                g.refine_evaluations,
                m = num(&g.margin),
            );
        }
        out += "objects:\n";
        for o in &self.objects {
            out += &format!(
                "  - name: {:?}\n    pose: {{xyz: [{}], rpy: [{}]}}\n",
                o.name,
                list(&o.pose.xyz),
                list(&o.pose.rpy)
            );
        }
        if self.never_collide.is_empty() {
            out += "never_collide: []\n";
        } else {
            out += "never_collide:\n";
            for [x, y] in &self.never_collide {
                out += &format!("  - [{x:?}, {y:?}]\n");
            }
        }
        if !self.decisions.is_empty() {
            out += "# how the generator decided each pair (informational; never_collide decides what is\n\
                    # skipped). reason: proven (closest = lower bound over all configurations), searched\n\
                    # (never, closest = smallest distance found), fixed (two fixed bodies), sampled / refined\n\
                    # (may collide: a random sample / the local search came within the margin).\n\
                    decisions:\n";
            for d in &self.decisions {
                let closest = if d.closest.is_finite() {
                    format!("{:?}", d.closest)
                } else {
                    ".inf".to_owned()
                };
                out += &format!(
                    "  - {{pair: [{:?}, {:?}], never: {}, reason: {}, closest: {closest}}}\n",
                    d.pair[0],
                    d.pair[1],
                    d.never,
                    match d.reason {
                        Reason::Proven => "proven",
                        Reason::Searched => "searched",
                        Reason::Fixed => "fixed",
                        Reason::Sampled => "sampled",
                        Reason::Refined => "refined",
                    }
                );
            }
        }
        out
    }

    /// Parses the YAML text; `path` is only used in error messages.
    pub fn from_yaml(text: &str, path: &Path) -> Result<CollisionMatrix, SceneError> {
        serde_yaml::from_str(text).map_err(|e| crate::spec::yaml_error(path, e))
    }

    /// Writes the YAML file.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<(), SceneError> {
        std::fs::write(path.as_ref(), self.to_yaml()).map_err(|source| SceneError::Io {
            path: path.as_ref().to_owned(),
            source,
        })
    }

    /// Reads a YAML file.
    pub fn load(path: impl AsRef<Path>) -> Result<CollisionMatrix, SceneError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| SceneError::Io {
            path: path.to_owned(),
            source,
        })?;
        Self::from_yaml(&text, path)
    }

    /// Checks names and poses against `scenario` and returns the skip flags per object
    /// pair (row-major, `a < b`).
    pub(crate) fn resolve(&self, scenario: &Scenario) -> Result<Vec<Vec<bool>>, SceneError> {
        let err = |message: String| SceneError::CollisionMatrix { message };
        let objects = scenario.objects();
        for mo in &self.objects {
            let k = scenario
                .object_index(&mo.name)
                .map_err(|_| err(format!("unknown object `{}`", mo.name)))?;
            let want = mo.pose.to_isometry()?;
            let have = object_pose(&objects[k]);
            let dp = (want.translation.vector - have.translation.vector).norm();
            let dr = want.rotation.angle_to(&have.rotation);
            if dp > 1e-9 || dr > 1e-9 {
                return Err(err(format!(
                    "computed for `{}` at {:?}, the scene places it elsewhere ({dp:.3e} m, {dr:.3e} rad off); regenerate it",
                    mo.name, mo.pose
                )));
            }
        }
        for o in objects {
            if !self.objects.iter().any(|m| m.name == o.name()) {
                return Err(err(format!(
                    "object `{}` of the scene is not in the matrix; regenerate it",
                    o.name()
                )));
            }
        }
        let n = objects.len();
        let mut skip: Vec<Vec<bool>> = Vec::new();
        for a in 0..n {
            for b in a + 1..n {
                skip.push(vec![
                    false;
                    objects[a].num_bodies() * objects[b].num_bodies()
                ]);
            }
        }
        let find = |full: &str| -> Result<BodyId, SceneError> {
            let (o, l) = full
                .split_once('/')
                .ok_or_else(|| err(format!("`{full}` is not an object/body name")))?;
            let k = scenario
                .object_index(o)
                .map_err(|_| err(format!("unknown object `{o}` in `{full}`")))?;
            let obj = &objects[k];
            let i = (0..obj.num_bodies())
                .find(|&i| obj.body(i).name == l)
                .ok_or_else(|| err(format!("unknown link `{l}` of `{o}` in `{full}`")))?;
            Ok(BodyId { object: k, body: i })
        };
        for [x, y] in &self.never_collide {
            let (a, b) = (find(x)?, find(y)?);
            if a.object == b.object {
                return Err(err(format!(
                    "`{x}` and `{y}` belong to the same object; only pairs of different objects are queried"
                )));
            }
            let (a, b) = if a.object < b.object { (a, b) } else { (b, a) };
            let slot = a.object * n - a.object * (a.object + 1) / 2 + (b.object - a.object - 1);
            let nb = objects[b.object].num_bodies();
            skip[slot][a.body * nb + b.body] = true;
        }
        Ok(skip)
    }
}

fn object_pose(o: &Object) -> nalgebra::Isometry3<f64> {
    match o {
        Object::Simple(s) => s.pose,
        Object::Complex(r) => *r.base(),
    }
}
