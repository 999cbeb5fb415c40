//! `hand_bench`: calibration time for 5 × 60 poses (target < 100 ms) and mapping time per
//! glove sample (target < 50 µs), with the forward-kinematics-only cost as the in-run
//! reference the mapping is compared against.

use std::time::Instant;

use rpq_hand::mapping::{HandMapper, MappingMode};
use rpq_hand::sim::{perturb, simulate, SimOptions};
use rpq_hand::{calibrate, CalibOptions, Finger, HandModel};

fn main() {
    let nominal = HandModel::nominal();
    let truth = perturb(&nominal, 1.0, 42);
    let train = simulate(
        &truth,
        &SimOptions {
            poses: 60,
            seed: 1,
            ..Default::default()
        },
    );
    // calibration: median of 20 runs
    let mut times = Vec::new();
    for _ in 0..20 {
        let t = Instant::now();
        let (m, _) =
            calibrate(&nominal, &train, &CalibOptions::default(), |_| {}).expect("calibration");
        times.push(t.elapsed().as_secs_f64());
        std::hint::black_box(m);
    }
    times.sort_by(f64::total_cmp);
    let cal = times[times.len() / 2];
    println!(
        "calibration 5 x 60 poses: median {:.2} ms over 20 runs (target < 100 ms): {}",
        cal * 1e3,
        if cal < 0.1 { "OK" } else { "MISSED" }
    );
    // mapping
    let (model, _) =
        calibrate(&nominal, &train, &CalibOptions::default(), |_| {}).expect("calibration");
    let samples: Vec<[f64; 20]> = (0..200)
        .map(|p| {
            let mut raw = [0.0; 20];
            for s in train.iter().filter(|s| s.pose == p % 60) {
                let i = s.finger.index();
                raw[4 * i..4 * i + 4].copy_from_slice(&s.readings);
            }
            raw
        })
        .collect();
    let n = 20_000;
    // reference: forward kinematics of the five human fingers only
    let t = Instant::now();
    let mut acc = 0.0;
    for i in 0..n {
        let raw = &samples[i % samples.len()];
        for f in Finger::ALL {
            let k = 4 * f.index();
            acc += model
                .finger(f)
                .tip(f, &[raw[k], raw[k + 1], raw[k + 2], raw[k + 3]])
                .x;
        }
    }
    let fk = t.elapsed().as_secs_f64() / n as f64;
    std::hint::black_box(acc);
    for mode in [MappingMode::JointSpace, MappingMode::Fingertip] {
        let mut mapper = HandMapper::new(model.clone());
        mapper.mode = mode;
        let t = Instant::now();
        let mut acc = 0.0;
        for i in 0..n {
            acc += mapper
                .map(&samples[i % samples.len()])
                .expect("finite readings")
                .robot[5];
        }
        let per = t.elapsed().as_secs_f64() / n as f64;
        std::hint::black_box(acc);
        println!(
            "mapping {mode:?}: {:.2} µs per glove sample (target < 50 µs): {} — {:.1}x the human FK alone ({:.2} µs)",
            per * 1e6,
            if per < 50e-6 { "OK" } else { "MISSED" },
            per / fk,
            fk * 1e6
        );
    }
}
