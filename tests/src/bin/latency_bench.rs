//! Topic round-trip latency on loopback: suite ↔ suite, rclpy ↔ suite and rclpy ↔ rclpy.
//!
//! ```text
//! latency_bench [--count N] [--warmup W] [--rate HZ] [--payload BYTES] [--only NAME,...]
//! latency_bench ping [--count N] [--warmup W] [--rate HZ] [--payload BYTES] [--timeout S]
//! latency_bench echo [--count N] [--timeout S]
//! ```
//!
//! Without a subcommand it runs every scenario one after the other, each on its own ROS domain,
//! and prints min / median / p99 / max of the round trip in µs. A ping node publishes
//! `std_msgs/msg/Header` on `/rpq_ping` (`frame_id` = sequence number), an echo node republishes
//! every message it receives on `/rpq_pong`, and the ping node times the reply on its monotonic
//! clock. One ping is in flight at a time; after each reply the ping node pauses `1/rate` s (so
//! the send rate is a little below `rate`). QoS is rclcpp's default on both topics (reliable,
//! volatile, keep-last 10). The first `warmup` round trips are not counted.
//!
//! | scenario | ping | echo |
//! |---|---|---|
//! | `suite-suite` | `latency_bench ping` (rpq_ros) | `latency_bench echo` (rpq_ros) |
//! | `rclpy-suite` | `rclpy_peer.py latency-ping` | `latency_bench echo` |
//! | `suite-rclpy` | `latency_bench ping` | `rclpy_peer.py latency-echo` |
//! | `rclpy-rclpy` | `rclpy_peer.py latency-ping` | `rclpy_peer.py latency-echo` (reference) |
//!
//! Every node is its own process. DDS sockets are opened, so this runs only inside a private
//! loopback-only network namespace: use `tests/bench_latency.sh`, which builds the workspace and
//! runs this binary through `../shared/netns-run` with the peers' venv (`RPQ_PYENV`).
//! The `ping` and `echo` subcommands are the two halves, started by the orchestrator; `ping`
//! prints one JSON `latency` record like the rclpy peer's.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use futures::StreamExt;
use rpq_ros::{
    msg::{builtin_interfaces::Time, std_msgs::Header},
    qos,
    shutdown::Shutdown,
};
use rpq_tests::{
    peer_node, peer_runtime, peer_script, python, require_private_netns, NodeProcess, PeerOutput,
    TestEnv,
};

type BoxError = Box<dyn std::error::Error>;

const PING_TOPIC: &str = "/rpq_ping";
const PONG_TOPIC: &str = "/rpq_pong";
/// Domains of the scenarios: away from the ones the tests take first.
const FIRST_DOMAIN: u16 = 180;

const USAGE: &str = "usage: latency_bench [ping|echo] [--count N] [--warmup W] [--rate HZ] \
                     [--payload BYTES] [--timeout S] [--only suite-suite,rclpy-suite,suite-rclpy,rclpy-rclpy]";

/// Options of all three modes.
#[derive(Debug, Clone)]
struct Opts {
    count: usize,
    warmup: usize,
    rate_hz: f64,
    payload: usize,
    timeout_s: f64,
    reply_timeout_s: f64,
    only: Option<Vec<String>>,
}

impl Default for Opts {
    fn default() -> Self {
        Opts {
            count: 2000,
            warmup: 100,
            rate_hz: 200.0,
            payload: 0,
            timeout_s: 0.0,
            reply_timeout_s: 1.0,
            only: None,
        }
    }
}

impl Opts {
    /// Pause after each reply.
    fn interval(&self) -> Duration {
        Duration::from_secs_f64(1.0 / self.rate_hz)
    }

    /// Time a ping run may take: the pings at the nominal rate, plus discovery, plus slack.
    fn run_timeout_s(&self) -> f64 {
        if self.timeout_s > 0.0 {
            return self.timeout_s;
        }
        let n = (self.count + self.warmup) as f64;
        20.0 + n * (1.0 / self.rate_hz + 0.002) * 2.0
    }

    fn parse(args: &[String]) -> Result<Opts, String> {
        let mut o = Opts::default();
        let mut it = args.iter();
        while let Some(a) = it.next() {
            let mut value = |name: &str| {
                it.next()
                    .cloned()
                    .ok_or_else(|| format!("{name} needs a value"))
            };
            let num = |name: &str, v: String| -> Result<f64, String> {
                v.parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite() && *x >= 0.0)
                    .ok_or_else(|| format!("{name}: {v:?} is not a non-negative number"))
            };
            match a.as_str() {
                "--count" => o.count = num(a, value(a)?)? as usize,
                "--warmup" => o.warmup = num(a, value(a)?)? as usize,
                "--rate" => o.rate_hz = num(a, value(a)?)?,
                "--payload" => o.payload = num(a, value(a)?)? as usize,
                "--timeout" => o.timeout_s = num(a, value(a)?)?,
                "--reply-timeout" => o.reply_timeout_s = num(a, value(a)?)?,
                "--only" => {
                    o.only = Some(value(a)?.split(',').map(|s| s.trim().to_string()).collect())
                }
                "-h" | "--help" => return Err(String::new()),
                other => return Err(format!("unknown argument {other:?}")),
            }
        }
        if o.rate_hz <= 0.0 || o.count == 0 {
            return Err("--rate and --count must be positive".into());
        }
        Ok(o)
    }
}

