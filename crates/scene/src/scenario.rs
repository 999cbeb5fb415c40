//! The scenario: every object in one world frame, the per-configuration state (posed
//! bodies and boxes), and the proximity queries with the three RPQ optimizations.

use nalgebra::{Isometry3, Point3, Rotation3, Vector3};
use rpq_proximity::{CollisionMode, DistanceRequest, Obb};

use crate::cmatrix::CollisionMatrix;
use crate::error::SceneError;
use crate::object::{Object, Robot, SimpleObject};
use crate::options::QueryOptions;
use crate::state::ScenarioState;
use crate::weights::WeightMatrix;
use crate::world::Selection;

/// A body of a scenario: object index and body index in that object.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BodyId {
    /// Object index in [`Scenario::objects`].
    pub object: usize,
    /// Body index in the object.
    pub body: usize,
}

/// Counters of one or more queries (what each resolution level and the collision matrix
/// did).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueryStats {
    /// Whole-object box tests (L1).
    pub l1_tests: u64,
    /// Whole-object box tests that separated the objects.
    pub l1_solved: u64,
    /// Link-box tests (L2).
    pub l2_tests: u64,
    /// Link-box tests that separated the pair.
    pub l2_solved: u64,
    /// Mesh queries (L3).
    pub l3_tests: u64,
    /// Link pairs skipped because the collision matrix says they never collide.
    pub cm_skipped: u64,
    /// Link pairs considered (reached in the pair loop, before any test).
    pub pairs_considered: u64,
    /// Bounding-volume pair tests inside the mesh engine (a machine-independent cost).
    pub engine_bv_tests: u64,
    /// Triangle pair tests inside the mesh engine.
    pub engine_triangle_tests: u64,
}

impl std::ops::AddAssign for QueryStats {
    fn add_assign(&mut self, o: Self) {
        self.l1_tests += o.l1_tests;
        self.l1_solved += o.l1_solved;
        self.l2_tests += o.l2_tests;
        self.l2_solved += o.l2_solved;
        self.l3_tests += o.l3_tests;
        self.cm_skipped += o.cm_skipped;
        self.pairs_considered += o.pairs_considered;
        self.engine_bv_tests += o.engine_bv_tests;
        self.engine_triangle_tests += o.engine_triangle_tests;
    }
}

/// Answer of a collision query.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CollisionReport {
    /// True if some pair of bodies of different objects overlaps.
    pub colliding: bool,
    /// The first overlapping pair found (depends on the query order).
    pub pair: Option<(BodyId, BodyId)>,
    /// What the query did.
    pub stats: QueryStats,
}

/// Answer of a minimum-distance query.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DistanceReport {
    /// Minimum distance (m); 0 when touching or overlapping.
    pub distance: f64,
    /// The closest body of the first object.
    pub body_a: BodyId,
    /// The closest body of the second object.
    pub body_b: BodyId,
    /// Witness point on `body_a` (world frame).
    pub point_a: Point3<f64>,
    /// Witness point on `body_b` (world frame).
    pub point_b: Point3<f64>,
    /// What the query did.
    pub stats: QueryStats,
}

/// All objects of a workspace in one world frame, with the optional collision matrix, the
/// current configuration and the queries between them.
///
/// Queries consider every pair of distinct objects (robot–robot, robot–object,
/// object–object); bodies of one object are not tested against each other.
///
/// # Threads
///
/// The scenario's objects, meshes and collision matrix are read-only once built. Everything a
/// configuration changes (posed bodies and boxes, the engine's workspace, buffers, the weight
/// matrix's counts) lives in a [`ScenarioState`]: the scenario keeps one for its own
/// configuration (the `&mut self` queries, [`Scenario::set_joint_positions`]), and any number
/// of threads can query one `&Scenario` at once, each with its own state
/// ([`Scenario::new_state`], the `*_with` queries) — or hand a batch of configurations to
/// [`Scenario::batch`], which runs on all cores.
#[derive(Clone, Debug)]
pub struct Scenario {
    objects: Vec<Object>,
    cmatrix: Option<CollisionMatrix>,
    /// Per object pair (a < b, row-major over a, b): skip flags, `n_a * n_b`.
    skip: Vec<Vec<bool>>,
    /// The scenario's own configuration.
    state: ScenarioState,
    /// Use the broadphase over objects ([`crate::broadphase`]) in scenes of many objects.
    broadphase: bool,
}

impl Default for Scenario {
    fn default() -> Self {
        Self::new()
    }
}

/// [`Scenario::set_joint_positions_with`] over the scenario's objects.
#[inline]
fn set_positions(
    objects: &[Object],
    state: &mut ScenarioState,
    object: usize,
    q: &[f64],
) -> Result<(), SceneError> {
    let o = objects
        .get(object)
        .ok_or_else(|| SceneError::Invalid(format!("object #{object} does not exist")))?;
    match o {
        Object::Simple(_) if q.is_empty() => {
            state.place_simple(o, object);
            Ok(())
        }
        Object::Simple(_) => Err(SceneError::Invalid(format!(
            "object #{object} is not a robot"
        ))),
        Object::Complex(r) => {
            r.kinematics().check_joint_vector(q)?;
            state.pose_robot(r, object, q);
            Ok(())
        }
    }
}

/// The world-aligned box spanning `lo..hi` (as an [`Obb`] with identity axes): the box of a
/// whole object around its body boxes, from the smallest and largest of their centres ∓ the
/// half extents of their world-aligned boxes (`|R| h` each): the L1 box. Cheaper to build per
/// configuration than a box fitted to the 8 × n link-box corners, and on the two-RX60 sweep it
/// separated more queries (47.6% vs 39.4% at 0.4 m, 83.9% vs 82.9% at 0.6 m, measured with
/// `rpq_eval`).
pub(crate) fn aligned_box(lo: Vector3<f64>, hi: Vector3<f64>) -> Obb {
    Obb {
        center: Point3::from((lo + hi) * 0.5),
        axes: Rotation3::identity(),
        half_extents: (hi - lo) * 0.5,
    }
}

