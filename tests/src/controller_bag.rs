//! What the controller replay tests (`steady_hand_replay`, `surgery_replay`) share to write their
//! input bags and to set up the controller and its replica the same way.

use std::path::Path;

use rpq_bag::writer::{BagWriter, TopicSpec};
use rpq_bag::QosProfile;
use rpq_ros::msg::builtin_interfaces::Time;
use rpq_ros::msg::geometry_msgs::WrenchStamped;
use rpq_ros::msg::sensor_msgs::JointState;
use rpq_ros::msg::RosMessage;
use rpq_ros::params::Params;
use steady_hand::settings::{controller_declarations, AdmittanceControllerParams};

/// Log time of bag time 0 [ns since the epoch] (late 2026).
pub const T0: u64 = 1_795_000_000_000_000_000;

/// Log time [ns] of bag time `t` [s].
pub fn log_ns(t: f64) -> u64 {
    T0 + (t * 1e9).round() as u64
}

/// Header stamp of bag time `t` [s].
pub fn stamp(t: f64) -> Time {
    let n = log_ns(t);
    Time {
        sec: (n / 1_000_000_000) as i32,
        nanosec: (n % 1_000_000_000) as u32,
    }
}

/// `admittance_controller`'s parameters: `config/admittance_controller.yaml`, then `extra_yaml`
/// (a parameter file's text) on top.
pub fn controller_params(extra_yaml: &str) -> AdmittanceControllerParams {
    let config =
        std::fs::read_to_string(crate::repo_root().join("config/admittance_controller.yaml"))
            .unwrap();
    let p = Params::resolve(
        &controller_declarations(),
        "/admittance_controller",
        &[("config", &config), ("replay", extra_yaml)],
        &[],
    )
    .unwrap();
    AdmittanceControllerParams::load(&p).unwrap()
}

/// A new bag in `dir` with the controller's inputs `/wrench` and `/joint_states` (rclcpp's
/// default QoS) and one latched topic `(name, type name, definition)`.
pub fn input_bag(dir: &Path, latched: (&str, &str, &str)) -> BagWriter {
    let mut w = BagWriter::create(dir).unwrap();
    for (topic, ty, def, qos) in [
        (
            "/wrench",
            WrenchStamped::TYPE_NAME,
            WrenchStamped::definition(),
            QosProfile::rclcpp_default(),
        ),
        (
            "/joint_states",
            JointState::TYPE_NAME,
            JointState::definition(),
            QosProfile::rclcpp_default(),
        ),
        (
            latched.0,
            latched.1,
            latched.2.to_string(),
            QosProfile::latched(),
        ),
    ] {
        w.add_topic(TopicSpec::new(topic, ty, &def).with_qos(vec![qos]))
            .unwrap();
    }
    w
}

/// The largest absolute difference between two vectors' elements.
pub fn max_abs_diff(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}
