//! The paper's two experiments as deterministic simulations (used by `vf_reproduce` and the
//! tests): the rotational RCM-cone task of sec. IV and the translational sine-path task of
//! sec. V, each with an autonomous ("perfect user") or cooperative ([`SimulatedUser`]) operator.

use nalgebra::{Isometry3, Point3, Vector3, Vector6};

use crate::controller::{AdmittanceController, ControllerConfig, Limits, Mode, Shaping};
use crate::law::Compliance;
use crate::projection::RankTolerance;
use crate::source::{Guidance, GuidanceSource, PolylinePath, RcmCone};
use crate::steady_hand::{RobotImperfections, SteadyHandRobot};
use crate::user::{autonomous_force, Observation, SimulatedUser, UserModel};

/// Who applies the wrench.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Operator {
    /// Autonomous mode: the wrench is the open-loop preferred direction scaled to this
    /// magnitude [N or N·m].
    Autonomous(f64),
    /// Cooperative mode: the simulated user with this model and seed.
    Cooperative(UserModel, u64),
}

impl Operator {
    /// The simulated user of the cooperative mode, for control period `dt` \[s\]; `None` in
    /// autonomous mode.
    fn user(&self, dt: f64) -> Option<SimulatedUser> {
        match *self {
            Operator::Cooperative(m, seed) => Some(SimulatedUser::new(m, dt, seed)),
            Operator::Autonomous(_) => None,
        }
    }

    /// The wrench applied this control period: in autonomous mode the preferred direction
    /// `preferred` scaled to the mode's magnitude; in cooperative mode the answer of `user`
    /// (from [`Operator::user`]) to what it is shown, its delay line filled with `shown` at
    /// the `first` period.
    fn wrench(
        &self,
        user: &mut Option<SimulatedUser>,
        preferred: &Vector6<f64>,
        shown: Observation,
        first: bool,
        dt: f64,
    ) -> Vector6<f64> {
        match (user, *self) {
            (_, Operator::Autonomous(mag)) => autonomous_force(preferred, mag),
            (Some(u), _) => {
                if first {
                    u.prime(shown);
                }
                u.step(shown, dt)
            }
            (None, _) => unreachable!("a cooperative operator has a user"),
        }
    }
}

/// Settings of the rotational cone task (sec. IV).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ConeTask {
    /// Cone half-angle γ \[rad\].
    pub half_angle: f64,
    /// Simulated duration \[s\].
    pub duration: f64,
    /// Control period \[s\].
    pub dt: f64,
    /// Compliance (`c` in rad/s per N·m).
    pub compliance: Compliance,
    /// Open loop or closed loop with `k_d`.
    pub mode: Mode,
    /// Gain of the cone's error command (see [`RcmCone::with_error_gain`]).
    pub error_gain: f64,
    /// Who applies the wrench: the seeded simulated user or the autonomous "perfect user".
    pub operator: Operator,
    /// Deviations of the simulated robot from the ideal kinematic model (none by default).
    pub imperfections: RobotImperfections,
}

/// Result of a cone run: tool-end positions (tool length 1, RCM at the origin) and errors.
#[derive(Debug, Clone, Default)]
pub struct ConeRun {
    /// Tool-end positions, one per recorded sample.
    pub path: Vec<Point3<f64>>,
    /// Angle error to the cone \[rad\] at each sample.
    pub angle_error: Vec<f64>,
    /// Total angle swept about the cone axis \[rad\].
    pub swept: f64,
}

impl ConeRun {
    /// Mean |angle error| over the run \[rad\].
    pub fn mean_abs_error(&self) -> f64 {
        self.angle_error.iter().map(|e| e.abs()).sum::<f64>() / self.angle_error.len().max(1) as f64
    }
    /// Mean |angle error| over the last quarter of the run \[rad\].
    pub fn final_abs_error(&self) -> f64 {
        let n = self.angle_error.len();
        let tail = &self.angle_error[n - n / 4..];
        tail.iter().map(|e| e.abs()).sum::<f64>() / tail.len().max(1) as f64
    }
}

