//! The forbidden-region mode of the admittance controller: a [`ToolMotionFilter`] that keeps
//! the tool (a sphere around the controlled point, the drill bit) out of the surgical
//! protection meshes (RPQ §4: patient, shield, cutting aid) by surface navigation
//! ([`rpq_surgery::SurfaceNavigator`], §4.1): each period the motion the law commands is
//! checked against the protections and, where it would cross one, replaced by the closest
//! collision-free motion — the tool slides along the protection.
//!
//! **Looking ahead.** Over DDS a command is not realised over exactly one period from the
//! position the controller measured: the joint state is a little old, and the robot keeps the
//! command until the next one arrives or its `velocity_command_timeout` passes. The filter
//! therefore checks the motion over `lookahead` (≥ the period) from the measured point: the
//! commanded velocity `v` becomes `(navigate(p, p + v T) − p) / T` with `T = max(dt,
//! lookahead)`. Away from protections nothing changes; toward one the approach speed is at
//! most `distance / T`, so the tool lands softly and any motion realised within `T` of the
//! measurement stays clear. On top, the navigation keeps `margin` beyond the tool radius.
//!
//! **Protections at run time.** The node hands new sets to the running filter through a
//! [`ProtectionInbox`] (from STL files or from `virtual_protection`'s `~/protections`). A set
//! is put in force at the first period in which the tool is [`Placement::Clear`] of it (a
//! protection loaded over the tool would hold it inside); then, over `blend` seconds, the
//! command moves from the old set's correction to the new one's, and the blended velocity is
//! navigated once more against the new set, so the new protections act at once and the
//! command has no jump from the ones that went away. Until a first set arrives the filter
//! commands no linear motion (forbidden-region mode without protections would be unsafe). A set
//! handed in with a tag ([`ProtectionInbox::submit_tagged`]; the node uses the stamp of the
//! message) is reported by that tag once in force ([`ProtectionInbox::in_force`]), so whoever
//! watches the controller (its status) knows which protections act, not only which were sent.
//!
//! ```
//! use nalgebra::{Point3, Vector3};
//! use rpq_kinematics::TriMesh;
//! use rpq_surgery::{Protection, ProtectionKind, ProtectionSet};
//! use steady_hand::motion_filter::ToolMotionFilter;
//! use steady_hand::protection_filter::{ProtectionConfig, ProtectionFilter};
//!
//! // a floor at z = 0 (normal up: the tool is allowed above it)
//! let floor = TriMesh::new(
//!     vec![Point3::new(-1.0, -1.0, 0.0), Point3::new(1.0, -1.0, 0.0), Point3::new(0.0, 1.0, 0.0)],
//!     vec![[0, 1, 2]],
//! )?;
//! let set = ProtectionSet::new().with(Protection::from_mesh("floor", ProtectionKind::Other, &floor, Default::default())?);
//! let cfg = ProtectionConfig { radius: 0.001, margin: 0.0, lookahead: 0.01, ..Default::default() };
//! let mut f = ProtectionFilter::new(cfg, Some(set))?;
//! // 2 mm above the floor, pushed down at 1 m/s: the motion stops at the bit's radius
//! let out = f.filter(&Point3::new(0.0, 0.0, 0.002), &Vector3::new(0.1, 0.0, -1.0), 0.001);
//! assert!(out.contact);
//! assert!((0.002 + out.linear_velocity.z * 0.01 - 0.001).abs() < 1e-5);
//! assert!((out.linear_velocity.x - 0.1).abs() < 1e-9);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::sync::{Arc, Mutex};

use nalgebra::{Isometry3, Point3, Vector3};
use rpq_kinematics::TriMesh;
use rpq_surgery::{
    NavigatorConfig, Outcome, Placement, Protection, ProtectionKind, ProtectionSet,
    SurfaceNavigator,
};

use crate::motion_filter::{FilterOutcome, ToolMotionFilter};

/// Settings of a [`ProtectionFilter`] (SI units).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ProtectionConfig {
    /// Radius of the tool sphere around the controlled point [m] (0: a point).
    pub radius: f64,
    /// Extra distance the navigation keeps beyond `radius` [m].
    pub margin: f64,
    /// Margin beyond `radius + margin` at which corrected positions are placed [m] (> 0).
    pub skin: f64,
    /// The commanded motion is checked over this time from the measured point [s] (at least
    /// the period is used).
    pub lookahead: f64,
    /// Collision checks per period before the tool is held.
    pub max_iterations: usize,
    /// A new protection set blends in over this time [s].
    pub blend: f64,
}

