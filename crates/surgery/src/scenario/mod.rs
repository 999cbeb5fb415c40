//! The assisted cranial cut in one process, without DDS: the scenario of RPQ §4 with every
//! piece of the suite it needs, deterministic for a seed.
//!
//! * **Patient**: the cranium phantom of [`crate::phantom`] (50,784 triangles) in front of the
//!   robot, with a cut outline drawn on its top.
//! * **Protections**: the phantom itself, the shield over the outline (eq. 4, N = 64) and the
//!   cutting aid (eq. 5) — loaded while the controller runs, the way the `virtual_protection`
//!   node's service adds it: at `aid_load_time`, or as soon after as the bit is clear of it
//!   and on its allowed side ([`ProtectionSet::placement`]).
//! * **Robot**: the RX60B of `urdf/rx60b.urdf` with a drill on its flange ([`DrillArm`]); the
//!   drill tip (a sphere of the bit's radius) is the controlled tool point; the joints are
//!   integrated from the commanded velocities (an ideal velocity-controlled arm).
//! * **Surgeon**: [`Surgeon`], seeded: follows the cut with tremor and pushes deliberately
//!   into the forbidden regions from time to time.
//! * **Control law** (the seam [`ToolController`]; [`InProcessController`] here): the
//!   admittance law of `rpq_virtual_fixtures` ([`AdmittanceController`], closed loop) with a
//!   guidance fixture along the cut line, then the forbidden-region correction by surface
//!   navigation ([`SurfaceNavigator::filter_twist`]), then the twist → joint velocity map.
//! * **Measurement**, independent of the navigation's own sweep query: every period the
//!   distance from the segment the tool centre travelled to each protection mesh, by the
//!   engine's mesh-mesh distance ([`crate::DistanceProbe`]). A period in
//!   which that distance is below the tool radius is a penetration (or, if the cutting aid was
//!   loaded over the bit, below the distance the bit started the period at).
//!
//! [`run`] returns a [`Report`] (the deterministic [`Summary`], the [`Timing`] of the control
//! periods, samples for plots); [`report::write`] writes it to a folder.

mod arm;
pub mod report;
mod surgeon;

use std::sync::Arc;
use std::time::Instant;

use nalgebra::{Isometry3, Point2, Point3, Vector3, Vector6};
use rpq_virtual_fixtures::{
    AdmittanceController, Compliance, ControllerConfig, Guidance, GuidanceSource, Limits, Mode,
    PolylinePath, RankTolerance, Shaping,
};

pub use arm::{DrillArm, RX60_URDF};
pub use surgeon::{PushKind, Surgeon, SurgeonModel, SurgeonView};

use crate::ground::{Ground, MeshGround};
use crate::phantom::{cranium_phantom, cut_outline, CutOutlineSpec, PhantomSpec};
use crate::probe::DistanceProbe;
use crate::{
    generate_cutting_aid, generate_shield, CuttingAid, CuttingAidSpec, Navigation, NavigatorConfig,
    Outcome, Outline, Placement, PlanarOutline, Protection, ProtectionKind, ProtectionSet, Shield,
    ShieldSpec, SurfaceNavigator, SurgeryError,
};

/// Every setting of the scenario (SI units).
#[derive(Clone, Debug)]
pub struct ScenarioConfig {
    /// Seed of the surgeon (the geometry is fixed).
    pub seed: u64,
    /// Simulated duration [s].
    pub duration: f64,
    /// Control period [s].
    pub dt: f64,
    /// Radius of the drill bit, the tool sphere [m].
    pub tool_radius: f64,
    /// Drill length from the flange to the bit's centre [m].
    pub drill_length: f64,
    /// Δx: the cut width [m] (the cutting aid's offset).
    pub cut_width: f64,
    /// The shield.
    pub shield: ShieldSpec,
    /// Ĥ: the cutting aid's height [m].
    pub aid_height: f64,
    /// When the cutting aid is added to the protections [s] (0: from the start).
    pub aid_load_time: f64,
    /// The phantom.
    pub phantom: PhantomSpec,
    /// Position of the phantom's centre in the robot's base frame [m].
    pub phantom_position: Vector3<f64>,
    /// The cut outline on the phantom.
    pub outline: CutOutlineSpec,
    /// Height of the guidance path above the bone (beyond the bit's radius) [m].
    pub clearance: f64,
    /// Start of the drill tip above the first point of the cut line [m].
    pub start_height: f64,
    /// The admittance law (compliance, closed loop, limits).
    pub admittance: ControllerConfig,
    /// Gain of the guidance's error command `u = g (q − p)` [1/m].
    pub error_gain: f64,
    /// The surgeon.
    pub surgeon: SurgeonModel,
    /// The navigation's margin beyond the bit radius [m].
    pub skin: f64,
    /// Time between status lines [s].
    pub status_period: f64,
}

