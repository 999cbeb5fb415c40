//! Configuration of the simulation core (the subset of `config/robot_sim.yaml` it uses).

use std::str::FromStr;

use super::{JointSpec, SimError};

/// How a position command (`/forward_position_controller/commands`) moves the joints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PositionCommandMode {
    /// Each joint moves toward its target independently, at most at its velocity limit and,
    /// when it has an acceleration limit, accelerating and braking within it (so that it
    /// stops on the target). Joints are not synchronised: for a straight line in joint space
    /// send a trajectory. This is the default.
    #[default]
    RateLimited,
    /// The joints jump to the target at the next step and report zero velocity, as
    /// ros2_control's mock components do. Ignores velocity limits: for tests only.
    Instant,
}

impl FromStr for PositionCommandMode {
    type Err = SimError;

    /// Parses the parameter value `"rate_limited"` or `"instant"`.
    fn from_str(s: &str) -> Result<Self, SimError> {
        match s {
            "rate_limited" => Ok(Self::RateLimited),
            "instant" => Ok(Self::Instant),
            other => Err(SimError::InvalidConfig {
                parameter: "position_command_mode",
                reason: format!("`{other}` is neither `rate_limited` nor `instant`"),
            }),
        }
    }
}

/// Settings of the simulation core. `Default` gives the documented defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct SimConfig {
    /// Integration rate (Hz): the longest integration sub-step is `1 / update_rate_hz`.
    pub update_rate_hz: f64,
    /// A velocity command older than this (s) stops the robot.
    pub velocity_command_timeout_s: f64,
    /// How position commands move the joints.
    pub position_command_mode: PositionCommandMode,
    /// Start positions (rad or m), one per joint; empty means zero clamped into each joint's limits.
    pub initial_positions: Vec<f64>,
    /// Acceleration limits (rad/s² or m/s²), one per joint, `0` meaning unlimited; empty means
    /// no acceleration limits. They shape position and velocity commands; trajectories are
    /// followed as interpolated.
    pub max_accelerations: Vec<f64>,
    /// Largest distance (rad or m) between the current position and a trajectory's first point
    /// when that point is due now or earlier (MoveIt's "current state at time 0" point).
    pub trajectory_start_tolerance: f64,
    /// Accept trajectories that name only some joints; the others hold their position.
    pub allow_partial_joints_goal: bool,
    /// Accept trajectories whose last point has a non-zero velocity (the joints stop dead there).
    pub allow_nonzero_velocity_at_trajectory_end: bool,
}

impl Default for SimConfig {
    fn default() -> Self {
        Self {
            update_rate_hz: 100.0,
            velocity_command_timeout_s: 0.5,
            position_command_mode: PositionCommandMode::RateLimited,
            initial_positions: Vec::new(),
            max_accelerations: Vec::new(),
            trajectory_start_tolerance: 0.01,
            allow_partial_joints_goal: false,
            allow_nonzero_velocity_at_trajectory_end: false,
        }
    }
}

