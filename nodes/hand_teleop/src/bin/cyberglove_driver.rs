//! `cyberglove_driver`: a CyberGlove on a serial port → `glove/raw`
//! (`rpq_interfaces/GloveReading`, the message `simulated_glove` publishes), for
//! `hand_mapping`.
//!
//! ```text
//! cyberglove_driver --ros-args --params-file config/cyberglove_driver.yaml -p port:=/dev/ttyUSB0
//! ```
//!
//! The serial protocol (request `G` / stream `S`, 18 or 22 sensors, one byte each, optional
//! status byte, terminator) and its recovery from garbage, short records, timeouts and
//! unplug/replug are in `hand_teleop::cyberglove`; the port runs on its own thread. Only
//! well-formed records are published; every problem is logged (throttled) and counted.

use std::error::Error;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use hand_teleop::cyberglove::{self, LinkConfig, LinkEvent, Mode};
use hand_teleop::settings::{self, cyberglove_driver::names, CybergloveDriverParams};
use hand_teleop::NodeError;
use rpq_ros::interfaces::rpq_interfaces::msg::GloveReading;
use rpq_ros::log::WarnThrottle;
use rpq_ros::msg::std_msgs::Header;
use rpq_ros::run::NodeStart;
use rpq_ros::{qos, ros_info};

fn main() -> ExitCode {
    rpq_ros::run_node(settings::DRIVER_NODE, &settings::driver_declarations(), run)
}

/// The GloveReading names of the glove's sensors and the fixed extras, checked.
fn names_of(p: &CybergloveDriverParams) -> Result<Vec<String>, NodeError> {
    let sensors = match p.sensors {
        18 | 22 => p.sensors as usize,
        n => {
            return Err(NodeError::config(
                names::SENSORS,
                format!("{n}: a CyberGlove has 18 or 22 sensors"),
            ))
        }
    };
    let list: Vec<String> = if p.sensor_names.is_empty() {
        if sensors == 18 {
            cyberglove::NAMES_18.iter().map(|s| s.to_string()).collect()
        } else {
            cyberglove::NAMES_22.iter().map(|s| s.to_string()).collect()
        }
    } else {
        p.sensor_names.clone()
    };
    if list.len() != sensors {
        return Err(NodeError::config(
            names::SENSOR_NAMES,
            format!("{} names for {sensors} sensors", list.len()),
        ));
    }
    if p.fixed_names.len() != p.fixed_values.len() {
        return Err(NodeError::config(
            names::FIXED_VALUES,
            format!(
                "{} values for {} fixed_names",
                p.fixed_values.len(),
                p.fixed_names.len()
            ),
        ));
    }
    let mut all = list;
    all.extend(p.fixed_names.iter().cloned());
    let mut sorted = all.clone();
    sorted.sort();
    if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
        return Err(NodeError::config(
            names::FIXED_NAMES,
            format!("name `{}` given twice", w[0]),
        ));
    }
    Ok(all)
}

async fn run(start: NodeStart) -> Result<(), Box<dyn Error>> {
    let (mut node, shutdown, clock, log) = start.into_parts();
    let p = CybergloveDriverParams::from_params(node.params())?;
    let names_all = names_of(&p)?;
    let cfg = LinkConfig {
        port: p.port.clone(),
        baud_rate: u32::try_from(p.baud_rate).unwrap_or(115_200),
        mode: if p.mode == "request" {
            Mode::Request
        } else {
            Mode::Stream
        },
        sensors: p.sensors as usize,
        status_byte: p.status_byte,
        sample_period: Duration::from_secs_f64(1.0 / p.sample_rate),
        timeout: Duration::from_secs_f64(p.timeout),
        reconnect_interval: Duration::from_secs_f64(p.reconnect_interval),
    };
    let publisher = node.publisher::<GloveReading>(settings::GLOVE_TOPIC, qos::default())?;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let stop = Arc::new(AtomicBool::new(false));
    let port_thread = {
        let stop = stop.clone();
        let cfg = cfg.clone();
        std::thread::spawn(move || {
            cyberglove::run(&cfg, &stop, |e| {
                let _ = tx.send(e);
            })
        })
    };
    ros_info!(
        log,
        "cyberglove_driver ready: {} at {} baud, {} mode, {} sensors -> {}",
        p.port,
        p.baud_rate,
        p.mode,
        p.sensors,
        settings::GLOVE_TOPIC
    );
    let mut throttle = WarnThrottle::new(2.0);
    let (mut published, mut problems) = (0u64, 0u64);
    loop {
        tokio::select! {
            _ = shutdown.wait() => break,
            ev = rx.recv() => {
                let now = clock.seconds();
                match ev {
                    None => break,
                    Some(LinkEvent::Connected) => ros_info!(log, "glove connected on {}", p.port),
                    Some(LinkEvent::Reading(mut raw)) => {
                        raw.extend_from_slice(&p.fixed_values);
                        let msg = GloveReading {
                            header: Header { stamp: clock.now(), frame_id: p.frame_id.clone() },
                            names: names_all.clone(),
                            raw,
                        };
                        match publisher.publish(msg) {
                            Ok(()) => published += 1,
                            Err(e) => throttle.warn(&log, &format!("cannot publish: {e}"), now),
                        }
                    }
                    Some(LinkEvent::Problem(m)) => {
                        problems += 1;
                        throttle.warn(&log, &format!("{m} ({problems} problems, {published} readings so far)"), now);
                    }
                    Some(LinkEvent::Disconnected(m)) => {
                        problems += 1;
                        throttle.warn(&log, &format!("glove disconnected: {m}"), now);
                    }
                }
            }
        }
    }
    stop.store(true, Ordering::Relaxed);
    let _ = port_thread.join();
    ros_info!(
        log,
        "shutting down after {} readings, {} problems",
        published,
        problems
    );
    Ok(())
}
