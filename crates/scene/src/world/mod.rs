//! The world: a [`Scenario`] with per-body padding, a run-time allowed-collision matrix and
//! queries by name, for the `proximity_query` node and for planners.
//!
//! * Bodies are named `object/link`; a simple object also by its own name. Selections
//!   ([`World::select`]) name objects (all their bodies) or single bodies.
//! * Padding ([`World::set_padding`], metres, as MoveIt's link padding) grows a body: a
//!   pair with paddings `pa + pb > 0` collides when its surfaces are closer than
//!   `pa + pb`, and its distance is the surface distance less `pa + pb`, clamped at 0.
//! * Allowed collisions ([`World::set_allowed`], as MoveIt's ACM): a run-time entry
//!   allows or forbids a body pair and overrides the scene's collision matrix. The
//!   matrix's never-collide entries were computed without padding, so they only skip pairs
//!   whose paddings are both 0 (and only when the options use the matrix). Run-time allowed
//!   pairs are skipped by every query; the matrix is used by collision queries only, so
//!   distances and tolerance queries stay exact for matrix pairs (as [`Scenario`]'s).
//! * With every body selected, no padding and no run-time entries the queries are exactly
//!   [`Scenario::collide`] and [`Scenario::min_distance`]; otherwise the same pair loops
//!   run with the selection, paddings (box tests inflated by them) and entries applied.
//! * [`World::check_states`] answers a batch of configurations on all cores.

mod batch;
mod objects;
mod query;
mod select;

pub use batch::StateAnswer;
pub use query::{BodyPairContact, CollisionAnswer, ContactMode, ToleranceAnswer, TolerancePair};
pub use select::Selection;

use crate::error::SceneError;
use crate::object::Object;
use crate::options::QueryOptions;
use crate::scenario::{pair_slot, BodyId, PairHit, PairRules, Scenario};
use crate::spec::LoadedScene;
use crate::state::ScenarioState;

/// Largest padding accepted (m).
pub const MAX_PADDING: f64 = 1.0;

/// Paddings and run-time allowed-collision entries: what the world adds to the scenario's
/// pair loops.
#[derive(Clone, Debug, Default)]
struct Rules {
    /// Padding (m) per object per body.
    padding: Vec<Vec<f64>>,
    /// Largest padding (m) per object.
    max_padding: Vec<f64>,
    /// Run-time entries per object pair slot (`n_a * n_b`, allocated on first use): 1
    /// allowed, -1 forbidden, 0 none.
    overrides: Vec<Vec<i8>>,
    /// Number of non-zero entries in `overrides`.
    n_overrides: usize,
}

impl Rules {
    fn padded(&self) -> bool {
        self.max_padding.iter().any(|&p| p > 0.0)
    }

    /// The pair rules of a query between selections `a` and `b`; [`PairRules::NONE`]'s
    /// parts for whatever is not in use.
    fn pair_rules<'a>(&'a self, a: &'a Selection, b: &'a Selection) -> PairRules<'a> {
        let padded = self.padded();
        PairRules {
            selection: (!a.is_all() || !b.is_all()).then_some((a, b)),
            padding: if padded { &self.padding } else { &[] },
            max_padding: if padded { &self.max_padding } else { &[] },
            overrides: if self.n_overrides > 0 {
                &self.overrides
            } else {
                &[]
            },
        }
    }

    /// Nothing beyond the scenario's own rules (with every body selected, the optimized
    /// scenario queries answer).
    fn is_plain(&self) -> bool {
        self.n_overrides == 0 && !self.padded()
    }
}

/// A scenario with its query options, per-body padding and a run-time allowed-collision
/// matrix, queried by body and object names (module documentation).
///
/// Cloning is cheap next to loading (meshes and hierarchies are shared); clones are
/// independent.
#[derive(Clone, Debug)]
pub struct World {
    scenario: Scenario,
    options: QueryOptions,
    rules: Rules,
    /// Reused buffer of pairs found by all-pairs queries.
    hits: Vec<PairHit>,
    /// Reused joint vector of [`World::set_joint_state`].
    q_buf: Vec<f64>,
}

// The node shares worlds between threads; `check_states` shares one among its workers.
const _: fn() = || {
    fn send_sync_clone<T: Send + Sync + Clone>() {}
    send_sync_clone::<World>();
};

impl World {
    /// A world of a loaded scene (its scenario and options), without padding or run-time
    /// entries.
    pub fn new(scene: LoadedScene) -> World {
        let padding: Vec<Vec<f64>> = scene
            .scenario
            .objects()
            .iter()
            .map(|o| vec![0.0; o.num_bodies()])
            .collect();
        let n = padding.len();
        World {
            rules: Rules {
                max_padding: vec![0.0; n],
                padding,
                overrides: vec![Vec::new(); n * n.saturating_sub(1) / 2],
                n_overrides: 0,
            },
            scenario: scene.scenario,
            options: scene.options,
            hits: Vec::new(),
            q_buf: Vec::new(),
        }
    }

