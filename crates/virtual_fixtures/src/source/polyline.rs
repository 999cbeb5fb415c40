//! Guidance along a polyline path: [`PolylinePath`] and the closest-point answer
//! [`CurvePoint`] it shares with the parametric curve.

use nalgebra::{Isometry3, Point3, Unit, Vector3, Vector6};

use super::geometry::twist;
use super::guidance::{Guidance, GuidanceSource};
use crate::error::Error;

/// Closest point of a curve to a query point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CurvePoint {
    /// The closest point.
    pub point: Point3<f64>,
    /// Unit tangent there (direction of increasing arc length).
    pub tangent: Unit<Vector3<f64>>,
    /// Arc length from the start to `point`.
    pub arc_length: f64,
    /// Distance from the query point.
    pub distance: f64,
}

/// A polyline path `S` (at least two distinct points). `D = [t; 0]` (the tangent at the
/// closest point, eq. 17), `u = [q − p; 0]` (from the tool point `p` to its closest point
/// `q`). The closest point is exact: segments are grouped in chunks of [`PolylinePath::CHUNK`]
/// with bounding boxes, and a chunk is searched only if its box is nearer than the best point
/// found so far (starting from the chunk of the previous answer when a hint is given).
#[derive(Debug, Clone)]
pub struct PolylinePath {
    points: Vec<Point3<f64>>,
    cumulative: Vec<f64>,
    boxes: Vec<(Point3<f64>, Point3<f64>)>,
    free_rotation: bool,
    error_gain: f64,
    hint: usize,
}

fn box_distance2(b: &(Point3<f64>, Point3<f64>), p: &Point3<f64>) -> f64 {
    let mut d2 = 0.0;
    for k in 0..3 {
        let e = (b.0[k] - p[k]).max(0.0).max(p[k] - b.1[k]);
        d2 += e * e;
    }
    d2
}

fn closest_on_segment(a: &Point3<f64>, b: &Point3<f64>, p: &Point3<f64>) -> (f64, Point3<f64>) {
    let ab = b - a;
    let t = ((p - a).dot(&ab) / ab.norm_squared()).clamp(0.0, 1.0);
    (t, a + ab * t)
}

impl PolylinePath {
    /// Checked constructor: finite points, consecutive duplicates removed, at least two left.
    pub fn new(points: &[Point3<f64>]) -> Result<Self, Error> {
        if points.iter().any(|p| !p.iter().all(|x| x.is_finite())) {
            return Err(Error::NonFinite { what: "path point" });
        }
        let mut pts: Vec<Point3<f64>> = Vec::with_capacity(points.len());
        for p in points {
            if pts.last().is_none_or(|q| (p - q).norm() > 1e-12) {
                pts.push(*p);
            }
        }
        if pts.len() < 2 {
            return Err(Error::Degenerate(
                "a path needs at least two distinct points",
            ));
        }
        let mut cumulative = Vec::with_capacity(pts.len());
        let mut s = 0.0;
        cumulative.push(0.0);
        for w in pts.windows(2) {
            s += (w[1] - w[0]).norm();
            cumulative.push(s);
        }
        let nseg = pts.len() - 1;
        let boxes = (0..nseg.div_ceil(Self::CHUNK))
            .map(|c| {
                let seg = &pts[c * Self::CHUNK..=((c + 1) * Self::CHUNK).min(nseg)];
                let mut lo = seg[0];
                let mut hi = seg[0];
                for q in seg {
                    lo = lo.inf(q);
                    hi = hi.sup(q);
                }
                (lo, hi)
            })
            .collect();
        Ok(Self {
            points: pts,
            cumulative,
            boxes,
            free_rotation: false,
            error_gain: 1.0,
            hint: 0,
        })
    }

    /// Also allow free rotation: `D` gets the three angular unit twists as extra columns
    /// (position-only path following).
    pub fn with_free_rotation(mut self, free: bool) -> Self {
        self.free_rotation = free;
        self
    }

    /// Gain `g` of the error command `u = g (q − p)` [1/m] (default 1, i.e. `u` in metres).
    /// Eq. 11 mixes `u` with unit directions, so `g` sets the length scale at which the
    /// closed-loop correction becomes strong (`g = 1000` makes `u` "millimetres").
    pub fn with_error_gain(mut self, gain: f64) -> Self {
        self.error_gain = gain;
        self
    }

    /// The vertices.
    pub fn points(&self) -> &[Point3<f64>] {
        &self.points
    }

    /// Total arc length.
    pub fn length(&self) -> f64 {
        *self.cumulative.last().unwrap_or(&0.0)
    }

    fn segment_tangent(&self, i: usize) -> Vector3<f64> {
        (self.points[i + 1] - self.points[i]).normalize()
    }

    /// Segments per bounding-box chunk.
    pub const CHUNK: usize = 16;

    /// Closest point of the path to `p` (local form).
    pub fn closest_point(&self, p: &Point3<f64>) -> CurvePoint {
        self.closest_point_from(p, 0)
    }

