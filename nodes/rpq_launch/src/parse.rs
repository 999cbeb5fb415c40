//! XML launch file → syntax tree, with every tag, attribute and substitution checked.
//!
//! Tag and attribute names are those of ROS 2's XML frontend (Jazzy, `launch` and
//! `launch_ros`). Whatever rpq_launch cannot honour is refused here with its file, line and
//! column, before anything runs, as ROS 2 itself refuses unknown attributes.

use crate::error::{LaunchError, Span};
use crate::limits::{MAX_ELEMENT_DEPTH, MAX_TIME_ATTRIBUTE_S};
use crate::params::ParamType;
use crate::subst::{parse_template, split_command_line, Call, Template};

/// A parsed launch file.
#[derive(Debug, Clone, PartialEq)]
pub struct LaunchFile {
    /// The file name used in messages and for `$(dirname)`/`$(filename)`.
    pub path: String,
    /// `deprecated="..."` on `<launch>`.
    pub deprecated: Option<String>,
    /// The actions in document order.
    pub actions: Vec<Action>,
}

/// One action with its location and optional `if`/`unless`.
#[derive(Debug, Clone, PartialEq)]
pub struct Action {
    /// Where the element starts.
    pub span: Span,
    /// `if="..."` or `unless="..."`.
    pub condition: Option<Condition>,
    /// What the action does.
    pub kind: ActionKind,
}

/// `if` / `unless` attribute.
#[derive(Debug, Clone, PartialEq)]
pub enum Condition {
    /// Run when the expression is true.
    If(Template),
    /// Run when the expression is false.
    Unless(Template),
}

/// The supported actions.
#[derive(Debug, Clone, PartialEq)]
pub enum ActionKind {
    /// `<arg>`
    Arg(ArgDecl),
    /// `<let name value>`
    Let {
        /// Configuration name.
        name: Template,
        /// Value.
        value: Template,
    },
    /// `<node>`
    Node(Box<NodeDecl>),
    /// `<include file>`
    Include(IncludeDecl),
    /// `<group>`
    Group {
        /// `scoped` (default true): configurations, namespace and environment set inside
        /// do not leak out.
        scoped: bool,
        /// Children.
        actions: Vec<Action>,
    },
    /// `<push_ros_namespace namespace>` / `<push-ros-namespace namespace>`
    PushRosNamespace {
        /// Namespace to push.
        namespace: Template,
    },
    /// `<set_env name value>`
    SetEnv {
        /// Variable.
        name: Template,
        /// Value.
        value: Template,
    },
    /// `<unset_env name>`
    UnsetEnv {
        /// Variable.
        name: Template,
    },
}

/// `<arg name default description>` with optional `<choice value>` children.
#[derive(Debug, Clone, PartialEq)]
pub struct ArgDecl {
    /// Argument name.
    pub name: String,
    /// Default value.
    pub default: Option<Template>,
    /// The default as written (for `--show-args`).
    pub default_text: Option<String>,
    /// Description.
    pub description: Option<String>,
    /// Allowed values (empty: any).
    pub choices: Vec<String>,
}

/// `<include file>` with `<arg name value>` children.
#[derive(Debug, Clone, PartialEq)]
pub struct IncludeDecl {
    /// The file to include.
    pub file: Template,
    /// Arguments, in order.
    pub args: Vec<(Template, Template)>,
}

/// Where a process's output goes (`output` attribute).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputMode {
    /// stdout and stderr to the screen.
    Screen,
    /// stdout to the launch log file, stderr to the screen (ROS 2's default).
    Log,
    /// both to the screen and to the launch log file.
    Both,
}

/// `<node>`
#[derive(Debug, Clone, PartialEq)]
pub struct NodeDecl {
    /// `pkg`
    pub package: Template,
    /// `exec`
    pub executable: Template,
    /// `name`
    pub name: Option<Template>,
    /// `namespace`
    pub namespace: Option<Template>,
    /// `exec_name`: label of the process in output prefixes.
    pub exec_name: Option<Template>,
    /// `args`, split into arguments.
    pub args: Vec<Template>,
    /// `ros_args`, split into arguments.
    pub ros_args: Option<Vec<Template>>,
    /// `launch-prefix`
    pub launch_prefix: Option<Template>,
    /// `output`
    pub output: Option<Template>,
    /// `cwd`
    pub cwd: Option<Template>,
    /// `respawn`
    pub respawn: Option<Template>,
    /// `respawn_delay` in seconds.
    pub respawn_delay: Option<f64>,
    /// `respawn_max_retries` (negative: unlimited).
    pub respawn_max_retries: Option<i64>,
    /// `sigterm_timeout` in seconds.
    pub sigterm_timeout: Option<f64>,
    /// `sigkill_timeout` in seconds.
    pub sigkill_timeout: Option<f64>,
    /// `on_exit="shutdown"`
    pub shutdown_on_exit: bool,
    /// `<param>` children in order.
    pub params: Vec<ParamDecl>,
    /// `<remap from to>` children in order.
    pub remaps: Vec<(Template, Template)>,
    /// `<env name value>` children in order.
    pub env: Vec<(Template, Template)>,
}

