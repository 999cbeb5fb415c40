//! Writing a rosbag2 MCAP bag directory.
//!
//! Layout (what `ros2 bag record -s mcap` writes on Jazzy):
//! * `<dir>/<dir-name>_0.mcap`: profile `ros2`; one schema per message type (name = type,
//!   encoding `ros2msg`, data = definition text); one channel per topic (message encoding
//!   `cdr`, metadata `offered_qos_profiles` and `topic_type_hash`); chunked, uncompressed by
//!   default; a metadata record `rosbag2` whose `serialized_metadata` is the bag metadata.
//! * `<dir>/metadata.yaml`: version 9, see [`crate::metadata`].
//!
//! # Crash safety and memory
//!
//! Records go into the open chunk, held in memory, and the chunk is written to the file and
//! handed to the operating system (flushed, not fsynced) as soon as it holds
//! [`WriterOptions::chunk_size`] bytes (uncompressed records: schemas, channels, messages) or
//! has been open for [`WriterOptions::chunk_interval`] — whichever comes first — and on
//! [`BagWriter::flush`]. So the writer holds at most one chunk (`chunk_size` plus one message)
//! in memory however long it records, and a process killed outright (`kill -9`) leaves a file
//! whose every chunk completed before the kill is on disk, whole: only the summary, the
//! footer and `metadata.yaml` are missing, which [`crate::reindex`] rebuilds. The time bound
//! is checked on every write and by [`BagWriter::flush_if_due`], which a recorder calls when
//! no message comes ([`BagWriter::flush_due`] says when). [`BagWriter::finish`] writes the
//! last chunk, the summary and footer, fsyncs, then writes `metadata.yaml`.

use std::collections::{BTreeMap, HashMap};
use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::metadata::{
    BagMetadata, EpochNanoseconds, FileInformation, Nanoseconds, TopicMetadata, TopicWithCount,
    METADATA_FILE, METADATA_VERSION, SERIALIZATION_CDR, STORAGE_MCAP,
};
use crate::qos::{profiles_to_yaml, QosProfile};
use crate::{encapsulation, validate_topic_name, validate_type_name, BagError, Result};

/// Schema encoding of `.msg`-style definitions.
pub const SCHEMA_ROS2MSG: &str = "ros2msg";
/// Schema encoding of `.idl` definitions.
pub const SCHEMA_ROS2IDL: &str = "ros2idl";

/// Chunk compression inside the MCAP file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Compression {
    /// No compression (rosbag2's default).
    #[default]
    None,
    /// zstd chunks (rosbag2 presets `zstd_fast`, `zstd_small`).
    Zstd,
    /// lz4 chunks.
    Lz4,
}

/// Options of [`BagWriter::create_with_options`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriterOptions {
    /// Chunk compression.
    pub compression: Compression,
    /// `ros_distro` written to the metadata.
    pub ros_distro: String,
    /// `custom_data` written to the metadata (omitted, as `~`, when empty).
    pub custom_data: BTreeMap<String, String>,
    /// Chunk size bound in bytes of uncompressed records: a chunk is written to the file once
    /// it holds this much (default [`DEFAULT_CHUNK_SIZE`], rosbag2's 768 KiB).
    pub chunk_size: u64,
    /// Longest time a chunk stays open (in memory) once it holds a record; `None`: only the
    /// size bound applies. Default 1 s: a crash loses at most about the last second.
    pub chunk_interval: Option<Duration>,
}

/// Default [`WriterOptions::chunk_size`]: 768 KiB, the chunk size of rosbag2's MCAP storage.
pub const DEFAULT_CHUNK_SIZE: u64 = 768 * 1024;

/// Default [`WriterOptions::chunk_interval`]: 1 s.
pub const DEFAULT_CHUNK_INTERVAL: Duration = Duration::from_secs(1);

