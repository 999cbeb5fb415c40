//! Behaviour tests of the simulated hardware against analytic answers.

use super::*;
use proptest::prelude::*;

const DEG: f64 = std::f64::consts::PI / 180.0;

/// RX60-like joints: the limits of issue 2, plausible velocity limits.
fn rx60() -> Vec<JointSpec> {
    let lim = [
        (-160.0, 160.0),
        (-127.5, 127.5),
        (-134.5, 134.5),
        (-270.0, 270.0),
        (-109.5, 120.5),
        (-270.0, 270.0),
    ];
    let vmax = [2.0, 2.0, 2.5, 3.0, 3.0, 4.0];
    lim.iter()
        .zip(vmax)
        .enumerate()
        .map(|(i, (&(lo, hi), v))| {
            JointSpec::revolute(format!("joint_{}", i + 1), lo * DEG, hi * DEG, v)
        })
        .collect()
}

fn names() -> Vec<String> {
    rx60().into_iter().map(|j| j.name).collect()
}

/// A robot whose clock starts at 0.
fn robot(config: SimConfig) -> SimHardware {
    let mut r = SimHardware::new(rx60(), config).unwrap();
    r.step(0.0);
    r
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

fn assert_slices_close(got: &[f64], want: &[f64], tol: f64, ctx: &str) {
    assert_eq!(got.len(), want.len(), "{ctx}");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(close(*g, *w, tol), "{ctx}: [{i}] got {g}, want {w}");
    }
}

fn point(positions: &[f64], t: f64) -> TrajectoryPoint {
    TrajectoryPoint {
        positions: positions.to_vec(),
        time_from_start: t,
        ..TrajectoryPoint::default()
    }
}

fn traj(points: Vec<TrajectoryPoint>) -> Trajectory {
    Trajectory {
        joint_names: names(),
        points,
        start_time: 0.0,
    }
}

// ---------------------------------------------------------------- construction

#[test]
fn construction_refuses_bad_robots() {
    assert!(matches!(
        SimHardware::new(vec![], SimConfig::default()),
        Err(SimError::InvalidJoint { .. })
    ));
    let dup = vec![
        JointSpec::revolute("a", -1.0, 1.0, 1.0),
        JointSpec::revolute("a", -1.0, 1.0, 1.0),
    ];
    let err = SimHardware::new(dup, SimConfig::default()).unwrap_err();
    assert!(err.to_string().contains("used by another joint"), "{err}");
    let bad_cfg = SimConfig {
        update_rate_hz: -5.0,
        ..SimConfig::default()
    };
    assert!(matches!(
        SimHardware::new(rx60(), bad_cfg),
        Err(SimError::InvalidConfig {
            parameter: "update_rate",
            ..
        })
    ));
}

#[test]
fn starts_idle_and_holding_at_initial_positions() {
    let init = vec![0.1, -0.2, 0.3, 0.0, 0.5, -0.6];
    let mut r = robot(SimConfig {
        initial_positions: init.clone(),
        ..SimConfig::default()
    });
    let s = r.step(1.0).clone();
    assert_eq!(s.positions, init);
    assert_eq!(s.velocities, vec![0.0; 6]);
    assert_eq!(s.names, names());
    assert_eq!(s.time, 1.0);
    assert_eq!(r.status().mode, Mode::Idle);
    assert_eq!(r.status().mode.as_str(), "idle");
    assert!(r.status().holding);
    assert_eq!(r.period(), 0.01);
}

// ---------------------------------------------------------------- velocity mode

#[test]
fn constant_velocity_integrates_to_v_times_t() {
    let mut r = robot(SimConfig::default());
    let v = [0.5, -0.3, 0.2, 1.0, -0.7, 2.5];
    r.command_velocity(&v, 0.0).unwrap();
    assert_eq!(r.status().mode, Mode::Velocity);
    assert!(!r.status().holding);
    for k in 1..=40 {
        let t = k as f64 * 0.01;
        let s = r.step(t);
        let want: Vec<f64> = v.iter().map(|vi| vi * t).collect();
        assert_slices_close(&s.positions, &want, 1e-12, &format!("t={t}"));
        assert_eq!(s.velocities, v.to_vec());
    }
    // Irregular step times integrate to the same answer.
    let mut r2 = robot(SimConfig::default());
    r2.command_velocity(&v, 0.0).unwrap();
    for t in [0.003, 0.0301, 0.17, 0.1701, 0.4] {
        r2.step(t);
    }
    let want: Vec<f64> = v.iter().map(|vi| vi * 0.4).collect();
    assert_slices_close(&r2.state().positions, &want, 1e-12, "irregular");
}

#[test]
fn joint_reaching_a_limit_stops_there_and_the_others_go_on() {
    let upper = 160.0 * DEG;
    let mut r = robot(SimConfig {
        initial_positions: vec![upper - 0.1, 0.0, 0.0, 0.0, 0.0, 0.0],
        ..SimConfig::default()
    });
    let v = [1.0, 0.4, 0.0, 0.0, 0.0, 0.0];
    r.command_velocity(&v, 0.0).unwrap();
    r.step(0.05);
    assert!(!r.status().at_limit[0]);
    assert!(close(r.state().positions[0], upper - 0.05, 1e-12));
    let s = r.step(0.3).clone();
    assert_eq!(s.positions[0], upper, "stops exactly on the limit");
    assert_eq!(s.velocities[0], 0.0);
    assert!(close(s.positions[1], 0.4 * 0.3, 1e-12), "joint 2 goes on");
    assert_eq!(s.velocities[1], 0.4);
    assert!(r.status().at_limit[0]);
    assert!(!r.status().at_limit[1]);
    assert!(
        r.status()
            .last_error
            .contains("`joint_1` stopped at its upper limit"),
        "{}",
        r.status().last_error
    );
    // Commanding away from the limit moves the joint off it.
    r.command_velocity(&[-1.0, 0.0, 0.0, 0.0, 0.0, 0.0], 0.3)
        .unwrap();
    r.step(0.4);
    assert!(close(r.state().positions[0], upper - 0.1, 1e-12));
    assert!(!r.status().at_limit[0]);
}

#[test]
fn lower_limit_stops_too() {
    let lower = -109.5 * DEG;
    let mut r = robot(SimConfig::default());
    r.command_velocity(&[0.0, 0.0, 0.0, 0.0, -3.0, 0.0], 0.0)
        .unwrap();
    r.command_velocity(&[0.0, 0.0, 0.0, 0.0, -3.0, 0.0], 0.4)
        .unwrap();
    let s = r.step(0.8);
    assert_eq!(s.positions[4], lower);
    assert_eq!(s.velocities[4], 0.0);
    assert!(r.status().last_error.contains("lower limit"));
}

