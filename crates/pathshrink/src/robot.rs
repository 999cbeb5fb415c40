//! The motion commands as an RX60 joint trajectory (§5.2 executed by the robot layer).
//!
//! * **One arm configuration** for the whole program: every target (approach, grasp, each
//!   line's end) is solved with the closed-form IK of `rpq_scene` in each of the eight
//!   configurations; a configuration is kept only if all targets have a solution within the
//!   joint limits. Among those, the configuration of the robot's current joints is taken if
//!   it is one of them, else the one with the least joint travel. Joints 4 and 6 (±270°) are
//!   unwound to the value closest to the previous sample.
//! * **Straight lines kept within a tolerance**: the robot interpolates linearly in joint
//!   space between trajectory points, which bends the Cartesian line. Each line is split
//!   recursively (IK at the midpoint) until the pose reached by the joint interpolation at
//!   1/4, 1/2 and 3/4 of every piece is within `line_tolerance` (m, workpiece centre) and
//!   `orientation_tolerance` (rad) of the line.
//! * **Timing**: a line lasts `max(length / speed, angle / angular_speed)`, lengthened until no
//!   joint moves faster than `velocity_scale` times its URDF velocity limit; the first point
//!   (the approach pose) is reached from the current joints by a joint move at that limit.

use nalgebra::Isometry3;
use rpq_scene::{ArmConfiguration, Robot, Rx60Ik};

use crate::environment::Environment;
use crate::error::{check_positive, PathShrinkError};
use crate::geometry::{difference, interpolate, rotation_angle, Pose};
use crate::motion::{CommandKind, MotionCommand};

/// Parameters of the conversion (units in brackets).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RobotParams {
    /// [m] largest deviation of the workpiece centre from a commanded line.
    pub line_tolerance: f64,
    /// [rad] largest orientation deviation from a commanded line.
    pub orientation_tolerance: f64,
    /// Fraction of each joint's velocity limit the trajectory may use.
    pub velocity_scale: f64,
    /// Largest number of trajectory points.
    pub max_points: usize,
}

impl Default for RobotParams {
    fn default() -> Self {
        RobotParams {
            line_tolerance: 0.0005,
            orientation_tolerance: 0.01,
            velocity_scale: 0.5,
            max_points: 5000,
        }
    }
}

impl RobotParams {
    /// Refuses values outside their ranges.
    pub fn validate(&self) -> Result<(), PathShrinkError> {
        check_positive("line_tolerance", self.line_tolerance, 0.1)?;
        check_positive("orientation_tolerance", self.orientation_tolerance, 1.0)?;
        check_positive("velocity_scale", self.velocity_scale, 1.0)?;
        if self.max_points < 2 {
            return Err(PathShrinkError::Parameter {
                name: "max_points",
                value: self.max_points as f64,
                reason: "must be at least 2".into(),
            });
        }
        Ok(())
    }
}

/// One trajectory point.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JointPoint {
    /// Joint positions [rad], URDF order.
    pub q: [f64; 6],
    /// Time from the start [s].
    pub time: f64,
}

/// The joint trajectory of a program.
#[derive(Clone, Debug, PartialEq)]
pub struct JointProgram {
    /// Joint names, URDF order.
    pub joint_names: Vec<String>,
    /// The one arm configuration.
    pub configuration: ArmConfiguration,
    /// The points (the first is the approach pose).
    pub points: Vec<JointPoint>,
    /// Index into `points` of the end of each command.
    pub command_ends: Vec<usize>,
    /// Largest deviation of the joint interpolation from the lines, measured at 20 points per
    /// piece [m] and [rad].
    pub max_position_error: f64,
    /// See `max_position_error`.
    pub max_orientation_error: f64,
}

/// A line of the program: from one workpiece-frame pose to another.
struct Line {
    from: Pose,
    to: Pose,
    speed: f64,
    angular_speed: f64,
}

/// The robot's closed-form IK, base pose and limits.
struct Arm<'a> {
    ik: &'a Rx60Ik,
    base: Isometry3<f64>,
    limits: [(f64, f64); 6],
    velocity: [f64; 6],
}

