//! Unit tests of [`AdmittanceCore`] without DDS.

use super::*;
use crate::convert::{command_message, CommandMessage, OutputKind};
use crate::motion_filter::FilterOutcome;
use crate::wrench::gravity_wrench;
use nalgebra::{DVector, Translation3, UnitQuaternion};
use proptest::prelude::*;
use rpq_ros::msg::builtin_interfaces::Time;
use rpq_virtual_fixtures::{Limits, Shaping};

/// Tool about (0.42, 0, 0.40) m pointing down, away from limits and singularities.
const START: [f64; 6] = [0.0, 0.5, 1.5, 0.0, 1.14, 0.0];
const DT: f64 = 0.002;

fn robot() -> Robot {
    Robot::from_urdf_str(include_str!("../../../../urdf/rx60b.urdf")).unwrap()
}

fn config() -> CoreConfig {
    CoreConfig {
        control: ControllerConfig {
            compliance: Compliance {
                c: 0.01,
                c_tau: 0.0,
            },
            mode: Mode::Free,
            shaping: Shaping {
                force_deadband: 0.2,
                torque_deadband: 0.02,
                force_scale: 1.0,
                torque_scale: 10.0,
            },
            limits: Limits {
                linear_velocity: 0.1,
                angular_velocity: 0.5,
                linear_acceleration: 1.0,
                angular_acceleration: 5.0,
            },
            rank_tolerance: Default::default(),
        },
        k_d: 0.08,
        ft: FtConfig::default(),
        mapping: MappingConfig::default(),
        safety: SafetyConfig {
            wrench_timeout: 0.05,
            joint_state_timeout: 0.03,
            fault_hold: 0.1,
            rearm_hold: 0.0,
        },
        clock_tolerance: 0.01,
        fixture_timeout: 0.5,
        fixture_required: false,
        ramp_time: 0.5,
        filter_blend: 0.2,
        tare_max_linear_speed: 0.005,
        tare_max_angular_speed: 0.05,
        sensor_frame: "tool0".into(),
        tool_link: "tool0".into(),
        period: DT,
    }
}

/// A core with a kinematic robot: joint states are the integrated commands.
struct Rig {
    core: AdmittanceCore,
    q: Vec<f64>,
    qd: Vec<f64>,
    t: f64,
}

#[derive(Debug, Clone, PartialEq)]
enum Out {
    Nothing,
    Stop,
    Motion(Vector6<f64>, Vec<f64>),
}

fn own(o: Output<'_>) -> Out {
    match o {
        Output::Nothing => Out::Nothing,
        Output::Stop => Out::Stop,
        Output::Motion {
            twist,
            joint_velocities,
        } => Out::Motion(*twist, joint_velocities.to_vec()),
    }
}

impl Rig {
    fn new(cfg: CoreConfig) -> Self {
        Self {
            core: AdmittanceCore::new(robot(), cfg).unwrap(),
            q: START.to_vec(),
            qd: vec![0.0; 6],
            t: 1000.0,
        }
    }

    fn joint_state(&mut self) {
        let js = JointInput {
            positions: &self.q,
            velocities: Some(&self.qd),
            stamp: Some(self.t),
            received: self.t,
        };
        self.core.on_joint_state(&js).unwrap();
    }

    fn wrench_in(&mut self, frame: &str, w: Vector6<f64>) -> Out {
        let input = WrenchInput {
            frame_id: frame,
            wrench: w,
            stamp: Some(self.t),
            received: self.t,
        };
        own(self.core.on_wrench(&input, self.t).0)
    }

    /// A wrench about the tool point in base axes, sent as the tool0 sensor reads it.
    fn wrench(&mut self, w: Vector6<f64>) -> Out {
        let w = self.in_tool(&w);
        self.wrench_in("tool0", w)
    }

