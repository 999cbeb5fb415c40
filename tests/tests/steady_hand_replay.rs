//! Issue 15 items 2-5 as a rosbag replay: a bag of inputs is played into `admittance_controller`
//! (sim time from the bag, `/clock` at 1 kHz) while its commands and status are recorded; every
//! recorded command must be the command of `steady_hand::admittance::AdmittanceCore` called
//! directly on the same messages, and each phase must do what the issue asks:
//!
//! | phase (bag time) | input | must show |
//! |---|---|---|
//! | P0 0-1 s | tool weight only (1.2 kg, sensor `ft_sensor` mounted on `tool0` by `/tf_static`) | zero command |
//! | P1 1-2 s | + 4 N along y at the tool point, given in `ft_sensor` | the analytic command `J⁺ (0, c(4 − 0.2), 0, 0, 0, 0)`: frame, mount and lever arm |
//! | P2 2-3.5 s | weight only, the wrist turning | zero command (gravity compensation); `~/zero_ft` refused (moving) |
//! | P3 3.5-5 s | weight + a sensor bias, still | the bias moves the robot until `~/zero_ft` (called at 4.5 s), then zero |
//! | P4 5-6 s | push + bias | the P1 command again |
//! | P5 6-6.5 s | a stall, then the 40 pushes made in its first 0.2 s flushed at 6.45 s | no motion (stamps), stopped, waiting for a re-arm |
//! | P6 6.5-7 s | hands off (bias) | re-armed |
//! | P7 7-11 s | push, the elbow stretched almost straight and back | no stop, damped near the singularity |
//! | P8 11-12 s | hands off | zero |
//!
//! The bag is written by this test (rpq_bag's writer). The controller's filter is set to pass
//! samples through and its acceleration limits out of reach, so each command depends on its own
//! wrench and joint state only and a dropped best-effort sample cannot desynchronise the replica;
//! the filter and the acceleration limit are covered by the library's unit and property tests.
//!
//! Opens DDS sockets: runs only inside the private network namespace.

use std::path::Path;
use std::pin::pin;
use std::time::Duration;

use futures::StreamExt;
use nalgebra::{DVector, Isometry3, Translation3, UnitQuaternion, Vector6};
use rpq_bag::BagReader;
use rpq_ros::cdr;
use rpq_ros::clock::{clock_qos, CLOCK_TOPIC};
use rpq_ros::interfaces::rpq_interfaces::msg::AdmittanceStatus;
use rpq_ros::msg::geometry_msgs::{Transform, TransformStamped, Wrench, WrenchStamped};
use rpq_ros::msg::rosgraph_msgs::Clock;
use rpq_ros::msg::sensor_msgs::JointState;
use rpq_ros::msg::std_msgs::Header;
use rpq_ros::msg::tf2_msgs::TFMessage;
use rpq_ros::msg::RosMessage;
use rpq_ros::srv::std_srvs::{Trigger, TriggerRequest};
use rpq_ros::{args::RosArgs, env::RosEnv, node::RosNode};
use rpq_tests::controller_bag::{controller_params, input_bag, log_ns, max_abs_diff, stamp, T0};
use rpq_tests::{
    bin, commands_on_bag_time, controller_replay, distinct_nonzero, repo_root, run_with_timeout,
    rx60_robot, rx60_urdf, status_bag_time, NodeProcess, TestEnv,
};
use steady_hand::admittance::{AdmittanceCore, JointInput, Output};
use steady_hand::convert::{wrench_input, JointOrder};
use steady_hand::settings::AdmittanceControllerParams;
use steady_hand::wrench::{gravity_wrench, reexpress};

const START: [f64; 6] = [0.0, 0.5, 1.5, 0.0, 1.14, 0.0];
const PUSH: f64 = 4.0;
const BIAS: [f64; 6] = [0.8, -0.5, 0.6, 0.03, 0.0, -0.02];
const REFUSED_TARE_AT: f64 = 2.8;
const TARE_AT: f64 = 4.5;
const BURST_MADE: (f64, f64) = (6.0, 6.2);
const BURST_FLUSHED: f64 = 6.45;
const END: f64 = 12.0;

/// Settings of the controller (and of the replica), on top of config/admittance_controller.yaml
/// (a joint-state timeout well above the replay's jitter under load: the stale joint state has
/// its own test, steady_hand_safety).
fn replay_yaml() -> String {
    format!(
        "admittance_controller:\n  ros__parameters:\n    robot_description_file: {}\n    \
         safety:\n      joint_state_timeout: 0.2\n    ft:\n      tool_mass: 1.2\n      tool_com: [0.0, 0.0, 0.05]\n      \
         filter_cutoff: 100000.0\n    limits:\n      max_linear_acceleration: 1.0e9\n      \
         max_angular_acceleration: 1.0e9\n",
        rx60_urdf().display()
    )
}

