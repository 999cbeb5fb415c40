//! The task simulator of §4: the workpiece moved by an applied wrench among fixed obstacles,
//! with contact reactions, first-order dynamics, barrier potentials and capture objects.
//!
//! One [`ContactSimulator::step`]:
//!
//! 1. **Contacts.** Every obstacle closer than ε_c (engine distance query with that upper
//!    bound) contributes its contact points and normals ([`crate::contact`]).
//! 2. **Barrier forces.** For an obstacle closer than ε_b = ε_c / 2 the repulsive force
//!    `−dU_i/dd · n` of eq. 2 is added to the applied force (translation only, along the
//!    engine's witness direction `n`), limited so that by itself it would move the workpiece
//!    at most back to ε_b within the step.
//! 3. **Reactions.** Non-negative normal forces that keep every contact from closing: the
//!    LCP of [`crate::lcp`], solved exactly by the active-set method with its convergence
//!    test, projected Gauss–Seidel as the fallback. A contact between ε_b and ε_c may close
//!    by its gap above ε_b within the step (the row's normal velocity must be at least
//!    `−(d_i − ε_b)/Δt`, a "speculative" contact): without that slack, a contact a little
//!    farther than ε_b, such as the edge of a corner the workpiece slides past at 1.5 mm,
//!    would forbid any approach and hold the workpiece still.
//! 4. **Velocity** by eq. 1: `v = d_t f`, `ω = d_r m` with `f = Σf_i + f_a`,
//!    `m = Σ p_i × f_i + m_a` (moments about the workpiece centre), both scaled down together
//!    if faster than `max_speed` / `max_angular_speed`.
//! 5. **No tunnelling: conservative advancement.** With `μ = Δt (|v| + |ω| r)` a bound on how
//!    far any point of the workpiece moves over the whole step (`r`: the largest distance of
//!    a vertex from the centre), the step fraction is advanced obstacle by obstacle by
//!    `(d − η)/μ` from the exact distance `d` at the fraction reached, which can bring no point
//!    closer than `η` (`η` = `advance_margin × ε_b`, at most half the starting distance).
//!    This gives `s_max ≤ 1`, the largest fraction of the step that is certainly free, however
//!    thin the obstacle and however fast the motion.
//! 6. **Golden-section search** of `U(s) = U_v(s) + Σ U_i(d_i(s))` over `[0, s_max]`, with
//!    `U_v(s) = −(|v|²/d_t + |ω|²/d_r) Δt s`, for the obstacles the motion can bring within
//!    ε_b (and every captured one). Since `U_v` falls linearly and every `U_i ≥ 0`, when no
//!    barrier is active at `s_max` (or no obstacle is in reach) `s_max` is the global minimum
//!    and no search is needed. The workpiece moves to the minimiser.
//!
//! Capture objects ([`ContactSimulator::step`]'s `capture`) keep their contact once it is
//! made: a capture object counts as captured while it is closer than ε_c, and then its
//! barrier is infinite at ε_c too (the paper's barrier at both sides), so the search never
//! lets it go. The paper notes that such motions "stick" occasionally (its force
//! computation still lets the workpiece pull away, and the barrier then stops it); here the
//! captured contacts along the witness direction (the points of the face or edge that holds
//! the closest pair) are also **bilateral** rows of the force computation (the row and its
//! negation: the point may neither close nor open; points with other normals stay
//! unilateral, so the workpiece can still turn about a corner) and a drift correction
//! moves the workpiece halfway towards the middle of the barrier-free band of a captured
//! contact, `ε_b + (ε_c − ε_b)/4`, each step along the witness direction, so a
//! captured workpiece slides along its contact — or turns about it, round a corner — instead
//! of stopping at the outer barrier.

use std::sync::Arc;

use nalgebra::Vector3;
use rpq_proximity::{distance_lower_bound, QueryWorkspace};

use crate::barrier::Barrier;
use crate::contact::{obstacle_contacts, Contact, ContactScratch};
use crate::environment::Environment;
use crate::error::{check_positive, check_range, PathShrinkError};
use crate::geometry::{integrate, Pose, Twist, Wrench};
use crate::golden::golden_section;
use crate::lcp::{solve_active_set, solve_pgs, ActiveSetScratch, LcpReport, LcpSettings};

/// Contact points of a captured obstacle whose normal is within this cosine of the witness
/// direction are bilateral (the face or edge that holds the closest pair); the others stay
/// unilateral, so that the workpiece can still turn about a corner it is held against.
const BILATERAL_COS: f64 = 0.9999;

