//! Node parameters declared once.
//!
//! Each node keeps one definition file, `params/<node>.yaml` in its package: every parameter with
//! its type, default, unit, bounds, allowed values, read-only flag and description. From it this
//! crate generates, at build time (the package's `build.rs` calls [`build`]):
//!
//! * the parameter declarations (`declarations() -> Vec<rpq_ros::params::ParamDecl>`), which
//!   `rpq_ros::params::Params` enforces at start-up and on remote sets;
//! * a typed struct (`<Node>Params`, one nested struct per group) read from the resolved
//!   parameters by `from_params`;
//! * the documented parameter file `config/<node>.yaml` (`CONFIG_YAML`); each package has a test
//!   that the committed file equals it ([`check_file`]; `RPQ_BLESS=1` rewrites the file).
//!
//! The definition format:
//!
//! ```yaml
//! node: admittance_controller
//! about: |
//!   Text put at the top of config/admittance_controller.yaml.
//! parameters:
//!   robot_description_file: {type: string, read_only: true, config: "urdf/rx60b.urdf",
//!                            description: "URDF of the robot."}
//!   limits:                     # a group: nested name `limits.max_linear_velocity`
//!     max_linear_velocity: {type: double, default: 0.1, unit: m/s, bounds: [1.0e-9, .inf],
//!                           read_only: true, description: "Largest tool speed."}
//! ```
//!
//! A mapping with a `type` key is a parameter, any other mapping a group. Keys of a parameter:
//!
//! | key | meaning |
//! |-----|---------|
//! | `type` | `bool`, `int`, `double`, `string`, `bool[]`, `int[]`, `double[]`, `string[]` |
//! | `description` | what the parameter means (required) |
//! | `default` | default value; none: the parameter must be given |
//! | `unit` | unit of the value (the suite's one convention: units live here, never in names) |
//! | `bounds` | `[lower, upper]`, inclusive, for `int`/`double` and each element of their arrays |
//! | `one_of` | allowed values of a `string` |
//! | `length` | fixed number of elements of an array (the struct field becomes `[T; N]`) |
//! | `read_only` | refuse remote `set_parameters` (default `false`) |
//! | `config` | value written in `config/<node>.yaml` when it is not the default |
//! | `example` | value shown commented out in `config/<node>.yaml` for an empty array |

#![warn(missing_docs)]

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_yaml::Value;

/// The kind of a parameter's value, or of each element of an array parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `bool`
    Bool,
    /// `int` (i64)
    Int,
    /// `double` (f64)
    Double,
    /// `string`
    String,
}

impl Kind {
    /// (definition name, Rust type, `ParamDecl` constructor, `Params` getter, `ParamType` variant).
    fn names(self) -> [&'static str; 5] {
        match self {
            Kind::Bool => ["bool", "bool", "bool", "bool", "Bool"],
            Kind::Int => ["int", "i64", "int", "i64", "Int"],
            Kind::Double => ["double", "f64", "double", "f64", "Double"],
            Kind::String => ["string", "String", "string", "str", "String"],
        }
    }
}

/// A parameter's type: a kind, alone or as an array (`double[]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Type {
    /// Kind of the value or of each element.
    pub kind: Kind,
    /// Whether the value is an array.
    pub array: bool,
}

impl Type {
    fn parse(s: &str) -> Option<Type> {
        let (base, array) = match s.strip_suffix("[]") {
            Some(b) => (b, true),
            None => (s, false),
        };
        [Kind::Bool, Kind::Int, Kind::Double, Kind::String]
            .into_iter()
            .find(|k| k.names()[0] == base)
            .map(|kind| Type { kind, array })
    }

    fn suffix(self) -> &'static str {
        if self.array {
            "[]"
        } else {
            ""
        }
    }

    /// The name used in definitions and in `config/<node>.yaml` comments (`double[]`).
    pub fn name(self) -> String {
        format!("{}{}", self.kind.names()[0], self.suffix())
    }

    /// (`ParamDecl` constructor, `Params` getter) in `rpq_ros::params`.
    fn api(self) -> (String, String) {
        let [_, _, ctor, getter, _] = self.kind.names();
        let tail = if self.array { "_array" } else { "" };
        (format!("{ctor}{tail}"), format!("{getter}{tail}"))
    }

    fn param_type_variant(self) -> String {
        let tail = if self.array { "Array" } else { "" };
        format!("{}{tail}", self.kind.names()[4])
    }
}

