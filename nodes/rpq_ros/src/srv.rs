//! Standard ROS 2 service types (`std_srvs`), generated like [`crate::msg`].
//!
//! A service `pkg/srv/Name` is a unit struct `Name` implementing [`RosService`], with its halves
//! `NameRequest` (ROS type `pkg/srv/Name_Request`) and `NameResponse` (`pkg/srv/Name_Response`),
//! both [`RosMessage`]s.
//!
//! ```
//! use rpq_ros::msg::RosMessage;
//! use rpq_ros::srv::{std_srvs::{SetBool, SetBoolRequest}, RosService};
//!
//! assert_eq!(SetBool::TYPE_NAME, "std_srvs/srv/SetBool");
//! assert_eq!(<SetBool as RosService>::Request::TYPE_NAME, "std_srvs/srv/SetBool_Request");
//! let request = SetBoolRequest { data: true };
//! assert!(request.data);
//! ```

use crate::msg::RosMessage;

/// A ROS 2 service type: its name and the message types of its request and response.
///
/// `ros2_client` derives the DDS names from [`service_type_name`](Self::service_type_name):
/// `std_srvs::srv::dds_::Trigger_Request_` and `std_srvs::srv::dds_::Trigger_Response_`.
pub trait RosService: 'static {
    /// Request message (`pkg/srv/Name_Request`).
    type Request: RosMessage;
    /// Response message (`pkg/srv/Name_Response`).
    type Response: RosMessage;
    /// Full ROS type name, e.g. `"std_srvs/srv/Trigger"`.
    const TYPE_NAME: &'static str;

    /// The `ros2_client` name of this service type, for `create_client` / `create_server`.
    fn service_type_name() -> ros2_client::ServiceTypeName {
        let package = Self::TYPE_NAME.split('/').next().unwrap_or_default();
        let name = Self::TYPE_NAME.rsplit('/').next().unwrap_or_default();
        ros2_client::ServiceTypeName::new(package, name)
    }
}

include!(concat!(env!("OUT_DIR"), "/std_srvs.rs"));

#[cfg(test)]
mod tests {
    use super::std_srvs::{Empty, SetBool, SetBoolResponse, Trigger, TriggerRequest};
    use super::*;

    #[test]
    fn names_of_the_halves() {
        assert_eq!(Trigger::TYPE_NAME, "std_srvs/srv/Trigger");
        assert_eq!(
            <Trigger as RosService>::Request::TYPE_NAME,
            "std_srvs/srv/Trigger_Request"
        );
        assert_eq!(
            <SetBool as RosService>::Response::TYPE_NAME,
            "std_srvs/srv/SetBool_Response"
        );
        let name = Trigger::service_type_name();
        assert_eq!(
            (name.package_name(), name.type_name()),
            ("std_srvs", "Trigger")
        );
        assert_eq!(Empty::TYPE_NAME, "std_srvs/srv/Empty");
    }

    #[test]
    fn empty_request_has_the_rosidl_placeholder_byte() {
        // rosidl gives an empty structure one uint8 member: the request is one byte on the wire.
        let bytes = crate::cdr::to_vec(&TriggerRequest::default()).unwrap();
        assert_eq!(bytes, [0, 1, 0, 0, 0]);
        let response = SetBoolResponse {
            success: true,
            message: "ok".into(),
        };
        assert_eq!(
            crate::cdr::to_vec(&response).unwrap(),
            [0, 1, 0, 0, 1, 0, 0, 0, 3, 0, 0, 0, b'o', b'k', 0]
        );
        assert_eq!(
            SetBoolResponse::definition(),
            "bool success\nstring message\n"
        );
    }
}
