//! The shield of §4.2.2 (eq. 4): a torus-like arch from an outer curve over the patient to the
//! cut outline, triangulated on the N × N grid of geodesics.
//!
//! In the outline's [`SurfaceFrame`], with the parametrization origin `c` (a point from which
//! the outline is star-shaped) and the radial parametrizations `i(u) = c + ρ_i(u) (cos u,
//! sin u)` of the inner curve (the outline) and `o(u) = c + ρ_o(u) (cos u, sin u)`,
//! `ρ_o = ρ_i + margin` (constant angular speed: the paper's "constant radial velocity"),
//!
//! ```text
//! s(u, v) = ( sin²(v/2) i(u) + cos²(v/2) o(u),
//!             sin²(v/2) z_i(u) + cos²(v/2) z_o(u) + H sin v ),   u ∈ [0, 2π), v ∈ [0, π]
//! ```
//!
//! which is eq. 4 when both curves lie in the plane `z = 0`. The heights `z_i` (the outline's
//! own) and `z_o` (the ground's under the outer curve, or `z_i` without a ground) put the two
//! feet of the arch on a curved patient, so no gap opens under it; `H` is the height of the
//! crest above the mean of its feet. Because both curves are parametrized along the same rays
//! from `c`, each ray's cross-section is a curve whose distance from `c` decreases strictly
//! from `ρ_o` to `ρ_i`: the surface cannot intersect itself (the reason the paper asks for
//! radial parametrization and a star-shaped inner polygon, Fig. 9).
//!
//! Vertices are the intersections of the geodesics `u = 2π j / N` (j = 0..N−1) and
//! `v = π k / N` (k = 0..N, so both curves are on the mesh): `N (N + 1)` vertices, `2 N²`
//! triangles, an annulus (two boundary loops: the outer curve and the inner curve), normals
//! toward the allowed side (up and away from the patient under the arch).
//!
//! A non-star-shaped outline is first replaced by its convex hull, and the pockets between
//! outline and hull are covered by the **adaptation disc** of Fig. 10 (the pockets
//! triangulated on the outline's own vertices, so the disc's inner border is the outline).

use std::f64::consts::{PI, TAU};

use nalgebra::{Point2, Point3};
use rpq_kinematics::TriMesh;

use crate::ground::Ground;
use crate::outline::{ear_clip, Outline, PlanarOutline};
use crate::SurgeryError;

/// Largest grid resolution `N` accepted.
pub const MAX_RESOLUTION: usize = 512;

/// Parameters of a shield.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ShieldSpec {
    /// `H`: height of the crest above the mean of the two feet [m] (0 < H ≤ 1).
    pub height: f64,
    /// Width of the skirt: `ρ_o − ρ_i` [m] (0 < margin ≤ 1).
    pub margin: f64,
    /// `N`: geodesics per direction (3 ≤ N ≤ [`MAX_RESOLUTION`]).
    pub resolution: usize,
}

impl Default for ShieldSpec {
    fn default() -> Self {
        ShieldSpec {
            height: 0.03,
            margin: 0.04,
            resolution: 64,
        }
    }
}

/// A generated shield.
#[derive(Clone, Debug)]
pub struct Shield {
    /// The protection mesh in the caller's frame: the arch (`2 N²` triangles first), then the
    /// adaptation disc's triangles if any.
    pub mesh: TriMesh,
    /// The inner curve `i(u_j)` (mesh vertices), caller's frame.
    pub inner: Vec<Point3<f64>>,
    /// The outer curve `o(u_j)` (mesh vertices), caller's frame.
    pub outer: Vec<Point3<f64>>,
    /// The parametrization origin `c` in the outline frame's plane (z = 0), caller's frame.
    pub origin: Point3<f64>,
    /// The outline was not star-shaped: its convex hull was used and the disc added.
    pub adapted: bool,
    /// Number of triangles of the arch (`2 N²`); the rest of the mesh is the disc.
    pub arch_triangles: usize,
    /// `N`.
    pub resolution: usize,
}

pub(crate) fn check_resolution(n: usize) -> Result<(), SurgeryError> {
    if (3..=MAX_RESOLUTION).contains(&n) {
        Ok(())
    } else {
        Err(SurgeryError::range(
            "resolution N",
            n as f64,
            format!("3 to {MAX_RESOLUTION}"),
        ))
    }
}

pub(crate) fn check_length(what: &'static str, v: f64, max: f64) -> Result<(), SurgeryError> {
    if v.is_finite() && v > 0.0 && v <= max {
        Ok(())
    } else {
        Err(SurgeryError::range(what, v, format!("> 0 and <= {max} m")))
    }
}

