//! Issue 16 item 4: the HIT/DLR finger IK against a brute-force search over the joint space.
//! Reachable targets (curled-back fingertips behind the base included) are reached exactly;
//! for targets outside the workspace the answer is the closest reachable point (never farther
//! than the brute-force search, refined, finds). Through the whole `HandMapper`, every
//! reachable scaled human fingertip is reached; a non-finite reading is an error; along slow
//! sensor sweeps of a hand far from nominal (gains ×1.3, offsets +15°) no joint moves more
//! than the tracker's bound per glove count and no finger flips between branches.
//!
//! `RPQ_IK_CASES` scales the number of random targets (default 1500).

use nalgebra::Vector3;
use rpq_hand::mapping::{HandMapper, MappingMode};
use rpq_hand::robot::{
    finger_ik, finger_limits, finger_tip, HitDlrHand, RobotFinger, ABD_LIMIT, COUPLED_RANGE,
    FLEX_LIMIT,
};
use rpq_hand::sim::{deviate, generator, perturb, Deviation};
use rpq_hand::{Finger, HandModel};

fn cases() -> usize {
    std::env::var("RPQ_IK_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1500)
}

/// The brute force: fingertips on a grid over the joint box, then projected gradient descent
/// from the best few grid points.
struct Brute {
    q: Vec<[f64; 3]>,
    tips: Vec<Vector3<f64>>,
}

impl Brute {
    fn new() -> Self {
        let (n0, n1, n2) = (21, 61, 37);
        let lim = finger_limits();
        let mut q = Vec::new();
        for i in 0..n0 {
            for j in 0..n1 {
                for k in 0..n2 {
                    let at = |l: (f64, f64), i: usize, n: usize| {
                        l.0 + (l.1 - l.0) * i as f64 / (n - 1) as f64
                    };
                    q.push([at(lim[0], i, n0), at(lim[1], j, n1), at(lim[2], k, n2)]);
                }
            }
        }
        let tips = q.iter().map(finger_tip).collect();
        Brute { q, tips }
    }

    /// Smallest distance from `t` to the workspace found by the search.
    fn closest(&self, t: &Vector3<f64>) -> f64 {
        let mut idx: Vec<(f64, usize)> = self
            .tips
            .iter()
            .enumerate()
            .map(|(i, p)| ((p - t).norm_squared(), i))
            .collect();
        idx.select_nth_unstable_by(4, |a, b| a.0.total_cmp(&b.0));
        let lim = finger_limits();
        let mut best = f64::INFINITY;
        for &(_, i) in &idx[..5] {
            let mut q = self.q[i];
            let mut step = 0.02;
            let f = |q: &[f64; 3]| (finger_tip(q) - t).norm_squared();
            let mut fq = f(&q);
            for _ in 0..3000 {
                let j = rpq_hand::robot::finger_jacobian(&q);
                let g = j.transpose() * (finger_tip(&q) - t) * 2.0;
                let mut cand = q;
                for k in 0..3 {
                    cand[k] = (q[k] - step * g[k] / g.norm().max(1e-300)).clamp(lim[k].0, lim[k].1);
                }
                let fc = f(&cand);
                if fc < fq {
                    q = cand;
                    fq = fc;
                    step *= 1.2;
                } else {
                    step *= 0.5;
                    if step < 1e-12 {
                        break;
                    }
                }
            }
            best = best.min(fq.sqrt());
        }
        best
    }
}

fn within_limits(q: &[f64; 3]) -> bool {
    q.iter()
        .zip(finger_limits())
        .all(|(v, (lo, hi))| *v >= lo - 1e-12 && *v <= hi + 1e-12)
}

#[test]
fn reachable_targets_are_reached_exactly_including_curled_back_tips() {
    let mut rng = generator(31);
    let mut behind = 0;
    for _ in 0..cases() * 4 {
        let q = [
            rng.range(-ABD_LIMIT, ABD_LIMIT),
            rng.range(-FLEX_LIMIT, FLEX_LIMIT),
            rng.range(COUPLED_RANGE[0], COUPLED_RANGE[1]),
        ];
        let t = finger_tip(&q);
        behind += usize::from(t.x <= 0.0);
        let ik = finger_ik(&t);
        assert!(ik.error < 1e-9 && within_limits(&ik.q), "{q:?}: {ik:?}");
    }
    assert!(
        behind > 100,
        "the sample must hold curled-back tips ({behind})"
    );
}

#[test]
fn outside_targets_get_the_closest_reachable_point() {
    let brute = Brute::new();
    let mut rng = generator(32);
    let mut outside = 0;
    let mut worse = 0.0f64;
    for _ in 0..cases() / 3 {
        let t = Vector3::new(
            rng.range(-0.15, 0.2),
            rng.range(-0.15, 0.15),
            rng.range(-0.15, 0.17),
        );
        let ik = finger_ik(&t);
        assert!(within_limits(&ik.q));
        assert!(((finger_tip(&ik.q) - t).norm() - ik.error).abs() < 1e-12);
        let b = brute.closest(&t);
        outside += usize::from(b > 1e-4);
        worse = worse.max(ik.error - b);
        assert!(
            ik.error <= b + 1e-7,
            "target {t:?}: ours {:.6} mm, brute force {:.6} mm",
            ik.error * 1e3,
            b * 1e3
        );
    }
    assert!(outside > cases() / 6, "mostly outside targets ({outside})");
    eprintln!("largest excess over brute force: {:.3e} m", worse);
}

/// Scaled human fingertips through the full mapping (fresh state per sample: the stateless
/// answer): reachable ones are reached, the others land no farther than the brute force.
#[test]
fn full_mapping_reaches_every_reachable_target() {
    let brute = Brute::new();
    let human = perturb(&HandModel::nominal(), 1.0, 5);
    let mut mapper = HandMapper::new(human.clone());
    mapper.mode = MappingMode::Fingertip;
    let mut rng = generator(33);
    let (mut reachable, mut n) = (0, 0);
    for _ in 0..cases() / 5 {
        let mut raw = [0.0; 20];
        for f in Finger::ALL {
            for k in 0..4 {
                let [lo, hi] = human.finger(f).sensor_range[k];
                raw[4 * f.index() + k] = rng.range(lo, hi);
            }
        }
        mapper.reset();
        let out = mapper.map(&raw).unwrap();
        for (i, rf) in RobotFinger::ALL.iter().enumerate() {
            let k = rf.first_joint();
            let q = [out.robot[k], out.robot[k + 1], out.robot[k + 2]];
            // the target in the finger base frame
            let tip = HitDlrHand::fingertips(&out.robot)[i];
            let base = HitDlrHand::finger_base(*rf, out.robot[0]);
            let local = base.inverse_transform_point(&tip.into()).coords;
            assert!((local - finger_tip(&q)).norm() < 1e-9);
            let b = brute.closest(&out.targets[i]);
            let err = out.tip_error[i];
            assert!((finger_tip(&q) - out.targets[i]).norm() - err < 1e-12);
            if b < 1e-6 {
                reachable += 1;
                assert!(err < 1e-9, "{rf:?}: reachable target missed by {err}");
            } else {
                assert!(err <= b + 1e-7, "{rf:?}: {err} vs brute force {b}");
            }
            n += 1;
        }
    }
    assert!(reachable > n / 3, "{reachable} of {n}");
}

#[test]
fn non_finite_readings_are_an_error_in_the_library() {
    let mut mapper = HandMapper::new(HandModel::nominal());
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let mut raw = [120.0; 20];
        raw[13] = bad;
        let e = mapper.map(&raw).unwrap_err().to_string();
        assert!(e.contains("ring s1"), "{e}");
    }
}

