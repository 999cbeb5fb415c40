//! The cut outline: a closed polygon drawn by the surgeon, checked and prepared for the
//! protections of §4.2.
//!
//! * [`PlanarOutline`]: the polygon in its frame's (x, y) plane with a height per point;
//!   validated (finite, at least three distinct points, non-zero area, no two edges that cross
//!   or touch), counter-clockwise. It gives the **radial parametrization** the paper asks for
//!   (`ρ(u)` along the ray of angle `u` from an origin, i.e. constant angular speed), the
//!   **star-shaped test** (the origin must lie in the polygon's kernel, the intersection of
//!   the inner half-planes of its edges), the **convex hull and the pockets** between polygon
//!   and hull (the adaptation disc of Fig. 10) and the **inward offset** by the cut width Δx
//!   (the cutting aid's î(t): every side moved Δx inward).
//! * [`Outline`]: the 3-D outline with its [`SurfaceFrame`].

use nalgebra::{Point2, Point3, Vector2, Vector3};

use crate::frame::SurfaceFrame;
use crate::SurgeryError;

/// Largest number of outline points accepted (the self-intersection test is quadratic).
pub const MAX_OUTLINE_POINTS: usize = 4096;

fn cross(a: &Vector2<f64>, b: &Vector2<f64>) -> f64 {
    a.x * b.y - a.y * b.x
}

/// Signed area of a closed polygon (positive counter-clockwise).
pub fn signed_area(p: &[Point2<f64>]) -> f64 {
    let n = p.len();
    (0..n)
        .map(|i| cross(&p[i].coords, &p[(i + 1) % n].coords))
        .sum::<f64>()
        * 0.5
}

/// Do the closed segments `ab` and `cd` meet (touching counts)? `eps` is the orientation
/// tolerance (an area).
fn segments_meet(
    a: &Point2<f64>,
    b: &Point2<f64>,
    c: &Point2<f64>,
    d: &Point2<f64>,
    eps: f64,
) -> bool {
    let orient = |p: &Point2<f64>, q: &Point2<f64>, r: &Point2<f64>| {
        let v = cross(&(q - p), &(r - p));
        if v > eps {
            1
        } else if v < -eps {
            -1
        } else {
            0
        }
    };
    let on = |p: &Point2<f64>, q: &Point2<f64>, r: &Point2<f64>| {
        // r on segment pq, given collinear
        r.x >= p.x.min(q.x) - 1e-15
            && r.x <= p.x.max(q.x) + 1e-15
            && r.y >= p.y.min(q.y) - 1e-15
            && r.y <= p.y.max(q.y) + 1e-15
    };
    let (o1, o2, o3, o4) = (
        orient(a, b, c),
        orient(a, b, d),
        orient(c, d, a),
        orient(c, d, b),
    );
    if o1 * o2 < 0 && o3 * o4 < 0 {
        return true; // a proper crossing
    }
    (o1 == 0 && on(a, b, c))
        || (o2 == 0 && on(a, b, d))
        || (o3 == 0 && on(c, d, a))
        || (o4 == 0 && on(c, d, b))
}

/// Distance from `p` to the segment `ab`.
fn point_segment_distance(p: &Point2<f64>, a: &Point2<f64>, b: &Point2<f64>) -> f64 {
    let ab = b - a;
    let t = ((p - a).dot(&ab) / ab.norm_squared()).clamp(0.0, 1.0);
    (a + ab * t - p).norm()
}

/// A simple closed polygon in a frame's (x, y) plane, counter-clockwise, with a height `z` per
/// vertex (see the module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct PlanarOutline {
    pts: Vec<Point2<f64>>,
    z: Vec<f64>,
    scale: f64,
}

