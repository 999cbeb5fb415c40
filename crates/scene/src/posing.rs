//! Posing a robot for a configuration: the world frame of every link (rotation matrix,
//! quaternion and origin at once), the world boxes of its bodies and the world-aligned box
//! around them.
//!
//! This runs for every configuration a scenario is set to, so the work per call is cut to the
//! arithmetic the answer needs:
//! - what does not depend on the joint values is prepared once per robot: joint origins are
//!   classified (none, along one coordinate axis, any translation, general rotation and
//!   translation with its quaternion), revolute joints about a coordinate axis get their own
//!   case, body boxes keep their centre and axes as plain columns;
//! - what depends only on the base pose (the root frame, links fixed to the root and the
//!   bodies on them, their share of the robot box) is computed again only when the base or
//!   the robot changes;
//! - the sines and cosines of the half joint angles are computed two at a time with a
//!   branch-free kernel the compiler vectorizes (the full angle's sine and cosine follow from
//!   the half angle's);
//! - a joint about a coordinate axis rotates two matrix columns and permutes the quaternion
//!   instead of multiplying matrices; whole frames are never copied (a copy of a frame was a
//!   call to `memcpy`);
//! - vectors and matrix columns are plain three-element arrays: the compiler vectorizes them
//!   with fewer shuffles than four-lane (x, y, z, 0) arrays;
//! - the frame computed last stays in registers for the next link when it is that link's
//!   parent (every link of a serial arm): read back from memory, it waited on the stores just
//!   made, some of whose loads straddle two stores and cannot be forwarded (a few more
//!   instructions, 0.217-0.224 → 0.202-0.208 µs for two RX60 arms in `rpq_bench`).

use nalgebra::{
    Isometry3, Matrix3, Point3, Quaternion, Rotation3, Translation3, UnitQuaternion, Vector3,
};
use rpq_kinematics::JointKind;
use rpq_proximity::Obb;

use crate::object::Robot;

type V = Vector3<f64>;

/// A vector (x, y, z) or a matrix column.
type V3 = [f64; 3];

/// A quaternion in nalgebra's order (i, j, k, w).
type V4 = [f64; 4];

#[inline(always)]
fn v3(v: &V) -> V3 {
    [v.x, v.y, v.z]
}

#[inline(always)]
fn add<const N: usize>(a: [f64; N], b: [f64; N]) -> [f64; N] {
    std::array::from_fn(|i| a[i] + b[i])
}

#[inline(always)]
fn sub<const N: usize>(a: [f64; N], b: [f64; N]) -> [f64; N] {
    std::array::from_fn(|i| a[i] - b[i])
}

#[inline(always)]
fn scale<const N: usize>(a: [f64; N], s: f64) -> [f64; N] {
    std::array::from_fn(|i| a[i] * s)
}

/// `a + b s`.
#[inline(always)]
fn madd<const N: usize>(a: [f64; N], b: [f64; N], s: f64) -> [f64; N] {
    std::array::from_fn(|i| a[i] + b[i] * s)
}

/// Lane-wise minimum (plain comparisons, one instruction each, where `f64::min` also
/// handles NaN).
#[inline(always)]
fn min(a: V3, b: V3) -> V3 {
    std::array::from_fn(|i| if b[i] < a[i] { b[i] } else { a[i] })
}

/// Lane-wise maximum (see [`min`]).
#[inline(always)]
fn max(a: V3, b: V3) -> V3 {
    std::array::from_fn(|i| if b[i] > a[i] { b[i] } else { a[i] })
}

/// `r v` for the matrix `r` given by its columns.
#[inline(always)]
fn rot(r: &[V3; 3], v: &V3) -> V3 {
    std::array::from_fn(|i| r[0][i] * v[0] + r[1][i] * v[1] + r[2][i] * v[2])
}

/// The Hamilton product `a b` of quaternions in (i, j, k, w) order.
#[inline(always)]
fn quat_mul(a: V4, b: V4) -> V4 {
    let [ax, ay, az, aw] = a;
    let [bx, by, bz, bw] = b;
    [
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
        aw * bw - ax * bx - ay * by - az * bz,
    ]
}

/// The fixed origin of a joint (parent link frame to joint frame).
#[derive(Clone, Copy, Debug)]
enum Origin {
    Identity,
    /// A translation along coordinate axis `.0` by `.1`.
    Along(u8, f64),
    /// A translation only.
    Translation([f64; 3]),
    /// Rotation (columns, and as a quaternion) and translation.
    General {
        r: [[f64; 3]; 3],
        q: V4,
        t: [f64; 3],
    },
}

/// How a link moves relative to its joint frame.
#[derive(Clone, Copy, Debug)]
enum Motion {
    Fixed,
    /// About coordinate axis `axis` (0, 1, 2), positive (`sign` 1) or negative (-1).
    Aligned {
        axis: u8,
        sign: f64,
        dof: usize,
    },
    /// About the unit `axis`.
    Revolute {
        axis: [f64; 3],
        dof: usize,
    },
    /// Along the unit `axis`.
    Prismatic {
        axis: [f64; 3],
        dof: usize,
    },
}

/// One link of a [`PosePlan`].
#[derive(Clone, Copy, Debug)]
struct PlanLink {
    /// Parent link (always before it); `None` for the root, which sits at the base pose.
    parent: Option<usize>,
    origin: Origin,
    motion: Motion,
    /// The link is fixed to the base (the root, or fixed to a link that is): its frame and
    /// bodies change only with the base pose.
    fixed: bool,
}

