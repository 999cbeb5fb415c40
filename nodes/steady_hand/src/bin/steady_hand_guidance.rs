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
//! | pub `virtual_fixture` | `rpq_interfaces/VirtualFixture` | at `rate_hz` once joint states arrive |
//! | srv `~/load_path` | `rpq_interfaces/srv/LoadPath` | points or a file; makes the path active |
//! | srv `~/set_rcm_cone` | `rpq_interfaces/srv/SetRcmCone` | makes the cone active |
//! | srv `~/set_mode` | `rpq_interfaces/srv/SetFixtureMode` | free / open_loop / closed_loop, and the source |

use std::error::Error;
use std::pin::pin;
use std::time::Duration;

use futures::StreamExt;
use nalgebra::{Isometry3, Point3, Vector3};
use rpq_ros::interfaces::rpq_interfaces::msg::VirtualFixture;
use rpq_ros::interfaces::rpq_interfaces::srv::{
    LoadPath, LoadPathRequest, LoadPathResponse, SetFixtureMode, SetFixtureModeRequest,
    SetFixtureModeResponse, SetRcmCone, SetRcmConeRequest, SetRcmConeResponse,
};
use rpq_ros::msg::builtin_interfaces::Time;
use rpq_ros::msg::sensor_msgs::JointState;
use rpq_ros::msg::std_msgs::Header;
use rpq_ros::node::RosNode;
use rpq_ros::params::Params;
use rpq_ros::shutdown::Shutdown;
use rpq_ros::{qos, ros_info, ros_warn};
use rpq_virtual_fixtures::{
    Guidance, GuidanceSource, PlaneSurface, PointTarget, PolylinePath, RcmCone,
};
use steady_hand::convert::{
    fixture_to_msg, parse_path_text, points_from_flat, FixtureMode, JointOrder,
};
use steady_hand::joints::JointMapper;
use steady_hand::settings;
use steady_hand::{load_robot, NodeError};
use tokio::time::{interval, MissedTickBehavior};

struct Fatal(Box<dyn Error>);

impl std::fmt::Debug for Fatal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "steady_hand_guidance: {}", self.0)
    }
}

fn main() -> Result<(), Fatal> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Fatal(e.into()))?;
    rt.block_on(run()).map_err(Fatal)
}

fn vec3(p: &Params, name: &str) -> Result<Vector3<f64>, NodeError> {
    let v = p.f64_array(name)?;
    if v.len() != 3 || !v.iter().all(|x| x.is_finite()) {
        return Err(NodeError::config(name, "expected three finite numbers"));
    }
    Ok(Vector3::new(v[0], v[1], v[2]))
}

struct Sources {
    path: Option<PolylinePath>,
    plane: PlaneSurface,
    point: PointTarget,
    cone: RcmCone,
    active: String,
    mode: FixtureMode,
    error_gain: f64,
    free_rotation: bool,
    rcm_error_gain: f64,
}

impl Sources {
    fn evaluate(&mut self, x: &Isometry3<f64>, g: &mut Guidance) -> Result<(), String> {
        match self.active.as_str() {
            VirtualFixture::TYPE_NONE => *g = Guidance::empty(),
            VirtualFixture::TYPE_PATH => match &mut self.path {
                Some(p) => p.evaluate(x, g),
                None => return Err("no path loaded".into()),
            },
            VirtualFixture::TYPE_PLANE => self.plane.evaluate(x, g),
            VirtualFixture::TYPE_POINT => self.point.evaluate(x, g),
            VirtualFixture::TYPE_RCM_CONE => self.cone.evaluate(x, g),
            other => return Err(format!("unknown fixture type `{other}`")),
        }
        Ok(())
    }

    fn make_path(&self, pts: &[Point3<f64>]) -> Result<PolylinePath, NodeError> {
        Ok(PolylinePath::new(pts)?
            .with_error_gain(self.error_gain)
            .with_free_rotation(self.free_rotation))
    }

