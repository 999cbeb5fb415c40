//! Human hand kinematic model (section III-A of Hu et al.) and the glove sensor model
//! (eqs. 3-4).
//!
//! # Frames
//! The base frame `O0` sits where the thumb and index metacarpals meet. Its `x` axis runs
//! along the index metacarpal towards the fingertips, `z` is the palm normal pointing out of
//! the palm (palmar side) and `y = z × x` points to the radial (thumb) side of the left hand.
//! All lengths are metres, all angles radians, raw glove readings are sensor counts.
//!
//! # Chains
//! Every chain is a product of Denavit-Hartenberg transforms (eq. 1-2)
//! `A = rot(z, θ) trans(z, d) trans(x, a) rot(x, α)` after a fixed base transform. For the
//! four fingers X ∈ {index, middle, ring, little} (eq. 2):
//!
//! | element | θ               | d | a                | α    |
//! |---------|-----------------|---|------------------|------|
//! | meta    | 0 (fixed)       | 0 | a1 (metacarpal)  | 0    |
//! | X0      | θ0 (abduction)  | 0 | 0                | +π/2 |
//! | X1      | θ1 (MCP flex)   | 0 | a2 (proximal)    | 0    |
//! | X2      | θ2 (PIP flex)   | 0 | a3 (middle)      | 0    |
//! | X3      | θ3 (DIP flex)   | 0 | a4 (distal, tip) | 0    |
//!
//! so `I0` and `I1` are collocated and orthogonal, `I1`, `I2`, `I3` parallel, positive
//! flexion curls the finger to the palmar side. For the thumb (eq. 1):
//!
//! | element | θ                 | d                  | a                 | α    |
//! |---------|-------------------|--------------------|-------------------|------|
//! | T0      | θT0               | 0                  | aT1 (T0-T1 offset)| +π/2 |
//! | T1      | θT1 + π/2         | 0                  | 0                 | +π/2 |
//! | Ttwist  | θTtwist           | aT2 (metacarpal)   | 0                 | +π/2 |
//! | T2      | θT2 + π/2         | 0                  | aT3 (proximal)    | 0    |
//! | T3      | θT3               | 0                  | aT4 (distal, tip) | 0    |
//!
//! with the thumb base frame at `O0` with its `z` along the index metacarpal (`x` of `O0`,
//! the T0 axis) and its `x` radial: T0 turns the thumb from the palm plane to the palmar side,
//! T1 is offset from and orthogonal to T0, the unsensed twist axis runs along the thumb
//! metacarpal, T2 and T3 are parallel.
//!
//! # Sensor model
//! `θ = g σ + β` per joint (eq. 3); for the thumb the T0 and T1 sensors are cross-coupled and
//! also drive the unsensed twist (eq. 4):
//! `[θT0, θT1, θTtwist]ᵀ = [[gT0, gT0_σ1], [gT1_σ0, gT1], [gTtwist_σ0, gTtwist_σ1]] [σ0, σ1]ᵀ + β`.
//!
//! # Calibrated parameters
//! The paper's `P_I` (12 per finger) and `P_T` (17 for the thumb), in this order (see
//! [`param_names`]): offsets β, lengths a1..a4, gains g0..g3 and, for the thumb, the four
//! cross gains.

use nalgebra::{Matrix3, Rotation3, Vector3};
use serde::{Deserialize, Serialize};

use crate::error::HandError;

/// The five fingers of the human hand, in the order used everywhere in this crate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Finger {
    /// Thumb (T0, T1, Ttwist, T2, T3).
    Thumb,
    /// Index finger (I0..I3).
    Index,
    /// Middle finger (M0..M3).
    Middle,
    /// Ring finger (R0..R3).
    Ring,
    /// Little finger (L0..L3).
    Little,
}

impl Finger {
    /// All fingers, thumb first.
    pub const ALL: [Finger; 5] = [
        Finger::Thumb,
        Finger::Index,
        Finger::Middle,
        Finger::Ring,
        Finger::Little,
    ];

