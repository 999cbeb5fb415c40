//! `metadata.yaml`: the `rosbag2_bagfile_information` document of a bag directory.
//!
//! Written in version 9 (Jazzy) layout; versions 4 to 9 are read (fields a version lacks
//! take their empty defaults). The same document, without the top-level key, is what
//! rosbag2 stores as `serialized_metadata` in the MCAP metadata record named `rosbag2`.
//!
//! ```
//! use rpq_bag::metadata::BagMetadata;
//!
//! let text = "rosbag2_bagfile_information:\n  version: 9\n  storage_identifier: mcap\n  \
//!     duration:\n    nanoseconds: 5\n  starting_time:\n    nanoseconds_since_epoch: 10\n  \
//!     message_count: 0\n  topics_with_message_count: []\n  relative_file_paths: [b_0.mcap]\n";
//! let meta = BagMetadata::from_yaml_str(text).unwrap();
//! assert_eq!(meta.duration.nanoseconds, 5);
//! assert!(meta.files.is_empty());
//! ```

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::qos::{deserialize_profiles, QosProfile};
use crate::{BagError, Result};

/// File name of the metadata document inside a bag directory.
pub const METADATA_FILE: &str = "metadata.yaml";
/// The metadata version this crate writes (rosbag2 Jazzy).
pub const METADATA_VERSION: u32 = 9;
/// `storage_identifier` of MCAP bags.
pub const STORAGE_MCAP: &str = "mcap";
/// `serialization_format` of every topic this crate writes.
pub const SERIALIZATION_CDR: &str = "cdr";

/// A duration in nanoseconds (`duration: {nanoseconds: N}`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Nanoseconds {
    /// Length in nanoseconds.
    pub nanoseconds: u64,
}

/// A point in time (`starting_time: {nanoseconds_since_epoch: N}`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EpochNanoseconds {
    /// Nanoseconds since the Unix epoch.
    pub nanoseconds_since_epoch: u64,
}

/// `topic_metadata` of one topic.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TopicMetadata {
    /// Fully qualified topic name, e.g. `/joint_states`.
    pub name: String,
    /// Message type, e.g. `sensor_msgs/msg/JointState`.
    #[serde(rename = "type")]
    pub type_name: String,
    /// Payload encoding, `cdr` for ROS 2.
    pub serialization_format: String,
    /// QoS profiles offered by the recorded publishers.
    #[serde(default, deserialize_with = "deserialize_profiles")]
    pub offered_qos_profiles: Vec<QosProfile>,
    /// `RIHS01_<sha256>` type description hash, or empty when unknown.
    #[serde(default)]
    pub type_description_hash: String,
}

/// One entry of `topics_with_message_count`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TopicWithCount {
    /// The topic.
    pub topic_metadata: TopicMetadata,
    /// Messages recorded on it.
    pub message_count: u64,
}

/// One entry of `files`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileInformation {
    /// File name relative to the bag directory.
    pub path: String,
    /// Log time of the file's first message.
    pub starting_time: EpochNanoseconds,
    /// Last minus first log time.
    pub duration: Nanoseconds,
    /// Messages in the file.
    pub message_count: u64,
}

/// The `rosbag2_bagfile_information` document, in the field order rosbag2 writes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BagMetadata {
    /// Metadata format version (9 for Jazzy).
    pub version: u32,
    /// Storage plugin, `mcap` or `sqlite3`.
    pub storage_identifier: String,
    /// Last minus first log time over the whole bag.
    pub duration: Nanoseconds,
    /// Log time of the first message.
    pub starting_time: EpochNanoseconds,
    /// Messages in the bag.
    pub message_count: u64,
    /// Every topic with its message count.
    pub topics_with_message_count: Vec<TopicWithCount>,
    /// File compression format (empty: none).
    #[serde(default)]
    pub compression_format: String,
    /// File compression mode: empty, `file` or `message`.
    #[serde(default)]
    pub compression_mode: String,
    /// Storage files, relative to the bag directory.
    pub relative_file_paths: Vec<String>,
    /// Per-file statistics (version >= 5).
    #[serde(default)]
    pub files: Vec<FileInformation>,
    /// Free-form key/value data (written as `~` when empty, like rosbag2).
    #[serde(default)]
    pub custom_data: Option<BTreeMap<String, String>>,
    /// ROS distribution that wrote the bag (version >= 8).
    #[serde(default)]
    pub ros_distro: String,
}

#[derive(Serialize, Deserialize)]
struct MetadataDocument {
    rosbag2_bagfile_information: BagMetadata,
}

fn yaml_error(e: serde_yaml::Error) -> BagError {
    BagError::Yaml {
        what: METADATA_FILE.into(),
        reason: e.to_string(),
    }
}

impl BagMetadata {
    /// Parses a `metadata.yaml` document (with its `rosbag2_bagfile_information` key).
    pub fn from_yaml_str(text: &str) -> Result<Self> {
        let doc: MetadataDocument = serde_yaml::from_str(text).map_err(yaml_error)?;
        Ok(doc.rosbag2_bagfile_information)
    }

