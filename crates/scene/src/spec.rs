//! File formats: the scene YAML, the joint-configuration CSV and the result CSV.
//!
//! Scene (YAML; relative paths are relative to the scene file):
//! ```yaml
//! robots:                       # complex objects from URDF (meshes resolved next to it)
//!   - name: left                # unique, no '/'
//!     urdf: ../urdf/rx60b.urdf
//!     base: {xyz: [0, 0, 0], rpy: [0, 0, 0]}     # metres, radians (URDF convention)
//!   - name: right               # or: the URDF text published on a robot_description
//!     robot_description: /right/robot_description  # topic (only the proximity_query
//!     base: {xyz: [0.6, 0, 0], rpy: [0, 0, 3.14159]}  # node reads these; exactly one of
//!                                                      # `urdf` / `robot_description`)
//! objects:                      # simple objects: one STL mesh (metres) at a fixed pose
//!   - name: table
//!     stl: ../meshes/table.stl
//!     pose: {xyz: [0.3, 0, -0.05], rpy: [0, 0, 0]}
//! collision_matrix: rx60_pair.collision_matrix.yaml   # optional
//! options: {resolution_levels: L1L2L3, weight_matrix: true, collision_matrix: true}  # optional
//! ```
//! Configurations (CSV): a header naming every movable joint of every robot as
//! `robot/joint` (any order), then one row per configuration in radians (metres for
//! prismatic joints). Lines starting with `#` are comments. Values must be finite and within
//! ±1e6; a row outside a joint's position limits is refused by [`run_table`] (naming the line,
//! joint, value and limits) unless [`Limits::Flag`] is asked for.
//!
//! Results (CSV): `index,colliding,min_distance,link_a,link_b,ax,ay,az,bx,by,bz`:
//! row index (0-based, in input order), 1/0, the minimum distance (m, 0 when colliding),
//! the closest (or first colliding) pair as `object/link`, and the witness points in the
//! world frame. With [`Limits::Flag`] a last column `within_limits` (1/0) follows.
//!
//! Scene poses (robot bases, object poses) must lie within ±1e6 m of the origin
//! ([`MAX_COORDINATE`]), and every answer must be finite: objects placed 1e308 m apart
//! answered "not colliding, distance 0" with NaN witnesses before.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use rpq_kinematics::MeshResolver;
use serde::{Deserialize, Serialize};

use crate::cmatrix::CollisionMatrix;
use crate::error::SceneError;
use crate::object::{Object, Robot, SimpleObject};
use crate::options::QueryOptions;
use crate::scenario::{DistanceReport, Scenario};
use crate::text;

/// Poses of the scene file's `base` and `pose` entries (also `rpq_scene::PoseSpec`).
pub use crate::pose::PoseSpec;

/// A robot entry of a scene file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RobotSpec {
    /// Unique name (prefix of its joint columns).
    pub name: String,
    /// URDF file (relative to the scene file), meshes resolved next to it. Exactly one of
    /// `urdf` and `robot_description` is given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub urdf: Option<PathBuf>,
    /// ROS topic publishing the robot's URDF text (e.g. `/left/robot_description`),
    /// read by the `proximity_query` node through [`SceneSpec::build_with`]. Exactly one
    /// of `urdf` and `robot_description` is given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub robot_description: Option<String>,
    /// Base pose in the world.
    #[serde(default = "identity_pose")]
    pub base: PoseSpec,
}

/// A simple-object entry of a scene file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ObjectSpec {
    /// Unique name (no `/`), used as `name/body` in collision-matrix files.
    pub name: String,
    /// STL file (metres; relative to the scene file).
    pub stl: PathBuf,
    /// Pose in the world.
    #[serde(default = "identity_pose")]
    pub pose: PoseSpec,
}

/// Largest coordinate (m) of a scene pose, a joint value (rad or m) and a result witness point:
/// beyond it f64 distances lose their millimetres and sums overflow to inf/NaN.
pub const MAX_COORDINATE: f64 = 1e6;

