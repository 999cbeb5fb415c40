//! Reference evaluation of the control law for tests of the ROS nodes: reads wrenches
//! (`fx fy fz tx ty tz` per line, base frame) on stdin and prints the twist
//! `vx vy vz wx wy wz` the library commands for each, with a fixed fixture, as independent
//! steps (no acceleration limit, so the order and any lost message do not matter).

use std::io::{BufRead, Write};

use clap::Parser;
use nalgebra::Vector6;
use rpq_virtual_fixtures::{
    AdmittanceController, Compliance, ControllerConfig, Guidance, Limits, Mode, Shaping,
};

#[derive(Parser, Debug)]
#[command(about = "Evaluate the virtual-fixture law for wrenches read from stdin")]
struct Args {
    #[arg(long, default_value_t = 0.01)]
    c: f64,
    #[arg(long, default_value_t = 0.0)]
    c_tau: f64,
    #[arg(long, default_value_t = 0.08)]
    k_d: f64,
    /// free, open_loop or closed_loop.
    #[arg(long, default_value = "open_loop")]
    mode: String,
    #[arg(long, default_value_t = 1.0)]
    force_scale: f64,
    #[arg(long, default_value_t = 1.0)]
    torque_scale: f64,
    #[arg(long, default_value_t = 0.0)]
    force_deadband: f64,
    #[arg(long, default_value_t = 0.0)]
    torque_deadband: f64,
    #[arg(long, default_value_t = f64::INFINITY)]
    max_linear_velocity: f64,
    #[arg(long, default_value_t = f64::INFINITY)]
    max_angular_velocity: f64,
    /// Columns of D: six comma-separated numbers per column, columns separated by ';'.
    #[arg(long, default_value = "")]
    d: String,
    /// u: six comma-separated numbers.
    #[arg(long, default_value = "0,0,0,0,0,0")]
    u: String,
}

fn six(s: &str) -> Result<Vector6<f64>, Box<dyn std::error::Error>> {
    let v: Vec<f64> = s
        .split([',', ' ', '\t'])
        .filter(|t| !t.is_empty())
        .map(str::parse)
        .collect::<Result<_, _>>()?;
    if v.len() != 6 {
        return Err(format!("expected 6 numbers, got `{s}`").into());
    }
    Ok(Vector6::from_column_slice(&v))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let a = Args::parse();
    let mode = match a.mode.as_str() {
        "free" => Mode::Free,
        "open_loop" => Mode::OpenLoop,
        "closed_loop" => Mode::ClosedLoop { k_d: a.k_d },
        other => return Err(format!("unknown mode {other}").into()),
    };
    let cols: Vec<Vector6<f64>> =
        a.d.split(';')
            .filter(|c| !c.trim().is_empty())
            .map(six)
            .collect::<Result<_, _>>()?;
    let guidance = Guidance::from_columns(&cols, six(&a.u)?)?;
    let config = ControllerConfig {
        compliance: Compliance::new(a.c, a.c_tau)?,
        mode,
        shaping: Shaping {
            force_deadband: a.force_deadband,
            torque_deadband: a.torque_deadband,
            force_scale: a.force_scale,
            torque_scale: a.torque_scale,
        },
        limits: Limits {
            linear_velocity: a.max_linear_velocity,
            angular_velocity: a.max_angular_velocity,
            ..Limits::default()
        },
        rank_tolerance: Default::default(),
    };
    let mut ctl = AdmittanceController::new(config)?;
    let out = std::io::stdout();
    let mut out = out.lock();
    for line in std::io::stdin().lock().lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let f = six(&line)?;
        ctl.reset();
        let (v, _) = ctl.step(&f, &guidance, 0.001)?;
        writeln!(
            out,
            "{:e} {:e} {:e} {:e} {:e} {:e}",
            v[0], v[1], v[2], v[3], v[4], v[5]
        )?;
    }
    Ok(())
}
