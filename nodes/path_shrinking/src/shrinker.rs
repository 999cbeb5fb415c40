//! The node's request handling: from a workpiece path and names of the scene to the result
//! message, the joint trajectory to send and the figures, never panicking on bad input. Bad
//! requests are refused with a message naming the problem before anything is computed or
//! sent.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use rpq_base::file::FileArea;
use rpq_pathshrink::program::{shrink_program, Outcome, ProgramParams};
use rpq_pathshrink::robot::{joint_program, scene_robots, JointProgram};
use rpq_pathshrink::task::plot;
use rpq_pathshrink::{Environment, PathNode, WorkpiecePath};
use rpq_proximity::QueryWorkspace;
use rpq_ros::interfaces::rpq_interfaces::msg::ShrunkPath;
use rpq_ros::interfaces::rpq_interfaces::srv::ShrinkPathRequest;
use rpq_ros::msg::builtin_interfaces::Time;
use rpq_scene::spec::LoadedScene;
use rpq_scene::Robot;

use crate::convert::{pose_from_msg, result_msg, spans_from_msg};

/// Largest figure file read back from the plot folder (bytes).
const MAX_FIGURE_BYTES: u64 = 64 << 20;

/// What a computation produced.
#[derive(Debug)]
pub struct Computed {
    /// The result message.
    pub result: ShrunkPath,
    /// The joint trajectory, when the scene has a robot.
    pub program: Option<JointProgram>,
    /// A one-line summary for the log and the reply.
    pub summary: String,
}

/// The scene, the robot and the parameters; cheap to clone (shared), so a computation can
/// run off the node's event loop.
#[derive(Clone, Debug)]
pub struct Shrinker {
    scene: Arc<LoadedScene>,
    robot: Option<Robot>,
    params: ProgramParams,
    frame: String,
    figures: Option<Arc<FileArea>>,
    max_nodes: usize,
}

impl Shrinker {
    /// A shrinker of `scene`; `robot`: the name of the executing robot ("" the first one);
    /// `output_directory`: where figures go ("" none).
    pub fn new(
        scene: LoadedScene,
        robot: &str,
        params: ProgramParams,
        frame: &str,
        output_directory: &str,
        max_nodes: usize,
    ) -> Result<Shrinker, String> {
        let robots: Vec<&Robot> = scene_robots(&scene.scenario).collect();
        let robot = if robot.is_empty() {
            robots.first().map(|r| (*r).clone())
        } else {
            Some(
                robots
                    .iter()
                    .find(|r| r.name() == robot)
                    .map(|r| (*r).clone())
                    .ok_or_else(|| format!("robot `{robot}` is not in the scene"))?,
            )
        };
        if let Some(r) = &robot {
            if r.ik().is_none() {
                return Err(format!(
                    "robot `{}` is not an RX60-type arm (no closed-form IK)",
                    r.name()
                ));
            }
        }
        let figures = if output_directory.is_empty() {
            None
        } else {
            Some(Arc::new(FileArea::new(output_directory, true).map_err(
                |e| format!("output_directory {output_directory}: {e}"),
            )?))
        };
        Ok(Shrinker {
            scene: Arc::new(scene),
            robot,
            params,
            frame: frame.to_string(),
            figures,
            max_nodes,
        })
    }

    /// The robot, if the scene has one.
    pub fn robot(&self) -> Option<&Robot> {
        self.robot.as_ref()
    }

    /// The pipeline's parameters.
    pub fn params(&self) -> &ProgramParams {
        &self.params
    }

    /// The world frame.
    pub fn frame(&self) -> &str {
        &self.frame
    }

    /// Largest number of path nodes.
    pub fn max_nodes(&self) -> usize {
        self.max_nodes
    }

    /// The environment of a workpiece and obstacles named in the scene, and the workpiece's
    /// scene pose.
    pub fn environment(
        &self,
        workpiece: &str,
        obstacles: &[String],
    ) -> Result<(Arc<Environment>, nalgebra::Isometry3<f64>), String> {
        if workpiece.is_empty() {
            return Err("no workpiece named".into());
        }
        Environment::from_scene(&self.scene, workpiece, obstacles)
            .map(|(e, p)| (Arc::new(e), p))
            .map_err(|e| e.to_string())
    }

    /// Checks the parts of a request that need no computation: figure name, execution
    /// possible, size. `joints`: the robot's fresh joint state, if any.
    pub fn precheck(
        &self,
        nodes: usize,
        figures: &str,
        execute: bool,
        joints: Option<&[f64; 6]>,
    ) -> Result<(), String> {
        if nodes > self.max_nodes {
            return Err(format!(
                "the path has {nodes} poses, more than max_path_nodes ({})",
                self.max_nodes
            ));
        }
        if !figures.is_empty() {
            let Some(area) = &self.figures else {
                return Err(
                    "figures asked for, but the node has no output_directory: nothing written"
                        .into(),
                );
            };
            for suffix in ["_top.svg", "_side.png"] {
                area.check_name(&format!("{figures}{suffix}"))
                    .map_err(|e| format!("figures `{figures}`: {e}"))?;
            }
            if figures.contains('/') {
                return Err(format!("figures `{figures}`: a name without `/` is needed"));
            }
        }
        if execute {
            if self.robot.is_none() {
                return Err("execute asked for, but the scene has no robot: nothing sent".into());
            }
            if joints.is_none() {
                return Err(
                    "execute asked for, but there is no fresh joint state of the robot \
                     (robot_io.joint_states_topic): nothing sent"
                        .into(),
                );
            }
        }
        Ok(())
    }

