//! `steady_hand_guidance`: owns the guidance sources of Marayong et al. (2003) — a polyline
//! path, a plane, a target point and the remote-centre-of-motion cone — and publishes the
//! active fixture (`D`, `u`, mode) at the tool's current pose for `admittance_controller`.
//!
//! ```text
//! steady_hand_guidance --ros-args --params-file config/steady_hand_guidance.yaml
//! ```
//!
//! | interface | type | behaviour |
//! |---|---|---|
//! | sub `joint_states` | `sensor_msgs/JointState` | tool pose by forward kinematics of the URDF |
//! | pub `virtual_fixture` | `rpq_interfaces/VirtualFixture` | at `publish_rate` once joint states arrive |
//! | srv `~/load_path` | `rpq_interfaces/srv/LoadPath` | points, or a file inside `path.directory` (at most `path.max_size` bytes; names outside it and special files refused); makes the path active |
//! | srv `~/set_rcm_cone` | `rpq_interfaces/srv/SetRcmCone` | makes the cone active |
//! | srv `~/set_mode` | `rpq_interfaces/srv/SetFixtureMode` | free / open_loop / closed_loop, and the source |
//! | srv `~/combine` | `rpq_interfaces/srv/CombineFixtures` | two sources as one fixture (intersect / priority) |
//! | srv `~/load_sequence` | `rpq_interfaces/srv/LoadSequence` | an ordered list of fixtures with completion criteria |
//! | srv `~/sequence` | `rpq_interfaces/srv/SequenceControl` | start / stop / step / reset the sequence |
//!
//! The published fixture is the running sequence step's when a sequence runs (or has
//! finished: the last step holds), otherwise the operator's fixture (`~/set_mode`,
//! `~/combine`, `~/load_path`, `~/set_rcm_cone`). `~/set_mode` with a source and `~/combine`
//! stop a running sequence; `~/load_path` and `~/set_rcm_cone` only replace the geometry
//! (steps using it see the new one) and make it the operator's fixture.

use std::error::Error;
use std::path::PathBuf;
use std::pin::pin;
use std::process::ExitCode;
use std::time::Duration;

use futures::StreamExt;
use nalgebra::{Isometry3, Point3, Vector3};
use rpq_base::file::{read_to_string_bounded, FileArea};
use rpq_kinematics::Robot;
use rpq_ros::interfaces::rpq_interfaces::msg::VirtualFixture;
use rpq_ros::interfaces::rpq_interfaces::srv::{
    CombineFixtures, CombineFixturesRequest, CombineFixturesResponse, LoadPath, LoadPathRequest,
    LoadPathResponse, LoadSequence, LoadSequenceRequest, LoadSequenceResponse, SequenceControl,
    SequenceControlRequest, SequenceControlResponse, SetFixtureMode, SetFixtureModeRequest,
    SetFixtureModeResponse, SetRcmCone, SetRcmConeRequest, SetRcmConeResponse,
};
use rpq_ros::msg::sensor_msgs::JointState;
use rpq_ros::msg::std_msgs::Header;
use rpq_ros::robot_description::RobotDescription;
use rpq_ros::run::NodeStart;
use rpq_ros::{qos, ros_info, ros_warn};
use rpq_virtual_fixtures::{
    combine, Guidance, GuidanceSource, PlaneSurface, PointTarget, PolylinePath, RankTolerance,
    RcmCone, Sequencer, StepProgress, Transition,
};
use steady_hand::convert::{
    combination_code, fixture_to_msg, parse_path_text, points_from_flat, sequence_state_code,
    source, step_from_msg, FixtureMode, FixtureSpec, JointOrder,
};
use steady_hand::joints::JointMapper;
use steady_hand::settings;
use steady_hand::NodeError;
use tokio::time::{interval, MissedTickBehavior};

fn main() -> ExitCode {
    rpq_ros::run_node(
        settings::GUIDANCE_NODE,
        &settings::guidance_declarations(),
        run,
    )
}

struct Sources {
    path: Option<PolylinePath>,
    plane: PlaneSurface,
    point: PointTarget,
    cone: RcmCone,
    active: String,
    /// The operator's combination partner of `active` (`~/combine`).
    combo: Option<(String, rpq_virtual_fixtures::Combination)>,
    mode: FixtureMode,
    error_gain: f64,
    free_rotation: bool,
    rcm_error_gain: f64,
    seq: Sequencer<FixtureSpec>,
    /// Directory `~/load_path` files are read from (`path.directory`; `None`: no files).
    path_directory: Option<PathBuf>,
    /// Largest path file read (`path.max_size`) [bytes].
    path_max_size: u64,
}

