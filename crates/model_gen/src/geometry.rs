//! Closed parametric shells and the indexed triangle meshes built from them.
//!
//! Every shell is a *loft*: a stack of rings along a straight axis, each ring a
//! superellipse `|x/a|^n + |y/b|^n = 1` sampled at the same `segments` angles, closed by
//! a pole vertex at each end. Consecutive rings are joined by quads (two triangles) and
//! the poles by triangle fans, so a shell is a closed, consistently oriented, two-manifold
//! grid by construction: every edge is shared by exactly two triangles that traverse it
//! in opposite directions. A loft with `R` rings and `M` segments has `2 M R` triangles.
//!
//! A link mesh ([`Mesh`]) is a union of such shells; shells of one link may interpenetrate
//! (a boss through a beam, say), but they never share vertices, so each stays watertight.

use std::f64::consts::FRAC_PI_2;
use std::ops::Range;

use nalgebra::{Point3, Vector3};

use crate::Error;

/// A superellipse cross-section: half-widths `a` (along the frame's `u`), `b` (along `v`)
/// and exponent `n` (2 = ellipse, 4 = rounded rectangle, larger = squarer).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Section {
    /// Half-width along `u`, metres.
    pub a: f64,
    /// Half-width along `v`, metres.
    pub b: f64,
    /// Superellipse exponent (≥ 2 for convex rounded shapes).
    pub n: f64,
}

impl Section {
    /// A circle of radius `r`.
    pub fn circle(r: f64) -> Self {
        Self { a: r, b: r, n: 2.0 }
    }

    /// A rounded rectangle of half-widths `a` × `b` (superellipse exponent 4).
    pub fn rounded_rect(a: f64, b: f64) -> Self {
        Self { a, b, n: 4.0 }
    }

    /// A superellipse of half-widths `a` × `b` and exponent `n`.
    pub fn superellipse(a: f64, b: f64, n: f64) -> Self {
        Self { a, b, n }
    }

    /// The section shrunk by `d` on each half-width.
    pub fn inset(self, d: f64) -> Self {
        Self {
            a: self.a - d,
            b: self.b - d,
            n: self.n,
        }
    }

    /// The section scaled by `k`.
    pub fn scaled(self, k: f64) -> Self {
        Self {
            a: self.a * k,
            b: self.b * k,
            n: self.n,
        }
    }

    fn lerp(self, other: Self, t: f64) -> Self {
        Self {
            a: self.a + (other.a - self.a) * t,
            b: self.b + (other.b - self.b) * t,
            n: self.n + (other.n - self.n) * t,
        }
    }

    /// The point of the section at parameter angle `phi` (in section coordinates).
    fn point(self, cos_phi: f64, sin_phi: f64) -> (f64, f64) {
        let e = 2.0 / self.n;
        let x = self.a * cos_phi.signum() * cos_phi.abs().powf(e);
        let y = self.b * sin_phi.signum() * sin_phi.abs().powf(e);
        (
            if cos_phi == 0.0 { 0.0 } else { x },
            if sin_phi == 0.0 { 0.0 } else { y },
        )
    }
}

/// One ring of a loft: a section at height `h` along the loft axis.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ring {
    /// Height along the loft axis, metres.
    pub h: f64,
    /// Cross-section at that height.
    pub section: Section,
}

/// The axis profile of a loft: a start pole, rings bottom to top, an end pole.
///
/// Built with a small fluent vocabulary: start with [`Profile::flat_start`] or
/// [`Profile::dome_start`], continue with [`Profile::side`] and [`Profile::step`], finish
/// with [`Profile::flat_end`] or [`Profile::dome_end`].
#[derive(Clone, Debug, PartialEq)]
pub struct Profile {
    start: f64,
    rings: Vec<Ring>,
    end: f64,
}

impl Profile {
    /// A flat cap at height `h` whose edge is rounded with radius `fillet` in `steps` rings.
    pub fn flat_start(h: f64, section: Section, fillet: f64, steps: usize) -> Self {
        let mut rings = Vec::with_capacity(steps + 1);
        if steps == 0 || fillet == 0.0 {
            rings.push(Ring { h, section });
        } else {
            for i in 0..=steps {
                let t = FRAC_PI_2 * i as f64 / steps as f64;
                rings.push(Ring {
                    h: h + fillet * (1.0 - t.cos()),
                    section: section.inset(fillet * (1.0 - t.sin())),
                });
            }
        }
        Self {
            start: h,
            rings,
            end: h,
        }
    }

