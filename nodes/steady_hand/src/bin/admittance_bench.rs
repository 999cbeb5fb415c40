//! `admittance_bench`: the admittance controller's control step and the Steady-Hand demo's
//! singularity pass, in-process (no DDS).
//!
//! ```text
//! admittance_bench [--out DIR] [--steps N] [--seconds S]
//! ```
//!
//! 1. **Control step time**: `AdmittanceCore::on_wrench` (wrench handling, law, motion-filter
//!    hook, damped least squares, joint limits, watchdogs) at the demo's start pose, free, with
//!    a plane (open loop) and with the demo's path (closed loop), and near the stretched-out
//!    singularity (damped), `N` steps each (default 20000): median, p99, max. Peer measured in
//!    the same run: the library's law step alone (`AdmittanceController::step`).
//! 2. **The demo's singularity pass**: the robot integrated at 500 Hz from the controller's joint
//!    velocities, `steady_hand_guidance`'s fixture (the closed loop path of
//!    `launch/steady_hand.launch.xml`, which reaches out to x = 0.585 m, next to the 0.587 m
//!    reach of the stretched-out arm), and `simulated_user`'s seeded user following it, for
//!    `S` seconds (default 60), with the parameter files' defaults. Prints the laps, the
//!    smallest singular value and largest damping met, stops and the largest joint speed, and
//!    writes `singularity_pass` and `singularity_path` (PNG + SVG) into `DIR` (default
//!    `target/admittance_bench`).

use std::error::Error;
use std::path::PathBuf;
use std::time::Instant;

use nalgebra::{Isometry3, Point3, Vector3, Vector6};
use rpq_kinematics::Robot;
use rpq_plot::Figure;
use rpq_ros::params::Params;
use rpq_virtual_fixtures::{AdmittanceController, Guidance, Observation, SimulatedUser};
use steady_hand::admittance::{AdmittanceCore, JointInput, Output, WrenchInput};
use steady_hand::convert::{points_from_flat, Fixture, FixtureMode};
use steady_hand::fixture_manager::FixtureManager;
use steady_hand::settings::{
    admittance_controller, controller_declarations, guidance_declarations, simulated_user,
    steady_hand_guidance, user_declarations, AdmittanceControllerParams, SimulatedUserParams,
    SteadyHandGuidanceParams, CONTROLLER_NODE, GUIDANCE_NODE, USER_NODE,
};

const START: [f64; 6] = [0.0, 0.5, 1.5, 0.0, 1.14, 0.0];
const DT: f64 = 0.002;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn robot() -> Result<Robot, Box<dyn Error>> {
    Ok(Robot::from_urdf_file(root().join("urdf/rx60b.urdf"))?)
}

fn controller_params() -> Result<AdmittanceControllerParams, Box<dyn Error>> {
    let p = Params::resolve(
        &controller_declarations(),
        &format!("/{CONTROLLER_NODE}"),
        &[("config", admittance_controller::CONFIG_YAML)],
        &[],
    )?;
    Ok(AdmittanceControllerParams::load(&p)?)
}