/// Which body pairs a query considers beyond the scenario's own rules, and the padding
/// of each body: what the world layer ([`crate::World`]) adds to the pair loops. With
/// [`PairRules::NONE`] the loops are the plain optimized queries.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PairRules<'a> {
    /// Pair `(x, y)` is considered when `x` is in `.0` and `y` in `.1` or the reverse;
    /// `None`: every pair.
    pub selection: Option<(&'a Selection, &'a Selection)>,
    /// Padding (m) per object per body; empty: no padding.
    pub padding: &'a [Vec<f64>],
    /// Largest padding (m) per object; empty: no padding.
    pub max_padding: &'a [f64],
    /// Run-time allowed-collision entries per object pair (the layout of the collision
    /// matrix's skip flags): 1 allowed, -1 forbidden, 0 no entry; empty: none at all.
    pub overrides: &'a [Vec<i8>],
}

impl PairRules<'static> {
    /// No selection, no padding, no run-time entries.
    pub(crate) const NONE: PairRules<'static> = PairRules {
        selection: None,
        padding: &[],
        max_padding: &[],
        overrides: &[],
    };
}

impl PairRules<'_> {
    /// Padding (m) of a body.
    #[inline]
    pub(crate) fn pad(&self, id: BodyId) -> f64 {
        if self.padding.is_empty() {
            0.0
        } else {
            self.padding[id.object][id.body]
        }
    }

    /// Largest padding (m) of the bodies of an object.
    #[inline]
    fn max_pad(&self, object: usize) -> f64 {
        self.max_padding.get(object).copied().unwrap_or(0.0)
    }

    /// Is the body pair in the selection (either order)?
    #[inline]
    pub(crate) fn selected(&self, x: BodyId, y: BodyId) -> bool {
        match self.selection {
            None => true,
            Some((a, b)) => (a.contains(x) && b.contains(y)) || (a.contains(y) && b.contains(x)),
        }
    }

    /// Can any body pair of objects `x` and `y` be in the selection?
    #[inline]
    fn objects_selected(&self, x: usize, y: usize) -> bool {
        match self.selection {
            None => true,
            Some((a, b)) => {
                (a.touches_object(x) && b.touches_object(y))
                    || (a.touches_object(y) && b.touches_object(x))
            }
        }
    }
}

/// What a contact query looks for (crate-internal; see [`Scenario::contact`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct ContactQuery {
    /// Distance (m) added to every pair's paddings: a pair counts when its surfaces are
    /// closer than this sum (touching always counts). 0 for collision queries.
    pub clearance: f64,
    /// Every pair instead of stopping at the first.
    pub all: bool,
    /// With `all`: the intersecting triangle pairs of each pair found.
    pub triangles: bool,
    /// With `all`: the exact (unpadded) distance of each pair found.
    pub distances: bool,
}

impl ContactQuery {
    /// Plain collision: stop at the first overlapping pair.
    pub(crate) const COLLISION: ContactQuery = ContactQuery {
        clearance: 0.0,
        all: false,
        triangles: false,
        distances: false,
    };
}

/// A body pair found by a contact query with [`ContactQuery::all`].
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct PairHit {
    /// Body of the lower object index.
    pub a: BodyId,
    /// Body of the higher object index.
    pub b: BodyId,
    /// Exact unpadded distance (m) when [`ContactQuery::distances`], else NaN.
    pub distance: f64,
    /// Intersecting triangle pairs when [`ContactQuery::triangles`] (empty if the
    /// surfaces are only within the clearance).
    pub triangles: Vec<(u32, u32)>,
}

/// Can two boxes hold points closer than `bound` (touching counts when `bound` is 0)?
#[inline]
fn boxes_within(x: &Obb, y: &Obb, bound: f64) -> bool {
    if bound == 0.0 {
        x.intersects(y)
    } else {
        x.distance_lower_bound(y) < bound
    }
}

pub(crate) fn pair_slot(n: usize, a: usize, b: usize) -> usize {
    // Index of (a, b), a < b, in row-major order over the strict upper triangle.
    a * n - a * (a + 1) / 2 + (b - a - 1)
}

// A compile-time check: one scenario is queried from several threads at once (each with
// its own state: `batch`, the collision-matrix generator, the node's parallel sweeps), so it
// and its states must stay Send and Sync.
const _: fn() = || {
    fn send_and_sync<T: Send + Sync>() {}
    send_and_sync::<Scenario>();
    send_and_sync::<ScenarioState>();
};

impl Scenario {
    /// An empty scenario.
    pub fn new() -> Self {
        Scenario {
            objects: Vec::new(),
            cmatrix: None,
            skip: Vec::new(),
            state: ScenarioState::default(),
            broadphase: true,
        }
    }

    /// Switches the broadphase over objects on (the default) or off. From
    /// [`crate::broadphase::MIN_OBJECTS`] objects on, with level L1, contact queries test
    /// only the object pairs whose world boxes overlap (sweep and prune) and distance queries
    /// visit object pairs by the gap of their boxes; it changes speed, never answers.
    pub fn set_broadphase(&mut self, on: bool) {
        self.broadphase = on;
    }

    /// Is the broadphase over objects on?
    pub fn broadphase(&self) -> bool {
        self.broadphase
    }

    /// Does a query with `opts` use the broadphase?
    fn uses_broadphase(&self, opts: &QueryOptions) -> bool {
        self.broadphase
            && self.objects.len() >= crate::broadphase::MIN_OBJECTS
            && opts.resolution_levels.uses_l1()
    }