impl Default for ScenarioConfig {
    fn default() -> Self {
        ScenarioConfig {
            seed: 1,
            duration: 40.0,
            dt: 0.001,
            tool_radius: 0.0015,
            drill_length: 0.12,
            cut_width: 0.006,
            shield: ShieldSpec {
                height: 0.025,
                margin: 0.035,
                resolution: 64,
            },
            aid_height: 0.012,
            aid_load_time: 1.0,
            phantom: PhantomSpec::default(),
            phantom_position: Vector3::new(0.45, 0.0, 0.0),
            outline: CutOutlineSpec::default(),
            clearance: 0.0002,
            start_height: 0.012,
            admittance: ControllerConfig {
                compliance: Compliance {
                    c: 0.004,
                    c_tau: 0.3,
                },
                mode: Mode::ClosedLoop { k_d: 0.3 },
                shaping: Shaping {
                    force_deadband: 0.1,
                    torque_deadband: 0.0,
                    force_scale: 1.0,
                    torque_scale: 1.0,
                },
                limits: Limits {
                    linear_velocity: 0.02,
                    angular_velocity: 0.5,
                    linear_acceleration: 0.5,
                    angular_acceleration: 5.0,
                },
                rank_tolerance: RankTolerance::default(),
            },
            error_gain: 1000.0,
            surgeon: SurgeonModel::default(),
            skin: 1e-6,
            status_period: 1.0,
        }
    }
}

impl ScenarioConfig {
    /// Checks the settings the scenario itself adds (the libraries check theirs).
    pub fn validate(&self) -> Result<(), SurgeryError> {
        let pos = |what: &'static str, v: f64, max: f64| {
            if v.is_finite() && v > 0.0 && v <= max {
                Ok(())
            } else {
                Err(SurgeryError::range(what, v, format!("> 0 and <= {max}")))
            }
        };
        if !(self.duration.is_finite() && self.duration >= 0.0 && self.duration <= 86_400.0) {
            return Err(SurgeryError::range(
                "duration",
                self.duration,
                "0 to 86400 s",
            ));
        }
        pos("dt", self.dt, 0.1)?;
        pos("tool radius", self.tool_radius, 0.02)?;
        pos("status period", self.status_period, 3600.0)?;
        pos("error gain", self.error_gain, 1e6)?;
        if self.cut_width <= 2.0 * (self.tool_radius + self.skin) {
            return Err(SurgeryError::range(
                "cut width",
                self.cut_width,
                format!(
                    "> the bit's diameter {} m, or the bit cannot reach the bone",
                    2.0 * self.tool_radius
                ),
            ));
        }
        if !(self.clearance.is_finite()
            && self.clearance >= 0.0
            && self.start_height.is_finite()
            && self.start_height >= 0.0)
        {
            return Err(SurgeryError::range(
                "clearance / start height",
                self.clearance,
                ">= 0 m",
            ));
        }
        if !(self.aid_load_time.is_finite() && self.aid_load_time >= 0.0) {
            return Err(SurgeryError::range(
                "aid load time",
                self.aid_load_time,
                ">= 0 s",
            ));
        }
        self.admittance.validate()?;
        Ok(())
    }
}

/// The scenario's geometry, built once: the phantom, the outline, the protections and the
/// cut line, all in the robot's base frame.
#[derive(Clone, Debug)]
pub struct Geometry {
    /// The phantom as a protection (kind [`ProtectionKind::Patient`]).
    pub patient: Protection,
    /// The drawn outline (its frame: origin at the outline's centroid, z the skull's outward
    /// normal there).
    pub outline: Outline,
    /// The shield over the outline.
    pub shield: Shield,
    /// The cutting aid.
    pub aid: CuttingAid,
    /// Patient and shield.
    pub before_aid: ProtectionSet,
    /// Patient, shield and cutting aid.
    pub all: ProtectionSet,
    /// The cut line in the outline frame's plane: the outline moved inward by Δx / 2 (the
    /// middle of the kerf whose outer edge is the outline).
    pub cut_line: PlanarOutline,
    /// The guidance path: the cut line on the bone, raised by the bit radius and the
    /// clearance along the frame's z, closed (first point repeated), base frame.
    pub path: Vec<Point3<f64>>,
}

