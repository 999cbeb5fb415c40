//! The ROS 2 command line: everything between `--ros-args` and `--` (or the end), as rcl reads it.
//!
//! Supported inside a `--ros-args` section (several sections may appear):
//!
//! | argument | meaning |
//! |---|---|
//! | `--params-file F.yaml` | parameter file (repeatable, applied in order) |
//! | `-p name:=value`, `--param name:=value` | parameter override; `node:name:=value` for one node |
//! | `-r from:=to`, `--remap from:=to` | topic/service remap; `node:from:=to` for one node |
//! | `-r __node:=name`, `-r __name:=name` | node name |
//! | `-r __ns:=/ns` | node namespace (must be absolute) |
//! | `--log-level LEVEL`, `--log-level name:=LEVEL` | `debug`, `info`, `warn`, `error`, `fatal` |
//! | `--enable-rosout-logs` / `--disable-rosout-logs` | logging to `/rosout` (default on) |
//! | `--enable-stdout-logs` / `--disable-stdout-logs` | logging to the console (default on) |
//! | `--log-config-file F`, `--enable/--disable-external-lib-logs` | accepted and ignored, with a note |
//!
//! Node names, namespaces, remap rules and parameter names are checked by [`crate::names`], the
//! same rules `rpq_launch` applies to a launch file.
//!
//! `-e`/`--enclave` (SROS2 security) is rejected: this transport has no DDS security. Any other
//! argument inside a ROS section is an error, as in rclcpp (`UnknownROSArgsError`). Arguments
//! outside the ROS sections are returned to the program untouched.
//!
//! Values are YAML, as in rcl: `true`, `42`, `0.5`, `hello`, `[1.0, 2.0]`, `"42"` (a string).
//! The YAML 1.2 core schema is used, so `yes`/`on` are strings (rcl's YAML 1.1 reads them as
//! booleans; a boolean parameter then gets a clear type error here instead).
//!
//! ```
//! use rpq_ros::args::RosArgs;
//! let (ros, rest) = RosArgs::parse([
//!     "--verbose", "--ros-args", "-r", "__node:=sim", "-p", "rate:=250.0", "--", "file.txt",
//! ])
//! .unwrap();
//! assert_eq!(rest, ["--verbose", "file.txt"]);
//! assert_eq!(ros.node_name_override("robot_sim"), Some("sim"));
//! assert_eq!(ros.params[0].name, "rate");
//! ```

use std::path::PathBuf;

use crate::log::LogLevel;
pub use crate::names::Remap;
use crate::names::{validate_node_name, validate_parameter_name, validate_remap};

/// Errors in the ROS command line.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ArgsError {
    /// A flag that takes a value was last on the line.
    #[error("--ros-args: `{flag}` needs a value after it")]
    MissingValue {
        /// The flag.
        flag: String,
    },
    /// A remap or parameter without `:=`.
    #[error("--ros-args: `{flag} {value}` must have the form `name:=value`")]
    MissingAssign {
        /// The flag.
        flag: String,
        /// Its value.
        value: String,
    },
    /// A name (topic, node, namespace, parameter) that ROS would not accept.
    #[error("--ros-args: `{flag} {value}`: {reason}")]
    BadName {
        /// The flag.
        flag: String,
        /// Its value.
        value: String,
        /// What is wrong.
        reason: String,
    },
    /// A parameter value that is not valid YAML.
    #[error("--ros-args: parameter `{name}`: value `{value}` is not valid YAML: {reason}")]
    BadValue {
        /// Parameter name.
        name: String,
        /// The text.
        value: String,
        /// Parser message.
        reason: String,
    },
    /// An unknown log level.
    #[error("--ros-args: unknown log level `{value}`: expected debug, info, warn, error or fatal")]
    BadLogLevel {
        /// The text.
        value: String,
    },
    /// `-e`/`--enclave`.
    #[error("--ros-args: `{flag}` (SROS2 security enclave) is not supported by this transport")]
    Unsupported {
        /// The flag.
        flag: String,
    },
    /// An argument inside `--ros-args` that ROS does not know.
    #[error(
        "--ros-args: unknown ROS argument `{arg}` (end the ROS arguments with `--` before \
         program arguments)"
    )]
    Unknown {
        /// The argument.
        arg: String,
    },
}

