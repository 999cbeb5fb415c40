//! Conversions between ROS messages and the virtual-fixture library (pure; no sockets).

use nalgebra::{Isometry3, Point3, Vector6};
use rpq_ros::interfaces::rpq_interfaces::msg::FixtureStep;
use rpq_ros::interfaces::rpq_interfaces::msg::VirtualFixture;
use rpq_ros::msg::builtin_interfaces::Time;
use rpq_ros::msg::geometry_msgs::{
    Twist, TwistStamped, Vector3 as RosVector3, Wrench, WrenchStamped,
};
use rpq_ros::msg::sensor_msgs::JointState;
use rpq_ros::msg::std_msgs::{Float64MultiArray, Header};
use rpq_virtual_fixtures::{Combination, Completion, Guidance, Mode, SequenceState, Step};

use crate::NodeError;

/// Guidance mode as carried by [`VirtualFixture::mode`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FixtureMode {
    /// `free`: no fixture, `v = c f`.
    Free,
    /// `open_loop`: eq. 8 with `D`.
    OpenLoop,
    /// `closed_loop`: eq. 8 with `D_g` (eq. 11).
    ClosedLoop,
}

impl FixtureMode {
    /// Every mode, in `VirtualFixture::MODE_*` order.
    pub const ALL: [FixtureMode; 3] = [Self::Free, Self::OpenLoop, Self::ClosedLoop];

    /// Parses a mode name (`free`, `open_loop`, `closed_loop`), as in the `mode` parameter.
    pub fn parse(s: &str) -> Result<Self, NodeError> {
        Self::ALL
            .into_iter()
            .find(|m| m.as_str() == s)
            .ok_or_else(|| {
                NodeError::bad(
                    "mode",
                    format!("unknown mode `{s}` (expected free, open_loop or closed_loop)"),
                )
            })
    }

    /// The mode of a `VirtualFixture::MODE_*` number (a message's `mode` field).
    pub fn from_code(code: u8) -> Result<Self, NodeError> {
        Self::ALL
            .into_iter()
            .find(|m| m.code() == code)
            .ok_or_else(|| {
                NodeError::bad(
                    "mode",
                    format!(
                        "unknown mode {code} (expected VirtualFixture.MODE_FREE = {}, \
                         MODE_OPEN_LOOP = {} or MODE_CLOSED_LOOP = {})",
                        VirtualFixture::MODE_FREE,
                        VirtualFixture::MODE_OPEN_LOOP,
                        VirtualFixture::MODE_CLOSED_LOOP
                    ),
                )
            })
    }

    /// The mode's name: `free`, `open_loop` or `closed_loop` (parameters and logs).
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::Free => "free",
            Self::OpenLoop => "open_loop",
            Self::ClosedLoop => "closed_loop",
        }
    }

    /// The `VirtualFixture::MODE_*` number.
    pub fn code(self) -> u8 {
        match self {
            Self::Free => VirtualFixture::MODE_FREE,
            Self::OpenLoop => VirtualFixture::MODE_OPEN_LOOP,
            Self::ClosedLoop => VirtualFixture::MODE_CLOSED_LOOP,
        }
    }

    /// The library's mode, with the controller's `k_d` for closed loop.
    pub fn to_mode(self, k_d: f64) -> Mode {
        match self {
            Self::Free => Mode::Free,
            Self::OpenLoop => Mode::OpenLoop,
            Self::ClosedLoop => Mode::ClosedLoop { k_d },
        }
    }
}

/// A received fixture: guidance, mode and source type.
#[derive(Debug, Clone, PartialEq)]
pub struct Fixture {
    /// `D` and `u`.
    pub guidance: Guidance,
    /// Mode.
    pub mode: FixtureMode,
    /// `fixture_type` as received (`VirtualFixture::TYPE_*`).
    pub fixture_type: u8,
    /// `header.frame_id`.
    pub frame_id: String,
}

