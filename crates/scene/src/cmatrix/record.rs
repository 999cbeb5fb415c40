//! What the generator records in a collision matrix: its settings and how it decided each
//! body pair.

use serde::{Deserialize, Serialize};

use crate::error::SceneError;

/// Fewest random configurations [`GeneratorSettings::samples`] the generator accepts: with
/// fewer, the sampling stage gives next to no evidence, and with none at all every pair the
/// proof leaves open would be listed as never colliding without a single distance query.
pub const MIN_SAMPLES: usize = 100;

/// Fewest local searches per open pair [`GeneratorSettings::refine_starts`] the generator
/// accepts: without refinement a pair is listed on sampling alone, and on the facing RX60
/// pair 0.6 m apart 100 samples without refinement list two pairs that do overlap in some
/// configuration (found by the default search).
pub const MIN_REFINE_STARTS: usize = 1;

/// Fewest distance queries per local search [`GeneratorSettings::refine_evaluations`] the
/// generator accepts: a search of `n` queries first measures its start, so 0 or 1 searches
/// nothing; 50 covers about two coordinate sweeps over the 12 joints of two 6-axis arms.
pub const MIN_REFINE_EVALUATIONS: usize = 50;

fn default_refine_starts() -> usize {
    8
}

fn default_refine_evaluations() -> usize {
    400
}

/// How a matrix was generated.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GeneratorSettings {
    /// Number of random configurations (of all robots at once); at least [`MIN_SAMPLES`].
    pub samples: usize,
    /// Safety margin (m): pairs that may come closer than this may collide.
    pub margin: f64,
    /// Seed of the sampler.
    pub seed: u64,
    /// Local searches per pair that no sample brought within the margin (from its closest
    /// samples); at least [`MIN_REFINE_STARTS`].
    #[serde(default = "default_refine_starts")]
    pub refine_starts: usize,
    /// Distance queries per local search; at least [`MIN_REFINE_EVALUATIONS`].
    #[serde(default = "default_refine_evaluations")]
    pub refine_evaluations: usize,
}

impl Default for GeneratorSettings {
    fn default() -> Self {
        GeneratorSettings {
            samples: 20_000,
            margin: 0.05,
            seed: 1,
            refine_starts: default_refine_starts(),
            refine_evaluations: default_refine_evaluations(),
        }
    }
}

impl GeneratorSettings {
    /// Default refinement with the given sampling settings.
    pub fn sampling(samples: usize, margin: f64, seed: u64) -> Self {
        GeneratorSettings {
            samples,
            margin,
            seed,
            ..GeneratorSettings::default()
        }
    }

    /// Checks that the settings make a meaningful search: a finite margin `>= 0`,
    /// `samples >= MIN_SAMPLES`, `refine_starts >= MIN_REFINE_STARTS` and
    /// `refine_evaluations >= MIN_REFINE_EVALUATIONS`
    /// ([`SceneError::GeneratorSetting`] naming the setting and its minimum otherwise).
    /// [`crate::generate_collision_matrix`] calls it before doing anything.
    pub fn validate(&self) -> Result<(), SceneError> {
        if !(self.margin.is_finite() && self.margin >= 0.0) {
            return Err(SceneError::Invalid(format!(
                "collision-matrix margin {} must be finite and >= 0",
                self.margin
            )));
        }
        for (setting, value, minimum) in [
            ("samples", self.samples, MIN_SAMPLES),
            ("refine_starts", self.refine_starts, MIN_REFINE_STARTS),
            (
                "refine_evaluations",
                self.refine_evaluations,
                MIN_REFINE_EVALUATIONS,
            ),
        ] {
            if value < minimum {
                return Err(SceneError::GeneratorSetting {
                    setting,
                    value,
                    minimum,
                });
            }
        }
        Ok(())
    }
}

/// How the generator decided a pair (see [`crate::cmatrix_generator`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// Never colliding, proven: `closest` is a lower bound of the distance over all
    /// configurations (the exact distance for two fixed bodies).
    Proven,
    /// Never colliding as far as the search found: `closest` is the smallest distance
    /// found by sampling and local refinement (not a guarantee).
    Searched,
    /// Two fixed bodies closer than the margin: `closest` is their exact distance.
    Fixed,
    /// May collide: a random sample brought the pair within the margin (`closest`: the
    /// smallest such approach seen, 0 = overlapping).
    Sampled,
    /// May collide: the local refinement brought the pair within the margin (`closest`:
    /// the distance reached).
    Refined,
}

/// The generator's decision for one body pair.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PairDecision {
    /// The two bodies (`object/body`).
    pub pair: [String; 2],
    /// Listed in `never_collide`.
    pub never: bool,
    /// How it was decided.
    pub reason: Reason,
    /// Closest approach (m): a proven lower bound for [`Reason::Proven`], the closest
    /// distance found otherwise (`.inf` if nothing was measured).
    pub closest: f64,
}
