//! Robustness fuzzing of the suite's file readers: mutated versions of the repository's own
//! files (URDF, STL, scene YAML, collision-matrix YAML, configuration CSV, launch XML, parameter
//! YAML, hand-model YAML, `--ros-args` lines, rosbag2 MCAP and its `metadata.yaml`) are fed to
//! the readers, which must answer `Ok` or `Err` — never panic, never take longer than a bound.
//!
//! The mutation engine is deterministic (seeded [`SplitMix64`]): bit flips, interesting bytes,
//! deletions, duplications, insertions, truncation, splices of two seeds, and for text formats
//! number and token replacements (`1e308`, `nan`, `-1`, a deep `[[[[`, a long string). A panic
//! is caught (`catch_unwind`) and recorded with the input that caused it, a slow input likewise.
//!
//! The test command runs a bounded number of inputs (`tests/tests/fuzz_readers.rs`); the binary
//! `fuzz_readers` runs as many as asked (`--inputs 1000000`) and prints a table.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rpq_base::SplitMix64;

use crate::repo_root;

/// Reads one input; what it returns does not matter, only that it returns.
pub type Reader = Box<dyn Fn(&[u8]) + Sync>;

/// One reader under test: a name, its seed inputs and the function that reads one input.
pub struct Target {
    /// Short name (`urdf`, `stl`, ...).
    pub name: &'static str,
    /// Seed inputs (the repository's own files of that format).
    pub seeds: Vec<Vec<u8>>,
    /// True for text formats (enables token mutations).
    pub text: bool,
    /// Reads one input; the result only matters as "returned".
    pub run: Reader,
}

/// What a fuzz run of one target found.
#[derive(Debug, Default, Clone)]
pub struct Report {
    /// Target name.
    pub name: &'static str,
    /// Inputs run.
    pub executions: u64,
    /// Inputs the reader accepted or refused without panicking (all of them, when clean).
    pub returned: u64,
    /// Panics: (message, input bytes, first 200 shown).
    pub panics: Vec<(String, Vec<u8>)>,
    /// Inputs that took longer than the bound: (seconds, input).
    pub slow: Vec<(f64, Vec<u8>)>,
    /// Longest time one input took [s].
    pub max_seconds: f64,
    /// Wall time of the run [s].
    pub seconds: f64,
}