    /// Largest sum of the paddings of two bodies of different objects.
    fn max_pad_sum(rules: &PairRules, n: usize) -> f64 {
        let mut m = [0.0f64; 2];
        for o in 0..n {
            let p = rules.max_pad(o);
            if p > m[0] {
                m = [p, m[0]];
            } else if p > m[1] {
                m[1] = p;
            }
        }
        m[0] + m[1]
    }

    fn add(&mut self, object: Object) -> Result<usize, SceneError> {
        if self.objects.iter().any(|o| o.name() == object.name()) {
            return Err(SceneError::DuplicateName {
                name: object.name().to_owned(),
            });
        }
        if object.name().is_empty() || object.name().contains('/') {
            return Err(SceneError::Invalid(format!(
                "object name `{}` must be non-empty and contain no `/`",
                object.name()
            )));
        }
        self.state.push_object(&object);
        self.objects.push(object);
        let k = self.objects.len() - 1;
        let mut st = std::mem::take(&mut self.state);
        let q = st.posed[k].q.clone();
        let res = self.set_joint_positions_with(&mut st, k, &q);
        self.state = st;
        res?;
        // Adding an object invalidates the resolved collision matrix.
        self.cmatrix = None;
        self.skip.clear();
        Ok(k)
    }

    /// Adds a robot (complex object) at joint positions zero (clamped into the limits);
    /// returns its index. Drops any collision matrix (it no longer fits).
    pub fn add_robot(&mut self, robot: Robot) -> Result<usize, SceneError> {
        let zero = robot.kinematics().clamp(&vec![0.0; robot.dof()])?;
        let k = self.add(Object::Complex(robot))?;
        self.set_joint_positions(k, &zero)?;
        Ok(k)
    }

    /// Adds a simple object; returns its index. Drops any collision matrix.
    pub fn add_object(&mut self, object: SimpleObject) -> Result<usize, SceneError> {
        crate::object::check_pose(&object.pose, &format!("pose of `{}`", object.name))?;
        self.add(Object::Simple(object))
    }

    /// The objects, in insertion order.
    pub fn objects(&self) -> &[Object] {
        &self.objects
    }

    /// Index of the object called `name`.
    pub fn object_index(&self, name: &str) -> Result<usize, SceneError> {
        self.objects
            .iter()
            .position(|o| o.name() == name)
            .ok_or_else(|| SceneError::UnknownName {
                what: "object",
                name: name.to_owned(),
            })
    }

    /// `object/body` name of a body.
    pub fn body_name(&self, id: BodyId) -> String {
        let o = &self.objects[id.object];
        format!("{}/{}", o.name(), o.body(id.body).name)
    }

    /// Sets the joint positions of robot `object` (joint-vector order of its kinematics)
    /// and poses its bodies and boxes. Values must be finite; limits are not enforced
    /// (check them with the kinematics if you need to).
    pub fn set_joint_positions(&mut self, object: usize, q: &[f64]) -> Result<(), SceneError> {
        // (the state borrowed beside the objects: no move of the whole state per call)
        set_positions(&self.objects, &mut self.state, object, q)
    }

    /// A state for queries from another thread: a copy of the scenario's current
    /// configuration (and weight matrix), with its own buffers.
    pub fn new_state(&self) -> ScenarioState {
        self.state.clone()
    }

    /// [`Scenario::set_joint_positions`] in `state` (a configuration of this scenario; the
    /// scenario itself is not changed). Simple objects (no joints) only accept an empty `q`.
    pub fn set_joint_positions_with(
        &self,
        state: &mut ScenarioState,
        object: usize,
        q: &[f64],
    ) -> Result<(), SceneError> {
        set_positions(&self.objects, state, object, q)
    }

    /// Current joint positions of `object` (empty for simple objects).
    pub fn joint_positions(&self, object: usize) -> &[f64] {
        self.state.joint_positions(object)
    }

    /// Current world poses of the bodies of `object`.
    pub fn body_poses(&self, object: usize) -> &[Isometry3<f64>] {
        self.state.body_poses(object)
    }

    /// Current world boxes of the bodies of `object` (level L2).
    pub fn body_boxes(&self, object: usize) -> &[Obb] {
        self.state.body_boxes(object)
    }

    /// Current world box of the whole object (level L1).
    pub fn object_box(&self, object: usize) -> &Obb {
        self.state.object_box(object)
    }

    /// The scenario's own state (its current configuration).
    pub fn state(&self) -> &ScenarioState {
        &self.state
    }

    /// Lends the scenario's own state out (for `&mut self` queries built on the `*_with`
    /// ones, which never read the scenario's state); give it back with
    /// [`Scenario::put_state`].
    pub(crate) fn take_state(&mut self) -> ScenarioState {
        std::mem::take(&mut self.state)
    }

    /// Gives back the state [`Scenario::take_state`] lent.
    pub(crate) fn put_state(&mut self, state: ScenarioState) {
        self.state = state;
    }

    /// The weight matrix (link collision probabilities).
    pub fn weights(&self) -> &WeightMatrix {
        &self.state.weights
    }

    /// Mutable access to the weight matrix (e.g. to reset it or change its rates).
    pub fn weights_mut(&mut self) -> &mut WeightMatrix {
        &mut self.state.weights
    }

    /// Attaches a collision matrix after checking that its object and link names and the
    /// base poses it was computed for match this scenario.
    pub fn set_collision_matrix(&mut self, cm: CollisionMatrix) -> Result<(), SceneError> {
        self.skip = self.collision_matrix_skips(&cm)?;
        self.cmatrix = Some(cm);
        Ok(())
    }

