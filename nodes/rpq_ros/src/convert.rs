//! Conversions between ROS messages and `nalgebra` types: the only place where the two meet.
//!
//! Every conversion checks its input: a non-finite number gives [`MessageError::NonFinite`]
//! instead of a NaN pose, a quaternion of (near) zero norm gives
//! [`MessageError::ZeroQuaternion`], a time outside `builtin_interfaces` gives
//! [`MessageError::TimeOutOfRange`]. Hence the conversions are `TryFrom`, in both directions:
//!
//! | message (`crate::msg::…`)             | nalgebra                      |
//! |---------------------------------------|-------------------------------|
//! | `geometry_msgs::Pose`, `Transform`    | `Isometry3<f64>`              |
//! | `geometry_msgs::Quaternion`           | `UnitQuaternion<f64>` (normalized on the way in) |
//! | `geometry_msgs::Vector3`              | `Vector3<f64>`                |
//! | `geometry_msgs::Point`                | `Point3<f64>`, `Vector3<f64>` |
//! | `geometry_msgs::Twist` (linear, angular) | `Vector6<f64>` (rows 0-2 linear, 3-5 angular) |
//! | `geometry_msgs::Wrench` (force, torque)  | `Vector6<f64>` (rows 0-2 force, 3-5 torque)  |
//!
//! Times: [`Time::from_secs_f64`](crate::msg::builtin_interfaces::Time::from_secs_f64),
//! [`Time::as_secs_f64`](crate::msg::builtin_interfaces::Time::as_secs_f64), and `TryFrom`
//! between `Time` and `std::time::SystemTime`; the same for `Duration` and
//! `std::time::Duration`.
//!
//! ```
//! use nalgebra::{Isometry3, Translation3, UnitQuaternion};
//! use rpq_ros::msg::geometry_msgs::Pose;
//!
//! let iso = Isometry3::from_parts(
//!     Translation3::new(1.0, 2.0, 3.0),
//!     UnitQuaternion::from_euler_angles(0.1, 0.2, 0.3),
//! );
//! let pose = Pose::try_from(&iso)?;
//! let back = Isometry3::try_from(&pose)?;
//! assert!((back.translation.vector - iso.translation.vector).norm() < 1e-15);
//!
//! let mut bad = pose.clone();
//! bad.position.x = f64::NAN;
//! assert!(Isometry3::try_from(&bad).is_err());
//! # Ok::<(), rpq_ros::msg::MessageError>(())
//! ```

use std::time::{Duration as StdDuration, SystemTime, UNIX_EPOCH};

use nalgebra::{
    Isometry3, Point3, Quaternion as NaQuaternion, Translation3, UnitQuaternion, Vector3, Vector6,
};

use crate::msg::builtin_interfaces::{Duration, Time};
use crate::msg::geometry_msgs::{
    Point, Pose, Quaternion, Transform, Twist, Vector3 as RosVector3, Wrench,
};
use crate::msg::MessageError;

/// Quaternions with a norm below this are refused: they do not define a rotation.
pub const MIN_QUATERNION_NORM: f64 = 1e-9;

const NANOS_PER_SEC: u32 = 1_000_000_000;

fn finite(what: &'static str, value: f64) -> Result<f64, MessageError> {
    if value.is_finite() {
        Ok(value)
    } else {
        Err(MessageError::NonFinite { what, value })
    }
}

fn finite3(what: &'static str, x: f64, y: f64, z: f64) -> Result<Vector3<f64>, MessageError> {
    Ok(Vector3::new(
        finite(what, x)?,
        finite(what, y)?,
        finite(what, z)?,
    ))
}

/// Implements `TryFrom<T>` by delegating to `TryFrom<&T>`.
macro_rules! by_value {
    ($from:ty => $to:ty) => {
        impl TryFrom<$from> for $to {
            type Error = MessageError;
            fn try_from(value: $from) -> Result<Self, MessageError> {
                <$to>::try_from(&value)
            }
        }
    };
}

// ---- vectors and points ----