/// The isometry of a scene pose, refused when not finite or beyond [`MAX_COORDINATE`].
fn checked_pose(what: &str, pose: &PoseSpec) -> Result<nalgebra::Isometry3<f64>, SceneError> {
    let iso = pose.to_isometry()?;
    if pose.xyz.iter().any(|c| c.abs() > MAX_COORDINATE) {
        return Err(SceneError::Invalid(format!(
            "{what}: position {:?} m is beyond ±{MAX_COORDINATE} m of the origin",
            pose.xyz
        )));
    }
    Ok(iso)
}

fn identity_pose() -> PoseSpec {
    PoseSpec {
        xyz: [0.0; 3],
        rpy: [0.0; 3],
    }
}

/// A scene file (module documentation).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SceneSpec {
    /// Robots (complex objects) loaded from URDF.
    #[serde(default)]
    pub robots: Vec<RobotSpec>,
    /// Simple objects: one STL mesh each at a fixed pose.
    #[serde(default)]
    pub objects: Vec<ObjectSpec>,
    /// Collision-matrix file.
    #[serde(default)]
    pub collision_matrix: Option<PathBuf>,
    /// Query options (default: all optimizations on).
    #[serde(default)]
    pub options: Option<QueryOptions>,
}

/// A loaded scene: the scenario and the options of the file.
#[derive(Debug)]
pub struct LoadedScene {
    /// The scenario (collision matrix attached if the file names one).
    pub scenario: Scenario,
    /// The options (defaults if the file has none).
    pub options: QueryOptions,
}

impl SceneSpec {
    /// Parses scene YAML; `path` is used in messages.
    pub fn from_yaml(text: &str, path: &Path) -> Result<SceneSpec, SceneError> {
        text::parse_yaml(text, path)
    }

    /// Reads and parses a scene file.
    pub fn load(path: impl AsRef<Path>) -> Result<SceneSpec, SceneError> {
        let path = path.as_ref();
        Self::from_yaml(&text::read(path)?, path)
    }

    /// Builds the scenario; relative paths are taken relative to `base_dir`. Robots from
    /// the same URDF file share their meshes and hierarchies. Robots that name a
    /// `robot_description` topic are refused (only the `proximity_query` node reads
    /// topics; it calls [`SceneSpec::build_with`]).
    pub fn build(&self, base_dir: &Path) -> Result<LoadedScene, SceneError> {
        self.build_with(base_dir, &mut |r| {
            Err(SceneError::Invalid(format!(
                "robot `{}` names the topic {}; only the proximity_query node reads robot \
                 descriptions from topics — give `urdf:` for this tool",
                r.name,
                r.robot_description.as_deref().unwrap_or_default()
            )))
        })
    }

    /// Builds the scenario; robots that name a topic get their URDF text from
    /// `description` (called with the robot spec; returns the URDF text and the resolver
    /// for its mesh URIs). Relative paths are taken relative to `base_dir`; robots from the
    /// same URDF file share their meshes and hierarchies. A robot entry must give exactly
    /// one of `urdf` and `robot_description`.
    #[allow(clippy::type_complexity)] // the signature the proximity_query node calls
    pub fn build_with(
        &self,
        base_dir: &Path,
        description: &mut dyn FnMut(&RobotSpec) -> Result<(String, MeshResolver), SceneError>,
    ) -> Result<LoadedScene, SceneError> {
        let mut scenario = Scenario::new();
        let mut cache: HashMap<PathBuf, Robot> = HashMap::new();
        for r in &self.robots {
            let base = checked_pose(&format!("robot `{}` base", r.name), &r.base)?;
            let robot = match (&r.urdf, &r.robot_description) {
                (Some(urdf), None) => {
                    let path = base_dir.join(urdf);
                    match cache.get(&path) {
                        Some(proto) => proto.instance(r.name.clone(), base),
                        None => {
                            let robot = Robot::from_urdf_file(r.name.clone(), &path, base)?;
                            cache.insert(path, robot.clone());
                            robot
                        }
                    }
                }
                (None, Some(_)) => {
                    let (text, resolver) = description(r)?;
                    Robot::from_urdf_str(r.name.clone(), &text, &resolver, base)?
                }
                (Some(_), Some(_)) => {
                    return Err(SceneError::Invalid(format!(
                        "robot `{}` gives both `urdf` and `robot_description`; give one",
                        r.name
                    )))
                }
                (None, None) => {
                    return Err(SceneError::Invalid(format!(
                        "robot `{}` gives neither `urdf` nor `robot_description`; give one",
                        r.name
                    )))
                }
            };
            scenario.add_robot(robot)?;
        }
        for o in &self.objects {
            let obj = SimpleObject::from_stl_file(
                o.name.clone(),
                base_dir.join(&o.stl),
                checked_pose(&format!("object `{}` pose", o.name), &o.pose)?,
            )?;
            scenario.add_object(obj)?;
        }
        if let Some(cm) = &self.collision_matrix {
            scenario.set_collision_matrix(CollisionMatrix::load(base_dir.join(cm))?)?;
        }
        Ok(LoadedScene {
            scenario,
            options: self.options.unwrap_or_default(),
        })
    }
}

