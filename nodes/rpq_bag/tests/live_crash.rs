//! `rpq_bag record` as a process fed by a publisher at 2 kHz: its memory stays flat over a
//! long recording (the bag is written as it goes), a clean stop (SIGINT) finishes the bag,
//! and `kill -9` leaves a file whose whole chunks `rpq_bag reindex` recovers into a bag that
//! `rosbags` and `mcap` read.
//!
//! Opens DDS sockets: run inside a private network namespace (`../shared/netns-run cargo
//! test ...`). Needs the Python peers' venv in `RPQ_PYENV`, as `python_peer.rs`.
//! `RPQ_BAG_BIN=<path>` runs them against another `rpq_bag` build (to check them against an
//! older one); by default they run this package's binary.

mod common;

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::peer;
use rpq_bag::BagReader;
use rpq_ros::args::RosArgs;
use rpq_ros::env::RosEnv;
use rpq_ros::msg::std_msgs::String as StringMsg;
use rpq_ros::node::RosNode;

/// A ROS domain of its own for each test of this process.
fn env_for(offset: u32) -> (u32, RosEnv) {
    let id = 100 + std::process::id() % 60 * 2 + offset;
    let env = RosEnv::from_vars(|k| (k == "ROS_DOMAIN_ID").then(|| id.to_string())).unwrap();
    (id, env)
}

fn vm_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS in /proc/<pid>/status")
}

fn rpq_bag() -> PathBuf {
    std::env::var_os("RPQ_BAG_BIN").map_or_else(
        || PathBuf::from(env!("CARGO_BIN_EXE_rpq_bag")),
        PathBuf::from,
    )
}

