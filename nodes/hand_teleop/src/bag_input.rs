//! Calibration samples from a rosbag2 recording of a calibration session.
//!
//! The bag holds the raw glove readings (`rpq_interfaces/msg/GloveReading`, any topic) and
//! the vision system's fingertip measurements as `geometry_msgs/msg/PointStamped` on
//! `<anything>/fingertips/<finger>` (finger = thumb, index, middle, ring, little; point in the
//! hand base frame `O0`, m). Each measurement is paired with the latest glove reading received
//! at most `max_age_s` before it (by bag receive time); each glove reading that has
//! measurements becomes one pose.

use rpq_bag::BagReader;
use rpq_hand::{Finger, Sample};
use rpq_ros::cdr;
use rpq_ros::interfaces::rpq_interfaces::msg::GloveReading;
use rpq_ros::msg::geometry_msgs::PointStamped;

use crate::convert;

/// Reads the samples of a calibration bag (directory or `.mcap`).
pub fn samples_from_bag(path: &str, max_age_s: f64) -> Result<Vec<Sample>, String> {
    let bag = BagReader::open(path).map_err(|e| format!("{path}: {e}"))?;
    let mut last: Option<(u64, usize, Vec<f64>)> = None;
    let mut readings = 0usize;
    let mut out = Vec::new();
    let mut measurements = 0usize;
    for m in bag.messages() {
        if m.type_name == "rpq_interfaces/msg/GloveReading" {
            let r: GloveReading =
                cdr::from_bytes(&m.data).map_err(|e| format!("{path}: {}: {e}", m.topic))?;
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
                .map_err(|e| format!("{path}: {}: {e}", m.topic))?;
            let p: PointStamped =
                cdr::from_bytes(&m.data).map_err(|e| format!("{path}: {}: {e}", m.topic))?;
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
            "{path}: no fingertip measurement paired with a glove reading ({readings} valid glove readings, {measurements} measurements on */fingertips/<finger>)"
        ));
    }
    Ok(out)
}

/// Reads samples from a CSV file (`.csv`) or a rosbag2 (anything else).
pub fn load_samples(path: &str) -> Result<Vec<Sample>, String> {
    if path.ends_with(".csv") {
        rpq_hand::data::read_csv_file(path).map_err(|e| e.to_string())
    } else {
        samples_from_bag(path, 0.05)
    }
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