    /// Checks the names and poses of `cm` against this scenario and returns the skip flags
    /// per object pair (row-major, `a < b`).
    fn collision_matrix_skips(&self, cm: &CollisionMatrix) -> Result<Vec<Vec<bool>>, SceneError> {
        let err = |message: String| SceneError::CollisionMatrix { message };
        let objects = self.objects();
        for mo in &cm.objects {
            let k = self
                .object_index(&mo.name)
                .map_err(|_| err(format!("unknown object `{}`", mo.name)))?;
            let want = mo.pose.to_isometry()?;
            let have = objects[k].pose();
            let dp = (want.translation.vector - have.translation.vector).norm();
            let dr = want.rotation.angle_to(&have.rotation);
            if dp > 1e-9 || dr > 1e-9 {
                return Err(err(format!(
                    "computed for `{}` at {:?}, the scene places it elsewhere ({dp:.3e} m, {dr:.3e} rad off); regenerate it",
                    mo.name, mo.pose
                )));
            }
        }
        for o in objects {
            if !cm.objects.iter().any(|m| m.name == o.name()) {
                return Err(err(format!(
                    "object `{}` of the scene is not in the matrix; regenerate it",
                    o.name()
                )));
            }
        }
        let n = objects.len();
        let mut skip: Vec<Vec<bool>> = Vec::new();
        for a in 0..n {
            for b in a + 1..n {
                skip.push(vec![
                    false;
                    objects[a].num_bodies() * objects[b].num_bodies()
                ]);
            }
        }
        let find = |full: &str| -> Result<BodyId, SceneError> {
            let (o, l) = full
                .split_once('/')
                .ok_or_else(|| err(format!("`{full}` is not an object/body name")))?;
            let k = self
                .object_index(o)
                .map_err(|_| err(format!("unknown object `{o}` in `{full}`")))?;
            let obj = &objects[k];
            let i = (0..obj.num_bodies())
                .find(|&i| obj.body(i).name == l)
                .ok_or_else(|| err(format!("unknown link `{l}` of `{o}` in `{full}`")))?;
            Ok(BodyId { object: k, body: i })
        };
        for [x, y] in &cm.never_collide {
            let (a, b) = (find(x)?, find(y)?);
            if a.object == b.object {
                return Err(err(format!(
                    "`{x}` and `{y}` belong to the same object; only pairs of different objects are queried"
                )));
            }
            let (a, b) = if a.object < b.object { (a, b) } else { (b, a) };
            let slot = pair_slot(n, a.object, b.object);
            let nb = objects[b.object].num_bodies();
            skip[slot][a.body * nb + b.body] = true;
        }
        Ok(skip)
    }

    /// The attached collision matrix.
    pub fn collision_matrix(&self) -> Option<&CollisionMatrix> {
        self.cmatrix.as_ref()
    }

    /// True if the attached collision matrix says the two bodies never collide.
    pub fn never_collide(&self, a: BodyId, b: BodyId) -> bool {
        let (a, b) = if a.object < b.object { (a, b) } else { (b, a) };
        if self.skip.is_empty() || a.object == b.object {
            return false;
        }
        let slot = pair_slot(self.objects.len(), a.object, b.object);
        let nb = self.objects[b.object].num_bodies();
        self.skip[slot][a.body * nb + b.body]
    }

    /// Number of body pairs between objects `a` and `b` the collision matrix skips.
    pub fn skipped_pairs(&self, a: usize, b: usize) -> usize {
        let (a, b) = (a.min(b), a.max(b));
        if self.skip.is_empty() || a == b {
            return 0;
        }
        self.skip[pair_slot(self.objects.len(), a, b)]
            .iter()
            .filter(|&&s| s)
            .count()
    }

    /// Pairs of distinct objects, `a < b`.
    pub fn object_pairs(&self) -> impl Iterator<Item = (usize, usize)> {
        let n = self.objects.len();
        (0..n).flat_map(move |a| (a + 1..n).map(move |b| (a, b)))
    }

    /// Collision query over every pair of objects; stops at the first overlap.
    pub fn collide(&mut self, opts: &QueryOptions) -> CollisionReport {
        let mut st = std::mem::take(&mut self.state);
        let r = self.collide_with(&mut st, opts);
        self.state = st;
        r
    }

    /// [`Scenario::collide`] in `st` (any configuration of this scenario; `&self`, so
    /// threads can share the scenario, each with its own state).
    pub fn collide_with(&self, st: &mut ScenarioState, opts: &QueryOptions) -> CollisionReport {
        self.contact(
            st,
            opts,
            &PairRules::NONE,
            &ContactQuery::COLLISION,
            &mut Vec::new(),
        )
    }

    /// Collision query between objects `a` and `b` (the algorithm of the paper's Fig. 5).
    pub fn collide_objects(&mut self, a: usize, b: usize, opts: &QueryOptions) -> CollisionReport {
        let mut st = std::mem::take(&mut self.state);
        let r = self.collide_objects_with(&mut st, a, b, opts);
        self.state = st;
        r
    }

    /// [`Scenario::collide_objects`] in `st` (any configuration of this scenario; `&self`, so
    /// threads can share the scenario, each with its own state).
    pub fn collide_objects_with(
        &self,
        st: &mut ScenarioState,
        a: usize,
        b: usize,
        opts: &QueryOptions,
    ) -> CollisionReport {
        let mut stats = QueryStats::default();
        let pair = self.contact_pair_inner(
            st,
            a,
            b,
            opts,
            &PairRules::NONE,
            &ContactQuery::COLLISION,
            &mut stats,
            &mut Vec::new(),
        );
        CollisionReport {
            colliding: pair.is_some(),
            pair,
            stats,
        }
    }

