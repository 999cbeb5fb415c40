//! Calibration samples from a rosbag2 recording of a calibration session.
//!
//! The bag holds the raw glove readings (`rpq_interfaces/msg/GloveReading`, any topic) and
//! the vision system's fingertip measurements as `geometry_msgs/msg/PointStamped` on
//! `<anything>/fingertips/<finger>` (finger = thumb, index, middle, ring, little; point in the
//! hand base frame `O0`, m). Each measurement is paired with the latest glove reading received
//! at most `max_age_s` before it (by bag receive time); each glove reading that has
//! measurements becomes one pose.

use std::path::Path;

use rpq_bag::{BagMessage, BagMetadata, BagReader};
use rpq_base::file::FileArea;
use rpq_hand::{Finger, Sample};
use rpq_ros::cdr;
use rpq_ros::interfaces::rpq_interfaces::msg::GloveReading;
use rpq_ros::msg::geometry_msgs::PointStamped;

use crate::convert;

/// Largest `metadata.yaml` of a rosbag2 directory read for a request (bytes).
const MAX_METADATA_BYTES: u64 = 1 << 20;

/// Most time between a fingertip measurement and the glove reading it is paired with (s).
const PAIRING_AGE_S: f64 = 0.05;

/// Reads the samples of a calibration bag (directory or `.mcap`) named by the person running
/// the program (no sandbox: see [`load_samples_in`] for names from requests).
pub fn samples_from_bag(path: &str, max_age_s: f64) -> Result<Vec<Sample>, String> {
    let bag = BagReader::open(path).map_err(|e| format!("{path}: {e}"))?;
    samples_from_messages(bag.messages(), path, max_age_s)
}

/// Pairs the glove readings and fingertip measurements of `messages` (in receive-time order)
/// into samples; `what` names the bag in errors.
pub fn samples_from_messages(
    messages: &[BagMessage],
    what: &str,
    max_age_s: f64,
) -> Result<Vec<Sample>, String> {
    let mut last: Option<(u64, usize, Vec<f64>)> = None;
    let mut readings = 0usize;
    let mut out = Vec::new();
    let mut measurements = 0usize;
    for m in messages {
        if m.type_name == "rpq_interfaces/msg/GloveReading" {
            let r: GloveReading =
                cdr::from_bytes(&m.data).map_err(|e| format!("{what}: {}: {e}", m.topic))?;
            match convert::order_reading(&r) {
                Ok((v, _)) if v.len() == 20 && v.iter().all(|x| x.is_finite()) => {
                    last = Some((m.log_time, readings, v));
                    readings += 1;
                }
                _ => last = None,
            }
        } else if m.type_name == "geometry_msgs/msg/PointStamped" {
            let Some((_, finger)) = m.topic.rsplit_once("/fingertips/") else {
                continue;
            };
            let finger: Finger = finger
                .parse()
                .map_err(|e| format!("{what}: {}: {e}", m.topic))?;
            let p: PointStamped =
                cdr::from_bytes(&m.data).map_err(|e| format!("{what}: {}: {e}", m.topic))?;
            measurements += 1;
            let Some((t, pose, raw)) = &last else {
                continue;
            };
            if (m.log_time.saturating_sub(*t)) as f64 * 1e-9 > max_age_s {
                continue;
            }
            let i = 4 * finger.index();
            out.push(Sample {
                pose: *pose,
                finger,
                readings: [raw[i], raw[i + 1], raw[i + 2], raw[i + 3]],
                tip: nalgebra::Vector3::new(p.point.x, p.point.y, p.point.z),
            });
        }
    }
    if out.is_empty() {
        return Err(format!(
            "{what}: no fingertip measurement paired with a glove reading ({readings} valid glove readings, {measurements} measurements on */fingertips/<finger>)"
        ));
    }
    Ok(out)
}

