//! The collision matrix (paper §3.2.3): body pairs that can never collide, skipped by
//! collision queries.
//!
//! [`CollisionMatrix::generate`] computes it like MoveIt's setup assistant: it samples
//! random configurations of every robot (uniform within the joint limits, bases at their
//! scenario poses) and marks a pair of bodies of different objects as *possibly
//! colliding* as soon as one sample brings them closer than `margin`; the pairs never
//! seen that close are listed as `never_collide`. The margin is the safety allowance for
//! configurations the sampling missed (a pair whose closest approach over the samples is
//! at least `margin` is assumed never to touch). Sampling cannot prove a pair safe; the
//! evaluation command checks the matrix against the full sweep.
//!
//! The YAML file (see [`CollisionMatrixFile`]) lists the objects with the base poses the
//! matrix was computed for (a scenario whose poses differ is rejected) and the
//! `never_collide` pairs as `object/body` names; users may edit the list.

use std::collections::BTreeSet;
use std::path::Path;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::object::Object;
use crate::scenario::{BodyId, Scenario};
use crate::spec::PoseSpec;
use crate::{Rng, SceneError};

/// How a matrix was generated.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GeneratorSettings {
    /// Number of random configurations (of all robots at once).
    pub samples: usize,
    /// Safety margin (m): pairs that came closer than this in some sample may collide.
    pub margin: f64,
    /// Seed of the sampler.
    pub seed: u64,
}

impl Default for GeneratorSettings {
    fn default() -> Self {
        GeneratorSettings {
            samples: 20_000,
            margin: 0.05,
            seed: 1,
        }
    }
}

/// An object the matrix was computed for.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MatrixObject {
    /// Object name.
    pub name: String,
    /// Base pose (robots) or pose (simple objects) in the world.
    pub pose: PoseSpec,
}

/// The collision matrix and its YAML form.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CollisionMatrixFile {
    /// How it was generated (absent for hand-written files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generator: Option<GeneratorSettings>,
    /// Objects and the poses the matrix is valid for.
    pub objects: Vec<MatrixObject>,
    /// Body pairs (`object/body` names) that never collide.
    pub never_collide: Vec<[String; 2]>,
}

/// A collision matrix: the set of body pairs that never collide.
pub type CollisionMatrix = CollisionMatrixFile;

fn normalized(a: &str, b: &str) -> [String; 2] {
    if a <= b {
        [a.to_owned(), b.to_owned()]
    } else {
        [b.to_owned(), a.to_owned()]
    }
}