impl Arm<'_> {
    fn fk(&self, q: &[f64; 6]) -> Pose {
        self.base * self.ik.forward(q)
    }

    /// IK in configuration `c`, joints 4 and 6 unwound towards `near`, within the limits.
    fn solve(
        &self,
        flange: &Pose,
        c: ArmConfiguration,
        near: Option<&[f64; 6]>,
    ) -> Result<[f64; 6], String> {
        let mut q = self
            .ik
            .solve_unlimited(&(self.base.inverse() * flange), c)
            .map_err(|e| e.to_string())?;
        if let Some(prev) = near {
            for j in [3, 5] {
                let tau = std::f64::consts::TAU;
                let mut best = q[j];
                for k in -2..=2 {
                    let v = q[j] + tau * f64::from(k);
                    if (self.limits[j].0..=self.limits[j].1).contains(&v)
                        && (v - prev[j]).abs() < (best - prev[j]).abs()
                    {
                        best = v;
                    }
                }
                q[j] = best;
            }
        }
        for (j, (v, (lo, hi))) in q.iter().zip(&self.limits).enumerate() {
            if !(*lo..=*hi).contains(v) {
                return Err(format!(
                    "joint {} at {v:.3} rad is outside [{lo:.3}, {hi:.3}]",
                    j + 1
                ));
            }
        }
        Ok(q)
    }
}

/// The robots of a scene, in scene order (the arms that can execute a program).
pub fn scene_robots(scenario: &rpq_scene::Scenario) -> impl Iterator<Item = &Robot> {
    scenario.objects().iter().filter_map(|o| match o {
        rpq_scene::Object::Complex(r) => Some(r),
        rpq_scene::Object::Simple(_) => None,
    })
}

/// `righty/elbow+/wrist-` style name of a configuration.
pub fn config_name(c: ArmConfiguration) -> String {
    use rpq_scene::{Elbow, Shoulder, Wrist};
    format!(
        "{}/elbow{}/wrist{}",
        match c.shoulder {
            Shoulder::Righty => "righty",
            Shoulder::Lefty => "lefty",
        },
        match c.elbow {
            Elbow::Positive => "+",
            Elbow::Negative => "-",
        },
        match c.wrist {
            Wrist::Positive => "+",
            Wrist::Negative => "-",
        }
    )
}

fn lerp(a: &[f64; 6], b: &[f64; 6], u: f64) -> [f64; 6] {
    std::array::from_fn(|j| a[j] + (b[j] - a[j]) * u)
}

