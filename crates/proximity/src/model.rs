//! Triangle-mesh models and their bounding-volume hierarchy.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use nalgebra::{Matrix3, Point3, Vector3};

use crate::obb::Obb;
use crate::query::ChildBoxes;
use crate::ProximityError;

mod build;

type V = Vector3<f64>;

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// One node of the hierarchy: its topology and where its box is. The box itself is stored
/// once, beside its sibling's, in [`Model::boxes`] (the layout the distance traversal reads
/// both children's boxes from in one pass); the collision traversal reads it from there too.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Node {
    /// Size used to choose which node to descend (squared half diagonal of its box).
    pub size: f64,
    /// Index of the right child (the left child is the next node); 0 for a leaf.
    pub right: u32,
    /// Leaf: index of its first triangle in the model's leaf-ordered triangle arrays.
    /// Internal node: index of its children's boxes in `Model::boxes`.
    pub tri: u32,
    /// Leaf: number of triangles (consecutive from `tri`); 0 for an internal node.
    pub count: u32,
    /// Where the node's own box is: lane `bx & 1` of `Model::boxes[bx >> 1]` (the root's is
    /// entry 0, lane 0).
    pub bx: u32,
}

/// Entry and lane of box slot `bx` in `Model::boxes` (see [`Node::bx`]).
#[inline(always)]
fn box_slot(bx: u32) -> (usize, usize) {
    ((bx >> 1) as usize, (bx & 1) as usize)
}

/// Stores `b` in box slot `bx` of `boxes` (see [`Node::bx`]) and returns the size a node
/// with that box gets (`Node::size`).
#[inline(always)]
fn store_box(boxes: &mut [ChildBoxes], bx: u32, b: &NodeBox) -> f64 {
    let (entry, lane) = box_slot(bx);
    boxes[entry].set(lane, b);
    b.half.norm_squared()
}

/// A node's oriented bounding box, in the model frame.
#[derive(Clone, Copy, Debug)]
pub(crate) struct NodeBox {
    /// Axes (columns).
    pub rot: Matrix3<f64>,
    /// Centre.
    pub center: V,
    /// Half extents along `rot`'s columns.
    pub half: V,
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
/// and tolerance queries (projection-gap lower bound). Leaves hold one or two triangles. Nodes are stored depth first (left
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
    /// Every node's box, once: entry 0 holds the root's (lane 0), entry `k` of an internal
    /// node (`Node::tri`) its two children's side by side.
    pub(crate) boxes: Vec<ChildBoxes>,
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
        let mut kept: Vec<u32> = Vec::with_capacity(triangles.len() - skipped.total());
        kept.extend((0..triangles.len() as u32).filter(|&i| keep[i as usize]));
        // (no copy when nothing was skipped, the usual case)
        let kept_triangles: std::borrow::Cow<[[u32; 3]]> = if skipped.total() == 0 {
            std::borrow::Cow::Borrowed(&triangles)
        } else {
            kept.iter().map(|&i| triangles[i as usize]).collect()
        };
        let build::Hierarchy {
            nodes,
            boxes,
            leaf_tris,
            order,
            aabb: (lo, hi),
        } = build::build(&vertices, &kept_triangles);
        drop(kept_triangles);
        // The root box: the better of the hierarchy's root OBB and the axis-aligned box.
        let r = boxes[0].get(0);
        let pca_box = Obb {
            center: Point3::from(r.center),
            axes: nalgebra::Rotation3::from_matrix_unchecked(r.rot),
            half_extents: r.half,
        };
        let aa_box = {
            let n = build::box_node(&Matrix3::identity(), lo, hi);
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
            // (leaf position -> original index; the identity map when nothing was skipped)
            leaf_ids: if skipped.total() == 0 {
                order
            } else {
                order.iter().map(|&k| kept[k as usize]).collect()
            },
            kept,
            skipped,
            boxes,
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

    /// The box of node `n` of this model.
    #[inline(always)]
    pub(crate) fn node_box(&self, n: &Node) -> NodeBox {
        let (entry, lane) = box_slot(n.bx);
        self.boxes[entry].get(lane)
    }

    /// Number of nodes of the hierarchy (`n` used triangles in leaves of one or two: between
    /// `n - 1` and `2 n - 1`).
    pub fn num_nodes(&self) -> usize {
        self.nodes.len()
    }
}

/// Largest number of triangles in a leaf (a node of two is not split: see docs/proximity.md,
/// "Leaves of two triangles").
pub(crate) const LEAF_SIZE: usize = 2;