/// `<param>` child of `<node>`.
#[derive(Debug, Clone, PartialEq)]
pub enum ParamDecl {
    /// `<param from="file.yaml"/>`
    File {
        /// Where.
        span: Span,
        /// Parameter file.
        from: Template,
    },
    /// `<param name="..." value="..."/>` or nested `<param name="..."><param .../></param>`
    Value {
        /// Where.
        span: Span,
        /// Name (a prefix for nested parameters).
        name: Template,
        /// The value.
        value: ParamValueDecl,
    },
}

/// Value side of a `<param name=...>`.
#[derive(Debug, Clone, PartialEq)]
pub enum ParamValueDecl {
    /// `value="..."` with optional `type`.
    Scalar {
        /// The value.
        value: Template,
        /// `type`.
        ty: Option<ParamType>,
    },
    /// `value="a,b,c" value-sep=","`: each item a template.
    Separated {
        /// The items.
        items: Vec<Template>,
        /// `type`.
        ty: Option<ParamType>,
    },
    /// Nested `<param>` children: names are joined with `.`.
    Nested(Vec<(Span, Template, ParamValueDecl)>),
}

/// Supported substitutions and how many arguments each takes.
const SUBSTITUTIONS: &[(&str, usize, usize)] = &[
    ("var", 1, 2),
    ("env", 1, 2),
    ("find-pkg-share", 1, 1),
    ("find-pkg-prefix", 1, 1),
    ("dirname", 0, 0),
    ("filename", 0, 0),
    ("anon", 1, 1),
    ("not", 1, 1),
    ("and", 2, 2),
    ("or", 2, 2),
    ("equals", 2, 2),
    ("not-equals", 2, 2),
];

fn substitution_hint(name: &str) -> String {
    match name {
        "eval" => "$(eval) evaluates Python, which rpq_launch does not embed; use $(equals), \
                   $(not-equals), $(not), $(and) or $(or) for conditions"
            .to_string(),
        "optenv" => "$(optenv) is ROS 1; ROS 2 spells it $(env NAME default)".to_string(),
        "arg" => "$(arg) is ROS 1; ROS 2 spells it $(var name)".to_string(),
        "find" => "$(find) is ROS 1; ROS 2 spells it $(find-pkg-share pkg)".to_string(),
        "command" | "exec-in-pkg" | "find-exec" | "file-content" | "param" | "if" | "any"
        | "all" | "log_dir" | "launch_log_dir" => format!(
            "$({name}) is a ROS 2 substitution that rpq_launch does not support; supported: {}",
            supported_substitutions()
        ),
        _ => format!(
            "not a ROS 2 substitution; supported: {}",
            supported_substitutions()
        ),
    }
}

fn supported_substitutions() -> String {
    SUBSTITUTIONS
        .iter()
        .map(|(n, _, _)| *n)
        .collect::<Vec<_>>()
        .join(", ")
}

const ACTION_TAGS: &str =
    "arg, let, node, include, group, push_ros_namespace, push-ros-namespace, set_env, unset_env";

fn tag_hint(tag: &str) -> String {
    match tag {
        "set-env" => "ROS 2 spells it <set_env>".to_string(),
        "unset-env" => "ROS 2 spells it <unset_env>".to_string(),
        "executable"
        | "timer"
        | "log"
        | "shutdown"
        | "reset"
        | "reset_env"
        | "append_env"
        | "set_parameter"
        | "set_parameters_from_file"
        | "set_remap"
        | "set_ros_log_dir"
        | "set_use_sim_time"
        | "node_container"
        | "load_composable_node"
        | "ros_timer" => {
            format!(
                "a ROS 2 launch action that rpq_launch does not support; supported: {ACTION_TAGS}"
            )
        }
        "param" | "remap" | "env" => format!("<{tag}> belongs inside <node>"),
        "rosparam" | "machine" | "test" => format!("<{tag}> is ROS 1; not a ROS 2 launch tag"),
        _ => format!("not a ROS 2 launch tag; supported: {ACTION_TAGS}"),
    }
}

/// `text` for an error message: at most 200 characters, the rest elided.
fn shortened(text: &str) -> String {
    const SHOWN: usize = 200;
    match text.char_indices().nth(SHOWN) {
        Some((end, _)) => format!("{}... ({} more bytes)", &text[..end], text.len() - end),
        None => text.to_string(),
    }
}

