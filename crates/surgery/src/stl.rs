//! Protection meshes as binary STL (through the suite's one STL writer,
//! [`rpq_base::mesh::binary_stl`]), and the topology checks the tests and the node use.

use std::collections::HashMap;

use rpq_kinematics::TriMesh;

/// The mesh as binary STL bytes (metres, single precision as the format demands).
pub fn to_binary_stl(mesh: &TriMesh) -> Vec<u8> {
    let tris: Vec<[[f32; 3]; 3]> = mesh
        .triangles
        .iter()
        .map(|t| t.map(|k| mesh.vertices[k as usize].coords.map(|x| x as f32).into()))
        .collect();
    rpq_base::mesh::binary_stl(&tris)
}

/// The boundary loops of a mesh: edges used by one triangle only, chained into closed loops of
/// vertex indices (in the direction the triangles traverse them). `None` when the boundary is
/// not a set of simple loops (a vertex with several boundary edges leaving it, an edge used
/// three times, or inconsistent orientation).
pub fn boundary_loops(mesh: &TriMesh) -> Option<Vec<Vec<u32>>> {
    let mut directed: HashMap<(u32, u32), u32> = HashMap::new();
    for t in &mesh.triangles {
        for k in 0..3 {
            *directed.entry((t[k], t[(k + 1) % 3])).or_default() += 1;
        }
    }
    let mut next: HashMap<u32, u32> = HashMap::new();
    for (&(a, b), &count) in &directed {
        if count > 1 {
            return None; // an edge traversed twice the same way: inconsistent or non-manifold
        }
        match directed.get(&(b, a)) {
            Some(1) => {}
            Some(_) => return None,
            None => {
                if next.insert(a, b).is_some() {
                    return None;
                }
            }
        }
    }
    let mut loops = Vec::new();
    let mut starts: Vec<u32> = next.keys().copied().collect();
    starts.sort_unstable();
    let mut used = std::collections::HashSet::new();
    for s in starts {
        if used.contains(&s) {
            continue;
        }
        let mut lp = vec![s];
        used.insert(s);
        let mut v = next[&s];
        while v != s {
            if !used.insert(v) {
                return None;
            }
            lp.push(v);
            v = *next.get(&v)?;
        }
        loops.push(lp);
    }
    Some(loops)
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::Point3;

    #[test]
    fn loops_of_a_square_and_stl_round_trip() {
        let m = TriMesh::new(
            vec![
                Point3::new(0.0, 0.0, 0.0),
                Point3::new(1.0, 0.0, 0.0),
                Point3::new(1.0, 1.0, 0.0),
                Point3::new(0.0, 1.0, 0.0),
            ],
            vec![[0, 1, 2], [0, 2, 3]],
        )
        .unwrap();
        assert_eq!(boundary_loops(&m).unwrap(), vec![vec![0, 1, 2, 3]]);
        let back = TriMesh::from_stl_bytes(&to_binary_stl(&m)).unwrap();
        assert_eq!(back.triangles.len(), 2);
        let flipped = TriMesh {
            triangles: vec![[0, 1, 2], [0, 3, 2]],
            ..m
        };
        assert!(boundary_loops(&flipped).is_none());
    }
}
