//! `proximity_query`: the RPQ proximity engine as ROS 2 services and streams.
//!
//! ```text
//! proximity_query --ros-args --params-file config/proximity_query.yaml -p scene_file:=config/rx60_pair.scene.yaml
//! ```
//!
//! | interface | type | behaviour |
//! |---|---|---|
//! | sub `<robot>/joint_states` (parameter `joint_states_topic`) | `sensor_msgs/JointState` | each robot's joints, by name |
//! | sub `<topic>` of scene robots given as `robot_description: <topic>` | `std_msgs/String` (latched) | URDF at start-up |
//! | srv `~/check_collision` | `rpq_interfaces/CheckCollision` | colliding yes/no, pairs and triangles on request |
//! | srv `~/min_distance` | `rpq_interfaces/MinDistance` | distance, closest bodies, witness points in a frame |
//! | srv `~/check_tolerance` | `rpq_interfaces/CheckTolerance` | closer than a tolerance, pairs on request |
//! | srv `~/check_states` | `rpq_interfaces/CheckStates` | batch of configurations on all cores |
//! | srv `~/set_allowed_collision` | `rpq_interfaces/SetAllowedCollision` | run-time allowed collision matrix |
//! | srv `~/get_scene` | `rpq_interfaces/GetScene` | bodies, frames, joints, allowed pairs |
//! | pub `~/distances` | `rpq_interfaces/GroupDistances` | per group pair, every cycle at `stream_rate` |
//! | pub `~/markers` | `visualization_msgs/MarkerArray` | closest-point lines, labels, colliding links, boxes |
//! | sub `protections_topic` (e.g. `/virtual_protection/protections`) | `rpq_interfaces/ProtectionMeshes` (latched) | each set's meshes become simple objects of the scene (added, replaced, removed) |
//!
//! The node commands no motion. Requests are answered one at a time in arrival order.

use std::collections::HashMap;
use std::error::Error;
use std::path::Path;
use std::pin::pin;
use std::time::Duration;

use futures::stream::{self, StreamExt};
use proximity_query::markers::MarkerBuilder;
use proximity_query::protections::{objects_from_msg_cached, ObjectCache};
use proximity_query::server::Server;
use proximity_query::settings::{self, services, Settings};
use rpq_kinematics::MeshResolver;
use rpq_ros::interfaces::rpq_interfaces::msg::{GroupDistances, ProtectionMeshes};
use rpq_ros::interfaces::rpq_interfaces::srv::{
    CheckCollision, CheckStates, CheckTolerance, GetScene, MinDistance, SetAllowedCollision,
};
use rpq_ros::log::WarnThrottle;
use rpq_ros::msg::sensor_msgs::JointState;
use rpq_ros::msg::visualization_msgs::MarkerArray;
use rpq_ros::robot_description::{mesh_package_dirs, RobotDescription};
use rpq_ros::run::NodeStart;
use rpq_ros::{qos, ros_info, ros_warn};
use rpq_scene::{SceneError, SceneSpec, World};
use tokio::time::{interval, MissedTickBehavior};

/// Distance statistics of one group between two status lines.
#[derive(Clone, Debug, Default)]
struct Window {
    cycles: u64,
    colliding: u64,
    min: f64,
    max: f64,
}

impl Window {
    fn add(&mut self, distance: f64, colliding: bool) {
        if self.cycles == 0 {
            (self.min, self.max) = (distance, distance);
        }
        self.cycles += 1;
        self.colliding += u64::from(colliding);
        self.min = self.min.min(distance);
        self.max = self.max.max(distance);
    }

    /// The status text of the window, and a fresh window; `None` without a valid cycle.
    fn take_summary(&mut self) -> Option<String> {
        let w = std::mem::take(self);
        (w.cycles > 0).then(|| {
            format!(
                "last {} valid cycles: distance {:.4}..{:.4} m, colliding in {:.0} % of them",
                w.cycles,
                w.min,
                w.max,
                100.0 * w.colliding as f64 / w.cycles as f64
            )
        })
    }
}

