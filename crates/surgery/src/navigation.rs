//! Surface navigation (RPQ §4.1): the tool point moves from its current position toward a
//! desired one; where that motion would cross or penetrate a protection mesh, the desired
//! point is projected onto the touched triangles (Fig. 7) and the candidate closest to it is
//! taken, repeated until the motion is collision-free. Orientation is not touched.
//!
//! # The tool and what "never inside" means
//!
//! The tool is a sphere of radius `r ≥ 0` around the tool point (`r = 0`: a point; the drill
//! bit: its radius). A motion from `p` to `x` *collides* with a triangle when the segment `p x`
//! passes within `r` of it (inclusive), i.e. when the moving sphere would touch it. The
//! navigator only returns positions whose whole motion from the current position is
//! collision-free, and corrected positions keep a margin `skin > 0` beyond `r`. Hence, starting
//! clear, the sphere never touches a protection surface and its centre never crosses one: the
//! tool stays on the side it came from. This is what protects open surfaces such as the shield
//! (which has no inside): the tool can approach and slide along either face but never pass
//! through, and it can pass around a free border (e.g. into the shield's opening) only with
//! the whole sphere clear of it. For closed meshes (the patient) it means the sphere never
//! enters. A point tool (`r = 0`) can slip through gaps between meshes narrower than nothing
//! at all only if the meshes leave holes; a sphere cannot pass gaps narrower than `2 r`.
//!
//! If the current position is already within `r` of a triangle (a protection loaded around
//! the tool, or rounding after the robot's motion), that triangle only forbids motions that
//! bring the tool closer to it (the distance to a triangle is convex along a segment, so a
//! motion that starts by not approaching never approaches): the tool can back out or slide,
//! never go deeper, and is never moved by the navigator on its own, so swapping the protection
//! set never makes the command jump.
//!
//! # Algorithm
//!
//! 1. All triangles the motion `current → desired` collides with are found with the proximity
//!    engine: one hierarchy descent per protection ([`rpq_proximity::segment_within`] with a
//!    sphere around the current position of radius `r + |desired − current| + max(|desired −
//!    current|, 0.2 mm)`), then the exact segment-triangle distance on that small set for each
//!    check; a target farther out gathers again, so no triangle is ever missed.
//! 2. For each, a candidate: the desired point projected onto the triangle's plane and, when
//!    the projection falls outside the triangle, onto the nearest border point of its region
//!    R1, R12, R2, R23, R3, R31 ([`crate::regions`]); then moved off the triangle by `r +
//!    skin` on the side the tool comes from (along the face normal; for border points toward
//!    the desired point when it has not crossed the plane, so that the sphere rolls around
//!    edges and corners).
//! 3. The candidate closest to the desired point is taken and its motion checked again.
//! 4. If it still collides (a concave corner: the channel between shield and cutting aid, a
//!    wall meeting the skull), the contacts found so far are kept as half-spaces (each
//!    triangle's supporting plane at its candidate) and the desired point is projected onto
//!    their intersection (a least-distance problem on at most [`MAX_PLANES`] planes),
//!    so the tool slides along the valley instead of bouncing between its walls (Seidel's
//!    incremental method, exact).
//! 5. After `max_iterations` checks without a free motion, the tool stays where it is
//!    ([`Outcome::Blocked`]).

use nalgebra::{Matrix3, Point3, Unit, Vector3, Vector6};
use rpq_proximity::{segment_triangle_distance, segment_within, SegmentHit, SweepWorkspace};

use crate::protection::ProtectionSet;
use crate::regions::{self, Region};
use crate::SurgeryError;

/// Extra radius of the ball of triangles gathered around the current position [m] (see
/// [`SurfaceNavigator::navigate`]'s first step).
const GATHER_MARGIN: f64 = 2e-4;

/// Largest number of contact half-spaces kept for the valley step.
pub const MAX_PLANES: usize = 48;