    /// A wrench about the tool point in base axes, in tool0 axes.
    fn in_tool(&self, w: &Vector6<f64>) -> Vector6<f64> {
        let r = self
            .core
            .robot()
            .link_pose("tool0", &self.q)
            .unwrap()
            .rotation
            .inverse();
        let (f, t) = (r * lin(w), r * Vector3::new(w[3], w[4], w[5]));
        Vector6::new(f.x, f.y, f.z, t.x, t.y, t.z)
    }

    /// One period: joint state, wrench, integrate the command.
    fn period(&mut self, w: Vector6<f64>) -> Out {
        self.t += DT;
        self.joint_state();
        let out = self.wrench(w);
        self.integrate(&out);
        out
    }

    fn integrate(&mut self, out: &Out) {
        self.qd = match out {
            Out::Motion(_, qd) => qd.clone(),
            _ => vec![0.0; 6],
        };
        for (q, w) in self.q.iter_mut().zip(&self.qd) {
            *q += w * DT;
        }
    }

    fn tick(&mut self) -> Out {
        own(self.core.tick(self.t).0)
    }

    fn tool(&self) -> Vector3<f64> {
        self.core
            .robot()
            .link_pose("tool0", &self.q)
            .unwrap()
            .translation
            .vector
    }
}

fn push(x: f64, y: f64, z: f64) -> Vector6<f64> {
    Vector6::new(x, y, z, 0.0, 0.0, 0.0)
}

fn plane_fixture(mode: FixtureMode) -> Fixture {
    Fixture {
        guidance: Guidance::from_columns(&[Vector6::x(), Vector6::y()], Vector6::zeros()).unwrap(),
        mode,
        fixture_type: 3,
        frame_id: "base_link".into(),
    }
}

fn lin(v: &Vector6<f64>) -> Vector3<f64> {
    Vector3::new(v[0], v[1], v[2])
}

/// Item 3: nothing is published before the first valid wrench and joint state; the first
/// command starts from the measured motion (rest) and ramps within the acceleration limit.
#[test]
fn starts_without_a_jump_and_publishes_nothing_before_its_inputs() {
    let mut r = Rig::new(config());
    assert_eq!(r.tick(), Out::Nothing);
    assert_eq!(
        r.wrench(push(10.0, 0.0, 0.0)),
        Out::Nothing,
        "no joint state yet"
    );
    r.t += DT;
    assert_eq!(r.tick(), Out::Nothing);
    let mut last = Vector6::zeros();
    for k in 0..200 {
        let out = r.period(push(10.0, 0.0, 0.0));
        let Out::Motion(v, _) = out else {
            panic!("period {k}: {out:?}")
        };
        assert!(
            (lin(&v) - lin(&last)).norm() <= 1.0 * DT + 1e-12,
            "period {k}"
        );
        last = v;
    }
    // the law's output is reached along the push: c (|f| − deadband) = 0.01 (10 − 0.2)
    assert!(
        (last[0] - 0.098).abs() < 1e-9 && last[1].abs() < 1e-9,
        "{last:?}"
    );
    // a robot that is already moving when the controller starts: it continues from there
    let mut moving = Rig::new(config());
    moving.qd = vec![0.2, 0.0, 0.0, 0.0, 0.0, 0.0];
    moving.joint_state();
    let measured = {
        let j = moving.core.robot().jacobian("tool0", &START).unwrap();
        let v = j * DVector::from_column_slice(&moving.qd);
        Vector6::from_column_slice(v.as_slice())
    };
    let Out::Motion(first, _) = moving.wrench(push(0.0, 0.0, 0.0)) else {
        panic!()
    };
    assert!((lin(&first) - lin(&measured)).norm() <= 1.0 * DT + 1e-12);
    assert!(
        lin(&measured).norm() > 0.05,
        "the measured motion is not small"
    );
}

