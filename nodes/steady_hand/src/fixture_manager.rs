//! [`FixtureManager`]: the fixtures of the guidance node on plain types — the sources (a
//! polyline path, a plane, a point and the remote-centre-of-motion cone of Marayong et al.), the
//! operator's choice (one source or two combined, and the mode), and a sequence of fixtures with
//! completion criteria. The node `steady_hand_guidance` only converts service requests into the
//! calls below and the evaluated fixture into a `VirtualFixture` message.
//!
//! The fixture evaluated ([`FixtureManager::evaluate`]) is the running sequence step's when a
//! sequence runs (or has finished: the last step holds), otherwise the operator's
//! ([`FixtureManager::set_mode`], [`FixtureManager::combine`], [`FixtureManager::load_path`],
//! [`FixtureManager::set_rcm_cone`]). Choosing a source or a combination stops a running
//! sequence; loading a path or setting the cone only replaces the geometry (steps using it see
//! the new one) and makes it the operator's fixture.
//!
//! ```
//! use nalgebra::{Isometry3, Point3, Translation3, UnitQuaternion, Vector3};
//! use rpq_virtual_fixtures::Guidance;
//! use steady_hand::convert::FixtureMode;
//! use steady_hand::fixture_manager::{FixtureManager, Sources};
//!
//! let sources = Sources::new(
//!     (Point3::new(0.4, 0.0, 0.4), Vector3::z()),
//!     Point3::new(0.4, 0.0, 0.4),
//!     (Point3::new(0.4, 0.0, 0.3), Vector3::z(), 0.3, Vector3::z()),
//!     100.0, 1.0, false,
//! )?;
//! let mut m = FixtureManager::new(sources, "plane", FixtureMode::OpenLoop)?;
//! let tool = Isometry3::from_parts(Translation3::new(0.4, 0.1, 0.45), UnitQuaternion::identity());
//! let mut g = Guidance::empty();
//! let ev = m.evaluate(&tool, &mut g, 0.0)?;
//! assert_eq!(ev.spec.primary, "plane");
//! assert_eq!(g.n(), 2); // the plane's two in-plane translations
//! assert!((g.u[2] + 0.05 * 100.0).abs() < 1e-12); // back to the plane, error_gain 100 /m
//! assert!(m.load_path(&[Point3::origin(), Point3::new(0.1, 0.0, 0.0)]).is_ok());
//! assert_eq!(m.evaluate(&tool, &mut g, 0.1)?.spec.primary, "path");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::path::PathBuf;

use nalgebra::{Isometry3, Point3, Vector3};
use rpq_base::file::FileArea;
use rpq_virtual_fixtures::{
    combine, Combination, Guidance, GuidanceSource, PlaneSurface, PointTarget, PolylinePath,
    RankTolerance, RcmCone, SequenceState, Sequencer, Step, StepProgress, Transition,
};

use crate::convert::{parse_path_text, source, FixtureMode, FixtureSpec};
use crate::NodeError;

/// The guidance sources and their gains.
#[derive(Debug, Clone)]
pub struct Sources {
    path: Option<PolylinePath>,
    plane: PlaneSurface,
    point: PointTarget,
    cone: RcmCone,
    error_gain: f64,
    rcm_error_gain: f64,
    free_rotation: bool,
}

impl Sources {
    /// The plane (a point, the normal), the point target, the cone (centre, axis, half-angle
    /// [rad], tool axis in the tool frame), `error_gain` [1/m] of path, plane and point,
    /// `rcm_error_gain` of the cone, and whether path and plane leave the orientation free.
    pub fn new(
        plane: (Point3<f64>, Vector3<f64>),
        point: Point3<f64>,
        cone: (Point3<f64>, Vector3<f64>, f64, Vector3<f64>),
        error_gain: f64,
        rcm_error_gain: f64,
        free_rotation: bool,
    ) -> Result<Self, NodeError> {
        Ok(Self {
            path: None,
            plane: PlaneSurface::new(plane.0, plane.1, free_rotation)?,
            point: PointTarget { target: point },
            cone: RcmCone::new(cone.0, cone.1, cone.2, cone.3)?.with_error_gain(rcm_error_gain),
            error_gain,
            rcm_error_gain,
            free_rotation,
        })
    }

