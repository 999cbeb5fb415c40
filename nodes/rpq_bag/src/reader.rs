//! Reading rosbag2 MCAP bags: a bag directory (with or without `metadata.yaml`) or a bare
//! `.mcap` file.
//!
//! The whole bag is loaded into memory and checked before any message is handed out: every
//! channel must carry `cdr` with a `ros2msg`/`ros2idl` schema, every payload must start with
//! a CDR encapsulation header, chunk CRCs must match, and `metadata.yaml` (when present) must
//! agree with the MCAP data on topics, types and counts. This suits test and replay bags;
//! it is not meant for multi-gigabyte recordings.

use std::collections::{btree_map::Entry, BTreeMap, HashMap};
use std::fs::{self, File};
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

use mcap::records::{op, Record};
use mcap::sans_io::{LinearReadEvent, LinearReader, LinearReaderOptions};

use crate::metadata::{BagMetadata, METADATA_FILE, SERIALIZATION_CDR, STORAGE_MCAP};
use crate::qos::{profiles_from_yaml, QosProfile};
use crate::writer::{SCHEMA_ROS2IDL, SCHEMA_ROS2MSG};
use crate::{encapsulation, BagError, Result};

/// Largest decompressed chunk accepted from a file of unknown size (bytes).
const DEFAULT_RECORD_LIMIT: usize = 256 << 20;

/// A topic of a bag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicInfo {
    /// Fully qualified topic name.
    pub name: String,
    /// Type name, `package/msg/Type`.
    pub type_name: String,
    /// Payload encoding (always `cdr`: other encodings are rejected).
    pub serialization_format: String,
    /// rosbag2 definition text of the type.
    pub definition: String,
    /// `ros2msg` or `ros2idl`.
    pub definition_encoding: String,
    /// QoS profiles recorded for the topic (from the channel, else from the bag metadata;
    /// empty if the bag has none).
    pub offered_qos_profiles: Vec<QosProfile>,
    /// `RIHS01_...` type hash (from the channel, else from the bag metadata), empty if the
    /// bag has none.
    pub type_hash: String,
    /// Messages on the topic.
    pub message_count: u64,
}

/// One recorded message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BagMessage {
    /// Topic it was recorded on.
    pub topic: String,
    /// Its type name.
    pub type_name: String,
    /// Receive time (ns since epoch): what rosbag2 orders and replays by.
    pub log_time: u64,
    /// Publish time (ns since epoch) as recorded.
    pub publish_time: u64,
    /// MCAP sequence number.
    pub sequence: u32,
    /// CDR payload including the 4-byte encapsulation header.
    pub data: Vec<u8>,
}

/// A bag loaded into memory.
#[derive(Debug, Clone)]
pub struct BagReader {
    path: PathBuf,
    files: Vec<PathBuf>,
    metadata: Option<BagMetadata>,
    topics: Vec<TopicInfo>,
    messages: Vec<BagMessage>,
    mcap_metadata: Vec<(String, BTreeMap<String, String>)>,
}

impl BagReader {
    /// Opens a bag directory (the files listed in its `metadata.yaml`, or else its only
    /// `.mcap` file) or a bare `.mcap` file.
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref().to_path_buf();
        let io = |p: &Path| {
            let p = p.to_path_buf();
            move |source| BagError::Io { path: p, source }
        };
        let stat = fs::metadata(&path).map_err(io(&path))?;
        let (files, yaml_metadata) = if stat.is_dir() {
            let meta_path = path.join(METADATA_FILE);
            if meta_path.is_file() {
                let text = fs::read_to_string(&meta_path).map_err(io(&meta_path))?;
                let meta = BagMetadata::from_yaml_str(&text).map_err(|e| match e {
                    BagError::Yaml { reason, .. } => BagError::Yaml {
                        what: meta_path.display().to_string(),
                        reason,
                    },
                    other => other,
                })?;
                check_supported(&path, &meta)?;
                let files = meta
                    .relative_file_paths
                    .iter()
                    .map(|f| {
                        // Older rosbag2 versions prefixed the directory name: keep the file name.
                        let name = Path::new(f).file_name().map_or(f.as_ref(), |n| n.as_ref());
                        path.join::<&Path>(name)
                    })
                    .collect::<Vec<_>>();
                if files.is_empty() {
                    return Err(BagError::NoStorageFile {
                        path,
                        detail: format!("{METADATA_FILE} lists no storage files"),
                    });
                }
                (files, Some((meta_path, meta)))
            } else {
                (vec![single_mcap_in(&path)?], None)
            }
        } else {
            (vec![path.clone()], None)
        };