fn main() {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let (mode, rest) = match argv.first().map(String::as_str) {
        Some("ping") | Some("echo") => (argv[0].clone(), &argv[1..]),
        _ => ("bench".to_string(), &argv[..]),
    };
    let opts = match Opts::parse(rest) {
        Ok(o) => o,
        Err(e) => {
            if !e.is_empty() {
                eprintln!("latency_bench: {e}");
            }
            eprintln!("{USAGE}");
            std::process::exit(2);
        }
    };
    require_private_netns();
    let result = match mode.as_str() {
        "ping" => peer_runtime()
            .map_err(BoxError::from)
            .and_then(|rt| rt.block_on(ping(&opts))),
        "echo" => peer_runtime()
            .map_err(BoxError::from)
            .and_then(|rt| rt.block_on(echo(&opts))),
        _ => bench(&opts),
    };
    if let Err(e) = result {
        eprintln!("latency_bench {mode}: {e}");
        std::process::exit(1);
    }
}

/// The echo half: republishes every Header from `/rpq_ping` on `/rpq_pong` until `count`
/// messages (0: no limit), SIGINT/SIGTERM or the timeout.
async fn echo(opts: &Opts) -> Result<(), BoxError> {
    let shutdown = Shutdown::install()?;
    let mut node = peer_node("rpq_latency_echo")?;
    let publisher = node.publisher::<Header>(PONG_TOPIC, qos::default())?;
    let sub = node.subscription::<Header>(PING_TOPIC, qos::default())?;
    let mut stream = std::pin::pin!(sub.async_stream());
    let limit = if opts.count > 0 {
        opts.count + opts.warmup
    } else {
        usize::MAX
    };
    println!(
        "{{\"kind\": \"ready\", \"in_topic\": \"{PING_TOPIC}\", \"out_topic\": \"{PONG_TOPIC}\"}}"
    );
    let deadline = tokio::time::sleep(Duration::from_secs_f64(opts.run_timeout_s()));
    let mut deadline = std::pin::pin!(deadline);
    let mut echoed = 0usize;
    while echoed < limit {
        tokio::select! {
            _ = shutdown.wait() => break,
            _ = &mut deadline => break,
            m = stream.next() => match m {
                Some(Ok((msg, _))) => {
                    publisher.publish(msg).map_err(|e| format!("publish: {e:?}"))?;
                    echoed += 1;
                }
                Some(Err(e)) => eprintln!("latency_bench echo: bad message: {e:?}"),
                None => break,
            },
        }
    }
    println!("{{\"kind\": \"echo_done\", \"echoed\": {echoed}}}");
    Ok(())
}