impl ConeTask {
    /// Runs the task from the tool tilted by `start_angle` \[rad\] about the base x axis.
    pub fn run(&self, start_angle: f64) -> ConeRun {
        let mut cone = RcmCone::new(
            Point3::origin(),
            Vector3::z(),
            self.half_angle,
            Vector3::z(),
        )
        .expect("valid cone")
        .with_error_gain(self.error_gain);
        let mut robot = SteadyHandRobot::new(
            Vector6::new(0.0, 0.0, 0.0, start_angle, 0.0, 0.0),
            self.imperfections,
        );
        let cfg = ControllerConfig {
            compliance: self.compliance,
            mode: self.mode,
            shaping: Shaping::default(),
            limits: Limits::default(),
            rank_tolerance: RankTolerance::default(),
        };
        let mut ctl = AdmittanceController::new(cfg).expect("valid controller settings");
        let mut user = self.operator.user(self.dt);
        let steps = (self.duration / self.dt).round() as usize;
        let every = (steps / 4000).max(1);
        let mut run = ConeRun::default();
        let mut g = Guidance::empty();
        let mut g_true = Guidance::empty();
        let mut prev_az = f64::NAN;
        for k in 0..steps {
            let measured = robot.measured_pose();
            cone.evaluate(&measured, &mut g);
            let truth = robot.pose();
            cone.evaluate(&truth, &mut g_true);
            // The user sees the true tool axis; the autonomous mode pushes along the
            // measured preferred direction.
            let shown = Observation {
                intended: g_true.columns()[0],
                error: g_true.u / self.error_gain.max(1e-300),
            };
            let f = self
                .operator
                .wrench(&mut user, &g.columns()[0], shown, k == 0, self.dt);
            let (v, _) = ctl.step(&f, &g, self.dt).expect("finite simulation input");
            robot.step(&v, self.dt);
            let z = robot.pose().rotation * Vector3::z();
            let az = z.y.atan2(z.x);
            if prev_az.is_finite() {
                let mut d = az - prev_az;
                d -= (d / std::f64::consts::TAU).round() * std::f64::consts::TAU;
                run.swept += d;
            }
            prev_az = az;
            if k % every == 0 {
                run.path.push(Point3::from(z));
                run.angle_error.push(cone.angle_error(&z));
            }
        }
        run
    }
}

/// Settings of the translational sine-path task (sec. V).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SineTask {
    /// Amplitude \[m\] (paper: 0.035).
    pub amplitude: f64,
    /// Wavelength \[m\] (paper: 0.070).
    pub wavelength: f64,
    /// Number of wavelengths from start to end point.
    pub periods: f64,
    /// Control period \[s\].
    pub dt: f64,
    /// Compliance (`c` in m/s per N).
    pub compliance: Compliance,
    /// Open loop or closed loop with `k_d`.
    pub mode: Mode,
    /// Gain of the path's error command [1/m] (see [`PolylinePath::with_error_gain`]).
    pub error_gain: f64,
    /// Who applies the wrench: the seeded simulated user or the autonomous "perfect user".
    pub operator: Operator,
    /// Deviations of the simulated robot from the ideal kinematic model (none by default).
    pub imperfections: RobotImperfections,
    /// Give up after this time \[s\].
    pub timeout: f64,
}

/// Result of a sine-path run.
#[derive(Debug, Clone, Default)]
pub struct SineRun {
    /// Tool positions (x, y) \[m\].
    pub path: Vec<(f64, f64)>,
    /// Execution time from start to end point \[s\] (the timeout if not reached).
    pub time: f64,
    /// Mean distance to the path over the run \[m\].
    pub mean_error: f64,
    /// Largest distance to the path \[m\].
    pub max_error: f64,
    /// Whether the end point was reached.
    pub completed: bool,
}

impl SineTask {
    /// The reference path as a polyline (1000 points per wavelength).
    pub fn reference(&self) -> PolylinePath {
        let n = (1000.0 * self.periods).ceil() as usize;
        let len = self.wavelength * self.periods;
        let pts: Vec<_> = (0..=n)
            .map(|i| {
                let x = len * i as f64 / n as f64;
                Point3::new(
                    x,
                    self.amplitude * (std::f64::consts::TAU * x / self.wavelength).sin(),
                    0.0,
                )
            })
            .collect();
        PolylinePath::new(&pts)
            .expect("valid sine path")
            .with_error_gain(self.error_gain)
    }

