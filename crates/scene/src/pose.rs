//! Poses in the crate's YAML files (scene and collision matrix): translation and
//! roll-pitch-yaw as in URDF.

use nalgebra::{Isometry3, Translation3, UnitQuaternion, Vector3};
use serde::{Deserialize, Serialize};

use crate::error::SceneError;

/// A pose as translation (m) and roll-pitch-yaw (rad, `R = Rz(y) Ry(p) Rx(r)` as URDF).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PoseSpec {
    /// Translation (m).
    #[serde(default)]
    pub xyz: [f64; 3],
    /// Roll, pitch, yaw (rad).
    #[serde(default)]
    pub rpy: [f64; 3],
}

impl PoseSpec {
    /// The isometry; non-finite values are an error.
    pub fn to_isometry(&self) -> Result<Isometry3<f64>, SceneError> {
        if !self.xyz.iter().chain(&self.rpy).all(|x| x.is_finite()) {
            return Err(SceneError::NonFinite {
                what: format!("pose {self:?}"),
            });
        }
        Ok(Isometry3::from_parts(
            Translation3::from(Vector3::from(self.xyz)),
            UnitQuaternion::from_euler_angles(self.rpy[0], self.rpy[1], self.rpy[2]),
        ))
    }

    /// The pose of an isometry.
    pub fn from_isometry(p: &Isometry3<f64>) -> PoseSpec {
        let (r, pi, y) = p.rotation.euler_angles();
        // `+ 0.0` turns -0.0 into 0.0 for tidier files.
        let t = p.translation.vector;
        PoseSpec {
            xyz: [t.x + 0.0, t.y + 0.0, t.z + 0.0],
            rpy: [r + 0.0, pi + 0.0, y + 0.0],
        }
    }
}
