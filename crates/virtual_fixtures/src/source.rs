//! Guidance sources: geometry that gives, at the current tool pose `x`, the preferred
//! directions `D(x)` (6 × n, twists with the linear part first, base frame) and the error
//! command `u = f(x, S)` that drives the tool into the motion objective `S` (paper sec. III).
//!
//! Every source satisfies the paper's consistency rule 3 where the geometry allows it:
//! `<D> u = u`, i.e. the correction is orthogonal to the preferred directions (exactly for
//! the plane, the cone, and curve points inside a segment; at a polyline corner the
//! tangent is the mean of the two segments and the rule holds approximately).
//!
//! Each query has a local form (a point or a rotation) and the posed form
//! [`GuidanceSource::evaluate`] taking the tool pose.

use nalgebra::{Isometry3, Point3, Rotation3, Unit, Vector3, Vector6};

use crate::Error;

/// `D` (up to six columns, stored inline) and `u` at one pose. No heap allocation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Guidance {
    cols: [Vector6<f64>; 6],
    n: usize,
    /// The error command `u` (a twist: linear [m/s-like], angular [rad/s-like]).
    pub u: Vector6<f64>,
}

impl Default for Guidance {
    fn default() -> Self {
        Self::empty()
    }
}

fn twist(lin: Vector3<f64>, ang: Vector3<f64>) -> Vector6<f64> {
    Vector6::new(lin.x, lin.y, lin.z, ang.x, ang.y, ang.z)
}

impl Guidance {
    /// No preferred direction (`n = 0`) and `u = 0`.
    pub fn empty() -> Self {
        Self {
            cols: [Vector6::zeros(); 6],
            n: 0,
            u: Vector6::zeros(),
        }
    }

    /// From explicit columns (0 ..= 6) and `u`; checked.
    pub fn from_columns(cols: &[Vector6<f64>], u: Vector6<f64>) -> Result<Self, Error> {
        let mut g = Self::empty();
        g.set(cols, u)?;
        Ok(g)
    }

    /// Overwrites `D` and `u` in place; checked.
    pub fn set(&mut self, cols: &[Vector6<f64>], u: Vector6<f64>) -> Result<(), Error> {
        if cols.len() > 6 {
            return Err(Error::WrongLength {
                what: "preferred-direction matrix D",
                got: cols.len(),
                expected: "at most 6 columns",
            });
        }
        self.n = cols.len();
        self.cols[..cols.len()].copy_from_slice(cols);
        self.u = u;
        self.check()
    }

    /// Sets `D` to one column (unchecked; for sources).
    fn set1(&mut self, d: Vector6<f64>, u: Vector6<f64>) {
        self.cols[0] = d;
        self.n = 1;
        self.u = u;
    }

    /// The columns of `D`.
    pub fn columns(&self) -> &[Vector6<f64>] {
        &self.cols[..self.n]
    }

    /// Number of columns `n`.
    pub fn n(&self) -> usize {
        self.n
    }

    /// `D` flattened column-major (6·n values), the layout of the ROS message.
    pub fn flattened(&self) -> impl Iterator<Item = f64> + '_ {
        self.columns().iter().flat_map(|c| c.iter().copied())
    }

    /// Builds from a column-major flattened `D` (length 6·n) and `u`; checked.
    pub fn from_flattened(d: &[f64], n: usize, u: &[f64]) -> Result<Self, Error> {
        if n > 6 {
            return Err(Error::WrongLength {
                what: "D columns",
                got: n,
                expected: "at most 6",
            });
        }
        if d.len() != 6 * n {
            return Err(Error::WrongLength {
                what: "flattened D",
                got: d.len(),
                expected: "6 * n",
            });
        }
        if u.len() != 6 {
            return Err(Error::WrongLength {
                what: "u",
                got: u.len(),
                expected: "6",
            });
        }
        let mut g = Self::empty();
        g.n = n;
        for j in 0..n {
            g.cols[j] = Vector6::from_column_slice(&d[6 * j..6 * j + 6]);
        }
        g.u = Vector6::from_column_slice(u);
        g.check()?;
        Ok(g)
    }

    /// Errors if any entry is not finite.
    pub fn check(&self) -> Result<(), Error> {
        if self
            .columns()
            .iter()
            .all(|c| c.iter().all(|x| x.is_finite()))
            && self.u.iter().all(|x| x.is_finite())
        {
            Ok(())
        } else {
            Err(Error::NonFinite {
                what: "guidance (D, u)",
            })
        }
    }
}

