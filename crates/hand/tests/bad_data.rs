//! Issue 16 item 3: bad calibration data gives a clear error naming the problem (or, for an
//! outlier, a warning naming the row and a result that ignores it), never a silently wrong
//! model. Each case is one a new user met: millimetres instead of metres, a finger's rows
//! missing, one pose repeated with its tip moved 5 cm, all poses identical, readings far
//! outside the glove's range, too few poses.

use rpq_hand::calib::{calibrate, errors};
use rpq_hand::sim::{perturb, simulate, SimOptions};
use rpq_hand::{CalibOptions, Finger, HandModel, Sample};

fn session(poses: usize, seed: u64) -> (HandModel, Vec<Sample>) {
    let truth = perturb(&HandModel::nominal(), 1.0, 21);
    let data = simulate(
        &truth,
        &SimOptions {
            poses,
            seed,
            ..Default::default()
        },
    );
    (truth, data)
}

/// The calibration's error (from `calibrate` or from the report's checks), as text.
fn failure(data: &[Sample], opts: &CalibOptions) -> String {
    match calibrate(&HandModel::nominal(), data, opts, |_| {}).and_then(|(_, r)| r.ensure_passed())
    {
        Ok(()) => panic!("accepted"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn millimetres_are_refused_as_units() {
    let (_, mut data) = session(30, 1);
    data.iter_mut().for_each(|s| s.tip *= 1000.0);
    let e = failure(&data, &CalibOptions::default());
    assert!(e.contains("millimetres") && e.contains("metres"), "{e}");
}

#[test]
fn a_missing_finger_is_an_error_unless_the_fingers_are_named() {
    let (truth, data) = session(30, 2);
    let without: Vec<Sample> = data
        .iter()
        .filter(|s| s.finger != Finger::Little)
        .copied()
        .collect();
    let e = failure(&without, &CalibOptions::default());
    assert!(e.contains("little") && e.contains("--fingers"), "{e}");
    let opts = CalibOptions {
        fingers: Some(vec![
            Finger::Thumb,
            Finger::Index,
            Finger::Middle,
            Finger::Ring,
        ]),
        ..Default::default()
    };
    let (m, r) = calibrate(&HandModel::nominal(), &without, &opts, |_| {}).unwrap();
    r.ensure_passed().unwrap();
    assert_eq!(r.fingers.len(), 4);
    assert_eq!(
        m.little,
        HandModel::nominal().little,
        "little keeps its initial model"
    );
    let _ = truth;
    // a named finger without rows
    let opts = CalibOptions {
        fingers: Some(vec![Finger::Little]),
        ..Default::default()
    };
    assert!(failure(&without, &opts).contains("little"));
}

#[test]
fn an_outlier_row_is_named_and_left_out() {
    let (truth, mut data) = session(60, 3);
    // pose 17 of the index repeated with its fingertip moved 5 cm
    let i = data
        .iter()
        .position(|s| s.finger == Finger::Index && s.pose == 17)
        .unwrap();
    let mut bad = data[i];
    bad.tip.x += 0.05;
    data.push(bad);
    let row = data.len(); // 1-based data row of the outlier
    let (m, r) = calibrate(
        &HandModel::nominal(),
        &data,
        &CalibOptions::default(),
        |_| {},
    )
    .unwrap();
    r.ensure_passed().unwrap();
    let index = r
        .fingers
        .iter()
        .find(|f| f.finger == Finger::Index)
        .unwrap();
    assert_eq!(index.outliers.len(), 1, "{:?}", index.outliers);
    assert_eq!(index.outliers[0].row + 1, row);
    assert!(
        r.summary().contains(&format!("data row {row} (pose 17")),
        "{}",
        r.summary()
    );
    // the fit ignored it: the calibrated index is as good as without the outlier
    let val = simulate(
        &truth,
        &SimOptions {
            poses: 100,
            first_pose: 1000,
            vision_noise: 0.0,
            sensor_noise: 0.0,
            quantize: false,
            seed: 99,
            ..Default::default()
        },
    );
    let max = errors(&m, &val).into_iter().fold(0.0, f64::max);
    assert!(max < 5e-3, "validation max {max}");
}

#[test]
fn identical_poses_are_refused() {
    let (_, data) = session(60, 4);
    let one: Vec<Sample> = data
        .iter()
        .map(|s| {
            let first = data.iter().find(|t| t.finger == s.finger).unwrap();
            Sample {
                pose: s.pose,
                ..*first
            }
        })
        .collect();
    let e = failure(&one, &CalibOptions::default());
    assert!(e.contains("distinct"), "{e}");
}

#[test]
fn readings_outside_the_glove_range_are_refused_naming_the_rows() {
    for bad in [1e6, -500.0] {
        let (_, mut data) = session(30, 5);
        data[7].readings[2] = bad;
        let e = failure(&data, &CalibOptions::default());
        assert!(e.contains("data row 8") && e.contains("0..255"), "{e}");
    }
}

#[test]
fn too_few_poses_are_refused() {
    let (_, data) = session(6, 6);
    let e = failure(&data, &CalibOptions::default());
    assert!(e.contains("thumb: 6 poses, at least 17 needed"), "{e}");
}

/// A few poses that are nearly the same (one held pose re-recorded with 0.5-count jitter):
/// distinct readings, but the full problem's condition number shows they cannot determine
/// the parameters.
#[test]
fn nearly_identical_poses_fail_on_the_full_problems_condition_number() {
    let (truth, data) = session(60, 7);
    let mut rng = rpq_hand::sim::generator(5);
    let jittered: Vec<Sample> = data
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let first = data.iter().find(|t| t.finger == s.finger).unwrap();
            let mut readings = first.readings;
            readings[i % 4] += rng.range(-0.5, 0.5);
            let tip = truth.finger(s.finger).tip(s.finger, &readings);
            Sample {
                readings,
                tip,
                ..*s
            }
        })
        .collect();
    let e = failure(&jittered, &CalibOptions::default());
    assert!(e.contains("condition number of the full problem"), "{e}");
}
