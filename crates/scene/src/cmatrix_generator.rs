//! The collision-matrix generator: decides for every pair of bodies of different objects of
//! a scenario whether it can ever collide, and writes a [`CollisionMatrix`].
//!
//! [`generate_collision_matrix`] decides every pair of bodies of different objects in
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
//! A search too small to give evidence is refused before anything is computed
//! ([`GeneratorSettings::validate`]): fewer than [`crate::cmatrix::MIN_SAMPLES`] samples,
//! fewer than [`crate::cmatrix::MIN_REFINE_STARTS`] local searches per open pair or fewer
//! than [`crate::cmatrix::MIN_REFINE_EVALUATIONS`] distance queries per search. Settings
//! at these minimums still only *search*: they list more pairs than the defaults, and a
//! searched pair is not a guarantee.

use std::collections::BTreeSet;

use nalgebra::Point3;
use rayon::prelude::*;
use rpq_base::rng::SplitMix64;
use rpq_kinematics::JointKind;
use rpq_proximity::{DistanceRequest, Obb, QueryWorkspace};

use crate::cmatrix::{CollisionMatrix, GeneratorSettings, MatrixObject, PairDecision, Reason};
use crate::error::SceneError;
use crate::object::Object;
use crate::pose::PoseSpec;
use crate::scenario::{BodyId, Scenario};

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
fn random_q(sc: &Scenario, k: usize, rng: &mut SplitMix64) -> Vec<f64> {
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
    rng: &mut SplitMix64,
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

/// Where [`generate_collision_matrix`] reports how far it got (a progress bar in the tools;
/// the library itself draws nothing). Called from several threads.
pub trait Progress: Sync {
    /// `n` more units done.
    fn inc(&self, n: u64);
    /// The total grew by `n` units.
    fn inc_length(&self, n: u64);
}

/// Decides every body pair of different objects: proof by configuration-independent
/// bounds, then sampling and local refinement; lists the pairs never closer than
/// `settings.margin` (module documentation). Runs on the rayon pool; the progress bar
/// counts samples, then refined pairs.
pub fn generate_collision_matrix(
    scenario: &Scenario,
    settings: &GeneratorSettings,
    progress: Option<&dyn Progress>,
) -> Result<CollisionMatrix, SceneError> {
    settings.validate()?;
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
                    SplitMix64::new(settings.seed ^ (c as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
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
            let mut rng = SplitMix64::new(settings.seed ^ 0x5eed ^ ((open[k] as u64) << 20));
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
    Ok(CollisionMatrix {
        generator: Some(settings.clone()),
        objects: objects
            .iter()
            .map(|o| MatrixObject {
                name: o.name().to_owned(),
                pose: PoseSpec::from_isometry(&o.pose()),
            })
            .collect(),
        never_collide: never.into_iter().collect(),
        decisions,
    })
}