impl SimConfig {
    /// Checks every value against `joints`; returns the start positions and the per-joint
    /// acceleration limits.
    pub(crate) fn resolve(
        &self,
        joints: &[JointSpec],
    ) -> Result<(Vec<f64>, Vec<Option<f64>>), SimError> {
        let bad =
            |parameter: &'static str, reason: String| SimError::InvalidConfig { parameter, reason };
        if !(self.update_rate_hz.is_finite() && self.update_rate_hz > 0.0) {
            return Err(bad(
                "update_rate",
                format!("{} must be finite and positive", self.update_rate_hz),
            ));
        }
        if !(self.velocity_command_timeout_s.is_finite() && self.velocity_command_timeout_s > 0.0) {
            return Err(bad(
                "velocity_command_timeout",
                format!(
                    "{} must be finite and positive",
                    self.velocity_command_timeout_s
                ),
            ));
        }
        if !(self.trajectory_start_tolerance.is_finite() && self.trajectory_start_tolerance >= 0.0)
        {
            return Err(bad(
                "trajectory_start_tolerance",
                format!(
                    "{} must be finite and not negative",
                    self.trajectory_start_tolerance
                ),
            ));
        }
        let n = joints.len();
        let initial = if self.initial_positions.is_empty() {
            joints
                .iter()
                .map(|j| {
                    let (lo, hi) = j.bounds();
                    0.0_f64.clamp(lo, hi)
                })
                .collect()
        } else {
            if self.initial_positions.len() != n {
                return Err(bad(
                    "initial_positions",
                    format!(
                        "{} values for {n} joints (give one per joint, or none)",
                        self.initial_positions.len()
                    ),
                ));
            }
            for (j, &p) in joints.iter().zip(&self.initial_positions) {
                let (lo, hi) = j.bounds();
                if !p.is_finite() || p < lo || p > hi {
                    return Err(bad(
                        "initial_positions",
                        format!(
                            "{p} for joint `{}` is not a finite value within [{lo}, {hi}]",
                            j.name
                        ),
                    ));
                }
            }
            self.initial_positions.clone()
        };
        let accel = if self.max_accelerations.is_empty() {
            vec![None; n]
        } else {
            if self.max_accelerations.len() != n {
                return Err(bad(
                    "max_accelerations",
                    format!(
                        "{} values for {n} joints (give one per joint, or none)",
                        self.max_accelerations.len()
                    ),
                ));
            }
            let mut out = Vec::with_capacity(n);
            for (j, &a) in joints.iter().zip(&self.max_accelerations) {
                if !(a.is_finite() && a >= 0.0) {
                    return Err(bad(
                        "max_accelerations",
                        format!(
                            "{a} for joint `{}` must be finite and not negative (0 = unlimited)",
                            j.name
                        ),
                    ));
                }
                out.push((a > 0.0).then_some(a));
            }
            out
        };
        Ok((initial, accel))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn joints() -> Vec<JointSpec> {
        vec![
            JointSpec::revolute("a", 0.5, 1.0, 1.0),
            JointSpec::revolute("b", -1.0, -0.25, 1.0),
            JointSpec::continuous("c", 1.0),
        ]
    }

    #[test]
    fn defaults_clamp_zero_into_limits() {
        let (init, acc) = SimConfig::default().resolve(&joints()).unwrap();
        assert_eq!(init, vec![0.5, -0.25, 0.0]);
        assert_eq!(acc, vec![None, None, None]);
    }

    #[test]
    fn accelerations_zero_means_unlimited() {
        let cfg = SimConfig {
            max_accelerations: vec![2.0, 0.0, 3.0],
            ..SimConfig::default()
        };
        let (_, acc) = cfg.resolve(&joints()).unwrap();
        assert_eq!(acc, vec![Some(2.0), None, Some(3.0)]);
    }

    #[test]
    fn parses_position_mode() {
        assert_eq!(
            "rate_limited".parse::<PositionCommandMode>().unwrap(),
            PositionCommandMode::RateLimited
        );
        assert_eq!(
            "instant".parse::<PositionCommandMode>().unwrap(),
            PositionCommandMode::Instant
        );
        assert!(matches!(
            "fast".parse::<PositionCommandMode>(),
            Err(SimError::InvalidConfig {
                parameter: "position_command_mode",
                ..
            })
        ));
    }

    #[test]
    fn bad_values_name_their_parameter() {
        let d = SimConfig::default;
        let cases: Vec<(SimConfig, &str)> = vec![
            (
                SimConfig {
                    update_rate_hz: 0.0,
                    ..d()
                },
                "update_rate",
            ),
            (
                SimConfig {
                    update_rate_hz: f64::NAN,
                    ..d()
                },
                "update_rate",
            ),
            (
                SimConfig {
                    velocity_command_timeout_s: -1.0,
                    ..d()
                },
                "velocity_command_timeout",
            ),
            (
                SimConfig {
                    velocity_command_timeout_s: f64::INFINITY,
                    ..d()
                },
                "velocity_command_timeout",
            ),
            (
                SimConfig {
                    trajectory_start_tolerance: -0.1,
                    ..d()
                },
                "trajectory_start_tolerance",
            ),
            (
                SimConfig {
                    initial_positions: vec![0.6, -0.5],
                    ..d()
                },
                "initial_positions",
            ),
            (
                SimConfig {
                    initial_positions: vec![0.6, 0.0, 0.0],
                    ..d()
                },
                "initial_positions",
            ),
            (
                SimConfig {
                    initial_positions: vec![0.6, -0.5, f64::NAN],
                    ..d()
                },
                "initial_positions",
            ),
            (
                SimConfig {
                    max_accelerations: vec![1.0],
                    ..d()
                },
                "max_accelerations",
            ),
            (
                SimConfig {
                    max_accelerations: vec![1.0, -1.0, 1.0],
                    ..d()
                },
                "max_accelerations",
            ),
        ];
        for (cfg, name) in cases {
            match cfg.resolve(&joints()) {
                Err(SimError::InvalidConfig { parameter, .. }) => assert_eq!(parameter, name),
                other => panic!("{cfg:?} gave {other:?}"),
            }
        }
    }
}
