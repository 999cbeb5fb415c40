//! CDR (XCDR1) encoding exactly as it goes on the wire and into rosbag2 files.
//!
//! A payload is the 4-byte encapsulation header (`00 01 00 00` for little-endian CDR_LE,
//! `00 00 00 00` for big-endian CDR_BE) followed by the fields in `.msg` order, each aligned to
//! its size counted from the end of the header. This is what `rustdds` sends, what rclcpp/rclpy
//! receive and what `rosbags`' `serialize_cdr` produces (checked byte for byte by
//! `tests/cdr_crosscheck.rs`).
//!
//! ```
//! use rpq_ros::{cdr, msg::std_msgs::String as RosString};
//!
//! let msg = RosString { data: "hi".into() };
//! let bytes = cdr::to_vec(&msg)?;
//! assert_eq!(bytes, [0, 1, 0, 0, 3, 0, 0, 0, b'h', b'i', 0]);
//! assert_eq!(cdr::from_bytes::<RosString>(&bytes)?, msg);
//! # Ok::<(), rpq_ros::msg::MessageError>(())
//! ```

use byteorder::{BigEndian, LittleEndian};
use serde::{de::DeserializeOwned, Serialize};

use crate::msg::MessageError;

/// Encapsulation header of little-endian plain CDR (the encoding every ROS 2 RMW writes).
pub const CDR_LE_HEADER: [u8; 4] = [0x00, 0x01, 0x00, 0x00];
/// Encapsulation header of big-endian plain CDR.
pub const CDR_BE_HEADER: [u8; 4] = [0x00, 0x00, 0x00, 0x00];

/// Encodes `value` as a little-endian CDR payload, header included.
pub fn to_vec<M: Serialize>(value: &M) -> Result<Vec<u8>, MessageError> {
    let mut out = CDR_LE_HEADER.to_vec();
    cdr_encoding::to_writer::<M, LittleEndian, _>(&mut out, value).map_err(|e| {
        MessageError::Encode {
            type_name: std::any::type_name::<M>(),
            reason: e.to_string(),
        }
    })?;
    Ok(out)
}

/// Encodes `value` as a big-endian CDR payload, header included (for tests of peers that send
/// big-endian data).
pub fn to_vec_big_endian<M: Serialize>(value: &M) -> Result<Vec<u8>, MessageError> {
    let mut out = CDR_BE_HEADER.to_vec();
    cdr_encoding::to_writer::<M, BigEndian, _>(&mut out, value).map_err(|e| {
        MessageError::Encode {
            type_name: std::any::type_name::<M>(),
            reason: e.to_string(),
        }
    })?;
    Ok(out)
}