    /// Lower-case name as used in CSV and YAML files.
    pub fn name(self) -> &'static str {
        match self {
            Finger::Thumb => "thumb",
            Finger::Index => "index",
            Finger::Middle => "middle",
            Finger::Ring => "ring",
            Finger::Little => "little",
        }
    }

    /// Position in [`Finger::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// Number of kinematic joints of the chain (5 for the thumb incl. the unsensed twist).
    pub fn chain_joints(self) -> usize {
        if self == Finger::Thumb {
            5
        } else {
            4
        }
    }

    /// Number of calibrated parameters (17 thumb, 12 fingers).
    pub fn param_count(self) -> usize {
        if self == Finger::Thumb {
            17
        } else {
            12
        }
    }

    /// Human joint names of the chain, e.g. `index_0` … `index_3`, `thumb_twist`.
    pub fn joint_names(self) -> Vec<String> {
        if self == Finger::Thumb {
            ["thumb_0", "thumb_1", "thumb_twist", "thumb_2", "thumb_3"]
                .iter()
                .map(|s| s.to_string())
                .collect()
        } else {
            (0..4).map(|k| format!("{}_{k}", self.name())).collect()
        }
    }
}

impl std::str::FromStr for Finger {
    type Err = HandError;
    fn from_str(s: &str) -> Result<Self, HandError> {
        Finger::ALL
            .iter()
            .copied()
            .find(|f| f.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| HandError::UnknownFinger(s.to_string()))
    }
}

/// Names of the calibrated parameters of `finger`, in parameter-vector order.
pub fn param_names(finger: Finger) -> Vec<String> {
    if finger == Finger::Thumb {
        [
            "beta_T0",
            "beta_T1",
            "beta_Ttwist",
            "beta_T2",
            "beta_T3",
            "a_T1",
            "a_T2",
            "a_T3",
            "a_T4",
            "g_T0",
            "g_T1",
            "g_T2",
            "g_T3",
            "g_T0_s1",
            "g_T1_s0",
            "g_Ttwist_s0",
            "g_Ttwist_s1",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    } else {
        let c = match finger {
            Finger::Index => 'I',
            Finger::Middle => 'M',
            Finger::Ring => 'R',
            _ => 'L',
        };
        let mut v: Vec<String> = (0..4).map(|k| format!("beta_{c}{k}")).collect();
        v.extend((1..=4).map(|k| format!("a_{c}{k}")));
        v.extend((0..4).map(|k| format!("g_{c}{k}")));
        v
    }
}

/// Thumb sensor cross-coupling gains of eq. (4), rad/count.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, Default)]
pub struct ThumbCoupling {
    /// `g_T0^σ1`: effect of the T1 sensor on θT0.
    pub t0_s1: f64,
    /// `g_T1^σ0`: effect of the T0 sensor on θT1.
    pub t1_s0: f64,
    /// `g_Ttwist^σ0`: twist per count of the T0 sensor.
    pub twist_s0: f64,
    /// `g_Ttwist^σ1`: twist per count of the T1 sensor.
    pub twist_s1: f64,
}

/// Model and sensor parameters of one finger.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FingerParams {
    /// Chain base position in `O0` (m). Index: the index metacarpal base (`O0` itself).
    pub base_xyz: [f64; 3],
    /// Chain base orientation in `O0` as roll, pitch, yaw (rad, `Rz(y) Ry(p) Rx(r)`).
    pub base_rpy: [f64; 3],
    /// Joint offsets β (rad): 4 for fingers (X0..X3), 5 for the thumb (T0, T1, Ttwist, T2, T3).
    pub offsets: Vec<f64>,
    /// Lengths a1..a4 (m): fingers metacarpal, proximal, middle, distal-to-marker; thumb
    /// T0-T1 offset, metacarpal, proximal, distal-to-marker.
    pub lengths: [f64; 4],
    /// Sensor gains g0..g3 (rad/count), one per glove sensor of the finger.
    pub gains: [f64; 4],
    /// Thumb only: the cross-coupling gains of eq. (4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coupling: Option<ThumbCoupling>,
    /// Valid raw reading range per sensor, `[min, max]` counts. Used to reject bad glove
    /// data and to spread simulated poses.
    pub sensor_range: [[f64; 2]; 4],
}