/// Loads a scene file and builds its scenario.
pub fn load_scene(path: impl AsRef<Path>) -> Result<LoadedScene, SceneError> {
    let path = path.as_ref();
    let spec = SceneSpec::load(path)?;
    spec.build(path.parent().unwrap_or(Path::new(".")))
}

/// Robot object indices, and per joint name its (index into those robots, joint index).
pub(crate) type JointColumns = (Vec<usize>, Vec<(usize, usize)>);

/// Maps `robot/joint` names onto the robots of `scenario`: the robot object indices in
/// order of first appearance, and per name its (index into those robots, joint index).
/// Every movable joint of every robot must be named exactly once; `noun` names one entry
/// in the messages (`column` for the CSV header).
pub(crate) fn joint_columns<'a>(
    scenario: &Scenario,
    names: impl IntoIterator<Item = &'a str>,
    noun: &str,
) -> Result<JointColumns, String> {
    let mut robots: Vec<usize> = Vec::new();
    let mut cols: Vec<(usize, usize)> = Vec::new();
    for h in names {
        let (rname, jname) = h
            .split_once('/')
            .ok_or_else(|| format!("{noun} `{h}` is not `robot/joint`"))?;
        let o = scenario
            .object_index(rname)
            .map_err(|_| format!("unknown robot `{rname}` in {noun} `{h}`"))?;
        let Object::Complex(r) = &scenario.objects()[o] else {
            return Err(format!("`{rname}` in {noun} `{h}` is not a robot"));
        };
        let d = r
            .kinematics()
            .joint_index(jname)
            .map_err(|_| format!("robot `{rname}` has no movable joint `{jname}`"))?;
        let slot = match robots.iter().position(|&x| x == o) {
            Some(s) => s,
            None => {
                robots.push(o);
                robots.len() - 1
            }
        };
        if cols.contains(&(slot, d)) {
            return Err(format!("{noun} `{h}` appears twice"));
        }
        cols.push((slot, d));
    }
    for (k, o) in scenario.objects().iter().enumerate() {
        if o.dof() == 0 {
            continue;
        }
        let Some(slot) = robots.iter().position(|&x| x == k) else {
            return Err(format!("no {noun}s for robot `{}`", o.name()));
        };
        if let Object::Complex(r) = o {
            for (d, jn) in r.kinematics().joint_names().enumerate() {
                if !cols.contains(&(slot, d)) {
                    return Err(format!("missing {noun} `{}/{jn}`", o.name()));
                }
            }
        }
    }
    Ok((robots, cols))
}

/// Joint configurations read from CSV, mapped onto a scenario's robots.
#[derive(Clone, Debug, PartialEq)]
pub struct ConfigTable {
    /// Robot object indices, in the order of `rows[k]`'s blocks.
    pub robots: Vec<usize>,
    /// Per row: input line (1-based) and one joint vector per robot of `robots`.
    pub rows: Vec<(usize, Vec<Vec<f64>>)>,
}

