//! `glove_calibration`: calibrates the human hand model on request.
//!
//! ```text
//! glove_calibration --ros-args --params-file config/glove_calibration.yaml
//! ```
//!
//! | interface | type | behaviour |
//! |---|---|---|
//! | srv `~/calibrate` | `rpq_interfaces/CalibrateGlove` | reads the data (`*.csv`: `pose,finger,s0,s1,s2,s3,x,y,z`; else a rosbag2, see `hand_teleop::bag_input`), calibrates from `initial_model_file`, saves the YAML, answers with the figures |
//! | pub `~/report` | `std_msgs/String` | latched: the text report of the last calibration |

use std::error::Error;
use std::pin::pin;
use std::process::ExitCode;

use futures::StreamExt;
use hand_teleop::settings;
use rpq_hand::{calib, CalibOptions, HandModel};
use rpq_ros::interfaces::rpq_interfaces::srv::{
    CalibrateGlove, CalibrateGloveRequest, CalibrateGloveResponse,
};
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

fn calibrate(
    initial: &HandModel,
    cond: f64,
    default_out: &str,
    req: &CalibrateGloveRequest,
) -> CalibrateGloveResponse {
    let fail = |message: String| CalibrateGloveResponse {
        success: false,
        message,
        ..Default::default()
    };
    let samples = match hand_teleop::bag_input::load_samples(&req.data_file) {
        Ok(s) => s,
        Err(e) => return fail(e),
    };
    let opts = CalibOptions {
        cond_warn: cond,
        ..Default::default()
    };
    let (mut model, report) = match calib::calibrate(initial, &samples, &opts, |_| {}) {
        Ok(r) => r,
        Err(e) => return fail(e.to_string()),
    };
    let out = if req.output_file.is_empty() {
        default_out
    } else {
        &req.output_file
    };
    model.name = format!("calibrated from {}", req.data_file);
    let text = model.to_yaml_string(&format!(
        "calibrated by glove_calibration from {}",
        req.data_file
    ));
    if let Err(e) = std::fs::write(out, text) {
        return fail(format!("cannot save {out}: {e}"));
    }
    let converged = report.fingers.iter().all(|r| r.converged);
    CalibrateGloveResponse {
        success: converged,
        message: format!(
            "calibrated {} fingers from {} samples{}",
            report.fingers.len(),
            samples.len(),
            if converged {
                ""
            } else {
                "; a finger did not converge"
            }
        ),
        report: report.summary(),
        fingers: report
            .fingers
            .iter()
            .map(|r| r.finger.name().to_string())
            .collect(),
        rms_error: report.fingers.iter().map(|r| r.after.rms).collect(),
        max_error: report.fingers.iter().map(|r| r.after.max).collect(),
        condition_number: report.fingers.iter().map(|r| r.condition_number).collect(),
        saved_file: out.to_string(),
    }
}

async fn run(start: NodeStart) -> Result<(), Box<dyn Error>> {
    let (mut node, shutdown, _, log) = start.into_parts();
    let p = settings::GloveCalibrationParams::from_params(node.params())?;
    let initial = HandModel::from_yaml_file(&p.initial_model_file)?;
    let out = p.output_file.clone();
    let cond = p.condition_warning;
    let report_pub = node.publisher::<StringMsg>(settings::REPORT_TOPIC, qos::latched())?;
    let srv = node.service::<CalibrateGlove>(settings::CALIBRATE_SERVICE)?;
    let mut requests = pin!(srv.receive_request_stream());
    ros_info!(log, "glove_calibration ready");
    loop {
        tokio::select! {
            _ = shutdown.wait() => break,
            item = requests.next() => {
                match item {
                    Some(Ok((id, req))) => {
                        ros_info!(log, "calibrating from {}", req.data_file);
                        let resp = calibrate(&initial, cond, &out, &req);
                        if resp.success {
                            ros_info!(log, "{}; saved {}", resp.message, resp.saved_file);
                            let _ = report_pub.publish(StringMsg { data: resp.report.clone() });
                        } else {
                            ros_warn!(log, "calibration failed: {}", resp.message);
                        }
                        for line in resp.report.lines().filter(|l| l.contains("WARNING")) {
                            ros_warn!(log, "{}", line.trim());
                        }
                        let _ = srv.async_send_response(id, resp).await;
                    }
                    Some(Err(e)) => ros_warn!(log, "bad request: {}", e),
                    None => return Err("the request stream ended".into()),
                }
            }
        }
    }
    Ok(())
}