/// Items 3 and 5: every stop is published every period while stopped, for both output kinds,
/// and a failed publish is counted.
#[test]
fn stops_are_repeated_every_period_for_both_output_kinds() {
    let mut r = Rig::new(config());
    for _ in 0..50 {
        r.period(push(5.0, 0.0, 0.0));
    }
    // the wrench stream ends; the watchdog stops within one period after the timeout
    let last_wrench = r.t;
    let mut stops = 0;
    for _ in 0..100 {
        r.t += DT;
        r.joint_state();
        let out = r.tick();
        if r.t - last_wrench > 0.05 + 1e-9 {
            assert_eq!(
                out,
                Out::Stop,
                "at {} s after the last wrench",
                r.t - last_wrench
            );
            stops += 1;
            for kind in [OutputKind::JointVelocity, OutputKind::Twist] {
                let msg = command_message(
                    r.core.tick(r.t).0,
                    kind,
                    &[0, 1, 2, 3, 4, 5],
                    Time::default(),
                    "base_link",
                );
                match msg {
                    Some(CommandMessage::JointVelocity(m)) => {
                        assert_eq!(kind, OutputKind::JointVelocity);
                        assert_eq!(m.data, vec![0.0; 6]);
                    }
                    Some(CommandMessage::Twist(m)) => {
                        assert_eq!(kind, OutputKind::Twist);
                        assert_eq!((m.twist.linear.x, m.twist.angular.z), (0.0, 0.0));
                        assert_eq!(m.header.frame_id, "base_link");
                    }
                    None => panic!("a stop must be published"),
                }
            }
        } else {
            assert!(matches!(out, Out::Motion(..)), "{out:?}");
        }
    }
    assert!(stops > 70);
    let status = r.core.status();
    assert_eq!(
        status.reason.as_ref().map(|r| r.kind()),
        Some("stale_wrench")
    );
    assert!(status.rearm_required && status.stops == 1);
    r.core.record_publish(true);
    r.core.record_publish(false);
    r.core.record_publish(false);
    assert_eq!(r.core.status().publish_failures, 2);
}

/// Issue 12: after a stale-input stop the controller resumes only hands off or on ~/enable.
#[test]
fn a_stale_input_stop_resumes_only_hands_off_or_on_enable() {
    let mut r = Rig::new(config());
    for _ in 0..20 {
        r.period(push(5.0, 0.0, 0.0));
    }
    // the driver dies: no joint state for 0.1 s while the user keeps pushing
    let mut moving_commands = 0;
    for _ in 0..50 {
        r.t += DT;
        if let Out::Motion(..) = r.wrench(push(5.0, 0.0, 0.0)) {
            moving_commands += 1;
        }
    }
    // 0.03 s of joint-state timeout at 2 ms: at most 15 more commands from a stale state
    assert!(moving_commands <= 15, "{moving_commands}");
    // the driver is back, the user still pushes: no motion, however long
    for _ in 0..200 {
        let out = r.period(push(5.0, 0.0, 0.0));
        assert_eq!(out, Out::Stop);
    }
    assert!(r.core.status().rearm_required);
    // hands off re-arms; pushing again moves
    assert_eq!(
        r.period(push(0.1, 0.0, 0.0)),
        Out::Motion(Vector6::zeros(), vec![0.0; 6])
    );
    assert!(!r.core.status().rearm_required);
    assert!(matches!(r.period(push(5.0, 0.0, 0.0)), Out::Motion(v, _) if v[0] > 0.0));
    // second stop, re-armed by ~/enable
    for _ in 0..40 {
        r.t += DT;
        r.joint_state();
        r.tick();
    }
    assert!(r.core.status().rearm_required);
    assert!(
        r.core.enable(r.t).is_err(),
        "refused while the wrench is stale"
    );
    r.period(push(5.0, 0.0, 0.0));
    assert_eq!(r.core.enable(r.t), Ok("re-armed"));
    assert!(matches!(r.period(push(5.0, 0.0, 0.0)), Out::Motion(v, _) if v[0] > 0.0));
}

