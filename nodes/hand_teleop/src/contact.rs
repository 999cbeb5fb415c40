//! Fingertip contact warnings (Hu et al. V-A): distances from the robot's distal links to
//! objects, by the proximity engine (`rpq_proximity`), warned about below a threshold.
//!
//! Objects are axis-aligned boxes in the palm frame, given as `[cx, cy, cz, hx, hy, hz]`
//! (centre and half-sizes, m). The distal link meshes are the generated
//! `meshes/hit_dlr_hand/<finger>_distal.stl`.

use nalgebra::{Isometry3, Point3};
use rpq_hand::robot::{HitDlrHand, RobotFinger};
use rpq_proximity::{distance, DistanceRequest, Model, QueryWorkspace};

/// A fingertip close to (or touching) an object.
#[derive(Clone, Debug, PartialEq)]
pub struct Contact {
    /// Robot finger.
    pub finger: RobotFinger,
    /// Index of the object.
    pub object: usize,
    /// Distance (m), 0 when touching or penetrating.
    pub distance: f64,
}

/// Distal-link meshes and objects.
pub struct ContactMonitor {
    tips: Vec<(RobotFinger, Model)>,
    objects: Vec<Model>,
    threshold: f64,
    ws: QueryWorkspace,
}

impl std::fmt::Debug for ContactMonitor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "ContactMonitor({} objects, threshold {})",
            self.objects.len(),
            self.threshold
        )
    }
}

/// Closed box mesh (12 triangles, outward normals).
pub fn box_mesh(c: [f64; 3], h: [f64; 3]) -> (Vec<Point3<f64>>, Vec<[u32; 3]>) {
    let v: Vec<Point3<f64>> = (0..8)
        .map(|i| {
            let s = |b: usize| if i >> b & 1 == 1 { 1.0 } else { -1.0 };
            Point3::new(c[0] + s(0) * h[0], c[1] + s(1) * h[1], c[2] + s(2) * h[2])
        })
        .collect();
    let t = vec![
        [0, 2, 1],
        [1, 2, 3], // -z
        [4, 5, 6],
        [5, 7, 6], // +z
        [0, 1, 4],
        [1, 5, 4], // -y
        [2, 6, 3],
        [3, 6, 7], // +y
        [0, 4, 2],
        [2, 4, 6], // -x
        [1, 3, 5],
        [3, 7, 5], // +x
    ];
    (v, t)
}

impl ContactMonitor {
    /// Loads the distal meshes from `mesh_dir` and builds the boxes (`6 × n` values).
    pub fn new(mesh_dir: &str, boxes: &[f64], threshold: f64) -> Result<Self, String> {
        if !boxes.len().is_multiple_of(6) {
            return Err(format!(
                "contact.boxes needs 6 values per box, got {}",
                boxes.len()
            ));
        }
        let mut tips = Vec::new();
        if !boxes.is_empty() {
            for f in RobotFinger::ALL {
                let path = format!("{mesh_dir}/{}_distal.stl", f.name());
                let m = rpq_kinematics::TriMesh::from_stl_file(&path)
                    .map_err(|e| format!("{path}: {e}"))?;
                tips.push((
                    f,
                    Model::new(m.vertices, m.triangles).map_err(|e| format!("{path}: {e}"))?,
                ));
            }
        }
        let mut objects = Vec::new();
        for b in boxes.chunks(6) {
            if b.iter().any(|v| !v.is_finite()) || b[3..].iter().any(|&h| h <= 0.0) {
                return Err(format!("invalid contact box {b:?}"));
            }
            let (v, t) = box_mesh([b[0], b[1], b[2]], [b[3], b[4], b[5]]);
            objects.push(Model::new(v, t).map_err(|e| e.to_string())?);
        }
        Ok(ContactMonitor {
            tips,
            objects,
            threshold,
            ws: QueryWorkspace::default(),
        })
    }

    /// Contacts closer than the threshold for the robot joints `q`.
    pub fn check(&mut self, q: &[f64; 13]) -> Vec<Contact> {
        let mut out = Vec::new();
        let id = Isometry3::identity();
        for (f, tip) in &self.tips {
            let pose = HitDlrHand::distal_pose(*f, q);
            for (i, obj) in self.objects.iter().enumerate() {
                if let Some(r) = distance(
                    &pose,
                    tip,
                    &id,
                    obj,
                    &DistanceRequest::default(),
                    &mut self.ws,
                ) {
                    if r.distance < self.threshold {
                        out.push(Contact {
                            finger: *f,
                            object: i,
                            distance: r.distance,
                        });
                    }
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MESHES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../meshes/hit_dlr_hand");

    #[test]
    fn box_in_front_of_the_index_is_reported_only_when_close() {
        let q = [0.0; 13];
        let tip = HitDlrHand::fingertips(&q)[1];
        // a 2 cm cube whose near face is 3 mm beyond the straight index fingertip
        let b = [tip.x + 0.003 + 0.01, tip.y, tip.z, 0.01, 0.01, 0.01];
        let mut m = ContactMonitor::new(MESHES, &b, 0.005).unwrap();
        let c = m.check(&q);
        assert_eq!(c.len(), 1, "{c:?}");
        assert_eq!(c[0].finger, RobotFinger::Index);
        // the distal mesh ends with a dome at about the fingertip: distance ≈ 3 mm
        assert!(
            c[0].distance > 0.001 && c[0].distance < 0.004,
            "{}",
            c[0].distance
        );
        // flexing the index away: no contact
        let mut q2 = q;
        q2[5] = 1.0;
        assert!(m.check(&q2).is_empty());
        assert!(ContactMonitor::new(MESHES, &b[..5], 0.005).is_err());
    }
}