    /// Contact query over every pair of objects under `rules`: the pairs closer than
    /// `q.clearance` plus their paddings (touching always counts). Stops at the first such
    /// pair unless `q.all`; with `q.all` every pair found is appended to `hits` (in query
    /// order). The report names the first pair found.
    pub(crate) fn contact(
        &self,
        st: &mut ScenarioState,
        opts: &QueryOptions,
        rules: &PairRules,
        q: &ContactQuery,
        hits: &mut Vec<PairHit>,
    ) -> CollisionReport {
        let mut stats = QueryStats::default();
        let mut first = None;
        let n = self.objects.len();
        if self.uses_broadphase(opts) {
            let margin = q.clearance + Self::max_pad_sum(rules, n);
            let mut bp = std::mem::take(&mut st.broadphase);
            bp.overlapping(&st.posed, margin);
            let dropped = (n * (n - 1) / 2 - bp.pairs.len()) as u64;
            stats.l1_tests += dropped;
            stats.l1_solved += dropped;
            for &(a, b) in &bp.pairs {
                let (a, b) = (a as usize, b as usize);
                let p = self.contact_pair_inner(st, a, b, opts, rules, q, &mut stats, hits);
                if first.is_none() {
                    first = p;
                }
                if first.is_some() && !q.all {
                    break;
                }
            }
            st.broadphase = bp;
            return CollisionReport {
                colliding: first.is_some(),
                pair: first,
                stats,
            };
        }
        for a in 0..n {
            for b in a + 1..n {
                let p = self.contact_pair_inner(st, a, b, opts, rules, q, &mut stats, hits);
                if first.is_none() {
                    first = p;
                }
                if first.is_some() && !q.all {
                    return CollisionReport {
                        colliding: true,
                        pair: first,
                        stats,
                    };
                }
            }
        }
        CollisionReport {
            colliding: first.is_some(),
            pair: first,
            stats,
        }
    }

    fn fill_order(&self, st: &mut ScenarioState, a: usize, b: usize, weighted: bool) {
        let nb = self.objects[b].num_bodies();
        let na = self.objects[a].num_bodies();
        st.order.clear();
        for i in 0..na {
            for j in 0..nb {
                let w = if weighted {
                    st.weights.weight(a, i, b, j)
                } else {
                    0.0
                };
                st.order.push((w, (i * nb + j) as u32));
            }
        }
        if weighted {
            // Highest weight first; ties in index order.
            st.order
                .sort_unstable_by(|x, y| y.0.total_cmp(&x.0).then(x.1.cmp(&y.1)));
        }
    }

    /// The one contact loop over the body pairs of objects `a` and `b` (collision, padded
    /// collision and tolerance queries): L1 box, then per pair the rules, the collision
    /// matrix (only for pairs with no clearance: it was computed for contact), the link
    /// boxes (L2, inflated by the clearance) and the meshes (L3). Returns the first pair
    /// found; with `q.all` keeps going and appends every pair found to `hits`.
    #[allow(clippy::too_many_arguments)]
    fn contact_pair_inner(
        &self,
        st: &mut ScenarioState,
        a: usize,
        b: usize,
        opts: &QueryOptions,
        rules: &PairRules,
        q: &ContactQuery,
        stats: &mut QueryStats,
        hits: &mut Vec<PairHit>,
    ) -> Option<(BodyId, BodyId)> {
        let (a, b) = (a.min(b), a.max(b));
        if !rules.objects_selected(a, b) {
            return None;
        }
        let levels = opts.resolution_levels;
        if levels.uses_l1() {
            stats.l1_tests += 1;
            let bound = q.clearance + rules.max_pad(a) + rules.max_pad(b);
            if !boxes_within(&st.posed[a].whole, &st.posed[b].whole, bound) {
                stats.l1_solved += 1;
                return None;
            }
        }
        let nb = self.objects[b].num_bodies();
        let slot = pair_slot(self.objects.len(), a, b);
        let n_pairs = self.objects[a].num_bodies() * nb;
        if opts.weight_matrix {
            let v = st.weights.version();
            let w = &st.weights;
            let o = &mut st.weighted_order[slot];
            if o.1.len() != n_pairs {
                o.1.clear();
                o.1.extend(0..n_pairs as u32);
                o.0 = u64::MAX;
            }
            if o.0 != v {
                // Insertion sort: the previous order is nearly sorted after an update.
                let key = |k: u32| {
                    let k = k as usize;
                    w.weight(a, k / nb, b, k % nb)
                };
                for x in 1..o.1.len() {
                    let cur = o.1[x];
                    let kc = key(cur);
                    let mut y = x;
                    while y > 0 {
                        let prev = o.1[y - 1];
                        let kp = key(prev);
                        if kp > kc || (kp == kc && prev < cur) {
                            break;
                        }
                        o.1[y] = prev;
                        y -= 1;
                    }
                    o.1[y] = cur;
                }
                o.0 = v;
            }
        } else {
            let o = &mut st.weighted_order[slot];
            if o.0 != u64::MAX - 1 || o.1.len() != n_pairs {
                o.0 = u64::MAX - 1;
                o.1.clear();
                o.1.extend(0..n_pairs as u32);
            }
        }
        let order = std::mem::take(&mut st.weighted_order[slot].1);
        let skip = if opts.collision_matrix && !self.skip.is_empty() {
            Some(&self.skip[slot])
        } else {
            None
        };
        let overrides = rules.overrides.get(slot).filter(|o| !o.is_empty());
        let (pa, pb) = (&st.posed[a], &st.posed[b]);
        let (oa, ob) = (&self.objects[a], &self.objects[b]);
        let mut found = None;
        for &k in &order {
            let k = k as usize;
            let (i, j) = (k / nb, k % nb);
            let (id_a, id_b) = (BodyId { object: a, body: i }, BodyId { object: b, body: j });
            stats.pairs_considered += 1;
            if !rules.selected(id_a, id_b) {
                continue;
            }
            let ov = overrides.map_or(0, |o| o[k]);
            if ov > 0 {
                // Allowed at run time.
                continue;
            }
            let bound = q.clearance + rules.pad(id_a) + rules.pad(id_b);
            if ov == 0 && bound == 0.0 {
                if let Some(s) = skip {
                    if s[k] {
                        stats.cm_skipped += 1;
                        continue;
                    }
                }
            }
            if levels.uses_l2() {
                stats.l2_tests += 1;
                let rr = pa.radii[i] + pb.radii[j] + bound;
                if (pa.boxes[i].center - pb.boxes[j].center).norm_squared() > rr * rr
                    || !boxes_within(&pa.boxes[i], &pb.boxes[j], bound)
                {
                    stats.l2_solved += 1;
                    continue;
                }
            }
            stats.l3_tests += 1;
            let (pose_a, model_a) = (&pa.poses[i], &oa.body(i).model);
            let (pose_b, model_b) = (&pb.poses[j], &ob.body(j).model);
            // Distance of a hit pair (exact when asked for, else NaN).
            let hit = if bound == 0.0 {
                rpq_proximity::intersects(pose_a, model_a, pose_b, model_b, &mut st.ws)
                    .then_some(if q.distances { 0.0 } else { f64::NAN })
            } else if q.distances {
                let req = DistanceRequest::with_upper_bound(bound);
                rpq_proximity::distance(pose_a, model_a, pose_b, model_b, &req, &mut st.ws)
                    .map(|r| r.distance)
            } else {
                rpq_proximity::tolerance(pose_a, model_a, pose_b, model_b, bound, &mut st.ws)
                    .closer_than
                    .then_some(f64::NAN)
            };
            let (bv, tri) = st.ws.last_counts();
            stats.engine_bv_tests += bv as u64;
            stats.engine_triangle_tests += tri as u64;
            let Some(distance) = hit else {
                if opts.weight_matrix && bound == 0.0 {
                    st.weights.note_clear(a, i, b, j);
                }
                continue;
            };
            if opts.weight_matrix && bound == 0.0 {
                st.weights.note_collision(a, i, b, j);
            }
            if found.is_none() {
                found = Some((id_a, id_b));
            }
            if !q.all {
                break;
            }
            let triangles = if q.triangles {
                rpq_proximity::collide(
                    pose_a,
                    model_a,
                    pose_b,
                    model_b,
                    CollisionMode::AllContacts,
                    &mut st.ws,
                )
                .pairs
            } else {
                Vec::new()
            };
            hits.push(PairHit {
                a: id_a,
                b: id_b,
                distance,
                triangles,
            });
        }
        st.weighted_order[slot].1 = order;
        found
    }