    fn make_path(&self, pts: &[Point3<f64>]) -> Result<PolylinePath, NodeError> {
        let path = PolylinePath::new(pts)?
            .with_error_gain(self.error_gain)
            .with_free_rotation(self.free_rotation);
        // vertices of 1e300 m are finite, their distances may not be
        if !path.length().is_finite() {
            return Err(NodeError::bad(
                "path",
                "the path's length is not finite (vertices too far apart)",
            ));
        }
        Ok(path)
    }

    /// `D`, `u` of one source at the tool pose `x`.
    fn evaluate_one(
        &mut self,
        name: &str,
        x: &Isometry3<f64>,
        g: &mut Guidance,
    ) -> Result<(), String> {
        match name {
            source::NONE => *g = Guidance::empty(),
            source::PATH => match &mut self.path {
                Some(p) => p.evaluate(x, g),
                None => return Err("no path loaded".into()),
            },
            // the library's plane and point give u in metres; error_gain as documented
            source::PLANE => {
                self.plane.evaluate(x, g);
                g.u *= self.error_gain;
            }
            source::POINT => {
                self.point.evaluate(x, g);
                g.u *= self.error_gain;
            }
            source::RCM_CONE => self.cone.evaluate(x, g),
            other => return Err(format!("unknown fixture type `{other}`")),
        }
        Ok(())
    }

    /// Distance of the tool from a source's objective: m for path, plane and point, rad for
    /// the cone, 0 for none.
    fn error_of(&self, name: &str, x: &Isometry3<f64>) -> f64 {
        let p = Point3::from(x.translation.vector);
        match name {
            source::PATH => self
                .path
                .as_ref()
                .map_or(f64::NAN, |path| path.closest_point(&p).distance),
            source::PLANE => self.plane.signed_distance(&p).abs(),
            source::POINT => (self.point.target - p).norm(),
            source::RCM_CONE => self
                .cone
                .angle_error(&self.cone.tool_direction(&x.rotation.to_rotation_matrix()))
                .abs(),
            _ => 0.0,
        }
    }
}

/// A sequence command (`~/sequence`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SequenceCommand {
    /// Start (or continue) the loaded sequence.
    Start,
    /// Stop it (the operator's fixture is back).
    Stop,
    /// Complete the current step by hand.
    Step,
    /// Back to the first step, ready.
    Reset,
}

/// What one evaluation produced, besides `D` and `u`.
#[derive(Debug, Clone, PartialEq)]
pub struct Evaluated {
    /// The fixture evaluated.
    pub spec: FixtureSpec,
    /// Its mode.
    pub mode: FixtureMode,
    /// The combination was empty here: the primary alone.
    pub fallback: bool,
    /// The sequence step, if a sequence is active.
    pub step: Option<usize>,
    /// The sequence's progress on this evaluation.
    pub transition: Transition,
}

/// The guidance node's fixtures; see the module docs.
#[derive(Debug)]
pub struct FixtureManager {
    sources: Sources,
    active: String,
    /// The operator's combination partner of `active` (`combine`).
    combo: Option<(String, Combination)>,
    mode: FixtureMode,
    seq: Sequencer<FixtureSpec>,
    /// Directory `load_path_file` reads from (`None`: no files).
    path_directory: Option<PathBuf>,
    /// Largest path file read [bytes].
    path_max_size: u64,
}

impl FixtureManager {
    /// The manager with `active` (a `source::*` name) in `mode`; refuses an unknown source or
    /// `path` before a path is loaded (use [`FixtureManager::with_path`]).
    pub fn new(sources: Sources, active: &str, mode: FixtureMode) -> Result<Self, NodeError> {
        let mut m = Self {
            sources,
            active: active.to_string(),
            combo: None,
            mode,
            seq: Sequencer::new(),
            path_directory: None,
            path_max_size: 16 << 20,
        };
        let mut probe = Guidance::empty();
        m.sources
            .evaluate_one(active, &Isometry3::identity(), &mut probe)
            .map_err(|e| NodeError::config("fixture_type", e))?;
        Ok(m)
    }

    /// The start-up path (loaded before `new` checks the active source: pass it here first).
    pub fn with_path(mut sources: Sources, pts: &[Point3<f64>]) -> Result<Sources, NodeError> {
        sources.path = Some(sources.make_path(pts)?);
        Ok(sources)
    }

    /// Where `load_path_file` reads from, and the largest file [bytes].
    pub fn set_path_directory(&mut self, dir: Option<PathBuf>, max_size: u64) {
        self.path_directory = dir;
        self.path_max_size = max_size;
    }