/// Human hand model: five fingers plus glove sensor settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HandModel {
    /// Free-form name of the hand (user, glove serial).
    #[serde(default)]
    pub name: String,
    /// Thumb parameters.
    pub thumb: FingerParams,
    /// Index finger parameters.
    pub index: FingerParams,
    /// Middle finger parameters.
    pub middle: FingerParams,
    /// Ring finger parameters.
    pub ring: FingerParams,
    /// Little finger parameters.
    pub little: FingerParams,
}

/// One DH element of a chain; lengths are taken from the parameter vector when `*_len` is set.
#[derive(Clone, Copy, Debug)]
struct Element {
    joint: Option<usize>,
    theta_off: f64,
    d_len: Option<usize>,
    a_len: Option<usize>,
    alpha: f64,
}

const HALF_PI: f64 = std::f64::consts::FRAC_PI_2;

const FINGER_CHAIN: [Element; 5] = [
    Element {
        joint: None,
        theta_off: 0.0,
        d_len: None,
        a_len: Some(0),
        alpha: 0.0,
    },
    Element {
        joint: Some(0),
        theta_off: 0.0,
        d_len: None,
        a_len: None,
        alpha: HALF_PI,
    },
    Element {
        joint: Some(1),
        theta_off: 0.0,
        d_len: None,
        a_len: Some(1),
        alpha: 0.0,
    },
    Element {
        joint: Some(2),
        theta_off: 0.0,
        d_len: None,
        a_len: Some(2),
        alpha: 0.0,
    },
    Element {
        joint: Some(3),
        theta_off: 0.0,
        d_len: None,
        a_len: Some(3),
        alpha: 0.0,
    },
];

const THUMB_CHAIN: [Element; 5] = [
    Element {
        joint: Some(0),
        theta_off: 0.0,
        d_len: None,
        a_len: Some(0),
        alpha: HALF_PI,
    },
    Element {
        joint: Some(1),
        theta_off: HALF_PI,
        d_len: None,
        a_len: None,
        alpha: HALF_PI,
    },
    Element {
        joint: Some(2),
        theta_off: 0.0,
        d_len: Some(1),
        a_len: None,
        alpha: HALF_PI,
    },
    Element {
        joint: Some(3),
        theta_off: HALF_PI,
        d_len: None,
        a_len: Some(2),
        alpha: 0.0,
    },
    Element {
        joint: Some(4),
        theta_off: 0.0,
        d_len: None,
        a_len: Some(3),
        alpha: 0.0,
    },
];

fn chain(finger: Finger) -> &'static [Element; 5] {
    if finger == Finger::Thumb {
        &THUMB_CHAIN
    } else {
        &FINGER_CHAIN
    }
}

/// Rotation `Rz(yaw) Ry(pitch) Rx(roll)` as a matrix.
pub fn rpy_matrix(rpy: [f64; 3]) -> Matrix3<f64> {
    Rotation3::from_euler_angles(rpy[0], rpy[1], rpy[2]).into_inner()
}

/// Frames of a chain evaluated at one configuration: the fingertip and, per element, the
/// frame before it (origin, `z` axis) and its own `x` axis after `rot(z, θ)`.
#[derive(Clone, Debug, Default)]
pub struct ChainFrames {
    /// Fingertip position in `O0` (m).
    pub tip: Vector3<f64>,
    /// Origin of the frame each element starts from, in `O0`.
    pub origins: [Vector3<f64>; 5],
    /// `z` axis of that frame (the element's joint axis and `d` direction), in `O0`.
    pub z_axes: [Vector3<f64>; 5],
    /// `x` axis of each element after `rot(z, θ)` (its `a` direction), in `O0`.
    pub x_axes: [Vector3<f64>; 5],
    /// Rotation of the frame after each element, in `O0`.
    pub rotations: [Matrix3<f64>; 5],
}

