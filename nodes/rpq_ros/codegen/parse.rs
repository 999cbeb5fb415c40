//! Parser for the rosidl interface language (`.msg` and `.srv` files) as ROS 2 Jazzy accepts it.
//!
//! Shared by `build.rs` (which generates the Rust message types) and by the crate's tests, which
//! include this file with `#[path]`. Everything the parser does not understand is an error that
//! names the file and line; nothing is skipped silently.
//!
//! Supported: the primitive types `bool byte char int8 uint8 int16 uint16 int32 uint32 int64
//! uint64 float32 float64 string`, bounded strings `string<=N`, unbounded `T[]`, bounded `T[<=N]`
//! and fixed `T[N]` arrays, nested types `pkg/Type` and same-package `Type`, constants
//! `TYPE NAME=value`, default values `TYPE name value`, comments `# ...`.
//! Rejected with a clear error: `wstring` (its wire form differs between DDS vendors), the ROS 1
//! types `time`/`duration`, `@optional`, and anything malformed.

use std::collections::BTreeSet;
use std::fmt;

/// An error in an interface file, located at a line (1-based).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// File the error is in, as given to the parser.
    pub file: String,
    /// Line number, starting at 1.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.file, self.line, self.message)
    }
}

impl std::error::Error for ParseError {}

/// A rosidl primitive type (`string` here means the unbounded string).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Primitive {
    /// `bool`
    Bool,
    /// `byte` (an octet)
    Byte,
    /// `char` (an 8-bit character, same wire form as `uint8`)
    Char,
    /// `int8`
    Int8,
    /// `uint8`
    UInt8,
    /// `int16`
    Int16,
    /// `uint16`
    UInt16,
    /// `int32`
    Int32,
    /// `uint32`
    UInt32,
    /// `int64`
    Int64,
    /// `uint64`
    UInt64,
    /// `float32`
    Float32,
    /// `float64`
    Float64,
    /// `string` (UTF-8, unbounded)
    String,
}

impl Primitive {
    /// All primitives, in the order of the rosidl documentation.
    pub const ALL: [Primitive; 14] = [
        Primitive::Bool,
        Primitive::Byte,
        Primitive::Char,
        Primitive::Int8,
        Primitive::UInt8,
        Primitive::Int16,
        Primitive::UInt16,
        Primitive::Int32,
        Primitive::UInt32,
        Primitive::Int64,
        Primitive::UInt64,
        Primitive::Float32,
        Primitive::Float64,
        Primitive::String,
    ];

    /// The name used in `.msg` files.
    pub fn ros_name(self) -> &'static str {
        match self {
            Primitive::Bool => "bool",
            Primitive::Byte => "byte",
            Primitive::Char => "char",
            Primitive::Int8 => "int8",
            Primitive::UInt8 => "uint8",
            Primitive::Int16 => "int16",
            Primitive::UInt16 => "uint16",
            Primitive::Int32 => "int32",
            Primitive::UInt32 => "uint32",
            Primitive::Int64 => "int64",
            Primitive::UInt64 => "uint64",
            Primitive::Float32 => "float32",
            Primitive::Float64 => "float64",
            Primitive::String => "string",
        }
    }

    /// The primitive named `name` in a `.msg` file, if any.
    pub fn from_ros_name(name: &str) -> Option<Primitive> {
        Primitive::ALL.into_iter().find(|p| p.ros_name() == name)
    }

    /// Inclusive value range of an integer primitive (`byte` and `char` are octets).
    pub fn int_range(self) -> Option<(i128, i128)> {
        Some(match self {
            Primitive::Byte | Primitive::Char | Primitive::UInt8 => (0, u8::MAX.into()),
            Primitive::Int8 => (i8::MIN.into(), i8::MAX.into()),
            Primitive::Int16 => (i16::MIN.into(), i16::MAX.into()),
            Primitive::UInt16 => (0, u16::MAX.into()),
            Primitive::Int32 => (i32::MIN.into(), i32::MAX.into()),
            Primitive::UInt32 => (0, u32::MAX.into()),
            Primitive::Int64 => (i64::MIN.into(), i64::MAX.into()),
            Primitive::UInt64 => (0, u64::MAX.into()),
            _ => return None,
        })
    }
}

