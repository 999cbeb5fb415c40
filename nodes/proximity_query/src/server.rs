//! The request handling of `proximity_query`: the scene ([`rpq_scene::World`]), each robot's last
//! joint state with its age, and one function per service that turns a request into a response.
//!
//! Rules every answer follows:
//! * a query about the current configuration needs a joint state of every robot it involves
//!   that is younger than `joint_state_timeout`, else it fails naming the robot (never a stale
//!   "no collision");
//! * a bad request (unknown name, wrong joint set, NaN/inf, negative tolerance, empty or
//!   oversized batch, too many names) gets `success = false` and a message naming the problem;
//!   nothing here panics on input and the node keeps serving.

use std::collections::HashSet;

use nalgebra::{Isometry3, Point3};
use rpq_ros::interfaces::rpq_interfaces::msg::{
    BodyPair, GroupDistance, GroupDistances, RobotState, SceneBody,
};
use rpq_ros::interfaces::rpq_interfaces::srv::{
    CheckCollisionRequest, CheckCollisionResponse, CheckStatesRequest, CheckStatesResponse,
    CheckToleranceRequest, CheckToleranceResponse, GetSceneResponse, MinDistanceRequest,
    MinDistanceResponse, SetAllowedCollisionRequest, SetAllowedCollisionResponse,
};
use rpq_ros::msg::builtin_interfaces::Time;
use rpq_ros::msg::geometry_msgs::{Point, Pose};
use rpq_ros::msg::sensor_msgs::JointState;
use rpq_ros::msg::std_msgs::Header;
use rpq_scene::{BodyId, ContactMode, Object, Selection, SimpleObject, World};

use crate::settings::Settings;
use crate::NodeError;

/// The last joint state of a robot.
#[derive(Clone, Debug)]
struct Stored {
    names: Vec<String>,
    positions: Vec<f64>,
    /// Time of the state [s, node clock]: its header stamp, or its arrival when unstamped.
    time: f64,
}

/// A robot of the scene and its last joint state.
#[derive(Clone, Debug)]
struct RobotSlot {
    object: usize,
    name: String,
    state: Option<Stored>,
}

/// A group pair of the distance stream, resolved against the scene.
#[derive(Clone, Debug)]
pub struct StreamGroup {
    /// Name published with each answer.
    pub name: String,
    a: Selection,
    b: Selection,
}

/// The scene and the robots' joint states, answering the node's services and streams.
#[derive(Clone, Debug)]
pub struct Server {
    world: World,
    world_frame: String,
    timeout: f64,
    max_batch: usize,
    max_names: usize,
    robots: Vec<RobotSlot>,
    groups: Vec<StreamGroup>,
    /// Objects put into the world by [`Server::set_protections`], in world order.
    protections: Vec<String>,
    /// Padding of every body [m] (`default_padding`), given to protections too.
    default_padding: f64,
}

fn point(p: &Point3<f64>) -> Point {
    Point {
        x: p.x,
        y: p.y,
        z: p.z,
    }
}

fn pose(iso: &Isometry3<f64>) -> Pose {
    // A pose of the scene is always finite (the library refuses others), so this cannot fail.
    Pose::try_from(iso).unwrap_or_default()
}

fn seconds(t: &Time) -> f64 {
    f64::from(t.sec) + f64::from(t.nanosec) * 1e-9
}

fn finite_all(values: &[f64]) -> bool {
    values.iter().all(|v| v.is_finite())
}