/// Parses a launch file from its text. `path` is used in messages and by `$(dirname)`.
///
/// ```
/// use rpq_launch::parse::{parse_launch, ActionKind};
/// let f = parse_launch("demo.launch.xml", r#"<launch>
///   <arg name="rate" default="50"/>
///   <node pkg="robot_sim" exec="robot_sim" name="sim"/>
/// </launch>"#).unwrap();
/// assert!(matches!(f.actions[0].kind, ActionKind::Arg(_)));
/// assert!(rpq_launch::parse::parse_launch("x.xml", "<launch><foo/></launch>").is_err());
/// ```
pub fn parse_launch(path: &str, text: &str) -> Result<LaunchFile, LaunchError> {
    let doc = roxmltree::Document::parse(text).map_err(|e| LaunchError::Xml {
        file: path.to_string(),
        message: e.to_string(),
    })?;
    let ctx = Ctx { path, doc: &doc };
    let root = doc.root_element();
    ctx.check_depth(root)?;
    let tag = ctx.tag(root)?;
    if tag != "launch" {
        return Err(LaunchError::InvalidElement {
            span: ctx.span(root),
            reason: format!("the root tag must be <launch>, found <{tag}>"),
        });
    }
    let el = ctx.element(root, &["deprecated"])?;
    let deprecated = el.raw("deprecated").map(str::to_string);
    let actions = ctx.actions(root)?;
    Ok(LaunchFile {
        path: path.to_string(),
        deprecated,
        actions,
    })
}

struct Ctx<'a, 'input> {
    path: &'a str,
    doc: &'a roxmltree::Document<'input>,
}

type Node<'a, 'input> = roxmltree::Node<'a, 'input>;

/// An element whose attributes were checked against the allowed list.
struct El<'a, 'input> {
    node: Node<'a, 'input>,
    tag: String,
    span: Span,
}

impl<'a, 'input> El<'a, 'input> {
    fn raw(&self, name: &str) -> Option<&'a str> {
        self.node.attribute(name)
    }
}

impl<'a, 'input> Ctx<'a, 'input> {
    /// Refuses elements nested deeper than [`MAX_ELEMENT_DEPTH`] before the recursive
    /// descent below builds anything: one pass in document order, where each element's depth
    /// is its parent's plus one (indexed by node id).
    fn check_depth(&self, root: Node<'a, 'input>) -> Result<(), LaunchError> {
        let mut depth = vec![0usize; self.doc.descendants().count() + 1];
        for n in root.descendants().filter(|n| n.is_element()) {
            let d = n.parent().map_or(0, |p| depth[p.id().get_usize()]) + 1;
            if d > MAX_ELEMENT_DEPTH {
                return Err(LaunchError::Limit {
                    span: self.span(n),
                    reason: format!(
                        "elements nested deeper than {MAX_ELEMENT_DEPTH} levels \
                         (rpq_launch's limit)"
                    ),
                });
            }
            depth[n.id().get_usize()] = d;
        }
        Ok(())
    }

    fn span_at(&self, pos: usize) -> Span {
        let p = self.doc.text_pos_at(pos);
        Span {
            file: self.path.to_string(),
            line: p.row,
            column: p.col,
        }
    }

    fn span(&self, node: Node) -> Span {
        self.span_at(node.range().start)
    }

    fn tag(&self, node: Node) -> Result<String, LaunchError> {
        if node.tag_name().namespace().is_some() {
            return Err(LaunchError::UnsupportedTag {
                span: self.span(node),
                tag: node.tag_name().name().to_string(),
                hint: "XML namespaces are not part of the ROS 2 launch format".to_string(),
            });
        }
        Ok(node.tag_name().name().to_string())
    }

    /// Checks attributes against `allowed` (`if`/`unless` must be listed explicitly).
    fn element(
        &self,
        node: Node<'a, 'input>,
        allowed: &[&str],
    ) -> Result<El<'a, 'input>, LaunchError> {
        let tag = self.tag(node)?;
        let span = self.span(node);
        for attr in node.attributes() {
            if attr.namespace().is_some() || !allowed.contains(&attr.name()) {
                return Err(LaunchError::UnsupportedAttribute {
                    span: self.span_at(attr.range().start),
                    tag,
                    attribute: attr.name().to_string(),
                    supported: if allowed.is_empty() {
                        "none".to_string()
                    } else {
                        allowed.join(", ")
                    },
                });
            }
        }
        Ok(El { node, tag, span })
    }

    fn children(&self, node: Node<'a, 'input>) -> Result<Vec<Node<'a, 'input>>, LaunchError> {
        let mut out = Vec::new();
        for child in node.children() {
            if child.is_element() {
                out.push(child);
            } else if child.is_text() {
                let text = child.text().unwrap_or("");
                if !text.trim().is_empty() {
                    return Err(LaunchError::InvalidElement {
                        span: self.span(child),
                        reason: format!(
                            "unexpected text {:?} inside <{}>; ROS 2 launch files carry \
                             everything in attributes",
                            text.trim(),
                            node.tag_name().name()
                        ),
                    });
                }
            }
        }
        Ok(out)
    }

    fn no_children(&self, el: &El) -> Result<(), LaunchError> {
        if let Some(child) = self.children(el.node)?.first() {
            return Err(LaunchError::UnsupportedTag {
                span: self.span(*child),
                tag: child.tag_name().name().to_string(),
                hint: format!("<{}> takes no child elements", el.tag),
            });
        }
        Ok(())
    }

