//! The assisted cranial cut (RPQ §4) over ROS 2, the suite's main job
//! (`launch/surgery.launch.xml`): `robot_sim` (the RX60 with a drill behind an F/T sensor),
//! `virtual_protection` (phantom, shield, cutting aid), `steady_hand_guidance` (the fixture
//! along the cut), `admittance_controller` in forbidden-region mode, `rpq_bag record`, and the
//! node of this package, `simulated_surgeon`: the seeded surgeon of
//! [`rpq_surgery::scenario::Surgeon`] turned into a wrench at the sensor, plus the run's
//! bookkeeping. This library holds the pure part, testable without DDS:
//!
//! * [`settings`]: parameters (generated from `params/simulated_surgeon.yaml`);
//! * [`Monitor`]: what the surgeon sees (the cut line, the outward direction) and the
//!   independent measurement of the run on the drill tip of every joint state: distance to
//!   the patient and to every protection in force, penetrations (the segment between two
//!   joint states coming closer than the bit radius to a protection, by the engine's
//!   mesh-mesh distance, as in `rpq_surgery::scenario`), cut accuracy, status lines, summary
//!   and plots (`rpq_surgery::scenario::report`);
//! * [`InForce`]: which of the received protection sets the controller enforces (its status
//!   names the set by the stamp of the message it came in), so the run is measured against
//!   the protections that act, not against those merely sent;
//! * [`sensor_wrench`]: the force at the bit as the F/T sensor behind the drill reads it.
#![warn(missing_docs)]

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use nalgebra::{Isometry3, Point2, Point3, Vector3, Vector6};
use rpq_surgery::scenario::{
    report, Geometry, PushKind, Report, Sample, ScenarioConfig, Summary, SurgeonView, Timing,
    ON_BONE,
};
use rpq_surgery::{DistanceProbe, Outcome, ProtectionKind, ProtectionSet};
use rpq_virtual_fixtures::PolylinePath;

/// Parameters, generated from `params/simulated_surgeon.yaml`.
pub mod settings {
    include!(concat!(env!("OUT_DIR"), "/simulated_surgeon.rs"));
}

/// The wrench `[f; τ]` an F/T sensor at `sensor` (base frame pose) reads, in its own axes, when
/// the force `f` (base frame) is applied at `point`.
pub fn sensor_wrench(
    sensor: &Isometry3<f64>,
    point: &Point3<f64>,
    f: &Vector3<f64>,
) -> Vector6<f64> {
    let inv = sensor.rotation.inverse();
    let lever = point - Point3::from(sensor.translation.vector);
    let fs = inv * f;
    let ts = inv * lever.cross(f);
    Vector6::new(fs.x, fs.y, fs.z, ts.x, ts.y, ts.z)
}

/// The start configuration of the scenario (as `rpq_surgery::scenario::run_on`): the drill tip
/// `start_height` above the first point of the cut line, the drill along the outline's −z.
pub fn start_joints(cfg: &ScenarioConfig, g: &Geometry) -> Option<Vec<f64>> {
    let mut arm = rpq_surgery::scenario::DrillArm::rx60(cfg.drill_length).ok()?;
    let up = g.outline.frame().normal();
    let start = g.path[0] + up * cfg.start_height;
    let yaw = start.y.atan2(start.x);
    arm.solve_ik(&start, &-up, &[yaw, 0.5, 1.6, 0.0, 1.0, 0.0])
}

/// Percentiles 50 and 99 and the largest value (the scenario's own summary statistic).
pub use rpq_surgery::scenario::percentiles;

/// One status line (see [`Monitor::status`]).
#[derive(Clone, Debug, PartialEq)]
pub struct StatusLine {
    /// Time since the first push [s].
    pub t: f64,
    /// Drill tip, base frame [m].
    pub tool: Point3<f64>,
    /// Bit surface to patient [m].
    pub patient_distance: f64,
    /// The controller reported contact with a protection in the last status period.
    pub contact: bool,
    /// Speed of the tip [m/s].
    pub speed: f64,
    /// Protections in force.
    pub protections: usize,
    /// The deliberate push under way.
    pub pushing: Option<PushKind>,
}