impl Server {
    /// The server for `world` with the node's settings: applies the paddings (default first,
    /// then each `name=metres` entry) and resolves the stream groups; an unknown name in either
    /// is a start-up error naming the parameter.
    pub fn new(mut world: World, settings: &Settings) -> Result<Server, NodeError> {
        let p = &settings.params;
        if p.default_padding > 0.0 {
            let names: Vec<String> = world
                .scenario()
                .objects()
                .iter()
                .map(|o| o.name().to_string())
                .collect();
            for n in names {
                world.set_padding(&n, p.default_padding)?;
            }
        }
        for (name, metres) in &settings.paddings {
            world
                .set_padding(name, *metres)
                .map_err(|e| rpq_ros::NodeError::config("link_padding", e.to_string()))?;
        }
        let mut groups = Vec::new();
        for g in &settings.groups {
            let a = world
                .select(&g.a)
                .map_err(|e| rpq_ros::NodeError::config("stream_groups", e.to_string()))?;
            let b = world
                .select(&g.b)
                .map_err(|e| rpq_ros::NodeError::config("stream_groups", e.to_string()))?;
            groups.push(StreamGroup {
                name: g.name.clone(),
                a,
                b,
            });
        }
        let robots = world
            .robots()
            .into_iter()
            .map(|object| RobotSlot {
                object,
                name: world.scenario().objects()[object].name().to_string(),
                state: None,
            })
            .collect();
        Ok(Server {
            world,
            world_frame: p.world_frame.clone(),
            timeout: p.joint_state_timeout,
            max_batch: usize::try_from(p.max_batch_size).unwrap_or(usize::MAX),
            max_names: usize::try_from(p.max_group_names).unwrap_or(usize::MAX),
            robots,
            groups,
            protections: Vec::new(),
            default_padding: p.default_padding,
        })
    }

    /// The objects added by [`Server::set_protections`], in world order.
    pub fn protections(&self) -> &[String] {
        &self.protections
    }

    /// Makes `set` (simple objects with vertices in `frame_id`, see
    /// [`crate::protections::objects_from_msg`]) the protections of the scene: objects of a
    /// former set that `set` lacks are removed, those of the same name replaced, the others
    /// added (padding `default_padding`, every pair checked). `frame_id` is the world frame
    /// (or empty) or a body frame, taken where that body is now. Refused with nothing changed:
    /// an unknown frame, a name of an object of the scene file. Returns a summary.
    pub fn set_protections(
        &mut self,
        set: Vec<SimpleObject>,
        frame_id: &str,
    ) -> Result<String, String> {
        let frame = self.frame_pose(frame_id)?;
        for o in &set {
            let taken = self.world.scenario().object_index(&o.name).is_ok();
            if taken && !self.protections.contains(&o.name) {
                return Err(format!(
                    "protection `{}`: the scene already has an object of that name",
                    o.name
                ));
            }
        }
        let mut world = self.world.clone();
        let (mut added, mut replaced, mut removed) = (0, 0, 0);
        for name in &self.protections {
            if !set.iter().any(|o| &o.name == name) {
                world.remove_object(name).map_err(|e| e.to_string())?;
                removed += 1;
            }
        }
        let mut names = Vec::with_capacity(set.len());
        for mut o in set {
            o.pose = frame * o.pose;
            let name = o.name.clone();
            if self.protections.contains(&name) {
                world.replace_object(o).map_err(|e| e.to_string())?;
                replaced += 1;
            } else {
                world.add_object(o).map_err(|e| e.to_string())?;
                if self.default_padding > 0.0 {
                    world
                        .set_padding(&name, self.default_padding)
                        .map_err(|e| e.to_string())?;
                }
                added += 1;
            }
            names.push(name);
        }
        // world order: the scene file's objects first, then the protections
        let order = |n: &String| world.scenario().object_index(n).unwrap_or(usize::MAX);
        names.sort_by_key(order);
        self.world = world;
        self.protections = names;
        Ok(format!(
            "protections: {added} added, {replaced} replaced, {removed} removed; in the scene: [{}]",
            self.protections.join(", ")
        ))
    }

    /// The scene.
    pub fn world(&self) -> &World {
        &self.world
    }

    /// The world frame's name.
    pub fn world_frame(&self) -> &str {
        &self.world_frame
    }

    /// The robots' names, in scene order (index = the `robot` argument of
    /// [`Server::on_joint_state`]).
    pub fn robot_names(&self) -> Vec<String> {
        self.robots.iter().map(|r| r.name.clone()).collect()
    }

    /// The stream's group pairs.
    pub fn groups(&self) -> &[StreamGroup] {
        &self.groups
    }