/// The element type of a field, without its array part.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BaseType {
    /// A primitive type.
    Primitive(Primitive),
    /// `string<=N`: a string of at most N bytes.
    BoundedString(usize),
    /// A message type, with the package resolved (`Type` in package `p` is `p/Type`).
    Named {
        /// Package of the type.
        package: String,
        /// Type name.
        name: String,
    },
}

impl BaseType {
    /// The `pkg/Name` form of a named type.
    pub fn named(&self) -> Option<String> {
        match self {
            BaseType::Named { package, name } => Some(format!("{package}/{name}")),
            _ => None,
        }
    }
}

/// The array part of a field type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Array {
    /// Not an array.
    Single,
    /// `T[]`
    Unbounded,
    /// `T[<=N]`
    Bounded(usize),
    /// `T[N]`
    Fixed(usize),
}

/// A field type: element type plus array part.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldType {
    /// Element type.
    pub base: BaseType,
    /// Array part.
    pub array: Array,
}

/// A constant or default value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// `bool`
    Bool(bool),
    /// Any integer type (range already checked).
    Int(i128),
    /// `float32` / `float64`
    Float(f64),
    /// `string` / `string<=N`
    Str(String),
    /// Array default value.
    List(Vec<Value>),
}

/// A field of a message.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// Field name.
    pub name: String,
    /// Field type.
    pub ty: FieldType,
    /// Default value, if the file gives one.
    pub default: Option<Value>,
    /// Comment lines attached to the field.
    pub doc: Vec<String>,
    /// The field's line in the file, as written (comment removed).
    pub source: String,
    /// Line number (1-based).
    pub line: usize,
}

/// A constant of a message.
#[derive(Debug, Clone, PartialEq)]
pub struct Constant {
    /// Constant name.
    pub name: String,
    /// Constant type (a non-array primitive).
    pub ty: Primitive,
    /// Its value.
    pub value: Value,
    /// Comment lines attached to the constant.
    pub doc: Vec<String>,
    /// Line number (1-based).
    pub line: usize,
}

/// A parsed message (or one half of a service).
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    /// Package name.
    pub package: String,
    /// Namespace inside the package: `msg` or `srv`.
    pub namespace: String,
    /// Type name as ROS spells it (`Trigger_Request` for a service request).
    pub name: String,
    /// File the message came from.
    pub file: String,
    /// Fields in file order (the wire order).
    pub fields: Vec<Field>,
    /// Constants in file order.
    pub constants: Vec<Constant>,
    /// File-level comment lines.
    pub doc: Vec<String>,
    /// The definition text as written in the file (for a service, its half).
    pub text: String,
}

impl Message {
    /// Full ROS type name, `pkg/msg/Name`.
    pub fn type_name(&self) -> String {
        format!("{}/{}/{}", self.package, self.namespace, self.name)
    }

    /// Named types used by the fields, as `pkg/Name`, sorted (the order rosbag2 writes them).
    pub fn dependencies(&self) -> BTreeSet<String> {
        self.fields
            .iter()
            .filter_map(|f| f.ty.base.named())
            .collect()
    }
}

/// A parsed service.
#[derive(Debug, Clone, PartialEq)]
pub struct Service {
    /// Package name.
    pub package: String,
    /// Service name.
    pub name: String,
    /// File the service came from.
    pub file: String,
    /// Request message (`Name_Request`).
    pub request: Message,
    /// Response message (`Name_Response`).
    pub response: Message,
}

impl Service {
    /// Full ROS type name, `pkg/srv/Name`.
    pub fn type_name(&self) -> String {
        format!("{}/srv/{}", self.package, self.name)
    }
}

/// Parses the text of a `.msg` file of package `package` defining type `name`.
pub fn parse_message(
    package: &str,
    name: &str,
    file: &str,
    text: &str,
) -> Result<Message, ParseError> {
    check_names(package, name, file)?;
    parse_lines(package, "msg", name, file, text, 1)
}