    fn load_path(&mut self, req: &LoadPathRequest) -> LoadPathResponse {
        let pts = if !req.points.is_empty() {
            Ok(req
                .points
                .iter()
                .map(|p| Point3::new(p.x, p.y, p.z))
                .collect::<Vec<_>>())
        } else if !req.file.is_empty() {
            std::fs::read_to_string(&req.file)
                .map_err(|e| NodeError::bad(req.file.clone(), e.to_string()))
                .and_then(|t| parse_path_text(&t))
        } else {
            Err(NodeError::bad("LoadPath", "give points or a file"))
        };
        match pts.and_then(|p| self.make_path(&p)) {
            Ok(path) => {
                let length = path.length();
                self.path = Some(path);
                self.active = VirtualFixture::TYPE_PATH.into();
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
                self.active = VirtualFixture::TYPE_RCM_CONE.into();
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
        let mode = match FixtureMode::parse(&req.mode) {
            Ok(m) => m,
            Err(e) => {
                return SetFixtureModeResponse {
                    success: false,
                    message: e.to_string(),
                }
            }
        };
        let known = [
            VirtualFixture::TYPE_NONE,
            VirtualFixture::TYPE_PATH,
            VirtualFixture::TYPE_PLANE,
            VirtualFixture::TYPE_POINT,
            VirtualFixture::TYPE_RCM_CONE,
        ];
        if !req.fixture_type.is_empty() {
            if !known.contains(&req.fixture_type.as_str()) {
                return SetFixtureModeResponse {
                    success: false,
                    message: format!("unknown fixture type `{}`", req.fixture_type),
                };
            }
            if req.fixture_type == VirtualFixture::TYPE_PATH && self.path.is_none() {
                return SetFixtureModeResponse {
                    success: false,
                    message: "no path loaded (call ~/load_path first)".into(),
                };
            }
            self.active = req.fixture_type.clone();
        }
        self.mode = mode;
        SetFixtureModeResponse {
            success: true,
            message: format!("{} {}", self.active, mode.as_str()),
        }
    }
}

async fn run() -> Result<(), Box<dyn Error>> {
    let shutdown = Shutdown::install()?;
    let (mut node, extra) =
        RosNode::from_process(settings::GUIDANCE_NODE, &settings::guidance_declarations())?;
    let log = node.logger().clone();
    if !extra.is_empty() {
        ros_warn!(
            log,
            "ignoring arguments outside --ros-args: {}",
            extra.join(" ")
        );
    }
    let p = node.params().clone();
    let robot = load_robot(p.str("robot_description_file")?)?;
    let root = robot.root_link().name.clone();
    let order = JointOrder::new(robot.joint_names().map(str::to_string).collect());
    let n = robot.dof();
    let mut mapper = JointMapper::new(robot, p.str("tool_link")?)
        .map_err(|e| NodeError::config("tool_link", e.to_string()))?;
    let error_gain = p.f64("error_gain")?;
    let rcm_error_gain = p.f64("rcm_error_gain")?;
    let mut src = Sources {
        path: None,
        plane: PlaneSurface::new(
            Point3::from(vec3(&p, "plane_origin")?),
            vec3(&p, "plane_normal")?,
            p.bool("free_rotation")?,
        )?,
        point: PointTarget {
            target: Point3::from(vec3(&p, "point_target")?),
        },
        cone: RcmCone::new(
            Point3::from(vec3(&p, "rcm_center")?),
            vec3(&p, "rcm_axis")?,
            p.f64("rcm_half_angle")?,
            vec3(&p, "rcm_tool_axis")?,
        )?
        .with_error_gain(rcm_error_gain),
        active: p.str("fixture_type")?.to_string(),
        mode: FixtureMode::parse(p.str("mode")?)
            .map_err(|e| NodeError::config("mode", e.to_string()))?,
        error_gain,
        free_rotation: p.bool("free_rotation")?,
        rcm_error_gain,
    };
    let path_pts = if !p.str("path_file")?.is_empty() {
        let f = p.str("path_file")?;
        Some(parse_path_text(&std::fs::read_to_string(f).map_err(
            |e| NodeError::config("path_file", format!("{f}: {e}")),
        )?)?)
    } else if !p.f64_array("path_points")?.is_empty() {
        Some(points_from_flat(p.f64_array("path_points")?)?)
    } else {
        None
    };
    if let Some(pts) = path_pts {
        src.path = Some(src.make_path(&pts)?);
    }
    let mut probe = Guidance::empty();
    src.evaluate(&Isometry3::identity(), &mut probe)
        .map_err(|e| NodeError::config("fixture_type", e))?;

    let fx_pub = node.publisher::<VirtualFixture>(settings::FIXTURE_TOPIC, qos::default())?;
    let js_sub = node.subscription::<JointState>(settings::JOINT_STATES_TOPIC, qos::default())?;
    let load_srv = node.service::<LoadPath>("~/load_path")?;
    let cone_srv = node.service::<SetRcmCone>("~/set_rcm_cone")?;
    let mode_srv = node.service::<SetFixtureMode>("~/set_mode")?;
    let mut joint_states = pin!(js_sub.async_stream());
    let mut loads = pin!(load_srv.receive_request_stream());
    let mut cones = pin!(cone_srv.receive_request_stream());
    let mut modes = pin!(mode_srv.receive_request_stream());
    let mut tick = interval(Duration::from_secs_f64(1.0 / p.f64("rate_hz")?));
    tick.set_missed_tick_behavior(MissedTickBehavior::Skip);
    let mut q = vec![0.0; n];
    let mut have_q = false;
    let mut g = Guidance::empty();
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
                match src.evaluate(&x, &mut g) {
                    Ok(()) => {
                        let header = Header { stamp: Time::now().unwrap_or_default(), frame_id: root.clone() };
                        if let Err(e) = fx_pub.publish(fixture_to_msg(header, &src.active, src.mode, &g)) {
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
        }
    }
    ros_info!(log, "shutting down");
    Ok(())
}
