//! Recovering a bag cut short: `rpq_bag reindex BAG`.
//!
//! A recording killed outright (`kill -9`, power cut of the process, disk full) leaves an
//! MCAP file without its summary and footer, possibly ending inside a record, and no
//! `metadata.yaml`. [`reindex`] reads the storage file from the start, record by record, and
//! keeps everything up to the first record that is cut short or damaged: a chunk counts only
//! when it is whole, its CRC matches and every record in it makes sense (known schema and
//! channel, CDR payload), so what is kept is always a prefix of whole chunks. It then
//!
//! * if the file was complete (data end, summary and footer intact): leaves it as it is and
//!   (re)writes `metadata.yaml` from it, like `ros2 bag reindex`;
//! * otherwise: writes the kept records to a new MCAP file (chunked, with summary and footer)
//!   under the original name, keeps the original as `<name>.damaged`, and writes
//!   `metadata.yaml`.
//!
//! [`ReindexReport`] says how many chunks and messages were kept and how many bytes at the
//! end of the file were dropped, and why. Input that is not a ros2 MCAP file at all (no magic,
//! no header record, another profile) is an error; nothing in the file makes this panic.
//!
//! ```
//! use rpq_bag::{reindex::reindex, BagReader, BagWriter};
//!
//! let tmp = tempfile::tempdir().unwrap();
//! let bag = tmp.path().join("cut");
//! let mut writer = BagWriter::create(&bag).unwrap();
//! let cdr = [0, 1, 0, 0, 3, 0, 0, 0, b'h', b'i', 0];
//! let file = writer.mcap_path().to_path_buf();
//! let mut ends = Vec::new();
//! for i in 0..10 {
//!     writer.write("/chatter", "std_msgs/msg/String", "string data\n", i, i, &cdr).unwrap();
//!     writer.flush().unwrap(); // one chunk per message
//!     ends.push(std::fs::metadata(&file).unwrap().len());
//! }
//! std::mem::forget(writer); // as if the process died here: no summary, no metadata.yaml
//! // and as if it died while writing the last chunk
//! std::fs::OpenOptions::new().write(true).open(&file).unwrap().set_len(ends[8] + 20).unwrap();
//!
//! let report = reindex(&bag).unwrap();
//! assert_eq!(report.messages, 9);
//! assert_eq!(report.dropped_bytes, 20);
//! assert_eq!(BagReader::open(&bag).unwrap().message_count(), 9);
//! ```

use std::collections::HashMap;
use std::fs::{self, File};
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

use mcap::records::{op, Record};

use crate::metadata::{BagMetadata, METADATA_FILE, SERIALIZATION_CDR};
use crate::qos::profiles_from_yaml;
use crate::reader::{chunk_records, single_mcap_in};
use crate::writer::{write_metadata_file, BagWriter, TopicSpec, WriterOptions};
use crate::{encapsulation, BagError, BagReader, Result};

/// Suffix given to the original storage file when it is replaced by the recovered one.
pub const DAMAGED_SUFFIX: &str = ".damaged";
/// Suffix of the recovered file while it is written.
const TMP_SUFFIX: &str = ".reindex.tmp";

/// What [`reindex`] did.
#[derive(Debug, Clone, PartialEq)]
pub struct ReindexReport {
    /// The storage file read (and, unless [`ReindexReport::intact`], rewritten).
    pub storage_file: PathBuf,
    /// Whether the file was complete: it was left untouched, only `metadata.yaml` written.
    pub intact: bool,
    /// Where the original file was kept, when it was replaced.
    pub original_kept_as: Option<PathBuf>,
    /// Size of the file read, in bytes.
    pub file_size: u64,
    /// Bytes at the end of the file that were not kept (cut short or damaged records, and
    /// for a complete file 0).
    pub dropped_bytes: u64,
    /// Why reading stopped before the end of the data section; `None` for a complete file.
    pub stop_reason: Option<String>,
    /// Whole chunks kept.
    pub chunks: u64,
    /// Messages kept.
    pub messages: u64,
    /// The metadata written to `metadata.yaml`.
    pub metadata: BagMetadata,
}