/// Checks and converts a [`VirtualFixture`] message.
pub fn fixture_from_msg(msg: &VirtualFixture) -> Result<Fixture, NodeError> {
    let mode = FixtureMode::from_code(msg.mode)?;
    let n = msg.n as usize;
    let guidance = Guidance::from_flattened(&msg.d, n, &msg.u)
        .map_err(|e| NodeError::bad("VirtualFixture", e.to_string()))?;
    Ok(Fixture {
        guidance,
        mode,
        fixture_type: msg.fixture_type,
        frame_id: msg.header.frame_id.clone(),
    })
}

/// Builds a [`VirtualFixture`] message for one source (a `source::*` name), without combination
/// or sequence.
pub fn fixture_to_msg(
    header: Header,
    fixture_type: &str,
    mode: FixtureMode,
    g: &Guidance,
) -> VirtualFixture {
    let mut u = [0.0; 6];
    u.copy_from_slice(g.u.as_slice());
    VirtualFixture {
        header,
        fixture_type: source::code(fixture_type).unwrap_or(0),
        mode: mode.code(),
        n: g.n() as u8,
        d: g.flattened().collect(),
        u,
        combination: 0,
        secondary_type: 0,
        fallback: false,
        sequence_state: VirtualFixture::SEQUENCE_EMPTY,
        sequence_step: -1,
        sequence_step_name: String::new(),
        sequence_length: 0,
    }
}

/// The guidance sources by name, as in the `fixture_type` parameter, logs and [`FixtureSpec`];
/// messages carry them as `VirtualFixture::TYPE_*` numbers ([`source::code`], [`source::name`]).
pub mod source {
    use rpq_ros::interfaces::rpq_interfaces::msg::VirtualFixture;

    /// No source: free motion (`VirtualFixture::TYPE_NONE`).
    pub const NONE: &str = "none";
    /// The loaded polyline path (`VirtualFixture::TYPE_PATH`).
    pub const PATH: &str = "path";
    /// The plane (`VirtualFixture::TYPE_PLANE`).
    pub const PLANE: &str = "plane";
    /// The point target (`VirtualFixture::TYPE_POINT`).
    pub const POINT: &str = "point";
    /// The remote-centre-of-motion cone (`VirtualFixture::TYPE_RCM_CONE`).
    pub const RCM_CONE: &str = "rcm_cone";

    /// Every source: name and `VirtualFixture::TYPE_*` number.
    pub const ALL: [(&str, u8); 5] = [
        (NONE, VirtualFixture::TYPE_NONE),
        (PATH, VirtualFixture::TYPE_PATH),
        (PLANE, VirtualFixture::TYPE_PLANE),
        (POINT, VirtualFixture::TYPE_POINT),
        (RCM_CONE, VirtualFixture::TYPE_RCM_CONE),
    ];

    /// The `VirtualFixture::TYPE_*` number of a source name.
    pub fn code(name: &str) -> Option<u8> {
        ALL.iter().find(|(n, _)| *n == name).map(|(_, c)| *c)
    }

