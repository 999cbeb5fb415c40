//! Standard ROS 2 message types, with their ROS names, field order and default values.
//!
//! The types are generated at build time from the ROS 2 Jazzy definitions kept in
//! `nodes/rpq_ros/ros_interfaces/` (see `build.rs`): one module per ROS package,
//! `rpq_ros::msg::<package>::<Type>`. Every type implements [`RosMessage`] (and
//! `ros2_client::Message`, so it can be published as is), `Default` (with the ROS default values,
//! e.g. [`geometry_msgs::Quaternion`] defaults to the identity `w = 1`), `Clone`, `Debug` and
//! `PartialEq`. ROS constants are associated constants, e.g.
//! [`visualization_msgs::Marker::SPHERE`].
//!
//! Field mapping: `bool`→`bool`, `byte`/`char`/`uint8`→`u8`, `intN`/`uintN`→`iN`/`uN`,
//! `float32`/`float64`→`f32`/`f64`, `string`→`String`, `T[]`→`Vec<T>`, `T[N]`→`[T; N]`. A field
//! named like a Rust keyword keeps its ROS name with the raw prefix (`Marker::r#type`).
//!
//! ```
//! use rpq_ros::msg::{geometry_msgs::Pose, RosMessage};
//!
//! let pose = Pose::default();
//! assert_eq!(pose.orientation.w, 1.0);
//! assert_eq!(Pose::TYPE_NAME, "geometry_msgs/msg/Pose");
//! assert!(Pose::definition().starts_with("Point position\nQuaternion orientation\n"));
//! ```

use std::fmt::Debug;

use serde::{de::DeserializeOwned, Serialize};

/// A ROS 2 message type: serializable to CDR with serde, with its ROS type name and definition.
pub trait RosMessage:
    Serialize
    + DeserializeOwned
    + Clone
    + Debug
    + PartialEq
    + Send
    + Sync
    + 'static
    + ros2_client::Message
{
    /// Full ROS type name, e.g. `"sensor_msgs/msg/JointState"`
    /// (`"std_srvs/srv/Trigger_Request"` for one half of a service).
    const TYPE_NAME: &'static str;

    /// The complete message definition as rosbag2 stores it in a bag (schema encoding
    /// `ros2msg`): the type's `.msg` text, then for each nested type (depth first, each once, in
    /// the order rosbag2 uses) a line of 80 `=`, a line `MSG: pkg/Name` and that type's text.
    /// The standard types carry their Jazzy field lines without comments.
    fn definition() -> String;

    /// Package part of [`TYPE_NAME`](Self::TYPE_NAME), e.g. `"sensor_msgs"`.
    fn package_name() -> &'static str {
        Self::TYPE_NAME.split('/').next().unwrap_or_default()
    }

    /// Type part of [`TYPE_NAME`](Self::TYPE_NAME), e.g. `"JointState"`.
    fn type_name() -> &'static str {
        Self::TYPE_NAME.rsplit('/').next().unwrap_or_default()
    }

    /// The `ros2_client` name of this type for topics (DDS type
    /// `sensor_msgs::msg::dds_::JointState_`).
    fn message_type_name() -> ros2_client::MessageTypeName {
        ros2_client::MessageTypeName::new(Self::package_name(), Self::type_name())
    }
}

/// Errors of the message layer: CDR encoding and decoding ([`crate::cdr`]) and conversions
/// between messages and `nalgebra` types ([`crate::convert`]).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MessageError {
    /// A value could not be encoded (for example a string longer than its `string<=N` bound).
    #[error("cannot encode {type_name} as CDR: {reason}")]
    Encode {
        /// Rust type being encoded.
        type_name: &'static str,
        /// What went wrong.
        reason: String,
    },
    /// The payload is not a valid encoding of the expected type.
    #[error("cannot decode {type_name} from CDR: {reason}")]
    Decode {
        /// Rust type being decoded.
        type_name: &'static str,
        /// What went wrong.
        reason: String,
    },
    /// The payload is shorter than the 4-byte encapsulation header.
    #[error("CDR payload of {len} bytes is shorter than its 4-byte encapsulation header")]
    TooShort {
        /// Payload length.
        len: usize,
    },
    /// The encapsulation header names an encoding other than plain CDR (XCDR1).
    #[error(
        "unsupported CDR encapsulation {header:02x?}: expected 00 00 (CDR_BE) or 00 01 (CDR_LE)"
    )]
    Encapsulation {
        /// The first four bytes of the payload.
        header: [u8; 4],
    },
    /// Bytes left over after the message: the payload is of another type.
    #[error("{count} bytes left over after decoding {type_name}: the payload is of another type")]
    TrailingBytes {
        /// Rust type decoded.
        type_name: &'static str,
        /// Number of bytes left.
        count: usize,
    },
    /// A number that must be finite is not.
    #[error("{what} is not finite ({value})")]
    NonFinite {
        /// Which quantity.
        what: &'static str,
        /// The offending value.
        value: f64,
    },
    /// A quaternion too close to zero to stand for a rotation.
    #[error("quaternion of norm {norm} cannot be normalized to a rotation")]
    ZeroQuaternion {
        /// Its norm.
        norm: f64,
    },
    /// A time or duration that `builtin_interfaces` cannot represent.
    #[error("{what} is out of the range of builtin_interfaces ({detail})")]
    TimeOutOfRange {
        /// Which quantity.
        what: &'static str,
        /// The offending value.
        detail: String,
    },
}