/// Recovers the bag `path` (a bag directory, or the `.mcap` file in one); see the
/// [module docs](self).
pub fn reindex(path: impl AsRef<Path>) -> Result<ReindexReport> {
    let path = path.as_ref();
    let io = |p: &Path| {
        let p = p.to_path_buf();
        move |source| BagError::Io { path: p, source }
    };
    let stat = fs::metadata(path).map_err(io(path))?;
    let (dir, file) = if stat.is_dir() {
        (path.to_path_buf(), storage_file_of(path)?)
    } else {
        let dir = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        (dir, path.to_path_buf())
    };
    let Some(file_name) = file.file_name().and_then(|n| n.to_str()).map(str::to_owned) else {
        return Err(BagError::Io {
            path: file,
            source: std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "storage file needs a UTF-8 name",
            ),
        });
    };
    let damaged = dir.join(format!("{file_name}{DAMAGED_SUFFIX}"));
    let tmp = dir.join(format!("{file_name}{TMP_SUFFIX}"));
    // A temporary file of an earlier run that died is ours to replace.
    match fs::remove_file(&tmp) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(io(&tmp)(e)),
        _ => {}
    }
    let mut writer = BagWriter::create_file(
        dir.clone(),
        file_name,
        tmp.clone(),
        WriterOptions::default(),
    )?;
    let scanned = match scan(&file, &mut writer) {
        Ok(scanned) => scanned,
        Err(e) => {
            drop(writer);
            let _ = fs::remove_file(&tmp);
            return Err(e);
        }
    };
    let intact = scanned.stop_reason.is_none() && BagReader::open(&file).is_ok();
    let finished = if intact {
        let meta = writer.metadata();
        drop(writer);
        fs::remove_file(&tmp).map_err(io(&tmp))?;
        Ok((meta, None))
    } else if damaged.exists() {
        Err(BagError::AlreadyExists { path: damaged })
    } else {
        writer.finish_file().and_then(|meta| {
            fs::rename(&file, &damaged).map_err(io(&file))?;
            fs::rename(&tmp, &file).map_err(io(&file))?;
            Ok((meta, Some(damaged)))
        })
    };
    let (metadata, original_kept_as) = match finished {
        Ok(done) => done,
        Err(e) => {
            let _ = fs::remove_file(&tmp);
            return Err(e);
        }
    };
    write_metadata_file(&dir, &metadata)?;
    Ok(ReindexReport {
        storage_file: file,
        intact,
        original_kept_as,
        file_size: scanned.file_size,
        dropped_bytes: if intact {
            0
        } else {
            scanned.file_size - scanned.kept_bytes
        },
        stop_reason: if intact {
            None
        } else {
            Some(
                scanned
                    .stop_reason
                    .unwrap_or_else(|| "the summary or footer is damaged".into()),
            )
        },
        chunks: scanned.chunks,
        messages: metadata.message_count,
        metadata,
    })
}

/// The storage file of bag directory `dir`: the one `metadata.yaml` lists, else its only
/// `.mcap` file.
fn storage_file_of(dir: &Path) -> Result<PathBuf> {
    let listed = fs::read_to_string(dir.join(METADATA_FILE))
        .ok()
        .and_then(|text| BagMetadata::from_yaml_str(&text).ok())
        .map(|meta| meta.relative_file_paths);
    match listed.as_deref() {
        Some([one]) => {
            let name = Path::new(one)
                .file_name()
                .map_or(one.as_ref(), |n| n.as_ref());
            Ok(dir.join::<&Path>(name))
        }
        Some(files) if files.len() > 1 => Err(BagError::Unsupported {
            path: dir.to_path_buf(),
            detail: format!(
                "{METADATA_FILE} lists {} storage files; reindex handles one",
                files.len()
            ),
        }),
        _ => single_mcap_in(dir),
    }
}

/// How far [`scan`] got.
struct Scanned {
    file_size: u64,
    /// Bytes from the start of the file up to the end of the last record kept.
    kept_bytes: u64,
    stop_reason: Option<String>,
    chunks: u64,
}

/// A schema read from the file.
struct SchemaRecord {
    name: String,
    encoding: String,
    data: Vec<u8>,
}

/// What a record asks of the output, once checked.
enum Step {
    Schema(u16, SchemaRecord),
    /// A channel: its id, its schema id and the topic it describes (type and definition
    /// filled in from the schema by [`State::check_unit`]).
    Channel(u16, u16, Box<TopicSpec>),
    /// A message: channel id, sequence, log time, publish time, payload.
    Message(u16, u32, u64, u64, Vec<u8>),
    /// The `rosbag2` metadata record's serialized metadata.
    Rosbag2(String),
    Nothing,
}

/// The recovery state: what the kept records defined.
struct State<'w> {
    writer: &'w mut BagWriter,
    schemas: HashMap<u16, SchemaRecord>,
    /// Channel id -> the topic it describes.
    channels: HashMap<u16, TopicSpec>,
    /// Channel id -> topic number in the writer.
    topics: HashMap<u16, usize>,
}

