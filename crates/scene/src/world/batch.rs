//! Batches of configurations for planners, answered on all cores.

use rayon::prelude::*;

use super::{Selection, World};
use crate::error::SceneError;
use crate::spec::joint_columns;
use crate::state::ScenarioState;

/// Answer for one configuration of [`World::check_states`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StateAnswer {
    /// Does any considered pair collide (paddings and allowed pairs applied)?
    pub colliding: bool,
    /// Padded minimum distance (m): 0 when colliding, NaN when not asked for, infinite
    /// when no pair is left to measure.
    pub distance: f64,
}

impl World {
    /// Answers a batch of configurations, as planners ask: `joint_names` are
    /// `robot/joint` (every movable joint of every robot exactly once, any order — the
    /// rules of the configuration CSV header), `positions` row-major, one row per
    /// configuration (radians or metres). Every body is selected; paddings and allowed
    /// pairs of this world apply. Computed on all cores (the world shared read-only, one
    /// [`ScenarioState`] per thread); answers in input order; `self` is not
    /// changed. Refused, naming the first problem: unknown, missing or repeated names,
    /// `positions.len()` not a multiple of the row length, a non-finite position (with its
    /// row index).
    pub fn check_states(
        &self,
        joint_names: &[String],
        positions: &[f64],
        with_distance: bool,
    ) -> Result<Vec<StateAnswer>, SceneError> {
        let (robots, cols) = joint_columns(
            &self.scenario,
            joint_names.iter().map(String::as_str),
            "joint name",
        )
        .map_err(|m| SceneError::Invalid(format!("check_states: {m}")))?;
        let n = cols.len();
        if n == 0 || !positions.len().is_multiple_of(n) {
            if positions.is_empty() {
                return Ok(Vec::new());
            }
            return Err(SceneError::Invalid(format!(
                "check_states: {} positions are not a whole number of rows of {n} joints",
                positions.len()
            )));
        }
        if let Some(k) = positions.iter().position(|v| !v.is_finite()) {
            return Err(SceneError::NonFinite {
                what: format!(
                    "check_states: position of `{}` in row {} ({})",
                    joint_names[k % n],
                    k / n,
                    positions[k]
                ),
            });
        }
        let rows = positions.len() / n;
        let per = rows
            .div_ceil(8 * rayon::current_num_threads().max(1))
            .max(1);
        let base: Vec<Vec<f64>> = robots
            .iter()
            .map(|&o| self.scenario.joint_positions(o).to_vec())
            .collect();
        // One state per thread (the world itself is shared read-only).
        let answers = positions
            .par_chunks(per * n)
            .map_init(
                || (self.new_state(), base.clone()),
                |(st, qs), block| -> Result<Vec<StateAnswer>, SceneError> {
                    let mut out = Vec::with_capacity(block.len() / n);
                    for row in block.chunks_exact(n) {
                        for (&(slot, d), &v) in cols.iter().zip(row) {
                            qs[slot][d] = v;
                        }
                        for (&o, q) in robots.iter().zip(qs.iter()) {
                            self.scenario.set_joint_positions_with(st, o, q)?;
                        }
                        out.push(self.state_answer(st, with_distance));
                    }
                    Ok(out)
                },
            )
            .collect::<Result<Vec<_>, _>>()?;
        Ok(answers.into_iter().flatten().collect())
    }

    /// Collision and (optionally) padded minimum distance over every body at the current
    /// configuration.
    fn state_answer(&self, st: &mut ScenarioState, with_distance: bool) -> StateAnswer {
        let all = Selection::all();
        let colliding = self
            .check_collision_with(st, &all, &all, super::ContactMode::First)
            .colliding;
        let distance = if !with_distance {
            f64::NAN
        } else if colliding {
            0.0
        } else {
            self.min_distance_with(st, &all, &all, 0.0, 0.0)
                .map_or(f64::INFINITY, |r| r.distance)
        };
        StateAnswer {
            colliding,
            distance,
        }
    }
}