        let mut merged = Merged::default();
        for file in &files {
            let size = fs::metadata(file).map_err(io(file))?.len();
            let handle = File::open(file).map_err(io(file))?;
            let contents = scan_mcap(
                BufReader::new(handle),
                &file.display().to_string(),
                Some(size),
            )?;
            merged.add(contents, &file.display().to_string())?;
        }
        let mut reader = merged.finish(path.clone(), files);
        if let Some((meta_path, meta)) = yaml_metadata {
            reader.cross_check(&meta_path, &meta)?;
            reader.metadata = Some(meta);
        }
        reader.fill_from_metadata();
        Ok(reader)
    }

    /// Reads one MCAP file held in memory.
    pub fn from_mcap_bytes(bytes: &[u8]) -> Result<Self> {
        let source = "<memory>";
        let contents = scan_mcap(bytes, source, Some(bytes.len() as u64))?;
        let mut merged = Merged::default();
        merged.add(contents, source)?;
        let mut reader = merged.finish(PathBuf::from(source), Vec::new());
        reader.fill_from_metadata();
        Ok(reader)
    }

    /// The path the bag was opened from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The storage files read, in order.
    pub fn files(&self) -> &[PathBuf] {
        &self.files
    }

    /// The bag metadata: `metadata.yaml` if the directory has one, else the `rosbag2`
    /// metadata record inside the MCAP file if it has a readable one.
    pub fn metadata(&self) -> Option<&BagMetadata> {
        self.metadata.as_ref()
    }

    /// The topics, in channel order.
    pub fn topics(&self) -> &[TopicInfo] {
        &self.topics
    }

    /// Looks a topic up by name.
    pub fn topic(&self, name: &str) -> Option<&TopicInfo> {
        self.topics.iter().find(|t| t.name == name)
    }

    /// All messages, ordered by log time (ties keep file order).
    pub fn messages(&self) -> &[BagMessage] {
        &self.messages
    }

    /// Takes the messages out of the reader.
    pub fn into_messages(self) -> Vec<BagMessage> {
        self.messages
    }

    /// Number of messages.
    pub fn message_count(&self) -> u64 {
        self.messages.len() as u64
    }

    /// Log time of the first message.
    pub fn start_time(&self) -> Option<u64> {
        self.messages.first().map(|m| m.log_time)
    }

    /// Log time of the last message.
    pub fn end_time(&self) -> Option<u64> {
        self.messages.last().map(|m| m.log_time)
    }

    /// Last minus first log time (0 for an empty bag).
    pub fn duration_ns(&self) -> u64 {
        match (self.start_time(), self.end_time()) {
            (Some(a), Some(b)) => b - a,
            _ => 0,
        }
    }

    /// Key/value pairs of the MCAP metadata record `name` (the first one if repeated).
    pub fn mcap_metadata(&self, name: &str) -> Option<&BTreeMap<String, String>> {
        self.mcap_metadata
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, m)| m)
    }

    /// Takes a topic's type hash and QoS profiles from the bag metadata when its channel
    /// lacks them (rosbags, for one, writes the hash only to `metadata.yaml`).
    fn fill_from_metadata(&mut self) {
        let Some(meta) = &self.metadata else {
            return;
        };
        for topic in &mut self.topics {
            let Some(entry) = meta.topic(&topic.name) else {
                continue;
            };
            let tm = &entry.topic_metadata;
            if tm.type_name != topic.type_name {
                continue;
            }
            if topic.type_hash.is_empty() {
                topic.type_hash = tm.type_description_hash.clone();
            }
            if topic.offered_qos_profiles.is_empty() {
                topic.offered_qos_profiles = tm.offered_qos_profiles.clone();
            }
        }
    }

    fn cross_check(&self, meta_path: &Path, meta: &BagMetadata) -> Result<()> {
        let mismatch = |detail: String| BagError::MetadataMismatch {
            path: meta_path.to_path_buf(),
            detail,
        };
        if meta.message_count != self.message_count() {
            return Err(mismatch(format!(
                "message_count {} but the storage holds {} messages",
                meta.message_count,
                self.message_count()
            )));
        }
        for entry in &meta.topics_with_message_count {
            let t = &entry.topic_metadata;
            let Some(found) = self.topic(&t.name) else {
                return Err(mismatch(format!(
                    "topic `{}` is not in the storage",
                    t.name
                )));
            };
            if found.type_name != t.type_name {
                return Err(mismatch(format!(
                    "topic `{}` has type `{}` in metadata, `{}` in the storage",
                    t.name, t.type_name, found.type_name
                )));
            }
            if found.message_count != entry.message_count {
                return Err(mismatch(format!(
                    "topic `{}` has {} messages in metadata, {} in the storage",
                    t.name, entry.message_count, found.message_count
                )));
            }
        }
        Ok(())
    }
}