#[test]
fn stale_velocity_command_stops_within_one_period() {
    let timeout = 0.5;
    let mut r = robot(SimConfig::default());
    let v = [0.2, 0.0, 0.0, 0.0, 0.0, -0.1];
    r.command_velocity(&v, 0.0).unwrap();
    let mut stopped_at = None;
    for k in 1..=80 {
        let t = k as f64 * 0.01;
        let s = r.step(t).clone();
        if s.velocities.iter().all(|&x| x == 0.0) && stopped_at.is_none() {
            stopped_at = Some(t);
            // Integrated exactly up to the timeout, not a sub-step more.
            assert!(close(s.positions[0], 0.2 * timeout, 1e-12), "{s:?}");
            assert!(close(s.positions[5], -0.1 * timeout, 1e-12), "{s:?}");
        }
    }
    let t = stopped_at.expect("the robot stopped");
    assert!(
        t > timeout && t <= timeout + r.period() + 1e-12,
        "stopped at {t}"
    );
    assert!(r.status().holding);
    assert_eq!(r.status().mode, Mode::Velocity);
    assert!(
        r.status().last_error.contains("timed out"),
        "{}",
        r.status().last_error
    );
    assert!(close(r.state().positions[0], 0.1, 1e-12));
    // A fresh command resumes motion.
    r.command_velocity(&v, 1.0).unwrap();
    r.step(1.1);
    assert!(close(r.state().positions[0], 0.1 + 0.02, 1e-12));
}

/// Issue 15 item 5 / issue 12: a command counts its age from when it was sent. After a
/// stall, commands queued during it are stale and rejected (the robot does not move); a fresh
/// one is in force for the timeout minus its age, so the robot moves at most one timeout after
/// the last command was sent, whenever it arrived.
#[test]
fn velocity_commands_age_from_when_they_were_sent() {
    let timeout = 0.002;
    let cfg = SimConfig {
        update_rate_hz: 500.0,
        velocity_command_timeout_s: timeout,
        ..SimConfig::default()
    };
    let mut r = robot(cfg.clone());
    r.step(0.0);
    let v = [0.5, 0.0, 0.0, 0.0, 0.0, 0.0];
    // a stall of 0.1 s: 50 commands sent every 2 ms are read at once at t = 0.1
    for k in 0..50 {
        let age = 0.1 - k as f64 * 0.002;
        let e = r.command_velocity_sent(&v, 0.1, age);
        if age >= timeout {
            assert!(matches!(e, Err(SimError::Stale { .. })), "age {age}: {e:?}");
        }
    }
    assert_eq!(r.status().rejected_commands, 50);
    assert!(
        r.status().last_error.contains("stale"),
        "{}",
        r.status().last_error
    );
    r.step(0.2);
    assert_eq!(
        r.state().positions[0],
        0.0,
        "the flushed queue moved the robot"
    );
    // a command 0.5 ms in transit runs for the 1.5 ms left of its 2 ms
    r.command_velocity_sent(&v, 0.3, 0.0005).unwrap();
    r.step(0.31);
    assert!(close(r.state().positions[0], 0.5 * 0.0015, 1e-15));
    assert_eq!(r.state().velocities[0], 0.0);
    assert!(r.status().last_error.contains("timed out"));
    // a steady 1 kHz stream keeps it moving without a pause
    let mut m = robot(cfg);
    m.step(0.0);
    for k in 0..100 {
        let t = k as f64 * 0.001;
        m.command_velocity_sent(&v, t + 0.0002, 0.0002).unwrap();
    }
    m.step(0.1);
    assert!(
        close(m.state().positions[0], 0.5 * (0.1 - 0.0002), 1e-12),
        "{:?}",
        m.state()
    );
    assert_eq!(m.state().velocities[0], 0.5);
}

#[test]
fn timeout_stops_at_the_deadline_even_with_a_long_step() {
    let mut r = robot(SimConfig::default());
    r.command_velocity(&[1.0, 0.0, 0.0, 0.0, 0.0, 0.0], 0.0)
        .unwrap();
    let s = r.step(2.0);
    assert!(close(s.positions[0], 0.5, 1e-12));
    assert_eq!(s.velocities[0], 0.0);
}

#[test]
fn rejected_velocity_commands_do_not_keep_old_velocities_alive() {
    let mut r = robot(SimConfig::default());
    let v = [0.3, 0.0, 0.0, 0.0, 0.0, 0.0];
    r.command_velocity(&v, 0.0).unwrap();
    r.step(0.3);
    // Bad commands: ignored, the previous one continues ...
    assert!(r.command_velocity(&[f64::NAN; 6], 0.3).is_err());
    assert!(r.command_velocity(&[0.1; 5], 0.35).is_err());
    r.step(0.4);
    assert_eq!(r.state().velocities[0], 0.3);
    assert!(close(r.state().positions[0], 0.12, 1e-12));
    // ... but only until the timeout of the last valid one.
    assert!(r.command_velocity(&[9.0; 6], 0.45).is_err());
    let s = r.step(0.51);
    assert_eq!(s.velocities[0], 0.0);
    assert!(close(s.positions[0], 0.15, 1e-12));
    assert_eq!(r.status().rejected_commands, 3);
}

#[test]
fn acceleration_limited_velocity_ramp_matches_analytic_profile() {
    let a = 2.0;
    let vc = 0.5; // ramp lasts 0.25 s
    let mut r = robot(SimConfig {
        max_accelerations: vec![a, 0.0, 0.0, 0.0, 0.0, 0.0],
        ..SimConfig::default()
    });
    r.command_velocity(&[vc, 0.0, 0.0, 0.0, 0.0, 0.0], 0.0)
        .unwrap();
    for k in 1..=45 {
        let t = k as f64 * 0.01;
        let s = r.step(t);
        let (p, v) = if t <= vc / a {
            (0.5 * a * t * t, a * t)
        } else {
            (vc * vc / (2.0 * a) + vc * (t - vc / a), vc)
        };
        assert!(
            close(s.positions[0], p, 1e-12),
            "t={t}: {} vs {p}",
            s.positions[0]
        );
        assert!(close(s.velocities[0], v, 1e-12), "t={t}");
    }
}

#[test]
fn continuous_joint_is_not_wrapped() {
    let joints = vec![JointSpec::continuous("spin", 4.0)];
    let mut r = SimHardware::new(joints, SimConfig::default()).unwrap();
    r.step(0.0);
    r.command_velocity(&[4.0], 0.0).unwrap();
    r.step(0.45);
    assert!(close(r.state().positions[0], 1.8, 1e-12));
    for k in 1..=10 {
        r.command_velocity(&[4.0], 0.45 * k as f64).unwrap();
    }
    r.step(4.5);
    assert!(close(r.state().positions[0], 18.0, 1e-9));
    assert!(!r.status().at_limit[0]);
}

// ---------------------------------------------------------------- position mode

#[test]
fn position_command_moves_each_joint_at_its_velocity_limit() {
    let mut r = robot(SimConfig::default());
    // joint_1 vmax 2.0 needs 0.5 s for 1.0 rad; joint_3 vmax 2.5 needs 0.1 s for -0.25 rad.
    let target = [1.0, 0.0, -0.25, 0.0, 0.0, 0.0];
    r.command_position(&target, 0.0).unwrap();
    assert_eq!(r.status().mode, Mode::Position);
    for k in 1..=70 {
        let t = k as f64 * 0.01;
        let s = r.step(t);
        let p1 = (2.0 * t).min(1.0);
        let p3 = -(2.5 * t).min(0.25);
        assert!(
            close(s.positions[0], p1, 1e-12),
            "t={t}: {}",
            s.positions[0]
        );
        assert!(
            close(s.positions[2], p3, 1e-12),
            "t={t}: {}",
            s.positions[2]
        );
        assert!(s.velocities[0].abs() <= 2.0);
    }
    assert_eq!(r.state().positions, target.to_vec(), "exactly on target");
    assert_eq!(r.state().velocities, vec![0.0; 6]);
    assert!(r.status().holding);
}