/// Parses the text of a `.srv` file of package `package` defining service `name`.
pub fn parse_service(
    package: &str,
    name: &str,
    file: &str,
    text: &str,
) -> Result<Service, ParseError> {
    check_names(package, name, file)?;
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let separators: Vec<usize> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.trim_end() == "---")
        .map(|(i, _)| i)
        .collect();
    let sep = match separators.as_slice() {
        [one] => *one,
        [] => {
            return Err(ParseError {
                file: file.into(),
                line: lines.len().max(1),
                message: "a service needs one line `---` between request and response".into(),
            })
        }
        [_, second, ..] => {
            return Err(ParseError {
                file: file.into(),
                line: second + 1,
                message: "a service has exactly one `---` line; this is a second one".into(),
            })
        }
    };
    let request_text: String = lines[..sep].concat();
    let response_text: String = lines[sep + 1..].concat();
    let request = parse_lines(
        package,
        "srv",
        &format!("{name}_Request"),
        file,
        &request_text,
        1,
    )?;
    let response = parse_lines(
        package,
        "srv",
        &format!("{name}_Response"),
        file,
        &response_text,
        sep + 2,
    )?;
    Ok(Service {
        package: package.into(),
        name: name.into(),
        file: file.into(),
        request,
        response,
    })
}

fn check_names(package: &str, name: &str, file: &str) -> Result<(), ParseError> {
    let err = |message: String| ParseError {
        file: file.into(),
        line: 1,
        message,
    };
    if !is_package_name(package) {
        return Err(err(format!("`{package}` is not a valid ROS package name")));
    }
    if !is_type_name(name) {
        return Err(err(format!(
            "`{name}` is not a valid ROS type name (UpperCamelCase, letters and digits)"
        )));
    }
    Ok(())
}

/// Parses message lines; `first_line` is the number of the first line in the file.
fn parse_lines(
    package: &str,
    namespace: &str,
    name: &str,
    file: &str,
    text: &str,
    first_line: usize,
) -> Result<Message, ParseError> {
    let mut msg = Message {
        package: package.into(),
        namespace: namespace.into(),
        name: name.into(),
        file: file.into(),
        fields: Vec::new(),
        constants: Vec::new(),
        doc: Vec::new(),
        text: text.into(),
    };
    // Pending comment lines, attached to the next field or constant.
    let mut pending: Vec<String> = Vec::new();
    let mut file_level = true;
    // Which list the last element went to: comments on indented lines continue it.
    let mut last_is_field: Option<bool> = None;

    for (index, raw) in text.lines().enumerate() {
        let line_no = first_line + index;
        let err = |message: String| ParseError {
            file: file.into(),
            line: line_no,
            message,
        };
        let line = raw.replace('\t', " ");
        let line = line.trim_end();
        if file_level {
            if let Some(comment) = line.strip_prefix('#') {
                msg.doc.push(clean_comment(comment));
                continue;
            }
            file_level = false;
        }
        if line.is_empty() {
            continue;
        }
        let (content, comment) = match line.find('#') {
            Some(i) => (&line[..i], Some(clean_comment(&line[i + 1..]))),
            None => (line, None),
        };
        if content.trim().is_empty() {
            if let Some(comment) = comment {
                let indented = !content.is_empty();
                match (indented, last_is_field) {
                    (true, Some(true)) => msg.fields.last_mut().unwrap().doc.push(comment),
                    (true, Some(false)) => msg.constants.last_mut().unwrap().doc.push(comment),
                    _ => pending.push(comment),
                }
            }
            continue;
        }
        let content = content.trim_end();
        if content.starts_with('@') {
            return Err(err(format!(
                "annotations such as `{}` are not supported",
                content.split_whitespace().next().unwrap_or(content)
            )));
        }
        if content.starts_with(' ') {
            return Err(err("a field or constant line must not be indented".into()));
        }
        let (type_str, rest) = match content.split_once(' ') {
            Some((t, r)) => (t, r.trim_start()),
            None => {
                return Err(err(format!(
                    "`{content}`: expected `TYPE name`, `TYPE name default` or `TYPE NAME=value`"
                )))
            }
        };
        let mut doc = std::mem::take(&mut pending);
        doc.extend(comment);
        if let Some((cname, value)) = rest.split_once('=') {
            let cname = cname.trim_end();
            let value = value.trim_start();
            let ty = match Primitive::from_ros_name(type_str) {
                Some(p) => p,
                None => {
                    return Err(err(format!(
                        "constant `{cname}` has type `{type_str}`: constants must have a \
                         primitive, non-array type"
                    )))
                }
            };
            if !is_constant_name(cname) {
                return Err(err(format!(
                    "`{cname}` is not a valid constant name (UPPER_SNAKE_CASE)"
                )));
            }
            if msg.constants.iter().any(|c| c.name == cname) {
                return Err(err(format!("constant `{cname}` is defined twice")));
            }
            let value = parse_scalar(ty, None, value).map_err(err)?;
            msg.constants.push(Constant {
                name: cname.into(),
                ty,
                value,
                doc,
                line: line_no,
            });
            last_is_field = Some(false);
        } else {
            let (fname, default) = match rest.split_once(' ') {
                Some((n, d)) => (n, Some(d.trim())),
                None => (rest, None),
            };
            let ty = parse_type(type_str, package).map_err(err)?;
            if !is_field_name(fname) {
                return Err(err(format!(
                    "`{fname}` is not a valid field name (lower_snake_case, starting with a \
                     letter, no double or trailing underscore)"
                )));
            }
            if msg.fields.iter().any(|f| f.name == fname) {
                return Err(err(format!("field `{fname}` is defined twice")));
            }
            let default = match default {
                Some(d) => Some(parse_value(&ty, d).map_err(err)?),
                None => None,
            };
            msg.fields.push(Field {
                name: fname.into(),
                ty,
                default,
                doc,
                source: content.into(),
                line: line_no,
            });
            last_is_field = Some(true);
        }
    }
    Ok(msg)
}

