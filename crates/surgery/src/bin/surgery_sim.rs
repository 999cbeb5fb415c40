//! `surgery_sim`: the assisted cranial cut in one process (no DDS): the RX60 with a drill, the
//! cranium phantom, shield and cutting aid, a seeded surgeon, the admittance law with a
//! guidance fixture along the cut and the forbidden-region correction every period. Prints a
//! status line every simulated second and the summary; writes the summary, the trajectory
//! CSV and the plots to the output folder it names.
//!
//! ```text
//! surgery_sim [--duration 40] [--seed 1] [--out target/surgery]
//! ```

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use rpq_base::outln;
use rpq_surgery::scenario::{self, report, ScenarioConfig};

#[derive(Parser, Debug)]
#[command(about = "The assisted cranial cut (RPQ section 4) in one process, without DDS")]
struct Args {
    /// Simulated duration [s].
    #[arg(long, default_value_t = 40.0)]
    duration: f64,
    /// Seed of the simulated surgeon.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Output folder (created); a subfolder `seed<N>` receives the files.
    #[arg(long, default_value = "target/surgery")]
    out: PathBuf,
    /// Mean time between the surgeon's deliberate pushes into forbidden regions [s] (0: none).
    #[arg(long, default_value_t = 3.0)]
    push_interval: f64,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let mut cfg = ScenarioConfig {
        duration: args.duration,
        seed: args.seed,
        ..ScenarioConfig::default()
    };
    cfg.surgeon.push_interval = args.push_interval;
    outln!(
        "surgery_sim: RX60 with a {:.0} mm drill (bit radius {:.1} mm), cranium phantom, shield (N = {}, H = {:.0} mm) and cutting aid (cut width {:.1} mm), seed {}, {:.1} s",
        cfg.drill_length * 1e3,
        cfg.tool_radius * 1e3,
        cfg.shield.resolution,
        cfg.shield.height * 1e3,
        cfg.cut_width * 1e3,
        cfg.seed,
        cfg.duration
    );
    let report = match scenario::run(&cfg, &mut |s| outln!("{s}")) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("surgery_sim: {e}");
            return ExitCode::from(2);
        }
    };
    outln!("{}", report::summary_text(&cfg, &report).trim_end());
    let dir = args.out.join(format!("seed{}", cfg.seed));
    match report::write(&dir, &cfg, &report) {
        Ok((files, note)) => {
            outln!("wrote {} files to {}:", files.len(), dir.display());
            for f in files {
                outln!("  {}", f.display());
            }
            if let Some(n) = note {
                outln!("{n}");
            }
        }
        Err(e) => {
            eprintln!("surgery_sim: {e}");
            return ExitCode::from(2);
        }
    }
    if report.summary.penetrations > 0 {
        eprintln!(
            "surgery_sim: {} penetrations of the protected region",
            report.summary.penetrations
        );
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}
