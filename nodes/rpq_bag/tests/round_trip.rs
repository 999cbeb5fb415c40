//! Write → read round trips, checked against the MCAP records themselves and against
//! `metadata.yaml` parsed as plain YAML.

mod common;

use std::collections::BTreeMap;

use common::*;
use rpq_bag::qos::{Durability, History, QosProfile, Reliability};
use rpq_bag::{BagMessage, BagReader, BagWriter, Compression, TopicSpec, WriterOptions};
use serde_yaml::Value;

const T0: u64 = 1_700_000_000_000_000_000;
const STRING_HASH: &str = "RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18";

/// Writes a three-topic bag, the joint states in scrambled log-time order. Returns what was
/// written, in write order.
fn write_sample(dir: &std::path::Path, options: WriterOptions) -> Vec<BagMessage> {
    let mut w = BagWriter::create_with_options(dir, options).unwrap();
    w.add_topic(
        TopicSpec::new("/robot_description", STRING_TYPE, &string_definition())
            .with_qos(vec![QosProfile::latched()])
            .with_type_hash(STRING_HASH),
    )
    .unwrap();
    let mut written = Vec::new();
    let mut push = |w: &mut BagWriter, topic: &str, ty: &str, def: &str, t: u64, data: Vec<u8>| {
        w.write(topic, ty, def, t, t - 7, &data).unwrap();
        written.push(BagMessage {
            topic: topic.into(),
            type_name: ty.into(),
            log_time: t,
            publish_time: t - 7,
            sequence: 0,
            data,
        });
    };
    push(
        &mut w,
        "/robot_description",
        STRING_TYPE,
        &string_definition(),
        T0,
        string_cdr("<robot name=\"rx60b\"/>"),
    );
    // 20 joint states at 10 ms spacing, written in a scrambled order (7 is coprime to 20).
    for k in 0..20 {
        let i = (k * 7) % 20;
        let t = T0 + 5_000_000 + i as u64 * 10_000_000;
        push(
            &mut w,
            "/joint_states",
            JOINT_STATE_TYPE,
            &joint_state_definition(),
            t,
            joint_state_cdr(&joint_state_sample(i)),
        );
    }
    for i in 0..5u64 {
        let text = format!("hello {i} ünïcödé");
        push(
            &mut w,
            "/chatter",
            STRING_TYPE,
            &string_definition(),
            T0 + 1 + i * 33_000_000,
            string_cdr(&text),
        );
    }
    w.finish().unwrap();
    written
}

fn sorted(mut v: Vec<BagMessage>) -> Vec<BagMessage> {
    v.sort_by_key(|m| m.log_time);
    v
}

fn assert_same_messages(read: &[BagMessage], expected: &[BagMessage]) {
    assert_eq!(read.len(), expected.len());
    for (r, e) in read.iter().zip(expected) {
        assert_eq!(
            (&r.topic, &r.type_name, r.log_time, r.publish_time, &r.data),
            (&e.topic, &e.type_name, e.log_time, e.publish_time, &e.data)
        );
    }
}