fn mount() -> Isometry3<f64> {
    Isometry3::from_parts(
        Translation3::new(0.0, 0.0, 0.04),
        UnitQuaternion::from_euler_angles(0.0, 0.0, 0.7),
    )
}

/// The robot's joints at bag time `t`, and their velocities.
fn joints_at(t: f64) -> ([f64; 6], [f64; 6]) {
    let mut q = START;
    let mut qd = [0.0; 6];
    let tau = std::f64::consts::TAU;
    if (2.0..3.5).contains(&t) {
        let s = t - 2.0;
        q[3] = 0.3 * (tau * 0.3 * s).sin();
        qd[3] = 0.3 * tau * 0.3 * (tau * 0.3 * s).cos();
        q[5] = 0.4 * (tau * 0.25 * s).sin();
        qd[5] = 0.4 * tau * 0.25 * (tau * 0.25 * s).cos();
    }
    if (7.0..11.0).contains(&t) {
        // the elbow stretches almost straight and back, the tool keeps pointing down
        let w = tau / 4.0;
        let s = (1.0 - (w * (t - 7.0)).cos()) / 2.0;
        let sd = w * (w * (t - 7.0)).sin() / 2.0;
        q[1] = 0.5 + 0.7 * s;
        q[2] = 1.5 - 1.48 * s;
        q[4] = std::f64::consts::PI - q[1] - q[2];
        qd[1] = 0.7 * sd;
        qd[2] = -1.48 * sd;
        qd[4] = -qd[1] - qd[2];
    }
    (q, qd)
}

/// The push [N] along base y at the tool point, and whether the sensor bias is on, at `t`.
fn input_at(t: f64) -> (f64, bool) {
    let push = (1.0..2.0).contains(&t)
        || (5.0..6.0).contains(&t)
        || (BURST_MADE.0..BURST_MADE.1).contains(&t)
        || (7.0..11.0).contains(&t);
    (if push { PUSH } else { 0.0 }, t >= 3.5)
}

/// What the sensor reads at `t`: push + the tool's weight + bias, in `ft_sensor`.
fn raw_wrench(t: f64, ft: &steady_hand::wrench::FtConfig) -> [f64; 6] {
    let robot = rx60_robot();
    let (q, _) = joints_at(t);
    let tool = robot.link_pose("tool0", &q).unwrap();
    let sensor = tool * mount();
    let (push, bias) = input_at(t);
    let at_tool = Isometry3::from_parts(tool.translation, UnitQuaternion::identity());
    let f = reexpress(
        &Vector6::new(0.0, push, 0.0, 0.0, 0.0, 0.0),
        &at_tool,
        &sensor,
    ) + gravity_wrench(ft, &sensor)
        + if bias {
            Vector6::from(BIAS)
        } else {
            Vector6::zeros()
        };
    [f[0], f[1], f[2], f[3], f[4], f[5]]
}

fn params() -> AdmittanceControllerParams {
    controller_params(&replay_yaml())
}

fn write_bag(dir: &Path) {
    let s = params();
    let ft = s.core_config().unwrap().ft;
    let robot = rx60_robot();
    let names: Vec<String> = robot.joint_names().map(str::to_string).collect();
    let mut w = input_bag(
        dir,
        ("/tf_static", TFMessage::TYPE_NAME, &TFMessage::definition()),
    );
    let m = mount();
    let tf = TFMessage {
        transforms: vec![TransformStamped {
            header: Header {
                stamp: stamp(0.0),
                frame_id: "tool0".into(),
            },
            child_frame_id: "ft_sensor".into(),
            transform: Transform::try_from(&m).unwrap(),
        }],
    };
    let mut msgs: Vec<(u64, &str, Vec<u8>)> =
        vec![(log_ns(0.0), "/tf_static", cdr::to_vec(&tf).unwrap())];
    // joint states at 100 Hz, 2.5 ms before each second wrench
    let mut k = 0;
    loop {
        let t = 0.0025 + 0.01 * k as f64;
        if t >= END {
            break;
        }
        let (q, qd) = joints_at(t);
        let js = JointState {
            header: Header {
                stamp: stamp(t),
                frame_id: String::new(),
            },
            name: names.clone(),
            position: q.to_vec(),
            velocity: qd.to_vec(),
            effort: vec![],
        };
        msgs.push((log_ns(t), "/joint_states", cdr::to_vec(&js).unwrap()));
        k += 1;
    }
    // wrenches at 200 Hz; none during the stall; the burst flushed at once
    let mut k = 0;
    loop {
        let t = 0.005 * k as f64;
        if t >= END {
            break;
        }
        k += 1;
        // nothing fresh from the start of the stall until 6.5 s; the burst is flushed before
        let stalled = (BURST_MADE.0..6.5).contains(&t);
        if stalled && !(BURST_MADE.0..BURST_MADE.1).contains(&t) {
            continue;
        }
        let f = raw_wrench(t, &ft);
        let msg = WrenchStamped {
            header: Header {
                stamp: stamp(t),
                frame_id: "ft_sensor".into(),
            },
            wrench: Wrench::try_from(&Vector6::from(f)).unwrap(),
        };
        let logged = if stalled {
            BURST_FLUSHED + 1e-6 * k as f64
        } else {
            t
        };
        msgs.push((log_ns(logged), "/wrench", cdr::to_vec(&msg).unwrap()));
    }
    msgs.sort_by_key(|m| m.0);
    for (t, topic, data) in msgs {
        w.write_to_topic(topic, t, t, &data).unwrap();
    }
    w.finish().unwrap();
}