impl ConfigTable {
    /// Parses configuration CSV (module documentation) for `scenario`.
    pub fn parse(text: &str, path: &Path, scenario: &Scenario) -> Result<ConfigTable, SceneError> {
        let err = |line: usize, message: String| SceneError::Csv {
            path: path.to_owned(),
            line,
            message,
        };
        let mut rdr = csv::ReaderBuilder::new()
            .has_headers(true)
            .comment(Some(b'#'))
            .flexible(true)
            .trim(csv::Trim::All)
            .from_reader(text.as_bytes());
        let headers = rdr.headers().map_err(|e| err(1, e.to_string()))?.clone();
        // 1-based line of a byte offset (the csv crate's own line count skips blank lines).
        // 1-based line of the record starting at a byte offset, skipping the blank and
        // comment lines the reader skipped (its own line count ignores blank lines).
        let line_of = |byte: u64| {
            let mut b = (byte as usize).min(text.len());
            loop {
                let rest = &text[b..];
                let end = rest.find('\n').map_or(rest.len(), |k| k + 1);
                let l = rest[..end].trim();
                if end > 0 && (l.is_empty() || l.starts_with('#')) && end < rest.len() {
                    b += end;
                } else {
                    break;
                }
            }
            1 + text.as_bytes()[..b].iter().filter(|&&c| c == b'\n').count()
        };
        let hline = text
            .lines()
            .position(|l| {
                let t = l.trim();
                !t.is_empty() && !t.starts_with('#')
            })
            .map_or(1, |k| k + 1);
        let (robots, cols) = joint_columns(scenario, headers.iter(), "column")
            .map_err(|message| err(hline, message))?;
        let mut rows = Vec::new();
        for rec in rdr.records() {
            let rec = rec.map_err(|e| {
                let line = e.position().map_or(0, |p| line_of(p.byte()));
                err(line, e.to_string())
            })?;
            let line = rec.position().map_or(0, |p| line_of(p.byte()));
            if rec.len() != cols.len() {
                return Err(err(
                    line,
                    format!("{} fields, the header has {}", rec.len(), cols.len()),
                ));
            }
            let mut qs: Vec<Vec<f64>> = robots
                .iter()
                .map(|&o| vec![0.0; scenario.objects()[o].dof()])
                .collect();
            for (k, field) in rec.iter().enumerate() {
                let v: f64 = field.parse().map_err(|_| {
                    err(
                        line,
                        format!("column `{}`: `{field}` is not a number", &headers[k]),
                    )
                })?;
                if !v.is_finite() {
                    return Err(err(
                        line,
                        format!("column `{}`: {field} is not finite", &headers[k]),
                    ));
                }
                if v.abs() > MAX_COORDINATE {
                    return Err(err(
                        line,
                        format!(
                            "column `{}`: {field} is beyond ±{MAX_COORDINATE} (rad or m)",
                            &headers[k]
                        ),
                    ));
                }
                let (slot, d) = cols[k];
                qs[slot][d] = v;
            }
            rows.push((line, qs));
        }
        Ok(ConfigTable { robots, rows })
    }

    /// Reads and parses a configuration CSV file.
    pub fn load(path: impl AsRef<Path>, scenario: &Scenario) -> Result<ConfigTable, SceneError> {
        let path = path.as_ref();
        Self::parse(&text::read(path)?, path, scenario)
    }

    /// Header line for a scenario's robots (every movable joint, `robot/joint`).
    pub fn header_for(scenario: &Scenario) -> Vec<String> {
        let mut h = Vec::new();
        for o in scenario.objects() {
            if let Object::Complex(r) = o {
                for j in r.kinematics().joint_names() {
                    h.push(format!("{}/{j}", r.name()));
                }
            }
        }
        h
    }
}

/// One line of the result CSV.
#[derive(Clone, Debug, PartialEq)]
pub struct ResultRow {
    /// Row index of the configuration (0-based, in input order).
    pub index: usize,
    /// Colliding?
    pub colliding: bool,
    /// Minimum distance and pair.
    pub report: DistanceReport,
    /// Every joint of every robot within its position limits.
    pub within_limits: bool,
}