/// A scalar value of a definition.
#[derive(Debug, Clone, PartialEq)]
pub enum Scalar {
    /// A `bool`.
    Bool(bool),
    /// An `int`.
    Int(i64),
    /// A `double`.
    Double(f64),
    /// A `string`.
    String(String),
}

/// A typed value: one scalar, or the elements of an array.
#[derive(Debug, Clone, PartialEq)]
pub enum TypedValue {
    /// A scalar parameter's value.
    Scalar(Scalar),
    /// An array parameter's elements.
    Array(Vec<Scalar>),
}

/// One parameter of a definition.
#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    /// Full (dotted) name, e.g. `limits.max_linear_velocity`.
    pub name: String,
    /// Type.
    pub ty: Type,
    /// What it means.
    pub description: String,
    /// Default; `None`: required.
    pub default: Option<TypedValue>,
    /// Unit, empty for dimensionless values and non-numbers.
    pub unit: String,
    /// Inclusive bounds of numbers.
    pub bounds: Option<(f64, f64)>,
    /// Allowed strings; empty: any.
    pub one_of: Vec<String>,
    /// Fixed array length.
    pub length: Option<usize>,
    /// Refuses remote sets.
    pub read_only: bool,
    /// Value written in the generated config file instead of the default.
    pub config: Option<TypedValue>,
    /// Value shown commented out for an empty array.
    pub example: Option<TypedValue>,
}

/// A group of parameters (the top level is the unnamed group).
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    /// Dotted path of the group, empty at the top.
    pub path: String,
    /// Members in definition order.
    pub members: Vec<Member>,
}

/// A member of a group.
#[derive(Debug, Clone, PartialEq)]
pub enum Member {
    /// A parameter.
    Param(Param),
    /// A nested group.
    Group(Group),
}

/// A node's parameter definition.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeDef {
    /// Node name (default name of the node, key of its section in the config file).
    pub node: String,
    /// Text put at the top of the config file.
    pub about: String,
    /// The parameters.
    pub root: Group,
}

fn scalar(ty: Type, v: &Value) -> Option<Scalar> {
    Some(match (ty.kind, v) {
        (Kind::Bool, Value::Bool(b)) => Scalar::Bool(*b),
        (Kind::Int, Value::Number(n)) => Scalar::Int(n.as_i64()?),
        (Kind::Double, Value::Number(n)) => Scalar::Double(n.as_f64()?),
        (Kind::String, Value::String(s)) => Scalar::String(s.clone()),
        _ => return None,
    })
}

fn typed(ty: Type, v: &Value) -> Option<TypedValue> {
    if ty.array {
        let items = v.as_sequence()?;
        items
            .iter()
            .map(|x| scalar(ty, x))
            .collect::<Option<Vec<_>>>()
            .map(TypedValue::Array)
    } else {
        scalar(ty, v).map(TypedValue::Scalar)
    }
}

fn number(v: &Value) -> Option<f64> {
    v.as_f64()
}

