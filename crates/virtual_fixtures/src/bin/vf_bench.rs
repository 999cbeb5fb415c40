//! Control-step timing of the virtual-fixture controller (issue target: < 5 µs per step).
//!
//! Each case runs batches of steps on preallocated state and reports the median time per
//! step over the batches. The peer is the textbook evaluation of eqs. 4-8 with heap matrices,
//! `[D] = D (D'D)⁺ D'` through nalgebra's `pseudo_inverse` on a `DMatrix`, measured in the
//! same run on the same inputs.

use std::hint::black_box;
use std::time::Instant;

use clap::Parser;
use nalgebra::{DMatrix, DVector, Isometry3, Point3, Vector3, Vector6};
use rpq_virtual_fixtures::tasks::{paper_sine_task, Operator};
use rpq_virtual_fixtures::{
    AdmittanceController, Compliance, ControllerConfig, Guidance, GuidanceSource, Limits, Mode,
    PlaneSurface, RcmCone, Shaping,
};

#[derive(Parser, Debug)]
#[command(about = "Time the virtual-fixture control step")]
struct Args {
    /// Steps per batch.
    #[arg(long, default_value_t = 2000)]
    batch: usize,
    /// Number of batches (the median is reported).
    #[arg(long, default_value_t = 200)]
    batches: usize,
}

fn median_ns(args: &Args, mut f: impl FnMut(usize)) -> f64 {
    let mut per = Vec::with_capacity(args.batches);
    let mut k = 0usize;
    for _ in 0..args.batches {
        let t = Instant::now();
        for _ in 0..args.batch {
            f(k);
            k += 1;
        }
        per.push(t.elapsed().as_nanos() as f64 / args.batch as f64);
    }
    per.sort_by(f64::total_cmp);
    per[per.len() / 2]
}

fn forces(n: usize) -> Vec<Vector6<f64>> {
    (0..n)
        .map(|i| {
            let a = i as f64 * 0.01;
            Vector6::new(
                a.cos() * 2.0,
                a.sin() * 2.0,
                0.3 * (3.0 * a).sin(),
                0.01,
                -0.02,
                0.05 * a.cos(),
            )
        })
        .collect()
}

/// The peer: eqs. 4-8 with heap matrices and a pseudo-inverse per step.
fn peer_step(cols: &[Vector6<f64>], f: &Vector6<f64>, c: f64, c_tau: f64) -> Vector6<f64> {
    let d = DMatrix::from_fn(6, cols.len(), |i, j| cols[j][i]);
    let dtd = d.transpose() * &d;
    let pinv = dtd.pseudo_inverse(1e-12).expect("pseudo-inverse");
    let span = &d * pinv * d.transpose();
    let fv = DVector::from_column_slice(f.as_slice());
    let fd = &span * &fv;
    let v = (&fd + (&fv - &fd) * c_tau) * c;
    Vector6::from_column_slice(v.as_slice())
}