    /// The source name of a `VirtualFixture::TYPE_*` number.
    pub fn name(code: u8) -> Option<&'static str> {
        ALL.iter().find(|(_, c)| *c == code).map(|(n, _)| *n)
    }

    /// "none = 1, path = 2, ...": the accepted numbers, for error messages.
    pub fn listing() -> String {
        ALL.iter()
            .map(|(n, c)| format!("{n} = {c}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The guidance source names, in `VirtualFixture::TYPE_*` order.
pub const SOURCE_TYPES: [&str; 5] = [
    source::NONE,
    source::PATH,
    source::PLANE,
    source::POINT,
    source::RCM_CONE,
];

/// The `VirtualFixture::COMBINATION_*` number of a combination.
pub fn combination_code(how: Combination) -> u8 {
    match how {
        Combination::Intersect => VirtualFixture::COMBINATION_INTERSECT,
        Combination::Priority => VirtualFixture::COMBINATION_PRIORITY,
    }
}

/// The `VirtualFixture::SEQUENCE_*` number of a sequence state.
pub fn sequence_state_code(state: SequenceState) -> u8 {
    match state {
        SequenceState::Empty => VirtualFixture::SEQUENCE_EMPTY,
        SequenceState::Ready => VirtualFixture::SEQUENCE_READY,
        SequenceState::Running => VirtualFixture::SEQUENCE_RUNNING,
        SequenceState::Stopped => VirtualFixture::SEQUENCE_STOPPED,
        SequenceState::Finished => VirtualFixture::SEQUENCE_FINISHED,
    }
}

/// A fixture as chosen by the operator or a sequence step: one source, or two combined.
#[derive(Debug, Clone, PartialEq)]
pub struct FixtureSpec {
    /// Label (sequence steps; empty otherwise).
    pub name: String,
    /// Primary source (`VirtualFixture::TYPE_*`).
    pub primary: String,
    /// Secondary source and how it is combined with the primary.
    pub secondary: Option<(String, Combination)>,
    /// Mode; `None` = the node's current mode.
    pub mode: Option<FixtureMode>,
}

impl FixtureSpec {
    /// Checks and builds a spec. `secondary` "" = single source; `combination` "" = priority;
    /// `mode` "" = `None`. Sources must be `TYPE_*` names; a secondary must not be `none` nor
    /// equal to the primary.
    pub fn parse(
        name: &str,
        primary: &str,
        secondary: &str,
        combination: &str,
        mode: &str,
    ) -> Result<Self, NodeError> {
        let known = |what: &str, s: &str| {
            if SOURCE_TYPES.contains(&s) {
                Ok(())
            } else {
                Err(NodeError::bad(
                    what,
                    format!(
                        "unknown fixture type `{s}` (expected one of {})",
                        SOURCE_TYPES.join(", ")
                    ),
                ))
            }
        };
        known("primary", primary)?;
        let secondary = if secondary.is_empty() {
            if !combination.is_empty() {
                return Err(NodeError::bad(
                    "combination",
                    "a combination needs a secondary source",
                ));
            }
            None
        } else {
            known("secondary", secondary)?;
            if secondary == source::NONE || primary == source::NONE {
                return Err(NodeError::bad(
                    "secondary",
                    "`none` cannot be combined (use a single source)",
                ));
            }
            if secondary == primary {
                return Err(NodeError::bad(
                    "secondary",
                    format!("primary and secondary are both `{primary}`"),
                ));
            }
            let how = if combination.is_empty() {
                Combination::Priority
            } else {
                Combination::parse(combination)?
            };
            Some((secondary.to_string(), how))
        };
        let mode = if mode.is_empty() {
            None
        } else {
            Some(FixtureMode::parse(mode)?)
        };
        Ok(Self {
            name: name.to_string(),
            primary: primary.to_string(),
            secondary,
            mode,
        })
    }

    /// Checks and builds a spec from the numbers of a request (`CombineFixtures`, `FixtureStep`):
    /// sources are `VirtualFixture::TYPE_*`, `secondary` 0 = single source, `combination`
    /// `VirtualFixture::COMBINATION_*` or 0 = priority, `mode` `VirtualFixture::MODE_*` or 0 =
    /// `None`; then as [`FixtureSpec::parse`].
    pub fn from_codes(
        name: &str,
        primary: u8,
        secondary: u8,
        combination: u8,
        mode: u8,
    ) -> Result<Self, NodeError> {
        let source_of = |what: &str, code: u8| {
            source::name(code).ok_or_else(|| {
                NodeError::bad(
                    what,
                    format!(
                        "unknown fixture type {code} (expected VirtualFixture.TYPE_*: {})",
                        source::listing()
                    ),
                )
            })
        };
        let primary = source_of("primary", primary)?;
        let secondary = match secondary {
            0 => "",
            code => source_of("secondary", code)?,
        };
        let combination = match combination {
            0 => "",
            VirtualFixture::COMBINATION_INTERSECT => Combination::Intersect.as_str(),
            VirtualFixture::COMBINATION_PRIORITY => Combination::Priority.as_str(),
            other => {
                return Err(NodeError::bad(
                    "combination",
                    format!(
                        "unknown combination {other} (expected 0, \
                         VirtualFixture.COMBINATION_INTERSECT = {} or COMBINATION_PRIORITY = {})",
                        VirtualFixture::COMBINATION_INTERSECT,
                        VirtualFixture::COMBINATION_PRIORITY
                    ),
                ))
            }
        };
        let mode = match mode {
            0 => "",
            code => FixtureMode::from_code(code)?.as_str(),
        };
        Self::parse(name, primary, secondary, combination, mode)
    }

    /// Whether the spec uses source `t`.
    pub fn uses(&self, t: &str) -> bool {
        self.primary == t || self.secondary.as_ref().is_some_and(|(s, _)| s == t)
    }
}

/// Checks and converts one [`FixtureStep`] of a `LoadSequence` request.
pub fn step_from_msg(m: &FixtureStep) -> Result<Step<FixtureSpec>, NodeError> {
    let fixture = FixtureSpec::from_codes(&m.name, m.primary, m.secondary, m.combination, m.mode)?;
    let completion = match m.completion {
        FixtureStep::COMPLETION_MANUAL => Completion::Manual,
        FixtureStep::COMPLETION_ERROR_BELOW => Completion::ErrorBelow {
            threshold: m.threshold,
            dwell: m.dwell_s,
        },
        FixtureStep::COMPLETION_PATH_END => {
            if !fixture.uses(source::PATH) {
                return Err(NodeError::bad(
                    "completion",
                    "path_end needs a step that uses the path",
                ));
            }
            Completion::PathEnd {
                tolerance: m.threshold,
            }
        }
        FixtureStep::COMPLETION_DURATION => Completion::Duration { seconds: m.dwell_s },
        other => {
            return Err(NodeError::bad(
                "completion",
                format!(
                    "unknown completion {other} (expected FixtureStep.COMPLETION_MANUAL = {}, \
                     COMPLETION_ERROR_BELOW = {}, COMPLETION_PATH_END = {} or \
                     COMPLETION_DURATION = {})",
                    FixtureStep::COMPLETION_MANUAL,
                    FixtureStep::COMPLETION_ERROR_BELOW,
                    FixtureStep::COMPLETION_PATH_END,
                    FixtureStep::COMPLETION_DURATION
                ),
            ))
        }
    };
    completion.validate()?;
    Ok(Step {
        fixture,
        completion,
    })
}

/// A wrench measured in the sensor frame (pose `sensor` in the base frame) as the equivalent
/// wrench at the point `tool` (base frame), expressed in base axes: `f_b = R f_s`,
/// `τ_b = R τ_s + (p_sensor − p_tool) × f_b` ([`crate::wrench::shift_wrench`]).
pub fn wrench_to_base(
    w: &Wrench,
    sensor: &Isometry3<f64>,
    tool: &Point3<f64>,
) -> Result<Vector6<f64>, NodeError> {
    let raw = wrench_vector(w);
    if !raw.iter().all(|x| x.is_finite()) {
        return Err(NodeError::bad("wrench", "NaN or infinite component"));
    }
    Ok(crate::wrench::shift_wrench(&raw, sensor, tool))
}

/// `[force; torque]` of a `geometry_msgs/Wrench`.
pub fn wrench_vector(w: &Wrench) -> Vector6<f64> {
    Vector6::new(
        w.force.x, w.force.y, w.force.z, w.torque.x, w.torque.y, w.torque.z,
    )
}

/// Seconds of a message time (`None`: zero, i.e. unset).
pub fn time_seconds(t: &Time) -> Option<f64> {
    crate::stamp::stamp_seconds(t.sec, t.nanosec)
}

/// The core's input for a `geometry_msgs/WrenchStamped` received at `received` [s].
pub fn wrench_input(msg: &WrenchStamped, received: f64) -> crate::admittance::WrenchInput<'_> {
    crate::admittance::WrenchInput {
        frame_id: &msg.header.frame_id,
        wrench: wrench_vector(&msg.wrench),
        stamp: time_seconds(&msg.header.stamp),
        received,
    }
}

/// The interface the controller commands the robot through (parameter `output`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputKind {
    /// `std_msgs/Float64MultiArray` of joint velocities (`forward_velocity_controller`).
    JointVelocity,
    /// `geometry_msgs/TwistStamped` of the tool (a Cartesian driver).
    Twist,
}

/// A command message of either output kind.
#[derive(Debug, Clone, PartialEq)]
pub enum CommandMessage {
    /// Joint velocities.
    JointVelocity(Float64MultiArray),
    /// Tool twist.
    Twist(TwistStamped),
}

/// The message for one period's output of [`crate::admittance::AdmittanceCore`]: nothing,
/// the stop (zero joint velocities or zero twist) or the motion; joint velocities in the output
/// order `out_map` (`out[k] = urdf[out_map[k]]`), a twist stamped `stamp` in `frame_id`.
pub fn command_message(
    out: crate::admittance::Output<'_>,
    kind: OutputKind,
    out_map: &[usize],
    stamp: Time,
    frame_id: &str,
) -> Option<CommandMessage> {
    use crate::admittance::Output;
    let (twist, qd) = match out {
        Output::Nothing => return None,
        Output::Stop => (Vector6::zeros(), None),
        Output::Motion {
            twist,
            joint_velocities,
        } => (*twist, Some(joint_velocities)),
    };
    Some(match kind {
        OutputKind::Twist => {
            let v3 = |x, y, z| RosVector3 { x, y, z };
            CommandMessage::Twist(TwistStamped {
                header: Header {
                    stamp,
                    frame_id: frame_id.to_string(),
                },
                twist: Twist {
                    linear: v3(twist[0], twist[1], twist[2]),
                    angular: v3(twist[3], twist[4], twist[5]),
                },
            })
        }
        OutputKind::JointVelocity => CommandMessage::JointVelocity(Float64MultiArray {
            data: out_map.iter().map(|&k| qd.map_or(0.0, |q| q[k])).collect(),
            ..Default::default()
        }),
    })
}

/// Parses path vertices from text: one `x y z` or `x,y,z` per line [m]; `#` starts a comment,
/// blank lines are skipped. An error names the line number and what was expected, never the
/// line's content (the text may come from a file a request named).
pub fn parse_path_text(text: &str) -> Result<Vec<Point3<f64>>, NodeError> {
    let mut pts = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let bad = |found: String| {
            NodeError::bad(
                format!("path line {}", i + 1),
                format!("expected three finite numbers x y z [m], separated by spaces or commas; {found}"),
            )
        };
        let mut v = [0.0; 3];
        let mut count = 0usize;
        for token in line
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|t| !t.is_empty())
        {
            count += 1;
            if count > 3 {
                continue;
            }
            match token.parse::<f64>() {
                Ok(x) if x.is_finite() => v[count - 1] = x,
                Ok(_) => return Err(bad(format!("value {count} is not finite"))),
                Err(_) => return Err(bad(format!("value {count} is not a number"))),
            }
        }
        if count != 3 {
            return Err(bad(format!("found {count} values")));
        }
        pts.push(Point3::new(v[0], v[1], v[2]));
    }
    Ok(pts)
}