impl PlanarOutline {
    /// Checks and normalises a polygon: consecutive duplicates (and a closing copy of the first
    /// point) are merged, the orientation made counter-clockwise. Refuses non-finite input,
    /// fewer than three distinct points, more than [`MAX_OUTLINE_POINTS`], zero area, spikes
    /// and edges that cross or touch.
    pub fn new(points: &[Point2<f64>], z: &[f64]) -> Result<PlanarOutline, SurgeryError> {
        if points.len() != z.len() {
            return Err(SurgeryError::DegenerateOutline(format!(
                "{} points but {} heights",
                points.len(),
                z.len()
            )));
        }
        if !points.iter().all(|p| p.x.is_finite() && p.y.is_finite())
            || !z.iter().all(|v| v.is_finite())
        {
            return Err(SurgeryError::NonFinite {
                what: "outline point",
            });
        }
        if points.len() > MAX_OUTLINE_POINTS {
            return Err(SurgeryError::range(
                "outline points",
                points.len() as f64,
                format!("at most {MAX_OUTLINE_POINTS}"),
            ));
        }
        let scale = points
            .iter()
            .map(|p| p.x.abs().max(p.y.abs()))
            .fold(0.0, f64::max)
            .max(1e-300);
        let merge = 1e-9 * scale;
        let mut pts: Vec<Point2<f64>> = Vec::with_capacity(points.len());
        let mut zs = Vec::with_capacity(points.len());
        for (p, h) in points.iter().zip(z) {
            if pts.last().is_none_or(|q| (p - q).norm() > merge) {
                pts.push(*p);
                zs.push(*h);
            }
        }
        while pts.len() > 1 && (pts[0] - pts[pts.len() - 1]).norm() <= merge {
            pts.pop();
            zs.pop();
        }
        if pts.len() < 3 {
            return Err(SurgeryError::TooFewPoints { got: pts.len() });
        }
        let area = signed_area(&pts);
        let extent = {
            let (mut lo, mut hi) = (pts[0], pts[0]);
            for p in &pts {
                lo = lo.inf(p);
                hi = hi.sup(p);
            }
            (hi - lo).norm()
        };
        if area.abs() <= 1e-9 * extent * extent {
            return Err(SurgeryError::DegenerateOutline(
                "the points enclose no area (collinear?)".into(),
            ));
        }
        if area < 0.0 {
            pts.reverse();
            zs.reverse();
        }
        let n = pts.len();
        let eps = 1e-12 * extent * extent;
        for i in 0..n {
            let (a, b) = (pts[i], pts[(i + 1) % n]);
            // a spike: the next edge folds back onto this one
            let c = pts[(i + 2) % n];
            if cross(&(b - a), &(c - b)).abs() <= eps && (b - a).dot(&(c - b)) < 0.0 {
                return Err(SurgeryError::DegenerateOutline(format!(
                    "the outline folds back on itself at point {}",
                    (i + 1) % n
                )));
            }
            for j in i + 2..n {
                if i == 0 && j == n - 1 {
                    continue; // adjacent through the closing edge
                }
                if segments_meet(&a, &b, &pts[j], &pts[(j + 1) % n], eps) {
                    return Err(SurgeryError::SelfIntersecting { a: i, b: j });
                }
            }
        }
        Ok(PlanarOutline {
            pts,
            z: zs,
            scale: extent,
        })
    }

    /// The vertices (counter-clockwise).
    pub fn points(&self) -> &[Point2<f64>] {
        &self.pts
    }

    /// The height of each vertex in the frame [m].
    pub fn heights(&self) -> &[f64] {
        &self.z
    }

    /// Number of vertices.
    pub fn len(&self) -> usize {
        self.pts.len()
    }

    /// Never true (a valid outline has at least three points).
    pub fn is_empty(&self) -> bool {
        self.pts.is_empty()
    }

    /// Enclosed area [m²].
    pub fn area(&self) -> f64 {
        signed_area(&self.pts)
    }

    /// Length of the closed polygon [m].
    pub fn perimeter(&self) -> f64 {
        let n = self.pts.len();
        (0..n)
            .map(|i| (self.pts[(i + 1) % n] - self.pts[i]).norm())
            .sum()
    }

    /// Size of the polygon (diagonal of its bounding box) [m].
    pub fn extent(&self) -> f64 {
        self.scale
    }

    /// Is `p` inside the polygon (crossing number)?
    pub fn contains(&self, p: &Point2<f64>) -> bool {
        let n = self.pts.len();
        let mut inside = false;
        for i in 0..n {
            let (a, b) = (self.pts[i], self.pts[(i + 1) % n]);
            if (a.y > p.y) != (b.y > p.y) && p.x < a.x + (p.y - a.y) / (b.y - a.y) * (b.x - a.x) {
                inside = !inside;
            }
        }
        inside
    }

