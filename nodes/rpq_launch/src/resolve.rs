//! Evaluation of a parsed launch file into the list of processes to start.
//!
//! This follows ROS 2 launch (Jazzy) step by step: actions run in document order;
//! `<arg>` sets its configuration only when it is not set yet; `<include>` sets its `<arg>`s
//! as configurations in the *current* scope and runs the included file there (ROS 2 does not
//! scope includes; wrap them in `<group>` for that); `<group>` (scoped by default) restores
//! configurations, the pushed ROS namespace and the environment when it ends.
//! Nothing here touches the file system or the environment directly: a [`Host`] does.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::{LaunchError, Span};
use crate::limits::{MAX_EXPANSION_BYTES, MAX_NESTING_DEPTH, MAX_VALUE_BYTES};
#[cfg(doc)]
use crate::limits::{MAX_LAUNCH_FILE_BYTES, MAX_PARAMETER_FILE_BYTES};
use crate::params::{typed_list, typed_value, ParamType, ParamValue};
use crate::parse::{
    parse_launch, parse_output, Action, ActionKind, ArgDecl, Condition, LaunchFile, NodeDecl,
    OutputMode, ParamDecl, ParamValueDecl,
};
use crate::subst::{shell_split, Call, Part, Template};
use rpq_ros::names::{
    validate_namespace, validate_node_name, validate_parameter_name, validate_remap,
};

/// Why a package or executable was not found: the places searched, each with its reason.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NotFound {
    /// Human-readable list of places searched.
    pub searched: Vec<String>,
}

/// Everything the resolver needs from the outside world.
pub trait Host {
    /// Reads a launch file (a regular file of at most [`MAX_LAUNCH_FILE_BYTES`]).
    fn read_file(&self, path: &Path) -> std::io::Result<String>;
    /// Whether a regular file exists (parameter files).
    fn is_file(&self, path: &Path) -> bool;
    /// Checks a parameter file named by `<param from>`: `Err` says why it cannot be used.
    /// By default it must be a file ([`Host::is_file`]); [`crate::packages::SystemHost`] also
    /// refuses special files and files over [`MAX_PARAMETER_FILE_BYTES`].
    fn parameter_file(&self, path: &Path) -> Result<(), String> {
        if self.is_file(path) {
            Ok(())
        } else {
            Err("parameter file not found".to_string())
        }
    }
    /// `$(find-pkg-share pkg)`
    fn package_share(&self, package: &str) -> Result<PathBuf, NotFound>;
    /// `$(find-pkg-prefix pkg)`
    fn package_prefix(&self, package: &str) -> Result<PathBuf, NotFound>;
    /// The program to run for `<node pkg exec>`.
    fn executable(&self, package: &str, executable: &str) -> Result<PathBuf, NotFound>;
}

/// Inputs of a resolution besides the file.
#[derive(Debug, Clone)]
pub struct ResolveOptions {
    /// Working directory (relative include and parameter file paths).
    pub cwd: PathBuf,
    /// The launcher's environment (`$(env)`, and the base for `<set_env>`).
    pub env: BTreeMap<String, String>,
    /// Suffix for `$(anon name)` (ROS 2 uses host, pid and a random number).
    pub anon_suffix: String,
}

/// A process to start.
#[derive(Debug, Clone, PartialEq)]
pub struct ProcessSpec {
    /// `exec-N` (or `exec_name-N`): the prefix of its output lines.
    pub label: String,
    /// Package.
    pub package: String,
    /// Executable name.
    pub executable: String,
    /// The full command line: launch prefix, resolved program, arguments.
    pub command: Vec<String>,
    /// Environment changes relative to the launcher's environment (`None`: unset).
    pub env: Vec<(String, Option<String>)>,
    /// Working directory.
    pub cwd: Option<PathBuf>,
    /// Output routing.
    pub output: OutputMode,
    /// Respawn policy.
    pub respawn: Option<Respawn>,
    /// Time after SIGINT before SIGTERM.
    pub sigterm_timeout: Duration,
    /// Time after SIGTERM before SIGKILL.
    pub sigkill_timeout: Duration,
    /// `on_exit="shutdown"`: stop everything when this process exits.
    pub shutdown_on_exit: bool,
    /// Where the node is declared.
    pub span: Span,
}

/// `respawn="true"` settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Respawn {
    /// Delay before restarting.
    pub delay: Duration,
    /// Maximum restarts (`None`: unlimited).
    pub max_retries: Option<u64>,
}

/// Result of resolving a launch file.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LaunchPlan {
    /// Processes in start order.
    pub processes: Vec<ProcessSpec>,
    /// Names of all arguments declared in the files that were read.
    pub declared_args: BTreeSet<String>,
    /// Deprecation notes of the files that were read.
    pub warnings: Vec<String>,
}

/// A declared argument, for `--show-args`.
#[derive(Debug, Clone, PartialEq)]
pub struct ArgInfo {
    /// Name.
    pub name: String,
    /// Default as written.
    pub default: Option<String>,
    /// Description.
    pub description: Option<String>,
    /// Choices.
    pub choices: Vec<String>,
    /// The file declaring it.
    pub file: String,
}

const ROS_NAMESPACE: &str = "ros_namespace";
const MAX_INCLUDE_DEPTH: usize = 64;

#[derive(Clone)]
struct Scope {
    configs: BTreeMap<String, String>,
    env: BTreeMap<String, String>,
}

struct Eval<'h> {
    host: &'h dyn Host,
    opts: &'h ResolveOptions,
    scope: Scope,
    files: Vec<PathBuf>,
    plan: LaunchPlan,
    counter: usize,
    /// `<group>`s and `<include>`s open at this point (at most [`MAX_NESTING_DEPTH`]).
    depth: usize,
    /// Bytes produced so far by substitutions and scope copies (at most
    /// [`MAX_EXPANSION_BYTES`]).
    expanded: usize,
}

/// Reads, parses and evaluates the launch file `file` with command-line arguments `args`.
pub fn resolve(
    file: &Path,
    args: &[(String, String)],
    opts: &ResolveOptions,
    host: &dyn Host,
) -> Result<LaunchPlan, LaunchError> {
    let path = absolute(&opts.cwd, file);
    let launch = load(host, &path)?;
    let mut configs = BTreeMap::new();
    for (k, v) in args {
        configs.insert(k.clone(), v.clone());
    }
    let mut ev = Eval {
        host,
        opts,
        scope: Scope {
            configs,
            env: opts.env.clone(),
        },
        files: vec![path],
        plan: LaunchPlan::default(),
        counter: 0,
        depth: 0,
        expanded: 0,
    };
    ev.file(&launch)?;
    let unknown: Vec<String> = args
        .iter()
        .map(|(k, _)| k.clone())
        .filter(|k| !ev.plan.declared_args.contains(k))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    if !unknown.is_empty() {
        return Err(LaunchError::UnknownArguments {
            unknown,
            valid: ev.plan.declared_args.iter().cloned().collect(),
        });
    }
    Ok(ev.plan)
}

/// Lists the arguments of `file` and of the files it includes (where the include's path
/// can be evaluated from the command-line arguments alone), as `ros2 launch --show-args`.
pub fn declared_arguments(
    file: &Path,
    args: &[(String, String)],
    opts: &ResolveOptions,
    host: &dyn Host,
) -> Result<(Vec<ArgInfo>, Vec<String>), LaunchError> {
    let path = absolute(&opts.cwd, file);
    let mut out = Vec::new();
    let mut notes = Vec::new();
    let mut seen = BTreeSet::new();
    collect_args(host, opts, args, &path, &mut out, &mut notes, &mut seen, 0)?;
    Ok((out, notes))
}

