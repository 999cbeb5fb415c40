//! `simulated_glove`: publishes a synthetic raw data-glove stream on `glove/raw`
//! (`rpq_interfaces/GloveReading`): every finger sensor sweeps its `sensor_range` of the
//! hand model sinusoidally (`period_s`), at `rate_hz`.
//!
//! ```text
//! simulated_glove --ros-args --params-file config/hand_mapping.yaml
//! ```

use std::error::Error;
use std::time::{Duration, Instant, SystemTime};

use hand_teleop::{convert, settings};
use rpq_hand::HandModel;
use rpq_ros::interfaces::rpq_interfaces::msg::GloveReading;
use rpq_ros::msg::builtin_interfaces::Time;
use rpq_ros::node::RosNode;
use rpq_ros::shutdown::Shutdown;
use rpq_ros::{qos, ros_info, ros_warn};

struct Fatal(Box<dyn Error>);

impl std::fmt::Debug for Fatal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "simulated_glove: {}", self.0)
    }
}

fn main() -> Result<(), Fatal> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Fatal(e.into()))?;
    rt.block_on(run()).map_err(Fatal)
}

async fn run() -> Result<(), Box<dyn Error>> {
    let shutdown = Shutdown::install()?;
    let (mut node, extra) =
        RosNode::from_process(settings::GLOVE_NODE, &settings::glove_declarations())?;
    let log = node.logger().clone();
    if !extra.is_empty() {
        ros_warn!(
            log,
            "ignoring arguments outside --ros-args: {}",
            extra.join(" ")
        );
    }
    let p = node.params();
    let model = HandModel::from_yaml_file(p.str("model_file")?)?;
    let rate = p.f64("rate_hz")?;
    let period = p.f64("period_s")?;
    let frame = p.str("frame_id")?.to_string();
    let publisher = node.publisher::<GloveReading>(settings::GLOVE_TOPIC, qos::default())?;
    let mut tick = tokio::time::interval(Duration::from_secs_f64(1.0 / rate));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let start = Instant::now();
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
                let raw = settings::simulated_reading(&model, start.elapsed().as_secs_f64(), period);
                let stamp = Time::try_from(SystemTime::now()).unwrap_or_default();
                if let Err(e) = publisher.publish(convert::glove_reading(stamp, &frame, &raw)) {
                    ros_warn!(log, "cannot publish: {}", e);
                }
            }
        }
    }
    Ok(())
}