    /// Distance from `p` to the polygon's boundary [m].
    pub fn distance_to_boundary(&self, p: &Point2<f64>) -> f64 {
        let n = self.pts.len();
        (0..n)
            .map(|i| point_segment_distance(p, &self.pts[i], &self.pts[(i + 1) % n]))
            .fold(f64::INFINITY, f64::min)
    }

    /// The kernel: the points from which the whole polygon is visible (the intersection of
    /// the inner half-planes of the edges), as a convex polygon; empty when the polygon is not
    /// star-shaped.
    pub fn kernel(&self) -> Vec<Point2<f64>> {
        let (mut lo, mut hi) = (self.pts[0], self.pts[0]);
        for p in &self.pts {
            lo = lo.inf(p);
            hi = hi.sup(p);
        }
        let mut poly = vec![lo, Point2::new(hi.x, lo.y), hi, Point2::new(lo.x, hi.y)];
        let n = self.pts.len();
        let mut next = Vec::with_capacity(poly.len() + 4);
        for i in 0..n {
            let (a, b) = (self.pts[i], self.pts[(i + 1) % n]);
            let e = b - a;
            let side = |p: &Point2<f64>| cross(&e, &(p - a));
            next.clear();
            for k in 0..poly.len() {
                let (p, q) = (poly[k], poly[(k + 1) % poly.len()]);
                let (sp, sq) = (side(&p), side(&q));
                if sp >= 0.0 {
                    next.push(p);
                }
                if (sp >= 0.0) != (sq >= 0.0) {
                    next.push(p + (q - p) * (sp / (sp - sq)));
                }
            }
            std::mem::swap(&mut poly, &mut next);
            if poly.len() < 3 {
                return Vec::new();
            }
        }
        poly
    }

    /// The parametrization origin: the centroid of the kernel when the polygon is
    /// star-shaped from it with some room (every edge line at least `1e-6` of the polygon's
    /// size away), else `None`.
    pub fn star_origin(&self) -> Option<Point2<f64>> {
        let k = self.kernel();
        if k.len() < 3 {
            return None;
        }
        let a = signed_area(&k);
        if a <= 1e-12 * self.scale * self.scale {
            return None;
        }
        let n = k.len();
        let mut c = Vector2::zeros();
        for i in 0..n {
            let (p, q) = (k[i].coords, k[(i + 1) % n].coords);
            c += (p + q) * cross(&p, &q);
        }
        let c = Point2::from(c / (6.0 * a));
        self.is_star_shaped_from(&c).then_some(c)
    }

    /// Is the polygon star-shaped from `c`, with `c` at least `1e-6` of the polygon's size from
    /// every edge line (so that every ray from `c` crosses the boundary once, transversally)?
    pub fn is_star_shaped_from(&self, c: &Point2<f64>) -> bool {
        let n = self.pts.len();
        let margin = 1e-6 * self.scale;
        (0..n).all(|i| {
            let (a, b) = (self.pts[i], self.pts[(i + 1) % n]);
            let e = b - a;
            cross(&e, &(c - a)) / e.norm() >= margin
        })
    }

    /// The radial parametrization from `c`: where the ray of angle `u` [rad] leaves the
    /// polygon, as `(ρ, z)` (distance from `c`, height interpolated along the edge). `None` if
    /// the ray does not meet the boundary (only when `c` is outside).
    pub fn radial(&self, c: &Point2<f64>, u: f64) -> Option<(f64, f64)> {
        let d = Vector2::new(u.cos(), u.sin());
        let n = self.pts.len();
        let mut best: Option<(f64, f64)> = None;
        for i in 0..n {
            let j = (i + 1) % n;
            let (a, b) = (self.pts[i], self.pts[j]);
            let e = b - a;
            let denom = cross(&d, &e);
            if denom.abs() <= 1e-300 {
                continue;
            }
            let rho = cross(&(a - c), &e) / denom;
            let s = cross(&(a - c), &d) / denom;
            if rho > 0.0 && (-1e-12..=1.0 + 1e-12).contains(&s) && best.is_none_or(|(r, _)| rho < r)
            {
                let s = s.clamp(0.0, 1.0);
                best = Some((rho, self.z[i] + (self.z[j] - self.z[i]) * s));
            }
        }
        best
    }

