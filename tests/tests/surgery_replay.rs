//! Issue 13 point 6, "a rosbag replay test of the controller in forbidden-region mode":
//! `tests/bags/surgery_protections/` holds the inputs of `admittance_controller` (wrench, joint
//! states, and the protections on the latched `/virtual_protection/protections`) recorded from a
//! closed-loop run in which a simulated RX60 executes the commands of `AdmittanceCore` +
//! `ProtectionFilter` (the library the node runs). The bag is played by `rpq_bag replay` into
//! the node in forbidden-region mode (sim time from the bag, `/clock` at 1 kHz), its commands
//! and status are recorded, and:
//!
//! 1. every distinct non-zero recorded command is the command of `AdmittanceCore` +
//!    `ProtectionFilter` called directly on the same messages (1e-9 rad/s), in order;
//! 2. the comparison discriminates: a replica with another tool radius (3 mm instead of 1.5) or
//!    without the protection swap gives different commands in the contact phases;
//! 3. zero penetrations on the replayed path: every tool position of the bag, and every position
//!    a recorded command leads to over the look-ahead, is clear of the protections in force
//!    (distance ≥ tool radius, allowed side);
//! 4. the phases do what they should (below).
//!
//! | phase (bag time) | operator force (base frame) | must show |
//! |---|---|---|
//! | 0-0.5 s | none | protection set A (`patient` dome + `shield_a` wall) arrives, zero command |
//! | 0.5-2 s | down 6 N, sideways ±3 N | contact with the dome, the tool slides along it |
//! | 2-3 s | +x 5 N, down 2 N | slides along the dome into the corner with `shield_a`, held at it |
//! | 3-3.5 s | back and up | clear |
//! | 3.5-4.5 s | none; set B (`patient` + `shield_b` 8 mm further) published at 3.8 s | swap |
//! | 4.5-6 s | +x 5 N, down 1 N | passes where `shield_a` was, held at `shield_b` |
//! | 6-6.5 s | none | zero |
//!
//! The swap happens while the operator's hands are off, so the command does not depend on the
//! instant the node takes the new set (the blend of a swap during motion is covered by
//! steady_hand's unit tests of `ProtectionFilter`).
//!
//! Regenerate the bag (deterministic; the test `bag_is_the_generators_output` checks it is):
//! `cargo test --release -p rpq_tests --test surgery_replay -- --ignored write_surgery_bag`.
//!
//! The replay opens DDS sockets: runs only inside the private network namespace.

use std::path::{Path, PathBuf};
use std::time::Duration;

use nalgebra::{DVector, Point3, Vector3, Vector6};
use rpq_bag::BagReader;
use rpq_kinematics::{Robot, TriMesh};
use rpq_ros::cdr;
use rpq_ros::interfaces::rpq_interfaces::msg::{AdmittanceStatus, ProtectionMeshes};
use rpq_ros::msg::geometry_msgs::{Wrench, WrenchStamped};
use rpq_ros::msg::sensor_msgs::JointState;
use rpq_ros::msg::std_msgs::Header;
use rpq_ros::msg::RosMessage;
use rpq_surgery::{DistanceProbe, Placement, ProtectionKind, ProtectionSet};
use rpq_tests::controller_bag::{controller_params, input_bag, log_ns, max_abs_diff, stamp, T0};
use rpq_tests::{
    bin, commands_on_bag_time, controller_replay, distinct_nonzero, repo_root, run_with_timeout,
    rx60_robot, rx60_urdf, status_bag_time, NodeProcess, TestEnv,
};
use steady_hand::admittance::{AdmittanceCore, JointInput, Output};
use steady_hand::convert::{wrench_input, JointOrder};
use steady_hand::protection_filter::{
    config_from_params, protections_from_msg, ProtectionConfig, ProtectionFilter,
};
use steady_hand::settings::AdmittanceControllerParams;
use virtual_protection::server::mesh_msg;

