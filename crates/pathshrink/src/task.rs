//! The two tasks of Fig. 4 run end to end in the puzzle scene: the scripted operator's
//! demonstration ([`demonstrate`]), then the program ([`crate::program::shrink_program`]), a
//! table ([`table`]) and plots like Fig. 4 (`plot`, with the `plots` feature).

#[cfg(feature = "plots")]
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[cfg(feature = "plots")]
use rpq_plot::Figure;
#[cfg(feature = "plots")]
use rpq_proximity::QueryWorkspace;
use rpq_scene::spec::LoadedScene;

use crate::demo::Demonstration;
use crate::environment::Environment;
use crate::error::PathShrinkError;
use crate::geometry::{Pose, Wrench};
use crate::operator::{ScriptedOperator, Task};
use crate::path::WorkpiecePath;
#[cfg(feature = "plots")]
use crate::program::Outcome;
use crate::program::PathStats;
use crate::robot::JointProgram;
use crate::sim::SimParams;

/// Seed of the operator's wander in the reproduction.
pub const SEED: u64 = 0x0F16_4A11;

/// A finished demonstration.
#[derive(Clone, Debug)]
pub struct Demonstrated {
    /// Workpiece and obstacles.
    pub env: Arc<Environment>,
    /// The workpiece's start pose.
    pub start: Pose,
    /// The recorded path with its required spans.
    pub path: WorkpiecePath,
    /// The dragger wrench and capture objects of every step, in order (what a bag of the
    /// demonstration holds).
    pub inputs: Vec<(Wrench, Vec<usize>)>,
}

/// Runs the scripted operator of `task` through the contact simulator in `scene`, recording
/// from the first step.
pub fn demonstrate(
    task: Task,
    scene: &LoadedScene,
    params: &SimParams,
    seed: u64,
) -> Result<Demonstrated, PathShrinkError> {
    let (env, start) = Environment::from_scene(scene, task.workpiece(), &[])?;
    let env = Arc::new(env);
    let mut demo = Demonstration::new(env.clone(), *params, start)?;
    let mut op = ScriptedOperator::new(task, params.time_step, seed);
    demo.start_recording();
    let mut inputs = Vec::new();
    while let Some((w, names)) = op.next(&(demo.pose() * env.workpiece.centre).coords) {
        let capture = names
            .iter()
            .map(|n| env.obstacle_index(n))
            .collect::<Result<Vec<_>, _>>()?;
        demo.set_capture(capture.clone());
        demo.step(&w)?;
        inputs.push((w, capture));
    }
    let path = demo.finish();
    Ok(Demonstrated {
        env,
        start,
        path,
        inputs,
    })
}

fn mm(x: f64) -> String {
    if x.is_finite() {
        format!("{:.1}", x * 1e3)
    } else {
        "—".into()
    }
}

/// The table of one task (Markdown).
pub fn table(task: Task, s: &PathStats, program: Option<&JointProgram>) -> String {
    let yes = |b: bool| if b { "yes" } else { "no" };
    let mut t = format!(
        "| {} | recorded | modified | reduced |\n|---|---|---|---|\n",
        task.name()
    );
    t += &format!(
        "| path length (mm) | {} | {} | {} |\n",
        mm(s.length_recorded),
        mm(s.length_modified),
        mm(s.length_reduced)
    );
    t += &format!(
        "| nodes | {} | {} (thinned to ~15 mm) | {} |\n",
        s.nodes_recorded, s.nodes_working, s.nodes_reduced
    );
    t += &format!(
        "| minimum clearance on free segments (mm) | {} | {} | {} |\n",
        mm(s.min_clearance_recorded),
        mm(s.min_clearance_modified),
        mm(s.min_clearance_reduced)
    );
    t += &format!(
        "| median clearance of free nodes (mm) | {} | {} | |\n",
        mm(s.median_free_clearance_recorded),
        mm(s.median_free_clearance_modified)
    );
    t += &format!(
        "| free nodes in (unwanted) contact | {} | {} | |\n",
        s.unwanted_contacts_recorded, s.unwanted_contacts_modified
    );
    t += &format!(
        "| required contact kept at every node | | {} ({} nodes in spans) | {} |\n",
        yes(s.required_kept),
        s.required_nodes,
        yes(s.required_kept)
    );
    t += &format!(
        "| sweeps / time to stabilise | | {} / {:.1} ms{} | |\n",
        s.sweeps,
        s.seconds * 1e3,
        if s.stabilised {
            ""
        } else {
            " (not stabilised)"
        }
    );
    if let Some(p) = program {
        t += &format!(
            "| RX60 trajectory | | | {} points, {:.1} s, {}, line error {:.2} mm / {:.4} rad |\n",
            p.points.len(),
            p.points.last().map_or(0.0, |x| x.time),
            crate::robot::config_name(p.configuration),
            p.max_position_error * 1e3,
            p.max_orientation_error
        );
    }
    t
}

