//! Damaged, foreign and contradictory bags give clear errors, never panics.

mod common;

use std::collections::BTreeMap;
use std::io::Cursor;
use std::path::Path;

use common::*;
use rpq_bag::{BagError, BagReader, BagWriter, Compression, TopicSpec, WriterOptions};

const T0: u64 = 1_700_000_000_000_000_000;

fn small_bag(dir: &Path) -> Vec<u8> {
    small_bag_with(dir, Compression::None)
}

fn small_bag_with(dir: &Path, compression: Compression) -> Vec<u8> {
    let mut w = BagWriter::create_with_options(
        dir,
        WriterOptions {
            compression,
            ..WriterOptions::default()
        },
    )
    .unwrap();
    for i in 0..3u64 {
        w.write(
            "/chatter",
            STRING_TYPE,
            &string_definition(),
            T0 + i,
            T0 + i,
            &string_cdr("abc"),
        )
        .unwrap();
        w.write(
            "/joint_states",
            JOINT_STATE_TYPE,
            &joint_state_definition(),
            T0 + i,
            T0 + i,
            &joint_state_cdr(&joint_state_sample(i as usize)),
        )
        .unwrap();
    }
    let meta = w.finish().unwrap();
    std::fs::read(dir.join(&meta.relative_file_paths[0])).unwrap()
}

#[test]
fn every_truncation_is_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    let bytes = small_bag(&fresh_path(&tmp, "trunc"));
    assert!(BagReader::from_mcap_bytes(&bytes).is_ok());
    for cut in 0..bytes.len() {
        match BagReader::from_mcap_bytes(&bytes[..cut]) {
            Err(BagError::Mcap { .. }) => {}
            other => panic!(
                "cut at {cut}/{}: expected an MCAP error, got {other:?}",
                bytes.len()
            ),
        }
    }
    // The same through a file: truncate the bag's own storage file.
    let dir = fresh_path(&tmp, "trunc_file");
    let full = small_bag(&dir);
    let file = BagReader::open(&dir).unwrap().files()[0].clone();
    std::fs::write(&file, &full[..full.len() / 2]).unwrap();
    let err = BagReader::open(&dir).unwrap_err();
    assert!(matches!(err, BagError::Mcap { .. }), "{err}");
    assert!(
        err.to_string().contains(&file.display().to_string()),
        "{err}"
    );
}

#[test]
fn corrupted_bytes_never_panic() {
    let tmp = tempfile::tempdir().unwrap();
    for compression in [Compression::None, Compression::Zstd, Compression::Lz4] {
        let bytes = small_bag_with(&fresh_path(&tmp, "flip"), compression);
        let mut errors = 0;
        for i in 0..bytes.len() {
            for mask in [0x01u8, 0x80, 0xff] {
                let mut damaged = bytes.clone();
                damaged[i] ^= mask;
                // Either a clean read or an error; a panic fails the test.
                if BagReader::from_mcap_bytes(&damaged).is_err() {
                    errors += 1;
                }
            }
        }
        // Chunk CRCs and record framing catch most flips; summary-only bytes may not matter.
        assert!(
            errors > bytes.len(),
            "{compression:?}: only {errors} of {} flips detected",
            3 * bytes.len()
        );
    }

    // Pseudo-random garbage, with and without a valid magic in front.
    let mut state = 0x2545_f491_4f6c_dd1du64;
    for len in [0usize, 1, 7, 8, 9, 64, 4096] {
        let mut garbage = Vec::with_capacity(len);
        for _ in 0..len {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            garbage.push(state as u8);
        }
        assert!(matches!(
            BagReader::from_mcap_bytes(&garbage),
            Err(BagError::Mcap { .. })
        ));
        let mut with_magic = mcap::MAGIC.to_vec();
        with_magic.extend_from_slice(&garbage);
        with_magic.extend_from_slice(mcap::MAGIC);
        assert!(BagReader::from_mcap_bytes(&with_magic).is_err());
    }
}