    fn template(&self, el: &El, attr: &str, text: &str) -> Result<Template, LaunchError> {
        let span = el
            .node
            .attribute_node(attr)
            .map(|a| self.span_at(a.range().start))
            .unwrap_or_else(|| el.span.clone());
        let t = parse_template(text).map_err(|e| LaunchError::SubstitutionSyntax {
            span: span.clone(),
            text: shortened(text),
            reason: e.to_string(),
        })?;
        check_calls(&t, &span)?;
        Ok(t)
    }

    fn opt_template(&self, el: &El, attr: &str) -> Result<Option<Template>, LaunchError> {
        el.raw(attr).map(|t| self.template(el, attr, t)).transpose()
    }

    fn req_template(&self, el: &El, attr: &str) -> Result<Template, LaunchError> {
        let text = self.required(el, attr)?;
        self.template(el, attr, text)
    }

    fn required(&self, el: &El<'a, 'input>, attr: &str) -> Result<&'a str, LaunchError> {
        el.raw(attr).ok_or_else(|| LaunchError::MissingAttribute {
            span: el.span.clone(),
            tag: el.tag.clone(),
            attribute: attr.to_string(),
        })
    }

    fn invalid(&self, el: &El, attr: &str, reason: impl Into<String>) -> LaunchError {
        LaunchError::InvalidAttribute {
            span: el.span.clone(),
            tag: el.tag.clone(),
            attribute: attr.to_string(),
            reason: reason.into(),
        }
    }

    fn command_line(&self, el: &El, attr: &str) -> Result<Option<Vec<Template>>, LaunchError> {
        let Some(t) = self.opt_template(el, attr)? else {
            return Ok(None);
        };
        split_command_line(&t)
            .map(Some)
            .map_err(|e| self.invalid(el, attr, e))
    }

    fn static_float(&self, el: &El, attr: &str) -> Result<Option<f64>, LaunchError> {
        let Some(text) = el.raw(attr) else {
            return Ok(None);
        };
        let v: f64 = text
            .trim()
            .parse()
            .map_err(|_| self.invalid(el, attr, format!("'{text}' is not a number")))?;
        if !v.is_finite() || v < 0.0 {
            return Err(self.invalid(el, attr, format!("'{text}' must be a finite number >= 0")));
        }
        if v > MAX_TIME_ATTRIBUTE_S {
            return Err(self.invalid(
                el,
                attr,
                format!("'{text}' is more than {MAX_TIME_ATTRIBUTE_S:e} s (rpq_launch's limit)"),
            ));
        }
        Ok(Some(v))
    }

    fn static_bool(&self, el: &El, attr: &str) -> Result<Option<bool>, LaunchError> {
        let Some(text) = el.raw(attr) else {
            return Ok(None);
        };
        match crate::params::typed_value(text, Some(ParamType::Bool)) {
            Ok(crate::params::ParamValue::Bool(b)) => Ok(Some(b)),
            _ => Err(self.invalid(el, attr, format!("'{text}' is not a boolean"))),
        }
    }

    fn condition(&self, el: &El) -> Result<Option<Condition>, LaunchError> {
        let if_ = self.opt_template(el, "if")?;
        let unless = self.opt_template(el, "unless")?;
        match (if_, unless) {
            (Some(_), Some(_)) => Err(LaunchError::InvalidElement {
                span: el.span.clone(),
                reason: "'if' and 'unless' cannot be used together".to_string(),
            }),
            (Some(t), None) => Ok(Some(Condition::If(t))),
            (None, Some(t)) => Ok(Some(Condition::Unless(t))),
            (None, None) => Ok(None),
        }
    }

    fn actions(&self, parent: Node<'a, 'input>) -> Result<Vec<Action>, LaunchError> {
        self.children(parent)?
            .into_iter()
            .map(|child| self.action(child))
            .collect()
    }

    fn action(&self, node: Node<'a, 'input>) -> Result<Action, LaunchError> {
        let tag = self.tag(node)?;
        let (el, kind) = match tag.as_str() {
            "arg" => {
                let el = self.element(node, &["name", "default", "description", "if", "unless"])?;
                let name = crate::subst::unescape(self.required(&el, "name")?);
                let default_text = el.raw("default").map(str::to_string);
                let default = self.opt_template(&el, "default")?;
                let description = el.raw("description").map(crate::subst::unescape);
                let mut choices = Vec::new();
                for child in self.children(node)? {
                    let c = self.element(child, &["value"])?;
                    if c.tag != "choice" {
                        return Err(LaunchError::UnsupportedTag {
                            span: c.span,
                            tag: c.tag,
                            hint: "<arg> only takes <choice value=\"...\"/> children".to_string(),
                        });
                    }
                    self.no_children(&c)?;
                    choices.push(crate::subst::unescape(self.required(&c, "value")?));
                }
                let kind = ActionKind::Arg(ArgDecl {
                    name,
                    default,
                    default_text,
                    description,
                    choices,
                });
                (el, kind)
            }
            "let" => {
                let el = self.element(node, &["name", "value", "if", "unless"])?;
                self.no_children(&el)?;
                let kind = ActionKind::Let {
                    name: self.req_template(&el, "name")?,
                    value: self.req_template(&el, "value")?,
                };
                (el, kind)
            }
            "node" => {
                let el = self.element(
                    node,
                    &[
                        "pkg",
                        "exec",
                        "name",
                        "namespace",
                        "exec_name",
                        "args",
                        "ros_args",
                        "launch-prefix",
                        "output",
                        "cwd",
                        "respawn",
                        "respawn_delay",
                        "respawn_max_retries",
                        "sigterm_timeout",
                        "sigkill_timeout",
                        "on_exit",
                        "if",
                        "unless",
                    ],
                )?;
                let kind = ActionKind::Node(Box::new(self.node(&el)?));
                (el, kind)
            }
            "include" => {
                let el = self.element(node, &["file", "if", "unless"])?;
                let file = self.req_template(&el, "file")?;
                let mut args = Vec::new();
                for child in self.children(node)? {
                    let a = self.element(child, &["name", "value"])?;
                    if a.tag != "arg" {
                        return Err(LaunchError::UnsupportedTag {
                            span: a.span,
                            tag: a.tag,
                            hint: "<include> only takes <arg name=\"...\" value=\"...\"/> children"
                                .to_string(),
                        });
                    }
                    self.no_children(&a)?;
                    args.push((
                        self.req_template(&a, "name")?,
                        self.req_template(&a, "value")?,
                    ));
                }
                (el, ActionKind::Include(IncludeDecl { file, args }))
            }
            "group" => {
                let el = self.element(node, &["scoped", "if", "unless"])?;
                let scoped = self.static_bool(&el, "scoped")?.unwrap_or(true);
                let actions = self.actions(node)?;
                (el, ActionKind::Group { scoped, actions })
            }
            "push_ros_namespace" | "push-ros-namespace" => {
                let el = self.element(node, &["namespace", "if", "unless"])?;
                self.no_children(&el)?;
                let namespace = self.req_template(&el, "namespace")?;
                (el, ActionKind::PushRosNamespace { namespace })
            }
            "set_env" => {
                let el = self.element(node, &["name", "value", "if", "unless"])?;
                self.no_children(&el)?;
                let kind = ActionKind::SetEnv {
                    name: self.req_template(&el, "name")?,
                    value: self.req_template(&el, "value")?,
                };
                (el, kind)
            }
            "unset_env" => {
                let el = self.element(node, &["name", "if", "unless"])?;
                self.no_children(&el)?;
                let kind = ActionKind::UnsetEnv {
                    name: self.req_template(&el, "name")?,
                };
                (el, kind)
            }
            _ => {
                return Err(LaunchError::UnsupportedTag {
                    span: self.span(node),
                    hint: tag_hint(&tag),
                    tag,
                })
            }
        };
        let condition = self.condition(&el)?;
        Ok(Action {
            span: el.span,
            condition,
            kind,
        })
    }

    fn node(&self, el: &El<'a, 'input>) -> Result<NodeDecl, LaunchError> {
        let package = match el.raw("pkg") {
            Some(p) => self.template(el, "pkg", p)?,
            None => {
                return Err(LaunchError::MissingAttribute {
                    span: el.span.clone(),
                    tag: el.tag.clone(),
                    attribute: "pkg".to_string(),
                })
            }
        };
        let output = self.opt_template(el, "output")?;
        if let Some(o) = output.as_ref().and_then(Template::as_literal) {
            parse_output(&o).map_err(|e| self.invalid(el, "output", e))?;
        }
        let shutdown_on_exit = match el.raw("on_exit") {
            None => false,
            Some("shutdown") => true,
            Some(other) => {
                return Err(self.invalid(
                    el,
                    "on_exit",
                    format!("'{other}': only on_exit=\"shutdown\" is supported (as in ROS 2)"),
                ))
            }
        };
        let respawn_max_retries = match el.raw("respawn_max_retries") {
            None => None,
            Some(t) => Some(t.trim().parse::<i64>().map_err(|_| {
                self.invalid(
                    el,
                    "respawn_max_retries",
                    format!("'{t}' is not an integer"),
                )
            })?),
        };
        let mut decl = NodeDecl {
            package,
            executable: self.req_template(el, "exec")?,
            name: self.opt_template(el, "name")?,
            namespace: self.opt_template(el, "namespace")?,
            exec_name: self.opt_template(el, "exec_name")?,
            args: self.command_line(el, "args")?.unwrap_or_default(),
            ros_args: self.command_line(el, "ros_args")?,
            launch_prefix: self.opt_template(el, "launch-prefix")?,
            output,
            cwd: self.opt_template(el, "cwd")?,
            respawn: self.opt_template(el, "respawn")?,
            respawn_delay: self.static_float(el, "respawn_delay")?,
            respawn_max_retries,
            sigterm_timeout: self.static_float(el, "sigterm_timeout")?,
            sigkill_timeout: self.static_float(el, "sigkill_timeout")?,
            shutdown_on_exit,
            params: Vec::new(),
            remaps: Vec::new(),
            env: Vec::new(),
        };
        for child in self.children(el.node)? {
            let tag = self.tag(child)?;
            match tag.as_str() {
                "param" => decl.params.push(self.param(child)?),
                "remap" => {
                    let r = self.element(child, &["from", "to"])?;
                    self.no_children(&r)?;
                    decl.remaps
                        .push((self.req_template(&r, "from")?, self.req_template(&r, "to")?));
                }
                "env" => {
                    let e = self.element(child, &["name", "value"])?;
                    self.no_children(&e)?;
                    decl.env.push((
                        self.req_template(&e, "name")?,
                        self.req_template(&e, "value")?,
                    ));
                }
                _ => {
                    return Err(LaunchError::UnsupportedTag {
                        span: self.span(child),
                        tag,
                        hint: "<node> takes only <param>, <remap> and <env> children".to_string(),
                    })
                }
            }
        }
        Ok(decl)
    }

    fn param(&self, node: Node<'a, 'input>) -> Result<ParamDecl, LaunchError> {
        let el = self.element(
            node,
            &["name", "value", "type", "value-sep", "from", "allow_substs"],
        )?;
        if let Some(from) = el.raw("from") {
            for other in ["name", "value", "type", "value-sep"] {
                if el.raw(other).is_some() {
                    return Err(LaunchError::InvalidElement {
                        span: el.span.clone(),
                        reason: format!("<param from=...> cannot also have '{other}'"),
                    });
                }
            }
            match el.raw("allow_substs") {
                None | Some("false") | Some("False") | Some("0") => {}
                Some(_) => {
                    return Err(self.invalid(
                        &el,
                        "allow_substs",
                        "substitutions inside parameter files are not supported by rpq_launch",
                    ))
                }
            }
            self.no_children(&el)?;
            let from = self.template(&el, "from", from)?;
            return Ok(ParamDecl::File {
                span: el.span,
                from,
            });
        }
        if el.raw("allow_substs").is_some() {
            return Err(LaunchError::InvalidElement {
                span: el.span.clone(),
                reason: "'allow_substs' can only be used together with 'from'".to_string(),
            });
        }
        let (span, name, value) = self.param_value(node)?;
        Ok(ParamDecl::Value { span, name, value })
    }

    fn param_value(
        &self,
        node: Node<'a, 'input>,
    ) -> Result<(Span, Template, ParamValueDecl), LaunchError> {
        let el = self.element(
            node,
            &["name", "value", "type", "value-sep", "from", "allow_substs"],
        )?;
        if el.tag != "param" {
            return Err(LaunchError::UnsupportedTag {
                span: el.span,
                tag: el.tag,
                hint: "only <param> can be nested in <param>".to_string(),
            });
        }
        for only_top in ["from", "allow_substs"] {
            if el.raw(only_top).is_some() {
                return Err(LaunchError::InvalidElement {
                    span: el.span.clone(),
                    reason: format!("a nested <param> cannot have '{only_top}'"),
                });
            }
        }
        let name = self.req_template(&el, "name")?;
        let ty = match el.raw("type") {
            None => None,
            Some(t) => ParamType::from_identifier(t).map_err(|e| self.invalid(&el, "type", e))?,
        };
        let children = self.children(node)?;
        let value = match el.raw("value") {
            Some(v) => {
                if !children.is_empty() {
                    return Err(LaunchError::InvalidElement {
                        span: el.span.clone(),
                        reason: "nested parameters and a 'value' attribute are mutually exclusive"
                            .to_string(),
                    });
                }
                match el.raw("value-sep") {
                    None => ParamValueDecl::Scalar {
                        value: self.template(&el, "value", v)?,
                        ty,
                    },
                    Some("") => return Err(self.invalid(&el, "value-sep", "empty separator")),
                    Some(sep) => ParamValueDecl::Separated {
                        items: v
                            .split(sep)
                            .map(|item| self.template(&el, "value", item))
                            .collect::<Result<_, _>>()?,
                        ty,
                    },
                }
            }
            None => {
                if el.raw("type").is_some() || el.raw("value-sep").is_some() {
                    return Err(LaunchError::InvalidElement {
                        span: el.span.clone(),
                        reason: "'type'/'value-sep' need a 'value' attribute".to_string(),
                    });
                }
                if children.is_empty() {
                    return Err(LaunchError::InvalidElement {
                        span: el.span.clone(),
                        reason: "<param name=...> needs a 'value' attribute or nested <param> \
                                 children"
                            .to_string(),
                    });
                }
                ParamValueDecl::Nested(
                    children
                        .into_iter()
                        .map(|c| self.param_value(c))
                        .collect::<Result<_, _>>()?,
                )
            }
        };
        Ok((el.span, name, value))
    }
}

