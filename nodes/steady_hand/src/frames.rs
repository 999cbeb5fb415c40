//! Frames that are not links of the robot's URDF, from `/tf` and `/tf_static`: e.g. a force
//! sensor mounted on the flange, published by a `static_transform_publisher` as
//! `tool0 → ft_sensor`.
//!
//! [`FrameTree`] keeps the newest transform of every child frame (parent, pose of the child in
//! the parent). [`FrameTree::resolve`] walks from a frame towards the root until it reaches a
//! frame the caller knows (a URDF link, whose pose comes from forward kinematics) and returns
//! that anchor and the frame's pose in it. Transforms whose child is itself an anchor (the
//! robot's own links on `/tf`) are not needed and the node does not store them.
//!
//! ```
//! use nalgebra::{Isometry3, Translation3, UnitQuaternion};
//! use steady_hand::frames::FrameTree;
//!
//! let mut tree = FrameTree::default();
//! let mount = Isometry3::from_parts(Translation3::new(0.0, 0.0, 0.03), UnitQuaternion::identity());
//! tree.set("tool0", "ft_sensor", mount, true);
//! let links = ["base_link", "tool0"];
//! let anchor = |name: &str| links.iter().position(|l| *l == name);
//! let (link, pose) = tree.resolve("ft_sensor", anchor).unwrap();
//! assert_eq!((link, pose), (1, mount));
//! assert!(tree.resolve("camera", anchor).is_none());
//! ```

use std::collections::HashMap;

use nalgebra::Isometry3;

/// Longest chain of non-URDF frames followed (a loop in the transforms ends the walk).
const MAX_DEPTH: usize = 32;

#[derive(Debug, Clone)]
struct Edge {
    parent: String,
    pose: Isometry3<f64>,
    is_static: bool,
}

/// The newest transform of each frame (see the module docs).
#[derive(Debug, Clone, Default)]
pub struct FrameTree {
    edges: HashMap<String, Edge>,
}

impl FrameTree {
    /// Stores `child`'s pose in `parent` (replacing an older one). A non-finite pose is
    /// ignored (returns false).
    pub fn set(
        &mut self,
        parent: &str,
        child: &str,
        pose: Isometry3<f64>,
        is_static: bool,
    ) -> bool {
        let finite = pose.translation.vector.iter().all(|x| x.is_finite())
            && pose.rotation.coords.iter().all(|x| x.is_finite());
        if !finite || parent == child || child.is_empty() {
            return false;
        }
        match self.edges.get_mut(child) {
            Some(e) if e.parent == parent => {
                e.pose = pose;
                e.is_static = is_static;
            }
            _ => {
                self.edges.insert(
                    child.to_string(),
                    Edge {
                        parent: parent.to_string(),
                        pose,
                        is_static,
                    },
                );
            }
        }
        true
    }

    /// Whether `child` came from `/tf_static`.
    pub fn is_static(&self, child: &str) -> Option<bool> {
        self.edges.get(child).map(|e| e.is_static)
    }

    /// The first frame on the way from `frame` to the root for which `anchor` returns an index,
    /// and `frame`'s pose in that frame. `frame` itself may be an anchor (identity pose).
    /// `None` if the walk ends (unknown frame) or loops before an anchor is found.
    pub fn resolve(
        &self,
        frame: &str,
        anchor: impl Fn(&str) -> Option<usize>,
    ) -> Option<(usize, Isometry3<f64>)> {
        let mut pose = Isometry3::identity();
        let mut name = frame;
        for _ in 0..=MAX_DEPTH {
            if let Some(k) = anchor(name) {
                return Some((k, pose));
            }
            let e = self.edges.get(name)?;
            pose = e.pose * pose;
            name = &e.parent;
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::{Translation3, UnitQuaternion, Vector3};

    #[test]
    fn chains_compose_and_loops_end() {
        let mut t = FrameTree::default();
        let a = Isometry3::from_parts(
            Translation3::new(0.0, 0.0, 0.05),
            UnitQuaternion::from_axis_angle(&Vector3::z_axis(), 0.5),
        );
        let b = Isometry3::from_parts(
            Translation3::new(0.01, 0.0, 0.0),
            UnitQuaternion::from_axis_angle(&Vector3::x_axis(), 1.0),
        );
        assert!(t.set("tool0", "adapter", a, true));
        assert!(t.set("adapter", "sensor", b, false));
        let anchor = |n: &str| (n == "tool0").then_some(7);
        let (k, pose) = t.resolve("sensor", anchor).unwrap();
        assert_eq!(k, 7);
        assert!((pose.to_homogeneous() - (a * b).to_homogeneous()).norm() < 1e-15);
        assert_eq!(t.is_static("adapter"), Some(true));
        // newest wins
        t.set("tool0", "adapter", Isometry3::identity(), true);
        assert_eq!(
            t.resolve("adapter", anchor).unwrap().1,
            Isometry3::identity()
        );
        // a loop that never reaches an anchor
        t.set("x", "y", Isometry3::identity(), false);
        t.set("y", "x", Isometry3::identity(), false);
        assert!(t.resolve("x", anchor).is_none());
        let nan = Isometry3::from_parts(
            Translation3::new(f64::NAN, 0.0, 0.0),
            UnitQuaternion::identity(),
        );
        assert!(!t.set("tool0", "bad", nan, false));
    }
}
