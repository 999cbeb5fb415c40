//! Distances from points and segments to protection meshes by the engine's mesh-mesh distance
//! query: the independent check of the navigation (it shares no code with the sweep query the
//! navigation uses) and the tool-patient distance of displays.

use nalgebra::{Isometry3, Point3, Vector3};
use rpq_proximity::{distance, DistanceRequest, DistanceResult, Model, QueryWorkspace};

use crate::protection::Protection;

/// Distances to protection meshes: points by a fixed 1 nm probe triangle (posed, so the engine's
/// closest-pair cache applies from one call to the next), segments by the 1-Lipschitz bound
/// `min over the segment ≥ (d(a) + d(b) − |ab|) / 2`, or, when that bound does not decide,
/// against a sliver triangle holding the segment. Reusable buffers.
#[derive(Debug)]
pub struct DistanceProbe {
    point: Model,
    ws: QueryWorkspace,
}

impl Default for DistanceProbe {
    fn default() -> Self {
        DistanceProbe::new()
    }
}

impl DistanceProbe {
    /// A probe.
    pub fn new() -> DistanceProbe {
        let tri = vec![
            Point3::origin(),
            Point3::new(1e-9, 0.0, 0.0),
            Point3::new(0.0, 1e-9, 0.0),
        ];
        DistanceProbe {
            point: Model::new(tri, vec![[0, 1, 2]]).expect("a valid triangle"),
            ws: QueryWorkspace::new(),
        }
    }

    /// The closest point of the protection's mesh to `a` (`point_a` of the result, base frame)
    /// and the distance (within 2 nm), if closer than `bound`.
    pub fn closest(
        &mut self,
        p: &Protection,
        a: &Point3<f64>,
        bound: f64,
    ) -> Option<DistanceResult> {
        let at = Isometry3::translation(a.x, a.y, a.z);
        let req = DistanceRequest::with_upper_bound(bound);
        distance(&p.pose, &p.model, &at, &self.point, &req, &mut self.ws)
    }

    /// Distance from the point `a` to the protection's mesh [m] (within 2 nm).
    pub fn point_distance(&mut self, p: &Protection, a: &Point3<f64>) -> f64 {
        self.closest(p, a, f64::INFINITY)
            .map_or(f64::NAN, |r| r.distance)
    }

    /// Distance from the point `a` to the protection's mesh when it is below `cap`, else `cap`
    /// (a lower bound; the query stops early).
    pub fn point_distance_capped(&mut self, p: &Protection, a: &Point3<f64>, cap: f64) -> f64 {
        self.closest(p, a, cap).map_or(cap, |r| r.distance)
    }

    /// A lower bound of the distance from the segment `a b` to the protection's mesh, given
    /// the end points' distances `da`, `db`, that decides whether it is at least `r` (exact,
    /// within 2 nm, when the Lipschitz bound does not decide).
    pub fn segment_distance(
        &mut self,
        p: &Protection,
        a: &Point3<f64>,
        b: &Point3<f64>,
        da: f64,
        db: f64,
        r: f64,
    ) -> f64 {
        let bound = (da + db - (b - a).norm()) / 2.0;
        if bound >= r {
            return bound.min(da).min(db);
        }
        let d = b - a;
        if d.norm() <= 1e-9 {
            return da.min(db);
        }
        let side = d
            .cross(&Vector3::new(0.36, 0.48, 0.8))
            .try_normalize(1e-300)
            .or_else(|| d.cross(&Vector3::x()).try_normalize(1e-300))
            .unwrap_or_else(Vector3::x)
            * 1e-9;
        let origin = Isometry3::translation(a.x, a.y, a.z);
        let tri = vec![Point3::origin(), Point3::from(d), Point3::from(d + side)];
        let Ok(sliver) = Model::new(tri, vec![[0, 1, 2]]) else {
            return f64::NAN;
        };
        distance(
            &p.pose,
            &p.model,
            &origin,
            &sliver,
            &DistanceRequest::exact(),
            &mut self.ws,
        )
        .map_or(f64::NAN, |r| r.distance)
    }
}