    /// Records a joint state of robot number `robot` that arrived at `now` (node clock). A
    /// state the robot cannot use (missing joint, NaN, duplicate names, length mismatch) is
    /// refused with the reason; the previous state stays.
    pub fn on_joint_state(
        &mut self,
        robot: usize,
        msg: &JointState,
        now: &Time,
    ) -> Result<(), String> {
        let Some(slot) = self.robots.get(robot) else {
            return Err(format!("no robot #{robot}"));
        };
        let object = slot.object;
        self.world
            .set_joint_state(object, &msg.name, &msg.position)
            .map_err(|e| e.to_string())?;
        let stamp = seconds(&msg.header.stamp);
        let time = if stamp > 0.0 { stamp } else { seconds(now) };
        self.robots[robot].state = Some(Stored {
            names: msg.name.clone(),
            positions: msg.position.clone(),
            time,
        });
        Ok(())
    }

    /// Poses every robot: from `given` where listed, else from its last joint state, which
    /// must be younger than the timeout. Returns the oldest age used [s] (0 if none).
    fn prepare(&mut self, given: &[RobotState], now: &Time) -> Result<f64, String> {
        if given.len() > self.max_names {
            return Err(format!(
                "robot_states lists {} robots, more than max_group_names ({})",
                given.len(),
                self.max_names
            ));
        }
        let mut listed = HashSet::new();
        for g in given {
            let Some(k) = self.robots.iter().position(|r| r.name == g.robot) else {
                return Err(format!(
                    "robot_states: unknown robot `{}` (the scene has {})",
                    g.robot,
                    self.robot_names().join(", ")
                ));
            };
            if !listed.insert(k) {
                return Err(format!("robot_states lists `{}` twice", g.robot));
            }
        }
        // Check every given state before changing anything.
        for g in given {
            let js = &g.joint_state;
            if !finite_all(&js.position) {
                return Err(format!(
                    "robot_states `{}`: a position is NaN or infinite",
                    g.robot
                ));
            }
        }
        let t_now = seconds(now);
        let mut oldest = 0.0_f64;
        for k in 0..self.robots.len() {
            if listed.contains(&k) {
                continue;
            }
            let slot = &self.robots[k];
            let Some(s) = &slot.state else {
                return Err(format!(
                    "no joint state of robot `{}` yet: cannot answer for its current configuration \
                     (give robot_states, or check its joint_states topic)",
                    slot.name
                ));
            };
            let age = (t_now - s.time).max(0.0);
            if age > self.timeout {
                return Err(format!(
                    "the joint state of robot `{}` is {age:.3} s old (joint_state_timeout {} s): \
                     no answer for a stale configuration",
                    slot.name, self.timeout
                ));
            }
            oldest = oldest.max(age);
        }
        for g in given {
            let k = self
                .robots
                .iter()
                .position(|r| r.name == g.robot)
                .unwrap_or_default();
            let object = self.robots[k].object;
            self.world
                .set_joint_state(object, &g.joint_state.name, &g.joint_state.position)
                .map_err(|e| format!("robot_states `{}`: {e}", g.robot))?;
        }
        for k in 0..self.robots.len() {
            if listed.contains(&k) {
                continue;
            }
            let (object, Some(s)) = (self.robots[k].object, &self.robots[k].state) else {
                continue;
            };
            self.world
                .set_joint_state(object, &s.names, &s.positions)
                .map_err(|e| format!("robot `{}`: {e}", self.robots[k].name))?;
        }
        Ok(oldest)
    }

    fn groups_of(&self, a: &[String], b: &[String]) -> Result<(Selection, Selection), String> {
        for (what, list) in [("group_a", a), ("group_b", b)] {
            if list.len() > self.max_names {
                return Err(format!(
                    "{what} lists {} names, more than max_group_names ({})",
                    list.len(),
                    self.max_names
                ));
            }
        }
        let sa = self.world.select(a).map_err(|e| format!("group_a: {e}"))?;
        let sb = self.world.select(b).map_err(|e| format!("group_b: {e}"))?;
        Ok((sa, sb))
    }