/// Settings of a [`SurfaceNavigator`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NavigatorConfig {
    /// Tool radius `r` [m] (0: a point tool).
    pub radius: f64,
    /// Margin beyond `r` at which corrected positions are placed [m] (> 0).
    pub skin: f64,
    /// Collision checks per call before the tool stays where it is (≥ 1).
    pub max_iterations: usize,
}

impl Default for NavigatorConfig {
    fn default() -> Self {
        NavigatorConfig {
            radius: 0.0,
            skin: 1e-6,
            max_iterations: 8,
        }
    }
}

impl NavigatorConfig {
    /// Checks ranges: `0 ≤ radius ≤ 0.1 m`, `0 < skin ≤ 1 mm`, `1 ≤ max_iterations ≤ 64`.
    pub fn validate(&self) -> Result<(), SurgeryError> {
        if !(self.radius.is_finite() && (0.0..=0.1).contains(&self.radius)) {
            return Err(SurgeryError::range(
                "tool radius",
                self.radius,
                "0 to 0.1 m",
            ));
        }
        if !(self.skin.is_finite() && self.skin > 0.0 && self.skin <= 1e-3) {
            return Err(SurgeryError::range("skin", self.skin, "> 0 and <= 0.001 m"));
        }
        if !(1..=64).contains(&self.max_iterations) {
            return Err(SurgeryError::range(
                "max_iterations",
                self.max_iterations as f64,
                "1 to 64",
            ));
        }
        Ok(())
    }
}

/// How a navigation ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// The desired motion was collision-free and is kept.
    Free,
    /// The desired point was projected: the tool slides along a protection.
    Slid,
    /// No collision-free position was found: the tool stays where it is.
    Blocked,
}

impl Outcome {
    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Free => "free",
            Outcome::Slid => "slid",
            Outcome::Blocked => "blocked",
        }
    }
}

/// The answer of [`SurfaceNavigator::navigate`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Navigation {
    /// Where the tool point may go (the desired point when free, the current one when blocked).
    pub position: Point3<f64>,
    /// Free, slid or blocked.
    pub outcome: Outcome,
    /// Collision checks run (1 for a free motion).
    pub iterations: u32,
    /// Triangles the desired motion collided with.
    pub contacts: u32,
    /// Direction of the correction (`position − desired`, normalised) when slid or blocked.
    pub normal: Option<Unit<Vector3<f64>>>,
    /// The current position was within the tool radius of some protection triangle.
    pub started_inside: bool,
}

/// A half-space `n · x ≥ h` (`n` unit).
#[derive(Clone, Copy, Debug)]
struct Plane {
    n: Vector3<f64>,
    h: f64,
}

/// A colliding triangle of the current check.
#[derive(Clone, Copy, Debug)]
struct Contact {
    hit: SegmentHit,
    /// For a triangle the current position is already within `r` of: the unit direction away
    /// from it (the motion must not have a negative component along it).
    inside: Option<Vector3<f64>>,
}

/// Keeps a tool out of a [`ProtectionSet`] by surface navigation; reusable buffers, no
/// allocation per call once they have grown.
///
/// ```
/// use nalgebra::{Isometry3, Point3, Vector3};
/// use rpq_kinematics::TriMesh;
/// use rpq_surgery::{NavigatorConfig, Outcome, Protection, ProtectionKind, ProtectionSet, SurfaceNavigator};
///
/// // the floor z = 0 (two triangles), a sphere tool of radius 1 cm above it
/// let floor = TriMesh::new(
///     vec![Point3::new(-1.0, -1.0, 0.0), Point3::new(1.0, -1.0, 0.0), Point3::new(1.0, 1.0, 0.0), Point3::new(-1.0, 1.0, 0.0)],
///     vec![[0, 1, 2], [0, 2, 3]],
/// )?;
/// let set = ProtectionSet::new().with(Protection::from_mesh("floor", ProtectionKind::Patient, &floor, Isometry3::identity())?);
/// let mut nav = SurfaceNavigator::new(set, NavigatorConfig { radius: 0.01, ..Default::default() })?;
/// // pushing down and sideways: the tool slides along the floor at 1 cm (+ skin)
/// let n = nav.navigate(&Point3::new(0.0, 0.0, 0.02), &Point3::new(0.1, 0.0, -0.05));
/// assert_eq!(n.outcome, Outcome::Slid);
/// assert!((n.position - Point3::new(0.1, 0.0, 0.01 + 1e-6)).norm() < 1e-12);
/// # Ok::<(), rpq_surgery::SurgeryError>(())
/// ```
#[derive(Clone, Debug)]
pub struct SurfaceNavigator {
    set: ProtectionSet,
    config: NavigatorConfig,
    ws: SweepWorkspace,
    hits: Vec<SegmentHit>,
    /// The triangles near the current position (see [`SurfaceNavigator::gather`]).
    local: Vec<Near>,
    /// Centre and radius of the ball `local` covers.
    ball: (Point3<f64>, f64),
    contacts: Vec<Contact>,
    planes: Vec<Plane>,
}