#[test]
fn round_trip_keeps_bytes_order_topics_and_counts() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = fresh_path(&tmp, "sample");
    let written = write_sample(&dir, WriterOptions::default());
    let expected = sorted(written.clone());

    let bag = BagReader::open(&dir).unwrap();
    assert_same_messages(bag.messages(), &expected);
    assert!(bag
        .messages()
        .windows(2)
        .all(|w| w[0].log_time <= w[1].log_time));
    // Sequence numbers count per topic in write order.
    let js_seq: Vec<u32> = bag
        .messages()
        .iter()
        .filter(|m| m.topic == "/joint_states")
        .map(|m| m.sequence)
        .collect();
    let mut seq_sorted = js_seq.clone();
    seq_sorted.sort();
    assert_eq!(seq_sorted, (1..=20).collect::<Vec<u32>>());
    assert_ne!(
        js_seq, seq_sorted,
        "written out of order, read in log-time order"
    );

    assert_eq!(bag.message_count(), 26);
    assert_eq!(bag.start_time(), Some(T0));
    assert_eq!(bag.duration_ns(), 5_000_000 + 19 * 10_000_000);
    let names: Vec<&str> = bag.topics().iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["/robot_description", "/joint_states", "/chatter"]);
    let js = bag.topic("/joint_states").unwrap();
    assert_eq!(js.type_name, JOINT_STATE_TYPE);
    assert_eq!(js.definition, joint_state_definition());
    assert_eq!(js.definition_encoding, "ros2msg");
    assert_eq!(js.serialization_format, "cdr");
    assert_eq!(js.message_count, 20);
    assert_eq!(js.offered_qos_profiles, vec![QosProfile::rclcpp_default()]);
    assert_eq!(js.type_hash, "");
    let rd = bag.topic("/robot_description").unwrap();
    assert_eq!(rd.offered_qos_profiles, vec![QosProfile::latched()]);
    assert_eq!(rd.type_hash, STRING_HASH);
    assert_eq!(bag.topic("/chatter").unwrap().message_count, 5);

    // The reader's metadata is metadata.yaml.
    let meta = bag.metadata().unwrap();
    assert_eq!(meta.message_count, 26);
    assert_eq!(meta.topic("/joint_states").unwrap().message_count, 20);
}

#[test]
fn metadata_yaml_has_the_rosbag2_v9_layout() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = fresh_path(&tmp, "layout");
    let mut options = WriterOptions::default();
    options.custom_data.insert("rpq".into(), "test".into());
    write_sample(&dir, options);
    let name = dir.file_name().unwrap().to_str().unwrap().to_string();
    let text = std::fs::read_to_string(dir.join("metadata.yaml")).unwrap();
    let doc: Value = serde_yaml::from_str(&text).unwrap();
    let info = &doc["rosbag2_bagfile_information"];
    assert_eq!(info["version"], Value::from(9));
    assert_eq!(info["storage_identifier"], Value::from("mcap"));
    assert_eq!(info["ros_distro"], Value::from("jazzy"));
    assert_eq!(info["message_count"], Value::from(26));
    assert_eq!(info["compression_format"], Value::from(""));
    assert_eq!(info["compression_mode"], Value::from(""));
    assert_eq!(info["custom_data"]["rpq"], Value::from("test"));
    assert_eq!(
        info["starting_time"]["nanoseconds_since_epoch"],
        Value::from(T0)
    );
    assert_eq!(
        info["duration"]["nanoseconds"],
        Value::from(5_000_000u64 + 19 * 10_000_000)
    );
    let file = format!("{name}_0.mcap");
    assert_eq!(info["relative_file_paths"][0], Value::from(file.as_str()));
    assert_eq!(info["files"][0]["path"], Value::from(file.as_str()));
    assert_eq!(info["files"][0]["message_count"], Value::from(26));
    assert!(dir.join(&file).is_file());

    let topics = info["topics_with_message_count"].as_sequence().unwrap();
    assert_eq!(topics.len(), 3);
    let rd = &topics[0];
    assert_eq!(rd["message_count"], Value::from(1));
    let tm = &rd["topic_metadata"];
    assert_eq!(tm["name"], Value::from("/robot_description"));
    assert_eq!(tm["type"], Value::from(STRING_TYPE));
    assert_eq!(tm["serialization_format"], Value::from("cdr"));
    assert_eq!(tm["type_description_hash"], Value::from(STRING_HASH));
    let q = &tm["offered_qos_profiles"][0];
    assert_eq!(q["history"], Value::from("keep_last"));
    assert_eq!(q["depth"], Value::from(1));
    assert_eq!(q["reliability"], Value::from("reliable"));
    assert_eq!(q["durability"], Value::from("transient_local"));
    assert_eq!(q["liveliness"], Value::from("automatic"));
    assert_eq!(q["deadline"]["sec"], Value::from(9_223_372_036u64));
    assert_eq!(q["deadline"]["nsec"], Value::from(854_775_807u64));
    assert_eq!(q["avoid_ros_namespace_conventions"], Value::from(false));
    assert_eq!(topics[1]["message_count"], Value::from(20));
    assert_eq!(topics[2]["message_count"], Value::from(5));

    // No custom data: rosbag2 writes a null.
    let dir2 = fresh_path(&tmp, "nocustom");
    write_sample(&dir2, WriterOptions::default());
    let doc: Value =
        serde_yaml::from_str(&std::fs::read_to_string(dir2.join("metadata.yaml")).unwrap())
            .unwrap();
    assert!(doc["rosbag2_bagfile_information"]["custom_data"].is_null());
}