const START: [f64; 6] = [0.0, 0.5, 1.5, 0.0, 1.14, 0.0];
const END: f64 = 6.5;
const SWAP_AT: f64 = 3.8;
const PROTECTIONS: &str = "/virtual_protection/protections";
/// Offsets from the tool's start point [m]: the dome's top below it, the two walls ahead in x.
const DOME_BELOW: f64 = 0.004;
const WALL_A: f64 = 0.006;
const WALL_B: f64 = 0.014;

fn bag_dir() -> PathBuf {
    repo_root().join("tests/bags/surgery_protections")
}

/// Settings of the controller (and of the replica), on top of config/admittance_controller.yaml:
/// forbidden-region mode on the protections topic; the wrench filter passes samples through and
/// the acceleration limits are out of reach, so each command depends on its own wrench, joint
/// state and protections only (a dropped best-effort sample cannot desynchronise the replica);
/// a joint-state timeout above the replay's jitter under load.
fn replay_yaml(tool_radius: f64) -> String {
    format!(
        "admittance_controller:\n  ros__parameters:\n    robot_description_file: {}\n    \
         safety:\n      joint_state_timeout: 0.2\n    ft:\n      filter_cutoff: 100000.0\n    \
         limits:\n      max_linear_acceleration: 1.0e9\n      max_angular_acceleration: 1.0e9\n    \
         forbidden_region:\n      enabled: true\n      topic: {PROTECTIONS}\n      \
         tool_radius: {tool_radius:?}\n",
        rx60_urdf().display()
    )
}

fn params(tool_radius: f64) -> AdmittanceControllerParams {
    controller_params(&replay_yaml(tool_radius))
}

fn protection_config(tool_radius: f64) -> ProtectionConfig {
    config_from_params(&params(tool_radius).forbidden_region)
        .unwrap()
        .unwrap()
}

fn bag_t(ns: u64) -> f64 {
    (ns - T0) as f64 * 1e-9
}

fn tool_start(robot: &Robot) -> Point3<f64> {
    Point3::from(robot.link_pose("tool0", &START).unwrap().translation.vector)
}

/// A gently bumped dome under the start point (normals up: the tool is allowed above it).
fn dome(c: &Point3<f64>) -> TriMesh {
    let (n, half) = (14usize, 0.04);
    let mut vertices = Vec::new();
    for i in 0..=n {
        for j in 0..=n {
            let x = -half + 2.0 * half * i as f64 / n as f64;
            let y = -half + 2.0 * half * j as f64 / n as f64;
            let z =
                -DOME_BELOW - 2.0 * (x * x + y * y) + 0.0012 * (70.0 * x).sin() * (55.0 * y).cos();
            vertices.push(Point3::new(c.x + x, c.y + y, c.z + z));
        }
    }
    let id = |i: usize, j: usize| (i * (n + 1) + j) as u32;
    let mut triangles = Vec::new();
    for i in 0..n {
        for j in 0..n {
            triangles.push([id(i, j), id(i + 1, j), id(i + 1, j + 1)]);
            triangles.push([id(i, j), id(i + 1, j + 1), id(i, j + 1)]);
        }
    }
    TriMesh::new(vertices, triangles).unwrap()
}

/// A wall across x at `c.x + dx`, normal −x (the tool is allowed on the near side).
fn wall(c: &Point3<f64>, dx: f64) -> TriMesh {
    let n = 4usize;
    let mut vertices = Vec::new();
    for i in 0..=n {
        for j in 0..=n {
            let y = -0.04 + 0.08 * i as f64 / n as f64;
            let z = -0.02 + 0.05 * j as f64 / n as f64;
            vertices.push(Point3::new(c.x + dx, c.y + y, c.z + z));
        }
    }
    let id = |i: usize, j: usize| (i * (n + 1) + j) as u32;
    let mut triangles = Vec::new();
    for i in 0..n {
        for j in 0..n {
            triangles.push([id(i, j), id(i, j + 1), id(i + 1, j + 1)]);
            triangles.push([id(i, j), id(i + 1, j + 1), id(i + 1, j)]);
        }
    }
    TriMesh::new(vertices, triangles).unwrap()
}