/// Reads `file` and writes what is intact to `writer`.
fn scan(file: &Path, writer: &mut BagWriter) -> Result<Scanned> {
    let source = file.display().to_string();
    let io = |source| BagError::Io {
        path: file.to_path_buf(),
        source,
    };
    let file_size = fs::metadata(file).map_err(io)?.len();
    let mut input = BufReader::new(File::open(file).map_err(io)?);
    let unrecoverable = |detail: String| BagError::Unrecoverable {
        path: file.to_path_buf(),
        detail,
    };
    let mut magic = [0u8; 8];
    if read_full(&mut input, &mut magic).map_err(io)? < magic.len() || magic != mcap::MAGIC {
        return Err(unrecoverable(
            "not an MCAP file (it does not start with the MCAP magic)".into(),
        ));
    }
    let limit = usize::try_from(file_size.saturating_mul(16))
        .unwrap_or(usize::MAX)
        .max(64 << 20);
    let mut state = State {
        writer,
        schemas: HashMap::new(),
        channels: HashMap::new(),
        topics: HashMap::new(),
    };
    let mut offset = magic.len() as u64;
    let mut chunks = 0;
    let mut header_seen = false;
    let stop_reason = loop {
        let mut head = [0u8; 9];
        let got = read_full(&mut input, &mut head).map_err(io)?;
        if got == 0 {
            break Some("the file ends without a data end record (cut short)".to_string());
        }
        if got < head.len() {
            break Some(format!(
                "the record at byte {offset} is cut short (only {got} bytes of its opcode and length)"
            ));
        }
        let opcode = head[0];
        let mut len_bytes = [0u8; 8];
        len_bytes.copy_from_slice(&head[1..]);
        let len = u64::from_le_bytes(len_bytes);
        let available = file_size.saturating_sub(offset + 9);
        if len > available {
            break Some(format!(
                "the record at byte {offset} (opcode {opcode:#04x}) is cut short: \
                 {len} bytes long, {available} left in the file"
            ));
        }
        let mut body = Vec::new();
        (&mut input).take(len).read_to_end(&mut body).map_err(io)?;
        if (body.len() as u64) < len {
            break Some(format!("the record at byte {offset} is cut short"));
        }
        if !header_seen {
            match mcap::parse_record(opcode, &body) {
                Ok(Record::Header(h)) if h.profile == "ros2" => header_seen = true,
                Ok(Record::Header(h)) => {
                    return Err(BagError::WrongProfile {
                        source_name: source,
                        profile: h.profile,
                    })
                }
                _ => {
                    return Err(unrecoverable(
                        "no intact MCAP header record after the magic".into(),
                    ))
                }
            }
            offset += 9 + len;
            continue;
        }
        let steps = match opcode {
            op::DATA_END => break None,
            op::CHUNK => chunk_records(&body, limit)
                .map_err(|e| format!("the chunk at byte {offset} is damaged: {e}"))
                .and_then(|records| {
                    records
                        .iter()
                        .map(|(o, b)| state.check(*o, b))
                        .collect::<std::result::Result<Vec<_>, String>>()
                        .map_err(|e| format!("the chunk at byte {offset}: {e}"))
                }),
            _ => state
                .check(opcode, &body)
                .map(|s| vec![s])
                .map_err(|e| format!("the record at byte {offset}: {e}")),
        };
        let steps = match steps.and_then(|steps| state.check_unit(steps)) {
            Ok(steps) => steps,
            Err(reason) => break Some(reason),
        };
        state.commit(steps)?;
        if opcode == op::CHUNK {
            chunks += 1;
        }
        offset += 9 + len;
    };
    if !header_seen {
        return Err(unrecoverable(
            "no intact MCAP header record after the magic".into(),
        ));
    }
    Ok(Scanned {
        file_size,
        kept_bytes: offset,
        stop_reason,
        chunks,
    })
}