impl TryFrom<&RosVector3> for Vector3<f64> {
    type Error = MessageError;
    fn try_from(v: &RosVector3) -> Result<Self, MessageError> {
        finite3("geometry_msgs/Vector3", v.x, v.y, v.z)
    }
}
by_value!(RosVector3 => Vector3<f64>);

impl TryFrom<&Vector3<f64>> for RosVector3 {
    type Error = MessageError;
    fn try_from(v: &Vector3<f64>) -> Result<Self, MessageError> {
        let v = finite3("vector", v.x, v.y, v.z)?;
        Ok(RosVector3 {
            x: v.x,
            y: v.y,
            z: v.z,
        })
    }
}
by_value!(Vector3<f64> => RosVector3);

impl TryFrom<&Point> for Point3<f64> {
    type Error = MessageError;
    fn try_from(p: &Point) -> Result<Self, MessageError> {
        finite3("geometry_msgs/Point", p.x, p.y, p.z).map(Point3::from)
    }
}
by_value!(Point => Point3<f64>);

impl TryFrom<&Point> for Vector3<f64> {
    type Error = MessageError;
    fn try_from(p: &Point) -> Result<Self, MessageError> {
        finite3("geometry_msgs/Point", p.x, p.y, p.z)
    }
}
by_value!(Point => Vector3<f64>);

impl TryFrom<&Point3<f64>> for Point {
    type Error = MessageError;
    fn try_from(p: &Point3<f64>) -> Result<Self, MessageError> {
        let v = finite3("point", p.x, p.y, p.z)?;
        Ok(Point {
            x: v.x,
            y: v.y,
            z: v.z,
        })
    }
}
by_value!(Point3<f64> => Point);

impl TryFrom<&Vector3<f64>> for Point {
    type Error = MessageError;
    fn try_from(v: &Vector3<f64>) -> Result<Self, MessageError> {
        Point::try_from(&Point3::from(*v))
    }
}
by_value!(Vector3<f64> => Point);

// ---- rotations ----

impl TryFrom<&Quaternion> for UnitQuaternion<f64> {
    type Error = MessageError;
    /// Normalizes the quaternion; refuses non-finite components and norms below
    /// [`MIN_QUATERNION_NORM`].
    fn try_from(q: &Quaternion) -> Result<Self, MessageError> {
        let what = "geometry_msgs/Quaternion";
        let raw = NaQuaternion::new(
            finite(what, q.w)?,
            finite(what, q.x)?,
            finite(what, q.y)?,
            finite(what, q.z)?,
        );
        let norm = raw.norm();
        if norm < MIN_QUATERNION_NORM {
            return Err(MessageError::ZeroQuaternion { norm });
        }
        Ok(UnitQuaternion::new_unchecked(raw / norm))
    }
}
by_value!(Quaternion => UnitQuaternion<f64>);

impl TryFrom<&UnitQuaternion<f64>> for Quaternion {
    type Error = MessageError;
    fn try_from(q: &UnitQuaternion<f64>) -> Result<Self, MessageError> {
        let what = "unit quaternion";
        Ok(Quaternion {
            x: finite(what, q.i)?,
            y: finite(what, q.j)?,
            z: finite(what, q.k)?,
            w: finite(what, q.w)?,
        })
    }
}
by_value!(UnitQuaternion<f64> => Quaternion);

// ---- rigid transforms ----

impl TryFrom<&Pose> for Isometry3<f64> {
    type Error = MessageError;
    fn try_from(p: &Pose) -> Result<Self, MessageError> {
        let t = Vector3::try_from(&p.position)?;
        let r = UnitQuaternion::try_from(&p.orientation)?;
        Ok(Isometry3::from_parts(Translation3::from(t), r))
    }
}
by_value!(Pose => Isometry3<f64>);

impl TryFrom<&Isometry3<f64>> for Pose {
    type Error = MessageError;
    fn try_from(iso: &Isometry3<f64>) -> Result<Self, MessageError> {
        Ok(Pose {
            position: Point::try_from(&iso.translation.vector)?,
            orientation: Quaternion::try_from(&iso.rotation)?,
        })
    }
}
by_value!(Isometry3<f64> => Pose);