    /// A dome (half superellipsoid) of height `height` whose base, with section `section`,
    /// lies at `h`; the pole is at `h - height`.
    pub fn dome_start(h: f64, section: Section, height: f64, steps: usize) -> Self {
        let mut rings = Vec::with_capacity(steps);
        for i in 1..=steps {
            let t = FRAC_PI_2 * i as f64 / steps as f64;
            rings.push(Ring {
                h: h - height * t.cos(),
                section: section.scaled(t.sin()),
            });
        }
        Self {
            start: h - height,
            rings,
            end: h,
        }
    }

    fn last(&self) -> Ring {
        // Every constructor pushes at least one ring.
        self.rings[self.rings.len() - 1]
    }

    /// A straight (possibly tapered) side from the last ring to `section` at height `h`,
    /// in `steps` equal intervals.
    pub fn side(mut self, h: f64, section: Section, steps: usize) -> Self {
        let from = self.last();
        let steps = steps.max(1);
        for i in 1..=steps {
            let t = i as f64 / steps as f64;
            self.rings.push(Ring {
                h: from.h + (h - from.h) * t,
                section: from.section.lerp(section, t),
            });
        }
        self
    }

    /// An abrupt change of section at the current height (a flat annulus).
    pub fn step(mut self, section: Section) -> Self {
        let h = self.last().h;
        self.rings.push(Ring { h, section });
        self
    }

    /// Rounds the edge towards a flat shoulder: `steps` rings along a quarter circle of
    /// radius `fillet` that rise by `fillet` and shrink the section by `fillet`.
    pub fn fillet_in(mut self, fillet: f64, steps: usize) -> Self {
        let from = self.last();
        if steps > 0 && fillet > 0.0 {
            for i in 1..=steps {
                let t = FRAC_PI_2 * i as f64 / steps as f64;
                self.rings.push(Ring {
                    h: from.h + fillet * t.sin(),
                    section: from.section.inset(fillet * (1.0 - t.cos())),
                });
            }
        }
        self
    }

    /// Closes the profile with a flat cap whose edge is rounded with radius `fillet`.
    pub fn flat_end(self, fillet: f64, steps: usize) -> Self {
        let mut this = self.fillet_in(fillet, steps);
        this.end = this.last().h;
        this
    }

    /// Closes the profile with a dome of height `height`.
    pub fn dome_end(mut self, height: f64, steps: usize) -> Self {
        let from = self.last();
        for i in 1..steps {
            let t = FRAC_PI_2 * i as f64 / steps as f64;
            self.rings.push(Ring {
                h: from.h + height * t.sin(),
                section: from.section.scaled(t.cos()),
            });
        }
        self.end = from.h + height;
        self
    }

    /// The rings, bottom to top.
    pub fn rings(&self) -> &[Ring] {
        &self.rings
    }

    /// Heights of the start and end poles.
    pub fn poles(&self) -> (f64, f64) {
        (self.start, self.end)
    }
}

/// A right-handed frame for a loft: `origin`, section axes `u`, `v` and the loft axis
/// `w = u × v`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Frame {
    /// Origin (height 0 of the profile, section centre).
    pub origin: Point3<f64>,
    /// First section axis.
    pub u: Vector3<f64>,
    /// Second section axis.
    pub v: Vector3<f64>,
}

impl Frame {
    /// Loft along +z; sections in the x-y plane (`u` = x, `v` = y).
    pub fn along_z(x: f64, y: f64, z: f64) -> Self {
        Self {
            origin: Point3::new(x, y, z),
            u: Vector3::x(),
            v: Vector3::y(),
        }
    }

    /// Loft along +y; sections in the z-x plane (`u` = z, `v` = x).
    pub fn along_y(x: f64, y: f64, z: f64) -> Self {
        Self {
            origin: Point3::new(x, y, z),
            u: Vector3::z(),
            v: Vector3::x(),
        }
    }

