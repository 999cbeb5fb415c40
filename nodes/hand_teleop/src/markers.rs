//! RViz markers of `hand_mapping` (`visualization_msgs/MarkerArray` on `~/markers`), in the
//! robot hand's root frame (`palm`, published by `robot_sim` with `urdf/hit_dlr_hand.urdf`):
//!
//! | namespace | marker | what |
//! |---|---|---|
//! | `human_hand` | `LINE_STRIP` per finger | the calibrated human hand model (joint origins to fingertip), beside the robot hand (offset `human_offset`) |
//! | `targets` | `SPHERE` per robot finger | the scaled human fingertip the robot finger aims at: green when reached (within 1 mm), orange when out of reach, red when the finger is in contact |
//! | `contacts` | `TEXT_VIEW_FACING` per contact | `contact: <finger> <d> mm` in red above the fingertip |

use nalgebra::{Point3, Vector3};
use rpq_hand::mapping::MappedHand;
use rpq_hand::model::{ChainFrames, HandModel};
use rpq_hand::robot::{HitDlrHand, RobotFinger};
use rpq_hand::Finger;
use rpq_ros::msg::builtin_interfaces::Time;
use rpq_ros::msg::geometry_msgs::{Point, Pose, Quaternion, Vector3 as RosVector3};
use rpq_ros::msg::std_msgs::{ColorRGBA, Header};
use rpq_ros::msg::visualization_msgs::{Marker, MarkerArray};

use crate::contact::Contact;

/// Frame of the markers: the HIT/DLR URDF's root link.
pub const FRAME: &str = "palm";

fn point(p: &Vector3<f64>) -> Point {
    Point {
        x: p.x,
        y: p.y,
        z: p.z,
    }
}

fn color(r: f32, g: f32, b: f32) -> ColorRGBA {
    ColorRGBA { r, g, b, a: 1.0 }
}

/// The red of contact warnings.
pub const CONTACT_RED: (f32, f32, f32) = (1.0, 0.0, 0.0);

/// Markers of one mapped reading. `contacts` are the current fingertip contacts.
pub fn build(
    human: &HandModel,
    mapped: &MappedHand,
    contacts: &[Contact],
    human_offset: &Vector3<f64>,
    stamp: Time,
) -> MarkerArray {
    let header = Header {
        stamp,
        frame_id: FRAME.to_string(),
    };
    let base = |ns: &str, id: i32, kind: i32| Marker {
        header: header.clone(),
        ns: ns.to_string(),
        id,
        r#type: kind,
        action: Marker::ADD,
        pose: Pose {
            position: Point::default(),
            orientation: Quaternion {
                x: 0.0,
                y: 0.0,
                z: 0.0,
                w: 1.0,
            },
        },
        scale: RosVector3 {
            x: 1.0,
            y: 1.0,
            z: 1.0,
        },
        ..Default::default()
    };
    let mut markers = vec![Marker {
        header: header.clone(),
        action: Marker::DELETEALL,
        ..Default::default()
    }];
    let mut frames = ChainFrames::default();
    for f in Finger::ALL {
        let p = human.finger(f);
        p.frames(f, &mapped.human[f.index()], &mut frames);
        let mut m = base("human_hand", f.index() as i32, Marker::LINE_STRIP);
        m.scale.x = 0.006;
        m.color = color(0.95, 0.8, 0.6);
        m.points = frames
            .origins
            .iter()
            .chain(std::iter::once(&frames.tip))
            .map(|o| point(&(o + human_offset)))
            .collect();
        markers.push(m);
    }
    for (i, rf) in RobotFinger::ALL.iter().enumerate() {
        let target =
            HitDlrHand::finger_base(*rf, mapped.robot[0]) * Point3::from(mapped.targets[i]);
        let contact = contacts.iter().find(|c| c.finger == *rf);
        let mut m = base("targets", i as i32, Marker::SPHERE);
        m.pose.position = point(&target.coords);
        m.scale = RosVector3 {
            x: 0.012,
            y: 0.012,
            z: 0.012,
        };
        m.color = if contact.is_some() {
            color(CONTACT_RED.0, CONTACT_RED.1, CONTACT_RED.2)
        } else if mapped.tip_error[i] < 1e-3 {
            color(0.1, 0.9, 0.2)
        } else {
            color(1.0, 0.6, 0.0)
        };
        markers.push(m);
        if let Some(c) = contact {
            let mut t = base("contacts", i as i32, Marker::TEXT_VIEW_FACING);
            t.pose.position = point(&(target.coords + Vector3::new(0.0, 0.0, 0.03)));
            t.scale.z = 0.015;
            t.color = color(CONTACT_RED.0, CONTACT_RED.1, CONTACT_RED.2);
            t.text = format!("contact: {} {:.1} mm", rf.name(), c.distance * 1e3);
            markers.push(t);
        }
    }
    markers
        .iter_mut()
        .for_each(|m| m.header.frame_id = FRAME.to_string());
    MarkerArray { markers }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rpq_hand::mapping::HandMapper;

    #[test]
    fn markers_show_the_human_hand_targets_and_contacts_in_red() {
        let m = HandModel::nominal();
        let mut mapper = HandMapper::new(m.clone());
        let mapped = mapper.map(&[120.0; 20]).unwrap();
        let contacts = [Contact {
            finger: RobotFinger::Index,
            object: 0,
            distance: 0.002,
        }];
        let a = build(
            &m,
            &mapped,
            &contacts,
            &Vector3::new(0.0, 0.25, 0.0),
            Time::default(),
        );
        assert_eq!(a.markers[0].action, Marker::DELETEALL);
        let human: Vec<_> = a.markers.iter().filter(|m| m.ns == "human_hand").collect();
        assert_eq!(human.len(), 5);
        assert!(human.iter().all(|m| m.points.len() == 6));
        let targets: Vec<_> = a.markers.iter().filter(|m| m.ns == "targets").collect();
        assert_eq!(targets.len(), 4);
        assert_eq!(targets[1].color.r, 1.0);
        assert_eq!(targets[1].color.g, 0.0);
        let text: Vec<_> = a.markers.iter().filter(|m| m.ns == "contacts").collect();
        assert_eq!(text.len(), 1);
        assert!(text[0].text.contains("index"));
        assert!(a.markers.iter().all(|m| m.header.frame_id == FRAME));
    }
}
