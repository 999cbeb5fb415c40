//! The error type of the simulation core.

/// Why a joint list, a configuration or a command was refused.
///
/// `what` fields name the offending input in words (for example `"position command"` or
/// `"trajectory point 2 velocities"`), so that `to_string()` is a complete log line.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SimError {
    /// A joint description is unusable (empty or duplicate name, bad limits).
    #[error("invalid joint `{joint}`: {reason}")]
    InvalidJoint {
        /// Joint name as given.
        joint: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A configuration value is unusable.
    #[error("invalid parameter `{parameter}`: {reason}")]
    InvalidConfig {
        /// Parameter name, as in `config/robot_sim.yaml`.
        parameter: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// A time is NaN, infinite or negative.
    #[error("{what} is {value} s; times must be finite and not negative")]
    InvalidTime {
        /// Which time.
        what: String,
        /// The value received.
        value: f64,
    },
    /// A vector does not hold one value per joint.
    #[error("{what}: expected {expected} values (one per joint), got {got}")]
    LengthMismatch {
        /// Which vector.
        what: String,
        /// Number of values required.
        expected: usize,
        /// Number of values received.
        got: usize,
    },
    /// A command was already older than the timeout when it arrived (queued during a stall).
    #[error(
        "{what} is stale: sent {:.1} ms before it was read, more than the timeout of {:.1} ms",
        age * 1e3,
        timeout * 1e3
    )]
    Stale {
        /// Which command.
        what: String,
        /// How long before its arrival it was sent [s].
        age: f64,
        /// The timeout [s].
        timeout: f64,
    },
    /// A value is NaN or infinite.
    #[error("{what} for joint `{joint}` is {value}, not a finite number")]
    NotFinite {
        /// Which input.
        what: String,
        /// Joint the value belongs to.
        joint: String,
        /// The value received.
        value: f64,
    },
    /// A position lies outside the joint's limits.
    #[error("{what} for joint `{joint}` is {value}, outside its limits [{lower}, {upper}]")]
    PositionOutOfLimits {
        /// Which input.
        what: String,
        /// Joint the value belongs to.
        joint: String,
        /// The offending position.
        value: f64,
        /// Lower position limit.
        lower: f64,
        /// Upper position limit.
        upper: f64,
    },
    /// A velocity is faster than the joint's velocity limit.
    #[error("{what} for joint `{joint}` is {value}, beyond its velocity limit ±{limit}")]
    VelocityOutOfLimits {
        /// Which input.
        what: String,
        /// Joint the value belongs to.
        joint: String,
        /// The offending velocity.
        value: f64,
        /// Velocity limit (absolute value).
        limit: f64,
    },
    /// A trajectory names a joint the robot does not have.
    #[error("trajectory names unknown joint `{name}`")]
    UnknownJoint {
        /// The unknown name.
        name: String,
    },
    /// A trajectory names the same joint twice.
    #[error("trajectory names joint `{name}` more than once")]
    DuplicateJoint {
        /// The repeated name.
        name: String,
    },
    /// A trajectory leaves joints out while partial goals are not allowed.
    #[error("trajectory does not name joints {names:?} (allow_partial_joints_goal is false)")]
    MissingJoints {
        /// The joints left out.
        names: Vec<String>,
    },
    /// The interpolation toward a trajectory point overflows: its velocities or accelerations,
    /// though finite, are too large for the segment's duration (the polynomial or its
    /// derivative is not finite somewhere on the segment).
    #[error(
        "interpolation on the way to trajectory point {point} is not finite for joint `{joint}` \
         over {duration} s: velocities or accelerations too large"
    )]
    InterpolationNotFinite {
        /// Index of the trajectory point the segment ends at.
        point: usize,
        /// Joint whose polynomial overflows.
        joint: String,
        /// Duration of the segment (s).
        duration: f64,
    },
    /// A trajectory has no points.
    #[error("trajectory has no points")]
    EmptyTrajectory,
    /// Trajectory points are not in strictly increasing time order.
    #[error(
        "trajectory point {point}: time_from_start {time} s is not after the previous point's {previous} s"
    )]
    NonIncreasingTime {
        /// Index of the offending point.
        point: usize,
        /// Its `time_from_start`.
        time: f64,
        /// The previous point's `time_from_start`.
        previous: f64,
    },
    /// A trajectory point gives accelerations but no velocities.
    #[error("trajectory point {point} gives accelerations without velocities")]
    AccelerationsWithoutVelocities {
        /// Index of the offending point.
        point: usize,
    },
    /// A trajectory point other than a first point matching the current state is due already.
    #[error("trajectory point {point} is due at {time} s, which is not after now ({now} s)")]
    PointInPast {
        /// Index of the offending point.
        point: usize,
        /// Absolute time the point is due.
        time: f64,
        /// The current time.
        now: f64,
    },
    /// The first trajectory point is due now (or earlier) but the robot is elsewhere.
    #[error(
        "trajectory point 0 is due now but joint `{joint}` is at {current}, not {first} \
         (trajectory_start_tolerance {tolerance})"
    )]
    StartMismatch {
        /// Joint that is too far away.
        joint: String,
        /// Its current position.
        current: f64,
        /// Its position in the first point.
        first: f64,
        /// The allowed difference.
        tolerance: f64,
    },
    /// The last trajectory point has a non-zero velocity.
    #[error(
        "trajectory ends with velocity {value} for joint `{joint}` \
         (allow_nonzero_velocity_at_trajectory_end is false)"
    )]
    NonzeroFinalVelocity {
        /// Joint with the non-zero velocity.
        joint: String,
        /// Its final velocity.
        value: f64,
    },
}