/// The forward kinematics of a robot prepared for fast posing (built once per robot).
#[derive(Clone, Debug)]
pub(crate) struct PosePlan {
    links: Vec<PlanLink>,
    dof: usize,
}

/// The world frame of a link.
#[derive(Clone, Copy, Debug)]
struct Frame {
    /// The (x, y) parts of the columns of the rotation matrix, then their z parts: stored
    /// this way, the compiler pairs the columns' x and y (or the z of two columns) in vector
    /// lanes, instead of mixing one column's z with the next one's x.
    xy: [[f64; 2]; 3],
    z: [f64; 3],
    /// Origin.
    t: V3,
    /// The rotation as a unit quaternion, (i, j, k, w).
    q: V4,
}

impl Frame {
    const IDENTITY: Frame = Frame {
        xy: [[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]],
        z: [0.0, 0.0, 1.0],
        t: [0.0; 3],
        q: [0.0, 0.0, 0.0, 1.0],
    };

    fn from_isometry(p: &Isometry3<f64>) -> Frame {
        let m = p.rotation.to_rotation_matrix().into_inner();
        let q = p.rotation.coords;
        let mut f = Frame {
            t: v3(&p.translation.vector),
            q: [q.x, q.y, q.z, q.w],
            ..Frame::IDENTITY
        };
        f.set_r([
            v3(&m.column(0).into_owned()),
            v3(&m.column(1).into_owned()),
            v3(&m.column(2).into_owned()),
        ]);
        f
    }

    /// The columns of the rotation matrix.
    #[inline(always)]
    fn r(&self) -> [V3; 3] {
        std::array::from_fn(|j| [self.xy[j][0], self.xy[j][1], self.z[j]])
    }

    #[inline(always)]
    fn set_r(&mut self, r: [V3; 3]) {
        for (j, c) in r.iter().enumerate() {
            self.xy[j] = [c[0], c[1]];
            self.z[j] = c[2];
        }
    }
}

/// World frames of every link of a robot, and the scratch of the posing (reused between
/// configurations).
#[derive(Clone, Debug)]
pub(crate) struct LinkFrames {
    f: Vec<Frame>,
    /// Per two joints: sines and cosines of the half angles, then of the full angles.
    trig: Vec<[[f64; 2]; 4]>,
    /// What the links and bodies fixed to the base were computed for: the robot (address of
    /// its local boxes) and the base pose (NaN at first: never equal).
    robot: usize,
    base: Isometry3<f64>,
    /// The root frame (the base pose).
    root: Frame,
    /// Corners of the world-aligned box around the bodies fixed to the base.
    fixed_lo: V3,
    fixed_hi: V3,
}

impl Default for LinkFrames {
    fn default() -> Self {
        LinkFrames {
            f: Vec::new(),
            trig: Vec::new(),
            robot: 0,
            base: Isometry3::from_parts(
                Translation3::new(f64::NAN, f64::NAN, f64::NAN),
                UnitQuaternion::identity(),
            ),
            root: Frame::IDENTITY,
            fixed_lo: [f64::INFINITY; 3],
            fixed_hi: [f64::NEG_INFINITY; 3],
        }
    }
}

/// A body's box in its link frame, prepared for posing.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LocalBox {
    center: [f64; 3],
    /// Columns of the box axes.
    axes: [[f64; 3]; 3],
    half_extents: V,
    /// The box axes are the link frame's.
    aligned: bool,
}

impl LocalBox {
    pub fn new(obb: Obb) -> LocalBox {
        let m = obb.axes.matrix();
        let col = |j: usize| [m[(0, j)], m[(1, j)], m[(2, j)]];
        LocalBox {
            center: obb.center.coords.into(),
            axes: [col(0), col(1), col(2)],
            half_extents: obb.half_extents,
            aligned: obb.axes == Rotation3::identity(),
        }
    }
}

impl PosePlan {
    /// The plan of `kin` (links in topological order, as `rpq_kinematics` stores them).
    pub fn new(kin: &rpq_kinematics::Robot) -> PosePlan {
        let mut links: Vec<PlanLink> = Vec::with_capacity(kin.links().len());
        for link in kin.links() {
            let plan_link = {
                let Some(j) = link.parent_joint.map(|j| &kin.joints()[j]) else {
                    links.push(PlanLink {
                        parent: None,
                        origin: Origin::Identity,
                        motion: Motion::Fixed,
                        fixed: true,
                    });
                    continue;
                };
                let axis = j.axis.into_inner();
                let motion = match (j.kind, j.dof_index) {
                    (JointKind::Revolute | JointKind::Continuous, Some(dof)) => {
                        let aligned = (0..3).find_map(|i| {
                            let others = (0..3).filter(|&k| k != i).all(|k| axis[k] == 0.0);
                            (others && axis[i].abs() == 1.0).then_some((i as u8, axis[i]))
                        });
                        match aligned {
                            Some((axis, sign)) => Motion::Aligned { axis, sign, dof },
                            None => Motion::Revolute {
                                axis: axis.into(),
                                dof,
                            },
                        }
                    }
                    (JointKind::Prismatic, Some(dof)) => Motion::Prismatic {
                        axis: axis.into(),
                        dof,
                    },
                    _ => Motion::Fixed,
                };
                let t: [f64; 3] = j.origin.translation.vector.into();
                let origin = if j.origin.rotation != UnitQuaternion::identity() {
                    let m = j.origin.rotation.to_rotation_matrix().into_inner();
                    let col = |c: usize| [m[(0, c)], m[(1, c)], m[(2, c)]];
                    let q = j.origin.rotation.coords;
                    Origin::General {
                        r: [col(0), col(1), col(2)],
                        q: [q.x, q.y, q.z, q.w],
                        t,
                    }
                } else if let Some(i) = (0..3).find(|&i| (0..3).all(|k| k == i || t[k] == 0.0)) {
                    if t[i] == 0.0 {
                        Origin::Identity
                    } else {
                        Origin::Along(i as u8, t[i])
                    }
                } else {
                    Origin::Translation(t)
                };
                let fixed = matches!(motion, Motion::Fixed)
                    && link.parent_link.is_some_and(|p| links[p].fixed);
                PlanLink {
                    parent: link.parent_link,
                    origin,
                    motion,
                    fixed,
                }
            };
            links.push(plan_link);
        }
        PosePlan {
            links,
            dof: kin.dof(),
        }
    }

