//! What the generator records in a collision matrix: its settings and how it decided each
//! body pair.

use serde::{Deserialize, Serialize};

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
    /// Number of random configurations (of all robots at once).
    pub samples: usize,
    /// Safety margin (m): pairs that may come closer than this may collide.
    pub margin: f64,
    /// Seed of the sampler.
    pub seed: u64,
    /// Local searches per pair that no sample brought within the margin (from its closest
    /// samples); 0 disables the refinement.
    #[serde(default = "default_refine_starts")]
    pub refine_starts: usize,
    /// Distance queries per local search.
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