/// Parses an `output` value.
pub fn parse_output(text: &str) -> Result<OutputMode, String> {
    match text {
        "screen" => Ok(OutputMode::Screen),
        "log" => Ok(OutputMode::Log),
        "both" => Ok(OutputMode::Both),
        "own_log" | "full" => Err(format!(
            "output=\"{text}\" (separate log files per process) is not supported; use screen, \
             log or both"
        )),
        other => Err(format!("'{other}' is not one of screen, log, both")),
    }
}

fn check_calls(t: &Template, span: &Span) -> Result<(), LaunchError> {
    t.visit_calls(&mut |c: &Call| {
        let Some(&(_, min, max)) = SUBSTITUTIONS.iter().find(|(n, _, _)| *n == c.name) else {
            return Err(LaunchError::UnsupportedSubstitution {
                span: span.clone(),
                name: c.name.clone(),
                hint: substitution_hint(&c.name),
            });
        };
        if c.args.len() < min || c.args.len() > max {
            let expected = if min == max {
                format!("{min}")
            } else {
                format!("{min} or {max}")
            };
            return Err(LaunchError::SubstitutionSyntax {
                span: span.clone(),
                text: format!("$({} ...)", c.name),
                reason: format!(
                    "$({}) takes {expected} argument(s), got {}",
                    c.name,
                    c.args.len()
                ),
            });
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(xml: &str) -> Result<LaunchFile, LaunchError> {
        parse_launch("t.launch.xml", xml)
    }

    fn err(xml: &str) -> String {
        parse(xml).expect_err("should be rejected").to_string()
    }

    #[test]
    fn parses_supported_tags() {
        let f = parse(
            r#"<launch deprecated="use other.launch.xml">
  <arg name="robot" default="rx60" description="robot model">
    <choice value="rx60"/><choice value="ur5"/>
  </arg>
  <let name="cfg" value="$(find-pkg-share robot_sim)/config"/>
  <set_env name="A" value="1"/>
  <unset_env name="B"/>
  <group scoped="false" if="$(var sim)">
    <push-ros-namespace namespace="arm"/>
    <push_ros_namespace namespace="left"/>
    <include file="$(dirname)/other.launch.xml"><arg name="x" value="1"/></include>
  </group>
  <node pkg="robot_sim" exec="robot_sim" name="sim" namespace="ns" args="--a 'b c'"
        output="screen" respawn="true" respawn_delay="0.5" unless="$(var off)">
    <param name="rate" value="100"/>
    <param from="$(var cfg)/sim.yaml"/>
    <param name="limits"><param name="j1" value="[1.0, 2.0]"/></param>
    <param name="names" value="a,b" value-sep="," type="list_of_str"/>
    <remap from="joint_states" to="/js"/>
    <env name="RUST_LOG" value="debug"/>
  </node>
</launch>"#,
        )
        .unwrap();
        assert_eq!(f.deprecated.as_deref(), Some("use other.launch.xml"));
        assert_eq!(f.actions.len(), 6);
        let ActionKind::Arg(a) = &f.actions[0].kind else {
            panic!()
        };
        assert_eq!(a.name, "robot");
        assert_eq!(a.choices, vec!["rx60", "ur5"]);
        assert_eq!(a.default_text.as_deref(), Some("rx60"));
        assert_eq!(f.actions[0].span.line, 2);
        let ActionKind::Group { scoped, actions } = &f.actions[4].kind else {
            panic!()
        };
        assert!(!scoped);
        assert_eq!(actions.len(), 3);
        assert!(matches!(f.actions[4].condition, Some(Condition::If(_))));
        let ActionKind::Node(n) = &f.actions[5].kind else {
            panic!()
        };
        assert_eq!(n.args.len(), 2);
        assert_eq!(n.args[1].as_literal().unwrap(), "b c");
        assert_eq!(n.params.len(), 4);
        assert_eq!(n.remaps.len(), 1);
        assert_eq!(n.env.len(), 1);
        assert_eq!(n.respawn_delay, Some(0.5));
        assert!(matches!(f.actions[5].condition, Some(Condition::Unless(_))));
        assert!(matches!(
            &n.params[2],
            ParamDecl::Value { value: ParamValueDecl::Nested(v), .. } if v.len() == 1
        ));
        assert!(matches!(
            &n.params[3],
            ParamDecl::Value { value: ParamValueDecl::Separated { items, ty: Some(ParamType::ListOfStr) }, .. } if items.len() == 2
        ));
    }

    #[test]
    fn rejects_unsupported_tags_with_location() {
        let e = err("<launch>\n  <timer period=\"1\"/>\n</launch>");
        assert!(e.contains("t.launch.xml:2:3"), "{e}");
        assert!(e.contains("<timer>"), "{e}");
        let e = err("<launch><set-env name=\"A\" value=\"1\"/></launch>");
        assert!(e.contains("set_env"), "{e}");
        let e = err("<launch><rosparam/></launch>");
        assert!(e.contains("ROS 1"), "{e}");
        let e = err("<launch><node pkg=\"p\" exec=\"e\"><foo/></node></launch>");
        assert!(e.contains("<foo>"), "{e}");
        let e = err("<launch><group><executable cmd=\"ls\"/></group></launch>");
        assert!(e.contains("<executable>"), "{e}");
        let e = err("<launch><include file=\"x\"><let name=\"a\" value=\"1\"/></include></launch>");
        assert!(e.contains("<let>"), "{e}");
        let e = err("<launch><arg name=\"a\"><bad/></arg></launch>");
        assert!(e.contains("<bad>"), "{e}");
        let e = err("<roslaunch/>");
        assert!(e.contains("root tag"), "{e}");
        assert!(err("<launch>").contains("XML"));
        let e = err("<launch>text</launch>");
        assert!(e.contains("unexpected text"), "{e}");
    }

    #[test]
    fn rejects_unsupported_attributes() {
        let e = err("<launch>\n<node pkg=\"p\" exec=\"e\" emulate_tty=\"true\"/></launch>");
        assert!(e.contains("t.launch.xml:2:"), "{e}");
        assert!(e.contains("'emulate_tty'"), "{e}");
        assert!(e.contains("supported:"), "{e}");
        assert!(err("<launch><group forwarding=\"false\"/></launch>").contains("'forwarding'"));
        assert!(err("<launch version=\"0.1\"/>").contains("'version'"));
        assert!(err("<launch><arg name=\"a\" value=\"1\"/></launch>").contains("'value'"));
        assert!(
            err("<launch><node pkg=\"p\" exec=\"e\" output=\"own_log\"/></launch>")
                .contains("own_log")
        );
        assert!(
            err("<launch><node pkg=\"p\" exec=\"e\" on_exit=\"restart\"/></launch>")
                .contains("on_exit")
        );
        assert!(
            err("<launch><node pkg=\"p\" exec=\"e\" respawn_delay=\"-1\"/></launch>")
                .contains("respawn_delay")
        );
    }

    #[test]
    fn rejects_missing_attributes_and_bad_combinations() {
        assert!(err("<launch><node exec=\"e\"/></launch>").contains("'pkg'"));
        assert!(err("<launch><node pkg=\"p\"/></launch>").contains("'exec'"));
        assert!(err("<launch><arg default=\"1\"/></launch>").contains("'name'"));
        assert!(err("<launch><let name=\"a\"/></launch>").contains("'value'"));
        assert!(
            err("<launch><arg name=\"a\" if=\"1\" unless=\"1\"/></launch>").contains("together")
        );
        assert!(
            err(r#"<launch><node pkg="p" exec="e"><param name="a"/></node></launch>"#)
                .contains("value")
        );
        assert!(err(
            r#"<launch><node pkg="p" exec="e"><param name="a" from="f.yaml"/></node></launch>"#
        )
        .contains("cannot also"));
        assert!(err(
            r#"<launch><node pkg="p" exec="e"><param from="f.yaml" allow_substs="true"/></node></launch>"#
        )
        .contains("allow_substs"));
        assert!(err(
            r#"<launch><node pkg="p" exec="e"><param name="a" value="1"><param name="b" value="2"/></param></node></launch>"#
        )
        .contains("mutually exclusive"));
        assert!(err(
            r#"<launch><node pkg="p" exec="e"><param name="a" value="1" type="double"/></node></launch>"#
        )
        .contains("unknown type"));
        assert!(err(r#"<launch><group scoped="maybe"/></launch>"#).contains("boolean"));
        assert!(
            err(r#"<launch><node pkg="p" exec="e" args="'open"/></launch>"#)
                .contains("closing quotation")
        );
    }

    #[test]
    fn rejects_unsupported_substitutions() {
        let e = err("<launch>\n <let name=\"a\" value=\"$(eval '1+1')\"/></launch>");
        assert!(e.contains("t.launch.xml:2:"), "{e}");
        assert!(e.contains("$(eval"), "{e}");
        assert!(
            err(r#"<launch><let name="a" value="$(optenv X)"/></launch>"#)
                .contains("$(env NAME default)")
        );
        assert!(
            err(r#"<launch><let name="a" value="$(command ls)"/></launch>"#)
                .contains("does not support")
        );
        assert!(err(r#"<launch><let name="a" value="$(nope)"/></launch>"#)
            .contains("not a ROS 2 substitution"));
        // nested, inside an unexecuted branch: still refused before anything runs
        assert!(err(
            r#"<launch><group if="false"><let name="a" value="$(var $(eval x))"/></group></launch>"#
        )
        .contains("$(eval"));
        assert!(err(r#"<launch><let name="a" value="$(var)"/></launch>"#).contains("argument"));
        assert!(
            err(r#"<launch><let name="a" value="$(dirname x)"/></launch>"#).contains("argument")
        );
        assert!(err(r#"<launch><let name="a" value="$(var x"/></launch>"#).contains("syntax"));
    }
}