impl Default for ProtectionConfig {
    fn default() -> Self {
        ProtectionConfig {
            radius: 0.0015,
            margin: 0.0002,
            skin: 1e-6,
            lookahead: 0.02,
            max_iterations: 8,
            blend: 0.1,
        }
    }
}

impl ProtectionConfig {
    /// Checks the ranges (`radius + margin` ≤ 0.1 m, `0 < skin ≤ 1 mm`, `lookahead` 0-1 s,
    /// `blend` 0-10 s, 1-64 iterations).
    pub fn validate(&self) -> Result<(), String> {
        self.navigator().validate().map_err(|e| e.to_string())?;
        let ok = |v: f64, max: f64| v.is_finite() && (0.0..=max).contains(&v);
        if !ok(self.margin, 0.01) {
            return Err(format!("margin = {} m: must be 0 to 0.01", self.margin));
        }
        if !ok(self.lookahead, 1.0) {
            return Err(format!("lookahead = {} s: must be 0 to 1", self.lookahead));
        }
        if !ok(self.blend, 10.0) {
            return Err(format!("blend = {} s: must be 0 to 10", self.blend));
        }
        Ok(())
    }

    fn navigator(&self) -> NavigatorConfig {
        NavigatorConfig {
            radius: self.radius + self.margin,
            skin: self.skin,
            max_iterations: self.max_iterations,
        }
    }
}

#[derive(Default)]
struct Shared {
    /// The newest set handed in and not yet taken by the filter, with its tag.
    incoming: Option<(ProtectionSet, u64)>,
    /// Sets put in force so far.
    loaded: u64,
    /// The tag of the set in force (0: none, or an untagged set).
    in_force: u64,
    /// The set waiting for the tool to be clear of it: why.
    waiting: Option<String>,
    /// Arrival number of the newest set handed in with [`ProtectionInbox::submit_received`].
    newest_received: u64,
}

/// The node's side of a [`ProtectionFilter`]: hands it new protection sets (from any thread)
/// and tells what it did with them.
#[derive(Clone, Default)]
pub struct ProtectionInbox(Arc<Mutex<Shared>>);

impl std::fmt::Debug for ProtectionInbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProtectionInbox")
            .field("loaded", &self.loaded())
            .finish()
    }
}

impl ProtectionInbox {
    /// Hands in a new set (it replaces one handed in before and not yet taken).
    pub fn submit(&self, set: ProtectionSet) {
        self.submit_tagged(set, 0);
    }

    /// Hands in a new set with a tag that names it (the node: the stamp of the message it came
    /// in); [`ProtectionInbox::in_force`] tells the tag once the set is in force, so an
    /// observer knows which protections the filter enforces, not only which were sent.
    pub fn submit_tagged(&self, set: ProtectionSet, tag: u64) {
        if let Ok(mut s) = self.0.lock() {
            s.incoming = Some((set, tag));
        }
    }

    /// [`ProtectionInbox::submit_tagged`] for a set whose message was the `received`-th to
    /// arrive (1, 2, …): the node turns messages into sets off the control loop, one task each,
    /// so an older message's set can be ready after a newer one's. A set whose message arrived
    /// before that of a set already handed in is dropped (returns false): the newest message
    /// stays in force, never the one that was slower to index.
    pub fn submit_received(&self, set: ProtectionSet, tag: u64, received: u64) -> bool {
        let Ok(mut s) = self.0.lock() else {
            return false;
        };
        if received <= s.newest_received {
            return false;
        }
        s.newest_received = received;
        s.incoming = Some((set, tag));
        true
    }

    /// Sets put in force so far.
    pub fn loaded(&self) -> u64 {
        self.0.lock().map_or(0, |s| s.loaded)
    }

    /// The tag of the set in force (0: none yet, or it was handed in untagged).
    pub fn in_force(&self) -> u64 {
        self.0.lock().map_or(0, |s| s.in_force)
    }

    /// Why the newest set is not in force yet (`None`: nothing waiting).
    pub fn waiting(&self) -> Option<String> {
        self.0.lock().ok().and_then(|s| s.waiting.clone())
    }

    /// The filter's side: never blocks (a locked inbox is read next period).
    fn take(&self) -> Option<(ProtectionSet, u64)> {
        self.0.try_lock().ok().and_then(|mut s| s.incoming.take())
    }

