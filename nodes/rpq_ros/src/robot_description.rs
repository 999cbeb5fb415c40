//! The robot description (URDF text) of a node: from the file its parameter names, or from the
//! latched `robot_description` topic that `robot_state_publisher` (or `robot_sim`) publishes.
//!
//! A file the user names is an explicit choice and wins; with no file (an empty parameter) the
//! node takes the text from the topic, waiting for it up to a timeout. Every error names where
//! the description came from, so `robot_description_file x.urdf: cannot read it: ...` and
//! `topic /robot_description: ...` read the same in every node.
//!
//! The text is parsed by the caller (the transport knows no kinematics):
//!
//! ```no_run
//! # async fn f(node: &mut rpq_ros::node::RosNode) -> Result<(), rpq_ros::error::NodeError> {
//! use rpq_ros::robot_description::RobotDescription;
//! let file = node.params().str("robot_description_file")?.to_string();
//! let description = RobotDescription::load(node, &file).await?;
//! let joints = description.parse(|urdf| {
//!     if urdf.contains("<robot") { Ok(urdf.matches("<joint").count()) } else { Err("no <robot>") }
//! })?;
//! # Ok(()) }
//! ```

use std::{pin::pin, time::Duration};

use futures::StreamExt;

use crate::{error::NodeError, msg::std_msgs::String as StringMsg, node::RosNode, qos};

/// Topic of the URDF text (relative, latched), as `robot_state_publisher` publishes it.
pub const ROBOT_DESCRIPTION_TOPIC: &str = "robot_description";

/// How long [`RobotDescription::load`] waits for the topic: 10 s, time enough for a
/// `robot_state_publisher` started by the same launch file.
pub const TOPIC_TIMEOUT: Duration = Duration::from_secs(10);

/// The URDF text of a robot and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct RobotDescription {
    /// The URDF (XML) text.
    pub urdf: String,
    /// Where it came from, as errors name it: `robot_description_file <file>` or
    /// `topic <fully qualified name>`.
    pub origin: String,
}

impl RobotDescription {
    /// Reads the file `file`; a failure names the file.
    pub fn from_file(file: &str) -> Result<Self, NodeError> {
        let origin = format!("robot_description_file {file}");
        match std::fs::read_to_string(file) {
            Ok(urdf) => Ok(Self { urdf, origin }),
            Err(e) => Err(NodeError::RobotDescription {
                origin,
                reason: format!("cannot read it: {e}"),
            }),
        }
    }

    /// Takes the text from the latched [`ROBOT_DESCRIPTION_TOPIC`] (resolved in `node`'s
    /// namespace and remappings), waiting at most `timeout` for a publisher to send it.
    pub async fn from_topic(node: &mut RosNode, timeout: Duration) -> Result<Self, NodeError> {
        let name = node.resolve_name(ROBOT_DESCRIPTION_TOPIC)?;
        let origin = format!("topic {name}");
        let sub = node.subscription::<StringMsg>(ROBOT_DESCRIPTION_TOPIC, qos::latched())?;
        let mut stream = pin!(sub.async_stream());
        let first = tokio::time::timeout(timeout, async {
            loop {
                match stream.next().await {
                    Some(Ok((msg, _))) => return Ok(msg.data),
                    // a sample that does not decode: wait for the next one
                    Some(Err(e)) => node.logger().warn(format!("{origin}: {e}")),
                    None => return Err("the subscription ended".to_string()),
                }
            }
        })
        .await;
        match first {
            Ok(Ok(urdf)) => Ok(Self { urdf, origin }),
            Ok(Err(reason)) => Err(NodeError::RobotDescription { origin, reason }),
            Err(_) => Err(NodeError::RobotDescription {
                origin,
                reason: format!(
                    "nothing received within {} s (is robot_state_publisher running? or set \
                     robot_description_file)",
                    timeout.as_secs_f64()
                ),
            }),
        }
    }

    /// The description from `file` if it is not empty, else from the topic within
    /// [`TOPIC_TIMEOUT`] (see the module docs).
    pub async fn load(node: &mut RosNode, file: &str) -> Result<Self, NodeError> {
        if file.is_empty() {
            Self::from_topic(node, TOPIC_TIMEOUT).await
        } else {
            Self::from_file(file)
        }
    }

    /// Parses the text with `parse`; its error becomes a [`NodeError::RobotDescription`] that
    /// names the origin.
    pub fn parse<T, E: std::fmt::Display>(
        &self,
        parse: impl FnOnce(&str) -> Result<T, E>,
    ) -> Result<T, NodeError> {
        parse(&self.urdf).map_err(|e| self.error(e.to_string()))
    }

    /// A [`NodeError::RobotDescription`] for this description: the node cannot use it for
    /// `reason`.
    pub fn error(&self, reason: impl Into<String>) -> NodeError {
        NodeError::RobotDescription {
            origin: self.origin.clone(),
            reason: reason.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_errors_name_the_file() {
        let e = RobotDescription::from_file("/nonexistent/robot.urdf").unwrap_err();
        let text = e.to_string();
        assert!(
            text.starts_with("robot_description_file /nonexistent/robot.urdf: cannot read it: "),
            "{text}"
        );
    }

    #[test]
    fn parse_errors_name_the_origin() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("r.urdf");
        std::fs::write(&file, "<robot name=\"r\"/>").unwrap();
        let file = file.to_str().unwrap();
        let d = RobotDescription::from_file(file).unwrap();
        assert_eq!(d.urdf, "<robot name=\"r\"/>");
        assert_eq!(d.parse(|t| Ok::<_, String>(t.len())).unwrap(), 17);
        let e = d.parse(|_| Err::<(), _>("no link")).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("robot_description_file {file}: no link")
        );
    }
}
