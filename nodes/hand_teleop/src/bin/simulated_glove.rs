//! `simulated_glove`: publishes a synthetic raw data-glove stream on `glove/raw`
//! (`rpq_interfaces/GloveReading`): every finger sensor sweeps its `sensor_range` of the
//! hand model sinusoidally (`period`), at `publish_rate`.
//!
//! ```text
//! simulated_glove --ros-args --params-file config/simulated_glove.yaml
//! ```

use std::error::Error;
use std::process::ExitCode;
use std::time::Duration;

use hand_teleop::{convert, settings};
use rpq_hand::HandModel;
use rpq_ros::interfaces::rpq_interfaces::msg::GloveReading;
use rpq_ros::run::NodeStart;
use rpq_ros::{qos, ros_info, ros_warn};

fn main() -> ExitCode {
    rpq_ros::run_node(settings::GLOVE_NODE, &settings::glove_declarations(), run)
}

async fn run(start: NodeStart) -> Result<(), Box<dyn Error>> {
    let (mut node, shutdown, clock, log) = start.into_parts();
    let p = settings::SimulatedGloveParams::from_params(node.params())?;
    let model = HandModel::from_yaml_file(&p.model_file)?;
    let rate = p.publish_rate;
    let period = p.period;
    let frame = p.frame_id.clone();
    let publisher = node.publisher::<GloveReading>(settings::GLOVE_TOPIC, qos::default())?;
    let mut tick = tokio::time::interval(Duration::from_secs_f64(1.0 / rate));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    ros_info!(
        log,
        "simulated_glove ready: {} Hz on {}",
        rate,
        settings::GLOVE_TOPIC
    );
    loop {
        tokio::select! {
            _ = shutdown.wait() => break,
            _ = tick.tick() => {
                let raw = settings::simulated_reading(&model, clock.seconds(), period);
                let stamp = clock.now();
                if let Err(e) = publisher.publish(convert::glove_reading(stamp, &frame, &raw)) {
                    ros_warn!(log, "cannot publish: {}", e);
                }
            }
        }
    }
    Ok(())
}