#[test]
fn acceleration_limited_position_move_is_a_trapezoid() {
    // joint_1: 1.5 rad, vmax 2, a 4: accelerate 0.5 s, cruise 0.25 s, brake 0.5 s.
    let mut r = robot(SimConfig {
        max_accelerations: vec![4.0; 6],
        ..SimConfig::default()
    });
    r.command_position(&[1.5, 0.0, 0.0, 0.0, 0.0, 0.0], 0.0)
        .unwrap();
    for k in 1..=150 {
        let t = k as f64 * 0.01;
        let s = r.step(t);
        let (p, v) = if t <= 0.5 {
            (2.0 * t * t, 4.0 * t)
        } else if t <= 0.75 {
            (0.5 + 2.0 * (t - 0.5), 2.0)
        } else if t <= 1.25 {
            let s = t - 0.75;
            (1.0 + 2.0 * s - 2.0 * s * s, 2.0 - 4.0 * s)
        } else {
            (1.5, 0.0)
        };
        assert!(
            close(s.positions[0], p, 1e-12),
            "t={t}: {} vs {p}",
            s.positions[0]
        );
        assert!(
            close(s.velocities[0], v, 1e-12),
            "t={t}: {} vs {v}",
            s.velocities[0]
        );
        assert_eq!(r.status().holding, t > 1.25 - 1e-9, "t={t}");
    }
    assert_eq!(r.state().positions[0], 1.5);
}

#[test]
fn position_command_against_the_motion_brakes_then_returns() {
    let a = 5.0;
    let mut r = robot(SimConfig {
        max_accelerations: vec![a; 6],
        ..SimConfig::default()
    });
    r.command_velocity(&[2.0, 0.0, 0.0, 0.0, 0.0, 0.0], 0.0)
        .unwrap();
    r.step(0.5);
    assert_eq!(r.state().velocities[0], 2.0);
    r.command_position(&[0.0; 6], 0.5).unwrap();
    let mut v_prev = 2.0;
    for k in 51..=300 {
        let s = r.step(k as f64 * 0.01);
        let v = s.velocities[0];
        assert!(
            (v - v_prev).abs() <= a * 0.01 + 1e-12,
            "k={k}: {v_prev} -> {v}"
        );
        assert!(v.abs() <= 2.0);
        v_prev = v;
    }
    assert_eq!(r.state().positions[0], 0.0);
    assert!(r.status().holding);
}

#[test]
fn instant_position_mode_jumps_at_the_next_step() {
    let mut r = robot(SimConfig {
        position_command_mode: PositionCommandMode::Instant,
        ..SimConfig::default()
    });
    let target = [1.0, -1.0, 0.5, 3.0, -1.0, 2.0];
    r.command_position(&target, 0.0).unwrap();
    let s = r.step(0.01);
    assert_eq!(s.positions, target.to_vec());
    assert_eq!(s.velocities, vec![0.0; 6]);
}

#[test]
fn position_command_rejections_leave_the_previous_command_running() {
    let mut r = robot(SimConfig::default());
    r.command_position(&[1.0, 0.0, 0.0, 0.0, 0.0, 0.0], 0.0)
        .unwrap();
    let lim = 127.5 * DEG;
    type Check = fn(&SimError) -> bool;
    let bad: Vec<(Vec<f64>, Check, &str)> = vec![
        (
            vec![0.0; 5],
            |e| {
                matches!(
                    e,
                    SimError::LengthMismatch {
                        expected: 6,
                        got: 5,
                        ..
                    }
                )
            },
            "expected 6",
        ),
        (
            vec![0.0; 7],
            |e| matches!(e, SimError::LengthMismatch { got: 7, .. }),
            "got 7",
        ),
        (
            vec![],
            |e| matches!(e, SimError::LengthMismatch { got: 0, .. }),
            "got 0",
        ),
        (
            vec![0.0, f64::NAN, 0.0, 0.0, 0.0, 0.0],
            |e| matches!(e, SimError::NotFinite { joint, .. } if joint == "joint_2"),
            "not a finite",
        ),
        (
            vec![0.0, 0.0, f64::NEG_INFINITY, 0.0, 0.0, 0.0],
            |e| matches!(e, SimError::NotFinite { .. }),
            "not a finite",
        ),
        (
            vec![0.0, lim + 1e-9, 0.0, 0.0, 0.0, 0.0],
            |e| matches!(e, SimError::PositionOutOfLimits { joint, .. } if joint == "joint_2"),
            "outside its limits",
        ),
    ];
    let count = bad.len() as u32;
    for (k, (cmd, is_expected, text)) in bad.into_iter().enumerate() {
        let t = 0.01 * (k + 1) as f64;
        let err = r.command_position(&cmd, t).unwrap_err();
        assert!(is_expected(&err), "{cmd:?}: {err:?}");
        assert!(err.to_string().contains(text), "{err}");
        assert_eq!(r.status().last_error, err.to_string());
        assert_eq!(r.status().mode, Mode::Position);
    }
    assert_eq!(r.status().rejected_commands, count);
    // The accepted command carried on undisturbed: 1 rad at 2 rad/s.
    let s = r.step(0.3);
    assert!(close(s.positions[0], 0.6, 1e-12));
    r.step(1.0);
    assert_eq!(r.state().positions[0], 1.0);
    // A command exactly on a limit is valid.
    r.command_position(&[0.0, lim, 0.0, 0.0, 0.0, 0.0], 1.0)
        .unwrap();
}

#[test]
fn velocity_command_rejections() {
    let mut r = robot(SimConfig::default());
    let cases: Vec<(Vec<f64>, &str)> = vec![
        (vec![0.0; 3], "expected 6 values"),
        (vec![0.0, 0.0, 0.0, f64::INFINITY, 0.0, 0.0], "not a finite"),
        (
            vec![0.0, -2.0000001, 0.0, 0.0, 0.0, 0.0],
            "beyond its velocity limit",
        ),
    ];
    for (cmd, text) in cases {
        let err = r.command_velocity(&cmd, 0.0).unwrap_err();
        assert!(err.to_string().contains(text), "{err}");
    }
    assert_eq!(r.status().mode, Mode::Idle, "nothing was accepted");
    assert!(r
        .command_velocity(&[0.0, -2.0, 0.0, 0.0, 0.0, 0.0], 0.0)
        .is_ok());
    assert!(matches!(
        r.command_velocity(&[0.0; 6], f64::NAN),
        Err(SimError::InvalidTime { .. })
    ));
}

// ---------------------------------------------------------------- trajectories