/// Points from a flat `x1 y1 z1 x2 ...` array.
pub fn points_from_flat(v: &[f64]) -> Result<Vec<Point3<f64>>, NodeError> {
    if !v.len().is_multiple_of(3) {
        return Err(NodeError::config(
            "path.points",
            format!("{} values is not a multiple of 3", v.len()),
        ));
    }
    Ok(v.chunks(3).map(|c| Point3::new(c[0], c[1], c[2])).collect())
}

/// Maps between a robot's joint order (URDF) and the names in messages.
#[derive(Debug, Clone, PartialEq)]
pub struct JointOrder {
    names: Vec<String>,
}

impl JointOrder {
    /// The robot's joints, in URDF order.
    pub fn new(names: Vec<String>) -> Self {
        Self { names }
    }

    /// Joint names.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Copies the positions of a [`JointState`] into `q` (URDF order). Every robot joint must be
    /// present with a finite value; extra joints are ignored.
    pub fn positions(&self, msg: &JointState, q: &mut [f64]) -> Result<(), NodeError> {
        self.copy(&msg.name, &msg.position, "position", q)
    }

    /// Copies the velocities of a [`JointState`] into `qd` (URDF order); the message must carry
    /// one finite velocity per name.
    pub fn velocities(&self, msg: &JointState, qd: &mut [f64]) -> Result<(), NodeError> {
        self.copy(&msg.name, &msg.velocity, "velocity", qd)
    }