    /// The workpiece path of a `~/shrink_path` request, checked, and its environment.
    pub fn path_of(
        &self,
        req: &ShrinkPathRequest,
    ) -> Result<(Arc<Environment>, WorkpiecePath, String), String> {
        let (env, _) = self.environment(&req.workpiece, &req.obstacles)?;
        if !req.in_contact.is_empty() && req.in_contact.len() != req.poses.len() {
            return Err(format!(
                "in_contact has {} flags for {} poses (give one per pose, or none)",
                req.in_contact.len(),
                req.poses.len()
            ));
        }
        let mut nodes = Vec::with_capacity(req.poses.len());
        for (k, p) in req.poses.iter().enumerate() {
            nodes.push(PathNode {
                pose: pose_from_msg(&format!("poses[{k}]"), p)?,
                contacts: Vec::new(),
            });
        }
        let spans = spans_from_msg(&env, &req.required_contacts)?;
        let mut ws = QueryWorkspace::new();
        let poses: Vec<_> = nodes.iter().map(|n| n.pose).collect();
        let path = WorkpiecePath::from_poses(
            &env,
            &poses,
            spans,
            self.params.sim.contact_distance,
            &mut ws,
        );
        let mismatched = req
            .in_contact
            .iter()
            .zip(&path.nodes)
            .filter(|(flag, n)| **flag == n.contacts.is_empty())
            .count();
        let note = if mismatched > 0 {
            format!(
                "; {mismatched} contact flag(s) disagree with the scene (contact state recomputed)"
            )
        } else {
            String::new()
        };
        Ok((env, path, note))
    }

    /// Shrinks `path`, makes the program (with `start`: the robot's current joints) and the
    /// figures. Any error names the problem.
    pub fn compute(
        &self,
        env: Arc<Environment>,
        path: WorkpiecePath,
        figures: &str,
        start: Option<[f64; 6]>,
        stamp: Time,
    ) -> Result<Computed, String> {
        let out = shrink_program(env.clone(), path, &self.params).map_err(|e| e.to_string())?;
        let program = match &self.robot {
            Some(r) => Some(
                joint_program(
                    &env,
                    r,
                    &out.commands,
                    &self.params.motion.grasp(&env),
                    start.as_ref(),
                    &self.params.robot,
                )
                .map_err(|e| e.to_string())?,
            ),
            None => None,
        };
        let files = if figures.is_empty() {
            Vec::new()
        } else {
            self.write_figures(&env, &out, figures)?
        };
        let s = &out.stats;
        let summary = format!(
            "{} nodes -> {} modified ({} sweeps, {:.0} ms{}) -> {} reduced; length {:.1} -> {:.1} mm; \
             required contacts kept: {}{}",
            s.nodes_recorded,
            s.nodes_working,
            s.sweeps,
            s.seconds * 1e3,
            if s.stabilised { "" } else { ", not stabilised" },
            s.nodes_reduced,
            s.length_recorded * 1e3,
            s.length_modified * 1e3,
            if s.required_kept { "yes" } else { "no" },
            program
                .as_ref()
                .map(|p| format!(
                    "; trajectory of {} points, {:.1} s",
                    p.points.len(),
                    p.points.last().map_or(0.0, |x| x.time)
                ))
                .unwrap_or_default()
        );
        Ok(Computed {
            result: result_msg(&env, &out, program.as_ref(), files, &self.frame, stamp),
            program,
            summary,
        })
    }

    /// Draws the figures into a private temporary folder and copies them into the output
    /// area (the only place the node writes).
    fn write_figures(
        &self,
        env: &Environment,
        out: &Outcome,
        stem: &str,
    ) -> Result<Vec<String>, String> {
        static SEQ: AtomicU64 = AtomicU64::new(0);
        let area = self.figures.as_ref().ok_or("no output_directory")?;
        let tmp: PathBuf = std::env::temp_dir().join(format!(
            "path_shrinking_{}_{}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        ));
        let drawn = plot(stem, env, out, &tmp);
        let result = drawn
            .map_err(|e| format!("figures: {e}"))
            .and_then(|files| {
                let mut names = Vec::new();
                for f in files {
                    let name = f
                        .file_name()
                        .and_then(|n| n.to_str())
                        .ok_or("figure name")?
                        .to_string();
                    let bytes = rpq_base::file::read_bounded(&f, MAX_FIGURE_BYTES)
                        .map_err(|e| format!("figure {name}: {e}"))?;
                    area.write(&name, &bytes)
                        .map_err(|e| format!("figure {name}: {e}"))?;
                    names.push(name);
                }
                Ok(names)
            });
        let _ = std::fs::remove_dir_all(&tmp);
        result
    }
}
