//! The command line of `rpq_launch` and the `--print` / `--show-args` listings.

use std::path::{Path, PathBuf};

use crate::error::LaunchError;
use crate::parse::OutputMode;
use crate::resolve::{ArgInfo, LaunchPlan, ProcessSpec};

/// Help text.
pub const USAGE: &str = "\
rpq_launch: run a ROS 2 XML launch file without ROS 2

usage:
  rpq_launch [options] <file.launch.xml> [name:=value ...]
  rpq_launch [options] <package> <file.launch.xml> [name:=value ...]

options:
  -p, --print       print the processes (full command lines) without running them
  -s, --show-args   list the launch arguments of the file (and of the files it includes)
  -h, --help        this text

Executables of <node pkg exec> are looked up in the colcon install space
(AMENT_PREFIX_PATH, <prefix>/lib/<pkg>/<exec>), then in the cargo target directory
holding rpq_launch. Ctrl-C stops all processes (SIGINT, then SIGTERM and SIGKILL after
their sigterm_timeout/sigkill_timeout, 5 s each). Exit status: 0 if every process ended
cleanly, 1 if one failed, 2 if the launch file could not be used.
";

/// What to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Start the processes.
    Run,
    /// Print the resolved processes.
    Print,
    /// List the launch arguments.
    ShowArgs,
    /// Print the help text.
    Help,
}

/// Which launch file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A path.
    File(PathBuf),
    /// A file of a package's share directory.
    Package {
        /// Package name.
        package: String,
        /// File name (or path relative to the share directory).
        file: String,
    },
}

/// A parsed command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandLine {
    /// What to do.
    pub mode: Mode,
    /// Positional words (file, or package and file).
    pub positional: Vec<String>,
    /// `name:=value` launch arguments, in order (a repeated name: the last wins).
    pub args: Vec<(String, String)>,
}

/// Parses the arguments after the program name.
///
/// ```
/// use rpq_launch::cli::{parse_command_line, Mode};
/// let argv: Vec<String> = ["--print", "robot.launch.xml", "rate:=10"].map(String::from).to_vec();
/// let cl = parse_command_line(&argv).unwrap();
/// assert_eq!(cl.mode, Mode::Print);
/// assert_eq!(cl.args, vec![("rate".to_string(), "10".to_string())]);
/// ```
pub fn parse_command_line(argv: &[String]) -> Result<CommandLine, LaunchError> {
    let mut mode = Mode::Run;
    let mut positional = Vec::new();
    let mut args: Vec<(String, String)> = Vec::new();
    let set_mode = |m: Mode, mode: &mut Mode| -> Result<(), LaunchError> {
        if *mode != Mode::Run && *mode != m {
            return Err(LaunchError::Usage(
                "--print and --show-args cannot be combined".to_string(),
            ));
        }
        *mode = m;
        Ok(())
    };
    for a in argv {
        match a.as_str() {
            "-h" | "--help" => {
                return Ok(CommandLine {
                    mode: Mode::Help,
                    positional: Vec::new(),
                    args: Vec::new(),
                })
            }
            "-p" | "--print" => set_mode(Mode::Print, &mut mode)?,
            "-s" | "--show-args" => set_mode(Mode::ShowArgs, &mut mode)?,
            s if s.starts_with('-') => {
                return Err(LaunchError::Usage(format!(
                    "unknown option '{s}' (see rpq_launch --help)"
                )))
            }
            s => match s.split_once(":=") {
                Some(("", _)) => {
                    return Err(LaunchError::Usage(format!(
                        "'{s}': a launch argument needs a name before ':='"
                    )))
                }
                Some((name, value)) => {
                    args.retain(|(n, _)| n != name);
                    args.push((name.to_string(), value.to_string()));
                }
                None => positional.push(s.to_string()),
            },
        }
    }
    Ok(CommandLine {
        mode,
        positional,
        args,
    })
}

impl CommandLine {
    /// The launch file: one positional word is a path, two are a package and a file in it.
    /// `is_file` tells whether a path names an existing file.
    pub fn target(&self, is_file: impl Fn(&Path) -> bool) -> Result<Target, LaunchError> {
        match self.positional.as_slice() {
            [] => Err(LaunchError::Usage(format!(
                "no launch file given\n\n{USAGE}"
            ))),
            [file] => Ok(Target::File(PathBuf::from(file))),
            [first, second] => {
                if is_file(Path::new(first)) {
                    return Err(LaunchError::Usage(format!(
                        "'{second}' is not a launch argument (write name:=value)"
                    )));
                }
                Ok(Target::Package {
                    package: first.clone(),
                    file: second.clone(),
                })
            }
            [_, _, extra, ..] => Err(LaunchError::Usage(format!(
                "'{extra}' is not a launch argument (write name:=value)"
            ))),
        }
    }
}