    fn pair(&self, a: BodyId, b: BodyId, distance: f64) -> BodyPair {
        BodyPair {
            body_a: self.world.body_name(a),
            body_b: self.world.body_name(b),
            distance,
            triangles_a: Vec::new(),
            triangles_b: Vec::new(),
        }
    }

    /// `~/check_collision`.
    pub fn check_collision(
        &mut self,
        req: &CheckCollisionRequest,
        now: &Time,
    ) -> CheckCollisionResponse {
        let fail = |message: String| CheckCollisionResponse {
            success: false,
            message,
            ..Default::default()
        };
        if req.with_triangles && !req.all_pairs {
            return fail("with_triangles needs all_pairs".into());
        }
        let (a, b) = match self.groups_of(&req.group_a, &req.group_b) {
            Ok(s) => s,
            Err(e) => return fail(e),
        };
        if let Err(e) = self.prepare(&req.robot_states, now) {
            return fail(e);
        }
        let mode = match (req.all_pairs, req.with_triangles) {
            (false, _) => ContactMode::First,
            (true, false) => ContactMode::AllPairs,
            (true, true) => ContactMode::AllPairsWithTriangles,
        };
        let answer = self.world.check_collision(&a, &b, mode);
        let mut pairs: Vec<BodyPair> = answer
            .pairs
            .iter()
            .map(|c| {
                let mut p = self.pair(c.a, c.b, 0.0);
                p.triangles_a = c.triangles.iter().map(|t| t.0).collect();
                p.triangles_b = c.triangles.iter().map(|t| t.1).collect();
                p
            })
            .collect();
        let message = match fit_triangle_lists(&mut pairs, rpq_ros::service::MAX_REPLY_BYTES) {
            Some((kept, total)) => format!(
                "triangle lists shortened to {kept} of {total} intersecting triangle pairs: a \
                 reply must fit {} kB (docs/proximity.md, \"Large replies\"); every colliding \
                 body pair is listed",
                rpq_ros::service::MAX_REPLY_BYTES / 1000
            ),
            None => String::new(),
        };
        CheckCollisionResponse {
            success: true,
            message,
            colliding: answer.colliding,
            pairs,
        }
    }

    /// The pose in the world of the frame `frame` (the world frame, a body's TF frame, or a
    /// simple object's name), in the current configuration.
    fn frame_pose(&self, frame: &str) -> Result<Isometry3<f64>, String> {
        if frame.is_empty() || frame == self.world_frame {
            return Ok(Isometry3::identity());
        }
        let scenario = self.world.scenario();
        for (k, o) in scenario.objects().iter().enumerate() {
            for (i, p) in scenario.body_poses(k).iter().enumerate() {
                if body_frame(o, i) == frame {
                    return Ok(*p);
                }
            }
        }
        Err(format!(
            "frame_id `{frame}` is neither the world frame `{}` nor a body frame (see ~/get_scene)",
            self.world_frame
        ))
    }

    /// `~/min_distance`.
    pub fn min_distance(&mut self, req: &MinDistanceRequest, now: &Time) -> MinDistanceResponse {
        let fail = |message: String| MinDistanceResponse {
            success: false,
            message,
            ..Default::default()
        };
        for (what, v) in [("rel_err", req.rel_err), ("abs_err", req.abs_err)] {
            if !v.is_finite() || v < 0.0 {
                return fail(format!("{what} must be finite and >= 0 (got {v})"));
            }
        }
        let (a, b) = match self.groups_of(&req.group_a, &req.group_b) {
            Ok(s) => s,
            Err(e) => return fail(e),
        };
        if let Err(e) = self.prepare(&req.robot_states, now) {
            return fail(e);
        }
        let frame = match self.frame_pose(&req.frame_id) {
            Ok(f) => f,
            Err(e) => return fail(e),
        };
        let Some(r) = self.world.min_distance(&a, &b, req.rel_err, req.abs_err) else {
            return fail(
                "no pair of bodies of different objects between group_a and group_b (allowed \
                 pairs are skipped)"
                    .into(),
            );
        };
        let frame_id = if req.frame_id.is_empty() {
            self.world_frame.clone()
        } else {
            req.frame_id.clone()
        };
        MinDistanceResponse {
            success: true,
            message: String::new(),
            distance: r.distance,
            body_a: self.world.body_name(r.body_a),
            body_b: self.world.body_name(r.body_b),
            header: Header {
                stamp: *now,
                frame_id,
            },
            point_a: point(&frame.inverse_transform_point(&r.point_a)),
            point_b: point(&frame.inverse_transform_point(&r.point_b)),
        }
    }

