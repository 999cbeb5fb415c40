//! Rust code generation from parsed interfaces (see `parse.rs`).
//!
//! A [`Registry`] holds every known package (the vendored standard ones and the suite's own),
//! resolves nested types across packages, builds the rosbag2 `ros2msg` definition text of each
//! type and writes one Rust module per package.
//!
//! Name mapping:
//! * message `pkg/msg/Name` -> `struct Name` in the package's message module;
//! * service `pkg/srv/Name` -> unit `struct Name` implementing `RosService`, with
//!   `struct NameRequest` (`pkg/srv/Name_Request`) and `struct NameResponse`
//!   (`pkg/srv/Name_Response`) in the package's service module;
//! * field `name` -> `pub name` (`r#name` for Rust keywords; serde keeps the ROS name);
//! * constant `NAME` -> associated `pub const NAME`;
//! * `bool`->`bool`, `byte`/`char`/`uint8`->`u8`, `intN`->`iN`, `uintN`->`uN`, `float32`->`f32`,
//!   `float64`->`f64`, `string`/`string<=N`->`String`, `T[]`/`T[<=N]`->`Vec<T>`, `T[N]`->`[T; N]`.
//!   Bounds are checked when serializing and deserializing.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use super::parse::{Array, BaseType, Message, ParseError, Primitive, Service, Value};

/// Where a package's generated types live in Rust.
#[derive(Debug, Clone)]
pub struct Package {
    /// ROS package name.
    pub name: String,
    /// Messages of the package.
    pub messages: Vec<Message>,
    /// Services of the package.
    pub services: Vec<Service>,
    /// Rust path of the module holding the messages, e.g. `$lib::msg::geometry_msgs`; `$lib` is
    /// replaced by the path of the `rpq_ros` crate as seen from the generated code.
    pub msg_path: String,
}

/// All packages known to one generation run.
#[derive(Debug, Default)]
pub struct Registry {
    packages: BTreeMap<String, Package>,
}

/// The 80 `=` characters rosbag2 puts between definitions.
pub const SEPARATOR: &str =
    "================================================================================";

const RUST_KEYWORDS: &[&str] = &[
    "abstract", "as", "async", "await", "become", "box", "break", "const", "continue", "do", "dyn",
    "else", "enum", "extern", "false", "final", "fn", "for", "gen", "if", "impl", "in", "let",
    "loop", "macro", "match", "mod", "move", "mut", "override", "priv", "pub", "ref", "return",
    "static", "struct", "trait", "true", "try", "type", "typeof", "unsafe", "unsized", "use",
    "virtual", "where", "while", "yield",
];

/// Field names that cannot be Rust identifiers even in raw form.
const UNUSABLE: &[&str] = &["self", "super", "crate", "_"];

/// Serde derives and fixed arrays: serde implements arrays up to this length itself.
const SERDE_ARRAY_MAX: usize = 32;

impl Registry {
    /// Adds a package; a package given twice is an error.
    pub fn add(&mut self, package: Package) -> Result<(), String> {
        if self.packages.contains_key(&package.name) {
            return Err(format!("package {} is defined twice", package.name));
        }
        self.packages.insert(package.name.clone(), package);
        Ok(())
    }

    /// The package called `name`.
    pub fn package(&self, name: &str) -> Option<&Package> {
        self.packages.get(name)
    }

    /// The message `pkg/Name` (messages only: service halves cannot be nested).
    pub fn message(&self, package: &str, name: &str) -> Option<&Message> {
        self.packages
            .get(package)?
            .messages
            .iter()
            .find(|m| m.name == name)
    }

