//! A cranium phantom: an ellipsoidal bone shell with a few bumps, about 50,000 triangles,
//! deterministic and watertight, and a cut outline drawn on it.
//!
//! Both surfaces of the shell are tessellated as a "cube sphere": each face of a cube is an
//! `n × n` grid warped to equal angles (`tan`), pushed along its direction onto the surface.
//! The outer surface is the ellipsoid plus smooth Gaussian bumps along the radial direction;
//! the inner one is the ellipsoid shrunk by the bone thickness, facing inward. Vertices on
//! cube edges are shared, so each surface is a closed, consistently oriented 2-manifold; the
//! shell (two of them) encloses the bone's volume. The phantom frame has its origin at the
//! ellipsoid's centre, z up (toward the vertex of the skull), x toward the front.

use std::collections::HashMap;
use std::f64::consts::FRAC_PI_4;

use nalgebra::{Isometry3, Point2, Point3, Unit, Vector3};
use rpq_kinematics::TriMesh;
use rpq_proximity::Model;

use crate::frame::SurfaceFrame;
use crate::ground::{Ground, MeshGround};
use crate::SurgeryError;

/// A smooth bump on the outer surface.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bump {
    /// Its centre direction from the phantom's centre.
    pub direction: Unit<Vector3<f64>>,
    /// Radial height [m] (negative: a hollow).
    pub height: f64,
    /// Angular standard deviation [rad].
    pub width: f64,
}

/// Parameters of the phantom.
#[derive(Clone, Debug, PartialEq)]
pub struct PhantomSpec {
    /// Semi-axes of the outer ellipsoid (x front-back, y left-right, z up) [m].
    pub semi_axes: Vector3<f64>,
    /// Bone thickness: the inner surface is the ellipsoid with semi-axes shrunk by it [m].
    pub thickness: f64,
    /// Grid cells along each cube edge (triangles: `2 × 12 n²`).
    pub cells: usize,
    /// Bumps of the outer surface.
    pub bumps: Vec<Bump>,
}

impl Default for PhantomSpec {
    /// 19 × 15 × 17 cm, 6 mm of bone, `n = 46` (50,784 triangles), four bumps (frontal and
    /// parietal bosses, an occipital ridge, a shallow hollow near the vertex).
    fn default() -> Self {
        let dir = |x: f64, y: f64, z: f64| Unit::new_normalize(Vector3::new(x, y, z));
        PhantomSpec {
            semi_axes: Vector3::new(0.095, 0.075, 0.085),
            thickness: 0.006,
            cells: 46,
            bumps: vec![
                Bump {
                    direction: dir(0.8, 0.3, 0.5),
                    height: 0.004,
                    width: 0.30,
                },
                Bump {
                    direction: dir(0.8, -0.3, 0.5),
                    height: 0.004,
                    width: 0.30,
                },
                Bump {
                    direction: dir(-0.9, 0.0, 0.2),
                    height: 0.005,
                    width: 0.25,
                },
                Bump {
                    direction: dir(0.25, 0.55, 0.8),
                    height: -0.002,
                    width: 0.22,
                },
            ],
        }
    }
}

/// Radius of the ellipsoid with semi-axes `s` along the unit direction `d`.
fn ellipsoid_radius(s: &Vector3<f64>, d: &Vector3<f64>) -> f64 {
    1.0 / ((d.x / s.x).powi(2) + (d.y / s.y).powi(2) + (d.z / s.z).powi(2)).sqrt()
}

/// One closed cube-sphere surface: `radius(direction)` gives the surface; `outward` the
/// orientation of its triangles. Appended to `mesh`.
fn cube_sphere(mesh: &mut TriMesh, n: usize, outward: bool, radius: &dyn Fn(&Vector3<f64>) -> f64) {
    let base = mesh.vertices.len() as u32;
    let mut index: HashMap<[usize; 3], u32> = HashMap::new();
    let warp = |i: usize| (FRAC_PI_4 * (2.0 * i as f64 / n as f64 - 1.0)).tan();
    let mut vertex = |mesh: &mut TriMesh, g: [usize; 3]| -> u32 {
        *index.entry(g).or_insert_with(|| {
            let d = Vector3::new(warp(g[0]), warp(g[1]), warp(g[2])).normalize();
            mesh.vertices.push(Point3::from(d * radius(&d)));
            base + (mesh.vertices.len() as u32 - base - 1)
        })
    };
    for axis in 0..3 {
        for side in [0, n] {
            let (a, b) = ((axis + 1) % 3, (axis + 2) % 3);
            for i in 0..n {
                for j in 0..n {
                    let cell = |di: usize, dj: usize| {
                        let mut g = [0; 3];
                        g[axis] = side;
                        g[a] = i + di;
                        g[b] = j + dj;
                        g
                    };
                    let q =
                        [cell(0, 0), cell(1, 0), cell(1, 1), cell(0, 1)].map(|g| vertex(mesh, g));
                    // (a, b, axis) is right-handed: the cell (i, j) runs counter-clockwise seen
                    // from +axis, i.e. from outside on the `side = n` face
                    let ccw_outside = (side == n) == outward;
                    let (t1, t2) = if ccw_outside {
                        ([q[0], q[1], q[2]], [q[0], q[2], q[3]])
                    } else {
                        ([q[0], q[2], q[1]], [q[0], q[3], q[2]])
                    };
                    mesh.triangles.push(t1);
                    mesh.triangles.push(t2);
                }
            }
        }
    }
}