    /// Indices of the convex hull's vertices, counter-clockwise, starting at the lowest-x
    /// vertex; vertices lying on a hull edge are included, so that the polygon meets every
    /// hull edge only at its ends.
    pub fn convex_hull(&self) -> Vec<usize> {
        let mut idx: Vec<usize> = (0..self.pts.len()).collect();
        idx.sort_by(|&a, &b| {
            let (p, q) = (self.pts[a], self.pts[b]);
            p.x.total_cmp(&q.x).then(p.y.total_cmp(&q.y))
        });
        // Andrew's monotone chain, strict (collinear points dropped)
        let turn = |h: &[usize], k: usize| {
            let (o, a, b) = (
                self.pts[h[h.len() - 2]],
                self.pts[h[h.len() - 1]],
                self.pts[k],
            );
            cross(&(a - o), &(b - o))
        };
        let mut strict: Vec<usize> = Vec::with_capacity(2 * idx.len());
        for pass in 0..2 {
            let start = strict.len();
            for i in 0..idx.len() {
                let k = if pass == 0 {
                    idx[i]
                } else {
                    idx[idx.len() - 1 - i]
                };
                while strict.len() >= start + 2 && turn(&strict, k) <= 0.0 {
                    strict.pop();
                }
                strict.push(k);
            }
            strict.pop();
        }
        // every polygon vertex on a hull edge, in polygon order (the polygon is CCW like the
        // hull, so this is the hull's order)
        let eps = 1e-12 * self.scale;
        let m = strict.len();
        (0..self.pts.len())
            .filter(|&k| {
                (0..m).any(|e| {
                    let (a, b) = (self.pts[strict[e]], self.pts[strict[(e + 1) % m]]);
                    point_segment_distance(&self.pts[k], &a, &b) <= eps
                })
            })
            .collect()
    }

    /// The pockets between the polygon and its convex hull (empty for a convex polygon): each
    /// the polygon's vertex indices from one hull vertex to the next along the polygon.
    pub fn pockets(&self) -> Vec<Vec<usize>> {
        let hull = self.convex_hull();
        let n = self.pts.len();
        let mut out = Vec::new();
        for k in 0..hull.len() {
            let (a, b) = (hull[k], hull[(k + 1) % hull.len()]);
            let len = (b + n - a) % n;
            if len >= 2 {
                out.push((0..=len).map(|s| (a + s) % n).collect());
            }
        }
        out
    }

    /// The polygon with every side moved `dx` inward (mitred corners): the cutting aid's
    /// î(t). Heights are kept per vertex. Refused when the result is not a simple polygon of
    /// the same orientation whose vertices all lie inside, `dx` (to within 0.1 %) from the
    /// boundary.
    pub fn offset_inward(&self, dx: f64) -> Result<PlanarOutline, SurgeryError> {
        if !(dx.is_finite() && dx > 0.0) {
            return Err(SurgeryError::range("cut width", dx, "> 0 m"));
        }
        let n = self.pts.len();
        let inward = |i: usize| {
            let e = self.pts[(i + 1) % n] - self.pts[i];
            Vector2::new(-e.y, e.x) / e.norm()
        };
        let mut out = Vec::with_capacity(n);
        for k in 0..n {
            let (n1, n2) = (inward((k + n - 1) % n), inward(k));
            let denom = 1.0 + n1.dot(&n2);
            if denom < 1e-3 {
                return Err(SurgeryError::OffsetTooLarge {
                    width: dx,
                    reason: format!("the corner at point {k} is too sharp to offset"),
                });
            }
            out.push(self.pts[k] + (n1 + n2) * (dx / denom));
        }
        let off = PlanarOutline::new(&out, &self.z).map_err(|e| SurgeryError::OffsetTooLarge {
            width: dx,
            reason: e.to_string(),
        })?;
        if off.len() != n || signed_area(&out) <= 0.0 {
            return Err(SurgeryError::OffsetTooLarge {
                width: dx,
                reason: "sides collapse".into(),
            });
        }
        for (k, p) in out.iter().enumerate() {
            if !self.contains(p) || self.distance_to_boundary(p) < dx * (1.0 - 1e-3) {
                return Err(SurgeryError::OffsetTooLarge {
                    width: dx,
                    reason: format!("point {k} comes closer than the cut width to another side"),
                });
            }
        }
        Ok(off)
    }
}