/// Protection set A (`second` false) or B, as published.
fn protections_msg(robot: &Robot, second: bool, t: f64) -> ProtectionMeshes {
    let c = tool_start(robot);
    let (name, dx) = if second {
        ("shield_b", WALL_B)
    } else {
        ("shield_a", WALL_A)
    };
    ProtectionMeshes {
        header: Header {
            stamp: stamp(t),
            frame_id: robot.root_link().name.clone(),
        },
        meshes: vec![
            mesh_msg("patient", ProtectionKind::Patient, &dome(&c)),
            mesh_msg(name, ProtectionKind::Shield, &wall(&c, dx)),
        ],
    }
}

/// The operator's force [N] at the tool, base frame, at bag time `t`.
fn force_at(t: f64) -> Vector3<f64> {
    let tau = std::f64::consts::TAU;
    if (0.5..2.0).contains(&t) {
        Vector3::new(0.0, 3.0 * (tau * 0.6 * (t - 0.5)).sin(), -6.0)
    } else if (2.0..3.0).contains(&t) {
        Vector3::new(5.0, 0.8 * (tau * 1.1 * t).sin(), -2.0)
    } else if (3.0..3.5).contains(&t) {
        Vector3::new(-5.0, 0.0, 5.0)
    } else if (4.5..6.0).contains(&t) {
        Vector3::new(5.0, 1.5 * (tau * 0.9 * t).cos(), -1.0)
    } else {
        Vector3::zeros()
    }
}

/// The replica: `AdmittanceCore` with `ProtectionFilter` plugged in as the node does.
struct Replica {
    core: AdmittanceCore,
    order: JointOrder,
    root: String,
    inbox: steady_hand::protection_filter::ProtectionInbox,
    q: Vec<f64>,
    qd: Vec<f64>,
}

impl Replica {
    fn new(tool_radius: f64) -> Replica {
        let robot = rx60_robot();
        let order = JointOrder::new(robot.joint_names().map(str::to_string).collect());
        let root = robot.root_link().name.clone();
        let s = params(tool_radius);
        let mut core = AdmittanceCore::new(robot, s.core_config().unwrap()).unwrap();
        let filter = ProtectionFilter::new(protection_config(tool_radius), None).unwrap();
        let inbox = filter.inbox();
        // the node plugs it in at start-up, before /clock runs (sim time 0)
        core.set_motion_filter(Some(Box::new(filter)), 0.0);
        Replica {
            core,
            order,
            root,
            inbox,
            q: vec![0.0; 6],
            qd: vec![0.0; 6],
        }
    }

    fn protections(&mut self, msg: &ProtectionMeshes) {
        self.inbox
            .submit(protections_from_msg(msg, &self.root).unwrap());
    }

    fn joint_state(&mut self, js: &JointState) {
        self.order.positions(js, &mut self.q).unwrap();
        self.order.velocities(js, &mut self.qd).unwrap();
        let st = &js.header.stamp;
        let time = f64::from(st.sec) + f64::from(st.nanosec) * 1e-9;
        self.core
            .on_joint_state(&JointInput {
                positions: &self.q,
                velocities: Some(&self.qd),
                stamp: Some(time),
                received: time,
            })
            .unwrap();
    }

    /// The command for a wrench received at `now` [s, sim time]: joint velocities, or `None`
    /// for a stop / nothing.
    fn wrench(&mut self, w: &WrenchStamped, now: f64) -> Option<Vec<f64>> {
        match self.core.on_wrench(&wrench_input(w, now), now).0 {
            Output::Motion {
                joint_velocities, ..
            } => Some(joint_velocities.to_vec()),
            _ => None,
        }
    }
}

fn wrench_msg(t: f64, root: &str) -> WrenchStamped {
    let f = force_at(t);
    WrenchStamped {
        header: Header {
            stamp: stamp(t),
            frame_id: root.into(),
        },
        wrench: Wrench::try_from(&Vector6::new(f.x, f.y, f.z, 0.0, 0.0, 0.0)).unwrap(),
    }
}