/// Samples the radial parametrization `(ρ, z)` of `curve` from `c` at `u_j = 2π j / n`.
pub(crate) fn radial_samples(
    curve: &PlanarOutline,
    c: &Point2<f64>,
    n: usize,
) -> Result<Vec<(f64, f64)>, SurgeryError> {
    (0..n)
        .map(|j| {
            curve.radial(c, TAU * j as f64 / n as f64).ok_or_else(|| {
                SurgeryError::DegenerateOutline(
                    "a ray from the parametrization origin misses the curve".into(),
                )
            })
        })
        .collect()
}

/// Generates the shield of eq. 4 over `outline` (see the module docs). With a `ground`, the
/// outer curve stands on it (an outer point with no ground under it is an error).
pub fn generate_shield(
    outline: &Outline,
    spec: &ShieldSpec,
    ground: Option<&mut dyn Ground>,
) -> Result<Shield, SurgeryError> {
    check_length("shield height H", spec.height, 1.0)?;
    check_length("shield margin", spec.margin, 1.0)?;
    check_resolution(spec.resolution)?;
    let planar = outline.planar();
    let frame = outline.frame();
    let (curve, c, adapted) = match planar.star_origin() {
        Some(c) => (planar.clone(), c, false),
        None => {
            let hull = planar.convex_hull();
            let pts: Vec<Point2<f64>> = hull.iter().map(|&k| planar.points()[k]).collect();
            let z: Vec<f64> = hull.iter().map(|&k| planar.heights()[k]).collect();
            let h = PlanarOutline::new(&pts, &z)?;
            let c = h.star_origin().ok_or_else(|| {
                SurgeryError::DegenerateOutline("the convex hull has no interior".into())
            })?;
            (h, c, true)
        }
    };
    let n = spec.resolution;
    let inner = radial_samples(&curve, &c, n)?;
    let mut ground = ground;
    let mut outer = Vec::with_capacity(n);
    for (j, (rho, zi)) in inner.iter().enumerate() {
        let u = TAU * j as f64 / n as f64;
        let ro = rho + spec.margin;
        let (x, y) = (c.x + ro * u.cos(), c.y + ro * u.sin());
        let zo = match ground.as_deref_mut() {
            Some(g) => g.height(x, y).ok_or(SurgeryError::OffGround { x, y })?,
            None => *zi,
        };
        outer.push((ro, zo));
    }
    let mut vertices = Vec::with_capacity(n * (n + 1));
    for k in 0..=n {
        let v = PI * k as f64 / n as f64;
        let (si, co) = ((v / 2.0).sin().powi(2), (v / 2.0).cos().powi(2));
        for j in 0..n {
            let u = TAU * j as f64 / n as f64;
            let ((ri, zi), (ro, zo)) = (inner[j], outer[j]);
            let r = si * ri + co * ro;
            let z = si * zi + co * zo + spec.height * v.sin();
            let xy = Point2::new(c.x + r * u.cos(), c.y + r * u.sin());
            vertices.push(frame.to_parent(&xy, z));
        }
    }
    let id = |k: usize, j: usize| (k * n + j % n) as u32;
    let mut triangles = Vec::with_capacity(2 * n * n);
    for k in 0..n {
        for j in 0..n {
            let (a, b, cc, d) = (id(k, j), id(k, j + 1), id(k + 1, j + 1), id(k + 1, j));
            triangles.push([a, b, cc]);
            triangles.push([a, cc, d]);
        }
    }
    let arch_triangles = triangles.len();
    if adapted {
        for pocket in planar.pockets() {
            // the chain runs inside the hull edge: clockwise; reverse for the ear clipper
            let order: Vec<usize> = pocket.iter().rev().copied().collect();
            let base = vertices.len() as u32;
            for &k in &order {
                vertices.push(frame.to_parent(&planar.points()[k], planar.heights()[k]));
            }
            let local: Vec<Point2<f64>> = order.iter().map(|&k| planar.points()[k]).collect();
            let ids: Vec<usize> = (0..order.len()).collect();
            for t in ear_clip(&local, &ids) {
                triangles.push(t.map(|i| base + i as u32));
            }
        }
    }
    let ring = |k: usize| (0..n).map(|j| vertices[k * n + j]).collect::<Vec<_>>();
    let (outer_pts, inner_pts) = (ring(0), ring(n));
    Ok(Shield {
        mesh: TriMesh::new(vertices, triangles)?,
        inner: inner_pts,
        outer: outer_pts,
        origin: frame.to_parent(&c, 0.0),
        adapted,
        arch_triangles,
        resolution: n,
    })
}
