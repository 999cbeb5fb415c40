//! `simulated_surgeon`: the seeded surgeon of the assisted cranial cut over ROS 2 (see the
//! library docs and docs/surgery.md, "Main job").
//!
//! ```text
//! simulated_surgeon --ros-args --params-file config/simulated_surgeon.yaml
//! ```
//!
//! | interface | type | behaviour |
//! |---|---|---|
//! | client `<virtual_protection>/generate_shield`, `.../generate_cutting_aid` | `rpq_interfaces/GenerateShield`, `GenerateCuttingAid` | the shield before the first push, the cutting aid `aid_delay` after it |
//! | sub `<virtual_protection>/protections` | `rpq_interfaces/ProtectionMeshes` | latched; the protection sets, each measured against once the controller has it in force |
//! | sub `joint_states` | `sensor_msgs/JointState` | the drill tip (forward kinematics of `tool_link`) |
//! | sub `<controller>/status` | `rpq_interfaces/AdmittanceStatus` | contact with a protection (`filter_contact`), the set in force (`protections_stamp`) |
//! | sub `command_topic` | `std_msgs/Float64MultiArray` | arrival times of the velocity commands (loop timing) |
//! | pub `wrench` | `geometry_msgs/WrenchStamped` | at `publish_rate`, in `sensor_frame` |
//!
//! Prints a status line every `status_period`, and after `duration` (or on Ctrl-C) the summary;
//! writes summary, trajectory and plots to `output_directory`. Exit status 1 if a penetration
//! was measured.

use std::error::Error;
use std::future::Future;
use std::pin::{pin, Pin};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use nalgebra::{Point3, Vector3};
use rpq_kinematics::Robot;
use rpq_ros::interfaces::rpq_interfaces::msg::{AdmittanceStatus, ProtectionMeshes};
use rpq_ros::interfaces::rpq_interfaces::srv::{
    GenerateCuttingAid, GenerateCuttingAidRequest, GenerateShield, GenerateShieldRequest,
};
use rpq_ros::msg::geometry_msgs::{
    Point as RosPoint, Vector3 as RosVector3, Wrench, WrenchStamped,
};
use rpq_ros::msg::sensor_msgs::JointState;
use rpq_ros::msg::std_msgs::{Float64MultiArray, Header};
use rpq_ros::robot_description::RobotDescription;
use rpq_ros::run::NodeStart;
use rpq_ros::{qos, ros_error, ros_info, ros_warn};
use rpq_surgery::scenario::{Geometry, ScenarioConfig, Surgeon};
use steady_hand::protection_filter::{protections_from_msg, stamp_tag};
use surgery_scenario::settings::{declarations, SimulatedSurgeonParams, NODE_NAME};
use surgery_scenario::{sensor_wrench, InForce, Monitor};
use tokio::time::{interval, MissedTickBehavior};

fn main() -> ExitCode {
    rpq_ros::run_node(NODE_NAME, &declarations(), run)
}

fn ros_points(pts: &[Point3<f64>]) -> Vec<RosPoint> {
    pts.iter()
        .map(|p| RosPoint {
            x: p.x,
            y: p.y,
            z: p.z,
        })
        .collect()
}

type Call<'a> = Pin<Box<dyn Future<Output = Result<String, String>> + 'a>>;