/// Writes an MCAP file by hand with one channel and one message.
fn handmade(
    profile: &str,
    schema: Option<(&str, &str)>,
    message_encoding: &str,
    payload: &[u8],
) -> Vec<u8> {
    let mut buf = Cursor::new(Vec::new());
    {
        let mut w = mcap::WriteOptions::new()
            .profile(profile)
            .create(&mut buf)
            .unwrap();
        let schema_id = match schema {
            Some((name, encoding)) => w
                .add_schema(name, encoding, string_definition().as_bytes())
                .unwrap(),
            None => 0,
        };
        let channel = w
            .add_channel(schema_id, "/chatter", message_encoding, &BTreeMap::new())
            .unwrap();
        w.write_to_known_channel(
            &mcap::records::MessageHeader {
                channel_id: channel,
                sequence: 1,
                log_time: T0,
                publish_time: T0,
            },
            payload,
        )
        .unwrap();
        w.finish().unwrap();
    }
    buf.into_inner()
}

#[test]
fn foreign_content_is_named_in_the_error() {
    let good = handmade(
        "ros2",
        Some((STRING_TYPE, "ros2msg")),
        "cdr",
        &string_cdr("x"),
    );
    let bag = BagReader::from_mcap_bytes(&good).unwrap();
    assert_eq!(bag.messages()[0].data, string_cdr("x"));
    // No QoS metadata on the channel: an empty list, not an error.
    assert!(bag.topics()[0].offered_qos_profiles.is_empty());

    let err = BagReader::from_mcap_bytes(&handmade(
        "ros2",
        Some((STRING_TYPE, "ros2msg")),
        "json",
        b"{\"data\":\"x\"}",
    ))
    .unwrap_err();
    assert!(
        matches!(&err, BagError::UnsupportedEncoding { topic, encoding }
            if topic == "/chatter" && encoding == "json"),
        "{err}"
    );

    let err =
        BagReader::from_mcap_bytes(&handmade("ros2", None, "cdr", &string_cdr("x"))).unwrap_err();
    assert!(
        matches!(&err, BagError::MissingSchema { schema_id: 0, .. }),
        "{err}"
    );

    let err = BagReader::from_mcap_bytes(&handmade(
        "ros2",
        Some((STRING_TYPE, "jsonschema")),
        "cdr",
        &string_cdr("x"),
    ))
    .unwrap_err();
    assert!(
        matches!(&err, BagError::UnsupportedSchemaEncoding { .. }),
        "{err}"
    );

    let err = BagReader::from_mcap_bytes(&handmade(
        "ros1",
        Some((STRING_TYPE, "ros2msg")),
        "cdr",
        &string_cdr("x"),
    ))
    .unwrap_err();
    assert!(
        matches!(&err, BagError::WrongProfile { profile, .. } if profile == "ros1"),
        "{err}"
    );

    let err = BagReader::from_mcap_bytes(&handmade(
        "ros2",
        Some((STRING_TYPE, "ros2msg")),
        "cdr",
        &[0, 1],
    ))
    .unwrap_err();
    assert!(
        matches!(&err, BagError::BadPayload { topic, log_time: T0, .. } if topic == "/chatter"),
        "{err}"
    );
    assert!(err.to_string().contains("encapsulation"), "{err}");
}

fn edit_metadata(dir: &Path, from: &str, to: &str) {
    let path = dir.join("metadata.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.contains(from),
        "{from:?} not in metadata.yaml:\n{text}"
    );
    std::fs::write(&path, text.replacen(from, to, 1)).unwrap();
}

#[test]
fn metadata_contradicting_the_storage_is_an_error() {
    let tmp = tempfile::tempdir().unwrap();

    let dir = fresh_path(&tmp, "count");
    small_bag(&dir);
    edit_metadata(&dir, "message_count: 6", "message_count: 7");
    let err = BagReader::open(&dir).unwrap_err();
    assert!(matches!(err, BagError::MetadataMismatch { .. }), "{err}");

    let dir = fresh_path(&tmp, "type");
    small_bag(&dir);
    edit_metadata(
        &dir,
        "type: std_msgs/msg/String",
        "type: std_msgs/msg/Int32",
    );
    let err = BagReader::open(&dir).unwrap_err();
    assert!(err.to_string().contains("std_msgs/msg/Int32"), "{err}");

    let dir = fresh_path(&tmp, "sqlite");
    small_bag(&dir);
    edit_metadata(
        &dir,
        "storage_identifier: mcap",
        "storage_identifier: sqlite3",
    );
    let err = BagReader::open(&dir).unwrap_err();
    assert!(matches!(err, BagError::Unsupported { .. }), "{err}");

    let dir = fresh_path(&tmp, "compressed");
    small_bag(&dir);
    edit_metadata(&dir, "compression_mode: ''", "compression_mode: file");
    assert!(matches!(
        BagReader::open(&dir),
        Err(BagError::Unsupported { .. })
    ));

    let dir = fresh_path(&tmp, "yaml");
    small_bag(&dir);
    edit_metadata(&dir, "version: 9", "version: [9");
    let err = BagReader::open(&dir).unwrap_err();
    assert!(matches!(err, BagError::Yaml { .. }), "{err}");
    assert!(err.to_string().contains("metadata.yaml"), "{err}");

    let dir = fresh_path(&tmp, "missing_file");
    small_bag(&dir);
    let name = dir.file_name().unwrap().to_str().unwrap().to_string();
    std::fs::remove_file(dir.join(format!("{name}_0.mcap"))).unwrap();
    assert!(matches!(BagReader::open(&dir), Err(BagError::Io { .. })));
}