impl CollisionMatrixFile {
    /// Samples configurations of the scenario's robots and lists the body pairs never
    /// closer than `settings.margin` (module documentation). Runs on the rayon pool.
    pub fn generate(
        scenario: &Scenario,
        settings: &GeneratorSettings,
        progress: Option<&indicatif::ProgressBar>,
    ) -> Result<CollisionMatrix, SceneError> {
        if !(settings.margin.is_finite() && settings.margin >= 0.0) {
            return Err(SceneError::Invalid(format!(
                "collision-matrix margin {} must be finite and >= 0",
                settings.margin
            )));
        }
        let objects = scenario.objects();
        let mut pairs: Vec<(BodyId, BodyId)> = Vec::new();
        for (a, b) in scenario.object_pairs() {
            for i in 0..objects[a].num_bodies() {
                for j in 0..objects[b].num_bodies() {
                    pairs.push((BodyId { object: a, body: i }, BodyId { object: b, body: j }));
                }
            }
        }
        let chunks = 64usize;
        let per = settings.samples.div_ceil(chunks).max(1);
        let possible: Vec<bool> = (0..chunks)
            .into_par_iter()
            .map(|c| {
                let mut sc = scenario.clone();
                let mut rng =
                    Rng::new(settings.seed ^ (c as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
                let mut flags = vec![false; pairs.len()];
                let n = per.min(settings.samples.saturating_sub(c * per));
                for _ in 0..n {
                    for k in 0..sc.objects().len() {
                        if let Object::Complex(r) = &sc.objects()[k] {
                            let q: Vec<f64> = r
                                .kinematics()
                                .joint_limits()
                                .iter()
                                .map(|l| {
                                    let (lo, hi) = if l.lower.is_finite() && l.upper.is_finite() {
                                        (l.lower, l.upper)
                                    } else {
                                        (-std::f64::consts::PI, std::f64::consts::PI)
                                    };
                                    lo + (hi - lo) * rng.uniform()
                                })
                                .collect();
                            sc.set_joint_positions(k, &q).expect("valid sample");
                        }
                    }
                    for (f, &(a, b)) in flags.iter_mut().zip(&pairs) {
                        if !*f && sc.bodies_closer_than(a, b, settings.margin) {
                            *f = true;
                        }
                    }
                    if let Some(p) = progress {
                        p.inc(1);
                    }
                }
                flags
            })
            .reduce(
                || vec![false; pairs.len()],
                |mut x, y| {
                    for (a, b) in x.iter_mut().zip(y) {
                        *a |= b;
                    }
                    x
                },
            );
        let mut never: BTreeSet<[String; 2]> = BTreeSet::new();
        for (f, &(a, b)) in possible.iter().zip(&pairs) {
            if !f {
                never.insert(normalized(&scenario.body_name(a), &scenario.body_name(b)));
            }
        }
        Ok(CollisionMatrixFile {
            generator: Some(settings.clone()),
            objects: objects
                .iter()
                .map(|o| MatrixObject {
                    name: o.name().to_owned(),
                    pose: PoseSpec::from_isometry(&object_pose(o)),
                })
                .collect(),
            never_collide: never.into_iter().collect(),
        })
    }

    /// Number of pairs listed.
    pub fn len(&self) -> usize {
        self.never_collide.len()
    }

    /// True if no pair is listed.
    pub fn is_empty(&self) -> bool {
        self.never_collide.is_empty()
    }

    /// YAML text (with a header comment), one line per pair.
    pub fn to_yaml(&self) -> String {
        let num = |x: &f64| format!("{x:?}");
        let list = |v: &[f64; 3]| v.iter().map(num).collect::<Vec<_>>().join(", ");
        let mut out = String::from(
            "# RPQ collision matrix: body pairs (object/link) that never collide; collision queries\n\
             # skip them. Valid only for the object poses listed (a scene placing them elsewhere is\n\
             # rejected). Edit freely: names are checked when the file is loaded.\n",
        );
        if let Some(g) = &self.generator {
            out += &format!(
                "# generated by sampling {} random configurations: pairs never closer than {} m\n\
                 generator: {{samples: {}, margin: {}, seed: {}}}\n",
                g.samples,
                num(&g.margin),
                g.samples,
                num(&g.margin),
                g.seed
            );
        }
        out += "objects:\n";
        for o in &self.objects {
            out += &format!(
                "  - name: {:?}\n    pose: {{xyz: [{}], rpy: [{}]}}\n",
                o.name,
                list(&o.pose.xyz),
                list(&o.pose.rpy)
            );
        }
        if self.never_collide.is_empty() {
            out += "never_collide: []\n";
        } else {
            out += "never_collide:\n";
            for [x, y] in &self.never_collide {
                out += &format!("  - [{x:?}, {y:?}]\n");
            }
        }
        out
    }

    /// Parses the YAML text; `path` is only used in error messages.
    pub fn from_yaml(text: &str, path: &Path) -> Result<CollisionMatrix, SceneError> {
        serde_yaml::from_str(text).map_err(|e| crate::spec::yaml_error(path, e))
    }

    /// Writes the YAML file.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<(), SceneError> {
        std::fs::write(path.as_ref(), self.to_yaml()).map_err(|source| SceneError::Io {
            path: path.as_ref().to_owned(),
            source,
        })
    }

    /// Reads a YAML file.
    pub fn load(path: impl AsRef<Path>) -> Result<CollisionMatrix, SceneError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| SceneError::Io {
            path: path.to_owned(),
            source,
        })?;
        Self::from_yaml(&text, path)
    }

    /// Checks names and poses against `scenario` and returns the skip flags per object
    /// pair (row-major, `a < b`).
    pub(crate) fn resolve(&self, scenario: &Scenario) -> Result<Vec<Vec<bool>>, SceneError> {
        let err = |message: String| SceneError::CollisionMatrix { message };
        let objects = scenario.objects();
        for mo in &self.objects {
            let k = scenario
                .object_index(&mo.name)
                .map_err(|_| err(format!("unknown object `{}`", mo.name)))?;
            let want = mo.pose.to_isometry()?;
            let have = object_pose(&objects[k]);
            let dp = (want.translation.vector - have.translation.vector).norm();
            let dr = want.rotation.angle_to(&have.rotation);
            if dp > 1e-9 || dr > 1e-9 {
                return Err(err(format!(
                    "computed for `{}` at {:?}, the scene places it elsewhere ({dp:.3e} m, {dr:.3e} rad off); regenerate it",
                    mo.name, mo.pose
                )));
            }
        }
        for o in objects {
            if !self.objects.iter().any(|m| m.name == o.name()) {
                return Err(err(format!(
                    "object `{}` of the scene is not in the matrix; regenerate it",
                    o.name()
                )));
            }
        }
        let n = objects.len();
        let mut skip: Vec<Vec<bool>> = Vec::new();
        for a in 0..n {
            for b in a + 1..n {
                skip.push(vec![
                    false;
                    objects[a].num_bodies() * objects[b].num_bodies()
                ]);
            }
        }
        let find = |full: &str| -> Result<BodyId, SceneError> {
            let (o, l) = full
                .split_once('/')
                .ok_or_else(|| err(format!("`{full}` is not an object/body name")))?;
            let k = scenario
                .object_index(o)
                .map_err(|_| err(format!("unknown object `{o}` in `{full}`")))?;
            let obj = &objects[k];
            let i = (0..obj.num_bodies())
                .find(|&i| obj.body(i).name == l)
                .ok_or_else(|| err(format!("unknown link `{l}` of `{o}` in `{full}`")))?;
            Ok(BodyId { object: k, body: i })
        };
        for [x, y] in &self.never_collide {
            let (a, b) = (find(x)?, find(y)?);
            if a.object == b.object {
                return Err(err(format!(
                    "`{x}` and `{y}` belong to the same object; only pairs of different objects are queried"
                )));
            }
            let (a, b) = if a.object < b.object { (a, b) } else { (b, a) };
            let slot = a.object * n - a.object * (a.object + 1) / 2 + (b.object - a.object - 1);
            let nb = objects[b.object].num_bodies();
            skip[slot][a.body * nb + b.body] = true;
        }
        Ok(skip)
    }
}

fn object_pose(o: &Object) -> nalgebra::Isometry3<f64> {
    match o {
        Object::Simple(s) => s.pose,
        Object::Complex(r) => *r.base(),
    }
}