/// Parameters of the task simulator (units in brackets).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SimParams {
    /// ε_c [m]: objects closer than this are in contact. The barrier distance is ε_c / 2.
    pub contact_distance: f64,
    /// `K` of eq. 2 [J].
    pub barrier_gain: f64,
    /// `d_t` of eq. 1 [m/(N·s)].
    pub translational_mobility: f64,
    /// `d_r` of eq. 1 [rad/(N·m·s)].
    pub rotational_mobility: f64,
    /// Δt [s]: one simulator step.
    pub time_step: f64,
    /// Largest speed of the workpiece centre [m/s].
    pub max_speed: f64,
    /// Largest angular speed [rad/s].
    pub max_angular_speed: f64,
    /// Accuracy of the golden-section search, as a fraction of one step.
    pub golden_tolerance: f64,
    /// Conservative advancement stops this fraction of ε_b short of an obstacle.
    pub advance_margin: f64,
    /// The contact-force solver's limits.
    pub lcp: LcpSettings,
    /// Conservative advancement on (the default). Off, a fast workpiece can tunnel through a
    /// thin object: only for tests that show it.
    pub conservative_advancement: bool,
}

impl Default for SimParams {
    /// The paper's values where it gives them: ε_b = 1 mm (so ε_c = 2 mm), 20 Hz, 400 mm/s,
    /// golden-section accuracy 1e-5.
    fn default() -> Self {
        SimParams {
            contact_distance: 0.002,
            barrier_gain: 1e-3,
            translational_mobility: 0.1,
            rotational_mobility: 250.0,
            time_step: 0.05,
            max_speed: 0.4,
            max_angular_speed: 4.0,
            golden_tolerance: 1e-5,
            advance_margin: 0.1,
            lcp: LcpSettings::default(),
            conservative_advancement: true,
        }
    }
}

impl SimParams {
    /// ε_b = ε_c / 2 [m].
    pub fn barrier_distance(&self) -> f64 {
        0.5 * self.contact_distance
    }

    /// Refuses values outside their ranges (non-finite, non-positive, absurd).
    pub fn validate(&self) -> Result<(), PathShrinkError> {
        check_positive("contact_distance", self.contact_distance, 0.1)?;
        check_positive("barrier_gain", self.barrier_gain, 1e3)?;
        check_positive("translational_mobility", self.translational_mobility, 1e3)?;
        check_positive("rotational_mobility", self.rotational_mobility, 1e6)?;
        check_positive("time_step", self.time_step, 10.0)?;
        check_positive("max_speed", self.max_speed, 10.0)?;
        check_positive("max_angular_speed", self.max_angular_speed, 100.0)?;
        check_range("golden_tolerance", self.golden_tolerance, 1e-9, 0.1)?;
        check_range("advance_margin", self.advance_margin, 1e-3, 0.9)?;
        check_range("lcp.tolerance", self.lcp.tolerance, 1e-14, 1e-2)?;
        if self.lcp.max_iterations == 0 {
            return Err(PathShrinkError::Parameter {
                name: "lcp.max_iterations",
                value: 0.0,
                reason: "must be at least 1".into(),
            });
        }
        Ok(())
    }

    /// The step options of an ordinary simulator step.
    pub fn step_options(&self) -> StepOptions {
        StepOptions {
            translational_mobility: self.translational_mobility,
            rotational_mobility: self.rotational_mobility,
            time_step: self.time_step,
            max_speed: self.max_speed,
            max_angular_speed: self.max_angular_speed,
        }
    }
}

/// Mobilities, step length and speed limits of one step (the path modification moves each
/// node with its own; see [`crate::shrink`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepOptions {
    /// `d_t` [m/(N·s)].
    pub translational_mobility: f64,
    /// `d_r` [rad/(N·m·s)].
    pub rotational_mobility: f64,
    /// Δt [s].
    pub time_step: f64,
    /// [m/s]
    pub max_speed: f64,
    /// [rad/s]
    pub max_angular_speed: f64,
}