impl Guidance {
    /// Combines two fixtures in parallel (the paper's open problem of combining guidance
    /// modes): the preferred directions become `span(D_a) ∩ span(D_b)` — motion allowed by both
    /// — and `u = u_a + u_b`. The intersection is the null space of `<D_a> + <D_b>` (a sum of
    /// projectors, symmetric positive semi-definite), taken from its eigen-decomposition with
    /// eigenvalues below `1e-9`. `None` if either projection fails.
    pub fn intersect(a: &Guidance, b: &Guidance, tol: &crate::RankTolerance) -> Option<Guidance> {
        let pa = crate::Projection::of_columns_unchecked(a.columns(), tol)?;
        let pb = crate::Projection::of_columns_unchecked(b.columns(), tol)?;
        let s = pa.kernel() + pb.kernel();
        let eig = nalgebra::SymmetricEigen::try_new(s, 5.0 * f64::EPSILON, 10_000)?;
        let mut g = Guidance::empty();
        for i in 0..6 {
            if eig.eigenvalues[i].abs() < 1e-9 {
                g.cols[g.n] = eig.eigenvectors.column(i).into_owned();
                g.n += 1;
            }
        }
        g.u = a.u + b.u;
        Some(g)
    }
}

/// A motion objective `S` with its preferred directions and error command.
pub trait GuidanceSource {
    /// Writes `D(x)` and `u(x)` for the tool pose `x` (base frame) into `out`. `&mut self`
    /// lets a source keep a search hint between calls; the result does not depend on it.
    fn evaluate(&mut self, x: &Isometry3<f64>, out: &mut Guidance);
}

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

/// A parametric curve `c(t)`, `t ∈ [t0, t1]`, sampled into a fine polyline at construction and
/// refined by golden-section search on the parameter around the closest sample; the tangent is
/// a central difference of `c`. Guidance as for [`PolylinePath`].
pub struct ParametricCurve<F: Fn(f64) -> Point3<f64>> {
    f: F,
    t0: f64,
    t1: f64,
    samples: Vec<Point3<f64>>,
}

impl<F: Fn(f64) -> Point3<f64>> std::fmt::Debug for ParametricCurve<F> {
    fn fmt(&self, fm: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        fm.debug_struct("ParametricCurve")
            .field("t0", &self.t0)
            .field("t1", &self.t1)
            .field("samples", &self.samples.len())
            .finish()
    }
}

impl<F: Fn(f64) -> Point3<f64>> ParametricCurve<F> {
    /// `samples ≥ 2` parameter samples (the search is exact to the parameter when the curve
    /// has at most one local distance minimum between neighbouring samples).
    pub fn new(f: F, t0: f64, t1: f64, samples: usize) -> Result<Self, Error> {
        if !t0.is_finite() || !t1.is_finite() {
            return Err(Error::NonFinite {
                what: "curve parameter range",
            });
        }
        if t1 <= t0 {
            return Err(Error::Degenerate("curve parameter range is empty"));
        }
        if samples < 2 {
            return Err(Error::OutOfRange {
                what: "samples",
                value: samples as f64,
                expected: ">= 2",
            });
        }
        let pts: Vec<_> = (0..samples)
            .map(|i| f(t0 + (t1 - t0) * i as f64 / (samples - 1) as f64))
            .collect();
        if pts.iter().any(|p| !p.iter().all(|x| x.is_finite())) {
            return Err(Error::NonFinite {
                what: "curve point",
            });
        }
        Ok(Self {
            f,
            t0,
            t1,
            samples: pts,
        })
    }

    fn param(&self, i: usize) -> f64 {
        self.t0 + (self.t1 - self.t0) * i as f64 / (self.samples.len() - 1) as f64
    }

