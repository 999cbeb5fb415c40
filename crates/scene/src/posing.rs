//! Posing a robot for a configuration: the world frame of every link, in rotation-matrix and
//! quaternion form at once, and the world boxes of its bodies.
//!
//! What the scenario does per configuration, so it is kept cheap: one `sin_cos` of the half
//! angle per revolute joint (the full angle's sine and cosine follow from it), joints about a
//! coordinate axis rotate two matrix columns instead of multiplying matrices, origins without
//! rotation skip their product, and a body box aligned with its link frame takes the link's
//! rotation as its axes.

use nalgebra::{Isometry3, Matrix3, Quaternion, Rotation3, Translation3, UnitQuaternion, Vector3};
use rpq_kinematics::JointKind;
use rpq_proximity::Obb;

type V = Vector3<f64>;

/// How a link moves relative to its parent's frame after the joint origin.
#[derive(Clone, Copy, Debug)]
enum Motion {
    Fixed,
    /// About coordinate axis `axis` (0, 1, 2) of the child frame, positive (`sign` 1) or
    /// negative (-1).
    Aligned {
        axis: u8,
        sign: f64,
        dof: usize,
    },
    /// About `axis` (unit, child frame).
    Revolute {
        axis: V,
        dof: usize,
    },
    /// Along `axis` (unit, child frame).
    Prismatic {
        axis: V,
        dof: usize,
    },
}

/// One link of a [`PosePlan`]: its parent and the fixed origin of its joint.
#[derive(Clone, Copy, Debug)]
struct PlanLink {
    /// Parent link (always before it); `None` for the root.
    parent: Option<usize>,
    origin_r: Matrix3<f64>,
    origin_q: UnitQuaternion<f64>,
    origin_t: V,
    /// The origin has no rotation (skip its products).
    origin_plain: bool,
    motion: Motion,
}

/// The forward kinematics of a robot prepared for fast posing (built once per robot).
#[derive(Clone, Debug)]
pub(crate) struct PosePlan {
    links: Vec<PlanLink>,
}

/// The world frame of a link, in rotation-matrix and quaternion form.
#[derive(Clone, Copy, Debug)]
struct Frame {
    r: Matrix3<f64>,
    q: UnitQuaternion<f64>,
    t: V,
}

impl Frame {
    const IDENTITY: Frame = Frame {
        r: Matrix3::new(1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0),
        q: UnitQuaternion::new_unchecked(Quaternion::new(1.0, 0.0, 0.0, 0.0)),
        t: V::new(0.0, 0.0, 0.0),
    };
}

/// World frames of every link of a robot (reused between configurations).
#[derive(Clone, Debug, Default)]
pub(crate) struct LinkFrames {
    f: Vec<Frame>,
}

/// A body's box in its link frame, prepared for posing.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LocalBox {
    obb: Obb,
    /// The box axes are the link frame's.
    aligned: bool,
}

impl LocalBox {
    pub fn new(obb: Obb) -> LocalBox {
        LocalBox {
            aligned: obb.axes == Rotation3::identity(),
            obb,
        }
    }
}