impl Geometry {
    /// Builds the geometry of `cfg`.
    pub fn build(cfg: &ScenarioConfig) -> Result<Geometry, SurgeryError> {
        let pose = Isometry3::translation(
            cfg.phantom_position.x,
            cfg.phantom_position.y,
            cfg.phantom_position.z,
        );
        let mesh = cranium_phantom(&cfg.phantom)?;
        let patient = Protection::from_mesh("patient", ProtectionKind::Patient, &mesh, pose)?;
        let pts = cut_outline(&patient.model, &pose, &cfg.outline)?;
        // up: from the phantom's centre through the outline's centroid
        let centroid = pts.iter().fold(Vector3::zeros(), |s, p| s + p.coords) / pts.len() as f64;
        let outline = Outline::new(&pts, &(centroid - cfg.phantom_position))?;
        let frame = *outline.frame();
        let mut ground = MeshGround::new(&patient.model, pose, frame);
        let shield = generate_shield(&outline, &cfg.shield, Some(&mut ground))?;
        let aid = generate_cutting_aid(
            &outline,
            &CuttingAidSpec {
                width: cfg.cut_width,
                height: cfg.aid_height,
                resolution: cfg.shield.resolution,
            },
            Some(&mut ground),
        )?;
        let cut_line = outline.planar().offset_inward(cfg.cut_width / 2.0)?;
        let lift = cfg.tool_radius + cfg.clearance;
        let mut path = Vec::with_capacity(cut_line.len() + 1);
        for p in cut_line.points() {
            let z = ground
                .height(p.x, p.y)
                .ok_or(SurgeryError::OffGround { x: p.x, y: p.y })?;
            path.push(frame.to_parent(p, z + lift));
        }
        path.push(path[0]);
        let shield_p = Protection::from_mesh(
            "shield",
            ProtectionKind::Shield,
            &shield.mesh,
            Isometry3::identity(),
        )?;
        let aid_p = Protection::from_mesh(
            "cutting_aid",
            ProtectionKind::CuttingAid,
            &aid.mesh,
            Isometry3::identity(),
        )?;
        let before_aid = ProtectionSet::new().with(patient.clone()).with(shield_p);
        let all = before_aid.clone().with(aid_p);
        Ok(Geometry {
            patient,
            outline,
            shield,
            aid,
            before_aid,
            all,
            cut_line,
            path,
        })
    }
}

/// What one control period did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ControlStep {
    /// The tool point at the measured joints (base frame).
    pub tool: Point3<f64>,
    /// The commanded tool twist after the forbidden-region correction.
    pub twist: Vector6<f64>,
    /// The surface navigation of this period.
    pub navigation: Navigation,
    /// Uniform factor applied for the joint limits (1 = none).
    pub joint_scale: f64,
}

/// The seam between the scenario and its control law: one period from the measured joints
/// and the wrench at the tool point to joint velocities. [`InProcessController`] implements it
/// with the `rpq_virtual_fixtures` admittance law and a [`SurfaceNavigator`]; the
/// `admittance_controller` node's core can implement it the same way (wrench → twist, its tool
/// motion filter calling [`SurfaceNavigator::filter_twist`], twist → joint velocities).
pub trait ToolController {
    /// One period: joints `q` [rad], the wrench `[f; τ]` at the tool point in the base frame
    /// [N; N·m], the period `dt` [s]; writes the joint velocities [rad/s] into `qd`.
    fn step(
        &mut self,
        q: &[f64],
        wrench: &Vector6<f64>,
        dt: f64,
        qd: &mut [f64],
    ) -> Result<ControlStep, SurgeryError>;

    /// Replaces the protections between two periods (no jump: see
    /// [`SurfaceNavigator::set_protections`]); returns the previous set.
    fn set_protections(&mut self, set: ProtectionSet) -> ProtectionSet;
}