/// What one step did.
#[derive(Clone, Debug, PartialEq)]
pub struct StepReport {
    /// The new pose.
    pub pose: Pose,
    /// The velocity of eq. 1 after reactions and limits.
    pub twist: Twist,
    /// Fraction of the step taken (the golden-section minimiser).
    pub s: f64,
    /// Fraction certainly free of collision (conservative advancement).
    pub s_max: f64,
    /// Contact points in the force computation.
    pub contacts: usize,
    /// The contact-force solve.
    pub lcp: LcpReport,
    /// Engine distance queries made.
    pub distance_queries: usize,
    /// Evaluations of `U(s)` by the search (0 when no obstacle was in reach).
    pub potential_evaluations: usize,
}

/// The simulator: the environment and reusable buffers (no allocation per step once they
/// have grown).
#[derive(Debug)]
pub struct ContactSimulator {
    env: Arc<Environment>,
    params: SimParams,
    ws: QueryWorkspace,
    scratch: ContactScratch,
    contacts: Vec<Contact>,
    near: Vec<Option<f64>>,
    lower: Vec<f64>,
    normal: Vec<Vector3<f64>>,
    captured: Vec<bool>,
    relevant: Vec<(usize, Barrier)>,
    a: Vec<f64>,
    b: Vec<f64>,
    lambda: Vec<f64>,
    active_set: ActiveSetScratch,
    rows: Vec<(Vector3<f64>, Vector3<f64>, f64)>,
    touching: Vec<usize>,
    queries: usize,
}

impl ContactSimulator {
    /// A simulator of `env` with checked parameters.
    pub fn new(env: Arc<Environment>, params: SimParams) -> Result<Self, PathShrinkError> {
        params.validate()?;
        let n = env.obstacles.len();
        Ok(ContactSimulator {
            env,
            params,
            ws: QueryWorkspace::new(),
            scratch: ContactScratch::default(),
            contacts: Vec::new(),
            near: vec![None; n],
            lower: vec![0.0; n],
            normal: vec![Vector3::zeros(); n],
            captured: vec![false; n],
            relevant: Vec::new(),
            a: Vec::new(),
            b: Vec::new(),
            lambda: Vec::new(),
            active_set: ActiveSetScratch::default(),
            rows: Vec::new(),
            touching: Vec::new(),
            queries: 0,
        })
    }

    /// The environment.
    pub fn environment(&self) -> &Arc<Environment> {
        &self.env
    }

    /// The parameters.
    pub fn params(&self) -> &SimParams {
        &self.params
    }

    /// The obstacles closer than ε_c after the last step (index order).
    pub fn touching(&self) -> &[usize] {
        &self.touching
    }

    /// The contact points of the last step's force computation.
    pub fn contacts(&self) -> &[Contact] {
        &self.contacts
    }

    /// The engine workspace (for callers that query the same environment in between).
    pub fn workspace(&mut self) -> &mut QueryWorkspace {
        &mut self.ws
    }

    /// Obstacles within ε_c of the workpiece at `pose` (index order).
    pub fn contacts_at(&mut self, pose: &Pose) -> Vec<usize> {
        let within = self.params.contact_distance;
        self.env.touching(pose, within, &mut self.ws)
    }

    /// One simulator step of length Δt under `applied` (world frame, moment about the
    /// workpiece centre), keeping the contact with every obstacle of `capture` that is
    /// already in contact.
    pub fn step(&mut self, pose: &Pose, applied: &Wrench, capture: &[usize]) -> StepReport {
        let opt = self.params.step_options();
        self.step_with(pose, applied, capture, &opt)
    }