/// The replica's command for every wrench of the bag: `(bag time of the wrench, joint
/// velocities or None for a stop/nothing)`. `lag`: joint states reach the core one step late.
fn replica(bag: &BagReader, lag: bool) -> Vec<(f64, Option<Vec<f64>>)> {
    let s = params();
    let robot = rx60_robot();
    let order = JointOrder::new(robot.joint_names().map(str::to_string).collect());
    let mut core = AdmittanceCore::new(robot, s.core_config().unwrap()).unwrap();
    let mut out = Vec::new();
    let mut pending: Option<JointState> = None;
    let mut taring = [(REFUSED_TARE_AT, false), (TARE_AT, true)]
        .into_iter()
        .peekable();
    let (mut q, mut qd) = (vec![0.0; 6], vec![0.0; 6]);
    for m in bag.messages() {
        let t = (m.log_time - T0) as f64 * 1e-9;
        while let Some(&(at, ok)) = taring.peek() {
            if t < at {
                break;
            }
            taring.next();
            let r = core.zero_ft(T0 as f64 * 1e-9 + at);
            assert_eq!(r.is_ok(), ok, "replica tare at {at}: {r:?}");
        }
        match m.topic.as_str() {
            "/tf_static" => {
                let tf: TFMessage = cdr::from_bytes(&m.data).unwrap();
                for x in tf.transforms {
                    let pose = Isometry3::try_from(&x.transform).unwrap();
                    core.on_transform(&x.header.frame_id, &x.child_frame_id, pose, true);
                }
            }
            "/joint_states" => {
                let js: JointState = cdr::from_bytes(&m.data).unwrap();
                let js = if lag { pending.replace(js) } else { Some(js) };
                if let Some(js) = js {
                    order.positions(&js, &mut q).unwrap();
                    order.velocities(&js, &mut qd).unwrap();
                    let st = &js.header.stamp;
                    let time = f64::from(st.sec) + f64::from(st.nanosec) * 1e-9;
                    core.on_joint_state(&JointInput {
                        positions: &q,
                        velocities: Some(&qd),
                        stamp: Some(time),
                        received: time,
                    })
                    .unwrap();
                }
            }
            "/wrench" => {
                let w: WrenchStamped = cdr::from_bytes(&m.data).unwrap();
                let now = (m.log_time as f64) * 1e-9;
                let st = &w.header.stamp;
                let made = f64::from(st.sec) + f64::from(st.nanosec) * 1e-9 - T0 as f64 * 1e-9;
                let o = match core.on_wrench(&wrench_input(&w, now), now).0 {
                    Output::Motion {
                        joint_velocities, ..
                    } => Some(joint_velocities.to_vec()),
                    _ => None,
                };
                out.push((made, o));
            }
            _ => {}
        }
    }
    out
}