fn read(path: impl AsRef<Path>) -> Vec<u8> {
    let p = repo_root().join(path);
    std::fs::read(&p).unwrap_or_else(|e| panic!("fuzz seed {}: {e}", p.display()))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Every target with its seeds from the repository.
pub fn targets() -> Vec<Target> {
    let scene = rpq_scene::load_scene(repo_root().join("config/rx60_pair.scene.yaml"))
        .expect("the pair scene loads")
        .scenario;
    let tmp = std::env::temp_dir().join(format!("rpq_fuzz_{}", std::process::id()));
    std::fs::create_dir_all(&tmp).expect("temp dir");
    let bag_dir = tmp.clone();
    let csv_header = rpq_scene::ConfigTable::header_for(&scene).join(",");
    vec![
        Target {
            name: "urdf",
            seeds: vec![read("urdf/rx60b.urdf"), read("urdf/hit_dlr_hand.urdf")],
            text: true,
            run: Box::new(|b| {
                let _ = rpq_kinematics::Robot::from_urdf_str(&text(b));
            }),
        },
        Target {
            name: "stl",
            seeds: vec![
                read("meshes/hit_dlr_hand/thumb_base.stl"),
                b"solid t\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nvertex 0 1 0\nendloop\nendfacet\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 0 1 0\nvertex 0 0 1\nendloop\nendfacet\nendsolid t\n".to_vec(),
            ],
            text: false,
            run: Box::new(|b| {
                if rpq_base::mesh::parse_stl(b).is_ok() {
                    let _ = rpq_proximity::Model::from_stl_bytes(b);
                }
            }),
        },
        Target {
            name: "scene_yaml",
            seeds: vec![read("config/rx60_pair.scene.yaml")],
            text: true,
            run: Box::new(|b| {
                let _ = rpq_scene::SceneSpec::from_yaml(&text(b), Path::new("fuzz.yaml"));
            }),
        },
        Target {
            name: "collision_matrix_yaml",
            seeds: vec![read("config/rx60_pair.collision_matrix.yaml")],
            text: true,
            run: Box::new(|b| {
                let _ = rpq_scene::CollisionMatrix::from_yaml(&text(b), Path::new("fuzz.yaml"));
            }),
        },
        Target {
            name: "config_csv",
            seeds: vec![format!(
                "{csv_header}\n0,0.1,0.2,0,0,0,0,0,0,0,0,0\n# c\n1,-1,0.5,2,0,0,0,0.8,0.5,0,0,0\n"
            )
            .into_bytes()],
            text: true,
            run: Box::new(move |b| {
                let _ = rpq_scene::ConfigTable::parse(&text(b), Path::new("fuzz.csv"), &scene);
            }),
        },
        Target {
            name: "launch_xml",
            seeds: vec![
                read("launch/steady_hand.launch.xml"),
                read("launch/proximity.launch.xml"),
                read("launch/hand_teleop.launch.xml"),
            ],
            text: true,
            run: Box::new(|b| {
                let _ = rpq_launch::parse::parse_launch("fuzz.launch.xml", &text(b));
            }),
        },
        Target {
            name: "params_yaml",
            seeds: vec![
                read("config/robot_sim.yaml"),
                read("config/admittance_controller.yaml"),
                read("config/proximity_query.yaml"),
            ],
            text: true,
            run: Box::new(|b| {
                let t = text(b);
                for node in ["/robot_sim", "/admittance_controller", "/left/robot_sim"] {
                    let _ = rpq_ros::params::parse_params_yaml(&t, "fuzz.yaml", node);
                }
            }),
        },
        Target {
            name: "hand_model_yaml",
            seeds: vec![read("config/hand_model_nominal.yaml")],
            text: true,
            run: Box::new(|b| {
                let _ = rpq_hand::HandModel::from_yaml_str(&text(b));
            }),
        },
        Target {
            name: "ros_args",
            seeds: vec![b"--ros-args -r __ns:=/left -p update_rate:=100.0 -p 'initial_positions:=[0.1, 0.2]' --params-file x.yaml -r a:=b --log-level debug -e".to_vec()],
            text: true,
            run: Box::new(|b| {
                let t = text(b);
                let args: Vec<&str> = t.split(' ').collect();
                let _ = rpq_ros::args::RosArgs::parse(args);
            }),
        },
        Target {
            name: "mcap",
            seeds: vec![
                read("tests/bags/robot_sim_commands/robot_sim_commands.mcap"),
                read("tests/bags/hand_glove/hand_glove_0.mcap"),
            ],
            text: false,
            run: Box::new(move |b| {
                let file = bag_dir.join(format!("{:?}.mcap", std::thread::current().id()));
                if std::fs::write(&file, b).is_ok() {
                    let _ = rpq_bag::BagReader::open(&file);
                }
            }),
        },
        Target {
            name: "bag_metadata_yaml",
            seeds: vec![read("tests/bags/robot_sim_commands/metadata.yaml")],
            text: true,
            run: Box::new(|b| {
                let _ = rpq_bag::BagMetadata::from_yaml_str(&text(b));
            }),
        },
    ]
}

const INTERESTING: &[u8] = b"\0\xff\n\r\"'<>{}[]:,-+.09eE#&;$()/\\ ";
const TOKENS: &[&str] = &[
    "1e308",
    "-1e308",
    "nan",
    ".nan",
    "NaN",
    "inf",
    "-inf",
    "-1",
    "0",
    "-0",
    "4294967296",
    "99999999999999999999999",
    "1e-320",
    "\u{0}",
    "\u{feff}",
    "~",
    "null",
    "true",
    "[[[[[[[[[[",
    "{{{{{{{{",
    "&a",
    "*a",
    "!!binary",
    "$(var x)",
    "$(env HOME)",
    "$(find-pkg-share x)",
    "<group>",
    "</launch>",
    "<!--",
    "]]>",
    "../../../etc/passwd",
    "/dev/zero",
    "package://x/y",
    "file:///proc/self/environ",
    "\"",
    "'",
    ",,,,",
    "\n\n",
    "#",
];

fn range(rng: &mut SplitMix64, len: usize) -> (usize, usize) {
    if len == 0 {
        return (0, 0);
    }
    let a = rng.below(len as u64) as usize;
    let n = 1 + rng.below(64.min(len - a) as u64) as usize;
    (a, (a + n).min(len))
}

/// One mutated input from `seeds` (1 to 4 mutations of a random seed).
pub fn mutate(rng: &mut SplitMix64, seeds: &[Vec<u8>], text: bool) -> Vec<u8> {
    let mut b = seeds[rng.below(seeds.len() as u64) as usize].clone();
    let n = 1 + rng.below(4);
    for _ in 0..n {
        let len = b.len();
        match rng.below(if text { 10 } else { 8 }) {
            0 if len > 0 => {
                let i = rng.below(len as u64) as usize;
                b[i] ^= 1 << rng.below(8);
            }
            1 if len > 0 => {
                let i = rng.below(len as u64) as usize;
                b[i] = INTERESTING[rng.below(INTERESTING.len() as u64) as usize];
            }
            2 => {
                let (a, e) = range(rng, len);
                b.drain(a..e);
            }
            3 => {
                let (a, e) = range(rng, len);
                let chunk = b[a..e].to_vec();
                let at = rng.below(len as u64 + 1) as usize;
                b.splice(
                    at..at,
                    chunk
                        .iter()
                        .copied()
                        .cycle()
                        .take(chunk.len() * (1 + rng.below(8) as usize)),
                );
            }
            4 => {
                let at = rng.below(len as u64 + 1) as usize;
                let k = 1 + rng.below(16) as usize;
                let bytes: Vec<u8> = (0..k).map(|_| rng.next_u64() as u8).collect();
                b.splice(at..at, bytes);
            }
            5 if len > 0 => {
                let at = rng.below(len as u64) as usize;
                b.truncate(at);
            }
            6 => {
                let other = &seeds[rng.below(seeds.len() as u64) as usize];
                let at = rng.below(len as u64 + 1) as usize;
                let (a, e) = range(rng, other.len());
                b.truncate(at);
                b.extend_from_slice(&other[a..]);
                let _ = e;
            }
            7 if len >= 4 => {
                // overwrite a little-endian u32 (lengths and counts of binary formats)
                let at = rng.below(len as u64 - 3) as usize;
                let v: u32 = match rng.below(4) {
                    0 => 0,
                    1 => u32::MAX,
                    2 => 0x7fff_ffff,
                    _ => rng.next_u64() as u32,
                };
                b[at..at + 4].copy_from_slice(&v.to_le_bytes());
            }
            8 | 9 => {
                // replace a token (a run of number/identifier characters) with an extreme one
                let t = TOKENS[rng.below(TOKENS.len() as u64) as usize].as_bytes();
                if len == 0 {
                    b.extend_from_slice(t);
                    continue;
                }
                let mut a = rng.below(len as u64) as usize;
                while a > 0 && b[a - 1].is_ascii_alphanumeric() {
                    a -= 1;
                }
                let mut e = a;
                while e < len && (b[e].is_ascii_alphanumeric() || b[e] == b'.') {
                    e += 1;
                }
                b.splice(a..e, t.iter().copied());
            }
            _ => {}
        }
    }
    b
}

/// Runs `inputs` mutated inputs (after the seeds themselves) through `target`, single-threaded;
/// an input slower than `slow` is recorded. Panics are caught and recorded.
pub fn run_target(target: &Target, inputs: u64, seed: u64, slow: Duration) -> Report {
    let mut rng = SplitMix64::new(seed ^ fxhash(target.name));
    let mut report = Report {
        name: target.name,
        ..Report::default()
    };
    let start = Instant::now();
    let total = target.seeds.len() as u64 + inputs;
    for k in 0..total {
        let input = if (k as usize) < target.seeds.len() {
            target.seeds[k as usize].clone()
        } else {
            mutate(&mut rng, &target.seeds, target.text)
        };
        let t0 = Instant::now();
        let outcome = catch_unwind(AssertUnwindSafe(|| (target.run)(&input)));
        let dt = t0.elapsed();
        report.executions += 1;
        report.max_seconds = report.max_seconds.max(dt.as_secs_f64());
        match outcome {
            Ok(()) => report.returned += 1,
            Err(payload) => {
                let msg = payload
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_else(|| "non-string panic".into());
                if report.panics.len() < 20 {
                    report.panics.push((msg, input.clone()));
                }
            }
        }
        if dt > slow && report.slow.len() < 20 {
            report.slow.push((dt.as_secs_f64(), input));
        }
    }
    report.seconds = start.elapsed().as_secs_f64();
    report
}

fn fxhash(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

/// Silences the default panic message while fuzzing (panics are recorded, not printed);
/// returns a guard that restores the previous hook.
pub fn quiet_panics() -> impl Drop {
    type Hook = Box<dyn Fn(&std::panic::PanicHookInfo<'_>) + Sync + Send + 'static>;
    struct Restore(Option<Hook>);
    impl Drop for Restore {
        fn drop(&mut self) {
            if let Some(h) = self.0.take() {
                std::panic::set_hook(h);
            }
        }
    }
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    Restore(Some(previous))
}

/// A short printable excerpt of an input (for reports).
pub fn excerpt(input: &[u8]) -> String {
    let s: String = String::from_utf8_lossy(&input[..input.len().min(200)])
        .chars()
        .map(|c| if c.is_control() && c != '\n' { '?' } else { c })
        .collect();
    s.replace('\n', "\\n")
}

/// Where to write a failing input for reproduction: `target/fuzz_failures/<target>-<k>.bin`.
pub fn failure_path(target: &str, k: usize) -> PathBuf {
    repo_root()
        .join("target")
        .join("fuzz_failures")
        .join(format!("{target}-{k}.bin"))
}