    /// Checks that every nested type of every package exists. Returns all problems at once.
    pub fn check(&self) -> Result<(), Vec<ParseError>> {
        let mut errors = Vec::new();
        for pkg in self.packages.values() {
            let halves = pkg.services.iter().flat_map(|s| [&s.request, &s.response]);
            for msg in pkg.messages.iter().chain(halves) {
                for field in &msg.fields {
                    if let BaseType::Named { package, name } = &field.ty.base {
                        if self.message(package, name).is_none() {
                            let known: Vec<&str> =
                                self.packages.keys().map(String::as_str).collect();
                            errors.push(ParseError {
                                file: msg.file.clone(),
                                line: field.line,
                                message: format!(
                                    "unknown type {package}/{name} (known packages: {})",
                                    known.join(", ")
                                ),
                            });
                        }
                    }
                }
            }
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors)
        }
    }

    /// The full `ros2msg` definition of `msg` as rosbag2 writes it: the type's own text, then for
    /// each nested type (depth first, dependencies of a type in sorted order, each type once) a
    /// line of 80 `=`, a line `MSG: pkg/Name` and that type's text.
    pub fn definition(&self, msg: &Message) -> String {
        let mut out = String::new();
        let mut seen = BTreeSet::new();
        self.append_definition(msg, &mut seen, &mut out);
        out
    }

    fn append_definition(&self, msg: &Message, seen: &mut BTreeSet<String>, out: &mut String) {
        out.push_str(&msg.text);
        for dep in msg.dependencies() {
            if !seen.insert(dep.clone()) {
                continue;
            }
            let (package, name) = dep.split_once('/').expect("pkg/Name");
            out.push('\n');
            out.push_str(SEPARATOR);
            out.push_str("\nMSG: ");
            out.push_str(&dep);
            out.push('\n');
            // `check` has verified that the type exists.
            if let Some(nested) = self.message(package, name) {
                self.append_definition(nested, seen, out);
            }
        }
    }

    /// True if the Rust type of `msg` can be `Copy`: no strings, no sequences, nested types
    /// `Copy` too.
    pub fn is_copy(&self, msg: &Message) -> bool {
        msg.fields.iter().all(|f| {
            !matches!(f.ty.array, Array::Unbounded | Array::Bounded(_))
                && match &f.ty.base {
                    BaseType::Primitive(p) => *p != Primitive::String,
                    BaseType::BoundedString(_) => false,
                    BaseType::Named { package, name } => {
                        self.message(package, name).is_some_and(|m| self.is_copy(m))
                    }
                }
        })
    }

    /// Rust path of the message `pkg/Name`.
    fn rust_path(&self, package: &str, name: &str, support: &str) -> String {
        let pkg = &self.packages[package];
        format!("{}::{}", pkg.msg_path.replace("$lib", support), name)
    }

    /// Rust code of a package's messages (the body of its message module).
    pub fn emit_messages(&self, package: &str, support: &str) -> Result<String, ParseError> {
        let pkg = &self.packages[package];
        let mut out = String::new();
        for msg in &pkg.messages {
            let doc = if msg.doc.iter().any(|l| !l.trim().is_empty()) {
                format!(
                    "{}\n\nROS 2 message `{}`.",
                    dedent(&msg.doc).join("\n"),
                    msg.type_name()
                )
            } else {
                format!("ROS 2 message `{}`.", msg.type_name())
            };
            self.emit_struct(&mut out, msg, &msg.name, &doc, support)?;
        }
        Ok(out)
    }

    /// Rust code of a package's services (the body of its service module).
    pub fn emit_services(&self, package: &str, support: &str) -> Result<String, ParseError> {
        let pkg = &self.packages[package];
        let mut out = String::new();
        for srv in &pkg.services {
            let request = format!("{}Request", srv.name);
            let response = format!("{}Response", srv.name);
            let mut doc = String::new();
            if srv.request.doc.iter().any(|l| !l.trim().is_empty()) {
                doc.push_str(&dedent(&srv.request.doc).join("\n"));
                doc.push_str("\n\n");
            }
            writeln!(
                doc,
                "ROS 2 service `{}`: request [`{request}`], response [`{response}`].",
                srv.type_name()
            )
            .unwrap();
            writeln!(out, "#[doc = {}]", lit(doc.trim_end())).unwrap();
            out.push_str(
                "#[derive(::std::fmt::Debug, ::std::clone::Clone, ::std::marker::Copy, \
                 ::std::default::Default, ::std::cmp::PartialEq, ::std::cmp::Eq)]\n",
            );
            writeln!(out, "pub struct {};", srv.name).unwrap();
            writeln!(out, "impl {support}::srv::RosService for {} {{", srv.name).unwrap();
            writeln!(out, "    type Request = {request};").unwrap();
            writeln!(out, "    type Response = {response};").unwrap();
            writeln!(
                out,
                "    const TYPE_NAME: &'static str = {};",
                lit(&srv.type_name())
            )
            .unwrap();
            out.push_str("}\n\n");
            let req_doc = format!(
                "Request of the ROS 2 service `{}` (`{}`).",
                srv.type_name(),
                srv.request.type_name()
            );
            self.emit_struct(&mut out, &srv.request, &request, &req_doc, support)?;
            let resp_doc = format!(
                "Response of the ROS 2 service `{}` (`{}`).",
                srv.type_name(),
                srv.response.type_name()
            );
            self.emit_struct(&mut out, &srv.response, &response, &resp_doc, support)?;
        }
        Ok(out)
    }

    fn emit_struct(
        &self,
        out: &mut String,
        msg: &Message,
        rust_name: &str,
        doc: &str,
        support: &str,
    ) -> Result<(), ParseError> {
        let helpers = format!("{support}::msg::__codegen");
        let mut fields = String::new();
        let mut defaults = String::new();
        for field in &msg.fields {
            let err = |message: String| ParseError {
                file: msg.file.clone(),
                line: field.line,
                message,
            };
            if UNUSABLE.contains(&field.name.as_str()) {
                return Err(err(format!(
                    "field name `{}` cannot be a Rust identifier",
                    field.name
                )));
            }
            let ident = ident(&field.name);
            let elem = match &field.ty.base {
                BaseType::Primitive(p) => rust_primitive(*p).to_string(),
                BaseType::BoundedString(_) => "::std::string::String".to_string(),
                BaseType::Named { package, name } => self.rust_path(package, name, support),
            };
            let bounded_elem = matches!(field.ty.base, BaseType::BoundedString(_));
            let (ty, attr) = match (field.ty.array, &field.ty.base) {
                (Array::Single, BaseType::BoundedString(n)) => (
                    elem.clone(),
                    Some(format!(
                        "serialize_with = \"{helpers}::ser_bounded_string::<{n}, _>\", \
                         deserialize_with = \"{helpers}::de_bounded_string::<{n}, _>\""
                    )),
                ),
                (Array::Single, _) => (elem.clone(), None),
                (_, _) if bounded_elem => {
                    return Err(err(format!(
                        "`{}`: arrays of bounded strings are not supported; use string[]",
                        field.source
                    )))
                }
                (Array::Unbounded, _) => (format!("::std::vec::Vec<{elem}>"), None),
                (Array::Bounded(n), _) => (
                    format!("::std::vec::Vec<{elem}>"),
                    Some(format!(
                        "serialize_with = \"{helpers}::ser_bounded_seq::<{n}, _, _>\", \
                         deserialize_with = \"{helpers}::de_bounded_seq::<{n}, _, _>\""
                    )),
                ),
                (Array::Fixed(n), _) => (
                    format!("[{elem}; {n}]"),
                    (n > SERDE_ARRAY_MAX).then(|| "with = \"::serde_big_array::BigArray\"".into()),
                ),
            };
            let mut fdoc = String::new();
            if field.doc.iter().any(|l| !l.trim().is_empty()) {
                fdoc.push_str(&dedent(&field.doc).join("\n"));
                fdoc.push_str("\n\n");
            }
            write!(fdoc, "ROS field `{}`.", field.source).unwrap();
            writeln!(fields, "    #[doc = {}]", lit(&fdoc)).unwrap();
            if let Some(attr) = attr {
                writeln!(fields, "    #[serde({attr})]").unwrap();
            }
            writeln!(fields, "    pub {ident}: {ty},").unwrap();

            let value = match (&field.default, field.ty.array) {
                (Some(v), array) => default_expr(v, &field.ty.base, array),
                (None, Array::Fixed(_)) => {
                    "::core::array::from_fn(|_| ::std::default::Default::default())".into()
                }
                (None, _) => "::std::default::Default::default()".into(),
            };
            writeln!(defaults, "            {ident}: {value},").unwrap();
        }
        if msg.fields.is_empty() {
            // rosidl gives empty structures one `uint8` member, which is on the wire.
            fields.push_str(
                "    #[doc = \"Placeholder member rosidl adds to an empty structure; \
                 always 0 on the wire.\"]\n    pub structure_needs_at_least_one_member: u8,\n",
            );
            defaults.push_str("            structure_needs_at_least_one_member: 0,\n");
        }

        // Derive Default where it gives the ROS defaults; write it out otherwise (default values,
        // fixed arrays longer than the standard library's Default impls).
        let derive_default = msg.fields.iter().all(|f| {
            f.default.is_none() && !matches!(f.ty.array, Array::Fixed(n) if n > SERDE_ARRAY_MAX)
        });
        writeln!(out, "#[doc = {}]", lit(doc)).unwrap();
        out.push_str(
            "#[derive(::std::fmt::Debug, ::std::clone::Clone, ::std::cmp::PartialEq, \
             ::serde::Serialize, ::serde::Deserialize",
        );
        if derive_default {
            out.push_str(", ::std::default::Default");
        }
        if self.is_copy(msg) {
            out.push_str(", ::std::marker::Copy");
        }
        out.push_str(")]\n");
        writeln!(out, "pub struct {rust_name} {{\n{fields}}}\n").unwrap();

        if !msg.constants.is_empty() {
            writeln!(out, "impl {rust_name} {{").unwrap();
            for c in &msg.constants {
                let mut cdoc = String::new();
                if c.doc.iter().any(|l| !l.trim().is_empty()) {
                    cdoc.push_str(&dedent(&c.doc).join("\n"));
                    cdoc.push_str("\n\n");
                }
                write!(
                    cdoc,
                    "ROS constant `{} {}={}`.",
                    c.ty.ros_name(),
                    c.name,
                    show_value(&c.value)
                )
                .unwrap();
                let ty = match c.ty {
                    Primitive::String => "&'static str",
                    p => rust_primitive(p),
                };
                let value = match &c.value {
                    Value::Str(s) => lit(s),
                    v => scalar_expr(v, c.ty),
                };
                writeln!(out, "    #[doc = {}]", lit(&cdoc)).unwrap();
                writeln!(out, "    pub const {}: {ty} = {value};", c.name).unwrap();
            }
            out.push_str("}\n\n");
        }

        if !derive_default {
            writeln!(
                out,
                "impl ::std::default::Default for {rust_name} {{\n    \
                 fn default() -> Self {{\n        Self {{\n{defaults}        }}\n    }}\n}}\n"
            )
            .unwrap();
        }
        writeln!(out, "impl ::ros2_client::Message for {rust_name} {{}}\n").unwrap();
        writeln!(
            out,
            "impl {support}::msg::RosMessage for {rust_name} {{\n    \
             const TYPE_NAME: &'static str = {};\n    \
             fn definition() -> ::std::string::String {{\n        \
             ::std::string::String::from({})\n    }}\n}}\n",
            lit(&msg.type_name()),
            lit(&self.definition(msg))
        )
        .unwrap();
        Ok(())
    }
}