include!(concat!(env!("OUT_DIR"), "/std_msgs.rs"));
include!(concat!(env!("OUT_DIR"), "/index.rs"));

/// Support code for generated types (bounded strings and sequences). Not a stable API.
#[doc(hidden)]
pub mod __codegen {
    use serde::de::Error as _;
    use serde::ser::Error as _;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    /// Serializes a `string<=N` field, refusing longer strings.
    pub fn ser_bounded_string<const N: usize, S: Serializer>(
        value: &str,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        if value.len() > N {
            return Err(S::Error::custom(format!(
                "string of {} bytes exceeds the bound string<={N}",
                value.len()
            )));
        }
        serializer.serialize_str(value)
    }

    /// Deserializes a `string<=N` field, refusing longer strings.
    pub fn de_bounded_string<'de, const N: usize, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<String, D::Error> {
        let value = String::deserialize(deserializer)?;
        if value.len() > N {
            return Err(D::Error::custom(format!(
                "string of {} bytes exceeds the bound string<={N}",
                value.len()
            )));
        }
        Ok(value)
    }

    /// Serializes a `T[<=N]` field, refusing longer sequences.
    pub fn ser_bounded_seq<const N: usize, T: Serialize, S: Serializer>(
        value: &[T],
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        if value.len() > N {
            return Err(S::Error::custom(format!(
                "sequence of {} elements exceeds the bound [<={N}]",
                value.len()
            )));
        }
        value.serialize(serializer)
    }

    /// Deserializes a `T[<=N]` field, refusing longer sequences.
    pub fn de_bounded_seq<'de, const N: usize, T: Deserialize<'de>, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Vec<T>, D::Error> {
        let value = Vec::<T>::deserialize(deserializer)?;
        if value.len() > N {
            return Err(D::Error::custom(format!(
                "sequence of {} elements exceeds the bound [<={N}]",
                value.len()
            )));
        }
        Ok(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_names_follow_ros() {
        assert_eq!(
            sensor_msgs::JointState::TYPE_NAME,
            "sensor_msgs/msg/JointState"
        );
        assert_eq!(sensor_msgs::JointState::package_name(), "sensor_msgs");
        assert_eq!(sensor_msgs::JointState::type_name(), "JointState");
        assert_eq!(
            sensor_msgs::JointState::message_type_name().dds_msg_type(),
            "sensor_msgs::msg::dds_::JointState_"
        );
        assert_eq!(
            geometry_msgs::WrenchStamped::message_type_name().dds_msg_type(),
            "geometry_msgs::msg::dds_::WrenchStamped_"
        );
        assert_eq!(tf2_msgs::TFMessage::TYPE_NAME, "tf2_msgs/msg/TFMessage");
    }

    #[test]
    fn index_covers_every_type() {
        assert!(TYPE_NAMES.windows(2).all(|w| w[0] < w[1]));
        for name in [
            "std_msgs/msg/Header",
            "visualization_msgs/msg/Marker",
            "std_srvs/srv/Trigger_Request",
            "rpq_interfaces/msg/DriverStatus",
            "rpq_interfaces/srv/ComputeForwardKinematics_Response",
        ] {
            assert!(TYPE_NAMES.contains(&name), "{name}");
        }
        assert_eq!(
            definition_of("geometry_msgs/msg/Pose"),
            Some(geometry_msgs::Pose::definition())
        );
        assert_eq!(definition_of("geometry_msgs/msg/Nope"), None);
        for name in TYPE_NAMES {
            assert!(definition_of(name).is_some(), "{name}");
        }
    }

    #[test]
    fn ros_default_values() {
        let q = geometry_msgs::Quaternion::default();
        assert_eq!((q.x, q.y, q.z, q.w), (0.0, 0.0, 0.0, 1.0));
        assert_eq!(geometry_msgs::Pose::default().orientation.w, 1.0);
        assert_eq!(
            geometry_msgs::PoseWithCovariance::default().covariance,
            [0.0; 36]
        );
        assert_eq!(
            std_msgs::Empty::default().structure_needs_at_least_one_member,
            0
        );
        assert!(sensor_msgs::JointState::default().name.is_empty());
    }

    #[test]
    fn constants_are_associated_consts() {
        use visualization_msgs::Marker;
        assert_eq!(Marker::ARROW, 0);
        assert_eq!(Marker::SPHERE, 2);
        assert_eq!(Marker::MESH_RESOURCE, 10);
        assert_eq!(Marker::ARROW_STRIP, 12);
        assert_eq!(Marker::DELETEALL, 3);
        let m = Marker {
            r#type: Marker::CUBE,
            ..Marker::default()
        };
        assert_eq!(m.r#type, 1);
    }

    #[test]
    fn jazzy_marker_has_texture_and_mesh_fields() {
        let def = visualization_msgs::Marker::definition();
        for line in [
            "string texture_resource\n",
            "sensor_msgs/CompressedImage texture\n",
            "UVCoordinate[] uv_coordinates\n",
            "string mesh_resource\n",
            "MeshFile mesh_file\n",
            "bool mesh_use_embedded_materials\n",
        ] {
            assert!(def.contains(line), "missing {line:?}");
        }
        for nested in [
            "MSG: visualization_msgs/UVCoordinate\n",
            "MSG: visualization_msgs/MeshFile\n",
            "MSG: sensor_msgs/CompressedImage\n",
            "MSG: builtin_interfaces/Duration\n",
        ] {
            assert_eq!(def.matches(nested).count(), 1, "{nested:?} once");
        }
    }

    #[test]
    fn definition_matches_rosbag2_layout() {
        let sep = "=".repeat(80);
        let expected = format!(
            "std_msgs/Header header\nPose pose\n\n{sep}\nMSG: geometry_msgs/Pose\n\
             Point position\nQuaternion orientation\n\n{sep}\nMSG: geometry_msgs/Point\n\
             float64 x\nfloat64 y\nfloat64 z\n\n{sep}\nMSG: geometry_msgs/Quaternion\n\
             float64 x 0\nfloat64 y 0\nfloat64 z 0\nfloat64 w 1\n\n{sep}\n\
             MSG: std_msgs/Header\nbuiltin_interfaces/Time stamp\nstring frame_id\n\n{sep}\n\
             MSG: builtin_interfaces/Time\nint32 sec\nuint32 nanosec\n"
        );
        assert_eq!(geometry_msgs::PoseStamped::definition(), expected);
    }

    #[test]
    fn bounded_helpers_refuse_oversized_values() {
        #[derive(Debug, Serialize, serde::Deserialize, PartialEq)]
        struct B {
            #[serde(
                serialize_with = "__codegen::ser_bounded_string::<3, _>",
                deserialize_with = "__codegen::de_bounded_string::<3, _>"
            )]
            s: String,
            #[serde(
                serialize_with = "__codegen::ser_bounded_seq::<2, _, _>",
                deserialize_with = "__codegen::de_bounded_seq::<2, _, _>"
            )]
            v: Vec<u16>,
        }
        #[derive(Debug, Serialize, serde::Deserialize, PartialEq)]
        struct U {
            s: String,
            v: Vec<u16>,
        }
        let ok = B {
            s: "abc".into(),
            v: vec![1, 2],
        };
        let bytes = crate::cdr::to_vec(&ok).unwrap();
        assert_eq!(crate::cdr::from_bytes::<B>(&bytes).unwrap(), ok);
        let long_s = B {
            s: "abcd".into(),
            v: vec![],
        };
        assert!(crate::cdr::to_vec(&long_s).is_err());
        let long_v = B {
            s: String::new(),
            v: vec![1, 2, 3],
        };
        assert!(crate::cdr::to_vec(&long_v).is_err());
        // Received from a peer that ignored the bounds: refused too.
        for bad in [
            U {
                s: "abcd".into(),
                v: vec![],
            },
            U {
                s: String::new(),
                v: vec![1, 2, 3],
            },
        ] {
            let bytes = crate::cdr::to_vec(&bad).unwrap();
            assert!(crate::cdr::from_bytes::<B>(&bytes).is_err());
        }
    }
}
