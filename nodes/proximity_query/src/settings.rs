//! Parameters of `proximity_query`. The one definition is `params/proximity_query.yaml`; the
//! build generates the declarations, [`ProximityQueryParams`] and `config/proximity_query.yaml`
//! (checked by a test). This file adds the rules linking parameters: the padding list, the
//! stream groups and the joint-state topic of each robot.
//!
//! ```
//! use rpq_ros::params::Params;
//! use proximity_query::settings::{declarations, Settings};
//!
//! let yaml = "proximity_query:\n  ros__parameters:\n    scene_file: s.yaml\n    \
//!             stream_groups: [\"left|right\"]\n    link_padding: [\"left/link_6=0.02\"]\n";
//! let p = Params::resolve(&declarations(), "/proximity_query", &[("p.yaml", yaml)], &[])?;
//! let s = Settings::load(&p)?;
//! assert_eq!(s.groups[0].a, ["left"]);
//! assert_eq!(s.paddings, [("left/link_6".to_string(), 0.02)]);
//! assert_eq!(s.joint_states_topic("left"), "left/joint_states");
//! # Ok::<(), proximity_query::NodeError>(())
//! ```

use rpq_ros::params::Params;

use crate::NodeError;

/// Generated from `params/proximity_query.yaml`.
pub mod proximity_query {
    include!(concat!(env!("OUT_DIR"), "/proximity_query.rs"));
}

pub use proximity_query::{declarations, ProximityQueryParams, NODE_NAME};

/// Service names (private to the node).
pub mod services {
    /// `rpq_interfaces/CheckCollision`.
    pub const CHECK_COLLISION: &str = "~/check_collision";
    /// `rpq_interfaces/MinDistance`.
    pub const MIN_DISTANCE: &str = "~/min_distance";
    /// `rpq_interfaces/CheckTolerance`.
    pub const CHECK_TOLERANCE: &str = "~/check_tolerance";
    /// `rpq_interfaces/CheckStates`.
    pub const CHECK_STATES: &str = "~/check_states";
    /// `rpq_interfaces/SetAllowedCollision`.
    pub const SET_ALLOWED_COLLISION: &str = "~/set_allowed_collision";
    /// `rpq_interfaces/GetScene`.
    pub const GET_SCENE: &str = "~/get_scene";
}

/// Topic of the distance stream (`rpq_interfaces/GroupDistances`).
pub const DISTANCES_TOPIC: &str = "~/distances";
/// Topic of the RViz markers (`visualization_msgs/MarkerArray`).
pub const MARKERS_TOPIC: &str = "~/markers";
/// Placeholder of the robot's name in `joint_states_topic`.
pub const ROBOT_PLACEHOLDER: &str = "{robot}";

/// One group pair of the distance stream: names on each side (robots, objects, `object/link`);
/// an empty side means every body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupPair {
    /// The name the stream publishes (`"A|B"` as written, or `"all"`).
    pub name: String,
    /// Names of side A.
    pub a: Vec<String>,
    /// Names of side B.
    pub b: Vec<String>,
}

/// The node's settings: the generated parameters plus the parsed lists.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    /// The parameters as declared.
    pub params: ProximityQueryParams,
    /// Paddings by body or object name [m], in the order given (later entries win).
    pub paddings: Vec<(String, f64)>,
    /// Group pairs of the distance stream (at least one).
    pub groups: Vec<GroupPair>,
}

impl Settings {
    /// Reads and checks the parameters. Names are checked against the scene later (the scene
    /// is not loaded yet); here only the syntax.
    pub fn load(p: &Params) -> Result<Settings, NodeError> {
        let params = ProximityQueryParams::from_params(p)?;
        if params.scene_file.trim().is_empty() {
            return Err(rpq_ros::NodeError::config(
                "scene_file",
                "is required (a scene YAML, for example config/rx60_pair.scene.yaml)",
            )
            .into());
        }
        if !params.joint_states_topic.contains(ROBOT_PLACEHOLDER) {
            return Err(rpq_ros::NodeError::config(
                "joint_states_topic",
                format!(
                    "`{}` must contain {ROBOT_PLACEHOLDER}: every robot needs its own topic",
                    params.joint_states_topic
                ),
            )
            .into());
        }
        if params.world_frame.trim().is_empty() {
            return Err(rpq_ros::NodeError::config("world_frame", "must not be empty").into());
        }
        let paddings = params
            .link_padding
            .iter()
            .map(|entry| parse_padding(entry))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|reason| rpq_ros::NodeError::config("link_padding", reason))?;
        let groups = if params.stream_groups.is_empty() {
            vec![GroupPair {
                name: "all".into(),
                a: Vec::new(),
                b: Vec::new(),
            }]
        } else {
            params
                .stream_groups
                .iter()
                .map(|entry| parse_group(entry))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|reason| rpq_ros::NodeError::config("stream_groups", reason))?
        };
        Ok(Settings {
            params,
            paddings,
            groups,
        })
    }

    /// The joint-state topic of robot `robot`.
    pub fn joint_states_topic(&self, robot: &str) -> String {
        self.params
            .joint_states_topic
            .replace(ROBOT_PLACEHOLDER, robot)
    }
}