#[allow(clippy::too_many_arguments)]
fn collect_args(
    host: &dyn Host,
    opts: &ResolveOptions,
    args: &[(String, String)],
    path: &Path,
    out: &mut Vec<ArgInfo>,
    notes: &mut Vec<String>,
    seen: &mut BTreeSet<PathBuf>,
    depth: usize,
) -> Result<(), LaunchError> {
    if depth > MAX_INCLUDE_DEPTH || !seen.insert(path.to_path_buf()) {
        return Ok(());
    }
    let launch = load(host, path)?;
    fn walk<'a>(actions: &'a [Action], found: &mut Vec<&'a Action>) {
        for a in actions {
            found.push(a);
            if let ActionKind::Group { actions, .. } = &a.kind {
                walk(actions, found);
            }
        }
    }
    let mut all = Vec::new();
    walk(&launch.actions, &mut all);
    for action in all {
        match &action.kind {
            ActionKind::Arg(a) if !out.iter().any(|o: &ArgInfo| o.name == a.name) => {
                out.push(ArgInfo {
                    name: a.name.clone(),
                    default: a.default_text.clone(),
                    description: a.description.clone(),
                    choices: a.choices.clone(),
                    file: launch.path.clone(),
                });
            }
            ActionKind::Include(inc) => {
                let mut ev = Eval {
                    host,
                    opts,
                    scope: Scope {
                        configs: args.iter().cloned().collect(),
                        env: opts.env.clone(),
                    },
                    files: vec![path.to_path_buf()],
                    plan: LaunchPlan::default(),
                    counter: 0,
                    depth: 0,
                    expanded: 0,
                };
                match ev.eval(&inc.file, &action.span) {
                    Ok(p) => {
                        let p = absolute(&opts.cwd, Path::new(&p));
                        collect_args(host, opts, args, &p, out, notes, seen, depth + 1)?;
                    }
                    Err(e) => notes.push(format!(
                        "arguments of the file included at {} are not listed: its path \
                         depends on the launch ({e})",
                        action.span
                    )),
                }
            }
            _ => {}
        }
    }
    Ok(())
}

fn absolute(cwd: &Path, p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        cwd.join(p)
    }
}