impl std::fmt::Display for StatusLine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "t = {:6.1} s  tool ({:7.1}, {:6.1}, {:6.1}) mm  patient {:6.2} mm  contact {:3}  speed {:5.1} mm/s  protections {}{}",
            self.t,
            self.tool.x * 1e3,
            self.tool.y * 1e3,
            self.tool.z * 1e3,
            self.patient_distance * 1e3,
            if self.contact { "yes" } else { "no" },
            self.speed * 1e3,
            self.protections,
            self.pushing
                .map(|k| format!("  surgeon pushing {}", k.name()))
                .unwrap_or_default()
        )
    }
}

/// The surgeon's view and the run's measurement (see the crate docs).
pub struct Monitor {
    cfg: ScenarioConfig,
    geometry: Arc<Geometry>,
    view_path: PolylinePath,
    origin2: Point2<f64>,
    hint: usize,
    probe: DistanceProbe,
    set: ProtectionSet,
    /// Distance of the last tip to each protection of `set`.
    ends: Vec<f64>,
    last: Option<(f64, Point3<f64>)>,
    summary: Summary,
    samples: Vec<Sample>,
    next_sample: f64,
    dev_sum: f64,
    visited: Vec<bool>,
    patient: f64,
    /// Tool speed over the last window of at least [`SPEED_WINDOW`].
    speed: f64,
    /// Start of the current speed window (stamp, tip).
    speed_from: Option<(f64, Point3<f64>)>,
    aid_in_force: bool,
}

/// Shortest time over which the reported tool speed is measured [s]: joint states a few
/// microseconds apart in stamp (a publisher catching up after a delay) would turn stamp jitter
/// into a speed far above anything the controller commands.
pub const SPEED_WINDOW: f64 = 0.02;

impl Monitor {
    /// For the scenario's geometry (built from `cfg`).
    pub fn new(cfg: ScenarioConfig, geometry: Arc<Geometry>) -> Result<Monitor, String> {
        let view_path = PolylinePath::new(&geometry.path).map_err(|e| e.to_string())?;
        let frame = *geometry.outline.frame();
        let c = frame.to_local(&geometry.shield.origin);
        let bins = (view_path.length() / 0.001).ceil().max(1.0) as usize;
        let g = &geometry;
        let summary = Summary {
            seed: cfg.seed,
            duration: 0.0,
            periods: 0,
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
            aid_loaded_at: f64::INFINITY,
            outcomes: [0; 3],
            pushes: 0,
            push_periods: 0,
            max_command_change: (0.0, 0.0),
            final_tool: [0.0; 3],
        };
        Ok(Monitor {
            cfg,
            view_path,
            origin2: Point2::new(c.x, c.y),
            hint: 0,
            probe: DistanceProbe::new(),
            set: ProtectionSet::new(),
            ends: Vec::new(),
            last: None,
            summary,
            samples: Vec::new(),
            next_sample: 0.0,
            dev_sum: 0.0,
            visited: vec![false; bins],
            patient: f64::INFINITY,
            speed: 0.0,
            speed_from: None,
            aid_in_force: false,
            geometry,
        })
    }

    /// The geometry.
    pub fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    /// What the surgeon sees with the drill tip at `p` (as `rpq_surgery::scenario` does).
    pub fn view(&mut self, p: &Point3<f64>) -> SurgeonView {
        let g = &self.geometry;
        let frame = g.outline.frame();
        let c = self.view_path.closest_point_from(p, self.hint);
        self.hint = ((c.arc_length / self.view_path.length()) * (g.path.len() - 1) as f64) as usize;
        let l = frame.to_local(p);
        let radial =
            frame.pose.rotation * Vector3::new(l.x - self.origin2.x, l.y - self.origin2.y, 0.0);
        SurgeonView {
            along: c.tangent.into_inner(),
            error_mm: (c.point - p) * 1e3,
            outward: radial
                .try_normalize(1e-12)
                .unwrap_or_else(|| frame.pose.rotation * Vector3::x()),
            up: frame.normal(),
        }
    }

