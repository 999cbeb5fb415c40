//! Inverse kinematics of one HIT/DLR finger: exact for every reachable target (every
//! branch, fingertips curled back behind the base included), the closest reachable point for
//! the others (Hu et al. IV-B: "find the closest one to the desired position"), and a
//! tracker that keeps the branch of the previous solution (hysteresis) and bounds the joint
//! step per glove count.
//!
//! # Geometry
//! In the finger base frame the fingertip is `(u cos q0, u sin q0, w)` with
//! `(u, w) = planar(q1, q2)`. The **planar workspace** `W2` (all `(u, w)`, `u` signed) is,
//! in polar coordinates `(ρ, ψ)`, `ρ ∈ [reach(90°), reach(0)]` (the coupled angle follows
//! from `ρ`, [`super::reach`] is monotone) and `ψ ∈ φ(ρ) ± 75°` (`φ` the direction of the
//! tip at flexion 0). Its boundary is the outer arc (`q2 = 0`), the inner arc (`q2 = 90°`)
//! and the two flexion-limit curves (`q1 = ±75°`).
//!
//! A workspace point `(u, w)` in the plane at abduction `q0` is at squared distance
//! `ρ_xy² + u² − 2 u ρ_xy cos(az − q0) + (w − z)²` from the target (azimuth `az`, distance
//! `ρ_xy` from the `z` axis): for `u ≥ 0` the best `q0` is the one nearest to `az`, for
//! `u < 0` the one nearest to `az + π` (the curled-back branch). So the closest point of the
//! 3-D workspace is the better of two planar closest-point problems, at `q0_front` and
//! `q0_back`, each solved exactly: the inside test is analytic, the arcs are analytic, the
//! flexion-limit curves are 1-D minimisations (sampling + golden section). The brute-force
//! tests in `tests/finger_ik_bruteforce.rs` compare both with a search over the joint space.

use nalgebra::Vector3;

use super::{finger_tip, planar, reach, ABD_LIMIT, COUPLED_RANGE, FLEX_LIMIT};

const PI: f64 = std::f64::consts::PI;

/// Result of a finger inverse kinematics.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FingerIk {
    /// `[abd, flex, coupled]` within limits.
    pub q: [f64; 3],
    /// Distance from the reached fingertip to the target (m); 0 inside the workspace.
    pub error: f64,
}

fn wrap(a: f64) -> f64 {
    let mut a = a % std::f64::consts::TAU;
    if a > PI {
        a -= std::f64::consts::TAU;
    } else if a <= -PI {
        a += std::f64::consts::TAU;
    }
    a
}

/// Direction of the planar fingertip at flexion 0 for coupled angle `q2`.
fn phi(q2: f64) -> f64 {
    let (u, w) = planar(0.0, q2);
    w.atan2(u)
}

