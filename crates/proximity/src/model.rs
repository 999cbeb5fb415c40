//! Triangle-mesh models and their bounding-volume hierarchy.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use nalgebra::{Matrix3, Point3, Vector3};

use crate::obb::{fit_box, grow_max, grow_min, orthonormal_basis, principal_axes, Obb, FIT_SLACK};
use crate::ProximityError;

type V = Vector3<f64>;

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// One node of the hierarchy: its oriented bounding box and topology.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Node {
    /// Axes (columns) in the model frame.
    pub rot: Matrix3<f64>,
    /// OBB centre, model frame.
    pub center: V,
    /// OBB half extents along `rot`'s columns.
    pub half: V,
    /// Size used to choose which node to descend (squared half diagonal).
    pub size: f64,
    /// Index of the right child (the left child is the next node); 0 for a leaf.
    pub right: u32,
    /// Leaf: index of its first triangle in the model's leaf-ordered triangle arrays.
    pub tri: u32,
    /// Leaf: number of triangles (consecutive from `tri`); 0 for an internal node.
    pub count: u32,
}

impl Node {
    #[inline(always)]
    pub fn is_leaf(&self) -> bool {
        self.count != 0
    }
}

/// An immutable triangle mesh with its bounding-volume hierarchy, built once.
///
/// Every node carries an oriented bounding box (the smaller of the principal-axes box and the
/// axis-aligned box), used by the collision queries (separating-axis test) and by the distance
/// and tolerance queries (projection-gap lower bound). Leaves hold one triangle. Nodes are stored depth first (left
/// child next to its parent). `Model` is `Send + Sync`: share it between threads, each with
/// its own [`crate::QueryWorkspace`].
///
/// Collision between two models means that some pair of their triangles intersects: a mesh
/// lying entirely inside another without touching its surface is *not* colliding (as in PQP).
#[derive(Clone, Debug)]
pub struct Model {
    pub(crate) id: u64,
    vertices: Vec<Point3<f64>>,
    triangles: Vec<[u32; 3]>,
    pub(crate) nodes: Vec<Node>,
    /// Triangle vertices in leaf order.
    pub(crate) leaf_tris: Vec<[Point3<f64>; 3]>,
    /// Original triangle index of each leaf-ordered triangle.
    pub(crate) leaf_ids: Vec<u32>,
    root_box: Obb,
    aabb: (Point3<f64>, Point3<f64>),
}

impl Model {
    /// Validates the mesh and builds the hierarchy.
    ///
    /// Rejects an empty mesh, non-finite vertices, out-of-range indices and degenerate
    /// triangles (repeated index, or twice the area at most `1e-12` times the squared longest
    /// edge): the suite's one mesh rule, [`rpq_base::mesh::validate`], shared with
    /// `rpq_kinematics`.
    ///
    /// ```
    /// use nalgebra::Point3;
    /// use rpq_base::mesh::MeshError;
    /// use rpq_proximity::{Model, ProximityError};
    /// let v = vec![Point3::origin(), Point3::new(1.0, 0.0, 0.0), Point3::new(0.0, 1.0, 0.0)];
    /// assert_eq!(Model::new(v.clone(), vec![[0, 1, 2]]).unwrap().num_triangles(), 1);
    /// assert!(matches!(
    ///     Model::new(v, vec![[0, 1, 1]]),
    ///     Err(ProximityError::Mesh(MeshError::DegenerateTriangle { triangle: 0, .. }))
    /// ));
    /// ```
    pub fn new(
        vertices: Vec<Point3<f64>>,
        triangles: Vec<[u32; 3]>,
    ) -> Result<Model, ProximityError> {
        if triangles.len() > (1usize << 31) {
            return Err(ProximityError::TooLarge(triangles.len()));
        }
        rpq_base::mesh::validate(&vertices, &triangles)?;
        let tris: Vec<[Point3<f64>; 3]> = triangles
            .iter()
            .map(|t| t.map(|k| vertices[k as usize]))
            .collect();
        let mut lo = vertices[0].coords;
        let mut hi = lo;
        for t in &tris {
            for p in t {
                grow_min(&mut lo, &p.coords);
                grow_max(&mut hi, &p.coords);
            }
        }
        let (nodes, order) = build(&tris);
        let leaf_tris = order.iter().map(|&i| tris[i as usize]).collect();
        // The root box: the better of the hierarchy's root OBB and the axis-aligned box.
        let r = &nodes[0];
        let pca_box = Obb {
            center: Point3::from(r.center),
            axes: nalgebra::Rotation3::from_matrix_unchecked(r.rot),
            half_extents: r.half,
        };
        let aa_box = fit_box(
            &Matrix3::identity(),
            tris.iter().flat_map(|t| t.iter().map(|p| p.coords)),
        );
        let vol = |b: &Obb| b.half_extents.x * b.half_extents.y * b.half_extents.z;
        let root_box = if vol(&aa_box) < vol(&pca_box) {
            aa_box
        } else {
            pca_box
        };
        Ok(Model {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            vertices,
            triangles,
            nodes,
            leaf_tris,
            leaf_ids: order,
            root_box,
            aabb: (Point3::from(lo), Point3::from(hi)),
        })
    }

