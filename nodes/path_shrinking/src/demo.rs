//! The demonstration mode: every `geometry_msgs/WrenchStamped` of the operator's dragger is one
//! step of the contact simulator; `~/start_recording`, `~/set_capture` and `~/finish` turn the
//! steps into a recorded workpiece path with required spans.

use std::sync::Arc;

use nalgebra::Vector3;
use rpq_pathshrink::demo::Demonstration;
use rpq_pathshrink::{Environment, Pose, WorkpiecePath, Wrench};
use rpq_ros::interfaces::rpq_interfaces::msg::RequiredContact;
use rpq_ros::msg::geometry_msgs::WrenchStamped;

use crate::convert::spans_from_msg;
use crate::shrinker::Shrinker;

/// The demonstration's state.
#[derive(Debug)]
pub struct DemoState {
    env: Arc<Environment>,
    demo: Demonstration,
    max_nodes: usize,
    /// A recording that reached `max_nodes`: kept until `~/finish`.
    full: Option<WorkpiecePath>,
}

impl DemoState {
    /// The workpiece `workpiece` among `obstacles` (empty: every other mesh object) at its
    /// scene pose; recording from the start when `record` is true.
    pub fn new(
        shrinker: &Shrinker,
        workpiece: &str,
        obstacles: &[String],
        record: bool,
    ) -> Result<DemoState, String> {
        let (env, start) = shrinker.environment(workpiece, obstacles)?;
        let mut demo = Demonstration::new(env.clone(), shrinker.params().sim, start)
            .map_err(|e| e.to_string())?;
        if record {
            demo.start_recording();
        }
        Ok(DemoState {
            env,
            demo,
            max_nodes: shrinker.max_nodes(),
            full: None,
        })
    }

    /// The environment.
    pub fn env(&self) -> &Arc<Environment> {
        &self.env
    }

    /// Where the workpiece is.
    pub fn pose(&self) -> Pose {
        *self.demo.pose()
    }

    /// The recorded nodes' poses (so far).
    pub fn recorded(&self) -> Vec<Pose> {
        match &self.full {
            Some(p) => p.poses(),
            None => self.demo.nodes().iter().map(|n| n.pose).collect(),
        }
    }

    /// Is it recording?
    pub fn is_recording(&self) -> bool {
        self.demo.is_recording()
    }

    /// One simulator step under the dragger wrench (world frame, moment about the workpiece
    /// centre). Returns a warning when the recording just reached `max_nodes`.
    pub fn on_wrench(&mut self, w: &WrenchStamped) -> Result<Option<String>, String> {
        let (f, t) = (&w.wrench.force, &w.wrench.torque);
        let wrench = Wrench {
            force: Vector3::new(f.x, f.y, f.z),
            torque: Vector3::new(t.x, t.y, t.z),
        };
        self.demo.step(&wrench).map_err(|e| e.to_string())?;
        if self.demo.is_recording() && self.demo.recorded() >= self.max_nodes {
            self.full = Some(self.demo.finish());
            return Ok(Some(format!(
                "the recording reached max_path_nodes ({}): it stops growing; call ~/finish",
                self.max_nodes
            )));
        }
        Ok(None)
    }

    /// Starts (or restarts) recording at the current pose.
    pub fn start_recording(&mut self) {
        self.full = None;
        self.demo.start_recording();
    }

    /// Sets the capture objects by name.
    pub fn set_capture(&mut self, names: &[String]) -> Result<(), String> {
        let ids = names
            .iter()
            .map(|n| self.env.obstacle_index(n).map_err(|e| e.to_string()))
            .collect::<Result<Vec<_>, _>>()?;
        self.demo.set_capture(ids);
        Ok(())
    }

    /// Ends the recording: the path with the capture spans and `extra` spans. Refused when
    /// nothing is being recorded.
    pub fn finish(&mut self, extra: &[RequiredContact]) -> Result<WorkpiecePath, String> {
        let mut path = match self.full.take() {
            Some(p) => p,
            None if self.demo.is_recording() => self.demo.finish(),
            None => return Err("not recording: call ~/start_recording first".into()),
        };
        path.spans.extend(spans_from_msg(&self.env, extra)?);
        Ok(path)
    }

    /// The workpiece back to its start; recording and capture end.
    pub fn reset(&mut self) {
        self.full = None;
        self.demo.reset();
    }
}