/// A parameter override `[node:]name:=value`.
#[derive(Debug, Clone, PartialEq)]
pub struct ParamArg {
    /// Only for the node of this name, if given.
    pub node: Option<String>,
    /// Parameter name (dotted for nested names).
    pub name: String,
    /// The value as YAML.
    pub value: serde_yaml::Value,
    /// The value as written.
    pub text: String,
}

/// The ROS arguments of a process.
#[derive(Debug, Clone, PartialEq)]
pub struct RosArgs {
    /// `--params-file` paths in order.
    pub params_files: Vec<PathBuf>,
    /// `-p` overrides in order.
    pub params: Vec<ParamArg>,
    /// `-r` rules in order, including `__node` and `__ns`.
    pub remaps: Vec<Remap>,
    /// `--log-level LEVEL` (all loggers).
    pub log_level: Option<LogLevel>,
    /// `--log-level name:=LEVEL` in order.
    pub logger_levels: Vec<(String, LogLevel)>,
    /// Log to `/rosout` (default `true`).
    pub rosout_logs: bool,
    /// Log to the console (default `true`).
    pub stdout_logs: bool,
    /// Remarks about accepted-but-ignored arguments, to log at start-up.
    pub notes: Vec<String>,
}

impl Default for RosArgs {
    fn default() -> Self {
        RosArgs {
            params_files: Vec::new(),
            params: Vec::new(),
            remaps: Vec::new(),
            log_level: None,
            logger_levels: Vec::new(),
            rosout_logs: true,
            stdout_logs: true,
            notes: Vec::new(),
        }
    }
}

/// Splits `[node:]lhs:=rhs`. The node prefix is the part before the first `:` that is not the
/// `:` of `:=`.
fn split_rule<'a>(
    flag: &str,
    s: &'a str,
) -> Result<(Option<&'a str>, &'a str, &'a str), ArgsError> {
    let Some((lhs, rhs)) = s.split_once(":=") else {
        return Err(ArgsError::MissingAssign {
            flag: flag.to_string(),
            value: s.to_string(),
        });
    };
    match lhs.split_once(':') {
        Some((node, name)) => Ok((Some(node), name, rhs)),
        None => Ok((None, lhs, rhs)),
    }
}

fn bad_name(flag: &str, value: &str, reason: impl Into<String>) -> ArgsError {
    ArgsError::BadName {
        flag: flag.to_string(),
        value: value.to_string(),
        reason: reason.into(),
    }
}

/// Parses a log level name, case-insensitively.
pub fn parse_log_level(s: &str) -> Option<LogLevel> {
    match s.to_ascii_lowercase().as_str() {
        "debug" => Some(LogLevel::Debug),
        "info" => Some(LogLevel::Info),
        "warn" | "warning" => Some(LogLevel::Warn),
        "error" => Some(LogLevel::Error),
        "fatal" => Some(LogLevel::Fatal),
        _ => None,
    }
}

/// Parses a parameter value as a YAML scalar or flow sequence, as rcl does for `-p`.
pub fn parse_value(name: &str, text: &str) -> Result<serde_yaml::Value, ArgsError> {
    let bad = |reason: String| ArgsError::BadValue {
        name: name.to_string(),
        value: text.to_string(),
        reason,
    };
    let v: serde_yaml::Value = serde_yaml::from_str(text).map_err(|e| bad(e.to_string()))?;
    match v {
        serde_yaml::Value::Mapping(_) => Err(bad("a mapping is not a parameter value".into())),
        serde_yaml::Value::Tagged(_) => Err(bad("tagged values are not parameter values".into())),
        // An empty text is an empty string, as with rcl.
        serde_yaml::Value::Null if text.trim().is_empty() => {
            Ok(serde_yaml::Value::String(String::new()))
        }
        other => Ok(other),
    }
}