/// The ping half: one Header in flight at a time, round trip timed on the monotonic clock.
async fn ping(opts: &Opts) -> Result<(), BoxError> {
    let mut node = peer_node("rpq_latency_ping")?;
    let publisher = node.publisher::<Header>(PING_TOPIC, qos::default())?;
    let sub = node.subscription::<Header>(PONG_TOPIC, qos::default())?;
    let discovery = Duration::from_secs(20);
    if !node.wait_for_subscriber(&publisher, discovery).await {
        return Err(format!("no subscription on {PING_TOPIC} within {discovery:?}").into());
    }
    if !node.wait_for_publisher(&sub, discovery).await {
        return Err(format!("no publisher on {PONG_TOPIC} within {discovery:?}").into());
    }
    let mut stream = std::pin::pin!(sub.async_stream());
    let pad = if opts.payload > 0 {
        format!(" {}", "x".repeat(opts.payload))
    } else {
        String::new()
    };
    let reply_timeout = Duration::from_secs_f64(opts.reply_timeout_s);
    let started = Instant::now();
    let budget = Duration::from_secs_f64(opts.run_timeout_s());
    let mut rtts = Vec::with_capacity(opts.count);
    let mut lost = 0usize;
    for seq in -(opts.warmup as i64)..opts.count as i64 {
        if started.elapsed() > budget {
            break;
        }
        let key = seq.to_string();
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        let msg = Header {
            stamp: Time {
                sec: now.as_secs() as i32,
                nanosec: now.subsec_nanos(),
            },
            frame_id: format!("{key}{pad}"),
        };
        let t0 = Instant::now();
        publisher
            .publish(msg)
            .map_err(|e| format!("publish: {e:?}"))?;
        let reply = tokio::time::timeout(reply_timeout, async {
            while let Some(r) = stream.next().await {
                if let Ok((m, _)) = r {
                    if m.frame_id.split(' ').next() == Some(key.as_str()) {
                        return Some(Instant::now());
                    }
                }
            }
            None
        })
        .await;
        match reply {
            Ok(Some(t1)) if seq >= 0 => rtts.push((t1 - t0).as_secs_f64()),
            Ok(Some(_)) => {}
            _ if seq >= 0 => lost += 1,
            _ => {}
        }
        tokio::time::sleep(opts.interval()).await;
    }
    if rtts.is_empty() {
        return Err(format!("no pong received on {PONG_TOPIC} ({lost} lost)").into());
    }
    let s = Summary::of(&rtts);
    println!(
        "{{\"kind\": \"latency\", \"peer\": \"rpq_ros\", \"count\": {}, \"lost\": {lost}, \
         \"payload_bytes\": {}, \"min_us\": {:.1}, \"median_us\": {:.1}, \"p99_us\": {:.1}, \
         \"mean_us\": {:.1}, \"max_us\": {:.1}}}",
        rtts.len(),
        opts.payload,
        s.min,
        s.median,
        s.p99,
        s.mean,
        s.max
    );
    Ok(())
}

/// Round-trip statistics in µs (nearest-rank p99, as the Python peers compute it).
#[derive(Debug, Clone, Copy)]
struct Summary {
    min: f64,
    median: f64,
    p99: f64,
    mean: f64,
    max: f64,
}