impl FingerParams {
    pub(crate) fn check(&self, finger: Finger) -> Result<(), HandError> {
        let bad = |what: &str| {
            Err(HandError::InvalidParameter(format!(
                "{}: {what}",
                finger.name()
            )))
        };
        let n_off = if finger == Finger::Thumb { 5 } else { 4 };
        if self.offsets.len() != n_off {
            return bad(&format!(
                "expected {n_off} offsets, found {}",
                self.offsets.len()
            ));
        }
        let all = self
            .base_xyz
            .iter()
            .chain(&self.base_rpy)
            .chain(&self.offsets)
            .chain(&self.lengths)
            .chain(&self.gains)
            .chain(self.sensor_range.iter().flatten());
        if all.clone().any(|v| !v.is_finite()) {
            return bad("non-finite value");
        }
        if self.lengths.iter().any(|&l| l < 0.0) {
            return bad("negative length");
        }
        if self.sensor_range.iter().any(|r| r[0] >= r[1]) {
            return bad("sensor_range min must be below max");
        }
        match (&self.coupling, finger == Finger::Thumb) {
            (None, true) => bad("thumb needs `coupling` gains"),
            (Some(_), false) => bad("only the thumb has `coupling` gains"),
            (Some(c), true)
                if ![c.t0_s1, c.t1_s0, c.twist_s0, c.twist_s1]
                    .iter()
                    .all(|v| v.is_finite()) =>
            {
                bad("non-finite coupling gain")
            }
            _ => Ok(()),
        }
    }

    /// Calibrated parameter vector (order of [`param_names`]).
    pub fn to_vector(&self, finger: Finger) -> Vec<f64> {
        let mut v = self.offsets.clone();
        v.extend_from_slice(&self.lengths);
        v.extend_from_slice(&self.gains);
        if finger == Finger::Thumb {
            let c = self.coupling.unwrap_or_default();
            v.extend_from_slice(&[c.t0_s1, c.t1_s0, c.twist_s0, c.twist_s1]);
        }
        v
    }

    /// Sets the calibrated parameters from a vector (order of [`param_names`]).
    pub fn set_vector(&mut self, finger: Finger, v: &[f64]) {
        let n = if finger == Finger::Thumb { 5 } else { 4 };
        self.offsets = v[..n].to_vec();
        self.lengths.copy_from_slice(&v[n..n + 4]);
        self.gains.copy_from_slice(&v[n + 4..n + 8]);
        if finger == Finger::Thumb {
            self.coupling = Some(ThumbCoupling {
                t0_s1: v[13],
                t1_s0: v[14],
                twist_s0: v[15],
                twist_s1: v[16],
            });
        }
    }

    /// Chain joint angles (rad) from the four raw readings of this finger (eqs. 3-4). The
    /// output has [`Finger::chain_joints`] entries (thumb: T0, T1, Ttwist, T2, T3).
    pub fn joint_angles(&self, finger: Finger, s: &[f64; 4], out: &mut [f64; 5]) {
        let b = &self.offsets;
        let g = &self.gains;
        if finger == Finger::Thumb {
            let c = self.coupling.unwrap_or_default();
            out[0] = g[0] * s[0] + c.t0_s1 * s[1] + b[0];
            out[1] = c.t1_s0 * s[0] + g[1] * s[1] + b[1];
            out[2] = c.twist_s0 * s[0] + c.twist_s1 * s[1] + b[2];
            out[3] = g[2] * s[2] + b[3];
            out[4] = g[3] * s[3] + b[4];
        } else {
            for k in 0..4 {
                out[k] = g[k] * s[k] + b[k];
            }
            out[4] = 0.0;
        }
    }