    /// Closest point (local form); `arc_length` holds the curve parameter `t` here.
    pub fn closest_point(&self, p: &Point3<f64>) -> CurvePoint {
        let (i, _) = self
            .samples
            .iter()
            .enumerate()
            .map(|(i, q)| (i, (q - p).norm_squared()))
            .fold((0, f64::INFINITY), |a, b| if b.1 < a.1 { b } else { a });
        let (mut a, mut b) = (
            self.param(i.saturating_sub(1)),
            self.param((i + 1).min(self.samples.len() - 1)),
        );
        let g = 0.5 * (5f64.sqrt() - 1.0);
        let d = |t: f64| ((self.f)(t) - p).norm_squared();
        let (mut c, mut e) = (b - g * (b - a), a + g * (b - a));
        let (mut fc, mut fe) = (d(c), d(e));
        for _ in 0..60 {
            if fc < fe {
                b = e;
                e = c;
                fe = fc;
                c = b - g * (b - a);
                fc = d(c);
            } else {
                a = c;
                c = e;
                fc = fe;
                e = a + g * (b - a);
                fe = d(e);
            }
            if (b - a).abs() < 1e-13 * (1.0 + self.t1.abs().max(self.t0.abs())) {
                break;
            }
        }
        let t = 0.5 * (a + b);
        let q = (self.f)(t);
        let h = (self.t1 - self.t0) * 1e-6;
        let (ta, tb) = ((t - h).max(self.t0), (t + h).min(self.t1));
        let tangent = Unit::try_new((self.f)(tb) - (self.f)(ta), 1e-300)
            .unwrap_or_else(|| Unit::new_unchecked(Vector3::x()));
        CurvePoint {
            point: q,
            tangent,
            arc_length: t,
            distance: (q - p).norm(),
        }
    }
}

impl<F: Fn(f64) -> Point3<f64>> GuidanceSource for ParametricCurve<F> {
    fn evaluate(&mut self, x: &Isometry3<f64>, out: &mut Guidance) {
        let p = Point3::from(x.translation.vector);
        let c = self.closest_point(&p);
        out.set1(
            twist(c.tangent.into_inner(), Vector3::zeros()),
            twist(c.point - p, Vector3::zeros()),
        );
    }
}

/// A plane through `origin` with unit `normal`: `D` = two in-plane unit directions (plus the
/// three rotations if `free_rotation`), `u = [−((p − o)·n) n; 0]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlaneSurface {
    origin: Point3<f64>,
    normal: Unit<Vector3<f64>>,
    e1: Vector3<f64>,
    e2: Vector3<f64>,
    free_rotation: bool,
}

fn tangent_basis(n: &Vector3<f64>) -> (Vector3<f64>, Vector3<f64>) {
    let helper = if n.x.abs() < 0.9 {
        Vector3::x()
    } else {
        Vector3::y()
    };
    let e1 = n.cross(&helper).normalize();
    (e1, n.cross(&e1))
}

impl PlaneSurface {
    /// Checked constructor (finite, non-zero normal).
    pub fn new(
        origin: Point3<f64>,
        normal: Vector3<f64>,
        free_rotation: bool,
    ) -> Result<Self, Error> {
        if !origin.iter().chain(normal.iter()).all(|x| x.is_finite()) {
            return Err(Error::NonFinite { what: "plane" });
        }
        let normal =
            Unit::try_new(normal, 1e-12).ok_or(Error::Degenerate("plane normal is zero"))?;
        let (e1, e2) = tangent_basis(&normal);
        Ok(Self {
            origin,
            normal,
            e1,
            e2,
            free_rotation,
        })
    }

    /// Signed distance of `p` from the plane (positive on the normal's side).
    pub fn signed_distance(&self, p: &Point3<f64>) -> f64 {
        (p - self.origin).dot(&self.normal)
    }
}

impl GuidanceSource for PlaneSurface {
    fn evaluate(&mut self, x: &Isometry3<f64>, out: &mut Guidance) {
        let p = Point3::from(x.translation.vector);
        let u = twist(
            -self.normal.into_inner() * self.signed_distance(&p),
            Vector3::zeros(),
        );
        out.cols[0] = twist(self.e1, Vector3::zeros());
        out.cols[1] = twist(self.e2, Vector3::zeros());
        out.n = 2;
        if self.free_rotation {
            for k in 0..3 {
                out.cols[2 + k] = Vector6::ith(3 + k, 1.0);
            }
            out.n = 5;
        }
        out.u = u;
    }
}

/// A triangle-mesh surface: the closest point over all triangles (exhaustive), `D` = the
/// closest triangle's two tangent directions, `u = [q − p; 0]`.
#[derive(Debug, Clone)]
pub struct TriangleMeshSurface {
    vertices: Vec<Point3<f64>>,
    triangles: Vec<[usize; 3]>,
    normals: Vec<Vector3<f64>>,
}