    /// Closest point of the path to `p`, searching the chunk of segment `hint` first (the
    /// result is the same for every hint; a good hint only makes it faster).
    pub fn closest_point_from(&self, p: &Point3<f64>, hint: usize) -> CurvePoint {
        let nseg = self.points.len() - 1;
        let mut best = (f64::INFINITY, 0usize, 0.0, self.points[0]);
        let search = |c: usize, best: &mut (f64, usize, f64, Point3<f64>)| {
            for i in c * Self::CHUNK..((c + 1) * Self::CHUNK).min(nseg) {
                let (t, q) = closest_on_segment(&self.points[i], &self.points[i + 1], p);
                let d2 = (q - p).norm_squared();
                if d2 < best.0 || (d2 == best.0 && i < best.1) {
                    *best = (d2, i, t, q);
                }
            }
        };
        let first = (hint.min(nseg - 1)) / Self::CHUNK;
        search(first, &mut best);
        for c in 0..self.boxes.len() {
            if c != first && box_distance2(&self.boxes[c], p) <= best.0 {
                search(c, &mut best);
            }
        }
        let (d2, i, t, q) = best;
        let last = self.points.len() - 2;
        let tangent = if t <= 0.0 && i > 0 {
            self.segment_tangent(i - 1) + self.segment_tangent(i)
        } else if t >= 1.0 && i < last {
            self.segment_tangent(i) + self.segment_tangent(i + 1)
        } else {
            self.segment_tangent(i)
        };
        let tangent = Unit::try_new(tangent, 1e-12)
            .unwrap_or_else(|| Unit::new_normalize(self.segment_tangent(i)));
        let seg_len = self.cumulative[i + 1] - self.cumulative[i];
        CurvePoint {
            point: q,
            tangent,
            arc_length: self.cumulative[i] + t * seg_len,
            distance: d2.sqrt(),
        }
    }

    fn segment_at(&self, s: f64) -> usize {
        self.cumulative
            .partition_point(|c| *c <= s)
            .clamp(1, self.points.len() - 1)
            - 1
    }

    /// The point at arc length `s` (clamped to the path).
    pub fn point_at(&self, s: f64) -> Point3<f64> {
        let s = s.clamp(0.0, self.length());
        let i = match self.cumulative.binary_search_by(|c| c.total_cmp(&s)) {
            Ok(i) => return self.points[i],
            Err(i) => i.clamp(1, self.points.len() - 1) - 1,
        };
        let t = (s - self.cumulative[i]) / (self.cumulative[i + 1] - self.cumulative[i]);
        self.points[i] + (self.points[i + 1] - self.points[i]) * t
    }
}

impl GuidanceSource for PolylinePath {
    fn evaluate(&mut self, x: &Isometry3<f64>, out: &mut Guidance) {
        let p = Point3::from(x.translation.vector);
        let c = self.closest_point_from(&p, self.hint);
        self.hint = self.segment_at(c.arc_length);
        out.set1(
            twist(c.tangent.into_inner(), Vector3::zeros()),
            twist((c.point - p) * self.error_gain, Vector3::zeros()),
        );
        if self.free_rotation {
            out.cols[1] = Vector6::ith(3, 1.0);
            out.cols[2] = Vector6::ith(4, 1.0);
            out.cols[3] = Vector6::ith(5, 1.0);
            out.n = 4;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::geometry::at;
    use proptest::prelude::*;

    #[test]
    fn polyline_closest_point_and_tangent() {
        let mut path = PolylinePath::new(&[
            Point3::origin(),
            Point3::new(1.0, 0.0, 0.0),
            Point3::new(1.0, 1.0, 0.0),
        ])
        .unwrap();
        let c = path.closest_point(&Point3::new(0.5, 0.2, 0.0));
        assert!((c.point - Point3::new(0.5, 0.0, 0.0)).norm() < 1e-15);
        assert!((c.tangent.into_inner() - Vector3::x()).norm() < 1e-15);
        assert!((c.arc_length - 0.5).abs() < 1e-15);
        // corner: mean tangent
        let c = path.closest_point(&Point3::new(1.5, -0.5, 0.0));
        assert!((c.tangent.into_inner() - Vector3::new(1.0, 1.0, 0.0).normalize()).norm() < 1e-12);
        assert!((path.point_at(1.5) - Point3::new(1.0, 0.5, 0.0)).norm() < 1e-15);
        let mut g = Guidance::empty();
        path.evaluate(&at(Point3::new(0.3, -0.1, 0.2)), &mut g);
        assert_eq!(g.n(), 1);
        assert!((g.u - Vector6::new(0.0, 0.1, -0.2, 0.0, 0.0, 0.0)).norm() < 1e-15);
        assert!(PolylinePath::new(&[Point3::origin(), Point3::origin()]).is_err());
        assert!(PolylinePath::new(&[Point3::origin(), Point3::new(f64::NAN, 0.0, 0.0)]).is_err());
    }

    proptest! {
        /// Against brute-force dense sampling of the polyline.
        #[test]
        fn polyline_matches_brute_force(pts in proptest::collection::vec(proptest::array::uniform3(-1.0f64..1.0), 2..60), q in proptest::array::uniform3(-2.0f64..2.0)) {
            let pts: Vec<Point3<f64>> = pts.into_iter().map(Point3::from).collect();
            let Ok(path) = PolylinePath::new(&pts) else { return Ok(()) };
            let q = Point3::from(q);
            let c = path.closest_point(&q);
            for hint in 0..pts.len() {
                prop_assert_eq!(path.closest_point_from(&q, hint), c);
            }
            let n = 20000;
            let brute = (0..=n).map(|i| (path.point_at(path.length() * i as f64 / n as f64) - q).norm()).fold(f64::INFINITY, f64::min);
            prop_assert!(c.distance <= brute + 1e-12);
            prop_assert!(c.distance >= brute - path.length() / n as f64);
            prop_assert!(((c.point - q).norm() - c.distance).abs() < 1e-12);
        }
    }
}
