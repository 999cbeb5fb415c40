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
use nalgebra::{Point3, Vector3};
use rpq_base::file::read_to_string_bounded;
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
use rpq_virtual_fixtures::{Guidance, Transition};
use steady_hand::convert::{
    combination_code, fixture_to_msg, parse_path_text, points_from_flat, sequence_state_code,
    source, step_from_msg, FixtureMode, FixtureSpec, JointOrder,
};
use steady_hand::fixture_manager::{FixtureManager, SequenceCommand};
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

/// `~/combine`: the request's numbers to a spec, then the manager.
fn combine(m: &mut FixtureManager, req: &CombineFixturesRequest) -> CombineFixturesResponse {
    let r = FixtureSpec::from_codes("", req.primary, req.secondary, req.combination, req.mode)
        .map_err(|e| e.to_string())
        .and_then(|spec| m.combine(spec));
    let (success, message) = match r {
        Ok(m) => (true, m),
        Err(m) => (false, m),
    };
    CombineFixturesResponse { success, message }
}

/// `~/load_sequence`: every step checked and converted, then the manager.
fn load_sequence(m: &mut FixtureManager, req: &LoadSequenceRequest) -> LoadSequenceResponse {
    let mut steps = Vec::with_capacity(req.steps.len());
    for (i, s) in req.steps.iter().enumerate() {
        match step_from_msg(s) {
            Ok(step) => steps.push(step),
            Err(e) => {
                return LoadSequenceResponse {
                    success: false,
                    message: format!("step {i} `{}`: {e}", s.name),
                    length: 0,
                }
            }
        }
    }
    match m.load_sequence(steps, req.start) {
        Ok((n, message)) => LoadSequenceResponse {
            success: true,
            message,
            length: n as u32,
        },
        Err(message) => LoadSequenceResponse {
            success: false,
            message,
            length: 0,
        },
    }
}

/// `~/sequence`: the command number to a command, then the manager.
fn sequence_control(
    m: &mut FixtureManager,
    req: &SequenceControlRequest,
) -> SequenceControlResponse {
    let command = match req.command {
        SequenceControlRequest::COMMAND_START => Ok(SequenceCommand::Start),
        SequenceControlRequest::COMMAND_STOP => Ok(SequenceCommand::Stop),
        SequenceControlRequest::COMMAND_STEP => Ok(SequenceCommand::Step),
        SequenceControlRequest::COMMAND_RESET => Ok(SequenceCommand::Reset),
        other => Err(rpq_virtual_fixtures::Error::UnknownName {
            what: "command (expected COMMAND_START = 1, COMMAND_STOP = 2, COMMAND_STEP = 3 \
                   or COMMAND_RESET = 4)",
            name: other.to_string(),
        }
        .to_string()),
    };
    let (r, state, step) = match command {
        Ok(c) => m.sequence_command(c),
        Err(e) => {
            let seq = m.sequence();
            (Err(e), seq.state(), (!seq.is_empty()).then(|| seq.index()))
        }
    };
    let (success, message) = match r {
        Ok(m) => (true, m),
        Err(m) => (false, m),
    };
    SequenceControlResponse {
        success,
        message,
        state: sequence_state_code(state),
        step: step.map_or(-1, |i| i as i32),
    }
}

/// `~/load_path`: points, or a file inside `path.directory`.
fn load_path(m: &mut FixtureManager, req: &LoadPathRequest) -> LoadPathResponse {
    let r = if !req.points.is_empty() {
        let pts: Vec<Point3<f64>> = req
            .points
            .iter()
            .map(|p| Point3::new(p.x, p.y, p.z))
            .collect();
        m.load_path(&pts)
    } else if !req.file.is_empty() {
        m.load_path_file(&req.file)
    } else {
        Err(NodeError::bad("LoadPath", "give points or a file").to_string())
    };
    match r {
        Ok(length) => LoadPathResponse {
            success: true,
            message: String::new(),
            length,
        },
        Err(message) => LoadPathResponse {
            success: false,
            message,
            length: 0.0,
        },
    }
}

/// `~/set_rcm_cone`.
fn set_cone(m: &mut FixtureManager, req: &SetRcmConeRequest) -> SetRcmConeResponse {
    let v = |p: &rpq_ros::msg::geometry_msgs::Vector3| Vector3::new(p.x, p.y, p.z);
    let r = m.set_rcm_cone(
        Point3::new(req.center.x, req.center.y, req.center.z),
        v(&req.axis),
        req.half_angle,
        v(&req.tool_axis),
    );
    SetRcmConeResponse {
        success: r.is_ok(),
        message: r.err().unwrap_or_default(),
    }
}