/// The scenario's control law: admittance (eq. 8, closed loop eq. 11) with a guidance fixture
/// along the cut, forbidden-region correction by surface navigation, joint velocities through
/// the drill tip's Jacobian.
#[derive(Clone, Debug)]
pub struct InProcessController {
    arm: DrillArm,
    law: AdmittanceController,
    path: PolylinePath,
    guidance: Guidance,
    navigator: SurfaceNavigator,
    navigation_time: std::time::Duration,
}

impl InProcessController {
    /// From its parts.
    pub fn new(
        arm: DrillArm,
        law: AdmittanceController,
        path: PolylinePath,
        navigator: SurfaceNavigator,
    ) -> InProcessController {
        InProcessController {
            arm,
            law,
            path,
            guidance: Guidance::empty(),
            navigator,
            navigation_time: std::time::Duration::ZERO,
        }
    }

    /// Wall-clock time of the last period's surface navigation.
    pub fn navigation_time(&self) -> std::time::Duration {
        self.navigation_time
    }
}

impl ToolController for InProcessController {
    fn step(
        &mut self,
        q: &[f64],
        wrench: &Vector6<f64>,
        dt: f64,
        qd: &mut [f64],
    ) -> Result<ControlStep, SurgeryError> {
        let pose = self.arm.tip_pose(q)?;
        let tool = Point3::from(pose.translation.vector);
        self.path.evaluate(&pose, &mut self.guidance);
        let (v, _) = self.law.step(wrench, &self.guidance, dt)?;
        let started = Instant::now();
        let (twist, navigation) = self.navigator.filter_twist(&tool, &v, dt);
        self.navigation_time = started.elapsed();
        // the joint limits shorten the motion along the checked segment, never leave it
        let joint_scale = self.arm.joint_velocities(q, &twist, 10.0 * dt, qd)?;
        Ok(ControlStep {
            tool,
            twist,
            navigation,
            joint_scale,
        })
    }

    fn set_protections(&mut self, set: ProtectionSet) -> ProtectionSet {
        self.navigator.set_protections(set)
    }
}

/// The bit is cutting when its surface is this close to the bone [m].
pub const ON_BONE: f64 = 0.0005;

/// The deterministic outcome of a run (equal for equal seeds and settings).
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    /// The seed.
    pub seed: u64,
    /// Simulated time [s].
    pub duration: f64,
    /// Control periods run.
    pub periods: u64,
    /// Triangles of the patient, shield and cutting aid meshes.
    pub triangles: [usize; 3],
    /// Length of the cut line [m].
    pub cut_length: f64,
    /// Periods with the bit on the bone (its surface within [`ON_BONE`] of the phantom) once
    /// the cutting aid is in force: the cut proper, over which accuracy and coverage count.
    pub cutting_periods: u64,
    /// Mean lateral deviation of the bit's centre from the cut line while on the bone [m].
    pub mean_deviation: f64,
    /// Largest lateral deviation while on the bone [m].
    pub max_deviation: f64,
    /// Fraction of the cut line (1 mm bins) the bit passed over while on the bone.
    pub coverage: f64,
    /// Smallest distance between the bit's surface and the patient [m] (0: touching).
    pub min_patient_distance: f64,
    /// Smallest distance between the bit's surface and any protection at the end of a period
    /// [m].
    pub min_clearance: f64,
    /// Periods in which the bit entered a protection on its way (the segment its centre
    /// travelled came closer than the bit radius, less 2 nm of probe size, to a protection
    /// mesh, or closer than at its start when it started overlapping one): must be 0.
    pub penetrations: u64,
    /// Periods that started with the bit overlapping a protection loaded over it (the
    /// cutting aid appearing where the bit was): it may only back out or slide, and such a
    /// period is a penetration only if the bit gets deeper.
    pub overlap_periods: u64,
    /// When the cutting aid was loaded [s] (the first period at or after `aid_load_time` with
    /// the bit clear of it and on its allowed side; infinite if never).
    pub aid_loaded_at: f64,
    /// Periods whose navigation was free, slid, blocked.
    pub outcomes: [u64; 3],
    /// Deliberate pushes of the surgeon into forbidden regions.
    pub pushes: u64,
    /// Periods in which the surgeon pushed deliberately.
    pub push_periods: u64,
    /// Largest change of the commanded linear velocity between two periods [m/s], and the one
    /// at the period the cutting aid was loaded.
    pub max_command_change: (f64, f64),
    /// The drill tip's last position (base frame) [m].
    pub final_tool: [f64; 3],
}

