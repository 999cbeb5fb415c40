//! Triangle-mesh models and their bounding-volume hierarchy.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use nalgebra::{Matrix3, Point3, Vector3};

use crate::obb::{grow_max, grow_min, orthonormal_basis, principal_axes, Obb, FIT_SLACK};
use crate::query::ChildBoxes;
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
    /// Internal node: index of its children's boxes in `Model::child_boxes`.
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
    /// Original indices of the triangles the queries use (ascending; the skipped ones left
    /// out).
    kept: Vec<u32>,
    /// What the mesh rule skipped.
    skipped: rpq_base::mesh::Skipped,
    /// The two children's boxes of each internal node (the distance traversal's view).
    pub(crate) child_boxes: Vec<ChildBoxes>,
    root_box: Obb,
    aabb: (Point3<f64>, Point3<f64>),
}

impl Model {
    /// Validates the mesh and builds the hierarchy.
    ///
    /// Rejects an empty mesh, non-finite vertices and out-of-range indices; degenerate
    /// triangles (repeated index, or twice the area at most `1e-12` times the squared longest
    /// edge) and duplicates of an earlier triangle are **skipped** (left out of the hierarchy
    /// and of every query, counted in [`Model::skipped`]); a mesh left with no triangle is
    /// refused. The suite's one mesh rule, [`rpq_base::mesh::classify`], shared with
    /// `rpq_kinematics`.
    ///
    /// ```
    /// use nalgebra::Point3;
    /// use rpq_base::mesh::MeshError;
    /// use rpq_proximity::{Model, ProximityError};
    /// let v = vec![Point3::origin(), Point3::new(1.0, 0.0, 0.0), Point3::new(0.0, 1.0, 0.0)];
    /// assert_eq!(Model::new(v.clone(), vec![[0, 1, 2]]).unwrap().num_triangles(), 1);
    /// let m = Model::new(v.clone(), vec![[0, 1, 1], [0, 1, 2], [2, 0, 1]]).unwrap();
    /// assert_eq!((m.skipped().degenerate, m.skipped().duplicate), (1, 1));
    /// assert!(matches!(
    ///     Model::new(v, vec![[0, 1, 1]]),
    ///     Err(ProximityError::Mesh(MeshError::NothingLeft { triangles: 1 }))
    /// ));
    /// ```
    pub fn new(
        vertices: Vec<Point3<f64>>,
        triangles: Vec<[u32; 3]>,
    ) -> Result<Model, ProximityError> {
        if triangles.len() > (1usize << 31) {
            return Err(ProximityError::TooLarge(triangles.len()));
        }
        let (keep, skipped) = rpq_base::mesh::classify(&vertices, &triangles)?;
        // Original index of each triangle the hierarchy holds (ascending).
        let kept: Vec<u32> = (0..triangles.len() as u32)
            .filter(|&i| keep[i as usize])
            .collect();
        // (no copy when nothing was skipped, the usual case)
        let kept_triangles: std::borrow::Cow<[[u32; 3]]> = if skipped.total() == 0 {
            std::borrow::Cow::Borrowed(&triangles)
        } else {
            kept.iter().map(|&i| triangles[i as usize]).collect()
        };
        let (mut nodes, order, (lo, hi)) = build(&vertices, &kept_triangles);
        let mut child_boxes = Vec::with_capacity(nodes.len() / 2);
        for k in 0..nodes.len() {
            if !nodes[k].is_leaf() {
                nodes[k].tri = child_boxes.len() as u32;
                child_boxes.push(ChildBoxes::new(
                    &nodes[k + 1],
                    &nodes[nodes[k].right as usize],
                ));
            }
        }
        let leaf_tris = order
            .iter()
            .map(|&i| kept_triangles[i as usize].map(|k| vertices[k as usize]))
            .collect();
        drop(kept_triangles);
        // The root box: the better of the hierarchy's root OBB and the axis-aligned box.
        let r = &nodes[0];
        let pca_box = Obb {
            center: Point3::from(r.center),
            axes: nalgebra::Rotation3::from_matrix_unchecked(r.rot),
            half_extents: r.half,
        };
        let aa_box = {
            let n = box_node(&Matrix3::identity(), lo, hi);
            Obb {
                center: Point3::from(n.center),
                axes: nalgebra::Rotation3::identity(),
                half_extents: n.half,
            }
        };
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
            leaf_ids: order.iter().map(|&k| kept[k as usize]).collect(),
            kept,
            skipped,
            child_boxes,
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

    /// Number of triangles, as given (skipped ones included).
    pub fn num_triangles(&self) -> usize {
        self.triangles.len()
    }

    /// Indices of the triangles the queries use, ascending: every triangle except the
    /// degenerate and duplicate ones the mesh rule skips.
    pub fn used_triangles(&self) -> &[u32] {
        &self.kept
    }

    /// How many triangles the mesh rule skipped (degenerate, duplicate).
    pub fn skipped(&self) -> rpq_base::mesh::Skipped {
        self.skipped
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

    /// Number of nodes of the hierarchy (`2 n - 1` for `n` used triangles).
    pub fn num_nodes(&self) -> usize {
        self.nodes.len()
    }
}

/// Largest number of triangles in a leaf.
pub(crate) const LEAF_SIZE: usize = 1;

/// Per-triangle data used while building.
#[derive(Clone, Copy)]
struct BuildTri {
    /// Sum of the three corners (three times the centroid).
    sum: V,
    /// Upper triangle of the sum of outer products of the three vertices: xx, xy, xz, yy, yz, zz.
    outer: [f64; 6],
}

/// Sums of the corners and of their outer products over a set of triangles: what the
/// covariance of the set's vertices is computed from.
#[derive(Clone, Copy)]
struct Moments {
    count: usize,
    sum: V,
    outer: [f64; 6],
}

impl Moments {
    const ZERO: Moments = Moments {
        count: 0,
        sum: V::new(0.0, 0.0, 0.0),
        outer: [0.0; 6],
    };

    /// The moments of the set `self` without its subset `part`.
    fn minus(&self, part: &Moments) -> Moments {
        let mut outer = self.outer;
        for (o, x) in outer.iter_mut().zip(&part.outer) {
            *o -= x;
        }
        Moments {
            count: self.count - part.count,
            sum: self.sum - part.sum,
            outer,
        }
    }

    #[inline(always)]
    fn add(&mut self, d: &BuildTri) {
        self.count += 1;
        self.sum += d.sum;
        for (o, x) in self.outer.iter_mut().zip(&d.outer) {
            *o += x;
        }
    }

    fn of(data: &[BuildTri], idx: &[u32]) -> Moments {
        let mut m = Moments::ZERO;
        for &i in idx {
            m.add(&data[i as usize]);
        }
        m
    }

    /// Principal axes of the vertices' covariance.
    fn axes(&self) -> Matrix3<f64> {
        let n = 3.0 * self.count as f64;
        let m = self.sum / n;
        let o = &self.outer;
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
    }
}

/// The mesh as the build reads it: the shared vertices, and the triangles by index.
struct Mesh<'a> {
    vertices: &'a [Point3<f64>],
    triangles: &'a [[u32; 3]],
}

impl Mesh<'_> {
    /// The corners of triangle `i`.
    #[inline(always)]
    fn corners(&self, i: u32) -> [Point3<f64>; 3] {
        self.triangles[i as usize].map(|k| self.vertices[k as usize])
    }
}