/// Consistency of a rosidl package with its build files: `CMakeLists.txt` (text `cmake`) lists
/// every interface file in `rosidl_generate_interfaces`, and `package.xml` (text `xml`) depends
/// (`<depend>` or `<build_depend>`) on every other package the interfaces use.
pub fn check_rosidl_package(
    pkg: &Package,
    cmake_file: &str,
    cmake: &str,
    xml_file: &str,
    xml: &str,
) -> Vec<ParseError> {
    let mut errors = Vec::new();
    let listed = pkg
        .messages
        .iter()
        .map(|m| (format!("msg/{}.msg", m.name), &m.file))
        .chain(
            pkg.services
                .iter()
                .map(|s| (format!("srv/{}.srv", s.name), &s.file)),
        );
    for (relative, file) in listed {
        if !cmake.contains(&format!("\"{relative}\"")) {
            errors.push(ParseError {
                file: cmake_file.into(),
                line: 1,
                message: format!(
                    "{file} is not listed in rosidl_generate_interfaces (add \"{relative}\")"
                ),
            });
        }
    }
    let halves = pkg.services.iter().flat_map(|s| [&s.request, &s.response]);
    for msg in pkg.messages.iter().chain(halves) {
        for field in &msg.fields {
            if let BaseType::Named { package, .. } = &field.ty.base {
                let declared = xml.contains(&format!("<depend>{package}</depend>"))
                    || xml.contains(&format!("<build_depend>{package}</build_depend>"));
                if package != &pkg.name && !declared {
                    errors.push(ParseError {
                        file: msg.file.clone(),
                        line: field.line,
                        message: format!(
                            "uses package {package}, which {xml_file} does not <depend> on"
                        ),
                    });
                }
            }
        }
    }
    errors
}