impl Summary {
    fn of(rtts_s: &[f64]) -> Summary {
        let mut v: Vec<f64> = rtts_s.iter().map(|x| x * 1e6).collect();
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let median = if n % 2 == 1 {
            v[n / 2]
        } else {
            0.5 * (v[n / 2 - 1] + v[n / 2])
        };
        let rank = ((0.99 * n as f64).ceil() as usize).clamp(1, n);
        Summary {
            min: v[0],
            median,
            p99: v[rank - 1],
            mean: v.iter().sum::<f64>() / n as f64,
            max: v[n - 1],
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Side {
    Suite,
    Rclpy,
}

/// One measured scenario, as the table shows it.
struct Row {
    name: &'static str,
    result: Result<serde_yaml::Value, String>,
}

fn self_exe() -> Result<PathBuf, BoxError> {
    Ok(std::env::current_exe()?)
}

fn common_args(opts: &Opts) -> Vec<String> {
    vec![
        "--count".into(),
        opts.count.to_string(),
        "--warmup".into(),
        opts.warmup.to_string(),
        "--timeout".into(),
        format!("{:.0}", opts.run_timeout_s()),
    ]
}

fn echo_command(env: &TestEnv, side: Side, opts: &Opts) -> Result<Command, BoxError> {
    Ok(match side {
        Side::Suite => {
            // `echo` stops after count + warmup messages by itself
            let mut c = env.command(self_exe()?);
            c.arg("echo").args(common_args(opts));
            c
        }
        Side::Rclpy => {
            let mut c = env.command(python());
            c.arg(peer_script("rclpy_peer.py"))
                .arg("latency-echo")
                .args(["--count", &(opts.count + opts.warmup).to_string()])
                .args(["--timeout", &format!("{:.0}", opts.run_timeout_s())]);
            c
        }
    })
}

fn ping_command(env: &TestEnv, side: Side, opts: &Opts) -> Result<Command, BoxError> {
    let interval = 1.0 / opts.rate_hz;
    let mut c = match side {
        Side::Suite => {
            let mut c = env.command(self_exe()?);
            c.arg("ping").args(common_args(opts));
            c.args(["--rate", &opts.rate_hz.to_string()]);
            c
        }
        Side::Rclpy => {
            let mut c = env.command(python());
            c.arg(peer_script("rclpy_peer.py"))
                .arg("latency-ping")
                .args(common_args(opts))
                .args(["--interval", &interval.to_string()])
                .args(["--max-lost", &opts.count.to_string()]);
            c
        }
    };
    c.args(["--payload", &opts.payload.to_string()]);
    c.args(["--reply-timeout", &opts.reply_timeout_s.to_string()]);
    Ok(c)
}

fn run_scenario(
    env: &TestEnv,
    ping: Side,
    echo: Side,
    opts: &Opts,
) -> Result<serde_yaml::Value, String> {
    let echo_cmd = echo_command(env, echo, opts).map_err(|e| e.to_string())?;
    let mut echo_proc = NodeProcess::spawn("echo", echo_cmd);
    echo_proc.wait_for_output("\"ready\"", Duration::from_secs(30));
    let mut ping_cmd = ping_command(env, ping, opts).map_err(|e| e.to_string())?;
    let out = PeerOutput::from(
        ping_cmd
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("cannot start the ping node: {e}"))?,
    );
    echo_proc.stop(Duration::from_secs(3));
    let record = out
        .records()
        .into_iter()
        .find(|r| r["kind"].as_str() == Some("latency"));
    match record {
        Some(r) if out.success => Ok(r),
        _ => Err(format!(
            "ping failed\n--- stdout ---\n{}\n--- stderr ---\n{}\n--- echo ---\n{}",
            out.stdout.trim(),
            out.stderr.trim(),
            echo_proc.output().join("\n")
        )),
    }
}

fn bench(opts: &Opts) -> Result<(), BoxError> {
    let scenarios = [
        ("suite-suite", Side::Suite, Side::Suite),
        ("rclpy-suite", Side::Rclpy, Side::Suite),
        ("suite-rclpy", Side::Suite, Side::Rclpy),
        ("rclpy-rclpy", Side::Rclpy, Side::Rclpy),
    ];
    if let Some(only) = &opts.only {
        if let Some(bad) = only
            .iter()
            .find(|n| !scenarios.iter().any(|s| s.0 == n.as_str()))
        {
            return Err(format!("unknown scenario {bad:?}").into());
        }
    }
    println!(
        "round trip of std_msgs/msg/Header{} on loopback, reliable keep-last 10, one in flight, \
         {} pings after {} warm-up, {:.1} ms pause after each reply",
        if opts.payload > 0 {
            format!(" (+{} bytes)", opts.payload)
        } else {
            String::new()
        },
        opts.count,
        opts.warmup,
        1e3 / opts.rate_hz
    );
    let mut rows = Vec::new();
    for (i, (name, ping, echo)) in scenarios.into_iter().enumerate() {
        if opts
            .only
            .as_ref()
            .is_some_and(|o| !o.iter().any(|n| n == name))
        {
            continue;
        }
        let mut env = TestEnv::new();
        env.domain_id = FIRST_DOMAIN + i as u16;
        let t0 = Instant::now();
        let result = run_scenario(&env, ping, echo, opts);
        eprintln!("{name}: {:.1} s", t0.elapsed().as_secs_f64());
        rows.push(Row { name, result });
    }
    println!(
        "{:<13} {:>6} {:>5} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "ping-echo", "count", "lost", "min µs", "median µs", "p99 µs", "max µs", "mean µs"
    );
    let mut failed = false;
    for row in &rows {
        match &row.result {
            Ok(r) => {
                let f = |k: &str| r[k].as_f64().unwrap_or(f64::NAN);
                println!(
                    "{:<13} {:>6} {:>5} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>9.1}",
                    row.name,
                    r["count"].as_u64().unwrap_or(0),
                    r["lost"].as_u64().unwrap_or(0),
                    f("min_us"),
                    f("median_us"),
                    f("p99_us"),
                    f("max_us"),
                    f("mean_us")
                );
            }
            Err(e) => {
                failed = true;
                println!(
                    "{:<13} failed: {}",
                    row.name,
                    e.lines().next().unwrap_or("")
                );
                eprintln!("{}: {e}", row.name);
            }
        }
    }
    if failed {
        return Err("some scenarios failed (details above)".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_uses_nearest_rank_and_the_middle_pair() {
        let v: Vec<f64> = (1..=200).map(|i| i as f64 * 1e-6).collect();
        let s = Summary::of(&v);
        // Samples are seconds, the summary is in microseconds: compare with a tolerance.
        assert!((s.min - 1.0).abs() < 1e-9);
        assert!((s.max - 200.0).abs() < 1e-9);
        assert!((s.median - 100.5).abs() < 1e-9);
        assert!((s.p99 - 198.0).abs() < 1e-9);
        assert!((s.mean - 100.5).abs() < 1e-9);
    }

    #[test]
    fn options_are_checked() {
        let args = |s: &str| s.split_whitespace().map(String::from).collect::<Vec<_>>();
        let o = Opts::parse(&args("--count 10 --rate 50 --only suite-suite")).unwrap();
        assert_eq!(o.count, 10);
        assert_eq!(o.interval(), Duration::from_millis(20));
        assert!(Opts::parse(&args("--count")).is_err());
        assert!(Opts::parse(&args("--rate -1")).is_err());
        assert!(Opts::parse(&args("--rate 0")).is_err());
        assert!(Opts::parse(&args("--bogus 1")).is_err());
    }
}