/// What [`run_table`] does with a configuration outside a joint's position limits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limits {
    /// Stop with an error naming the line, joint, value and limits (the default of
    /// `rpq_query`: such a row is usually a unit or column mistake, and the robot cannot
    /// reach it anyway).
    Refuse,
    /// Answer it and flag it: [`ResultRow::within_limits`] false, and a last CSV column
    /// `within_limits` (`rpq_query --allow-outside-limits`).
    Flag,
}

/// Header of the result CSV.
pub const RESULT_HEADER: &str = "index,colliding,min_distance,link_a,link_b,ax,ay,az,bx,by,bz";

/// Last column of the result CSV with [`Limits::Flag`]: 1 if the row is within every joint's
/// limits, else 0.
pub const WITHIN_LIMITS_COLUMN: &str = "within_limits";

/// Writes result rows as CSV; with [`Limits::Flag`] the column `within_limits` is added.
pub fn write_results(
    out: &mut dyn Write,
    scenario: &Scenario,
    rows: &[ResultRow],
    limits: Limits,
) -> std::io::Result<()> {
    let flag = limits == Limits::Flag;
    if flag {
        writeln!(out, "{RESULT_HEADER},{WITHIN_LIMITS_COLUMN}")?;
    } else {
        writeln!(out, "{RESULT_HEADER}")?;
    }
    for r in rows {
        let (a, b) = (&r.report.point_a, &r.report.point_b);
        write!(
            out,
            "{},{},{},{},{},{},{},{},{},{},{}",
            r.index,
            u8::from(r.colliding),
            r.report.distance,
            scenario.body_name(r.report.body_a),
            scenario.body_name(r.report.body_b),
            a.x,
            a.y,
            a.z,
            b.x,
            b.y,
            b.z
        )?;
        if flag {
            write!(out, ",{}", u8::from(r.within_limits))?;
        }
        writeln!(out)?;
    }
    Ok(())
}

/// Runs [`Scenario::query`] for every row of `table`. A row outside a joint's limits is
/// refused or flagged (`limits`); an answer that is not finite or lies beyond
/// [`MAX_COORDINATE`] is an error (never written as a result).
pub fn run_table(
    scenario: &mut Scenario,
    table: &ConfigTable,
    opts: &QueryOptions,
    limits: Limits,
) -> Result<Vec<ResultRow>, SceneError> {
    let mut out = Vec::with_capacity(table.rows.len());
    for (index, (line, qs)) in table.rows.iter().enumerate() {
        let row_err = |message: String| SceneError::Csv {
            path: PathBuf::from("<configurations>"),
            line: *line,
            message,
        };
        let mut within_limits = true;
        for (&o, q) in table.robots.iter().zip(qs) {
            if let Object::Complex(r) = &scenario.objects()[o] {
                if let Err(e) = r.kinematics().check_limits(q) {
                    if limits == Limits::Refuse {
                        return Err(row_err(format!(
                            "robot `{}`: {e} (rpq_query --allow-outside-limits answers such \
                             rows and flags them)",
                            r.name()
                        )));
                    }
                    within_limits = false;
                }
            }
            scenario
                .set_joint_positions(o, q)
                .map_err(|e| SceneError::Csv {
                    path: PathBuf::from("<configurations>"),
                    line: *line,
                    message: e.to_string(),
                })?;
        }
        let (colliding, report) = scenario
            .query(opts)
            .ok_or_else(|| SceneError::Invalid("the scene needs at least two objects".into()))?;
        let coords = report.point_a.iter().chain(report.point_b.iter());
        let usable = report.distance.is_finite()
            && report.distance <= 2.0 * MAX_COORDINATE
            && coords
                .clone()
                .all(|c| c.is_finite() && c.abs() <= MAX_COORDINATE);
        if !usable {
            return Err(row_err(format!(
                "the answer is not usable (distance {}, witnesses {:?} / {:?}): the objects \
                 lie beyond ±{MAX_COORDINATE} m",
                report.distance,
                report.point_a.coords.as_slice(),
                report.point_b.coords.as_slice()
            )));
        }
        out.push(ResultRow {
            index,
            colliding,
            report,
            within_limits,
        });
    }
    Ok(out)
}