#[test]
fn linear_trajectory_hits_waypoints_at_their_times() {
    let mut r = robot(SimConfig::default());
    let w1 = [0.5, -0.5, 0.25, 1.0, 0.1, -1.0];
    let w2 = [0.2, -0.2, 0.5, 1.5, -0.1, -1.0];
    r.command_trajectory(&traj(vec![point(&w1, 1.0), point(&w2, 2.0)]), 0.0)
        .unwrap();
    assert_eq!(r.status().mode, Mode::Trajectory);
    assert!(!r.status().holding);
    for k in 1..=250 {
        let t = k as f64 * 0.01;
        let s = r.step(t);
        for j in 0..6 {
            let want = if t <= 1.0 {
                w1[j] * t
            } else if t <= 2.0 {
                w1[j] + (w2[j] - w1[j]) * (t - 1.0)
            } else {
                w2[j]
            };
            assert!(close(s.positions[j], want, 1e-12), "t={t} j={j}");
        }
        if (t - 1.0).abs() < 1e-12 {
            // Velocity of the segment that starts here.
            for j in 0..6 {
                assert!(close(s.velocities[j], w2[j] - w1[j], 1e-12));
            }
        }
    }
    // Exact hits at the waypoint times and exact hold afterwards.
    let mut r = robot(SimConfig::default());
    r.command_trajectory(&traj(vec![point(&w1, 1.0), point(&w2, 2.0)]), 0.0)
        .unwrap();
    assert_eq!(r.step(1.0).positions, w1.to_vec());
    assert_eq!(r.step(2.0).positions, w2.to_vec());
    assert_eq!(r.step(5.0).velocities, vec![0.0; 6]);
    assert!(r.status().holding);
}

/// `p(t) = c0 + c2 t² + c3 t³`, starting at rest from the robot's initial position.
fn cubic_ref(t: f64, j: usize) -> (f64, f64) {
    let c2 = [0.3, -0.2, 0.1, 0.5, -0.4, 0.25][j];
    let c3 = [-0.1, 0.08, -0.02, -0.15, 0.12, -0.1][j];
    (c2 * t * t + c3 * t.powi(3), 2.0 * c2 * t + 3.0 * c3 * t * t)
}

#[test]
fn cubic_trajectory_matches_the_analytic_polynomial() {
    let mut r = robot(SimConfig {
        allow_nonzero_velocity_at_trajectory_end: true,
        ..SimConfig::default()
    });
    let mut points = vec![];
    for &t in &[0.7, 1.5, 2.0] {
        let p: Vec<f64> = (0..6).map(|j| cubic_ref(t, j).0).collect();
        let v: Vec<f64> = (0..6).map(|j| cubic_ref(t, j).1).collect();
        points.push(TrajectoryPoint {
            positions: p,
            velocities: v,
            accelerations: vec![],
            time_from_start: t,
        });
    }
    r.command_trajectory(&traj(points), 0.0).unwrap();
    for k in 1..200 {
        let t = k as f64 * 0.01;
        let s = r.step(t);
        for j in 0..6 {
            let (p, v) = cubic_ref(t, j);
            assert!(close(s.positions[j], p, 1e-12), "t={t} j={j}");
            assert!(close(s.velocities[j], v, 1e-12), "t={t} j={j}");
        }
    }
}

#[test]
fn quintic_trajectory_matches_the_analytic_polynomial() {
    // p(t) = c3 t³ + c4 t⁴ + c5 t⁵: at rest with zero acceleration at t = 0.
    let c = [(0.2, -0.1, 0.015), (-0.1, 0.05, -0.006)];
    let f = |t: f64, j: usize| {
        let (c3, c4, c5) = c[j % 2];
        (
            c3 * t.powi(3) + c4 * t.powi(4) + c5 * t.powi(5),
            3.0 * c3 * t * t + 4.0 * c4 * t.powi(3) + 5.0 * c5 * t.powi(4),
            6.0 * c3 * t + 12.0 * c4 * t * t + 20.0 * c5 * t.powi(3),
        )
    };
    let mut r = robot(SimConfig {
        allow_nonzero_velocity_at_trajectory_end: true,
        ..SimConfig::default()
    });
    let points = [0.8, 1.6, 2.5]
        .iter()
        .map(|&t| TrajectoryPoint {
            positions: (0..6).map(|j| f(t, j).0).collect(),
            velocities: (0..6).map(|j| f(t, j).1).collect(),
            accelerations: (0..6).map(|j| f(t, j).2).collect(),
            time_from_start: t,
        })
        .collect();
    r.command_trajectory(&traj(points), 0.0).unwrap();
    for k in 1..250 {
        let t = k as f64 * 0.01;
        let s = r.step(t);
        for j in 0..6 {
            let (p, v, _) = f(t, j);
            assert!(close(s.positions[j], p, 1e-11), "t={t} j={j}");
            assert!(close(s.velocities[j], v, 1e-11), "t={t} j={j}");
        }
    }
}

#[test]
fn cubic_trajectory_is_continuous_at_waypoints() {
    let mut r = robot(SimConfig::default());
    let pts = vec![
        TrajectoryPoint {
            positions: vec![0.4, 0.2, -0.3, 0.5, 0.2, 0.1],
            velocities: vec![0.3, -0.2, 0.1, 0.4, 0.0, -0.3],
            accelerations: vec![],
            time_from_start: 1.0,
        },
        TrajectoryPoint {
            positions: vec![0.6, 0.0, -0.1, 0.9, 0.3, -0.2],
            velocities: vec![0.0; 6],
            accelerations: vec![],
            time_from_start: 2.5,
        },
    ];
    r.command_trajectory(&traj(pts.clone()), 0.0).unwrap();
    let eps = 1e-6;
    let before = r.step(1.0 - eps).clone();
    let at = r.step(1.0).clone();
    let after = r.step(1.0 + eps).clone();
    assert_slices_close(&at.positions, &pts[0].positions, 1e-15, "waypoint");
    assert_slices_close(
        &at.velocities,
        &pts[0].velocities,
        1e-12,
        "waypoint velocity",
    );
    assert_slices_close(
        &before.positions,
        &after.positions,
        1e-5,
        "position continuity",
    );
    assert_slices_close(
        &before.velocities,
        &after.velocities,
        1e-4,
        "velocity continuity",
    );
    assert_eq!(r.step(2.5).positions, pts[1].positions);
}

#[test]
fn trajectory_from_a_moving_robot_keeps_its_velocity() {
    let mut r = robot(SimConfig::default());
    let v = [0.4, 0.0, 0.0, 0.0, 0.0, 0.0];
    r.command_velocity(&v, 0.0).unwrap();
    r.step(0.2);
    let pts = vec![TrajectoryPoint {
        positions: vec![0.5, 0.0, 0.0, 0.0, 0.0, 0.0],
        velocities: vec![0.0; 6],
        accelerations: vec![],
        time_from_start: 1.0,
    }];
    r.command_trajectory(&traj(pts), 0.2).unwrap();
    assert!(
        close(r.state().velocities[0], 0.4, 1e-12),
        "no velocity jump"
    );
    let s = r.step(0.2 + 1e-6);
    assert!(close(s.velocities[0], 0.4, 1e-4));
    assert_eq!(r.step(1.2).positions[0], 0.5);
    // The trajectory replaced the velocity command: no timeout applies.
    assert!(
        r.status().last_error.is_empty(),
        "{}",
        r.status().last_error
    );
}

#[test]
fn future_start_time_stretches_the_first_segment() {
    let mut r = robot(SimConfig::default());
    r.step(10.0);
    let mut t = traj(vec![point(&[1.0, 0.0, 0.0, 0.0, 0.0, 0.0], 0.5)]);
    t.start_time = 11.5; // first point due at 12.0, two seconds from now
    r.command_trajectory(&t, 10.0).unwrap();
    assert!(close(r.step(11.0).positions[0], 0.5, 1e-12));
    assert_eq!(r.step(12.0).positions[0], 1.0);
}