/// Closest point on triangle `abc` to `p`: the proximity engine's triangle primitive.
fn closest_on_triangle(
    a: &Point3<f64>,
    b: &Point3<f64>,
    c: &Point3<f64>,
    p: &Point3<f64>,
) -> Point3<f64> {
    Point3::from(rpq_proximity::triangle::closest_point_on_triangle(
        &p.coords, &a.coords, &b.coords, &c.coords,
    ))
}

impl TriangleMeshSurface {
    /// Checked constructor: finite vertices, indices in range, no zero-area triangle, at least
    /// one triangle.
    pub fn new(vertices: Vec<Point3<f64>>, triangles: Vec<[usize; 3]>) -> Result<Self, Error> {
        if triangles.is_empty() {
            return Err(Error::Degenerate("mesh has no triangles"));
        }
        if vertices.iter().any(|p| !p.iter().all(|x| x.is_finite())) {
            return Err(Error::NonFinite {
                what: "mesh vertex",
            });
        }
        let mut normals = Vec::with_capacity(triangles.len());
        for t in &triangles {
            if t.iter().any(|&i| i >= vertices.len()) {
                return Err(Error::WrongLength {
                    what: "mesh vertex index",
                    got: *t.iter().max().unwrap_or(&0),
                    expected: "< number of vertices",
                });
            }
            let n = (vertices[t[1]] - vertices[t[0]]).cross(&(vertices[t[2]] - vertices[t[0]]));
            if n.norm() < 1e-18 {
                return Err(Error::Degenerate("zero-area triangle"));
            }
            normals.push(n.normalize());
        }
        Ok(Self {
            vertices,
            triangles,
            normals,
        })
    }

    /// Closest point and the index of its triangle (local form).
    pub fn closest_point(&self, p: &Point3<f64>) -> (Point3<f64>, usize) {
        let mut best = (f64::INFINITY, self.vertices[self.triangles[0][0]], 0);
        for (k, t) in self.triangles.iter().enumerate() {
            let q = closest_on_triangle(
                &self.vertices[t[0]],
                &self.vertices[t[1]],
                &self.vertices[t[2]],
                p,
            );
            let d = (q - p).norm_squared();
            if d < best.0 {
                best = (d, q, k);
            }
        }
        (best.1, best.2)
    }
}

impl GuidanceSource for TriangleMeshSurface {
    fn evaluate(&mut self, x: &Isometry3<f64>, out: &mut Guidance) {
        let p = Point3::from(x.translation.vector);
        let (q, k) = self.closest_point(&p);
        let (e1, e2) = tangent_basis(&self.normals[k]);
        out.cols[0] = twist(e1, Vector3::zeros());
        out.cols[1] = twist(e2, Vector3::zeros());
        out.n = 2;
        out.u = twist(q - p, Vector3::zeros());
    }
}

/// A target point: `D = u = [target − p; 0]` (paper sec. III, "choosing D = u"). At the target
/// `D = 0` has rank 0 and a hard fixture holds the tool still.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PointTarget {
    /// The target position.
    pub target: Point3<f64>,
}

impl GuidanceSource for PointTarget {
    fn evaluate(&mut self, x: &Isometry3<f64>, out: &mut Guidance) {
        let u = twist(
            self.target - Point3::from(x.translation.vector),
            Vector3::zeros(),
        );
        out.set1(u, u);
    }
}

/// The remote-centre-of-motion cone of sec. IV (eqs. 12-16): the tool axis should sweep a cone
/// of half-angle `γ` about `axis` with apex at the RCM point `center`.
///
/// At tool pose `x` with tool axis `z = R·tool_axis`, the nearest cone generator `n` is the one
/// at the same azimuth about `axis`. Then
/// * `D = [a × (p − c); a]`: rotation about the cone axis `a` through the RCM point `c`
///   (eq. 12 when `a = e_z` and the tool point `p` is the RCM point, as on the Steady-Hand RCM
///   module);
/// * `u = [ω × (p − c); ω]` with `ω = z × n` (eq. 16), which rotates `z` towards `n` about `c`
///   and is orthogonal to `D`'s angular part.
///
/// `z` on the axis (no azimuth) uses the azimuth of the base x axis.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RcmCone {
    center: Point3<f64>,
    axis: Unit<Vector3<f64>>,
    half_angle: f64,
    tool_axis: Unit<Vector3<f64>>,
    error_gain: f64,
}

