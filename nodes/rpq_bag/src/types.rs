//! The message types a live replay or recording can publish and subscribe, by ROS type name.
//!
//! A bag stores raw CDR; the transport publishes typed messages. [`lookup`] maps a type name
//! from a bag (`std_msgs/msg/Float64MultiArray`) to a [`MessageType`], which decodes the CDR with
//! [`rpq_ros::cdr::from_bytes`] and publishes the typed value, or subscribes typed and re-encodes
//! with [`rpq_ros::cdr::to_vec`]. Every message type of [`rpq_ros::msg`] and
//! [`rpq_ros::interfaces`] is registered (a unit test checks the list against
//! [`rpq_ros::msg::TYPE_NAMES`]); any other name is a [`BagError::UnsupportedType`] that lists
//! the supported ones.
//!
//! ```
//! let ty = rpq_bag::types::lookup("sensor_msgs/msg/JointState").unwrap();
//! assert!(ty.definition().starts_with("std_msgs/Header header\n"));
//! // A payload of another type does not pass as a JointState.
//! assert!(ty.check_cdr(&[0, 1, 0, 0, 3, 0, 0, 0, b'h', b'i', 0]).is_err());
//! assert!(rpq_bag::types::lookup("my_msgs/msg/Unknown").is_err());
//! ```

use std::marker::PhantomData;
use std::pin::Pin;
use std::time::{SystemTime, UNIX_EPOCH};

use futures::{Stream, StreamExt};
use ros2_client::{Publisher, QosProfile, Subscription};
use rpq_ros::interfaces::rpq_interfaces;
use rpq_ros::msg::{
    builtin_interfaces, geometry_msgs, nav_msgs, rosgraph_msgs, sensor_msgs, std_msgs, tf2_msgs,
    trajectory_msgs, visualization_msgs, RosMessage,
};
use rpq_ros::node::{RosError, RosNode};

use crate::{BagError, Result};

/// A message received by a [`RawSubscription`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Received {
    /// Wall-clock receive time (ns since the epoch): a bag's log time.
    pub receive_time: u64,
    /// The publisher's source timestamp (ns since the epoch), when the middleware gave one.
    pub source_time: Option<u64>,
    /// The message re-encoded as CDR (little endian, header included).
    pub data: Vec<u8>,
}

/// Stream of received messages (or of reasons a message could not be taken or encoded).
pub type ReceivedStream<'a> =
    Pin<Box<dyn Stream<Item = std::result::Result<Received, String>> + 'a>>;

/// A publisher that takes CDR payloads and publishes them as typed messages.
pub trait RawPublisher {
    /// Decodes `cdr` as the publisher's type and publishes it.
    fn publish_cdr(&self, cdr: &[u8]) -> std::result::Result<(), String>;
    /// Number of subscriptions matched to this publisher (`node` created it).
    fn matched_subscriptions(&self, node: &RosNode) -> usize;
}

/// A subscription that yields its messages as CDR payloads.
pub trait RawSubscription {
    /// The messages, in arrival order.
    fn stream(&self) -> ReceivedStream<'_>;
    /// Number of publishers matched to this subscription (`node` created it).
    fn matched_publishers(&self, node: &RosNode) -> usize;
}

/// One message type, usable without naming it in Rust.
pub trait MessageType: Sync {
    /// ROS type name, e.g. `sensor_msgs/msg/JointState`.
    fn type_name(&self) -> &'static str;
    /// rosbag2 definition text (`ros2msg`), see [`RosMessage::definition`].
    fn definition(&self) -> String;
    /// Checks that `cdr` decodes as this type.
    fn check_cdr(&self, cdr: &[u8]) -> std::result::Result<(), String>;
    /// Creates a typed publisher on `topic`.
    fn publisher(
        &self,
        node: &mut RosNode,
        topic: &str,
        qos: QosProfile,
    ) -> std::result::Result<Box<dyn RawPublisher>, RosError>;
    /// Creates a typed subscription on `topic`.
    fn subscription(
        &self,
        node: &mut RosNode,
        topic: &str,
        qos: QosProfile,
    ) -> std::result::Result<Box<dyn RawSubscription>, RosError>;
}

struct Typed<M>(PhantomData<fn() -> M>);

struct TypedPublisher<M: RosMessage>(Publisher<M>);

struct TypedSubscription<M: RosMessage>(Subscription<M>);

