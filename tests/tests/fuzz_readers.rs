//! The file readers under mutated inputs (see `rpq_tests::fuzz`): a bounded run in the test
//! command (`RPQ_FUZZ_INPUTS` inputs per reader, default 3000; seed `RPQ_FUZZ_SEED`), every
//! reader must return for every input — no panic — and no input may take longer than 2 s.
//! Longer runs: `cargo run --release -p rpq_tests --bin fuzz_readers -- --inputs 1000000`.

use std::time::Duration;

use rpq_tests::fuzz::{excerpt, failure_path, quiet_panics, run_target, targets};

#[test]
fn readers_never_panic_or_hang_on_mutated_inputs() {
    let inputs: u64 = std::env::var("RPQ_FUZZ_INPUTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3000);
    let seed: u64 = std::env::var("RPQ_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20261125);
    let all = targets();
    let reports: Vec<_> = {
        let _quiet = quiet_panics();
        all.iter()
            .map(|t| run_target(t, inputs, seed, Duration::from_secs(2)))
            .collect()
    };
    let mut problems = Vec::new();
    for r in &reports {
        println!(
            "{:<22} {:>7} inputs {:>7.2} s  slowest {:>8.4} s  panics {}  slow {}",
            r.name,
            r.executions,
            r.seconds,
            r.max_seconds,
            r.panics.len(),
            r.slow.len()
        );
        for (k, (msg, input)) in r.panics.iter().enumerate() {
            let path = failure_path(r.name, k);
            let _ = std::fs::create_dir_all(path.parent().unwrap());
            let _ = std::fs::write(&path, input);
            problems.push(format!(
                "{}: panic `{msg}` on {} (input: {})",
                r.name,
                path.display(),
                excerpt(input)
            ));
        }
        for (s, input) in &r.slow {
            problems.push(format!("{}: {s:.2} s on input {}", r.name, excerpt(input)));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // The mutations must reach the readers' error paths and their success paths.
    assert!(reports.iter().all(|r| r.executions > inputs));
}