    /// The filter's side: its state, written whole (a busy inbox is written next period, so
    /// nothing is lost).
    fn report(&self, state: &Report) -> bool {
        let Ok(mut s) = self.0.try_lock() else {
            return false;
        };
        s.loaded = state.loaded;
        s.in_force = state.in_force;
        s.waiting.clone_from(&state.waiting);
        true
    }
}

/// What the filter tells its inbox.
#[derive(Clone, Debug, Default)]
struct Report {
    loaded: u64,
    in_force: u64,
    waiting: Option<String>,
    /// Not written to the inbox yet.
    due: bool,
}

/// The old correction while a new set blends in: `None` is "no linear motion" (no set was in
/// force before).
struct Blend {
    old: Option<SurfaceNavigator>,
    elapsed: f64,
}

/// The forbidden-region filter (see the module docs).
pub struct ProtectionFilter {
    cfg: ProtectionConfig,
    navigator: SurfaceNavigator,
    has_set: bool,
    /// A set waiting for the tool to be clear of it: (the set, its tag, its protections that
    /// are not in force yet — computed once, comparing meshes costs ~1 ms for the phantom).
    pending: Option<(ProtectionSet, u64, ProtectionSet)>,
    report: Report,
    blend: Option<Blend>,
    inbox: ProtectionInbox,
    last: Option<Outcome>,
}

impl std::fmt::Debug for ProtectionFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProtectionFilter")
            .field("config", &self.cfg)
            .field("protections", &self.navigator.protections().len())
            .finish_non_exhaustive()
    }
}

impl ProtectionFilter {
    /// A filter with `set` in force from the start (`None`: wait for one through the inbox;
    /// no linear motion until then). Checks the settings.
    pub fn new(cfg: ProtectionConfig, set: Option<ProtectionSet>) -> Result<Self, String> {
        cfg.validate()?;
        let has_set = set.is_some();
        let navigator = SurfaceNavigator::new(set.unwrap_or_default(), cfg.navigator())
            .map_err(|e| e.to_string())?;
        Ok(ProtectionFilter {
            cfg,
            navigator,
            has_set,
            pending: None,
            report: Report::default(),
            blend: None,
            inbox: ProtectionInbox::default(),
            last: None,
        })
    }

    /// The handle through which new sets come in.
    pub fn inbox(&self) -> ProtectionInbox {
        self.inbox.clone()
    }

    /// The protections in force.
    pub fn protections(&self) -> &ProtectionSet {
        self.navigator.protections()
    }

    /// The outcome of the last period's navigation.
    pub fn last_outcome(&self) -> Option<Outcome> {
        self.last
    }

    /// The velocity `navigator` allows for `v` at `p` over `horizon`, and the navigation.
    fn correct(
        navigator: &mut SurfaceNavigator,
        p: &Point3<f64>,
        v: &Vector3<f64>,
        horizon: f64,
    ) -> (Vector3<f64>, rpq_surgery::Navigation) {
        let nav = navigator.navigate(p, &(p + v * horizon));
        let out = match nav.outcome {
            Outcome::Blocked => Vector3::zeros(),
            _ => (nav.position - p) / horizon,
        };
        (out, nav)
    }

    /// Puts a waiting set in force when the tool at `p` is clear of it.
    fn take_new_set(&mut self, p: &Point3<f64>) {
        if let Some((set, tag)) = self.inbox.take() {
            // only the protections the tool does not feel yet decide (the tool may be sliding
            // on one already in force, at exactly radius + margin + skin); the set in force
            // changes only when a pending set goes in force, so this is computed once per set
            let current = self.navigator.protections();
            let mut fresh = ProtectionSet::new();
            for q in set.items() {
                let known = current.get(&q.name).is_some_and(|c| same_protection(c, q));
                if !known {
                    fresh.insert(q.clone());
                }
            }
            self.pending = Some((set, tag, fresh));
        }
        if let Some((set, tag, fresh)) = self.pending.take() {
            self.try_set(p, set, tag, fresh);
        }
        if self.report.due && self.inbox.report(&self.report) {
            self.report.due = false;
        }
    }