impl RosArgs {
    /// Parses the process's arguments (`std::env::args()` without the program name).
    pub fn from_env() -> Result<(RosArgs, Vec<String>), ArgsError> {
        Self::parse(std::env::args().skip(1))
    }

    /// Parses `args` (without the program name). Returns the ROS arguments and, in order, the
    /// arguments that are not ROS arguments.
    pub fn parse<I, S>(args: I) -> Result<(RosArgs, Vec<String>), ArgsError>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let mut out = RosArgs::default();
        let mut rest = Vec::new();
        let mut it = args.into_iter().map(Into::into);
        let mut in_ros = false;
        while let Some(arg) = it.next() {
            if !in_ros {
                if arg == "--ros-args" {
                    in_ros = true;
                } else {
                    rest.push(arg);
                }
                continue;
            }
            let mut value = |flag: &str| {
                it.next().ok_or_else(|| ArgsError::MissingValue {
                    flag: flag.to_string(),
                })
            };
            match arg.as_str() {
                "--" => in_ros = false,
                "--ros-args" => {}
                "--params-file" => out.params_files.push(PathBuf::from(value(&arg)?)),
                "-p" | "--param" => {
                    let v = value(&arg)?;
                    out.params.push(parse_param(&arg, &v)?);
                }
                "-r" | "--remap" => {
                    let v = value(&arg)?;
                    out.remaps.push(parse_remap(&arg, &v)?);
                }
                "--log-level" => {
                    let v = value(&arg)?;
                    match v.split_once(":=") {
                        Some((logger, level)) => {
                            let level =
                                parse_log_level(level).ok_or_else(|| ArgsError::BadLogLevel {
                                    value: level.to_string(),
                                })?;
                            out.logger_levels.push((logger.to_string(), level));
                        }
                        None => {
                            out.log_level = Some(
                                parse_log_level(&v)
                                    .ok_or_else(|| ArgsError::BadLogLevel { value: v.clone() })?,
                            );
                        }
                    }
                }
                "--log-config-file" => {
                    let v = value(&arg)?;
                    out.notes.push(format!(
                        "--log-config-file {v} is ignored (no log4cxx/spdlog here)"
                    ));
                }
                "--enable-rosout-logs" => out.rosout_logs = true,
                "--disable-rosout-logs" => out.rosout_logs = false,
                "--enable-stdout-logs" => out.stdout_logs = true,
                "--disable-stdout-logs" => out.stdout_logs = false,
                "--enable-external-lib-logs" | "--disable-external-lib-logs" => {
                    out.notes.push(format!("{arg} is ignored"));
                }
                "-e" | "--enclave" => return Err(ArgsError::Unsupported { flag: arg }),
                _ => return Err(ArgsError::Unknown { arg }),
            }
        }
        Ok((out, rest))
    }

    /// The node name set by `-r __node:=name` (or `__name`) for a node whose name in code is
    /// `node_name`; the last matching rule wins.
    pub fn node_name_override(&self, node_name: &str) -> Option<&str> {
        self.special_remap(node_name, &["__node", "__name"])
    }

    /// The namespace set by `-r __ns:=/ns` for a node whose name in code is `node_name`.
    pub fn namespace_override(&self, node_name: &str) -> Option<&str> {
        self.special_remap(node_name, &["__ns"])
    }

    fn special_remap(&self, node_name: &str, keys: &[&str]) -> Option<&str> {
        self.remaps
            .iter()
            .rev()
            .find(|r| {
                keys.contains(&r.from.as_str()) && r.node.as_deref().is_none_or(|n| n == node_name)
            })
            .map(|r| r.to.as_str())
    }

    /// Topic/service remap rules that apply to the node called `node_name` (after renaming), in
    /// order. `__node`/`__ns` rules are left out.
    pub fn name_remaps<'a>(&'a self, node_name: &'a str) -> impl Iterator<Item = &'a Remap> + 'a {
        self.remaps.iter().filter(move |r| {
            !r.from.starts_with("__") && r.node.as_deref().is_none_or(|n| n == node_name)
        })
    }

    /// Log level for the logger `logger_name` (e.g. `ns.node`): a per-logger level if one is
    /// given, else the global one.
    pub fn log_level_for(&self, logger_name: &str) -> Option<LogLevel> {
        self.logger_levels
            .iter()
            .rev()
            .find(|(n, _)| n == logger_name)
            .map(|(_, l)| *l)
            .or(self.log_level)
    }
}

