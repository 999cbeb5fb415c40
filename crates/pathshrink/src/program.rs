//! From a recorded workpiece path to a robot program: check, thin (or, with
//! `node_spacing = 0`, keep every node and shrink coarse to fine, [`crate::coarse`]), stretch and shrink,
//! reduce, motion commands ([`shrink_program`]), and the figures of merit of Fig. 4's table
//! ([`PathStats`]).

use std::sync::Arc;

use rpq_proximity::QueryWorkspace;

use crate::coarse::{shrink_coarse_to_fine, COARSE_SPACING};
use crate::environment::Environment;
use crate::error::PathShrinkError;
use crate::motion::{motion_commands, MotionCommand, MotionParams};
use crate::path::{sampled_clearance, WorkpiecePath};
use crate::reduce::{reduce, ReduceParams};
use crate::robot::RobotParams;
use crate::shrink::{shrink, thin, ShrinkParams, ShrinkReport};
use crate::sim::{ContactSimulator, SimParams};

/// Every parameter of the pipeline.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct ProgramParams {
    /// Contact simulator.
    pub sim: SimParams,
    /// Path modification.
    pub shrink: ShrinkParams,
    /// Node reduction.
    pub reduce: ReduceParams,
    /// Motion commands.
    pub motion: MotionParams,
    /// Joint trajectory.
    pub robot: RobotParams,
}

impl ProgramParams {
    /// Refuses values outside their ranges.
    pub fn validate(&self) -> Result<(), PathShrinkError> {
        self.sim.validate()?;
        self.shrink.validate()?;
        self.reduce.validate()?;
        self.motion.validate()?;
        self.robot.validate()
    }
}

/// Figures of a path before and after (the table of the reproduction).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct PathStats {
    /// Length of the recorded centre path (m).
    pub length_recorded: f64,
    /// After modification (m).
    pub length_modified: f64,
    /// Of the reduced nodes (m).
    pub length_reduced: f64,
    /// Nodes recorded.
    pub nodes_recorded: usize,
    /// Nodes after thinning (the band's nodes).
    pub nodes_working: usize,
    /// Nodes after reduction.
    pub nodes_reduced: usize,
    /// Smallest clearance along the free segments (outside required spans), sampled every
    /// 0.5 mm of motion (m): recorded, modified, reduced.
    pub min_clearance_recorded: f64,
    /// See `min_clearance_recorded`.
    pub min_clearance_modified: f64,
    /// See `min_clearance_recorded`.
    pub min_clearance_reduced: f64,
    /// Median clearance of the free interior nodes (m): recorded, modified.
    pub median_free_clearance_recorded: f64,
    /// See `median_free_clearance_recorded`.
    pub median_free_clearance_modified: f64,
    /// Free interior nodes in contact with something (unwanted contacts): recorded, modified.
    pub unwanted_contacts_recorded: usize,
    /// See `unwanted_contacts_recorded`.
    pub unwanted_contacts_modified: usize,
    /// Nodes inside required spans (modified path).
    pub required_nodes: usize,
    /// Every node of every required span keeps all its required contacts (modified path), and
    /// the reduced path's span segments keep them too.
    pub required_kept: bool,
    /// Sweeps until stable.
    pub sweeps: usize,
    /// Time to stabilise (s).
    pub seconds: f64,
    /// Did it stabilise?
    pub stabilised: bool,
}

/// Everything the pipeline produced.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// The path as given.
    pub recorded: WorkpiecePath,
    /// After thinning (the band's starting nodes).
    pub working: WorkpiecePath,
    /// Index in `recorded` of each working node.
    pub working_index: Vec<usize>,
    /// After stretching and shrinking.
    pub modified: WorkpiecePath,
    /// After node reduction.
    pub reduced: WorkpiecePath,
    /// Index in `modified` of each reduced node.
    pub reduced_index: Vec<usize>,
    /// The band's report.
    pub shrink: ShrinkReport,
    /// The robot motion commands.
    pub commands: Vec<MotionCommand>,
    /// The figures.
    pub stats: PathStats,
}

