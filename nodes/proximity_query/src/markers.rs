//! RViz markers of `proximity_query` (`visualization_msgs/MarkerArray` on `~/markers`):
//!
//! | namespace | marker | what |
//! |---|---|---|
//! | `closest` | `LINE_LIST` | per group pair, the segment between its two witness points (green when apart, red when colliding) |
//! | `label` | `TEXT_VIEW_FACING` | per group pair, `group: distance` in millimetres at the segment's midpoint |
//! | `colliding` | `TRIANGLE_LIST` | each body that collides with another object's body, its mesh in red |
//! | `l2_boxes`, `l1_box` | `CUBE` | with `marker_boxes`: each robot link's box (level L2) and the whole robot's box (level L1), translucent |
//!
//! Every array starts with a `DELETEALL`, so markers of bodies that no longer collide vanish.

use std::collections::HashMap;

use nalgebra::{Isometry3, Translation3, UnitQuaternion};
use rpq_proximity::Obb;
use rpq_ros::interfaces::rpq_interfaces::msg::GroupDistances;
use rpq_ros::msg::builtin_interfaces::Time;
use rpq_ros::msg::geometry_msgs::{Point, Pose, Vector3 as RosVector3};
use rpq_ros::msg::std_msgs::{ColorRGBA, Header};
use rpq_ros::msg::visualization_msgs::{Marker, MarkerArray};
use rpq_scene::{BodyId, Object, World};

fn color(r: f32, g: f32, b: f32, a: f32) -> ColorRGBA {
    ColorRGBA { r, g, b, a }
}

fn pose(iso: &Isometry3<f64>) -> Pose {
    Pose::try_from(iso).unwrap_or_default()
}

fn scale(x: f64, y: f64, z: f64) -> RosVector3 {
    RosVector3 { x, y, z }
}

/// Builds the marker arrays; keeps each body's triangle list (mesh frame) so that meshes are
/// converted once, not at every publication.
#[derive(Debug, Default)]
pub struct MarkerBuilder {
    meshes: HashMap<BodyId, Vec<Point>>,
}

impl MarkerBuilder {
    /// A builder with no cached meshes.
    pub fn new() -> Self {
        Self::default()
    }

    fn mesh(&mut self, world: &World, id: BodyId) -> Vec<Point> {
        self.meshes
            .entry(id)
            .or_insert_with(|| {
                let model = &world.scenario().objects()[id.object].body(id.body).model;
                let v = model.vertices();
                model
                    .triangles()
                    .iter()
                    .flat_map(|t| t.map(|k| v[k as usize]))
                    .map(|p| Point {
                        x: p.x,
                        y: p.y,
                        z: p.z,
                    })
                    .collect()
            })
            .clone()
    }

    /// The markers of one publication: `distances` from the stream, the colliding bodies, and
    /// the robots' boxes when `boxes`. Poses are the world's current ones.
    pub fn build(
        &mut self,
        world: &World,
        distances: &GroupDistances,
        colliding: &[BodyId],
        boxes: bool,
        stamp: &Time,
    ) -> MarkerArray {
        let frame = distances.header.frame_id.clone();
        let header = Header {
            stamp: *stamp,
            frame_id: frame,
        };
        let base = |ns: &str, id: i32, kind: i32| Marker {
            header: header.clone(),
            ns: ns.to_string(),
            id,
            r#type: kind,
            action: Marker::ADD,
            pose: pose(&Isometry3::identity()),
            scale: scale(1.0, 1.0, 1.0),
            ..Default::default()
        };
        let mut markers = vec![Marker {
            header: header.clone(),
            action: Marker::DELETEALL,
            ..Default::default()
        }];
        for (k, g) in distances.groups.iter().enumerate() {
            if !g.valid {
                continue;
            }
            let id = i32::try_from(k).unwrap_or(i32::MAX);
            let c = if g.colliding {
                color(1.0, 0.1, 0.1, 1.0)
            } else {
                color(0.1, 0.9, 0.2, 1.0)
            };
            let mut line = base("closest", id, Marker::LINE_LIST);
            line.scale = scale(0.004, 0.0, 0.0);
            line.color = c;
            line.points = vec![g.point_a, g.point_b];
            markers.push(line);
            let mut label = base("label", id, Marker::TEXT_VIEW_FACING);
            label.pose.position = Point {
                x: 0.5 * (g.point_a.x + g.point_b.x),
                y: 0.5 * (g.point_a.y + g.point_b.y),
                z: 0.5 * (g.point_a.z + g.point_b.z) + 0.03,
            };
            label.scale = scale(0.0, 0.0, 0.03);
            label.color = color(1.0, 1.0, 1.0, 1.0);
            label.text = if g.colliding {
                format!("{}: colliding", g.group)
            } else {
                format!("{}: {:.1} mm", g.group, g.distance * 1000.0)
            };
            markers.push(label);
        }
        for (k, &id) in colliding.iter().enumerate() {
            let mut m = base(
                "colliding",
                i32::try_from(k).unwrap_or(i32::MAX),
                Marker::TRIANGLE_LIST,
            );
            m.pose = pose(&world.scenario().body_poses(id.object)[id.body]);
            m.color = color(1.0, 0.0, 0.0, 0.8);
            m.points = self.mesh(world, id);
            markers.push(m);
        }
        if boxes {
            let scenario = world.scenario();
            let mut n = 0;
            for (k, o) in scenario.objects().iter().enumerate() {
                if !matches!(o, Object::Complex(_)) {
                    continue;
                }
                for b in scenario.body_boxes(k) {
                    markers.push(box_marker(base("l2_boxes", n, Marker::CUBE), b, 0.25));
                    n += 1;
                }
                let id = i32::try_from(k).unwrap_or(i32::MAX);
                markers.push(box_marker(
                    base("l1_box", id, Marker::CUBE),
                    scenario.object_box(k),
                    0.08,
                ));
            }
        }
        MarkerArray { markers }
    }
}

fn box_marker(mut m: Marker, b: &Obb, alpha: f32) -> Marker {
    let iso = Isometry3::from_parts(
        Translation3::from(b.center.coords),
        UnitQuaternion::from_rotation_matrix(&b.axes),
    );
    m.pose = pose(&iso);
    m.scale = scale(
        2.0 * b.half_extents.x,
        2.0 * b.half_extents.y,
        2.0 * b.half_extents.z,
    );
    m.color = color(0.3, 0.6, 1.0, alpha);
    m
}