/// The demo's path: `path.points` of steady_hand_guidance in launch/steady_hand.launch.xml.
fn demo_path() -> Result<Vec<Point3<f64>>, Box<dyn Error>> {
    let text = std::fs::read_to_string(root().join("launch/steady_hand.launch.xml"))?;
    let key = "name=\"path.points\" value=\"[";
    let at = text.find(key).ok_or("no path.points in the launch file")? + key.len();
    let list = &text[at..text[at..].find(']').ok_or("unterminated path.points")? + at];
    let values: Vec<f64> = list
        .split(',')
        .map(|v| v.trim().parse::<f64>())
        .collect::<Result<_, _>>()?;
    Ok(points_from_flat(&values)?)
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn summary(mut t: Vec<f64>) -> (f64, f64, f64) {
    t.sort_by(f64::total_cmp);
    (
        percentile(&t, 0.5),
        percentile(&t, 0.99),
        *t.last().unwrap_or(&0.0),
    )
}

/// Step times [µs] of `steps` wrenches at `q` with an optional fixture.
fn time_core(
    q: &[f64; 6],
    fixture: Option<Fixture>,
    steps: usize,
) -> Result<Vec<f64>, Box<dyn Error>> {
    let mut core = AdmittanceCore::new(robot()?, controller_params()?.core_config()?)?;
    let mut times = Vec::with_capacity(steps);
    let mut t = 1000.0;
    let tool = core.robot().link_pose("tool0", q)?;
    for k in 0..steps + 100 {
        t += DT;
        if let Some(f) = &fixture {
            core.on_fixture(f.clone(), Some(t), t);
        }
        core.on_joint_state(&JointInput {
            positions: q,
            velocities: None,
            stamp: Some(t),
            received: t,
        })?;
        // a wobbling 5 N push in the tool frame
        let f = tool.rotation.inverse() * Vector3::new(5.0, 2.0 * (k as f64 * 0.01).sin(), 1.0);
        let w = WrenchInput {
            frame_id: "tool0",
            wrench: Vector6::new(f.x, f.y, f.z, 0.01, 0.0, 0.0),
            stamp: Some(t),
            received: t,
        };
        let t0 = Instant::now();
        let out = core.on_wrench(&w, t);
        let dt = t0.elapsed().as_secs_f64() * 1e6;
        if !matches!(out.0, Output::Motion { .. }) {
            return Err(format!(
                "step {k}: the controller stopped: {:?}",
                core.status().reason
            )
            .into());
        }
        if k >= 100 {
            times.push(dt);
        }
    }
    Ok(times)
}

fn run() -> Result<(), Box<dyn Error>> {
    let mut out = root().join("target/admittance_bench");
    let mut steps = 20_000usize;
    let mut seconds = 60.0f64;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().ok_or(format!("{a} needs a value"));
        match a.as_str() {
            "--out" => out = PathBuf::from(value()?),
            "--steps" => steps = value()?.parse()?,
            "--seconds" => seconds = value()?.parse()?,
            other => {
                return Err(format!(
                    "unknown argument `{other}` (--out DIR, --steps N, --seconds S)"
                )
                .into())
            }
        }
    }
    std::fs::create_dir_all(&out)?;

    // 1. step time
    let plane = Fixture {
        guidance: Guidance::from_columns(
            &[Vector6::x(), Vector6::y()],
            Vector6::new(0.0, 0.0, 0.3, 0.0, 0.0, 0.0),
        )?,
        mode: FixtureMode::OpenLoop,
        fixture_type: 3,
        frame_id: String::new(),
    };
    let path = Fixture {
        guidance: Guidance::from_columns(
            &[Vector6::new(0.1, 1.0, 0.0, 0.0, 0.0, 0.0)],
            Vector6::new(0.5, 0.0, 0.0, 0.0, 0.0, 0.0),
        )?,
        mode: FixtureMode::ClosedLoop,
        fixture_type: 2,
        frame_id: String::new(),
    };
    let stretched = [0.0, 1.2, 0.02, 0.0, std::f64::consts::PI - 1.22, 0.0];
    let mut law = AdmittanceController::new(controller_params()?.control()?)?;
    let mut law_times = Vec::with_capacity(steps);
    let g = plane.guidance;
    for k in 0..steps {
        let f = Vector6::new(5.0, 2.0 * (k as f64 * 0.01).sin(), 1.0, 0.01, 0.0, 0.0);
        let t0 = Instant::now();
        let r = law.step(&f, &g, DT);
        law_times.push(t0.elapsed().as_secs_f64() * 1e6);
        r?;
    }
    println!("control step time [µs] over {steps} steps (median / p99 / max):");
    let (m, p, x) = summary(law_times);
    println!("  library law step alone (peer)             {m:6.2} / {p:6.2} / {x:7.1}");
    for (what, q, fx) in [
        ("AdmittanceCore, free", START, None),
        (
            "AdmittanceCore, plane, open loop",
            START,
            Some(plane.clone()),
        ),
        ("AdmittanceCore, path, closed loop", START, Some(path)),
        (
            "AdmittanceCore, plane, stretched (damped)",
            stretched,
            Some(plane),
        ),
    ] {
        let (m, p, x) = summary(time_core(&q, fx, steps)?);
        println!("  {what:<42}{m:6.2} / {p:6.2} / {x:7.1}");
    }

    // 2. the demo's singularity pass
    let robot = robot()?;
    let s = controller_params()?;
    let mut core = AdmittanceCore::new(robot.clone(), s.core_config()?)?;
    let gp = SteadyHandGuidanceParams::from_params(&Params::resolve(
        &guidance_declarations(),
        &format!("/{GUIDANCE_NODE}"),
        &[("config", steady_hand_guidance::CONFIG_YAML)],
        &[],
    )?)?;
    let sources = gp.sources()?;
    let sources = FixtureManager::with_path(sources, &demo_path()?)?;
    let mut manager = FixtureManager::new(sources, "path", FixtureMode::ClosedLoop)?;
    let up = SimulatedUserParams::from_params(&Params::resolve(
        &user_declarations(),
        &format!("/{USER_NODE}"),
        &[("config", simulated_user::CONFIG_YAML)],
        &[],
    )?)?;
    let mut user = SimulatedUser::new(up.user_model(), DT, up.seed as u64);
    let hint = Vector6::from_column_slice(&up.direction_hint);
    let mut obs = Observation {
        intended: hint.normalize(),
        error: Vector6::zeros(),
    };
    user.prime(obs);
    let mut q = START.to_vec();
    let mut qd = vec![0.0; 6];
    let mut g = Guidance::empty();
    let mut t = 1000.0;
    let (mut sigma_min, mut damping_max, mut qd_max) = (f64::INFINITY, 0.0f64, 0.0f64);
    let (mut laps, mut out_far) = (0, false);
    let mut series: [Vec<(f64, f64)>; 4] = Default::default();
    let mut xy = Vec::new();
    let mut stops = 0;
    let fixture_every = (0.005 / DT).round() as usize; // steady_hand_guidance at 200 Hz
    let n = (seconds / DT) as usize;
    for k in 0..n {
        t += DT;
        let pose: Isometry3<f64> = robot.link_pose("tool0", &q)?;
        if k % fixture_every == 0 {
            let ev = manager.evaluate(&pose, &mut g, t)?;
            core.on_fixture(
                Fixture {
                    guidance: g,
                    mode: ev.mode,
                    fixture_type: 2,
                    frame_id: "base_link".into(),
                },
                Some(t),
                t,
            );
            // what simulated_user sees: D's first column, kept pointing the way it goes
            if let Some(d) = g.columns().first().and_then(|d| d.try_normalize(1e-300)) {
                obs.intended = if d.dot(&obs.intended) < 0.0 { -d } else { d };
            }
            obs.error = g.u / up.error_gain;
        }
        core.on_joint_state(&JointInput {
            positions: &q,
            velocities: Some(&qd),
            stamp: Some(t),
            received: t,
        })?;
        let f = user.step(obs, DT);
        let w = WrenchInput {
            frame_id: &up.frame_id,
            wrench: f,
            stamp: Some(t),
            received: t,
        };
        match core.on_wrench(&w, t).0 {
            Output::Motion {
                joint_velocities, ..
            } => qd.copy_from_slice(joint_velocities),
            _ => {
                stops += 1;
                qd.iter_mut().for_each(|x| *x = 0.0);
            }
        }
        for (a, b) in q.iter_mut().zip(&qd) {
            *a += b * DT;
        }
        let st = core.status();
        let p = pose.translation.vector;
        sigma_min = sigma_min.min(st.sigma_min);
        damping_max = damping_max.max(st.damping);
        qd_max = qd_max.max(qd.iter().fold(0.0, |m: f64, x| m.max(x.abs())));
        if p.x > 0.57 && !out_far {
            laps += 1;
        }
        out_far = p.x > 0.57 || (out_far && p.x > 0.5);
        if k % 10 == 0 {
            let ts = t - 1000.0;
            series[0].push((ts, p.x));
            series[1].push((ts, st.sigma_min));
            series[2].push((ts, st.damping));
            series[3].push((
                ts,
                Vector3::new(st.wrench[0], st.wrench[1], st.wrench[2]).norm() * 0.01,
            ));
            xy.push((p.x, p.y));
        }
    }
    println!(
        "demo singularity pass over {seconds} s: {laps} passes out to x > 0.57 m (reach of the \
         stretched-out arm 0.587 m), smallest singular value {sigma_min:.4} (damping starts at \
         {}), damping up to {damping_max:.4}, largest joint speed {qd_max:.2} rad/s, {stops} \
         periods stopped",
        s.singularity.damping_threshold
    );
    let stem = out.join("singularity_pass");
    Figure::new(
        "Steady-Hand demo: passing the stretched-out singularity (damped least squares)",
        "time [s]",
        "x [m], sigma_min [m or 1], damping [m or 1]",
    )
    .line("tool x", &series[0])
    .line("smallest singular value", &series[1])
    .line("damping lambda", &series[2])
    .save(&stem)?;
    Figure::new("Steady-Hand demo: tool path", "x [m]", "y [m]")
        .line("tool", &xy)
        .equal_axes(true)
        .save(out.join("singularity_path"))?;
    println!(
        "figures: {}.{{png,svg}}, {}.{{png,svg}}",
        stem.display(),
        out.join("singularity_path").display()
    );
    if stops > 0 {
        return Err(format!("the controller stopped for {stops} periods").into());
    }
    Ok(())
}

fn main() -> std::process::ExitCode {
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("admittance_bench: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
