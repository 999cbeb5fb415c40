//! The workpiece path of §5: nodes (pose and contact state) with spans of required contact,
//! its checks, and the swept collision check of a straight segment between two poses.

use nalgebra::Vector3;
use rpq_proximity::QueryWorkspace;

use crate::environment::{winding_number, Environment};
use crate::error::PathShrinkError;
use crate::geometry::{difference, interpolate, pose_is_valid, Pose};

/// One node: where the workpiece is and which obstacles it touches (closer than ε_c).
#[derive(Clone, Debug, PartialEq)]
pub struct PathNode {
    /// Workpiece pose (world frame).
    pub pose: Pose,
    /// Obstacles within the contact distance, by index (ascending).
    pub contacts: Vec<usize>,
}

/// Nodes `first..=last` must keep contact with every one of `objects` (§5.1: "required
/// contact motions"); `first` and `last` stay where they are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequiredSpan {
    /// First node (0-based).
    pub first: usize,
    /// Last node (inclusive).
    pub last: usize,
    /// Obstacle indices whose contact is required.
    pub objects: Vec<usize>,
}

/// A workpiece path.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct WorkpiecePath {
    /// The nodes in order.
    pub nodes: Vec<PathNode>,
    /// The spans of required contact (disjoint).
    pub spans: Vec<RequiredSpan>,
}

impl WorkpiecePath {
    /// A path from poses, with the contact state of each node computed (`within`: ε_c).
    pub fn from_poses(
        env: &Environment,
        poses: &[Pose],
        spans: Vec<RequiredSpan>,
        within: f64,
        ws: &mut QueryWorkspace,
    ) -> WorkpiecePath {
        WorkpiecePath {
            nodes: poses
                .iter()
                .map(|p| PathNode {
                    pose: *p,
                    contacts: env.touching(p, within, ws),
                })
                .collect(),
            spans,
        }
    }

    /// The sub-path of the nodes `keep` (increasing indices that include every fixed node),
    /// with the required spans renumbered onto it.
    ///
    /// # Panics
    /// If a span end is not in `keep`.
    pub fn subset(&self, keep: &[usize]) -> WorkpiecePath {
        let index_of = |old: usize| {
            keep.iter()
                .position(|&x| x == old)
                .expect("fixed nodes kept")
        };
        let spans = self
            .spans
            .iter()
            .map(|s| RequiredSpan {
                first: index_of(s.first),
                last: index_of(s.last),
                objects: s.objects.clone(),
            })
            .collect();
        WorkpiecePath {
            nodes: keep.iter().map(|&k| self.nodes[k].clone()).collect(),
            spans,
        }
    }

    /// The poses.
    pub fn poses(&self) -> Vec<Pose> {
        self.nodes.iter().map(|n| n.pose).collect()
    }

    /// Length of the path of the workpiece centre (m).
    pub fn length(&self, env: &Environment) -> f64 {
        let c = env.workpiece.centre;
        self.nodes
            .windows(2)
            .map(|w| ((w[1].pose * c) - (w[0].pose * c)).norm())
            .sum()
    }

    /// The nodes that do not move: both ends and both ends of every required span.
    pub fn fixed(&self) -> Vec<bool> {
        let mut f = vec![false; self.nodes.len()];
        if let Some(l) = f.last_mut() {
            *l = true;
        }
        if let Some(x) = f.first_mut() {
            *x = true;
        }
        for s in &self.spans {
            f[s.first] = true;
            f[s.last] = true;
        }
        f
    }

