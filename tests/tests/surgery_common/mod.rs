//! What the surgery DDS tests (`surgery`, `surgery_proximity`) share: the coarse cranium phantom
//! as the nodes read it, and the library's cut outline on it at the patient pose of
//! `config/virtual_protection.yaml`. Included with `mod surgery_common;`.

use std::path::{Path, PathBuf};

use nalgebra::{Isometry3, Point3, Vector3};
use rpq_kinematics::TriMesh;
use rpq_proximity::Model;
use rpq_surgery::phantom::{cranium_phantom, cut_outline, CutOutlineSpec, PhantomSpec};
use rpq_surgery::{generate_shield, MeshGround, Outline, Shield, ShieldSpec};

/// Outline points as a YAML list of `geometry_msgs/Point` (`.nan` for NaN, which rclpy's peer
/// reads as a float).
pub fn points_yaml(pts: &[Point3<f64>]) -> String {
    let num = |v: f64| {
        if v.is_nan() {
            ".nan".to_string()
        } else {
            format!("{v:?}")
        }
    };
    let items: Vec<String> = pts
        .iter()
        .map(|p| format!("{{x: {}, y: {}, z: {}}}", num(p.x), num(p.y), num(p.z)))
        .collect();
    format!("[{}]", items.join(", "))
}

/// The patient of the surgery tests and what `rpq_surgery` makes of it directly.
pub struct Patient {
    /// The phantom's binary STL (the file the nodes load).
    pub stl_file: PathBuf,
    /// The mesh read back from `stl_file`, as a node reads it.
    pub bone: TriMesh,
    /// The same mesh as a proximity model.
    pub phantom: Model,
    /// Where the patient lies (the nodes' `patient_pose`).
    pub pose: Isometry3<f64>,
    /// The default cut outline on the phantom (world frame).
    pub points: Vec<Point3<f64>>,
    /// The outline as the shield and the cutting aid take it.
    pub outline: Outline,
}

impl Patient {
    /// Writes a coarse phantom (12 cells, 3,456 triangles: quick to send and for rclpy to
    /// decode) to `dir/phantom.stl`, reads it back and draws the default cut outline on it.
    pub fn write(dir: &Path) -> Patient {
        let coarse = cranium_phantom(&PhantomSpec {
            cells: 12,
            ..PhantomSpec::default()
        })
        .unwrap();
        let stl_file = dir.join("phantom.stl");
        std::fs::write(&stl_file, rpq_surgery::stl::to_binary_stl(&coarse)).unwrap();
        let bone = TriMesh::from_stl_file(&stl_file).unwrap();
        let pose = Isometry3::translation(0.45, 0.0, 0.0);
        let phantom = Model::new(bone.vertices.clone(), bone.triangles.clone()).unwrap();
        let points = cut_outline(&phantom, &pose, &CutOutlineSpec::default()).unwrap();
        let outline = Outline::new(&points, &Vector3::z()).unwrap();
        Patient {
            stl_file,
            bone,
            phantom,
            pose,
            points,
            outline,
        }
    }

    /// The phantom's surface under the outline (what the generators lay the protections on).
    pub fn ground(&self) -> MeshGround<'_> {
        MeshGround::new(&self.phantom, self.pose, *self.outline.frame())
    }

    /// The shield `virtual_protection` must return for this outline with the node's default
    /// height and margin at `resolution`.
    pub fn shield(&self, resolution: usize, ground: &mut MeshGround) -> Shield {
        generate_shield(
            &self.outline,
            &ShieldSpec {
                height: 0.025,
                margin: 0.035,
                resolution,
            },
            Some(ground),
        )
        .unwrap()
    }
}