/// What one evaluation produced, besides `D` and `u`.
struct Evaluated {
    spec: FixtureSpec,
    mode: FixtureMode,
    fallback: bool,
    step: Option<usize>,
    transition: Transition,
}

impl Sources {
    /// The fixture that applies now: the sequence's step, else the operator's.
    fn current_spec(&self) -> (FixtureSpec, Option<usize>) {
        match self.seq.active() {
            Some((i, step)) => (step.fixture.clone(), Some(i)),
            None => (
                FixtureSpec {
                    name: String::new(),
                    primary: self.active.clone(),
                    secondary: self.combo.clone(),
                    mode: None,
                },
                None,
            ),
        }
    }

    /// Evaluates the current fixture at `x` into `g`, then feeds the sequence (time `t` [s]).
    fn evaluate_current(
        &mut self,
        x: &Isometry3<f64>,
        g: &mut Guidance,
        t: f64,
    ) -> Result<Evaluated, String> {
        let (spec, step) = self.current_spec();
        self.evaluate_one(&spec.primary, x, g)?;
        let mut fallback = false;
        let mut error = self.error_of(&spec.primary, x);
        if let Some((sec, how)) = &spec.secondary {
            let mut gb = Guidance::empty();
            self.evaluate_one(sec, x, &mut gb)?;
            let c = combine(g, &gb, *how, &RankTolerance::default())
                .ok_or("the combination is not finite at this pose")?;
            *g = c.guidance;
            fallback = c.fallback;
            error = error.max(self.error_of(sec, x));
        }
        let remaining = if spec.uses(source::PATH) {
            self.path.as_ref().map(|p| {
                p.length()
                    - p.closest_point(&Point3::from(x.translation.vector))
                        .arc_length
            })
        } else {
            None
        };
        let transition = self.seq.update(t, &StepProgress { error, remaining });
        let mode = spec.mode.unwrap_or(self.mode);
        Ok(Evaluated {
            spec,
            mode,
            fallback,
            step,
            transition,
        })
    }

    /// Distance of the tool from a source's objective: m for path, plane and point, rad for
    /// the cone, 0 for none.
    fn error_of(&self, name: &str, x: &Isometry3<f64>) -> f64 {
        let p = Point3::from(x.translation.vector);
        match name {
            source::PATH => self
                .path
                .as_ref()
                .map_or(f64::NAN, |path| path.closest_point(&p).distance),
            source::PLANE => self.plane.signed_distance(&p).abs(),
            source::POINT => (self.point.target - p).norm(),
            source::RCM_CONE => self
                .cone
                .angle_error(&self.cone.tool_direction(&x.rotation.to_rotation_matrix()))
                .abs(),
            _ => 0.0,
        }
    }

    /// Refuses a spec that needs a path when none is loaded.
    fn check_spec(&self, spec: &FixtureSpec) -> Result<(), String> {
        if spec.uses(source::PATH) && self.path.is_none() {
            return Err("no path loaded (call ~/load_path first)".into());
        }
        Ok(())
    }

    fn combine_request(&mut self, req: &CombineFixturesRequest) -> CombineFixturesResponse {
        let r = FixtureSpec::from_codes("", req.primary, req.secondary, req.combination, req.mode)
            .map_err(|e| e.to_string())
            .and_then(|spec| {
                if spec.secondary.is_none() {
                    return Err("give a secondary source (or use ~/set_mode for one source)".into());
                }
                self.check_spec(&spec)?;
                Ok(spec)
            });
        match r {
            Ok(spec) => {
                let stopped = self.stop_running_sequence();
                self.active = spec.primary;
                self.combo = spec.secondary;
                if let Some(m) = spec.mode {
                    self.mode = m;
                }
                let (sec, how) = self.combo.as_ref().expect("checked above");
                CombineFixturesResponse {
                    success: true,
                    message: format!(
                        "{} {} {} {}{}",
                        self.active,
                        how.as_str(),
                        sec,
                        self.mode.as_str(),
                        stopped
                    ),
                }
            }
            Err(message) => CombineFixturesResponse {
                success: false,
                message,
            },
        }
    }