    /// World frames of every link for joint vector `q` (finite, right length: checked by the
    /// caller) and base pose `base`; the links fixed to the base are left as they are unless
    /// `fresh`.
    #[inline(always)]
    fn pose(&self, base: &Isometry3<f64>, q: &[f64], out: &mut LinkFrames, fresh: bool) {
        let n = self.links.len();
        if fresh {
            out.root = Frame::from_isometry(base);
            out.f.resize(n, Frame::IDENTITY);
            out.trig.resize(self.dof.div_ceil(2), [[0.0; 2]; 4]);
        }
        half_angle_trig(q, &mut out.trig);
        let trig = &out.trig[..];
        let root = &out.root;
        let frames = &mut out.f[..n];
        // The frame computed last, kept in registers: in a serial chain it is the next
        // link's parent, and reading it back from memory waits for the stores just made
        // (some loads straddle two of them, which store-to-load forwarding cannot serve).
        let mut last = usize::MAX;
        let (mut lr, mut lt, mut lq) = (root.r(), root.t, root.q);
        for (k, l) in self.links.iter().enumerate() {
            if l.fixed && !fresh {
                continue;
            }
            // (parent and child borrowed apart, the frame handled column by column: copies
            // of whole frames become calls to `memcpy`)
            let (done, rest) = frames.split_at_mut(k);
            let (mut r, mut t, mut qt) = match l.parent {
                Some(p) if p == last => (lr, lt, lq),
                None => (root.r(), root.t, root.q),
                Some(p) => (done[p].r(), done[p].t, done[p].q),
            };
            match &l.origin {
                Origin::Identity => {}
                Origin::Along(0, d) => t = madd(t, r[0], *d),
                Origin::Along(1, d) => t = madd(t, r[1], *d),
                Origin::Along(_, d) => t = madd(t, r[2], *d),
                Origin::Translation(o) => t = add(t, rot(&r, o)),
                Origin::General { r: ro, q: qo, t: o } => {
                    t = add(t, rot(&r, o));
                    r = [rot(&r, &ro[0]), rot(&r, &ro[1]), rot(&r, &ro[2])];
                    qt = quat_mul(qt, *qo);
                }
            }
            match l.motion {
                Motion::Fixed => {}
                Motion::Aligned { axis, sign, dof } => {
                    let tr = &trig[dof >> 1];
                    let lane = dof & 1;
                    let (sh, ch) = (sign * tr[0][lane], tr[1][lane]);
                    let (s, c) = (sign * tr[2][lane], tr[3][lane]);
                    // q (cos(θ/2) + sin(θ/2) e_axis) and r R_axis(θ): two columns change
                    let [x, y, z, w] = qt;
                    match axis {
                        0 => {
                            qt = madd(scale(qt, ch), [w, z, -y, -x], sh);
                            turn::<1, 2>(&mut r, s, c);
                        }
                        1 => {
                            qt = madd(scale(qt, ch), [-z, w, x, -y], sh);
                            turn::<2, 0>(&mut r, s, c);
                        }
                        _ => {
                            qt = madd(scale(qt, ch), [y, -x, w, -z], sh);
                            turn::<0, 1>(&mut r, s, c);
                        }
                    }
                }
                Motion::Revolute { axis, dof } => {
                    let tr = &trig[dof >> 1];
                    let lane = dof & 1;
                    let (sh, ch, s, c) = (tr[0][lane], tr[1][lane], tr[2][lane], tr[3][lane]);
                    qt = quat_mul(qt, [axis[0] * sh, axis[1] * sh, axis[2] * sh, ch]);
                    let m = rodrigues_columns(&axis, s, c);
                    r = [rot(&r, &m[0]), rot(&r, &m[1]), rot(&r, &m[2])];
                }
                Motion::Prismatic { axis, dof } => t = madd(t, rot(&r, &axis), q[dof]),
            }
            let f = &mut rest[0];
            f.set_r(r);
            f.t = t;
            f.q = qt;
            (last, lr, lt, lq) = (k, r, t, qt);
        }
    }
}

/// `r ← r R_i(θ)` for the rotation about coordinate axis `i` with sine `s`, cosine `c`: two
/// columns change, `A` and `B` (`(1, 2)`, `(2, 0)`, `(0, 1)` for `i` = 0, 1, 2).
#[inline(always)]
fn turn<const A: usize, const B: usize>(r: &mut [V3; 3], s: f64, c: f64) {
    let (ca, cb) = (r[A], r[B]);
    r[A] = madd(scale(ca, c), cb, s);
    r[B] = madd(scale(cb, c), ca, -s);
}

