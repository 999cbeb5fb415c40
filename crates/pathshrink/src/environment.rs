//! The work site as the simulator sees it: one moving polyhedral [`Workpiece`] and fixed
//! polyhedral [`Obstacle`]s, taken by name from a scene of `rpq_scene` (the YAML format
//! `rpq_query` reads). Every distance between them comes from the `rpq_proximity` engine
//! (its OBB hierarchy for the workpiece–obstacle distance, its triangle primitives for the
//! contact features).

use std::sync::Arc;

use nalgebra::{Point3, Vector3};
use rpq_proximity::{distance, DistanceRequest, DistanceResult, Model, QueryWorkspace};
use rpq_scene::spec::LoadedScene;
use rpq_scene::Object;

use crate::error::PathShrinkError;
use crate::geometry::Pose;

/// An axis-aligned box (world frame).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Aabb {
    /// Lower corner.
    pub lo: Vector3<f64>,
    /// Upper corner.
    pub hi: Vector3<f64>,
}

impl Aabb {
    /// The box of some points.
    pub fn of(points: impl IntoIterator<Item = Vector3<f64>>) -> Aabb {
        let mut lo = Vector3::repeat(f64::INFINITY);
        let mut hi = Vector3::repeat(f64::NEG_INFINITY);
        for p in points {
            lo = lo.inf(&p);
            hi = hi.sup(&p);
        }
        Aabb { lo, hi }
    }

    /// Do the boxes come closer than `margin` on every axis?
    #[inline]
    pub fn near(&self, other: &Aabb, margin: f64) -> bool {
        (0..3).all(|k| self.lo[k] <= other.hi[k] + margin && other.lo[k] <= self.hi[k] + margin)
    }
}

/// Which features of a mesh can be contact features. An edge is *sharp* when its two
/// triangles are not coplanar (or it has only one); a vertex is sharp when one of its edges
/// is. Edges and vertices inside a flat region (the diagonal of a box face) are not contact
/// features: the faces around them already give the contact, with the face normal, while the
/// closest points of such an edge would give a slanted, wrong normal.
#[derive(Clone, Debug, Default)]
pub(crate) struct Features {
    /// Sharp edges (vertex indices).
    pub edges: Vec<[u32; 2]>,
    /// Per vertex: sharp?
    pub sharp_vertex: Vec<bool>,
    /// Per triangle and corner `k`: is the edge opposite corner `k` sharp?
    pub tri_edge_sharp: Vec<[bool; 3]>,
}

/// Angle (rad) between the normals of two triangles above which their edge is sharp.
const SHARP_ANGLE: f64 = 1e-3;

impl Features {
    pub fn of(vertices: &[Point3<f64>], triangles: &[[u32; 3]]) -> Features {
        use std::collections::HashMap;
        let normal = |t: &[u32; 3]| {
            let [a, b, c] = t.map(|k| vertices[k as usize].coords);
            (b - a).cross(&(c - a)).normalize()
        };
        let mut by_edge: HashMap<[u32; 2], Vec<usize>> = HashMap::new();
        for (ti, t) in triangles.iter().enumerate() {
            for k in 0..3 {
                let (a, b) = (t[(k + 1) % 3], t[(k + 2) % 3]);
                by_edge.entry([a.min(b), a.max(b)]).or_default().push(ti);
            }
        }
        let cos = SHARP_ANGLE.cos();
        let sharp = |tris: &Vec<usize>| {
            tris.len() != 2 || normal(&triangles[tris[0]]).dot(&normal(&triangles[tris[1]])) < cos
        };
        let mut edges: Vec<[u32; 2]> = by_edge
            .iter()
            .filter(|(_, t)| sharp(t))
            .map(|(e, _)| *e)
            .collect();
        edges.sort_unstable();
        let mut sharp_vertex = vec![false; vertices.len()];
        for e in &edges {
            sharp_vertex[e[0] as usize] = true;
            sharp_vertex[e[1] as usize] = true;
        }
        let tri_edge_sharp = triangles
            .iter()
            .map(|t| {
                std::array::from_fn(|k| {
                    let (a, b) = (t[(k + 1) % 3], t[(k + 2) % 3]);
                    sharp(&by_edge[&[a.min(b), a.max(b)]])
                })
            })
            .collect();
        Features {
            edges,
            sharp_vertex,
            tri_edge_sharp,
        }
    }