    /// Raw readings that produce the sensed joint angles `theta` (fingers: X0..X3; thumb: T0,
    /// T1, T2, T3 — the twist follows). `None` if the thumb coupling matrix is singular or a
    /// gain is zero.
    pub fn readings_for(&self, finger: Finger, theta: &[f64; 4]) -> Option<[f64; 4]> {
        let b = &self.offsets;
        let g = &self.gains;
        let mut s = [0.0; 4];
        if finger == Finger::Thumb {
            let c = self.coupling.unwrap_or_default();
            let m = nalgebra::Matrix2::new(g[0], c.t0_s1, c.t1_s0, g[1]);
            let r = m.try_inverse()? * nalgebra::Vector2::new(theta[0] - b[0], theta[1] - b[1]);
            s[0] = r[0];
            s[1] = r[1];
            for k in 2..4 {
                if g[k] == 0.0 {
                    return None;
                }
                s[k] = (theta[k] - b[k + 1]) / g[k];
            }
        } else {
            for k in 0..4 {
                if g[k] == 0.0 {
                    return None;
                }
                s[k] = (theta[k] - b[k]) / g[k];
            }
        }
        Some(s)
    }

    /// Base rotation of the chain in `O0`.
    pub fn base_rotation(&self) -> Matrix3<f64> {
        rpy_matrix(self.base_rpy)
    }

    /// Evaluates the chain at chain joint angles `q` (see [`FingerParams::joint_angles`]).
    pub fn frames(&self, finger: Finger, q: &[f64; 5], out: &mut ChainFrames) {
        let mut r = self.base_rotation();
        let mut p = Vector3::from(self.base_xyz);
        for (i, e) in chain(finger).iter().enumerate() {
            let theta = e.theta_off + e.joint.map_or(0.0, |j| q[j]);
            let d = e.d_len.map_or(0.0, |k| self.lengths[k]);
            let a = e.a_len.map_or(0.0, |k| self.lengths[k]);
            let z = r.column(2).into_owned();
            out.origins[i] = p;
            out.z_axes[i] = z;
            let (st, ct) = theta.sin_cos();
            let (sa, ca) = e.alpha.sin_cos();
            // rot(z,θ) trans(z,d) trans(x,a) rot(x,α)
            let rz = Matrix3::new(ct, -st, 0.0, st, ct, 0.0, 0.0, 0.0, 1.0);
            let rx = Matrix3::new(1.0, 0.0, 0.0, 0.0, ca, -sa, 0.0, sa, ca);
            let r_theta = r * rz;
            let x = r_theta.column(0).into_owned();
            out.x_axes[i] = x;
            p += z * d + x * a;
            r = r_theta * rx;
            out.rotations[i] = r;
        }
        out.tip = p;
    }

    /// Fingertip in `O0` for chain joint angles `q`.
    pub fn tip_from_joints(&self, finger: Finger, q: &[f64; 5]) -> Vector3<f64> {
        let mut f = ChainFrames::default();
        self.frames(finger, q, &mut f);
        f.tip
    }

    /// Fingertip in `O0` for the raw readings `s` of this finger (eq. 1-2 after eq. 3-4).
    pub fn tip(&self, finger: Finger, s: &[f64; 4]) -> Vector3<f64> {
        let mut q = [0.0; 5];
        self.joint_angles(finger, s, &mut q);
        self.tip_from_joints(finger, &q)
    }