/// Writes the plots of a program into `dir` (SVG and PNG): top view, side view and the
/// clearance profile, as `<name>_top`, `<name>_side`, `<name>_clearance`. Returns the written
/// files. Needs the `plots` feature.
#[cfg(feature = "plots")]
pub fn plot(
    name: &str,
    env: &Environment,
    o: &Outcome,
    dir: &Path,
) -> Result<Vec<PathBuf>, PathShrinkError> {
    let c = env.workpiece.centre;
    let xy = |p: &WorkpiecePath| -> Vec<(f64, f64)> {
        p.nodes
            .iter()
            .map(|n| {
                let q = n.pose * c;
                (q.x * 1e3, q.y * 1e3)
            })
            .collect()
    };
    let xz = |p: &WorkpiecePath| -> Vec<(f64, f64)> {
        p.nodes
            .iter()
            .map(|n| {
                let q = n.pose * c;
                (q.x * 1e3, q.z * 1e3)
            })
            .collect()
    };
    let kept: Vec<usize> = (0..o.modified.nodes.len())
        .filter(|&k| {
            o.modified
                .spans
                .iter()
                .any(|s| (s.first..=s.last).contains(&k))
        })
        .collect();
    let pick = |v: &[(f64, f64)], idx: &[usize]| idx.iter().map(|&k| v[k]).collect::<Vec<_>>();
    let err = |e: rpq_plot::PlotError| PathShrinkError::Io {
        path: dir.display().to_string(),
        message: e.to_string(),
    };
    let mut files = Vec::new();

    // Top view with the objects' outlines (the table is the background).
    let mut top = Figure::new(&format!("{name}: top view"), "x (mm)", "y (mm)")
        .equal_axes(true)
        .size(900, 800);
    for ob in env.obstacles.iter().filter(|o| o.name != "table") {
        let outline: Vec<(f64, f64)> = ob
            .footprint()
            .iter()
            .map(|(x, y)| (x * 1e3, y * 1e3))
            .collect();
        top = top.line(&ob.name, &outline);
    }
    let (rec, modi, red) = (xy(&o.recorded), xy(&o.modified), xy(&o.reduced));
    top = top
        .line("recorded path", &rec)
        .line("modified path", &modi)
        .points("reduced nodes", &red);
    if !kept.is_empty() {
        top = top.points("required-contact nodes", &pick(&modi, &kept));
    }
    let (a, b) = top.save(dir.join(format!("{name}_top"))).map_err(err)?;
    files.extend([a, b]);

    // Side view.
    let mut side = Figure::new(
        &format!("{name}: side view (workpiece centre)"),
        "x (mm)",
        "z (mm)",
    )
    .size(900, 500);
    side = side
        .line("recorded path", &xz(&o.recorded))
        .line("modified path", &xz(&o.modified))
        .points("reduced nodes", &xz(&o.reduced));
    if !kept.is_empty() {
        side = side.points("required-contact nodes", &pick(&xz(&o.modified), &kept));
    }
    let (a, b) = side.save(dir.join(format!("{name}_side"))).map_err(err)?;
    files.extend([a, b]);

    // Clearance along the path (fraction of the arc length).
    let mut ws = QueryWorkspace::new();
    let profile = |p: &WorkpiecePath, ws: &mut QueryWorkspace| -> Vec<(f64, f64)> {
        let total = p.length(env).max(1e-12);
        let mut s = 0.0;
        let mut out = Vec::new();
        for (k, n) in p.nodes.iter().enumerate() {
            if k > 0 {
                s += ((n.pose * c) - (p.nodes[k - 1].pose * c)).norm();
            }
            let d = env.clearance(&n.pose, ws).map_or(f64::NAN, |x| x.0);
            out.push((s / total, d * 1e3));
        }
        out
    };
    let clear = Figure::new(
        &format!("{name}: clearance to the nearest object"),
        "fraction of path length",
        "clearance (mm)",
    )
    .size(900, 450)
    .line("recorded", &profile(&o.recorded, &mut ws))
    .line("modified", &profile(&o.modified, &mut ws))
    .points("modified nodes", &profile(&o.modified, &mut ws));
    let (a, b) = clear
        .save(dir.join(format!("{name}_clearance")))
        .map_err(err)?;
    files.extend([a, b]);
    Ok(files)
}