    /// The directory of path files (`None`: no files).
    pub fn path_directory(&self) -> Option<&PathBuf> {
        self.path_directory.as_ref()
    }

    /// The operator's source and mode.
    pub fn active(&self) -> (&str, FixtureMode) {
        (&self.active, self.mode)
    }

    /// The sequence.
    pub fn sequence(&self) -> &Sequencer<FixtureSpec> {
        &self.seq
    }

    /// The fixture that applies now: the sequence's step, else the operator's.
    fn current_spec(&self) -> (FixtureSpec, Option<usize>) {
        match self.seq.active() {
            Some((i, step)) => (step.fixture.clone(), Some(i)),
            None => (
                FixtureSpec {
                    name: String::new(),
                    primary: self.active.clone(),
                    secondary: self.combo.clone(),
                    mode: None,
                },
                None,
            ),
        }
    }

    /// Evaluates the current fixture at the tool pose `x` into `g`, then feeds the sequence
    /// (time `t` [s]).
    pub fn evaluate(
        &mut self,
        x: &Isometry3<f64>,
        g: &mut Guidance,
        t: f64,
    ) -> Result<Evaluated, String> {
        let (spec, step) = self.current_spec();
        self.sources.evaluate_one(&spec.primary, x, g)?;
        let mut fallback = false;
        let mut error = self.sources.error_of(&spec.primary, x);
        if let Some((sec, how)) = &spec.secondary {
            let mut gb = Guidance::empty();
            self.sources.evaluate_one(sec, x, &mut gb)?;
            let c = combine(g, &gb, *how, &RankTolerance::default())
                .ok_or("the combination is not finite at this pose")?;
            *g = c.guidance;
            fallback = c.fallback;
            error = error.max(self.sources.error_of(sec, x));
        }
        let remaining = if spec.uses(source::PATH) {
            self.sources.path.as_ref().map(|p| {
                p.length()
                    - p.closest_point(&Point3::from(x.translation.vector))
                        .arc_length
            })
        } else {
            None
        };
        let transition = self.seq.update(t, &StepProgress { error, remaining });
        let mode = spec.mode.unwrap_or(self.mode);
        Ok(Evaluated {
            spec,
            mode,
            fallback,
            step,
            transition,
        })
    }

    /// Refuses a spec that needs a path when none is loaded.
    fn check_spec(&self, spec: &FixtureSpec) -> Result<(), String> {
        if spec.uses(source::PATH) && self.sources.path.is_none() {
            return Err("no path loaded (call ~/load_path first)".into());
        }
        Ok(())
    }