fn main() -> std::process::ExitCode {
    rpq_ros::run_node(settings::NODE_NAME, &settings::declarations(), run)
}

/// Loads the scene file; robots that name a `robot_description` topic get their URDF from it
/// (latched), their `package://` mesh URIs resolved through the ament index.
async fn load_world(
    node: &mut rpq_ros::node::RosNode,
    s: &Settings,
) -> Result<World, Box<dyn Error>> {
    let file = &s.params.scene_file;
    let spec = SceneSpec::load(file)
        .map_err(|e| rpq_ros::NodeError::config("scene_file", e.to_string()))?;
    let mut texts: HashMap<String, String> = HashMap::new();
    for r in &spec.robots {
        if let Some(topic) = &r.robot_description {
            if !texts.contains_key(topic) {
                let timeout = Duration::from_secs_f64(s.params.description_timeout);
                let d = RobotDescription::from_named_topic(node, topic, timeout).await?;
                texts.insert(topic.clone(), d.urdf);
            }
        }
    }
    let base_dir = Path::new(file).parent().unwrap_or(Path::new("."));
    let mut description = |r: &rpq_scene::spec::RobotSpec| {
        let topic = r.robot_description.clone().unwrap_or_default();
        let text = texts.get(&topic).cloned().ok_or_else(|| {
            SceneError::Invalid(format!("robot `{}`: no description from {topic}", r.name))
        })?;
        let resolver = mesh_package_dirs(&text)
            .into_iter()
            .fold(MeshResolver::new(base_dir), |res, (pkg, dir)| {
                res.with_package(pkg, dir)
            });
        Ok((text, resolver))
    };
    let loaded = spec
        .build_with(base_dir, &mut description)
        .map_err(|e| rpq_ros::NodeError::config("scene_file", format!("{file}: {e}")))?;
    Ok(World::new(loaded))
}

