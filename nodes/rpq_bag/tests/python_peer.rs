//! Interop with third-party bag tools: a bag rpq_bag writes opens in `rosbags` (AnyReader and
//! rosbag2.Reader) and in `mcap-ros2-support`, and a bag `rosbags` writes opens in rpq_bag.
//!
//! Needs the Python environment of the test peers (`rosbags`, `mcap-ros2-support`, numpy):
//! `RPQ_PYENV` names its prefix (the tests run `$RPQ_PYENV/bin/python`). `tests/run_all.sh`
//! creates it and sets the variable; without it these tests fail (they never skip).

mod common;

use std::collections::BTreeMap;

use common::*;
use rpq_bag::{BagReader, BagWriter, QosProfile, TopicSpec};

const T0: u64 = 1_700_000_000_000_000_000;
/// RIHS01 of std_msgs/msg/String on Jazzy.
const STRING_HASH: &str = "RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18";

#[test]
fn rpq_bag_output_opens_in_rosbags_and_mcap_ros2() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = fresh_path(&tmp, "to_python");
    let mut w = BagWriter::create(&dir).unwrap();
    w.add_topic(
        TopicSpec::new("/robot_description", STRING_TYPE, &string_definition())
            .with_qos(vec![QosProfile::latched()])
            .with_type_hash(STRING_HASH),
    )
    .unwrap();
    let mut expected = Vec::new();
    let mut put = |w: &mut BagWriter, topic: &str, ty: &str, def: &str, t: u64, cdr: Vec<u8>| {
        w.write(topic, ty, def, t, t, &cdr).unwrap();
        expected.push((
            t,
            topic.to_string(),
            ty.to_string(),
            canonical_fields(ty, &cdr),
        ));
    };
    put(
        &mut w,
        "/robot_description",
        STRING_TYPE,
        &string_definition(),
        T0 + 2,
        string_cdr("<robot name=\"rx60b\"/>"),
    );
    for k in 0..12 {
        let i = (k * 5) % 12; // out of log-time order
        put(
            &mut w,
            "/joint_states",
            JOINT_STATE_TYPE,
            &joint_state_definition(),
            T0 + 1_000 + i as u64 * 8_000_000,
            joint_state_cdr(&joint_state_sample(i)),
        );
    }
    for i in 0..4u64 {
        put(
            &mut w,
            "/chatter",
            STRING_TYPE,
            &string_definition(),
            T0 + i * 20_000_000,
            string_cdr(&format!("msg {i}: ünïcödé ✓")),
        );
    }
    w.finish().unwrap();
    expected.sort();

    let lines = peer("read", &dir);
    for reader in ["anyreader", "rosbag2", "mcap_ros2"] {
        let mut got: Vec<(u64, String, String, String)> = lines
            .iter()
            .filter(|l| l[0] == reader)
            .map(|l| {
                (
                    l[3].parse().unwrap(),
                    l[1].clone(),
                    l[2].clone(),
                    l[4].clone(),
                )
            })
            .collect();
        if reader != "rosbag2" {
            assert!(
                got.windows(2).all(|p| p[0].0 <= p[1].0),
                "{reader} not in log-time order"
            );
        }
        got.sort();
        assert_eq!(got, expected, "{reader} decoded something else");
    }
    let meta: BTreeMap<&str, &Vec<String>> = lines
        .iter()
        .filter(|l| l[0] == "meta")
        .map(|l| (l[1].as_str(), l))
        .collect();
    assert_eq!(meta["/joint_states"][3], "12");
    assert_eq!(meta["/chatter"][3], "4");
    assert!(meta["/robot_description"][4].contains(&format!("digest={STRING_HASH}")));
    assert!(meta["/robot_description"][4].contains("qos=keep_last/1/reliable/transient_local"));
    assert!(meta["/joint_states"][4].contains("serialization=cdr"));
    assert!(meta["/joint_states"][4].contains("qos=keep_last/10/reliable/volatile"));
    assert_eq!(meta["*"][3], "17");
    assert!(
        meta["*"][4].contains(&format!("start={T0}")),
        "{:?}",
        meta["*"]
    );
    assert!(meta["*"][4].contains("distro=jazzy"), "{:?}", meta["*"]);
}

#[test]
fn rosbags_output_opens_in_rpq_bag() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = fresh_path(&tmp, "from_python");
    let written = peer("write", &dir);
    let mut expected: Vec<(u64, String, String, String)> = written
        .iter()
        .map(|l| {
            assert_eq!(l[0], "written");
            (
                l[3].parse().unwrap(),
                l[1].clone(),
                l[2].clone(),
                l[4].clone(),
            )
        })
        .collect();
    expected.sort();
    assert_eq!(expected.len(), 9);

    let bag = BagReader::open(&dir).unwrap();
    let got: Vec<(u64, String, String, String)> = bag
        .messages()
        .iter()
        .map(|m| {
            (
                m.log_time,
                m.topic.clone(),
                m.type_name.clone(),
                canonical_fields(&m.type_name, &m.data),
            )
        })
        .collect();
    assert!(got.windows(2).all(|p| p[0].0 <= p[1].0));
    assert_eq!(got, expected);

    let chatter = bag.topic("/chatter").unwrap();
    assert_eq!(chatter.message_count, 4);
    assert_eq!(chatter.offered_qos_profiles, vec![QosProfile::latched()]);
    assert_eq!(chatter.type_hash, STRING_HASH);
    assert!(chatter.definition.contains("string data"));
    let js = bag.topic("/joint_states").unwrap();
    assert_eq!(js.message_count, 5);
    assert!(js.type_hash.starts_with("RIHS01_"));
    assert!(js.definition.contains("MSG: std_msgs/Header"));
    let meta = bag.metadata().unwrap();
    assert_eq!(meta.version, 9);
    assert_eq!(meta.message_count, 9);
}