#[test]
fn first_point_due_now_must_match_the_current_state() {
    // MoveIt sends the current state as a point at time_from_start = 0.
    let init = vec![0.1, 0.2, 0.3, 0.4, 0.5, 0.6];
    let mut r = robot(SimConfig {
        initial_positions: init.clone(),
        ..SimConfig::default()
    });
    let near: Vec<f64> = init.iter().map(|p| p + 0.005).collect();
    let goal = [0.6, 0.2, 0.3, 0.4, 0.5, 0.6];
    r.command_trajectory(&traj(vec![point(&near, 0.0), point(&goal, 1.0)]), 0.0)
        .unwrap();
    // The current state stands in for the first point: no jump.
    assert_eq!(r.state().positions, init);
    assert!(close(r.step(0.5).positions[0], 0.35, 1e-12));
    // Too far from the current state: refused.
    let far: Vec<f64> = init.iter().map(|p| p - 0.05).collect();
    let err = r
        .command_trajectory(&traj(vec![point(&far, 0.0), point(&goal, 1.0)]), 0.5)
        .unwrap_err();
    assert!(matches!(err, SimError::StartMismatch { .. }), "{err:?}");
    // Stamped in the past (a late message): the first point counts as now.
    let mut late = traj(vec![
        point(&r.state().positions.clone(), 0.0),
        point(&init, 1.0),
    ]);
    late.start_time = 0.49;
    r.command_trajectory(&late, 0.5).unwrap();
    assert_eq!(r.step(1.49).positions, init);
}

#[test]
fn partial_goals_hold_the_other_joints_when_allowed() {
    let mut t = Trajectory {
        joint_names: vec!["joint_3".into(), "joint_1".into()],
        points: vec![point(&[0.5, -0.5], 1.0)],
        start_time: 0.0,
    };
    let mut r = robot(SimConfig::default());
    let err = r.command_trajectory(&t, 0.0).unwrap_err();
    match &err {
        SimError::MissingJoints { names } => {
            assert_eq!(names, &["joint_2", "joint_4", "joint_5", "joint_6"])
        }
        other => panic!("{other:?}"),
    }
    let mut r = robot(SimConfig {
        allow_partial_joints_goal: true,
        initial_positions: vec![0.0, 0.1, 0.0, 0.2, 0.3, 0.4],
        ..SimConfig::default()
    });
    r.command_trajectory(&t, 0.0).unwrap();
    assert_eq!(r.step(1.0).positions, vec![-0.5, 0.1, 0.5, 0.2, 0.3, 0.4]);
    // Names in any order map to the right joints; an empty name list is refused.
    t.joint_names.clear();
    t.points = vec![point(&[], 1.0)];
    assert!(matches!(
        r.command_trajectory(&t, 1.0),
        Err(SimError::MissingJoints { .. })
    ));
}

#[test]
fn trajectory_rejections_name_their_reason_and_keep_the_previous_command() {
    let ok = |t: f64| point(&[0.1, 0.1, 0.1, 0.1, 0.1, 0.1], t);
    let mut cases: Vec<(Trajectory, &str)> = vec![];
    cases.push((traj(vec![]), "no points"));
    let mut t = traj(vec![ok(1.0)]);
    t.joint_names[2] = "elbow".into();
    cases.push((t, "unknown joint `elbow`"));
    let mut t = traj(vec![ok(1.0)]);
    t.joint_names[2] = "joint_1".into();
    cases.push((t, "joint `joint_1` more than once"));
    cases.push((traj(vec![ok(1.0), ok(1.0)]), "not after the previous"));
    cases.push((traj(vec![ok(1.0), ok(0.5)]), "not after the previous"));
    cases.push((traj(vec![ok(-1.0)]), "finite and not negative"));
    cases.push((traj(vec![ok(f64::NAN)]), "finite and not negative"));
    let mut t = traj(vec![ok(1.0)]);
    t.start_time = f64::INFINITY;
    cases.push((t, "start time"));
    cases.push((
        traj(vec![point(&[0.1; 5], 1.0)]),
        "point 0 positions: expected 6",
    ));
    let mut p = ok(1.0);
    p.velocities = vec![0.0; 4];
    cases.push((traj(vec![p]), "point 0 velocities: expected 6"));
    let mut p = ok(1.0);
    p.velocities = vec![0.0; 6];
    p.accelerations = vec![0.0; 7];
    cases.push((traj(vec![ok(0.5), p]), "point 1 accelerations: expected 6"));
    let mut p = ok(1.0);
    p.accelerations = vec![0.0; 6];
    cases.push((traj(vec![p]), "accelerations without velocities"));
    cases.push((
        traj(vec![point(&[0.1, 0.1, f64::NAN, 0.1, 0.1, 0.1], 1.0)]),
        "`joint_3` is NaN",
    ));
    let mut p = ok(1.0);
    p.velocities = vec![0.0, f64::INFINITY, 0.0, 0.0, 0.0, 0.0];
    cases.push((
        traj(vec![p, ok(2.0)]),
        "velocity for joint `joint_2` is inf",
    ));
    cases.push((
        traj(vec![ok(1.0), point(&[0.1, 0.1, 0.1, 0.1, -2.0, 0.1], 2.0)]),
        "trajectory point 1 position for joint `joint_5` is -2, outside",
    ));
    let mut p = ok(1.0);
    p.velocities = vec![0.0, 0.0, 0.0, 0.0, 0.0, 4.5];
    cases.push((
        traj(vec![p, ok(2.0)]),
        "point 0 velocity for joint `joint_6` is 4.5, beyond",
    ));
    // Waypoints fine, but 1.0 rad in 0.25 s is 4 rad/s for joint_1 (limit 2).
    cases.push((
        traj(vec![point(&[1.0, 0.0, 0.0, 0.0, 0.0, 0.0], 0.25)]),
        "interpolated velocity on the way to trajectory point 0 for joint `joint_1`",
    ));
    // Waypoints inside the limits, but the cubic overshoots the upper limit of joint_5.
    let up5 = 120.5 * DEG;
    let near = [0.0, 0.0, 0.0, 0.0, up5 - 0.01, 0.0];
    let mut p0 = point(&near, 1.5);
    p0.velocities = vec![0.0; 6];
    let mut p1 = point(&near, 2.5);
    p1.velocities = vec![0.0, 0.0, 0.0, 0.0, 0.5, 0.0];
    let mut p2 = point(&near, 3.5);
    p2.velocities = vec![0.0; 6];
    cases.push((
        traj(vec![p0, p1, p2]),
        "interpolated position on the way to trajectory point 2 for joint `joint_5`",
    ));
    let mut p = ok(1.0);
    p.velocities = vec![0.0, 0.0, 0.0, 0.1, 0.0, 0.0];
    cases.push((traj(vec![p]), "ends with velocity 0.1 for joint `joint_4`"));
    // Two seconds in the past.
    let mut t = traj(vec![point(&[0.0; 6], 1.0), point(&[0.0; 6], 2.0)]);
    t.start_time = 1.0;
    cases.push((t, "is due at 3 s, which is not after now (5 s)"));
    cases.push((
        traj(vec![point(&[0.3; 6], 0.0), ok(2.0)]),
        "point 0 is due now but joint `joint_1`",
    ));

    let mut r = robot(SimConfig::default());
    r.step(5.0);
    let good = traj(vec![point(&[0.2, 0.0, 0.0, 0.0, 0.0, 0.0], 1.0)]);
    r.command_trajectory(&good, 5.0).unwrap();
    let n = cases.len() as u32;
    for (t, text) in cases {
        let err = r.command_trajectory(&t, 5.0).unwrap_err();
        assert!(err.to_string().contains(text), "want `{text}`, got `{err}`");
        assert_eq!(r.status().last_error, err.to_string());
    }
    assert_eq!(r.status().rejected_commands, n);
    // The good trajectory is still being followed.
    assert_eq!(r.status().mode, Mode::Trajectory);
    assert!(close(r.step(5.5).positions[0], 0.1, 1e-12));
    assert_eq!(r.step(6.0).positions[0], 0.2);
}

