//! rosbag2 bags in MCAP storage, without ROS: write them, read them, plan their replay.
//!
//! The file layer is generic over raw messages: a topic, its type name
//! (`sensor_msgs/msg/JointState`), the rosbag2 definition text of the type (`ros2msg`: the
//! `.msg` text followed by the definitions it depends on), and the CDR payload exactly as it
//! travels on the wire, 4-byte encapsulation header included.
//!
//! * [`BagWriter`] writes `<dir>/<dir-name>_0.mcap` (profile `ros2`, one schema per type,
//!   `cdr` channels carrying `offered_qos_profiles`) and `<dir>/metadata.yaml` (version 9),
//!   as `ros2 bag record -s mcap` on Jazzy does. It writes each chunk to disk once it holds
//!   768 KiB or is 1 s old ([`WriterOptions::chunk_size`], [`WriterOptions::chunk_interval`]),
//!   so memory stays bounded and a crash loses only the open chunk.
//! * [`BagReader`] opens a bag directory or a bare `.mcap` file and yields its topics and its
//!   messages in log-time order; damaged or foreign files give a [`BagError`].
//! * [`reindex`] recovers a bag cut short (a recorder killed outright): it keeps every whole
//!   chunk and rewrites the summary, footer and `metadata.yaml`.
//! * [`replay`] turns messages into a timed publishing plan and plays it through any
//!   [`replay::Publisher`].
//! * [`live`] is the harness on DDS (through `rpq_ros`): [`live::replay`] plays a bag into
//!   running nodes with its recorded timing while recording their outputs to a new bag,
//!   [`live::record`] records; [`types`] maps bag type names to the typed publishers and
//!   subscriptions of `rpq_ros`. The `rpq_bag` binary (`info`, `replay`, `record`,
//!   `reindex`) wraps them.
//!
//! ```
//! use rpq_bag::{BagReader, BagWriter};
//!
//! let dir = tempfile::tempdir().unwrap();
//! let bag = dir.path().join("chatter");
//! let mut writer = BagWriter::create(&bag).unwrap();
//! // std_msgs/String "hi": encapsulation header, length 3 (with NUL), bytes, NUL.
//! let cdr = [0, 1, 0, 0, 3, 0, 0, 0, b'h', b'i', 0];
//! writer
//!     .write("/chatter", "std_msgs/msg/String", "string data\n", 1_000, 1_000, &cdr)
//!     .unwrap();
//! let meta = writer.finish().unwrap();
//! assert_eq!(meta.message_count, 1);
//!
//! let reader = BagReader::open(&bag).unwrap();
//! assert_eq!(reader.topics()[0].type_name, "std_msgs/msg/String");
//! assert_eq!(reader.messages()[0].data, cdr);
//! ```
#![warn(missing_docs)]

pub mod encapsulation;
pub mod live;
pub mod metadata;
pub mod qos;
pub mod reader;
pub mod reindex;
pub mod replay;
pub mod types;
pub mod writer;

use std::path::PathBuf;

pub use metadata::BagMetadata;
pub use qos::QosProfile;
pub use reader::{BagMessage, BagReader, TopicInfo};
pub use reindex::{reindex, ReindexReport};
pub use writer::{BagWriter, Compression, TopicSpec, WriterOptions};

