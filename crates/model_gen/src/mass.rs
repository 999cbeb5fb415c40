//! Mass properties of the solid a [`Mesh`] encloses, shells taken as a *union*.
//!
//! The shells of one link overlap (a boss through a beam), so summing per-shell volume
//! integrals would count the overlap twice. Instead the solid is integrated along vertical
//! rays on a regular x-y grid: each shell's ray hits give its inside intervals, the
//! intervals of all shells are merged, and the merged intervals are integrated exactly in
//! z (midpoint rule plus the cell's own second moment in x and y).

use nalgebra::{Matrix3, Point3, Vector3};

use crate::geometry::Mesh;

/// Volume, centroid and inertia (per unit density) of a solid.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MassProperties {
    /// Volume, m³.
    pub volume: f64,
    /// Centroid, m, in the mesh frame.
    pub centroid: Point3<f64>,
    /// Inertia tensor about the centroid, axes of the mesh frame, per unit density (m⁵).
    pub inertia: Matrix3<f64>,
}

/// Mass properties of the union of the shells of `mesh`, sampled with ray spacing
/// `spacing` (metres).
pub fn union_mass_properties(mesh: &Mesh, spacing: f64) -> MassProperties {
    let h = spacing;
    let (mut lo, mut hi) = (
        Vector3::repeat(f64::INFINITY),
        Vector3::repeat(f64::NEG_INFINITY),
    );
    for v in &mesh.vertices {
        lo = lo.inf(&v.coords);
        hi = hi.sup(&v.coords);
    }
    let nx = ((hi.x - lo.x) / h).ceil() as usize + 1;
    let ny = ((hi.y - lo.y) / h).ceil() as usize + 1;
    // Columns sit off the bounding box's own grid so that flat faces at its edges are not
    // sampled exactly on their plane.
    let x0 = lo.x - 0.5 * h - 0.2371 * h;
    let y0 = lo.y - 0.5 * h - 0.3119 * h;
    let col_x = |i: usize| x0 + (i as f64 + 0.5) * h;
    let col_y = |j: usize| y0 + (j as f64 + 0.5) * h;

    // Bin the triangles of every shell by the columns their x-y bounding box covers.
    let mut shell_of = vec![0usize; mesh.triangles.len()];
    for (s, shell) in mesh.shells.iter().enumerate() {
        for t in shell.triangles.clone() {
            shell_of[t] = s;
        }
    }
    let mut bins: Vec<Vec<u32>> = vec![Vec::new(); nx * ny];
    for (ti, t) in mesh.triangles.iter().enumerate() {
        let p = t.map(|i| mesh.vertices[i as usize]);
        let (mnx, mxx) = (
            p[0].x.min(p[1].x).min(p[2].x),
            p[0].x.max(p[1].x).max(p[2].x),
        );
        let (mny, mxy) = (
            p[0].y.min(p[1].y).min(p[2].y),
            p[0].y.max(p[1].y).max(p[2].y),
        );
        let i0 = (((mnx - x0) / h - 0.5).floor().max(0.0)) as usize;
        let i1 = ((((mxx - x0) / h - 0.5).ceil()) as usize).min(nx - 1);
        let j0 = (((mny - y0) / h - 0.5).floor().max(0.0)) as usize;
        let j1 = ((((mxy - y0) / h - 0.5).ceil()) as usize).min(ny - 1);
        for i in i0..=i1 {
            for j in j0..=j1 {
                bins[i * ny + j].push(ti as u32);
            }
        }
    }

    let cell = h * h;
    let (mut vol, mut sx, mut sy, mut sz) = (0.0, 0.0, 0.0, 0.0);
    let (mut sxx, mut syy, mut szz, mut sxy, mut sxz, mut syz) = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
    let mut hits: Vec<Vec<f64>> = vec![Vec::new(); mesh.shells.len()];
    let mut intervals: Vec<(f64, f64)> = Vec::new();
    for i in 0..nx {
        for j in 0..ny {
            let bin = &bins[i * ny + j];
            if bin.is_empty() {
                continue;
            }
            let (x, y) = (col_x(i), col_y(j));
            // Cast the ray; if it grazes an edge or a vertex, cast it again slightly moved.
            let mut ok = false;
            for attempt in 0..16 {
                let px = x + attempt as f64 * 1.2345678e-7 * h;
                let py = y + attempt as f64 * 0.8765432e-7 * h;
                if cast(mesh, bin, &shell_of, px, py, &mut hits) {
                    ok = true;
                    break;
                }
            }
            if !ok {
                continue;
            }
            intervals.clear();
            for zs in &mut hits {
                zs.sort_by(f64::total_cmp);
                intervals.extend(zs.chunks_exact(2).map(|c| (c[0], c[1])));
            }
            intervals.sort_by(|a, b| a.0.total_cmp(&b.0));
            let mut merged: Option<(f64, f64)> = None;
            let mut add = |(z0, z1): (f64, f64)| {
                let len = z1 - z0;
                let mz = (z1 * z1 - z0 * z0) / 2.0;
                let mzz = (z1 * z1 * z1 - z0 * z0 * z0) / 3.0;
                vol += cell * len;
                sx += cell * x * len;
                sy += cell * y * len;
                sz += cell * mz;
                sxx += cell * (x * x + h * h / 12.0) * len;
                syy += cell * (y * y + h * h / 12.0) * len;
                szz += cell * mzz;
                sxy += cell * x * y * len;
                sxz += cell * x * mz;
                syz += cell * y * mz;
            };
            for &(a, b) in &intervals {
                merged = match merged {
                    Some((m0, m1)) if a <= m1 => Some((m0, m1.max(b))),
                    Some(m) => {
                        add(m);
                        Some((a, b))
                    }
                    None => Some((a, b)),
                };
            }
            if let Some(m) = merged {
                add(m);
            }
        }
    }
    let c = Vector3::new(sx, sy, sz) / vol;
    let about_origin = Matrix3::new(
        syy + szz,
        -sxy,
        -sxz,
        -sxy,
        sxx + szz,
        -syz,
        -sxz,
        -syz,
        sxx + syy,
    );
    let shift = (Matrix3::identity() * c.norm_squared() - c * c.transpose()) * vol;
    MassProperties {
        volume: vol,
        centroid: Point3::from(c),
        inertia: about_origin - shift,
    }
}