    /// The scenario (objects, current poses, collision matrix).
    pub fn scenario(&self) -> &Scenario {
        &self.scenario
    }

    /// A state for queries from another thread (`*_with`): a copy of the world's current
    /// configuration.
    pub fn new_state(&self) -> ScenarioState {
        self.scenario.new_state()
    }

    /// The query options (from the scene file).
    pub fn options(&self) -> &QueryOptions {
        &self.options
    }

    /// Object indices of the robots (complex objects), in scenario order.
    pub fn robots(&self) -> Vec<usize> {
        (0..self.scenario.objects().len())
            .filter(|&k| matches!(self.scenario.objects()[k], Object::Complex(_)))
            .collect()
    }

    /// The body called `object/link`; a simple object also by its own name.
    pub fn body_id(&self, name: &str) -> Result<BodyId, SceneError> {
        if let Some((o, l)) = name.split_once('/') {
            let k = self.scenario.object_index(o)?;
            let obj = &self.scenario.objects()[k];
            return (0..obj.num_bodies())
                .find(|&i| obj.body(i).name == l)
                .map(|body| BodyId { object: k, body })
                .ok_or_else(|| SceneError::UnknownName {
                    what: "link",
                    name: name.to_owned(),
                });
        }
        let k = self.scenario.object_index(name)?;
        match &self.scenario.objects()[k] {
            Object::Simple(_) => Ok(BodyId { object: k, body: 0 }),
            Object::Complex(_) => Err(SceneError::Invalid(format!(
                "`{name}` is a robot, not one body; name a link as `{name}/<link>`"
            ))),
        }
    }

    /// `object/link` name of a body.
    pub fn body_name(&self, id: BodyId) -> String {
        self.scenario.body_name(id)
    }

    /// The bodies a name stands for: every body of an object, or one `object/link`.
    fn bodies_of(&self, name: &str) -> Result<Vec<BodyId>, SceneError> {
        if name.contains('/') {
            return Ok(vec![self.body_id(name)?]);
        }
        let k = self.scenario.object_index(name)?;
        let n = self.scenario.objects()[k].num_bodies();
        Ok((0..n).map(|body| BodyId { object: k, body }).collect())
    }

    /// Names to a selection. Each name is a robot or object (all its bodies) or
    /// `object/link`; an empty list selects every body. Unknown names are refused, naming
    /// the bad name.
    pub fn select(&self, names: &[String]) -> Result<Selection, SceneError> {
        let mut bodies = Vec::new();
        for n in names {
            bodies.extend(self.bodies_of(n)?);
        }
        Ok(Selection::of(bodies))
    }

    /// Sets the MoveIt-style padding (m) of one body (`object/link`) or of every body of
    /// an object (`left`). Refused: NaN, infinite, negative, above [`MAX_PADDING`].
    pub fn set_padding(&mut self, name: &str, metres: f64) -> Result<(), SceneError> {
        if !metres.is_finite() {
            return Err(SceneError::NonFinite {
                what: format!("padding of `{name}`"),
            });
        }
        if !(0.0..=MAX_PADDING).contains(&metres) {
            return Err(SceneError::Invalid(format!(
                "padding of `{name}`: {metres} m is outside [0, {MAX_PADDING}] m"
            )));
        }
        let bodies = self.bodies_of(name)?;
        for id in &bodies {
            self.rules.padding[id.object][id.body] = metres;
        }
        if let Some(id) = bodies.first() {
            let m = self.rules.padding[id.object]
                .iter()
                .fold(0.0, |m: f64, &p| m.max(p));
            self.rules.max_padding[id.object] = m;
        }
        Ok(())
    }

    /// Padding (m) of a body.
    pub fn padding(&self, id: BodyId) -> f64 {
        self.rules.padding[id.object][id.body]
    }

