//! Deterministic binary STL encoding.
//!
//! The bytes are written here rather than by a library so that the 80-byte header, the
//! rounding of vertices to `f32` and the facet normals are fully under our control: a
//! rerun of the generator must reproduce every byte.

use nalgebra::Vector3;

use crate::geometry::Mesh;

/// Grid (metres) to which vertex coordinates are rounded before conversion to `f32`.
///
/// Rounding to 0.1 µm first makes the `f32` bits insensitive to last-ulp differences of
/// the trigonometric functions between platforms, without moving any vertex visibly.
pub const VERTEX_GRID: f64 = 1e-7;

/// Rounds a coordinate to [`VERTEX_GRID`] and then to `f32`.
pub fn quantize(x: f64) -> f32 {
    ((x / VERTEX_GRID).round() * VERTEX_GRID) as f32
}

/// Encodes `mesh` as binary STL with an ASCII `header` (truncated/padded to 80 bytes;
/// it must not start with `solid`, which would make readers take the file for ASCII STL).
///
/// Each facet normal is the unit normal of the triangle *as stored* (after rounding to
/// `f32`), computed in `f64`.
pub fn encode(mesh: &Mesh, header: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(84 + 50 * mesh.triangles.len());
    let mut head = [b' '; 80];
    let text = header.as_bytes();
    let n = text.len().min(80);
    head[..n].copy_from_slice(&text[..n]);
    debug_assert!(!head.starts_with(b"solid"));
    out.extend_from_slice(&head);
    out.extend_from_slice(&(mesh.triangles.len() as u32).to_le_bytes());
    let stored: Vec<[f32; 3]> = mesh
        .vertices
        .iter()
        .map(|p| [quantize(p.x), quantize(p.y), quantize(p.z)])
        .collect();
    for t in &mesh.triangles {
        let [a, b, c] = t.map(|i| stored[i as usize]);
        let v = |p: [f32; 3]| Vector3::new(f64::from(p[0]), f64::from(p[1]), f64::from(p[2]));
        let normal = (v(b) - v(a)).cross(&(v(c) - v(a))).normalize();
        for x in normal.iter() {
            out.extend_from_slice(&(*x as f32).to_le_bytes());
        }
        for p in [a, b, c] {
            for x in p {
                out.extend_from_slice(&x.to_le_bytes());
            }
        }
        out.extend_from_slice(&0u16.to_le_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::{Frame, Profile, Section};

    #[test]
    fn stl_io_reads_back_the_same_triangles_and_normals() {
        let mut mesh = Mesh::default();
        let p = Profile::dome_start(0.0, Section::circle(0.05), 0.05, 4)
            .side(0.1, Section::circle(0.04), 2)
            .flat_end(0.005, 2);
        mesh.add_loft("s", Frame::along_x(0.1, 0.0, 0.2), &p, 16)
            .unwrap();
        let bytes = encode(&mesh, "test header");
        assert_eq!(bytes.len(), 84 + 50 * mesh.triangles.len());
        let read = stl_io::read_stl(&mut std::io::Cursor::new(&bytes)).unwrap();
        assert_eq!(read.faces.len(), mesh.triangles.len());
        assert_eq!(read.vertices.len(), mesh.vertices.len());
        read.validate().unwrap();
        for (f, t) in read.faces.iter().zip(&mesh.triangles) {
            for (&got_index, &want_index) in f.vertices.iter().zip(t) {
                let got = read.vertices[got_index];
                let want = mesh.vertices[want_index as usize];
                for d in 0..3 {
                    assert!((f64::from(got[d]) - want[d]).abs() < 1e-7);
                }
            }
            let n = Vector3::new(f.normal[0], f.normal[1], f.normal[2]).cast::<f64>();
            assert!((n.norm() - 1.0).abs() < 1e-6);
        }
        assert_eq!(encode(&mesh, "test header"), bytes);
    }
}
