//! Batches of configurations for planners, answered on all cores.

use rayon::prelude::*;

use super::{Selection, World};
use crate::error::SceneError;
use crate::spec::joint_columns;

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
    /// pairs of this world apply. Computed on all cores (one clone of the world per
    /// block of rows, nothing shared mutably); answers in input order; `self` is not
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
        let blocks = rayon::current_num_threads().max(1) * 2;
        let per_block = rows.div_ceil(blocks).max(1);
        let answers = positions
            .par_chunks(per_block * n)
            .map(|block| -> Result<Vec<StateAnswer>, SceneError> {
                let mut w = self.clone();
                let mut qs: Vec<Vec<f64>> = robots
                    .iter()
                    .map(|&o| w.scenario.joint_positions(o).to_vec())
                    .collect();
                let mut out = Vec::with_capacity(block.len() / n);
                for row in block.chunks_exact(n) {
                    for (&(slot, d), &v) in cols.iter().zip(row) {
                        qs[slot][d] = v;
                    }
                    for (&o, q) in robots.iter().zip(&qs) {
                        w.scenario.set_joint_positions(o, q)?;
                    }
                    out.push(w.state_answer(with_distance));
                }
                Ok(out)
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(answers.into_iter().flatten().collect())
    }

    /// Collision and (optionally) padded minimum distance over every body at the current
    /// configuration.
    fn state_answer(&mut self, with_distance: bool) -> StateAnswer {
        let all = Selection::all();
        let colliding = self
            .check_collision(&all, &all, super::ContactMode::First)
            .colliding;
        let distance = if !with_distance {
            f64::NAN
        } else if colliding {
            0.0
        } else {
            self.min_distance(&all, &all, 0.0, 0.0)
                .map_or(f64::INFINITY, |r| r.distance)
        };
        StateAnswer {
            colliding,
            distance,
        }
    }
}