    /// Self-collision of robot `object`: overlapping pairs of its bodies whose links are
    /// not adjacent (parent and child links always touch at their joint and are skipped),
    /// testing link boxes first, in index order. Neither the weight matrix nor the collision
    /// matrix applies (they describe pairs of different objects).
    pub fn self_collide(&mut self, object: usize) -> CollisionReport {
        let mut st = std::mem::take(&mut self.state);
        let r = self.self_collide_with(&mut st, object);
        self.state = st;
        r
    }

    /// [`Scenario::self_collide`] in `st` (any configuration of this scenario; `&self`, so
    /// threads can share the scenario, each with its own state).
    pub fn self_collide_with(&self, st: &mut ScenarioState, object: usize) -> CollisionReport {
        let mut stats = QueryStats::default();
        let Some(Object::Complex(r)) = self.objects.get(object) else {
            return CollisionReport {
                colliding: false,
                pair: None,
                stats,
            };
        };
        let links = r.body_links();
        let kin = r.kinematics();
        let p = &st.posed[object];
        let n = links.len();
        for i in 0..n {
            for j in i + 1..n {
                let (li, lj) = (links[i], links[j]);
                if kin.links()[lj].parent_link == Some(li)
                    || kin.links()[li].parent_link == Some(lj)
                {
                    continue;
                }
                stats.pairs_considered += 1;
                stats.l2_tests += 1;
                if !p.boxes[i].intersects(&p.boxes[j]) {
                    stats.l2_solved += 1;
                    continue;
                }
                stats.l3_tests += 1;
                if rpq_proximity::intersects(
                    &p.poses[i],
                    &r.bodies()[i].model,
                    &p.poses[j],
                    &r.bodies()[j].model,
                    &mut st.ws,
                ) {
                    return CollisionReport {
                        colliding: true,
                        pair: Some((BodyId { object, body: i }, BodyId { object, body: j })),
                        stats,
                    };
                }
            }
        }
        CollisionReport {
            colliding: false,
            pair: None,
            stats,
        }
    }

    /// The lexicographically first overlapping body pair `(object a, body i, object b,
    /// body j)` over all object pairs, testing every pair (link boxes first): a canonical
    /// answer that does not depend on query order. `None` if nothing overlaps.
    pub fn first_colliding_pair(&mut self) -> Option<(BodyId, BodyId)> {
        let mut st = std::mem::take(&mut self.state);
        let r = self.first_colliding_pair_with(&mut st);
        self.state = st;
        r
    }

    /// [`Scenario::first_colliding_pair`] in `st` (any configuration of this scenario; `&self`, so
    /// threads can share the scenario, each with its own state).
    pub fn first_colliding_pair_with(&self, st: &mut ScenarioState) -> Option<(BodyId, BodyId)> {
        let pairs: Vec<(usize, usize)> = self.object_pairs().collect();
        for (a, b) in pairs {
            let (na, nb) = (self.objects[a].num_bodies(), self.objects[b].num_bodies());
            for i in 0..na {
                for j in 0..nb {
                    let (pa, pb) = (&st.posed[a], &st.posed[b]);
                    if !pa.boxes[i].intersects(&pb.boxes[j]) {
                        continue;
                    }
                    if rpq_proximity::intersects(
                        &pa.poses[i],
                        &self.objects[a].body(i).model,
                        &pb.poses[j],
                        &self.objects[b].body(j).model,
                        &mut st.ws,
                    ) {
                        return Some((
                            BodyId { object: a, body: i },
                            BodyId { object: b, body: j },
                        ));
                    }
                }
            }
        }
        None
    }