    /// Loft along +x; sections in the y-z plane (`u` = y, `v` = z).
    pub fn along_x(x: f64, y: f64, z: f64) -> Self {
        Self {
            origin: Point3::new(x, y, z),
            u: Vector3::y(),
            v: Vector3::z(),
        }
    }

    fn w(&self) -> Vector3<f64> {
        self.u.cross(&self.v)
    }
}

/// A named group of triangles of a [`Mesh`] forming one closed shell.
#[derive(Clone, Debug, PartialEq)]
pub struct Shell {
    /// Human-readable name (for messages and docs).
    pub name: String,
    /// The shell's triangles, as a range into [`Mesh::triangles`].
    pub triangles: Range<usize>,
}

/// An indexed triangle mesh made of closed shells, in metres, in its link frame.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Mesh {
    /// Vertex positions.
    pub vertices: Vec<Point3<f64>>,
    /// Triangles as vertex indices, counter-clockwise seen from outside.
    pub triangles: Vec<[u32; 3]>,
    /// The closed shells the triangles form.
    pub shells: Vec<Shell>,
}

impl Mesh {
    /// Appends a loft with `segments` points per ring (a multiple of 4, at least 8).
    pub fn add_loft(
        &mut self,
        name: &str,
        frame: Frame,
        profile: &Profile,
        segments: usize,
    ) -> Result<(), Error> {
        let bad = |reason: String| Error::InvalidShell {
            shell: name.to_owned(),
            reason,
        };
        if segments < 8 || !segments.is_multiple_of(4) {
            return Err(bad(format!(
                "segments must be a multiple of 4 and at least 8, got {segments}"
            )));
        }
        let rings = profile.rings();
        if rings.is_empty() {
            return Err(bad("profile has no rings".into()));
        }
        let (start, end) = profile.poles();
        let mut prev_h = start;
        for (k, r) in rings.iter().enumerate() {
            let s = r.section;
            if !(s.a > 0.0 && s.b > 0.0 && s.n >= 1.0 && r.h.is_finite()) {
                return Err(bad(format!(
                    "ring {k} has an invalid section {s:?} at h {}",
                    r.h
                )));
            }
            if r.h < prev_h {
                return Err(bad(format!(
                    "ring {k} at h {} is below the previous one",
                    r.h
                )));
            }
            if k > 0 && rings[k - 1] == *r {
                return Err(bad(format!("ring {k} repeats ring {}", k - 1)));
            }
            prev_h = r.h;
        }
        if end < prev_h {
            return Err(bad(format!(
                "end pole {end} is below the last ring {prev_h}"
            )));
        }
        let base =
            u32::try_from(self.vertices.len()).map_err(|_| bad("too many vertices".into()))?;
        let m = segments as u32;
        let w = frame.w();
        let at = |h: f64, x: f64, y: f64| frame.origin + w * h + frame.u * x + frame.v * y;
        // Angles are built from exact quarter turns so the four axis points are exact.
        let trig: Vec<(f64, f64)> = (0..segments)
            .map(|j| {
                let q = segments / 4;
                let (quarter, rem) = (j / q, j % q);
                let t = FRAC_PI_2 * rem as f64 / q as f64;
                let (c, s) = (t.cos(), t.sin());
                match quarter {
                    0 => (c, s),
                    1 => (-s, c),
                    2 => (-c, -s),
                    _ => (s, -c),
                }
            })
            .collect();
        self.vertices.push(at(start, 0.0, 0.0));
        for r in rings {
            for &(c, s) in &trig {
                let (x, y) = r.section.point(c, s);
                self.vertices.push(at(r.h, x, y));
            }
        }
        let n_rings = rings.len() as u32;
        let end_pole = base + 1 + n_rings * m;
        self.vertices.push(at(end, 0.0, 0.0));
        let ring = |k: u32, j: u32| base + 1 + k * m + (j % m);
        let first = self.triangles.len();
        for j in 0..m {
            self.triangles.push([base, ring(0, j + 1), ring(0, j)]);
        }
        for k in 0..n_rings - 1 {
            for j in 0..m {
                self.triangles
                    .push([ring(k, j), ring(k, j + 1), ring(k + 1, j + 1)]);
                self.triangles
                    .push([ring(k, j), ring(k + 1, j + 1), ring(k + 1, j)]);
            }
        }
        for j in 0..m {
            self.triangles
                .push([end_pole, ring(n_rings - 1, j), ring(n_rings - 1, j + 1)]);
        }
        self.shells.push(Shell {
            name: name.to_owned(),
            triangles: first..self.triangles.len(),
        });
        Ok(())
    }