/// Nanoseconds since the epoch now (0 if the clock is before 1970).
pub fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

impl<M: RosMessage> MessageType for Typed<M> {
    fn type_name(&self) -> &'static str {
        M::TYPE_NAME
    }

    fn definition(&self) -> String {
        M::definition()
    }

    fn check_cdr(&self, cdr: &[u8]) -> std::result::Result<(), String> {
        rpq_ros::cdr::from_bytes::<M>(cdr)
            .map(drop)
            .map_err(|e| e.to_string())
    }

    fn publisher(
        &self,
        node: &mut RosNode,
        topic: &str,
        qos: QosProfile,
    ) -> std::result::Result<Box<dyn RawPublisher>, RosError> {
        Ok(Box::new(TypedPublisher(node.publisher::<M>(topic, qos)?)))
    }

    fn subscription(
        &self,
        node: &mut RosNode,
        topic: &str,
        qos: QosProfile,
    ) -> std::result::Result<Box<dyn RawSubscription>, RosError> {
        Ok(Box::new(TypedSubscription(
            node.subscription::<M>(topic, qos)?,
        )))
    }
}

impl<M: RosMessage> RawPublisher for TypedPublisher<M> {
    fn publish_cdr(&self, cdr: &[u8]) -> std::result::Result<(), String> {
        let msg = rpq_ros::cdr::from_bytes::<M>(cdr).map_err(|e| e.to_string())?;
        self.0.publish(msg).map_err(|e| format!("{e:?}"))
    }

    fn matched_subscriptions(&self, node: &RosNode) -> usize {
        self.0.get_subscription_count(node.inner())
    }
}

impl<M: RosMessage> RawSubscription for TypedSubscription<M> {
    fn stream(&self) -> ReceivedStream<'_> {
        Box::pin(self.0.async_stream().map(|item| {
            let receive_time = now_ns();
            let (msg, info) = item.map_err(|e| format!("{e:?}"))?;
            let data = rpq_ros::cdr::to_vec(&msg).map_err(|e| e.to_string())?;
            let source_time = info
                .source_timestamp()
                .and_then(|t| u64::try_from(t.to_nanos()).ok());
            Ok(Received {
                receive_time,
                source_time,
                data,
            })
        }))
    }

    fn matched_publishers(&self, node: &RosNode) -> usize {
        self.0.get_publisher_count(node.inner())
    }
}

macro_rules! registry {
    ($($ty:ty),* $(,)?) => {
        static REGISTRY: &[&dyn MessageType] = &[$(&Typed::<$ty>(PhantomData)),*];
    };
}

registry!(
    builtin_interfaces::Duration,
    builtin_interfaces::Time,
    geometry_msgs::Point,
    geometry_msgs::Point32,
    geometry_msgs::PointStamped,
    geometry_msgs::Pose,
    geometry_msgs::PoseArray,
    geometry_msgs::PoseStamped,
    geometry_msgs::PoseWithCovariance,
    geometry_msgs::Quaternion,
    geometry_msgs::Transform,
    geometry_msgs::TransformStamped,
    geometry_msgs::Twist,
    geometry_msgs::TwistStamped,
    geometry_msgs::Vector3,
    geometry_msgs::Vector3Stamped,
    geometry_msgs::Wrench,
    geometry_msgs::WrenchStamped,
    nav_msgs::Path,
    rosgraph_msgs::Clock,
    rpq_interfaces::msg::AdmittanceStatus,
    rpq_interfaces::msg::BodyPair,
    rpq_interfaces::msg::DriverStatus,
    rpq_interfaces::msg::FixtureStep,
    rpq_interfaces::msg::FtSensorStatus,
    rpq_interfaces::msg::GloveReading,
    rpq_interfaces::msg::GroupDistance,
    rpq_interfaces::msg::GroupDistances,
    rpq_interfaces::msg::MotionCommand,
    rpq_interfaces::msg::ProtectionMesh,
    rpq_interfaces::msg::ProtectionMeshes,
    rpq_interfaces::msg::RequiredContact,
    rpq_interfaces::msg::RobotState,
    rpq_interfaces::msg::SceneBody,
    rpq_interfaces::msg::ShrunkPath,
    rpq_interfaces::msg::VirtualFixture,
    sensor_msgs::CompressedImage,
    sensor_msgs::JointState,
    std_msgs::Bool,
    std_msgs::ColorRGBA,
    std_msgs::Empty,
    std_msgs::Float64,
    std_msgs::Float64MultiArray,
    std_msgs::Header,
    std_msgs::Int32,
    std_msgs::MultiArrayDimension,
    std_msgs::MultiArrayLayout,
    std_msgs::String,
    tf2_msgs::TFMessage,
    trajectory_msgs::JointTrajectory,
    trajectory_msgs::JointTrajectoryPoint,
    visualization_msgs::Marker,
    visualization_msgs::MarkerArray,
    visualization_msgs::MeshFile,
    visualization_msgs::UVCoordinate,
);