    fn stop_running_sequence(&mut self) -> &'static str {
        if self.seq.stop().is_ok() {
            " (sequence stopped)"
        } else {
            ""
        }
    }

    fn load_sequence(&mut self, req: &LoadSequenceRequest) -> LoadSequenceResponse {
        let fail = |message: String| LoadSequenceResponse {
            success: false,
            message,
            length: 0,
        };
        if req.steps.is_empty() {
            return fail("the sequence has no steps".into());
        }
        let mut steps = Vec::with_capacity(req.steps.len());
        for (i, m) in req.steps.iter().enumerate() {
            match step_from_msg(m).map_err(|e| e.to_string()).and_then(|s| {
                self.check_spec(&s.fixture)?;
                Ok(s)
            }) {
                Ok(s) => steps.push(s),
                Err(e) => return fail(format!("step {i} `{}`: {e}", m.name)),
            }
        }
        let n = steps.len();
        if let Err((i, e)) = self.seq.load(steps) {
            return fail(format!("step {i}: {e}"));
        }
        if req.start {
            if let Err(e) = self.seq.start() {
                return fail(e.to_string());
            }
        }
        LoadSequenceResponse {
            success: true,
            message: format!("{n} steps, {}", self.seq.state().as_str()),
            length: n as u32,
        }
    }

    fn sequence_control(&mut self, req: &SequenceControlRequest) -> SequenceControlResponse {
        let r = match req.command {
            SequenceControlRequest::COMMAND_START => self.seq.start().map(|()| String::new()),
            SequenceControlRequest::COMMAND_STOP => self.seq.stop().map(|()| String::new()),
            SequenceControlRequest::COMMAND_STEP => self.seq.advance().map(|t| match t {
                Transition::Finished => "finished".to_string(),
                _ => String::new(),
            }),
            SequenceControlRequest::COMMAND_RESET => {
                self.seq.reset();
                Ok(String::new())
            }
            other => Err(rpq_virtual_fixtures::Error::UnknownName {
                what: "command (expected COMMAND_START = 1, COMMAND_STOP = 2, COMMAND_STEP = 3 \
                       or COMMAND_RESET = 4)",
                name: other.to_string(),
            }),
        };
        let (success, message) = match r {
            Ok(_) => (
                true,
                format!(
                    "{} step {}/{}",
                    self.seq.state().as_str(),
                    self.seq.index(),
                    self.seq.len()
                ),
            ),
            Err(e) => (false, e.to_string()),
        };
        SequenceControlResponse {
            success,
            message,
            state: sequence_state_code(self.seq.state()),
            step: if self.seq.is_empty() {
                -1
            } else {
                self.seq.index() as i32
            },
        }
    }

    fn evaluate_one(
        &mut self,
        name: &str,
        x: &Isometry3<f64>,
        g: &mut Guidance,
    ) -> Result<(), String> {
        match name {
            source::NONE => *g = Guidance::empty(),
            source::PATH => match &mut self.path {
                Some(p) => p.evaluate(x, g),
                None => return Err("no path loaded".into()),
            },
            // the library's plane and point give u in metres; error_gain as documented
            source::PLANE => {
                self.plane.evaluate(x, g);
                g.u *= self.error_gain;
            }
            source::POINT => {
                self.point.evaluate(x, g);
                g.u *= self.error_gain;
            }
            source::RCM_CONE => self.cone.evaluate(x, g),
            other => return Err(format!("unknown fixture type `{other}`")),
        }
        Ok(())
    }

    fn make_path(&self, pts: &[Point3<f64>]) -> Result<PolylinePath, NodeError> {
        Ok(PolylinePath::new(pts)?
            .with_error_gain(self.error_gain)
            .with_free_rotation(self.free_rotation))
    }

    /// Reads the vertices of the file a request names, inside `path.directory` only.
    fn read_path_file(&self, name: &str) -> Result<Vec<Point3<f64>>, NodeError> {
        let Some(dir) = &self.path_directory else {
            return Err(NodeError::bad(
                "~/load_path",
                "file refused: this node reads no files for requests (path.directory is not \
                 set; give points, or start the node with -p path.directory:=<directory>)",
            ));
        };
        let text = FileArea::new(dir, false)
            .and_then(|area| area.read_to_string(name, self.path_max_size))
            .map_err(|e| NodeError::bad("~/load_path", e.to_string()))?;
        parse_path_text(&text).map_err(|e| NodeError::bad(format!("{name:?}"), e.to_string()))
    }

    fn load_path(&mut self, req: &LoadPathRequest) -> LoadPathResponse {
        let pts = if !req.points.is_empty() {
            Ok(req
                .points
                .iter()
                .map(|p| Point3::new(p.x, p.y, p.z))
                .collect::<Vec<_>>())
        } else if !req.file.is_empty() {
            self.read_path_file(&req.file)
        } else {
            Err(NodeError::bad("LoadPath", "give points or a file"))
        };
        let path = pts.and_then(|p| self.make_path(&p)).and_then(|path| {
            // Vertices of 1e300 m are finite, their distances may not be.
            if path.length().is_finite() {
                Ok(path)
            } else {
                Err(NodeError::bad(
                    "~/load_path",
                    "the path's length is not finite (vertices too far apart)",
                ))
            }
        });
        match path {
            Ok(path) => {
                let length = path.length();
                self.path = Some(path);
                self.active = source::PATH.into();
                self.combo = None;
                LoadPathResponse {
                    success: true,
                    message: String::new(),
                    length,
                }
            }
            Err(e) => LoadPathResponse {
                success: false,
                message: e.to_string(),
                length: 0.0,
            },
        }
    }

    fn set_cone(&mut self, req: &SetRcmConeRequest) -> SetRcmConeResponse {
        let tool = Vector3::new(req.tool_axis.x, req.tool_axis.y, req.tool_axis.z);
        let tool = if tool.norm() == 0.0 {
            Vector3::z()
        } else {
            tool
        };
        match RcmCone::new(
            Point3::new(req.center.x, req.center.y, req.center.z),
            Vector3::new(req.axis.x, req.axis.y, req.axis.z),
            req.half_angle,
            tool,
        ) {
            Ok(c) => {
                self.cone = c.with_error_gain(self.rcm_error_gain);
                self.active = source::RCM_CONE.into();
                self.combo = None;
                SetRcmConeResponse {
                    success: true,
                    message: String::new(),
                }
            }
            Err(e) => SetRcmConeResponse {
                success: false,
                message: e.to_string(),
            },
        }
    }

    fn set_mode(&mut self, req: &SetFixtureModeRequest) -> SetFixtureModeResponse {
        let mode = match FixtureMode::from_code(req.mode) {
            Ok(m) => m,
            Err(e) => {
                return SetFixtureModeResponse {
                    success: false,
                    message: e.to_string(),
                }
            }
        };
        let mut stopped = "";
        if req.fixture_type != 0 {
            let Some(fixture_type) = source::name(req.fixture_type) else {
                return SetFixtureModeResponse {
                    success: false,
                    message: format!(
                        "unknown fixture type {} (expected 0 to keep it, or \
                         VirtualFixture.TYPE_*: {})",
                        req.fixture_type,
                        source::listing()
                    ),
                };
            };
            if fixture_type == source::PATH && self.path.is_none() {
                return SetFixtureModeResponse {
                    success: false,
                    message: "no path loaded (call ~/load_path first)".into(),
                };
            }
            self.active = fixture_type.to_string();
            self.combo = None;
            stopped = self.stop_running_sequence();
        }
        self.mode = mode;
        SetFixtureModeResponse {
            success: true,
            message: format!("{} {}{stopped}", self.active, mode.as_str()),
        }
    }
}