/// A triangle near the current position, with its distance from it.
#[derive(Clone, Copy, Debug)]
struct Near {
    corners: [Point3<f64>; 3],
    /// Closest point of the triangle to the current position.
    closest: Point3<f64>,
}

impl SurfaceNavigator {
    /// A navigator over `set` (checked settings).
    pub fn new(set: ProtectionSet, config: NavigatorConfig) -> Result<Self, SurgeryError> {
        config.validate()?;
        Ok(SurfaceNavigator {
            set,
            config,
            ws: SweepWorkspace::new(),
            hits: Vec::new(),
            local: Vec::new(),
            ball: (Point3::origin(), -1.0),
            contacts: Vec::new(),
            planes: Vec::with_capacity(MAX_PLANES),
        })
    }

    /// The settings.
    pub fn config(&self) -> &NavigatorConfig {
        &self.config
    }

    /// The protections in force.
    pub fn protections(&self) -> &ProtectionSet {
        &self.set
    }

    /// Replaces the protections at once, between two calls. The tool is not moved: a new
    /// protection that already overlaps the tool only forbids approaching it further (see the
    /// module docs), so the commanded motion does not jump. Returns the previous set.
    pub fn set_protections(&mut self, set: ProtectionSet) -> ProtectionSet {
        std::mem::replace(&mut self.set, set)
    }

    /// Is the motion `from → to` collision-free (in the sense of the module docs)?
    pub fn is_clear(&mut self, from: &Point3<f64>, to: &Point3<f64>) -> bool {
        if !(from
            .coords
            .iter()
            .chain(to.coords.iter())
            .all(|x| x.is_finite()))
        {
            return false;
        }
        self.gather(from, (to - from).norm());
        self.collect(from, to);
        self.contacts.is_empty()
    }

