//! The operator's demonstration (§4, §5): the dragger's virtual force moves the workpiece
//! through the contact simulator; while recording, every step's pose and contact state
//! becomes a node of the workpiece path, and the times the operator asked for capture objects
//! become required-contact spans.

use std::sync::Arc;

use crate::environment::Environment;
use crate::error::PathShrinkError;
use crate::geometry::{Pose, Wrench};
use crate::path::{PathNode, RequiredSpan, WorkpiecePath};
use crate::sim::{ContactSimulator, SimParams, StepReport};

/// A demonstration in progress.
#[derive(Debug)]
pub struct Demonstration {
    sim: ContactSimulator,
    start: Pose,
    pose: Pose,
    recording: bool,
    nodes: Vec<PathNode>,
    spans: Vec<RequiredSpan>,
    capture: Vec<usize>,
    /// First node of the open span (all capture objects in contact since).
    open: Option<usize>,
    steps: u64,
}

impl Demonstration {
    /// The workpiece at `start` in `env`.
    pub fn new(
        env: Arc<Environment>,
        params: SimParams,
        start: Pose,
    ) -> Result<Demonstration, PathShrinkError> {
        Ok(Demonstration {
            sim: ContactSimulator::new(env, params)?,
            start,
            pose: start,
            recording: false,
            nodes: Vec::new(),
            spans: Vec::new(),
            capture: Vec::new(),
            open: None,
            steps: 0,
        })
    }

    /// The simulator (environment, parameters, last contacts).
    pub fn simulator(&self) -> &ContactSimulator {
        &self.sim
    }

    /// Where the workpiece is.
    pub fn pose(&self) -> &Pose {
        &self.pose
    }

    /// Is a path being recorded?
    pub fn is_recording(&self) -> bool {
        self.recording
    }

    /// Nodes recorded so far.
    pub fn recorded(&self) -> usize {
        self.nodes.len()
    }

    /// The nodes recorded so far.
    pub fn nodes(&self) -> &[PathNode] {
        &self.nodes
    }

    /// Simulator steps since the start or the last reset.
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// The capture objects.
    pub fn capture(&self) -> &[usize] {
        &self.capture
    }

    /// One simulator step under the dragger's wrench; records the new node when recording.
    /// A wrench that is not finite moves nothing and is refused.
    pub fn step(&mut self, dragger: &Wrench) -> Result<StepReport, PathShrinkError> {
        if !dragger.is_finite() {
            return Err(PathShrinkError::Path(
                "the dragger wrench is not finite".into(),
            ));
        }
        let capture = self.capture.clone();
        let r = self.sim.step(&self.pose, dragger, &capture);
        self.pose = r.pose;
        self.steps += 1;
        if self.recording {
            let node = PathNode {
                pose: self.pose,
                contacts: self.sim.touching().to_vec(),
            };
            self.nodes.push(node);
            self.track_span();
        }
        Ok(r)
    }

    /// Starts (or restarts) recording at the current pose.
    pub fn start_recording(&mut self) {
        self.recording = true;
        self.nodes.clear();
        self.spans.clear();
        self.open = None;
        let contacts = self.sim.environment().touching(
            &self.pose,
            self.sim.params().contact_distance,
            &mut rpq_proximity::QueryWorkspace::new(),
        );
        self.nodes.push(PathNode {
            pose: self.pose,
            contacts,
        });
        self.track_span();
    }

    /// The obstacles whose contact the workpiece keeps from now on (once made); changing them
    /// ends the current required span.
    pub fn set_capture(&mut self, objects: Vec<usize>) {
        if objects != self.capture {
            self.close_span();
            self.capture = objects;
            if self.recording {
                self.track_span();
            }
        }
    }

    /// Stops recording; returns the recorded path with its required spans.
    pub fn finish(&mut self) -> WorkpiecePath {
        self.close_span();
        self.recording = false;
        WorkpiecePath {
            nodes: std::mem::take(&mut self.nodes),
            spans: std::mem::take(&mut self.spans),
        }
    }

    /// Back to the start pose; recording and capture end.
    pub fn reset(&mut self) {
        self.pose = self.start;
        self.recording = false;
        self.nodes.clear();
        self.spans.clear();
        self.capture.clear();
        self.open = None;
        self.steps = 0;
    }

    /// Opens a span when every capture object touches the newest node; closes it when one
    /// does not.
    fn track_span(&mut self) {
        let Some(last) = self.nodes.last() else {
            return;
        };
        let all =
            !self.capture.is_empty() && self.capture.iter().all(|o| last.contacts.contains(o));
        let k = self.nodes.len() - 1;
        match (all, self.open) {
            (true, None) => self.open = Some(k),
            (false, Some(_)) => {
                // The span ends at the node before.
                if let Some(n) = self.nodes.pop() {
                    self.close_span();
                    self.nodes.push(n);
                }
            }
            _ => {}
        }
    }

    fn close_span(&mut self) {
        if let Some(first) = self.open.take() {
            let last = self.nodes.len().saturating_sub(1);
            if last > first {
                self.spans.push(RequiredSpan {
                    first,
                    last,
                    objects: self.capture.clone(),
                });
            }
        }
    }
}
