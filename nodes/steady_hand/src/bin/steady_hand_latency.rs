//! Latency benchmark: wrench in → joint velocity command out, through a running
//! `admittance_controller` on loopback DDS (issue target: median under 300 µs).
//!
//! ```text
//! ../shared/netns-run target/release/steady_hand_latency [--count N]
//! ```
//! Starts `admittance_controller` (from the directory of this binary) with the RX60 URDF,
//! publishes joint states itself at 200 Hz (a fixed non-singular pose), then sends one wrench
//! at a time and waits for the command it causes. Prints median, p90, p99 and max; the peer
//! measured in the same run is a bare DDS round trip through the same stack (a
//! `std_msgs/Float64MultiArray` echoed by this process to itself), so the ratio isolates the
//! controller's own cost. Must run inside the private network namespace.

use std::error::Error;
use std::pin::pin;
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use futures::StreamExt;
use rpq_ros::msg::geometry_msgs::{Vector3, Wrench, WrenchStamped};
use rpq_ros::msg::sensor_msgs::JointState;
use rpq_ros::msg::std_msgs::{Float64MultiArray, Header};
use rpq_ros::node::RosNode;
use rpq_ros::qos;
use tokio::time::{interval, timeout};

fn stats(name: &str, mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let q = |p: f64| v[((v.len() - 1) as f64 * p).round() as usize] * 1e6;
    println!(
        "{name:<44} n={:<6} median {:>8.1} µs  p90 {:>8.1}  p99 {:>8.1}  max {:>8.1}",
        v.len(),
        q(0.5),
        q(0.9),
        q(0.99),
        q(1.0)
    );
    q(0.5)
}

fn main() -> ExitCode {
    rpq_ros::run::run_main("steady_hand_latency", run())
}

async fn run() -> Result<(), Box<dyn Error>> {
    let count: usize = std::env::args()
        .skip_while(|a| a != "--count")
        .nth(1)
        .map(|s| s.parse())
        .transpose()?
        .unwrap_or(2000);
    let exe = std::env::current_exe()?;
    let dir = exe.parent().ok_or("no parent dir")?;
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let urdf = repo.join("urdf/rx60b.urdf");
    let mut child = Command::new(dir.join("admittance_controller"))
        .args(["--ros-args", "-p"])
        .arg(format!("robot_description_file:={}", urdf.display()))
        .args([
            "-p",
            "shaping.force_deadband:=0.0",
            "-p",
            "limits.max_linear_acceleration:=1e9",
            "-p",
            "limits.max_angular_acceleration:=1e9",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()?;
    let (mut node, _) = RosNode::from_process("steady_hand_latency", &[])?;
    let wrench_pub = node.publisher::<WrenchStamped>("wrench", qos::sensor_data())?;
    let js_pub = node.publisher::<JointState>("joint_states", qos::default())?;
    let cmd_sub = node.subscription::<Float64MultiArray>(
        "forward_velocity_controller/commands",
        qos::default(),
    )?;
    let echo_pub =
        node.publisher::<Float64MultiArray>("steady_hand_latency/echo", qos::default())?;
    let echo_sub =
        node.subscription::<Float64MultiArray>("steady_hand_latency/echo", qos::default())?;
    let mut cmds = pin!(cmd_sub.async_stream());
    let mut echoes = pin!(echo_sub.async_stream());
    let js = JointState {
        name: (1..=6).map(|i| format!("joint_{i}")).collect(),
        position: vec![0.0, 0.5, 1.5, 0.0, 1.14, 0.0],
        ..Default::default()
    };
    let mut js_tick = interval(Duration::from_millis(5));
    let wrench = |k: usize| WrenchStamped {
        header: Header {
            frame_id: "base_link".into(),
            ..Default::default()
        },
        wrench: Wrench {
            // a force of its own for every wrench, so its command is told from the controller's
            // repeats of the previous one
            force: Vector3 {
                x: 1.0 + (k % 1000) as f64 * 1e-3,
                y: 0.5,
                z: 0.0,
            },
            torque: Vector3::default(),
        },
    };

    // warm up: until commands flow (discovery, first joint state)
    let t0 = Instant::now();
    loop {
        js_tick.tick().await;
        js_pub.publish(js.clone())?;
        wrench_pub.publish(wrench(0))?;
        if let Ok(Some(Ok(_))) = timeout(Duration::from_millis(5), cmds.next()).await {
            break;
        }
        if t0.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            return Err("no command from admittance_controller within 20 s".into());
        }
    }
    let mut lat = Vec::with_capacity(count);
    let mut peer = Vec::with_capacity(count);
    let mut last_data: Vec<f64> = Vec::new();
    let mut last_js = Instant::now();
    for k in 0..count {
        if last_js.elapsed() > Duration::from_millis(5) {
            js_pub.publish(js.clone())?;
            last_js = Instant::now();
        }
        // drain anything pending
        while let Ok(Some(Ok((c, _)))) = timeout(Duration::from_micros(1), cmds.next()).await {
            last_data = c.data;
        }
        let t = Instant::now();
        wrench_pub.publish(wrench(k + 1))?;
        // the first command that differs from the last one (the controller also repeats its
        // command every period)
        let mut got = false;
        while let Ok(Some(Ok((c, _)))) = timeout(Duration::from_millis(200), cmds.next()).await {
            if c.data != last_data {
                lat.push(t.elapsed().as_secs_f64());
                last_data = c.data;
                got = true;
                break;
            }
        }
        if !got {
            eprintln!("lost command {k}");
        }
        let t = Instant::now();
        echo_pub.publish(Float64MultiArray {
            data: vec![k as f64; 6],
            ..Default::default()
        })?;
        if let Ok(Some(Ok(_))) = timeout(Duration::from_millis(200), echoes.next()).await {
            peer.push(t.elapsed().as_secs_f64());
        }
    }
    // sustained 1 kHz: a wrench every millisecond for 5 s, count the commands and their gaps
    let mut tick = interval(Duration::from_millis(1));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
    let start = Instant::now();
    let (mut sent, mut received) = (0usize, 0usize);
    let mut gaps = Vec::new();
    let mut last_cmd: Option<Instant> = None;
    while start.elapsed() < Duration::from_secs(5) {
        tokio::select! {
            _ = tick.tick() => {
                if sent % 5 == 0 {
                    js_pub.publish(js.clone())?;
                }
                wrench_pub.publish(wrench(sent))?;
                sent += 1;
            }
            Some(Ok(_)) = cmds.next() => {
                let now = Instant::now();
                if let Some(t) = last_cmd {
                    gaps.push((now - t).as_secs_f64());
                }
                last_cmd = Some(now);
                received += 1;
            }
        }
    }
    let elapsed = start.elapsed().as_secs_f64();
    let _ = child.kill();
    let _ = child.wait();
    println!(
        "sustained 1 kHz for {elapsed:.1} s: {sent} wrenches sent, {received} commands received ({:.0} Hz, {:.1} % of the wrenches)",
        received as f64 / elapsed,
        100.0 * received as f64 / sent.max(1) as f64
    );
    stats("gap between commands at 1 kHz", gaps);
    println!("wrench -> joint velocity command latency on loopback (admittance_controller, RX60, 6 joints)");
    let ours = stats("wrench -> command (controller in between)", lat);
    let base = stats("peer: DDS one-hop echo to self (same stack)", peer);
    println!("controller path / bare one-hop ratio: {:.2}", ours / base);
    Ok(())
}
