//! QoS presets that mirror rclcpp's, so our endpoints match rclcpp/rclpy peers.
//!
//! Publisher and subscription must be compatible: a reliable subscription does not match a
//! best-effort publisher, and a transient-local subscription does not match a volatile publisher.
//! Using the same preset on both ends, as rclcpp code does, always matches.
//!
//! Unlike `ros2-client`'s own default subscription QoS (best-effort, depth 1), every preset here
//! that rclcpp makes reliable is reliable.
//!
//! ```
//! use rpq_ros::qos;
//! use ros2_client::qos::{Durability, History};
//! assert_eq!(qos::default().history, History::KeepLast { depth: 10 });
//! assert_eq!(qos::latched().durability, Durability::TransientLocal);
//! ```

use std::time::Duration;

use ros2_client::qos::{Durability, History, Liveliness, QosProfile, Reliability, WhenFull};

/// Reliable, volatile, keep-last `depth`: rclcpp's `rclcpp::QoS(depth)`.
pub const fn reliable(depth: usize) -> QosProfile {
    QosProfile {
        reliability: Reliability::Reliable {
            when_full: WhenFull::DEFAULT,
        },
        durability: Durability::Volatile,
        history: History::KeepLast { depth },
        deadline: None,
        lifespan: None,
        liveliness: Liveliness::Automatic,
        liveliness_lease: None,
    }
}

/// Reliable, volatile, keep-last 10: rclcpp's `rclcpp::QoS(10)` / `rmw_qos_profile_default`,
/// what `create_publisher<T>("topic", 10)` gives. The default for topics.
pub const fn default() -> QosProfile {
    reliable(10)
}

/// Best-effort, volatile, keep-last 5: rclcpp's `rclcpp::SensorDataQoS()` /
/// `rmw_qos_profile_sensor_data`. For high-rate streams where the newest sample matters.
pub const fn sensor_data() -> QosProfile {
    reliable(5).reliability(Reliability::BestEffort)
}

/// Reliable, transient-local, keep-last 1: rclcpp's `rclcpp::QoS(1).transient_local()`, as
/// `robot_state_publisher` uses for `/robot_description`. A late-joining subscriber with the
/// same QoS receives the last sample.
///
/// RustDDS differs from Fast DDS in one detail: its transient-local writer also sends the stored
/// sample to a late *volatile* subscriber (it decides by the writer's durability, not the
/// reader's), where an rclcpp publisher would send that subscriber only new samples.
pub const fn latched() -> QosProfile {
    reliable(1).durability(Durability::TransientLocal)
}

/// Reliable, volatile, keep-last 10: rclcpp's `rclcpp::ServicesQoS()` /
/// `rmw_qos_profile_services_default`, for both the request and the reply topic of a service.
pub const fn services() -> QosProfile {
    reliable(10)
}

/// Reliable, volatile, keep-last 1000: rclcpp's `rclcpp::ParametersQoS()` /
/// `rmw_qos_profile_parameters`, for the parameter services.
pub const fn parameters() -> QosProfile {
    reliable(1000)
}

/// Reliable, volatile, keep-last 1000: rclcpp's `rclcpp::ParameterEventsQoS()` /
/// `rmw_qos_profile_parameter_events`, for `/parameter_events`.
pub const fn parameter_events() -> QosProfile {
    reliable(1000)
}

/// Reliable, transient-local, keep-last 1000, lifespan 10 s: rcl's
/// `rcl_qos_profile_rosout_default`, for `/rosout`.
pub const fn rosout() -> QosProfile {
    reliable(1000)
        .durability(Durability::TransientLocal)
        .lifespan(Some(Duration::from_secs(10)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reliable_p(q: &QosProfile) -> bool {
        matches!(q.reliability, Reliability::Reliable { .. })
    }

    #[test]
    fn presets_match_rclcpp() {
        // (profile, reliable, transient_local, depth) as in rmw/qos_profiles.h and rclcpp/qos.hpp
        let table = [
            (default(), true, false, 10),
            (sensor_data(), false, false, 5),
            (latched(), true, true, 1),
            (services(), true, false, 10),
            (parameters(), true, false, 1000),
            (parameter_events(), true, false, 1000),
            (rosout(), true, true, 1000),
        ];
        for (q, rel, tl, depth) in table {
            assert_eq!(reliable_p(&q), rel, "{q:?}");
            assert_eq!(q.durability == Durability::TransientLocal, tl, "{q:?}");
            assert_eq!(q.history, History::KeepLast { depth }, "{q:?}");
        }
        assert_eq!(rosout().lifespan, Some(Duration::from_secs(10)));
    }

    #[test]
    fn subscription_default_differs_from_ros2_client() {
        // The reason this module exists: ros2-client subscribes best-effort depth 1 by default.
        let theirs = ros2_client::DEFAULT_SUBSCRIPTION_QOS;
        assert!(!reliable_p(&theirs));
        assert!(reliable_p(&default()));
    }
}