/// Quotes a word for a POSIX shell when needed.
pub fn shell_quote(word: &str) -> String {
    let safe = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_./:=@%+,-".contains(c));
    if safe {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// The `--print` listing of one process.
pub fn describe_process(p: &ProcessSpec) -> String {
    let mut out = format!(
        "[{}] {}\n",
        p.label,
        p.command
            .iter()
            .map(|w| shell_quote(w))
            .collect::<Vec<_>>()
            .join(" ")
    );
    let output = match p.output {
        OutputMode::Screen => "screen",
        OutputMode::Log => "log",
        OutputMode::Both => "both",
    };
    out.push_str(&format!(
        "    pkg {}, exec {}, output {}, declared at {}\n",
        p.package, p.executable, output, p.span
    ));
    if !p.env.is_empty() {
        let env: Vec<String> = p
            .env
            .iter()
            .map(|(k, v)| match v {
                Some(v) => format!("{k}={}", shell_quote(v)),
                None => format!("-u {k}"),
            })
            .collect();
        out.push_str(&format!("    env: {}\n", env.join(" ")));
    }
    if let Some(cwd) = &p.cwd {
        out.push_str(&format!("    cwd: {}\n", cwd.display()));
    }
    if let Some(r) = &p.respawn {
        out.push_str(&format!(
            "    respawn: after {} s, {}\n",
            r.delay.as_secs_f64(),
            r.max_retries
                .map(|m| format!("at most {m} times"))
                .unwrap_or_else(|| "without limit".to_string())
        ));
    }
    if p.shutdown_on_exit {
        out.push_str("    on_exit: shutdown\n");
    }
    out
}

/// The `--print` listing of a plan.
pub fn describe_plan(plan: &LaunchPlan) -> String {
    let mut out = String::new();
    for w in &plan.warnings {
        out.push_str(&format!("# warning: {w}\n"));
    }
    if plan.processes.is_empty() {
        out.push_str("# no processes\n");
    }
    for p in &plan.processes {
        out.push_str(&describe_process(p));
    }
    out
}

/// The `--show-args` listing (format of `ros2 launch --show-args`).
pub fn describe_args(args: &[ArgInfo], notes: &[String]) -> String {
    let mut out = String::from("Arguments (pass arguments as '<name>:=<value>'):\n");
    if args.is_empty() {
        out.push_str("\n  No arguments.\n");
    }
    for a in args {
        out.push_str(&format!("\n    '{}':\n", a.name));
        out.push_str(&format!(
            "        {}\n",
            a.description.as_deref().unwrap_or("no description given")
        ));
        if !a.choices.is_empty() {
            out.push_str(&format!(
                "        Valid choices are: [{}]\n",
                a.choices
                    .iter()
                    .map(|c| format!("'{c}'"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        match &a.default {
            Some(d) => out.push_str(&format!("        (default: '{d}')\n")),
            None => out.push_str("        (required: no default)\n"),
        }
    }
    for n in notes {
        out.push_str(&format!("\nNote: {n}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cl(words: &[&str]) -> Result<CommandLine, LaunchError> {
        parse_command_line(&words.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn modes_and_arguments() {
        let c = cl(&["x.launch.xml", "a:=1", "--print", "b:=", "a:=2"]).unwrap();
        assert_eq!(c.mode, Mode::Print);
        assert_eq!(c.positional, vec!["x.launch.xml"]);
        assert_eq!(
            c.args,
            vec![
                ("b".to_string(), String::new()),
                ("a".to_string(), "2".to_string())
            ]
        );
        assert_eq!(cl(&["-s", "x"]).unwrap().mode, Mode::ShowArgs);
        assert_eq!(cl(&["x", "--help", "--bogus"]).unwrap().mode, Mode::Help);
        assert_eq!(
            cl(&["x", "url:=http://a:=b"]).unwrap().args[0].1,
            "http://a:=b"
        );
        assert!(cl(&["--bogus"]).is_err());
        assert!(cl(&[":=1"]).is_err());
        assert!(cl(&["-p", "-s", "x"]).is_err());
    }

    #[test]
    fn targets() {
        let never = |_: &Path| false;
        assert_eq!(
            cl(&["f.launch.xml"]).unwrap().target(never).unwrap(),
            Target::File(PathBuf::from("f.launch.xml"))
        );
        assert_eq!(
            cl(&["pkg", "f.launch.xml"]).unwrap().target(never).unwrap(),
            Target::Package {
                package: "pkg".into(),
                file: "f.launch.xml".into()
            }
        );
        assert!(cl(&[]).unwrap().target(never).is_err());
        assert!(cl(&["a", "b", "c"]).unwrap().target(never).is_err());
        let e = cl(&["f.launch.xml", "oops"])
            .unwrap()
            .target(|_| true)
            .unwrap_err();
        assert!(e.to_string().contains("'oops' is not a launch argument"));
    }

    #[test]
    fn quoting() {
        assert_eq!(shell_quote("__node:=sim"), "__node:=sim");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("'10'"), "''\\''10'\\'''");
        assert_eq!(shell_quote(""), "''");
    }
}
