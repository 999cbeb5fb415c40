//! QoS profiles as rosbag2 stores them: in `metadata.yaml` (`offered_qos_profiles` of each
//! topic) and in the `offered_qos_profiles` metadata string of each MCAP channel.
//!
//! rosbag2 metadata version 9 (Jazzy) writes policies by name (`keep_last`, `reliable`, ...);
//! versions up to 8 wrote the numeric rmw enum values and stored the whole list as one YAML
//! string. Both spellings are read; names are written.
//!
//! ```
//! use rpq_bag::qos::{profiles_from_yaml, profiles_to_yaml, QosProfile, Reliability};
//!
//! let text = profiles_to_yaml(&[QosProfile::sensor_data()]).unwrap();
//! assert!(text.contains("reliability: best_effort"));
//! let back = profiles_from_yaml(&text).unwrap();
//! assert_eq!(back[0].reliability, Reliability::BestEffort);
//! ```

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::{BagError, Result};

macro_rules! policy_enum {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident = $num:literal => $text:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$vdoc])* $variant),+
        }

        impl $name {
            /// The name rosbag2 (metadata version 9) and rmw use for this policy value.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Self::$variant => $text),+
                }
            }

            /// The numeric rmw enum value (what metadata versions up to 8 stored).
            pub fn as_rmw(self) -> i64 {
                match self {
                    $(Self::$variant => $num),+
                }
            }

            /// Parses a policy name; anything unrecognised is `Unknown`, as rmw does.
            pub fn from_name(text: &str) -> Self {
                match text.trim().to_ascii_lowercase().as_str() {
                    $($text => Self::$variant,)+
                    _ => Self::Unknown,
                }
            }

            /// Maps a numeric rmw enum value; anything unrecognised is `Unknown`.
            pub fn from_rmw(value: i64) -> Self {
                match value {
                    $($num => Self::$variant,)+
                    _ => Self::Unknown,
                }
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
                Ok(match NameOrNumber::deserialize(d)? {
                    NameOrNumber::Number(n) => Self::from_rmw(n),
                    NameOrNumber::Name(text) => Self::from_name(&text),
                })
            }
        }
    };
}

#[derive(Deserialize)]
#[serde(untagged)]
enum NameOrNumber {
    Number(i64),
    Name(String),
}

policy_enum!(
    /// History policy.
    History {
        /// Middleware default.
        SystemDefault = 0 => "system_default",
        /// Keep the last `depth` samples.
        KeepLast = 1 => "keep_last",
        /// Keep all samples.
        KeepAll = 2 => "keep_all",
        /// Not known (or not representable).
        Unknown = 3 => "unknown",
    }
);

policy_enum!(
    /// Reliability policy.
    Reliability {
        /// Middleware default.
        SystemDefault = 0 => "system_default",
        /// Reliable delivery.
        Reliable = 1 => "reliable",
        /// Best-effort delivery.
        BestEffort = 2 => "best_effort",
        /// Not known.
        Unknown = 3 => "unknown",
        /// Match whatever the peers offer.
        BestAvailable = 4 => "best_available",
    }
);

policy_enum!(
    /// Durability policy.
    Durability {
        /// Middleware default.
        SystemDefault = 0 => "system_default",
        /// Late joiners receive the last samples ("latched").
        TransientLocal = 1 => "transient_local",
        /// Only live samples.
        Volatile = 2 => "volatile",
        /// Not known.
        Unknown = 3 => "unknown",
        /// Match whatever the peers offer.
        BestAvailable = 4 => "best_available",
    }
);

policy_enum!(
    /// Liveliness policy.
    Liveliness {
        /// Middleware default.
        SystemDefault = 0 => "system_default",
        /// Asserted automatically by the middleware.
        Automatic = 1 => "automatic",
        /// Asserted by the publishing node (deprecated in rmw).
        ManualByNode = 2 => "manual_by_node",
        /// Asserted per topic by the application.
        ManualByTopic = 3 => "manual_by_topic",
        /// Not known.
        Unknown = 4 => "unknown",
        /// Match whatever the peers offer.
        BestAvailable = 5 => "best_available",
    }
);

/// A duration in a QoS profile, as rmw's `rmw_time_t` (seconds + nanoseconds).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct QosTime {
    /// Whole seconds.
    pub sec: u64,
    /// Nanoseconds on top of `sec`.
    pub nsec: u64,
}

impl QosTime {
    /// `RMW_DURATION_INFINITE` (`i64::MAX` nanoseconds), which Jazzy reports for unset
    /// deadline, lifespan and lease duration of rclcpp's default profiles.
    pub const INFINITE: QosTime = QosTime {
        sec: 9_223_372_036,
        nsec: 854_775_807,
    };

    /// `RMW_DURATION_UNSPECIFIED` (zero): the middleware default.
    pub const UNSPECIFIED: QosTime = QosTime { sec: 0, nsec: 0 };
}

/// One offered QoS profile of a topic, in the field order rosbag2 writes.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct QosProfile {
    /// History policy.
    pub history: History,
    /// History depth (meaningful for `keep_last`).
    pub depth: u64,
    /// Reliability policy.
    pub reliability: Reliability,
    /// Durability policy.
    pub durability: Durability,
    /// Deadline period.
    pub deadline: QosTime,
    /// Sample lifespan.
    pub lifespan: QosTime,
    /// Liveliness policy.
    pub liveliness: Liveliness,
    /// Liveliness lease duration.
    pub liveliness_lease_duration: QosTime,
    /// Whether ROS name mangling (`rt/` prefixes) is bypassed.
    pub avoid_ros_namespace_conventions: bool,
}