fn check_supported(path: &Path, meta: &BagMetadata) -> Result<()> {
    let unsupported = |detail: String| BagError::Unsupported {
        path: path.to_path_buf(),
        detail,
    };
    if meta.storage_identifier != STORAGE_MCAP {
        return Err(unsupported(format!(
            "storage `{}` (only `mcap` is read)",
            meta.storage_identifier
        )));
    }
    if !meta.compression_mode.is_empty() || !meta.compression_format.is_empty() {
        return Err(unsupported(format!(
            "rosbag2 compression `{}`/`{}` (chunk compression inside MCAP is fine)",
            meta.compression_mode, meta.compression_format
        )));
    }
    Ok(())
}

pub(crate) fn single_mcap_in(dir: &Path) -> Result<PathBuf> {
    let entries = fs::read_dir(dir).map_err(|source| BagError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut found = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|source| BagError::Io {
            path: dir.to_path_buf(),
            source,
        })?;
        let p = entry.path();
        if p.is_file() && p.extension().is_some_and(|e| e == "mcap") {
            found.push(p);
        }
    }
    match found.len() {
        1 => Ok(found.remove(0)),
        0 => Err(BagError::NoStorageFile {
            path: dir.to_path_buf(),
            detail: format!("no {METADATA_FILE} and no .mcap file"),
        }),
        n => Err(BagError::NoStorageFile {
            path: dir.to_path_buf(),
            detail: format!("no {METADATA_FILE} and {n} .mcap files: cannot tell the order"),
        }),
    }
}

struct SchemaRecord {
    name: String,
    encoding: String,
    data: Vec<u8>,
}

#[derive(PartialEq)]
struct ChannelRecord {
    schema_id: u16,
    topic: String,
    message_encoding: String,
    metadata: BTreeMap<String, String>,
}

struct RawMessage {
    channel_id: u16,
    sequence: u32,
    log_time: u64,
    publish_time: u64,
    data: Vec<u8>,
}

struct McapContents {
    profile: Option<String>,
    schemas: BTreeMap<u16, SchemaRecord>,
    channels: BTreeMap<u16, ChannelRecord>,
    messages: Vec<RawMessage>,
    metadata: Vec<(String, BTreeMap<String, String>)>,
}