impl TryFrom<&Transform> for Isometry3<f64> {
    type Error = MessageError;
    fn try_from(tf: &Transform) -> Result<Self, MessageError> {
        let t = Vector3::try_from(&tf.translation)?;
        let r = UnitQuaternion::try_from(&tf.rotation)?;
        Ok(Isometry3::from_parts(Translation3::from(t), r))
    }
}
by_value!(Transform => Isometry3<f64>);

impl TryFrom<&Isometry3<f64>> for Transform {
    type Error = MessageError;
    fn try_from(iso: &Isometry3<f64>) -> Result<Self, MessageError> {
        Ok(Transform {
            translation: RosVector3::try_from(&iso.translation.vector)?,
            rotation: Quaternion::try_from(&iso.rotation)?,
        })
    }
}
by_value!(Isometry3<f64> => Transform);

// ---- twists and wrenches ----

fn stack(top: Vector3<f64>, bottom: Vector3<f64>) -> Vector6<f64> {
    Vector6::new(top.x, top.y, top.z, bottom.x, bottom.y, bottom.z)
}

fn split(what: &'static str, v: &Vector6<f64>) -> Result<(RosVector3, RosVector3), MessageError> {
    for x in v.iter() {
        finite(what, *x)?;
    }
    let top = RosVector3 {
        x: v[0],
        y: v[1],
        z: v[2],
    };
    let bottom = RosVector3 {
        x: v[3],
        y: v[4],
        z: v[5],
    };
    Ok((top, bottom))
}

impl TryFrom<&Twist> for Vector6<f64> {
    type Error = MessageError;
    /// `[linear; angular]`.
    fn try_from(t: &Twist) -> Result<Self, MessageError> {
        Ok(stack(
            Vector3::try_from(&t.linear)?,
            Vector3::try_from(&t.angular)?,
        ))
    }
}
by_value!(Twist => Vector6<f64>);

impl TryFrom<&Vector6<f64>> for Twist {
    type Error = MessageError;
    /// Rows 0-2 are the linear, rows 3-5 the angular velocity.
    fn try_from(v: &Vector6<f64>) -> Result<Self, MessageError> {
        let (linear, angular) = split("twist", v)?;
        Ok(Twist { linear, angular })
    }
}
by_value!(Vector6<f64> => Twist);

impl TryFrom<&Wrench> for Vector6<f64> {
    type Error = MessageError;
    /// `[force; torque]`.
    fn try_from(w: &Wrench) -> Result<Self, MessageError> {
        Ok(stack(
            Vector3::try_from(&w.force)?,
            Vector3::try_from(&w.torque)?,
        ))
    }
}
by_value!(Wrench => Vector6<f64>);

impl TryFrom<&Vector6<f64>> for Wrench {
    type Error = MessageError;
    /// Rows 0-2 are the force, rows 3-5 the torque.
    fn try_from(v: &Vector6<f64>) -> Result<Self, MessageError> {
        let (force, torque) = split("wrench", v)?;
        Ok(Wrench { force, torque })
    }
}
by_value!(Vector6<f64> => Wrench);

// ---- time ----

/// `(sec, nanosec)` with `nanosec` in `[0, 1e9)` for a number of seconds, rounded to the nearest
/// nanosecond.
fn split_secs(what: &'static str, secs: f64) -> Result<(i32, u32), MessageError> {
    let secs = finite(what, secs)?;
    let total = (secs * 1e9).round();
    // i32 seconds: [-2^31, 2^31) s, in nanoseconds.
    let lo = f64::from(i32::MIN) * 1e9;
    let hi = (f64::from(i32::MAX) + 1.0) * 1e9;
    if total < lo || total >= hi {
        return Err(MessageError::TimeOutOfRange {
            what,
            detail: format!("{secs} s"),
        });
    }
    let total = total as i64;
    let sec = total.div_euclid(i64::from(NANOS_PER_SEC));
    let nanosec = total.rem_euclid(i64::from(NANOS_PER_SEC));
    Ok((sec as i32, nanosec as u32))
}