/// Sines and cosines of the half angles of `q` (and of the full angles) into `out`, two
/// joints per entry (the last entry padded with zeros).
#[inline(always)]
fn half_angle_trig(q: &[f64], out: &mut [[[f64; 2]; 4]]) {
    for (qc, o) in q.chunks(2).zip(out.iter_mut()) {
        let x = [0.5 * qc[0], 0.5 * qc.get(1).copied().unwrap_or(0.0)];
        let (sh, ch) = sin_cos2(x);
        let s = [2.0 * sh[0] * ch[0], 2.0 * sh[1] * ch[1]];
        let c = [ch[0] * ch[0] - sh[0] * sh[0], ch[1] * ch[1] - sh[1] * sh[1]];
        *o = [sh, ch, s, c];
    }
}

/// Whether the base poses `a` and `b` are equal (no early exit: one vector comparison).
#[inline(always)]
fn same_pose(a: &Isometry3<f64>, b: &Isometry3<f64>) -> bool {
    let (qa, qb) = (&a.rotation.coords, &b.rotation.coords);
    let (ta, tb) = (&a.translation.vector, &b.translation.vector);
    (qa[0] == qb[0])
        & (qa[1] == qb[1])
        & (qa[2] == qb[2])
        & (qa[3] == qb[3])
        & (ta[0] == tb[0])
        & (ta[1] == tb[1])
        & (ta[2] == tb[2])
}

/// Poses `robot` at `q` (finite, right length: checked by the caller) with `frames` as its
/// scratch: the world poses, boxes and half extents of the world-aligned boxes (`|R| h`) of
/// its bodies into `poses`, `boxes` and `extents`; returns the corners of the world-aligned
/// box around all bodies. The links and bodies fixed to the base are computed again only
/// when the base (or the robot) changed since the last call with these buffers.
#[inline]
pub(crate) fn pose_robot(
    robot: &Robot,
    q: &[f64],
    frames: &mut LinkFrames,
    poses: &mut [Isometry3<f64>],
    boxes: &mut [Obb],
    extents: &mut [V],
) -> (V, V) {
    let plan = robot.pose_plan();
    let local = robot.local_boxes();
    let base = robot.base();
    let id = local.as_ptr() as usize;
    let fresh =
        frames.robot != id || !same_pose(&frames.base, base) || frames.f.len() != plan.links.len();
    if fresh {
        frames.robot = id;
        frames.base = *base;
    }
    plan.pose(base, q, frames, fresh);
    frames.place_bodies(
        plan,
        fresh,
        robot.body_links(),
        local,
        poses,
        boxes,
        extents,
    )
}

impl LinkFrames {
    /// The world boxes, half extents of their world-aligned boxes (`|R| h`) and poses of the
    /// bodies on links `links` with boxes `local` (link frames), after [`PosePlan::pose`];
    /// bodies on links fixed to the base are left as they are unless `fresh`. Returns the
    /// corners of the world-aligned box around all of them.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn place_bodies(
        &mut self,
        plan: &PosePlan,
        fresh: bool,
        links: &[usize],
        local: &[LocalBox],
        poses: &mut [Isometry3<f64>],
        boxes: &mut [Obb],
        extents: &mut [V],
    ) -> (V, V) {
        if fresh {
            self.fixed_lo = [f64::INFINITY; 3];
            self.fixed_hi = [f64::NEG_INFINITY; 3];
        }
        let mut lo = [f64::INFINITY; 3];
        let mut hi = [f64::NEG_INFINITY; 3];
        for ((((&link, lb), pose), b), ext) in links
            .iter()
            .zip(local)
            .zip(poses.iter_mut())
            .zip(boxes.iter_mut())
            .zip(extents.iter_mut())
        {
            let f = &self.f[link];
            if !plan.links[link].fixed {
                place_body(f, lb, fresh, pose, b, ext, &mut lo, &mut hi);
            } else if fresh {
                let (l, h) = (&mut self.fixed_lo, &mut self.fixed_hi);
                place_body(f, lb, fresh, pose, b, ext, l, h);
            }
        }
        let (lo, hi) = (min(lo, self.fixed_lo), max(hi, self.fixed_hi));
        (V::from(lo), V::from(hi))
    }
}

/// Places a body with box `lb` on a link at frame `f`: its world pose, box and the half
/// extents of the world-aligned box around it (`|R| h`; the box's own half extents only when
/// `fresh`: they never change), and widens `lo`..`hi` to that world-aligned box.
///
/// Not inlined: on its own the compiler vectorizes it with far fewer shuffles and spills
/// than inside the loop over the bodies (measured: 125 instead of about 190 instructions a
/// body, the call included).
#[inline(never)]
#[allow(clippy::too_many_arguments)]
fn place_body(
    f: &Frame,
    lb: &LocalBox,
    fresh: bool,
    pose: &mut Isometry3<f64>,
    b: &mut Obb,
    ext: &mut V,
    lo: &mut V3,
    hi: &mut V3,
) {
    let r = &f.r();
    let axes = if lb.aligned {
        *r
    } else {
        [
            rot(r, &lb.axes[0]),
            rot(r, &lb.axes[1]),
            rot(r, &lb.axes[2]),
        ]
    };
    let h = &lb.half_extents;
    let c = add(f.t, rot(r, &lb.center));
    let e: V3 = std::array::from_fn(|i| {
        axes[0][i].abs() * h[0] + axes[1][i].abs() * h[1] + axes[2][i].abs() * h[2]
    });
    *lo = min(*lo, sub(c, e));
    *hi = max(*hi, add(c, e));
    *pose = Isometry3::from_parts(
        Translation3::new(f.t[0], f.t[1], f.t[2]),
        UnitQuaternion::new_unchecked(Quaternion::new(f.q[3], f.q[0], f.q[1], f.q[2])),
    );
    b.center = Point3::new(c[0], c[1], c[2]);
    b.axes = Rotation3::from_matrix_unchecked(Matrix3::new(
        axes[0][0], axes[1][0], axes[2][0], axes[0][1], axes[1][1], axes[2][1], axes[0][2],
        axes[1][2], axes[2][2],
    ));
    if fresh {
        b.half_extents = *h;
    }
    *ext = V::new(e[0], e[1], e[2]);
}

