//! RViz markers of `path_shrinking` (`visualization_msgs/MarkerArray` on `~/markers`), in the
//! world frame:
//!
//! | namespace | marker | what |
//! |---|---|---|
//! | `obstacles` | `TRIANGLE_LIST` | each obstacle's mesh, grey |
//! | `workpiece` | `TRIANGLE_LIST` | the demonstration's workpiece at its pose, blue |
//! | `recorded` | `LINE_STRIP` | the recorded path of the workpiece centre, orange |
//! | `modified` | `LINE_STRIP` | the last program's modified path, green |
//! | `reduced` | `SPHERE_LIST` | the last program's reduced nodes, dark green |
//!
//! Every array starts with a `DELETEALL`.

use nalgebra::Point3;
use rpq_pathshrink::{Environment, Pose};
use rpq_ros::msg::builtin_interfaces::Time;
use rpq_ros::msg::geometry_msgs::{Point, Vector3 as RosVector3};
use rpq_ros::msg::std_msgs::{ColorRGBA, Header};
use rpq_ros::msg::visualization_msgs::{Marker, MarkerArray};

use crate::convert::pose_msg;

fn point(p: &Point3<f64>) -> Point {
    Point {
        x: p.x,
        y: p.y,
        z: p.z,
    }
}

fn marker(frame: &str, stamp: &Time, ns: &str, id: i32, kind: i32, rgba: [f32; 4]) -> Marker {
    Marker {
        header: Header {
            stamp: *stamp,
            frame_id: frame.to_string(),
        },
        ns: ns.to_string(),
        id,
        r#type: kind,
        action: Marker::ADD,
        pose: pose_msg(&Pose::identity()),
        scale: RosVector3 {
            x: 1.0,
            y: 1.0,
            z: 1.0,
        },
        color: ColorRGBA {
            r: rgba[0],
            g: rgba[1],
            b: rgba[2],
            a: rgba[3],
        },
        ..Marker::default()
    }
}

fn mesh_points(model: &rpq_proximity::Model) -> Vec<Point> {
    let v = model.vertices();
    model
        .triangles()
        .iter()
        .flat_map(|t| t.map(|k| point(&v[k as usize])))
        .collect()
}

/// What the markers show.
#[derive(Debug, Default)]
pub struct Shown<'a> {
    /// The demonstration's workpiece pose.
    pub workpiece: Option<Pose>,
    /// The recorded path (poses).
    pub recorded: &'a [Pose],
    /// The last program's modified path.
    pub modified: &'a [Pose],
    /// The last program's reduced nodes.
    pub reduced: &'a [Pose],
}

/// The marker array of `env` and what is `shown`.
pub fn markers(env: &Environment, shown: &Shown, frame: &str, stamp: &Time) -> MarkerArray {
    let mut out = vec![Marker {
        action: Marker::DELETEALL,
        ..Marker::default()
    }];
    for (i, ob) in env.obstacles.iter().enumerate() {
        let mut m = marker(
            frame,
            stamp,
            "obstacles",
            i as i32,
            Marker::TRIANGLE_LIST,
            [0.6, 0.6, 0.6, 0.6],
        );
        m.pose = pose_msg(&ob.pose);
        m.points = mesh_points(&ob.model);
        out.push(m);
    }
    if let Some(p) = shown.workpiece {
        let mut m = marker(
            frame,
            stamp,
            "workpiece",
            0,
            Marker::TRIANGLE_LIST,
            [0.2, 0.4, 0.9, 0.9],
        );
        m.pose = pose_msg(&p);
        m.points = mesh_points(&env.workpiece.model);
        out.push(m);
    }
    let c = env.workpiece.centre;
    let centres = |poses: &[Pose]| poses.iter().map(|p| point(&(p * c))).collect::<Vec<_>>();
    for (ns, poses, kind, rgba, width) in [
        (
            "recorded",
            shown.recorded,
            Marker::LINE_STRIP,
            [1.0, 0.55, 0.0, 1.0],
            0.001,
        ),
        (
            "modified",
            shown.modified,
            Marker::LINE_STRIP,
            [0.1, 0.8, 0.2, 1.0],
            0.0015,
        ),
        (
            "reduced",
            shown.reduced,
            Marker::SPHERE_LIST,
            [0.0, 0.45, 0.1, 1.0],
            0.004,
        ),
    ] {
        if poses.len() >= 2 {
            let mut m = marker(frame, stamp, ns, 0, kind, rgba);
            m.scale = RosVector3 {
                x: width,
                y: width,
                z: width,
            };
            m.points = centres(poses);
            out.push(m);
        }
    }
    MarkerArray { markers: out }
}
