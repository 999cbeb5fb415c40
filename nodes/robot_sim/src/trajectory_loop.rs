//! The `trajectory_loop` node's pure part: its parameters (generated from
//! `params/trajectory_loop.yaml`, with the rule linking `waypoints` to `joint_names`), the
//! schedule of the looping trajectory, and the messages it sends.
//!
//! The loop's waypoints are due on a grid of the node's clock: waypoint `i` (of `n`) is reached
//! at every time `g × segment_duration` with `g ≡ i + 1 (mod n)`, so a loop ends on a multiple
//! of the period `n × segment_duration`. A node started in the middle of a period first sends the
//! rest of that period, then whole loops; two nodes with the same period therefore move in step
//! whenever each was started, which is how `launch/proximity.launch.xml` makes two arms meet.
//!
//! ```
//! use robot_sim::trajectory_loop::LoopPlan;
//!
//! // two joints, three waypoints, 2 s apart: a 6 s loop
//! let plan = LoopPlan::new(
//!     vec!["a".into(), "b".into()],
//!     &[0.0, 0.0, 1.0, 0.0, 1.0, 1.0],
//!     2.0,
//! )?;
//! assert_eq!(plan.period(), 6.0);
//! // at t = 12.3 s: the period boundary 12 s has just passed (less than a quarter segment
//! // ago), so the whole loop is sent from 12 s on, ending at 18 s
//! let step = plan.next(12.3);
//! assert_eq!((step.start, step.end), (12.0, 18.0));
//! assert_eq!(step.message.points.len(), 3);
//! // at t = 13 s: the rest of the loop from the next grid point (waypoints 1 and 2), still
//! // ending at 18 s
//! let step = plan.next(13.0);
//! assert_eq!((step.start, step.end, step.first_waypoint), (14.0, 18.0, 1));
//! assert_eq!(step.message.points[0].positions, [1.0, 0.0]);
//! # Ok::<(), robot_sim::NodeError>(())
//! ```

use rpq_ros::msg::builtin_interfaces::{Duration, Time};
use rpq_ros::msg::sensor_msgs::JointState;
use rpq_ros::msg::std_msgs::Header;
use rpq_ros::msg::trajectory_msgs::{JointTrajectory, JointTrajectoryPoint};
use rpq_ros::params::Params;

use crate::NodeError;

mod generated {
    include!(concat!(env!("OUT_DIR"), "/trajectory_loop.rs"));
}
pub use generated::{
    declarations, names, TrajectoryLoopParams, CONFIG_FILE, CONFIG_YAML, NODE_NAME,
};

/// Topic of the joint states read (relative).
pub use crate::ros_io::JOINT_STATES_TOPIC;
/// Topic of the trajectories sent (relative, as `joint_trajectory_controller` subscribes it).
pub use crate::ros_io::TRAJECTORY_TOPIC;

/// How late after a grid point (as a fraction of `segment_duration`) [`LoopPlan::next`] still
/// starts the trajectory from that point rather than from the next one: a node woken a little
/// late at the end of a loop sends the whole next loop, its first segment only that much shorter.
pub const GRID_SLACK: f64 = 0.25;

/// Largest distance (rad or m) between the joints and the loop's last waypoint at the end of a
/// loop that is not worth a warning (the arm then did not follow: a refused trajectory, or
/// another command in between).
pub const END_TOLERANCE: f64 = 0.05;

impl TrajectoryLoopParams {
    /// Reads every parameter and checks what the definition cannot: at least one joint, no
    /// joint named twice, and `waypoints` holding a whole number (at least one) of waypoints.
    pub fn load(p: &Params) -> Result<TrajectoryLoopParams, NodeError> {
        let s = TrajectoryLoopParams::from_params(p)?;
        s.plan()?;
        Ok(s)
    }

    /// The loop these parameters describe.
    pub fn plan(&self) -> Result<LoopPlan, NodeError> {
        LoopPlan::new(
            self.joint_names.clone(),
            &self.waypoints,
            self.segment_duration,
        )
    }
}

/// A loop through fixed waypoints, `segment` seconds apart (see the module docs).
#[derive(Debug, Clone, PartialEq)]
pub struct LoopPlan {
    joint_names: Vec<String>,
    waypoints: Vec<Vec<f64>>,
    segment: f64,
}

/// One trajectory of the loop, as [`LoopPlan::next`] gives it.
#[derive(Debug, Clone, PartialEq)]
pub struct LoopStep {
    /// The trajectory message; its `header.stamp` is `start`.
    pub message: JointTrajectory,
    /// When (s on the node's clock) the trajectory's time counts from: a grid point at most
    /// [`GRID_SLACK`] segments before the time asked for, or after it.
    pub start: f64,
    /// When (s on the node's clock) the last waypoint is reached: a multiple of the period.
    pub end: f64,
    /// Index of the first waypoint in the message.
    pub first_waypoint: usize,
}

fn invalid(parameter: &str, reason: String) -> NodeError {
    NodeError::config(parameter, reason)
}