    /// [`Self::step`] with other mobilities, step length or speed limits.
    pub fn step_with(
        &mut self,
        pose: &Pose,
        applied: &Wrench,
        capture: &[usize],
        opt: &StepOptions,
    ) -> StepReport {
        self.queries = 0;
        let env = self.env.clone();
        let p = self.params;
        let (eps_c, eps_b) = (p.contact_distance, p.barrier_distance());
        let centre = pose * env.workpiece.centre;
        let dt = opt.time_step;

        // 1. contacts, and 2. barrier forces.
        self.contacts.clear();
        let mut force = applied.force;
        let torque = applied.torque;
        for (i, ob) in env.obstacles.iter().enumerate() {
            self.near[i] = None;
            self.captured[i] = false;
            self.lower[i] = distance_lower_bound(pose, &env.workpiece.model, &ob.pose, &ob.model);
            if self.lower[i] >= eps_c {
                continue;
            }
            self.queries += 1;
            let Some(w) = env.distance(pose, i, eps_c, &mut self.ws) else {
                continue;
            };
            let d = w.distance;
            self.near[i] = Some(d);
            self.captured[i] = capture.contains(&i);
            obstacle_contacts(
                &env,
                pose,
                i,
                eps_c,
                &w,
                &mut self.scratch,
                &mut self.contacts,
            );
            let dir = w.point_a.coords - w.point_b.coords;
            self.normal[i] = if dir.norm() > 1e-12 {
                dir.normalize()
            } else {
                Vector3::zeros()
            };
            if self.captured[i] {
                continue; // held by bilateral rows and the drift correction below
            }
            let slope = self.barrier(i).slope(d);
            if slope < 0.0 && slope.is_finite() {
                // −dU/dd along n, limited to reach ε_b within the step by itself.
                let limit = (eps_b - d) / (opt.translational_mobility * dt);
                force += self.normal[i] * (-slope).min(limit);
            }
        }

        // 3. reactions. Row: normal, moment arm, and the approach the contact allows within
        // the step: a unilateral contact farther than ε_b may close down to ε_b (its gap over
        // Δt), so that a workpiece can slide past an edge it is near without being held by
        // it; a bilateral (captured) row allows nothing.
        self.rows.clear();
        for c in &self.contacts {
            let t = (c.point - centre.coords).cross(&c.normal);
            if self.captured[c.obstacle] && c.normal.dot(&self.normal[c.obstacle]) > BILATERAL_COS {
                // Captured, along the witness direction: may neither open nor close.
                self.rows.push((c.normal, t, 0.0));
                self.rows.push((-c.normal, -t, 0.0));
            } else {
                self.rows
                    .push((c.normal, t, (c.distance - eps_b).max(0.0) / dt));
            }
        }
        let nc = self.rows.len();
        let (dt_m, dr_m) = (opt.translational_mobility, opt.rotational_mobility);
        self.a.clear();
        self.a.resize(nc * nc, 0.0);
        self.b.clear();
        self.lambda.clear();
        self.lambda.resize(nc, 0.0);
        for i in 0..nc {
            let (ni, ti, slack) = self.rows[i];
            for j in i..nc {
                let (nj, tj, _) = self.rows[j];
                let v = dt_m * ni.dot(&nj) + dr_m * ti.dot(&tj);
                self.a[i * nc + j] = v;
                self.a[j * nc + i] = v;
            }
            self.b
                .push(dt_m * ni.dot(&force) + dr_m * ti.dot(&torque) + slack);
        }
        let mut lcp = solve_active_set(
            &self.a,
            &self.b,
            &mut self.lambda,
            &p.lcp,
            &mut self.active_set,
        );
        if !lcp.converged {
            // Fallback: Gauss–Seidel from the active-set answer.
            lcp = solve_pgs(&self.a, &self.b, &mut self.lambda, &p.lcp);
        }
        let mut f = force;
        let mut m = torque;
        for (k, (n, t, _)) in self.rows.iter().enumerate() {
            f += n * self.lambda[k];
            m += t * self.lambda[k];
        }

        // 4. velocity (eq. 1), drift correction of captured contacts, and limits.
        let mut v = f * dt_m;
        let mut w = m * dr_m;
        // Captured: halfway towards the middle of the barrier-free band [ε_b, ε_b + (ε_c − ε_b)/2].
        let hold = eps_b + 0.25 * (eps_c - eps_b);
        for i in 0..env.obstacles.len() {
            if let (true, Some(d)) = (self.captured[i], self.near[i]) {
                v += self.normal[i] * ((hold - d) * 0.5 / dt);
            }
        }
        let scale = (opt.max_speed / v.norm())
            .min(opt.max_angular_speed / w.norm())
            .min(1.0);
        if scale < 1.0 {
            v *= scale;
            w *= scale;
        }
        let twist = Twist {
            linear: v,
            angular: w,
        };
        let mu = dt * (v.norm() + w.norm() * env.workpiece.radius);
        let mut report = StepReport {
            pose: *pose,
            twist,
            s: 0.0,
            s_max: 0.0,
            contacts: nc,
            lcp,
            distance_queries: 0,
            potential_evaluations: 0,
        };
        if !mu.is_finite() || mu <= 1e-15 {
            self.finish(pose);
            report.distance_queries = self.queries;
            return report;
        }

        // 5. conservative advancement.
        let s_max = if p.conservative_advancement {
            self.advance(pose, &twist, dt, mu)
        } else {
            1.0
        };
        report.s_max = s_max;

        // 6. golden-section search over [0, s_max].
        self.relevant.clear();
        for i in 0..env.obstacles.len() {
            let reach = self.near[i].unwrap_or(self.lower[i]) - mu * s_max;
            if self.captured[i] || reach < eps_b {
                let b = self.barrier(i);
                self.relevant.push((i, b));
            }
        }
        let s = if self.relevant.is_empty() || s_max <= 0.0 {
            s_max
        } else {
            let energy = (v.norm_squared() / dt_m + w.norm_squared() / dr_m) * dt;
            let relevant = std::mem::take(&mut self.relevant);
            let mut queries = 0;
            let mut evals = 0;
            let mut barriers = |s: f64, ws: &mut QueryWorkspace| {
                let q = integrate(pose, &env.workpiece.centre, &twist, s * dt);
                let mut u = 0.0;
                for (i, b) in &relevant {
                    queries += 1;
                    let bound = b.outer.unwrap_or(b.inner);
                    u += match env.distance(&q, *i, bound, ws) {
                        Some(r) => b.potential(r.distance),
                        None => b.potential(bound),
                    };
                }
                evals += 1;
                u
            };
            // U_v falls linearly and every U_i ≥ 0: if no barrier is active at s_max, s_max
            // is the global minimum and the search is not needed.
            let s = if barriers(s_max, &mut self.ws) == 0.0 {
                s_max
            } else {
                let ws = &mut self.ws;
                golden_section(0.0, s_max, p.golden_tolerance, |s| {
                    -energy * s + barriers(s, ws)
                })
                .0
            };
            self.queries += queries;
            self.relevant = relevant;
            report.potential_evaluations = evals;
            s
        };
        report.s = s;
        report.pose = integrate(pose, &env.workpiece.centre, &twist, s * dt);
        let new_pose = report.pose;
        self.finish(&new_pose);
        report.distance_queries = self.queries;
        report
    }