/// Triangulates a simple polygon given counter-clockwise by ear clipping; indices into `pts`
/// (the polygon is `order`). Triangles are counter-clockwise.
pub(crate) fn ear_clip(pts: &[Point2<f64>], order: &[usize]) -> Vec<[usize; 3]> {
    let mut ring: Vec<usize> = order.to_vec();
    let mut out = Vec::with_capacity(ring.len().saturating_sub(2));
    let inside = |p: &Point2<f64>, a: &Point2<f64>, b: &Point2<f64>, c: &Point2<f64>| {
        cross(&(b - a), &(p - a)) >= 0.0
            && cross(&(c - b), &(p - b)) >= 0.0
            && cross(&(a - c), &(p - c)) >= 0.0
    };
    let mut guard = 0;
    while ring.len() > 3 && guard < 10 * order.len() * order.len() + 10 {
        guard += 1;
        let m = ring.len();
        let mut clipped = false;
        for i in 0..m {
            let (ia, ib, ic) = (ring[(i + m - 1) % m], ring[i], ring[(i + 1) % m]);
            let (a, b, c) = (pts[ia], pts[ib], pts[ic]);
            if cross(&(b - a), &(c - b)) <= 0.0 {
                continue; // reflex or flat
            }
            let blocked = ring
                .iter()
                .any(|&k| k != ia && k != ib && k != ic && inside(&pts[k], &a, &b, &c));
            if !blocked {
                out.push([ia, ib, ic]);
                ring.remove(i);
                clipped = true;
                break;
            }
        }
        if !clipped {
            break;
        }
    }
    if ring.len() == 3 {
        out.push([ring[0], ring[1], ring[2]]);
    }
    out
}

/// A cut outline: the 3-D points, their [`SurfaceFrame`] and the [`PlanarOutline`] in it.
#[derive(Clone, Debug, PartialEq)]
pub struct Outline {
    frame: SurfaceFrame,
    planar: PlanarOutline,
}

impl Outline {
    /// From points in the caller's frame, with the frame fitted to them, its z toward `up`
    /// ([`SurfaceFrame::fit`]).
    pub fn new(points: &[Point3<f64>], up: &Vector3<f64>) -> Result<Outline, SurgeryError> {
        let frame = SurfaceFrame::fit(points, up)?;
        Outline::in_frame(points, frame)
    }

    /// From points in the caller's frame, expressed in the given frame.
    pub fn in_frame(points: &[Point3<f64>], frame: SurfaceFrame) -> Result<Outline, SurgeryError> {
        let local: Vec<Point3<f64>> = points.iter().map(|p| frame.to_local(p)).collect();
        let xy: Vec<Point2<f64>> = local.iter().map(|p| Point2::new(p.x, p.y)).collect();
        let z: Vec<f64> = local.iter().map(|p| p.z).collect();
        Ok(Outline {
            frame,
            planar: PlanarOutline::new(&xy, &z)?,
        })
    }

    /// The frame.
    pub fn frame(&self) -> &SurfaceFrame {
        &self.frame
    }

    /// The polygon in the frame.
    pub fn planar(&self) -> &PlanarOutline {
        &self.planar
    }