impl LoopPlan {
    /// A loop of the waypoints in `flat` (one value per joint of `joint_names`, waypoint after
    /// waypoint), `segment` seconds apart. Fails, naming the parameter, on no joints, a joint
    /// named twice, a length that is not a positive multiple of the joint count, a non-finite
    /// value, or a segment that is not a positive finite time.
    pub fn new(joint_names: Vec<String>, flat: &[f64], segment: f64) -> Result<Self, NodeError> {
        if joint_names.is_empty() {
            return Err(invalid(names::JOINT_NAMES, "no joint given".into()));
        }
        if let Some((k, name)) = joint_names
            .iter()
            .enumerate()
            .find(|(k, name)| joint_names[..*k].contains(name))
        {
            return Err(invalid(
                names::JOINT_NAMES,
                format!("`{name}` is given twice (entry {k})"),
            ));
        }
        let m = joint_names.len();
        if flat.is_empty() || !flat.len().is_multiple_of(m) {
            return Err(invalid(
                names::WAYPOINTS,
                format!(
                    "{} values are not a whole number of waypoints of {m} joints",
                    flat.len()
                ),
            ));
        }
        if let Some(v) = flat.iter().find(|v| !v.is_finite()) {
            return Err(invalid(names::WAYPOINTS, format!("{v} is not finite")));
        }
        if !(segment.is_finite() && segment > 0.0) {
            return Err(invalid(
                names::SEGMENT_DURATION,
                format!("{segment} s is not a positive time"),
            ));
        }
        Ok(Self {
            waypoints: flat.chunks(m).map(<[f64]>::to_vec).collect(),
            joint_names,
            segment,
        })
    }

    /// The joints, in the order of each waypoint's values.
    pub fn joint_names(&self) -> &[String] {
        &self.joint_names
    }

    /// The waypoints, one vector per waypoint.
    pub fn waypoints(&self) -> &[Vec<f64>] {
        &self.waypoints
    }

    /// Length of one loop (s): waypoints × segment duration.
    pub fn period(&self) -> f64 {
        self.waypoints.len() as f64 * self.segment
    }

    /// The trajectory to send at `now` (s on the node's clock, the time its stamps use): it
    /// starts on the grid point at or just before `now` (at most [`GRID_SLACK`] segments
    /// before, else the next one) and runs through the remaining waypoints of that period,
    /// each with zero velocity, ending on the period boundary.
    pub fn next(&self, now: f64) -> LoopStep {
        let n = self.waypoints.len();
        let grid = ((now - GRID_SLACK * self.segment) / self.segment).ceil();
        let first = (grid.rem_euclid(n as f64)) as usize % n;
        let start = grid * self.segment;
        let count = n - first;
        let points = self.waypoints[first..]
            .iter()
            .enumerate()
            .map(|(k, q)| JointTrajectoryPoint {
                positions: q.clone(),
                velocities: vec![0.0; q.len()],
                accelerations: Vec::new(),
                effort: Vec::new(),
                time_from_start: seconds((k + 1) as f64 * self.segment),
            })
            .collect();
        LoopStep {
            message: JointTrajectory {
                header: Header {
                    stamp: Time::from_secs_f64(start).unwrap_or_default(),
                    frame_id: String::new(),
                },
                joint_names: self.joint_names.clone(),
                points,
            },
            start,
            end: (grid + count as f64) * self.segment,
            first_waypoint: first,
        }
    }

    /// The positions of the loop's joints in `msg` (by name), or `None` if it lacks one of
    /// them or their values.
    pub fn positions(&self, msg: &JointState) -> Option<Vec<f64>> {
        self.joint_names
            .iter()
            .map(|name| {
                let i = msg.name.iter().position(|n| n == name)?;
                msg.position.get(i).copied()
            })
            .collect()
    }

    /// Largest distance (rad or m) of `positions` (loop joint order) from the last waypoint.
    pub fn distance_from_last_waypoint(&self, positions: &[f64]) -> f64 {
        let last = self.waypoints.last().expect("at least one waypoint");
        last.iter()
            .zip(positions)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max)
    }

    /// The stop sent on exit: one point at `positions` (loop joint order) with zero velocity,
    /// reached `stop_time` seconds after receipt (stamp 0 = now).
    pub fn hold(&self, positions: &[f64], stop_time: f64) -> JointTrajectory {
        JointTrajectory {
            header: Header::default(),
            joint_names: self.joint_names.clone(),
            points: vec![JointTrajectoryPoint {
                positions: positions.to_vec(),
                velocities: vec![0.0; positions.len()],
                accelerations: Vec::new(),
                effort: Vec::new(),
                time_from_start: seconds(stop_time),
            }],
        }
    }
}

