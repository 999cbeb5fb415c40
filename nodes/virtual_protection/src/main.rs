//! `virtual_protection`: the surgical virtual protections of RPQ section 4 as a ROS 2 node.
//!
//! ```text
//! virtual_protection --ros-args --params-file config/virtual_protection.yaml
//! ```
//!
//! | interface | type | behaviour |
//! |---|---|---|
//! | srv `~/generate_shield` | `rpq_interfaces/GenerateShield` | shield of eq. 4 over an outline, put in force, mesh returned, STL saved on request |
//! | srv `~/generate_cutting_aid` | `rpq_interfaces/GenerateCuttingAid` | cutting aid of eq. 5, the same way |
//! | srv `~/clear` | `std_srvs/Trigger` | removes the shield and the cutting aid |
//! | pub `~/protections` | `rpq_interfaces/ProtectionMeshes` | latched; every protection in force (patient included), on every change |
//! | pub `~/protection_markers` | `visualization_msgs/MarkerArray` | latched; the meshes as `TRIANGLE_LIST`s |
//! | pub `~/markers` | `visualization_msgs/MarkerArray` | at `marker_rate`: tool-patient distance line and label, touched triangles in red |
//! | sub `joint_states` | `sensor_msgs/JointState` | the tool position (forward kinematics of the URDF) |
//!
//! The node commands no motion. Requests are answered one at a time in arrival order.

use std::error::Error;
use std::pin::pin;
use std::time::Duration;

use futures::StreamExt;
use nalgebra::{Point3, Vector3};
use rpq_kinematics::Robot;
use rpq_ros::interfaces::rpq_interfaces::msg::ProtectionMeshes;
use rpq_ros::interfaces::rpq_interfaces::srv::{GenerateCuttingAid, GenerateShield};
use rpq_ros::log::WarnThrottle;
use rpq_ros::msg::sensor_msgs::JointState;
use rpq_ros::msg::visualization_msgs::MarkerArray;
use rpq_ros::node::Publisher;
use rpq_ros::robot_description::RobotDescription;
use rpq_ros::run::NodeStart;
use rpq_ros::srv::std_srvs::Trigger;
use rpq_ros::{qos, ros_info, ros_warn};
use tokio::time::{interval, MissedTickBehavior};
use virtual_protection::markers::{distance_markers, protection_markers, DistanceProbe};
use virtual_protection::server::ProtectionServer;
use virtual_protection::settings::{self, services, Settings};

fn main() -> std::process::ExitCode {
    rpq_ros::run_node(settings::NODE_NAME, &settings::declarations(), run)
}

/// The latched publishers of the protection set.
struct Latched {
    meshes: Publisher<ProtectionMeshes>,
    markers: Publisher<MarkerArray>,
}

/// The robot holding the tool: its model, the tool link and the tool point in that link.
struct Tool {
    robot: Robot,
    link: usize,
    offset: Point3<f64>,
    radius: f64,
}