    /// The vertices in the caller's frame (counter-clockwise about the frame's z).
    pub fn points(&self) -> Vec<Point3<f64>> {
        self.planar
            .points()
            .iter()
            .zip(self.planar.heights())
            .map(|(p, z)| self.frame.to_parent(p, *z))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn poly(xy: &[(f64, f64)]) -> Result<PlanarOutline, SurgeryError> {
        let p: Vec<Point2<f64>> = xy.iter().map(|&(x, y)| Point2::new(x, y)).collect();
        PlanarOutline::new(&p, &vec![0.0; p.len()])
    }

    /// An L shape: not convex, star-shaped from the corner region.
    fn ell() -> Vec<(f64, f64)> {
        vec![
            (0.0, 0.0),
            (2.0, 0.0),
            (2.0, 1.0),
            (1.0, 1.0),
            (1.0, 2.0),
            (0.0, 2.0),
        ]
    }

    #[test]
    fn validation() {
        assert!(matches!(
            poly(&[(0.0, 0.0), (1.0, 0.0)]),
            Err(SurgeryError::TooFewPoints { .. })
        ));
        assert!(matches!(
            poly(&[(0.0, 0.0), (1.0, 0.0), (2.0, 0.0)]),
            Err(SurgeryError::DegenerateOutline(_))
        ));
        // a bow tie
        assert!(matches!(
            poly(&[(0.0, 0.0), (2.0, 2.0), (2.0, 0.0), (0.0, 1.0)]),
            Err(SurgeryError::SelfIntersecting { .. })
        ));
        // a vertex touching another edge
        assert!(matches!(
            poly(&[(0.0, 0.0), (2.0, 0.0), (2.0, 2.0), (1.0, 0.0), (0.0, 2.0)]),
            Err(SurgeryError::SelfIntersecting { .. })
        ));
        assert!(matches!(
            poly(&[(0.0, 0.0), (f64::NAN, 0.0), (0.0, 1.0)]),
            Err(SurgeryError::NonFinite { .. })
        ));
        // clockwise input, a closing duplicate and a repeated point are accepted
        let p = poly(&[(0.0, 0.0), (0.0, 1.0), (0.0, 1.0), (1.0, 0.0), (0.0, 0.0)]).unwrap();
        assert_eq!(p.len(), 3);
        assert!(p.area() > 0.0);
    }

    #[test]
    fn star_shape_and_radial_parametrization() {
        let l = poly(&ell()).unwrap();
        let k = l.kernel();
        // the kernel of the L is the unit square [0,1]²
        assert!((signed_area(&k) - 1.0).abs() < 1e-12);
        let c = l.star_origin().unwrap();
        assert!((c - Point2::new(0.5, 0.5)).norm() < 1e-12);
        assert!(!l.is_star_shaped_from(&Point2::new(1.5, 0.5)));
        // along +x from the centre the ray leaves at x = 2
        let (rho, _) = l.radial(&c, 0.0).unwrap();
        assert!((rho - 1.5).abs() < 1e-12);
        // along 45° it leaves at the reflex corner (1, 1)
        let (rho, _) = l.radial(&c, std::f64::consts::FRAC_PI_4).unwrap();
        assert!((rho - 0.5f64.hypot(0.5)).abs() < 1e-12);
        // a U shape is not star-shaped
        let u = poly(&[
            (0.0, 0.0),
            (3.0, 0.0),
            (3.0, 3.0),
            (2.0, 3.0),
            (2.0, 1.0),
            (1.0, 1.0),
            (1.0, 3.0),
            (0.0, 3.0),
        ])
        .unwrap();
        assert!(u.star_origin().is_none());
        assert_eq!(u.pockets().len(), 1);
        // (2, 3) and (1, 3) lie on the hull's top edge: the pocket runs between them
        assert_eq!(u.pockets()[0], vec![3, 4, 5, 6]);
    }

    #[test]
    fn hull_and_pockets() {
        let l = poly(&ell()).unwrap();
        let h = l.convex_hull();
        assert_eq!(h, vec![0, 1, 2, 4, 5]);
        assert_eq!(l.pockets(), vec![vec![2, 3, 4]]);
        let square = poly(&[(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0)]).unwrap();
        assert!(square.pockets().is_empty());
    }

    #[test]
    fn inward_offset() {
        let sq = poly(&[(0.0, 0.0), (4.0, 0.0), (4.0, 4.0), (0.0, 4.0)]).unwrap();
        let o = sq.offset_inward(1.0).unwrap();
        assert!((o.area() - 4.0).abs() < 1e-12);
        assert!(sq.offset_inward(2.5).is_err());
        assert!(sq.offset_inward(-1.0).is_err());
        let l = poly(&ell()).unwrap();
        let o = l.offset_inward(0.25).unwrap();
        // the L's sides each moved by 0.25: area 3 - perimeter*0.25 + corner terms
        for p in o.points() {
            assert!(
                (l.distance_to_boundary(p) - 0.25).abs() < 1e-12
                    || l.distance_to_boundary(p) > 0.25
            );
        }
        assert!(l.offset_inward(0.6).is_err());
    }

    #[test]
    fn ear_clipping_covers_the_polygon() {
        let l = poly(&ell()).unwrap();
        let order: Vec<usize> = (0..l.len()).collect();
        let tris = ear_clip(l.points(), &order);
        assert_eq!(tris.len(), 4);
        let area: f64 = tris
            .iter()
            .map(|t| signed_area(&[l.points()[t[0]], l.points()[t[1]], l.points()[t[2]]]))
            .sum();
        assert!((area - 3.0).abs() < 1e-12);
    }
}