async fn run(start: NodeStart) -> Result<(), Box<dyn Error>> {
    let (mut node, shutdown, clock, log) = start.into_parts();
    let p = settings::SteadyHandGuidanceParams::from_params(node.params())?;
    let robot = RobotDescription::load(&mut node, &p.robot_description_file)
        .await?
        .parse(Robot::from_urdf_str)?;
    let root = robot.root_link().name.clone();
    let order = JointOrder::new(robot.joint_names().map(str::to_string).collect());
    let n = robot.dof();
    let mut mapper = JointMapper::new(robot, &p.tool_link)
        .map_err(|e| NodeError::config("tool_link", e.to_string()))?;
    let error_gain = p.error_gain;
    let rcm_error_gain = p.rcm.error_gain;
    let mut src = Sources {
        path: None,
        plane: PlaneSurface::new(
            Point3::from(Vector3::from(p.plane.origin)),
            Vector3::from(p.plane.normal),
            p.free_rotation,
        )?,
        point: PointTarget {
            target: Point3::from(Vector3::from(p.point.target)),
        },
        cone: RcmCone::new(
            Point3::from(Vector3::from(p.rcm.center)),
            Vector3::from(p.rcm.axis),
            p.rcm.half_angle,
            Vector3::from(p.rcm.tool_axis),
        )?
        .with_error_gain(rcm_error_gain),
        active: p.fixture_type.clone(),
        combo: None,
        seq: Sequencer::new(),
        mode: FixtureMode::parse(&p.mode).map_err(|e| NodeError::config("mode", e.to_string()))?,
        error_gain,
        free_rotation: p.free_rotation,
        rcm_error_gain,
        path_directory: (!p.path.directory.is_empty()).then(|| PathBuf::from(&p.path.directory)),
        path_max_size: u64::try_from(p.path.max_size).unwrap_or(1),
    };
    let path_pts = if !p.path.file.is_empty() {
        let text = read_to_string_bounded(&p.path.file, src.path_max_size)
            .map_err(|e| NodeError::config("path.file", e.to_string()))?;
        Some(parse_path_text(&text).map_err(|e| NodeError::config("path.file", e.to_string()))?)
    } else if !p.path.points.is_empty() {
        Some(points_from_flat(&p.path.points)?)
    } else {
        None
    };
    if let Some(pts) = path_pts {
        src.path = Some(src.make_path(&pts)?);
    }
    let mut probe = Guidance::empty();
    src.evaluate_one(&src.active.clone(), &Isometry3::identity(), &mut probe)
        .map_err(|e| NodeError::config("fixture_type", e))?;

    let fx_pub = node.publisher::<VirtualFixture>(settings::FIXTURE_TOPIC, qos::default())?;
    let js_sub = node.subscription::<JointState>(settings::JOINT_STATES_TOPIC, qos::default())?;
    let load_srv = node.service::<LoadPath>("~/load_path")?;
    let cone_srv = node.service::<SetRcmCone>("~/set_rcm_cone")?;
    let mode_srv = node.service::<SetFixtureMode>("~/set_mode")?;
    let combine_srv = node.service::<CombineFixtures>("~/combine")?;
    let seq_load_srv = node.service::<LoadSequence>("~/load_sequence")?;
    let seq_srv = node.service::<SequenceControl>("~/sequence")?;
    let mut joint_states = pin!(js_sub.async_stream());
    let mut loads = pin!(load_srv.receive_request_stream());
    let mut cones = pin!(cone_srv.receive_request_stream());
    let mut modes = pin!(mode_srv.receive_request_stream());
    let mut combines = pin!(combine_srv.receive_request_stream());
    let mut seq_loads = pin!(seq_load_srv.receive_request_stream());
    let mut seq_cmds = pin!(seq_srv.receive_request_stream());
    let mut was_fallback = false;
    let mut tick = interval(Duration::from_secs_f64(1.0 / p.publish_rate));
    tick.set_missed_tick_behavior(MissedTickBehavior::Skip);
    let mut q = vec![0.0; n];
    let mut have_q = false;
    let mut g = Guidance::empty();
    match &src.path_directory {
        Some(d) if d.is_dir() => ros_info!(log, "~/load_path files are read from {}", d.display()),
        Some(d) => ros_warn!(
            log,
            "path.directory {} does not exist: ~/load_path files are refused until it is created",
            d.display()
        ),
        None => ros_info!(
            log,
            "path.directory is not set: ~/load_path takes points only"
        ),
    }
    ros_info!(
        log,
        "steady_hand_guidance ready: {} {}",
        src.active,
        src.mode.as_str()
    );

    loop {
        tokio::select! {
            _ = shutdown.wait() => break,
            _ = tick.tick() => {
                if !have_q {
                    continue;
                }
                if let Err(e) = mapper.update(&q) {
                    ros_warn!(log, "forward kinematics failed: {e}");
                    continue;
                }
                let x = *mapper.tool_pose();
                match src.evaluate_current(&x, &mut g, clock.seconds()) {
                    Ok(ev) => {
                        if ev.fallback && !was_fallback {
                            ros_warn!(log, "the combination of {} and {} is empty here: using {} alone", ev.spec.primary, ev.spec.secondary.as_ref().map_or("", |s| s.0.as_str()), ev.spec.primary);
                        }
                        was_fallback = ev.fallback;
                        match ev.transition {
                            Transition::Advanced { from, to } => ros_info!(log, "sequence: step {from} `{}` complete, step {to} `{}` active", src.seq.steps()[from].fixture.name, src.seq.steps()[to].fixture.name),
                            Transition::Finished => ros_info!(log, "sequence: last step complete (finished; its fixture holds)"),
                            Transition::None => {}
                        }
                        let header = Header { stamp: clock.now(), frame_id: root.clone() };
                        let mut msg = fixture_to_msg(header, &ev.spec.primary, ev.mode, &g);
                        if let Some((sec, how)) = &ev.spec.secondary {
                            msg.secondary_type = source::code(sec).unwrap_or(0);
                            msg.combination = combination_code(*how);
                        }
                        msg.fallback = ev.fallback;
                        msg.sequence_state = sequence_state_code(src.seq.state());
                        msg.sequence_step = ev.step.map_or(-1, |i| i as i32);
                        msg.sequence_step_name = ev.spec.name;
                        msg.sequence_length = src.seq.len() as u32;
                        if let Err(e) = fx_pub.publish(msg) {
                            ros_warn!(log, "cannot publish the fixture: {e}");
                        }
                    }
                    Err(e) => ros_warn!(log, "{e}"),
                }
            }
            item = joint_states.next() => match item {
                Some(Ok((msg, _))) => match order.positions(&msg, &mut q) {
                    Ok(()) => have_q = true,
                    Err(e) => ros_warn!(log, "ignoring a joint state: {e}"),
                },
                Some(Err(e)) => ros_warn!(log, "cannot read a joint state: {e}"),
                None => return Err("the joint_states stream ended".into()),
            },
            item = loads.next() => if let Some(Ok((id, req))) = item {
                let r = src.load_path(&req);
                ros_info!(log, "~/load_path: {}", if r.success { format!("{:.3} m path active", r.length) } else { r.message.clone() });
                if let Err(e) = load_srv.async_send_response(id, r).await { ros_warn!(log, "cannot answer ~/load_path: {e}"); }
            },
            item = cones.next() => if let Some(Ok((id, req))) = item {
                let r = src.set_cone(&req);
                ros_info!(log, "~/set_rcm_cone: {}", if r.success { "cone active".to_string() } else { r.message.clone() });
                if let Err(e) = cone_srv.async_send_response(id, r).await { ros_warn!(log, "cannot answer ~/set_rcm_cone: {e}"); }
            },
            item = modes.next() => if let Some(Ok((id, req))) = item {
                let r = src.set_mode(&req);
                ros_info!(log, "~/set_mode: {}", r.message);
                if let Err(e) = mode_srv.async_send_response(id, r).await { ros_warn!(log, "cannot answer ~/set_mode: {e}"); }
            },
            item = combines.next() => if let Some(Ok((id, req))) = item {
                let r = src.combine_request(&req);
                ros_info!(log, "~/combine: {}", if r.success { format!("{} active", r.message) } else { format!("refused: {}", r.message) });
                if let Err(e) = combine_srv.async_send_response(id, r).await { ros_warn!(log, "cannot answer ~/combine: {e}"); }
            },
            item = seq_loads.next() => if let Some(Ok((id, req))) = item {
                let r = src.load_sequence(&req);
                ros_info!(log, "~/load_sequence: {}", if r.success { r.message.clone() } else { format!("refused: {}", r.message) });
                if let Err(e) = seq_load_srv.async_send_response(id, r).await { ros_warn!(log, "cannot answer ~/load_sequence: {e}"); }
            },
            item = seq_cmds.next() => if let Some(Ok((id, req))) = item {
                let r = src.sequence_control(&req);
                ros_info!(log, "~/sequence {}: {}", req.command, if r.success { r.message.clone() } else { format!("refused: {}", r.message) });
                if let Err(e) = seq_srv.async_send_response(id, r).await { ros_warn!(log, "cannot answer ~/sequence: {e}"); }
            },
        }
    }
    ros_info!(log, "shutting down");
    Ok(())
}