/// The bag's messages `(log time, topic, CDR)`: a closed-loop run of the replica driving a
/// simulated RX60 that follows each command until the next one (wrenches at 200 Hz, joint states
/// at 100 Hz 2.5 ms before every second wrench, the protections at 0 s and `SWAP_AT`).
fn generate() -> Vec<(u64, &'static str, Vec<u8>)> {
    let robot = rx60_robot();
    let names: Vec<String> = robot.joint_names().map(str::to_string).collect();
    let root = robot.root_link().name.clone();
    let mut replica = Replica::new(params(0.0015).forbidden_region.tool_radius);
    // events in time order: 0 protections, 1 joint state, 2 wrench
    let mut events: Vec<(u64, u8)> = vec![(log_ns(0.0), 0), (log_ns(SWAP_AT), 0)];
    let mut k = 0;
    while 0.0025 + 0.01 * (k as f64) < END {
        events.push((log_ns(0.0025 + 0.01 * k as f64), 1));
        k += 1;
    }
    let mut k = 0;
    while 0.005 * (k as f64) + 0.001 < END {
        events.push((log_ns(0.005 * k as f64 + 0.001), 2));
        k += 1;
    }
    events.sort();
    let mut q = DVector::from_column_slice(&START);
    let mut qd = DVector::zeros(6);
    let mut last = log_ns(0.0);
    let mut sets = 0;
    let mut out = Vec::new();
    for (at, what) in events {
        q += &qd * ((at - last) as f64 * 1e-9);
        last = at;
        let t = bag_t(at);
        match what {
            0 => {
                let msg = protections_msg(&robot, sets > 0, t);
                sets += 1;
                replica.protections(&msg);
                out.push((at, PROTECTIONS, cdr::to_vec(&msg).unwrap()));
            }
            1 => {
                let js = JointState {
                    header: Header {
                        stamp: stamp(t),
                        frame_id: String::new(),
                    },
                    name: names.clone(),
                    position: q.as_slice().to_vec(),
                    velocity: qd.as_slice().to_vec(),
                    effort: vec![],
                };
                replica.joint_state(&js);
                out.push((at, "/joint_states", cdr::to_vec(&js).unwrap()));
            }
            _ => {
                let w = wrench_msg(t, &root);
                qd = match replica.wrench(&w, T0 as f64 * 1e-9 + t) {
                    Some(v) => DVector::from_vec(v),
                    None => DVector::zeros(6),
                };
                out.push((at, "/wrench", cdr::to_vec(&w).unwrap()));
            }
        }
    }
    out
}

fn write_bag(dir: &Path) {
    let _ = std::fs::remove_dir_all(dir);
    let mut w = input_bag(
        dir,
        (
            PROTECTIONS,
            ProtectionMeshes::TYPE_NAME,
            &ProtectionMeshes::definition(),
        ),
    );
    for (t, topic, data) in generate() {
        w.write_to_topic(topic, t, t, &data).unwrap();
    }
    w.finish().unwrap();
}

/// Regenerates `tests/bags/surgery_protections/` (the bag is checked in).
#[test]
#[ignore]
fn write_surgery_bag() {
    write_bag(&bag_dir());
}

#[test]
fn bag_is_the_generators_output() {
    let bag = BagReader::open(bag_dir()).expect("tests/bags/surgery_protections opens");
    let fresh = generate();
    let msgs = bag.messages();
    assert_eq!(msgs.len(), fresh.len(), "regenerate the bag (module docs)");
    for (m, (t, topic, data)) in msgs.iter().zip(&fresh) {
        assert_eq!((m.log_time, m.topic.as_str()), (*t, *topic));
        assert!(
            m.data == *data,
            "{topic} at {}: differs from the generator's; regenerate the bag (module docs)",
            bag_t(*t)
        );
    }
}

/// How the node may have seen joint states and wrenches interleaved (two topics: DDS keeps the
/// order within a topic only).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Order {
    /// As in the bag.
    Bag,
    /// Each joint state after the wrench that follows it in the bag.
    Lag,
    /// Each joint state before the wrench that precedes it in the bag.
    Lead,
}