/// The hierarchy of `triangles` (all used), the leaf order of the triangles and the
/// axis-aligned box of their corners.
fn build(vertices: &[Point3<f64>], triangles: &[[u32; 3]]) -> (Vec<Node>, Vec<u32>, (V, V)) {
    let data: Vec<BuildTri> = triangles
        .iter()
        .map(|t| {
            let mut outer = [0.0; 6];
            let mut sum = V::zeros();
            for &k in t {
                let v = vertices[k as usize].coords;
                sum += v;
                outer[0] += v.x * v.x;
                outer[1] += v.x * v.y;
                outer[2] += v.x * v.z;
                outer[3] += v.y * v.y;
                outer[4] += v.y * v.z;
                outer[5] += v.z * v.z;
            }
            BuildTri { sum, outer }
        })
        .collect();
    let mut order: Vec<u32> = (0..triangles.len() as u32).collect();
    let mut nodes = Vec::with_capacity(2 * triangles.len() - 1);
    let all = Moments::of(&data, &order);
    let mesh = Mesh {
        vertices,
        triangles,
    };
    // Per vertex: the last node that projected it (each node projects each of its vertices
    // once, not once per triangle using it).
    let mut stamp = vec![u32::MAX; vertices.len()];
    let (_, aabb) = build_node(&mesh, &data, &mut order, 0, all, &mut nodes, &mut stamp);
    (nodes, order, aabb)
}