    /// Minimum distance between any two bodies of different objects, naming the two
    /// closest bodies, with witness points. Ties are broken towards the smallest
    /// `(object a, body i, object b, body j)`, so the answer does not depend on the
    /// options. `None` for scenarios with fewer than two objects.
    pub fn min_distance(&mut self, opts: &QueryOptions) -> Option<DistanceReport> {
        let mut st = std::mem::take(&mut self.state);
        let r = self.min_distance_with(&mut st, opts);
        self.state = st;
        r
    }

    /// [`Scenario::min_distance`] in `st` (any configuration of this scenario; `&self`, so
    /// threads can share the scenario, each with its own state).
    pub fn min_distance_with(
        &self,
        st: &mut ScenarioState,
        opts: &QueryOptions,
    ) -> Option<DistanceReport> {
        self.min_distance_ruled(st, opts, &PairRules::NONE, &DistanceRequest::default())
    }

    /// [`Scenario::min_distance`] over the pairs `rules` keep, each pair's distance
    /// reduced by its paddings and clamped at 0 (witness points on the unpadded
    /// surfaces); `req` gives the error allowances (its upper bound is ignored).
    pub(crate) fn min_distance_ruled(
        &self,
        st: &mut ScenarioState,
        opts: &QueryOptions,
        rules: &PairRules,
        req: &DistanceRequest,
    ) -> Option<DistanceReport> {
        let mut best: Option<DistanceReport> = None;
        let mut stats = QueryStats::default();
        let n = self.objects.len();
        if self.uses_broadphase(opts) {
            // Object pairs by the gap of their boxes; stop once the gap less the largest
            // paddings exceeds the best distance found (ties go on: the tie rule needs them).
            let pads = Self::max_pad_sum(rules, n);
            let mut bp = std::mem::take(&mut st.broadphase);
            bp.by_gap(&st.posed);
            for (k, &(gap, a, b)) in bp.gaps.iter().enumerate() {
                if best.as_ref().is_some_and(|r| gap - pads > r.distance) {
                    let rest = (bp.gaps.len() - k) as u64;
                    stats.l1_tests += rest;
                    stats.l1_solved += rest;
                    break;
                }
                let (a, b) = (a as usize, b as usize);
                self.distance_inner(st, a, b, opts, rules, req, &mut best, &mut stats);
            }
            st.broadphase = bp;
        } else {
            for a in 0..n {
                for b in a + 1..n {
                    self.distance_inner(st, a, b, opts, rules, req, &mut best, &mut stats);
                }
            }
        }
        best.map(|mut r| {
            r.stats = stats;
            r
        })
    }

    /// Minimum distance between objects `a` and `b` (robot–robot or robot–object), with
    /// the two closest bodies and witness points; same tie rule as
    /// [`Scenario::min_distance`].
    pub fn distance_between(
        &mut self,
        a: usize,
        b: usize,
        opts: &QueryOptions,
    ) -> Option<DistanceReport> {
        let mut st = std::mem::take(&mut self.state);
        let r = self.distance_between_with(&mut st, a, b, opts);
        self.state = st;
        r
    }

    /// [`Scenario::distance_between`] in `st`.
    pub fn distance_between_with(
        &self,
        st: &mut ScenarioState,
        a: usize,
        b: usize,
        opts: &QueryOptions,
    ) -> Option<DistanceReport> {
        if a == b || a >= self.objects.len() || b >= self.objects.len() {
            return None;
        }
        let mut best = None;
        let mut stats = QueryStats::default();
        self.distance_inner(
            st,
            a.min(b),
            a.max(b),
            opts,
            &PairRules::NONE,
            &DistanceRequest::default(),
            &mut best,
            &mut stats,
        );
        best.map(|mut r| {
            r.stats = stats;
            r
        })
    }