fn check_nanosec(what: &'static str, nanosec: u32) -> Result<(), MessageError> {
    if nanosec >= NANOS_PER_SEC {
        return Err(MessageError::TimeOutOfRange {
            what,
            detail: format!("nanosec {nanosec} >= 1e9"),
        });
    }
    Ok(())
}

impl Time {
    /// The time `secs` seconds after the epoch (negative: before), rounded to the nanosecond.
    pub fn from_secs_f64(secs: f64) -> Result<Self, MessageError> {
        let (sec, nanosec) = split_secs("time", secs)?;
        Ok(Time { sec, nanosec })
    }

    /// Seconds since the epoch (`sec + nanosec * 1e-9`).
    pub fn as_secs_f64(&self) -> f64 {
        f64::from(self.sec) + f64::from(self.nanosec) * 1e-9
    }

    /// The current system time.
    pub fn now() -> Result<Self, MessageError> {
        Time::try_from(SystemTime::now())
    }
}

impl Duration {
    /// A duration of `secs` seconds (may be negative), rounded to the nanosecond.
    pub fn from_secs_f64(secs: f64) -> Result<Self, MessageError> {
        let (sec, nanosec) = split_secs("duration", secs)?;
        Ok(Duration { sec, nanosec })
    }

    /// Length in seconds (`sec + nanosec * 1e-9`).
    pub fn as_secs_f64(&self) -> f64 {
        f64::from(self.sec) + f64::from(self.nanosec) * 1e-9
    }
}

impl TryFrom<SystemTime> for Time {
    type Error = MessageError;
    fn try_from(t: SystemTime) -> Result<Self, MessageError> {
        let out_of_range = || MessageError::TimeOutOfRange {
            what: "time",
            detail: format!("{t:?}"),
        };
        let (sec, nanosec) = match t.duration_since(UNIX_EPOCH) {
            Ok(d) => (
                i64::try_from(d.as_secs()).map_err(|_| out_of_range())?,
                d.subsec_nanos(),
            ),
            Err(before) => {
                // Before the epoch: sec is negative, nanosec still counts forwards.
                let d = before.duration();
                let secs = i64::try_from(d.as_secs()).map_err(|_| out_of_range())?;
                match d.subsec_nanos() {
                    0 => (-secs, 0),
                    n => (-secs - 1, NANOS_PER_SEC - n),
                }
            }
        };
        let sec = i32::try_from(sec).map_err(|_| out_of_range())?;
        Ok(Time { sec, nanosec })
    }
}

impl TryFrom<&Time> for SystemTime {
    type Error = MessageError;
    fn try_from(t: &Time) -> Result<Self, MessageError> {
        check_nanosec("time", t.nanosec)?;
        let nanos = StdDuration::from_nanos(u64::from(t.nanosec));
        let secs = StdDuration::from_secs(u64::from(t.sec.unsigned_abs()));
        let shifted = if t.sec >= 0 {
            UNIX_EPOCH.checked_add(secs)
        } else {
            UNIX_EPOCH.checked_sub(secs)
        };
        shifted
            .and_then(|s| s.checked_add(nanos))
            .ok_or_else(|| MessageError::TimeOutOfRange {
                what: "time",
                detail: format!("{t:?}"),
            })
    }
}
by_value!(Time => SystemTime);

impl TryFrom<StdDuration> for Duration {
    type Error = MessageError;
    fn try_from(d: StdDuration) -> Result<Self, MessageError> {
        let sec = i32::try_from(d.as_secs()).map_err(|_| MessageError::TimeOutOfRange {
            what: "duration",
            detail: format!("{d:?}"),
        })?;
        Ok(Duration {
            sec,
            nanosec: d.subsec_nanos(),
        })
    }
}

impl TryFrom<&Duration> for StdDuration {
    type Error = MessageError;
    /// Refuses negative durations, which `std::time::Duration` cannot hold.
    fn try_from(d: &Duration) -> Result<Self, MessageError> {
        check_nanosec("duration", d.nanosec)?;
        let sec = u64::try_from(d.sec).map_err(|_| MessageError::TimeOutOfRange {
            what: "duration",
            detail: format!("negative duration {d:?}"),
        })?;
        Ok(StdDuration::new(sec, d.nanosec))
    }
}
by_value!(Duration => StdDuration);