    /// Sets the joint positions of robot `object` by joint name (a
    /// `sensor_msgs/JointState`'s `name` and `position`, radians or metres). Every movable
    /// joint of the robot must appear exactly once; names the robot does not have are
    /// ignored (a state may carry a gripper's joints). Refused, naming the problem and the
    /// robot, with nothing changed: `names` and `positions` of different lengths, a
    /// repeated name, a missing joint, a non-finite position of one of the robot's joints.
    pub fn set_joint_state(
        &mut self,
        object: usize,
        names: &[String],
        positions: &[f64],
    ) -> Result<(), SceneError> {
        let Some(Object::Complex(r)) = self.scenario.objects().get(object) else {
            return Err(SceneError::Invalid(format!(
                "object #{object} is not a robot"
            )));
        };
        let robot = r.name();
        if names.len() != positions.len() {
            return Err(SceneError::Invalid(format!(
                "joint state for `{robot}`: {} names but {} positions",
                names.len(),
                positions.len()
            )));
        }
        for (k, n) in names.iter().enumerate() {
            if names[..k].contains(n) {
                return Err(SceneError::Invalid(format!(
                    "joint state for `{robot}`: joint `{n}` appears twice"
                )));
            }
        }
        let kin = r.kinematics();
        let dof = kin.dof();
        self.q_buf.clear();
        self.q_buf.resize(dof, f64::NAN);
        for (n, &v) in names.iter().zip(positions) {
            let Ok(d) = kin.joint_index(n) else {
                continue;
            };
            if !v.is_finite() {
                return Err(SceneError::NonFinite {
                    what: format!("position of joint `{n}` of `{robot}` ({v})"),
                });
            }
            self.q_buf[d] = v;
        }
        if let Some(d) = self.q_buf.iter().position(|v| v.is_nan()) {
            let jn = kin.joint_names().nth(d).unwrap_or_default();
            return Err(SceneError::Invalid(format!(
                "joint state for `{robot}` lacks joint `{jn}`"
            )));
        }
        let q = std::mem::take(&mut self.q_buf);
        let res = self.scenario.set_joint_positions(object, &q);
        self.q_buf = q;
        res
    }

    /// Allows (`true`) or forbids (`false`) collisions between two bodies, or between
    /// every body of two objects (`"left"`, `"right"`), or a body and every body of an
    /// object, at run time like MoveIt's ACM; the entry overrides the collision matrix.
    /// Pairs within one object are refused. Returns the number of body pairs the call set.
    pub fn set_allowed(&mut self, a: &str, b: &str, allowed: bool) -> Result<usize, SceneError> {
        let (xs, ys) = (self.bodies_of(a)?, self.bodies_of(b)?);
        if xs[0].object == ys[0].object {
            return Err(SceneError::Invalid(format!(
                "`{a}` and `{b}` belong to the same object; only pairs of different objects \
                 are queried"
            )));
        }
        let objects = self.scenario.objects();
        let n = objects.len();
        let value = if allowed { 1 } else { -1 };
        let mut count = 0;
        for &x in &xs {
            for &y in &ys {
                let (x, y) = if x.object < y.object { (x, y) } else { (y, x) };
                let nb = objects[y.object].num_bodies();
                let entries = &mut self.rules.overrides[pair_slot(n, x.object, y.object)];
                if entries.is_empty() {
                    entries.resize(objects[x.object].num_bodies() * nb, 0);
                }
                let e = &mut entries[x.body * nb + y.body];
                if *e == 0 {
                    self.rules.n_overrides += 1;
                }
                *e = value;
                count += 1;
            }
        }
        Ok(count)
    }

    /// Drops every run-time allowed-collision entry (back to the collision matrix).
    pub fn clear_allowed(&mut self) {
        for e in &mut self.rules.overrides {
            e.clear();
        }
        self.rules.n_overrides = 0;
    }

    /// Run-time entry of a body pair: `Some(true)` allowed, `Some(false)` forbidden.
    fn override_of(&self, a: BodyId, b: BodyId) -> Option<bool> {
        let (a, b) = if a.object < b.object { (a, b) } else { (b, a) };
        let objects = self.scenario.objects();
        let e = &self.rules.overrides[pair_slot(objects.len(), a.object, b.object)];
        let v = e.get(a.body * objects[b.object].num_bodies() + b.body)?;
        (*v != 0).then_some(*v > 0)
    }

    /// Are collisions between the two bodies allowed (skipped)? The run-time entry if
    /// any, else the collision matrix's never-collide entry — which counts only when the
    /// options use the matrix and both paddings are 0 (the matrix was computed without
    /// padding). Bodies of one object: `false` (such pairs are never queried).
    pub fn is_allowed(&self, a: BodyId, b: BodyId) -> bool {
        if a.object == b.object {
            return false;
        }
        match self.override_of(a, b) {
            Some(v) => v,
            None => {
                self.options.collision_matrix
                    && self.padding(a) + self.padding(b) == 0.0
                    && self.scenario.never_collide(a, b)
            }
        }
    }

    /// Every allowed body pair in force (`a < b` by `(object, body)`), and whether it
    /// comes from the run-time entries (`true`) or the loaded collision matrix (`false`).
    pub fn allowed_pairs(&self) -> Vec<(BodyId, BodyId, bool)> {
        let objects = self.scenario.objects();
        let mut out = Vec::new();
        for (a, b) in self.scenario.object_pairs() {
            for i in 0..objects[a].num_bodies() {
                for j in 0..objects[b].num_bodies() {
                    let (x, y) = (BodyId { object: a, body: i }, BodyId { object: b, body: j });
                    if self.is_allowed(x, y) {
                        out.push((x, y, self.override_of(x, y).is_some()));
                    }
                }
            }
        }
        out
    }
}