/// Feeds `input` to `reader` and hands every record (opcode, body) to `on_record`.
///
/// Reads at most 1 MiB at a time whatever the reader asks for, so a corrupt length cannot
/// make this allocate more than the file holds.
fn drive<R: Read>(
    reader: &mut LinearReader,
    input: &mut R,
    mut on_record: impl FnMut(u8, &[u8]) -> Result<()>,
    mcap_err: &impl Fn(mcap::McapError) -> BagError,
) -> Result<()> {
    while let Some(event) = reader.next_event() {
        match event.map_err(mcap_err)? {
            LinearReadEvent::ReadRequest(need) => {
                let buf = reader.insert(need.clamp(1, 1 << 20));
                let read = loop {
                    match input.read(buf) {
                        Ok(n) => break n,
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                        Err(e) => return Err(mcap_err(mcap::McapError::Io(e))),
                    }
                };
                reader.notify_read(read);
            }
            LinearReadEvent::Record { opcode, data } => on_record(opcode, data)?,
        }
    }
    Ok(())
}

/// Reads every record of one MCAP stream (chunks decompressed, chunk CRCs checked).
///
/// Chunks are taken whole from the file and unpacked one by one in a reader that sees only
/// that chunk, after checking that an uncompressed chunk's records tile it exactly: mcap 0.26
/// underflows (panics in debug builds) on a record that overruns its uncompressed chunk.
fn scan_mcap<R: Read>(mut input: R, source: &str, size: Option<u64>) -> Result<McapContents> {
    let mcap_err = |source_err| BagError::Mcap {
        source_name: source.to_string(),
        source: source_err,
    };
    let limit = size.map_or(DEFAULT_RECORD_LIMIT, |n| {
        usize::try_from(n.saturating_mul(16))
            .unwrap_or(usize::MAX)
            .max(64 << 20)
    });
    let mut out = McapContents {
        profile: None,
        schemas: BTreeMap::new(),
        channels: BTreeMap::new(),
        messages: Vec::new(),
        metadata: Vec::new(),
    };
    let mut file_reader = LinearReader::new_with_options(
        LinearReaderOptions::default()
            .with_emit_chunks(true)
            .with_record_length_limit(limit),
    );
    drive(
        &mut file_reader,
        &mut input,
        |opcode, body| {
            if opcode != op::CHUNK {
                return out.take(opcode, body, source);
            }
            for (inner_op, inner_body) in chunk_records(body, limit).map_err(mcap_err)? {
                out.take(inner_op, &inner_body, source)?;
            }
            Ok(())
        },
        &mcap_err,
    )?;
    Ok(out)
}

/// The records (opcode, body) of one chunk record's body, decompressed, CRC checked, framing
/// checked as in [`scan_mcap`]; `limit` bounds a record's (and the chunk's) length.
pub(crate) fn chunk_records(
    body: &[u8],
    limit: usize,
) -> std::result::Result<Vec<(u8, Vec<u8>)>, mcap::McapError> {
    check_chunk(body)?;
    let mut framed = Vec::with_capacity(body.len() + 9);
    framed.push(op::CHUNK);
    framed.extend_from_slice(&(body.len() as u64).to_le_bytes());
    framed.extend_from_slice(body);
    let mut chunk_reader = LinearReader::new_with_options(
        LinearReaderOptions::default()
            .with_skip_start_magic(true)
            .with_skip_end_magic(true)
            .with_validate_chunk_crcs(true)
            .with_record_length_limit(limit),
    );
    let mut out = Vec::new();
    drive(
        &mut chunk_reader,
        &mut framed.as_slice(),
        |opcode, inner| {
            out.push((opcode, inner.to_vec()));
            Ok(())
        },
        &|e| BagError::Mcap {
            source_name: String::new(),
            source: e,
        },
    )
    .map_err(|e| match e {
        BagError::Mcap { source, .. } => source,
        other => mcap::McapError::Io(std::io::Error::other(other.to_string())),
    })?;
    Ok(out)
}