/// `secs` as a message duration (times here are bounded by the parameters' bounds).
fn seconds(secs: f64) -> Duration {
    Duration::from_secs_f64(secs).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(extra: &str) -> Result<TrajectoryLoopParams, NodeError> {
        let yaml = format!("trajectory_loop:\n  ros__parameters:\n{extra}");
        let p = Params::resolve(
            &declarations(),
            "/trajectory_loop",
            &[("t.yaml", &yaml)],
            &[],
        )?;
        TrajectoryLoopParams::load(&p)
    }

    fn plan() -> LoopPlan {
        LoopPlan::new(
            vec!["a".into(), "b".into()],
            &[0.0, 0.0, 1.0, 0.0, 1.0, 1.0],
            2.0,
        )
        .unwrap()
    }

    #[test]
    fn config_file_is_the_generated_one() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        rpq_param_gen::check_file(&root.join(CONFIG_FILE), CONFIG_YAML);
    }

    #[test]
    fn config_file_loads() {
        let s = resolve(
            CONFIG_YAML
                .split_once("ros__parameters:\n")
                .map(|(_, rest)| rest)
                .unwrap(),
        )
        .unwrap();
        assert_eq!(s.joint_names.len(), 6);
        assert_eq!(s.waypoints.len(), 12);
        assert_eq!((s.segment_duration, s.stop_time), (2.0, 0.2));
        assert_eq!(s.plan().unwrap().waypoints().len(), 2);
    }

    #[test]
    fn bad_values_are_startup_errors_naming_the_parameter() {
        let good_names = "    joint_names: [a, b]\n";
        let good_points = "    waypoints: [0.0, 1.0]\n";
        for (yaml, name) in [
            (good_points.to_string(), "joint_names"),
            (good_names.to_string(), "waypoints"),
            (
                format!("{good_names}    waypoints: [0.0, 1.0, 2.0]\n"),
                "waypoints",
            ),
            (
                format!("    joint_names: [a, a]\n{good_points}"),
                "joint_names",
            ),
            (
                format!("{good_names}{good_points}    segment_duration: 0.0\n"),
                "segment_duration",
            ),
            (
                format!("{good_names}{good_points}    stop_time: -1.0\n"),
                "stop_time",
            ),
        ] {
            let err = resolve(&yaml).unwrap_err().to_string();
            assert!(err.contains(name), "{yaml}: {err}");
        }
        assert!(resolve(&format!("{good_names}{good_points}")).is_ok());
    }

    #[test]
    fn schedule_follows_the_clock_grid() {
        let p = plan();
        // exactly on a period boundary, a little after it (within the slack), and a little
        // before it: the whole loop from that boundary
        for now in [12.0, 12.4, 11.99] {
            let s = p.next(now);
            assert_eq!((s.start, s.end, s.first_waypoint), (12.0, 18.0, 0), "{now}");
            let times: Vec<f64> = s
                .message
                .points
                .iter()
                .map(|pt| pt.time_from_start.as_secs_f64())
                .collect();
            assert_eq!(times, [2.0, 4.0, 6.0]);
            assert_eq!(s.message.header.stamp.as_secs_f64(), 12.0);
        }
        // past the slack: the next grid point, and only the rest of that period
        let s = p.next(12.6);
        assert_eq!((s.start, s.end, s.first_waypoint), (14.0, 18.0, 1));
        assert_eq!(s.message.points.len(), 2);
        assert_eq!(s.message.points[1].positions, [1.0, 1.0]);
        assert_eq!(s.message.points[1].velocities, [0.0, 0.0]);
        let s = p.next(16.2);
        assert_eq!((s.start, s.end, s.first_waypoint), (16.0, 18.0, 2));
        // every step ends on a multiple of the period, and the step sent at its end is a whole
        // loop: two nodes started at different times meet on the same grid
        for k in 0..40 {
            let now = 1.0e9 + 0.37 * k as f64;
            let s = p.next(now);
            assert!(s.start >= now - GRID_SLACK * 2.0 - 1e-6 && s.start < now + 2.0);
            assert_eq!((s.end / 6.0).fract(), 0.0, "{now}");
            assert_eq!(p.next(s.end).first_waypoint, 0);
            assert_eq!(p.next(s.end).start, s.end);
        }
    }

    #[test]
    fn joint_states_by_name_and_the_hold() {
        let p = plan();
        let msg = JointState {
            name: vec!["x".into(), "b".into(), "a".into()],
            position: vec![9.0, 0.5, 0.25],
            ..Default::default()
        };
        assert_eq!(p.positions(&msg), Some(vec![0.25, 0.5]));
        let short = JointState {
            name: vec!["a".into(), "b".into()],
            position: vec![0.25],
            ..Default::default()
        };
        assert_eq!(p.positions(&short), None);
        assert_eq!(p.distance_from_last_waypoint(&[0.25, 0.5]), 0.75);
        let hold = p.hold(&[0.25, 0.5], 0.2);
        assert_eq!(hold.header, Header::default());
        assert_eq!(hold.joint_names, ["a", "b"]);
        assert_eq!(hold.points.len(), 1);
        assert_eq!(hold.points[0].positions, [0.25, 0.5]);
        assert_eq!(hold.points[0].velocities, [0.0, 0.0]);
        assert_eq!(hold.points[0].time_from_start.as_secs_f64(), 0.2);
    }
}