    /// Signed volume enclosed by the triangles in `range` (positive for outward normals).
    pub fn signed_volume(&self, range: Range<usize>) -> f64 {
        self.triangles[range]
            .iter()
            .map(|t| {
                let [a, b, c] = t.map(|i| self.vertices[i as usize].coords);
                a.dot(&b.cross(&c)) / 6.0
            })
            .sum()
    }

    /// Moves every vertex by `offset`.
    pub fn translate(&mut self, offset: Vector3<f64>) {
        for v in &mut self.vertices {
            *v += offset;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn edge_check(mesh: &Mesh) {
        let mut edges: HashMap<(u32, u32), usize> = HashMap::new();
        for t in &mesh.triangles {
            for i in 0..3 {
                *edges.entry((t[i], t[(i + 1) % 3])).or_default() += 1;
            }
        }
        for (&(a, b), &n) in &edges {
            assert_eq!(n, 1, "directed edge {a}->{b} used {n} times");
            assert_eq!(edges.get(&(b, a)), Some(&1), "edge {a}->{b} has no twin");
        }
    }

    #[test]
    fn filleted_cylinder_is_closed_and_close_to_analytic_volume() {
        let r = 0.1;
        let len = 0.3;
        let profile = Profile::flat_start(0.0, Section::circle(r), 0.0, 0)
            .side(len, Section::circle(r), 3)
            .flat_end(0.0, 0);
        let mut mesh = Mesh::default();
        mesh.add_loft("cyl", Frame::along_y(0.0, 0.0, 0.0), &profile, 256)
            .unwrap();
        edge_check(&mesh);
        assert_eq!(mesh.triangles.len(), 2 * 256 * profile.rings().len());
        let v = mesh.signed_volume(0..mesh.triangles.len());
        let exact = std::f64::consts::PI * r * r * len;
        // A regular 256-gon has area (n/2) r^2 sin(2 pi / n).
        let polygon = 128.0 * r * r * (std::f64::consts::TAU / 256.0).sin() * len;
        assert!((v - polygon).abs() < 1e-12, "{v} vs {polygon}");
        assert!((v - exact).abs() / exact < 1e-3);
    }

    #[test]
    fn dome_and_fillet_profiles_are_closed_with_positive_volume() {
        let s = Section::rounded_rect(0.05, 0.02);
        let profile = Profile::dome_start(0.0, s, 0.03, 5)
            .side(0.2, s.scaled(0.8), 4)
            .flat_end(0.01, 3);
        for frame in [
            Frame::along_x(0.1, 0.2, 0.3),
            Frame::along_y(0.0, 0.0, 0.0),
            Frame::along_z(-1.0, 0.0, 0.5),
        ] {
            let mut mesh = Mesh::default();
            mesh.add_loft("s", frame, &profile, 32).unwrap();
            edge_check(&mesh);
            assert!(mesh.signed_volume(0..mesh.triangles.len()) > 0.0);
        }
    }

    #[test]
    fn invalid_profiles_are_rejected() {
        let mut mesh = Mesh::default();
        let p = Profile::flat_start(0.0, Section::circle(0.1), 0.0, 0).flat_end(0.0, 0);
        assert!(mesh
            .add_loft("x", Frame::along_z(0.0, 0.0, 0.0), &p, 30)
            .is_err());
        let p = Profile::flat_start(0.0, Section::circle(0.01), 0.02, 3);
        assert!(mesh
            .add_loft("x", Frame::along_z(0.0, 0.0, 0.0), &p, 16)
            .is_err());
        let p = Profile::flat_start(0.0, Section::circle(0.1), 0.0, 0)
            .step(Section::circle(0.1))
            .flat_end(0.0, 0);
        assert!(mesh
            .add_loft("x", Frame::along_z(0.0, 0.0, 0.0), &p, 16)
            .is_err());
    }
}