    /// The barrier of obstacle `i` (capture: with the outer wall at ε_c).
    fn barrier(&self, i: usize) -> Barrier {
        Barrier {
            gain: self.params.barrier_gain,
            inner: self.params.barrier_distance(),
            outer: self.captured[i].then_some(self.params.contact_distance),
        }
    }

    /// Records the obstacles within ε_c of `pose`.
    fn finish(&mut self, pose: &Pose) {
        let env = self.env.clone();
        self.touching.clear();
        let eps_c = self.params.contact_distance;
        for (i, ob) in env.obstacles.iter().enumerate() {
            if distance_lower_bound(pose, &env.workpiece.model, &ob.pose, &ob.model) >= eps_c {
                continue;
            }
            self.queries += 1;
            if env.distance(pose, i, eps_c, &mut self.ws).is_some() {
                self.touching.push(i);
            }
        }
    }

    /// Conservative advancement of the motion `twist` over one step from `pose`: the largest
    /// fraction of the step along which no point of the workpiece comes closer than the
    /// margin to any obstacle (see the module documentation).
    fn advance(&mut self, pose: &Pose, twist: &Twist, dt: f64, mu: f64) -> f64 {
        let env = self.env.clone();
        let eta0 = self.params.advance_margin * self.params.barrier_distance();
        let centre = env.workpiece.centre;
        let mut s_max: f64 = 1.0;
        for i in 0..env.obstacles.len() {
            if self.lower[i] >= mu * s_max + eta0 {
                continue;
            }
            let d0 = match self.near[i] {
                Some(d) => d,
                None => {
                    self.queries += 1;
                    match env.distance(pose, i, mu * s_max + eta0, &mut self.ws) {
                        Some(r) => r.distance,
                        None => continue,
                    }
                }
            };
            let eta = eta0.min(0.5 * d0);
            let (mut s, mut d) = (0.0_f64, d0);
            let mut iterations = 0;
            let stop = loop {
                let gap = d - eta;
                if gap >= mu * (s_max - s) {
                    break None; // certainly free up to s_max
                }
                iterations += 1;
                if gap <= 1e-3 * eta || iterations > 200 {
                    break Some(s);
                }
                // gap < mu (s_max - s), so s stays below s_max
                s += gap / mu;
                let q = integrate(pose, &centre, twist, s * dt);
                self.queries += 1;
                match env.distance(&q, i, mu * (s_max - s) + eta, &mut self.ws) {
                    Some(r) => d = r.distance,
                    None => break None,
                }
            };
            if let Some(s) = stop {
                s_max = s_max.min(s);
            }
        }
        s_max.max(0.0)
    }
}