fn load(host: &dyn Host, path: &Path) -> Result<LaunchFile, LaunchError> {
    let name = path.to_string_lossy().to_string();
    if !name.ends_with(".xml") {
        return Err(LaunchError::BadLaunchFile {
            file: name,
            reason: "rpq_launch runs XML launch files only (*.launch.xml); Python and YAML \
                     launch files are not supported"
                .to_string(),
        });
    }
    let text = host.read_file(path).map_err(|source| LaunchError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    parse_launch(&name, &text)
}

fn python_bool(text: &str) -> Option<bool> {
    match text {
        "1" => Some(true),
        "0" => Some(false),
        t => match typed_value(t, Some(ParamType::Bool)) {
            Ok(ParamValue::Bool(b)) => Some(b),
            _ => None,
        },
    }
}

/// `prefix_namespace` of launch_ros.
fn prefix_namespace(base: Option<&str>, ns: Option<&str>) -> Option<String> {
    let combined = match (base, ns) {
        (None, None) => return None,
        (b, None) => b.unwrap_or_default().to_string(),
        (b, Some(n)) if b.is_none_or(str::is_empty) || n.starts_with('/') => n.to_string(),
        (Some(b), Some(n)) => {
            let b = if b == "/" { "" } else { b };
            format!("{b}/{n}")
        }
        (None, Some(n)) => n.to_string(),
    };
    if combined == "/" {
        Some(combined)
    } else {
        Some(combined.trim_end_matches('/').to_string())
    }
}

fn make_absolute(ns: String) -> String {
    if ns.starts_with('/') {
        ns
    } else {
        format!("/{ns}")
    }
}

/// A [`LaunchError::InvalidName`] for `value` (a `what`) if `check` failed.
fn check_name(
    what: &str,
    value: &str,
    check: Result<(), String>,
    span: &Span,
) -> Result<(), LaunchError> {
    check.map_err(|reason| LaunchError::InvalidName {
        span: span.clone(),
        what: what.to_string(),
        value: value.to_string(),
        reason,
    })
}

impl Eval<'_> {
    fn current_file(&self) -> &Path {
        self.files.last().expect("a file is always being evaluated")
    }

    fn file(&mut self, launch: &LaunchFile) -> Result<(), LaunchError> {
        if let Some(reason) = &launch.deprecated {
            self.plan
                .warnings
                .push(format!("{} is deprecated: {reason}", launch.path));
        }
        collect_declared(&launch.actions, &mut self.plan.declared_args);
        self.actions(&launch.actions)
    }

    fn actions(&mut self, actions: &[Action]) -> Result<(), LaunchError> {
        for action in actions {
            self.action(action)?;
        }
        Ok(())
    }

    fn condition_holds(&mut self, action: &Action) -> Result<bool, LaunchError> {
        let (expr, want) = match &action.condition {
            None => return Ok(true),
            Some(Condition::If(t)) => (t, true),
            Some(Condition::Unless(t)) => (t, false),
        };
        let value = self.eval(expr, &action.span)?;
        match value.trim().to_lowercase().as_str() {
            "true" | "1" => Ok(want),
            "false" | "0" => Ok(!want),
            _ => Err(LaunchError::InvalidCondition {
                span: action.span.clone(),
                value,
            }),
        }
    }

    fn action(&mut self, action: &Action) -> Result<(), LaunchError> {
        if !self.condition_holds(action)? {
            return Ok(());
        }
        let span = &action.span;
        match &action.kind {
            ActionKind::Arg(arg) => self.arg(arg, span),
            ActionKind::Let { name, value } => {
                let name = self.eval(name, span)?;
                let value = self.eval(value, span)?;
                self.scope.configs.insert(name, value);
                Ok(())
            }
            ActionKind::Node(node) => self.node(node, span),
            ActionKind::Include(inc) => {
                let file = self.eval(&inc.file, span)?;
                let path = absolute(&self.opts.cwd, Path::new(&file));
                if self.files.len() > MAX_INCLUDE_DEPTH || self.files.contains(&path) {
                    return Err(LaunchError::IncludeCycle {
                        span: span.clone(),
                        path,
                    });
                }
                let launch = load(self.host, &path)?;
                let mut given = Vec::new();
                for (name, _) in &inc.args {
                    given.push(self.eval(name, span)?);
                }
                // ROS 2 checks that the include passes every unconditional required argument.
                for a in &launch.actions {
                    if let ActionKind::Arg(decl) = &a.kind {
                        if a.condition.is_none()
                            && decl.default.is_none()
                            && !given.contains(&decl.name)
                        {
                            return Err(LaunchError::IncludeMissingArgument {
                                span: span.clone(),
                                file: launch.path.clone(),
                                name: decl.name.clone(),
                                given: given.join(", "),
                            });
                        }
                    }
                }
                for (name, value) in &inc.args {
                    let name = self.eval(name, span)?;
                    let value = self.eval(value, span)?;
                    self.scope.configs.insert(name, value);
                }
                self.enter(span)?;
                self.files.push(path);
                let result = self.file(&launch);
                self.files.pop();
                self.depth -= 1;
                result
            }
            ActionKind::Group { scoped, actions } => {
                self.enter(span)?;
                let result = if *scoped {
                    let size = scope_bytes(&self.scope);
                    self.charge(size, span)?;
                    let saved = self.scope.clone();
                    let result = self.actions(actions);
                    self.scope = saved;
                    result
                } else {
                    self.actions(actions)
                };
                self.depth -= 1;
                result
            }
            ActionKind::PushRosNamespace { namespace } => {
                let pushed = self.eval(namespace, span)?;
                let previous = self.scope.configs.get(ROS_NAMESPACE).cloned();
                let ns = make_absolute(
                    prefix_namespace(previous.as_deref(), Some(&pushed)).unwrap_or_default(),
                );
                check_name("namespace", &ns, validate_namespace(&ns), span)?;
                self.scope.configs.insert(ROS_NAMESPACE.to_string(), ns);
                Ok(())
            }
            ActionKind::SetEnv { name, value } => {
                let name = self.eval(name, span)?;
                let value = self.eval(value, span)?;
                self.scope.env.insert(name, value);
                Ok(())
            }
            ActionKind::UnsetEnv { name } => {
                let name = self.eval(name, span)?;
                self.scope.env.remove(&name);
                Ok(())
            }
        }
    }

    /// One more `<group>` or `<include>` level (the caller decrements `depth` when it ends).
    fn enter(&mut self, span: &Span) -> Result<(), LaunchError> {
        if self.depth >= MAX_NESTING_DEPTH {
            return Err(LaunchError::Limit {
                span: span.clone(),
                reason: format!(
                    "<group>s and <include>s nested deeper than {MAX_NESTING_DEPTH} levels \
                     (rpq_launch's limit)"
                ),
            });
        }
        self.depth += 1;
        Ok(())
    }

    /// Counts `bytes` of expansion against [`MAX_EXPANSION_BYTES`].
    fn charge(&mut self, bytes: usize, span: &Span) -> Result<(), LaunchError> {
        self.expanded = self.expanded.saturating_add(bytes);
        if self.expanded > MAX_EXPANSION_BYTES {
            return Err(LaunchError::Limit {
                span: span.clone(),
                reason: format!(
                    "substitutions expand to more than {} MiB in total (rpq_launch's limit)",
                    MAX_EXPANSION_BYTES >> 20
                ),
            });
        }
        Ok(())
    }

    fn arg(&mut self, arg: &ArgDecl, span: &Span) -> Result<(), LaunchError> {
        if !self.scope.configs.contains_key(&arg.name) {
            match &arg.default {
                Some(d) => {
                    let v = self.eval(d, span)?;
                    self.scope.configs.insert(arg.name.clone(), v);
                }
                None => {
                    return Err(LaunchError::MissingArgument {
                        span: span.clone(),
                        name: arg.name.clone(),
                        description: arg
                            .description
                            .as_ref()
                            .map(|d| format!(" (description: {d})"))
                            .unwrap_or_default(),
                    })
                }
            }
        }
        if !arg.choices.is_empty() {
            let value = &self.scope.configs[&arg.name];
            if !arg.choices.contains(value) {
                return Err(LaunchError::InvalidChoice {
                    span: span.clone(),
                    name: arg.name.clone(),
                    value: value.clone(),
                    choices: arg.choices.clone(),
                });
            }
        }
        Ok(())
    }

    /// `<node>`: one process. The attributes are evaluated in a fixed order (program,
    /// arguments, name and namespace, parameters, remaps, environment, output, respawn, working
    /// directory, label), which decides which error a node with several faults reports.
    fn node(&mut self, decl: &NodeDecl, span: &Span) -> Result<(), LaunchError> {
        let (package, executable, program) = self.node_program(decl, span)?;
        let mut command = self.node_prefix_and_arguments(decl, span, &program)?;
        command.push("--ros-args".to_string());
        self.node_name_and_namespace(decl, span, &mut command)?;
        self.node_parameters(decl, &mut command)?;
        self.node_remaps(decl, span, &mut command)?;
        let env = self.node_environment(decl, span)?;
        let output = self.node_output(decl, span)?;
        let respawn = self.node_respawn(decl, span)?;
        let cwd = match &decl.cwd {
            Some(t) => Some(absolute(&self.opts.cwd, Path::new(&self.eval(t, span)?))),
            None => None,
        };
        let label_base = match &decl.exec_name {
            Some(t) => self.eval(t, span)?,
            None => program
                .file_name()
                .map(|n| n.to_string_lossy().to_string())
                .unwrap_or_else(|| executable.clone()),
        };
        self.counter += 1;
        self.plan.processes.push(ProcessSpec {
            label: format!("{label_base}-{}", self.counter),
            package,
            executable,
            command,
            env,
            cwd,
            output,
            respawn,
            sigterm_timeout: Duration::from_secs_f64(decl.sigterm_timeout.unwrap_or(5.0)),
            sigkill_timeout: Duration::from_secs_f64(decl.sigkill_timeout.unwrap_or(5.0)),
            shutdown_on_exit: decl.shutdown_on_exit,
            span: span.clone(),
        });
        Ok(())
    }

    /// The node's package, executable name and the program the host finds for them.
    fn node_program(
        &mut self,
        decl: &NodeDecl,
        span: &Span,
    ) -> Result<(String, String, PathBuf), LaunchError> {
        let package = self.eval(&decl.package, span)?;
        let executable = self.eval(&decl.executable, span)?;
        if executable.is_empty() || executable.contains('/') {
            return Err(LaunchError::InvalidAttribute {
                span: span.clone(),
                tag: "node".to_string(),
                attribute: "exec".to_string(),
                reason: format!("'{executable}' must be an executable name, not a path"),
            });
        }
        let program = self.host.executable(&package, &executable).map_err(|nf| {
            LaunchError::ExecutableNotFound {
                span: span.clone(),
                package: package.clone(),
                executable: executable.clone(),
                searched: nf.searched,
            }
        })?;
        Ok((package, executable, program))
    }

    /// The command line up to the launcher's own ROS arguments: launch prefix, program, `args`,
    /// and the node's `ros_args` in a `--ros-args` section of their own.
    fn node_prefix_and_arguments(
        &mut self,
        decl: &NodeDecl,
        span: &Span,
        program: &Path,
    ) -> Result<Vec<String>, LaunchError> {
        let mut command: Vec<String> = Vec::new();
        if let Some(prefix) = &decl.launch_prefix {
            let text = self.eval(prefix, span)?;
            command.extend(
                shell_split(&text).map_err(|e| LaunchError::InvalidAttribute {
                    span: span.clone(),
                    tag: "node".to_string(),
                    attribute: "launch-prefix".to_string(),
                    reason: e,
                })?,
            );
        }
        command.push(program.to_string_lossy().to_string());
        for a in &decl.args {
            command.push(self.eval(a, span)?);
        }
        if let Some(ros_args) = &decl.ros_args {
            command.push("--ros-args".to_string());
            for a in ros_args {
                command.push(self.eval(a, span)?);
            }
        }
        Ok(command)
    }

    /// `-r __node:=name` and `-r __ns:=/ns` (the node's namespace under the pushed one), both
    /// checked with the ROS name rules.
    fn node_name_and_namespace(
        &mut self,
        decl: &NodeDecl,
        span: &Span,
        command: &mut Vec<String>,
    ) -> Result<(), LaunchError> {
        if let Some(name) = &decl.name {
            let name = self.eval(name, span)?;
            check_name("node name", &name, validate_node_name(&name), span)?;
            command.extend(["-r".to_string(), format!("__node:={name}")]);
        }
        let node_ns = match &decl.namespace {
            Some(ns) => Some(self.eval(ns, span)?),
            None => None,
        };
        let base = self.scope.configs.get(ROS_NAMESPACE).cloned();
        if let Some(ns) = prefix_namespace(base.as_deref(), node_ns.as_deref()) {
            let ns = make_absolute(ns);
            check_name("namespace", &ns, validate_namespace(&ns), span)?;
            command.extend(["-r".to_string(), format!("__ns:={ns}")]);
        }
        Ok(())
    }

    /// `--params-file F` for `<param from>` and `-p name:=value` for each (flattened) value.
    fn node_parameters(
        &mut self,
        decl: &NodeDecl,
        command: &mut Vec<String>,
    ) -> Result<(), LaunchError> {
        for p in &decl.params {
            match p {
                ParamDecl::File { span, from } => {
                    let file = self.eval(from, span)?;
                    let path = absolute(&self.opts.cwd, Path::new(&file));
                    if let Err(reason) = self.host.parameter_file(&path) {
                        return Err(LaunchError::InvalidParameter {
                            span: span.clone(),
                            name: file,
                            reason,
                        });
                    }
                    command.extend([
                        "--params-file".to_string(),
                        path.to_string_lossy().to_string(),
                    ]);
                }
                ParamDecl::Value { span, name, value } => {
                    let name = self.eval(name, span)?;
                    let mut flat = Vec::new();
                    self.flatten_param(&name, value, span, &mut flat)?;
                    for (n, v) in flat {
                        validate_parameter_name(&n).map_err(|reason| {
                            LaunchError::InvalidParameter {
                                span: span.clone(),
                                name: n.clone(),
                                reason,
                            }
                        })?;
                        command.extend(["-p".to_string(), format!("{n}:={}", v.to_yaml())]);
                    }
                }
            }
        }
        Ok(())
    }

    /// `-r from:=to` for each `<remap>`, checked with the ROS name rules.
    fn node_remaps(
        &mut self,
        decl: &NodeDecl,
        span: &Span,
        command: &mut Vec<String>,
    ) -> Result<(), LaunchError> {
        for (from, to) in &decl.remaps {
            let from = self.eval(from, span)?;
            let to = self.eval(to, span)?;
            let rule = format!("{from}:={to}");
            check_name("remap", &rule, validate_remap(&from, &to), span)?;
            command.extend(["-r".to_string(), rule]);
        }
        Ok(())
    }

    /// The environment changes of the process relative to the launcher's environment: the
    /// scope's `<set_env>`/`<unset_env>` and the node's `<env>` children.
    fn node_environment(
        &mut self,
        decl: &NodeDecl,
        span: &Span,
    ) -> Result<Vec<(String, Option<String>)>, LaunchError> {
        let mut env = self.scope.env.clone();
        for (name, value) in &decl.env {
            let name = self.eval(name, span)?;
            let value = self.eval(value, span)?;
            env.insert(name, value);
        }
        let mut env_changes: Vec<(String, Option<String>)> = env
            .iter()
            .filter(|(k, v)| self.opts.env.get(*k) != Some(*v))
            .map(|(k, v)| (k.clone(), Some(v.clone())))
            .collect();
        env_changes.extend(
            self.opts
                .env
                .keys()
                .filter(|k| !env.contains_key(*k))
                .map(|k| (k.clone(), None)),
        );
        Ok(env_changes)
    }

    /// `output` (default `log`).
    fn node_output(&mut self, decl: &NodeDecl, span: &Span) -> Result<OutputMode, LaunchError> {
        match &decl.output {
            None => Ok(OutputMode::Log),
            Some(t) => {
                let text = self.eval(t, span)?;
                parse_output(&text).map_err(|reason| LaunchError::InvalidAttribute {
                    span: span.clone(),
                    tag: "node".to_string(),
                    attribute: "output".to_string(),
                    reason,
                })
            }
        }
    }

    /// `respawn`, `respawn_delay` and `respawn_max_retries`.
    fn node_respawn(
        &mut self,
        decl: &NodeDecl,
        span: &Span,
    ) -> Result<Option<Respawn>, LaunchError> {
        let respawn = match &decl.respawn {
            None => false,
            Some(t) => {
                let text = self.eval(t, span)?;
                python_bool(&text).ok_or_else(|| LaunchError::InvalidAttribute {
                    span: span.clone(),
                    tag: "node".to_string(),
                    attribute: "respawn".to_string(),
                    reason: format!("'{text}' is not a boolean"),
                })?
            }
        };
        Ok(respawn.then(|| Respawn {
            delay: Duration::from_secs_f64(decl.respawn_delay.unwrap_or(0.0)),
            max_retries: decl.respawn_max_retries.and_then(|n| u64::try_from(n).ok()),
        }))
    }

    fn flatten_param(
        &mut self,
        name: &str,
        value: &ParamValueDecl,
        span: &Span,
        out: &mut Vec<(String, ParamValue)>,
    ) -> Result<(), LaunchError> {
        let bad = |reason: String| LaunchError::InvalidParameter {
            span: span.clone(),
            name: name.to_string(),
            reason,
        };
        match value {
            ParamValueDecl::Scalar { value, ty } => {
                let text = self.eval(value, span)?;
                out.push((name.to_string(), typed_value(&text, *ty).map_err(bad)?));
            }
            ParamValueDecl::Separated { items, ty } => {
                let mut texts = Vec::new();
                for item in items {
                    texts.push(self.eval(item, span)?);
                }
                out.push((name.to_string(), typed_list(&texts, *ty).map_err(bad)?));
            }
            ParamValueDecl::Nested(children) => {
                for (child_span, child_name, child_value) in children {
                    let child_name = self.eval(child_name, child_span)?;
                    let full = format!("{name}.{child_name}");
                    self.flatten_param(&full, child_value, child_span, out)?;
                }
            }
        }
        Ok(())
    }

    /// Evaluates a template to a string of at most [`MAX_VALUE_BYTES`], counting it against
    /// [`MAX_EXPANSION_BYTES`].
    fn eval(&mut self, t: &Template, span: &Span) -> Result<String, LaunchError> {
        let mut out = String::new();
        for part in &t.0 {
            match part {
                Part::Text(s) => out.push_str(s),
                Part::Call(c) => {
                    let v = self.call(c, span)?;
                    out.push_str(&v);
                }
            }
            if out.len() > MAX_VALUE_BYTES {
                return Err(LaunchError::Limit {
                    span: span.clone(),
                    reason: format!(
                        "a substitution result is longer than {} KiB (rpq_launch's limit; \
                         Linux passes no longer argument or environment entry)",
                        MAX_VALUE_BYTES >> 10
                    ),
                });
            }
        }
        self.charge(out.len(), span)?;
        Ok(out)
    }

    fn call(&mut self, c: &Call, span: &Span) -> Result<String, LaunchError> {
        let fail = |reason: String| LaunchError::SubstitutionFailed {
            span: span.clone(),
            name: c.name.clone(),
            reason,
        };
        let mut args = Vec::with_capacity(c.args.len());
        // `var`/`env` defaults are evaluated only when needed (ROS 2 does the same).
        let eager = match c.name.as_str() {
            "var" | "env" => 1,
            _ => c.args.len(),
        };
        for a in c.args.iter().take(eager) {
            args.push(self.eval(a, span)?);
        }
        let as_bool =
            |s: &str| python_bool(s).ok_or_else(|| fail(format!("'{s}' is not a boolean")));
        match c.name.as_str() {
            "var" => match self.scope.configs.get(&args[0]) {
                Some(v) => Ok(v.clone()),
                None => match c.args.get(1) {
                    Some(d) => self.eval(d, span),
                    None => Err(fail(format!(
                        "launch configuration '{}' does not exist (declare it with <arg> or <let>)",
                        args[0]
                    ))),
                },
            },
            "env" => match self.scope.env.get(&args[0]) {
                Some(v) => Ok(v.clone()),
                None => match c.args.get(1) {
                    Some(d) => self.eval(d, span),
                    None => Err(fail(format!(
                        "environment variable '{}' does not exist (give a default: $(env {} default))",
                        args[0], args[0]
                    ))),
                },
            },
            "find-pkg-share" => self
                .host
                .package_share(&args[0])
                .map(|p| p.to_string_lossy().to_string())
                .map_err(|nf| {
                    fail(format!(
                        "package '{}' not found; searched: {}",
                        args[0],
                        nf.searched.join(", ")
                    ))
                }),
            "find-pkg-prefix" => self
                .host
                .package_prefix(&args[0])
                .map(|p| p.to_string_lossy().to_string())
                .map_err(|nf| {
                    fail(format!(
                        "package '{}' not found; searched: {}",
                        args[0],
                        nf.searched.join(", ")
                    ))
                }),
            "dirname" => Ok(self
                .current_file()
                .parent()
                .map(|p| p.to_string_lossy().to_string())
                .unwrap_or_default()),
            "filename" => Ok(self.current_file().to_string_lossy().to_string()),
            "anon" => {
                let key = format!("anon{}", args[0]);
                if let Some(v) = self.scope.configs.get(&key) {
                    return Ok(v.clone());
                }
                let name: String = format!("{}_{}", args[0], self.opts.anon_suffix)
                    .chars()
                    .map(|ch| if matches!(ch, '.' | '-' | ':') { '_' } else { ch })
                    .collect();
                self.scope.configs.insert(key, name.clone());
                Ok(name)
            }
            "not" => Ok((!as_bool(&args[0])?).to_string()),
            "and" => Ok((as_bool(&args[0])? && as_bool(&args[1])?).to_string()),
            "or" => Ok((as_bool(&args[0])? || as_bool(&args[1])?).to_string()),
            "equals" => Ok(equals(&args[0], &args[1]).to_string()),
            "not-equals" => Ok((!equals(&args[0], &args[1])).to_string()),
            other => Err(fail(format!("unsupported substitution '{other}'"))),
        }
    }
}