    fn stop_running_sequence(&mut self) -> &'static str {
        if self.seq.stop().is_ok() {
            " (sequence stopped)"
        } else {
            ""
        }
    }

    /// `~/combine`: two sources as the operator's fixture; stops a running sequence. Returns
    /// a summary.
    pub fn combine(&mut self, spec: FixtureSpec) -> Result<String, String> {
        if spec.secondary.is_none() {
            return Err("give a secondary source (or use ~/set_mode for one source)".into());
        }
        self.check_spec(&spec)?;
        let stopped = self.stop_running_sequence();
        self.active = spec.primary;
        self.combo = spec.secondary;
        if let Some(m) = spec.mode {
            self.mode = m;
        }
        let (sec, how) = self.combo.as_ref().expect("checked above");
        Ok(format!(
            "{} {} {} {}{}",
            self.active,
            how.as_str(),
            sec,
            self.mode.as_str(),
            stopped
        ))
    }

    /// `~/set_mode`: the mode, and the operator's source if given (a `source::*` name; stops a
    /// running sequence). Returns a summary.
    pub fn set_mode(
        &mut self,
        mode: FixtureMode,
        source_name: Option<&str>,
    ) -> Result<String, String> {
        let mut stopped = "";
        if let Some(name) = source_name {
            if source::code(name).is_none() {
                return Err(format!(
                    "unknown fixture type `{name}` (expected one of {})",
                    crate::convert::SOURCE_TYPES.join(", ")
                ));
            }
            if name == source::PATH && self.sources.path.is_none() {
                return Err("no path loaded (call ~/load_path first)".into());
            }
            self.active = name.to_string();
            self.combo = None;
            stopped = self.stop_running_sequence();
        }
        self.mode = mode;
        Ok(format!("{} {}{stopped}", self.active, mode.as_str()))
    }

    /// `~/load_path` with points: the path becomes the operator's fixture. Returns its length
    /// [m].
    pub fn load_path(&mut self, pts: &[Point3<f64>]) -> Result<f64, String> {
        let path = self.sources.make_path(pts).map_err(|e| e.to_string())?;
        let length = path.length();
        self.sources.path = Some(path);
        self.active = source::PATH.into();
        self.combo = None;
        Ok(length)
    }

    /// `~/load_path` with a file named relative to the path directory (files outside it,
    /// special files and files over the size limit are refused; errors never quote the file).
    pub fn load_path_file(&mut self, name: &str) -> Result<f64, String> {
        let Some(dir) = &self.path_directory else {
            return Err(
                "~/load_path: file refused: this node reads no files for requests (path.directory \
                 is not set; give points, or start the node with -p path.directory:=<directory>)"
                    .into(),
            );
        };
        let text = FileArea::new(dir, false)
            .and_then(|area| area.read_to_string(name, self.path_max_size))
            .map_err(|e| format!("~/load_path: {e}"))?;
        let pts = parse_path_text(&text).map_err(|e| format!("{name:?}: {e}"))?;
        self.load_path(&pts)
    }

    /// `~/set_rcm_cone`: the cone (a zero tool axis means z) becomes the operator's fixture.
    pub fn set_rcm_cone(
        &mut self,
        center: Point3<f64>,
        axis: Vector3<f64>,
        half_angle: f64,
        tool_axis: Vector3<f64>,
    ) -> Result<(), String> {
        let tool = if tool_axis.norm() == 0.0 {
            Vector3::z()
        } else {
            tool_axis
        };
        let cone = RcmCone::new(center, axis, half_angle, tool).map_err(|e| e.to_string())?;
        self.sources.cone = cone.with_error_gain(self.sources.rcm_error_gain);
        self.active = source::RCM_CONE.into();
        self.combo = None;
        Ok(())
    }

    /// `~/load_sequence`: checks every step (a path step needs a path), loads them and starts
    /// if asked. Returns the number of steps and a summary.
    pub fn load_sequence(
        &mut self,
        steps: Vec<Step<FixtureSpec>>,
        start: bool,
    ) -> Result<(usize, String), String> {
        if steps.is_empty() {
            return Err("the sequence has no steps".into());
        }
        for (i, s) in steps.iter().enumerate() {
            self.check_spec(&s.fixture)
                .map_err(|e| format!("step {i} `{}`: {e}", s.fixture.name))?;
        }
        let n = steps.len();
        self.seq
            .load(steps)
            .map_err(|(i, e)| format!("step {i}: {e}"))?;
        if start {
            self.seq.start().map_err(|e| e.to_string())?;
        }
        Ok((n, format!("{n} steps, {}", self.seq.state().as_str())))
    }

    /// `~/sequence`: start, stop, step or reset. Returns a summary, the state and the step
    /// (`None` without a sequence).
    pub fn sequence_command(
        &mut self,
        command: SequenceCommand,
    ) -> (Result<String, String>, SequenceState, Option<usize>) {
        let r = match command {
            SequenceCommand::Start => self.seq.start(),
            SequenceCommand::Stop => self.seq.stop(),
            SequenceCommand::Step => self.seq.advance().map(|_| ()),
            SequenceCommand::Reset => {
                self.seq.reset();
                Ok(())
            }
        };
        let r = r
            .map(|()| {
                format!(
                    "{} step {}/{}",
                    self.seq.state().as_str(),
                    self.seq.index(),
                    self.seq.len()
                )
            })
            .map_err(|e| e.to_string());
        let step = (!self.seq.is_empty()).then(|| self.seq.index());
        (r, self.seq.state(), step)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::{Translation3, UnitQuaternion};
    use rpq_virtual_fixtures::Completion;

    fn manager() -> FixtureManager {
        let sources = Sources::new(
            (Point3::new(0.4, 0.0, 0.4), Vector3::z()),
            Point3::new(0.4, 0.0, 0.4),
            (Point3::new(0.4, 0.0, 0.3), Vector3::z(), 0.3, Vector3::z()),
            100.0,
            1.0,
            false,
        )
        .unwrap();
        FixtureManager::new(sources, "plane", FixtureMode::ClosedLoop).unwrap()
    }

    fn tool(x: f64, y: f64, z: f64) -> Isometry3<f64> {
        Isometry3::from_parts(Translation3::new(x, y, z), UnitQuaternion::identity())
    }

    fn spec(p: &str, s: &str, c: &str) -> FixtureSpec {
        FixtureSpec::parse("", p, s, c, "").unwrap()
    }

    #[test]
    fn operator_choices_and_refusals() {
        let mut m = manager();
        let mut g = Guidance::empty();
        // no path yet: path refused everywhere
        assert!(m.set_mode(FixtureMode::OpenLoop, Some("path")).is_err());
        assert!(m
            .combine(spec("path", "plane", ""))
            .unwrap_err()
            .contains("no path"));
        assert!(m
            .combine(spec("plane", "", ""))
            .unwrap_err()
            .contains("secondary"));
        assert!(m.set_mode(FixtureMode::OpenLoop, Some("torus")).is_err());
        assert!(
            m.load_path(&[Point3::origin()]).is_err(),
            "one vertex is no path"
        );
        assert!(m
            .load_path_file("p.txt")
            .unwrap_err()
            .contains("path.directory"));
        // plane + cone, priority: one direction inside the plane
        let summary = m.combine(spec("plane", "rcm_cone", "priority")).unwrap();
        assert!(summary.starts_with("plane priority rcm_cone"), "{summary}");
        let ev = m.evaluate(&tool(0.45, 0.05, 0.4), &mut g, 0.0).unwrap();
        assert_eq!(g.n(), 1);
        assert!(
            g.columns()[0][2].abs() < 1e-12,
            "stays in the plane: {:?}",
            g.columns()[0]
        );
        assert!(!ev.fallback && ev.step.is_none());
        // plane ∩ point: nothing in common off the plane, the plane alone
        m.combine(spec("plane", "point", "intersect")).unwrap();
        let ev = m.evaluate(&tool(0.45, 0.05, 0.42), &mut g, 0.0).unwrap();
        assert!(ev.fallback && g.n() == 2);
        // the cone alone
        m.set_rcm_cone(
            Point3::new(0.4, 0.0, 0.3),
            Vector3::z(),
            0.2,
            Vector3::zeros(),
        )
        .unwrap();
        assert!(m
            .set_rcm_cone(Point3::origin(), Vector3::zeros(), 0.2, Vector3::z())
            .is_err());
        assert_eq!(m.active().0, "rcm_cone");
        let length = m
            .load_path(&[Point3::new(0.3, 0.0, 0.4), Point3::new(0.5, 0.0, 0.4)])
            .unwrap();
        assert!((length - 0.2).abs() < 1e-12);
        assert_eq!(
            m.evaluate(&tool(0.35, 0.01, 0.4), &mut g, 0.0)
                .unwrap()
                .spec
                .primary,
            "path"
        );
    }

    #[test]
    fn sequences_run_step_and_stop() {
        let mut m = manager();
        let mut g = Guidance::empty();
        let steps = vec![
            Step {
                fixture: spec("point", "", ""),
                completion: Completion::Duration { seconds: 0.5 },
            },
            Step {
                fixture: spec("plane", "rcm_cone", "priority"),
                completion: Completion::Manual,
            },
        ];
        let (n, _) = m.load_sequence(steps, true).unwrap();
        assert_eq!(n, 2);
        let x = tool(0.45, 0.0, 0.41);
        assert_eq!(m.evaluate(&x, &mut g, 0.0).unwrap().step, Some(0));
        assert_eq!(m.evaluate(&x, &mut g, 0.6).unwrap().spec.primary, "point");
        let ev = m.evaluate(&x, &mut g, 0.7).unwrap();
        assert_eq!((ev.step, ev.spec.primary.as_str()), (Some(1), "plane"));
        let (r, state, step) = m.sequence_command(SequenceCommand::Step);
        assert!(r.is_ok() && state == SequenceState::Finished && step == Some(1));
        // choosing a source stops the sequence: the operator's fixture is back
        let summary = m.set_mode(FixtureMode::OpenLoop, Some("point")).unwrap();
        assert!(summary.contains("sequence stopped"), "{summary}");
        assert_eq!(m.evaluate(&x, &mut g, 1.0).unwrap().step, None);
        let (r, state, _) = m.sequence_command(SequenceCommand::Reset);
        assert!(r.is_ok() && state == SequenceState::Ready);
        assert!(m.load_sequence(vec![], true).is_err());
        let path_step = vec![Step {
            fixture: spec("path", "", ""),
            completion: Completion::Manual,
        }];
        assert!(m
            .load_sequence(path_step, false)
            .unwrap_err()
            .contains("step 0"));
    }
}