impl Default for WriterOptions {
    fn default() -> Self {
        Self {
            compression: Compression::None,
            ros_distro: "jazzy".into(),
            custom_data: BTreeMap::new(),
            chunk_size: DEFAULT_CHUNK_SIZE,
            chunk_interval: Some(DEFAULT_CHUNK_INTERVAL),
        }
    }
}

/// Everything a bag records about a topic before its first message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicSpec {
    /// Fully qualified topic name.
    pub name: String,
    /// Type name, `package/msg/Type`.
    pub type_name: String,
    /// rosbag2 definition text of the type.
    pub definition: String,
    /// Encoding of `definition`: [`SCHEMA_ROS2MSG`] or [`SCHEMA_ROS2IDL`].
    pub definition_encoding: String,
    /// Offered QoS profiles (what a player will offer when replaying).
    pub offered_qos_profiles: Vec<QosProfile>,
    /// `RIHS01_...` type hash, or empty when unknown.
    pub type_hash: String,
}

impl TopicSpec {
    /// A topic with a `.msg` definition, rclcpp's default QoS and no type hash.
    ///
    /// ```
    /// use rpq_bag::{QosProfile, TopicSpec};
    /// let spec = TopicSpec::new("/robot_description", "std_msgs/msg/String", "string data\n")
    ///     .with_qos(vec![QosProfile::latched()]);
    /// assert_eq!(spec.offered_qos_profiles[0].depth, 1);
    /// ```
    pub fn new(name: &str, type_name: &str, definition: &str) -> Self {
        Self {
            name: name.to_string(),
            type_name: type_name.to_string(),
            definition: definition.to_string(),
            definition_encoding: SCHEMA_ROS2MSG.to_string(),
            offered_qos_profiles: vec![QosProfile::rclcpp_default()],
            type_hash: String::new(),
        }
    }

    /// Replaces the offered QoS profiles.
    pub fn with_qos(mut self, profiles: Vec<QosProfile>) -> Self {
        self.offered_qos_profiles = profiles;
        self
    }

    /// Sets the `RIHS01_...` type description hash.
    pub fn with_type_hash(mut self, hash: &str) -> Self {
        self.type_hash = hash.to_string();
        self
    }
}

struct TopicState {
    spec: TopicSpec,
    channel_id: u16,
    count: u64,
    sequence: u32,
}

/// Writes one bag directory; call [`BagWriter::finish`] to complete it.
///
/// Dropping the writer without `finish` still closes the MCAP file, but leaves no
/// `metadata.yaml`. See the [module docs](self) for what reaches the disk when.
pub struct BagWriter {
    dir: PathBuf,
    /// Name of the storage file in the bag (what `metadata.yaml` lists).
    file_name: String,
    /// The file written (`dir/file_name`, or a temporary file when reindexing).
    mcap_path: PathBuf,
    mcap: mcap::Writer<BufWriter<File>>,
    options: WriterOptions,
    topics: Vec<TopicState>,
    topic_index: HashMap<String, usize>,
    schemas: HashMap<String, (u16, String, String)>,
    first_time: Option<u64>,
    last_time: u64,
    count: u64,
    /// Uncompressed bytes of the records in the open chunk (not yet in the file).
    chunk_bytes: u64,
    /// When the open chunk got its first record; `None`: no chunk open.
    chunk_opened: Option<Instant>,
    /// Chunks written to the file so far.
    chunks_written: u64,
}

impl std::fmt::Debug for BagWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BagWriter")
            .field("mcap_path", &self.mcap_path)
            .field("topics", &self.topic_index.keys().collect::<Vec<_>>())
            .field("count", &self.count)
            .finish_non_exhaustive()
    }
}

fn mcap_err(path: &Path) -> impl Fn(mcap::McapError) -> BagError + '_ {
    move |source| BagError::Mcap {
        source_name: path.display().to_string(),
        source,
    }
}

fn io_err(path: &Path) -> impl Fn(std::io::Error) -> BagError + '_ {
    move |source| BagError::Io {
        path: path.to_path_buf(),
        source,
    }
}

