//! The collision-matrix YAML file: `generator` (absent in hand-written files), `objects`
//! with the poses the matrix was computed for, `never_collide` as `[object/body,
//! object/body]` pairs and the informational `decisions`. Written with comments that explain
//! it; users may edit the list (names are checked when a scenario takes the matrix, and only
//! `never_collide` decides what is skipped).

use std::path::Path;

use super::matrix::CollisionMatrix;
use super::record::Reason;
use crate::error::SceneError;
use crate::text;

impl CollisionMatrix {
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
                "# generated: pairs proven at least {m} m apart for every configuration, then {} random\n\
                 # configurations and {} local searches of {} distance queries per remaining pair; a pair\n\
                 # is listed when nothing closer than {m} m was found (see `decisions`).\n\
                 generator: {{samples: {}, margin: {m}, seed: {}, refine_starts: {}, refine_evaluations: {}}}\n",
                g.samples,
                g.refine_starts,
                g.refine_evaluations,
                g.samples,
                g.seed,
                g.refine_starts,
                g.refine_evaluations,
                m = num(&g.margin),
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
        if !self.decisions.is_empty() {
            out += "# how the generator decided each pair (informational; never_collide decides what is\n\
                    # skipped). reason: proven (closest = lower bound over all configurations), searched\n\
                    # (never, closest = smallest distance found), fixed (two fixed bodies), sampled / refined\n\
                    # (may collide: a random sample / the local search came within the margin).\n\
                    decisions:\n";
            for d in &self.decisions {
                let closest = if d.closest.is_finite() {
                    format!("{:?}", d.closest)
                } else {
                    ".inf".to_owned()
                };
                out += &format!(
                    "  - {{pair: [{:?}, {:?}], never: {}, reason: {}, closest: {closest}}}\n",
                    d.pair[0],
                    d.pair[1],
                    d.never,
                    match d.reason {
                        Reason::Proven => "proven",
                        Reason::Searched => "searched",
                        Reason::Fixed => "fixed",
                        Reason::Sampled => "sampled",
                        Reason::Refined => "refined",
                    }
                );
            }
        }
        out
    }

    /// Parses the YAML text; `path` is only used in error messages.
    pub fn from_yaml(text: &str, path: &Path) -> Result<CollisionMatrix, SceneError> {
        text::parse_yaml(text, path)
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
        Self::from_yaml(&text::read(path)?, path)
    }
}