    /// Fingertip at chain joint angles `q` and its derivatives: `dq[j]` with respect to chain
    /// joint `j` (`z_{i-1} × (p_N − o_{i-1})`, eq. 7 in `O0`; thumb: T0, T1, Ttwist, T2, T3;
    /// fingers X0..X3, `dq[4]` = 0) and `dl[k]` with respect to length `k` (the unit direction
    /// the length is measured along, eq. 8). The fingertip is linear in the lengths:
    /// `tip = base_xyz + Σ_k lengths[k] · dl[k]`.
    pub fn chain_derivatives(
        &self,
        finger: Finger,
        q: &[f64; 5],
        frames: &mut ChainFrames,
        dq: &mut [Vector3<f64>; 5],
        dl: &mut [Vector3<f64>; 4],
    ) -> Vector3<f64> {
        self.frames(finger, q, frames);
        let tip = frames.tip;
        *dq = [Vector3::zeros(); 5];
        for (i, e) in chain(finger).iter().enumerate() {
            if let Some(j) = e.joint {
                dq[j] = frames.z_axes[i].cross(&(tip - frames.origins[i]));
            }
            if let Some(k) = e.d_len {
                dl[k] = frames.z_axes[i];
            }
            if let Some(k) = e.a_len {
                dl[k] = frames.x_axes[i];
            }
        }
        tip
    }

    /// Identification Jacobian `C_p` (3 × r, eqs. 7-9) of the fingertip with respect to the
    /// calibrated parameters at raw readings `s`, written column-major into `out`
    /// (`out[3*j + k]` = component k of column j). Also returns the fingertip.
    #[allow(clippy::needless_range_loop)]
    pub fn identification_jacobian(
        &self,
        finger: Finger,
        s: &[f64; 4],
        frames: &mut ChainFrames,
        out: &mut [f64],
    ) -> Vector3<f64> {
        let mut q = [0.0; 5];
        self.joint_angles(finger, s, &mut q);
        let mut jcol = [Vector3::zeros(); 5];
        let mut lcol = [Vector3::zeros(); 4];
        let tip = self.chain_derivatives(finger, &q, frames, &mut jcol, &mut lcol);
        let mut put = |j: usize, v: Vector3<f64>| {
            out[3 * j..3 * j + 3].copy_from_slice(v.as_slice());
        };
        if finger == Finger::Thumb {
            for k in 0..5 {
                put(k, jcol[k]);
            }
            for k in 0..4 {
                put(5 + k, lcol[k]);
            }
            // gains (eq. 9): g_T0 on σ0 → θT0, g_T1 on σ1 → θT1, g_T2, g_T3
            put(9, jcol[0] * s[0]);
            put(10, jcol[1] * s[1]);
            put(11, jcol[3] * s[2]);
            put(12, jcol[4] * s[3]);
            put(13, jcol[0] * s[1]);
            put(14, jcol[1] * s[0]);
            put(15, jcol[2] * s[0]);
            put(16, jcol[2] * s[1]);
        } else {
            for k in 0..4 {
                put(k, jcol[k]);
                put(4 + k, lcol[k]);
                put(8 + k, jcol[k] * s[k]);
            }
        }
        tip
    }
}

impl HandModel {
    /// Parameters of one finger.
    pub fn finger(&self, f: Finger) -> &FingerParams {
        match f {
            Finger::Thumb => &self.thumb,
            Finger::Index => &self.index,
            Finger::Middle => &self.middle,
            Finger::Ring => &self.ring,
            Finger::Little => &self.little,
        }
    }

    /// Mutable parameters of one finger.
    pub fn finger_mut(&mut self, f: Finger) -> &mut FingerParams {
        match f {
            Finger::Thumb => &mut self.thumb,
            Finger::Index => &mut self.index,
            Finger::Middle => &mut self.middle,
            Finger::Ring => &mut self.ring,
            Finger::Little => &mut self.little,
        }
    }

    /// Checks lengths, finiteness, offsets count and the thumb coupling.
    pub fn validate(&self) -> Result<(), HandError> {
        for f in Finger::ALL {
            self.finger(f).check(f)?;
        }
        Ok(())
    }