#[test]
fn huge_accelerations_are_rejected_not_turned_into_nan() {
    // a·dt² = 4e308 overflows: the quintic would evaluate to inf - inf = NaN.
    let mut r = robot(SimConfig::default());
    let mut pt = point(&[0.0; 6], 2.0);
    pt.velocities = vec![0.0; 6];
    pt.accelerations = vec![1e308; 6];
    let before = r.state().clone();
    let e = r.command_trajectory(&traj(vec![pt]), 0.0).unwrap_err();
    assert!(
        matches!(&e, SimError::InterpolationNotFinite { point: 0, joint, duration }
            if joint == "joint_1" && *duration == 2.0),
        "{e}"
    );
    assert_eq!(r.status().last_error, e.to_string());
    assert_eq!(r.status().mode, Mode::Idle);
    let s = r.step(1.0);
    assert_eq!(s.positions, before.positions);
    assert!(s
        .positions
        .iter()
        .chain(&s.velocities)
        .all(|v| v.is_finite()));

    // Large but not overflowing accelerations: finite path, refused by the limits.
    let mut pt = point(&[0.0; 6], 2.0);
    pt.velocities = vec![0.0; 6];
    pt.accelerations = vec![1e300; 6];
    let e = r.command_trajectory(&traj(vec![pt]), 1.0).unwrap_err();
    assert!(matches!(e, SimError::PositionOutOfLimits { .. }), "{e}");
}

#[test]
fn huge_velocities_are_rejected() {
    let mut r = robot(SimConfig::default());
    for v in [1e308, f64::MAX, -1e308] {
        let mut pt = point(&[0.0; 6], 2.0);
        pt.velocities = vec![v; 6];
        let e = r
            .command_trajectory(&traj(vec![pt, point(&[0.0; 6], 4.0)]), 0.0)
            .unwrap_err();
        assert!(matches!(e, SimError::VelocityOutOfLimits { .. }), "{e}");
        assert!(r.step(0.5).positions.iter().all(|p| p.is_finite()));
    }
}

#[test]
fn a_non_finite_sample_is_never_written_to_the_state() {
    // Second line of defence: a plan that (bypassing validation) yields NaN or inf.
    for poison in [f64::NAN, f64::INFINITY, 1e308] {
        let mut r = robot(SimConfig::default());
        let pts = vec![point(&[0.2; 6], 1.0), point(&[0.4; 6], 2.0)];
        r.command_trajectory(&traj(pts), 0.0).unwrap();
        let before = r.step(0.5).clone();
        let Active::Trajectory { plan, .. } = &mut r.active else {
            panic!("not following the trajectory");
        };
        plan.corrupt(poison);
        let s = r.step(0.6).clone();
        assert_eq!(s.positions, before.positions, "poison {poison}");
        assert!(s.velocities.iter().all(|&v| v == 0.0));
        assert_eq!(r.status().mode, Mode::Position);
        assert!(r.status().holding);
        assert!(
            r.status().last_error.contains("not finite"),
            "{}",
            r.status().last_error
        );
        // The fault is not a rejected command, and the robot keeps holding there.
        assert_eq!(r.status().rejected_commands, 0);
        assert_eq!(r.step(3.0).positions, before.positions);
    }
}

#[test]
fn nonzero_final_velocity_can_be_allowed() {
    let mut r = robot(SimConfig {
        allow_nonzero_velocity_at_trajectory_end: true,
        ..SimConfig::default()
    });
    let mut p = point(&[0.1, 0.0, 0.0, 0.0, 0.0, 0.0], 1.0);
    p.velocities = vec![0.1, 0.0, 0.0, 0.0, 0.0, 0.0];
    r.command_trajectory(&traj(vec![p]), 0.0).unwrap();
    let s = r.step(1.5);
    assert_eq!(s.positions[0], 0.1);
    assert_eq!(s.velocities[0], 0.0, "stops dead at the end");
}

#[test]
fn velocity_command_replaces_a_trajectory() {
    let mut r = robot(SimConfig::default());
    r.command_trajectory(
        &traj(vec![point(&[1.0, 0.0, 0.0, 0.0, 0.0, 0.0], 1.0)]),
        0.0,
    )
    .unwrap();
    r.command_velocity(&[-0.5, 0.0, 0.0, 0.0, 0.0, 0.0], 0.5)
        .unwrap();
    assert!(close(r.state().positions[0], 0.5, 1e-12));
    assert!(close(r.step(0.7).positions[0], 0.4, 1e-12));
    assert_eq!(r.status().mode, Mode::Velocity);
}

// ---------------------------------------------------------------- time

#[test]
fn time_going_backwards_changes_nothing() {
    let mut r = robot(SimConfig::default());
    r.command_velocity(&[0.5, 0.0, 0.0, 0.0, 0.0, 0.0], 0.0)
        .unwrap();
    let s1 = r.step(0.2).clone();
    let s2 = r.step(0.1).clone();
    assert_eq!(s1, s2);
    assert!(r.status().last_error.contains("already at 0.2 s"));
    let s3 = r.step(f64::NAN).clone();
    assert_eq!(s1, s3);
    assert!(r.status().last_error.contains("non-finite"));
    // A late command takes effect at the simulation's time, and its timeout counts from there.
    r.command_velocity(&[-0.5, 0.0, 0.0, 0.0, 0.0, 0.0], 0.1)
        .unwrap();
    let s = r.step(0.65);
    assert!(close(s.positions[0], 0.1 - 0.5 * 0.45, 1e-12), "{s:?}");
    assert_eq!(s.velocities[0], -0.5);
    assert_eq!(r.status().rejected_commands, 0);
}

// ---------------------------------------------------------------- hold, reset, external rejections