impl QosProfile {
    /// rclcpp's default publisher profile as a Jazzy recorder sees it: reliable, volatile,
    /// keep-last 10, automatic liveliness, infinite durations.
    pub fn rclcpp_default() -> Self {
        Self {
            history: History::KeepLast,
            depth: 10,
            reliability: Reliability::Reliable,
            durability: Durability::Volatile,
            deadline: QosTime::INFINITE,
            lifespan: QosTime::INFINITE,
            liveliness: Liveliness::Automatic,
            liveliness_lease_duration: QosTime::INFINITE,
            avoid_ros_namespace_conventions: false,
        }
    }

    /// rclcpp's sensor-data profile: best effort, keep-last 5.
    pub fn sensor_data() -> Self {
        Self {
            depth: 5,
            reliability: Reliability::BestEffort,
            ..Self::rclcpp_default()
        }
    }

    /// A latched profile (`robot_description` style): reliable, transient-local, keep-last 1.
    pub fn latched() -> Self {
        Self {
            depth: 1,
            durability: Durability::TransientLocal,
            ..Self::rclcpp_default()
        }
    }
}

/// Serialises profiles as the YAML text rosbag2 stores in a channel's
/// `offered_qos_profiles` metadata (a block sequence; empty text for no profiles).
pub fn profiles_to_yaml(profiles: &[QosProfile]) -> Result<String> {
    if profiles.is_empty() {
        return Ok(String::new());
    }
    serde_yaml::to_string(profiles).map_err(|e| BagError::Yaml {
        what: "offered_qos_profiles".into(),
        reason: e.to_string(),
    })
}

/// Parses the `offered_qos_profiles` YAML text of a channel or of a version <= 8
/// `metadata.yaml` (numeric or named policies). Empty text means no profiles.
pub fn profiles_from_yaml(text: &str) -> Result<Vec<QosProfile>> {
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    let parsed: Option<Vec<QosProfile>> =
        serde_yaml::from_str(text).map_err(|e| BagError::Yaml {
            what: "offered_qos_profiles".into(),
            reason: e.to_string(),
        })?;
    Ok(parsed.unwrap_or_default())
}

/// serde helper for `metadata.yaml`: `offered_qos_profiles` is a list in version 9 and a YAML
/// string holding the list in earlier versions.
pub(crate) fn deserialize_profiles<'de, D: Deserializer<'de>>(
    d: D,
) -> std::result::Result<Vec<QosProfile>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum ListOrText {
        List(Vec<QosProfile>),
        Text(String),
    }
    match Option::<ListOrText>::deserialize(d)? {
        None => Ok(Vec::new()),
        Some(ListOrText::List(list)) => Ok(list),
        Some(ListOrText::Text(text)) => profiles_from_yaml(&text).map_err(serde::de::Error::custom),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_numbers_agree_with_rmw() {
        // rmw/types.h: RMW_QOS_POLICY_*; spot-check the values rosbag2 v8 files carry.
        assert_eq!(Reliability::from_rmw(2), Reliability::BestEffort);
        assert_eq!(Durability::from_rmw(1), Durability::TransientLocal);
        assert_eq!(Durability::from_rmw(2), Durability::Volatile);
        assert_eq!(Liveliness::from_rmw(1), Liveliness::Automatic);
        assert_eq!(History::from_name("KEEP_ALL"), History::KeepAll);
        assert_eq!(History::from_name("sideways"), History::Unknown);
        for h in [History::SystemDefault, History::KeepLast, History::KeepAll] {
            assert_eq!(History::from_rmw(h.as_rmw()), h);
            assert_eq!(History::from_name(h.as_str()), h);
        }
    }

    #[test]
    fn v8_numeric_profile_text_parses() {
        // Shape of a version-8 (Humble/Iron) channel string.
        let text = "- history: 1\n  depth: 10\n  reliability: 1\n  durability: 2\n  \
                    deadline:\n    sec: 0\n    nsec: 0\n  lifespan:\n    sec: 0\n    nsec: 0\n  \
                    liveliness: 1\n  liveliness_lease_duration:\n    sec: 0\n    nsec: 0\n  \
                    avoid_ros_namespace_conventions: false\n";
        let p = profiles_from_yaml(text).unwrap();
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].history, History::KeepLast);
        assert_eq!(p[0].reliability, Reliability::Reliable);
        assert_eq!(p[0].durability, Durability::Volatile);
        assert_eq!(p[0].deadline, QosTime::UNSPECIFIED);
    }

    #[test]
    fn round_trip_named() {
        let profiles = vec![
            QosProfile::rclcpp_default(),
            QosProfile::latched(),
            QosProfile::sensor_data(),
        ];
        let text = profiles_to_yaml(&profiles).unwrap();
        assert!(text.contains("history: keep_last"));
        assert!(text.contains("durability: transient_local"));
        assert!(text.contains("sec: 9223372036"));
        assert_eq!(profiles_from_yaml(&text).unwrap(), profiles);
        assert!(profiles_from_yaml("").unwrap().is_empty());
        assert!(profiles_to_yaml(&[]).unwrap().is_empty());
    }

    #[test]
    fn malformed_profile_text_is_an_error() {
        assert!(matches!(
            profiles_from_yaml("- history: keep_last\n  depth: ten\n"),
            Err(BagError::Yaml { .. })
        ));
        assert!(profiles_from_yaml("[unclosed").is_err());
    }
}