    /// The protections in force changed (`t`: time of the change since the first push).
    pub fn set_protections(&mut self, set: ProtectionSet, t: f64) {
        let aid = set
            .items()
            .iter()
            .any(|p| p.kind == ProtectionKind::CuttingAid);
        if aid && !self.aid_in_force {
            self.summary.aid_loaded_at = t;
        }
        self.aid_in_force = aid;
        self.set = set;
        self.ends.clear();
        if let Some((_, p)) = self.last {
            for prot in self.set.items() {
                let d = self.probe.point_distance(prot, &p);
                self.ends.push(d);
            }
        }
    }

    /// The protections in force.
    pub fn protections(&self) -> &ProtectionSet {
        &self.set
    }

    /// The drill tip at time `t` [s since the first push] from a joint state; `measure`:
    /// the run is under way (count it), `contact`: the controller reports contact,
    /// `pushing`: the surgeon's deliberate push. Returns whether this motion penetrated.
    pub fn on_tool(
        &mut self,
        t: f64,
        p: Point3<f64>,
        measure: bool,
        contact: bool,
        pushing: Option<PushKind>,
    ) -> bool {
        let r = self.cfg.tool_radius;
        let prev = self.last.replace((t, p));
        let mut clearance = f64::INFINITY;
        let mut patient = f64::INFINITY;
        let mut penetrated = false;
        let mut overlapping = false;
        let fresh = self.ends.len() != self.set.len();
        for (i, prot) in self.set.items().iter().enumerate() {
            let db = self.probe.point_distance(prot, &p);
            if fresh {
                self.ends.push(db);
            }
            let da = std::mem::replace(&mut self.ends[i], db);
            if let Some((_, a)) = prev {
                let seg = self.probe.segment_distance(prot, &a, &p, da, db, r);
                penetrated |= seg.is_nan() || seg < r.min(da) - 2e-9;
                overlapping |= da < r - 2e-9;
            }
            clearance = clearance.min(db - r);
            if prot.kind == ProtectionKind::Patient {
                patient = db - r;
            }
        }
        self.patient = patient;
        match self.speed_from {
            Some((t0, a)) if t - t0 >= SPEED_WINDOW => {
                self.speed = (p - a).norm() / (t - t0);
                self.speed_from = Some((t, p));
            }
            // (the first tip, or time went back: a new window)
            Some((t0, _)) if t >= t0 => {}
            _ => self.speed_from = Some((t, p)),
        }
        if !measure {
            return false;
        }
        let s = &mut self.summary;
        s.periods += 1;
        s.duration = t;
        s.min_clearance = s.min_clearance.min(clearance);
        s.min_patient_distance = s.min_patient_distance.min(patient);
        s.penetrations += u64::from(penetrated);
        s.overlap_periods += u64::from(overlapping);
        s.outcomes[usize::from(contact)] += 1;
        s.push_periods += u64::from(pushing.is_some());
        s.final_tool = [p.x, p.y, p.z];
        let g = &self.geometry;
        let l = g.outline.frame().to_local(&p);
        let deviation = g.cut_line.distance_to_boundary(&Point2::new(l.x, l.y));
        if patient <= ON_BONE && self.aid_in_force {
            s.cutting_periods += 1;
            self.dev_sum += deviation;
            s.max_deviation = s.max_deviation.max(deviation);
            let c = self.view_path.closest_point_from(&p, self.hint);
            let bins = self.visited.len();
            let b = ((c.arc_length / self.view_path.length()) * bins as f64) as usize;
            self.visited[b.min(bins - 1)] = true;
        }
        if t >= self.next_sample {
            self.next_sample = t + 0.01;
            self.samples.push(Sample {
                t,
                tool: p,
                local: l,
                patient_distance: patient,
                clearance,
                deviation,
                outcome: if contact {
                    Outcome::Slid
                } else {
                    Outcome::Free
                },
                speed: self.speed,
                pushing,
            });
        }
        penetrated
    }