    /// Parses and validates a YAML parameter file's text.
    pub fn from_yaml_str(text: &str) -> Result<Self, HandError> {
        let m: HandModel = serde_yaml::from_str(text)
            .map_err(|e| HandError::Parse(format!("hand model YAML: {e}")))?;
        m.validate()?;
        Ok(m)
    }

    /// Reads and validates a YAML parameter file.
    pub fn from_yaml_file(path: impl AsRef<std::path::Path>) -> Result<Self, HandError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|e| HandError::Io {
            path: path.display().to_string(),
            source: e,
        })?;
        Self::from_yaml_str(&text).map_err(|e| match e {
            HandError::Parse(m) => HandError::Parse(format!("{}: {m}", path.display())),
            other => other,
        })
    }

    /// Serialises to YAML with a short header comment.
    pub fn to_yaml_string(&self, header: &str) -> String {
        let body = serde_yaml::to_string(self).unwrap_or_default();
        let mut s = String::new();
        for line in header.lines() {
            s.push_str("# ");
            s.push_str(line);
            s.push('\n');
        }
        s.push_str(&body);
        s
    }

    /// Writes the model as YAML to `path` so that a file of that name is either the model or
    /// untouched: the text goes to a temporary file beside it, is read back and compared with
    /// `self` (every parameter), and only then renamed over `path`. Nothing is left behind on
    /// failure.
    pub fn save_checked(&self, path: &std::path::Path, header: &str) -> Result<(), HandError> {
        self.validate()?;
        let io = |p: &std::path::Path| {
            let p = p.display().to_string();
            move |e| HandError::Io { path: p, source: e }
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(io(dir))?;
        }
        let mut tmp = path.as_os_str().to_owned();
        tmp.push(".tmp");
        let tmp = std::path::PathBuf::from(tmp);
        let result = (|| {
            std::fs::write(&tmp, self.to_yaml_string(header)).map_err(io(&tmp))?;
            let back = Self::from_yaml_file(&tmp)?;
            for f in Finger::ALL {
                let (a, b) = (self.finger(f), back.finger(f));
                let same = a.to_vector(f) == b.to_vector(f)
                    && a.base_xyz == b.base_xyz
                    && a.base_rpy == b.base_rpy
                    && a.sensor_range == b.sensor_range;
                if !same {
                    return Err(HandError::InvalidParameter(format!(
                        "{}: the written file does not read back as the calibrated model ({})",
                        path.display(),
                        f.name()
                    )));
                }
            }
            std::fs::rename(&tmp, path).map_err(io(path))
        })();
        if result.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        result
    }

    /// The built-in nominal model (same numbers as `config/hand_model_nominal.yaml`).
    pub fn nominal() -> Self {
        Self::from_yaml_str(NOMINAL_YAML).expect("built-in nominal model is valid")
    }

    /// Chain joint angles of every finger from the 20 raw readings (finger-major, 4 each).
    pub fn all_joint_angles(&self, raw: &[f64; 20]) -> [[f64; 5]; 5] {
        let mut out = [[0.0; 5]; 5];
        for f in Finger::ALL {
            let i = f.index();
            let s = [raw[4 * i], raw[4 * i + 1], raw[4 * i + 2], raw[4 * i + 3]];
            self.finger(f).joint_angles(f, &s, &mut out[i]);
        }
        out
    }

    /// Human joint names in [`HandModel::all_joint_angles`] order (thumb has 5, fingers 4).
    pub fn joint_names() -> Vec<String> {
        Finger::ALL.iter().flat_map(|f| f.joint_names()).collect()
    }
}