#[test]
fn hold_stops_every_kind_of_motion_where_it_is() {
    let accel = SimConfig {
        max_accelerations: vec![1.0; 6],
        ..SimConfig::default()
    };
    // Velocity command with acceleration limits: ramping at 1 rad/s², so at t = 0.4 joint 1 is
    // at 0.5 * 1 * 0.4² = 0.08 rad moving at 0.4 rad/s; hold stops it dead there.
    let mut r = robot(accel.clone());
    r.command_velocity(&[1.0, 0.0, 0.0, 0.0, 0.0, 0.0], 0.0)
        .unwrap();
    r.hold(0.4).unwrap();
    assert!(
        close(r.state().positions[0], 0.08, 1e-12),
        "{:?}",
        r.state()
    );
    assert_eq!(r.state().velocities, vec![0.0; 6]);
    assert_eq!(r.status().mode, Mode::Position);
    assert!(r.status().holding);
    // It stays there: no timeout event, no drift, nothing rejected.
    let s = r.step(3.0).clone();
    assert!(close(s.positions[0], 0.08, 1e-12), "{s:?}");
    assert!(r.status().holding);
    assert_eq!(r.status().rejected_commands, 0);

    // Position command without acceleration limits: 2 rad/s for 0.25 s = 0.5 rad.
    let mut r = robot(SimConfig::default());
    r.command_position(&[1.0, 0.0, 0.0, 0.0, 0.0, 0.0], 0.0)
        .unwrap();
    r.hold(0.25).unwrap();
    assert!(close(r.step(1.0).positions[0], 0.5, 1e-12));

    // Trajectory: a straight line 0 -> 1 rad over 1 s, held at the midpoint.
    let mut r = robot(SimConfig::default());
    let goal = [1.0, 0.0, 0.0, 0.0, 0.0, 0.0];
    r.command_trajectory(&traj(vec![point(&goal, 1.0)]), 0.0)
        .unwrap();
    r.hold(0.5).unwrap();
    let s = r.step(2.0).clone();
    assert!(close(s.positions[0], 0.5, 1e-12), "{s:?}");
    assert_eq!(s.velocities, vec![0.0; 6]);
    // A new command after hold works as usual.
    r.command_position(&[0.0; 6], 2.0).unwrap();
    assert!(close(r.step(2.1).positions[0], 0.3, 1e-12));
    assert!(r.hold(f64::NAN).is_err());
    assert_eq!(r.status().rejected_commands, 0);
}

#[test]
fn initial_positions_are_kept_for_reset() {
    let init = vec![0.1, -0.2, 0.3, 0.0, 0.5, -0.6];
    let mut r = robot(SimConfig {
        initial_positions: init.clone(),
        ..SimConfig::default()
    });
    r.command_position(&[0.0; 6], 0.0).unwrap();
    r.step(5.0);
    assert_eq!(r.state().positions, vec![0.0; 6]);
    assert_eq!(r.initial_positions(), init);
    let back = r.initial_positions().to_vec();
    r.command_position(&back, 5.0).unwrap();
    assert_eq!(r.step(10.0).positions, init);
    // Without the parameter: zero clamped into the limits.
    let lifted = SimHardware::new(
        vec![JointSpec::revolute("a", 0.5, 1.0, 1.0)],
        SimConfig::default(),
    )
    .unwrap();
    assert_eq!(lifted.initial_positions(), [0.5]);
}

#[test]
fn external_rejections_are_counted_like_core_ones() {
    let mut r = robot(SimConfig::default());
    r.command_velocity(&[0.5, 0.0, 0.0, 0.0, 0.0, 0.0], 0.0)
        .unwrap();
    r.reject_input("trajectory header.stamp is before the node started");
    assert_eq!(r.status().rejected_commands, 1);
    assert_eq!(
        r.status().last_error,
        "trajectory header.stamp is before the node started"
    );
    assert!(r.command_velocity(&[9.0; 6], 0.1).is_err());
    assert_eq!(r.status().rejected_commands, 2);
    // The velocity command goes on.
    assert!(close(r.step(0.2).positions[0], 0.1, 1e-12));
}

// ---------------------------------------------------------------- properties

/// A small robot of every joint kind whose limits a few commands reach.
fn small_robot() -> Vec<JointSpec> {
    vec![
        JointSpec::revolute("r1", -0.6, 0.6, 1.5),
        JointSpec::revolute("r2", -0.2, 0.9, 2.0),
        JointSpec::prismatic("p3", 0.0, 0.3, 1.0),
        JointSpec::continuous("c4", 3.0),
        JointSpec::revolute("r5", -1.2, 1.2, 1.0),
        JointSpec::revolute("r6", -0.8, 0.8, 2.5),
    ]
}

/// Position ranges to draw from (the limits; ±3 rad for the continuous joint).
const SMALL_RANGES: [(f64, f64); 6] = [
    (-0.6, 0.6),
    (-0.2, 0.9),
    (0.0, 0.3),
    (-3.0, 3.0),
    (-1.2, 1.2),
    (-0.8, 0.8),
];
const SMALL_VMAX: [f64; 6] = [1.5, 2.0, 1.0, 3.0, 1.0, 2.5];

#[derive(Debug, Clone)]
enum Op {
    Position(Vec<f64>),
    Velocity(Vec<f64>),
    Trajectory(Trajectory),
    Step(f64),
    Hold,
}

/// Values no joint accepts, or only by chance.
fn garbage() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(f64::NAN),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
        Just(1e308),
        Just(-f64::MAX),
        -50.0..50.0f64,
    ]
}

/// One value per joint, each mostly drawn from 5 % beyond its range, sometimes garbage;
/// sometimes a vector of the wrong length.
fn ranged(ranges: [(f64, f64); 6]) -> BoxedStrategy<Vec<f64>> {
    let per_joint: Vec<BoxedStrategy<f64>> = ranges
        .iter()
        .map(|&(lo, hi)| {
            prop_oneof![
                12 => (-0.05..1.05f64).prop_map(move |u| lo + u * (hi - lo)),
                1 => garbage(),
            ]
            .boxed()
        })
        .collect();
    prop_oneof![
        12 => per_joint,
        1 => prop::collection::vec(garbage(), 0..8),
    ]
    .boxed()
}

fn positions() -> BoxedStrategy<Vec<f64>> {
    ranged(SMALL_RANGES)
}

fn velocities(scale: f64) -> BoxedStrategy<Vec<f64>> {
    ranged(SMALL_VMAX.map(|v| (-v * scale, v * scale)))
}

/// Trajectories for the small robot: valid or broken in any of the ways the checks look for.
fn trajectory() -> impl Strategy<Value = Trajectory> {
    let pt = (
        positions(),
        prop::option::of(velocities(0.3)),
        prop::option::of(velocities(0.3)),
        prop_oneof![1 => Just(0.0), 8 => 0.2..2.5f64],
    );
    (
        prop::collection::vec(pt, 0..4),
        0..8usize,
        prop_oneof![3 => Just(0.0), 1 => 0.0..5.0f64],
    )
        .prop_map(|(pts, names_case, start_time)| {
            let mut t = 0.0;
            let points = pts
                .into_iter()
                .map(|(positions, v, a, dt)| {
                    t += dt;
                    TrajectoryPoint {
                        positions,
                        velocities: v.unwrap_or_default(),
                        accelerations: a.unwrap_or_default(),
                        time_from_start: t,
                    }
                })
                .collect();
            let mut joint_names: Vec<String> = small_robot().into_iter().map(|j| j.name).collect();
            match names_case {
                0 => joint_names[1] = "bogus".into(),
                1 => joint_names[1] = joint_names[0].clone(),
                k => joint_names.rotate_left(k - 2),
            }
            Trajectory {
                joint_names,
                points,
                start_time,
            }
        })
}