/// Slow sweeps (one count per update) of every sensor of every finger of the ×1.3/+15° hand,
/// the other sensors at several levels: the joint step per count stays within the bound and
/// no joint jumps from one flexion limit to the other.
#[test]
#[allow(clippy::needless_range_loop)]
fn sweeps_of_a_hand_far_from_nominal_move_the_joints_boundedly() {
    for human in [
        deviate(
            &perturb(&HandModel::nominal(), 1.0, 3),
            &Deviation {
                gain: 1.3,
                offset: 15f64.to_radians(),
                ..Default::default()
            },
        ),
        HandModel::nominal(),
    ] {
        let mut mapper = HandMapper::new(human.clone());
        let bound = mapper.trackers[0].max_step_per_count;
        let mut worst = 0.0f64;
        for level in [40.0, 128.0, 215.0] {
            for f in Finger::ALL {
                for k in 0..4 {
                    let mut raw = [level; 20];
                    mapper.reset();
                    let mut prev: Option<[f64; 13]> = None;
                    for c in 0..=255 {
                        raw[4 * f.index() + k] = c as f64;
                        let out = mapper.map(&raw).unwrap();
                        if let Some(p) = prev {
                            for j in 0..13 {
                                let step = (out.robot[j] - p[j]).abs();
                                worst = worst.max(step);
                                assert!(
                                    step <= bound + 1e-9,
                                    "{f:?} s{k} at {c} (others {level}): joint {j} moved {:.2}°",
                                    step.to_degrees()
                                );
                            }
                        }
                        prev = Some(out.robot);
                    }
                }
            }
        }
        eprintln!("largest joint step per count: {:.2}°", worst.to_degrees());
    }
}