/// Everything that can go wrong reading, writing or replaying a bag.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BagError {
    /// A file or directory could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path involved.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The MCAP layer rejected the file (bad magic, truncated, CRC mismatch, ...).
    #[error("{source_name}: not a readable MCAP file: {source}")]
    Mcap {
        /// File (or `<memory>`) being read or written.
        source_name: String,
        /// The underlying error.
        #[source]
        source: mcap::McapError,
    },
    /// A YAML document (`metadata.yaml`, a QoS string) could not be parsed or written.
    #[error("{what}: invalid YAML: {reason}")]
    Yaml {
        /// Which document.
        what: String,
        /// Parser message.
        reason: String,
    },
    /// The MCAP header names another profile than `ros2`.
    #[error("{source_name}: MCAP profile is `{profile}`, expected `ros2`")]
    WrongProfile {
        /// File being read.
        source_name: String,
        /// Profile found.
        profile: String,
    },
    /// A channel carries something other than CDR.
    #[error("topic `{topic}`: message encoding `{encoding}` is not supported (only `cdr`)")]
    UnsupportedEncoding {
        /// Topic of the channel.
        topic: String,
        /// Encoding found.
        encoding: String,
    },
    /// A channel has no schema, or refers to a schema that is not in the file.
    #[error("topic `{topic}`: no schema (schema id {schema_id}) describes its type")]
    MissingSchema {
        /// Topic of the channel.
        topic: String,
        /// Schema id the channel refers to (0: none).
        schema_id: u16,
    },
    /// A schema is not a ROS 2 message definition.
    #[error(
        "schema `{name}`: encoding `{encoding}` is not supported (expected ros2msg or ros2idl)"
    )]
    UnsupportedSchemaEncoding {
        /// Schema (type) name.
        name: String,
        /// Encoding found.
        encoding: String,
    },
    /// A schema's definition text is not UTF-8.
    #[error("schema `{name}`: definition text is not valid UTF-8")]
    SchemaNotUtf8 {
        /// Schema (type) name.
        name: String,
    },
    /// A message refers to a channel the file never defined.
    #[error(
        "{source_name}: message at log time {log_time} ns refers to unknown channel {channel_id}"
    )]
    UnknownChannel {
        /// File being read.
        source_name: String,
        /// Channel id referenced.
        channel_id: u16,
        /// Log time of the message.
        log_time: u64,
    },
    /// Two records describe the same channel or schema id differently, or a topic differently.
    #[error("{source_name}: conflicting definitions: {detail}")]
    Conflict {
        /// File being read.
        source_name: String,
        /// What disagrees.
        detail: String,
    },
    /// A payload is not a CDR message (too short or unknown encapsulation).
    #[error("topic `{topic}`: payload at log time {log_time} ns is not CDR: {reason}")]
    BadPayload {
        /// Topic of the message.
        topic: String,
        /// Log time of the message.
        log_time: u64,
        /// What is wrong.
        reason: String,
    },
    /// `metadata.yaml` and the storage files disagree.
    #[error("{} disagrees with the MCAP data: {detail}", path.display())]
    MetadataMismatch {
        /// The metadata file.
        path: PathBuf,
        /// What disagrees.
        detail: String,
    },
    /// The bag uses a feature this crate does not read (sqlite3 storage, file compression, ...).
    #[error("{}: unsupported bag: {detail}", path.display())]
    Unsupported {
        /// The bag path.
        path: PathBuf,
        /// What is unsupported.
        detail: String,
    },
    /// A bag directory holds no `.mcap` file, or several and no `metadata.yaml`.
    #[error("{}: {detail}", path.display())]
    NoStorageFile {
        /// The directory.
        path: PathBuf,
        /// What was found.
        detail: String,
    },
    /// The bag directory to create already exists.
    #[error("{}: bag directory already exists", path.display())]
    AlreadyExists {
        /// The directory.
        path: PathBuf,
    },
    /// A topic name is not a fully qualified ROS name.
    #[error("invalid topic name {reason}")]
    InvalidTopicName {
        /// The name.
        name: String,
        /// What is wrong, naming the topic.
        reason: String,
    },
    /// A type name is not of the form `package/msg/Type`.
    #[error("invalid type name `{name}`: expected `package/msg/Type` (or srv/action)")]
    InvalidTypeName {
        /// The name.
        name: String,
    },
    /// A topic is written with another type than it was created with.
    #[error("topic `{topic}` has type `{existing}`, cannot add type `{requested}`")]
    TopicTypeConflict {
        /// The topic.
        topic: String,
        /// Type it was created with.
        existing: String,
        /// Type requested now.
        requested: String,
    },
    /// A topic or type is added again with different settings.
    #[error("`{name}` was already added with a different {what}")]
    DefinitionConflict {
        /// Topic or type name.
        name: String,
        /// What differs.
        what: &'static str,
    },
    /// A message is written to a topic that was never added.
    #[error("topic `{topic}` was not added to the bag")]
    UnknownTopic {
        /// The topic.
        topic: String,
    },
    /// The replay rate is negative or not finite.
    #[error("invalid replay rate {rate}: must be finite and >= 0 (0 = as fast as possible)")]
    InvalidRate {
        /// The rate given.
        rate: f64,
    },
    /// A replay topic selection is contradictory.
    #[error("invalid topic selection: {detail}")]
    InvalidSelection {
        /// What is wrong.
        detail: String,
    },
    /// The publisher refused a message during replay.
    #[error("publishing on `{topic}` failed: {reason}")]
    Publish {
        /// Target topic.
        topic: String,
        /// Publisher's message.
        reason: String,
    },
    /// A bag or a discovered publisher uses a message type the live tools cannot handle.
    #[error(
        "message type `{type_name}` is not supported by rpq_bag; supported types: {supported}"
    )]
    UnsupportedType {
        /// The type name.
        type_name: String,
        /// Comma-separated list of the supported type names.
        supported: String,
    },
    /// A message of the bag to replay does not decode as its type.
    #[error("topic `{topic}`: message at log time {log_time} ns does not decode as `{type_name}`: {reason}")]
    Undecodable {
        /// Recorded topic.
        topic: String,
        /// Its type.
        type_name: String,
        /// Log time of the message.
        log_time: u64,
        /// Decoder message.
        reason: String,
    },
    /// The ROS transport failed (node, publisher or subscription creation, bad name).
    #[error("ROS transport: {0}")]
    Ros(#[from] rpq_ros::node::RosError),
    /// Peers did not show up in time: nobody subscribed to a played topic, or nobody
    /// published a recorded one.
    #[error("waited {waited_s} s: {detail}")]
    Timeout {
        /// Seconds waited.
        waited_s: f64,
        /// What was missing.
        detail: String,
    },
    /// A storage file to recover holds nothing recoverable (not MCAP, no header record).
    #[error("{}: cannot recover: {detail}", path.display())]
    Unrecoverable {
        /// The storage file.
        path: PathBuf,
        /// What is wrong.
        detail: String,
    },
    /// A subscription failed while recording.
    #[error("recording `{topic}` failed: {reason}")]
    Record {
        /// Recorded topic.
        topic: String,
        /// What went wrong.
        reason: String,
    },
}