/// Checks a chunk record's framing before mcap unpacks it: an uncompressed chunk must hold
/// exactly `uncompressed_size` bytes of whole records.
fn check_chunk(body: &[u8]) -> std::result::Result<(), mcap::McapError> {
    let Record::Chunk { header, data } = mcap::parse_record(op::CHUNK, body)? else {
        return Err(mcap::McapError::BadIndex);
    };
    if !header.compression.is_empty() {
        return Ok(());
    }
    if header.uncompressed_size != data.len() as u64 {
        return Err(mcap::McapError::BadChunkLength {
            header: header.uncompressed_size,
            available: data.len() as u64,
        });
    }
    let mut rest: &[u8] = &data;
    while !rest.is_empty() {
        let Some((head, tail)) = rest.split_first_chunk::<9>() else {
            return Err(mcap::McapError::UnexpectedEoc);
        };
        let len = u64::from_le_bytes(
            head[1..]
                .try_into()
                .map_err(|_| mcap::McapError::UnexpectedEoc)?,
        );
        if len > tail.len() as u64 {
            return Err(mcap::McapError::UnexpectedEoc);
        }
        rest = &tail[len as usize..];
    }
    Ok(())
}

impl McapContents {
    /// Keeps the records a bag reader needs; other opcodes are skipped unparsed.
    fn take(&mut self, opcode: u8, body: &[u8], source: &str) -> Result<()> {
        let conflict = |detail: String| BagError::Conflict {
            source_name: source.to_string(),
            detail,
        };
        if !matches!(
            opcode,
            op::HEADER | op::SCHEMA | op::CHANNEL | op::MESSAGE | op::METADATA
        ) {
            return Ok(());
        }
        let record = mcap::parse_record(opcode, body).map_err(|e| BagError::Mcap {
            source_name: source.to_string(),
            source: e,
        })?;
        match record {
            Record::Header(h) => self.profile = Some(h.profile),
            Record::Schema { header, data } => {
                if header.id == 0 {
                    return Err(BagError::Mcap {
                        source_name: source.to_string(),
                        source: mcap::McapError::InvalidSchemaId,
                    });
                }
                let rec = SchemaRecord {
                    name: header.name,
                    encoding: header.encoding,
                    data: data.into_owned(),
                };
                match self.schemas.entry(header.id) {
                    Entry::Vacant(v) => {
                        v.insert(rec);
                    }
                    Entry::Occupied(o) => {
                        let old = o.get();
                        if old.name != rec.name
                            || old.encoding != rec.encoding
                            || old.data != rec.data
                        {
                            return Err(conflict(format!(
                                "schema id {} is `{}` and `{}`",
                                header.id, old.name, rec.name
                            )));
                        }
                    }
                }
            }
            Record::Channel(c) => {
                let rec = ChannelRecord {
                    schema_id: c.schema_id,
                    topic: c.topic,
                    message_encoding: c.message_encoding,
                    metadata: c.metadata,
                };
                match self.channels.entry(c.id) {
                    Entry::Vacant(v) => {
                        v.insert(rec);
                    }
                    Entry::Occupied(o) => {
                        if o.get() != &rec {
                            return Err(conflict(format!(
                                "channel id {} is `{}` and `{}`",
                                c.id,
                                o.get().topic,
                                rec.topic
                            )));
                        }
                    }
                }
            }
            Record::Message { header, data } => self.messages.push(RawMessage {
                channel_id: header.channel_id,
                sequence: header.sequence,
                log_time: header.log_time,
                publish_time: header.publish_time,
                data: data.into_owned(),
            }),
            Record::Metadata(m) => self.metadata.push((m.name, m.metadata)),
            _ => {}
        }
        Ok(())
    }
}

#[derive(Default)]
struct Merged {
    topics: Vec<TopicInfo>,
    topic_index: HashMap<String, usize>,
    messages: Vec<BagMessage>,
    mcap_metadata: Vec<(String, BTreeMap<String, String>)>,
}

