//! Long fuzz runs of the suite's file readers (see `rpq_tests::fuzz`), one thread per core.
//!
//! ```text
//! cargo run --release -p rpq_tests --bin fuzz_readers -- [--inputs N] [--seed S] [--only NAME]
//! ```
//! `--inputs` is the total over all readers (default 1,000,000), shared evenly. Prints one line
//! per reader (inputs, time, slowest input, panics, slow inputs) and writes every failing input
//! to `target/fuzz_failures/`. Exit status 1 if any reader panicked or took longer than 2 s.

use std::time::{Duration, Instant};

use rpq_tests::fuzz::{excerpt, failure_path, quiet_panics, run_target, targets, Report};

fn main() {
    let mut inputs: u64 = 1_000_000;
    let mut seed: u64 = 1;
    let mut only: Option<String> = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || {
            args.next()
                .unwrap_or_else(|| usage(&format!("{a} needs a value")))
        };
        match a.as_str() {
            "--inputs" => inputs = value().parse().unwrap_or_else(|_| usage("--inputs N")),
            "--seed" => seed = value().parse().unwrap_or_else(|_| usage("--seed S")),
            "--only" => only = Some(value()),
            _ => usage(&format!("unknown argument {a}")),
        }
    }
    let all: Vec<_> = targets()
        .into_iter()
        .filter(|t| only.as_deref().is_none_or(|o| o == t.name))
        .collect();
    if all.is_empty() {
        usage("no reader of that name");
    }
    let per = inputs / all.len() as u64;
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let start = Instant::now();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let _quiet = quiet_panics();
    let mut reports: Vec<Report> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(t) = all.get(k) else { break };
                        mine.push(run_target(t, per, seed, Duration::from_secs(2)));
                    }
                    mine
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_default())
            .collect()
    });
    drop(_quiet);
    reports.sort_by_key(|r| r.name);
    println!("fuzz_readers: seed {seed}, {threads} threads, {per} mutated inputs per reader");
    println!(
        "{:<22} {:>9} {:>9} {:>11} {:>7} {:>5}",
        "reader", "inputs", "time s", "slowest s", "panics", "slow"
    );
    let (mut total, mut bad) = (0, 0);
    for r in &reports {
        println!(
            "{:<22} {:>9} {:>9.1} {:>11.4} {:>7} {:>5}",
            r.name,
            r.executions,
            r.seconds,
            r.max_seconds,
            r.panics.len(),
            r.slow.len()
        );
        total += r.executions;
        for (k, (msg, input)) in r.panics.iter().enumerate() {
            let path = failure_path(r.name, k);
            let _ = std::fs::create_dir_all(path.parent().unwrap());
            let _ = std::fs::write(&path, input);
            println!(
                "  PANIC {msg} — input {} ({})",
                path.display(),
                excerpt(input)
            );
            bad += 1;
        }
        for (s, input) in &r.slow {
            println!("  SLOW {s:.2} s — {}", excerpt(input));
            bad += 1;
        }
    }
    println!(
        "total {total} inputs in {:.1} s, {bad} problem(s)",
        start.elapsed().as_secs_f64()
    );
    std::process::exit(i32::from(bad > 0));
}

fn usage(msg: &str) -> ! {
    eprintln!("fuzz_readers: {msg}\nusage: fuzz_readers [--inputs N] [--seed S] [--only NAME]");
    std::process::exit(2)
}