fn main() {
    let args = Args::parse();
    let fs = forces(4096);
    let dt = 0.001;
    let cfg = |mode| ControllerConfig {
        compliance: Compliance {
            c: 0.0125,
            c_tau: 0.3,
        },
        mode,
        shaping: Shaping {
            force_deadband: 0.05,
            torque_deadband: 0.005,
            force_scale: 1.0,
            torque_scale: 10.0,
        },
        limits: Limits {
            linear_velocity: 0.1,
            angular_velocity: 0.5,
            linear_acceleration: 2.0,
            angular_acceleration: 10.0,
        },
        rank_tolerance: Default::default(),
    };
    let poses: Vec<Isometry3<f64>> = (0..4096)
        .map(|i| {
            let x = 0.14 * (i as f64 / 4096.0);
            Isometry3::translation(
                x,
                0.035 * (std::f64::consts::TAU * x / 0.07).sin() + 0.001,
                0.0,
            )
        })
        .collect();

    println!(
        "virtual-fixture control step, median over {} batches of {} steps",
        args.batches, args.batch
    );
    println!(
        "{:<58} {:>10} {:>10} {:>8}",
        "case", "ours [ns]", "peer [ns]", "ratio"
    );

    // 1. fixture step only, 1-column D (the closed-loop D_g case is also 1 column)
    let g1 = Guidance::from_columns(
        &[Vector6::new(0.6, 0.8, 0.0, 0.0, 0.0, 0.0)],
        Vector6::new(0.0, 0.0, 0.001, 0.0, 0.0, 0.0),
    )
    .unwrap();
    let mut ctl = AdmittanceController::new(cfg(Mode::OpenLoop)).unwrap();
    let ours = median_ns(&args, |k| {
        black_box(ctl.step(black_box(&fs[k % 4096]), &g1, dt).unwrap());
    });
    let peer = median_ns(&args, |k| {
        black_box(peer_step(
            g1.columns(),
            black_box(&fs[k % 4096]),
            0.0125,
            0.3,
        ));
    });
    println!(
        "{:<58} {:>10.1} {:>10.1} {:>8.2}",
        "open loop, D 6x1 (step incl. shaping + limits)",
        ours,
        peer,
        peer / ours
    );

    // 2. 3-column rank-2 D: SVD path
    let cols3 = [
        Vector6::new(1.0, 0.0, 0.0, 0.0, 0.0, 0.0),
        Vector6::new(0.0, 1.0, 0.0, 0.2, 0.0, 0.0),
        Vector6::new(2.0, 1.0, 0.0, 0.2, 0.0, 0.0),
    ];
    let g3 = Guidance::from_columns(&cols3, Vector6::zeros()).unwrap();
    let ours = median_ns(&args, |k| {
        black_box(ctl.step(black_box(&fs[k % 4096]), &g3, dt).unwrap());
    });
    let peer = median_ns(&args, |k| {
        black_box(peer_step(&cols3, black_box(&fs[k % 4096]), 0.0125, 0.3));
    });
    println!(
        "{:<58} {:>10.1} {:>10.1} {:>8.2}",
        "open loop, D 6x3 rank 2 (pivoted QR)",
        ours,
        peer,
        peer / ours
    );

    // 3. closed loop with the plane source (2-column D, SVD) evaluated every step
    let mut plane = PlaneSurface::new(Point3::origin(), Vector3::z(), false).unwrap();
    let mut ctl_c = AdmittanceController::new(cfg(Mode::ClosedLoop { k_d: 0.08 })).unwrap();
    let mut g = Guidance::empty();
    let ours = median_ns(&args, |k| {
        plane.evaluate(&poses[k % 4096], &mut g);
        black_box(ctl_c.step(black_box(&fs[k % 4096]), &g, dt).unwrap());
    });
    println!(
        "{:<58} {:>10.1} {:>10} {:>8}",
        "closed loop k_d=0.08, plane source + step", ours, "-", "-"
    );

    // 4. RCM cone source + closed-loop step
    let mut cone = RcmCone::new(Point3::origin(), Vector3::z(), 0.5, Vector3::z()).unwrap();
    let rots: Vec<Isometry3<f64>> = (0..4096)
        .map(|i| {
            Isometry3::rotation(Vector3::new(0.52 + 0.01 * (i as f64 * 0.1).sin(), 0.0, 0.0))
                * Isometry3::rotation(Vector3::new(0.0, 0.0, i as f64 * 0.01))
        })
        .collect();
    let ours = median_ns(&args, |k| {
        cone.evaluate(&rots[k % 4096], &mut g);
        black_box(ctl_c.step(black_box(&fs[k % 4096]), &g, dt).unwrap());
    });
    println!(
        "{:<58} {:>10.1} {:>10} {:>8}",
        "closed loop k_d=0.08, RCM cone source + step", ours, "-", "-"
    );

    // 5. sine path source (polyline, 2001 points, exhaustive closest point) + closed loop step
    let mut path = paper_sine_task(0.0, Mode::OpenLoop, Operator::Autonomous(1.0)).reference();
    let ours = median_ns(&args, |k| {
        path.evaluate(&poses[k % 4096], &mut g);
        black_box(ctl_c.step(black_box(&fs[k % 4096]), &g, dt).unwrap());
    });
    println!(
        "{:<58} {:>10.1} {:>10} {:>8}",
        "closed loop, sine polyline (2001 pts, box-pruned) + step", ours, "-", "-"
    );
}
