//! `rpq_launch`: runs ROS 2 XML launch files without ROS 2. See `rpq_launch --help`.

use std::collections::BTreeMap;
use std::hash::BuildHasher;
use std::process::ExitCode;
use std::sync::Arc;

use rpq_launch::cli::{describe_args, describe_plan, parse_command_line, Mode, Target, USAGE};
use rpq_launch::packages::SystemHost;
use rpq_launch::resolve::{declared_arguments, resolve, ResolveOptions};
use rpq_launch::run::{exec_child, hostname, log_directory, run, Console, EXEC_CHILD_FLAG};
use rpq_launch::LaunchError;

fn main() -> ExitCode {
    let raw: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    if raw.first().is_some_and(|a| a == EXEC_CHILD_FLAG) {
        // A child being started by a launcher (see rpq_launch::run::exec_child).
        return ExitCode::from(exec_child(&raw[1..]));
    }
    let argv: Vec<String> = raw
        .iter()
        .map(|a| a.to_string_lossy().to_string())
        .collect();
    match real_main(&argv) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("rpq_launch: error: {e}");
            ExitCode::from(2)
        }
    }
}

fn real_main(argv: &[String]) -> Result<ExitCode, LaunchError> {
    let cl = parse_command_line(argv)?;
    if cl.mode == Mode::Help {
        print!("{USAGE}");
        return Ok(ExitCode::SUCCESS);
    }
    let env: BTreeMap<String, String> = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .collect();
    let host = SystemHost::from_environment(&env);
    let cwd = std::env::current_dir()
        .map_err(|e| LaunchError::Usage(format!("no working directory: {e}")))?;
    let file = match cl.target(|p| p.is_file())? {
        Target::File(p) => p,
        Target::Package { package, file } => host.package_launch_file(&package, &file)?,
    };
    let random = std::collections::hash_map::RandomState::new().hash_one(std::process::id());
    let opts = ResolveOptions {
        cwd,
        env,
        anon_suffix: format!("{}_{}_{}", hostname(), std::process::id(), random >> 1),
    };

    match cl.mode {
        Mode::ShowArgs => {
            let (args, notes) = declared_arguments(&file, &cl.args, &opts, &host)?;
            print!("{}", describe_args(&args, &notes));
            Ok(ExitCode::SUCCESS)
        }
        Mode::Print => {
            let plan = resolve(&file, &cl.args, &opts, &host)?;
            print!("{}", describe_plan(&plan));
            Ok(ExitCode::SUCCESS)
        }
        Mode::Run | Mode::Help => {
            let plan = resolve(&file, &cl.args, &opts, &host)?;
            let needs_log = plan
                .processes
                .iter()
                .any(|p| p.output != rpq_launch::parse::OutputMode::Screen);
            let mut log_note = None;
            let log_file = if needs_log {
                match log_directory(&opts.env) {
                    Some(dir) => match std::fs::create_dir_all(&dir)
                        .and_then(|_| std::fs::File::create(dir.join("launch.log")))
                    {
                        Ok(f) => {
                            log_note = Some(format!(
                                "All log files can be found below {}",
                                dir.display()
                            ));
                            Some(f)
                        }
                        Err(e) => {
                            log_note = Some(format!(
                                "cannot create the log directory {} ({e}): stdout of output=\"log\" processes is dropped",
                                dir.display()
                            ));
                            None
                        }
                    },
                    None => None,
                }
            } else {
                None
            };
            let console = Arc::new(Console::new(log_file));
            if let Some(note) = log_note {
                console.launcher("INFO", "launch", &note);
            }
            for w in &plan.warnings {
                console.launcher("WARNING", "launch", w);
            }
            if plan.processes.is_empty() {
                console.launcher("INFO", "launch", "no processes to run");
                return Ok(ExitCode::SUCCESS);
            }
            let outcomes = run(&plan, console.clone())?;
            let failed: Vec<&str> = outcomes
                .iter()
                .filter(|o| o.failed)
                .map(|o| o.label.as_str())
                .collect();
            if failed.is_empty() {
                Ok(ExitCode::SUCCESS)
            } else {
                console.launcher(
                    "ERROR",
                    "launch",
                    &format!("process(es) failed: {}", failed.join(", ")),
                );
                Ok(ExitCode::from(1))
            }
        }
    }
}