/// Generates the phantom (see the module docs), in the phantom frame.
pub fn cranium_phantom(spec: &PhantomSpec) -> Result<TriMesh, SurgeryError> {
    let s = spec.semi_axes;
    if !(s.iter().all(|x| x.is_finite() && *x > 0.0) && spec.thickness.is_finite()) {
        return Err(SurgeryError::range("phantom semi-axes", s.min(), "> 0 m"));
    }
    if !(spec.thickness > 0.0 && spec.thickness < s.min() * 0.5) {
        return Err(SurgeryError::range(
            "phantom thickness",
            spec.thickness,
            "> 0 and < half the smallest semi-axis",
        ));
    }
    if !(2..=400).contains(&spec.cells) {
        return Err(SurgeryError::range(
            "phantom cells",
            spec.cells as f64,
            "2 to 400",
        ));
    }
    let mut mesh = TriMesh::default();
    let bumps = spec.bumps.clone();
    let outer = move |d: &Vector3<f64>| {
        let bump: f64 = bumps
            .iter()
            .map(|b| {
                let angle = d.dot(&b.direction).clamp(-1.0, 1.0).acos();
                b.height * (-(angle * angle) / (2.0 * b.width * b.width)).exp()
            })
            .sum();
        ellipsoid_radius(&s, d) + bump
    };
    cube_sphere(&mut mesh, spec.cells, true, &outer);
    let inner_axes = s.add_scalar(-spec.thickness);
    cube_sphere(&mut mesh, spec.cells, false, &|d| {
        ellipsoid_radius(&inner_axes, d)
    });
    mesh.validate()?;
    Ok(mesh)
}

/// Parameters of the cut outline drawn on the phantom: a rounded (super-elliptic) window with
/// a gentle dent, seen from above the phantom, dropped onto its outer surface.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CutOutlineSpec {
    /// Centre of the window seen from above (phantom x, y) [m].
    pub centre: Point2<f64>,
    /// Half sizes along the window's axes [m].
    pub half_size: (f64, f64),
    /// Rotation of the window about the phantom's z [rad].
    pub rotation: f64,
    /// Super-ellipse exponent (2: an ellipse; larger: squarer).
    pub exponent: f64,
    /// Relative depth of the dent (0: none; the window stays star-shaped from its centre).
    pub dent: f64,
    /// Number of points.
    pub points: usize,
}

impl Default for CutOutlineSpec {
    fn default() -> Self {
        CutOutlineSpec {
            centre: Point2::new(0.012, 0.008),
            half_size: (0.026, 0.019),
            rotation: 0.2,
            exponent: 3.5,
            dent: 0.12,
            points: 120,
        }
    }
}

/// The cut outline on `phantom` placed at `pose` (see [`CutOutlineSpec`]), points in the
/// caller's frame (counter-clockwise seen from above).
pub fn cut_outline(
    phantom: &Model,
    pose: &Isometry3<f64>,
    spec: &CutOutlineSpec,
) -> Result<Vec<Point3<f64>>, SurgeryError> {
    let top = SurfaceFrame { pose: *pose };
    let mut ground = MeshGround::new(phantom, *pose, top);
    let (a, b) = spec.half_size;
    let m = spec.exponent;
    (0..spec.points)
        .map(|k| {
            let t = std::f64::consts::TAU * k as f64 / spec.points as f64;
            let (c, s) = (t.cos(), t.sin());
            let r = 1.0 / ((c / a).abs().powf(m) + (s / b).abs().powf(m)).powf(1.0 / m);
            let dent = 1.0 - spec.dent * (-((t - 2.3) / 0.35).powi(2)).exp();
            let (x, y) = (r * dent * c, r * dent * s);
            let (cr, sr) = (spec.rotation.cos(), spec.rotation.sin());
            let px = spec.centre.x + cr * x - sr * y;
            let py = spec.centre.y + sr * x + cr * y;
            let z = ground
                .height(px, py)
                .ok_or(SurgeryError::OffGround { x: px, y: py })?;
            Ok(top.to_parent(&Point2::new(px, py), z))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phantom_is_closed_oriented_and_about_50k_triangles() {
        let spec = PhantomSpec::default();
        let m = cranium_phantom(&spec).unwrap();
        assert_eq!(m.triangles.len(), 50_784);
        assert!(m.is_closed());
        // outward outer surface, inward inner surface: the shell's volume
        let s = spec.semi_axes;
        let t = spec.thickness;
        let shell = 4.0 / 3.0
            * std::f64::consts::PI
            * (s.x * s.y * s.z - (s.x - t) * (s.y - t) * (s.z - t));
        let smooth = cranium_phantom(&PhantomSpec {
            bumps: vec![],
            ..spec.clone()
        })
        .unwrap();
        let v = smooth.signed_volume();
        assert!((v - shell).abs() < 0.01 * shell, "{v} vs {shell}");
        // the bumps (three bosses, one shallow hollow) add bone
        assert!(m.signed_volume() > v);
        // deterministic
        assert_eq!(cranium_phantom(&spec).unwrap(), m);
    }
}