/// Item 5: a stalled-then-flushed queue of wrenches (old stamps, read at once) never moves
/// the robot; timed by receive times (the old behaviour) it would.
#[test]
fn a_burst_of_stale_wrenches_does_not_move_the_robot() {
    for use_stamps in [true, false] {
        let mut r = Rig::new(config());
        r.period(push(0.0, 0.0, 0.0));
        // stall of 0.3 s: 150 wrenches were queued, all read now
        let stall = 0.3;
        r.t += stall;
        r.joint_state();
        let mut moved = 0;
        for k in 0..150 {
            let made = r.t - stall + k as f64 * DT;
            let input = WrenchInput {
                frame_id: "",
                wrench: push(5.0, 0.0, 0.0),
                stamp: use_stamps.then_some(made),
                received: r.t,
            };
            if let (Output::Motion { twist, .. }, _) = r.core.on_wrench(&input, r.t) {
                if twist.norm() > 0.0 {
                    moved += 1;
                }
            }
        }
        if use_stamps {
            assert_eq!(
                moved, 0,
                "stamped wrenches older than the timeout moved the robot"
            );
        } else {
            assert!(moved > 0, "without stamps the burst looks fresh");
        }
    }
}

/// Item 5: old samples read after a fresh one (the rest of a flushed queue, or reordered) are
/// ignored: they never reach the law.
#[test]
fn samples_older_than_the_newest_are_ignored() {
    let mut r = Rig::new(config());
    for _ in 0..20 {
        r.period(push(0.0, 0.0, 0.0));
    }
    r.t += DT;
    r.joint_state();
    // a fresh hands-off sample, then older pushes made up to 40 ms before it
    assert_eq!(
        r.wrench(push(0.0, 0.0, 0.0)),
        Out::Motion(Vector6::zeros(), vec![0.0; 6])
    );
    let pushed = r.in_tool(&push(8.0, 0.0, 0.0));
    for k in 1..20 {
        let input = WrenchInput {
            frame_id: "tool0",
            wrench: pushed,
            stamp: Some(r.t - 0.002 * k as f64),
            received: r.t,
        };
        let out = own(r.core.on_wrench(&input, r.t).0);
        assert_eq!(
            out,
            Out::Motion(Vector6::zeros(), vec![0.0; 6]),
            "old sample {k} used"
        );
    }
}

/// Item 2: a wrench given in a sensor frame mounted on /tf_static gives the same command as
/// the same physical wrench given in the tool frame; switching frames mid-stream is seamless.
#[test]
fn the_wrench_frame_is_resolved_through_tf_static_with_the_lever_arm() {
    let mount = Isometry3::from_parts(
        Translation3::new(0.01, -0.02, 0.05),
        UnitQuaternion::from_euler_angles(0.3, -0.2, 1.2),
    );
    let mut a = Rig::new(config());
    let mut b = Rig::new(config());
    b.core.on_transform("tool0", "ft_sensor", mount, true);
    let w_tool = Vector6::new(3.0, -2.0, 1.0, 0.1, 0.05, -0.2);
    // the same wrench about the sensor's origin in its axes
    let w_sensor = crate::wrench::reexpress(&w_tool, &Isometry3::identity(), &mount);
    for k in 0..100 {
        a.t += DT;
        b.t += DT;
        a.joint_state();
        b.joint_state();
        let oa = a.wrench_in("tool0", w_tool);
        // b switches frames halfway
        let ob = if k < 50 {
            b.wrench_in("ft_sensor", w_sensor)
        } else {
            b.wrench_in("tool0", w_tool)
        };
        let (Out::Motion(va, qa), Out::Motion(vb, qb)) = (&oa, &ob) else {
            panic!("{oa:?} {ob:?}")
        };
        assert!((va - vb).norm() < 1e-12, "{k}: {va:?} vs {vb:?}");
        assert!(qa.iter().zip(qb).all(|(x, y)| (x - y).abs() < 1e-10));
        a.integrate(&oa);
        b.integrate(&ob);
    }
    // an unknown frame stops the robot
    b.t += DT;
    b.joint_state();
    assert_eq!(b.wrench_in("camera", w_tool), Out::Stop);
    assert_eq!(b.core.status().reason.unwrap().kind(), "unknown_frame");
}