impl Merged {
    /// Validates one file's channels and messages and adds them.
    fn add(&mut self, contents: McapContents, source: &str) -> Result<()> {
        match contents.profile.as_deref() {
            Some("ros2") => {}
            other => {
                return Err(BagError::WrongProfile {
                    source_name: source.to_string(),
                    profile: other.unwrap_or("<no header>").to_string(),
                })
            }
        }
        let mut channel_topic: HashMap<u16, usize> = HashMap::new();
        for (&id, ch) in &contents.channels {
            if ch.message_encoding != SERIALIZATION_CDR {
                return Err(BagError::UnsupportedEncoding {
                    topic: ch.topic.clone(),
                    encoding: ch.message_encoding.clone(),
                });
            }
            let schema =
                contents
                    .schemas
                    .get(&ch.schema_id)
                    .ok_or_else(|| BagError::MissingSchema {
                        topic: ch.topic.clone(),
                        schema_id: ch.schema_id,
                    })?;
            if !matches!(schema.encoding.as_str(), SCHEMA_ROS2MSG | SCHEMA_ROS2IDL) {
                return Err(BagError::UnsupportedSchemaEncoding {
                    name: schema.name.clone(),
                    encoding: schema.encoding.clone(),
                });
            }
            let definition =
                String::from_utf8(schema.data.clone()).map_err(|_| BagError::SchemaNotUtf8 {
                    name: schema.name.clone(),
                })?;
            let qos = match ch.metadata.get("offered_qos_profiles") {
                Some(text) => profiles_from_yaml(text).map_err(|e| match e {
                    BagError::Yaml { reason, .. } => BagError::Yaml {
                        what: format!("{source}: offered_qos_profiles of `{}`", ch.topic),
                        reason,
                    },
                    other => other,
                })?,
                None => Vec::new(),
            };
            let info = TopicInfo {
                name: ch.topic.clone(),
                type_name: schema.name.clone(),
                serialization_format: ch.message_encoding.clone(),
                definition,
                definition_encoding: schema.encoding.clone(),
                offered_qos_profiles: qos,
                type_hash: ch
                    .metadata
                    .get("topic_type_hash")
                    .cloned()
                    .unwrap_or_default(),
                message_count: 0,
            };
            let index = match self.topic_index.get(&info.name) {
                Some(&i) => {
                    let known = &self.topics[i];
                    if known.type_name != info.type_name || known.definition != info.definition {
                        return Err(BagError::Conflict {
                            source_name: source.to_string(),
                            detail: format!(
                                "topic `{}` appears as `{}` and as `{}` (or with another definition)",
                                info.name, known.type_name, info.type_name
                            ),
                        });
                    }
                    i
                }
                None => {
                    self.topic_index
                        .insert(info.name.clone(), self.topics.len());
                    self.topics.push(info);
                    self.topics.len() - 1
                }
            };
            channel_topic.insert(id, index);
        }
        self.messages.reserve(contents.messages.len());
        for m in contents.messages {
            let Some(&index) = channel_topic.get(&m.channel_id) else {
                return Err(BagError::UnknownChannel {
                    source_name: source.to_string(),
                    channel_id: m.channel_id,
                    log_time: m.log_time,
                });
            };
            let topic = &mut self.topics[index];
            encapsulation::check(&m.data).map_err(|reason| BagError::BadPayload {
                topic: topic.name.clone(),
                log_time: m.log_time,
                reason,
            })?;
            topic.message_count += 1;
            self.messages.push(BagMessage {
                topic: topic.name.clone(),
                type_name: topic.type_name.clone(),
                log_time: m.log_time,
                publish_time: m.publish_time,
                sequence: m.sequence,
                data: m.data,
            });
        }
        self.mcap_metadata.extend(contents.metadata);
        Ok(())
    }

    fn finish(mut self, path: PathBuf, files: Vec<PathBuf>) -> BagReader {
        self.messages.sort_by_key(|m| m.log_time);
        let metadata = self
            .mcap_metadata
            .iter()
            .find(|(n, _)| n == "rosbag2")
            .and_then(|(_, m)| m.get("serialized_metadata"))
            .and_then(|text| BagMetadata::from_serialized_str(text).ok());
        BagReader {
            path,
            files,
            metadata,
            topics: self.topics,
            messages: self.messages,
            mcap_metadata: self.mcap_metadata,
        }
    }
}
