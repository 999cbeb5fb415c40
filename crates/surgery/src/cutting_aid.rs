//! The cutting aid of §4.2.3 (eq. 5): an inner cover, a dome whose equator is the outline
//! moved inward by the cut width Δx, so the drill stays in the band between the shield's inner
//! foot (the outline) and the dome: the cut.
//!
//! With `î(u) = ĉ + ρ̂(u) (cos u, sin u)` the radial parametrization of the offset outline
//! from an origin `ĉ` it is star-shaped from, and `ẑ(u)` its height, `z̄` the mean of `ẑ`:
//!
//! ```text
//! ŝ(u, v) = ( ĉ + sin v (Ĥ cos² v + sin² v ρ̂(u)) (cos u, sin u),
//!             z̄ + Ĥ cos v + sin³ v (ẑ(u) − z̄) ),     u ∈ [0, 2π), v ∈ [0, π/2]
//! ```
//!
//! which is eq. 5 for a flat outline (`ẑ = z̄ = 0`); the `sin³ v` term, the weight eq. 5 gives
//! `î`, stands the equator on the patient and leaves the apex at `Ĥ` above the equator's mean.
//! The horizontal radius `ρ̂ (a s + (1 − a) s³)` (`s = sin v`, `a = Ĥ / ρ̂`) grows monotonically
//! to `ρ̂` only while `a ≤ 1.5`: a higher dome would bulge over the cut band, so `Ĥ ≤ 1.5 ·
//! min ρ̂` is required. With a ground, every equator point's height is taken from it (the
//! offset points are not on the drawn outline).
//!
//! Grid: the apex (v = 0) and `N` rings `v = (π/2) k / N`, each with `N` points at
//! `u = 2π j / N`: `N² + 1` vertices, `2 N² − N` triangles, a disc (one boundary loop: the
//! equator), normals outward.

use std::f64::consts::{FRAC_PI_2, TAU};

use nalgebra::{Point2, Point3};
use rpq_kinematics::TriMesh;

use crate::ground::Ground;
use crate::outline::{Outline, PlanarOutline};
use crate::shield::{check_length, check_resolution, radial_samples};
use crate::SurgeryError;

/// Parameters of a cutting aid.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CuttingAidSpec {
    /// Δx: the cut width, by which the outline is moved inward [m] (0 < Δx ≤ 0.1).
    pub width: f64,
    /// Ĥ: height of the apex above the equator's mean [m] (0 < Ĥ ≤ 1.5 · min ρ̂).
    pub height: f64,
    /// `N`: rings and points per ring (3 ≤ N ≤ [`crate::shield::MAX_RESOLUTION`]).
    pub resolution: usize,
}

impl Default for CuttingAidSpec {
    fn default() -> Self {
        CuttingAidSpec {
            width: 0.006,
            height: 0.012,
            resolution: 64,
        }
    }
}

/// A generated cutting aid.
#[derive(Clone, Debug)]
pub struct CuttingAid {
    /// The dome in the caller's frame.
    pub mesh: TriMesh,
    /// The equator `î(u_j)` (mesh vertices), caller's frame.
    pub equator: Vec<Point3<f64>>,
    /// The apex (a mesh vertex), caller's frame.
    pub apex: Point3<f64>,
    /// `î`: the offset outline in the outline frame (heights from the ground if given).
    pub inner_outline: PlanarOutline,
    /// The parametrization origin `ĉ` in the outline frame's plane.
    pub origin: Point2<f64>,
    /// `N`.
    pub resolution: usize,
}

/// Generates the cutting aid of eq. 5 over `outline` (see the module docs).
pub fn generate_cutting_aid(
    outline: &Outline,
    spec: &CuttingAidSpec,
    ground: Option<&mut dyn Ground>,
) -> Result<CuttingAid, SurgeryError> {
    check_length("cut width", spec.width, 0.1)?;
    check_length("cutting aid height", spec.height, 1.0)?;
    check_resolution(spec.resolution)?;
    let frame = outline.frame();
    let mut inner = outline.planar().offset_inward(spec.width)?;
    let mut ground = ground;
    if let Some(g) = &mut ground {
        let mut z = Vec::with_capacity(inner.len());
        for p in inner.points() {
            z.push(
                g.height(p.x, p.y)
                    .ok_or(SurgeryError::OffGround { x: p.x, y: p.y })?,
            );
        }
        inner = PlanarOutline::new(inner.points(), &z)?;
    }
    let c = inner.star_origin().ok_or(SurgeryError::NotStarShaped {
        what: "the cutting aid's equator (the outline moved inward by the cut width)",
    })?;
    let n = spec.resolution;
    let mut samples = radial_samples(&inner, &c, n)?;
    if let Some(g) = ground {
        // every equator point on the ground (not on the chord between offset vertices)
        for (j, (rho, z)) in samples.iter_mut().enumerate() {
            let u = TAU * j as f64 / n as f64;
            let (x, y) = (c.x + *rho * u.cos(), c.y + *rho * u.sin());
            *z = g.height(x, y).ok_or(SurgeryError::OffGround { x, y })?;
        }
    }
    let min_rho = samples.iter().map(|s| s.0).fold(f64::INFINITY, f64::min);
    if spec.height > 1.5 * min_rho {
        return Err(SurgeryError::range(
            "cutting aid height",
            spec.height,
            format!(
                "<= {:.4} m (1.5 times the smallest radius of the offset outline; a higher dome overhangs the cut)",
                1.5 * min_rho
            ),
        ));
    }
    let zbar = samples.iter().map(|s| s.1).sum::<f64>() / n as f64;
    let h = spec.height;
    let mut vertices = Vec::with_capacity(n * n + 1);
    vertices.push(frame.to_parent(&c, zbar + h));
    for k in 1..=n {
        let v = FRAC_PI_2 * k as f64 / n as f64;
        let (s, co) = (v.sin(), v.cos());
        for (j, (rho, z)) in samples.iter().enumerate() {
            let u = TAU * j as f64 / n as f64;
            let r = s * (h * co * co + s * s * rho);
            let xy = Point2::new(c.x + r * u.cos(), c.y + r * u.sin());
            vertices.push(frame.to_parent(&xy, zbar + h * co + s * s * s * (z - zbar)));
        }
    }
    let id = |k: usize, j: usize| (1 + (k - 1) * n + j % n) as u32;
    let mut triangles = Vec::with_capacity(2 * n * n - n);
    for j in 0..n {
        triangles.push([0, id(1, j), id(1, j + 1)]);
    }
    for k in 1..n {
        for j in 0..n {
            let (a, b, cc, d) = (id(k, j), id(k, j + 1), id(k + 1, j + 1), id(k + 1, j));
            triangles.push([a, d, cc]);
            triangles.push([a, cc, b]);
        }
    }
    let equator = (0..n).map(|j| vertices[id(n, j) as usize]).collect();
    Ok(CuttingAid {
        apex: vertices[0],
        mesh: TriMesh::new(vertices, triangles)?,
        equator,
        inner_outline: inner,
        origin: c,
        resolution: n,
    })
}