impl RcmCone {
    /// Checked constructor: `half_angle ∈ [0, π/2]`, non-zero axes.
    pub fn new(
        center: Point3<f64>,
        axis: Vector3<f64>,
        half_angle: f64,
        tool_axis: Vector3<f64>,
    ) -> Result<Self, Error> {
        if !center
            .iter()
            .chain(axis.iter())
            .chain(tool_axis.iter())
            .all(|x| x.is_finite())
            || !half_angle.is_finite()
        {
            return Err(Error::NonFinite { what: "RCM cone" });
        }
        if !(0.0..=std::f64::consts::FRAC_PI_2).contains(&half_angle) {
            return Err(Error::OutOfRange {
                what: "cone half angle",
                value: half_angle,
                expected: "0 ..= pi/2 rad",
            });
        }
        let axis = Unit::try_new(axis, 1e-12).ok_or(Error::Degenerate("cone axis is zero"))?;
        let tool_axis =
            Unit::try_new(tool_axis, 1e-12).ok_or(Error::Degenerate("tool axis is zero"))?;
        Ok(Self {
            center,
            axis,
            half_angle,
            tool_axis,
            error_gain: 1.0,
        })
    }

    /// Gain `g` of the error command, `ω = g (z × n)` (default 1, dimensionless).
    pub fn with_error_gain(mut self, gain: f64) -> Self {
        self.error_gain = gain;
        self
    }

    /// Nearest cone generator to a unit tool direction `z` (local form).
    pub fn nearest_generator(&self, z: &Vector3<f64>) -> Vector3<f64> {
        let a = self.axis.into_inner();
        let radial = z - a * a.dot(z);
        let radial = if radial.norm() > 1e-12 {
            radial.normalize()
        } else {
            let (e1, _) = tangent_basis(&a);
            let x = Vector3::x() - a * a.x;
            if x.norm() > 1e-12 {
                x.normalize()
            } else {
                e1
            }
        };
        a * self.half_angle.cos() + radial * self.half_angle.sin()
    }

    /// Angle between the tool direction `z` and the cone surface [rad] (positive outside).
    pub fn angle_error(&self, z: &Vector3<f64>) -> f64 {
        z.normalize().dot(&self.axis).clamp(-1.0, 1.0).acos() - self.half_angle
    }

    /// The tool direction in the base frame for rotation `r`.
    pub fn tool_direction(&self, r: &Rotation3<f64>) -> Vector3<f64> {
        r * self.tool_axis.into_inner()
    }
}