/// `"name=metres"` with 0 <= metres <= 1.
fn parse_padding(entry: &str) -> Result<(String, f64), String> {
    let (name, value) = entry
        .split_once('=')
        .ok_or_else(|| format!("`{entry}` is not \"name=metres\""))?;
    let name = name.trim();
    let metres: f64 = value
        .trim()
        .parse()
        .map_err(|_| format!("`{entry}`: `{}` is not a number of metres", value.trim()))?;
    if name.is_empty() {
        return Err(format!("`{entry}`: no name"));
    }
    if !(0.0..=1.0).contains(&metres) {
        return Err(format!("`{entry}`: padding must be in [0, 1] m"));
    }
    Ok((name.to_string(), metres))
}

/// `"a1,a2|b1,b2"`; `*` or nothing on a side means every body.
fn parse_group(entry: &str) -> Result<GroupPair, String> {
    let (a, b) = entry
        .split_once('|')
        .ok_or_else(|| format!("`{entry}` is not \"A|B\" (comma-separated names each side)"))?;
    let side = |s: &str| -> Vec<String> {
        s.split(',')
            .map(str::trim)
            .filter(|n| !n.is_empty() && *n != "*")
            .map(str::to_string)
            .collect()
    };
    if b.contains('|') {
        return Err(format!("`{entry}` has more than one `|`"));
    }
    Ok(GroupPair {
        name: entry.trim().to_string(),
        a: side(a),
        b: side(b),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(extra: &str) -> Result<Settings, NodeError> {
        let yaml = format!("proximity_query:\n  ros__parameters:\n    scene_file: s.yaml\n{extra}");
        let p = Params::resolve(&declarations(), "/proximity_query", &[("p", &yaml)], &[])?;
        Settings::load(&p)
    }

    #[test]
    fn config_file_is_the_generated_one() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        rpq_param_gen::check_file(
            &root.join(proximity_query::CONFIG_FILE),
            proximity_query::CONFIG_YAML,
        );
    }

    #[test]
    fn defaults_give_one_group_over_everything() {
        let s = load("").unwrap();
        assert_eq!(s.groups.len(), 1);
        assert!(s.groups[0].a.is_empty() && s.groups[0].b.is_empty());
        assert_eq!(s.params.stream_rate, 100.0);
        assert_eq!(s.joint_states_topic("right"), "right/joint_states");
    }

    #[test]
    fn bad_settings_are_refused_naming_the_parameter() {
        let err = |extra: &str| load(extra).unwrap_err().to_string();
        assert!(err("    link_padding: [\"left\"]\n").contains("link_padding"));
        assert!(err("    link_padding: [\"left=-0.1\"]\n").contains("[0, 1]"));
        assert!(err("    link_padding: [\"left=nan\"]\n").contains("link_padding"));
        assert!(err("    link_padding: [\"left=2\"]\n").contains("link_padding"));
        assert!(err("    stream_groups: [\"left\"]\n").contains("stream_groups"));
        assert!(err("    stream_groups: [\"a|b|c\"]\n").contains("more than one"));
        assert!(err("    joint_states_topic: joint_states\n").contains("{robot}"));
        assert!(err("    stream_rate: 0.0\n").contains("stream_rate"));
        assert!(err("    joint_state_timeout: 0.0\n").contains("joint_state_timeout"));
        assert!(err("    default_padding: -0.01\n").contains("default_padding"));
        let missing = Params::resolve(&declarations(), "/proximity_query", &[], &[])
            .map_err(NodeError::from)
            .and_then(|p| Settings::load(&p));
        assert!(missing.unwrap_err().to_string().contains("scene_file"));
        assert!(err("    scene_file: \" \"\n").contains("scene_file"));
    }

    #[test]
    fn groups_parse_with_wildcards() {
        let s = load("    stream_groups: [\"left, right/link_6 | *\", \"left|table\"]\n").unwrap();
        assert_eq!(s.groups[0].a, ["left", "right/link_6"]);
        assert!(s.groups[0].b.is_empty());
        assert_eq!(s.groups[1].name, "left|table");
    }
}