/// Result alias of this crate.
pub type Result<T, E = BagError> = std::result::Result<T, E>;

/// Checks a fully qualified ROS 2 topic name (`/a/b_c`), as rosbag2 records them.
///
/// ```
/// assert!(rpq_bag::validate_topic_name("/joint_states").is_ok());
/// assert!(rpq_bag::validate_topic_name("joint_states").is_err());
/// assert!(rpq_bag::validate_topic_name("/a//b").is_err());
/// ```
pub fn validate_topic_name(name: &str) -> Result<()> {
    // The rule every node applies (rpq_ros::names), plus one of rosbag2's: no `__` in a token,
    // as such names are reserved for hidden and internal topics.
    let reason = match rpq_ros::names::validate_full_topic_name(name) {
        Err(reason) => reason,
        Ok(()) if name.split('/').any(|token| token.contains("__")) => {
            format!("{name:?}, which has a token containing `__` (reserved)")
        }
        Ok(()) => return Ok(()),
    };
    Err(BagError::InvalidTopicName {
        name: name.to_string(),
        reason,
    })
}

/// Checks a ROS 2 interface type name: `package/msg/Type` (also `srv` and `action`).
///
/// ```
/// assert!(rpq_bag::validate_type_name("sensor_msgs/msg/JointState").is_ok());
/// assert!(rpq_bag::validate_type_name("sensor_msgs/JointState").is_err());
/// ```
pub fn validate_type_name(name: &str) -> Result<()> {
    let ok = {
        let parts: Vec<&str> = name.split('/').collect();
        parts.len() == 3
            && matches!(parts[1], "msg" | "srv" | "action")
            && [parts[0], parts[2]].iter().all(|p| {
                p.starts_with(|c: char| c.is_ascii_alphabetic())
                    && p.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            })
    };
    if ok {
        Ok(())
    } else {
        Err(BagError::InvalidTypeName {
            name: name.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topic_names() {
        for good in [
            "/a",
            "/joint_states",
            "/ns/x_1",
            "/forward_position_controller/commands",
        ] {
            assert!(validate_topic_name(good).is_ok(), "{good}");
        }
        for bad in ["", "/", "a", "/a/", "/a//b", "/1a", "/a b", "/a__b", "/ä"] {
            assert!(validate_topic_name(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn type_names() {
        for good in [
            "std_msgs/msg/String",
            "std_srvs/srv/Trigger_Event",
            "a/action/B",
        ] {
            assert!(validate_type_name(good).is_ok(), "{good}");
        }
        for bad in [
            "",
            "String",
            "std_msgs/String",
            "std_msgs/foo/String",
            "std_msgs/msg/",
            "/msg/String",
            "std_msgs/msg/Str-ing",
            "a/msg/B/C",
        ] {
            assert!(validate_type_name(bad).is_err(), "{bad:?}");
        }
    }
}