/// Rust spelling of a field name.
pub fn ident(name: &str) -> String {
    if RUST_KEYWORDS.contains(&name) {
        format!("r#{name}")
    } else {
        name.to_string()
    }
}

fn rust_primitive(p: Primitive) -> &'static str {
    match p {
        Primitive::Bool => "bool",
        Primitive::Byte | Primitive::Char | Primitive::UInt8 => "u8",
        Primitive::Int8 => "i8",
        Primitive::Int16 => "i16",
        Primitive::UInt16 => "u16",
        Primitive::Int32 => "i32",
        Primitive::UInt32 => "u32",
        Primitive::Int64 => "i64",
        Primitive::UInt64 => "u64",
        Primitive::Float32 => "f32",
        Primitive::Float64 => "f64",
        Primitive::String => "::std::string::String",
    }
}

/// A Rust string literal for `s`.
pub fn lit(s: &str) -> String {
    format!("{s:?}")
}

/// Rust expression for a scalar value of primitive type `p` (not strings).
fn scalar_expr(v: &Value, p: Primitive) -> String {
    let suffix = rust_primitive(p);
    match v {
        Value::Bool(b) => b.to_string(),
        Value::Int(i) => format!("{i}_{suffix}"),
        Value::Float(f) => {
            let ty = if p == Primitive::Float32 {
                "f32"
            } else {
                "f64"
            };
            if f.is_nan() {
                format!("{ty}::NAN")
            } else if f.is_infinite() {
                format!("{ty}::{}INFINITY", if *f < 0.0 { "NEG_" } else { "" })
            } else if p == Primitive::Float32 {
                format!("{:?}_f32", *f as f32)
            } else {
                format!("{f:?}_f64")
            }
        }
        Value::Str(s) => format!("::std::string::String::from({})", lit(s)),
        Value::List(_) => unreachable!("lists are handled by default_expr"),
    }
}