/// The nominal average adult left hand as YAML (also shipped as
/// `config/hand_model_nominal.yaml`).
pub const NOMINAL_YAML: &str = include_str!("../../../config/hand_model_nominal.yaml");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nominal_loads_and_roundtrips() {
        let m = HandModel::nominal();
        let text = m.to_yaml_string("test");
        let back = HandModel::from_yaml_str(&text).unwrap();
        assert_eq!(m, back);
    }

    #[test]
    fn readings_invert_the_sensor_model() {
        let m = HandModel::nominal();
        for f in Finger::ALL {
            let p = m.finger(f);
            let theta = [0.3, 0.7, 0.4, 0.2];
            let s = p.readings_for(f, &theta).unwrap();
            let mut q = [0.0; 5];
            p.joint_angles(f, &s, &mut q);
            let sensed: Vec<f64> = if f == Finger::Thumb {
                vec![q[0], q[1], q[3], q[4]]
            } else {
                q[..4].to_vec()
            };
            for (a, b) in sensed.iter().zip(theta) {
                assert!((a - b).abs() < 1e-12);
            }
        }
    }

    #[test]
    fn straight_index_tip_is_sum_of_lengths_along_x() {
        let m = HandModel::nominal();
        let p = &m.index;
        let tip = p.tip_from_joints(Finger::Index, &[0.0; 5]);
        let l: f64 = p.lengths.iter().sum();
        let expect = Vector3::from(p.base_xyz) + p.base_rotation() * Vector3::new(l, 0.0, 0.0);
        assert!((tip - expect).norm() < 1e-12);
        // flexing the MCP by 90° moves the fingertip to the palmar side (+z of the base)
        let bent = p.tip_from_joints(Finger::Index, &[0.0, HALF_PI, 0.0, 0.0, 0.0]);
        let local = p.base_rotation().transpose() * (bent - Vector3::from(p.base_xyz));
        assert!((local.x - p.lengths[0]).abs() < 1e-12);
        assert!((local.z - (l - p.lengths[0])).abs() < 1e-12);
    }

    #[test]
    fn bad_yaml_is_an_error() {
        assert!(HandModel::from_yaml_str("thumb: 3").is_err());
        let mut m = HandModel::nominal();
        m.index.offsets.pop();
        assert!(m.validate().is_err());
        let mut m = HandModel::nominal();
        m.thumb.lengths[1] = f64::NAN;
        assert!(m.validate().is_err());
        let mut m = HandModel::nominal();
        m.thumb.coupling = None;
        assert!(m.validate().is_err());
    }

    /// The analytic identification Jacobian of the nominal finger `f` at readings `s`
    /// equals central finite differences of the fingertip.
    fn jac_fd_check(f: Finger, s: &[f64; 4]) {
        let p = HandModel::nominal().finger(f).clone();
        let n = f.param_count();
        let mut c = vec![0.0; 3 * n];
        let mut fr = ChainFrames::default();
        p.identification_jacobian(f, s, &mut fr, &mut c);
        let x0 = p.to_vector(f);
        for j in 0..n {
            let h = 1e-6 * x0[j].abs().max(1e-3);
            let mut xp = x0.clone();
            xp[j] += h;
            let mut xm = x0.clone();
            xm[j] -= h;
            let mut pp = p.clone();
            pp.set_vector(f, &xp);
            let mut pm = p.clone();
            pm.set_vector(f, &xm);
            let fd = (pp.tip(f, s) - pm.tip(f, s)) / (2.0 * h);
            let an = Vector3::new(c[3 * j], c[3 * j + 1], c[3 * j + 2]);
            let tol = 1e-6 * (1.0 + an.norm());
            assert!(
                (fd - an).norm() < tol,
                "{f:?} param {} analytic {an:?} fd {fd:?}",
                param_names(f)[j]
            );
        }
    }

    #[test]
    fn identification_jacobian_matches_finite_differences() {
        for f in Finger::ALL {
            jac_fd_check(f, &[87.0, 143.0, 121.0, 60.0]);
        }
    }

    proptest::proptest! {
        #[test]
        fn jacobian_fd_random_readings(s0 in 0.0..255.0f64, s1 in 0.0..255.0f64, s2 in 0.0..255.0f64, s3 in 0.0..255.0f64, fi in 0usize..5) {
            jac_fd_check(Finger::ALL[fi], &[s0, s1, s2, s3]);
        }
    }
}