/// Slow trajectories through the middle of the small robot's ranges, mostly accepted.
fn small_feasible_trajectory() -> impl Strategy<Value = Trajectory> {
    let unit6 = || prop::collection::vec(-1.0..1.0f64, 6);
    let pt = (unit6(), unit6(), unit6(), 0..3usize, 2.0..3.0f64);
    prop::collection::vec(pt, 1..4).prop_map(|pts| {
        let n = pts.len();
        let mut t = 1.0;
        let points = pts
            .into_iter()
            .enumerate()
            .map(|(k, (u, v, a, fields, dt))| {
                t += dt;
                let scaled = |x: &[f64], f: f64| -> Vec<f64> {
                    x.iter().zip(SMALL_VMAX).map(|(x, vm)| x * f * vm).collect()
                };
                let positions = u
                    .iter()
                    .zip(SMALL_RANGES)
                    .map(|(u, (lo, hi))| lo + (0.5 + 0.15 * u) * (hi - lo))
                    .collect();
                let velocities = if k + 1 == n {
                    vec![0.0; 6]
                } else {
                    scaled(&v, 0.1)
                };
                TrajectoryPoint {
                    positions,
                    velocities: if fields >= 1 { velocities } else { vec![] },
                    accelerations: if fields >= 2 { scaled(&a, 0.1) } else { vec![] },
                    time_from_start: t,
                }
            })
            .collect();
        Trajectory {
            joint_names: small_robot().into_iter().map(|j| j.name).collect(),
            points,
            start_time: 0.0,
        }
    })
}

/// Trajectories well inside the RX60's limits and slow enough to be accepted, with every kind
/// of interpolation, joint order and start time.
fn feasible_trajectory() -> impl Strategy<Value = Trajectory> {
    let vec6 = |r: f64| prop::collection::vec(-r..r, 6);
    let pt = (vec6(0.4), vec6(0.2), vec6(0.5), 0..3usize, 1.0..2.0f64);
    (
        prop::collection::vec(pt, 1..5),
        0..6usize,
        prop::option::of(0.5..1.0f64),
    )
        .prop_map(|(pts, rot, start)| {
            let n = pts.len();
            let mut t = 0.0;
            let mut joint_names = names();
            joint_names.rotate_left(rot);
            let points = pts
                .into_iter()
                .enumerate()
                .map(|(k, (positions, v, a, fields, dt))| {
                    t += dt;
                    let last = k + 1 == n;
                    let v = if last { vec![0.0; 6] } else { v };
                    TrajectoryPoint {
                        positions,
                        velocities: if fields >= 1 { v } else { vec![] },
                        accelerations: if fields >= 2 { a } else { vec![] },
                        time_from_start: t,
                    }
                })
                .collect();
            Trajectory {
                joint_names,
                points,
                start_time: start.unwrap_or(0.0),
            }
        })
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => positions().prop_map(Op::Position),
        3 => velocities(1.05).prop_map(Op::Velocity),
        1 => trajectory().prop_map(Op::Trajectory),
        1 => small_feasible_trajectory().prop_map(Op::Trajectory),
        4 => prop_oneof![9 => 0.0..0.8f64, 1 => -0.05..0.0f64].prop_map(Op::Step),
        1 => Just(Op::Hold),
    ]
}

fn config() -> impl Strategy<Value = SimConfig> {
    (any::<bool>(), any::<bool>(), 0.5..20.0f64).prop_map(|(instant, accel, a)| SimConfig {
        position_command_mode: if instant {
            PositionCommandMode::Instant
        } else {
            PositionCommandMode::RateLimited
        },
        max_accelerations: if accel { vec![a; 6] } else { vec![] },
        ..SimConfig::default()
    })
}

fn check_invariants(r: &SimHardware, ctx: &str) {
    let s = r.state();
    for (j, js) in r.joints().iter().enumerate() {
        let (lo, hi) = js.bounds();
        let (p, v) = (s.positions[j], s.velocities[j]);
        assert!(p.is_finite() && v.is_finite(), "{ctx}: NaN in state {s:?}");
        assert!(
            lo <= p && p <= hi,
            "{ctx}: joint {j} at {p} outside [{lo}, {hi}]"
        );
        assert!(v.abs() <= js.max_velocity, "{ctx}: joint {j} velocity {v}");
        assert_eq!(r.status().at_limit[j], p <= lo || p >= hi, "{ctx}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn state_stays_finite_and_within_limits(cfg in config(), ops in prop::collection::vec(op(), 1..25)) {
        let mut r = SimHardware::new(small_robot(), cfg).unwrap();
        r.step(0.0);
        let mut now = 0.0;
        let mut rejected = 0;
        for (k, op) in ops.iter().enumerate() {
            let mode_before = r.status().mode;
            let result = match op {
                Op::Position(p) => r.command_position(p, now),
                Op::Velocity(v) => r.command_velocity(v, now),
                Op::Trajectory(t) => r.command_trajectory(t, now),
                Op::Step(dt) => {
                    now += dt;
                    r.step(now);
                    Ok(())
                }
                Op::Hold => {
                    r.hold(now).unwrap();
                    prop_assert!(r.status().holding);
                    prop_assert!(r.state().velocities.iter().all(|&v| v == 0.0));
                    Ok(())
                }
            };
            if std::env::var_os("RPQ_SIM_STATS").is_some() && !matches!(op, Op::Step(_)) {
                eprintln!("STAT {} {}", match op { Op::Position(_) => "pos", Op::Velocity(_) => "vel", _ => "traj" }, result.is_ok());
            }
            if let Err(e) = result {
                rejected += 1;
                prop_assert_eq!(r.status().mode, mode_before, "a rejection changes nothing: {}", e);
                prop_assert_eq!(&r.status().last_error, &e.to_string());
            }
            prop_assert_eq!(r.status().rejected_commands, rejected);
            check_invariants(&r, &format!("op {k} {op:?}"));
        }
        // Whatever happened, a velocity command is dead one timeout later.
        let end = r.time().unwrap() + 0.6;
        let s = r.step(end).clone();
        if r.status().mode == Mode::Velocity {
            prop_assert!(s.velocities.iter().all(|&v| v == 0.0));
            prop_assert!(r.status().holding);
        }
        check_invariants(&r, "end");
    }

    #[test]
    fn feasible_trajectories_pass_their_waypoints_on_time(t in feasible_trajectory(), at in 0.0..0.5f64) {
        let mut r = robot(SimConfig::default());
        r.step(at);
        let accepted = r.command_trajectory(&t, at);
        prop_assert!(accepted.is_ok(), "{:?}", accepted);
        {
            let base = if t.start_time == 0.0 { at } else { t.start_time };
            let order: Vec<usize> = t.joint_names.iter()
                .map(|n| names().iter().position(|m| m == n).unwrap())
                .collect();
            for pt in &t.points {
                let due = base + pt.time_from_start;
                if due <= at {
                    continue; // stood in for by the current state
                }
                let s = r.step(due).clone();
                for (i, &j) in order.iter().enumerate() {
                    prop_assert!(close(s.positions[j], pt.positions[i], 1e-12),
                        "due {} joint {}: {} vs {}", due, j, s.positions[j], pt.positions[i]);
                }
                check_invariants(&r, "waypoint");
            }
            prop_assert!(r.status().holding);
        }
    }
}
