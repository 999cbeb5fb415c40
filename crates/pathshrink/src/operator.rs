//! A scripted operator for the two tasks of Fig. 4, in the puzzle scene of [`crate::puzzle`].
//!
//! The operator drags the workpiece with the dragger fixture: the virtual force is a spring
//! from the workpiece centre to a target point, `k (target − centre)`, limited to
//! `max_force`, plus a slow lateral wander (two sinusoids of random phase, as an operator
//! "feeling her way around"). The targets change phase by phase; some phases ask for capture
//! objects. The wander and the alignment against the outside of the frame make the recorded
//! path wander and touch objects it need not touch, as the paper describes.

use nalgebra::Vector3;
use rpq_base::SplitMix64;

use crate::geometry::{Pose, Wrench};
use crate::puzzle::{BLOCK, FRAME_CENTRE, FRAME_INNER, FRAME_WALL, REST_GAP};

/// Which task.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Task {
    /// Fig. 4 left: the block is aligned against the outside of the frame, lifted over the
    /// wall and pushed into the frame's inner corner.
    Cornering,
    /// Fig. 4 right: the block is dragged around the outside corner of the frame keeping
    /// contact with the frame and the table.
    CornerRounding,
}

impl Task {
    /// Both tasks.
    pub const ALL: [Task; 2] = [Task::Cornering, Task::CornerRounding];

    /// Short name (file stems).
    pub fn name(self) -> &'static str {
        match self {
            Task::Cornering => "cornering",
            Task::CornerRounding => "corner_rounding",
        }
    }

    /// The workpiece of the task in the puzzle scene.
    pub fn workpiece(self) -> &'static str {
        match self {
            Task::Cornering => "block_1",
            Task::CornerRounding => "block_2",
        }
    }
}

/// One phase of the script.
#[derive(Clone, Debug, PartialEq)]
pub struct Phase {
    /// What the operator does.
    pub what: &'static str,
    /// Target of the dragger spring (m, world).
    pub target: [f64; 3],
    /// Duration (s).
    pub duration: f64,
    /// Objects to keep contact with during the phase.
    pub capture: Vec<&'static str>,
}

/// The script of a task.
pub fn script(task: Task) -> Vec<Phase> {
    let [fx, fy] = FRAME_CENTRE;
    let half = BLOCK / 2.0;
    let outer = FRAME_INNER + FRAME_WALL;
    // Inner corner (+x, -y) of the frame, the block 1 mm from both walls.
    let corner = [
        fx + FRAME_INNER - half - REST_GAP,
        fy - FRAME_INNER + half + REST_GAP,
    ];
    match task {
        Task::Cornering => vec![
            Phase {
                what: "drag to the outside of the frame's east wall and align against it",
                target: [fx + outer + 0.003, fy - 0.025, 0.0],
                duration: 3.5,
                capture: vec![],
            },
            Phase {
                what: "lift above the wall",
                target: [fx + outer + half + 0.002, fy - 0.025, 0.055],
                duration: 1.5,
                capture: vec![],
            },
            Phase {
                what: "carry over the wall",
                target: [corner[0], corner[1], 0.055],
                duration: 1.5,
                capture: vec![],
            },
            Phase {
                what: "lower into the frame",
                target: [corner[0], corner[1], 0.0],
                duration: 1.5,
                capture: vec![],
            },
            Phase {
                what: "push into the corner",
                target: [corner[0] + 0.02, corner[1] - 0.02, 0.0],
                duration: 1.5,
                capture: vec![],
            },
        ],
        Task::CornerRounding => vec![
            Phase {
                what: "drag against the frame's south wall",
                target: [fx - 0.02, fy - outer + 0.01, 0.0],
                duration: 2.0,
                capture: vec![],
            },
            Phase {
                what: "capture frame and table; slide east and round the corner",
                target: [fx + outer + 0.025, fy - outer + 0.02, 0.0],
                duration: 3.0,
                capture: vec!["frame", "table"],
            },
            Phase {
                what: "slide north along the east wall",
                target: [fx + outer + half - 0.005, fy, 0.0],
                duration: 2.5,
                capture: vec!["frame", "table"],
            },
            Phase {
                what: "release and drag away",
                target: [fx + outer + 0.07, fy + 0.05, 0.0],
                duration: 2.0,
                capture: vec![],
            },
        ],
    }
}

/// The scripted operator.
#[derive(Clone, Debug)]
pub struct ScriptedOperator {
    phases: Vec<Phase>,
    /// Dragger spring [N/m].
    pub stiffness: f64,
    /// Largest dragger force [N].
    pub max_force: f64,
    /// Wander amplitude [N].
    pub wander: f64,
    step: f64,
    t: f64,
    wander_phase: [f64; 2],
}

impl ScriptedOperator {
    /// The operator of `task`, with simulator step `step` (s) and wander from `seed`.
    pub fn new(task: Task, step: f64, seed: u64) -> ScriptedOperator {
        let mut rng = SplitMix64::new(seed);
        ScriptedOperator {
            phases: script(task),
            stiffness: 40.0,
            max_force: 1.5,
            wander: 0.25,
            step,
            t: 0.0,
            wander_phase: [
                rng.range(0.0, std::f64::consts::TAU),
                rng.range(0.0, std::f64::consts::TAU),
            ],
        }
    }

    /// Total duration of the script (s).
    pub fn duration(&self) -> f64 {
        self.phases.iter().map(|p| p.duration).sum()
    }

    /// The phase at the current time, if the script is not over.
    pub fn phase(&self) -> Option<&Phase> {
        let mut t = self.t;
        for p in &self.phases {
            if t < p.duration - 1e-9 {
                return Some(p);
            }
            t -= p.duration;
        }
        None
    }

    /// The dragger wrench for the workpiece centre at `centre` and the capture objects of the
    /// phase; advances the clock by one step. `None` when the script is over.
    pub fn next(&mut self, centre: &Vector3<f64>) -> Option<(Wrench, Vec<&'static str>)> {
        let phase = self.phase()?.clone();
        let spring = (Vector3::from(phase.target) - centre) * self.stiffness;
        let f = if spring.norm() > self.max_force {
            spring * (self.max_force / spring.norm())
        } else {
            spring
        };
        let tau = std::f64::consts::TAU;
        let wander = Vector3::new(
            (tau * 0.4 * self.t + self.wander_phase[0]).sin(),
            (tau * 0.65 * self.t + self.wander_phase[1]).sin(),
            0.0,
        ) * self.wander;
        self.t += self.step;
        Some((Wrench::force(f + wander), phase.capture))
    }
}

/// Runs the pose-dependent operator against `pose` and returns the wrench, for callers that
/// drive a [`crate::demo::Demonstration`] themselves.
pub fn centre_of(pose: &Pose, centre: &nalgebra::Point3<f64>) -> Vector3<f64> {
    (pose * centre).coords
}