/// Reads samples from a CSV file (`.csv`) or a rosbag2 (anything else) named by the person
/// running the program (no sandbox: see [`load_samples_in`] for names from requests).
pub fn load_samples(path: &str) -> Result<Vec<Sample>, String> {
    if path.ends_with(".csv") {
        rpq_hand::data::read_csv_file(path).map_err(|e| e.to_string())
    } else {
        samples_from_bag(path, PAIRING_AGE_S)
    }
}

/// Replaces every `` `quoted` `` and `"quoted"` part of a reader's error message by `…`: the
/// readers quote the offending text of the file, and a reply or log line must never carry file
/// content.
pub fn redact_quoted(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut open: Option<char> = None;
    for c in message.chars() {
        match open {
            Some(q) if c == q => {
                out.push('…');
                out.push(c);
                open = None;
            }
            Some(_) => {}
            None => {
                out.push(c);
                if c == '`' || c == '"' {
                    open = Some(c);
                }
            }
        }
    }
    if open.is_some() {
        out.push('…');
    }
    out
}

/// Reads the samples a request names inside `area` (at most `limit` bytes of data in all):
/// `<name>.csv` (see `rpq_hand::data`), `<name>.mcap`, or a rosbag2 directory (its
/// `metadata.yaml` lists the storage files, else it must hold exactly one `.mcap`). Every file
/// is read through the area, so names leaving it, symbolic links out of it and special files
/// are refused; errors name the request's file and never quote its content.
pub fn load_samples_in(area: &FileArea, name: &str, limit: u64) -> Result<Vec<Sample>, String> {
    if name.ends_with(".csv") {
        let bytes = area.read(name, limit).map_err(|e| e.to_string())?;
        return rpq_hand::data::read_csv(bytes.as_slice())
            .map_err(|e| format!("{name}: {}", redact_quoted(&e.to_string())));
    }
    let dir = area.resolve_existing(name).map_err(|e| e.to_string())?;
    let messages = if !dir.is_dir() {
        if !name.ends_with(".mcap") {
            return Err(format!(
                "{name:?} refused: name a CSV file (*.csv), an MCAP file (*.mcap) or a rosbag2 directory"
            ));
        }
        let bytes = area.read(name, limit).map_err(|e| e.to_string())?;
        BagReader::from_mcap_bytes(&bytes)
            .map_err(|e| {
                format!(
                    "{name}: not a readable MCAP file: {}",
                    redact_quoted(&e.to_string())
                )
            })?
            .into_messages()
    } else {
        bag_directory_messages(area, name, &dir, limit)?
    };
    samples_from_messages(&messages, name, PAIRING_AGE_S)
}

