//! RViz markers of `virtual_protection`.
//!
//! `~/protection_markers` (latched, on every change of the set):
//!
//! | namespace | marker | what |
//! |---|---|---|
//! | `protections` | `TRIANGLE_LIST` | one per protection mesh: shield green, cutting aid blue, patient bone-white (translucent) |
//!
//! `~/markers` (at `marker_rate`, while the joint state is fresh):
//!
//! | namespace | marker | what |
//! |---|---|---|
//! | `distance` | `LINE_LIST` | from the tool point to the closest point of the patient (or of the nearest protection without a patient); green, red in contact |
//! | `label` | `TEXT_VIEW_FACING` | `tool-patient 3.21 mm` (or `contact`) at the line's midpoint |
//! | `contact` | `TRIANGLE_LIST` | the protection triangles the tool sphere touches (within its radius + 0.1 mm), red |
//!
//! Every array starts with a `DELETEALL`, so markers of vanished meshes or contacts go away.

use nalgebra::Point3;
use rpq_proximity::{segment_within, SegmentHit, SweepWorkspace};
use rpq_ros::msg::builtin_interfaces::Time;
use rpq_ros::msg::geometry_msgs::{Point, Pose, Quaternion, Vector3 as RosVector3};
use rpq_ros::msg::std_msgs::{ColorRGBA, Header};
use rpq_ros::msg::visualization_msgs::{Marker, MarkerArray};
use rpq_surgery::{ProtectionKind, ProtectionSet};

/// Contact margin beyond the tool radius for the red markers [m].
pub const CONTACT_MARGIN: f64 = 1e-4;

fn color(r: f32, g: f32, b: f32, a: f32) -> ColorRGBA {
    ColorRGBA { r, g, b, a }
}

fn point(p: &Point3<f64>) -> Point {
    Point {
        x: p.x,
        y: p.y,
        z: p.z,
    }
}

fn marker(header: &Header, ns: &str, id: i32, kind: i32) -> Marker {
    Marker {
        header: header.clone(),
        ns: ns.into(),
        id,
        r#type: kind,
        action: Marker::ADD,
        pose: Pose {
            orientation: Quaternion {
                x: 0.0,
                y: 0.0,
                z: 0.0,
                w: 1.0,
            },
            ..Default::default()
        },
        scale: RosVector3 {
            x: 1.0,
            y: 1.0,
            z: 1.0,
        },
        ..Default::default()
    }
}

fn delete_all(header: &Header) -> Marker {
    Marker {
        header: header.clone(),
        action: Marker::DELETEALL,
        ..Default::default()
    }
}

/// The colour of a protection kind.
pub fn kind_color(kind: ProtectionKind) -> ColorRGBA {
    match kind {
        ProtectionKind::Shield => color(0.2, 0.8, 0.3, 0.5),
        ProtectionKind::CuttingAid => color(0.2, 0.4, 1.0, 0.6),
        ProtectionKind::Patient => color(0.95, 0.92, 0.85, 0.8),
        ProtectionKind::Other => color(0.7, 0.7, 0.7, 0.5),
    }
}

/// The meshes of `set` as one `TRIANGLE_LIST` each (see the module docs).
pub fn protection_markers(set: &ProtectionSet, frame_id: &str, stamp: &Time) -> MarkerArray {
    let header = Header {
        stamp: *stamp,
        frame_id: frame_id.into(),
    };
    let mut markers = vec![delete_all(&header)];
    for (k, p) in set.items().iter().enumerate() {
        let mut m = marker(&header, "protections", k as i32, Marker::TRIANGLE_LIST);
        m.color = kind_color(p.kind);
        m.points = (0..p.model.num_triangles())
            .flat_map(|i| p.triangle(i))
            .map(|v| point(&v))
            .collect();
        m.text = p.name.clone();
        markers.push(m);
    }
    MarkerArray { markers }
}

/// The tool's distance to the patient (or the nearest protection) and its contacts.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolDistance {
    /// The tool point.
    pub tool: Point3<f64>,
    /// The closest point of the target mesh.
    pub closest: Point3<f64>,
    /// The target's name (`patient`, or the nearest protection's).
    pub target: String,
    /// Distance from the tool sphere's surface [m] (negative: overlapping).
    pub distance: f64,
    /// Triangles of any protection within the tool radius + [`CONTACT_MARGIN`].
    pub touched: Vec<[Point3<f64>; 3]>,
}

impl ToolDistance {
    /// In contact (within [`CONTACT_MARGIN`])?
    pub fn contact(&self) -> bool {
        self.distance <= CONTACT_MARGIN
    }
}

/// Computes [`ToolDistance`]s with reusable buffers.
#[derive(Debug, Default)]
pub struct DistanceProbe {
    probe: rpq_surgery::DistanceProbe,
    sweep: SweepWorkspace,
    hits: Vec<SegmentHit>,
}

impl DistanceProbe {
    /// A probe.
    pub fn new() -> DistanceProbe {
        DistanceProbe::default()
    }

