//! `netft_driver`: the ATI Net F/T force/torque sensor over its RDT protocol (UDP), publishing
//! the wrench for `admittance_controller`. Protocol and stream checks: `steady_hand::netft`.
//!
//! ```text
//! netft_driver --ros-args --params-file config/netft_driver.yaml -p address:=192.168.1.1
//! ```
//!
//! | interface | type | behaviour |
//! |---|---|---|
//! | pub `wrench` | `geometry_msgs/WrenchStamped` | best effort; one message per accepted record, stamped with its receive time, in `frame_id` |
//! | pub `~/status` | `rpq_interfaces/FtSensorStatus` | 10 Hz and on every change of state: counters of lost, reordered, duplicate, late records, status word |
//!
//! The driver sends "start real-time streaming" (0x0002, infinite samples) to `address:port`,
//! and "stop streaming" (0x0000) when it exits. Records from other addresses, of the wrong size,
//! older than one already published or repeated are dropped and counted; a record with a
//! non-zero status word is not published (state FAULT, the word on `~/status`). When no record
//! arrives for `silence_timeout` the sensor is reported silent and the start request is sent
//! again every `restart_interval`; nothing is published meanwhile, so the controller's wrench
//! watchdog stops the robot.

use std::error::Error;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Duration;

use rpq_ros::clock::Clock;
use rpq_ros::interfaces::rpq_interfaces::msg::FtSensorStatus;
use rpq_ros::log::WarnThrottle;
use rpq_ros::msg::geometry_msgs::{Vector3, Wrench, WrenchStamped};
use rpq_ros::msg::std_msgs::Header;
use rpq_ros::run::NodeStart;
use rpq_ros::{qos, ros_info, ros_warn};
use steady_hand::netft::{Command, Record, Request, StreamTracker, Verdict, RECORD_SIZE};
use steady_hand::settings::{self, netft_driver::NetftDriverParams};
use steady_hand::NodeError;
use tokio::net::UdpSocket;
use tokio::time::{interval, Instant, MissedTickBehavior};

fn main() -> ExitCode {
    rpq_ros::run_node(
        settings::NETFT_DRIVER_NODE,
        &settings::netft_driver::declarations(),
        run,
    )
}

fn seconds(t0: Instant) -> f64 {
    t0.elapsed().as_secs_f64()
}

async fn send(sock: &UdpSocket, to: SocketAddr, command: Command) -> std::io::Result<()> {
    let req = Request {
        command,
        sample_count: 0,
    };
    sock.send_to(&req.encode(), to).await.map(|_| ())
}