async fn run(start: NodeStart) -> Result<(), Box<dyn Error>> {
    let (mut node, shutdown, clock, log) = start.into_parts();
    let s = Settings::load(node.params())?;
    let world = load_world(&mut node, &s).await?;
    let mut server = Server::new(world, &s)?;
    let robots = server.robot_names();

    let mut subs = Vec::new();
    for r in &robots {
        subs.push(node.subscription::<JointState>(&s.joint_states_topic(r), qos::default())?);
    }
    let mut joint_states = stream::select_all(
        subs.iter()
            .enumerate()
            .map(|(k, sub)| Box::pin(sub.async_stream().map(move |item| (k, item)))),
    );
    let collision_srv = node.service::<CheckCollision>(services::CHECK_COLLISION)?;
    let distance_srv = node.service::<MinDistance>(services::MIN_DISTANCE)?;
    let tolerance_srv = node.service::<CheckTolerance>(services::CHECK_TOLERANCE)?;
    let states_srv = node.service::<CheckStates>(services::CHECK_STATES)?;
    let allowed_srv = node.service::<SetAllowedCollision>(services::SET_ALLOWED_COLLISION)?;
    let scene_srv = node.service::<GetScene>(services::GET_SCENE)?;
    let mut collisions = pin!(collision_srv.receive_request_stream());
    let mut distances = pin!(distance_srv.receive_request_stream());
    let mut tolerances = pin!(tolerance_srv.receive_request_stream());
    let mut batches = pin!(states_srv.receive_request_stream());
    let mut alloweds = pin!(allowed_srv.receive_request_stream());
    let mut scenes = pin!(scene_srv.receive_request_stream());
    // protection meshes: converted (hierarchies built) on a blocking thread, applied here
    let protection_sub = if s.params.protections_topic.is_empty() {
        None
    } else {
        Some(node.subscription::<ProtectionMeshes>(&s.params.protections_topic, qos::latched())?)
    };
    let mut protection_msgs = pin!(match &protection_sub {
        Some(sub) => sub.async_stream().left_stream(),
        None => stream::pending().right_stream(),
    });
    // one worker converts the sets in arrival order (a slow set never overtakes a newer one)
    let (protection_tx, mut protection_rx) =
        tokio::sync::mpsc::channel::<(String, Result<Vec<rpq_scene::SimpleObject>, String>)>(4);
    let (set_tx, set_rx) = std::sync::mpsc::channel::<ProtectionMeshes>();
    std::thread::Builder::new()
        .name("protections".into())
        .spawn(move || {
            let mut cache = ObjectCache::default();
            while let Ok(msg) = set_rx.recv() {
                let objects = objects_from_msg_cached(&msg, &mut cache);
                if protection_tx
                    .blocking_send((msg.header.frame_id, objects))
                    .is_err()
                {
                    break;
                }
            }
        })?;
    let distance_pub =
        node.publisher::<GroupDistances>(settings::DISTANCES_TOPIC, qos::default())?;
    let marker_pub = node.publisher::<MarkerArray>(settings::MARKERS_TOPIC, qos::default())?;

    let mut tick = interval(Duration::from_secs_f64(1.0 / s.params.stream_rate));
    tick.set_missed_tick_behavior(MissedTickBehavior::Skip);
    let markers_on = s.params.marker_rate > 0.0;
    let mut marker_tick = interval(Duration::from_secs_f64(
        1.0 / s.params.marker_rate.max(0.01),
    ));
    marker_tick.set_missed_tick_behavior(MissedTickBehavior::Skip);
    let mut markers = MarkerBuilder::new();
    let mut last = GroupDistances::default();
    let mut throttle = WarnThrottle::new(5.0);
    let mut was_valid = false;
    let mut cycles: u64 = 0;
    // Per group since the last status line: cycles, colliding cycles, distance range; and
    // whether the group collided in the last cycle (contact start and end are logged).
    let mut window = vec![Window::default(); server.groups().len()];
    let mut in_contact = vec![false; server.groups().len()];
    let mut status = interval(Duration::from_secs(10));
    status.set_missed_tick_behavior(MissedTickBehavior::Skip);
    ros_info!(
        log,
        "proximity_query ready: scene {} with robots [{}] and {} bodies; stream {} Hz over {} group pair(s)",
        s.params.scene_file,
        robots.join(", "),
        server.world().scenario().objects().iter().map(|o| o.num_bodies()).sum::<usize>(),
        s.params.stream_rate,
        server.groups().len()
    );

    macro_rules! answer {
        ($srv:expr, $id:expr, $resp:expr, $name:expr) => {{
            let resp = $resp;
            if !resp.success {
                ros_warn!(log, "{}: refused: {}", $name, resp.message);
            }
            if let Err(e) = $srv.async_send_response($id, resp).await {
                ros_warn!(log, "cannot answer {}: {e}", $name);
            }
        }};
    }

    loop {
        tokio::select! {
            _ = shutdown.wait() => break,
            _ = tick.tick() => {
                let now = clock.now();
                let d = server.stream(&now);
                let valid = d.groups.iter().all(|g| g.valid);
                if valid != was_valid {
                    match (valid, d.groups.first()) {
                        (true, _) => ros_info!(log, "distance stream valid: joint states of every robot are fresh"),
                        (false, Some(g)) => ros_warn!(log, "distance stream invalid: {}", g.message),
                        (false, None) => {}
                    }
                    was_valid = valid;
                }
                if let Err(e) = distance_pub.publish(d.clone()) {
                    if let Some(m) = throttle.filter(&format!("cannot publish distances: {e}"), clock.seconds()) {
                        ros_warn!(log, "{m}");
                    }
                }
                for (k, g) in d.groups.iter().enumerate().filter(|(_, g)| g.valid) {
                    window[k].add(g.distance, g.colliding);
                    if g.colliding != in_contact[k] {
                        if g.colliding {
                            ros_info!(log, "{}: contact between {} and {}", g.group, g.body_a, g.body_b);
                        } else {
                            ros_info!(log, "{}: contact ended, {:.4} m apart", g.group, g.distance);
                        }
                        in_contact[k] = g.colliding;
                    }
                }
                last = d;
                cycles += 1;
            }
            _ = marker_tick.tick(), if markers_on => {
                let now = clock.now();
                let colliding = server.colliding_bodies(&now);
                let array = markers.build(server.world(), &last, &colliding, s.params.marker_boxes, &now);
                if let Err(e) = marker_pub.publish(array) {
                    if let Some(m) = throttle.filter(&format!("cannot publish markers: {e}"), clock.seconds()) {
                        ros_warn!(log, "{m}");
                    }
                }
            }
            _ = status.tick() => {
                for (g, w) in server.groups().iter().zip(window.iter_mut()) {
                    if let Some(line) = w.take_summary() {
                        ros_info!(log, "{}: {line} ({cycles} stream cycles in all)", g.name);
                    }
                }
            }
            item = joint_states.next() => match item {
                Some((k, Ok((msg, _)))) => {
                    if let Err(e) = server.on_joint_state(k, &msg, &clock.now()) {
                        if let Some(m) = throttle.filter(&format!("ignoring a joint state of `{}`: {e}", robots[k]), clock.seconds()) {
                            ros_warn!(log, "{m}");
                        }
                    }
                }
                Some((k, Err(e))) => {
                    if let Some(m) = throttle.filter(&format!("cannot read a joint state of `{}`: {e}", robots[k]), clock.seconds()) {
                        ros_warn!(log, "{m}");
                    }
                }
                None => return Err("the joint_states streams ended".into()),
            },
            item = collisions.next() => if let Some(Ok((id, req))) = item {
                answer!(collision_srv, id, server.check_collision(&req, &clock.now()), services::CHECK_COLLISION);
            },
            item = distances.next() => if let Some(Ok((id, req))) = item {
                answer!(distance_srv, id, server.min_distance(&req, &clock.now()), services::MIN_DISTANCE);
            },
            item = tolerances.next() => if let Some(Ok((id, req))) = item {
                answer!(tolerance_srv, id, server.check_tolerance(&req, &clock.now()), services::CHECK_TOLERANCE);
            },
            item = batches.next() => if let Some(Ok((id, req))) = item {
                answer!(states_srv, id, server.check_states(&req), services::CHECK_STATES);
            },
            item = alloweds.next() => if let Some(Ok((id, req))) = item {
                let resp = server.set_allowed_collision(&req);
                if resp.success {
                    ros_info!(log, "{}: {}", services::SET_ALLOWED_COLLISION, resp.message);
                }
                answer!(allowed_srv, id, resp, services::SET_ALLOWED_COLLISION);
            },
            item = scenes.next() => if let Some(Ok((id, _req))) = item {
                answer!(scene_srv, id, server.get_scene(), services::GET_SCENE);
            },
            item = protection_msgs.next() => match item {
                Some(Ok((msg, _))) => {
                    if set_tx.send(msg).is_err() {
                        return Err("the protections worker ended".into());
                    }
                }
                Some(Err(e)) => {
                    if let Some(m) = throttle.filter(&format!("cannot read a protection set: {e}"), clock.seconds()) {
                        ros_warn!(log, "{m}");
                    }
                }
                None => return Err("the protections stream ended".into()),
            },
            Some((frame, objects)) = protection_rx.recv() => {
                match objects.and_then(|set| server.set_protections(set, &frame)) {
                    Ok(summary) => ros_info!(log, "{summary}"),
                    Err(e) => ros_warn!(log, "ignoring a protection set: {e}"),
                }
            },
        }
    }
    ros_info!(log, "shutting down after {cycles} stream cycles");
    Ok(())
}