#[test]
fn directories_without_a_single_mcap_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let empty = fresh_path(&tmp, "nothing");
    std::fs::create_dir(&empty).unwrap();
    assert!(matches!(
        BagReader::open(&empty),
        Err(BagError::NoStorageFile { .. })
    ));

    let dir = fresh_path(&tmp, "two");
    let bytes = small_bag(&dir);
    std::fs::remove_file(dir.join("metadata.yaml")).unwrap();
    std::fs::write(dir.join("other.mcap"), &bytes).unwrap();
    let err = BagReader::open(&dir).unwrap_err();
    assert!(matches!(err, BagError::NoStorageFile { .. }), "{err}");
    assert!(err.to_string().contains("2 .mcap files"), "{err}");

    assert!(matches!(
        BagReader::open(tmp.path().join("does_not_exist")),
        Err(BagError::Io { .. })
    ));
}

#[test]
fn writer_refuses_bad_input() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = fresh_path(&tmp, "w");
    let mut w = BagWriter::create(&dir).unwrap();
    assert!(matches!(
        BagWriter::create(&dir),
        Err(BagError::AlreadyExists { .. })
    ));
    let def = string_definition();
    let ok = string_cdr("ok");
    assert!(matches!(
        w.write("chatter", STRING_TYPE, &def, 1, 1, &ok),
        Err(BagError::InvalidTopicName { .. })
    ));
    assert!(matches!(
        w.write("/chatter", "std_msgs/String", &def, 1, 1, &ok),
        Err(BagError::InvalidTypeName { .. })
    ));
    w.write("/chatter", STRING_TYPE, &def, 1, 1, &ok).unwrap();
    assert!(matches!(
        w.write(
            "/chatter",
            JOINT_STATE_TYPE,
            &joint_state_definition(),
            2,
            2,
            &ok
        ),
        Err(BagError::TopicTypeConflict { .. })
    ));
    assert!(matches!(
        w.write("/chatter", STRING_TYPE, "string other\n", 2, 2, &ok),
        Err(BagError::DefinitionConflict { .. })
    ));
    // A second topic of the same type must use the same definition.
    assert!(matches!(
        w.write("/other", STRING_TYPE, "string other\n", 2, 2, &ok),
        Err(BagError::DefinitionConflict { .. })
    ));
    assert!(matches!(
        w.write("/chatter", STRING_TYPE, &def, 2, 2, &[0, 1, 0]),
        Err(BagError::BadPayload { .. })
    ));
    assert!(matches!(
        w.write_to_topic("/nowhere", 2, 2, &ok),
        Err(BagError::UnknownTopic { .. })
    ));
    // Re-adding the identical spec is fine; changing its QoS is not.
    let spec = TopicSpec::new("/chatter", STRING_TYPE, &def);
    w.add_topic(spec.clone()).unwrap();
    assert!(matches!(
        w.add_topic(spec.with_qos(vec![])),
        Err(BagError::DefinitionConflict { .. })
    ));
    let mut idl = TopicSpec::new("/idl", STRING_TYPE, &def);
    idl.definition_encoding = "protobuf".into();
    assert!(matches!(
        w.add_topic(idl),
        Err(BagError::UnsupportedSchemaEncoding { .. })
    ));
    // The refused writes left the bag consistent.
    let meta = w.finish().unwrap();
    assert_eq!(meta.message_count, 1);
    let bag = BagReader::open(&dir).unwrap();
    assert_eq!(bag.message_count(), 1);
    assert_eq!(bag.messages()[0].data, ok);
}