/// The box frame of a one-triangle leaf: first axis along its longest edge, third along its
/// normal.
fn triangle_frame(t: &[Point3<f64>; 3]) -> Matrix3<f64> {
    let e = [t[1] - t[0], t[2] - t[1], t[0] - t[2]];
    let k = (0..3)
        .max_by(|&i, &j| e[i].norm_squared().total_cmp(&e[j].norm_squared()))
        .unwrap_or(0);
    let n = e[0].cross(&e[1]);
    let e1 = n.cross(&e[k]);
    orthonormal_basis(&e[k], &e1)
}

/// Builds the subtree of the triangles `idx` (whose moments are `moments`): one pass over
/// them fits the node's box to their corners in its principal axes, splits them at the mean
/// of their centroids along the major axis and sums the moments of both halves.
fn build_node(
    mesh: &Mesh,
    data: &[BuildTri],
    idx: &mut [u32],
    offset: usize,
    moments: Moments,
    nodes: &mut Vec<Node>,
    stamp: &mut [u32],
) -> (u32, (V, V)) {
    let me = nodes.len();
    if idx.len() <= LEAF_SIZE {
        let rot = if idx.len() == 1 {
            triangle_frame(&mesh.corners(idx[0]))
        } else {
            moments.axes()
        };
        nodes.push(fit_node(&rot, mesh, idx));
        nodes[me].tri = offset as u32;
        nodes[me].count = idx.len() as u32;
        let mut lo = V::repeat(f64::INFINITY);
        let mut hi = V::repeat(f64::NEG_INFINITY);
        for &i in idx.iter() {
            for p in &mesh.corners(i) {
                grow_min(&mut lo, &p.coords);
                grow_max(&mut hi, &p.coords);
            }
        }
        if idx.len() > 1 {
            prefer_aabb(&mut nodes[me], lo, hi);
        }
        return (me as u32, (lo, hi));
    }
    let rot = moments.axes();
    let rt = rot.transpose();
    // Split along the major axis at the mean of the centroids (three times both sides).
    let axis = rot.column(0).into_owned();
    let mean3 = axis.dot(&moments.sum) / idx.len() as f64;
    let mut lo = V::repeat(f64::INFINITY);
    let mut hi = V::repeat(f64::NEG_INFINITY);
    let mut ml = Moments::ZERO;
    let mut left = 0;
    for k in 0..idx.len() {
        let i = idx[k] as usize;
        for &v in &mesh.triangles[i] {
            let s = &mut stamp[v as usize];
            if *s != me as u32 {
                *s = me as u32;
                let l = rt * mesh.vertices[v as usize].coords;
                grow_min(&mut lo, &l);
                grow_max(&mut hi, &l);
            }
        }
        let d = &data[i];
        if d.sum.dot(&axis) < mean3 {
            idx.swap(k, left);
            left += 1;
            ml.add(d);
        }
    }
    // (the right half's moments: the rest)
    let mut mr = moments.minus(&ml);
    nodes.push(box_node(&rot, lo, hi));
    if left == 0 || left == idx.len() {
        left = idx.len() / 2;
        idx.select_nth_unstable_by(left, |&a, &b| {
            data[a as usize]
                .sum
                .dot(&axis)
                .total_cmp(&data[b as usize].sum.dot(&axis))
        });
        ml = Moments::of(data, &idx[..left]);
        mr = moments.minus(&ml);
    }
    let (l, r) = idx.split_at_mut(left);
    let (_, (llo, lhi)) = build_node(mesh, data, l, offset, ml, nodes, stamp);
    let (right, (rlo, rhi)) = build_node(mesh, data, r, offset + left, mr, nodes, stamp);
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
fn fit_node(rot: &Matrix3<f64>, mesh: &Mesh, idx: &[u32]) -> Node {
    let rt = rot.transpose();
    let mut lo = V::repeat(f64::INFINITY);
    let mut hi = V::repeat(f64::NEG_INFINITY);
    for &i in idx {
        for p in &mesh.corners(i) {
            let l = rt * p.coords;
            grow_min(&mut lo, &l);
            grow_max(&mut hi, &l);
        }
    }
    box_node(rot, lo, hi)
}

/// The node whose box has axes `rot` and spans `lo..hi` along them (a little slack added).
fn box_node(rot: &Matrix3<f64>, lo: V, hi: V) -> Node {
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