/// The replica's command for every wrench of `bag`: `(bag time of the wrench, joint velocities or
/// None)`, with joint states and wrenches interleaved as `order` says. `swap`: whether the
/// second protection set is handed in.
fn replica(bag: &BagReader, tool_radius: f64, order: Order, swap: bool) -> Commands {
    let mut r = Replica::new(tool_radius);
    let mut out = Vec::new();
    let mut sets = 0;
    let mut msgs: Vec<&rpq_bag::BagMessage> = bag.messages().iter().collect();
    for k in 1..msgs.len() {
        let (a, b) = (msgs[k - 1].topic.as_str(), msgs[k].topic.as_str());
        let swap_pair = match order {
            Order::Bag => false,
            Order::Lag => a == "/joint_states" && b == "/wrench",
            Order::Lead => a == "/wrench" && b == "/joint_states",
        };
        if swap_pair {
            msgs.swap(k - 1, k);
        }
    }
    for m in msgs {
        match m.topic.as_str() {
            PROTECTIONS => {
                if sets == 0 || swap {
                    r.protections(&cdr::from_bytes(&m.data).unwrap());
                }
                sets += 1;
            }
            "/joint_states" => {
                r.joint_state(&cdr::from_bytes(&m.data).unwrap());
            }
            "/wrench" => {
                let w: WrenchStamped = cdr::from_bytes(&m.data).unwrap();
                let now = m.log_time as f64 * 1e-9;
                out.push((bag_t(m.log_time), r.wrench(&w, now)));
            }
            _ => {}
        }
    }
    out
}

/// A replica's answer to one wrench: its bag time and the joint velocities (`None`: no motion).
type Command = (f64, Option<Vec<f64>>);
type Commands = Vec<Command>;

fn refs(v: &[Commands]) -> Vec<&[Command]> {
    v.iter().map(|x| x.as_slice()).collect()
}

/// Which of `commands` (bag time, joint velocities) are some replica's for a wrench, in order:
/// the unmatched ones.
fn unmatched<'a>(
    commands: &[&'a (f64, Vec<f64>)],
    replicas: &[&[Command]],
) -> Vec<&'a (f64, Vec<f64>)> {
    let n = replicas[0].len();
    let mut k = 0;
    let mut missed = Vec::new();
    for c in commands {
        let hit = (k..n).find(|&i| {
            replicas.iter().any(|r| {
                r[i].1
                    .as_ref()
                    .is_some_and(|o| max_abs_diff(o, &c.1) < 1e-9)
            })
        });
        match hit {
            Some(i) => k = i,
            None => missed.push(*c),
        }
    }
    missed
}

/// The protections in force at bag time `t` (the swap happens while nothing moves).
fn set_at(robot: &Robot, t: f64) -> ProtectionSet {
    let root = robot.root_link().name.clone();
    protections_from_msg(&protections_msg(robot, t >= SWAP_AT, 0.0), &root).unwrap()
}

/// Smallest distance of `p` to the set, and whether a sphere of `radius` there is clear of it
/// (not overlapping, allowed side).
fn clearance(
    set: &ProtectionSet,
    probe: &mut DistanceProbe,
    p: &Point3<f64>,
    radius: f64,
) -> (f64, bool) {
    let d = set
        .items()
        .iter()
        .map(|x| probe.point_distance(x, p))
        .fold(f64::INFINITY, f64::min);
    (
        d,
        d >= radius && set.placement(p, radius, 0.05) == Placement::Clear,
    )
}