/// Item 2: gravity compensation removes the tool's weight in every orientation; without it the
/// weight moves the robot.
#[test]
fn gravity_compensation_cancels_the_tool_weight_in_every_orientation() {
    let mut cfg = config();
    cfg.ft.tool_mass = 1.5;
    cfg.ft.tool_com = Vector3::new(0.0, 0.01, 0.08);
    let ft = cfg.ft;
    for compensate in [true, false] {
        let mut c = cfg.clone();
        if !compensate {
            c.ft.tool_mass = 0.0;
        }
        let mut r = Rig::new(c);
        let mut max_speed: f64 = 0.0;
        for k in 0..300 {
            // the wrist turns: the sensor's orientation changes
            r.q[3] = 0.6 * (k as f64 * 0.02).sin();
            r.q[5] = 0.9 * (k as f64 * 0.015).cos();
            r.t += DT;
            r.joint_state();
            let pose = r.core.robot().link_pose("tool0", &r.q).unwrap();
            if let Out::Motion(v, _) = r.wrench_in("tool0", gravity_wrench(&ft, &pose)) {
                max_speed = max_speed.max(lin(&v).norm());
            }
        }
        if compensate {
            assert!(max_speed < 1e-12, "{max_speed}");
        } else {
            assert!(max_speed > 0.05, "{max_speed}");
        }
    }
}

/// Item 2: ~/zero_ft makes the current wrench the offset; refused while the robot moves.
#[test]
fn tare_is_refused_while_moving_and_removes_the_offset_at_rest() {
    let mut r = Rig::new(config());
    // the sensor's own bias, constant in its frame (tool0)
    let bias = Vector6::new(1.2, -0.8, 0.5, 0.05, 0.0, -0.03);
    let with_bias = |r: &mut Rig, w: Vector6<f64>| {
        r.t += DT;
        r.joint_state();
        let w = r.in_tool(&w) + bias;
        let out = r.wrench_in("tool0", w);
        r.integrate(&out);
        out
    };
    for _ in 0..20 {
        with_bias(&mut r, push(5.0, 0.0, 0.0));
    }
    let e = r.core.zero_ft(r.t).unwrap_err();
    assert!(e.contains("moves"), "{e}");
    // the user lets go and the robot is held still (no velocity measured): the tare is accepted
    r.t += DT;
    r.qd = vec![0.0; 6];
    r.joint_state();
    r.wrench_in("tool0", bias);
    let msg = r.core.zero_ft(r.t).unwrap();
    assert!(msg.starts_with("offset"), "{msg}");
    assert!((r.core.ft_offset() - bias).norm() < 1e-9);
    // after it the bias alone brings the robot to rest, and a push on top moves it as if
    // there were no bias: v = c (f − deadband) = 0.01 (4 − 0.2) along y
    let mut last = Vector6::repeat(1.0);
    for _ in 0..300 {
        if let Out::Motion(v, _) = with_bias(&mut r, Vector6::zeros()) {
            last = v;
        }
    }
    assert!(last.norm() < 1e-12, "{last:?}");
    for _ in 0..300 {
        if let Out::Motion(v, _) = with_bias(&mut r, push(0.0, 4.0, 0.0)) {
            last = v;
        }
    }
    assert!(
        (last - Vector6::new(0.0, 0.038, 0.0, 0.0, 0.0, 0.0)).norm() < 1e-9,
        "{last:?}"
    );
    let mut fresh = Rig::new(config());
    assert!(fresh.core.zero_ft(fresh.t).is_err(), "no inputs yet");
}