    /// One navigation: where the tool point at `current` may go when it is commanded to
    /// `desired` (both in the base frame of the protections). Non-finite input gives
    /// [`Outcome::Blocked`] at `current`.
    pub fn navigate(&mut self, current: &Point3<f64>, desired: &Point3<f64>) -> Navigation {
        let mut nav = Navigation {
            position: *current,
            outcome: Outcome::Blocked,
            iterations: 0,
            contacts: 0,
            normal: None,
            started_inside: false,
        };
        let finite = |p: &Point3<f64>| p.coords.iter().all(|x| x.is_finite());
        if !finite(current) || !finite(desired) {
            return nav;
        }
        let p = *current;
        let mut target = *desired;
        self.planes.clear();
        self.gather(&p, (desired - p).norm());
        for it in 0..self.config.max_iterations {
            let inside = self.collect(&p, &target);
            nav.iterations = it as u32 + 1;
            if it == 0 {
                nav.started_inside = inside;
                nav.contacts = self.contacts.len() as u32;
            }
            if self.contacts.is_empty() {
                nav.position = target;
                nav.outcome = if it == 0 {
                    Outcome::Free
                } else {
                    Outcome::Slid
                };
                nav.normal = Unit::try_new(target - desired, 1e-300);
                return nav;
            }
            if it == 0 {
                // the paper's step: the candidate closest to the desired point
                let mut best: Option<(f64, Point3<f64>, Plane)> = None;
                for c in &self.contacts {
                    let (x, plane) = self.candidate(&p, &target, c);
                    let d2 = (x - desired).norm_squared();
                    if best.as_ref().is_none_or(|b| d2 < b.0) {
                        best = Some((d2, x, plane));
                    }
                }
                let Some((_, x, plane)) = best else { break };
                self.planes.push(plane);
                target = x;
            } else {
                // the valley step: keep every contact as a half-space
                let mut added = false;
                for k in 0..self.contacts.len() {
                    let c = self.contacts[k];
                    let (_, plane) = self.candidate(&p, &target, &c);
                    let known = self
                        .planes
                        .iter()
                        .any(|q| (q.n - plane.n).norm() < 1e-9 && (q.h - plane.h).abs() < 1e-12);
                    if !known && self.planes.len() < MAX_PLANES {
                        self.planes.push(plane);
                        added = true;
                    }
                }
                if !added {
                    break;
                }
                match project_onto_planes(desired, &self.planes) {
                    Some(x) => target = x,
                    None => break,
                }
            }
        }
        nav.position = p;
        nav.outcome = Outcome::Blocked;
        nav.normal = Unit::try_new(p - desired, 1e-300);
        nav
    }

    /// The forbidden-region correction of a commanded twist `[v; ω]` (base frame, about the
    /// tool point) over one period `dt` [s]: the linear part is replaced by the navigated
    /// displacement divided by `dt`; the angular part is kept. A non-finite input or `dt ≤ 0`
    /// gives zero linear velocity.
    pub fn filter_twist(
        &mut self,
        tool: &Point3<f64>,
        twist: &Vector6<f64>,
        dt: f64,
    ) -> (Vector6<f64>, Navigation) {
        let v = twist.fixed_rows::<3>(0).into_owned();
        let desired = if dt.is_finite() && dt > 0.0 {
            tool + v * dt
        } else {
            Point3::new(f64::NAN, f64::NAN, f64::NAN)
        };
        let nav = self.navigate(tool, &desired);
        let mut out = *twist;
        let lin = if nav.outcome == Outcome::Blocked {
            Vector3::zeros()
        } else {
            (nav.position - tool) / dt
        };
        out.fixed_rows_mut::<3>(0).copy_from(&lin);
        (out, nav)
    }

    /// Collects every protection triangle within `reach + r + max(reach, GATHER_MARGIN)` of
    /// `p`: one hierarchy descent per protection (a sphere query), after which the collision
    /// checks of this call run on that small set. A motion from `p` to `x` with `|x − p| + r`
    /// within the ball's radius can only touch triangles of the set; a target outside it
    /// gathers again around `p` (projections of the desired point usually stay within
    /// `|desired − p|` of `p`).
    fn gather(&mut self, p: &Point3<f64>, reach: f64) {
        let r = self.config.radius;
        let radius = reach + r + reach.max(GATHER_MARGIN);
        self.local.clear();
        self.ball = (*p, radius);
        for prot in self.set.items() {
            segment_within(
                &prot.pose,
                &prot.model,
                p,
                p,
                radius,
                &mut self.ws,
                &mut self.hits,
            );
            for h in &self.hits {
                self.local.push(Near {
                    corners: h.corners,
                    closest: h.point_triangle,
                });
            }
        }
    }