/// Every registered message type, sorted by name.
pub fn all() -> impl Iterator<Item = &'static dyn MessageType> {
    REGISTRY.iter().copied()
}

/// The registered type called `type_name`, or [`BagError::UnsupportedType`].
pub fn lookup(type_name: &str) -> Result<&'static dyn MessageType> {
    all()
        .find(|t| t.type_name() == type_name)
        .ok_or_else(|| BagError::UnsupportedType {
            type_name: type_name.to_string(),
            supported: all().map(|t| t.type_name()).collect::<Vec<_>>().join(", "),
        })
}

/// The ROS type name (`pkg/msg/Type`) of a DDS type name as rmw writes it
/// (`pkg::msg::dds_::Type_`), if it is one.
///
/// ```
/// use rpq_bag::types::ros_type_name;
/// assert_eq!(ros_type_name("sensor_msgs::msg::dds_::JointState_").as_deref(),
///            Some("sensor_msgs/msg/JointState"));
/// assert_eq!(ros_type_name("JointState"), None);
/// ```
pub fn ros_type_name(dds: &str) -> Option<String> {
    let parts: Vec<&str> = dds.split("::").collect();
    match parts.as_slice() {
        [pkg, kind @ ("msg" | "srv" | "action"), "dds_", ty] => {
            let ty = ty.strip_suffix('_')?;
            (!pkg.is_empty() && !ty.is_empty()).then(|| format!("{pkg}/{kind}/{ty}"))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rpq_ros::msg::{definition_of, TYPE_NAMES};

    #[test]
    fn registry_holds_every_message_type_of_rpq_ros() {
        let registered: Vec<&str> = all().map(|t| t.type_name()).collect();
        let messages: Vec<&str> = TYPE_NAMES
            .iter()
            .copied()
            .filter(|n| n.contains("/msg/"))
            .collect();
        assert_eq!(
            registered, messages,
            "update the registry! list in types.rs"
        );
        for t in all() {
            assert_eq!(Some(t.definition()), definition_of(t.type_name()));
        }
    }

    #[test]
    fn lookup_of_an_unknown_type_lists_the_supported_ones() {
        let err = lookup("std_msgs/msg/Float32").err().unwrap();
        let text = err.to_string();
        assert!(text.contains("std_msgs/msg/Float32"), "{text}");
        assert!(text.contains("sensor_msgs/msg/JointState"), "{text}");
        assert!(lookup("std_msgs/msg/Float64MultiArray").is_ok());
    }

    #[test]
    fn cdr_check_accepts_its_type_only() {
        let joint_state = sensor_msgs::JointState {
            name: vec!["a".into()],
            position: vec![1.5],
            ..Default::default()
        };
        let cdr = rpq_ros::cdr::to_vec(&joint_state).unwrap();
        assert!(lookup("sensor_msgs/msg/JointState")
            .unwrap()
            .check_cdr(&cdr)
            .is_ok());
        let string = lookup("std_msgs/msg/String").unwrap();
        assert!(string.check_cdr(&cdr).is_err());
        assert!(string.check_cdr(&[0, 1, 0]).is_err());
    }

    #[test]
    fn dds_type_names() {
        assert_eq!(
            ros_type_name("rpq_interfaces::msg::dds_::DriverStatus_").as_deref(),
            Some("rpq_interfaces/msg/DriverStatus")
        );
        for bad in [
            "",
            "a::b::c",
            "pkg::msg::dds_::T",
            "pkg::foo::dds_::T_",
            "::msg::dds_::T_",
            "pkg::msg::dds_::_",
        ] {
            assert_eq!(ros_type_name(bad), None, "{bad:?}");
        }
    }
}