    /// The status line at `t`.
    pub fn status(&self, t: f64, contact: bool, pushing: Option<PushKind>) -> StatusLine {
        StatusLine {
            t,
            tool: self.last.map_or(Point3::origin(), |(_, p)| p),
            patient_distance: self.patient,
            contact,
            speed: self.speed,
            protections: self.set.len(),
            pushing,
        }
    }

    /// The summary so far, with the surgeon's push count and the command timing (`periods`:
    /// intervals between commands at the robot [µs]).
    pub fn report(&self, pushes: u64, command_intervals_us: Vec<f64>) -> Report {
        let mut s = self.summary.clone();
        s.pushes = pushes;
        s.mean_deviation = if s.cutting_periods > 0 {
            self.dev_sum / s.cutting_periods as f64
        } else {
            0.0
        };
        s.coverage = self.visited.iter().filter(|v| **v).count() as f64 / self.visited.len() as f64;
        Report {
            summary: s,
            timing: Timing {
                control_us: percentiles(command_intervals_us),
                navigation_us: [0.0; 3],
                contact_us: [0.0; 3],
            },
            samples: self.samples.clone(),
            geometry: self.geometry.clone(),
        }
    }

    /// The summary text of `r` (printed at the end and written to `summary.txt`).
    pub fn summary_text(&self, r: &Report, margin: f64) -> String {
        let s = &r.summary;
        let mm = |x: f64| x * 1e3;
        let mut t = String::new();
        let _ = writeln!(
            t,
            "summary (seed {}, {:.1} s from the first push, {} joint states measured)",
            s.seed, s.duration, s.periods
        );
        let _ = writeln!(
            t,
            "  protections: patient {} + shield {} + cutting aid {} triangles; bit radius {:.2} mm, cut width {:.2} mm",
            s.triangles[0], s.triangles[1], s.triangles[2], mm(self.cfg.tool_radius), mm(self.cfg.cut_width)
        );
        let _ = writeln!(
            t,
            "  cut accuracy: mean deviation {:.3} mm, max {:.3} mm from the cut line ({:.1} mm long), over {} joint states on the bone; {:.0} % of the line cut",
            mm(s.mean_deviation), mm(s.max_deviation), mm(s.cut_length), s.cutting_periods, s.coverage * 100.0
        );
        let _ = writeln!(
            t,
            "  minimum tool-patient distance: {:.4} mm; minimum clearance to any protection: {:.4} mm (the controller keeps {:.2} mm)",
            mm(s.min_patient_distance), mm(s.min_clearance), mm(margin)
        );
        let _ = writeln!(
            t,
            "  penetrations of the protected region: {}",
            s.penetrations
        );
        let _ = writeln!(
            t,
            "  contact with a protection in {} of {} joint states; surgeon pushed into forbidden regions {} times ({} joint states); cutting aid in force at t = {:.2} s",
            s.outcomes[1], s.periods, s.pushes, s.push_periods, s.aid_loaded_at
        );
        let c = r.timing.control_us;
        let _ = writeln!(
            t,
            "control loop timing (wall clock): interval between velocity commands at the robot p50 {:.0} us, p99 {:.0} us, max {:.0} us",
            c[0], c[1], c[2]
        );
        t
    }

    /// Writes `summary.txt`, `trajectory.csv` and the plots into `dir`; returns the files and
    /// a note if the plots were skipped.
    pub fn write(
        &self,
        dir: &Path,
        r: &Report,
        summary: &str,
    ) -> Result<(Vec<PathBuf>, Option<String>), String> {
        let (files, note) = report::write(dir, &self.cfg, r).map_err(|e| e.to_string())?;
        let path = dir.join("summary.txt");
        std::fs::write(&path, summary).map_err(|e| format!("{}: {e}", path.display()))?;
        Ok((files, note))
    }
}

/// The protection sets received (by tag: the stamp of the message they came in) and the one
/// the controller has in force. The controller puts a new set in force only once the tool is
/// clear of it, and it converts the set on its own time: measuring against a set from its
/// arrival at the surgeon would count the tool inside a protection the controller does not
/// enforce yet (a cutting aid generated while the bit is where the aid goes) as a penetration.
#[derive(Debug, Default)]
pub struct InForce {
    /// Newest last, at most [`InForce::KEEP`].
    received: Vec<(u64, ProtectionSet)>,
    /// The tag the controller reports in force (0: none).
    wanted: u64,
    /// The tag of the set handed out last (0: none).
    applied: u64,
}