    /// `out[i]` = the value of our joint `i` in `values` (parallel to `names`).
    fn copy(
        &self,
        names: &[String],
        values: &[f64],
        what: &str,
        out: &mut [f64],
    ) -> Result<(), NodeError> {
        if names.len() != values.len() {
            return Err(NodeError::bad(
                "joint_states",
                format!("{} names but {} {what} values", names.len(), values.len()),
            ));
        }
        for (i, name) in self.names.iter().enumerate() {
            let k = names
                .iter()
                .position(|n| n == name)
                .ok_or_else(|| NodeError::bad("joint_states", format!("joint `{name}` missing")))?;
            let v = values[k];
            if !v.is_finite() {
                return Err(NodeError::bad(
                    "joint_states",
                    format!("{what} of `{name}` is not finite"),
                ));
            }
            out[i] = v;
        }
        Ok(())
    }

    /// Index map for an output order: `out[k] = urdf[map[k]]`. Empty `output` means URDF order.
    pub fn output_map(&self, output: &[String]) -> Result<Vec<usize>, NodeError> {
        if output.is_empty() {
            return Ok((0..self.names.len()).collect());
        }
        if output.len() != self.names.len() {
            return Err(NodeError::config(
                "joint_names",
                format!(
                    "{} names for a robot with {} joints",
                    output.len(),
                    self.names.len()
                ),
            ));
        }
        let mut map = Vec::with_capacity(output.len());
        for o in output {
            let k =
                self.names.iter().position(|n| n == o).ok_or_else(|| {
                    NodeError::config("joint_names", format!("unknown joint `{o}`"))
                })?;
            if map.contains(&k) {
                return Err(NodeError::config(
                    "joint_names",
                    format!("joint `{o}` listed twice"),
                ));
            }
            map.push(k);
        }
        Ok(map)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::{Translation3, UnitQuaternion, Vector3};

    #[test]
    fn fixture_round_trip_and_checks() {
        let g = Guidance::from_columns(
            &[Vector6::x(), Vector6::y()],
            Vector6::new(0.0, 0.0, 0.1, 0.0, 0.0, 0.0),
        )
        .unwrap();
        let msg = fixture_to_msg(
            Header::default(),
            source::PLANE,
            FixtureMode::ClosedLoop,
            &g,
        );
        assert_eq!(msg.d.len(), 12);
        let back = fixture_from_msg(&msg).unwrap();
        assert_eq!(back.guidance, g);
        assert_eq!(back.mode, FixtureMode::ClosedLoop);
        assert_eq!(back.mode.to_mode(0.08), Mode::ClosedLoop { k_d: 0.08 });
        let mut bad = msg.clone();
        bad.n = 3;
        assert!(fixture_from_msg(&bad).is_err());
        let mut bad = msg.clone();
        bad.d[0] = f64::NAN;
        assert!(fixture_from_msg(&bad).is_err());
        assert_eq!(back.fixture_type, VirtualFixture::TYPE_PLANE);
        let mut bad = msg;
        bad.mode = 0;
        assert!(fixture_from_msg(&bad).is_err());
        bad.mode = 4;
        let err = fixture_from_msg(&bad).unwrap_err().to_string();
        assert!(err.contains("unknown mode 4"), "{err}");
    }

    #[test]
    fn fixture_specs_and_steps() {
        let s = FixtureSpec::parse("", "plane", "rcm_cone", "", "").unwrap();
        assert_eq!(
            s.secondary,
            Some(("rcm_cone".to_string(), Combination::Priority))
        );
        assert_eq!(s.mode, None);
        assert!(s.uses("rcm_cone") && !s.uses("path"));
        let s = FixtureSpec::parse("a", "path", "", "", "open_loop").unwrap();
        assert_eq!(s.mode, Some(FixtureMode::OpenLoop));
        for (p, sec, c, m) in [
            ("cylinder", "", "", ""),
            ("plane", "cylinder", "", ""),
            ("plane", "plane", "", ""),
            ("plane", "none", "", ""),
            ("none", "plane", "", ""),
            ("plane", "point", "union", ""),
            ("plane", "", "intersect", ""),
            ("plane", "point", "", "sideways"),
        ] {
            assert!(
                FixtureSpec::parse("", p, sec, c, m).is_err(),
                "{p} {sec} {c} {m}"
            );
        }
        let err = FixtureSpec::parse("", "cylinder", "", "", "").unwrap_err();
        assert!(err.to_string().contains("cylinder"), "{err}");
        for m in FixtureMode::ALL {
            assert_eq!(FixtureMode::from_code(m.code()).unwrap(), m);
            assert_eq!(FixtureMode::parse(m.as_str()).unwrap(), m);
        }
        for (name, code) in source::ALL {
            assert_eq!(source::name(code), Some(name));
            assert_eq!(source::code(name), Some(code));
        }
        assert_eq!(
            FixtureSpec::from_codes(
                "c",
                VirtualFixture::TYPE_PLANE,
                VirtualFixture::TYPE_RCM_CONE,
                0,
                VirtualFixture::MODE_OPEN_LOOP
            )
            .unwrap(),
            FixtureSpec::parse("c", "plane", "rcm_cone", "", "open_loop").unwrap()
        );
        for (p, sec, c, m, needle) in [
            (0, 0, 0, 0, "unknown fixture type 0"),
            (9, 0, 0, 0, "unknown fixture type 9"),
            (3, 9, 0, 0, "unknown fixture type 9"),
            (3, 4, 7, 0, "unknown combination 7"),
            (3, 4, 0, 7, "unknown mode 7"),
            (3, 1, 0, 0, "none"),
            (3, 0, 1, 0, "needs a secondary"),
        ] {
            let err = FixtureSpec::from_codes("", p, sec, c, m)
                .unwrap_err()
                .to_string();
            assert!(err.contains(needle), "{p} {sec} {c} {m}: {err}");
        }
        let mut m = FixtureStep {
            primary: VirtualFixture::TYPE_POINT,
            completion: FixtureStep::COMPLETION_ERROR_BELOW,
            threshold: 0.002,
            dwell_s: 0.5,
            ..Default::default()
        };
        assert_eq!(
            step_from_msg(&m).unwrap().completion,
            Completion::ErrorBelow {
                threshold: 0.002,
                dwell: 0.5
            }
        );
        m.threshold = f64::NAN;
        assert!(step_from_msg(&m).is_err());
        m.threshold = 0.1;
        m.completion = FixtureStep::COMPLETION_PATH_END;
        assert!(
            step_from_msg(&m).is_err(),
            "point step cannot end at a path end"
        );
        m.secondary = VirtualFixture::TYPE_PATH;
        assert!(step_from_msg(&m).is_ok());
        m.completion = FixtureStep::COMPLETION_DURATION;
        m.dwell_s = 0.0;
        assert!(step_from_msg(&m).is_err());
        m.completion = 9;
        let err = step_from_msg(&m).unwrap_err().to_string();
        assert!(err.contains("unknown completion 9"), "{err}");
        m.completion = 0;
        assert_eq!(step_from_msg(&m).unwrap().completion, Completion::Manual);
    }

    #[test]
    fn wrench_transform_against_virtual_work() {
        // Power is frame independent: f_s·v_s + τ_s·ω = f_b·v_t + τ_b·ω for a rigid motion.
        let sensor = Isometry3::from_parts(
            Translation3::new(0.1, -0.2, 0.5),
            UnitQuaternion::from_euler_angles(0.3, -0.7, 1.1),
        );
        let tool = Point3::new(0.15, -0.1, 0.4);
        let w = Wrench {
            force: rpq_ros::msg::geometry_msgs::Vector3 {
                x: 1.0,
                y: -2.0,
                z: 0.5,
            },
            torque: rpq_ros::msg::geometry_msgs::Vector3 {
                x: 0.1,
                y: 0.05,
                z: -0.2,
            },
        };
        let wb = wrench_to_base(&w, &sensor, &tool).unwrap();
        let (v_t, om) = (Vector3::new(0.3, 0.1, -0.2), Vector3::new(0.5, -0.4, 0.2));
        let v_s = v_t + om.cross(&(sensor.translation.vector - tool.coords));
        let f_s = sensor.rotation * Vector3::new(1.0, -2.0, 0.5);
        let t_s = sensor.rotation * Vector3::new(0.1, 0.05, -0.2);
        let p_sensor = f_s.dot(&v_s) + t_s.dot(&om);
        let p_tool = wb.fixed_rows::<3>(0).dot(&v_t) + wb.fixed_rows::<3>(3).dot(&om);
        assert!((p_sensor - p_tool).abs() < 1e-12);
        let mut nan = w;
        nan.force.x = f64::NAN;
        assert!(wrench_to_base(&nan, &sensor, &tool).is_err());
    }

    #[test]
    fn path_text() {
        let pts = parse_path_text("# x y z\n0 0 0\n1.5, 2, -1 # end\n\n").unwrap();
        assert_eq!(pts, [Point3::origin(), Point3::new(1.5, 2.0, -1.0)]);
        assert!(parse_path_text("1 2").is_err());
        assert!(parse_path_text("1 2 nan").is_err());
        // Errors name the line and the expectation, never the content.
        let e = parse_path_text("0 0 0\nroot:x:0:0:root:/root:/bin/bash\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 2") && e.contains("not a number"), "{e}");
        assert!(!e.contains("root"), "{e}");
        let e = parse_path_text("1 2 3 4").unwrap_err().to_string();
        assert!(e.contains("found 4 values"), "{e}");
        assert_eq!(
            points_from_flat(&[1.0, 2.0, 3.0]).unwrap(),
            [Point3::new(1.0, 2.0, 3.0)]
        );
        assert!(points_from_flat(&[1.0]).is_err());
    }

    #[test]
    fn joint_orders() {
        let o = JointOrder::new(vec!["a".into(), "b".into(), "c".into()]);
        let js = JointState {
            name: vec!["c".into(), "x".into(), "a".into(), "b".into()],
            position: vec![3.0, 9.0, 1.0, 2.0],
            ..Default::default()
        };
        let mut q = [0.0; 3];
        o.positions(&js, &mut q).unwrap();
        assert_eq!(q, [1.0, 2.0, 3.0]);
        assert_eq!(
            o.output_map(&["c".into(), "a".into(), "b".into()]).unwrap(),
            [2, 0, 1]
        );
        assert_eq!(o.output_map(&[]).unwrap(), [0, 1, 2]);
        assert!(o.output_map(&["a".into(), "a".into(), "b".into()]).is_err());
        assert!(o.output_map(&["a".into()]).is_err());
        let missing = JointState {
            name: vec!["a".into()],
            position: vec![1.0],
            ..Default::default()
        };
        assert!(o.positions(&missing, &mut q).is_err());
    }
}
