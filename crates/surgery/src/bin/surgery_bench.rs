//! `surgery_bench`: one control period of the assisted cut — admittance law, forbidden-region
//! check and correction by surface navigation against the N = 64 shield, the cutting aid and
//! the 50,784-triangle phantom, joint velocities — timed single-threaded over whole runs of
//! the scenario (several seeds), all periods and the periods in contact; target p99 ≤ 50 µs
//! (a 1 kHz loop with margin). Wall-clock figures: run it on an idle machine, or read them
//! with the load it prints.
//!
//! ```text
//! surgery_bench [--seconds 40] [--seeds 3]
//! ```

use std::process::ExitCode;
use std::sync::Arc;

use clap::Parser;
use rpq_base::outln;
use rpq_surgery::scenario::{run_on, Geometry, ScenarioConfig};

#[derive(Parser, Debug)]
#[command(about = "Time of one control period with the forbidden-region check (p50/p99)")]
struct Args {
    /// Simulated seconds per seed.
    #[arg(long, default_value_t = 40.0)]
    seconds: f64,
    /// Seeds 1..=N.
    #[arg(long, default_value_t = 3)]
    seeds: u64,
}

fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

fn main() -> ExitCode {
    let args = Args::parse();
    let base = ScenarioConfig {
        duration: args.seconds,
        ..ScenarioConfig::default()
    };
    let started = std::time::Instant::now();
    let geometry = match Geometry::build(&base) {
        Ok(g) => Arc::new(g),
        Err(e) => {
            eprintln!("surgery_bench: {e}");
            return ExitCode::from(2);
        }
    };
    outln!(
        "geometry: phantom {} + shield {} + cutting aid {} triangles, built with their hierarchies in {:.0} ms",
        geometry.patient.model.num_triangles(),
        geometry.shield.mesh.triangles.len(),
        geometry.aid.mesh.triangles.len(),
        started.elapsed().as_secs_f64() * 1e3
    );
    outln!("load average before: {}", load());
    let mut worst_p99: f64 = 0.0;
    for seed in 1..=args.seeds {
        let cfg = ScenarioConfig {
            seed,
            ..base.clone()
        };
        let r = match run_on(&cfg, geometry.clone(), &mut |_| {}) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("surgery_bench: {e}");
                return ExitCode::from(2);
            }
        };
        let (t, s) = (&r.timing, &r.summary);
        outln!(
            "seed {seed}: {} periods ({} in contact, {} blocked, {} penetrations): control period p50 {:.1} us, p99 {:.1} us, max {:.1} us; in contact p50 {:.1} us, p99 {:.1} us; navigation alone p50 {:.1} us, p99 {:.1} us",
            s.periods,
            s.outcomes[1] + s.outcomes[2],
            s.outcomes[2],
            s.penetrations,
            t.control_us[0],
            t.control_us[1],
            t.control_us[2],
            t.contact_us[0],
            t.contact_us[1],
            t.navigation_us[0],
            t.navigation_us[1]
        );
        worst_p99 = worst_p99.max(t.control_us[1]);
    }
    outln!("load average after: {}", load());
    outln!(
        "worst p99 of a control period: {worst_p99:.1} us (target 50 us): {}",
        if worst_p99 <= 50.0 { "met" } else { "NOT met" }
    );
    ExitCode::SUCCESS
}