#[test]
fn replayed_protections_give_the_libraries_commands() {
    let env = TestEnv::new();
    let work = env.scratch(env!("CARGO_TARGET_TMPDIR"), "surgery_replay");
    let radius = params(0.0015).forbidden_region.tool_radius;
    let params_file = work.join("replay.yaml");
    std::fs::write(&params_file, replay_yaml(radius)).unwrap();
    let mut cmd = env.command(bin("admittance_controller"));
    cmd.arg("--ros-args")
        .arg("--params-file")
        .arg(repo_root().join("config/admittance_controller.yaml"))
        .arg("--params-file")
        .arg(&params_file)
        .args(["-p", "use_sim_time:=true"]);
    let mut ctl = NodeProcess::spawn("admittance_controller", cmd);
    ctl.wait_for_output("admittance_controller ready", Duration::from_secs(20));
    let output = work.join("recorded");
    let replay = controller_replay(&env, &bag_dir(), &output);
    let out = run_with_timeout("rpq_bag replay", replay, Duration::from_secs(60));
    ctl.stop(Duration::from_secs(3));
    let log = ctl.output().join("\n");
    assert!(
        out.success,
        "rpq_bag replay failed:\n{}\n{}\n{log}",
        out.stdout, out.stderr
    );
    assert!(
        log.contains("protection set 2 in force"),
        "the swap was not taken:\n{log}"
    );

    let bag = BagReader::open(bag_dir()).unwrap();
    let orders = [Order::Bag, Order::Lag, Order::Lead];
    let replicas = |radius: f64, swap: bool| -> Vec<Commands> {
        orders
            .iter()
            .map(|&o| replica(&bag, radius, o, swap))
            .collect()
    };
    let same = replicas(radius, true);

    let recorded = BagReader::open(&output).expect("recorded bag opens");
    let statuses: Vec<(u64, AdmittanceStatus)> = recorded
        .messages()
        .iter()
        .filter(|m| m.topic == "/admittance_controller/status")
        .map(|m| (m.log_time, cdr::from_bytes(&m.data).unwrap()))
        .collect();
    let stamp_t = |s: &AdmittanceStatus| status_bag_time(s, T0);
    assert!(statuses.len() > 20, "{} statuses:\n{log}", statuses.len());
    let commands = commands_on_bag_time(&recorded, &statuses, T0);
    assert!(commands.len() > 1000, "{} commands:\n{log}", commands.len());
    let distinct = distinct_nonzero(&commands);
    assert!(distinct.len() > 500, "{} distinct commands", distinct.len());

    // 1. every distinct non-zero command is the library's, in order
    let missed = unmatched(&distinct, &refs(&same));
    assert!(
        missed.len() * 100 <= distinct.len(),
        "{} of {} recorded commands are not AdmittanceCore + ProtectionFilter's: {:?}",
        missed.len(),
        distinct.len(),
        &missed[..missed.len().min(3)]
    );

    // 2. the comparison discriminates: another tool radius, or no swap, gives other commands
    let in_contact = |from: f64, to: f64| -> Vec<&(f64, Vec<f64>)> {
        distinct
            .iter()
            .copied()
            .filter(|c| (from..to).contains(&c.0))
            .collect()
    };
    let wide = replicas(2.0 * radius, true);
    let contact_cmds = in_contact(0.5, 3.0);
    let other = unmatched(&contact_cmds, &refs(&wide));
    assert!(
        other.len() * 4 >= contact_cmds.len(),
        "a 3 mm tool gives the same commands as the 1.5 mm one: {} of {} differ",
        other.len(),
        contact_cmds.len()
    );
    let no_swap = replicas(radius, false);
    let after = in_contact(4.5, 6.0);
    let other_swap = unmatched(&after, &refs(&no_swap));
    assert!(
        other_swap.len() * 4 >= after.len(),
        "without the swap the commands are the same: {} of {} differ",
        other_swap.len(),
        after.len()
    );

    // 3. zero penetrations on the replayed path: the bag's tool positions, and where each
    //    recorded command leads over the look-ahead from the joint state it was computed at
    let robot = rx60_robot();
    let order = JointOrder::new(robot.joint_names().map(str::to_string).collect());
    let lookahead = protection_config(radius).lookahead;
    let sets = [set_at(&robot, 0.0), set_at(&robot, SWAP_AT)];
    let mut probe = DistanceProbe::new();
    let mut states: Vec<(f64, Vec<f64>)> = Vec::new();
    let mut min_dist = f64::INFINITY;
    let mut path = Vec::new();
    for m in bag.messages().iter().filter(|m| m.topic == "/joint_states") {
        let js: JointState = cdr::from_bytes(&m.data).unwrap();
        let mut q = vec![0.0; 6];
        order.positions(&js, &mut q).unwrap();
        let t = bag_t(m.log_time);
        let p = Point3::from(robot.link_pose("tool0", &q).unwrap().translation.vector);
        let (d, clear) = clearance(&sets[usize::from(t >= SWAP_AT)], &mut probe, &p, radius);
        assert!(clear, "the bag's tool at {t:.3} s penetrates: distance {d}");
        min_dist = min_dist.min(d);
        path.push((t, p));
        states.push((t, q));
    }
    let mut predicted = 0;
    for (t, c) in &distinct {
        // the joint state the command was computed from: the newest before it
        let k = states.partition_point(|(ts, _)| *ts <= *t - 0.001).max(1) - 1;
        let q = &states[k].1;
        let j = robot.jacobian("tool0", q).unwrap();
        let v = &j * DVector::from_column_slice(c);
        let p = Point3::from(robot.link_pose("tool0", q).unwrap().translation.vector);
        let to = p + Vector3::new(v[0], v[1], v[2]) * lookahead;
        let (d, clear) = clearance(&sets[usize::from(*t >= SWAP_AT)], &mut probe, &to, radius);
        assert!(
            clear,
            "the command at {t:.3} s leads into a protection: distance {d}"
        );
        predicted += 1;
    }

    // 4. phases
    let c = tool_start(&robot);
    let during = |from: f64, to: f64| path.iter().filter(move |(t, _)| (from..to).contains(t));
    // (statuses come at 10 Hz of wall clock and on changes of state)
    let contact = |from: f64, to: f64| {
        let within: Vec<bool> = statuses
            .iter()
            .filter(|(_, s)| (from..to).contains(&stamp_t(s)))
            .map(|(_, s)| s.filter_contact)
            .collect();
        let n = within.iter().filter(|c| **c).count();
        eprintln!("contact {from}-{to} s: {n} of {} statuses", within.len());
        n * 3 >= within.len() * 2 && n >= 3
    };
    // on the dome: pressed down, it slides sideways
    let ys: Vec<f64> = during(1.0, 2.0).map(|(_, p)| p.y - c.y).collect();
    let spread = ys.iter().fold(f64::NEG_INFINITY, |m, y| m.max(*y))
        - ys.iter().fold(f64::INFINITY, |m, y| m.min(*y));
    assert!(contact(1.0, 2.0), "no contact with the dome");
    eprintln!("y spread on the dome {spread}");
    assert!(
        spread > 0.005,
        "no sliding along the dome: y spread {spread}"
    );
    // held at shield_a, then past it after the swap, held at shield_b
    let max_x = |from, to| {
        during(from, to)
            .map(|(_, p)| p.x - c.x)
            .fold(f64::NEG_INFINITY, f64::max)
    };
    let (xa, xb) = (max_x(2.0, 3.0), max_x(4.5, 6.0));
    assert!(contact(2.5, 3.0), "no contact with shield_a");
    assert!(
        xa < WALL_A - radius && xa > WALL_A - radius - 0.001,
        "x at shield_a: {xa}"
    );
    assert!(contact(5.5, 6.0), "no contact with shield_b");
    assert!(
        xb < WALL_B - radius && xb > WALL_B - radius - 0.001,
        "x at shield_b: {xb}"
    );
    for (from, to, what) in [
        (0.0, 0.45, "before any push"),
        (3.6, 4.45, "swap"),
        (6.1, 6.45, "end"),
    ] {
        let n = in_contact(from, to).len();
        assert_eq!(n, 0, "{what}: {n} non-zero commands");
    }
    eprintln!(
        "surgery replay: {} commands, {} distinct non-zero, {} not the library's; a 3 mm tool \
         changes {} of {} contact commands, no swap {} of {}; {} bag positions + {predicted} \
         command look-aheads clear, min distance {:.3} mm (tool radius {} mm); x at shield_a \
         {:.3} mm, at shield_b {:.3} mm",
        commands.len(),
        distinct.len(),
        missed.len(),
        other.len(),
        contact_cmds.len(),
        other_swap.len(),
        after.len(),
        path.len(),
        min_dist * 1e3,
        radius * 1e3,
        xa * 1e3,
        xb * 1e3
    );
}