fn clean_comment(comment: &str) -> String {
    comment.trim_start_matches('#').trim_end().to_string()
}

/// Parses a field type such as `float64[<=3]`, `string<=10` or `geometry_msgs/Pose[]`.
pub fn parse_type(type_str: &str, context_package: &str) -> Result<FieldType, String> {
    let (element, array) = match type_str.strip_suffix(']') {
        Some(open) => {
            let start = open
                .rfind('[')
                .ok_or_else(|| format!("`{type_str}`: `]` without `[`"))?;
            let inner = &open[start + 1..];
            let array = if inner.is_empty() {
                Array::Unbounded
            } else if let Some(bound) = inner.strip_prefix("<=") {
                Array::Bounded(parse_size(bound, type_str)?)
            } else {
                Array::Fixed(parse_size(inner, type_str)?)
            };
            (&open[..start], array)
        }
        None => (type_str, Array::Single),
    };
    let base = if let Some(p) = Primitive::from_ros_name(element) {
        BaseType::Primitive(p)
    } else if let Some(bound) = element.strip_prefix("string<=") {
        BaseType::BoundedString(parse_size(bound, type_str)?)
    } else if element == "wstring" || element.starts_with("wstring<=") {
        return Err(format!(
            "`{type_str}`: wstring is not supported (its wire form differs between DDS \
             implementations); use string"
        ));
    } else if element == "time" || element == "duration" {
        return Err(format!(
            "`{type_str}` is a ROS 1 type; use builtin_interfaces/Time or \
             builtin_interfaces/Duration"
        ));
    } else {
        let (package, name) = match element.split_once('/') {
            Some((p, n)) => (p, n),
            None => (context_package, element),
        };
        if name.contains('/') || !is_package_name(package) || !is_type_name(name) {
            return Err(format!(
                "unknown type `{type_str}` (not a primitive, and not `package/Type` or `Type`)"
            ));
        }
        BaseType::Named {
            package: package.into(),
            name: name.into(),
        }
    };
    Ok(FieldType { base, array })
}

fn parse_size(s: &str, type_str: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if n > 0 && s.bytes().all(|b| b.is_ascii_digit()) => Ok(n),
        _ => Err(format!("`{type_str}`: size `{s}` must be an integer > 0")),
    }
}

/// Parses a default value for a field of type `ty`.
pub fn parse_value(ty: &FieldType, s: &str) -> Result<Value, String> {
    let (prim, bound) = match &ty.base {
        BaseType::Primitive(p) => (*p, None),
        BaseType::BoundedString(n) => (Primitive::String, Some(*n)),
        BaseType::Named { package, name } => {
            return Err(format!(
                "default value `{s}` given for a field of type {package}/{name}: only primitive \
                 fields can have default values"
            ))
        }
    };
    if ty.array == Array::Single {
        return parse_scalar(prim, bound, s);
    }
    let inner = s
        .strip_prefix('[')
        .and_then(|r| r.strip_suffix(']'))
        .ok_or_else(|| format!("array default value `{s}` must be written `[a, b, ...]`"))?;
    let items = if prim == Primitive::String {
        split_string_list(inner)?
    } else if inner.trim().is_empty() {
        Vec::new()
    } else {
        inner.split(',').map(|x| x.trim().to_string()).collect()
    };
    match ty.array {
        Array::Fixed(n) if items.len() != n => {
            return Err(format!(
                "array default value `{s}` has {} elements, the type needs exactly {n}",
                items.len()
            ))
        }
        Array::Bounded(n) if items.len() > n => {
            return Err(format!(
                "array default value `{s}` has {} elements, the type allows at most {n}",
                items.len()
            ))
        }
        _ => {}
    }
    let values = items
        .iter()
        .map(|item| parse_scalar(prim, bound, item))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Value::List(values))
}

