//! Coal (PyPI package `coal`, the successor of FCL and hpp-fcl) as the exact-distance peer of
//! `rpq_bench`, driven through its Python bindings in the benchmark venv.
//!
//! `rpq_bench` writes a job file (meshes, body poses of every configuration, the pruned
//! robot layer's pair order), runs `python/coal_peer.py` on it and reads back Coal's times
//! and distances. Every conversion (BVH build, transforms, per-pair functors) happens in the
//! script before its timed loops; the binding overhead (a Python call into Coal on two
//! one-triangle models) is measured and reported beside the figures.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use nalgebra::Isometry3;
use rpq_proximity::Model;

/// The venv `setup_bench_venv.sh` makes, relative to the workspace root.
pub const DEFAULT_VENV_PYTHON: &str = "target/bench-venv/bin/python";

/// What Coal is asked to compute.
#[derive(Debug, Default)]
pub struct CoalJob<'a> {
    /// The distinct meshes.
    pub meshes: Vec<&'a Model>,
    /// Mesh index of each body.
    pub body_mesh: Vec<u32>,
    /// Body pairs measured (all-pairs query: every one of them, exact).
    pub pairs: Vec<(u32, u32)>,
    /// Per configuration: the world pose of every body.
    pub poses: Vec<Vec<Isometry3<f64>>>,
    /// Per configuration: the pruned order `(pair index, lower bound)`, sorted by bound; the
    /// peer stops at the first bound above its best distance.
    pub orders: Vec<Vec<(u32, f64)>>,
    /// Timed repetitions per configuration (the fastest is kept).
    pub reps: u32,
}

/// Coal's answers (`coal_peer.py`'s JSON).
#[derive(Debug, Clone, serde::Deserialize)]
pub struct CoalResult {
    /// Version of the `coal` package.
    pub coal_version: String,
    /// BVH build of every mesh (ns, best of 5).
    pub build_ns: f64,
    /// All-pairs exact distance per configuration (ns, Python wall clock around the calls).
    pub raw_ns: Vec<f64>,
    /// Minimum over the pairs per configuration (m).
    pub raw_min: Vec<f64>,
    /// Per configuration, per pair distance (m).
    pub per_pair: Vec<Vec<f64>>,
    /// The pruned order per configuration (ns).
    pub pruned_ns: Vec<f64>,
    /// Its minimum distance (m).
    pub pruned_min: Vec<f64>,
    /// Pair queries the pruned loops ran (all configurations).
    pub pruned_queries: u64,
    /// One Python call into Coal doing almost no work (ns).
    pub overhead_ns_per_call: f64,
}

fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn put_f64(out: &mut Vec<u8>, v: f64) {
    out.extend_from_slice(&v.to_le_bytes());
}

impl CoalJob<'_> {
    /// The job file's bytes (format in `coal_peer.py`).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = b"RPQCOAL1".to_vec();
        put_u32(&mut out, self.meshes.len() as u32);
        for m in &self.meshes {
            put_u32(&mut out, m.vertices().len() as u32);
            put_u32(&mut out, m.triangles().len() as u32);
            for p in m.vertices() {
                for c in p.iter() {
                    put_f64(&mut out, *c);
                }
            }
            for t in m.triangles() {
                for &k in t {
                    put_u32(&mut out, k);
                }
            }
        }
        put_u32(&mut out, self.body_mesh.len() as u32);
        for &m in &self.body_mesh {
            put_u32(&mut out, m);
        }
        put_u32(&mut out, self.pairs.len() as u32);
        for &(a, b) in &self.pairs {
            put_u32(&mut out, a);
            put_u32(&mut out, b);
        }
        put_u32(&mut out, self.poses.len() as u32);
        for conf in &self.poses {
            for p in conf {
                let r = p.rotation.to_rotation_matrix();
                for i in 0..3 {
                    for j in 0..3 {
                        put_f64(&mut out, r[(i, j)]);
                    }
                }
                for c in p.translation.vector.iter() {
                    put_f64(&mut out, *c);
                }
            }
        }
        for order in &self.orders {
            put_u32(&mut out, order.len() as u32);
            for &(k, lb) in order {
                put_u32(&mut out, k);
                put_f64(&mut out, lb);
            }
        }
        put_u32(&mut out, self.reps.max(1));
        out
    }
}

/// The Python interpreter of the benchmark venv: `$RPQ_BENCH_PYTHON`, else
/// [`DEFAULT_VENV_PYTHON`] under `workspace`.
pub fn python(workspace: &Path) -> PathBuf {
    std::env::var_os("RPQ_BENCH_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace.join(DEFAULT_VENV_PYTHON))
}

/// Runs Coal on `job` with `python`; `Err` says why Coal could not be measured (no venv,
/// no `coal` package, a failing script).
pub fn run(python: &Path, job: &CoalJob, scratch: &Path) -> Result<CoalResult, String> {
    if !python.exists() {
        return Err(format!(
            "{} not found: run crates/scene_tools/setup_bench_venv.sh (or set RPQ_BENCH_PYTHON)",
            python.display()
        ));
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("python/coal_peer.py");
    let file = scratch.join("rpq_bench_coal_job.bin");
    std::fs::File::create(&file)
        .and_then(|mut f| f.write_all(&job.encode()))
        .map_err(|e| format!("{}: {e}", file.display()))?;
    let out = Command::new(python)
        .arg("-W")
        .arg("ignore")
        .arg(&script)
        .arg(&file)
        .output()
        .map_err(|e| format!("{}: {e}", python.display()))?;
    if std::env::var_os("RPQ_BENCH_KEEP_JOB").is_none() {
        let _ = std::fs::remove_file(&file);
    }
    if !out.status.success() {
        return Err(format!(
            "coal_peer.py failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .last()
                .unwrap_or("")
        ));
    }
    // JSON is YAML.
    serde_yaml::from_slice(&out.stdout).map_err(|e| format!("coal_peer.py output: {e}"))
}