    fn try_set(&mut self, p: &Point3<f64>, set: ProtectionSet, tag: u64, fresh: ProtectionSet) {
        let r = self.cfg.radius + self.cfg.margin;
        let why = match fresh.placement(p, r, 0.05) {
            Placement::Clear => {
                let old = self.navigator.set_protections(set);
                let old = if self.has_set {
                    SurfaceNavigator::new(old, self.cfg.navigator()).ok()
                } else {
                    None
                };
                self.blend = (self.cfg.blend > 0.0).then_some(Blend { old, elapsed: 0.0 });
                self.has_set = true;
                self.report.loaded += 1;
                self.report.in_force = tag;
                self.report.waiting = None;
                self.report.due = true;
                return;
            }
            Placement::Overlapping { name, distance } => {
                format!("the tool overlaps '{name}' ({:.2} mm)", distance * 1e3)
            }
            Placement::ForbiddenSide { name, .. } => {
                format!("the tool is on the forbidden side of '{name}'")
            }
        };
        self.report.waiting = Some(why);
        self.report.due = true;
        self.pending = Some((set, tag, fresh));
    }
}

impl ToolMotionFilter for ProtectionFilter {
    fn filter(&mut self, p: &Point3<f64>, v: &Vector3<f64>, dt: f64) -> FilterOutcome {
        let finite = p.iter().chain(v.iter()).all(|x| x.is_finite()) && dt.is_finite() && dt > 0.0;
        if !finite {
            return FilterOutcome {
                contact: false,
                note: "forbidden region: non-finite input, no motion",
                ..FilterOutcome::pass(Vector3::zeros())
            };
        }
        self.take_new_set(p);
        if !self.has_set {
            return FilterOutcome {
                note: "forbidden region: waiting for protections, no motion",
                ..FilterOutcome::pass(Vector3::zeros())
            };
        }
        let horizon = dt.max(self.cfg.lookahead);
        let (mut out, mut nav) = Self::correct(&mut self.navigator, p, v, horizon);
        if let Some(b) = &mut self.blend {
            let s = (b.elapsed / self.cfg.blend).clamp(0.0, 1.0);
            let old = match &mut b.old {
                Some(n) => Self::correct(n, p, v, horizon).0,
                None => Vector3::zeros(),
            };
            let mixed = old * (1.0 - s) + out * s;
            (out, nav) = Self::correct(&mut self.navigator, p, &mixed, horizon);
            b.elapsed += dt;
            if b.elapsed >= self.cfg.blend {
                self.blend = None;
            }
        }
        self.last = Some(nav.outcome);
        FilterOutcome {
            linear_velocity: out,
            contact: nav.outcome != Outcome::Free,
            distance: None,
            normal: nav.normal.map(|n| n.into_inner()),
            halt: false,
            note: match nav.outcome {
                Outcome::Free => "",
                Outcome::Slid => "forbidden region: sliding along a protection",
                Outcome::Blocked => "forbidden region: held at a protection",
            },
        }
    }

    fn name(&self) -> &str {
        "forbidden_region"
    }

    fn reset(&mut self) {
        self.last = None;
    }
}

/// The same mesh at the same place (a set from the topic brings every mesh anew).
fn same_protection(a: &Protection, b: &Protection) -> bool {
    let n = a.model.num_triangles();
    Arc::ptr_eq(&a.model, &b.model)
        || (n == b.model.num_triangles() && (0..n).all(|i| a.triangle(i) == b.triangle(i)))
}

/// The kind of a protection from its name (`patient…`, `shield…`, `cutting_aid…`, else other).
pub fn kind_from_name(name: &str) -> ProtectionKind {
    if name.starts_with("patient") {
        ProtectionKind::Patient
    } else if name.starts_with("shield") {
        ProtectionKind::Shield
    } else if name.starts_with("cutting_aid") {
        ProtectionKind::CuttingAid
    } else {
        ProtectionKind::Other
    }
}

/// Protections from binary or ASCII STL files (metres, base frame, normals toward the allowed
/// side) named in `files`, read inside `directory` only (at most `max_bytes` each); each is
/// named after its file stem.
pub fn load_stl_protections(
    directory: &str,
    files: &[String],
    max_bytes: u64,
) -> Result<ProtectionSet, String> {
    let area = rpq_base::FileArea::new(directory, false)
        .map_err(|e| format!("protection directory '{directory}': {e}"))?;
    let mut set = ProtectionSet::new();
    for name in files {
        let bytes = area
            .read(name, max_bytes)
            .map_err(|e| format!("protection file '{name}': {e}"))?;
        let mesh = TriMesh::from_stl_bytes(&bytes)
            .map_err(|e| format!("protection file '{name}': {e}"))?;
        let stem = std::path::Path::new(name)
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or(name)
            .to_string();
        let p = Protection::from_mesh(
            stem.clone(),
            kind_from_name(&stem),
            &mesh,
            Isometry3::identity(),
        )
        .map_err(|e| format!("protection file '{name}': {e}"))?;
        set.insert(p);
    }
    Ok(set)
}