impl Param {
    fn parse(name: String, map: &serde_yaml::Mapping) -> Result<Param, String> {
        let err = |m: String| format!("parameter `{name}`: {m}");
        for key in map.keys() {
            let k = key.as_str().unwrap_or("");
            if ![
                "type",
                "description",
                "default",
                "unit",
                "bounds",
                "one_of",
                "length",
                "read_only",
                "config",
                "example",
            ]
            .contains(&k)
            {
                return Err(err(format!("unknown key `{k}`")));
            }
        }
        let text = |k: &str| map.get(k).and_then(Value::as_str).map(str::to_string);
        let ty_name = text("type").ok_or_else(|| err("no `type`".into()))?;
        let ty = Type::parse(&ty_name).ok_or_else(|| err(format!("unknown type `{ty_name}`")))?;
        let description = text("description")
            .filter(|d| !d.trim().is_empty())
            .ok_or_else(|| err("no `description`".into()))?;
        let value = |k: &str| -> Result<Option<TypedValue>, String> {
            match map.get(k) {
                None => Ok(None),
                Some(v) => typed(ty, v)
                    .map(Some)
                    .ok_or_else(|| err(format!("`{k}` is not a {}", ty.name()))),
            }
        };
        let bounds = match map.get("bounds") {
            None => None,
            Some(v) => {
                let pair = v
                    .as_sequence()
                    .filter(|s| s.len() == 2)
                    .and_then(|s| Some((number(&s[0])?, number(&s[1])?)))
                    .ok_or_else(|| err("`bounds` must be [lower, upper]".into()))?;
                if !matches!(ty.kind, Kind::Int | Kind::Double) || pair.0 > pair.1 {
                    return Err(err(format!("bounds {pair:?} do not fit a {}", ty.name())));
                }
                Some(pair)
            }
        };
        let one_of = match map.get("one_of") {
            None => Vec::new(),
            Some(v) => {
                let items = v
                    .as_sequence()
                    .and_then(|s| s.iter().map(|x| x.as_str().map(str::to_string)).collect())
                    .ok_or_else(|| err("`one_of` must be a list of strings".into()))?;
                if ty
                    != (Type {
                        kind: Kind::String,
                        array: false,
                    })
                {
                    return Err(err("`one_of` is for strings".into()));
                }
                items
            }
        };
        let length = match map.get("length") {
            None => None,
            Some(v) => {
                let n = v
                    .as_u64()
                    .filter(|&n| n > 0)
                    .ok_or_else(|| err("`length` must be a positive integer".into()))?;
                if !ty.array {
                    return Err(err("`length` is for arrays".into()));
                }
                Some(n as usize)
            }
        };
        let read_only = match map.get("read_only") {
            None => false,
            Some(Value::Bool(b)) => *b,
            Some(_) => return Err(err("`read_only` must be true or false".into())),
        };
        let p = Param {
            unit: text("unit").unwrap_or_default(),
            default: value("default")?,
            config: value("config")?,
            example: value("example")?,
            name: name.clone(),
            ty,
            description: description.trim().to_string(),
            bounds,
            one_of,
            length,
            read_only,
        };
        for (what, v) in [
            ("default", &p.default),
            ("config", &p.config),
            ("example", &p.example),
        ] {
            if let Some(v) = v {
                p.check(v).map_err(|m| err(format!("{what}: {m}")))?;
            }
        }
        if p.length.is_some() && p.default.is_none() {
            return Err(err("a fixed-length array needs a default".into()));
        }
        Ok(p)
    }

    /// Checks a value against the bounds, allowed strings and length.
    fn check(&self, v: &TypedValue) -> Result<(), String> {
        let items: &[Scalar] = match v {
            TypedValue::Scalar(s) => std::slice::from_ref(s),
            TypedValue::Array(a) => {
                if let Some(n) = self.length.filter(|&n| n != a.len()) {
                    return Err(format!("{} elements, not {n}", a.len()));
                }
                a
            }
        };
        for s in items {
            let x = match s {
                Scalar::Int(i) => Some(*i as f64),
                Scalar::Double(d) => Some(*d),
                Scalar::String(t) if !self.one_of.is_empty() && !self.one_of.contains(t) => {
                    return Err(format!("`{t}` is not one of {:?}", self.one_of))
                }
                _ => None,
            };
            if let (Some(x), Some((lo, hi))) = (x, self.bounds) {
                if !(lo..=hi).contains(&x) {
                    return Err(format!("{x} is outside [{lo}, {hi}]"));
                }
            }
        }
        Ok(())
    }

    fn field(&self) -> &str {
        self.name.rsplit('.').next().unwrap_or(&self.name)
    }

    fn rust_type(&self) -> String {
        let s = self.ty.kind.names()[1];
        match (self.ty.array, self.length) {
            (false, _) => s.to_string(),
            (true, Some(n)) => format!("[{s}; {n}]"),
            (true, None) => format!("Vec<{s}>"),
        }
    }

    /// The description with its unit, as introspection tools show it.
    pub fn full_description(&self) -> String {
        if self.unit.is_empty() {
            self.description.clone()
        } else {
            format!("{} [{}]", self.description, self.unit)
        }
    }
}