/// Checks, thins, shrinks and reduces `recorded` and makes the motion commands.
pub fn shrink_program(
    env: Arc<Environment>,
    recorded: WorkpiecePath,
    params: &ProgramParams,
) -> Result<Outcome, PathShrinkError> {
    params.validate()?;
    let eps_c = params.sim.contact_distance;
    let mut ws = QueryWorkspace::new();
    recorded.validate(&env, eps_c, &mut ws)?;
    let (working, working_index) = thin(&recorded, &env, params.shrink.node_spacing, &mut ws);
    let mut modified = working.clone();
    let mut sim = ContactSimulator::new(env.clone(), params.sim)?;
    // Every node kept: coarse to fine (the same criterion at full resolution, far fewer
    // sweeps than relaxing all nodes from the recording).
    let report = if params.shrink.node_spacing > 0.0 {
        shrink(&mut sim, &mut modified, &params.shrink)
    } else {
        shrink_coarse_to_fine(&mut sim, &mut modified, &params.shrink, COARSE_SPACING).combined()
    };
    let (reduced, reduced_index) = reduce(&env, &modified, &params.reduce, eps_c, &mut ws);
    let commands = motion_commands(&env, &reduced, &params.motion, eps_c, &mut ws);
    let stats = stats(
        &env, &recorded, &modified, &reduced, &report, params, &mut ws,
    );
    Ok(Outcome {
        recorded,
        working,
        working_index,
        modified,
        reduced,
        reduced_index,
        shrink: report,
        commands,
        stats,
    })
}

fn in_span(path: &WorkpiecePath, k: usize) -> bool {
    path.spans.iter().any(|s| (s.first..=s.last).contains(&k))
}

fn free_segment(path: &WorkpiecePath, k: usize) -> bool {
    !path.spans.iter().any(|s| s.first <= k && k < s.last)
}

fn min_free_clearance(env: &Environment, path: &WorkpiecePath, ws: &mut QueryWorkspace) -> f64 {
    (0..path.nodes.len().saturating_sub(1))
        .filter(|&k| free_segment(path, k))
        .map(|k| sampled_clearance(env, &path.nodes[k].pose, &path.nodes[k + 1].pose, 5e-4, ws).0)
        .fold(f64::INFINITY, f64::min)
}

fn free_nodes(path: &WorkpiecePath) -> Vec<usize> {
    let fixed = path.fixed();
    (0..path.nodes.len())
        .filter(|&k| !fixed[k] && !in_span(path, k))
        .collect()
}

fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Do all required contacts hold at every node of every span, and along the span segments
/// (sampled every `step` of motion, within `within`)?
pub fn required_kept(
    env: &Environment,
    path: &WorkpiecePath,
    within: f64,
    step: f64,
    ws: &mut QueryWorkspace,
) -> bool {
    let c = env.workpiece.centre;
    path.spans.iter().all(|s| {
        (s.first..s.last).all(|k| {
            let (a, b) = (&path.nodes[k].pose, &path.nodes[k + 1].pose);
            let (dp, dr) = crate::geometry::difference(a, b, &c);
            let motion = dp.norm() + dr.norm() * env.workpiece.radius;
            let n = ((motion / step).ceil() as usize).clamp(1, 100_000);
            (0..=n).all(|j| {
                let q = crate::geometry::interpolate(a, b, &c, j as f64 / n as f64);
                s.objects
                    .iter()
                    .all(|&o| env.distance(&q, o, within, ws).is_some())
            })
        })
    })
}

fn stats(
    env: &Environment,
    recorded: &WorkpiecePath,
    modified: &WorkpiecePath,
    reduced: &WorkpiecePath,
    report: &ShrinkReport,
    params: &ProgramParams,
    ws: &mut QueryWorkspace,
) -> PathStats {
    let eps_c = params.sim.contact_distance;
    let free_clear = |p: &WorkpiecePath, ws: &mut QueryWorkspace| {
        free_nodes(p)
            .iter()
            .map(|&k| {
                env.clearance(&p.nodes[k].pose, ws)
                    .map_or(f64::INFINITY, |c| c.0)
            })
            .collect::<Vec<f64>>()
    };
    let unwanted = |p: &WorkpiecePath| {
        free_nodes(p)
            .iter()
            .filter(|&&k| !p.nodes[k].contacts.is_empty())
            .count()
    };
    PathStats {
        length_recorded: recorded.length(env),
        length_modified: modified.length(env),
        length_reduced: reduced.length(env),
        nodes_recorded: recorded.nodes.len(),
        nodes_working: modified.nodes.len(),
        nodes_reduced: reduced.nodes.len(),
        min_clearance_recorded: min_free_clearance(env, recorded, ws),
        min_clearance_modified: min_free_clearance(env, modified, ws),
        min_clearance_reduced: min_free_clearance(env, reduced, ws),
        median_free_clearance_recorded: median(free_clear(recorded, ws)),
        median_free_clearance_modified: median(free_clear(modified, ws)),
        unwanted_contacts_recorded: unwanted(recorded),
        unwanted_contacts_modified: unwanted(modified),
        required_nodes: (0..modified.nodes.len())
            .filter(|&k| in_span(modified, k))
            .count(),
        required_kept: required_kept(env, modified, eps_c, 5e-4, ws)
            && required_kept(
                env,
                reduced,
                eps_c + params.reduce.position_tolerance,
                params.reduce.check_step,
                ws,
            ),
        sweeps: report.sweeps,
        seconds: report.seconds,
        stabilised: report.stabilised,
    }
}