    /// The distance of a tool sphere of `radius` at `tool` to the patient of `set` (or to its
    /// nearest protection without a patient); `None` for an empty set.
    pub fn measure(
        &mut self,
        set: &ProtectionSet,
        tool: &Point3<f64>,
        radius: f64,
    ) -> Option<ToolDistance> {
        let has_patient = set
            .items()
            .iter()
            .any(|p| p.kind == ProtectionKind::Patient);
        let mut best: Option<ToolDistance> = None;
        let mut touched = Vec::new();
        for p in set.items() {
            segment_within(
                &p.pose,
                &p.model,
                tool,
                tool,
                radius + CONTACT_MARGIN,
                &mut self.sweep,
                &mut self.hits,
            );
            touched.extend(self.hits.iter().map(|h| h.corners));
            if has_patient && p.kind != ProtectionKind::Patient {
                continue;
            }
            let Some(d) = self.probe.closest(p, tool, f64::INFINITY) else {
                continue;
            };
            if best
                .as_ref()
                .is_none_or(|b| d.distance - radius < b.distance)
            {
                best = Some(ToolDistance {
                    tool: *tool,
                    closest: d.point_a,
                    target: p.name.clone(),
                    distance: d.distance - radius,
                    touched: Vec::new(),
                });
            }
        }
        best.map(|mut b| {
            b.touched = touched;
            b
        })
    }
}

/// The distance line, its label and the touched triangles (see the module docs).
pub fn distance_markers(d: &ToolDistance, frame_id: &str, stamp: &Time) -> MarkerArray {
    let header = Header {
        stamp: *stamp,
        frame_id: frame_id.into(),
    };
    let red = color(1.0, 0.1, 0.1, 1.0);
    let line_color = if d.contact() {
        red
    } else {
        color(0.1, 0.9, 0.2, 1.0)
    };
    let mut line = marker(&header, "distance", 0, Marker::LINE_LIST);
    line.scale = RosVector3 {
        x: 0.0005,
        y: 0.0,
        z: 0.0,
    };
    line.color = line_color;
    line.points = vec![point(&d.tool), point(&d.closest)];
    let mut label = marker(&header, "label", 0, Marker::TEXT_VIEW_FACING);
    label.pose.position = point(&nalgebra::center(&d.tool, &d.closest));
    label.pose.position.z += 0.01;
    label.scale = RosVector3 {
        x: 0.0,
        y: 0.0,
        z: 0.008,
    };
    label.color = line_color;
    label.text = if d.contact() {
        format!("tool-{}: contact", d.target)
    } else {
        format!("tool-{} {:.2} mm", d.target, d.distance * 1e3)
    };
    let mut markers = vec![delete_all(&header), line, label];
    if !d.touched.is_empty() {
        let mut m = marker(&header, "contact", 0, Marker::TRIANGLE_LIST);
        m.color = red;
        m.points = d.touched.iter().flatten().map(point).collect();
        markers.push(m);
    }
    MarkerArray { markers }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::Isometry3;
    use rpq_kinematics::TriMesh;
    use rpq_surgery::Protection;

    #[test]
    fn distance_to_a_floor_patient_and_contacts() {
        let floor = TriMesh::new(
            vec![
                Point3::new(-1.0, -1.0, 0.0),
                Point3::new(1.0, -1.0, 0.0),
                Point3::new(1.0, 1.0, 0.0),
                Point3::new(-1.0, 1.0, 0.0),
            ],
            vec![[0, 1, 2], [0, 2, 3]],
        )
        .unwrap();
        let set = ProtectionSet::new().with(
            Protection::from_mesh(
                "patient",
                ProtectionKind::Patient,
                &floor,
                Isometry3::identity(),
            )
            .unwrap(),
        );
        let mut probe = DistanceProbe::new();
        let d = probe
            .measure(&set, &Point3::new(0.1, 0.2, 0.05), 0.01)
            .unwrap();
        assert!((d.distance - 0.04).abs() < 1e-8);
        assert!((d.closest - Point3::new(0.1, 0.2, 0.0)).norm() < 1e-8);
        assert!(!d.contact() && d.touched.is_empty());
        let a = distance_markers(&d, "world", &Time::default());
        assert_eq!(a.markers.len(), 3);
        assert_eq!(a.markers[2].text, "tool-patient 40.00 mm");
        let d = probe
            .measure(&set, &Point3::new(0.1, 0.2, 0.01), 0.01)
            .unwrap();
        assert!(d.contact() && !d.touched.is_empty());
        let a = distance_markers(&d, "world", &Time::default());
        assert_eq!(a.markers[1].color.r, 1.0);
        assert_eq!(a.markers[3].r#type, Marker::TRIANGLE_LIST);
        let m = protection_markers(&set, "world", &Time::default());
        assert_eq!(m.markers[0].action, Marker::DELETEALL);
        assert_eq!(m.markers[1].points.len(), 6);
        assert!(probe
            .measure(&ProtectionSet::new(), &Point3::origin(), 0.01)
            .is_none());
    }
}