impl PosePlan {
    /// The plan of `kin` (links in topological order, as `rpq_kinematics` stores them).
    pub fn new(kin: &rpq_kinematics::Robot) -> PosePlan {
        let links = kin
            .links()
            .iter()
            .map(|link| {
                let Some(j) = link.parent_joint.map(|j| &kin.joints()[j]) else {
                    return PlanLink {
                        parent: None,
                        origin_r: Matrix3::identity(),
                        origin_q: UnitQuaternion::identity(),
                        origin_t: V::zeros(),
                        origin_plain: true,
                        motion: Motion::Fixed,
                    };
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
                            None => Motion::Revolute { axis, dof },
                        }
                    }
                    (JointKind::Prismatic, Some(dof)) => Motion::Prismatic { axis, dof },
                    _ => Motion::Fixed,
                };
                PlanLink {
                    parent: link.parent_link,
                    origin_r: j.origin.rotation.to_rotation_matrix().into_inner(),
                    origin_q: j.origin.rotation,
                    origin_t: j.origin.translation.vector,
                    origin_plain: j.origin.rotation == UnitQuaternion::identity(),
                    motion,
                }
            })
            .collect();
        PosePlan { links }
    }

    /// World frames of every link for joint vector `q` (finite, right length: checked by the
    /// caller) and base pose `base`.
    pub fn pose(&self, base: &Isometry3<f64>, q: &[f64], out: &mut LinkFrames) {
        let n = self.links.len();
        if out.f.len() != n {
            out.f.resize(n, Frame::IDENTITY);
        }
        let frames = &mut out.f[..n];
        for (k, l) in self.links.iter().enumerate() {
            let Some(p) = l.parent else {
                frames[k] = Frame {
                    r: base.rotation.to_rotation_matrix().into_inner(),
                    q: base.rotation,
                    t: base.translation.vector,
                };
                continue;
            };
            let pf = &frames[p];
            let mut f = if l.origin_plain {
                Frame {
                    r: pf.r,
                    q: pf.q,
                    t: pf.t + pf.r * l.origin_t,
                }
            } else {
                Frame {
                    r: pf.r * l.origin_r,
                    q: pf.q * l.origin_q,
                    t: pf.t + pf.r * l.origin_t,
                }
            };
            match l.motion {
                Motion::Fixed => {}
                Motion::Aligned { axis, sign, dof } => {
                    let (sh, ch) = sin_cos(0.5 * q[dof]);
                    let sh = sign * sh;
                    // full angle from the half angle
                    let (s, c) = (2.0 * sh * ch, ch * ch - sh * sh);
                    match axis {
                        0 => {
                            f.q = rotate_quaternion::<0>(&f.q, sh, ch);
                            rotate_columns::<1, 2>(&mut f.r, s, c);
                        }
                        1 => {
                            f.q = rotate_quaternion::<1>(&f.q, sh, ch);
                            rotate_columns::<2, 0>(&mut f.r, s, c);
                        }
                        _ => {
                            f.q = rotate_quaternion::<2>(&f.q, sh, ch);
                            rotate_columns::<0, 1>(&mut f.r, s, c);
                        }
                    }
                }
                Motion::Revolute { axis, dof } => {
                    let (sh, ch) = sin_cos(0.5 * q[dof]);
                    let (s, c) = (2.0 * sh * ch, ch * ch - sh * sh);
                    let h = Quaternion::new(ch, axis.x * sh, axis.y * sh, axis.z * sh);
                    f.q = UnitQuaternion::new_unchecked(f.q.into_inner() * h);
                    f.r *= rodrigues(&axis, s, c);
                }
                Motion::Prismatic { axis, dof } => f.t += f.r * (axis * q[dof]),
            }
            frames[k] = f;
        }
    }
}

/// `q ← q (cos(θ/2) + sin(θ/2) e_i)`: the product with a rotation about coordinate axis
/// `i`, with `sh`, `ch` the sine and cosine of the half angle.
#[inline(always)]
fn rotate_quaternion<const I: usize>(
    q: &UnitQuaternion<f64>,
    sh: f64,
    ch: f64,
) -> UnitQuaternion<f64> {
    let (w, x, y, z) = (q.w, q.i, q.j, q.k);
    let (w2, x2, y2, z2) = match I {
        0 => (
            w * ch - x * sh,
            x * ch + w * sh,
            y * ch + z * sh,
            z * ch - y * sh,
        ),
        1 => (
            w * ch - y * sh,
            x * ch - z * sh,
            y * ch + w * sh,
            z * ch + x * sh,
        ),
        _ => (
            w * ch - z * sh,
            x * ch + y * sh,
            y * ch - x * sh,
            z * ch + w * sh,
        ),
    };
    UnitQuaternion::new_unchecked(Quaternion::new(w2, x2, y2, z2))
}

/// `r ← r R_i(θ)` for the rotation about coordinate axis `i` with sine `s`, cosine `c`: two
/// columns change, `A` and `B` (`(1, 2)`, `(2, 0)`, `(0, 1)` for `i` = 0, 1, 2).
#[inline(always)]
fn rotate_columns<const A: usize, const B: usize>(r: &mut Matrix3<f64>, s: f64, c: f64) {
    for row in 0..3 {
        let (x, y) = (r[(row, A)], r[(row, B)]);
        r[(row, A)] = x * c + y * s;
        r[(row, B)] = y * c - x * s;
    }
}

impl LinkFrames {
    /// The pose of link `k`.
    #[inline]
    pub fn isometry(&self, k: usize) -> Isometry3<f64> {
        let f = &self.f[k];
        Isometry3::from_parts(Translation3::from(f.t), f.q)
    }