fn valid_token(t: &str) -> bool {
    t.starts_with(|c: char| c.is_ascii_lowercase())
        && t.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

fn parse_group(path: &str, map: &serde_yaml::Mapping) -> Result<Group, String> {
    let mut members = Vec::new();
    for (k, v) in map {
        let key = k.as_str().filter(|k| valid_token(k)).ok_or_else(|| {
            format!("`{k:?}` in `{path}` is not a valid parameter name (snake_case)")
        })?;
        let name = if path.is_empty() {
            key.to_string()
        } else {
            format!("{path}.{key}")
        };
        let m = v
            .as_mapping()
            .ok_or_else(|| format!("`{name}` must be a mapping (a parameter or a group)"))?;
        if m.contains_key("type") {
            members.push(Member::Param(Param::parse(name, m)?));
        } else if m.is_empty() {
            return Err(format!("group `{name}` is empty"));
        } else {
            members.push(Member::Group(parse_group(&name, m)?));
        }
    }
    Ok(Group {
        path: path.to_string(),
        members,
    })
}

fn camel(s: &str) -> String {
    s.split(['_', '.'])
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect()
}

/// Rust literal of a f64 (always with a `.` or an exponent, infinities by name).
fn rust_f64(x: f64) -> String {
    if x == f64::INFINITY {
        "f64::INFINITY".into()
    } else if x == f64::NEG_INFINITY {
        "f64::NEG_INFINITY".into()
    } else {
        format!("{x:?}_f64")
    }
}

/// YAML text of a f64 that rcl reads back as a double (never as an integer).
fn yaml_f64(x: f64) -> String {
    if x.is_infinite() {
        return if x > 0.0 { ".inf" } else { "-.inf" }.into();
    }
    let s = if x != 0.0 && !(1e-4..1e5).contains(&x.abs()) {
        format!("{x:e}")
    } else {
        format!("{x:?}")
    };
    match s.find('e') {
        Some(i) if !s[..i].contains('.') => format!("{}.0{}", &s[..i], &s[i..]),
        _ => s,
    }
}

fn yaml_str(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn scalar_yaml(s: &Scalar) -> String {
    match s {
        Scalar::Bool(b) => b.to_string(),
        Scalar::Int(i) => i.to_string(),
        Scalar::Double(d) => yaml_f64(*d),
        Scalar::String(t) => yaml_str(t),
    }
}

fn value_yaml(v: &TypedValue) -> String {
    match v {
        TypedValue::Scalar(s) => scalar_yaml(s),
        TypedValue::Array(a) => format!(
            "[{}]",
            a.iter().map(scalar_yaml).collect::<Vec<_>>().join(", ")
        ),
    }
}

fn scalar_rust(s: &Scalar) -> String {
    match s {
        Scalar::Bool(b) => b.to_string(),
        Scalar::Int(i) => format!("{i}_i64"),
        Scalar::Double(d) => rust_f64(*d),
        Scalar::String(t) => format!("{t:?}"),
    }
}

fn value_rust(v: &TypedValue) -> String {
    match v {
        TypedValue::Scalar(Scalar::String(t)) => format!("{t:?}"),
        TypedValue::Scalar(s) => scalar_rust(s),
        TypedValue::Array(a) => format!(
            "vec![{}]",
            a.iter()
                .map(|s| match s {
                    Scalar::String(t) => format!("{t:?}.to_string()"),
                    s => scalar_rust(s),
                })
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// Splits text into lines of at most `width` characters (words longer than that stay whole).
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    for para in text.split('\n') {
        let mut line = String::new();
        for word in para.split_whitespace() {
            if !line.is_empty() && line.len() + 1 + word.len() > width {
                lines.push(std::mem::take(&mut line));
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
        lines.push(line);
    }
    lines
}

impl NodeDef {
    /// Parses a definition file's text.
    pub fn parse(text: &str) -> Result<NodeDef, String> {
        let doc: Value = serde_yaml::from_str(text).map_err(|e| e.to_string())?;
        let top = doc
            .as_mapping()
            .ok_or("the definition must be a mapping with node, about, parameters")?;
        for k in top.keys() {
            if !matches!(k.as_str(), Some("node" | "about" | "parameters")) {
                return Err(format!("unknown top-level key {k:?}"));
            }
        }
        let node = top
            .get("node")
            .and_then(Value::as_str)
            .filter(|n| valid_token(n))
            .ok_or("`node` must be a snake_case node name")?
            .to_string();
        let about = top
            .get("about")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .trim_end()
            .to_string();
        let params = top
            .get("parameters")
            .and_then(Value::as_mapping)
            .ok_or("`parameters` must be a mapping")?;
        let root = parse_group("", params)?;
        let def = NodeDef { node, about, root };
        if def.params().is_empty() {
            return Err("no parameters".into());
        }
        Ok(def)
    }

    /// Every parameter, depth first in definition order.
    pub fn params(&self) -> Vec<&Param> {
        fn walk<'a>(g: &'a Group, out: &mut Vec<&'a Param>) {
            for m in &g.members {
                match m {
                    Member::Param(p) => out.push(p),
                    Member::Group(g) => walk(g, out),
                }
            }
        }
        let mut out = Vec::new();
        walk(&self.root, &mut out);
        out
    }

    /// Name of the generated struct of a group (`<Node>Params` at the top).
    fn struct_name(&self, path: &str) -> String {
        if path.is_empty() {
            format!("{}Params", camel(&self.node))
        } else {
            format!("{}{}Params", camel(&self.node), camel(path))
        }
    }

    /// The generated Rust code (see the crate documentation); `source` names the definition
    /// file in the generated documentation.
    pub fn rust(&self, source: &str) -> String {
        let mut out = String::new();
        let top = self.struct_name("");
        let _ = writeln!(
            out,
            "// Generated by rpq_param_gen from {source}; edit that file, not this one.\n"
        );
        let _ = writeln!(
            out,
            "/// Default name of the node.\npub const NODE_NAME: &str = {:?};\n",
            self.node
        );
        let _ = writeln!(
            out,
            "/// Path of the node's parameter file, relative to the repository root.\n\
             pub const CONFIG_FILE: &str = \"config/{}.yaml\";\n",
            self.node
        );
        let _ = writeln!(
            out,
            "/// The documented parameter file generated from {source} (the text of [`CONFIG_FILE`]).\n\
             pub const CONFIG_YAML: &str = {:?};\n",
            self.config_yaml(source)
        );
        // names
        let _ = writeln!(
            out,
            "/// Full parameter names (dotted for groups), as given with `-p name:=value`.\npub mod names {{"
        );
        for p in self.params() {
            let _ = writeln!(
                out,
                "    /// `{}`: {}\n    pub const {}: &str = {:?};",
                p.name,
                p.full_description().replace('\n', " "),
                p.name.replace('.', "__").to_ascii_uppercase(),
                p.name
            );
        }
        let _ = writeln!(out, "}}\n");
        // declarations
        let _ = writeln!(
            out,
            "/// Declarations of every parameter of the node (`use_sim_time` is added by `rpq_ros`).\n\
             // the numbers are the definition's, written out in full (e.g. a bound of pi/2)\n\
             #[allow(clippy::approx_constant)]\n\
             pub fn declarations() -> Vec<::rpq_ros::params::ParamDecl> {{\n    use ::rpq_ros::params::ParamDecl;\n    vec!["
        );
        for p in self.params() {
            let (ctor, _) = p.ty.api();
            let mut d = match &p.default {
                Some(v) => format!("ParamDecl::{ctor}({:?}, {})", p.name, value_rust(v)),
                None => format!(
                    "ParamDecl::required({:?}, ::rpq_ros::params::ParamType::{})",
                    p.name,
                    p.ty.param_type_variant()
                ),
            };
            let _ = write!(d, ".describe({:?})", p.full_description());
            if let Some((lo, hi)) = p.bounds {
                if p.ty.kind == Kind::Int {
                    let _ = write!(d, ".range_int({}_i64, {}_i64)", lo as i64, hi as i64);
                } else {
                    let _ = write!(d, ".range({}, {})", rust_f64(lo), rust_f64(hi));
                }
            }
            if !p.one_of.is_empty() {
                let _ = write!(d, ".one_of(&{:?})", p.one_of);
            }
            if let Some(n) = p.length {
                let _ = write!(d, ".length({n})");
            }
            if p.read_only {
                d.push_str(".read_only()");
            }
            let _ = writeln!(out, "        {d},");
        }
        let _ = writeln!(out, "    ]\n}}\n");
        // structs
        self.emit_struct(&self.root, &mut out, source);
        let _ = writeln!(
            out,
            "impl {top} {{\n    /// Reads every parameter from the resolved values (which `rpq_ros::params::Params`\n    \
             /// has already checked against [`declarations`]: types, bounds, allowed values, lengths).\n    \
             pub fn from_params(p: &::rpq_ros::params::Params) -> Result<Self, ::rpq_ros::params::ParamError> {{\n        \
             Ok({})\n    }}\n}}",
            self.construct(&self.root, 2)
        );
        out
    }

    fn emit_struct(&self, g: &Group, out: &mut String, source: &str) {
        let name = self.struct_name(&g.path);
        let doc = if g.path.is_empty() {
            format!(
                "Parameters of the `{}` node, generated from {source}.",
                self.node
            )
        } else {
            format!(
                "Parameters of the `{}` node in the group `{}.*`.",
                self.node, g.path
            )
        };
        let _ = writeln!(
            out,
            "/// {doc}\n#[derive(Debug, Clone, PartialEq)]\npub struct {name} {{"
        );
        for m in &g.members {
            match m {
                Member::Param(p) => {
                    for line in wrap(&format!("`{}`: {}", p.name, p.full_description()), 92) {
                        let _ = writeln!(out, "    /// {line}");
                    }
                    let _ = writeln!(out, "    pub {}: {},", p.field(), p.rust_type());
                }
                Member::Group(sub) => {
                    let field = sub.path.rsplit('.').next().unwrap_or(&sub.path);
                    let _ = writeln!(
                        out,
                        "    /// The group `{}.*`.\n    pub {field}: {},",
                        sub.path,
                        self.struct_name(&sub.path)
                    );
                }
            }
        }
        let _ = writeln!(out, "}}\n");
        for m in &g.members {
            if let Member::Group(sub) = m {
                self.emit_struct(sub, out, source);
            }
        }
    }

    fn construct(&self, g: &Group, depth: usize) -> String {
        let pad = "    ".repeat(depth + 1);
        let mut s = format!("{} {{\n", self.struct_name(&g.path));
        for m in &g.members {
            match m {
                Member::Param(p) => {
                    let (_, getter) = p.ty.api();
                    let read = format!("p.{getter}({:?})?", p.name);
                    let conv = match (p.ty.array, p.length) {
                        (false, _) if p.ty.kind == Kind::String => format!("{read}.to_string()"),
                        (true, None) => format!("{read}.to_vec()"),
                        (_, Some(_)) => format!("::rpq_ros::params::fixed({:?}, {read})?", p.name),
                        _ => read,
                    };
                    let _ = writeln!(s, "{pad}{}: {conv},", p.field());
                }
                Member::Group(sub) => {
                    let field = sub.path.rsplit('.').next().unwrap_or(&sub.path);
                    let _ = writeln!(s, "{pad}{field}: {},", self.construct(sub, depth + 1));
                }
            }
        }
        s.push_str(&"    ".repeat(depth));
        s.push('}');
        s
    }

    /// The documented parameter file `config/<node>.yaml`.
    pub fn config_yaml(&self, source: &str) -> String {
        let mut out = String::new();
        for line in self.about.lines() {
            let _ = writeln!(out, "{}", format!("# {line}").trim_end());
        }
        let note = format!(
            "Generated from {source} (the one definition of these parameters): edit that file \
             and run `RPQ_BLESS=1 cargo test` in its package to rewrite this one; a test checks \
             they agree. Each entry gives: type, default (or \"required\"), unit, bounds or \
             allowed values, read-only (cannot be changed after start-up). Units are given here, \
             never in the names. Unknown or ill-typed parameters stop the node at start-up."
        );
        out.push_str("#\n");
        for line in wrap(&note, 98) {
            let _ = writeln!(out, "# {line}");
        }
        let _ = writeln!(out, "{}:\n  ros__parameters:", self.node);
        self.group_yaml(&self.root, 2, &mut out);
        out
    }

    fn group_yaml(&self, g: &Group, depth: usize, out: &mut String) {
        let pad = "  ".repeat(depth);
        for (i, m) in g.members.iter().enumerate() {
            if i > 0 {
                out.push('\n');
            }
            match m {
                Member::Param(p) => {
                    let mut head = p.ty.name().to_string();
                    if let Some(n) = p.length {
                        head = format!("{}[{n}]", p.ty.kind.names()[0]);
                    }
                    match &p.default {
                        Some(v) => {
                            let _ = write!(head, ", default {}", value_yaml(v));
                        }
                        None => head.push_str(", required"),
                    }
                    if !p.unit.is_empty() {
                        let _ = write!(head, ", {}", p.unit);
                    }
                    if let Some((lo, hi)) = p.bounds {
                        let (lo, hi) = if p.ty.kind == Kind::Int {
                            ((lo as i64).to_string(), (hi as i64).to_string())
                        } else {
                            (yaml_f64(lo), yaml_f64(hi))
                        };
                        let _ = write!(head, ", range [{lo}, {hi}]");
                    }
                    if !p.one_of.is_empty() {
                        let _ = write!(head, ", one of {}", p.one_of.join(" | "));
                    }
                    if p.read_only {
                        head.push_str(", read-only");
                    }
                    let text = format!("{head}. {}", p.description);
                    for line in wrap(&text, 98usize.saturating_sub(pad.len())) {
                        let _ = writeln!(out, "{}", format!("{pad}# {line}").trim_end());
                    }
                    let value = p.config.as_ref().or(p.default.as_ref());
                    match value {
                        Some(TypedValue::Array(a)) if a.is_empty() => {
                            // rcl's parameter-file parser cannot type an empty list: left out.
                            let shown = p.example.as_ref().map(value_yaml);
                            let _ = writeln!(
                                out,
                                "{pad}# {}: {}",
                                p.field(),
                                shown.as_deref().unwrap_or("[]")
                            );
                        }
                        Some(v) => {
                            let _ = writeln!(out, "{pad}{}: {}", p.field(), value_yaml(v));
                        }
                        None => {
                            let _ = writeln!(out, "{pad}# {}: <required>", p.field());
                        }
                    }
                }
                Member::Group(sub) => {
                    let field = sub.path.rsplit('.').next().unwrap_or(&sub.path);
                    let _ = writeln!(out, "{pad}{field}:");
                    self.group_yaml(sub, depth + 1, out);
                }
            }
        }
    }
}

/// For a package's `build.rs`: reads each definition file (paths relative to the package
/// directory, e.g. `params/robot_sim.yaml`) and writes `$OUT_DIR/<node>.rs` for
/// `include!(concat!(env!("OUT_DIR"), "/<node>.rs"))`. Stops the build with the file and the
/// problem if a definition is invalid.
pub fn build(definitions: &[&str]) {
    let dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("run by cargo"));
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("run by cargo"));
    let package = std::env::var("CARGO_PKG_NAME").expect("run by cargo");
    for rel in definitions {
        let path = dir.join(rel);
        println!("cargo:rerun-if-changed={}", path.display());
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        let def = NodeDef::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let source = format!("nodes/{package}/{rel}");
        let target = out.join(format!("{}.rs", def.node));
        std::fs::write(&target, def.rust(&source))
            .unwrap_or_else(|e| panic!("cannot write {}: {e}", target.display()));
    }
}

/// For a package's test: checks that the committed file at `path` is exactly `generated`, or
/// with `RPQ_BLESS=1` in the environment rewrites it. Panics with a hint when they differ.
pub fn check_file(path: &Path, generated: &str) {
    let committed = std::fs::read_to_string(path).unwrap_or_default();
    if committed == generated {
        return;
    }
    if std::env::var_os("RPQ_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(path, generated)
            .unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
        return;
    }
    let line = committed
        .lines()
        .zip(generated.lines())
        .position(|(a, b)| a != b)
        .unwrap_or_else(|| committed.lines().count().min(generated.lines().count()));
    panic!(
        "{} is not what its parameter definition generates (first difference at line {}); \
         rerun the test with RPQ_BLESS=1 to rewrite it",
        path.display(),
        line + 1
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEF: &str = r#"
node: demo_node
about: |
  Demo.
parameters:
  file: {type: string, read_only: true, config: "a.urdf", description: "A file."}
  update_rate: {type: double, default: 100, unit: Hz, bounds: [0.1, .inf], description: "Rate."}
  mode: {type: string, default: fast, one_of: [fast, slow], description: "Mode."}
  limits:
    max_velocity: {type: double, default: 1.0e-9, unit: m/s, bounds: [0, 1], description: "Speed."}
    origin: {type: "double[]", default: [0.0, 1, 2], length: 3, unit: m, description: "Origin."}
    names: {type: "string[]", default: [], example: [a, b], description: "Names."}
  count: {type: int, default: 3, bounds: [0, 10], description: "Count."}
"#;

    #[test]
    fn parses_groups_and_values() {
        let d = NodeDef::parse(DEF).unwrap();
        let names: Vec<_> = d.params().iter().map(|p| p.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "file",
                "update_rate",
                "mode",
                "limits.max_velocity",
                "limits.origin",
                "limits.names",
                "count"
            ]
        );
        let p = d.params()[1];
        assert_eq!(
            p.default,
            Some(TypedValue::Scalar(Scalar::Double(100.0))),
            "an integer literal is a double default"
        );
        assert_eq!(p.bounds, Some((0.1, f64::INFINITY)));
        assert_eq!(p.full_description(), "Rate. [Hz]");
    }

    #[test]
    fn config_text_is_loadable_yaml_with_nested_groups() {
        let d = NodeDef::parse(DEF).unwrap();
        let text = d.config_yaml("params/demo_node.yaml");
        let v: Value = serde_yaml::from_str(&text).unwrap();
        let p = &v["demo_node"]["ros__parameters"];
        assert_eq!(p["file"].as_str(), Some("a.urdf"));
        assert_eq!(p["update_rate"].as_f64(), Some(100.0));
        assert!(text.contains("update_rate: 100.0\n"), "{text}");
        assert_eq!(p["limits"]["max_velocity"].as_f64(), Some(1e-9));
        assert!(text.contains("max_velocity: 1.0e-9\n"), "{text}");
        assert_eq!(p["limits"]["origin"][2].as_f64(), Some(2.0));
        assert!(p["limits"].get("names").is_none(), "empty list left out");
        assert!(text.contains("    # names: [\"a\", \"b\"]\n"), "{text}");
        assert!(
            text.contains("# string, required, read-only. A file."),
            "{text}"
        );
        assert!(
            text.contains("# double, default 100.0, Hz, range [0.1, .inf]. Rate."),
            "{text}"
        );
        assert!(text.contains("one of fast | slow"), "{text}");
    }

    #[test]
    fn rust_code_names_every_parameter() {
        let d = NodeDef::parse(DEF).unwrap();
        let code = d.rust("params/demo_node.yaml");
        for needle in [
            "pub struct DemoNodeParams {",
            "pub struct DemoNodeLimitsParams {",
            "pub limits: DemoNodeLimitsParams,",
            "pub origin: [f64; 3],",
            "pub names: Vec<String>,",
            "ParamDecl::required(\"file\", ::rpq_ros::params::ParamType::String)",
            ".range(0.1_f64, f64::INFINITY)",
            ".range_int(0_i64, 10_i64)",
            ".one_of(&[\"fast\", \"slow\"])",
            ".length(3)",
            "pub const LIMITS__MAX_VELOCITY: &str = \"limits.max_velocity\";",
            "p.f64(\"limits.max_velocity\")?",
        ] {
            assert!(code.contains(needle), "{needle} missing in:\n{code}");
        }
    }

    #[test]
    fn bad_definitions_are_refused() {
        for (bad, why) in [
            ("x: {type: double, default: 1.0, description: d}", "unknown"),
            ("x: {type: float, description: d}", "type"),
            (
                "x: {type: double, default: yes, description: d}",
                "not a double",
            ),
            (
                "x: {type: double, default: 2.0, bounds: [0, 1], description: d}",
                "outside",
            ),
            (
                "x: {type: string, default: b, one_of: [a], description: d}",
                "one of",
            ),
            (
                "x: {type: \"double[]\", default: [1.0], length: 2, description: d}",
                "elements",
            ),
            ("x: {type: int, default: 1}", "description"),
            (
                "x: {type: int, default: 1, description: d, colour: red}",
                "colour",
            ),
            ("Bad: {type: int, default: 1, description: d}", "snake_case"),
            ("g: {}", "empty"),
        ] {
            let text = format!("node: n\nparameters:\n  {bad}\n");
            let text = if why == "unknown" {
                format!("node: n\nextra: 1\nparameters:\n  {bad}\n")
            } else {
                text
            };
            let err = NodeDef::parse(&text).unwrap_err();
            assert!(err.contains(why), "{bad}: {err}");
        }
    }

    #[test]
    fn floats_read_back_as_doubles() {
        for (x, s) in [
            (1e-9, "1.0e-9"),
            (100.0, "100.0"),
            (1e20, "1.0e20"),
            (0.5, "0.5"),
        ] {
            assert_eq!(yaml_f64(x), s);
            let v: Value = serde_yaml::from_str(s).unwrap();
            assert_eq!(v.as_f64(), Some(x));
        }
    }
}
