//! Joint descriptions: what the simulator needs to know about each movable joint.

use super::SimError;

/// Type of a movable joint, with its position limits where it has some.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum JointKind {
    /// Rotation about an axis between `lower` and `upper` (radians).
    Revolute {
        /// Lower position limit (rad).
        lower: f64,
        /// Upper position limit (rad).
        upper: f64,
    },
    /// Unlimited rotation (radians). Positions are not wrapped.
    Continuous,
    /// Translation along an axis between `lower` and `upper` (metres).
    Prismatic {
        /// Lower position limit (m).
        lower: f64,
        /// Upper position limit (m).
        upper: f64,
    },
}

/// One movable joint of the simulated robot, as a URDF describes it.
#[derive(Debug, Clone, PartialEq)]
pub struct JointSpec {
    /// Joint name (unique, not empty).
    pub name: String,
    /// Type and position limits.
    pub kind: JointKind,
    /// Velocity limit (rad/s or m/s, from URDF `<limit velocity>`); finite and positive.
    pub max_velocity: f64,
}

impl JointSpec {
    /// A revolute joint limited to `[lower, upper]` rad.
    ///
    /// ```
    /// use robot_sim::hardware::JointSpec;
    /// let j1 = JointSpec::revolute("joint_1", -2.79, 2.79, 3.14);
    /// assert_eq!(j1.bounds(), (-2.79, 2.79));
    /// ```
    pub fn revolute(name: impl Into<String>, lower: f64, upper: f64, max_velocity: f64) -> Self {
        Self {
            name: name.into(),
            kind: JointKind::Revolute { lower, upper },
            max_velocity,
        }
    }

    /// A continuous (unlimited) revolute joint.
    pub fn continuous(name: impl Into<String>, max_velocity: f64) -> Self {
        Self {
            name: name.into(),
            kind: JointKind::Continuous,
            max_velocity,
        }
    }

    /// A prismatic joint limited to `[lower, upper]` m.
    pub fn prismatic(name: impl Into<String>, lower: f64, upper: f64, max_velocity: f64) -> Self {
        Self {
            name: name.into(),
            kind: JointKind::Prismatic { lower, upper },
            max_velocity,
        }
    }

    /// Position limits `(lower, upper)`; `(-inf, +inf)` for a continuous joint.
    pub fn bounds(&self) -> (f64, f64) {
        match self.kind {
            JointKind::Revolute { lower, upper } | JointKind::Prismatic { lower, upper } => {
                (lower, upper)
            }
            JointKind::Continuous => (f64::NEG_INFINITY, f64::INFINITY),
        }
    }

    /// Checks the name, the limits and the velocity limit.
    pub(crate) fn validate(&self) -> Result<(), SimError> {
        let bad = |reason: String| SimError::InvalidJoint {
            joint: self.name.clone(),
            reason,
        };
        if self.name.is_empty() {
            return Err(bad("the name is empty".into()));
        }
        if let JointKind::Revolute { lower, upper } | JointKind::Prismatic { lower, upper } =
            self.kind
        {
            if !lower.is_finite() || !upper.is_finite() {
                return Err(bad(format!(
                    "position limits [{lower}, {upper}] must be finite (use a continuous joint for an unlimited rotation)"
                )));
            }
            if lower > upper {
                return Err(bad(format!(
                    "lower limit {lower} is above upper limit {upper}"
                )));
            }
        }
        if !(self.max_velocity.is_finite() && self.max_velocity > 0.0) {
            return Err(bad(format!(
                "velocity limit {} must be finite and positive",
                self.max_velocity
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_joints_pass() {
        assert!(JointSpec::revolute("a", -1.0, 1.0, 2.0).validate().is_ok());
        assert!(JointSpec::revolute("a", 0.5, 0.5, 2.0).validate().is_ok());
        assert!(JointSpec::prismatic("p", 0.0, 0.2, 0.1).validate().is_ok());
        assert!(JointSpec::continuous("c", 1.0).validate().is_ok());
        assert_eq!(
            JointSpec::continuous("c", 1.0).bounds(),
            (f64::NEG_INFINITY, f64::INFINITY)
        );
    }

    #[test]
    fn invalid_joints_are_refused_with_reason() {
        let cases = [
            (JointSpec::revolute("", -1.0, 1.0, 1.0), "name is empty"),
            (JointSpec::revolute("a", 1.0, -1.0, 1.0), "above upper"),
            (JointSpec::revolute("a", f64::NAN, 1.0, 1.0), "finite"),
            (JointSpec::prismatic("a", 0.0, f64::INFINITY, 1.0), "finite"),
            (JointSpec::revolute("a", -1.0, 1.0, 0.0), "velocity limit"),
            (JointSpec::revolute("a", -1.0, 1.0, -2.0), "velocity limit"),
            (JointSpec::continuous("a", f64::NAN), "velocity limit"),
            (JointSpec::continuous("a", f64::INFINITY), "velocity limit"),
        ];
        for (joint, needle) in cases {
            let err = joint.validate().unwrap_err();
            assert!(
                matches!(err, SimError::InvalidJoint { .. }),
                "{joint:?}: {err:?}"
            );
            assert!(err.to_string().contains(needle), "{err}");
        }
    }
}