    /// Fills `self.contacts` with the triangles the motion `p → x` collides with; returns
    /// whether `p` is within the radius of some triangle.
    fn collect(&mut self, p: &Point3<f64>, x: &Point3<f64>) -> bool {
        let r = self.config.radius;
        if (x - self.ball.0).norm() + r > self.ball.1 || self.ball.0 != *p {
            self.gather(p, (x - p).norm());
        }
        self.contacts.clear();
        let mut inside_any = false;
        let len = (x - p).norm();
        for near in &self.local {
            let t = &near.corners;
            let m = p - near.closest;
            let dist = m.norm();
            if dist > r + len {
                continue; // the segment stays farther than dist - len > r from it
            }
            let inside = if dist > r {
                None
            } else {
                inside_any = true;
                let away = if dist > 1e-12 * (1.0 + p.coords.norm()) {
                    m / dist
                } else {
                    regions::triangle_normal(t).unwrap_or_else(Vector3::z)
                };
                if (x - p).dot(&away) >= 0.0 {
                    continue; // not approaching: allowed
                }
                Some(away)
            };
            let (d, ps, pt) = segment_triangle_distance(p, x, t);
            if inside.is_some() || d <= r {
                self.contacts.push(Contact {
                    hit: SegmentHit {
                        triangle: 0,
                        distance: d,
                        point_segment: ps,
                        point_triangle: pt,
                        corners: *t,
                    },
                    inside,
                });
            }
        }
        inside_any
    }

    /// The candidate position for the contact `c` when the tool at `p` is commanded to `t`,
    /// and the half-space that keeps the tool clear of that triangle.
    fn candidate(&self, p: &Point3<f64>, t: &Point3<f64>, c: &Contact) -> (Point3<f64>, Plane) {
        let (r, skin) = (self.config.radius, self.config.skin);
        if let Some(away) = c.inside {
            let a = (t - p).dot(&away);
            let x = t + away * (skin - a);
            return (
                x,
                Plane {
                    n: away,
                    h: away.dot(&p.coords) + skin,
                },
            );
        }
        let tri = &c.hit.corners;
        let (Some(n), Some((region, border))) =
            (regions::triangle_normal(tri), regions::project(tri, t))
        else {
            // degenerate triangles are refused by the engine; keep the current position
            return (
                *p,
                Plane {
                    n: Vector3::z(),
                    h: f64::INFINITY,
                },
            );
        };
        let sp = n.dot(&(p - tri[0]));
        let s = if sp < 0.0 { -1.0 } else { 1.0 };
        let crossed = s * n.dot(&(t - tri[0])) < 0.0;
        let w = t - border;
        let dt = w.norm();
        if !crossed && dt > r {
            // the target is clear of this triangle, the motion grazes it on the way: lift the
            // target so that the segment's closest point clears it
            let seg = &c.hit;
            let u = Unit::try_new(seg.point_segment - seg.point_triangle, 1e-300)
                .map(|u| u.into_inner())
                .unwrap_or(n * s);
            let along = {
                let d = t - p;
                let l2 = d.norm_squared();
                if l2 > 0.0 {
                    ((seg.point_segment - p).dot(&d) / l2).clamp(0.1, 1.0)
                } else {
                    1.0
                }
            };
            let x = t + u * ((r + skin - seg.distance).max(0.0) / along);
            return (
                x,
                Plane {
                    n: u,
                    h: u.dot(&x.coords),
                },
            );
        }
        let dir = if region == Region::Face || crossed || dt <= 1e-300 {
            n * s
        } else {
            w / dt
        };
        let x = border + dir * (r + skin);
        (
            x,
            Plane {
                n: dir,
                h: dir.dot(&x.coords),
            },
        )
    }
}

/// The point closest to `d` in the intersection of the half-spaces `planes` (each `n · x ≥ h`,
/// `n` unit), `None` if it is empty (or too thin to resolve). Seidel's incremental method for
/// this LP-type problem: the planes are added one by one; when the current point violates the
/// next plane, the optimum lies on it, and the problem is solved again in that plane with the
/// planes before it (recursively, at most three equalities in 3-D). Exact up to rounding.
fn project_onto_planes(d: &Point3<f64>, planes: &[Plane]) -> Option<Point3<f64>> {
    let mut eq = [Plane {
        n: Vector3::zeros(),
        h: 0.0,
    }; 3];
    nearest_on(&d.coords, planes, &mut eq, 0).map(Point3::from)
}