/// Splits the inside of a string-array default value, honouring quotes.
fn split_string_list(inner: &str) -> Result<Vec<String>, String> {
    let mut items = Vec::new();
    let mut rest = inner.trim_start();
    while !rest.is_empty() {
        if rest.starts_with(',') {
            return Err(format!("unexpected `,` in string array `[{inner}]`"));
        }
        let quote = rest.chars().next().filter(|c| *c == '"' || *c == '\'');
        if let Some(q) = quote {
            // Find the closing quote that is not escaped.
            let bytes = rest.as_bytes();
            let mut end = None;
            let mut i = 1;
            while i < bytes.len() {
                if bytes[i] == b'\\' {
                    i += 2;
                    continue;
                }
                if bytes[i] == q as u8 {
                    end = Some(i);
                    break;
                }
                i += 1;
            }
            let end = end.ok_or_else(|| format!("unterminated quote in `[{inner}]`"))?;
            items.push(rest[..=end].to_string());
            rest = rest[end + 1..].trim_start();
        } else {
            let end = rest.find(',').unwrap_or(rest.len());
            items.push(rest[..end].trim().to_string());
            rest = &rest[end..];
        }
        if let Some(r) = rest.strip_prefix(',') {
            rest = r.trim_start();
        } else if !rest.is_empty() {
            return Err(format!("expected `,` between elements of `[{inner}]`"));
        }
    }
    Ok(items)
}

/// Parses one value of a primitive type (`bound` for `string<=N`).
pub fn parse_scalar(ty: Primitive, bound: Option<usize>, s: &str) -> Result<Value, String> {
    match ty {
        Primitive::Bool => match s.to_ascii_lowercase().as_str() {
            "true" | "1" => Ok(Value::Bool(true)),
            "false" | "0" => Ok(Value::Bool(false)),
            _ => Err(format!("`{s}` is not a bool (write true, false, 1 or 0)")),
        },
        Primitive::Float32 | Primitive::Float64 => {
            let v: f64 = s
                .parse()
                .map_err(|_| format!("`{s}` is not a {} number", ty.ros_name()))?;
            if ty == Primitive::Float32 && v.is_finite() && (v as f32).is_infinite() {
                return Err(format!("`{s}` is out of range for float32"));
            }
            Ok(Value::Float(v))
        }
        Primitive::String => {
            let v = unquote(s)?;
            if let Some(n) = bound {
                if v.len() > n {
                    return Err(format!(
                        "string `{v}` is {} bytes long, the type allows at most {n}",
                        v.len()
                    ));
                }
            }
            Ok(Value::Str(v))
        }
        _ => {
            let (lo, hi) = ty.int_range().expect("integer primitive");
            let v = parse_int(s).ok_or_else(|| format!("`{s}` is not an integer"))?;
            if v < lo || v > hi {
                return Err(format!(
                    "{v} is out of range for {} ({lo} ..= {hi})",
                    ty.ros_name()
                ));
            }
            Ok(Value::Int(v))
        }
    }
}

/// Integer literal as Python's `int()` reads it: decimal, or `0x`/`0o`/`0b` with a sign.
fn parse_int(s: &str) -> Option<i128> {
    let (neg, digits) = match s.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let lower = digits.to_ascii_lowercase();
    let (radix, body) = if let Some(b) = lower.strip_prefix("0x") {
        (16, b)
    } else if let Some(b) = lower.strip_prefix("0o") {
        (8, b)
    } else if let Some(b) = lower.strip_prefix("0b") {
        (2, b)
    } else {
        (10, lower.as_str())
    };
    if body.is_empty() || body.starts_with(['+', '-']) {
        return None;
    }
    let v = i128::from_str_radix(body, radix).ok()?;
    Some(if neg { -v } else { v })
}