/// Item 4: the user passes near the stretched-out singularity and back, with a hard plane
/// fixture: no stop, bounded joint speeds, the plane honoured, back where it started.
#[test]
fn the_user_passes_near_the_stretched_out_singularity_and_back() {
    let mut r = Rig::new(config());
    r.joint_state();
    let start = r.tool();
    let mut sigma_min = f64::INFINITY;
    let mut max_qd: f64 = 0.0;
    let mut max_reach: f64 = 0.0;
    let mut max_drift: f64 = 0.0;
    for k in 0..6000 {
        r.core
            .on_fixture(plane_fixture(FixtureMode::OpenLoop), Some(r.t), r.t);
        // 6 s outwards along x (radially), then back
        let f = if k < 3000 {
            push(8.0, 0.0, 0.0)
        } else {
            push(-8.0, 0.0, 0.0)
        };
        let out = r.period(f);
        let Out::Motion(v, qd) = &out else {
            panic!("period {k}: {out:?} ({:?})", r.core.status().reason)
        };
        let s = r.core.status();
        sigma_min = sigma_min.min(s.sigma_min);
        max_qd = max_qd.max(qd.iter().fold(0.0, |m: f64, w| m.max(w.abs())));
        assert!(
            v[2].abs() < 1e-12 && v.fixed_rows::<3>(3).norm() < 1e-12,
            "left the plane"
        );
        let p = r.tool();
        max_reach = max_reach.max((p.x * p.x + p.y * p.y).sqrt());
        max_drift = max_drift.max((p.z - start.z).abs());
    }
    // the command has nothing off the plane (checked above); joint velocities held over a
    // period (as a driver executes them) follow the plane only to first order: the open-loop
    // fixture drifts by a fraction of a millimetre over the pass (closed loop corrects it)
    eprintln!("singularity pass: sigma_min {sigma_min:.2e}, max |qd| {max_qd:.2} rad/s, reach {max_reach:.3} m, z drift {max_drift:.2e} m");
    assert!(max_drift < 5e-4, "z drifted {max_drift}");
    let cfg = MappingConfig::default();
    assert!(
        sigma_min < cfg.damping_threshold * 0.5,
        "not near the singularity: {sigma_min}"
    );
    assert!(max_qd < 5.0, "joint speed {max_qd}");
    assert!(max_reach > 0.55, "reach {max_reach}");
    // and back: the user pulled it out again, past the start
    assert!(r.tool().x < start.x, "{:?} vs {:?}", r.tool(), start);
}