/// Tolerance of the feasibility tests [m].
const QP_TOL: f64 = 1e-12;

/// The nearest point to `d` on the equality planes `eq[..k]` satisfying `planes`.
fn nearest_on(
    d: &Vector3<f64>,
    planes: &[Plane],
    eq: &mut [Plane; 3],
    k: usize,
) -> Option<Vector3<f64>> {
    let mut x = project_equalities(d, &eq[..k])?;
    for i in 0..planes.len() {
        if planes[i].n.dot(&x) >= planes[i].h - QP_TOL {
            continue;
        }
        if k == 3 {
            return None; // a point fixed by three planes violates a fourth
        }
        eq[k] = planes[i];
        x = nearest_on(d, &planes[..i], eq, k + 1)?;
    }
    Some(x)
}

/// The nearest point to `d` on the intersection of up to three planes (`n · x = h`), `None`
/// when they do not meet in a well-conditioned point, line or plane.
fn project_equalities(d: &Vector3<f64>, eq: &[Plane]) -> Option<Vector3<f64>> {
    let gap = |p: &Plane| p.h - p.n.dot(d);
    match eq {
        [] => Some(*d),
        [a] => Some(d + a.n * gap(a)),
        [a, b] => {
            let c = a.n.dot(&b.n);
            let det = 1.0 - c * c;
            if det < 1e-12 {
                return None;
            }
            let (ga, gb) = (gap(a), gap(b));
            Some(d + a.n * ((ga - c * gb) / det) + b.n * ((gb - c * ga) / det))
        }
        [a, b, c] => {
            let m = Matrix3::from_rows(&[a.n.transpose(), b.n.transpose(), c.n.transpose()]);
            if m.determinant().abs() < 1e-9 {
                return None;
            }
            m.try_inverse().map(|inv| inv * Vector3::new(a.h, b.h, c.h))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn planes_projection() {
        let d = Point3::new(0.0, 0.0, -1.0);
        // one plane z >= 0
        let z = Plane {
            n: Vector3::z(),
            h: 0.0,
        };
        assert_eq!(project_onto_planes(&d, &[z]), Some(Point3::origin()));
        // a valley: x + z >= 0 and -x + z >= 0 → the bottom line x = 0, z = 0
        let s = std::f64::consts::FRAC_1_SQRT_2;
        let a = Plane {
            n: Vector3::new(s, 0.0, s),
            h: 0.0,
        };
        let b = Plane {
            n: Vector3::new(-s, 0.0, s),
            h: 0.0,
        };
        let x = project_onto_planes(&Point3::new(0.3, 0.5, -1.0), &[a, b]).unwrap();
        assert!((x - Point3::new(0.0, 0.5, 0.0)).norm() < 1e-12);
        // a corner of three planes
        let c = Plane {
            n: Vector3::y(),
            h: 1.0,
        };
        let x = project_onto_planes(&Point3::new(0.3, 0.5, -1.0), &[a, b, c]).unwrap();
        assert!((x - Point3::new(0.0, 1.0, 0.0)).norm() < 1e-12);
        // empty intersection
        let up = Plane {
            n: Vector3::z(),
            h: 1.0,
        };
        let down = Plane {
            n: -Vector3::z(),
            h: 1.0,
        };
        assert!(project_onto_planes(&d, &[up, down]).is_none());
    }

    #[test]
    fn config_is_checked() {
        let ok = NavigatorConfig::default();
        assert!(ok.validate().is_ok());
        for bad in [
            NavigatorConfig { radius: -0.1, ..ok },
            NavigatorConfig {
                radius: f64::NAN,
                ..ok
            },
            NavigatorConfig { skin: 0.0, ..ok },
            NavigatorConfig {
                max_iterations: 0,
                ..ok
            },
        ] {
            assert!(SurfaceNavigator::new(ProtectionSet::new(), bad).is_err());
        }
    }
}