    /// `~/check_tolerance`.
    pub fn check_tolerance(
        &mut self,
        req: &CheckToleranceRequest,
        now: &Time,
    ) -> CheckToleranceResponse {
        let fail = |message: String| CheckToleranceResponse {
            success: false,
            message,
            ..Default::default()
        };
        if !req.tolerance.is_finite() || req.tolerance < 0.0 {
            return fail(format!(
                "tolerance must be finite and >= 0 m (got {})",
                req.tolerance
            ));
        }
        let (a, b) = match self.groups_of(&req.group_a, &req.group_b) {
            Ok(s) => s,
            Err(e) => return fail(e),
        };
        if let Err(e) = self.prepare(&req.robot_states, now) {
            return fail(e);
        }
        let answer = self
            .world
            .check_tolerance(req.tolerance, &a, &b, req.per_pair);
        CheckToleranceResponse {
            success: true,
            message: String::new(),
            closer: answer.closer,
            pairs: answer
                .pairs
                .iter()
                .map(|p| self.pair(p.a, p.b, p.distance))
                .collect(),
        }
    }

    /// `~/check_states`: the batch, on all cores. Needs no current joint state.
    pub fn check_states(&self, req: &CheckStatesRequest) -> CheckStatesResponse {
        let fail = |message: String| CheckStatesResponse {
            success: false,
            message,
            ..Default::default()
        };
        let n = req.joint_names.len();
        if n == 0 {
            return fail("joint_names is empty".into());
        }
        if req.positions.is_empty() {
            return fail("the batch is empty (no positions)".into());
        }
        if !req.positions.len().is_multiple_of(n) {
            return fail(format!(
                "{} positions are not a whole number of rows of {n} joints",
                req.positions.len()
            ));
        }
        let rows = req.positions.len() / n;
        if rows > self.max_batch {
            return fail(format!(
                "{rows} configurations, more than max_batch_size ({})",
                self.max_batch
            ));
        }
        // one byte per `colliding`, eight per `distance`
        let per_row = if req.with_distance { 9 } else { 1 };
        let limit = rpq_ros::service::MAX_REPLY_BYTES / per_row;
        if rows > limit {
            return fail(format!(
                "{rows} configurations{}: the reply would be {} kB, more than a service reply can \
                 carry ({} kB: the DDS library cannot send a reply in fragments, see \
                 docs/proximity.md); send at most {limit} per request",
                if req.with_distance {
                    " with distances"
                } else {
                    ""
                },
                (rows * per_row).div_ceil(1000),
                rpq_ros::service::MAX_REPLY_BYTES / 1000
            ));
        }
        let t0 = std::time::Instant::now();
        match self
            .world
            .check_states(&req.joint_names, &req.positions, req.with_distance)
        {
            Ok(answers) => CheckStatesResponse {
                success: true,
                message: String::new(),
                colliding: answers.iter().map(|a| a.colliding).collect(),
                distance: if req.with_distance {
                    answers.iter().map(|a| a.distance).collect()
                } else {
                    Vec::new()
                },
                compute_time: t0.elapsed().as_secs_f64(),
            },
            Err(e) => fail(e.to_string()),
        }
    }

    /// `~/set_allowed_collision`.
    pub fn set_allowed_collision(
        &mut self,
        req: &SetAllowedCollisionRequest,
    ) -> SetAllowedCollisionResponse {
        match self
            .world
            .set_allowed(&req.body_a, &req.body_b, req.allowed)
        {
            Ok(n) => SetAllowedCollisionResponse {
                success: true,
                message: format!(
                    "{} {} and {}: {n} body pair(s) changed",
                    if req.allowed { "allowed" } else { "forbidden" },
                    req.body_a,
                    req.body_b
                ),
                pairs_changed: u32::try_from(n).unwrap_or(u32::MAX),
            },
            Err(e) => SetAllowedCollisionResponse {
                success: false,
                message: e.to_string(),
                pairs_changed: 0,
            },
        }
    }