    /// The one distance loop over the body pairs of objects `a < b`: pairs ordered by the
    /// lower bound of their link boxes (minus paddings) and pruned by the best so far.
    /// Pairs the rules drop or allow at run time are skipped; the collision matrix is not
    /// used (distances stay exact).
    #[allow(clippy::too_many_arguments)]
    fn distance_inner(
        &self,
        st: &mut ScenarioState,
        a: usize,
        b: usize,
        opts: &QueryOptions,
        rules: &PairRules,
        req: &DistanceRequest,
        best: &mut Option<DistanceReport>,
        stats: &mut QueryStats,
    ) {
        if !rules.objects_selected(a, b) {
            return;
        }
        let nb = self.objects[b].num_bodies();
        let use_l2 = opts.resolution_levels.uses_l2();
        if use_l2 {
            // Order by the lower bound of the link boxes less the paddings; ties in index
            // order.
            let na = self.objects[a].num_bodies();
            st.order.clear();
            for i in 0..na {
                let pad_a = rules.pad(BodyId { object: a, body: i });
                for j in 0..nb {
                    let pad = pad_a + rules.pad(BodyId { object: b, body: j });
                    let lb = st.posed[a].boxes[i].distance_lower_bound(&st.posed[b].boxes[j]);
                    st.order.push((lb - pad, (i * nb + j) as u32));
                }
            }
            stats.l2_tests += st.order.len() as u64;
            st.order
                .sort_unstable_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)));
        } else {
            self.fill_order(st, a, b, opts.weight_matrix);
        }
        let overrides = if rules.overrides.is_empty() {
            None
        } else {
            Some(&rules.overrides[pair_slot(self.objects.len(), a, b)]).filter(|o| !o.is_empty())
        };
        let (pa, pb) = (&st.posed[a], &st.posed[b]);
        let (oa, ob) = (&self.objects[a], &self.objects[b]);
        for (n, &(lb, k)) in st.order.iter().enumerate() {
            let k = k as usize;
            let (i, j) = (k / nb, k % nb);
            let cur = best.as_ref().map_or(f64::INFINITY, |r| r.distance);
            if use_l2 && lb > cur {
                // Sorted by lower bound: every remaining pair is farther than the best.
                stats.l2_solved += (st.order.len() - n) as u64;
                break;
            }
            let id_a = BodyId { object: a, body: i };
            let id_b = BodyId { object: b, body: j };
            if !rules.selected(id_a, id_b) || overrides.is_some_and(|o| o[k] > 0) {
                continue;
            }
            stats.pairs_considered += 1;
            let pad = rules.pad(id_a) + rules.pad(id_b);
            // Slightly above the best so that exact ties are seen and broken by index.
            let ub = if cur.is_finite() {
                let u = cur + pad;
                u + u.abs() * 1e-12 + 1e-15
            } else {
                f64::INFINITY
            };
            let req = DistanceRequest {
                upper_bound: ub,
                ..*req
            };
            stats.l3_tests += 1;
            let Some(res) = rpq_proximity::distance(
                &pa.poses[i],
                &oa.body(i).model,
                &pb.poses[j],
                &ob.body(j).model,
                &req,
                &mut st.ws,
            ) else {
                continue;
            };
            let d = (res.distance - pad).max(0.0);
            let better = match best.as_ref() {
                None => true,
                Some(r) => {
                    d < r.distance || (d == r.distance && (id_a, id_b) < (r.body_a, r.body_b))
                }
            };
            if better {
                *best = Some(DistanceReport {
                    distance: d,
                    body_a: id_a,
                    body_b: id_b,
                    point_a: res.point_a,
                    point_b: res.point_b,
                    stats: QueryStats::default(),
                });
            }
        }
    }

    /// Exact distance and witness points between two given bodies.
    pub fn body_distance(&mut self, a: BodyId, b: BodyId) -> Option<DistanceReport> {
        let mut st = std::mem::take(&mut self.state);
        let r = self.body_distance_with(&mut st, a, b);
        self.state = st;
        r
    }

    /// [`Scenario::body_distance`] in `st` (any configuration of this scenario; `&self`, so
    /// threads can share the scenario, each with its own state).
    pub fn body_distance_with(
        &self,
        st: &mut ScenarioState,
        a: BodyId,
        b: BodyId,
    ) -> Option<DistanceReport> {
        let res = rpq_proximity::distance(
            &st.posed[a.object].poses[a.body],
            &self.objects[a.object].body(a.body).model,
            &st.posed[b.object].poses[b.body],
            &self.objects[b.object].body(b.body).model,
            &DistanceRequest::default(),
            &mut st.ws,
        )?;
        Some(DistanceReport {
            distance: res.distance,
            body_a: a,
            body_b: b,
            point_a: res.point_a,
            point_b: res.point_b,
            stats: QueryStats::default(),
        })
    }

    /// Are the two bodies closer than `t`? (Used to build collision matrices.)
    pub fn bodies_closer_than(&mut self, a: BodyId, b: BodyId, t: f64) -> bool {
        let mut st = std::mem::take(&mut self.state);
        let r = self.bodies_closer_than_with(&mut st, a, b, t);
        self.state = st;
        r
    }

    /// [`Scenario::bodies_closer_than`] in `st` (any configuration of this scenario; `&self`, so
    /// threads can share the scenario, each with its own state).
    pub fn bodies_closer_than_with(
        &self,
        st: &mut ScenarioState,
        a: BodyId,
        b: BodyId,
        t: f64,
    ) -> bool {
        let (pa, pb) = (&st.posed[a.object], &st.posed[b.object]);
        if pa.boxes[a.body].distance_lower_bound(&pb.boxes[b.body]) >= t {
            return false;
        }
        rpq_proximity::tolerance(
            &pa.poses[a.body],
            &self.objects[a.object].body(a.body).model,
            &pb.poses[b.body],
            &self.objects[b.object].body(b.body).model,
            t,
            &mut st.ws,
        )
        .closer_than
    }

    /// The per-configuration answer the command-line tool writes: colliding flag (from
    /// the optimized collision query), minimum distance and the closest pair with
    /// witness points. When colliding the distance is 0 and the pair is the canonical
    /// [`Scenario::first_colliding_pair`], so the answer does not depend on the options.
    pub fn query(&mut self, opts: &QueryOptions) -> Option<(bool, DistanceReport)> {
        let mut st = std::mem::take(&mut self.state);
        let r = self.query_with(&mut st, opts);
        self.state = st;
        r
    }

    /// [`Scenario::query`] in `st` (any configuration of this scenario; `&self`, so
    /// threads can share the scenario, each with its own state).
    pub fn query_with(
        &self,
        st: &mut ScenarioState,
        opts: &QueryOptions,
    ) -> Option<(bool, DistanceReport)> {
        let c = self.collide_with(st, opts);
        if c.colliding {
            let (a, b) = self.first_colliding_pair_with(st).or(c.pair)?;
            let mut r = self.body_distance_with(st, a, b)?;
            r.distance = 0.0;
            r.stats = c.stats;
            Some((true, r))
        } else {
            let mut r = self.min_distance_with(st, opts)?;
            r.stats += c.stats;
            Some((false, r))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::pair_slot;

    #[test]
    fn pair_slots_are_dense() {
        let n = 5;
        let mut k = 0;
        for a in 0..n {
            for b in a + 1..n {
                assert_eq!(pair_slot(n, a, b), k);
                k += 1;
            }
        }
    }
}
