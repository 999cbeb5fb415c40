//! Reproduces the experiments of Marayong et al. (ICRA 2003) with the simulated Steady-Hand
//! robot and user: the rotational RCM-cone task (Figs. 2-5) and the translational sine-path
//! task (Tables I-II). Prints the tables, writes plots (PNG + SVG) and CSV files.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use clap::Parser;
use indicatif::{ProgressBar, ProgressStyle};
use rpq_plot::Figure;
use rpq_virtual_fixtures::tasks::{
    cone_user, paper_cone_task, paper_sine_task, sine_user, ConeRun, Operator, SineRun,
};
use rpq_virtual_fixtures::{Compliance, Mode};

#[derive(Parser, Debug)]
#[command(about = "Reproduce the cone and sine-path experiments of Marayong et al. (2003)")]
struct Args {
    /// Output directory for plots and CSV files.
    #[arg(long, default_value = "target/vf_reproduce")]
    out: PathBuf,
    /// Trials (user seeds) per sine-task setting (the paper: 3 trials).
    #[arg(long, default_value_t = 3)]
    trials: u64,
    /// First user seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Simulated duration of each cone run \[s\].
    #[arg(long, default_value_t = 60.0)]
    cone_duration: f64,
}

const PAPER_OPEN: [(f64, f64, f64, f64, f64); 3] = [
    (0.0, 12.771, 0.344, 1508.7, 211.977),
    (0.3, 12.221, 0.106, 288.090, 66.945),
    (0.6, 14.091, 0.809, 288.840, 43.267),
];
const PAPER_CLOSED: [(f64, f64, f64, f64, f64); 3] = [
    (0.0, 12.023, 0.069, 59.069, 4.320),
    (0.3, 12.056, 0.069, 89.774, 13.668),
    (0.6, 13.035, 1.124, 176.550, 29.669),
];

fn mean_std(x: &[f64]) -> (f64, f64) {
    let n = x.len() as f64;
    let m = x.iter().sum::<f64>() / n;
    let v = if x.len() > 1 {
        x.iter().map(|a| (a - m).powi(2)).sum::<f64>() / (n - 1.0)
    } else {
        0.0
    };
    (m, v.sqrt())
}

fn write_csv(path: &Path, header: &str, rows: impl Iterator<Item = String>) -> std::io::Result<()> {
    let mut w = BufWriter::new(File::create(path)?);
    writeln!(w, "{header}")?;
    for r in rows {
        writeln!(w, "{r}")?;
    }
    Ok(())
}

struct ConeCase {
    name: &'static str,
    label: &'static str,
    run: ConeRun,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    std::fs::create_dir_all(&args.out)?;
    let seeds: Vec<u64> = (0..args.trials).map(|i| args.seed + i).collect();
    let cone_cases = 5u64;
    let sine_runs = 6 * seeds.len() as u64;
    let bar = ProgressBar::new(cone_cases + sine_runs);
    bar.set_style(
        ProgressStyle::with_template("{msg:>24} [{bar:40}] {pos}/{len} {elapsed}")?
            .progress_chars("=> "),
    );

    // ---------------- rotational cone task (sec. IV) ----------------
    let gamma = 30f64.to_radians();
    let start_closed = 40f64.to_radians();
    let dur = args.cone_duration;
    let user = Operator::Cooperative(cone_user(), args.seed);
    let mut cone = Vec::new();
    let specs: [(&str, &str, Mode, Operator, f64, f64); 5] = [
        (
            "fig2_open_autonomous",
            "open loop, autonomous",
            Mode::OpenLoop,
            Operator::Autonomous(1.0),
            gamma,
            0.0,
        ),
        (
            "fig3_open_cooperative",
            "open loop, cooperative, c_tau=0",
            Mode::OpenLoop,
            user,
            gamma,
            0.0,
        ),
        (
            "fig3b_open_cooperative_soft",
            "open loop, cooperative, c_tau=0.1",
            Mode::OpenLoop,
            user,
            gamma,
            0.1,
        ),
        (
            "fig4_closed_autonomous",
            "closed loop k_d=0.5, autonomous",
            Mode::ClosedLoop { k_d: 0.5 },
            Operator::Autonomous(1.0),
            start_closed,
            0.0,
        ),
        (
            "fig5_closed_cooperative",
            "closed loop k_d=0.08, cooperative",
            Mode::ClosedLoop { k_d: 0.08 },
            user,
            start_closed,
            0.0,
        ),
    ];
    for (name, label, mode, op, start, c_tau) in specs {
        bar.set_message(name);
        let mut task = paper_cone_task(mode, op, dur);
        task.compliance = Compliance {
            c: task.compliance.c,
            c_tau,
        };
        let run = task.run(start);
        cone.push(ConeCase { name, label, run });
        bar.inc(1);
    }