#[cfg(test)]
impl LinkFrames {
    /// The pose of link `k`.
    fn isometry(&self, k: usize) -> Isometry3<f64> {
        let f = &self.f[k];
        Isometry3::from_parts(
            Translation3::new(f.t[0], f.t[1], f.t[2]),
            UnitQuaternion::new_unchecked(Quaternion::new(f.q[3], f.q[0], f.q[1], f.q[2])),
        )
    }

    /// The rotation matrix of link `k`.
    fn matrix(&self, k: usize) -> Matrix3<f64> {
        let r = self.f[k].r();
        Matrix3::from_fn(|i, j| r[j][i])
    }
}

/// Two `(sin x, cos x)` at once ([`sin_cos`] lane by lane; branch-free, so the compiler
/// vectorizes it, unless a lane needs the standard library).
#[inline(always)]
fn sin_cos2(x: [f64; 2]) -> ([f64; 2], [f64; 2]) {
    // (`&` rather than `&&`: no early exit, one vector comparison)
    if !(in_kernel_range(x[0]) & in_kernel_range(x[1])) {
        let (a, b) = (sin_cos(x[0]), sin_cos(x[1]));
        return ([a.0, b.0], [a.1, b.1]);
    }
    let (a, b) = (sin_cos_kernel(x[0]), sin_cos_kernel(x[1]));
    ([a.0, b.0], [a.1, b.1])
}

/// Beyond this magnitude [`sin_cos`] leaves the argument to the standard library.
const SIN_COS_LIMIT: f64 = 1e5;

/// `x` is for [`sin_cos_kernel`] (false for NaN).
#[inline(always)]
fn in_kernel_range(x: f64) -> bool {
    x.abs() < SIN_COS_LIMIT
}

/// `(sin x, cos x)` within about an ulp of the standard library's, several times cheaper:
/// Cody–Waite reduction by π/2 (three-part constant, exact products for |x| < 1e5) and the
/// fdlibm kernel polynomials on [-π/4, π/4]. Larger or non-finite `x` go to `f64::sin_cos`.
#[inline]
pub(crate) fn sin_cos(x: f64) -> (f64, f64) {
    // (NaN fails the comparison and goes to the standard library too)
    if !in_kernel_range(x) {
        return x.sin_cos();
    }
    sin_cos_kernel(x)
}

/// [`sin_cos`] for |x| < [`SIN_COS_LIMIT`], without a branch.
#[inline(always)]
fn sin_cos_kernel(x: f64) -> (f64, f64) {
    const TWO_OVER_PI: f64 = std::f64::consts::FRAC_2_PI;
    const PIO2_1: f64 = 1.570_796_326_734_125_6; // first 33 bits of π/2
    const PIO2_2: f64 = 6.077_100_506_303_966e-11; // next 33 bits
    const PIO2_2T: f64 = 2.022_266_248_795_950_6e-21; // π/2 - PIO2_1 - PIO2_2
                                                      // nearest integer k of x 2/π by the 1.5 × 2^52 trick (no call to `round`, no checked
                                                      // cast): the sum's last bits hold k in two's complement (k mod 4: the quadrant)
    const ROUND: f64 = 6_755_399_441_055_744.0;
    let shifted = x * TWO_OVER_PI + ROUND;
    let quadrant = shifted.to_bits();
    let k = shifted - ROUND;
    let r = ((x - k * PIO2_1) - k * PIO2_2) - k * PIO2_2T;
    let z = r * r;
    let sin = r + r
        * z
        * (-1.666_666_666_666_663_2e-1
            + z * (8.333_333_333_322_49e-3
                + z * (-1.984_126_982_985_795e-4
                    + z * (2.755_731_370_707_007e-6
                        + z * (-2.505_076_025_340_686e-8 + z * 1.589_690_995_211_55e-10)))));
    let hz = 0.5 * z;
    let w = 1.0 - hz;
    let cos = w
        + (((1.0 - w) - hz)
            + z * z
                * (4.166_666_666_666_66e-2
                    + z * (-1.388_888_888_887_411e-3
                        + z * (2.480_158_728_947_673e-5
                            + z * (-2.755_731_435_139_066e-7
                                + z * (2.087_572_321_298_175e-9
                                    + z * -1.135_964_755_778_819_5e-11))))));
    // The quadrant without branches (it is a coin toss over configurations): odd k swaps
    // sine and cosine, then bit 1 of k (of k + 1) gives the sign of the sine (cosine).
    let k = quadrant;
    let swap = 0u64.wrapping_sub(k & 1);
    let (sb, cb) = (sin.to_bits(), cos.to_bits());
    let s = (sb & !swap) | (cb & swap);
    let c = (cb & !swap) | (sb & swap);
    (
        f64::from_bits(s ^ ((k & 2) << 62)),
        f64::from_bits(c ^ ((k.wrapping_add(1) & 2) << 62)),
    )
}

