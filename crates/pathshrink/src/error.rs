//! The crate's error type.

/// Everything the crate refuses: bad paths, names, parameters, and what the robot cannot do.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PathShrinkError {
    /// The scene could not be used (unknown object, a robot where a mesh object is needed,
    /// a file the scene loader refused).
    #[error("scene: {0}")]
    Scene(String),
    /// An object name that the scene does not have.
    #[error("unknown object `{name}` (the scene has: {known})")]
    UnknownObject {
        /// The name asked for.
        name: String,
        /// The scene's object names, comma separated.
        known: String,
    },
    /// A parameter outside its allowed range (or not finite).
    #[error("parameter `{name}` = {value}: {reason}")]
    Parameter {
        /// Parameter name.
        name: &'static str,
        /// The value given.
        value: f64,
        /// What is allowed.
        reason: String,
    },
    /// The workpiece path is not usable (too short, not finite, penetrating, a required
    /// contact that is absent, ...).
    #[error("path: {0}")]
    Path(String),
    /// The motion cannot be turned into robot joints (unreachable, out of limits, no single
    /// arm configuration, singular).
    #[error("robot: {0}")]
    Robot(String),
    /// A file could not be written (plots, generated scene).
    #[error("{path}: {message}")]
    Io {
        /// The file or folder.
        path: String,
        /// What went wrong.
        message: String,
    },
}

impl From<rpq_scene::SceneError> for PathShrinkError {
    fn from(e: rpq_scene::SceneError) -> Self {
        PathShrinkError::Scene(e.to_string())
    }
}

/// Checks that a parameter is finite and inside `[lo, hi]`.
pub(crate) fn check_range(
    name: &'static str,
    value: f64,
    lo: f64,
    hi: f64,
) -> Result<(), PathShrinkError> {
    if value.is_finite() && (lo..=hi).contains(&value) {
        Ok(())
    } else {
        Err(PathShrinkError::Parameter {
            name,
            value,
            reason: format!("must be finite and within [{lo}, {hi}]"),
        })
    }
}

/// Checks that a parameter is finite and strictly positive, at most `hi`.
pub(crate) fn check_positive(
    name: &'static str,
    value: f64,
    hi: f64,
) -> Result<(), PathShrinkError> {
    if value.is_finite() && value > 0.0 && value <= hi {
        Ok(())
    } else {
        Err(PathShrinkError::Parameter {
            name,
            value,
            reason: format!("must be finite, > 0 and <= {hi}"),
        })
    }
}