/// Removes matching outer quotes from a string value (rosidl rules: an inner quote of the same
/// kind must be escaped with a backslash).
fn unquote(s: &str) -> Result<String, String> {
    for q in ['"', '\''] {
        if s.len() >= 2 && s.starts_with(q) && s.ends_with(q) {
            let inner = &s[1..s.len() - 1];
            let mut out = String::new();
            let mut chars = inner.chars().peekable();
            while let Some(c) = chars.next() {
                if c == '\\' && chars.peek() == Some(&q) {
                    out.push(q);
                    chars.next();
                } else if c == q {
                    return Err(format!("string {s}: inner quote {q} must be escaped"));
                } else {
                    out.push(c);
                }
            }
            return Ok(out);
        }
    }
    Ok(s.to_string())
}

/// `^(?!.*__)(?!.*_$)[a-z][a-z0-9_]*$`, the rosidl package name rule.
pub fn is_package_name(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b[0].is_ascii_lowercase()
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'_')
        && !s.contains("__")
        && !s.ends_with('_')
}

/// Field names follow the package name rule.
pub fn is_field_name(s: &str) -> bool {
    is_package_name(s)
}

/// `^[A-Z][A-Za-z0-9]*$`, the rosidl message name rule.
pub fn is_type_name(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty() && b[0].is_ascii_uppercase() && b.iter().all(|c| c.is_ascii_alphanumeric())
}

