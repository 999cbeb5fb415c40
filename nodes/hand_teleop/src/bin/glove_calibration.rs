//! `glove_calibration`: calibrates the human hand model on request.
//!
//! ```text
//! glove_calibration --ros-args --params-file config/glove_calibration.yaml
//! ```
//!
//! | interface | type | behaviour |
//! |---|---|---|
//! | srv `~/calibrate` | `rpq_interfaces/CalibrateGlove` | reads `data_file` inside `data_directory` (`*.csv`: `pose,finger,s0,s1,s2,s3,x,y,z`; `*.mcap` or a rosbag2 directory, see `hand_teleop::bag_input`), calibrates from `initial_model_file`, saves the YAML as `output_file` (default: the parameter `output_file`) inside `output_directory`, answers with the figures; names outside the directories, special files and non-finite results are refused (`success: false`), see `hand_teleop::calibration` |
//! | pub `~/report` | `std_msgs/String` | latched: the text report of the last calibration |
//!
//! A calibration runs on a worker thread, so the node keeps answering while it works (a
//! 5,000-row calibration takes seconds); a request that arrives meanwhile is refused at once
//! with `success: false` and a message saying what is being calibrated and since when.

use std::error::Error;
use std::pin::pin;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use futures::StreamExt;
use hand_teleop::calibration::CalibrationService;
use hand_teleop::settings;
use rpq_hand::HandModel;
use rpq_ros::interfaces::rpq_interfaces::srv::{CalibrateGlove, CalibrateGloveResponse};
use rpq_ros::msg::std_msgs::String as StringMsg;
use rpq_ros::run::NodeStart;
use rpq_ros::{qos, ros_info, ros_warn};

fn main() -> ExitCode {
    rpq_ros::run_node(
        settings::CALIBRATION_NODE,
        &settings::calibration_declarations(),
        run,
    )
}

async fn run(start: NodeStart) -> Result<(), Box<dyn Error>> {
    let (mut node, shutdown, _, log) = start.into_parts();
    let p = settings::GloveCalibrationParams::from_params(node.params())?;
    let initial = HandModel::from_yaml_file(&p.initial_model_file)?;
    let service = CalibrationService::new(initial, &p)?;
    let report_pub = node.publisher::<StringMsg>(settings::REPORT_TOPIC, qos::latched())?;
    let srv = node.service::<CalibrateGlove>(settings::CALIBRATE_SERVICE)?;
    let mut requests = pin!(srv.receive_request_stream());
    match service.data_directory() {
        Some(d) if d.is_dir() => ros_info!(log, "request data files are read from {}", d.display()),
        Some(d) => ros_warn!(
            log,
            "data_directory {} does not exist: ~/calibrate is refused until it is created",
            d.display()
        ),
        None => ros_warn!(
            log,
            "data_directory is not set: ~/calibrate reads no files and is refused"
        ),
    }
    match service.output_directory() {
        Some(d) => ros_info!(log, "calibrated models are saved in {}", d.display()),
        None => ros_info!(
            log,
            "output_directory is not set: calibrated models are not saved"
        ),
    }
    ros_info!(log, "glove_calibration ready");
    let service = Arc::new(service);
    // The calibration in progress: its worker, and (request id, data file, start) apart, so
    // that the request branch can read them while the worker branch is polled.
    let mut worker: Option<tokio::task::JoinHandle<CalibrateGloveResponse>> = None;
    let mut current = None;
    loop {
        tokio::select! {
            _ = shutdown.wait() => break,
            done = async { worker.as_mut().expect("guarded by the branch condition").await }, if worker.is_some() => {
                worker = None;
                let Some((id, _, _)) = current.take() else { continue };
                let resp = done.unwrap_or_else(|e| CalibrateGloveResponse {
                    success: false,
                    message: format!("the calibration stopped: {e}"),
                    ..Default::default()
                });
                if resp.success {
                    ros_info!(log, "{}; saved {:?}", resp.message, resp.saved_file);
                    let _ = report_pub.publish(StringMsg { data: resp.report.clone() });
                } else {
                    ros_warn!(log, "calibration failed: {}", resp.message);
                }
                for line in resp.report.lines().filter(|l| l.contains("WARNING")) {
                    ros_warn!(log, "{}", line.trim());
                }
                if let Err(e) = srv.async_send_response(id, resp).await {
                    ros_warn!(log, "cannot answer ~/calibrate: {e}");
                }
            }
            item = requests.next() => {
                match item {
                    Some(Ok((id, req))) => {
                        if let Some((_, file, since)) = &current {
                            let file: &String = file;
                            let since: &Instant = since;
                            let resp = CalibrateGloveResponse {
                                success: false,
                                message: format!(
                                    "busy: calibrating from {file:?} since {:.1} s; call again when it is done",
                                    since.elapsed().as_secs_f64()
                                ),
                                ..Default::default()
                            };
                            ros_warn!(log, "~/calibrate refused: {}", resp.message);
                            if let Err(e) = srv.async_send_response(id, resp).await {
                                ros_warn!(log, "cannot answer ~/calibrate: {e}");
                            }
                            continue;
                        }
                        // {:?}: a name with control characters cannot forge log lines.
                        ros_info!(log, "calibrating from {:?}", req.data_file);
                        let svc = Arc::clone(&service);
                        current = Some((id, req.data_file.clone(), Instant::now()));
                        worker = Some(tokio::task::spawn_blocking(move || svc.calibrate(&req)));
                    }
                    Some(Err(e)) => ros_warn!(log, "bad request: {}", e),
                    None => return Err("the request stream ended".into()),
                }
            }
        }
    }
    Ok(())
}