/// `~/set_mode`: mode and optional source numbers, then the manager.
fn set_mode(m: &mut FixtureManager, req: &SetFixtureModeRequest) -> SetFixtureModeResponse {
    let r = FixtureMode::from_code(req.mode)
        .map_err(|e| e.to_string())
        .and_then(|mode| {
            let src = match req.fixture_type {
                0 => None,
                code => Some(source::name(code).ok_or_else(|| {
                    format!(
                        "unknown fixture type {code} (expected 0 to keep it, or \
                         VirtualFixture.TYPE_*: {})",
                        source::listing()
                    )
                })?),
            };
            m.set_mode(mode, src)
        });
    let (success, message) = match r {
        Ok(m) => (true, m),
        Err(m) => (false, m),
    };
    SetFixtureModeResponse { success, message }
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
    let max_size = u64::try_from(p.path.max_size).unwrap_or(1);
    let mut sources = p.sources()?;
    let path_pts = if !p.path.file.is_empty() {
        let text = read_to_string_bounded(&p.path.file, max_size)
            .map_err(|e| NodeError::config("path.file", e.to_string()))?;
        Some(parse_path_text(&text).map_err(|e| NodeError::config("path.file", e.to_string()))?)
    } else if !p.path.points.is_empty() {
        Some(points_from_flat(&p.path.points)?)
    } else {
        None
    };
    if let Some(pts) = path_pts {
        sources = FixtureManager::with_path(sources, &pts)?;
    }
    let mode = FixtureMode::parse(&p.mode).map_err(|e| NodeError::config("mode", e.to_string()))?;
    let mut src = FixtureManager::new(sources, &p.fixture_type, mode)?;
    src.set_path_directory(
        (!p.path.directory.is_empty()).then(|| PathBuf::from(&p.path.directory)),
        max_size,
    );

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
    match src.path_directory() {
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
        src.active().0,
        src.active().1.as_str()
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
                match src.evaluate(&x, &mut g, clock.seconds()) {
                    Ok(ev) => {
                        if ev.fallback && !was_fallback {
                            ros_warn!(log, "the combination of {} and {} is empty here: using {} alone", ev.spec.primary, ev.spec.secondary.as_ref().map_or("", |s| s.0.as_str()), ev.spec.primary);
                        }
                        was_fallback = ev.fallback;
                        match ev.transition {
                            Transition::Advanced { from, to } => ros_info!(log, "sequence: step {from} `{}` complete, step {to} `{}` active", src.sequence().steps()[from].fixture.name, src.sequence().steps()[to].fixture.name),
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
                        msg.sequence_state = sequence_state_code(src.sequence().state());
                        msg.sequence_step = ev.step.map_or(-1, |i| i as i32);
                        msg.sequence_step_name = ev.spec.name;
                        msg.sequence_length = src.sequence().len() as u32;
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
                let r = load_path(&mut src, &req);
                ros_info!(log, "~/load_path: {}", if r.success { format!("{:.3} m path active", r.length) } else { r.message.clone() });
                if let Err(e) = load_srv.async_send_response(id, r).await { ros_warn!(log, "cannot answer ~/load_path: {e}"); }
            },
            item = cones.next() => if let Some(Ok((id, req))) = item {
                let r = set_cone(&mut src, &req);
                ros_info!(log, "~/set_rcm_cone: {}", if r.success { "cone active".to_string() } else { r.message.clone() });
                if let Err(e) = cone_srv.async_send_response(id, r).await { ros_warn!(log, "cannot answer ~/set_rcm_cone: {e}"); }
            },
            item = modes.next() => if let Some(Ok((id, req))) = item {
                let r = set_mode(&mut src, &req);
                ros_info!(log, "~/set_mode: {}", r.message);
                if let Err(e) = mode_srv.async_send_response(id, r).await { ros_warn!(log, "cannot answer ~/set_mode: {e}"); }
            },
            item = combines.next() => if let Some(Ok((id, req))) = item {
                let r = combine(&mut src, &req);
                ros_info!(log, "~/combine: {}", if r.success { format!("{} active", r.message) } else { format!("refused: {}", r.message) });
                if let Err(e) = combine_srv.async_send_response(id, r).await { ros_warn!(log, "cannot answer ~/combine: {e}"); }
            },
            item = seq_loads.next() => if let Some(Ok((id, req))) = item {
                let r = load_sequence(&mut src, &req);
                ros_info!(log, "~/load_sequence: {}", if r.success { r.message.clone() } else { format!("refused: {}", r.message) });
                if let Err(e) = seq_load_srv.async_send_response(id, r).await { ros_warn!(log, "cannot answer ~/load_sequence: {e}"); }
            },
            item = seq_cmds.next() => if let Some(Ok((id, req))) = item {
                let r = sequence_control(&mut src, &req);
                ros_info!(log, "~/sequence {}: {}", req.command, if r.success { r.message.clone() } else { format!("refused: {}", r.message) });
                if let Err(e) = seq_srv.async_send_response(id, r).await { ros_warn!(log, "cannot answer ~/sequence: {e}"); }
            },
        }
    }
    ros_info!(log, "shutting down");
    Ok(())
}