    /// Reads an STL file (binary or ASCII) from memory; identical vertices are merged.
    pub fn from_stl_bytes(bytes: &[u8]) -> Result<Model, ProximityError> {
        let stl = rpq_base::mesh::parse_stl(bytes)?;
        Model::new(
            stl.vertices.into_iter().map(Point3::from).collect(),
            stl.triangles,
        )
    }

    /// Reads an STL file (binary or ASCII); identical vertices are merged. Errors name the
    /// file ([`rpq_base::mesh::read_stl_file`]).
    pub fn from_stl_file(path: impl AsRef<Path>) -> Result<Model, ProximityError> {
        let stl = rpq_base::mesh::read_stl_file(path.as_ref())?;
        Model::new(
            stl.vertices.into_iter().map(Point3::from).collect(),
            stl.triangles,
        )
    }

    /// Number of triangles.
    pub fn num_triangles(&self) -> usize {
        self.triangles.len()
    }

    /// The vertices, as given.
    pub fn vertices(&self) -> &[Point3<f64>] {
        &self.vertices
    }

    /// The triangles (vertex indices), as given.
    pub fn triangles(&self) -> &[[u32; 3]] {
        &self.triangles
    }

    /// The three corners of triangle `i` (panics if `i` is out of range).
    pub fn triangle(&self, i: usize) -> [Point3<f64>; 3] {
        self.triangles[i].map(|k| self.vertices[k as usize])
    }

    /// An oriented bounding box of the whole mesh in the model frame (the root of the
    /// hierarchy or the axis-aligned box, whichever has the smaller volume).
    pub fn bounding_box(&self) -> Obb {
        self.root_box
    }

    /// The axis-aligned bounding box `(min, max)` of the mesh's triangles in the model frame.
    pub fn aabb(&self) -> (Point3<f64>, Point3<f64>) {
        self.aabb
    }

    /// Number of nodes of the hierarchy (`2 n - 1` for `n` triangles).
    pub fn num_nodes(&self) -> usize {
        self.nodes.len()
    }
}

/// Largest number of triangles in a leaf.
pub(crate) const LEAF_SIZE: usize = 1;

/// Per-triangle data used while building.
struct BuildTri {
    centroid: V,
    sum: V,
    /// Upper triangle of the sum of outer products of the three vertices: xx, xy, xz, yy, yz, zz.
    outer: [f64; 6],
}

fn build(tris: &[[Point3<f64>; 3]]) -> (Vec<Node>, Vec<u32>) {
    let data: Vec<BuildTri> = tris
        .iter()
        .map(|t| {
            let mut outer = [0.0; 6];
            let mut sum = V::zeros();
            for p in t {
                let v = p.coords;
                sum += v;
                outer[0] += v.x * v.x;
                outer[1] += v.x * v.y;
                outer[2] += v.x * v.z;
                outer[3] += v.y * v.y;
                outer[4] += v.y * v.z;
                outer[5] += v.z * v.z;
            }
            BuildTri {
                centroid: sum / 3.0,
                sum,
                outer,
            }
        })
        .collect();
    let mut order: Vec<u32> = (0..tris.len() as u32).collect();
    let mut nodes = Vec::with_capacity(2 * tris.len());
    build_node(tris, &data, &mut order, 0, &mut nodes);
    (nodes, order)
}