#[cfg(test)]
mod tests {
    use super::*;
    use approx::assert_relative_eq;
    use proptest::prelude::*;

    #[test]
    fn quaternion_is_normalized_and_checked() {
        let q = Quaternion {
            x: 0.0,
            y: 0.0,
            z: 2.0,
            w: 2.0,
        };
        let u = UnitQuaternion::try_from(&q).unwrap();
        assert_relative_eq!(u.angle(), std::f64::consts::FRAC_PI_2, epsilon = 1e-15);
        assert_relative_eq!(u.quaternion().norm(), 1.0, epsilon = 1e-15);
        let zero = Quaternion {
            x: 0.0,
            y: 0.0,
            z: 0.0,
            w: 0.0,
        };
        assert!(matches!(
            UnitQuaternion::try_from(&zero),
            Err(MessageError::ZeroQuaternion { .. })
        ));
        let nan = Quaternion {
            x: f64::NAN,
            ..Quaternion::default()
        };
        assert!(matches!(
            UnitQuaternion::try_from(&nan),
            Err(MessageError::NonFinite { .. })
        ));
        let inf = Quaternion {
            w: f64::INFINITY,
            ..Quaternion::default()
        };
        assert!(UnitQuaternion::try_from(&inf).is_err());
        // The ROS default quaternion is the identity.
        assert_eq!(
            UnitQuaternion::try_from(Quaternion::default()).unwrap(),
            UnitQuaternion::identity()
        );
    }

    #[test]
    fn pose_and_transform_agree_with_the_point_mapping() {
        let iso = Isometry3::from_parts(
            Translation3::new(0.3, -0.2, 1.0),
            UnitQuaternion::from_euler_angles(0.4, -1.1, 2.5),
        );
        let pose = Pose::try_from(&iso).unwrap();
        let tf = Transform::try_from(&iso).unwrap();
        assert_eq!(pose.position.x, tf.translation.x);
        assert_eq!(pose.orientation, tf.rotation);
        let p = Point3::new(1.0, 2.0, 3.0);
        let a = Isometry3::try_from(&pose).unwrap() * p;
        let b = Isometry3::try_from(&tf).unwrap() * p;
        assert_relative_eq!(a, iso * p, epsilon = 1e-12);
        assert_relative_eq!(b, iso * p, epsilon = 1e-12);
    }

    #[test]
    fn non_finite_inputs_are_refused_in_both_directions() {
        let mut iso = Isometry3::identity();
        iso.translation.vector.y = f64::NAN;
        assert!(Pose::try_from(&iso).is_err());
        assert!(Transform::try_from(&iso).is_err());
        let mut pose = Pose::default();
        pose.position.z = f64::NEG_INFINITY;
        assert!(matches!(
            Isometry3::try_from(&pose),
            Err(MessageError::NonFinite { .. })
        ));
        let v = Vector6::new(1.0, 2.0, 3.0, 4.0, f64::NAN, 6.0);
        assert!(Twist::try_from(&v).is_err());
        assert!(Wrench::try_from(&v).is_err());
        let w = Wrench {
            torque: RosVector3 {
                x: f64::INFINITY,
                y: 0.0,
                z: 0.0,
            },
            ..Wrench::default()
        };
        assert!(Vector6::try_from(&w).is_err());
        assert!(Point::try_from(&Vector3::new(f64::NAN, 0.0, 0.0)).is_err());
    }

    #[test]
    fn twist_and_wrench_row_order() {
        let v = Vector6::new(1.0, 2.0, 3.0, 4.0, 5.0, 6.0);
        let t = Twist::try_from(&v).unwrap();
        assert_eq!(
            (t.linear.x, t.linear.z, t.angular.x, t.angular.z),
            (1.0, 3.0, 4.0, 6.0)
        );
        let w = Wrench::try_from(&v).unwrap();
        assert_eq!((w.force.y, w.torque.y), (2.0, 5.0));
        assert_eq!(Vector6::try_from(&t).unwrap(), v);
        assert_eq!(Vector6::try_from(&w).unwrap(), v);
    }