/// Reads until `buf` is full or the input ends; returns the bytes read.
fn read_full(input: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match input.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

impl State<'_> {
    /// Parses one record and checks it on its own.
    fn check(&self, opcode: u8, body: &[u8]) -> std::result::Result<Step, String> {
        if !matches!(
            opcode,
            op::SCHEMA | op::CHANNEL | op::MESSAGE | op::METADATA
        ) {
            // Indexes, attachments, statistics, unknown records: not needed to rebuild.
            return Ok(Step::Nothing);
        }
        let record = mcap::parse_record(opcode, body).map_err(|e| e.to_string())?;
        Ok(match record {
            Record::Schema { header, data } => {
                if header.id == 0 {
                    return Err("schema id 0".into());
                }
                Step::Schema(
                    header.id,
                    SchemaRecord {
                        name: header.name,
                        encoding: header.encoding,
                        data: data.into_owned(),
                    },
                )
            }
            Record::Channel(c) => {
                if c.message_encoding != SERIALIZATION_CDR {
                    return Err(format!(
                        "channel `{}` carries `{}`, not cdr",
                        c.topic, c.message_encoding
                    ));
                }
                let mut spec = TopicSpec::new(&c.topic, "", "");
                spec.definition_encoding.clear();
                spec.offered_qos_profiles = match c.metadata.get("offered_qos_profiles") {
                    Some(text) => profiles_from_yaml(text).map_err(|e| e.to_string())?,
                    None => Vec::new(),
                };
                spec.type_hash = c
                    .metadata
                    .get("topic_type_hash")
                    .cloned()
                    .unwrap_or_default();
                Step::Channel(c.id, c.schema_id, Box::new(spec))
            }
            Record::Message { header, data } => Step::Message(
                header.channel_id,
                header.sequence,
                header.log_time,
                header.publish_time,
                data.into_owned(),
            ),
            Record::Metadata(m) if m.name == "rosbag2" => m
                .metadata
                .get("serialized_metadata")
                .map_or(Step::Nothing, |t| Step::Rosbag2(t.clone())),
            _ => Step::Nothing,
        })
    }

    /// Checks the records of one unit (a chunk, or one record outside chunks) together with
    /// what was kept before; resolves channels to their schemas.
    fn check_unit(&self, mut steps: Vec<Step>) -> std::result::Result<Vec<Step>, String> {
        let mut schemas: HashMap<u16, &SchemaRecord> =
            self.schemas.iter().map(|(k, v)| (*k, v)).collect();
        let mut channels: HashMap<u16, &TopicSpec> =
            self.channels.iter().map(|(k, v)| (*k, v)).collect();
        let mut new_topics: HashMap<String, TopicSpec> = HashMap::new();
        for step in &mut steps {
            match step {
                Step::Schema(id, rec) => {
                    if let Some(old) = schemas.get(id) {
                        if old.name != rec.name
                            || old.encoding != rec.encoding
                            || old.data != rec.data
                        {
                            return Err(format!(
                                "schema id {id} is `{}` and `{}`",
                                old.name, rec.name
                            ));
                        }
                    }
                    schemas.insert(*id, rec);
                }
                Step::Channel(id, schema_id, spec) => {
                    let Some(schema) = schemas.get(schema_id) else {
                        return Err(format!(
                            "channel `{}` refers to schema {schema_id}, not defined before",
                            spec.name
                        ));
                    };
                    spec.type_name.clone_from(&schema.name);
                    spec.definition_encoding.clone_from(&schema.encoding);
                    spec.definition = String::from_utf8(schema.data.clone())
                        .map_err(|_| format!("schema `{}` is not UTF-8", schema.name))?;
                    if let Some(old) = channels.get(id) {
                        if **old != **spec {
                            return Err(format!(
                                "channel id {id} is `{}` and `{}`",
                                old.name, spec.name
                            ));
                        }
                    }
                    self.writer.check_topic(spec).map_err(|e| e.to_string())?;
                    if let Some(other) = new_topics.get(&spec.name) {
                        if other != &**spec {
                            return Err(format!(
                                "topic `{}` is defined twice differently",
                                spec.name
                            ));
                        }
                    }
                    new_topics.insert(spec.name.clone(), (**spec).clone());
                    channels.insert(*id, spec);
                }
                Step::Message(channel, _, log_time, _, data) => {
                    let Some(spec) = channels.get(channel) else {
                        return Err(format!(
                            "message at log time {log_time} ns on unknown channel {channel}"
                        ));
                    };
                    encapsulation::check(data).map_err(|reason| {
                        format!(
                            "message on `{}` at log time {log_time} ns is not CDR: {reason}",
                            spec.name
                        )
                    })?;
                }
                Step::Rosbag2(_) | Step::Nothing => {}
            }
        }
        Ok(steps)
    }

    /// Writes the records of a checked unit to the output.
    fn commit(&mut self, steps: Vec<Step>) -> Result<()> {
        for step in steps {
            match step {
                Step::Schema(id, rec) => {
                    self.schemas.insert(id, rec);
                }
                Step::Channel(id, _, spec) => {
                    self.writer.add_topic((*spec).clone())?;
                    if let Some(number) = self.writer.topic_number(&spec.name) {
                        self.topics.insert(id, number);
                    }
                    self.channels.insert(id, *spec);
                }
                Step::Message(channel, sequence, log_time, publish_time, data) => {
                    // check_unit made sure the channel is defined before its messages.
                    let Some(&number) = self.topics.get(&channel) else {
                        return Err(BagError::UnknownChannel {
                            source_name: "<reindex>".into(),
                            channel_id: channel,
                            log_time,
                        });
                    };
                    self.writer
                        .write_message(number, sequence, log_time, publish_time, &data)?;
                }
                Step::Rosbag2(text) => {
                    if let Ok(meta) = BagMetadata::from_serialized_str(&text) {
                        if let Some(custom) = meta.custom_data {
                            self.writer.custom_data_mut().extend(custom);
                        }
                        if !meta.ros_distro.is_empty() {
                            self.writer.set_ros_distro(meta.ros_distro);
                        }
                    }
                }
                Step::Nothing => {}
            }
        }
        Ok(())
    }
}