/// The messages of the rosbag2 directory `name` (canonical path `dir`) of `area`, merged in
/// receive-time order.
fn bag_directory_messages(
    area: &FileArea,
    name: &str,
    dir: &Path,
    limit: u64,
) -> Result<Vec<BagMessage>, String> {
    let name = name.trim_end_matches('/');
    let meta_name = format!("{name}/{}", rpq_bag::metadata::METADATA_FILE);
    let files: Vec<String> = if dir.join(rpq_bag::metadata::METADATA_FILE).exists() {
        let text = area
            .read_to_string(&meta_name, MAX_METADATA_BYTES)
            .map_err(|e| e.to_string())?;
        let meta = BagMetadata::from_yaml_str(&text).map_err(|e| {
            format!(
                "{meta_name}: not rosbag2 metadata: {}",
                redact_quoted(&e.to_string())
            )
        })?;
        meta.relative_file_paths
            .iter()
            // Older rosbag2 versions prefixed the directory name: keep the file name.
            .map(|f| {
                Path::new(f)
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default()
            })
            .collect()
    } else {
        let entries = std::fs::read_dir(dir).map_err(|e| format!("{name}: {e}"))?;
        let mcaps: Vec<String> = entries
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".mcap"))
            .collect();
        if mcaps.len() != 1 {
            return Err(format!(
                "{name}: a rosbag2 directory without {} must hold exactly one .mcap file ({} found)",
                rpq_bag::metadata::METADATA_FILE,
                mcaps.len()
            ));
        }
        mcaps
    };
    if files.is_empty() {
        return Err(format!("{meta_name}: lists no storage files"));
    }
    let mut left = limit;
    let mut messages = Vec::new();
    for f in files {
        let file = format!("{name}/{f}");
        let bytes = area.read(&file, left).map_err(|e| match e {
            rpq_base::file::FileError::TooLarge { .. } => format!(
                "{name}: its storage files are larger than the limit of {limit} bytes together"
            ),
            e => e.to_string(),
        })?;
        left -= bytes.len() as u64;
        let bag = BagReader::from_mcap_bytes(&bytes).map_err(|e| {
            format!(
                "{file}: not a readable MCAP file: {}",
                redact_quoted(&e.to_string())
            )
        })?;
        messages.extend(bag.into_messages());
    }
    messages.sort_by_key(|m| m.log_time);
    Ok(messages)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rpq_bag::{BagWriter, TopicSpec};
    use rpq_hand::sim::{simulate, SimOptions};
    use rpq_hand::HandModel;
    use rpq_ros::msg::builtin_interfaces::Time;
    use rpq_ros::msg::geometry_msgs::Point;
    use rpq_ros::msg::std_msgs::Header;
    use rpq_ros::msg::RosMessage;

    #[test]
    fn bag_samples_equal_the_simulated_ones() {
        let m = HandModel::nominal();
        let sim = simulate(
            &m,
            &SimOptions {
                poses: 8,
                ..Default::default()
            },
        );
        let dir = std::env::temp_dir().join(format!("hand_bag_input_{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let mut w = BagWriter::create(&dir).unwrap();
        w.add_topic(TopicSpec::new(
            "/glove/raw",
            GloveReading::TYPE_NAME,
            &GloveReading::definition(),
        ))
        .unwrap();
        let mut t = 1_000_000_000u64;
        for p in 0..8 {
            let rows: Vec<&Sample> = sim.iter().filter(|s| s.pose == p).collect();
            let mut raw = [0.0; 20];
            for s in &rows {
                raw[4 * s.finger.index()..4 * s.finger.index() + 4].copy_from_slice(&s.readings);
            }
            let msg = convert::glove_reading(Time::default(), "glove", &raw);
            w.write_to_topic("/glove/raw", t, t, &cdr::to_vec(&msg).unwrap())
                .unwrap();
            for s in &rows {
                t += 1_000_000;
                let topic = format!("/vision/fingertips/{}", s.finger.name());
                let pt = PointStamped {
                    header: Header {
                        stamp: Time::default(),
                        frame_id: "O0".into(),
                    },
                    point: Point {
                        x: s.tip.x,
                        y: s.tip.y,
                        z: s.tip.z,
                    },
                };
                w.write(
                    &topic,
                    PointStamped::TYPE_NAME,
                    &PointStamped::definition(),
                    t,
                    t,
                    &cdr::to_vec(&pt).unwrap(),
                )
                .unwrap();
            }
            t += 100_000_000;
        }
        w.finish().unwrap();
        let got = samples_from_bag(dir.to_str().unwrap(), 0.05).unwrap();
        assert_eq!(got.len(), sim.len());
        for (a, b) in got.iter().zip(&sim) {
            assert_eq!(
                (a.pose, a.finger, a.readings),
                (b.pose, b.finger, b.readings)
            );
            assert!((a.tip - b.tip).norm() < 1e-15);
        }
        // measurements (1-5 ms after their reading) are not paired with a 0.1 ms limit
        let err = samples_from_bag(dir.to_str().unwrap(), 0.0001).unwrap_err();
        assert!(err.contains("no fingertip measurement paired"), "{err}");
        assert!(samples_from_bag("/nonexistent/bag", 0.05).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