/// A Cartesian motion filter sees the law's linear velocity and its output is what moves the
/// robot; the orientation is untouched; swapping it blends.
#[test]
fn the_motion_filter_hook_changes_the_linear_velocity_only() {
    struct NoX;
    impl ToolMotionFilter for NoX {
        fn filter(&mut self, _: &Point3<f64>, v: &Vector3<f64>, _: f64) -> FilterOutcome {
            FilterOutcome {
                contact: v.x != 0.0,
                ..FilterOutcome::pass(Vector3::new(0.0, v.y, v.z))
            }
        }
        fn name(&self) -> &str {
            "no_x"
        }
    }
    let mut r = Rig::new(config());
    let w = Vector6::new(5.0, 3.0, 0.0, 0.1, 0.0, 0.0);
    for _ in 0..100 {
        r.period(w);
    }
    r.core.set_motion_filter(Some(Box::new(NoX)), r.t);
    assert_eq!(r.core.motion_filter_name(), "no_x");
    let mut last: Option<Vector6<f64>> = None;
    for _ in 0..200 {
        let Out::Motion(v, _) = r.period(w) else {
            panic!()
        };
        if let Some(l) = last {
            assert!(
                (lin(&v) - lin(&l)).norm() < 0.2 * DT / 0.2 * 1.01 + 1e-9,
                "jump"
            );
        }
        last = Some(v);
    }
    let v = last.unwrap();
    assert!(v[0].abs() < 1e-12 && v[1] > 0.0 && v[3] > 0.0, "{v:?}");
    assert!(r.core.status().filter_contact);
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("RPQ_PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(48),
        ..ProptestConfig::default()
    })]
    /// Item 3: whatever run-time changes (gains, compliance, velocity limits, fixture and mode
    /// switches, motion-filter swaps) happen at whatever periods, the commanded twist never
    /// changes by more than the acceleration limit allows in one period.
    #[test]
    fn the_command_never_jumps_more_than_the_acceleration_limit_allows(
        events in proptest::collection::vec((0u8..6, 0.0f64..1.0, 0.0f64..1.0), 1..12),
        force in proptest::array::uniform6(-10.0f64..10.0),
        at in proptest::collection::vec(0usize..300, 12),
    ) {
        let cfg = config();
        let (a_lin, a_ang) = (cfg.control.limits.linear_acceleration, cfg.control.limits.angular_acceleration);
        let mut core = AdmittanceCore::new(robot(), cfg).unwrap();
        let q = START;
        let mut t = 100.0;
        let mut last: Option<Vector6<f64>> = None;
        let f = Vector6::from(force);
        // a filter swap blends over 0.2 s: nested blends add at most 2 |v| / 0.2 s per swap
        let swaps = events.iter().filter(|e| e.0 >= 4).count() as f64;
        let filter_slack = swaps * 2.0 * 0.21 * DT / 0.2;
        for k in 0..300 {
            t += DT;
            for (i, (kind, x, y)) in events.iter().enumerate() {
                if at[i] != k {
                    continue;
                }
                match kind {
                    0 => {
                        let g = Gains { c: 0.001 + 0.05 * x, c_tau: 2.0 * y, k_d: 0.9 * x,
                            force_scale: 2.0 * y, torque_scale: 20.0 * x,
                            max_linear_velocity: 0.01 + 0.2 * y, max_angular_velocity: 0.05 + x };
                        core.set_gains(g, t).unwrap();
                    }
                    1 => core.on_fixture(plane_fixture(FixtureMode::OpenLoop), Some(t), t),
                    2 => core.on_fixture(plane_fixture(FixtureMode::ClosedLoop), Some(t), t),
                    3 => {
                        let d = Vector6::new(*x - 0.5, *y - 0.5, 0.3, 0.0, 0.1, 0.0);
                        core.on_fixture(Fixture {
                            guidance: Guidance::from_columns(&[d], Vector6::new(0.0, 0.0, 0.5, 0.0, 0.0, 0.0)).unwrap(),
                            mode: FixtureMode::ClosedLoop, fixture_type: 2, frame_id: String::new(),
                        }, Some(t), t);
                    }
                    4 => {
                        struct Damp(f64);
                        impl ToolMotionFilter for Damp {
                            fn filter(&mut self, _: &Point3<f64>, v: &Vector3<f64>, _: f64) -> FilterOutcome {
                                FilterOutcome::pass(v * self.0)
                            }
                        }
                        core.set_motion_filter(Some(Box::new(Damp(*x))), t);
                    }
                    _ => core.set_motion_filter(None, t),
                }
            }
            core.on_joint_state(&JointInput { positions: &q, velocities: None, stamp: Some(t), received: t }).unwrap();
            let input = WrenchInput { frame_id: "", wrench: f, stamp: Some(t), received: t };
            let (out, _) = core.on_wrench(&input, t);
            let Output::Motion { twist, .. } = out else { panic!("{out:?}") };
            if let Some(l) = last {
                let d = twist - l;
                prop_assert!(d.fixed_rows::<3>(0).norm() <= a_lin * DT + filter_slack + 1e-9,
                    "period {}: linear jump {}", k, d.fixed_rows::<3>(0).norm());
                prop_assert!(d.fixed_rows::<3>(3).norm() <= a_ang * DT + 1e-9,
                    "period {}: angular jump {}", k, d.fixed_rows::<3>(3).norm());
            }
            last = Some(*twist);
        }
    }
}