/// Intersects the vertical line through (`px`, `py`) with the binned triangles and
/// stores the hit heights per shell. Returns false if the line passes too close to an
/// edge to decide, or a shell is crossed an odd number of times.
fn cast(
    mesh: &Mesh,
    bin: &[u32],
    shell_of: &[usize],
    px: f64,
    py: f64,
    hits: &mut [Vec<f64>],
) -> bool {
    for zs in hits.iter_mut() {
        zs.clear();
    }
    const EPS: f64 = 1e-16;
    for &ti in bin {
        let t = mesh.triangles[ti as usize];
        let [a, b, c] = t.map(|i| mesh.vertices[i as usize]);
        let det = (b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x);
        if det.abs() < EPS {
            continue; // vertical triangle: its neighbours decide
        }
        let edge =
            |p: Point3<f64>, q: Point3<f64>| (q.x - p.x) * (py - p.y) - (q.y - p.y) * (px - p.x);
        let (wa, wb, wc) = (edge(b, c), edge(c, a), edge(a, b));
        if wa.abs() < EPS || wb.abs() < EPS || wc.abs() < EPS {
            // On (or within rounding of) an edge; outside if another sign already says so.
            let inside_or_on = [wa, wb, wc].iter().all(|w| w * det >= -EPS * det.abs());
            if inside_or_on {
                return false;
            }
            continue;
        }
        if (wa > 0.0) == (det > 0.0) && (wb > 0.0) == (det > 0.0) && (wc > 0.0) == (det > 0.0) {
            let z = (wa * a.z + wb * b.z + wc * c.z) / det;
            hits[shell_of[ti as usize]].push(z);
        }
    }
    hits.iter().all(|zs| zs.len() % 2 == 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::{Frame, Profile, Section};
    use std::f64::consts::PI;

    #[test]
    fn cylinder_matches_polygonal_prism_analytically() {
        let (r, len, m) = (0.05, 0.2, 128usize);
        let p = Profile::flat_start(0.0, Section::circle(r), 0.0, 0)
            .side(len, Section::circle(r), 2)
            .flat_end(0.0, 0);
        let mut mesh = Mesh::default();
        mesh.add_loft("c", Frame::along_x(0.1, 0.2, 0.3), &p, m)
            .unwrap();
        let mp = union_mass_properties(&mesh, 0.0005);
        let exact_v = PI * r * r * len;
        assert!(
            (mp.volume - exact_v).abs() / exact_v < 2e-3,
            "{}",
            mp.volume
        );
        let c = Point3::new(0.1 + len / 2.0, 0.2, 0.3);
        assert!((mp.centroid - c).norm() < 2.5e-4, "{:?}", mp.centroid);
        let mass = mp.volume;
        let ixx = mass * r * r / 2.0;
        let iyy = mass * (3.0 * r * r + len * len) / 12.0;
        assert!((mp.inertia[(0, 0)] - ixx).abs() / ixx < 1e-2);
        assert!((mp.inertia[(1, 1)] - iyy).abs() / iyy < 1e-2);
        assert!((mp.inertia[(2, 2)] - iyy).abs() / iyy < 1e-2);
        assert!(mp.inertia[(0, 1)].abs() < 1e-3 * iyy);
    }

    #[test]
    fn overlapping_shells_are_counted_once() {
        let s = Section::superellipse(0.04, 0.04, 2.0);
        let p = Profile::flat_start(0.0, s, 0.0, 0)
            .side(0.1, s, 1)
            .flat_end(0.0, 0);
        let mut one = Mesh::default();
        one.add_loft("a", Frame::along_z(0.0, 0.0, 0.0), &p, 64)
            .unwrap();
        let mut two = one.clone();
        // The same cylinder again, shifted halfway up: the union is 1.5 cylinders long.
        two.add_loft("b", Frame::along_z(0.0, 0.0, 0.05), &p, 64)
            .unwrap();
        let v1 = union_mass_properties(&one, 0.001).volume;
        let v2 = union_mass_properties(&two, 0.001).volume;
        assert!((v2 / v1 - 1.5).abs() < 1e-9, "{v1} {v2}");
        let per_shell: f64 = two
            .shells
            .iter()
            .map(|s| two.signed_volume(s.triangles.clone()))
            .sum();
        assert!((per_shell / v1 - 2.0).abs() < 1e-2);
    }
}