async fn run(start: NodeStart) -> Result<(), Box<dyn Error>> {
    let (mut node, shutdown, clock, log) = start.into_parts();
    let p = SimulatedSurgeonParams::from_params(node.params())?;
    if !p.output_directory.is_empty() {
        // before any topic of ours exists: the recorder of the launch writes its bag inside
        std::fs::create_dir_all(&p.output_directory)
            .map_err(|e| format!("output_directory {}: {e}", p.output_directory))?;
    }
    let robot = RobotDescription::load(&mut node, &p.robot_description_file)
        .await?
        .parse(Robot::from_urdf_str)?;
    let tip_link = robot.link_index(&p.tool_link)?;
    let sensor_link = robot.link_index(&p.sensor_frame)?;
    let names: Vec<String> = robot.joint_names().map(str::to_string).collect();
    let cfg = ScenarioConfig {
        seed: p.seed as u64,
        tool_radius: p.tool_radius,
        phantom_position: Vector3::from(p.phantom_position),
        surgeon: rpq_surgery::scenario::SurgeonModel {
            push_interval: p.push_interval,
            ..Default::default()
        },
        ..ScenarioConfig::default()
    };
    cfg.validate()?;
    let geometry = Arc::new(Geometry::build(&cfg)?);
    let mut monitor = Monitor::new(cfg.clone(), geometry.clone())?;
    let dt = 1.0 / p.publish_rate;
    let mut surgeon = Surgeon::new(cfg.surgeon, dt, cfg.seed);

    let vp = p.virtual_protection.trim_end_matches('/');
    let shield_client = node.client::<GenerateShield>(&format!("{vp}/generate_shield"))?;
    let aid_client = node.client::<GenerateCuttingAid>(&format!("{vp}/generate_cutting_aid"))?;
    let prot_sub =
        node.subscription::<ProtectionMeshes>(&format!("{vp}/protections"), qos::latched())?;
    let js_sub = node.subscription::<JointState>("joint_states", qos::default())?;
    let ctl = p.controller.trim_end_matches('/');
    let status_sub =
        node.subscription::<AdmittanceStatus>(&format!("{ctl}/status"), qos::default())?;
    let cmd_sub = node.subscription::<Float64MultiArray>(&p.command_topic, qos::default())?;
    let wrench_pub = node.publisher::<WrenchStamped>("wrench", qos::default())?;
    let mut protections = pin!(prot_sub.async_stream());
    let mut joint_states = pin!(js_sub.async_stream());
    let mut statuses = pin!(status_sub.async_stream());
    let mut commands = pin!(cmd_sub.async_stream());
    let timeout = Duration::from_secs_f64(p.service_timeout);

    // the pre-operative phase: the surgeon's outline becomes the shield
    let frame = *geometry.outline.frame();
    let up = frame.normal();
    let outline = ros_points(&geometry.outline.points());
    let up_msg = RosVector3 {
        x: up.x,
        y: up.y,
        z: up.z,
    };
    node.wait_for_service(&shield_client, timeout).await?;
    node.wait_for_service(&aid_client, timeout).await?;
    let shield_request = GenerateShieldRequest {
        frame_id: String::new(),
        outline: outline.clone(),
        up: up_msg,
        height: cfg.shield.height,
        margin: cfg.shield.margin,
        resolution: cfg.shield.resolution as u32,
        save_as: String::new(),
    };
    let aid_request = GenerateCuttingAidRequest {
        frame_id: String::new(),
        outline,
        up: up_msg,
        width: cfg.cut_width,
        height: cfg.aid_height,
        resolution: cfg.shield.resolution as u32,
        save_as: String::new(),
    };

    let mut q = vec![0.0; names.len()];
    let mut have_joints = false;
    let mut tip = Point3::origin();
    let mut sensor = nalgebra::Isometry3::identity();
    let mut started: Option<f64> = None;
    let mut shield_seen = false;
    let mut contact_window = false;
    let mut contact_now = false;
    let mut next_status = p.status_period;
    // the set in force is taken from the latched protections topic (the ~200 kB meshes are not
    // in the replies: virtual_protection's reply_mesh_max_bytes); a reply only tells a refusal
    let mut aid_call: Option<Call<'_>> = None;
    let mut shield_call: Option<Call<'_>> = Some({
        let client = &shield_client;
        let req = shield_request;
        Box::pin(async move {
            client
                .call(req, timeout)
                .await
                .map_err(|e| e.to_string())
                .and_then(|r| {
                    if r.success {
                        Ok(r.message)
                    } else {
                        Err(format!("refused: {}", r.message))
                    }
                })
        })
    });
    let mut aid_requested = false;
    let mut last_cmd: Option<Instant> = None;
    let mut intervals: Vec<f64> = Vec::new();
    let waited = Instant::now();
    let (set_tx, mut set_rx) = tokio::sync::mpsc::unbounded_channel();
    let mut in_force = InForce::default();
    let mut enforced: Option<rpq_surgery::ProtectionSet> = None;
    // longer than the controller's F/T filter decay + rearm_hold (0.1 s)
    let reaction = cfg.surgeon.user.reaction_delay.max(0.3);
    let mut release_until = f64::NEG_INFINITY;
    let mut tick = interval(Duration::from_secs_f64(dt));
    tick.set_missed_tick_behavior(MissedTickBehavior::Skip);
    let elapsed = |started: Option<f64>| started.map_or(0.0, |s| clock.seconds() - s);

    // the wrench as the F/T sensor publishes it, stamped now
    let at_sensor = |wrench: Wrench| WrenchStamped {
        header: Header {
            stamp: clock.now(),
            frame_id: p.sensor_frame.clone(),
        },
        wrench,
    };
    let interrupted = loop {
        // the run is measured against the set the controller reports in force (its status
        // names it by the stamp of the protections message), not the newest one sent
        if let Some(set) = enforced.take() {
            if set.get("shield").is_some() && !shield_seen {
                shield_seen = true;
                ros_info!(
                    log,
                    "shield in force at the controller ({} protections)",
                    set.len()
                );
            }
            if set.get("cutting_aid").is_some()
                && monitor.protections().get("cutting_aid").is_none()
            {
                ros_info!(
                    log,
                    "cutting aid in force at the controller at t = {:.2} s",
                    elapsed(started)
                );
            }
            monitor.set_protections(set, elapsed(started));
        }
        tokio::select! {
            _ = shutdown.wait() => break true,
            _ = tick.tick() => {
                if started.is_none() {
                    // push once the shield is in force and the robot is seen
                    if shield_seen && have_joints {
                        started = Some(clock.seconds());
                        surgeon.prime(&monitor.view(&tip));
                        ros_info!(log, "the surgeon starts cutting (seed {}, {} s)", cfg.seed, p.duration);
                    } else if waited.elapsed() > timeout {
                        return Err("no joint states, or no shield in force at the controller (its status names the protections in force): is the scenario running?".into());
                    } else {
                        // hands on the drill, no force yet: the controller runs (and puts the
                        // protections in force) before the first push
                        if let Err(e) = wrench_pub.publish(at_sensor(Wrench::default())) {
                            ros_warn!(log, "cannot publish the wrench: {e}");
                        }
                        continue;
                    }
                }
                let t = elapsed(started);
                if p.duration > 0.0 && t >= p.duration {
                    break false;
                }
                if !aid_requested && t >= p.aid_delay {
                    aid_requested = true;
                    let req = aid_request.clone();
                    let client = &aid_client;
                    aid_call = Some(Box::pin(async move {
                        client.call(req, timeout).await.map_err(|e| e.to_string()).and_then(|r| {
                            if r.success { Ok(r.message) } else { Err(format!("refused: {}", r.message)) }
                        })
                    }));
                }
                let view = monitor.view(&tip);
                let f = surgeon.step(&view, dt);
                let f = if clock.seconds() < release_until { Vector3::zeros() } else { f };
                let w = sensor_wrench(&sensor, &tip, &f);
                let msg = at_sensor(Wrench {
                    force: RosVector3 { x: w[0], y: w[1], z: w[2] },
                    torque: RosVector3 { x: w[3], y: w[4], z: w[5] },
                });
                if let Err(e) = wrench_pub.publish(msg) {
                    ros_warn!(log, "cannot publish the wrench: {e}");
                }
                if t >= next_status {
                    next_status += p.status_period;
                    println!("{}", monitor.status(t, contact_window, surgeon.pushing()));
                    contact_window = contact_now;
                }
            }
            r = async { shield_call.as_mut().expect("guarded").await }, if shield_call.is_some() => {
                shield_call = None;
                match r {
                    Ok(m) => ros_info!(log, "generate_shield: {m}"),
                    Err(e) if e.contains("refused") => return Err(format!("generate_shield {e}").into()),
                    Err(e) => ros_warn!(log, "generate_shield: {e}; the protections topic tells"),
                }
            }
            r = async { aid_call.as_mut().expect("guarded").await }, if aid_call.is_some() => {
                aid_call = None;
                match r {
                    Ok(m) => ros_info!(log, "generate_cutting_aid: {m}"),
                    Err(e) => ros_warn!(log, "generate_cutting_aid: {e}; the protections topic tells"),
                }
            }
            item = protections.next() => match item {
                // indexing ~67,000 triangles takes a while: off the wrench loop
                Some(Ok((msg, _))) => {
                    let tx = set_tx.clone();
                    tokio::task::spawn_blocking(move || {
                        let tag = stamp_tag(&msg.header.stamp);
                        let _ = tx.send((tag, protections_from_msg(&msg, &msg.header.frame_id)));
                    });
                }
                Some(Err(e)) => ros_warn!(log, "cannot read the protections: {e}"),
                None => return Err("the protections stream ended".into()),
            },
            item = set_rx.recv() => if let Some((tag, converted)) = item {
                match converted {
                    Ok(set) => enforced = in_force.received(tag, set),
                    Err(e) => ros_warn!(log, "ignoring a protection set: {e}"),
                }
            },
            item = joint_states.next() => match item {
                Some(Ok((msg, _))) => {
                    let mut ok = msg.position.len() == msg.name.len();
                    for (i, n) in names.iter().enumerate() {
                        match msg.name.iter().position(|m| m == n) {
                            Some(k) if ok => q[i] = msg.position[k],
                            _ => ok = false,
                        }
                    }
                    if !ok {
                        continue;
                    }
                    let poses = robot.forward_kinematics(&q)?;
                    tip = Point3::from(poses[tip_link].translation.vector);
                    sensor = poses[sensor_link];
                    have_joints = true;
                    let t = elapsed(started);
                    if monitor.on_tool(t, tip, started.is_some(), contact_now, surgeon.pushing()) {
                        ros_error!(log, "PENETRATION at t = {t:.3} s, tool ({:.2}, {:.2}, {:.2}) mm", tip.x * 1e3, tip.y * 1e3, tip.z * 1e3);
                    }
                }
                Some(Err(e)) => ros_warn!(log, "cannot read a joint state: {e}"),
                None => return Err("the joint_states stream ended".into()),
            },
            item = statuses.next() => if let Some(Ok((st, _))) = item {
                // a controller stopped on a stale input re-arms hands off: let go for the
                // reaction delay (as simulated_user does)
                if st.rearm_required && clock.seconds() >= release_until + reaction {
                    ros_info!(log, "the controller stopped ({}): letting go for {reaction} s", st.reason);
                    release_until = clock.seconds() + reaction;
                }
                contact_now = st.filter_contact;
                contact_window |= contact_now;
                enforced = in_force.in_force(stamp_tag(&st.protections_stamp));
            },
            item = commands.next() => if let Some(Ok(_)) = item {
                let now = Instant::now();
                if let Some(l) = last_cmd.replace(now) {
                    if started.is_some() {
                        intervals.push((now - l).as_secs_f64() * 1e6);
                    }
                }
            },
        }
    };
    // hands off
    let _ = wrench_pub.publish(at_sensor(Wrench::default()));
    let report = monitor.report(surgeon.pushes(), intervals);
    let text = monitor.summary_text(&report, 0.0002);
    if interrupted {
        println!("stopped by a signal after {:.1} s", report.summary.duration);
    }
    print!("{text}");
    if !p.output_directory.is_empty() {
        let dir = std::path::Path::new(&p.output_directory);
        match monitor.write(dir, &report, &text) {
            Ok((files, note)) => {
                println!("written to {}: {} files", dir.display(), files.len());
                if let Some(n) = note {
                    println!("{n}");
                }
            }
            Err(e) => ros_error!(log, "cannot write the report: {e}"),
        }
    }
    if report.summary.penetrations > 0 {
        return Err(format!("{} penetrations", report.summary.penetrations).into());
    }
    Ok(())
}
