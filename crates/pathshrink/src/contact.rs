//! Contact points and normals between the workpiece and one obstacle (§4.1: "a suitable
//! finite set of contact points p_i and normals n_i modeling all the contacts").
//!
//! A face–face or edge–face contact is modelled by point contacts at the features that are
//! closer than the contact distance ε_c: every workpiece vertex near an obstacle triangle,
//! every obstacle vertex near a workpiece triangle, and every pair of near edges (closest
//! points of the two segments), plus the engine's own closest pair. Only *sharp* features
//! count (edges between non-coplanar triangles and their vertices, see
//! `environment::Features`): the diagonal of a flat face is no contact feature, and a closest
//! point on such an edge is covered by the neighbouring triangle with the face normal. The distances come from
//! `rpq_proximity`'s triangle primitives (`closest_point_on_triangle`, `segment_segment`) and
//! its hierarchical distance query; boxes cull the features far from the workpiece. The
//! normal of a contact points from the obstacle to the workpiece along the line of the two
//! closest points, which is well defined because the barrier keeps the workpiece at a
//! positive distance. Contacts closer than 0.1 mm to one another with the same normal are
//! merged.

use nalgebra::Vector3;
use rpq_proximity::triangle::{closest_point_on_triangle, segment_segment};
use rpq_proximity::DistanceResult;

use crate::environment::{barycentric, Aabb, Environment};
use crate::geometry::Pose;

type V = Vector3<f64>;

/// One point contact.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Contact {
    /// Index of the obstacle.
    pub obstacle: usize,
    /// Contact point, world frame (midway between the two closest points).
    pub point: V,
    /// Unit normal, world frame, from the obstacle towards the workpiece.
    pub normal: V,
    /// Distance between the two features (m).
    pub distance: f64,
}

/// Contacts closer than this to each other (m) and with normals within [`MERGE_COS`] are
/// one contact.
pub const MERGE_DISTANCE: f64 = 1e-4;
/// Cosine of the largest angle between the normals of merged contacts.
pub const MERGE_COS: f64 = 0.9999;
/// Feature pairs closer than this (m) have no usable direction; the engine's witness
/// direction is used instead.
const MIN_DIRECTION: f64 = 1e-12;

/// Reusable buffers of contact generation.
#[derive(Clone, Debug, Default)]
pub struct ContactScratch {
    vertices: Vec<V>,
    triangles: Vec<[V; 3]>,
}

impl ContactScratch {
    /// Puts the workpiece's vertices and triangles at `pose` (world frame).
    fn place(&mut self, env: &Environment, pose: &Pose) -> Aabb {
        let wp = &env.workpiece;
        self.vertices.clear();
        self.vertices
            .extend(wp.vertices().iter().map(|v| (pose * v).coords));
        self.triangles.clear();
        for t in wp.model.triangles() {
            self.triangles.push(t.map(|k| self.vertices[k as usize]));
        }
        Aabb::of(self.vertices.iter().copied())
    }
}

fn push_merged(out: &mut Vec<Contact>, start: usize, c: Contact) {
    for o in &out[start..] {
        if (o.point - c.point).norm_squared() < MERGE_DISTANCE * MERGE_DISTANCE
            && o.normal.dot(&c.normal) > MERGE_COS
        {
            return;
        }
    }
    out.push(c);
}

/// Appends the contacts between the workpiece at `pose` and obstacle `i` whose features are
/// closer than `within` to `out`. `witness` is the engine's closest pair (world frame, point
/// a on the workpiece); its direction also serves features that touch exactly.
pub fn obstacle_contacts(
    env: &Environment,
    pose: &Pose,
    i: usize,
    within: f64,
    witness: &DistanceResult,
    scratch: &mut ContactScratch,
    out: &mut Vec<Contact>,
) {
    let start = out.len();
    let ob = &env.obstacles[i];
    let wbox = scratch.place(env, pose);
    let wdir = witness.point_a.coords - witness.point_b.coords;
    let fallback = if wdir.norm() > MIN_DIRECTION {
        wdir.normalize()
    } else {
        V::z()
    };
    let add = |on_workpiece: V, on_obstacle: V, out: &mut Vec<Contact>| {
        let d = on_workpiece - on_obstacle;
        let dist = d.norm();
        if dist < within {
            let normal = if dist > MIN_DIRECTION {
                d / dist
            } else {
                fallback
            };
            push_merged(
                out,
                start,
                Contact {
                    obstacle: i,
                    point: (on_workpiece + on_obstacle) * 0.5,
                    normal,
                    distance: dist,
                },
            );
        }
    };
    add(witness.point_a.coords, witness.point_b.coords, out);
    // Sharp workpiece vertices against obstacle triangles.
    let wf = &env.workpiece.features;
    let wtris = env.workpiece.model.triangles();
    let otris = ob.model.triangles();
    for (vi, v) in scratch.vertices.iter().enumerate() {
        if !wf.sharp_vertex[vi] {
            continue;
        }
        let vb = Aabb { lo: *v, hi: *v };
        if !vb.near(&ob.aabb, within) {
            continue;
        }
        for (t, (tri, tb)) in ob.triangles.iter().zip(&ob.triangle_boxes).enumerate() {
            if tb.near(&vb, within) {
                let q = closest_point_on_triangle(v, &tri[0], &tri[1], &tri[2]);
                if ob
                    .features
                    .allows(t, &otris[t], barycentric(&q, &tri[0], &tri[1], &tri[2]))
                {
                    add(*v, q, out);
                }
            }
        }
    }
    // Sharp obstacle vertices against workpiece triangles.
    for (ui, u) in ob.vertices.iter().enumerate() {
        if !ob.features.sharp_vertex[ui] {
            continue;
        }
        let ub = Aabb { lo: *u, hi: *u };
        if !ub.near(&wbox, within) {
            continue;
        }
        for (t, tri) in scratch.triangles.iter().enumerate() {
            let q = closest_point_on_triangle(u, &tri[0], &tri[1], &tri[2]);
            if wf.allows(t, &wtris[t], barycentric(&q, &tri[0], &tri[1], &tri[2])) {
                add(q, *u, out);
            }
        }
    }
    // Sharp edge pairs.
    for e in &wf.edges {
        let (a, b) = (
            scratch.vertices[e[0] as usize],
            scratch.vertices[e[1] as usize],
        );
        let eb = Aabb::of([a, b]);
        if !eb.near(&ob.aabb, within) {
            continue;
        }
        for (f, fb) in ob.edges.iter().zip(&ob.edge_boxes) {
            if fb.near(&eb, within) {
                let (p, q) = segment_segment(&a, &b, &f[0], &f[1]);
                add(p, q, out);
            }
        }
    }
}
