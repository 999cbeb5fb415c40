//! The suite's own interfaces, generated at build time from the rosidl package in `msg/`
//! (`msg/msg/*.msg`, `msg/srv/*.srv`), so the Rust types cannot drift from the files that
//! rosidl builds for rclpy.
//!
//! Layout: `rpq_ros::interfaces::<package>::msg::<Type>` for messages and
//! `rpq_ros::interfaces::<package>::srv::{Name, NameRequest, NameResponse}` for services (see
//! [`crate::srv::RosService`]). Standard types used by the interfaces are those of
//! [`crate::msg`]. The build fails with `file:line: message` on any error in the files, on a file
//! missing from `rosidl_generate_interfaces` in `CMakeLists.txt`, and on a package used without
//! a `<depend>` in `package.xml`.
//!
//! ```
//! use rpq_ros::interfaces::rpq_interfaces::{msg::DriverStatus, srv::ComputeForwardKinematics};
//! use rpq_ros::{msg::RosMessage, srv::RosService};
//!
//! assert_eq!(DriverStatus::TYPE_NAME, "rpq_interfaces/msg/DriverStatus");
//! assert_eq!(DriverStatus::MODE_VELOCITY, 2_u8);
//! assert_eq!(ComputeForwardKinematics::TYPE_NAME, "rpq_interfaces/srv/ComputeForwardKinematics");
//! ```

include!(concat!(env!("OUT_DIR"), "/interfaces.rs"));

#[cfg(test)]
mod tests {
    use super::rpq_interfaces::msg::DriverStatus;
    use super::rpq_interfaces::srv::{
        ComputeForwardKinematics, ComputeForwardKinematicsRequest, ComputeForwardKinematicsResponse,
    };
    use crate::msg::RosMessage;
    use crate::srv::RosService;

    #[test]
    fn definition_is_the_file_then_the_nested_types() {
        let file = include_str!("../../../msg/msg/DriverStatus.msg");
        let def = DriverStatus::definition();
        let sep = "=".repeat(80);
        assert_eq!(
            def,
            format!(
                "{file}\n{sep}\nMSG: std_msgs/Header\nbuiltin_interfaces/Time stamp\n\
                 string frame_id\n\n{sep}\nMSG: builtin_interfaces/Time\nint32 sec\n\
                 uint32 nanosec\n"
            )
        );
    }

    #[test]
    fn service_halves_follow_the_srv_file() {
        assert_eq!(
            ComputeForwardKinematicsRequest::TYPE_NAME,
            "rpq_interfaces/srv/ComputeForwardKinematics_Request"
        );
        assert_eq!(
            <ComputeForwardKinematics as RosService>::Response::TYPE_NAME,
            "rpq_interfaces/srv/ComputeForwardKinematics_Response"
        );
        let response = ComputeForwardKinematicsResponse::default();
        assert!(!response.success);
        assert_eq!(response.pose.pose.orientation.w, 1.0);
        let request = ComputeForwardKinematicsRequest {
            joint_names: vec!["j1".into()],
            positions: vec![0.5],
            link_name: String::new(),
        };
        assert_eq!(request.positions, [0.5]);
    }
}