    /// Runs one trial.
    pub fn run(&self) -> SineRun {
        let mut path = self.reference();
        let total = path.length();
        let mut robot = SteadyHandRobot::new(Vector6::zeros(), self.imperfections);
        let cfg = ControllerConfig {
            compliance: self.compliance,
            mode: self.mode,
            shaping: Shaping::default(),
            limits: Limits {
                linear_velocity: 0.2,
                angular_velocity: 1.0,
                ..Limits::default()
            },
            rank_tolerance: RankTolerance::default(),
        };
        let mut ctl = AdmittanceController::new(cfg).expect("valid controller settings");
        let mut user = self.operator.user(self.dt);
        let mut g = Guidance::empty();
        let mut run = SineRun::default();
        let mut sum = 0.0;
        let max_steps = (self.timeout / self.dt).round() as usize;
        let mut k = 0;
        while k < max_steps {
            let x: Isometry3<f64> = robot.measured_pose();
            let p = Point3::from(x.translation.vector);
            let c = path.closest_point(&p);
            if c.arc_length >= total - 1e-3 || p.x >= self.wavelength * self.periods {
                run.completed = true;
                break;
            }
            path.evaluate(&x, &mut g);
            let shown = Observation {
                intended: g.columns()[0],
                error: g.u / self.error_gain,
            };
            let f = self
                .operator
                .wrench(&mut user, &g.columns()[0], shown, k == 0, self.dt);
            let (v, _) = ctl.step(&f, &g, self.dt).expect("finite simulation input");
            robot.step(&v, self.dt);
            sum += c.distance;
            run.max_error = run.max_error.max(c.distance);
            if k % 10 == 0 {
                run.path.push((p.x, p.y));
            }
            k += 1;
        }
        run.time = k as f64 * self.dt;
        run.mean_error = sum / k.max(1) as f64;
        run
    }
}

/// The user model of the reproduction's sine task (forces in N, errors in m).
pub fn sine_user() -> UserModel {
    UserModel {
        push: 2.5,
        slow_down_error: 0.005,
        correction_gain: 200.0,
        bias: 0.3,
        tremor_amplitude: 0.15,
        tremor_frequency: 9.0,
        noise: 0.1,
        reaction_delay: 0.2,
        visual_rate: 30.0,
        mask: Vector6::new(1.0, 1.0, 0.0, 0.0, 0.0, 0.0),
    }
}

/// The user model of the reproduction's cone task (torques in N·m, errors in rad).
pub fn cone_user() -> UserModel {
    UserModel {
        push: 1.0,
        slow_down_error: 0.3,
        correction_gain: 5.0,
        bias: 0.05,
        tremor_amplitude: 0.05,
        tremor_frequency: 9.0,
        noise: 0.05,
        reaction_delay: 0.2,
        visual_rate: 30.0,
        mask: Vector6::new(0.0, 0.0, 0.0, 1.0, 1.0, 1.0),
    }
}

/// The sine task as the reproduction runs it: paper geometry (35 mm, 70 mm, two wavelengths),
/// 1 kHz, `c = 0.0125 m/(N·s)`, `u` in millimetres, typical robot imperfections.
pub fn paper_sine_task(c_tau: f64, mode: Mode, operator: Operator) -> SineTask {
    SineTask {
        amplitude: 0.035,
        wavelength: 0.070,
        periods: 2.0,
        dt: 0.001,
        compliance: Compliance { c: 0.0125, c_tau },
        mode,
        error_gain: 1000.0,
        operator,
        imperfections: RobotImperfections::typical(),
        timeout: 40.0,
    }
}

/// The cone task as the reproduction runs it: γ = 30°, 100 Hz, `c = 0.5 rad/(N·m·s)`,
/// hard fixture, typical robot imperfections.
pub fn paper_cone_task(mode: Mode, operator: Operator, duration: f64) -> ConeTask {
    ConeTask {
        half_angle: 30f64.to_radians(),
        duration,
        dt: 0.01,
        compliance: Compliance { c: 0.5, c_tau: 0.0 },
        mode,
        error_gain: 1.0,
        operator,
        imperfections: RobotImperfections::typical(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closed_loop_cone_converges_open_loop_drifts() {
        let open = paper_cone_task(Mode::OpenLoop, Operator::Autonomous(1.0), 60.0)
            .run(30f64.to_radians());
        let closed = paper_cone_task(
            Mode::ClosedLoop { k_d: 0.5 },
            Operator::Autonomous(1.0),
            60.0,
        )
        .run(40f64.to_radians());
        // closed loop starts 10° off and ends on the cone; open loop starts on it and leaves
        assert!(
            closed.final_abs_error() < 0.2f64.to_radians(),
            "{}",
            closed.final_abs_error()
        );
        assert!(open.final_abs_error() > 5.0 * closed.final_abs_error());
        assert!(open.swept > 4.0 * std::f64::consts::PI);
    }

    #[test]
    fn closed_loop_sine_beats_open_loop_for_a_hard_fixture() {
        let user = Operator::Cooperative(sine_user(), 11);
        let open = paper_sine_task(0.0, Mode::OpenLoop, user).run();
        let closed = paper_sine_task(0.0, Mode::ClosedLoop { k_d: 0.08 }, user).run();
        assert!(closed.completed);
        assert!(
            closed.mean_error < 0.5 * open.mean_error,
            "{} vs {}",
            closed.mean_error,
            open.mean_error
        );
    }
}