fn parse_param(flag: &str, s: &str) -> Result<ParamArg, ArgsError> {
    let (node, name, text) = split_rule(flag, s)?;
    if let Some(n) = node {
        validate_node_name(n).map_err(|e| bad_name(flag, s, e))?;
    }
    validate_parameter_name(name).map_err(|e| bad_name(flag, s, e))?;
    Ok(ParamArg {
        node: node.map(str::to_string),
        name: name.to_string(),
        value: parse_value(name, text)?,
        text: text.to_string(),
    })
}

fn parse_remap(flag: &str, s: &str) -> Result<Remap, ArgsError> {
    let (node, from, to) = split_rule(flag, s)?;
    if let Some(n) = node {
        validate_node_name(n).map_err(|e| bad_name(flag, s, e))?;
    }
    validate_remap(from, to).map_err(|e| bad_name(flag, s, e))?;
    Ok(Remap {
        node: node.map(str::to_string),
        from: from.to_string(),
        to: to.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_yaml::Value;

    fn parse(args: &[&str]) -> Result<(RosArgs, Vec<String>), ArgsError> {
        RosArgs::parse(args.iter().copied())
    }

    #[test]
    fn splits_ros_and_program_arguments() {
        let (ros, rest) = parse(&[
            "a",
            "--ros-args",
            "--params-file",
            "x.yaml",
            "--",
            "b",
            "--ros-args",
            "--params-file",
            "y.yaml",
        ])
        .unwrap();
        assert_eq!(rest, ["a", "b"]);
        assert_eq!(
            ros.params_files,
            [PathBuf::from("x.yaml"), PathBuf::from("y.yaml")]
        );
        let (ros, rest) = parse(&["a", "b"]).unwrap();
        assert_eq!(rest, ["a", "b"]);
        assert_eq!(ros, RosArgs::default());
    }

    #[test]
    fn remaps_and_node_overrides() {
        let (ros, _) = parse(&[
            "--ros-args",
            "-r",
            "__node:=first",
            "--remap",
            "other:__node:=not_me",
            "-r",
            "__ns:=/arm/left",
            "-r",
            "chatter:=/talk",
            "-r",
            "me:~/x:=y",
            "-r",
            "__name:=second",
        ])
        .unwrap();
        assert_eq!(ros.node_name_override("me"), Some("second"));
        assert_eq!(ros.node_name_override("other"), Some("second"));
        assert_eq!(ros.namespace_override("me"), Some("/arm/left"));
        let rules: Vec<_> = ros.name_remaps("me").map(|r| r.from.as_str()).collect();
        assert_eq!(rules, ["chatter", "~/x"]);
        let rules: Vec<_> = ros.name_remaps("you").map(|r| r.from.as_str()).collect();
        assert_eq!(rules, ["chatter"]);
    }

    #[test]
    fn bad_remaps_are_errors() {
        for (args, needle) in [
            (&["--ros-args", "-r", "__ns:=relative"][..], "absolute"),
            (&["--ros-args", "-r", "__node:=9lives"], "start"),
            (&["--ros-args", "-r", "__node:=a-b"], "'-'"),
            (&["--ros-args", "-r", "chatter"], ":="),
            (&["--ros-args", "-r", "a:=b//c"], "//"),
            (&["--ros-args", "-r", "__foo:=x"], "__foo"),
            (&["--ros-args", "-r"], "needs a value"),
            (&["--ros-args", "-r", "a:={4x}"], "digit"),
            (&["--ros-args", "-p", "a..b:=1"], ".."),
            (&["--ros-args", "-p", "a-b:=1"], "'-'"),
        ] {
            let err = parse(args).unwrap_err().to_string();
            assert!(err.contains(needle), "{args:?}: {err}");
        }
    }

    #[test]
    fn long_node_names_are_refused_as_in_rpq_launch() {
        let long = format!("__node:={}", "n".repeat(256));
        let err = parse(&["--ros-args", "-r", &long]).unwrap_err();
        assert!(err.to_string().contains("255"), "{err}");
        let ok = format!("__node:={}", "n".repeat(255));
        assert!(parse(&["--ros-args", "-r", &ok]).is_ok());
    }

    #[test]
    fn parameter_values_are_yaml() {
        let (ros, _) = parse(&[
            "--ros-args",
            "-p",
            "b:=true",
            "-p",
            "i:=-42",
            "-p",
            "d:=2.5",
            "-p",
            "s:=hello world",
            "-p",
            "q:='42'",
            "-p",
            "arr:=[1.0, 2.0]",
            "--param",
            "sim:ctrl.gain:=1e-3",
            "-p",
            "empty:=",
        ])
        .unwrap();
        let v: Vec<(&str, &Value)> = ros
            .params
            .iter()
            .map(|p| (p.name.as_str(), &p.value))
            .collect();
        assert_eq!(v[0], ("b", &Value::Bool(true)));
        assert_eq!(v[1].1.as_i64(), Some(-42));
        assert_eq!(v[2].1.as_f64(), Some(2.5));
        assert_eq!(v[3].1.as_str(), Some("hello world"));
        assert_eq!(v[4].1.as_str(), Some("42"));
        let arr: Vec<f64> = v[5]
            .1
            .as_sequence()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect();
        assert_eq!(arr, [1.0, 2.0]);
        assert_eq!(ros.params[6].node.as_deref(), Some("sim"));
        assert_eq!(ros.params[6].name, "ctrl.gain");
        assert_eq!(v[6].1.as_f64(), Some(1e-3));
        assert_eq!(v[7].1.as_str(), Some(""));
        let err = parse(&["--ros-args", "-p", "a:=[1, 2"]).unwrap_err();
        assert!(
            matches!(err, ArgsError::BadValue { ref name, .. } if name == "a"),
            "{err}"
        );
        let err = parse(&["--ros-args", "-p", "a:={x: 1}"]).unwrap_err();
        assert!(err.to_string().contains("mapping"), "{err}");
    }

    #[test]
    fn log_levels_and_flags() {
        let (ros, _) = parse(&[
            "--ros-args",
            "--log-level",
            "WARN",
            "--log-level",
            "ns.sim:=debug",
            "--disable-rosout-logs",
            "--log-config-file",
            "x.config",
        ])
        .unwrap();
        assert_eq!(ros.log_level_for("other"), Some(LogLevel::Warn));
        assert_eq!(ros.log_level_for("ns.sim"), Some(LogLevel::Debug));
        assert!(!ros.rosout_logs);
        assert!(ros.stdout_logs);
        assert_eq!(ros.notes.len(), 1);
        assert!(matches!(
            parse(&["--ros-args", "--log-level", "loud"]),
            Err(ArgsError::BadLogLevel { .. })
        ));
    }

    #[test]
    fn enclave_and_unknown_are_rejected() {
        let err = parse(&["--ros-args", "-e", "/x"]).unwrap_err();
        assert!(err.to_string().contains("enclave"), "{err}");
        let err = parse(&["--ros-args", "--verbose"]).unwrap_err();
        assert_eq!(
            err,
            ArgsError::Unknown {
                arg: "--verbose".into()
            }
        );
    }
}