/// The coupled angle whose reach is `r` (clamped to the reachable annulus).
fn coupled_for_reach(r: f64) -> f64 {
    let (mut lo, mut hi) = (COUPLED_RANGE[0], COUPLED_RANGE[1]);
    for _ in 0..48 {
        let mid = 0.5 * (lo + hi);
        if reach(mid) > r {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// A planar candidate: `(q1, q2)` and its squared distance to the planar target.
type Planar = ([f64; 2], f64);

fn dist2(q1: f64, q2: f64, p: (f64, f64)) -> f64 {
    let (u, w) = planar(q1, q2);
    (u - p.0).powi(2) + (w - p.1).powi(2)
}

/// Closest point of a flexion-limit curve `q1 = flex` (`q2 ∈ [0, 90°]`) to `p`: the best of
/// 16 samples, refined by golden section between its neighbours.
fn limit_curve(flex: f64, p: (f64, f64)) -> Planar {
    const N: usize = 16;
    let [lo, hi] = COUPLED_RANGE;
    let at = |i: usize| lo + (hi - lo) * i as f64 / N as f64;
    let (mut best, mut bi) = (f64::INFINITY, 0);
    for i in 0..=N {
        let d = dist2(flex, at(i), p);
        if d < best {
            best = d;
            bi = i;
        }
    }
    let (mut a, mut b) = (at(bi.saturating_sub(1)), at((bi + 1).min(N)));
    let g = 0.5 * (5f64.sqrt() - 1.0);
    let mut c = b - g * (b - a);
    let mut d = a + g * (b - a);
    let (mut fc, mut fd) = (dist2(flex, c, p), dist2(flex, d, p));
    for _ in 0..32 {
        if fc < fd {
            b = d;
            d = c;
            fd = fc;
            c = b - g * (b - a);
            fc = dist2(flex, c, p);
        } else {
            a = c;
            c = d;
            fc = fd;
            d = a + g * (b - a);
            fd = dist2(flex, d, p);
        }
    }
    let q2 = 0.5 * (a + b);
    let d2 = dist2(flex, q2, p);
    if d2 <= best {
        ([flex, q2], d2)
    } else {
        ([flex, at(bi)], best)
    }
}

/// Every local candidate of the planar problem for target `p`: the exact solution when `p`
/// is inside `W2`, else the closest point of each boundary piece (outer arc, inner arc, the
/// two flexion-limit curves).
fn planar_candidates(p: (f64, f64), out: &mut Vec<Planar>) {
    let rho = p.0.hypot(p.1);
    let psi = p.1.atan2(p.0);
    let (rmin, rmax) = (reach(COUPLED_RANGE[1]), reach(COUPLED_RANGE[0]));
    if (rmin..=rmax).contains(&rho) {
        let q2 = coupled_for_reach(rho);
        let q1 = wrap(psi - phi(q2));
        if q1.abs() <= FLEX_LIMIT {
            out.push(([q1, q2], dist2(q1, q2, p)));
            return;
        }
    }
    for q2 in [COUPLED_RANGE[0], COUPLED_RANGE[1]] {
        let q1 = wrap(psi - phi(q2)).clamp(-FLEX_LIMIT, FLEX_LIMIT);
        out.push(([q1, q2], dist2(q1, q2, p)));
    }
    for flex in [-FLEX_LIMIT, FLEX_LIMIT] {
        out.push(limit_curve(flex, p));
    }
}

/// Every candidate solution for `target` (finger base frame): per branch (front `u ≥ 0` at
/// the abduction nearest the target's azimuth, curled back `u < 0` at the abduction nearest
/// the opposite azimuth) the exact solution or the closest point of each boundary piece.
/// The best candidate is [`finger_ik`]'s answer; the others are the local alternatives
/// [`FingerIkTracker`] may stay on.
pub fn finger_ik_candidates(target: &Vector3<f64>, out: &mut Vec<FingerIk>) {
    out.clear();
    let rxy = target.x.hypot(target.y);
    let az = if rxy > 1e-12 {
        target.y.atan2(target.x)
    } else {
        0.0
    };
    let mut planar_out = Vec::with_capacity(5);
    for q0 in [
        az.clamp(-ABD_LIMIT, ABD_LIMIT),
        wrap(az + PI).clamp(-ABD_LIMIT, ABD_LIMIT),
    ] {
        let d = az - q0;
        let (u, perp) = (rxy * d.cos(), rxy * d.sin());
        planar_out.clear();
        planar_candidates((u, target.z), &mut planar_out);
        for &([q1, q2], d2) in &planar_out {
            out.push(FingerIk {
                q: [q0, q1, q2],
                error: (d2 + perp * perp).sqrt(),
            });
        }
    }
}

/// Inverse kinematics of one finger for a target in its base frame, with the 1:1 coupling
/// and the joint limits: the exact solution when the target is reachable (any branch,
/// curled-back fingertips behind the base included), else the joints of the closest
/// reachable point. Stateless; see [`FingerIkTracker`] for a continuous input.
pub fn finger_ik(target: &Vector3<f64>) -> FingerIk {
    let mut c = Vec::with_capacity(10);
    finger_ik_candidates(target, &mut c);
    best_of(&c)
}

fn best_of(c: &[FingerIk]) -> FingerIk {
    c.iter()
        .copied()
        .min_by(|a, b| a.error.total_cmp(&b.error))
        .unwrap_or(FingerIk {
            q: [0.0; 3],
            error: f64::INFINITY,
        })
}

/// Inverse kinematics for a stream of targets (one finger): stays on the candidate nearest
/// the previous joints while it is at most `hysteresis` farther from the target than the best
/// one (so a target passing the medial axis of the unreachable region does not flip the
/// finger between branches), and moves every joint by at most `max_step_per_count` times the
/// largest change of the finger's glove readings (at least one count) per update.
#[derive(Clone, Debug)]
pub struct FingerIkTracker {
    /// Extra distance (m) the previous branch may have before the tracker leaves it.
    pub hysteresis: f64,
    /// Largest joint change (rad) per glove count of change.
    pub max_step_per_count: f64,
    prev: Option<[f64; 3]>,
    prev_readings: Option<[f64; 4]>,
    scratch: Vec<FingerIk>,
}

impl Default for FingerIkTracker {
    fn default() -> Self {
        FingerIkTracker {
            hysteresis: 3e-3,
            max_step_per_count: 2f64.to_radians(),
            prev: None,
            prev_readings: None,
            scratch: Vec::with_capacity(10),
        }
    }
}

impl FingerIkTracker {
    /// Forgets the previous solution (the next target is solved like [`finger_ik`]).
    pub fn reset(&mut self) {
        self.prev = None;
        self.prev_readings = None;
    }

    /// The joints for `target`, whose finger readings are `readings` (counts).
    pub fn solve(&mut self, target: &Vector3<f64>, readings: &[f64; 4]) -> FingerIk {
        finger_ik_candidates(target, &mut self.scratch);
        let best = best_of(&self.scratch);
        let Some(prev) = self.prev else {
            self.prev = Some(best.q);
            self.prev_readings = Some(*readings);
            return best;
        };
        let jdist = |q: &[f64; 3]| (0..3).map(|k| (q[k] - prev[k]).abs()).fold(0.0, f64::max);
        let chosen = self
            .scratch
            .iter()
            .filter(|c| c.error <= best.error + self.hysteresis)
            .min_by(|a, b| jdist(&a.q).total_cmp(&jdist(&b.q)))
            .copied()
            .unwrap_or(best);
        let counts = self.prev_readings.map_or(1.0, |p| {
            (0..4)
                .map(|k| (readings[k] - p[k]).abs())
                .fold(1.0, f64::max)
        });
        let limit = self.max_step_per_count * counts;
        let mut q = chosen.q;
        for k in 0..3 {
            q[k] = prev[k] + (q[k] - prev[k]).clamp(-limit, limit);
        }
        self.prev = Some(q);
        self.prev_readings = Some(*readings);
        FingerIk {
            q,
            error: (target - finger_tip(&q)).norm(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The issue's example: a curled-back fingertip behind the base is reached exactly.
    #[test]
    fn curled_back_target_of_the_issue_is_reached() {
        let ik = finger_ik(&Vector3::new(-0.0365, -0.0117, 0.0730));
        assert!(ik.error < 1e-9, "{ik:?}");
        assert!((ik.q[0].to_degrees() - 17.8).abs() < 0.5, "{ik:?}");
    }

    #[test]
    fn every_sampled_configuration_is_recovered() {
        let mut rng = crate::sim::generator(12);
        for _ in 0..5000 {
            let q = [
                rng.range(-ABD_LIMIT, ABD_LIMIT),
                rng.range(-FLEX_LIMIT, FLEX_LIMIT),
                rng.range(0.0, COUPLED_RANGE[1]),
            ];
            let t = finger_tip(&q);
            let ik = finger_ik(&t);
            assert!(ik.error < 1e-9, "{q:?} -> {ik:?}");
            assert!((finger_tip(&ik.q) - t).norm() < 1e-9);
        }
    }
}