#[test]
fn replayed_inputs_give_the_cores_commands_phase_by_phase() {
    let env = TestEnv::new();
    let work = env.scratch(env!("CARGO_TARGET_TMPDIR"), "steady_hand_inputs");
    let input = work.join("inputs");
    write_bag(&input);
    let params_file = work.join("replay.yaml");
    std::fs::write(&params_file, replay_yaml()).unwrap();
    let mut cmd = env.command(bin("admittance_controller"));
    cmd.arg("--ros-args")
        .arg("--params-file")
        .arg(repo_root().join("config/admittance_controller.yaml"))
        .arg("--params-file")
        .arg(&params_file)
        .args(["-p", "use_sim_time:=true"]);
    let ctl = NodeProcess::spawn("admittance_controller", cmd);
    ctl.wait_for_output("admittance_controller ready", Duration::from_secs(20));
    let output = work.join("recorded");
    let replay = controller_replay(&env, &input, &output);
    let replayer = std::thread::spawn(move || {
        run_with_timeout("rpq_bag replay", replay, Duration::from_secs(60))
    });
    // the two tare requests at their bag times
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let domain = env.domain_id.to_string();
    let tares = runtime.block_on(async move {
        let ros_env =
            RosEnv::from_vars(|k| (k == "ROS_DOMAIN_ID").then(|| domain.clone())).unwrap();
        let mut node = RosNode::new("tare_client", ros_env, RosArgs::default(), &[]).unwrap();
        let client = node
            .client::<Trigger>("/admittance_controller/zero_ft")
            .unwrap();
        node.wait_for_service(&client, Duration::from_secs(20))
            .await
            .expect("~/zero_ft appears");
        let clock_sub = node
            .subscription::<Clock>(CLOCK_TOPIC, clock_qos())
            .unwrap();
        let mut clock = pin!(clock_sub.async_stream());
        let mut answers = Vec::new();
        for at in [REFUSED_TARE_AT, TARE_AT] {
            loop {
                let (c, _) = tokio::time::timeout(Duration::from_secs(30), clock.next())
                    .await
                    .expect("/clock runs")
                    .expect("/clock stream")
                    .expect("a /clock message");
                let t =
                    f64::from(c.clock.sec) + f64::from(c.clock.nanosec) * 1e-9 - T0 as f64 * 1e-9;
                if t >= at {
                    break;
                }
            }
            let r = client
                .call(TriggerRequest::default(), Duration::from_secs(5))
                .await
                .expect("~/zero_ft answers");
            answers.push(r);
        }
        answers
    });
    let out = replayer.join().unwrap();
    assert!(
        out.success,
        "rpq_bag replay failed:\n{}\n{}",
        out.stdout, out.stderr
    );
    let mut ctl = ctl;
    ctl.stop(Duration::from_secs(3));
    let log = ctl.output().join("\n");
    assert!(
        !tares[0].success && tares[0].message.contains("moves"),
        "{:?}",
        tares[0]
    );
    assert!(tares[1].success, "{:?}\n{log}", tares[1]);

    let bag_in = BagReader::open(&input).unwrap();
    let a = replica(&bag_in, false);
    let b = replica(&bag_in, true);
    let recorded = BagReader::open(&output).expect("recorded bag opens");
    let statuses: Vec<(u64, AdmittanceStatus)> = recorded
        .messages()
        .iter()
        .filter(|m| m.topic == "/admittance_controller/status")
        .map(|m| (m.log_time, cdr::from_bytes(&m.data).unwrap()))
        .collect();
    let stamp_t = |s: &AdmittanceStatus| status_bag_time(s, T0);
    let commands = commands_on_bag_time(&recorded, &statuses, T0);
    assert!(commands.len() > 1000, "{} commands:\n{log}", commands.len());

    // 1. every distinct non-zero command is the replica's for some wrench, in order
    let distinct = distinct_nonzero(&commands);
    let mut k = 0;
    let mut unmatched = Vec::new();

    for (t, c) in &distinct {
        let hit = (k..a.len()).find(|&i| {
            [&a[i].1, &b[i].1]
                .iter()
                .any(|o| o.as_ref().is_some_and(|o| max_abs_diff(o, c) < 1e-9))
        });
        match hit {
            Some(i) => k = i,
            None => unmatched.push((*t, c.clone())),
        }
    }
    assert!(
        unmatched.len() * 50 <= distinct.len(),
        "{} of {} recorded commands are not the core's: {:?}",
        unmatched.len(),
        distinct.len(),
        &unmatched[..unmatched.len().min(3)]
    );

    // 2. phases
    let robot = rx60_robot();
    let s = params();
    let v = s.admittance.c * (PUSH - s.shaping.force_deadband);
    let j = robot.jacobian("tool0", &START).unwrap();
    let nonzero_in = |from: f64, to: f64| {
        commands
            .iter()
            .filter(|(t, c)| *t >= from && *t < to && c.iter().any(|x| *x != 0.0))
            .map(|(_, c)| c.clone())
            .collect::<Vec<_>>()
    };
    let twist_of = |c: &[f64]| {
        let v = &j * DVector::from_column_slice(c);
        Vector6::from_column_slice(v.as_slice())
    };
    // P1 and P4: the analytic twist at START
    for (from, to, what) in [(1.2, 1.95, "P1"), (5.2, 5.95, "P4")] {
        let cs = nonzero_in(from, to);
        assert!(cs.len() > 100, "{what}: {} commands", cs.len());
        for c in &cs {
            let tw = twist_of(c);
            assert!(
                (tw - Vector6::new(0.0, v, 0.0, 0.0, 0.0, 0.0)).norm() < 1e-9,
                "{what}: twist {tw:?}, want (0, {v}, 0, 0, 0, 0)"
            );
        }
    }
    // P2 (gravity compensation), P3 after the tare, P6, P8: no motion
    for (from, to, what) in [
        (0.2, 0.95, "P0"),
        (2.05, 3.45, "P2 gravity"),
        (TARE_AT + 0.05, 4.95, "P3 after the tare"),
        (6.55, 6.95, "P6"),
        (11.05, 11.9, "P8"),
    ] {
        let cs = nonzero_in(from, to);
        assert!(
            cs.is_empty(),
            "{what}: {} non-zero commands, e.g. {:?}",
            cs.len(),
            cs.first()
        );
    }
    // P3 before the tare: the bias moves the robot
    assert!(
        nonzero_in(3.6, TARE_AT - 0.05).len() > 50,
        "P3: the bias did not move the robot"
    );
    // P5: the watchdog stops within a period after the timeout; the burst moves nothing
    let timeout = s.safety.wrench_timeout;
    let burst = nonzero_in(BURST_MADE.0 + timeout + 0.01, 6.49);
    assert!(
        burst.is_empty(),
        "P5: {} non-zero commands after the stall",
        burst.len()
    );
    let p5: Vec<&AdmittanceStatus> = statuses
        .iter()
        .map(|(_, s)| s)
        // (the first fresh hands-off sample, stamped 6.5 s, may arrive while /clock still reads
        // a millisecond less: it re-arms the controller, rightly)
        .filter(|s| (BURST_MADE.0..6.49).contains(&stamp_t(s)))
        .collect();
    assert!(
        p5.iter().any(|s| s.reason.contains("stale")),
        "P5 statuses: {p5:?}"
    );
    assert!(
        p5.iter().all(|s| s.state != AdmittanceStatus::STATE_ACTIVE
            || stamp_t(s) < BURST_MADE.0 + timeout + 0.01),
        "P5: active again during the burst: {p5:?}"
    );
    assert!(
        p5.iter().any(|s| s.rearm_required),
        "P5: no re-arm required: {p5:?}"
    );
    // P7: the singularity pass: active throughout, damped, the robot never stopped
    let p7: Vec<&AdmittanceStatus> = statuses
        .iter()
        .map(|(_, s)| s)
        .filter(|s| (7.2..10.8).contains(&stamp_t(s)))
        .collect();
    assert!(p7.len() > 20);
    assert!(
        p7.iter().all(|s| s.state == AdmittanceStatus::STATE_ACTIVE),
        "P7: stopped: {:?}",
        p7.iter()
            .find(|s| s.state != AdmittanceStatus::STATE_ACTIVE)
    );
    let sigma = p7
        .iter()
        .map(|s| s.min_singular_value)
        .fold(f64::INFINITY, f64::min);
    let damping = p7.iter().map(|s| s.damping).fold(0.0, f64::max);
    assert!(
        sigma < s.singularity.damping_threshold && damping > 0.0,
        "sigma {sigma}, damping {damping}"
    );
    let p7_cmds = nonzero_in(7.2, 10.8);
    let max_qd = p7_cmds
        .iter()
        .map(|c| c.iter().fold(0.0f64, |m, x| m.max(x.abs())))
        .fold(0.0, f64::max);
    assert!(p7_cmds.len() > 500, "P7: {} commands", p7_cmds.len());
    assert!(
        max_qd < 1.0 / (2.0 * s.singularity.max_damping) * v * 1.01,
        "P7: joint speed {max_qd}"
    );
    eprintln!(
        "steady_hand replay: {} commands, {} distinct non-zero, {} not the core's; P1 twist \
         (0, {v}, 0) to 1e-9; P5 burst: 0 commands; P7: sigma_min {sigma:.2e}, damping up to \
         {damping:.3}, max joint speed {max_qd:.3} rad/s",
        commands.len(),
        distinct.len(),
        unmatched.len()
    );
}