    /// `~/get_scene`: bodies with their frames and poses (robots at their last joint state,
    /// stale or not), joints, and the allowed pairs in force.
    pub fn get_scene(&mut self) -> GetSceneResponse {
        for k in 0..self.robots.len() {
            if let (object, Some(s)) = (self.robots[k].object, &self.robots[k].state) {
                let _ = self.world.set_joint_state(object, &s.names, &s.positions);
            }
        }
        let scenario = self.world.scenario();
        let mut bodies = Vec::new();
        let mut joint_names = Vec::new();
        for (k, o) in scenario.objects().iter().enumerate() {
            let id = |i| BodyId { object: k, body: i };
            for (i, p) in scenario.body_poses(k).iter().enumerate() {
                bodies.push(SceneBody {
                    name: self.world.body_name(id(i)),
                    object: o.name().to_string(),
                    robot_link: matches!(o, Object::Complex(_)),
                    frame_id: body_frame(o, i),
                    padding: self.world.padding(id(i)),
                    pose: pose(p),
                });
            }
            if let Object::Complex(r) = o {
                joint_names.extend(
                    r.kinematics()
                        .joint_names()
                        .map(|j| format!("{}/{j}", o.name())),
                );
            }
        }
        let allowed = self.world.allowed_pairs();
        let reply = GetSceneResponse {
            success: true,
            message: String::new(),
            world_frame: self.world_frame.clone(),
            bodies,
            robots: self.robot_names(),
            joint_names,
            allowed_a: allowed.iter().map(|p| self.world.body_name(p.0)).collect(),
            allowed_b: allowed.iter().map(|p| self.world.body_name(p.1)).collect(),
            allowed_at_runtime: allowed.iter().map(|p| p.2).collect(),
        };
        // a reply DDS has to fragment never arrives (rpq_ros::service::MAX_REPLY_BYTES): say
        // so instead of leaving the client to its timeout
        let bytes = rpq_ros::service::reply_bytes(&reply);
        if bytes > rpq_ros::service::MAX_REPLY_BYTES {
            return GetSceneResponse {
                success: false,
                message: format!(
                    "the scene's description ({} bodies, {} allowed pairs: {} kB) is more than \
                     the {} kB one service reply can carry; the scene file (parameter \
                     scene_file) and ~/markers describe it",
                    reply.bodies.len(),
                    reply.allowed_a.len(),
                    bytes.div_ceil(1000),
                    rpq_ros::service::MAX_REPLY_BYTES / 1000,
                ),
                world_frame: reply.world_frame,
                ..GetSceneResponse::default()
            };
        }
        reply
    }

    /// One cycle of the distance stream: every group pair at the current configuration, or
    /// every group marked invalid (with the reason) when a joint state is missing or stale.
    pub fn stream(&mut self, now: &Time) -> GroupDistances {
        let header = Header {
            stamp: *now,
            frame_id: self.world_frame.clone(),
        };
        let age = match self.prepare(&[], now) {
            Ok(age) => age,
            Err(message) => {
                return GroupDistances {
                    header,
                    joint_state_age: f64::NAN,
                    groups: self
                        .groups
                        .iter()
                        .map(|g| GroupDistance {
                            group: g.name.clone(),
                            valid: false,
                            message: message.clone(),
                            distance: f64::NAN,
                            ..Default::default()
                        })
                        .collect(),
                }
            }
        };
        let mut groups = Vec::with_capacity(self.groups.len());
        for k in 0..self.groups.len() {
            let g = &self.groups[k];
            let (a, b) = (g.a.clone(), g.b.clone());
            let name = g.name.clone();
            groups.push(match self.world.min_distance(&a, &b, 0.0, 0.0) {
                Some(r) => GroupDistance {
                    group: name,
                    valid: true,
                    message: String::new(),
                    colliding: r.distance <= 0.0,
                    distance: r.distance,
                    body_a: self.world.body_name(r.body_a),
                    body_b: self.world.body_name(r.body_b),
                    point_a: point(&r.point_a),
                    point_b: point(&r.point_b),
                },
                None => GroupDistance {
                    group: name,
                    valid: false,
                    message: "no pair of bodies of different objects in this group pair".into(),
                    distance: f64::NAN,
                    ..Default::default()
                },
            });
        }
        GroupDistances {
            header,
            joint_state_age: age,
            groups,
        }
    }

