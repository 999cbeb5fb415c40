//! Reproduces Fig. 4 of Lloyd & Pai in the puzzle scene: both tasks demonstrated by the
//! scripted operator, stretched and shrunk, reduced and converted to RX60 joint trajectories;
//! writes the plots and one table per task.
//!
//! ```text
//! ps_reproduce [--scene config/puzzle.scene.yaml] [--out target/ps_reproduce] [--seed N]
//! ```

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use rpq_base::outln;
use rpq_pathshrink::motion::CommandKind;
use rpq_pathshrink::operator::Task;
use rpq_pathshrink::program::{shrink_program, ProgramParams};
use rpq_pathshrink::robot::{joint_program, scene_robots};
use rpq_pathshrink::task::{demonstrate, plot, table, SEED};

struct Args {
    scene: PathBuf,
    out: PathBuf,
    seed: u64,
}

fn parse() -> Result<Args, String> {
    let mut a = Args {
        scene: PathBuf::from("config/puzzle.scene.yaml"),
        out: PathBuf::from("target/ps_reproduce"),
        seed: SEED,
    };
    let mut it = std::env::args().skip(1);
    while let Some(k) = it.next() {
        let mut v = || it.next().ok_or(format!("{k} needs a value"));
        match k.as_str() {
            "--scene" => a.scene = PathBuf::from(v()?),
            "--out" => a.out = PathBuf::from(v()?),
            "--seed" => a.seed = v()?.parse().map_err(|e| format!("--seed: {e}"))?,
            _ => return Err(format!("unknown argument {k}")),
        }
    }
    Ok(a)
}

fn run(a: &Args) -> Result<(), Box<dyn std::error::Error>> {
    let scene = rpq_scene::load_scene(&a.scene)?;
    let robot = scene_robots(&scene.scenario)
        .next()
        .cloned()
        .ok_or("the scene has no robot")?;
    let params = ProgramParams::default();
    std::fs::create_dir_all(&a.out)?;
    let mut tables =
        String::from("# Path shrinking: the two tasks of Lloyd & Pai, Fig. 4 (ps_reproduce)\n\n");
    for task in Task::ALL {
        let demo = demonstrate(task, &scene, &params.sim, a.seed)?;
        let env = demo.env.clone();
        let out = shrink_program(Arc::clone(&env), demo.path, &params)?;
        let grasp = params.motion.grasp(&env);
        let program = joint_program(&env, &robot, &out.commands, &grasp, None, &params.robot)?;
        let files = plot(task.name(), &env, &out, &a.out)?;
        let t = table(task, &out.stats, Some(&program));
        outln!("{t}");
        let slow = out.commands.iter().filter(|c| c.slow).count();
        let biased: Vec<String> = out
            .commands
            .iter()
            .filter(|c| c.kind == CommandKind::Line && !c.contacts.is_empty())
            .map(|c| {
                format!(
                    "node {}: bias {:.1} mm, expected {}",
                    c.node,
                    c.bias.norm() * 1e3,
                    c.contacts
                        .iter()
                        .map(|x| format!("{:.2} N on {}", x.force, env.obstacles[x.obstacle].name))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            })
            .collect();
        let notes = format!(
            "{} motion commands (guarded grasp + {} lines, {slow} slow); contact moves: {}\n\n\
             plots: {}\n\n",
            out.commands.len(),
            out.commands.len() - 1,
            if biased.is_empty() {
                "none".into()
            } else {
                biased.join("; ")
            },
            files
                .iter()
                .filter(|f| f.extension().is_some_and(|e| e == "png"))
                .map(|f| f.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
        outln!("{notes}");
        tables += &format!("## {}\n\n{t}\n{notes}", task.name());
    }
    let path = a.out.join("tables.md");
    std::fs::write(&path, tables)?;
    outln!("tables written to {}", path.display());
    Ok(())
}

fn main() -> ExitCode {
    let args = match parse() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("ps_reproduce: {e}\nusage: ps_reproduce [--scene F] [--out DIR] [--seed N]");
            return ExitCode::from(2);
        }
    };
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ps_reproduce: {e}");
            ExitCode::FAILURE
        }
    }
}