    // ---------------- translational sine task (sec. V) ----------------
    let c_taus = [0.0, 0.3, 0.6];
    let mut open: Vec<Vec<SineRun>> = Vec::new();
    let mut closed: Vec<Vec<SineRun>> = Vec::new();
    for (mode, store) in [
        (Mode::OpenLoop, &mut open),
        (Mode::ClosedLoop { k_d: 0.08 }, &mut closed),
    ] {
        for &ct in &c_taus {
            let mut runs = Vec::new();
            for &s in &seeds {
                bar.set_message(format!(
                    "sine c_tau={ct} {}",
                    if matches!(mode, Mode::OpenLoop) {
                        "open"
                    } else {
                        "closed"
                    }
                ));
                runs.push(paper_sine_task(ct, mode, Operator::Cooperative(sine_user(), s)).run());
                bar.inc(1);
            }
            store.push(runs);
        }
    }
    bar.finish_and_clear();

    // ---------------- tables ----------------
    rpq_base::outln!(
        "Rotational RCM-cone task (gamma = 30 deg, tool length 1; 100 Hz; {dur} s per run)"
    );
    rpq_base::outln!(
        "{:<38} {:>10} {:>14} {:>16} {:>8}",
        "case",
        "start err",
        "mean |err|",
        "last-quarter err",
        "turns"
    );
    rpq_base::outln!(
        "{:<38} {:>10} {:>14} {:>16} {:>8}",
        "",
        "[deg]",
        "[deg]",
        "[deg]",
        ""
    );
    for c in &cone {
        rpq_base::outln!(
            "{:<38} {:>10.2} {:>14.3} {:>16.3} {:>8.2}",
            c.label,
            c.run.angle_error[0].to_degrees(),
            c.run.mean_abs_error().to_degrees(),
            c.run.final_abs_error().to_degrees(),
            c.run.swept / std::f64::consts::TAU
        );
    }
    rpq_base::outln!();
    let table = |title: &str, paper: &[(f64, f64, f64, f64, f64); 3], ours: &[Vec<SineRun>]| {
        rpq_base::outln!("{title}");
        rpq_base::outln!(
            "{:>5} | {:>9} {:>7} {:>10} {:>8} {:>7} | {:>9} {:>7} {:>10} {:>8} {:>7} {:>5}",
            "c_tau",
            "paper t",
            "sd",
            "err [px]",
            "sd",
            "norm",
            "ours t",
            "sd",
            "err [mm]",
            "sd",
            "norm",
            "done"
        );
        let ref_paper = PAPER_CLOSED[0].3;
        let ref_ours = mean_std(&closed[0].iter().map(|r| r.mean_error).collect::<Vec<_>>()).0;
        for (p, runs) in paper.iter().zip(ours) {
            let (t, ts) = mean_std(&runs.iter().map(|r| r.time).collect::<Vec<_>>());
            let (e, es) = mean_std(&runs.iter().map(|r| r.mean_error).collect::<Vec<_>>());
            let done = runs.iter().filter(|r| r.completed).count();
            rpq_base::outln!(
                "{:>5.1} | {:>9.3} {:>7.3} {:>10.3} {:>8.3} {:>7.2} | {:>9.3} {:>7.3} {:>10.3} {:>8.3} {:>7.2} {:>3}/{}",
                p.0,
                p.1,
                p.2,
                p.3,
                p.4,
                p.3 / ref_paper,
                t,
                ts,
                e * 1e3,
                es * 1e3,
                e / ref_ours,
                done,
                runs.len()
            );
        }
        rpq_base::outln!();
    };
    rpq_base::outln!("Translational sine-path task: 35 mm amplitude, 70 mm wavelength, 2 wavelengths, 1 kHz, simulated user, {} trials", seeds.len());
    rpq_base::outln!("('norm' = error divided by the closed-loop c_tau = 0 error of the same source; paper errors are in its pixel units)");
    table("Table I (open-loop virtual fixture)", &PAPER_OPEN, &open);
    table(
        "Table II (closed-loop virtual fixture, k_d = 0.08)",
        &PAPER_CLOSED,
        &closed,
    );