#[test]
fn mcap_records_follow_the_ros2_profile() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = fresh_path(&tmp, "records");
    write_sample(&dir, WriterOptions::default());
    let name = dir.file_name().unwrap().to_str().unwrap().to_string();
    let bytes = std::fs::read(dir.join(format!("{name}_0.mcap"))).unwrap();

    let mut profile = None;
    let mut schemas = BTreeMap::new();
    let mut channels = Vec::new();
    let mut metadata = Vec::new();
    let mut messages = 0;
    for record in mcap::read::ChunkFlattener::new(&bytes).unwrap() {
        match record.unwrap() {
            mcap::records::Record::Header(h) => profile = Some(h.profile),
            mcap::records::Record::Schema { header, data } => {
                schemas.insert(header.id, (header.name, header.encoding, data.into_owned()));
            }
            mcap::records::Record::Channel(c) => channels.push(c),
            mcap::records::Record::Message { .. } => messages += 1,
            mcap::records::Record::Metadata(m) => metadata.push(m),
            _ => {}
        }
    }
    assert_eq!(profile.as_deref(), Some("ros2"));
    // One schema per type although two topics carry std_msgs/String.
    let types: Vec<&str> = schemas.values().map(|s| s.0.as_str()).collect();
    assert_eq!(types, [STRING_TYPE, JOINT_STATE_TYPE]);
    for (name, encoding, data) in schemas.values() {
        assert_eq!(encoding, "ros2msg");
        let expected = if name == STRING_TYPE {
            string_definition()
        } else {
            joint_state_definition()
        };
        assert_eq!(data, expected.as_bytes());
    }
    assert_eq!(messages, 26);
    let by_topic: BTreeMap<&str, &mcap::records::Channel> =
        channels.iter().map(|c| (c.topic.as_str(), c)).collect();
    let rd = by_topic["/robot_description"];
    assert_eq!(rd.message_encoding, "cdr");
    assert_eq!(rd.metadata["topic_type_hash"], STRING_HASH);
    let qos = rpq_bag::qos::profiles_from_yaml(&rd.metadata["offered_qos_profiles"]).unwrap();
    assert_eq!(qos[0].durability, Durability::TransientLocal);
    assert_eq!(schemas[&rd.schema_id].0, STRING_TYPE);
    let js = by_topic["/joint_states"];
    assert_eq!(schemas[&js.schema_id].0, JOINT_STATE_TYPE);
    let qos = rpq_bag::qos::profiles_from_yaml(&js.metadata["offered_qos_profiles"]).unwrap();
    assert_eq!(qos[0].history, History::KeepLast);
    assert_eq!(qos[0].reliability, Reliability::Reliable);

    assert_eq!(metadata.len(), 1);
    assert_eq!(metadata[0].name, "rosbag2");
    let embedded =
        rpq_bag::BagMetadata::from_serialized_str(&metadata[0].metadata["serialized_metadata"])
            .unwrap();
    let yaml = rpq_bag::BagMetadata::from_yaml_str(
        &std::fs::read_to_string(dir.join("metadata.yaml")).unwrap(),
    )
    .unwrap();
    assert_eq!(embedded, yaml);

    // Reading from memory gives the same as reading the file.
    let from_bytes = BagReader::from_mcap_bytes(&bytes).unwrap();
    let from_file = BagReader::open(&dir).unwrap();
    assert_eq!(from_bytes.messages(), from_file.messages());
    assert_eq!(from_bytes.topics(), from_file.topics());
}