    /// May the closest point on triangle `t` with barycentric coordinates `w` be a contact
    /// point? Inside the face: yes; on an edge or a corner: only if that feature is sharp.
    #[inline]
    pub fn allows(&self, t: usize, tri: &[u32; 3], w: [f64; 3]) -> bool {
        const EPS: f64 = 1e-9;
        let zero = w.map(|x| x <= EPS);
        match zero.iter().filter(|z| **z).count() {
            0 => true,
            1 => {
                let k = zero.iter().position(|z| *z).expect("one zero");
                self.tri_edge_sharp[t][k]
            }
            _ => {
                let k = zero.iter().position(|z| !*z).unwrap_or(0);
                self.sharp_vertex[tri[k] as usize]
            }
        }
    }
}

/// Barycentric coordinates of `q` (a point of the triangle's plane) in triangle `abc`.
#[inline]
pub(crate) fn barycentric(
    q: &Vector3<f64>,
    a: &Vector3<f64>,
    b: &Vector3<f64>,
    c: &Vector3<f64>,
) -> [f64; 3] {
    let (v0, v1, v2) = (b - a, c - a, q - a);
    let (d00, d01, d11) = (v0.dot(&v0), v0.dot(&v1), v1.dot(&v1));
    let (d20, d21) = (v2.dot(&v0), v2.dot(&v1));
    let den = d00 * d11 - d01 * d01;
    if den.abs() < 1e-300 {
        return [1.0, 0.0, 0.0];
    }
    let v = (d11 * d20 - d01 * d21) / den;
    let w = (d00 * d21 - d01 * d20) / den;
    [1.0 - v - w, v, w]
}

/// The moving part: its mesh (with the engine's hierarchy), its centre (where the dragger
/// force acts and about which it turns) and its features for contact points.
#[derive(Clone, Debug)]
pub struct Workpiece {
    /// Object name in the scene.
    pub name: String,
    /// Mesh and hierarchy, body frame.
    pub model: Arc<Model>,
    /// Centre in the body frame: the centre of the mesh's axis-aligned box.
    pub centre: Point3<f64>,
    /// Largest distance of a vertex from the centre (m): bounds how far any point moves
    /// when the workpiece turns.
    pub radius: f64,
    pub(crate) features: Features,
}

impl Workpiece {
    /// A workpiece from a mesh model.
    pub fn new(name: impl Into<String>, model: Arc<Model>) -> Workpiece {
        let (lo, hi) = model.aabb();
        let centre = Point3::from((lo.coords + hi.coords) * 0.5);
        let radius = model
            .vertices()
            .iter()
            .map(|v| (v - centre).norm())
            .fold(0.0, f64::max);
        let features = Features::of(model.vertices(), model.triangles());
        Workpiece {
            name: name.into(),
            model,
            centre,
            radius,
            features,
        }
    }

    /// Its vertices (body frame).
    pub fn vertices(&self) -> &[Point3<f64>] {
        self.model.vertices()
    }
}

/// A fixed object, with its features in the world frame (precomputed once) for contact
/// points.
#[derive(Clone, Debug)]
pub struct Obstacle {
    /// Object name in the scene.
    pub name: String,
    /// Mesh and hierarchy, body frame.
    pub model: Arc<Model>,
    /// Pose in the world.
    pub pose: Pose,
    pub(crate) vertices: Vec<Vector3<f64>>,
    pub(crate) triangles: Vec<[Vector3<f64>; 3]>,
    pub(crate) triangle_boxes: Vec<Aabb>,
    pub(crate) edges: Vec<[Vector3<f64>; 2]>,
    pub(crate) edge_boxes: Vec<Aabb>,
    pub(crate) features: Features,
    /// Box of the whole object, world frame.
    pub aabb: Aabb,
}