/// Bytes held by a scope's configurations and environment (what a scoped group copies).
fn scope_bytes(scope: &Scope) -> usize {
    scope
        .configs
        .iter()
        .chain(scope.env.iter())
        .map(|(k, v)| k.len() + v.len())
        .sum()
}

/// `EqualsSubstitution`: booleans and numbers compare by value, anything else as text.
fn equals(left: &str, right: &str) -> bool {
    let is_bool = |s: &str| matches!(s.to_lowercase().as_str(), "true" | "false" | "1" | "0");
    if is_bool(left) && is_bool(right) {
        let truthy = |s: &str| matches!(s.to_lowercase().as_str(), "true" | "1");
        return truthy(left) == truthy(right);
    }
    if let (Ok(a), Ok(b)) = (left.trim().parse::<f64>(), right.trim().parse::<f64>()) {
        let tol = 1e-9 * a.abs().max(b.abs());
        return a == b || (a - b).abs() <= tol;
    }
    left == right
}

fn collect_declared(actions: &[Action], out: &mut BTreeSet<String>) {
    for a in actions {
        match &a.kind {
            ActionKind::Arg(d) => {
                out.insert(d.name.clone());
            }
            ActionKind::Group { actions, .. } => collect_declared(actions, out),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// An in-memory world: files, ament packages and executables.
    #[derive(Default)]
    struct FakeHost {
        files: HashMap<PathBuf, String>,
        shares: HashMap<String, PathBuf>,
        exes: HashMap<(String, String), PathBuf>,
    }

    impl FakeHost {
        fn file(mut self, path: &str, text: &str) -> Self {
            self.files.insert(PathBuf::from(path), text.to_string());
            self
        }
        fn package(mut self, pkg: &str, exes: &[&str]) -> Self {
            self.shares.insert(
                pkg.to_string(),
                PathBuf::from(format!("/ws/install/share/{pkg}")),
            );
            for e in exes {
                self.exes.insert(
                    (pkg.to_string(), e.to_string()),
                    PathBuf::from(format!("/ws/install/lib/{pkg}/{e}")),
                );
            }
            self
        }
    }

    impl Host for FakeHost {
        fn read_file(&self, path: &Path) -> std::io::Result<String> {
            self.files
                .get(path)
                .cloned()
                .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::NotFound))
        }
        fn is_file(&self, path: &Path) -> bool {
            self.files.contains_key(path)
        }
        fn package_share(&self, package: &str) -> Result<PathBuf, NotFound> {
            self.shares.get(package).cloned().ok_or(NotFound {
                searched: vec!["fake index".to_string()],
            })
        }
        fn package_prefix(&self, package: &str) -> Result<PathBuf, NotFound> {
            self.package_share(package)
                .map(|_| PathBuf::from("/ws/install"))
        }
        fn executable(&self, package: &str, executable: &str) -> Result<PathBuf, NotFound> {
            self.exes
                .get(&(package.to_string(), executable.to_string()))
                .cloned()
                .ok_or(NotFound {
                    searched: vec![format!("/ws/install/lib/{package}/{executable}")],
                })
        }
    }

    fn opts() -> ResolveOptions {
        ResolveOptions {
            cwd: PathBuf::from("/cwd"),
            env: [("HOME", "/home/u"), ("KEEP", "k"), ("DROP", "d")]
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            anon_suffix: "host_42_7".to_string(),
        }
    }

    fn run(host: &FakeHost, file: &str, args: &[(&str, &str)]) -> Result<LaunchPlan, LaunchError> {
        let args: Vec<(String, String)> = args
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        resolve(Path::new(file), &args, &opts(), host)
    }

    fn commands(plan: &LaunchPlan) -> Vec<String> {
        plan.processes.iter().map(|p| p.command.join(" ")).collect()
    }

    fn host_with(main: &str) -> FakeHost {
        FakeHost::default()
            .package("robot_sim", &["robot_sim", "helper"])
            .file("/ws/main.launch.xml", main)
    }

    #[test]
    fn node_command_line_matches_ros2_launch_order() {
        let host = host_with(
            r#"<launch>
  <node pkg="robot_sim" exec="robot_sim" name="sim" namespace="arm" args="--verbose 'a b'"
        ros_args="--log-level debug">
    <param name="rate" value="100"/>
    <param name="frame" value="'10'"/>
    <param name="gain" value="2.0" />
    <param from="/ws/sim.yaml"/>
    <param name="limits"><param name="j1" value="[-1.0, 1.0]"/><param name="on" value="yes"/></param>
    <remap from="joint_states" to="/js"/>
  </node>
</launch>"#,
        )
        .file("/ws/sim.yaml", "x: 1");
        let plan = run(&host, "/ws/main.launch.xml", &[]).unwrap();
        assert_eq!(
            commands(&plan),
            vec![
                "/ws/install/lib/robot_sim/robot_sim --verbose a b --ros-args --log-level debug \
                 --ros-args -r __node:=sim -r __ns:=/arm -p rate:=100 -p frame:='10' -p gain:=2.0 \
                 --params-file /ws/sim.yaml -p limits.j1:=[-1.0, 1.0] -p limits.on:=true \
                 -r joint_states:=/js"
            ]
        );
        let p = &plan.processes[0];
        assert_eq!(p.command[2], "a b");
        assert_eq!(p.label, "robot_sim-1");
        assert_eq!(p.output, OutputMode::Log);
        assert_eq!(p.sigterm_timeout, Duration::from_secs(5));
    }

    #[test]
    fn minimal_node_has_only_ros_args_marker() {
        let host = host_with(r#"<launch><node pkg="robot_sim" exec="helper"/></launch>"#);
        let plan = run(&host, "/ws/main.launch.xml", &[]).unwrap();
        assert_eq!(
            commands(&plan),
            vec!["/ws/install/lib/robot_sim/helper --ros-args"]
        );
    }

    #[test]
    fn labels_count_across_processes() {
        let host = host_with(
            r#"<launch>
  <node pkg="robot_sim" exec="robot_sim"/>
  <node pkg="robot_sim" exec="helper" exec_name="aux"/>
  <node pkg="robot_sim" exec="robot_sim"/>
</launch>"#,
        );
        let plan = run(&host, "/ws/main.launch.xml", &[]).unwrap();
        let labels: Vec<_> = plan.processes.iter().map(|p| p.label.as_str()).collect();
        assert_eq!(labels, vec!["robot_sim-1", "aux-2", "robot_sim-3"]);
    }

    #[test]
    fn arguments_defaults_command_line_and_errors() {
        let host = host_with(
            r#"<launch>
  <arg name="rate" default="50" description="loop rate"/>
  <arg name="robot" description="which robot"/>
  <arg name="mode" default="sim"><choice value="sim"/><choice value="real"/></arg>
  <node pkg="robot_sim" exec="robot_sim" args="$(var robot) $(var rate) $(var mode)"/>
</launch>"#,
        );
        let plan = run(&host, "/ws/main.launch.xml", &[("robot", "rx60")]).unwrap();
        assert!(commands(&plan)[0].contains("robot_sim rx60 50 sim --ros-args"));
        let plan = run(
            &host,
            "/ws/main.launch.xml",
            &[("robot", "rx60"), ("rate", "7")],
        )
        .unwrap();
        assert!(commands(&plan)[0].contains("robot_sim rx60 7 sim --ros-args"));

        let e = run(&host, "/ws/main.launch.xml", &[])
            .unwrap_err()
            .to_string();
        assert!(e.contains("required launch argument 'robot'"), "{e}");
        assert!(e.contains("which robot"), "{e}");
        assert!(e.contains("/ws/main.launch.xml:3:3"), "{e}");

        let e = run(
            &host,
            "/ws/main.launch.xml",
            &[("robot", "x"), ("rat", "1")],
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("unknown launch argument(s): rat"), "{e}");
        assert!(e.contains("valid arguments: mode, rate, robot"), "{e}");

        let e = run(
            &host,
            "/ws/main.launch.xml",
            &[("robot", "x"), ("mode", "fake")],
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("valid choices: sim, real"), "{e}");
    }

    #[test]
    fn let_var_env_and_defaults() {
        let host = host_with(
            r#"<launch>
  <let name="a" value="$(env HOME)/x"/>
  <let name="b" value="$(var nope $(var a))"/>
  <set_env name="NEW" value="$(var b)"/>
  <node pkg="robot_sim" exec="robot_sim" args="$(var b) $(env NEW) $(env MISSING 'dflt v')"/>
</launch>"#,
        );
        let plan = run(&host, "/ws/main.launch.xml", &[]).unwrap();
        let p = &plan.processes[0];
        assert_eq!(&p.command[1..4], ["/home/u/x", "/home/u/x", "dflt v"]);
        assert_eq!(
            p.env,
            vec![("NEW".to_string(), Some("/home/u/x".to_string()))]
        );

        let host = host_with(r#"<launch><let name="a" value="$(var missing)"/></launch>"#);
        let e = run(&host, "/ws/main.launch.xml", &[])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("launch configuration 'missing' does not exist"),
            "{e}"
        );
        let host = host_with(r#"<launch><let name="a" value="$(env NOPE_NOT_SET)"/></launch>"#);
        let e = run(&host, "/ws/main.launch.xml", &[])
            .unwrap_err()
            .to_string();
        assert!(e.contains("environment variable 'NOPE_NOT_SET'"), "{e}");
    }

    #[test]
    fn node_env_children_and_unset() {
        let host = host_with(
            r#"<launch>
  <unset_env name="DROP"/>
  <node pkg="robot_sim" exec="robot_sim"><env name="KEEP" value="changed"/><env name="X" value="1"/></node>
  <node pkg="robot_sim" exec="helper"/>
</launch>"#,
        );
        let plan = run(&host, "/ws/main.launch.xml", &[]).unwrap();
        assert_eq!(
            plan.processes[0].env,
            vec![
                ("KEEP".to_string(), Some("changed".to_string())),
                ("X".to_string(), Some("1".to_string())),
                ("DROP".to_string(), None),
            ]
        );
        assert_eq!(plan.processes[1].env, vec![("DROP".to_string(), None)]);
    }

    #[test]
    fn groups_scope_configurations_namespaces_and_environment() {
        let host = host_with(
            r#"<launch>
  <let name="x" value="outer"/>
  <group>
    <push_ros_namespace namespace="robot1"/>
    <let name="x" value="inner"/>
    <set_env name="G" value="1"/>
    <node pkg="robot_sim" exec="robot_sim" name="a" args="$(var x) $(env G)"/>
    <group>
      <push-ros-namespace namespace="arm"/>
      <node pkg="robot_sim" exec="robot_sim" name="b" namespace="sub"/>
      <node pkg="robot_sim" exec="robot_sim" name="c" namespace="/abs"/>
    </group>
  </group>
  <node pkg="robot_sim" exec="robot_sim" name="d" args="$(var x) $(env G 'unset')"/>
  <group scoped="false"><let name="x" value="leaked"/><push_ros_namespace namespace="/top"/></group>
  <node pkg="robot_sim" exec="robot_sim" name="e" args="$(var x)"/>
</launch>"#,
        );
        let plan = run(&host, "/ws/main.launch.xml", &[]).unwrap();
        let c = commands(&plan);
        assert!(
            c[0].ends_with("robot_sim inner 1 --ros-args -r __node:=a -r __ns:=/robot1"),
            "{}",
            c[0]
        );
        assert!(
            c[1].ends_with("--ros-args -r __node:=b -r __ns:=/robot1/arm/sub"),
            "{}",
            c[1]
        );
        assert!(
            c[2].ends_with("--ros-args -r __node:=c -r __ns:=/abs"),
            "{}",
            c[2]
        );
        assert!(
            c[3].ends_with("robot_sim outer unset --ros-args -r __node:=d"),
            "{}",
            c[3]
        );
        assert!(
            c[4].ends_with("robot_sim leaked --ros-args -r __node:=e -r __ns:=/top"),
            "{}",
            c[4]
        );
    }

    #[test]
    fn conditions() {
        let host = host_with(
            r#"<launch>
  <arg name="sim" default="true"/>
  <node pkg="robot_sim" exec="robot_sim" name="yes1" if="$(var sim)"/>
  <node pkg="robot_sim" exec="robot_sim" name="no1" unless="$(var sim)"/>
  <node pkg="robot_sim" exec="robot_sim" name="yes2" if="$(not $(equals $(var sim) false))"/>
  <node pkg="robot_sim" exec="robot_sim" name="no2" if="$(and $(var sim) 0)"/>
  <node pkg="robot_sim" exec="robot_sim" name="yes3" if="$(or $(var sim) 0)"/>
  <node pkg="robot_sim" exec="robot_sim" name="yes4" if="$(equals 1.0 1)"/>
  <node pkg="robot_sim" exec="robot_sim" name="yes5" if="$(not-equals a b)"/>
  <group if=" TRUE "><node pkg="robot_sim" exec="robot_sim" name="yes6"/></group>
  <include file="/ws/never.launch.xml" if="false"/>
</launch>"#,
        );
        let plan = run(&host, "/ws/main.launch.xml", &[]).unwrap();
        let names: Vec<String> = commands(&plan)
            .iter()
            .map(|c| c.rsplit("__node:=").next().unwrap().to_string())
            .collect();
        assert_eq!(names, vec!["yes1", "yes2", "yes3", "yes4", "yes5", "yes6"]);
        let plan = run(&host, "/ws/main.launch.xml", &[("sim", "false")]).unwrap();
        assert!(commands(&plan)[0].ends_with("__node:=no1"));

        let e = run(&host, "/ws/main.launch.xml", &[("sim", "maybe")])
            .unwrap_err()
            .to_string();
        assert!(e.contains("condition evaluated to 'maybe'"), "{e}");
    }

    #[test]
    fn include_passes_arguments_without_scoping_like_ros2() {
        let host = host_with(
            r#"<launch>
  <let name="shared" value="from_parent"/>
  <include file="$(dirname)/sub/child.launch.xml">
    <arg name="robot" value="rx60"/>
  </include>
  <node pkg="robot_sim" exec="helper" args="$(var robot) $(var child_let)"/>
  <group>
    <include file="/ws/sub/child.launch.xml"><arg name="robot" value="scoped"/></include>
  </group>
  <node pkg="robot_sim" exec="helper" args="$(var robot)"/>
</launch>"#,
        )
        .file(
            "/ws/sub/child.launch.xml",
            r#"<launch>
  <arg name="robot"/>
  <arg name="shared" default="child_default"/>
  <let name="child_let" value="set_in_child"/>
  <node pkg="robot_sim" exec="robot_sim" args="$(var robot) $(var shared) $(dirname) $(filename)"/>
</launch>"#,
        );
        let plan = run(&host, "/ws/main.launch.xml", &[]).unwrap();
        let c = commands(&plan);
        assert!(
            c[0].contains("robot_sim rx60 from_parent /ws/sub /ws/sub/child.launch.xml --ros-args"),
            "{}",
            c[0]
        );
        // arguments and lets of an include leak into the including scope (ROS 2 behaviour)
        assert!(
            c[1].contains("helper rx60 set_in_child --ros-args"),
            "{}",
            c[1]
        );
        assert!(c[2].contains("robot_sim scoped"), "{}", c[2]);
        // ... unless the include is inside a scoped group
        assert!(c[3].contains("helper rx60 --ros-args"), "{}", c[3]);
        // declared args of included files are valid on the command line
        assert!(plan.declared_args.contains("shared"));
        // `shared` is declared only in the child: valid on the command line, but the parent's
        // <let> runs before the include and wins, as in ROS 2.
        let plan = run(&host, "/ws/main.launch.xml", &[("shared", "cli")]).unwrap();
        assert!(commands(&plan)[0].contains("rx60 from_parent"));
    }

    #[test]
    fn include_errors() {
        let host = host_with(r#"<launch><include file="/ws/child.launch.xml"/></launch>"#).file(
            "/ws/child.launch.xml",
            r#"<launch><arg name="robot"/></launch>"#,
        );
        let e = run(&host, "/ws/main.launch.xml", &[("robot", "x")])
            .unwrap_err()
            .to_string();
        assert!(e.contains("requires the argument 'robot'"), "{e}");

        let host = host_with(r#"<launch><include file="/ws/main.launch.xml"/></launch>"#);
        let e = run(&host, "/ws/main.launch.xml", &[])
            .unwrap_err()
            .to_string();
        assert!(e.contains("recurse forever"), "{e}");

        let host = host_with(r#"<launch><include file="/ws/missing.launch.xml"/></launch>"#);
        let e = run(&host, "/ws/main.launch.xml", &[])
            .unwrap_err()
            .to_string();
        assert!(e.contains("cannot read '/ws/missing.launch.xml'"), "{e}");

        let host = host_with(r#"<launch><include file="/ws/x.launch.py"/></launch>"#);
        let e = run(&host, "/ws/main.launch.xml", &[])
            .unwrap_err()
            .to_string();
        assert!(e.contains("XML launch files only"), "{e}");

        let host = host_with(r#"<launch><include file="/ws/bad.launch.xml"/></launch>"#).file(
            "/ws/bad.launch.xml",
            "<launch>\n<node pkg=\"a\" exec=\"b\" foo=\"1\"/></launch>",
        );
        let e = run(&host, "/ws/main.launch.xml", &[])
            .unwrap_err()
            .to_string();
        assert!(e.contains("/ws/bad.launch.xml:2:"), "{e}");
    }

    #[test]
    fn packages_and_executables() {
        let host = host_with(
            r#"<launch>
  <let name="cfg" value="$(find-pkg-share robot_sim)/config"/>
  <node pkg="robot_sim" exec="robot_sim" args="$(var cfg) $(find-pkg-prefix robot_sim)"/>
</launch>"#,
        );
        let plan = run(&host, "/ws/main.launch.xml", &[]).unwrap();
        assert!(commands(&plan)[0]
            .contains("robot_sim /ws/install/share/robot_sim/config /ws/install --ros-args"));

        let host = host_with(r#"<launch><node pkg="robot_sim" exec="nope"/></launch>"#);
        let e = run(&host, "/ws/main.launch.xml", &[])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("executable 'nope' of package 'robot_sim' not found"),
            "{e}"
        );
        assert!(e.contains("/ws/install/lib/robot_sim/nope"), "{e}");

        let host = host_with(r#"<launch><let name="x" value="$(find-pkg-share ghost)"/></launch>"#);
        let e = run(&host, "/ws/main.launch.xml", &[])
            .unwrap_err()
            .to_string();
        assert!(e.contains("package 'ghost' not found"), "{e}");

        let host = host_with(r#"<launch><node pkg="robot_sim" exec="../robot_sim"/></launch>"#);
        assert!(run(&host, "/ws/main.launch.xml", &[]).is_err());
    }

    #[test]
    fn parameter_errors_and_files() {
        let host = host_with(
            r#"<launch><node pkg="robot_sim" exec="robot_sim"><param from="sim.yaml"/></node></launch>"#,
        );
        let e = run(&host, "/ws/main.launch.xml", &[])
            .unwrap_err()
            .to_string();
        assert!(e.contains("/cwd/sim.yaml") || e.contains("sim.yaml"), "{e}");
        assert!(e.contains("parameter file not found"), "{e}");

        let host = host_with(
            r#"<launch><node pkg="robot_sim" exec="robot_sim"><param name="m" value="{a: 1}"/></node></launch>"#,
        );
        let e = run(&host, "/ws/main.launch.xml", &[])
            .unwrap_err()
            .to_string();
        assert!(e.contains("invalid parameter 'm'"), "{e}");

        let host = host_with(
            r#"<launch>
  <arg name="port" default="8080"/>
  <node pkg="robot_sim" exec="robot_sim">
    <param name="as_int" value="$(var port)"/>
    <param name="as_str" value="$(var port)" type="str"/>
    <param name="list" value="1;2;$(var port)" value-sep=";" type="list_of_float"/>
    <param name="empty" value=""/>
  </node>
</launch>"#,
        );
        let plan = run(&host, "/ws/main.launch.xml", &[]).unwrap();
        assert!(commands(&plan)[0].ends_with(
            "-p as_int:=8080 -p as_str:='8080' -p list:=[1.0, 2.0, 8080.0] -p empty:=''"
        ));
    }

    #[test]
    fn names_are_validated() {
        for (attr, bad) in [
            ("name", "1abc"),
            ("name", "a-b"),
            ("namespace", "a//b"),
            ("namespace", "a b"),
            ("namespace", "a~b"),
            ("namespace", "9ns"),
        ] {
            let host = host_with(&format!(
                r#"<launch><node pkg="robot_sim" exec="robot_sim" {attr}="{bad}"/></launch>"#
            ));
            let e = run(&host, "/ws/main.launch.xml", &[])
                .unwrap_err()
                .to_string();
            assert!(e.contains("invalid"), "{attr}={bad}: {e}");
        }
        let host = host_with(r#"<launch><push_ros_namespace namespace="a b"/></launch>"#);
        assert!(run(&host, "/ws/main.launch.xml", &[]).is_err());
    }

    /// The launcher applies the node's own name rules (`rpq_ros::names`): what used to pass
    /// here and fail at the node's start-up (remaps, parameter names, long node names) is
    /// refused with the launch file's position, and what the node accepts still passes.
    #[test]
    fn names_follow_the_nodes_rules() {
        let node = |inner: &str, attrs: &str| {
            format!(
                r#"<launch><node pkg="robot_sim" exec="robot_sim" {attrs}>{inner}</node></launch>"#
            )
        };
        let long = "n".repeat(256);
        for (xml, needle) in [
            (node(r#"<remap from="a-b" to="c"/>"#, ""), "invalid remap"),
            (node(r#"<remap from="a" to="b//c"/>"#, ""), "invalid remap"),
            (node(r#"<remap from="__ns" to="rel"/>"#, ""), "absolute"),
            (
                node(r#"<param name="a..b" value="1"/>"#, ""),
                "invalid parameter",
            ),
            (
                node(r#"<param name="a b" value="1"/>"#, ""),
                "invalid parameter",
            ),
            (node("", &format!(r#"name="{long}""#)), "255"),
        ] {
            let e = run(&host_with(&xml), "/ws/main.launch.xml", &[])
                .unwrap_err()
                .to_string();
            assert!(e.contains(needle), "{xml}: {e}");
        }
        let ok = node(
            r#"<remap from="~/status" to="/{node}/state"/><param name="ctrl.gain" value="1"/>"#,
            r#"name="sim""#,
        );
        let plan = run(&host_with(&ok), "/ws/main.launch.xml", &[]).unwrap();
        assert!(commands(&plan)[0].contains("-r ~/status:=/{node}/state"));
    }

    #[test]
    fn namespace_prefixing_rules() {
        assert_eq!(prefix_namespace(None, None), None);
        assert_eq!(
            prefix_namespace(Some("my_ns"), Some("orig")).as_deref(),
            Some("my_ns/orig")
        );
        assert_eq!(
            prefix_namespace(Some("/my_ns"), Some("orig")).as_deref(),
            Some("/my_ns/orig")
        );
        assert_eq!(
            prefix_namespace(Some("my_ns"), Some("/orig")).as_deref(),
            Some("/orig")
        );
        assert_eq!(
            prefix_namespace(None, Some("orig")).as_deref(),
            Some("orig")
        );
        assert_eq!(
            prefix_namespace(Some("my_ns"), None).as_deref(),
            Some("my_ns")
        );
        assert_eq!(
            prefix_namespace(Some("/"), Some("a/")).as_deref(),
            Some("/a")
        );
        assert_eq!(
            prefix_namespace(None, Some(""))
                .map(make_absolute)
                .as_deref(),
            Some("/")
        );
    }

    #[test]
    fn respawn_output_anon_and_timeouts() {
        let host = host_with(
            r#"<launch>
  <node pkg="robot_sim" exec="robot_sim" name="$(anon sim)" respawn="True" respawn_delay="0.25"
        respawn_max_retries="3" output="screen" sigterm_timeout="1.5" sigkill_timeout="0.5"
        on_exit="shutdown" cwd="/tmp" launch-prefix="nice -n 5" args="$(anon sim) $(anon other.x)"/>
  <node pkg="robot_sim" exec="helper" respawn="false" output="both"/>
</launch>"#,
        );
        let plan = run(&host, "/ws/main.launch.xml", &[]).unwrap();
        let p = &plan.processes[0];
        assert_eq!(
            p.command[..6],
            [
                "nice",
                "-n",
                "5",
                "/ws/install/lib/robot_sim/robot_sim",
                "sim_host_42_7",
                "other_x_host_42_7"
            ]
        );
        assert!(p.command.contains(&"__node:=sim_host_42_7".to_string()));
        assert_eq!(
            p.respawn,
            Some(Respawn {
                delay: Duration::from_millis(250),
                max_retries: Some(3)
            })
        );
        assert_eq!(p.output, OutputMode::Screen);
        assert_eq!(p.sigterm_timeout, Duration::from_millis(1500));
        assert_eq!(p.sigkill_timeout, Duration::from_millis(500));
        assert!(p.shutdown_on_exit);
        assert_eq!(p.cwd, Some(PathBuf::from("/tmp")));
        assert_eq!(plan.processes[1].respawn, None);
        assert_eq!(plan.processes[1].output, OutputMode::Both);
    }

    #[test]
    fn show_args_lists_included_arguments() {
        let host = host_with(
            r#"<launch>
  <arg name="a" default="1" description="first"/>
  <group if="false"><arg name="b"/></group>
  <include file="$(dirname)/child.launch.xml"/>
  <include file="$(var where)/other.launch.xml"/>
</launch>"#,
        )
        .file(
            "/ws/child.launch.xml",
            r#"<launch><arg name="c" default="x"/></launch>"#,
        );
        let (args, notes) =
            declared_arguments(Path::new("/ws/main.launch.xml"), &[], &opts(), &host).unwrap();
        let names: Vec<_> = args.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, vec!["a", "b", "c"]);
        assert_eq!(args[0].description.as_deref(), Some("first"));
        assert_eq!(args[1].default, None);
        assert_eq!(notes.len(), 1);
    }

    #[test]
    fn nesting_and_expansion_limits() {
        let limit_error = |host: &FakeHost| match run(host, "/ws/main.launch.xml", &[]) {
            Err(LaunchError::Limit { span, reason }) => format!("{span}: {reason}"),
            other => panic!("{other:?}"),
        };
        // Deep groups: refused while parsing (element depth), before any evaluation.
        let deep = format!(
            "<launch>{}{}</launch>",
            "<group>".repeat(3_000),
            "</group>".repeat(3_000)
        );
        let e = limit_error(&host_with(&deep));
        assert!(
            e.starts_with("/ws/main.launch.xml:1:450: elements nested deeper than 64"),
            "{e}"
        );
        // Groups and includes across files.
        let groups = |n: usize, inner: &str| {
            format!(
                "<launch>{}{inner}{}</launch>",
                "<group>".repeat(n),
                "</group>".repeat(n)
            )
        };
        let host = host_with(&groups(62, r#"<include file="/ws/a.launch.xml"/>"#))
            .file(
                "/ws/a.launch.xml",
                &groups(62, r#"<include file="/ws/b.launch.xml"/>"#),
            )
            .file("/ws/b.launch.xml", &groups(3, ""));
        let e = limit_error(&host);
        assert!(
            e.starts_with("/ws/b.launch.xml:1:23: <group>s and <include>s"),
            "{e}"
        );
        let host = host_with(&groups(62, r#"<include file="/ws/a.launch.xml"/>"#))
            .file(
                "/ws/a.launch.xml",
                &groups(62, r#"<include file="/ws/b.launch.xml"/>"#),
            )
            .file("/ws/b.launch.xml", &groups(2, ""));
        run(&host, "/ws/main.launch.xml", &[]).unwrap();
        // A value doubled by <let>s.
        let doubling = format!(
            "<launch><let name=\"x\" value=\"ab\"/>\n{}</launch>",
            "<let name=\"x\" value=\"$(var x)$(var x)\"/>\n".repeat(40)
        );
        let e = limit_error(&host_with(&doubling));
        assert!(
            e.starts_with("/ws/main.launch.xml:18:1: a substitution result is longer than 128 KiB"),
            "{e}"
        );
        // Many large values.
        let many = format!(
            "<launch><let name=\"x\" value=\"ab\"/>{}{}</launch>",
            "<let name=\"x\" value=\"$(var x)$(var x)\"/>".repeat(15),
            "<let name=\"y\" value=\"$(var x)\"/>".repeat(1_100)
        );
        let e = limit_error(&host_with(&many));
        assert!(
            e.contains("substitutions expand to more than 64 MiB in total"),
            "{e}"
        );
    }

    #[test]
    fn deprecated_files_warn() {
        let host = host_with(r#"<launch deprecated="use new.launch.xml"/>"#);
        let plan = run(&host, "/ws/main.launch.xml", &[]).unwrap();
        assert_eq!(plan.warnings.len(), 1);
        assert!(plan.warnings[0].contains("use new.launch.xml"));
    }
}