/// Decodes a CDR payload (CDR_LE or CDR_BE header, then the data).
///
/// Up to 3 bytes after the message are accepted as end padding (Fast DDS pads payloads to a
/// multiple of 4); more is an error, as it means the payload is of another type.
pub fn from_bytes<M: DeserializeOwned>(bytes: &[u8]) -> Result<M, MessageError> {
    let type_name = std::any::type_name::<M>();
    let Some((header, data)) = bytes.split_first_chunk::<4>() else {
        return Err(MessageError::TooShort { len: bytes.len() });
    };
    // The options (last two header bytes) carry padding information only; ignore them.
    let decoded = match [header[0], header[1]] {
        [0x00, 0x01] => cdr_encoding::from_bytes::<M, LittleEndian>(data),
        [0x00, 0x00] => cdr_encoding::from_bytes::<M, BigEndian>(data),
        _ => return Err(MessageError::Encapsulation { header: *header }),
    };
    let (value, consumed) = decoded.map_err(|e| MessageError::Decode {
        type_name,
        reason: e.to_string(),
    })?;
    let count = data.len() - consumed;
    if count > 3 {
        return Err(MessageError::TrailingBytes { type_name, count });
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::msg::{builtin_interfaces, geometry_msgs, sensor_msgs, std_msgs};

    fn header(sec: i32, nanosec: u32, frame: &str) -> std_msgs::Header {
        std_msgs::Header {
            stamp: builtin_interfaces::Time { sec, nanosec },
            frame_id: frame.into(),
        }
    }

    #[test]
    fn header_bytes_by_hand() {
        let bytes = to_vec(&header(1, 2, "base")).unwrap();
        #[rustfmt::skip]
        let expected = [
            0, 1, 0, 0,              // CDR_LE
            1, 0, 0, 0,              // sec
            2, 0, 0, 0,              // nanosec
            5, 0, 0, 0,              // frame_id length incl. NUL
            b'b', b'a', b's', b'e', 0,
        ];
        assert_eq!(bytes, expected);
    }

    #[test]
    fn joint_state_alignment_by_hand() {
        let msg = sensor_msgs::JointState {
            header: header(-1, 7, "w"),
            name: vec!["j1".into()],
            position: vec![1.5],
            velocity: vec![],
            effort: vec![-2.0],
        };
        let bytes = to_vec(&msg).unwrap();
        let mut expected = CDR_LE_HEADER.to_vec();
        expected.extend((-1i32).to_le_bytes()); // 0..4
        expected.extend(7u32.to_le_bytes()); // 4..8
        expected.extend(2u32.to_le_bytes()); // 8..12 frame_id "w\0"
        expected.extend([b'w', 0]); // 12..14
        expected.extend([0, 0]); // pad to 16
        expected.extend(1u32.to_le_bytes()); // 16..20 name count
        expected.extend(3u32.to_le_bytes()); // 20..24 "j1\0"
        expected.extend([b'j', b'1', 0]); // 24..27
        expected.push(0); // pad to 28
        expected.extend(1u32.to_le_bytes()); // 28..32 position count
        expected.extend(1.5f64.to_le_bytes()); // 32..40 (already 8-aligned)
        expected.extend(0u32.to_le_bytes()); // 40..44 velocity count
        expected.extend(1u32.to_le_bytes()); // 44..48 effort count
        expected.extend((-2.0f64).to_le_bytes()); // 48..56
        assert_eq!(bytes, expected);
        assert_eq!(from_bytes::<sensor_msgs::JointState>(&bytes).unwrap(), msg);
    }

    #[test]
    fn padding_before_float64_after_odd_length() {
        // PoseStamped with a 1-character frame: header ends at offset 14, pose.position.x must
        // start at 16.
        let msg = geometry_msgs::PoseStamped {
            header: header(0, 0, "a"),
            pose: geometry_msgs::Pose::default(),
        };
        let bytes = to_vec(&msg).unwrap();
        assert_eq!(bytes.len(), 4 + 16 + 7 * 8);
        assert_eq!(&bytes[4 + 14..4 + 16], [0, 0]);
        assert_eq!(&bytes[4 + 16 + 6 * 8..], 1.0f64.to_le_bytes()); // orientation.w
    }

    #[test]
    fn big_endian_payloads_decode() {
        let msg = header(0x0102_0304, 5, "x");
        let bytes = to_vec_big_endian(&msg).unwrap();
        assert_eq!(&bytes[..8], [0, 0, 0, 0, 1, 2, 3, 4]);
        assert_eq!(from_bytes::<std_msgs::Header>(&bytes).unwrap(), msg);
    }

    #[test]
    fn bad_payloads_are_errors() {
        assert_eq!(
            from_bytes::<std_msgs::Bool>(&[0, 1]),
            Err(MessageError::TooShort { len: 2 })
        );
        assert!(matches!(
            from_bytes::<std_msgs::Bool>(&[0, 3, 0, 0, 1]),
            Err(MessageError::Encapsulation { .. })
        ));
        assert!(matches!(
            from_bytes::<std_msgs::Header>(&[0, 1, 0, 0, 1, 0]),
            Err(MessageError::Decode { .. })
        ));
        // A Bool payload with three bytes of end padding is fine, with more it is another type.
        assert!(
            from_bytes::<std_msgs::Bool>(&[0, 1, 0, 0, 1, 0, 0, 0])
                .unwrap()
                .data
        );
        assert!(matches!(
            from_bytes::<std_msgs::Bool>(&[0, 1, 0, 0, 1, 0, 0, 0, 0]),
            Err(MessageError::TrailingBytes { count: 4, .. })
        ));
        // bool must be 0 or 1; strings must be UTF-8.
        assert!(from_bytes::<std_msgs::Bool>(&[0, 1, 0, 0, 2]).is_err());
        assert!(from_bytes::<std_msgs::String>(&[0, 1, 0, 0, 2, 0, 0, 0, 0xff, 0]).is_err());
        // A huge sequence length does not allocate its way to an abort.
        assert!(from_bytes::<std_msgs::Float64MultiArray>(&[
            0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff
        ])
        .is_err());
    }
}