/// Wall-clock time of the control periods (not deterministic).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Timing {
    /// Median, 99th percentile and largest time of one control period (admittance law,
    /// forbidden-region correction, joint velocities) [µs].
    pub control_us: [f64; 3],
    /// The same for the surface navigation alone [µs].
    pub navigation_us: [f64; 3],
    /// The control period over the periods in contact (slid or blocked) only [µs].
    pub contact_us: [f64; 3],
}

/// One sample of the run (every 10 ms), for plots and the CSV.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample {
    /// Time [s].
    pub t: f64,
    /// Drill tip in the base frame [m].
    pub tool: Point3<f64>,
    /// Drill tip in the outline frame [m].
    pub local: Point3<f64>,
    /// Bit surface to patient [m].
    pub patient_distance: f64,
    /// Bit surface to the nearest protection [m].
    pub clearance: f64,
    /// Lateral deviation from the cut line [m].
    pub deviation: f64,
    /// Navigation outcome.
    pub outcome: Outcome,
    /// Speed of the tip [m/s].
    pub speed: f64,
    /// The deliberate push under way.
    pub pushing: Option<PushKind>,
}

/// Everything a run produced.
#[derive(Clone, Debug)]
pub struct Report {
    /// The deterministic summary.
    pub summary: Summary,
    /// Control-period timing.
    pub timing: Timing,
    /// Samples every 10 ms.
    pub samples: Vec<Sample>,
    /// The geometry used (for the plots).
    pub geometry: Arc<Geometry>,
}

/// Percentiles 50 and 99 and the largest value (zeros for no values).
pub fn percentiles(mut v: Vec<f64>) -> [f64; 3] {
    if v.is_empty() {
        return [0.0; 3];
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let at = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize];
    [at(0.5), at(0.99), v[v.len() - 1]]
}

/// A status line of the run (printed every `status_period` by the command).
#[derive(Clone, Debug, PartialEq)]
pub struct Status {
    /// Time [s].
    pub t: f64,
    /// Drill tip, base frame [m].
    pub tool: Point3<f64>,
    /// Bit surface to patient [m].
    pub patient_distance: f64,
    /// The tool touched a protection (slid or blocked) during the last status period.
    pub contact: bool,
    /// Speed [m/s].
    pub speed: f64,
    /// Periods slid and blocked during the last status period.
    pub slid_blocked: (u64, u64),
    /// The deliberate push under way.
    pub pushing: Option<PushKind>,
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "t = {:6.1} s  tool ({:7.1}, {:6.1}, {:6.1}) mm  patient {:6.2} mm  contact {:3}  speed {:5.1} mm/s  slid {:4} blocked {:2}{}",
            self.t,
            self.tool.x * 1e3,
            self.tool.y * 1e3,
            self.tool.z * 1e3,
            self.patient_distance * 1e3,
            if self.contact { "yes" } else { "no" },
            self.speed * 1e3,
            self.slid_blocked.0,
            self.slid_blocked.1,
            self.pushing.map(|k| format!("  surgeon pushing {}", k.name())).unwrap_or_default()
        )
    }
}

/// Runs the scenario; `status` is called every `status_period` of simulated time.
pub fn run(cfg: &ScenarioConfig, status: &mut dyn FnMut(&Status)) -> Result<Report, SurgeryError> {
    cfg.validate()?;
    let geometry = Arc::new(Geometry::build(cfg)?);
    run_on(cfg, geometry, status)
}