/// One protection from the vertices and index triples of a `rpq_interfaces/ProtectionMesh`.
pub fn protection_from_parts(
    name: &str,
    kind: ProtectionKind,
    vertices: Vec<Point3<f64>>,
    indices: &[u32],
) -> Result<Protection, String> {
    if !indices.len().is_multiple_of(3) {
        return Err(format!(
            "protection '{name}': {} indices, not a multiple of 3",
            indices.len()
        ));
    }
    let triangles = indices
        .chunks_exact(3)
        .map(|c| [c[0], c[1], c[2]])
        .collect();
    let mesh =
        TriMesh::new(vertices, triangles).map_err(|e| format!("protection '{name}': {e}"))?;
    Protection::from_mesh(name, kind, &mesh, Isometry3::identity())
        .map_err(|e| format!("protection '{name}': {e}"))
}

/// The forbidden-region settings of the controller's parameters (`forbidden_region.*`):
/// `None` when the mode is off. A mode without any source of protections is refused (it would
/// never let the tool move), as are files without a directory.
pub fn config_from_params(
    p: &crate::settings::admittance_controller::AdmittanceControllerForbiddenRegionParams,
) -> Result<Option<ProtectionConfig>, String> {
    if !p.enabled {
        return Ok(None);
    }
    if p.files.is_empty() && p.topic.is_empty() {
        return Err(
            "forbidden_region.enabled needs protections: forbidden_region.files (with \
             forbidden_region.directory) or forbidden_region.topic"
                .into(),
        );
    }
    if !p.files.is_empty() && p.directory.is_empty() {
        return Err("forbidden_region.files needs forbidden_region.directory".into());
    }
    let cfg = ProtectionConfig {
        radius: p.tool_radius,
        margin: p.margin,
        skin: ProtectionConfig::default().skin,
        lookahead: p.lookahead,
        max_iterations: p.max_iterations.clamp(1, 64) as usize,
        blend: p.blend,
    };
    cfg.validate()?;
    Ok(Some(cfg))
}

/// A `rpq_interfaces/ProtectionMeshes` message as a protection set, in the frame `root` (the
/// message's `frame_id` must be empty or `root`).
pub fn protections_from_msg(
    msg: &rpq_ros::interfaces::rpq_interfaces::msg::ProtectionMeshes,
    root: &str,
) -> Result<ProtectionSet, String> {
    use rpq_ros::interfaces::rpq_interfaces::msg::ProtectionMesh;
    let frame = &msg.header.frame_id;
    if !(frame.is_empty() || frame == root) {
        return Err(format!(
            "protections in frame '{frame}': the controller takes them only in its base frame \
             '{root}'"
        ));
    }
    let mut set = ProtectionSet::new();
    for m in &msg.meshes {
        let kind = match m.kind {
            ProtectionMesh::KIND_SHIELD => ProtectionKind::Shield,
            ProtectionMesh::KIND_CUTTING_AID => ProtectionKind::CuttingAid,
            ProtectionMesh::KIND_PATIENT => ProtectionKind::Patient,
            _ => ProtectionKind::Other,
        };
        let vertices = m
            .vertices
            .iter()
            .map(|v| Point3::new(v.x, v.y, v.z))
            .collect();
        set.insert(protection_from_parts(
            &m.name,
            kind,
            vertices,
            &m.triangles,
        )?);
    }
    Ok(set)
}

/// The tag naming a set that came in a message stamped `stamp` (see
/// [`ProtectionInbox::submit_tagged`]; 0 only for the zero stamp).
pub fn stamp_tag(stamp: &rpq_ros::msg::builtin_interfaces::Time) -> u64 {
    (u64::from(stamp.sec as u32) << 32) | u64::from(stamp.nanosec)
}

/// The stamp a tag was made from ([`stamp_tag`]'s inverse; 0 gives the zero stamp).
pub fn tag_stamp(tag: u64) -> rpq_ros::msg::builtin_interfaces::Time {
    rpq_ros::msg::builtin_interfaces::Time {
        sec: (tag >> 32) as u32 as i32,
        nanosec: tag as u32,
    }
}

#[cfg(test)]
mod tests;
