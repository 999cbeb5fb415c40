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

/// The rectangle swept sphere of a node (same axes as the node's OBB); built only when the
/// distance bound uses it (see `rss::BOUND`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct RssNode {
    /// Rectangle centre, model frame; the rectangle spans the node's axes 0 and 1.
    pub center: V,
    /// Rectangle half lengths along axes 0 and 1.
    pub half: [f64; 2],
    /// Sphere radius.
    pub radius: f64,
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
/// and tolerance queries (projection-gap lower bound; measured faster than rectangle swept
/// spheres on robot meshes). Leaves hold one triangle. Nodes are stored depth first (left
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
    /// Per-node RSS (empty unless `rss::BOUND` uses it).
    pub(crate) rss: Vec<RssNode>,
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
    /// triangles (repeated index, or an area below `1e-12` times the squared longest edge).
    ///
    /// ```
    /// use nalgebra::Point3;
    /// use rpq_proximity::{Model, ProximityError};
    /// let v = vec![Point3::origin(), Point3::new(1.0, 0.0, 0.0), Point3::new(0.0, 1.0, 0.0)];
    /// assert_eq!(Model::new(v.clone(), vec![[0, 1, 2]]).unwrap().num_triangles(), 1);
    /// assert!(matches!(
    ///     Model::new(v, vec![[0, 1, 1]]),
    ///     Err(ProximityError::DegenerateTriangle { triangle: 0, .. })
    /// ));
    /// ```
    pub fn new(
        vertices: Vec<Point3<f64>>,
        triangles: Vec<[u32; 3]>,
    ) -> Result<Model, ProximityError> {
        if triangles.is_empty() || vertices.is_empty() {
            return Err(ProximityError::EmptyMesh);
        }
        if triangles.len() > (1usize << 31) {
            return Err(ProximityError::TooLarge(triangles.len()));
        }
        if let Some(index) = vertices
            .iter()
            .position(|v| !v.coords.iter().all(|x| x.is_finite()))
        {
            let v = vertices[index];
            return Err(ProximityError::NonFiniteVertex {
                index,
                value: [v.x, v.y, v.z],
            });
        }
        let mut tris = Vec::with_capacity(triangles.len());
        for (i, t) in triangles.iter().enumerate() {
            if let Some(&index) = t.iter().find(|&&k| k as usize >= vertices.len()) {
                return Err(ProximityError::IndexOutOfRange {
                    triangle: i,
                    index,
                    count: vertices.len(),
                });
            }
            let p = t.map(|k| vertices[k as usize]);
            let e0 = p[1] - p[0];
            let e1 = p[2] - p[0];
            let e2 = p[2] - p[1];
            let cross = e0.cross(&e1).norm();
            let longest = e0
                .norm_squared()
                .max(e1.norm_squared())
                .max(e2.norm_squared());
            if t[0] == t[1]
                || t[1] == t[2]
                || t[0] == t[2]
                || cross.is_nan()
                || cross <= 1e-12 * longest
            {
                return Err(ProximityError::DegenerateTriangle {
                    triangle: i,
                    indices: *t,
                    area: 0.5 * cross,
                });
            }
            tris.push(p);
        }
        let mut lo = vertices[0].coords;
        let mut hi = lo;
        for t in &tris {
            for p in t {
                grow_min(&mut lo, &p.coords);
                grow_max(&mut hi, &p.coords);
            }
        }
        let (nodes, rss, order) = build(&tris);
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
            rss,
            leaf_tris,
            leaf_ids: order,
            root_box,
            aabb: (Point3::from(lo), Point3::from(hi)),
        })
    }

    /// Reads an STL file (binary or ASCII) from memory; identical vertices are merged.
    pub fn from_stl_bytes(bytes: &[u8]) -> Result<Model, ProximityError> {
        let mut cursor = std::io::Cursor::new(bytes);
        let stl = stl_io::read_stl(&mut cursor).map_err(ProximityError::Stl)?;
        let vertices = stl
            .vertices
            .iter()
            .map(|v| Point3::new(f64::from(v[0]), f64::from(v[1]), f64::from(v[2])))
            .collect();
        let triangles = stl
            .faces
            .iter()
            .map(|f| f.vertices.map(|i| i as u32))
            .collect();
        Model::new(vertices, triangles)
    }

    /// Reads an STL file; errors name the file.
    pub fn from_stl_file(path: impl AsRef<Path>) -> Result<Model, ProximityError> {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(|source| ProximityError::Io {
            path: path.to_owned(),
            source,
        })?;
        Model::from_stl_bytes(&bytes).map_err(|e| ProximityError::MeshFile {
            path: path.to_owned(),
            source: Box::new(e),
        })
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

/// How internal nodes are split (see the notes for the measurements).
#[allow(dead_code)]
#[derive(Clone, Copy, PartialEq, Eq)]
enum Split {
    /// Major PCA axis, at the mean of the triangle centroids (PQP).
    PcaMean,
    /// Longest axis of the node's box, at its middle.
    BoxMiddle,
    /// Major PCA axis, at the median centroid (balanced tree).
    PcaMedian,
}

const SPLIT: Split = Split::PcaMean;

/// Largest number of triangles in a leaf (see the notes for the measurements).
pub(crate) const LEAF_SIZE: usize = 1;

/// Per-triangle data used while building.
struct BuildTri {
    centroid: V,
    sum: V,
    /// Upper triangle of the sum of outer products of the three vertices: xx, xy, xz, yy, yz, zz.
    outer: [f64; 6],
}

fn build(tris: &[[Point3<f64>; 3]]) -> (Vec<Node>, Vec<RssNode>, Vec<u32>) {
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
    let mut scratch: Vec<V> = Vec::new();
    let mut rss = Vec::new();
    let want_rss = crate::rss::BOUND != crate::rss::Bound::Obb;
    build_node(
        tris,
        &data,
        &mut order,
        0,
        &mut nodes,
        &mut scratch,
        want_rss.then_some(&mut rss),
    );
    (nodes, rss, order)
}

fn build_node(
    tris: &[[Point3<f64>; 3]],
    data: &[BuildTri],
    idx: &mut [u32],
    offset: usize,
    nodes: &mut Vec<Node>,
    scratch: &mut Vec<V>,
    mut rss: Option<&mut Vec<RssNode>>,
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
    let want_rss = rss.is_some();
    let node = fit_node(&rot, tris, idx, scratch, want_rss);
    if let Some(rss) = rss.as_deref_mut() {
        rss.push(fit_rss(&rot, &node, scratch));
    }
    nodes.push(node);
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
        if idx.len() > 1 && !want_rss {
            prefer_aabb(&mut nodes[me], lo, hi);
        }
        return (me as u32, (lo, hi));
    }
    // Split along the major axis at the mean of the centroids.
    let (axis, mean) = match SPLIT {
        Split::PcaMean => {
            let axis = rot.column(0).into_owned();
            let mean = idx
                .iter()
                .map(|&i| data[i as usize].centroid.dot(&axis))
                .sum::<f64>()
                / idx.len() as f64;
            (axis, mean)
        }
        Split::BoxMiddle => {
            let n = &nodes[me];
            let k = n.half.imax();
            let axis = n.rot.column(k).into_owned();
            (axis, axis.dot(&n.center))
        }
        Split::PcaMedian => {
            let axis = rot.column(0).into_owned();
            (axis, f64::NAN) // NaN: nothing goes left, the median fallback below splits
        }
    };
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
    let (_, (llo, lhi)) = build_node(tris, data, l, offset, nodes, scratch, rss.as_deref_mut());
    let (right, (rlo, rhi)) = build_node(tris, data, r, offset + left, nodes, scratch, rss);
    nodes[me].right = right;
    // The subtree's axis-aligned box, from the children's: often tighter than the PCA box
    // for CAD-like meshes; keep the smaller volume (the RSS shares the PCA axes: keep those).
    let (lo, hi) = (llo.inf(&rlo), lhi.sup(&rhi));
    if !want_rss {
        prefer_aabb(&mut nodes[me], lo, hi);
    }
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

/// Fits the OBB with axes `rot` to the triangles `idx` (`scratch` holds the
/// vertices in the node's axes).
fn fit_node(
    rot: &Matrix3<f64>,
    tris: &[[Point3<f64>; 3]],
    idx: &[u32],
    scratch: &mut Vec<V>,
    keep_local: bool,
) -> Node {
    let rt = rot.transpose();
    scratch.clear();
    let mut lo = V::repeat(f64::INFINITY);
    let mut hi = V::repeat(f64::NEG_INFINITY);
    for &i in idx {
        for p in &tris[i as usize] {
            let l = rt * p.coords;
            grow_min(&mut lo, &l);
            grow_max(&mut hi, &l);
            if keep_local {
                scratch.push(l);
            }
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

/// Fits the RSS with the node's axes to the points `local` (in the node's axes).
fn fit_rss(rot: &Matrix3<f64>, node: &Node, local: &[V]) -> RssNode {
    let half = node.half;
    let mid = rot.transpose() * node.center;
    let slack = FIT_SLACK * (2.0 * half.amax() + mid.amax());
    // RSS: radius from the thinnest extent (column 2), rectangle shrunk by h/sqrt(2) per point
    // where h is the sphere's reach at the point's height (valid also in the corners).
    let r = half.z;
    let zc = mid.z;
    let mut x0 = f64::INFINITY;
    let mut x1 = f64::NEG_INFINITY;
    let mut y0 = f64::INFINITY;
    let mut y1 = f64::NEG_INFINITY;
    for l in local {
        let dz = l.z - zc;
        let h = (r * r - dz * dz).max(0.0).sqrt() * std::f64::consts::FRAC_1_SQRT_2 * (1.0 - 1e-9);
        x0 = x0.min(l.x + h);
        x1 = x1.max(l.x - h);
        y0 = y0.min(l.y + h);
        y1 = y1.max(l.y - h);
    }
    if x0 > x1 {
        let m = 0.5 * (x0 + x1);
        x0 = m;
        x1 = m;
    }
    if y0 > y1 {
        let m = 0.5 * (y0 + y1);
        y0 = m;
        y1 = m;
    }
    let rc = V::new(0.5 * (x0 + x1), 0.5 * (y0 + y1), zc);
    RssNode {
        center: rot * rc,
        half: [0.5 * (x1 - x0) + slack, 0.5 * (y1 - y0) + slack],
        radius: r + slack,
    }
}
