//! `netft_emulator`: an emulated ATI Net F/T answering the RDT protocol on UDP, with optional
//! faults (lost, reordered and late packets, a sensor that falls silent, a bad status word), for
//! tests and for trying `netft_driver` without the hardware (`steady_hand::netft::Emulator`).
//!
//! ```text
//! netft_emulator --ros-args -p bind:=127.0.0.1:49152 -p wrench:="[0.0, 0.0, 2.0, 0.0, 0.0, 0.0]"
//! ```
//!
//! It is a ROS node only so that launch files can start and configure it like the others; it
//! publishes nothing. On exit it prints what it did (requests, packets sent, dropped,
//! reordered, late).

use std::error::Error;
use std::process::ExitCode;

use rpq_ros::ros_info;
use rpq_ros::run::NodeStart;
use steady_hand::netft::{Emulator, EmulatorConfig};
use steady_hand::settings::{self, netft_emulator::NetftEmulatorParams};
use steady_hand::NodeError;

fn main() -> ExitCode {
    rpq_ros::run_node(
        settings::NETFT_EMULATOR_NODE,
        &settings::netft_emulator::declarations(),
        run,
    )
}

async fn run(start: NodeStart) -> Result<(), Box<dyn Error>> {
    let (node, shutdown, _clock, log) = start.into_parts();
    let p = NetftEmulatorParams::from_params(node.params())?;
    let cfg = EmulatorConfig {
        rate: p.rate,
        wrench: p.wrench,
        wobble: (p.wobble_amplitude, p.wobble_frequency),
        counts_per_force: p.counts_per_force,
        counts_per_torque: p.counts_per_torque,
        loss: p.loss,
        reorder: p.reorder,
        late: p.late,
        late_delay: p.late_delay,
        silent_after: (p.silent_after > 0.0).then_some(p.silent_after),
        status: u32::try_from(p.status_word).unwrap_or(u32::MAX),
        seed: p.seed as u64,
    };
    let emulator = Emulator::start(&p.bind, cfg)
        .map_err(|e| NodeError::config("bind", format!("`{}`: {e}", p.bind)))?;
    ros_info!(log, "netft_emulator ready on {}", emulator.local_addr());
    shutdown.wait().await;
    let r = emulator.stop();
    ros_info!(
        log,
        "shutting down: {} requests, {} packets sent, {} dropped, {} reordered, {} late",
        r.requests,
        r.sent,
        r.dropped,
        r.reordered,
        r.late
    );
    Ok(())
}