impl InForce {
    /// Sets kept while the controller has not reported them (a newer one replaces the older).
    pub const KEEP: usize = 8;

    /// A set received under `tag`; gives it back if it is the one the controller already
    /// reports in force (the surgeon converted it after the controller).
    pub fn received(&mut self, tag: u64, set: ProtectionSet) -> Option<ProtectionSet> {
        self.received.retain(|(t, _)| *t != tag);
        self.received.push((tag, set));
        if self.received.len() > Self::KEEP {
            self.received.remove(0);
        }
        self.next()
    }

    /// The controller reports the set `tag` in force; gives the set to measure against when
    /// that changed and the set is known (else when it arrives).
    pub fn in_force(&mut self, tag: u64) -> Option<ProtectionSet> {
        self.wanted = tag;
        self.next()
    }

    /// The tag of the set measured against (0: none yet).
    pub fn applied(&self) -> u64 {
        self.applied
    }

    fn next(&mut self) -> Option<ProtectionSet> {
        if self.wanted == 0 || self.wanted == self.applied {
            return None;
        }
        let (_, set) = self.received.iter().find(|(t, _)| *t == self.wanted)?;
        self.applied = self.wanted;
        Some(set.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_file_is_the_generated_one() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        rpq_param_gen::check_file(&root.join(settings::CONFIG_FILE), settings::CONFIG_YAML);
    }

    #[test]
    fn the_launch_starts_at_the_librarys_start() {
        let cfg = ScenarioConfig::default();
        let g = Geometry::build(&cfg).unwrap();
        let q = start_joints(&cfg, &g).unwrap();
        let file = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../config/surgery_robot_sim.yaml"
        );
        let line = format!(
            "    initial_positions: [{}]",
            q.iter()
                .map(|x| format!("{x:.9}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        if std::env::var_os("RPQ_BLESS").is_some() {
            let text = format!(
                "# robot_sim in launch/surgery.launch.xml (after config/robot_sim.yaml): the drill tip\n\
                 # 12 mm above the start of the cut line, the drill along the skull's normal\n\
                 # (surgery_scenario::start_joints; RPQ_BLESS=1 cargo test --release -p surgery_scenario\n\
                 # --lib rewrites this file, a test checks it). 500 Hz; a velocity command is in force\n\
                 # for 5 ms after it was sent (the controller sends one every 1 ms; the controller's\n\
                 # forbidden_region.lookahead covers it).\n\
                 robot_sim:\n  ros__parameters:\n    update_rate: 500.0\n    velocity_command_timeout: 0.005\n{line}\n"
            );
            std::fs::write(file, text).unwrap();
        }
        let text = std::fs::read_to_string(file).unwrap();
        assert!(text.contains(&line), "{file} does not hold {line}");
    }

    #[test]
    fn the_run_is_measured_against_the_set_the_controller_enforces() {
        use rpq_surgery::{Protection, ProtectionKind};
        let sheet = |name: &str| {
            let mesh = rpq_kinematics::TriMesh::new(
                vec![
                    Point3::new(0.0, 0.0, 0.0),
                    Point3::new(1.0, 0.0, 0.0),
                    Point3::new(0.0, 1.0, 0.0),
                ],
                vec![[0, 1, 2]],
            )
            .unwrap();
            Protection::from_mesh(name, ProtectionKind::Other, &mesh, Isometry3::identity())
                .unwrap()
        };
        let one = ProtectionSet::new().with(sheet("a"));
        let two = one.clone().with(sheet("b"));
        let mut f = InForce::default();
        // received first, in force later: nothing until the controller says so
        assert!(f.received(10, one.clone()).is_none());
        assert!(f.received(20, two.clone()).is_none());
        assert!(f.in_force(0).is_none());
        assert_eq!(f.in_force(10).unwrap().len(), 1);
        assert_eq!(f.applied(), 10);
        // repeated statuses hand nothing out again
        assert!(f.in_force(10).is_none());
        // the controller was faster than the surgeon's conversion: handed out on arrival
        assert!(f.in_force(30).is_none());
        assert_eq!(f.applied(), 10);
        assert_eq!(f.received(30, two.clone()).unwrap().len(), 2);
        assert_eq!(f.applied(), 30);
        // an older set back in force (a swap back) is still known
        assert_eq!(f.in_force(20).unwrap().len(), 2);
        // only the newest KEEP sets are kept
        for tag in 100..100 + InForce::KEEP as u64 {
            f.received(tag, one.clone());
        }
        assert!(f.in_force(10).is_none());
        assert!(f.in_force(100).is_some());
    }

    #[test]
    fn speed_is_measured_over_a_window_not_between_jittered_stamps() {
        let cfg = ScenarioConfig::default();
        let g = Arc::new(Geometry::build(&cfg).unwrap());
        let mut m = Monitor::new(cfg, g).unwrap();
        let start = Point3::new(0.45, 0.0, 0.2);
        // 50 mm/s along x, a joint state every 2 ms; the 11th is stamped 1 µs after the 10th
        // (a publisher catching up) although it holds the next 2 ms of motion
        let mut shown = Vec::new();
        for k in 0..60 {
            let t_true = k as f64 * 0.002;
            let t = if k == 10 { 0.018 + 1e-6 } else { t_true };
            m.on_tool(t, start + Vector3::x() * 0.05 * t_true, false, false, None);
            shown.push(m.status(t, false, None).speed);
        }
        assert_eq!(shown[5], 0.0, "no speed before the first window closes");
        let worst = shown[10..].iter().fold(0.0f64, |w, s| w.max(*s));
        assert!(
            worst < 0.06,
            "largest speed shown {worst} m/s for a 0.05 m/s motion"
        );
        assert!((shown[59] - 0.05).abs() < 1e-3, "{}", shown[59]);
    }

    #[test]
    fn the_sensor_reads_the_lever_arm() {
        // sensor at (0, 0, 1) turned 90° about z; 10 N along base x at 0.12 m below it
        let s = Isometry3::new(
            Vector3::new(0.0, 0.0, 1.0),
            Vector3::z() * std::f64::consts::FRAC_PI_2,
        );
        let w = sensor_wrench(
            &s,
            &Point3::new(0.0, 0.0, 0.88),
            &Vector3::new(10.0, 0.0, 0.0),
        );
        // base x is sensor -y; torque (0,0,-0.12) × (10,0,0) = (0, -1.2, 0) base = (-1.2, 0, 0) sensor
        let expect = Vector6::new(0.0, -10.0, 0.0, -1.2, 0.0, 0.0);
        assert!((w - expect).norm() < 1e-12, "{w}");
    }

    #[test]
    fn the_committed_cut_path_is_the_librarys() {
        let g = Geometry::build(&ScenarioConfig::default()).unwrap();
        let file = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../config/surgery_cut_path.txt"
        );
        if std::env::var_os("RPQ_BLESS").is_some() {
            let mut text = String::from(
                "# The guidance path of launch/surgery.launch.xml (steady_hand_guidance path.file): the cut\n\
                 # line on the phantom raised by the bit radius + 0.2 mm, closed, base frame [m].\n\
                 # Generated from rpq_surgery::scenario::Geometry (default ScenarioConfig) by\n\
                 # RPQ_BLESS=1 cargo test --release -p surgery_scenario --lib; a test checks it.\n",
            );
            for p in &g.path {
                let _ = writeln!(text, "{:.12} {:.12} {:.12}", p.x, p.y, p.z);
            }
            std::fs::write(file, text).unwrap();
        }
        let text = std::fs::read_to_string(file).unwrap();
        let pts: Vec<Vec<f64>> = text
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .map(|l| l.split_whitespace().map(|x| x.parse().unwrap()).collect())
            .collect();
        assert_eq!(pts.len(), g.path.len());
        for (a, b) in pts.iter().zip(&g.path) {
            assert!((Point3::new(a[0], a[1], a[2]) - b).norm() < 1e-9);
        }
    }
}