    /// The obstacles whose contact node `k` must keep.
    pub fn required_at(&self, k: usize) -> Vec<usize> {
        let mut out: Vec<usize> = Vec::new();
        for s in self
            .spans
            .iter()
            .filter(|s| (s.first..=s.last).contains(&k))
        {
            out.extend(&s.objects);
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Checks a path before it is modified: at least two nodes, valid poses, no node
    /// touching or inside an obstacle, no segment passing through one, spans inside the path,
    /// disjoint, naming known obstacles, and every required contact present at every node of
    /// its span (closer than `within` = ε_c). Messages name the node and the object.
    pub fn validate(
        &self,
        env: &Environment,
        within: f64,
        ws: &mut QueryWorkspace,
    ) -> Result<(), PathShrinkError> {
        let err = |m: String| Err(PathShrinkError::Path(m));
        let n = self.nodes.len();
        if n < 2 {
            return err(format!("the path has {n} node(s); at least two are needed"));
        }
        for (k, node) in self.nodes.iter().enumerate() {
            if !pose_is_valid(&node.pose) {
                return err(format!(
                    "node {k}: the pose is not finite or its quaternion is not of unit length"
                ));
            }
            if node.pose.translation.vector.amax() > 1e3 {
                return err(format!("node {k}: the position is more than 1 km away"));
            }
        }
        for (k, node) in self.nodes.iter().enumerate() {
            if let Some(i) = penetrated(env, &node.pose, ws) {
                return err(format!(
                    "node {k}: the workpiece touches or enters `{}`",
                    env.obstacles[i].name
                ));
            }
        }
        for k in 1..n {
            if let Err((i, _)) =
                swept_free(env, &self.nodes[k - 1].pose, &self.nodes[k].pose, 0.0, ws)
            {
                return err(format!(
                    "the segment from node {} to node {k} passes through `{}`",
                    k - 1,
                    env.obstacles[i].name
                ));
            }
        }
        let mut spans: Vec<&RequiredSpan> = self.spans.iter().collect();
        spans.sort_by_key(|s| s.first);
        for (j, s) in spans.iter().enumerate() {
            if s.first >= s.last || s.last >= n {
                return err(format!(
                    "required span {}..{} must satisfy first < last < {n} (the node count)",
                    s.first, s.last
                ));
            }
            if s.objects.is_empty() {
                return err(format!(
                    "required span {}..{} names no object",
                    s.first, s.last
                ));
            }
            if let Some(&bad) = s.objects.iter().find(|&&o| o >= env.obstacles.len()) {
                return err(format!(
                    "required span {}..{} names obstacle index {bad}, there are {}",
                    s.first,
                    s.last,
                    env.obstacles.len()
                ));
            }
            if j > 0 && spans[j - 1].last > s.first {
                return err(format!(
                    "required spans {}..{} and {}..{} overlap; give one span with all objects",
                    spans[j - 1].first,
                    spans[j - 1].last,
                    s.first,
                    s.last
                ));
            }
            for k in s.first..=s.last {
                for &o in &s.objects {
                    let d = env
                        .distance(&self.nodes[k].pose, o, f64::INFINITY, ws)
                        .map_or(f64::INFINITY, |r| r.distance);
                    if d >= within {
                        return err(format!(
                            "required contact with `{}` is absent at node {k}: distance {:.3} mm, \
                             contact means closer than {:.3} mm",
                            env.obstacles[o].name,
                            d * 1e3,
                            within * 1e3
                        ));
                    }
                }
            }
        }
        Ok(())
    }
}

/// The first obstacle the workpiece at `pose` touches (engine distance 0) or lies inside,
/// or that lies inside the workpiece.
pub fn penetrated(env: &Environment, pose: &Pose, ws: &mut QueryWorkspace) -> Option<usize> {
    let c = (pose * env.workpiece.centre).coords;
    let wp_tris: Vec<[Vector3<f64>; 3]> = env
        .workpiece
        .model
        .triangles()
        .iter()
        .map(|t| t.map(|k| (pose * env.workpiece.vertices()[k as usize]).coords))
        .collect();
    (0..env.obstacles.len()).find(|&i| {
        let o = &env.obstacles[i];
        env.distance(pose, i, f64::INFINITY, ws)
            .is_none_or(|r| r.distance <= 0.0)
            || o.contains(&c)
            || o.vertices
                .first()
                .is_some_and(|v| winding_number(v, &wp_tris).abs() > 0.5)
    })
}

/// Conservative advancement along the straight motion from `a` to `b`
/// ([`crate::geometry::interpolate`]): `Ok` if the workpiece stays at least `floor` from every
/// obstacle all the way (a proof, not a sampling), else the first obstacle that comes closer
/// and the fraction of the motion where it does.
pub fn swept_free(
    env: &Environment,
    a: &Pose,
    b: &Pose,
    floor: f64,
    ws: &mut QueryWorkspace,
) -> Result<(), (usize, f64)> {
    let centre = env.workpiece.centre;
    let (dp, dr) = difference(a, b, &centre);
    let mu = dp.norm() + dr.norm() * env.workpiece.radius;
    for i in 0..env.obstacles.len() {
        let mut t = 0.0_f64;
        for _ in 0..100_000 {
            let p = interpolate(a, b, &centre, t);
            let remaining = mu * (1.0 - t);
            let d = match env.distance(&p, i, remaining + floor + 1e-9, ws) {
                Some(r) => r.distance,
                None => break, // farther than the rest of the motion can bring it
            };
            if d <= floor {
                return Err((i, t));
            }
            let gap = d - floor;
            if gap < 1e-12 {
                return Err((i, t));
            }
            t += gap / mu;
            if t >= 1.0 {
                let d_end = env
                    .distance(b, i, floor + 1e-9, ws)
                    .map_or(f64::INFINITY, |r| r.distance);
                if d_end <= floor {
                    return Err((i, 1.0));
                }
                break;
            }
        }
    }
    Ok(())
}

/// A certified lower bound of the clearance along the straight motion from `a` to `b`:
/// conservative advancement proves the workpiece stays at least `f` from every obstacle,
/// with `f` half the smaller end clearance (ends farther than the motion's reach count as
/// the reach); if that fails it tries `f = 0` (no contact at all). Returns `None` when the
/// motion collides.
pub fn certified_clearance(
    env: &Environment,
    a: &Pose,
    b: &Pose,
    ws: &mut QueryWorkspace,
) -> Option<f64> {
    let centre = env.workpiece.centre;
    let (dp, dr) = difference(a, b, &centre);
    let reach = dp.norm() + dr.norm() * env.workpiece.radius + 1e-9;
    let mut end = reach;
    for p in [a, b] {
        for i in 0..env.obstacles.len() {
            if let Some(r) = env.distance(p, i, end, ws) {
                end = r.distance;
            }
        }
    }
    let f = 0.5 * end;
    if f > 0.0 && swept_free(env, a, b, f, ws).is_ok() {
        return Some(f);
    }
    swept_free(env, a, b, 0.0, ws).ok().map(|()| 0.0)
}

/// How far any point of the workpiece can be displaced between the straight motion from
/// `a` to `b` and the one from `a` to `b2`, at equal fractions (m): `|Δc| + |ΔA| r` with `ΔA`
/// the difference of the two rotation vectors from `a` (the exponential map of SO(3) does
/// not stretch distances), `r` the workpiece radius.
pub fn segment_perturbation(env: &Environment, a: &Pose, b: &Pose, b2: &Pose) -> f64 {
    let c = env.workpiece.centre;
    let (dp1, dr1) = difference(a, b, &c);
    let (dp2, dr2) = difference(a, b2, &c);
    (dp1 - dp2).norm() + (dr1 - dr2).norm() * env.workpiece.radius
}

/// The smallest engine distance to any obstacle at poses along the straight motion from `a`
/// to `b`, sampled so that no point of the workpiece moves more than `step` (m) between two
/// samples; with the obstacle index.
pub fn sampled_clearance(
    env: &Environment,
    a: &Pose,
    b: &Pose,
    step: f64,
    ws: &mut QueryWorkspace,
) -> (f64, usize) {
    let centre = env.workpiece.centre;
    let (dp, dr) = difference(a, b, &centre);
    let mu = dp.norm() + dr.norm() * env.workpiece.radius;
    let n = ((mu / step).ceil() as usize).clamp(1, 100_000);
    let mut best = (f64::INFINITY, 0);
    for k in 0..=n {
        let p = interpolate(a, b, &centre, k as f64 / n as f64);
        if let Some(c) = env.clearance(&p, ws) {
            if c.0 < best.0 {
                best = c;
            }
        }
    }
    best
}

/// Unit vector along `v`, or zero.
pub(crate) fn unit(v: &Vector3<f64>) -> Vector3<f64> {
    let n = v.norm();
    if n > 1e-300 {
        v / n
    } else {
        Vector3::zeros()
    }
}