fn default_expr(v: &Value, base: &BaseType, array: Array) -> String {
    let p = match base {
        BaseType::Primitive(p) => *p,
        BaseType::BoundedString(_) => Primitive::String,
        BaseType::Named { .. } => unreachable!("parser rejects defaults of nested types"),
    };
    match (v, array) {
        (Value::List(items), Array::Fixed(_)) => {
            let items: Vec<String> = items.iter().map(|i| scalar_expr(i, p)).collect();
            format!("[{}]", items.join(", "))
        }
        (Value::List(items), _) => {
            let items: Vec<String> = items.iter().map(|i| scalar_expr(i, p)).collect();
            format!("::std::vec![{}]", items.join(", "))
        }
        (v, _) => scalar_expr(v, p),
    }
}

fn show_value(v: &Value) -> String {
    match v {
        Value::Bool(b) => b.to_string(),
        Value::Int(i) => i.to_string(),
        Value::Float(f) => f.to_string(),
        Value::Str(s) => s.clone(),
        Value::List(items) => {
            let items: Vec<String> = items.iter().map(show_value).collect();
            format!("[{}]", items.join(", "))
        }
    }
}

/// Removes the common leading spaces of comment lines (after the `#`).
fn dedent(lines: &[String]) -> Vec<String> {
    let indent = lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    let mut out: Vec<String> = lines
        .iter()
        .map(|l| l.get(indent..).unwrap_or("").to_string())
        .collect();
    while out.first().is_some_and(|l| l.is_empty()) {
        out.remove(0);
    }
    while out.last().is_some_and(|l| l.is_empty()) {
        out.pop();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::parse::{parse_message, parse_service};
    use super::*;

    fn registry() -> Registry {
        let m = |pkg: &str, name: &str, text: &str| {
            parse_message(pkg, name, &format!("{pkg}/msg/{name}.msg"), text).unwrap()
        };
        let mut reg = Registry::default();
        reg.add(Package {
            name: "base".into(),
            messages: vec![
                m("base", "Time", "int32 sec\nuint32 nanosec\n"),
                m("base", "Header", "base/Time stamp\nstring frame_id\n"),
                m("base", "Point", "float64 x\nfloat64 y\n"),
            ],
            services: vec![],
            msg_path: "$lib::msg::base".into(),
        })
        .unwrap();
        reg.add(Package {
            name: "top".into(),
            messages: vec![m(
                "top",
                "Shape",
                "# A shape.\nint32 KIND=1\nbase/Point[] points\nbase/Header header\n\
                 Inner inner\nstring<=4 tag\nfloat64[40] big\nint32 type 7\n",
            )],
            services: vec![],
            msg_path: "crate::top".into(),
        })
        .unwrap();
        reg
    }

    #[test]
    fn unknown_nested_types_are_reported_with_their_line() {
        let reg = registry();
        let errors = reg.check().unwrap_err();
        assert_eq!(errors.len(), 1);
        assert_eq!(errors[0].file, "top/msg/Shape.msg");
        assert_eq!(errors[0].line, 5);
        assert!(errors[0].message.contains("top/Inner"), "{}", errors[0]);
    }

    #[test]
    fn definition_follows_rosbag2_order() {
        let mut reg = registry();
        let inner = parse_message("top", "Inner", "top/msg/Inner.msg", "base/Time t\n").unwrap();
        reg.packages.get_mut("top").unwrap().messages.push(inner);
        reg.check().unwrap();
        let shape = reg.message("top", "Shape").unwrap();
        let sep = format!("\n{SEPARATOR}\nMSG: ");
        // Sorted dependencies: base/Header, base/Point, top/Inner; base/Time appears once, as
        // the first dependency of base/Header.
        let expected = format!(
            "{}{sep}base/Header\nbase/Time stamp\nstring frame_id\n{sep}base/Time\n\
             int32 sec\nuint32 nanosec\n{sep}base/Point\nfloat64 x\nfloat64 y\n\
             {sep}top/Inner\nbase/Time t\n",
            shape.text
        );
        assert_eq!(reg.definition(shape), expected);
    }

    #[test]
    fn emitted_code_maps_names_and_types() {
        let mut reg = registry();
        let inner = parse_message("top", "Inner", "top/msg/Inner.msg", "").unwrap();
        reg.packages.get_mut("top").unwrap().messages.push(inner);
        let code = reg.emit_messages("top", "crate").unwrap();
        assert!(code.contains("pub struct Shape {"), "{code}");
        assert!(code.contains("pub points: ::std::vec::Vec<crate::msg::base::Point>,"));
        assert!(code.contains("pub inner: crate::top::Inner,"));
        assert!(code.contains("ser_bounded_string::<4, _>"));
        assert!(code.contains("pub big: [f64; 40],"));
        assert!(code.contains("BigArray"));
        assert!(code.contains("pub r#type: i32,"));
        assert!(code.contains("r#type: 7_i32,"));
        assert!(code.contains("pub const KIND: i32 = 1_i32;"));
        assert!(code.contains("const TYPE_NAME: &'static str = \"top/msg/Shape\";"));
        assert!(code.contains("pub structure_needs_at_least_one_member: u8,"));
        assert!(code.contains("A shape."));
    }

    #[test]
    fn services_get_request_response_and_marker_types() {
        let mut reg = registry();
        let srv = parse_service(
            "top",
            "Probe",
            "top/srv/Probe.srv",
            "base/Point p\n---\nbool ok\n",
        )
        .unwrap();
        reg.packages.get_mut("top").unwrap().services.push(srv);
        let code = reg.emit_services("top", "::rpq_ros").unwrap();
        assert!(code.contains("pub struct Probe;"));
        assert!(code.contains("impl ::rpq_ros::srv::RosService for Probe {"));
        assert!(code.contains("type Request = ProbeRequest;"));
        assert!(code.contains("pub struct ProbeRequest {"));
        assert!(code.contains("\"top/srv/Probe_Response\""));
        assert!(code.contains("\"top/srv/Probe\""));
    }

    #[test]
    fn arrays_of_bounded_strings_are_refused() {
        let mut reg = Registry::default();
        reg.add(Package {
            name: "p".into(),
            messages: vec![
                parse_message("p", "M", "p/msg/M.msg", "int8 a\nstring<=3[] s\n").unwrap(),
            ],
            services: vec![],
            msg_path: "crate::p".into(),
        })
        .unwrap();
        let e = reg.emit_messages("p", "crate").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.message.contains("bounded strings"));
    }

    #[test]
    fn rosidl_package_files_must_list_interfaces_and_dependencies() {
        let pkg = Package {
            name: "top".into(),
            messages: vec![
                parse_message("top", "A", "top/msg/A.msg", "base/Time t\nB b\n").unwrap(),
            ],
            services: vec![parse_service("top", "S", "top/srv/S.srv", "---\nother/X x\n").unwrap()],
            msg_path: "crate::top".into(),
        };
        let cmake =
            "rosidl_generate_interfaces(${PROJECT_NAME}\n  \"msg/A.msg\"\n  \"srv/S.srv\"\n)";
        let xml = "<depend>base</depend><build_depend>other</build_depend>";
        assert!(check_rosidl_package(&pkg, "CMakeLists.txt", cmake, "package.xml", xml).is_empty());
        let errors =
            check_rosidl_package(&pkg, "CMakeLists.txt", "\"msg/A.msg\"", "package.xml", "");
        let text: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
        assert_eq!(errors.len(), 3, "{text:?}");
        assert!(text[0].starts_with("CMakeLists.txt:1: top/srv/S.srv is not listed"));
        assert!(text[1].starts_with("top/msg/A.msg:1: uses package base"));
        assert!(text[2].starts_with("top/srv/S.srv:2: uses package other"));
    }

    #[test]
    fn float_and_integer_literals() {
        assert_eq!(
            scalar_expr(&Value::Float(1.0), Primitive::Float64),
            "1.0_f64"
        );
        assert_eq!(
            scalar_expr(&Value::Float(-0.0), Primitive::Float64),
            "-0.0_f64"
        );
        assert_eq!(
            scalar_expr(&Value::Float(0.1), Primitive::Float32),
            "0.1_f32"
        );
        assert_eq!(
            scalar_expr(&Value::Float(f64::NAN), Primitive::Float32),
            "f32::NAN"
        );
        assert_eq!(
            scalar_expr(&Value::Float(f64::NEG_INFINITY), Primitive::Float64),
            "f64::NEG_INFINITY"
        );
        assert_eq!(
            scalar_expr(&Value::Int(i64::MIN.into()), Primitive::Int64),
            "-9223372036854775808_i64"
        );
        assert_eq!(ident("match"), "r#match");
        assert_eq!(ident("data"), "data");
    }
}