/// `^[A-Z]([A-Z0-9_]?[A-Z0-9]+)*$`, the rosidl constant name rule.
pub fn is_constant_name(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b[0].is_ascii_uppercase()
        && b.iter()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == b'_')
        && !s.contains("__")
        && !s.ends_with('_')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(text: &str) -> Result<Message, ParseError> {
        parse_message("pkg", "Test", "pkg/msg/Test.msg", text)
    }

    fn err_of(text: &str) -> ParseError {
        msg(text).expect_err("expected a parse error")
    }

    #[test]
    fn primitives_arrays_and_nested_types() {
        let m = msg(
            "int8 a\nfloat64[] b\nstring<=5 c\nuint8[<=3] d\nbool[4] e\n\
                     geometry_msgs/Point f\nOther[] g\nstring<=2[3] h\n",
        )
        .unwrap();
        let types: Vec<_> = m.fields.iter().map(|f| (f.name.as_str(), &f.ty)).collect();
        assert_eq!(types[0].1.base, BaseType::Primitive(Primitive::Int8));
        assert_eq!(types[1].1.array, Array::Unbounded);
        assert_eq!(types[2].1.base, BaseType::BoundedString(5));
        assert_eq!(types[3].1.array, Array::Bounded(3));
        assert_eq!(types[4].1.array, Array::Fixed(4));
        assert_eq!(
            types[5].1.base,
            BaseType::Named {
                package: "geometry_msgs".into(),
                name: "Point".into()
            }
        );
        assert_eq!(types[6].1.base.named().as_deref(), Some("pkg/Other"));
        assert_eq!(types[7].1.base, BaseType::BoundedString(2));
        assert_eq!(types[7].1.array, Array::Fixed(3));
        let deps: Vec<_> = m.dependencies().into_iter().collect();
        assert_eq!(deps, ["geometry_msgs/Point", "pkg/Other"]);
    }

    #[test]
    fn constants_defaults_and_comments() {
        let m = msg(
            "# file comment\n# second line\n\n# doc of A\nint32 A=-5 # trailing\n\
                     string S= hello world \nbool B=True\nuint8 H=0x10\n\
                     float64 x 1.5\n   # continues x\nstring s \"a \\\"q\\\" b\"\n\
                     int16[3] v [1, -2, 3]\nstring[] w ['a,b', \"c\"]\n",
        )
        .unwrap();
        assert_eq!(m.doc, [" file comment", " second line"]);
        assert_eq!(m.constants[0].value, Value::Int(-5));
        assert_eq!(m.constants[0].doc, [" doc of A", " trailing"]);
        assert_eq!(m.constants[1].value, Value::Str("hello world".into()));
        assert_eq!(m.constants[2].value, Value::Bool(true));
        assert_eq!(m.constants[3].value, Value::Int(16));
        assert_eq!(m.fields[0].default, Some(Value::Float(1.5)));
        assert_eq!(m.fields[0].doc, [" continues x"]);
        assert_eq!(m.fields[1].default, Some(Value::Str("a \"q\" b".into())));
        assert_eq!(
            m.fields[2].default,
            Some(Value::List(vec![
                Value::Int(1),
                Value::Int(-2),
                Value::Int(3)
            ]))
        );
        assert_eq!(
            m.fields[3].default,
            Some(Value::List(vec![
                Value::Str("a,b".into()),
                Value::Str("c".into())
            ]))
        );
    }

    #[test]
    fn errors_name_file_and_line() {
        let e = err_of("int32 a\n\nfoo bar baz qux\n");
        // `foo` is a same-package type name? No: lower case, so not a type.
        assert_eq!((e.file.as_str(), e.line), ("pkg/msg/Test.msg", 3));
        assert!(e.to_string().starts_with("pkg/msg/Test.msg:3: "), "{e}");
        assert_eq!(err_of("int32 a\nint32 a\n").line, 2);
        assert!(err_of("wstring w\n").message.contains("wstring"));
        assert!(err_of("time t\n").message.contains("ROS 1"));
        assert!(err_of("int8 a 128\n").message.contains("out of range"));
        assert!(err_of("uint8 A=-1\n").message.contains("out of range"));
        assert!(err_of("int32 lowercase=1\n")
            .message
            .contains("constant name"));
        assert!(err_of("int32 BadName\n").message.contains("field name"));
        assert!(err_of("int32 a__b\n").message.contains("field name"));
        assert!(err_of("float64[0] a\n").message.contains("> 0"));
        assert!(err_of("float64[x] a\n").message.contains("> 0"));
        assert!(err_of("string<=3 s \"abcd\"\n")
            .message
            .contains("at most 3"));
        assert!(err_of("int8[2] v [1]\n").message.contains("exactly 2"));
        assert!(err_of("int8[<=1] v [1, 2]\n").message.contains("at most 1"));
        assert!(err_of("geometry_msgs/Point p 3\n")
            .message
            .contains("only primitive"));
        assert!(err_of("geometry_msgs/Point[] P=3\n")
            .message
            .contains("constants"));
        assert!(err_of("bool b maybe\n").message.contains("not a bool"));
        assert!(err_of("float32 f 1e39\n").message.contains("float32"));
        assert!(err_of("@optional int8 a\n").message.contains("annotations"));
        assert!(err_of("int8\n").message.contains("expected"));
        assert!(err_of("a/b/C c\n").message.contains("unknown type"));
    }

    #[test]
    fn services_split_at_the_separator() {
        let s = parse_service(
            "pkg",
            "Do",
            "pkg/srv/Do.srv",
            "# doc\nint8 a\n---\nbool ok\n",
        )
        .unwrap();
        assert_eq!(s.request.type_name(), "pkg/srv/Do_Request");
        assert_eq!(s.response.type_name(), "pkg/srv/Do_Response");
        assert_eq!(s.request.text, "# doc\nint8 a\n");
        assert_eq!(s.response.text, "bool ok\n");
        assert_eq!(s.response.fields[0].line, 4);
        let e = parse_service(
            "pkg",
            "Do",
            "f.srv",
            "int8 a\n---\nbool ok\nbad line here x\n",
        )
        .unwrap_err();
        assert_eq!(e.line, 4);
        assert!(parse_service("pkg", "Do", "f.srv", "int8 a\n").is_err());
        assert_eq!(
            parse_service("pkg", "Do", "f.srv", "---\n---\n")
                .unwrap_err()
                .line,
            2
        );
    }

    #[test]
    fn name_rules() {
        assert!(is_package_name("geometry_msgs"));
        assert!(!is_package_name("Geometry"));
        assert!(!is_package_name("a_"));
        assert!(is_type_name("Pose2D"));
        assert!(!is_type_name("pose"));
        assert!(is_constant_name("MODE_IDLE"));
        assert!(!is_constant_name("MODE__IDLE"));
        assert!(!is_constant_name("Mode"));
        assert!(parse_message("Bad", "X", "f", "").is_err());
        assert!(parse_message("pkg", "bad", "f", "").is_err());
    }
}