impl Obstacle {
    /// An obstacle from a mesh model at a pose.
    pub fn new(name: impl Into<String>, model: Arc<Model>, pose: Pose) -> Obstacle {
        let vertices: Vec<Vector3<f64>> =
            model.vertices().iter().map(|v| (pose * v).coords).collect();
        let triangles: Vec<[Vector3<f64>; 3]> = model
            .triangles()
            .iter()
            .map(|t| t.map(|k| vertices[k as usize]))
            .collect();
        let triangle_boxes = triangles
            .iter()
            .map(|t| Aabb::of(t.iter().copied()))
            .collect();
        let features = Features::of(model.vertices(), model.triangles());
        let edges: Vec<[Vector3<f64>; 2]> = features
            .edges
            .iter()
            .map(|e| e.map(|k| vertices[k as usize]))
            .collect();
        let edge_boxes = edges.iter().map(|e| Aabb::of(e.iter().copied())).collect();
        let aabb = Aabb::of(vertices.iter().copied());
        Obstacle {
            name: name.into(),
            model,
            pose,
            vertices,
            triangles,
            triangle_boxes,
            edges,
            edge_boxes,
            features,
            aabb,
        }
    }

    /// The object's outline in the x-y plane: its box (for plots).
    pub fn footprint(&self) -> Vec<(f64, f64)> {
        let (lo, hi) = (self.aabb.lo, self.aabb.hi);
        vec![
            (lo.x, lo.y),
            (hi.x, lo.y),
            (hi.x, hi.y),
            (lo.x, hi.y),
            (lo.x, lo.y),
        ]
    }
}

/// The workpiece and the obstacles.
#[derive(Clone, Debug)]
pub struct Environment {
    /// The moving part.
    pub workpiece: Workpiece,
    /// The fixed objects.
    pub obstacles: Vec<Obstacle>,
}

impl Environment {
    /// An environment from parts.
    pub fn new(workpiece: Workpiece, obstacles: Vec<Obstacle>) -> Environment {
        Environment {
            workpiece,
            obstacles,
        }
    }