/// Columns of the rotation by the angle with sine `s` and cosine `c` about the unit `axis`.
#[inline(always)]
fn rodrigues_columns(axis: &[f64; 3], s: f64, c: f64) -> [[f64; 3]; 3] {
    let [x, y, z] = *axis;
    let v = 1.0 - c;
    [
        [c + x * x * v, y * x * v + z * s, z * x * v - y * s],
        [x * y * v - z * s, c + y * y * v, z * y * v + x * s],
        [x * z * v + y * s, y * z * v - x * s, c + z * z * v],
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::Vector3;
    use rpq_kinematics::{JointLimits, JointSpec, LinkSpec, TriMesh};
    use std::sync::Arc;

    /// Largest difference from the standard library over `xs`, for the scalar and the
    /// two-lane versions.
    fn worst_sin_cos(xs: impl Iterator<Item = f64>) -> f64 {
        let mut worst: f64 = 0.0;
        let mut prev = 0.0;
        for x in xs {
            let (s0, c0) = x.sin_cos();
            let (s, c) = sin_cos(x);
            let (s2, c2) = sin_cos2([x, prev]);
            let (p0, q0) = f64::sin_cos(prev);
            worst = worst
                .max((s - s0).abs())
                .max((c - c0).abs())
                .max((s2[0] - s0).abs())
                .max((c2[0] - c0).abs())
                .max((s2[1] - p0).abs())
                .max((c2[1] - q0).abs());
            prev = x;
        }
        worst
    }

    #[test]
    fn sin_cos_matches_the_standard_library() {
        use std::f64::consts::PI;
        // dense over [-4π, 4π] (the half angles of any joint within ±8π), with the quadrant
        // boundaries and their neighbours
        let n = 400_000;
        let dense = (0..=n).map(|i| -4.0 * PI + 8.0 * PI * i as f64 / n as f64);
        let worst = worst_sin_cos(dense);
        assert!(worst <= 2.3e-16, "worst {worst:e} on [-4π, 4π]");
        let edges = (-16..=16).flat_map(|k| {
            let x = k as f64 * PI / 4.0;
            [
                x,
                f64::from_bits(x.to_bits() + 1),
                f64::from_bits(x.to_bits() - 1),
            ]
        });
        let worst = worst_sin_cos(edges);
        assert!(worst <= 2.3e-16, "worst {worst:e} at multiples of π/4");
        // large arguments up to the hand-over to the standard library, and beyond it
        let mut rng = rpq_base::SplitMix64::new(11);
        let large = (0..200_000).map(|_| (rng.uniform() - 0.5) * 2e5);
        let worst = worst_sin_cos(large);
        assert!(worst <= 2e-12, "worst {worst:e} for |x| < 1e5");
        for x in [
            0.0,
            -0.0,
            1e-300,
            99_999.999,
            -99_999.999,
            1e5,
            -1e5,
            1e6,
            1e300,
            f64::MAX,
        ] {
            assert!(worst_sin_cos([x].into_iter()) <= 2e-12, "{x}");
        }
        for x in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            let (s, c) = sin_cos(x);
            let (s2, c2) = sin_cos2([0.3, x]);
            assert!(
                s.is_nan() && c.is_nan() && s2[1].is_nan() && c2[1].is_nan(),
                "{x}"
            );
            assert_eq!((s2[0], c2[0]), 0.3f64.sin_cos());
        }
    }

    /// The plan's link frames equal `rpq_kinematics`' forward kinematics (composed with the
    /// base) for joints about coordinate axes, a skew axis, a rotated origin and a slider.
    #[test]
    fn plan_matches_forward_kinematics() {
        let j = |name, kind, parent, child, origin, axis| {
            joint(name, kind, [parent, child], origin, axis, 3.0)
        };
        let kin = rpq_kinematics::Robot::new(
            "r",
            ["a", "b", "c", "d", "e"].map(LinkSpec::new).to_vec(),
            vec![
                j(
                    "j1",
                    JointKind::Revolute,
                    "a",
                    "b",
                    Isometry3::translation(0.0, 0.0, 0.3),
                    Vector3::z(),
                ),
                j(
                    "j2",
                    JointKind::Revolute,
                    "b",
                    "c",
                    Isometry3::new(Vector3::new(0.1, 0.2, 0.0), Vector3::new(0.3, -0.2, 0.5)),
                    Vector3::new(1.0, 2.0, -0.5),
                ),
                j(
                    "j3",
                    JointKind::Prismatic,
                    "c",
                    "d",
                    Isometry3::translation(0.0, 0.1, 0.0),
                    Vector3::x(),
                ),
                j(
                    "j4",
                    JointKind::Revolute,
                    "d",
                    "e",
                    Isometry3::identity(),
                    -Vector3::y(),
                ),
            ],
        )
        .unwrap();
        let plan = PosePlan::new(&kin);
        let base = Isometry3::new(Vector3::new(0.5, -0.1, 0.2), Vector3::new(0.0, 0.0, 1.0));
        let mut frames = LinkFrames::default();
        for q in [
            [0.0, 0.0, 0.0, 0.0],
            [0.7, -1.3, 0.25, 2.9],
            [-2.5, 0.4, -0.6, -0.01],
        ] {
            plan.pose(&base, &q, &mut frames, true);
            let fk = kin.forward_kinematics(&q).unwrap();
            for (k, want) in fk.iter().enumerate() {
                let want = base * want;
                let got = frames.isometry(k);
                assert!((got.translation.vector - want.translation.vector).norm() < 1e-14);
                assert!(got.rotation.angle_to(&want.rotation) < 1e-14);
                let r = want.rotation.to_rotation_matrix().into_inner();
                assert!((frames.matrix(k) - r).norm() < 1e-14, "link {k}");
            }
        }
    }

    /// World frames of every link by a plain nalgebra chain: parent pose, joint origin, then
    /// the joint's rotation (axis-angle) or translation.
    fn reference_fk(
        kin: &rpq_kinematics::Robot,
        base: &Isometry3<f64>,
        q: &[f64],
    ) -> Vec<Isometry3<f64>> {
        let mut out: Vec<Isometry3<f64>> = Vec::new();
        for link in kin.links() {
            let pose = match (link.parent_link, link.parent_joint) {
                (Some(p), Some(j)) => {
                    let j = &kin.joints()[j];
                    let motion = match (j.kind, j.dof_index) {
                        (JointKind::Prismatic, Some(d)) => Isometry3::from_parts(
                            (j.axis.into_inner() * q[d]).into(),
                            Default::default(),
                        ),
                        (_, Some(d)) => Isometry3::from_parts(
                            Translation3::identity(),
                            UnitQuaternion::from_axis_angle(&j.axis, q[d]),
                        ),
                        _ => Isometry3::identity(),
                    };
                    out[p] * j.origin * motion
                }
                _ => *base,
            };
            out.push(pose);
        }
        out
    }

    /// Poses `robot` through the scenario at random configurations (and at its joint limits)
    /// and checks body poses, body boxes, their world-aligned extents and the robot box
    /// against [`reference_fk`].
    fn check_against_reference(robot: &Robot, seed: u64, samples: usize) {
        let mut s = crate::Scenario::new();
        s.add_robot(robot.clone()).unwrap();
        let kin = robot.kinematics();
        let lim = kin.joint_limits();
        let mut rng = rpq_base::SplitMix64::new(seed);
        let mut configs: Vec<Vec<f64>> = vec![
            // (continuous joints: ±10 rad stands in for their infinite limits)
            lim.iter().map(|l| l.lower.max(-10.0)).collect(),
            lim.iter().map(|l| l.upper.min(10.0)).collect(),
            lim.iter().map(|_| 0.0).collect(),
        ];
        for _ in 0..samples {
            configs.push(
                lim.iter()
                    .map(|l| {
                        let (lo, hi) = (l.lower.max(-10.0), l.upper.min(10.0));
                        match rng.next_u64() % 8 {
                            0 => lo,
                            1 => hi,
                            _ => lo + (hi - lo) * rng.uniform(),
                        }
                    })
                    .collect(),
            );
        }
        let mut worst: f64 = 0.0;
        for q in &configs {
            s.set_joint_positions(0, q).unwrap();
            let links = reference_fk(kin, robot.base(), q);
            let mut lo = V::repeat(f64::INFINITY);
            let mut hi = V::repeat(f64::NEG_INFINITY);
            for (i, &link) in robot.body_links().iter().enumerate() {
                let want = links[link];
                let got = s.body_poses(0)[i];
                worst = worst
                    .max((got.translation.vector - want.translation.vector).norm())
                    .max(got.rotation.angle_to(&want.rotation))
                    .max((got.rotation.norm() - 1.0).abs());
                let want_box = robot.bodies()[i].local_box.transformed(&want);
                let got_box = s.body_boxes(0)[i];
                worst = worst
                    .max((got_box.center - want_box.center).norm())
                    .max((got_box.axes.matrix() - want_box.axes.matrix()).abs().max())
                    .max((got_box.half_extents - want_box.half_extents).abs().max());
                let ext = want_box.axes.matrix().abs() * want_box.half_extents;
                lo = lo.inf(&(want_box.center.coords - ext));
                hi = hi.sup(&(want_box.center.coords + ext));
            }
            if robot.bodies().len() > 1 {
                let whole = s.object_box(0);
                worst = worst
                    .max((whole.center.coords - (lo + hi) * 0.5).abs().max())
                    .max((whole.half_extents - (hi - lo) * 0.5).abs().max());
                assert_eq!(whole.axes, Rotation3::identity());
            }
        }
        assert!(
            worst < 1e-12,
            "`{}`: worst difference {worst:e}",
            robot.name()
        );
    }

    /// The RX60B (joints about coordinate axes, translation-only origins).
    #[test]
    fn rx60_posing_matches_reference_kinematics() {
        let base = Isometry3::new(V::new(0.4, -0.2, 0.1), V::new(0.1, -0.3, 2.0));
        let rx60 = crate::eval::rx60().unwrap().instance("arm", base);
        check_against_reference(&rx60, 1, 300);
    }

    /// The HIT/DLR hand of the repository (rotated joint origins, negative axes, a tree).
    #[test]
    fn hand_posing_matches_reference_kinematics() {
        let urdf = concat!(env!("CARGO_MANIFEST_DIR"), "/../../urdf/hit_dlr_hand.urdf");
        let base = Isometry3::new(V::new(-0.1, 0.3, 0.2), V::new(0.5, 0.2, -0.7));
        let hand = Robot::from_urdf_file("hand", urdf, base).unwrap();
        check_against_reference(&hand, 2, 200);
    }

    /// A made-up tree with skew axes, rotated and general origins, a slider, fixed links (one
    /// with a moving child) and boxes not aligned with their links.
    #[test]
    fn skew_tree_posing_matches_reference_kinematics() {
        let kin = Arc::new(skew_tree());
        let meshes: Vec<Option<TriMesh>> = (0..kin.links().len())
            .map(|k| (k != 3).then(|| slanted_solid(k)))
            .collect();
        let base = Isometry3::new(V::new(1.0, 2.0, -0.5), V::new(-0.4, 0.9, 0.3));
        let robot = Robot::new("tree", kin, &meshes, base).unwrap();
        assert!(robot.local_boxes().iter().any(|b| !b.aligned));
        check_against_reference(&robot, 3, 300);
    }

    /// The cached parts (links and bodies fixed to the base, the root frame) follow a change
    /// of robot or base on the same buffers.
    #[test]
    fn fixed_parts_follow_the_robot_and_base() {
        let proto = crate::eval::rx60().unwrap();
        let mut a = proto.instance("a", Isometry3::identity());
        let b = proto.instance("b", crate::eval::facing_base(0.7));
        let n = a.bodies().len();
        let mut frames = LinkFrames::default();
        let mut poses = vec![Isometry3::identity(); n];
        let mut boxes = vec![a.bodies()[0].local_box; n];
        let mut ext = vec![V::zeros(); n];
        let moved = Isometry3::new(V::new(0.1, 0.2, 0.3), V::new(0.0, 0.4, 0.1));
        let mut check = |robot: &Robot, q: &[f64]| {
            let (lo, hi) = pose_robot(robot, q, &mut frames, &mut poses, &mut boxes, &mut ext);
            let mut s = crate::Scenario::new();
            s.add_robot(robot.clone()).unwrap();
            s.set_joint_positions(0, q).unwrap();
            assert_eq!(poses, s.body_poses(0));
            assert_eq!(boxes, s.body_boxes(0));
            let whole = s.object_box(0);
            assert_eq!((lo + hi) * 0.5, whole.center.coords);
            assert_eq!((hi - lo) * 0.5, whole.half_extents);
        };
        let (q1, q2) = (
            [0.3, -0.2, 0.5, 0.1, 0.2, -0.3],
            [-1.0, 0.7, 0.1, 0.0, -0.5, 2.0],
        );
        // another robot, then the same robot with its base moved (same boxes in memory)
        for (robot, q) in [(&a, q1), (&a, q2), (&b, q1), (&b, q2), (&a, q1)] {
            check(robot, &q);
        }
        a.set_base(moved).unwrap();
        check(&a, &q2);
        check(&a, &q1);
    }

    /// A joint from `links[0]` to `links[1]` with limits ±`limit`.
    fn joint(
        name: &str,
        kind: JointKind,
        links: [&str; 2],
        origin: Isometry3<f64>,
        axis: V,
        limit: f64,
    ) -> JointSpec {
        JointSpec {
            name: name.into(),
            kind,
            parent: links[0].into(),
            child: links[1].into(),
            origin,
            axis,
            limits: JointLimits {
                lower: -limit,
                upper: limit,
                velocity: 1.0,
                effort: 1.0,
            },
        }
    }

    fn skew_tree() -> rpq_kinematics::Robot {
        let j = |name, kind, parent, child, origin, axis| {
            joint(name, kind, [parent, child], origin, axis, 4.0)
        };
        let general = |t: [f64; 3], r: [f64; 3]| Isometry3::new(V::from(t), V::from(r));
        rpq_kinematics::Robot::new(
            "tree",
            ["root", "a", "b", "c", "d", "e", "f", "g", "h"]
                .map(LinkSpec::new)
                .to_vec(),
            vec![
                j(
                    "ja",
                    JointKind::Revolute,
                    "root",
                    "a",
                    general([0.0, 0.0, 0.3], [0.0; 3]),
                    V::z(),
                ),
                j(
                    "jb",
                    JointKind::Revolute,
                    "a",
                    "b",
                    general([0.1, 0.2, 0.0], [0.3, -0.2, 0.5]),
                    V::new(1.0, 2.0, -0.5),
                ),
                j(
                    "jc",
                    JointKind::Fixed,
                    "b",
                    "c",
                    general([0.0, 0.1, 0.05], [0.0, 0.7, 0.0]),
                    V::x(),
                ),
                j(
                    "jd",
                    JointKind::Prismatic,
                    "c",
                    "d",
                    general([0.0, 0.1, 0.0], [0.2, 0.0, 0.0]),
                    V::new(0.3, -0.4, 1.2),
                ),
                j(
                    "je",
                    JointKind::Revolute,
                    "d",
                    "e",
                    Isometry3::identity(),
                    -V::y(),
                ),
                j(
                    "jf",
                    JointKind::Continuous,
                    "a",
                    "f",
                    general([-0.2, 0.0, 0.1], [1.2, 0.0, -0.4]),
                    -V::x(),
                ),
                j(
                    "jg",
                    JointKind::Fixed,
                    "root",
                    "g",
                    general([0.3, 0.3, 0.0], [0.0, 0.0, 0.8]),
                    V::x(),
                ),
                // (a moving link right after a link fixed to the base: its parent's frame is
                // not the one computed last once the fixed links are cached)
                j(
                    "jh",
                    JointKind::Revolute,
                    "g",
                    "h",
                    general([0.1, -0.2, 0.15], [0.4, 0.1, 0.0]),
                    V::z(),
                ),
            ],
        )
        .unwrap()
    }

    /// A closed tetrahedron turned, stretched and moved by amounts that depend on `k`, so
    /// its fitted box is off the link's axes and centre.
    fn slanted_solid(k: usize) -> TriMesh {
        let t = k as f64;
        let pose = Isometry3::new(
            V::new(0.05 * t, -0.02 * t, 0.03),
            V::new(0.3 + 0.1 * t, -0.5, 0.2 * t),
        );
        let v = [
            [0.0, 0.0, 0.0],
            [0.2 + 0.01 * t, 0.0, 0.0],
            [0.0, 0.08, 0.0],
            [0.0, 0.0, 0.05 + 0.01 * t],
        ]
        .map(|p| pose * Point3::from(p))
        .to_vec();
        TriMesh::new(v, vec![[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]]).unwrap()
    }
}
