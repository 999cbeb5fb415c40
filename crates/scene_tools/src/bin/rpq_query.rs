//! `rpq_query`: collision and minimum distance for a list of joint configurations of a
//! scene (see `--help` and the README for the file formats).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use rpq_scene::spec::{run_table, write_results, Limits};
use rpq_scene::{
    generate_collision_matrix, CollisionMatrix, ConfigTable, GeneratorSettings, ResolutionLevels,
    SceneError, SceneSpec,
};

/// Reads a scene (YAML: robots from URDF with base poses, objects from STL) and a CSV of
/// joint configurations (header `robot/joint`, radians), and writes one CSV line per
/// configuration: `index,colliding,min_distance,link_a,link_b,ax,ay,az,bx,by,bz`.
/// A configuration outside a joint's position limits stops the run with its line (exit 2)
/// unless --allow-outside-limits is given, which answers it and adds a last column
/// `within_limits` (1/0). A closed standard output (`rpq_query … | head`) ends the run quietly.
#[derive(Parser, Debug)]
#[command(version)]
struct Args {
    /// Scene file (YAML).
    scene: PathBuf,
    /// Joint configurations (CSV); not needed with --generate-collision-matrix alone.
    configs: Option<PathBuf>,
    /// Output CSV (default: standard output).
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Answer configurations outside the joints' position limits too, and flag every row in
    /// a last column `within_limits` (1/0); without it such a row is an error.
    #[arg(long)]
    allow_outside_limits: bool,
    /// Resolution levels (overrides the scene's options).
    #[arg(long, value_parser = parse_levels)]
    levels: Option<ResolutionLevels>,
    /// Use the weight matrix (overrides the scene's options).
    #[arg(long)]
    weight_matrix: Option<bool>,
    /// Use the collision matrix (overrides the scene's options).
    #[arg(long)]
    collision_matrix: Option<bool>,
    /// Turn every optimization off (plain pairwise mesh queries).
    #[arg(long)]
    no_optimizations: bool,
    /// Collision-matrix file to use instead of the scene's.
    #[arg(long)]
    collision_matrix_file: Option<PathBuf>,
    /// Generate a collision matrix for the scene and write it here (YAML): pairs proven
    /// apart, then random sampling and local refinement; the scene's own
    /// `collision_matrix` entry is ignored.
    #[arg(long)]
    generate_collision_matrix: Option<PathBuf>,
    /// Random configurations for --generate-collision-matrix (at least 100).
    #[arg(long, default_value_t = 20_000)]
    samples: usize,
    /// Safety margin (m) for --generate-collision-matrix.
    #[arg(long, default_value_t = 0.05)]
    margin: f64,
    /// Local searches per pair not brought within the margin by a sample (at least 1).
    #[arg(long, default_value_t = 8)]
    refine_starts: usize,
    /// Distance queries per local search (at least 50).
    #[arg(long, default_value_t = 400)]
    refine_evaluations: usize,
}

fn parse_levels(s: &str) -> Result<ResolutionLevels, String> {
    match s.to_ascii_uppercase().replace('+', "").as_str() {
        "L3" => Ok(ResolutionLevels::L3),
        "L2L3" => Ok(ResolutionLevels::L2L3),
        "L1L2L3" => Ok(ResolutionLevels::L1L2L3),
        _ => Err(format!("`{s}`: expected L3, L2L3 or L1L2L3")),
    }
}

fn run(a: Args) -> Result<(), SceneError> {
    let settings = GeneratorSettings {
        samples: a.samples,
        margin: a.margin,
        seed: 1,
        refine_starts: a.refine_starts,
        refine_evaluations: a.refine_evaluations,
    };
    if a.generate_collision_matrix.is_some() {
        // Refused before anything is read or written.
        settings.validate()?;
    }
    let mut spec = SceneSpec::load(&a.scene)?;
    if a.generate_collision_matrix.is_some() || a.collision_matrix_file.is_some() {
        // The scene's own matrix is replaced (and may not exist yet).
        spec.collision_matrix = None;
    }
    let mut scene = spec.build(a.scene.parent().unwrap_or(std::path::Path::new(".")))?;
    if let Some(f) = &a.collision_matrix_file {
        scene
            .scenario
            .set_collision_matrix(CollisionMatrix::load(f)?)?;
    }
    if let Some(out) = &a.generate_collision_matrix {
        let pb = rpq_scene_tools::Bar::new(a.samples as u64, "collision matrix");
        let cm = generate_collision_matrix(&scene.scenario, &settings, Some(&pb))?;
        pb.finish_and_clear();
        cm.save(out)?;
        eprintln!(
            "wrote {} ({} never-colliding pairs)",
            out.display(),
            cm.len()
        );
        scene.scenario.set_collision_matrix(cm)?;
    }
    let Some(configs) = &a.configs else {
        if a.generate_collision_matrix.is_some() {
            return Ok(());
        }
        return Err(SceneError::Invalid(
            "no configuration file given (see --help)".into(),
        ));
    };
    let mut opts = scene.options;
    if a.no_optimizations {
        opts = rpq_scene::QueryOptions::ALL_OFF;
    }
    if let Some(l) = a.levels {
        opts.resolution_levels = l;
    }
    if let Some(w) = a.weight_matrix {
        opts.weight_matrix = w;
    }
    if let Some(c) = a.collision_matrix {
        opts.collision_matrix = c;
    }
    let asked =
        spec.options.is_some_and(|o| o.collision_matrix) || a.collision_matrix == Some(true);
    if asked && scene.scenario.collision_matrix().is_none() {
        eprintln!("note: no collision matrix in the scene; running without one");
    }
    let table = ConfigTable::load(configs, &scene.scenario)?;
    let limits = if a.allow_outside_limits {
        Limits::Flag
    } else {
        Limits::Refuse
    };
    let rows = run_table(&mut scene.scenario, &table, &opts, limits).map_err(|e| match e {
        SceneError::Csv { line, message, .. } => SceneError::Csv {
            path: configs.clone(),
            line,
            message,
        },
        e => e,
    })?;
    let io = |path: PathBuf| move |source| SceneError::Io { path, source };
    match &a.output {
        Some(p) => {
            let mut f = std::io::BufWriter::new(std::fs::File::create(p).map_err(io(p.clone()))?);
            write_results(&mut f, &scene.scenario, &rows, limits).map_err(io(p.clone()))?;
            f.flush().map_err(io(p.clone()))?;
        }
        None => {
            let stdout = std::io::stdout();
            let mut l = stdout.lock();
            match write_results(&mut l, &scene.scenario, &rows, limits) {
                // The reader went away (`| head`): nothing more to say, not an error.
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
                r => r.map_err(io("<stdout>".into()))?,
            }
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    match run(Args::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("rpq_query: error: {e}");
            ExitCode::from(2)
        }
    }
}