impl GuidanceSource for RcmCone {
    fn evaluate(&mut self, x: &Isometry3<f64>, out: &mut Guidance) {
        let z = x.rotation * self.tool_axis.into_inner();
        let n = self.nearest_generator(&z);
        let w = z.cross(&n) * self.error_gain;
        let r = Point3::from(x.translation.vector) - self.center;
        let a = self.axis.into_inner();
        out.set1(twist(a.cross(&r), a), twist(w.cross(&r), w));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::f64::consts::PI;

    fn at(p: Point3<f64>) -> Isometry3<f64> {
        Isometry3::translation(p.x, p.y, p.z)
    }

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

    #[test]
    fn flattened_round_trip() {
        let g = Guidance::from_columns(
            &[Vector6::x(), Vector6::new(1.0, 2.0, 3.0, 4.0, 5.0, 6.0)],
            Vector6::z(),
        )
        .unwrap();
        let flat: Vec<f64> = g.flattened().collect();
        assert_eq!(flat.len(), 12);
        assert_eq!(
            Guidance::from_flattened(&flat, 2, g.u.as_slice()).unwrap(),
            g
        );
        assert!(Guidance::from_flattened(&flat, 3, g.u.as_slice()).is_err());
        assert!(Guidance::from_flattened(&flat, 2, &[0.0; 5]).is_err());
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

        #[test]
        fn parametric_sine_matches_dense_polyline(x in 0.0f64..0.14, y in -0.05f64..0.05) {
            let sine = |t: f64| Point3::new(t, 0.035 * (2.0 * PI * t / 0.07).sin(), 0.0);
            let curve = ParametricCurve::new(sine, 0.0, 0.14, 400).unwrap();
            let dense: Vec<_> = (0..=40000).map(|i| sine(0.14 * i as f64 / 40000.0)).collect();
            let poly = PolylinePath::new(&dense).unwrap();
            let p = Point3::new(x, y, 0.0);
            let a = curve.closest_point(&p);
            let b = poly.closest_point(&p);
            prop_assert!(a.distance <= b.distance + 1e-9);
            prop_assert!(a.distance >= b.distance - 1e-6);
            // tangent is perpendicular to the error at interior points
            if a.arc_length > 1e-6 && a.arc_length < 0.14 - 1e-6 && a.distance > 1e-6 {
                prop_assert!(a.tangent.dot(&(a.point - p)).abs() < 1e-5 * a.distance.max(1e-3));
            }
        }

        #[test]
        fn triangle_closest_matches_sampling(v in proptest::array::uniform9(-1.0f64..1.0), q in proptest::array::uniform3(-2.0f64..2.0)) {
            let a = Point3::new(v[0], v[1], v[2]);
            let b = Point3::new(v[3], v[4], v[5]);
            let c = Point3::new(v[6], v[7], v[8]);
            prop_assume!((b - a).cross(&(c - a)).norm() > 1e-3);
            let q = Point3::from(q);
            let cp = closest_on_triangle(&a, &b, &c, &q);
            let n = 300;
            let mut brute = f64::INFINITY;
            for i in 0..=n {
                for j in 0..=(n - i) {
                    let (s, t) = (i as f64 / n as f64, j as f64 / n as f64);
                    brute = brute.min((a + (b - a) * s + (c - a) * t - q).norm());
                }
            }
            prop_assert!((cp - q).norm() <= brute + 1e-12);
            prop_assert!((cp - q).norm() >= brute - 0.02);
        }

        #[test]
        fn cone_u_is_orthogonal_and_points_inward(phi in 0.0f64..(2.0 * PI), beta in 0.05f64..1.4, gamma in 0.1f64..1.2) {
            let mut cone = RcmCone::new(Point3::origin(), Vector3::z(), gamma, Vector3::z()).unwrap();
            let z = Vector3::new(beta.sin() * phi.cos(), beta.sin() * phi.sin(), beta.cos());
            let rot = Rotation3::rotation_between(&Vector3::z(), &z).unwrap();
            let x = Isometry3::from_parts(nalgebra::Translation3::identity(), rot.into());
            let mut g = Guidance::empty();
            cone.evaluate(&x, &mut g);
            // eq. 12 at the RCM point
            prop_assert!((g.columns()[0] - Vector6::new(0.0, 0.0, 0.0, 0.0, 0.0, 1.0)).norm() < 1e-12);
            // rule 3: <D>u = u
            prop_assert!(g.u.dot(&g.columns()[0]).abs() < 1e-12);
            // rotating z by u reduces the angle error
            let w = g.u.fixed_rows::<3>(3).into_owned();
            let z2 = Rotation3::new(w * 1e-3) * z;
            prop_assert!(cone.angle_error(&z2).abs() <= cone.angle_error(&z).abs() + 1e-15);
            prop_assert!((w.norm() - (beta - gamma).abs().sin()).abs() < 1e-9);
        }
    }

    #[test]
    fn plane_and_mesh_agree_on_a_flat_square() {
        let mut plane = PlaneSurface::new(
            Point3::new(0.0, 0.0, 0.1),
            Vector3::new(0.0, 0.0, 2.0),
            false,
        )
        .unwrap();
        let mut mesh = TriangleMeshSurface::new(
            vec![
                Point3::new(-1.0, -1.0, 0.1),
                Point3::new(1.0, -1.0, 0.1),
                Point3::new(1.0, 1.0, 0.1),
                Point3::new(-1.0, 1.0, 0.1),
            ],
            vec![[0, 1, 2], [0, 2, 3]],
        )
        .unwrap();
        let x = at(Point3::new(0.2, -0.3, 0.5));
        let (mut g1, mut g2) = (Guidance::empty(), Guidance::empty());
        plane.evaluate(&x, &mut g1);
        mesh.evaluate(&x, &mut g2);
        assert!((g1.u - Vector6::new(0.0, 0.0, -0.4, 0.0, 0.0, 0.0)).norm() < 1e-15);
        assert!((g2.u - g1.u).norm() < 1e-15);
        let tol = crate::RankTolerance::default();
        let p1 = crate::Projection::of_columns(g1.columns(), &tol)
            .unwrap()
            .unwrap();
        let p2 = crate::Projection::of_columns(g2.columns(), &tol)
            .unwrap()
            .unwrap();
        assert!((p1.span - p2.span).abs().max() < 1e-12);
        assert!(p1.kernel_of(&g1.u).norm() > 0.0 && (p1.kernel_of(&g1.u) - g1.u).norm() < 1e-15);
        assert!(TriangleMeshSurface::new(vec![Point3::origin(); 3], vec![[0, 1, 2]]).is_err());
        assert!(TriangleMeshSurface::new(vec![Point3::origin(); 3], vec![[0, 1, 5]]).is_err());
        assert!(PlaneSurface::new(Point3::origin(), Vector3::zeros(), false).is_err());
    }

    #[test]
    fn intersection_of_two_planes_is_their_line() {
        let tol = crate::RankTolerance::default();
        let xy = Guidance::from_columns(&[Vector6::x(), Vector6::y()], Vector6::z()).unwrap();
        let xz = Guidance::from_columns(&[Vector6::x() + Vector6::z(), Vector6::z()], Vector6::y())
            .unwrap();
        let g = Guidance::intersect(&xy, &xz, &tol).unwrap();
        assert_eq!(g.n(), 1);
        assert!((g.columns()[0].abs() - Vector6::x()).norm() < 1e-12);
        assert_eq!(g.u, Vector6::y() + Vector6::z());
        // disjoint subspaces: nothing is allowed
        let z = Guidance::from_columns(&[Vector6::z()], Vector6::zeros()).unwrap();
        assert_eq!(Guidance::intersect(&xy, &z, &tol).unwrap().n(), 0);
    }

    proptest! {
        /// dim(A ∩ B) = dim A + dim B − dim(A + B), and every result column lies in both.
        #[test]
        fn intersection_dimension_and_membership(
            a in proptest::collection::vec(proptest::array::uniform6(-1.0f64..1.0), 0..5),
            b in proptest::collection::vec(proptest::array::uniform6(-1.0f64..1.0), 0..5),
            shared in proptest::collection::vec(proptest::array::uniform6(-1.0f64..1.0), 0..3),
        ) {
            let tol = crate::RankTolerance::default();
            let mut ca: Vec<Vector6<f64>> = a.into_iter().map(Vector6::from).collect();
            let mut cb: Vec<Vector6<f64>> = b.into_iter().map(Vector6::from).collect();
            for s in shared {
                if ca.len() < 6 && cb.len() < 6 {
                    ca.push(Vector6::from(s));
                    cb.push(Vector6::from(s) * 2.0);
                }
            }
            let ga = Guidance::from_columns(&ca, Vector6::zeros()).unwrap();
            let gb = Guidance::from_columns(&cb, Vector6::zeros()).unwrap();
            let g = Guidance::intersect(&ga, &gb, &tol).unwrap();
            let pa = crate::Projection::of_columns(&ca, &tol).unwrap().unwrap();
            let pb = crate::Projection::of_columns(&cb, &tol).unwrap().unwrap();
            let all: Vec<_> = ca.iter().chain(&cb).copied().collect();
            let mut sum = nalgebra::Matrix6::zeros();
            for c in &all { sum += c * c.transpose(); }
            let dim_sum = crate::Projection::of_matrix(&sum, &tol).unwrap().rank;
            prop_assume!(dim_sum <= 6 && pa.rank + pb.rank >= dim_sum);
            prop_assert_eq!(g.n(), pa.rank + pb.rank - dim_sum);
            for c in g.columns() {
                prop_assert!(pa.kernel_of(c).norm() < 1e-6);
                prop_assert!(pb.kernel_of(c).norm() < 1e-6);
            }
        }
    }

    #[test]
    fn point_target_is_d_equals_u() {
        let mut t = PointTarget {
            target: Point3::new(1.0, 2.0, 3.0),
        };
        let mut g = Guidance::empty();
        t.evaluate(&at(Point3::new(1.0, 2.0, 3.0)), &mut g);
        assert_eq!(g.columns()[0], Vector6::zeros());
        t.evaluate(&at(Point3::origin()), &mut g);
        assert_eq!(g.columns()[0], g.u);
    }
}