async fn run(start: NodeStart) -> Result<(), Box<dyn Error>> {
    let (mut node, shutdown, clock, log) = start.into_parts();
    let p = NetftDriverParams::from_params(node.params())?;
    let port = u16::try_from(p.port).map_err(|_| NodeError::config("port", "not a UDP port"))?;
    let sensor: SocketAddr = tokio::net::lookup_host((p.address.as_str(), port))
        .await
        .map_err(|e| NodeError::config("address", format!("`{}`: {e}", p.address)))?
        .next()
        .ok_or_else(|| {
            NodeError::config("address", format!("`{}` resolves to nothing", p.address))
        })?;
    let bind = if sensor.is_ipv4() {
        "0.0.0.0:0"
    } else {
        "[::]:0"
    };
    let sock = UdpSocket::bind(bind)
        .await
        .map_err(|e| NodeError::config("address", format!("cannot open a UDP socket: {e}")))?;
    let wrench_pub = node.publisher::<WrenchStamped>(settings::WRENCH_TOPIC, qos::sensor_data())?;
    let status_pub = node.publisher::<FtSensorStatus>("~/status", qos::default())?;

    let t0 = Instant::now();
    let mut tracker = StreamTracker::new(p.late_after);
    let mut state = FtSensorStatus::STATE_WAITING;
    let mut status_word = 0u32;
    let mut last_error = String::new();
    let mut last_request = f64::NEG_INFINITY;
    let mut throttle = WarnThrottle::new(2.0);
    let mut rate_base = (0u64, 0.0f64);
    let mut rate = 0.0;
    let mut buf = [0u8; 1500];
    let mut check = interval(Duration::from_secs_f64(p.silence_timeout / 2.0));
    check.set_missed_tick_behavior(MissedTickBehavior::Skip);
    let mut status_tick = interval(Duration::from_millis(100));
    status_tick.set_missed_tick_behavior(MissedTickBehavior::Skip);
    let mut last_state = u8::MAX;
    ros_info!(
        log,
        "netft_driver ready: sensor {sensor}, frame {}, {} counts/N, {} counts/(N m)",
        p.frame_id,
        p.counts_per_force,
        p.counts_per_torque
    );

    loop {
        let mut force_status = false;
        tokio::select! {
            _ = shutdown.wait() => break,
            _ = check.tick() => {
                let now = seconds(t0);
                let silent = tracker.silence(now).is_none_or(|s| s > p.silence_timeout);
                if silent && state != FtSensorStatus::STATE_WAITING && state != FtSensorStatus::STATE_SILENT {
                    state = FtSensorStatus::STATE_SILENT;
                    last_error = format!("no record for {:.0} ms (silence_timeout)", p.silence_timeout * 1e3);
                    ros_warn!(log, "the sensor is silent: {last_error}; no wrench is published");
                }
                if silent && now - last_request >= p.restart_interval {
                    last_request = now;
                    // a restarted stream may count from anywhere
                    tracker.restart();
                    if let Err(e) = send(&sock, sensor, Command::StartRealtime).await {
                        throttle.warn(&log, &format!("cannot send the start request to {sensor}: {e}"), now);
                    } else if p.software_bias && state == FtSensorStatus::STATE_WAITING {
                        if let Err(e) = send(&sock, sensor, Command::SetSoftwareBias).await {
                            throttle.warn(&log, &format!("cannot send the bias request: {e}"), now);
                        }
                    }
                }
            }
            _ = status_tick.tick() => {
                force_status = true;
                let now = seconds(t0);
                let received = tracker.counts().received;
                if now > rate_base.1 {
                    rate = (received - rate_base.0) as f64 / (now - rate_base.1);
                }
                rate_base = (received, now);
            }
            r = sock.recv_from(&mut buf) => {
                let now = seconds(t0);
                match r {
                    Ok((n, from)) if from.ip() == sensor.ip() => {
                        if n == 0 || n % RECORD_SIZE != 0 {
                            last_error = format!("undecodable packet of {n} bytes");
                            throttle.warn(&log, &last_error, now);
                        }
                        for chunk in buf[..n - n % RECORD_SIZE].chunks(RECORD_SIZE) {
                            let Ok(rec) = Record::decode(chunk) else { continue };
                            if let Verdict::Fresh { .. } = tracker.accept(&rec, now) {
                                status_word = rec.status;
                                if rec.status != 0 {
                                    if state != FtSensorStatus::STATE_FAULT {
                                        last_error = format!("the sensor reports status {:#010x}; its records are not published", rec.status);
                                        ros_warn!(log, "{last_error}");
                                    }
                                    state = FtSensorStatus::STATE_FAULT;
                                    continue;
                                }
                                if state != FtSensorStatus::STATE_STREAMING {
                                    ros_info!(log, "streaming from {sensor}");
                                }
                                state = FtSensorStatus::STATE_STREAMING;
                                publish(&wrench_pub, &rec, &p, &clock, &mut throttle, &log, now);
                            }
                        }
                    }
                    Ok((_, from)) => throttle.warn(&log, &format!("ignoring a packet from {from} (not the sensor)"), now),
                    Err(e) => throttle.warn(&log, &format!("cannot receive: {e}"), now),
                }
            }
        }
        if force_status || state != last_state {
            last_state = state;
            let c = tracker.counts();
            let msg = FtSensorStatus {
                header: Header {
                    stamp: clock.now(),
                    frame_id: p.frame_id.clone(),
                },
                state,
                status_word,
                received: c.received,
                lost: c.lost,
                out_of_order: c.out_of_order,
                duplicates: c.duplicates,
                late: c.late,
                bad_status: c.bad_status,
                rate,
                last_error: last_error.clone(),
            };
            if let Err(e) = status_pub.publish(msg) {
                throttle.warn(
                    &log,
                    &format!("cannot publish the status: {e}"),
                    seconds(t0),
                );
            }
        }
    }
    if let Err(e) = send(&sock, sensor, Command::Stop).await {
        ros_warn!(log, "cannot send the stop request: {e}");
    }
    let c = tracker.counts();
    ros_info!(
        log,
        "shutting down: {} records, {} lost, {} reordered, {} duplicates, {} late, {} with a bad status",
        c.received,
        c.lost,
        c.out_of_order,
        c.duplicates,
        c.late,
        c.bad_status
    );
    Ok(())
}

fn publish(
    publisher: &rpq_ros::node::Publisher<WrenchStamped>,
    rec: &Record,
    p: &NetftDriverParams,
    clock: &Clock,
    throttle: &mut WarnThrottle,
    log: &rpq_ros::log::Logger,
    now: f64,
) {
    let w = rec.wrench(p.counts_per_force, p.counts_per_torque);
    let msg = WrenchStamped {
        header: Header {
            stamp: clock.now(),
            frame_id: p.frame_id.clone(),
        },
        wrench: Wrench {
            force: Vector3 {
                x: w[0],
                y: w[1],
                z: w[2],
            },
            torque: Vector3 {
                x: w[3],
                y: w[4],
                z: w[5],
            },
        },
    };
    if let Err(e) = publisher.publish(msg) {
        throttle.warn(log, &format!("cannot publish the wrench: {e}"), now);
    }
}