    /// The world box of a body on link `k` into `obb`, and the half extents of the
    /// world-aligned box around it into `ext`.
    #[inline]
    pub fn place(&self, k: usize, local: &LocalBox, obb: &mut Obb, ext: &mut V) {
        let f = &self.f[k];
        let r = &f.r;
        let axes = if local.aligned {
            *r
        } else {
            r * local.obb.axes.matrix()
        };
        let h = &local.obb.half_extents;
        obb.center = (r * local.obb.center.coords + f.t).into();
        obb.half_extents = *h;
        for i in 0..3 {
            ext[i] =
                axes[(i, 0)].abs() * h[0] + axes[(i, 1)].abs() * h[1] + axes[(i, 2)].abs() * h[2];
        }
        obb.axes = Rotation3::from_matrix_unchecked(axes);
    }
}

/// `(sin x, cos x)` within about an ulp of the standard library's, several times cheaper:
/// Cody–Waite reduction by π/2 (three-part constant, exact products for |x| < 1e5) and the
/// fdlibm kernel polynomials on [-π/4, π/4]. Larger or non-finite `x` go to `f64::sin_cos`.
#[inline]
pub(crate) fn sin_cos(x: f64) -> (f64, f64) {
    // (NaN fails the comparison and goes to the standard library too)
    if x.abs().partial_cmp(&1e5) != Some(std::cmp::Ordering::Less) {
        return x.sin_cos();
    }
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

/// Rotation by the angle with sine `s` and cosine `c` about the unit `axis`.
fn rodrigues(axis: &V, s: f64, c: f64) -> Matrix3<f64> {
    let (x, y, z) = (axis.x, axis.y, axis.z);
    let v = 1.0 - c;
    Matrix3::new(
        c + x * x * v,
        x * y * v - z * s,
        x * z * v + y * s,
        y * x * v + z * s,
        c + y * y * v,
        y * z * v - x * s,
        z * x * v - y * s,
        z * y * v + x * s,
        c + z * z * v,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::Vector3;
    use rpq_kinematics::{JointLimits, JointSpec, LinkSpec};

    #[test]
    fn sin_cos_matches_the_standard_library() {
        let mut worst: f64 = 0.0;
        for i in -200_000..=200_000 {
            let x = i as f64 * 1.234_567e-4 + 0.3 * (i % 7) as f64;
            let (s, c) = sin_cos(x);
            let (s0, c0) = x.sin_cos();
            worst = worst.max((s - s0).abs()).max((c - c0).abs());
        }
        assert!(worst <= 4.5e-16, "worst {worst:e}");
        for x in [
            0.0,
            -0.0,
            1e-300,
            99_999.0,
            1e5,
            1e6,
            f64::NAN,
            f64::INFINITY,
        ] {
            let (s, c) = sin_cos(x);
            let (s0, c0) = x.sin_cos();
            assert!(
                s == s0 || (s - s0).abs() < 1e-9 || (s.is_nan() && s0.is_nan()),
                "{x}"
            );
            assert!(
                c == c0 || (c - c0).abs() < 1e-9 || (c.is_nan() && c0.is_nan()),
                "{x}"
            );
        }
    }

    /// The plan's link frames equal `rpq_kinematics`' forward kinematics (composed with the
    /// base) for joints about coordinate axes, a skew axis, a rotated origin and a slider.
    #[test]
    fn plan_matches_forward_kinematics() {
        let lim = JointLimits {
            lower: -3.0,
            upper: 3.0,
            velocity: 1.0,
            effort: 1.0,
        };
        let j = |name: &str, kind, parent: &str, child: &str, origin, axis| JointSpec {
            name: name.into(),
            kind,
            parent: parent.into(),
            child: child.into(),
            origin,
            axis,
            limits: lim,
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
            plan.pose(&base, &q, &mut frames);
            let fk = kin.forward_kinematics(&q).unwrap();
            for (k, want) in fk.iter().enumerate() {
                let want = base * want;
                let got = frames.isometry(k);
                assert!((got.translation.vector - want.translation.vector).norm() < 1e-14);
                assert!(got.rotation.angle_to(&want.rotation) < 1e-14);
                let r = want.rotation.to_rotation_matrix().into_inner();
                assert!((frames.f[k].r - r).norm() < 1e-14, "link {k}");
            }
        }
    }
}