/// [`run`] on a geometry built before (several seeds share one).
pub fn run_on(
    cfg: &ScenarioConfig,
    geometry: Arc<Geometry>,
    status: &mut dyn FnMut(&Status),
) -> Result<Report, SurgeryError> {
    cfg.validate()?;
    let g = &*geometry;
    let frame = *g.outline.frame();
    let up = frame.normal();
    let dt = cfg.dt;
    let r = cfg.tool_radius;

    // the start: above the first point of the cut line, drill along -up
    let mut arm = DrillArm::rx60(cfg.drill_length)?;
    let start = g.path[0] + up * cfg.start_height;
    let yaw = start.y.atan2(start.x);
    let mut q = arm
        .solve_ik(&start, &-up, &[yaw, 0.5, 1.6, 0.0, 1.0, 0.0])
        .ok_or_else(|| {
            SurgeryError::range(
                "start position x",
                start.x,
                "reachable by the RX60 with the drill down",
            )
        })?;
    let path = PolylinePath::new(&g.path)?.with_error_gain(cfg.error_gain);
    let view_path = PolylinePath::new(&g.path)?;
    let initial = if cfg.aid_load_time > 0.0 {
        g.before_aid.clone()
    } else {
        g.all.clone()
    };
    let navigator = SurfaceNavigator::new(
        initial,
        NavigatorConfig {
            radius: r,
            skin: cfg.skin,
            max_iterations: 8,
        },
    )?;
    let law = AdmittanceController::new(cfg.admittance)?;
    let mut ctl = InProcessController::new(arm.clone(), law, path, navigator);
    let mut surgeon = Surgeon::new(cfg.surgeon, dt, cfg.seed);
    let origin2 = {
        let c = frame.to_local(&g.shield.origin);
        Point2::new(c.x, c.y)
    };
    let view_at = |p: &Point3<f64>, hint: &mut usize| {
        let c = view_path.closest_point_from(p, *hint);
        *hint = ((c.arc_length / view_path.length()) * (g.path.len() - 1) as f64) as usize;
        let l = frame.to_local(p);
        let radial = frame.pose.rotation * Vector3::new(l.x - origin2.x, l.y - origin2.y, 0.0);
        SurgeonView {
            along: c.tangent.into_inner(),
            error_mm: (c.point - p) * 1e3,
            outward: radial
                .try_normalize(1e-12)
                .unwrap_or_else(|| frame.pose.rotation * Vector3::x()),
            up,
        }
    };
    let mut hint = 0usize;
    let p0 = Point3::from(arm.tip_pose(&q)?.translation.vector);
    surgeon.prime(&view_at(&p0, &mut hint));

    let periods = (cfg.duration / dt).round() as u64;
    let bins = (view_path.length() / 0.001).ceil().max(1.0) as usize;
    let mut visited = vec![false; bins];
    let mut probe = DistanceProbe::new();
    let mut ends: Vec<f64> = g
        .all
        .items()
        .iter()
        .map(|prot| probe.point_distance(prot, &p0))
        .collect();
    let mut qd = [0.0; 6];
    let mut control_times = Vec::with_capacity(periods as usize);
    let mut nav_times = Vec::with_capacity(periods as usize);
    let mut contact_times = Vec::new();
    let mut samples = Vec::new();
    let mut s = Summary {
        seed: cfg.seed,
        duration: periods as f64 * dt,
        periods,
        triangles: [
            g.patient.model.num_triangles(),
            g.shield.mesh.triangles.len(),
            g.aid.mesh.triangles.len(),
        ],
        cut_length: g.cut_line.perimeter(),
        cutting_periods: 0,
        mean_deviation: 0.0,
        max_deviation: 0.0,
        coverage: 0.0,
        min_patient_distance: f64::INFINITY,
        min_clearance: f64::INFINITY,
        penetrations: 0,
        overlap_periods: 0,
        aid_loaded_at: if cfg.aid_load_time <= 0.0 {
            0.0
        } else {
            f64::INFINITY
        },
        outcomes: [0; 3],
        pushes: 0,
        push_periods: 0,
        max_command_change: (0.0, 0.0),
        final_tool: [p0.x, p0.y, p0.z],
    };
    let mut dev_sum = 0.0;
    let mut aid_loaded = cfg.aid_load_time <= 0.0;
    let mut last_v = Vector3::zeros();
    let mut window = (0u64, 0u64);
    let mut next_status = cfg.status_period;
    let mut p = p0;
    for k in 0..periods {
        let t = k as f64 * dt;
        let mut swapped = false;
        // the cutting aid is loaded once the bit is clear of it and on its allowed side (a
        // protection loaded over the bit would hold it inside)
        if !aid_loaded
            && t >= cfg.aid_load_time
            && g.all.placement(&p, r + cfg.skin, 0.05) == Placement::Clear
        {
            ctl.set_protections(g.all.clone());
            aid_loaded = true;
            swapped = true;
            s.aid_loaded_at = t;
        }
        let view = view_at(&p, &mut hint);
        let f = surgeon.step(&view, dt);
        let wrench = Vector6::new(f.x, f.y, f.z, 0.0, 0.0, 0.0);
        let started = Instant::now();
        let step = ctl.step(&q, &wrench, dt, &mut qd)?;
        let took = started.elapsed().as_secs_f64() * 1e6;
        control_times.push(took);
        if step.navigation.outcome != Outcome::Free {
            contact_times.push(took);
        }
        nav_times.push(ctl.navigation_time().as_secs_f64() * 1e6);
        for (qi, w) in q.iter_mut().zip(qd.iter()) {
            *qi += w * dt;
        }
        let next = Point3::from(arm.tip_pose(&q)?.translation.vector);
        // measurement: every protection of the full set (the cutting aid counts only once
        // it is loaded)
        let mut clearance = f64::INFINITY;
        let mut patient = f64::INFINITY;
        let mut penetrated = false;
        let mut overlapping = false;
        for (i, prot) in g.all.items().iter().enumerate() {
            let db = probe.point_distance(prot, &next);
            let da = std::mem::replace(&mut ends[i], db);
            if prot.kind == ProtectionKind::CuttingAid && !aid_loaded {
                continue;
            }
            let seg = probe.segment_distance(prot, &p, &next, da, db, r);
            // entering, or going deeper into a protection that was loaded over the tool
            penetrated |= seg.is_nan() || seg < r.min(da) - 2e-9;
            overlapping |= da < r - 2e-9;
            clearance = clearance.min(db - r);
            if prot.kind == ProtectionKind::Patient {
                patient = db - r;
            }
        }
        s.min_clearance = s.min_clearance.min(clearance);
        s.min_patient_distance = s.min_patient_distance.min(patient);
        if penetrated {
            s.penetrations += 1;
        }
        if overlapping {
            s.overlap_periods += 1;
        }
        let o = step.navigation.outcome;
        s.outcomes[o as usize] += 1;
        match o {
            Outcome::Free => {}
            Outcome::Slid => window.0 += 1,
            Outcome::Blocked => window.1 += 1,
        }
        let v = step.twist.fixed_rows::<3>(0).into_owned();
        let change = (v - last_v).norm();
        last_v = v;
        s.max_command_change.0 = s.max_command_change.0.max(change);
        if swapped {
            s.max_command_change.1 = change;
        }
        let l = frame.to_local(&next);
        let deviation = g.cut_line.distance_to_boundary(&Point2::new(l.x, l.y));
        if patient <= ON_BONE && aid_loaded {
            s.cutting_periods += 1;
            dev_sum += deviation;
            s.max_deviation = s.max_deviation.max(deviation);
            let c = view_path.closest_point_from(&next, hint);
            let b = ((c.arc_length / view_path.length()) * bins as f64) as usize;
            visited[b.min(bins - 1)] = true;
        }
        if surgeon.pushing().is_some() {
            s.push_periods += 1;
        }
        let speed = (next - p).norm() / dt;
        if k % ((0.01 / dt).round().max(1.0) as u64) == 0 {
            samples.push(Sample {
                t: t + dt,
                tool: next,
                local: l,
                patient_distance: patient,
                clearance,
                deviation,
                outcome: o,
                speed,
                pushing: surgeon.pushing(),
            });
        }
        p = next;
        if t + dt >= next_status - 1e-9 {
            status(&Status {
                t: t + dt,
                tool: p,
                patient_distance: patient,
                contact: window != (0, 0),
                speed,
                slid_blocked: window,
                pushing: surgeon.pushing(),
            });
            window = (0, 0);
            next_status += cfg.status_period;
        }
    }
    s.pushes = surgeon.pushes();
    s.mean_deviation = if s.cutting_periods > 0 {
        dev_sum / s.cutting_periods as f64
    } else {
        0.0
    };
    s.coverage = visited.iter().filter(|v| **v).count() as f64 / bins as f64;
    s.final_tool = [p.x, p.y, p.z];
    Ok(Report {
        summary: s,
        timing: Timing {
            control_us: percentiles(control_times),
            navigation_us: percentiles(nav_times),
            contact_us: percentiles(contact_times),
        },
        samples,
        geometry,
    })
}