/// A child process killed when dropped (a failed test leaves no recorder running).
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn spawn_recorder(domain: u32, topic: &str, output: &Path, log: &Path) -> Running {
    Running(
        Command::new(rpq_bag())
            .args(["record", topic, "--wait-timeout", "30", "--output"])
            .arg(output)
            .env("ROS_DOMAIN_ID", domain.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(File::create(log).unwrap())
            .spawn()
            .expect("start rpq_bag record"),
    )
}

fn wait_exit(child: &mut Child, within: Duration) -> std::process::ExitStatus {
    let t0 = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if t0.elapsed() > within {
            let _ = child.kill();
            panic!("rpq_bag record did not exit within {within:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Message `i` of a run: its index first, padded to `len` bytes.
fn text(i: usize, len: usize) -> String {
    let mut s = format!("{i:08}:");
    s.push_str(&"x".repeat(len.saturating_sub(s.len())));
    s
}

fn index_of(data: &str) -> usize {
    data[..8].parse().unwrap()
}

/// Publishes `text(i, len)` on `topic` at 2 kHz to a recorder it starts, once the recorder
/// matched; `during(i, recorder)` runs after each message and ends the run by returning true.
/// Returns the number of messages published and the recorder.
fn feed(
    offset: u32,
    topic: &str,
    output: &Path,
    log: &Path,
    len: usize,
    mut during: impl FnMut(usize, &mut Child) -> bool,
) -> (usize, Running) {
    let (domain, env) = env_for(offset);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let args = RosArgs::parse(Vec::<String>::new()).unwrap().0;
        let mut node = RosNode::new("crash_feeder", env, args, &[]).unwrap();
        let publisher = node
            .publisher::<StringMsg>(topic, rpq_ros::qos::reliable(10_000))
            .unwrap();
        let mut recorder = spawn_recorder(domain, topic, output, log);
        let t0 = Instant::now();
        while publisher.get_subscription_count(node.inner()) == 0 {
            assert!(
                recorder.0.try_wait().unwrap().is_none(),
                "rpq_bag record exited early:\n{}",
                std::fs::read_to_string(log).unwrap_or_default()
            );
            assert!(
                t0.elapsed() < Duration::from_secs(30),
                "the recorder never subscribed"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        // Let the recorder see its own match too ("all peers matched").
        tokio::time::sleep(Duration::from_millis(500)).await;
        let mut tick = tokio::time::interval(Duration::from_micros(500));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
        let mut sent = 0;
        loop {
            tick.tick().await;
            publisher
                .publish(StringMsg {
                    data: text(sent, len),
                })
                .unwrap();
            sent += 1;
            if during(sent, &mut recorder.0) {
                return (sent, recorder);
            }
        }
    })
}

#[test]
fn long_recording_keeps_memory_flat_and_a_clean_stop_finishes_the_bag() {
    let tmp = tempfile::tempdir().unwrap();
    let output = tmp.path().join("long");
    let log = tmp.path().join("long.log");
    // 15 s at 2 kHz of 1 kB messages: ~31 MB through the recorder.
    let total = 30_000;
    let mut rss = Vec::new();
    let (sent, mut recorder) = feed(0, "/crash_long", &output, &log, 1000, |i, rec| {
        if i % 2_000 == 0 {
            rss.push(vm_rss_kib(rec.id()));
        }
        i >= total
    });
    // The last messages arrive; a chunk older than 1 s is already on disk.
    std::thread::sleep(Duration::from_millis(1500));
    let on_disk_before_stop = std::fs::metadata(output.join("long_0.mcap")).map(|m| m.len());
    let status = Command::new("kill")
        .args(["-INT", &recorder.0.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let status = wait_exit(&mut recorder.0, Duration::from_secs(20));
    let stderr = std::fs::read_to_string(&log).unwrap();

    // RSS after 1 s of recording (warm) against the end: flat, where holding every message
    // grew it by ~2 MB/s.
    eprintln!("rpq_bag record VmRSS every 1 s (kB): {rss:?}");
    let warm = rss[0];
    let peak = *rss.iter().max().unwrap();
    assert!(
        peak - warm < 8 * 1024,
        "VmRSS grew from {warm} kB to {peak} kB over {} s",
        rss.len()
    );
    assert!(
        on_disk_before_stop
            .as_ref()
            .is_ok_and(|&len| len > 25_000_000),
        "{on_disk_before_stop:?} bytes on disk while recording"
    );
    assert!(status.success(), "rpq_bag record: {status}\n{stderr}");

    let bag = BagReader::open(&output).unwrap_or_else(|e| panic!("{e}\n{stderr}"));
    let meta = bag.metadata().expect("metadata.yaml");
    assert_eq!(meta.message_count, bag.message_count());
    let got = bag.message_count() as usize;
    eprintln!("sent {sent}, recorded {got}");
    assert!(got * 1000 >= sent * 995, "recorded {got} of {sent}");
}

#[test]
fn kill_9_leaves_a_bag_that_reindex_recovers() {
    let tmp = tempfile::tempdir().unwrap();
    let output = tmp.path().join("killed");
    let log = tmp.path().join("killed.log");
    // 2 kHz of small messages (chunks close on the 1 s bound), killed mid-stream after 4 s.
    let (sent, mut recorder) = feed(1, "/crash_kill", &output, &log, 40, |i, rec| {
        if i == 8_000 {
            rec.kill().unwrap(); // SIGKILL
            return true;
        }
        false
    });
    let status = wait_exit(&mut recorder.0, Duration::from_secs(5));
    assert!(!status.success());
    let file = output.join("killed_0.mcap");
    assert!(
        file.is_file(),
        "kill -9 left no bag file in {}",
        output.display()
    );
    assert!(!output.join("metadata.yaml").exists());
    assert!(
        BagReader::open(&output).is_err(),
        "a cut file has no summary"
    );

    // What mcap's Python readers make of the cut file itself.
    let cut = tmp.path().join("cut.mcap");
    std::fs::copy(&file, &cut).unwrap();
    let probe = peer("truncated", &cut);
    for line in &probe {
        eprintln!("mcap (Python) on the cut file: {}", line.join(" | "));
    }
    let seeking = probe.iter().find(|l| l[0] == "seeking").unwrap();
    let streaming = probe.iter().find(|l| l[0] == "streaming").unwrap();

    let out = Command::new(rpq_bag())
        .arg("reindex")
        .arg(&output)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "rpq_bag reindex failed:\n{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!("rpq_bag reindex:\n{stdout}");
    assert!(stdout.contains("recovered"), "{stdout}");

    let bag = BagReader::open(&output).unwrap();
    let recovered = bag.message_count() as usize;
    let indexes: Vec<usize> = bag
        .messages()
        .iter()
        .map(|m| index_of(&common::decode_string(&m.data)))
        .collect();
    eprintln!("sent {sent} before the kill, recovered {recovered}");
    assert_eq!(
        indexes,
        (0..recovered).collect::<Vec<_>>(),
        "not the first {recovered} messages in order"
    );
    // Only the chunk open at the kill (at most 1 s = 2000 messages, plus what was in
    // flight) may be missing.
    assert!(
        recovered + 2_000 + 500 >= sent && recovered <= sent,
        "recovered {recovered} of {sent}"
    );
    // mcap's reader in file order yields exactly the whole chunks' messages, then fails at
    // the cut; its seeking reader (read_ros2_messages) needs the footer and fails at once.
    assert_eq!(streaming[1], recovered.to_string(), "{streaming:?}");
    assert_ne!(streaming[2], "ok", "{streaming:?}");
    assert_ne!(seeking[2], "ok", "{seeking:?}");

    // The reindexed bag in the third-party readers.
    let lines = peer("read", &output);
    for reader in ["anyreader", "rosbag2", "mcap_ros2"] {
        let mut got: Vec<usize> = lines
            .iter()
            .filter(|l| l[0] == reader)
            .map(|l| {
                let hex = l[4].strip_prefix("data=").unwrap();
                let bytes: Vec<u8> = (0..hex.len())
                    .step_by(2)
                    .map(|k| u8::from_str_radix(&hex[k..k + 2], 16).unwrap())
                    .collect();
                index_of(std::str::from_utf8(&bytes).unwrap())
            })
            .collect();
        got.sort_unstable();
        assert_eq!(
            got,
            (0..recovered).collect::<Vec<_>>(),
            "{reader} read something else"
        );
    }
    let total = lines
        .iter()
        .find(|l| l[0] == "meta" && l[1] == "*")
        .unwrap();
    assert_eq!(total[3], recovered.to_string());
}
