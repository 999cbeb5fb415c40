//! Batches of configurations answered on all cores: one read-only scenario shared by every
//! thread, one [`ScenarioState`] per thread.

use rayon::prelude::*;

use crate::error::SceneError;
use crate::object::Object;
use crate::options::QueryOptions;
use crate::scenario::Scenario;
use crate::state::ScenarioState;

/// What [`Scenario::batch`] computes for each configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BatchQuery {
    /// Collision only ([`Scenario::collide`]).
    Collision,
    /// Minimum distance only ([`Scenario::min_distance`]; exact).
    Distance,
}

/// The answer for one configuration of [`Scenario::batch`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BatchAnswer {
    /// Does any pair collide? (With [`BatchQuery::Distance`]: the distance is 0.)
    pub colliding: bool,
    /// Minimum distance (m) with [`BatchQuery::Distance`] (infinite with fewer than two
    /// objects), NaN with [`BatchQuery::Collision`].
    pub distance: f64,
}

/// Rows per task: enough tasks for the pool to balance, few enough to keep per-task
/// overhead (one state per thread, reused) negligible.
fn rows_per_task(rows: usize) -> usize {
    rows.div_ceil(8 * rayon::current_num_threads().max(1))
        .max(1)
}

impl Scenario {
    /// Answers a batch of configurations on all cores (the current rayon pool): each row of
    /// `rows` (row-major) holds the joint vectors of the robots `robots`, concatenated in
    /// that order; objects not listed stay at the scenario's configuration. Answers come in
    /// row order; the scenario is not changed. Each thread works on its own
    /// [`ScenarioState`] (a copy of the scenario's, so weight-matrix learning stays per
    /// thread). Refused: an object that is not a robot or is listed twice, `rows` not a
    /// whole number of rows, a non-finite value (naming its row).
    pub fn batch(
        &self,
        robots: &[usize],
        rows: &[f64],
        query: BatchQuery,
        opts: &QueryOptions,
    ) -> Result<Vec<BatchAnswer>, SceneError> {
        let mut dofs = Vec::with_capacity(robots.len());
        for (k, &o) in robots.iter().enumerate() {
            match self.objects().get(o) {
                Some(Object::Complex(r)) if !robots[..k].contains(&o) => dofs.push(r.dof()),
                _ => {
                    return Err(SceneError::Invalid(format!(
                        "batch: object #{o} is not a robot or is listed twice"
                    )))
                }
            }
        }
        let n: usize = dofs.iter().sum();
        if n == 0 || !rows.len().is_multiple_of(n) {
            return Err(SceneError::Invalid(format!(
                "batch: {} values are not a whole number of rows of {n}",
                rows.len()
            )));
        }
        if let Some(k) = rows.iter().position(|v| !v.is_finite()) {
            return Err(SceneError::NonFinite {
                what: format!("batch: value {} of row {}", k % n, k / n),
            });
        }
        let per = rows_per_task(rows.len() / n) * n;
        let blocks: Vec<Vec<BatchAnswer>> = rows
            .par_chunks(per)
            .map_init(
                || self.new_state(),
                |st, block| -> Result<Vec<BatchAnswer>, SceneError> {
                    block
                        .chunks_exact(n)
                        .map(|row| {
                            self.set_row(st, robots, &dofs, row)?;
                            Ok(self.answer(st, query, opts))
                        })
                        .collect()
                },
            )
            .collect::<Result<_, _>>()?;
        Ok(blocks.into_iter().flatten().collect())
    }

    fn set_row(
        &self,
        st: &mut ScenarioState,
        robots: &[usize],
        dofs: &[usize],
        row: &[f64],
    ) -> Result<(), SceneError> {
        let mut at = 0;
        for (&o, &d) in robots.iter().zip(dofs) {
            self.set_joint_positions_with(st, o, &row[at..at + d])?;
            at += d;
        }
        Ok(())
    }

    fn answer(
        &self,
        st: &mut ScenarioState,
        query: BatchQuery,
        opts: &QueryOptions,
    ) -> BatchAnswer {
        match query {
            BatchQuery::Collision => BatchAnswer {
                colliding: self.collide_with(st, opts).colliding,
                distance: f64::NAN,
            },
            BatchQuery::Distance => {
                let d = self
                    .min_distance_with(st, opts)
                    .map_or(f64::INFINITY, |r| r.distance);
                BatchAnswer {
                    colliding: d == 0.0,
                    distance: d,
                }
            }
        }
    }
}