    /// Takes the workpiece and the obstacles by name from a loaded scene; with no obstacle
    /// names, every simple object but the workpiece is an obstacle (robots are not: the
    /// simulator moves the workpiece, not the arm). Returns the environment and the
    /// workpiece's pose in the scene (its start pose).
    ///
    /// Errors: unknown names (listing the scene's objects), a robot named as workpiece or
    /// obstacle, the workpiece named as an obstacle, a name given twice.
    pub fn from_scene(
        scene: &LoadedScene,
        workpiece: &str,
        obstacles: &[String],
    ) -> Result<(Environment, Pose), PathShrinkError> {
        let objects = scene.scenario.objects();
        let known = || {
            objects
                .iter()
                .map(|o| o.name().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let find = |name: &str| -> Result<&rpq_scene::SimpleObject, PathShrinkError> {
            match objects.iter().find(|o| o.name() == name) {
                Some(Object::Simple(s)) => Ok(s),
                Some(Object::Complex(_)) => Err(PathShrinkError::Scene(format!(
                    "`{name}` is a robot, not a mesh object"
                ))),
                None => Err(PathShrinkError::UnknownObject {
                    name: name.to_string(),
                    known: known(),
                }),
            }
        };
        let wp = find(workpiece)?;
        let mut obs = Vec::new();
        if obstacles.is_empty() {
            for o in objects {
                if let Object::Simple(s) = o {
                    if s.name != workpiece {
                        obs.push(Obstacle::new(&s.name, s.body.model.clone(), s.pose));
                    }
                }
            }
        } else {
            for (k, name) in obstacles.iter().enumerate() {
                if name == workpiece {
                    return Err(PathShrinkError::Scene(format!(
                        "`{name}` is the workpiece and cannot be an obstacle too"
                    )));
                }
                if obstacles[..k].contains(name) {
                    return Err(PathShrinkError::Scene(format!(
                        "obstacle `{name}` is named twice"
                    )));
                }
                let s = find(name)?;
                obs.push(Obstacle::new(&s.name, s.body.model.clone(), s.pose));
            }
        }
        Ok((
            Environment::new(Workpiece::new(&wp.name, wp.body.model.clone()), obs),
            wp.pose,
        ))
    }

    /// Index of the obstacle called `name`.
    pub fn obstacle_index(&self, name: &str) -> Result<usize, PathShrinkError> {
        self.obstacles
            .iter()
            .position(|o| o.name == name)
            .ok_or_else(|| PathShrinkError::UnknownObject {
                name: name.to_string(),
                known: self
                    .obstacles
                    .iter()
                    .map(|o| o.name.clone())
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }

    /// Engine distance from the workpiece at `pose` to obstacle `i`; `None` when it is at
    /// least `upper_bound`. Witness points in the world frame (`point_a` on the workpiece).
    #[inline]
    pub fn distance(
        &self,
        pose: &Pose,
        i: usize,
        upper_bound: f64,
        ws: &mut QueryWorkspace,
    ) -> Option<DistanceResult> {
        let o = &self.obstacles[i];
        distance(
            pose,
            &self.workpiece.model,
            &o.pose,
            &o.model,
            &DistanceRequest::with_upper_bound(upper_bound),
            ws,
        )
    }

    /// Smallest distance from the workpiece at `pose` to any obstacle, with the obstacle's
    /// index (`None` without obstacles).
    pub fn clearance(&self, pose: &Pose, ws: &mut QueryWorkspace) -> Option<(f64, usize)> {
        let mut best: Option<(f64, usize)> = None;
        for i in 0..self.obstacles.len() {
            let bound = best.map_or(f64::INFINITY, |b| b.0);
            if let Some(d) = self.distance(pose, i, bound, ws) {
                best = Some((d.distance, i));
            }
        }
        best
    }

    /// The obstacles closer than `within` to the workpiece at `pose`, in index order.
    pub fn touching(&self, pose: &Pose, within: f64, ws: &mut QueryWorkspace) -> Vec<usize> {
        (0..self.obstacles.len())
            .filter(|&i| self.distance(pose, i, within, ws).is_some())
            .collect()
    }
}

/// A mesh model from a triangle soup (identical corners become one vertex), e.g. from
/// [`crate::puzzle::box_triangles`].
pub fn model_from_triangles(triangles: &[[[f64; 3]; 3]]) -> Result<Arc<Model>, PathShrinkError> {
    let mut index: std::collections::HashMap<[u64; 3], u32> = std::collections::HashMap::new();
    let mut vertices = Vec::new();
    let mut tris = Vec::with_capacity(triangles.len());
    for t in triangles {
        let mut ids = [0u32; 3];
        for (k, p) in t.iter().enumerate() {
            let key = p.map(|x| (x + 0.0).to_bits());
            ids[k] = *index.entry(key).or_insert_with(|| {
                vertices.push(Point3::from(*p));
                (vertices.len() - 1) as u32
            });
        }
        tris.push(ids);
    }
    Model::new(vertices, tris)
        .map(Arc::new)
        .map_err(|e| PathShrinkError::Scene(format!("mesh: {e}")))
}

/// The winding number of closed triangles around `p` (1 inside, 0 outside for a closed,
/// outward-wound mesh), from the sum of the triangles' solid angles (Van Oosterom and
/// Strackee). Used to refuse a workpiece placed entirely inside an obstacle, which touches
/// no surface and so has a positive engine distance.
pub fn winding_number<'a>(
    p: &Vector3<f64>,
    triangles: impl IntoIterator<Item = &'a [Vector3<f64>; 3]>,
) -> f64 {
    let mut total = 0.0;
    for t in triangles {
        let (a, b, c) = (t[0] - p, t[1] - p, t[2] - p);
        let (la, lb, lc) = (a.norm(), b.norm(), c.norm());
        let num = a.dot(&b.cross(&c));
        let den = la * lb * lc + a.dot(&b) * lc + b.dot(&c) * la + c.dot(&a) * lb;
        total += 2.0 * num.atan2(den);
    }
    total / (4.0 * std::f64::consts::PI)
}

impl Obstacle {
    /// Is `p` (world frame) inside the obstacle's closed mesh?
    pub fn contains(&self, p: &Vector3<f64>) -> bool {
        winding_number(p, &self.triangles).abs() > 0.5
    }
}