#[test]
fn directory_without_metadata_and_bare_mcap_open() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = fresh_path(&tmp, "bare");
    let expected = sorted(write_sample(&dir, WriterOptions::default()));
    let yaml_meta = BagReader::open(&dir).unwrap().metadata().cloned().unwrap();
    std::fs::remove_file(dir.join("metadata.yaml")).unwrap();

    let from_dir = BagReader::open(&dir).unwrap();
    assert_same_messages(from_dir.messages(), &expected);
    // Metadata now comes from the MCAP `rosbag2` record.
    assert_eq!(from_dir.metadata(), Some(&yaml_meta));
    assert_eq!(
        from_dir
            .mcap_metadata("rosbag2")
            .map(|m| m.contains_key("serialized_metadata")),
        Some(true)
    );

    let file = from_dir.files()[0].clone();
    assert_eq!(file.extension().unwrap(), "mcap");
    let from_file = BagReader::open(&file).unwrap();
    assert_same_messages(from_file.messages(), &expected);
}

#[test]
fn compressed_chunks_round_trip() {
    let tmp = tempfile::tempdir().unwrap();
    for compression in [Compression::Zstd, Compression::Lz4] {
        let dir = fresh_path(&tmp, "compressed");
        let expected = sorted(write_sample(
            &dir,
            WriterOptions {
                compression,
                ..WriterOptions::default()
            },
        ));
        let bag = BagReader::open(&dir).unwrap();
        assert_same_messages(bag.messages(), &expected);
        let summary_compression: Vec<String> = {
            let name = dir.file_name().unwrap().to_str().unwrap().to_string();
            let bytes = std::fs::read(dir.join(format!("{name}_0.mcap"))).unwrap();
            let summary = mcap::Summary::read(&bytes).unwrap().unwrap();
            summary
                .chunk_indexes
                .iter()
                .map(|c| c.compression.clone())
                .collect()
        };
        let expected_name = match compression {
            Compression::Zstd => "zstd",
            Compression::Lz4 => "lz4",
            Compression::None => "",
        };
        assert!(!summary_compression.is_empty());
        assert!(summary_compression.iter().all(|c| c == expected_name));
    }
}

#[test]
fn empty_bag_round_trips() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = fresh_path(&tmp, "empty");
    let mut w = BagWriter::create(&dir).unwrap();
    w.add_topic(TopicSpec::new("/idle", STRING_TYPE, &string_definition()))
        .unwrap();
    let meta = w.finish().unwrap();
    assert_eq!(meta.message_count, 0);
    assert_eq!(meta.duration.nanoseconds, 0);
    let bag = BagReader::open(&dir).unwrap();
    assert!(bag.messages().is_empty());
    assert_eq!(bag.topics().len(), 1);
    assert_eq!(bag.topics()[0].message_count, 0);
    assert_eq!(bag.duration_ns(), 0);
    assert_eq!(bag.start_time(), None);
}

#[test]
fn split_bag_files_are_merged_in_log_time_order() {
    let tmp = tempfile::tempdir().unwrap();
    let a = fresh_path(&tmp, "part");
    let b = fresh_path(&tmp, "part");
    let mut wa = BagWriter::create(&a).unwrap();
    let mut wb = BagWriter::create(&b).unwrap();
    for i in 0..10u64 {
        let w = if i.is_multiple_of(2) {
            &mut wa
        } else {
            &mut wb
        };
        w.write(
            "/chatter",
            STRING_TYPE,
            &string_definition(),
            T0 + i,
            T0 + i,
            &string_cdr(&i.to_string()),
        )
        .unwrap();
    }
    let mut meta = wa.finish().unwrap();
    let meta_b = wb.finish().unwrap();
    let b_file = meta_b.relative_file_paths[0].clone();
    std::fs::rename(b.join(&b_file), a.join(&b_file)).unwrap();
    meta.relative_file_paths.push(b_file);
    meta.message_count += meta_b.message_count;
    meta.topics_with_message_count[0].message_count += 5;
    std::fs::write(a.join("metadata.yaml"), meta.to_yaml_string().unwrap()).unwrap();

    let bag = BagReader::open(&a).unwrap();
    assert_eq!(bag.files().len(), 2);
    let texts: Vec<Vec<u8>> = bag.messages().iter().map(|m| m.data.clone()).collect();
    let expected: Vec<Vec<u8>> = (0..10u64).map(|i| string_cdr(&i.to_string())).collect();
    assert_eq!(texts, expected);
    assert_eq!(bag.topics()[0].message_count, 10);
}