fn build_node(
    tris: &[[Point3<f64>; 3]],
    data: &[BuildTri],
    idx: &mut [u32],
    offset: usize,
    nodes: &mut Vec<Node>,
) -> (u32, (V, V)) {
    let me = nodes.len();
    let rot = if idx.len() == 1 {
        let t = &tris[idx[0] as usize];
        let e = [t[1] - t[0], t[2] - t[1], t[0] - t[2]];
        let k = (0..3)
            .max_by(|&i, &j| e[i].norm_squared().total_cmp(&e[j].norm_squared()))
            .unwrap_or(0);
        let n = e[0].cross(&e[1]);
        let e1 = n.cross(&e[k]);
        orthonormal_basis(&e[k], &e1)
    } else {
        let mut s = V::zeros();
        let mut o = [0.0; 6];
        for &i in idx.iter() {
            let d = &data[i as usize];
            s += d.sum;
            for (ok, dk) in o.iter_mut().zip(&d.outer) {
                *ok += dk;
            }
        }
        let n = 3.0 * idx.len() as f64;
        let m = s / n;
        let cov = Matrix3::new(
            o[0] / n - m.x * m.x,
            o[1] / n - m.x * m.y,
            o[2] / n - m.x * m.z,
            o[1] / n - m.y * m.x,
            o[3] / n - m.y * m.y,
            o[4] / n - m.y * m.z,
            o[2] / n - m.z * m.x,
            o[4] / n - m.z * m.y,
            o[5] / n - m.z * m.z,
        );
        principal_axes(&cov)
    };
    nodes.push(fit_node(&rot, tris, idx));
    if idx.len() <= LEAF_SIZE {
        nodes[me].tri = offset as u32;
        nodes[me].count = idx.len() as u32;
        let mut lo = V::repeat(f64::INFINITY);
        let mut hi = V::repeat(f64::NEG_INFINITY);
        for &i in idx.iter() {
            for p in &tris[i as usize] {
                grow_min(&mut lo, &p.coords);
                grow_max(&mut hi, &p.coords);
            }
        }
        if idx.len() > 1 {
            prefer_aabb(&mut nodes[me], lo, hi);
        }
        return (me as u32, (lo, hi));
    }
    // Split along the major axis at the mean of the centroids.
    let axis = rot.column(0).into_owned();
    let mean = idx
        .iter()
        .map(|&i| data[i as usize].centroid.dot(&axis))
        .sum::<f64>()
        / idx.len() as f64;
    let mut left = 0;
    for k in 0..idx.len() {
        if data[idx[k] as usize].centroid.dot(&axis) < mean {
            idx.swap(k, left);
            left += 1;
        }
    }
    if left == 0 || left == idx.len() {
        left = idx.len() / 2;
        idx.select_nth_unstable_by(left, |&a, &b| {
            data[a as usize]
                .centroid
                .dot(&axis)
                .total_cmp(&data[b as usize].centroid.dot(&axis))
        });
    }
    let (l, r) = idx.split_at_mut(left);
    let (_, (llo, lhi)) = build_node(tris, data, l, offset, nodes);
    let (right, (rlo, rhi)) = build_node(tris, data, r, offset + left, nodes);
    nodes[me].right = right;
    // The subtree's axis-aligned box, from the children's: often tighter than the PCA box
    // for CAD-like meshes; keep the smaller volume.
    let (lo, hi) = (llo.inf(&rlo), lhi.sup(&rhi));
    prefer_aabb(&mut nodes[me], lo, hi);
    (me as u32, (lo, hi))
}

/// Replaces the node's box by the axis-aligned box `lo..hi` if that has a smaller volume.
fn prefer_aabb(node: &mut Node, lo: V, hi: V) {
    let mid = (lo + hi) * 0.5;
    let slack = FIT_SLACK * ((hi - lo).amax() + mid.amax());
    let half = (hi - lo) * 0.5 + V::repeat(slack);
    if half.x * half.y * half.z < node.half.x * node.half.y * node.half.z {
        node.rot = Matrix3::identity();
        node.center = mid;
        node.half = half;
        node.size = half.norm_squared();
    }
}

/// Fits the OBB with axes `rot` to the triangles `idx`.
fn fit_node(rot: &Matrix3<f64>, tris: &[[Point3<f64>; 3]], idx: &[u32]) -> Node {
    let rt = rot.transpose();
    let mut lo = V::repeat(f64::INFINITY);
    let mut hi = V::repeat(f64::NEG_INFINITY);
    for &i in idx {
        for p in &tris[i as usize] {
            let l = rt * p.coords;
            grow_min(&mut lo, &l);
            grow_max(&mut hi, &l);
        }
    }
    let mid = (lo + hi) * 0.5;
    let slack = FIT_SLACK * ((hi - lo).amax() + mid.amax());
    let half = (hi - lo) * 0.5 + V::repeat(slack);
    Node {
        rot: *rot,
        center: rot * mid,
        half,
        size: half.norm_squared(),
        right: 0,
        tri: 0,
        count: 0,
    }
}