/// Converts motion commands to a joint trajectory (module documentation). `start`: the
/// robot's current joints, if known.
pub fn joint_program(
    env: &Environment,
    robot: &Robot,
    commands: &[MotionCommand],
    grasp: &Pose,
    start: Option<&[f64; 6]>,
    p: &RobotParams,
) -> Result<JointProgram, PathShrinkError> {
    let (ik, _) = robot
        .ik()
        .ok_or_else(|| PathShrinkError::Robot(format!("`{}` has no RX60 IK", robot.name())))?;
    let kin = robot.kinematics();
    let lim = kin.joint_limits();
    if lim.len() != 6 {
        return Err(PathShrinkError::Robot("the robot needs 6 joints".into()));
    }
    let arm = Arm {
        ik,
        base: *robot.base(),
        limits: std::array::from_fn(|j| (lim[j].lower, lim[j].upper)),
        velocity: std::array::from_fn(|j| lim[j].velocity * p.velocity_scale),
    };
    let centre = env.workpiece.centre;
    // The lines: approach -> grasp (guarded), then node to node.
    let Some(first) = commands.first() else {
        return Err(PathShrinkError::Robot("no motion commands".into()));
    };
    let (CommandKind::GuardedGrasp, Some(approach)) = (first.kind, first.approach) else {
        return Err(PathShrinkError::Robot(
            "the program must start with a guarded grasp".into(),
        ));
    };
    let mut lines = vec![Line {
        from: approach,
        to: first.workpiece,
        speed: first.speed,
        angular_speed: first.angular_speed,
    }];
    for w in commands.windows(2) {
        lines.push(Line {
            from: w[0].workpiece,
            to: w[1].workpiece,
            speed: w[1].speed,
            angular_speed: w[1].angular_speed,
        });
    }
    // One configuration for every target.
    let targets: Vec<Pose> = std::iter::once(approach)
        .chain(lines.iter().map(|l| l.to))
        .collect();
    let mut best: Option<(f64, bool, ArmConfiguration, Vec<[f64; 6]>)> = None;
    let mut reasons = Vec::new();
    for c in ArmConfiguration::ALL {
        let mut qs: Vec<[f64; 6]> = Vec::new();
        let mut ok = true;
        for (k, t) in targets.iter().enumerate() {
            match arm.solve(&(t * grasp), c, qs.last().or(start)) {
                Ok(q) => qs.push(q),
                Err(why) => {
                    reasons.push(format!("{}: target {k}: {why}", config_name(c)));
                    ok = false;
                    break;
                }
            }
        }
        if !ok {
            continue;
        }
        let travel: f64 = start
            .iter()
            .map(|s| (0..6).map(|j| (qs[0][j] - s[j]).abs()).sum::<f64>())
            .sum::<f64>()
            + qs.windows(2)
                .map(|w| (0..6).map(|j| (w[1][j] - w[0][j]).abs()).sum::<f64>())
                .sum::<f64>();
        let same = start.is_some_and(|s| ik.configuration_of(s) == c);
        let better = match &best {
            None => true,
            Some((t, s, _, _)) => (same && !s) || (same == *s && travel < *t),
        };
        if better {
            best = Some((travel, same, c, qs));
        }
    }
    let Some((_, _, config, _)) = best else {
        return Err(PathShrinkError::Robot(format!(
            "no single arm configuration reaches every target within the joint limits \
             (first failure per configuration: {})",
            reasons.join("; ")
        )));
    };

    // Points: the approach, then every line split until it is kept within the tolerance.
    let q0 = arm
        .solve(&(approach * grasp), config, start)
        .map_err(PathShrinkError::Robot)?;
    let mut points = vec![JointPoint { q: q0, time: 0.0 }];
    if let Some(s) = start {
        let t = (0..6)
            .map(|j| (q0[j] - s[j]).abs() / arm.velocity[j])
            .fold(0.0, f64::max)
            .max(1.0);
        points[0].time = t;
    }
    let mut ends = Vec::new();
    let (mut max_pe, mut max_re) = (0.0_f64, 0.0_f64);
    for (li, line) in lines.iter().enumerate() {
        let mut samples: Vec<(f64, [f64; 6])> = vec![(0.0, points.last().expect("non-empty").q)];
        let q_end = arm
            .solve(&(line.to * grasp), config, Some(&samples[0].1))
            .map_err(|e| PathShrinkError::Robot(format!("line {li}: end: {e}")))?;
        let mut stack = vec![(1.0, q_end)];
        // Depth-first subdivision: refine [last sample, top of stack].
        while let Some(&(t1, q1)) = stack.last() {
            let &(t0, q0) = samples.last().expect("non-empty");
            let bad = [0.25, 0.5, 0.75].iter().any(|&u| {
                let wp = arm.fk(&lerp(&q0, &q1, u)) * grasp.inverse();
                let on = interpolate(&line.from, &line.to, &centre, t0 + (t1 - t0) * u);
                (wp * centre - on * centre).norm() > p.line_tolerance
                    || rotation_angle(&wp, &on) > p.orientation_tolerance
            });
            if bad {
                if t1 - t0 < 1e-6 || samples.len() + stack.len() > p.max_points {
                    return Err(PathShrinkError::Robot(format!(
                        "line {li} cannot be kept within {} m: the arm passes near a \
                         singularity or needs more than {} points",
                        p.line_tolerance, p.max_points
                    )));
                }
                let tm = 0.5 * (t0 + t1);
                let wm = interpolate(&line.from, &line.to, &centre, tm);
                let qm = arm.solve(&(wm * grasp), config, Some(&q0)).map_err(|e| {
                    PathShrinkError::Robot(format!(
                        "line {li} leaves configuration {} at {:.0} % of its length: {e}",
                        config_name(config),
                        tm * 100.0
                    ))
                })?;
                stack.push((tm, qm));
            } else {
                samples.push((t1, q1));
                stack.pop();
            }
        }
        // Timing.
        let (dp, dr) = difference(&line.from, &line.to, &centre);
        let mut duration = (dp.norm() / line.speed)
            .max(dr.norm() / line.angular_speed)
            .max(0.05);
        for w in samples.windows(2) {
            let dt = (w[1].0 - w[0].0) * duration;
            for j in 0..6 {
                let need = (w[1].1[j] - w[0].1[j]).abs() / arm.velocity[j];
                if need > dt && dt > 0.0 {
                    duration *= need / dt;
                }
            }
        }
        let t_start = points.last().expect("non-empty").time;
        for w in samples.windows(2) {
            // Measured deviation of the joint interpolation (20 points per piece).
            let ((t0, q0), (t1, q1)) = (w[0], w[1]);
            for s in 1..20 {
                let u = f64::from(s) / 20.0;
                let wp = arm.fk(&lerp(&q0, &q1, u)) * grasp.inverse();
                let on = interpolate(&line.from, &line.to, &centre, t0 + (t1 - t0) * u);
                max_pe = max_pe.max((wp * centre - on * centre).norm());
                max_re = max_re.max(rotation_angle(&wp, &on));
            }
            points.push(JointPoint {
                q: q1,
                time: t_start + t1 * duration,
            });
        }
        ends.push(points.len() - 1);
    }
    if points.len() > p.max_points {
        return Err(PathShrinkError::Robot(format!(
            "the trajectory needs {} points, more than {}",
            points.len(),
            p.max_points
        )));
    }
    Ok(JointProgram {
        joint_names: kin.joint_names().map(str::to_string).collect(),
        configuration: config,
        points,
        command_ends: ends,
        max_position_error: max_pe,
        max_orientation_error: max_re,
    })
}
