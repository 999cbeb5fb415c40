//! The surface the protections stand on: heights along the outline frame's z.
//!
//! The shield's outer curve and the cutting aid's inner curve are planar in the paper. On a
//! cranium they are placed on the patient's surface: each point `(x, y)` of the outline frame
//! gets the height of the topmost surface point on the frame's z line through it (the
//! surface seen from the side the tool comes from).

use nalgebra::{Isometry3, Point2};
use rpq_proximity::{segment_within, Model, SegmentHit, SweepWorkspace};

use crate::frame::SurfaceFrame;

/// A height field seen from a [`SurfaceFrame`]'s +z side.
pub trait Ground {
    /// The frame z of the topmost ground point on the z line through `(x, y)` of the frame,
    /// `None` where there is no ground.
    fn height(&mut self, x: f64, y: f64) -> Option<f64>;
}

/// A triangle mesh as ground (a vertical segment cast through its hierarchy per query).
#[derive(Debug)]
pub struct MeshGround<'a> {
    model: &'a Model,
    pose: Isometry3<f64>,
    frame: SurfaceFrame,
    reach: f64,
    ws: SweepWorkspace,
    hits: Vec<SegmentHit>,
}

impl<'a> MeshGround<'a> {
    /// `model` placed at `pose` in the caller's frame, seen from `frame` (also in the caller's
    /// frame).
    pub fn new(model: &'a Model, pose: Isometry3<f64>, frame: SurfaceFrame) -> MeshGround<'a> {
        let (lo, hi) = model.aabb();
        let centre = pose * nalgebra::center(&lo, &hi);
        let reach = (hi - lo).norm() + (centre.coords - frame.pose.translation.vector).norm() + 1.0;
        MeshGround {
            model,
            pose,
            frame,
            reach,
            ws: SweepWorkspace::new(),
            hits: Vec::new(),
        }
    }
}

impl Ground for MeshGround<'_> {
    fn height(&mut self, x: f64, y: f64) -> Option<f64> {
        let xy = Point2::new(x, y);
        let top = self.frame.to_parent(&xy, self.reach);
        let bottom = self.frame.to_parent(&xy, -self.reach);
        segment_within(
            &self.pose,
            self.model,
            &top,
            &bottom,
            0.0,
            &mut self.ws,
            &mut self.hits,
        );
        self.hits
            .iter()
            .map(|h| self.frame.to_local(&h.point_segment).z)
            .fold(None, |best: Option<f64>, z| {
                Some(best.map_or(z, |b| b.max(z)))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::{Point3, Vector3};

    #[test]
    fn heights_of_a_tilted_plate_from_a_tilted_frame() {
        // two stacked squares z = 0 and z = -0.1; the top one is the ground
        let v = vec![
            Point3::new(-1.0, -1.0, 0.0),
            Point3::new(1.0, -1.0, 0.0),
            Point3::new(1.0, 1.0, 0.0),
            Point3::new(-1.0, 1.0, 0.0),
            Point3::new(-1.0, -1.0, -0.1),
            Point3::new(1.0, -1.0, -0.1),
            Point3::new(1.0, 1.0, -0.1),
            Point3::new(-1.0, 1.0, -0.1),
        ];
        let m = Model::new(v, vec![[0, 1, 2], [0, 2, 3], [4, 5, 6], [4, 6, 7]]).unwrap();
        let frame = SurfaceFrame::new(Point3::new(0.0, 0.0, 0.3), &Vector3::z()).unwrap();
        let mut g = MeshGround::new(&m, Isometry3::identity(), frame);
        assert!((g.height(0.2, 0.3).unwrap() + 0.3).abs() < 1e-12);
        assert!(g.height(3.0, 0.0).is_none());
        // the mesh moved up by 0.05
        let mut g = MeshGround::new(&m, Isometry3::translation(0.0, 0.0, 0.05), frame);
        assert!((g.height(-0.5, 0.5).unwrap() + 0.25).abs() < 1e-12);
    }
}
