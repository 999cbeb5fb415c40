//! Issue 16 item 2: pose design and acquisition guidance that reach κ < 100 (eq. 13).
//! The full 10-seed table is `glove_calib sweep` (docs/hand_teleop.md); here one held-out
//! seed each, fast.

use rpq_hand::calib::{calibrate, design};
use rpq_hand::sim::{perturb, simulate, Planner, SimOptions};
use rpq_hand::{CalibOptions, HandModel, Sample};

fn worst_cond(data: &[Sample]) -> (f64, rpq_hand::CalibrationReport) {
    let (_, r) = calibrate(
        &HandModel::nominal(),
        data,
        &CalibOptions::default(),
        |_| {},
    )
    .unwrap();
    let c = r
        .fingers
        .iter()
        .map(|f| f.full_condition_number)
        .fold(0.0, f64::max);
    (c, r)
}

#[test]
fn cond_optimal_design_is_below_100_where_latin_hypercube_is_not() {
    let nominal = HandModel::nominal();
    let truth = perturb(&nominal, 1.0, 77);
    let lhs = simulate(
        &truth,
        &SimOptions {
            seed: 505,
            ..Default::default()
        },
    );
    let designed = simulate(
        &truth,
        &SimOptions {
            seed: 505,
            design: Some((nominal.clone(), 5)),
            planner: Planner::CondOptimal,
            ..Default::default()
        },
    );
    let (c_lhs, _) = worst_cond(&lhs);
    let (c_opt, _) = worst_cond(&designed);
    assert!(c_opt < 100.0, "cond-optimal design: {c_opt}");
    assert!(c_opt < c_lhs, "lhs {c_lhs} vs designed {c_opt}");
}

/// A session whose condition number is above 100: the warning names the sensors of the
/// weak combination and target readings; recording the advised poses (simulated on the true
/// hand) lowers κ of the recalibrated model.
#[test]
fn advised_poses_lower_the_condition_number() {
    let nominal = HandModel::nominal();
    let truth = perturb(&nominal, 1.0, 104);
    let mut data = simulate(
        &truth,
        &SimOptions {
            seed: 3104,
            ..Default::default()
        },
    );
    let (before, report) = worst_cond(&data);
    assert!(before > 100.0, "seed chosen for a κ above 100: {before}");
    let model = calibrate(&nominal, &data, &CalibOptions::default(), |_| {})
        .unwrap()
        .0;
    let mut rng = rpq_hand::sim::generator(9);
    for fr in report
        .fingers
        .iter()
        .filter(|f| f.full_condition_number > 100.0)
    {
        let w = fr.warnings.join(" ");
        assert!(
            w.contains("involves sensor(s) s") && w.contains("record these") && w.contains("end,"),
            "{:?}: {w}",
            fr.finger
        );
        let f = fr.finger;
        let rows: Vec<Sample> = data.iter().filter(|s| s.finger == f).copied().collect();
        let advice = design::advise(
            model.finger(f),
            f,
            &rows,
            &CalibOptions::default(),
            design::ADVICE_POSES,
        );
        assert!(advice.cond_after < advice.cond_before);
        // the user records them: readings to whole counts, tips with 1 mm noise
        for (k, s) in advice.poses.iter().enumerate() {
            let tip = truth.finger(f).tip(f, s);
            let noise = nalgebra::Vector3::new(rng.normal(), rng.normal(), rng.normal()) * 1e-3;
            data.push(Sample {
                pose: 10_000 + k,
                finger: f,
                readings: s.map(|v| v.round()),
                tip: tip + noise,
            });
        }
    }
    let (after, _) = worst_cond(&data);
    assert!(after < 0.9 * before, "before {before}, after {after}");
}