impl BagWriter {
    /// Creates the bag directory `dir` (it must not exist; its parent must) with default
    /// options.
    pub fn create(dir: impl AsRef<Path>) -> Result<Self> {
        Self::create_with_options(dir, WriterOptions::default())
    }

    /// Creates the bag directory `dir` (it must not exist; its parent must).
    pub fn create_with_options(dir: impl AsRef<Path>, options: WriterOptions) -> Result<Self> {
        let dir = dir.as_ref().to_path_buf();
        let Some(name) = dir.file_name().and_then(|n| n.to_str()).map(str::to_owned) else {
            return Err(BagError::Io {
                path: dir,
                source: std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    "bag directory needs a UTF-8 final path component",
                ),
            });
        };
        match fs::create_dir(&dir) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                return Err(BagError::AlreadyExists { path: dir })
            }
            Err(e) => return Err(io_err(&dir)(e)),
        }
        let file_name = format!("{name}_0.mcap");
        let mcap_path = dir.join(&file_name);
        Self::create_file(dir, file_name, mcap_path, options)
    }

    /// Writes the storage file of bag `dir` to `mcap_path` (a new file), naming it
    /// `file_name` in the metadata; `dir` must exist.
    pub(crate) fn create_file(
        dir: PathBuf,
        file_name: String,
        mcap_path: PathBuf,
        options: WriterOptions,
    ) -> Result<Self> {
        let file = File::create_new(&mcap_path).map_err(io_err(&mcap_path))?;
        let compression = match options.compression {
            Compression::None => None,
            Compression::Zstd => Some(mcap::Compression::Zstd),
            Compression::Lz4 => Some(mcap::Compression::Lz4),
        };
        // Chunks are assembled in memory and written whole (no seeking back to patch a chunk
        // header), so the file never holds a half-written chunk with a placeholder length;
        // this writer closes chunks itself (`chunk_size` None), to flush each one at once.
        let mut mcap = mcap::WriteOptions::new()
            .profile("ros2")
            .library(format!(
                "rpq_bag-{}; {}",
                env!("CARGO_PKG_VERSION"),
                mcap::LIBRARY_IDENTIFIER
            ))
            .compression(compression)
            .disable_seeking(true)
            .chunk_size(None)
            .create(BufWriter::new(file))
            .map_err(mcap_err(&mcap_path))?;
        // The header on disk at once: even a recording killed before its first chunk leaves
        // a file that names itself as a ros2 MCAP.
        mcap.flush().map_err(mcap_err(&mcap_path))?;
        Ok(Self {
            dir,
            file_name,
            mcap_path,
            mcap,
            options,
            topics: Vec::new(),
            topic_index: HashMap::new(),
            schemas: HashMap::new(),
            first_time: None,
            last_time: 0,
            count: 0,
            chunk_bytes: 0,
            chunk_opened: None,
            chunks_written: 0,
        })
    }

    /// The bag directory.
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// The MCAP file being written.
    pub fn mcap_path(&self) -> &Path {
        &self.mcap_path
    }

    /// Adds a topic (a channel, and a schema for its type if new). Adding the same spec
    /// again is a no-op; a different type or settings for a known topic, or a different
    /// definition for a known type, is an error.
    pub fn add_topic(&mut self, spec: TopicSpec) -> Result<()> {
        if self.check_topic(&spec)? {
            return Ok(());
        }
        let schema_id = match self.schemas.get(&spec.type_name) {
            Some((id, _, _)) => *id,
            None => {
                let id = self
                    .mcap
                    .add_schema(
                        &spec.type_name,
                        &spec.definition_encoding,
                        spec.definition.as_bytes(),
                    )
                    .map_err(mcap_err(&self.mcap_path))?;
                // opcode, length, id, then name, encoding and data with their lengths
                self.added_to_chunk(
                    9 + 2
                        + 12
                        + (spec.type_name.len()
                            + spec.definition_encoding.len()
                            + spec.definition.len()) as u64,
                );
                self.schemas.insert(
                    spec.type_name.clone(),
                    (
                        id,
                        spec.definition.clone(),
                        spec.definition_encoding.clone(),
                    ),
                );
                id
            }
        };
        let mut channel_metadata = BTreeMap::new();
        channel_metadata.insert(
            "offered_qos_profiles".to_string(),
            profiles_to_yaml(&spec.offered_qos_profiles)?,
        );
        channel_metadata.insert("topic_type_hash".to_string(), spec.type_hash.clone());
        let channel_id = self
            .mcap
            .add_channel(schema_id, &spec.name, SERIALIZATION_CDR, &channel_metadata)
            .map_err(mcap_err(&self.mcap_path))?;
        self.added_to_chunk(
            9 + 4
                + 12
                + (spec.name.len() + SERIALIZATION_CDR.len()) as u64
                + channel_metadata
                    .iter()
                    .map(|(k, v)| 8 + (k.len() + v.len()) as u64)
                    .sum::<u64>(),
        );
        self.topic_index
            .insert(spec.name.clone(), self.topics.len());
        self.topics.push(TopicState {
            spec,
            channel_id,
            count: 0,
            sequence: 0,
        });
        Ok(())
    }

    /// Checks that `spec` can be added: valid names and encoding, and no conflict with a
    /// topic or type already in the bag. `Ok(true)`: the bag has this very topic already.
    pub(crate) fn check_topic(&self, spec: &TopicSpec) -> Result<bool> {
        validate_topic_name(&spec.name)?;
        validate_type_name(&spec.type_name)?;
        if !matches!(
            spec.definition_encoding.as_str(),
            SCHEMA_ROS2MSG | SCHEMA_ROS2IDL
        ) {
            return Err(BagError::UnsupportedSchemaEncoding {
                name: spec.type_name.clone(),
                encoding: spec.definition_encoding.clone(),
            });
        }
        if let Some(&i) = self.topic_index.get(&spec.name) {
            let existing = &self.topics[i].spec;
            if existing.type_name != spec.type_name {
                return Err(BagError::TopicTypeConflict {
                    topic: spec.name.clone(),
                    existing: existing.type_name.clone(),
                    requested: spec.type_name.clone(),
                });
            }
            if existing == spec {
                return Ok(true);
            }
            return Err(BagError::DefinitionConflict {
                name: spec.name.clone(),
                what: "definition, QoS or type hash",
            });
        }
        if let Some((_, definition, encoding)) = self.schemas.get(&spec.type_name) {
            if definition != &spec.definition || encoding != &spec.definition_encoding {
                return Err(BagError::DefinitionConflict {
                    name: spec.type_name.clone(),
                    what: "message definition",
                });
            }
        }
        Ok(false)
    }

    /// Index of topic `name` among the bag's topics.
    pub(crate) fn topic_number(&self, name: &str) -> Option<usize> {
        self.topic_index.get(name).copied()
    }

    /// Writes one message, adding its topic first (rclcpp default QoS, no type hash) if the
    /// bag does not have it yet. `log_time_ns` is the receive time rosbag2 orders by;
    /// `cdr` is the payload with its encapsulation header.
    pub fn write(
        &mut self,
        topic: &str,
        type_name: &str,
        definition: &str,
        log_time_ns: u64,
        publish_time_ns: u64,
        cdr: &[u8],
    ) -> Result<()> {
        match self.topic_index.get(topic) {
            Some(&i) => {
                let spec = &self.topics[i].spec;
                if spec.type_name != type_name {
                    return Err(BagError::TopicTypeConflict {
                        topic: topic.to_string(),
                        existing: spec.type_name.clone(),
                        requested: type_name.to_string(),
                    });
                }
                if spec.definition != definition {
                    return Err(BagError::DefinitionConflict {
                        name: type_name.to_string(),
                        what: "message definition",
                    });
                }
            }
            None => self.add_topic(TopicSpec::new(topic, type_name, definition))?,
        }
        self.write_to_topic(topic, log_time_ns, publish_time_ns, cdr)
    }

    /// Writes one message to a topic added before.
    pub fn write_to_topic(
        &mut self,
        topic: &str,
        log_time_ns: u64,
        publish_time_ns: u64,
        cdr: &[u8],
    ) -> Result<()> {
        let Some(&i) = self.topic_index.get(topic) else {
            return Err(BagError::UnknownTopic {
                topic: topic.to_string(),
            });
        };
        encapsulation::check(cdr).map_err(|reason| BagError::BadPayload {
            topic: topic.to_string(),
            log_time: log_time_ns,
            reason,
        })?;
        let sequence = self.topics[i].sequence.wrapping_add(1);
        self.write_message(i, sequence, log_time_ns, publish_time_ns, cdr)
    }

    /// Writes a message (payload already checked) to topic number `i` with its MCAP
    /// sequence number, then closes the chunk if it is full or old enough.
    pub(crate) fn write_message(
        &mut self,
        i: usize,
        sequence: u32,
        log_time_ns: u64,
        publish_time_ns: u64,
        cdr: &[u8],
    ) -> Result<()> {
        let state = &mut self.topics[i];
        self.mcap
            .write_to_known_channel(
                &mcap::records::MessageHeader {
                    channel_id: state.channel_id,
                    sequence,
                    log_time: log_time_ns,
                    publish_time: publish_time_ns,
                },
                cdr,
            )
            .map_err(mcap_err(&self.mcap_path))?;
        state.sequence = sequence;
        state.count += 1;
        self.count += 1;
        self.first_time = Some(self.first_time.map_or(log_time_ns, |t| t.min(log_time_ns)));
        self.last_time = self.last_time.max(log_time_ns);
        // opcode, length, channel id, sequence, two times, payload
        self.added_to_chunk(9 + 22 + cdr.len() as u64);
        self.flush_if_due()
    }

    /// Counts `bytes` of records just put into the open chunk.
    fn added_to_chunk(&mut self, bytes: u64) {
        self.chunk_bytes += bytes;
        if self.chunk_opened.is_none() {
            self.chunk_opened = Some(Instant::now());
        }
    }

    /// Bytes of records held in memory in the open chunk, not yet in the file: at most
    /// [`WriterOptions::chunk_size`] plus one message.
    pub fn buffered_bytes(&self) -> u64 {
        self.chunk_bytes
    }

    /// Chunks written to the file so far.
    pub fn chunks_written(&self) -> u64 {
        self.chunks_written
    }

    /// When the open chunk must be written by the time bound
    /// ([`WriterOptions::chunk_interval`]); `None` when no chunk is open or there is no time
    /// bound.
    pub fn flush_due(&self) -> Option<Instant> {
        let opened = self.chunk_opened?;
        Some(opened + self.options.chunk_interval?)
    }

    /// Writes the open chunk if it has reached the size bound or the time bound.
    pub fn flush_if_due(&mut self) -> Result<()> {
        let full = self.chunk_bytes >= self.options.chunk_size;
        if full || self.flush_due().is_some_and(|due| due <= Instant::now()) {
            self.flush()?;
        }
        Ok(())
    }

    /// Writes the open chunk (if any) to the file and hands the file's buffered bytes to
    /// the operating system, so that they survive the process (not a power loss: only
    /// [`BagWriter::finish`] fsyncs).
    pub fn flush(&mut self) -> Result<()> {
        self.mcap.flush().map_err(mcap_err(&self.mcap_path))?;
        if self.chunk_opened.take().is_some() {
            self.chunks_written += 1;
        }
        self.chunk_bytes = 0;
        Ok(())
    }

    /// The `custom_data` the metadata will carry (set at creation by
    /// [`WriterOptions::custom_data`]); what it holds at [`BagWriter::finish`] is written.
    pub fn custom_data_mut(&mut self) -> &mut BTreeMap<String, String> {
        &mut self.options.custom_data
    }

    /// Sets the `ros_distro` the metadata will carry.
    pub(crate) fn set_ros_distro(&mut self, distro: String) {
        self.options.ros_distro = distro;
    }

    /// The metadata the bag would have if finished now.
    pub fn metadata(&self) -> BagMetadata {
        let start = self.first_time.unwrap_or(0);
        let duration = self.first_time.map_or(0, |t| self.last_time - t);
        BagMetadata {
            version: METADATA_VERSION,
            storage_identifier: STORAGE_MCAP.into(),
            duration: Nanoseconds {
                nanoseconds: duration,
            },
            starting_time: EpochNanoseconds {
                nanoseconds_since_epoch: start,
            },
            message_count: self.count,
            topics_with_message_count: self
                .topics
                .iter()
                .map(|t| TopicWithCount {
                    topic_metadata: TopicMetadata {
                        name: t.spec.name.clone(),
                        type_name: t.spec.type_name.clone(),
                        serialization_format: SERIALIZATION_CDR.into(),
                        offered_qos_profiles: t.spec.offered_qos_profiles.clone(),
                        type_description_hash: t.spec.type_hash.clone(),
                    },
                    message_count: t.count,
                })
                .collect(),
            compression_format: String::new(),
            compression_mode: String::new(),
            relative_file_paths: vec![self.file_name.clone()],
            files: vec![FileInformation {
                path: self.file_name.clone(),
                starting_time: EpochNanoseconds {
                    nanoseconds_since_epoch: start,
                },
                duration: Nanoseconds {
                    nanoseconds: duration,
                },
                message_count: self.count,
            }],
            custom_data: (!self.options.custom_data.is_empty())
                .then(|| self.options.custom_data.clone()),
            ros_distro: self.options.ros_distro.clone(),
        }
    }

    /// Completes the MCAP file (metadata record `rosbag2`, summary, footer) and writes
    /// `metadata.yaml`; returns the metadata written.
    pub fn finish(self) -> Result<BagMetadata> {
        let dir = self.dir.clone();
        let meta = self.finish_file()?;
        write_metadata_file(&dir, &meta)?;
        Ok(meta)
    }

    /// Completes and fsyncs the MCAP file (as [`BagWriter::finish`]) without writing
    /// `metadata.yaml`; returns the metadata to write.
    pub(crate) fn finish_file(self) -> Result<BagMetadata> {
        let meta = self.metadata();
        let Self {
            mut mcap,
            mcap_path,
            ..
        } = self;
        let mut record = BTreeMap::new();
        record.insert(
            "serialized_metadata".to_string(),
            meta.to_serialized_string()?,
        );
        mcap.write_metadata(&mcap::records::Metadata {
            name: "rosbag2".into(),
            metadata: record,
        })
        .map_err(mcap_err(&mcap_path))?;
        mcap.finish().map_err(mcap_err(&mcap_path))?;
        let file = mcap
            .into_inner()
            .into_inner()
            .map_err(|e| io_err(&mcap_path)(e.into_error()))?;
        file.sync_all().map_err(io_err(&mcap_path))?;
        Ok(meta)
    }
}

/// Writes `dir/metadata.yaml` atomically (a synced temporary file renamed over it).
pub(crate) fn write_metadata_file(dir: &Path, meta: &BagMetadata) -> Result<()> {
    let text = meta.to_yaml_string()?;
    let final_path = dir.join(METADATA_FILE);
    let tmp_path = dir.join(format!("{METADATA_FILE}.tmp"));
    let mut tmp = File::create(&tmp_path).map_err(io_err(&tmp_path))?;
    tmp.write_all(text.as_bytes())
        .and_then(|()| tmp.sync_all())
        .map_err(io_err(&tmp_path))?;
    fs::rename(&tmp_path, &final_path).map_err(io_err(&final_path))?;
    Ok(())
}