async fn run(start: NodeStart) -> Result<(), Box<dyn Error>> {
    let (mut node, shutdown, clock, log) = start.into_parts();
    let s = Settings::load(node.params())?;
    let p = &s.params;
    let tool = if p.tool.link.is_empty() {
        None
    } else {
        let robot = RobotDescription::load(&mut node, &p.robot_description_file)
            .await?
            .parse(Robot::from_urdf_str)?;
        let link = robot
            .link_index(&p.tool.link)
            .map_err(|e| rpq_ros::NodeError::config("tool.link", e.to_string()))?;
        Some(Tool {
            robot,
            link,
            offset: Point3::from(Vector3::from(p.tool.offset)),
            radius: p.tool.radius,
        })
    };
    let mut server = ProtectionServer::new(&s)?;

    let shield_srv = node.service::<GenerateShield>(services::GENERATE_SHIELD)?;
    let aid_srv = node.service::<GenerateCuttingAid>(services::GENERATE_CUTTING_AID)?;
    let clear_srv = node.service::<Trigger>(services::CLEAR)?;
    let mut shields = pin!(shield_srv.receive_request_stream());
    let mut aids = pin!(aid_srv.receive_request_stream());
    let mut clears = pin!(clear_srv.receive_request_stream());
    let markers_pub = node.publisher::<MarkerArray>(settings::MARKERS_TOPIC, qos::default())?;
    let js_sub = node.subscription::<JointState>(settings::JOINT_STATES_TOPIC, qos::default())?;
    let mut joint_states = pin!(js_sub.async_stream());

    let mut throttle = WarnThrottle::new(5.0);
    // The latched publishers are opened anew for every change: a RustDDS transient-local
    // writer keeps every sample no reader has acknowledged (up to 8192 of them, whatever the
    // depth) and replays them all to a late joiner, oldest first; a fresh writer holds only
    // the set in force.
    let mut latched: Option<Latched> = None;
    let mut publish_set = |node: &mut rpq_ros::node::RosNode,
                           server: &ProtectionServer,
                           throttle: &mut WarnThrottle|
     -> Result<(), Box<dyn Error>> {
        latched = None;
        let l = latched.insert(Latched {
            meshes: node
                .publisher::<ProtectionMeshes>(settings::PROTECTIONS_TOPIC, qos::latched())?,
            markers: node
                .publisher::<MarkerArray>(settings::PROTECTION_MARKERS_TOPIC, qos::latched())?,
        });
        let now = clock.now();
        let r1 = l
            .meshes
            .publish(server.meshes_msg(&now))
            .map_err(|e| e.to_string());
        let r2 = l
            .markers
            .publish(protection_markers(
                server.protections(),
                server.frame_id(),
                &now,
            ))
            .map_err(|e| e.to_string());
        for r in [r1, r2] {
            if let Err(e) = r {
                if let Some(m) = throttle.filter(
                    &format!("cannot publish the protections: {e}"),
                    clock.seconds(),
                ) {
                    ros_warn!(log, "{m}");
                }
            }
        }
        Ok(())
    };
    publish_set(&mut node, &server, &mut throttle)?;

    let markers_on = p.marker_rate > 0.0 && tool.is_some();
    let mut marker_tick = interval(Duration::from_secs_f64(1.0 / p.marker_rate.max(0.01)));
    marker_tick.set_missed_tick_behavior(MissedTickBehavior::Skip);
    let mut probe = DistanceProbe::new();
    let mut q: Option<(Vec<f64>, f64)> = None;
    let mut poses = tool
        .as_ref()
        .map(|t| vec![nalgebra::Isometry3::identity(); t.robot.links().len()])
        .unwrap_or_default();
    ros_info!(
        log,
        "virtual_protection ready: frame {}, patient {} ({} triangles), tool {}",
        server.frame_id(),
        p.patient.source,
        server.protections().num_triangles(),
        if p.tool.link.is_empty() {
            "none".to_string()
        } else {
            format!(
                "{} + {:?} m, radius {} m",
                p.tool.link, p.tool.offset, p.tool.radius
            )
        }
    );

    macro_rules! answer {
        ($srv:expr, $id:expr, $resp:expr, $name:expr) => {{
            let resp = $resp;
            if resp.success {
                ros_info!(log, "{}: {}", $name, resp.message);
            } else {
                ros_warn!(log, "{}: refused: {}", $name, resp.message);
            }
            if let Err(e) = $srv.async_send_response($id, resp).await {
                ros_warn!(log, "cannot answer {}: {e}", $name);
            }
        }};
    }

    loop {
        let before = server.revision();
        tokio::select! {
            _ = shutdown.wait() => break,
            item = shields.next() => if let Some(Ok((id, req))) = item {
                answer!(shield_srv, id, server.generate_shield(&req), services::GENERATE_SHIELD);
            },
            item = aids.next() => if let Some(Ok((id, req))) = item {
                answer!(aid_srv, id, server.generate_cutting_aid(&req), services::GENERATE_CUTTING_AID);
            },
            item = clears.next() => if let Some(Ok((id, _req))) = item {
                answer!(clear_srv, id, server.clear(), services::CLEAR);
            },
            item = joint_states.next() => match item {
                Some(Ok((msg, _))) => if let Some(t) = &tool {
                    match t.robot.positions_from_named(&msg.name, &msg.position) {
                        Ok(v) => q = Some((v, clock.seconds())),
                        Err(e) => if let Some(m) = throttle.filter(&format!("ignoring a joint state: {e}"), clock.seconds()) {
                            ros_warn!(log, "{m}");
                        },
                    }
                },
                Some(Err(e)) => if let Some(m) = throttle.filter(&format!("cannot read a joint state: {e}"), clock.seconds()) {
                    ros_warn!(log, "{m}");
                },
                None => return Err("the joint_states stream ended".into()),
            },
            _ = marker_tick.tick(), if markers_on => {
                let (Some(t), Some((qv, at))) = (&tool, &q) else { continue };
                if clock.seconds() - at > p.joint_state_timeout {
                    continue;
                }
                if t.robot.forward_kinematics_into(qv, &mut poses).is_err() {
                    continue;
                }
                let tip = poses[t.link] * t.offset;
                if let Some(d) = probe.measure(server.protections(), &tip, t.radius) {
                    if let Err(e) = markers_pub.publish(distance_markers(&d, server.frame_id(), &clock.now())) {
                        if let Some(m) = throttle.filter(&format!("cannot publish markers: {e}"), clock.seconds()) {
                            ros_warn!(log, "{m}");
                        }
                    }
                }
            },
        }
        if server.revision() != before {
            publish_set(&mut node, &server, &mut throttle)?;
        }
    }
    ros_info!(log, "shutting down");
    Ok(())
}