    // ---------------- plots and CSV ----------------
    let circle: Vec<(f64, f64)> = (0..=360)
        .map(|i| {
            let a = (i as f64).to_radians();
            (gamma.sin() * a.cos(), gamma.sin() * a.sin())
        })
        .collect();
    for c in &cone {
        let top: Vec<(f64, f64)> = c.run.path.iter().map(|p| (p.x, p.y)).collect();
        let side: Vec<(f64, f64)> = c.run.path.iter().map(|p| (p.x, p.z)).collect();
        Figure::new(&format!("{}: top view", c.label), "x", "y")
            .line("cone reference", &circle)
            .line("tool end", &top)
            .equal_axes(true)
            .save(args.out.join(format!("{}_top", c.name)))?;
        let side_ref = [(-gamma.sin(), gamma.cos()), (gamma.sin(), gamma.cos())];
        Figure::new(&format!("{}: side view", c.label), "x", "z")
            .line("cone reference height", &side_ref)
            .line("tool end", &side)
            .equal_axes(true)
            .save(args.out.join(format!("{}_side", c.name)))?;
        write_csv(
            &args.out.join(format!("{}.csv", c.name)),
            "x,y,z,angle_error_rad",
            c.run
                .path
                .iter()
                .zip(&c.run.angle_error)
                .map(|(p, e)| format!("{},{},{},{}", p.x, p.y, p.z, e)),
        )?;
    }
    let reference: Vec<(f64, f64)> =
        paper_sine_task(0.0, Mode::OpenLoop, Operator::Autonomous(1.0))
            .reference()
            .points()
            .iter()
            .map(|p| (p.x * 1e3, p.y * 1e3))
            .collect();
    let mut summary = Vec::new();
    for (tag, store) in [("open", &open), ("closed", &closed)] {
        let mut fig = Figure::new(
            &format!("sine path, {tag} loop (first trial)"),
            "x [mm]",
            "y [mm]",
        )
        .line("reference", &reference);
        for (ct, runs) in c_taus.iter().zip(store.iter()) {
            let mm: Vec<(f64, f64)> = runs[0]
                .path
                .iter()
                .map(|(x, y)| (x * 1e3, y * 1e3))
                .collect();
            fig = fig.line(&format!("c_tau = {ct}"), &mm);
            for (s, r) in seeds.iter().zip(runs) {
                summary.push(format!(
                    "{tag},{ct},{s},{},{},{},{}",
                    r.time,
                    r.mean_error * 1e3,
                    r.max_error * 1e3,
                    r.completed
                ));
                write_csv(
                    &args.out.join(format!("sine_{tag}_ctau{ct}_seed{s}.csv")),
                    "x_mm,y_mm",
                    r.path
                        .iter()
                        .map(|(x, y)| format!("{},{}", x * 1e3, y * 1e3)),
                )?;
            }
        }
        fig.equal_axes(true)
            .save(args.out.join(format!("sine_{tag}")))?;
    }
    write_csv(
        &args.out.join("sine_summary.csv"),
        "loop,c_tau,seed,time_s,mean_error_mm,max_error_mm,completed",
        summary.into_iter(),
    )?;
    rpq_base::outln!("plots and CSV written to {}", args.out.display());
    Ok(())
}