    /// Parses the bare document rosbag2 stores as `serialized_metadata` in the MCAP file.
    pub fn from_serialized_str(text: &str) -> Result<Self> {
        serde_yaml::from_str(text).map_err(yaml_error)
    }

    /// Renders the `metadata.yaml` document.
    pub fn to_yaml_string(&self) -> Result<String> {
        serde_yaml::to_string(&MetadataDocument {
            rosbag2_bagfile_information: self.clone(),
        })
        .map_err(yaml_error)
    }

    /// Renders the bare document for the MCAP `rosbag2` metadata record.
    pub fn to_serialized_string(&self) -> Result<String> {
        serde_yaml::to_string(self).map_err(yaml_error)
    }

    /// Looks up a topic's entry by name.
    pub fn topic(&self, name: &str) -> Option<&TopicWithCount> {
        self.topics_with_message_count
            .iter()
            .find(|t| t.topic_metadata.name == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qos::{Durability, Reliability};

    /// Layout of a Jazzy `ros2 bag record -s mcap` metadata.yaml (values typed in by hand).
    const JAZZY_STYLE: &str = r#"
rosbag2_bagfile_information:
  version: 9
  storage_identifier: mcap
  duration:
    nanoseconds: 2099784171
  starting_time:
    nanoseconds_since_epoch: 1716819588463371413
  message_count: 22
  topics_with_message_count:
    - topic_metadata:
        name: /chatter
        type: std_msgs/msg/String
        serialization_format: cdr
        offered_qos_profiles:
          - history: keep_last
            depth: 7
            reliability: best_effort
            durability: transient_local
            deadline:
              sec: 9223372036
              nsec: 854775807
            lifespan:
              sec: 9223372036
              nsec: 854775807
            liveliness: automatic
            liveliness_lease_duration:
              sec: 9223372036
              nsec: 854775807
            avoid_ros_namespace_conventions: false
        type_description_hash: RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18
      message_count: 22
  compression_format: ""
  compression_mode: ""
  relative_file_paths:
    - rosbag2_2024_05_27-16_19_48_0.mcap
  files:
    - path: rosbag2_2024_05_27-16_19_48_0.mcap
      starting_time:
        nanoseconds_since_epoch: 1716819588463371413
      duration:
        nanoseconds: 2099784171
      message_count: 22
  custom_data: ~
  ros_distro: jazzy
"#;

    #[test]
    fn parses_jazzy_layout_and_round_trips() {
        let m = BagMetadata::from_yaml_str(JAZZY_STYLE).unwrap();
        assert_eq!(m.version, 9);
        assert_eq!(m.message_count, 22);
        assert_eq!(m.custom_data, None);
        let t = m.topic("/chatter").unwrap();
        assert_eq!(t.topic_metadata.type_name, "std_msgs/msg/String");
        let q = &t.topic_metadata.offered_qos_profiles[0];
        assert_eq!(q.depth, 7);
        assert_eq!(q.reliability, Reliability::BestEffort);
        assert_eq!(q.durability, Durability::TransientLocal);
        let again = BagMetadata::from_yaml_str(&m.to_yaml_string().unwrap()).unwrap();
        assert_eq!(again, m);
        let bare = BagMetadata::from_serialized_str(&m.to_serialized_string().unwrap()).unwrap();
        assert_eq!(bare, m);
    }

    #[test]
    fn version_8_string_profiles_are_read() {
        let text = "rosbag2_bagfile_information:\n  version: 8\n  storage_identifier: mcap\n  \
            duration: {nanoseconds: 1}\n  starting_time: {nanoseconds_since_epoch: 2}\n  \
            message_count: 1\n  topics_with_message_count:\n    - topic_metadata:\n        \
            name: /a\n        type: std_msgs/msg/String\n        serialization_format: cdr\n        \
            offered_qos_profiles: \"- history: 3\\n  depth: 0\\n  reliability: 2\\n  durability: 2\\n  \
            deadline:\\n    sec: 0\\n    nsec: 0\\n  lifespan:\\n    sec: 0\\n    nsec: 0\\n  \
            liveliness: 1\\n  liveliness_lease_duration:\\n    sec: 0\\n    nsec: 0\\n  \
            avoid_ros_namespace_conventions: false\"\n        type_description_hash: \"\"\n      \
            message_count: 1\n  relative_file_paths: [a.mcap]\n";
        let m = BagMetadata::from_yaml_str(text).unwrap();
        let q = &m.topics_with_message_count[0]
            .topic_metadata
            .offered_qos_profiles;
        assert_eq!(q.len(), 1);
        assert_eq!(q[0].reliability, Reliability::BestEffort);
        assert_eq!(m.ros_distro, "");
    }

    #[test]
    fn broken_documents_are_errors() {
        assert!(BagMetadata::from_yaml_str("").is_err());
        assert!(BagMetadata::from_yaml_str("rosbag2_bagfile_information: 3").is_err());
        let missing_count = JAZZY_STYLE.replace("  message_count: 22\n  topics", "  topics");
        assert!(matches!(
            BagMetadata::from_yaml_str(&missing_count),
            Err(BagError::Yaml { .. })
        ));
    }
}