    /// Every body that collides with a body of another object at the current configuration
    /// (for the markers); empty when the configuration is not known.
    pub fn colliding_bodies(&mut self, now: &Time) -> Vec<BodyId> {
        if self.prepare(&[], now).is_err() {
            return Vec::new();
        }
        let all = Selection::all();
        let answer = self
            .world
            .check_collision(&all, &all, ContactMode::AllPairs);
        let mut bodies: Vec<BodyId> = answer.pairs.iter().flat_map(|p| [p.a, p.b]).collect();
        bodies.sort();
        bodies.dedup();
        bodies
    }
}

/// TF frame of body `i` of `o`: `<robot>/<link>` (robot_sim's `frame_prefix` `<robot>/`), or
/// the object's name for a simple object.
pub fn body_frame(o: &Object, i: usize) -> String {
    match o {
        Object::Complex(_) => format!("{}/{}", o.name(), o.body(i).name),
        Object::Simple(_) => o.name().to_string(),
    }
}

/// Shortens the pairs' triangle lists so that the reply stays within `budget` bytes (8 per
/// listed triangle pair, names and fixed fields counted), earlier pairs first; every body pair
/// stays. Returns `(kept, total)` triangle pairs when it had to shorten.
fn fit_triangle_lists(pairs: &mut [BodyPair], budget: usize) -> Option<(usize, usize)> {
    // per pair: two strings (4-byte length, text, terminator, padding), a distance, two
    // sequence lengths
    let fixed: usize = pairs
        .iter()
        .map(|p| p.body_a.len() + p.body_b.len() + 2 * 8 + 8 + 2 * 4)
        .sum::<usize>()
        + 256;
    let total: usize = pairs.iter().map(|p| p.triangles_a.len()).sum();
    let mut room = budget.saturating_sub(fixed) / 8;
    if total <= room {
        return None;
    }
    let mut kept = 0;
    for p in pairs.iter_mut() {
        let n = p.triangles_a.len().min(room);
        p.triangles_a.truncate(n);
        p.triangles_b.truncate(n);
        room -= n;
        kept += n;
    }
    Some((kept, total))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rpq_ros::params::Params;

    /// The node's server on `config/rx60_pair.scene.yaml`, batches up to 100,000.
    fn server() -> Server {
        let scene = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../config/rx60_pair.scene.yaml"
        );
        let yaml = format!(
            "proximity_query:\n  ros__parameters:\n    scene_file: {scene}\n    max_batch_size: 100000\n"
        );
        let p = Params::resolve(
            &crate::settings::declarations(),
            "/proximity_query",
            &[("p.yaml", &yaml)],
            &[],
        )
        .unwrap();
        let s = Settings::load(&p).unwrap();
        Server::new(World::new(rpq_scene::load_scene(scene).unwrap()), &s).unwrap()
    }

    #[test]
    fn get_scene_says_when_the_scene_does_not_fit_in_a_reply() {
        let mut s = server();
        let r = s.get_scene();
        assert!(r.success, "{}", r.message);
        assert!(rpq_ros::service::reply_bytes(&r) <= rpq_ros::service::MAX_REPLY_BYTES);
        let mesh = rpq_kinematics::TriMesh::new(
            vec![
                nalgebra::Point3::new(0.0, 0.0, 0.0),
                nalgebra::Point3::new(0.01, 0.0, 0.0),
                nalgebra::Point3::new(0.0, 0.01, 0.0),
                nalgebra::Point3::new(0.0, 0.0, 0.01),
            ],
            vec![[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]],
        )
        .unwrap();
        // (a description over 60 kB takes hundreds of bodies; one body with a 40,000-character
        // name, written twice in the reply, stands for them here: adding hundreds of objects one
        // by one rebuilds the scene each time and takes minutes)
        let name = "x".repeat(40_000);
        s.world
            .add_object(rpq_scene::SimpleObject {
                body: rpq_scene::Body::from_trimesh(&name, &mesh).unwrap(),
                name,
                pose: nalgebra::Isometry3::translation(5.0, 0.0, 0.0),
            })
            .unwrap();
        let r = s.get_scene();
        assert!(!r.success);
        assert!(
            r.message.contains("15 bodies")
                && r.message
                    .contains("more than the 60 kB one service reply can carry"),
            "{}",
            r.message
        );
        assert!(r.bodies.is_empty() && r.allowed_a.is_empty());
        assert!(rpq_ros::service::reply_bytes(&r) <= rpq_ros::service::MAX_REPLY_BYTES);
    }

    fn batch(rows: usize, with_distance: bool) -> CheckStatesRequest {
        CheckStatesRequest {
            joint_names: ["left", "right"]
                .iter()
                .flat_map(|r| (1..=6).map(move |j| format!("{r}/joint_{j}")))
                .collect(),
            positions: vec![0.3; rows * 12],
            with_distance,
        }
    }

    #[test]
    fn long_triangle_lists_are_shortened_to_fit_a_reply() {
        let pair = |name: &str, n: u32| BodyPair {
            body_a: format!("left/{name}"),
            body_b: format!("right/{name}"),
            distance: 0.0,
            triangles_a: (0..n).collect(),
            triangles_b: (0..n).map(|k| k + 7).collect(),
        };
        // small lists pass untouched
        let mut pairs = vec![pair("link_1", 100), pair("link_2", 50)];
        assert_eq!(fit_triangle_lists(&mut pairs, 60_000), None);
        assert_eq!(pairs[1].triangles_a.len(), 50);
        // 5,000 + 4,000 triangle pairs (72 kB) do not fit: the first keeps what fits, every
        // body pair stays, the lists stay paired, and the encoded reply fits
        let mut pairs = vec![
            pair("link_1", 5_000),
            pair("link_2", 4_000),
            pair("link_3", 10),
        ];
        let (kept, total) = fit_triangle_lists(&mut pairs, 60_000).unwrap();
        assert_eq!(total, 9_010);
        assert!(kept > 6_000 && kept < 7_500, "{kept}");
        assert_eq!(pairs.len(), 3);
        assert_eq!(pairs[0].triangles_a.len(), 5_000);
        assert_eq!(pairs[2].triangles_a.len(), 0);
        for p in &pairs {
            assert_eq!(p.triangles_a.len(), p.triangles_b.len());
        }
        let reply = CheckCollisionResponse {
            success: true,
            message: "x".repeat(200),
            colliding: true,
            pairs,
        };
        let bytes = rpq_ros::cdr::to_vec(&reply).unwrap().len();
        assert!(bytes <= 60_000, "{bytes} bytes");
    }

    #[test]
    fn check_states_refuses_a_batch_whose_reply_would_not_arrive() {
        let s = server();
        // 9 bytes per row with distances, 1 without: 6,666 and 60,000 rows fit in 60 kB (an
        // accepted batch with distances would take seconds here: only its refusal is run)
        for (rows, with_distance, ok) in [
            (6_667, true, false),
            (60_000, false, true),
            (60_001, false, false),
        ] {
            let r = s.check_states(&batch(rows, with_distance));
            assert_eq!(r.success, ok, "{rows} rows: {}", r.message);
            if ok {
                assert_eq!(r.colliding.len(), rows);
                assert_eq!(r.distance.len(), if with_distance { rows } else { 0 });
            } else {
                let most = if with_distance { 6_666 } else { 60_000 };
                assert!(
                    r.message.contains("more than a service reply can carry")
                        && r.message
                            .contains(&format!("send at most {most} per request")),
                    "{}",
                    r.message
                );
            }
        }
    }
}