    #[test]
    fn time_from_seconds() {
        assert_eq!(
            Time::from_secs_f64(-1.7).unwrap(),
            Time {
                sec: -2,
                nanosec: 300_000_000
            }
        );
        assert_eq!(
            Time::from_secs_f64(1.7).unwrap(),
            Time {
                sec: 1,
                nanosec: 700_000_000
            }
        );
        // Rounding up to the next second carries.
        assert_eq!(
            Time::from_secs_f64(0.999_999_999_9).unwrap(),
            Time { sec: 1, nanosec: 0 }
        );
        assert!(Time::from_secs_f64(f64::NAN).is_err());
        assert!(Time::from_secs_f64(3e9).is_err());
        assert!(Duration::from_secs_f64(-3e9).is_err());
        assert!(Time::from_secs_f64(f64::from(i32::MIN)).is_ok());
        assert_relative_eq!(Duration::from_secs_f64(2.25).unwrap().as_secs_f64(), 2.25);
    }

    #[test]
    fn time_and_system_time() {
        let t = SystemTime::UNIX_EPOCH + StdDuration::new(1_700_000_000, 123_456_789);
        let ros = Time::try_from(t).unwrap();
        assert_eq!(
            ros,
            Time {
                sec: 1_700_000_000,
                nanosec: 123_456_789
            }
        );
        assert_eq!(SystemTime::try_from(&ros).unwrap(), t);
        let before = SystemTime::UNIX_EPOCH - StdDuration::new(1, 250_000_000);
        let ros = Time::try_from(before).unwrap();
        assert_eq!(
            ros,
            Time {
                sec: -2,
                nanosec: 750_000_000
            }
        );
        assert_eq!(SystemTime::try_from(&ros).unwrap(), before);
        let bad = Time {
            sec: 0,
            nanosec: 1_000_000_000,
        };
        assert!(SystemTime::try_from(&bad).is_err());
        assert!(Time::now().unwrap().sec > 1_600_000_000);
        let d = Duration {
            sec: -1,
            nanosec: 0,
        };
        assert!(StdDuration::try_from(&d).is_err());
        assert_eq!(
            StdDuration::try_from(Duration::try_from(StdDuration::from_millis(1500)).unwrap())
                .unwrap(),
            StdDuration::from_millis(1500)
        );
    }

    proptest! {
        #[test]
        fn isometry_round_trip(
            t in prop::array::uniform3(-1e3f64..1e3),
            axis in prop::array::uniform3(-1.0f64..1.0),
            angle in -3.1f64..3.1,
        ) {
            let axis = Vector3::from(axis);
            prop_assume!(axis.norm() > 1e-3);
            let rot = UnitQuaternion::from_axis_angle(&nalgebra::Unit::new_normalize(axis), angle);
            let iso = Isometry3::from_parts(Translation3::from(Vector3::from(t)), rot);
            let back = Isometry3::try_from(Pose::try_from(&iso).unwrap()).unwrap();
            prop_assert!((back.translation.vector - iso.translation.vector).norm() == 0.0);
            prop_assert!(back.rotation.angle_to(&iso.rotation) < 1e-12);
        }

        #[test]
        fn time_round_trip(sec in i32::MIN..i32::MAX, nanosec in 0u32..1_000_000_000) {
            let t = Time { sec, nanosec };
            prop_assert_eq!(Time::try_from(SystemTime::try_from(&t).unwrap()).unwrap(), t);
            // f64 seconds keep the time to within a microsecond over the i32 range.
            let back = Time::from_secs_f64(t.as_secs_f64()).unwrap();
            let diff = (i64::from(back.sec) - i64::from(sec)) * 1_000_000_000
                + i64::from(back.nanosec) - i64::from(nanosec);
            prop_assert!(diff.abs() <= 1_000, "diff {} ns", diff);
        }
    }
}
