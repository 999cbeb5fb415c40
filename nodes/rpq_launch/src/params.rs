//! Typing of `<param value="...">` and its encoding for `--ros-args -p name:=value`.
//!
//! ROS 2 launch reads an untyped value with YAML 1.1 rules (PyYAML's `safe_load`):
//! `10` is an integer, `10.0` a double, `true`/`yes`/`on` booleans, `[1, 2]` a list,
//! `'10'` a string; `type="str|int|float|bool|list_of_*|yaml"` forces a type.
//! [`ParamValue::to_yaml`] writes the value back so that the node's own YAML reader
//! (rcl's or ours) gets exactly that type: strings that could be read as anything else
//! are quoted.

/// A typed ROS parameter value.
#[derive(Debug, Clone, PartialEq)]
pub enum ParamValue {
    /// `bool`
    Bool(bool),
    /// `integer` (int64)
    Int(i64),
    /// `double`
    Double(f64),
    /// `string`
    Str(String),
    /// `bool[]`
    BoolList(Vec<bool>),
    /// `integer[]`
    IntList(Vec<i64>),
    /// `double[]`
    DoubleList(Vec<f64>),
    /// `string[]`
    StrList(Vec<String>),
}

/// The `type` attribute of `<param>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamType {
    /// `str`
    Str,
    /// `bool`
    Bool,
    /// `int`
    Int,
    /// `float`
    Float,
    /// `list_of_str`
    ListOfStr,
    /// `list_of_bool`
    ListOfBool,
    /// `list_of_int`
    ListOfInt,
    /// `list_of_float`
    ListOfFloat,
}

impl ParamType {
    /// Parses a `type` attribute; `yaml` (the default rules) gives `Ok(None)`.
    pub fn from_identifier(id: &str) -> Result<Option<ParamType>, String> {
        Ok(Some(match id {
            "str" => ParamType::Str,
            "bool" => ParamType::Bool,
            "int" => ParamType::Int,
            "float" => ParamType::Float,
            "list_of_str" => ParamType::ListOfStr,
            "list_of_bool" => ParamType::ListOfBool,
            "list_of_int" => ParamType::ListOfInt,
            "list_of_float" => ParamType::ListOfFloat,
            "yaml" => return Ok(None),
            other => {
                return Err(format!(
                    "unknown type '{other}' (expected str, bool, int, float, list_of_str, \
                     list_of_bool, list_of_int, list_of_float or yaml)"
                ))
            }
        }))
    }

    fn scalar(self) -> ParamType {
        match self {
            ParamType::ListOfStr => ParamType::Str,
            ParamType::ListOfBool => ParamType::Bool,
            ParamType::ListOfInt => ParamType::Int,
            ParamType::ListOfFloat => ParamType::Float,
            s => s,
        }
    }

    fn is_list(self) -> bool {
        self != self.scalar()
    }
}

/// A YAML scalar after PyYAML's implicit resolution.
#[derive(Debug, Clone, PartialEq)]
enum Scalar {
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
}

impl Scalar {
    fn kind(&self) -> &'static str {
        match self {
            Scalar::Bool(_) => "bool",
            Scalar::Int(_) => "int",
            Scalar::Float(_) => "float",
            Scalar::Str(_) => "str",
        }
    }
}

/// Types a whole `value` attribute (after substitution).
///
/// ```
/// use rpq_launch::params::{typed_value, ParamType, ParamValue};
/// assert_eq!(typed_value("10", None).unwrap(), ParamValue::Int(10));
/// assert_eq!(typed_value("'10'", None).unwrap(), ParamValue::Str("10".into()));
/// assert_eq!(typed_value("10", Some(ParamType::Str)).unwrap(), ParamValue::Str("10".into()));
/// assert_eq!(typed_value("[1.5, 2.0]", None).unwrap(), ParamValue::DoubleList(vec![1.5, 2.0]));
/// ```
pub fn typed_value(text: &str, ty: Option<ParamType>) -> Result<ParamValue, String> {
    match ty {
        None => {
            if text.is_empty() {
                // ROS 2 forwards an empty value as an empty string.
                return Ok(ParamValue::Str(String::new()));
            }
            match yaml_node(text)? {
                YamlNode::Scalar(s) => Ok(scalar_value(s)),
                YamlNode::List(items) => uniform_list(items),
            }
        }
        Some(t) if t.is_list() => {
            let YamlNode::List(items) = yaml_node(text)? else {
                return Err(format!("'{text}' is not a YAML list"));
            };
            let wanted = t.scalar();
            let items = items
                .into_iter()
                .map(|s| match (wanted, s) {
                    (ParamType::Str, Scalar::Str(x)) => Ok(Scalar::Str(x)),
                    (ParamType::Bool, Scalar::Bool(x)) => Ok(Scalar::Bool(x)),
                    (ParamType::Int, Scalar::Int(x)) => Ok(Scalar::Int(x)),
                    (ParamType::Float, Scalar::Float(x)) => Ok(Scalar::Float(x)),
                    (_, s) => Err(format!(
                        "item {s:?} of '{text}' is a {}, not a {}",
                        s.kind(),
                        type_name(wanted)
                    )),
                })
                .collect::<Result<Vec<_>, _>>()?;
            uniform_list(items)
        }
        Some(t) => Ok(scalar_value(coerce_scalar(text, t)?)),
    }
}

/// Types a list given with `value-sep` (each item after substitution).
pub fn typed_list(items: &[String], ty: Option<ParamType>) -> Result<ParamValue, String> {
    let scalars = items
        .iter()
        .map(|item| match ty {
            None => {
                if item.is_empty() {
                    return Ok(Scalar::Str(String::new()));
                }
                match yaml_node(item)? {
                    YamlNode::Scalar(s) => Ok(s),
                    YamlNode::List(_) => Err(format!("list item '{item}' is itself a list")),
                }
            }
            Some(t) => coerce_scalar(item, t.scalar()),
        })
        .collect::<Result<Vec<_>, _>>()?;
    uniform_list(scalars)
}

fn type_name(t: ParamType) -> &'static str {
    match t {
        ParamType::Str => "str",
        ParamType::Bool => "bool",
        ParamType::Int => "int",
        ParamType::Float => "float",
        ParamType::ListOfStr => "list_of_str",
        ParamType::ListOfBool => "list_of_bool",
        ParamType::ListOfInt => "list_of_int",
        ParamType::ListOfFloat => "list_of_float",
    }
}

fn scalar_value(s: Scalar) -> ParamValue {
    match s {
        Scalar::Bool(b) => ParamValue::Bool(b),
        Scalar::Int(i) => ParamValue::Int(i),
        Scalar::Float(f) => ParamValue::Double(f),
        Scalar::Str(s) => ParamValue::Str(s),
    }
}

fn uniform_list(items: Vec<Scalar>) -> Result<ParamValue, String> {
    let Some(first) = items.first() else {
        return Err("empty lists are not allowed as parameter values".to_string());
    };
    let kind = first.kind();
    if let Some(odd) = items.iter().find(|s| s.kind() != kind) {
        return Err(format!(
            "list items must all have one type; found a {} ({odd:?}) among {kind}s",
            odd.kind()
        ));
    }
    Ok(match first {
        Scalar::Bool(_) => ParamValue::BoolList(
            items
                .into_iter()
                .filter_map(|s| {
                    if let Scalar::Bool(b) = s {
                        Some(b)
                    } else {
                        None
                    }
                })
                .collect(),
        ),
        Scalar::Int(_) => ParamValue::IntList(
            items
                .into_iter()
                .filter_map(|s| {
                    if let Scalar::Int(b) = s {
                        Some(b)
                    } else {
                        None
                    }
                })
                .collect(),
        ),
        Scalar::Float(_) => ParamValue::DoubleList(
            items
                .into_iter()
                .filter_map(|s| {
                    if let Scalar::Float(b) = s {
                        Some(b)
                    } else {
                        None
                    }
                })
                .collect(),
        ),
        Scalar::Str(_) => ParamValue::StrList(
            items
                .into_iter()
                .filter_map(|s| {
                    if let Scalar::Str(b) = s {
                        Some(b)
                    } else {
                        None
                    }
                })
                .collect(),
        ),
    })
}

/// Coerces a scalar as ROS 2 launch does for an explicit `type`.
fn coerce_scalar(text: &str, t: ParamType) -> Result<Scalar, String> {
    match t.scalar() {
        ParamType::Str => Ok(Scalar::Str(text.to_string())),
        ParamType::Int => python_int(text)
            .map(Scalar::Int)
            .ok_or_else(|| format!("'{text}' is not an int")),
        ParamType::Float => python_float(text)
            .map(Scalar::Float)
            .ok_or_else(|| format!("'{text}' is not a float")),
        ParamType::Bool => {
            let t2 = match text {
                "1" => "true",
                "0" => "false",
                x => x,
            };
            match resolve_plain(t2.trim()) {
                Ok(Some(Scalar::Bool(b))) => Ok(Scalar::Bool(b)),
                _ => Err(format!("'{text}' is not a bool")),
            }
        }
        _ => unreachable!("scalar() never returns a list type"),
    }
}

/// Python's `int(text)`: optional sign, decimal digits, single underscores between digits.
fn python_int(text: &str) -> Option<i64> {
    let t = text.trim();
    let (neg, digits) = match t.as_bytes().first()? {
        b'-' => (true, &t[1..]),
        b'+' => (false, &t[1..]),
        _ => (false, t),
    };
    if digits.is_empty()
        || digits.starts_with('_')
        || digits.ends_with('_')
        || digits.contains("__")
        || !digits.chars().all(|c| c.is_ascii_digit() || c == '_')
    {
        return None;
    }
    let clean: String = digits.chars().filter(|&c| c != '_').collect();
    let v: i64 = clean.parse().ok()?;
    Some(if neg { -v } else { v })
}

/// Python's `float(text)`.
fn python_float(text: &str) -> Option<f64> {
    let t = text.trim();
    if t.is_empty() || t.contains("__") || t.starts_with('_') || t.ends_with('_') {
        return None;
    }
    let clean: String = t.chars().filter(|&c| c != '_').collect();
    clean.parse::<f64>().ok()
}

enum YamlNode {
    Scalar(Scalar),
    List(Vec<Scalar>),
}

/// Reads a one-line YAML document: a scalar (plain or quoted) or a flow sequence of scalars.
/// Anything else (mappings, anchors, tags, block scalars, comments) is refused: ROS 2 would
/// reject it too or read something surprising.
fn yaml_node(text: &str) -> Result<YamlNode, String> {
    let t = text.trim_matches([' ', '\t', '\r', '\n']);
    if let Some(inner) = t.strip_prefix('[') {
        let Some(inner) = inner.strip_suffix(']') else {
            return Err(format!(
                "'{text}' is not a valid YAML flow list (missing ']')"
            ));
        };
        return flow_items(inner, text).map(YamlNode::List);
    }
    yaml_scalar(t, text, false).map(YamlNode::Scalar)
}

fn flow_items(inner: &str, whole: &str) -> Result<Vec<Scalar>, String> {
    let chars: Vec<char> = inner.chars().collect();
    let mut items = Vec::new();
    let mut i = 0;
    let mut cur = String::new();
    let mut quoted_item = false;
    loop {
        let c = chars.get(i).copied();
        match c {
            None | Some(',') => {
                let piece = cur.trim().to_string();
                if piece.is_empty() && !quoted_item {
                    if c.is_none() && items.is_empty() {
                        break; // `[]`
                    }
                    return Err(format!("'{whole}' has an empty list item"));
                }
                items.push(yaml_scalar(&piece, whole, true)?);
                cur.clear();
                quoted_item = false;
                if c.is_none() {
                    break;
                }
                i += 1;
            }
            Some(q @ ('\'' | '"')) if cur.trim().is_empty() => {
                // Copy the quoted scalar verbatim, it is decoded by yaml_scalar.
                quoted_item = true;
                cur.clear();
                cur.push(q);
                i += 1;
                loop {
                    let Some(&d) = chars.get(i) else {
                        return Err(format!("'{whole}' has an unterminated quoted item"));
                    };
                    cur.push(d);
                    i += 1;
                    if q == '"' && d == '\\' {
                        if let Some(&e) = chars.get(i) {
                            cur.push(e);
                            i += 1;
                        }
                        continue;
                    }
                    if d == q {
                        if q == '\'' && chars.get(i) == Some(&'\'') {
                            cur.push('\'');
                            i += 1;
                            continue;
                        }
                        break;
                    }
                }
            }
            Some('[' | ']' | '{' | '}') => {
                return Err(format!(
                    "'{whole}': nested lists and mappings are not allowed as parameter values"
                ))
            }
            Some(ch) => {
                cur.push(ch);
                i += 1;
            }
        }
    }
    Ok(items)
}

fn yaml_scalar(t: &str, whole: &str, in_flow: bool) -> Result<Scalar, String> {
    if let Some(rest) = t.strip_prefix('\'') {
        let Some(body) = rest.strip_suffix('\'') else {
            return Err(format!("'{whole}': unterminated single-quoted string"));
        };
        if body.replace("''", "").contains('\'') {
            return Err(format!("'{whole}': stray quote in single-quoted string"));
        }
        return Ok(Scalar::Str(body.replace("''", "'")));
    }
    if let Some(rest) = t.strip_prefix('"') {
        let Some(body) = rest.strip_suffix('"') else {
            return Err(format!("'{whole}': unterminated double-quoted string"));
        };
        return double_quoted(body)
            .map(Scalar::Str)
            .map_err(|e| format!("'{whole}': {e}"));
    }
    let refuse = |why: &str| {
        Err(format!(
            "'{whole}' is not a plain YAML scalar ({why}); quote it or add type=\"str\""
        ))
    };
    if let Some(c) = t.chars().next() {
        if "{&*!|>%@`#".contains(c) {
            return refuse("it starts with a YAML indicator");
        }
        if (c == '-' || c == '?' || c == ':') && t[1..].starts_with([' ', '\t']) {
            return refuse("it starts with a YAML block indicator");
        }
    }
    if t.contains(": ") || t.ends_with(':') {
        return refuse("it would be read as a mapping");
    }
    if t.contains(" #") || t.contains('\n') {
        return refuse("it holds a comment or a line break");
    }
    if in_flow && t.contains(['[', ']', '{', '}', ',']) {
        return refuse("it holds flow indicators");
    }
    match resolve_plain(t)? {
        Some(s) => Ok(s),
        None => Err(format!(
            "'{whole}' is YAML null, which is not a parameter value"
        )),
    }
}

fn double_quoted(body: &str) -> Result<String, String> {
    let mut out = String::new();
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => return Err("stray quote in double-quoted string".to_string()),
            '\\' => match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some('r') => out.push('\r'),
                Some('0') => out.push('\0'),
                Some('\\') => out.push('\\'),
                Some('"') => out.push('"'),
                Some('/') => out.push('/'),
                Some(' ') => out.push(' '),
                Some(x @ ('x' | 'u' | 'U')) => {
                    let n = match x {
                        'x' => 2,
                        'u' => 4,
                        _ => 8,
                    };
                    let hex: String = chars.by_ref().take(n).collect();
                    let ch = u32::from_str_radix(&hex, 16)
                        .ok()
                        .filter(|_| hex.len() == n)
                        .and_then(char::from_u32)
                        .ok_or_else(|| format!("bad escape \\{x}{hex}"))?;
                    out.push(ch);
                }
                Some(x) => return Err(format!("unsupported escape \\{x}")),
                None => return Err("trailing backslash".to_string()),
            },
            c => out.push(c),
        }
    }
    Ok(out)
}

/// PyYAML's implicit resolver for a plain scalar: bool, int, float, null (`None`) or string.
fn resolve_plain(t: &str) -> Result<Option<Scalar>, String> {
    match t {
        "" | "~" | "null" | "Null" | "NULL" => return Ok(None),
        "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => {
            return Ok(Some(Scalar::Bool(true)))
        }
        "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => {
            return Ok(Some(Scalar::Bool(false)))
        }
        _ => {}
    }
    if let Some(i) = yaml11_int(t)? {
        return Ok(Some(Scalar::Int(i)));
    }
    if let Some(f) = yaml11_float(t) {
        return Ok(Some(Scalar::Float(f)));
    }
    if looks_like_timestamp(t) {
        return Err(format!(
            "'{t}' is a YAML date/timestamp, which is not a parameter value; add type=\"str\""
        ));
    }
    Ok(Some(Scalar::Str(t.to_string())))
}

fn split_sign(t: &str) -> (bool, &str) {
    match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    }
}

fn all_in(s: &str, ok: impl Fn(char) -> bool) -> bool {
    !s.is_empty() && s.chars().all(ok)
}

/// YAML 1.1 int (`[-+]?(0b[01_]+|0[0-7_]+|(0|[1-9][0-9_]*)|0x[0-9a-fA-F_]+|[1-9][0-9_]*(:[0-5]?[0-9])+)`).
fn yaml11_int(t: &str) -> Result<Option<i64>, String> {
    let (neg, body) = split_sign(t);
    let parsed: Option<Option<i128>> = if let Some(b) = body.strip_prefix("0b") {
        all_in(b, |c| c == '0' || c == '1' || c == '_').then(|| radix(b, 2))
    } else if let Some(h) = body.strip_prefix("0x") {
        all_in(h, |c| c.is_ascii_hexdigit() || c == '_').then(|| radix(h, 16))
    } else if body == "0" {
        Some(Some(0))
    } else if body.len() > 1 && body.starts_with('0') {
        all_in(&body[1..], |c| ('0'..='7').contains(&c) || c == '_').then(|| radix(&body[1..], 8))
    } else if body.starts_with(|c: char| ('1'..='9').contains(&c)) {
        if let Some((head, tail)) = body.split_once(':') {
            sexagesimal_int(head, tail)
        } else {
            all_in(body, |c| c.is_ascii_digit() || c == '_').then(|| radix(body, 10))
        }
    } else {
        None
    };
    match parsed {
        None => Ok(None),
        Some(None) => Err(format!("integer '{t}' is out of range")),
        Some(Some(v)) => {
            let v = if neg { -v } else { v };
            i64::try_from(v)
                .map(Some)
                .map_err(|_| format!("integer '{t}' does not fit in 64 bits"))
        }
    }
}

fn radix(digits: &str, base: u32) -> Option<i128> {
    let clean: String = digits.chars().filter(|&c| c != '_').collect();
    if clean.is_empty() {
        return Some(0);
    }
    i128::from_str_radix(&clean, base).ok()
}

fn sexagesimal_int(head: &str, tail: &str) -> Option<Option<i128>> {
    if !all_in(head, |c| c.is_ascii_digit() || c == '_') {
        return None;
    }
    let mut v = radix(head, 10)?;
    for seg in tail.split(':') {
        if seg.is_empty() || seg.len() > 2 || !seg.chars().all(|c| c.is_ascii_digit()) {
            return None;
        }
        if seg.len() == 2 && seg.as_bytes()[0] > b'5' {
            return None;
        }
        v = v.checked_mul(60)?.checked_add(seg.parse::<i128>().ok()?)?;
    }
    Some(Some(v))
}

/// YAML 1.1 float as PyYAML resolves it (a `.` is required, an exponent needs a sign).
fn yaml11_float(t: &str) -> Option<f64> {
    match t {
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => return Some(f64::INFINITY),
        "-.inf" | "-.Inf" | "-.INF" => return Some(f64::NEG_INFINITY),
        ".nan" | ".NaN" | ".NAN" => return Some(f64::NAN),
        _ => {}
    }
    let (neg, body) = split_sign(t);
    let (mantissa, exponent) = match body.find(['e', 'E']) {
        Some(p) => (&body[..p], Some(&body[p + 1..])),
        None => (body, None),
    };
    if let Some(e) = exponent {
        let digits = e.strip_prefix(['+', '-'])?;
        if e.len() == digits.len() || !all_in(digits, |c| c.is_ascii_digit()) {
            return None;
        }
    }
    let (int_part, frac) = mantissa.split_once('.')?;
    let sexagesimal = int_part.contains(':');
    if sexagesimal {
        if exponent.is_some() {
            return None;
        }
        let (head, tail) = int_part.split_once(':')?;
        if !head.starts_with(|c: char| c.is_ascii_digit()) {
            return None;
        }
        let whole = sexagesimal_int(head, tail)??;
        if !frac.chars().all(|c| c.is_ascii_digit() || c == '_') {
            return None;
        }
        let f: f64 = format!("0.{}", frac.replace('_', "")).parse().ok()?;
        let v = whole as f64 + f;
        return Some(if neg { -v } else { v });
    }
    if int_part.is_empty() {
        // `\.[0-9][0-9_]*` and no sign allowed
        if t.starts_with(['+', '-']) || !frac.starts_with(|c: char| c.is_ascii_digit()) {
            return None;
        }
    } else if !int_part.starts_with(|c: char| c.is_ascii_digit())
        || !int_part.chars().all(|c| c.is_ascii_digit() || c == '_')
    {
        return None;
    }
    if !frac.chars().all(|c| c.is_ascii_digit() || c == '_') {
        return None;
    }
    let clean: String = body.chars().filter(|&c| c != '_').collect();
    let clean = if clean.starts_with('.') {
        format!("0{clean}")
    } else {
        clean
    };
    let v: f64 = clean
        .replace(".e", ".0e")
        .replace(".E", ".0E")
        .parse()
        .ok()?;
    Some(if neg { -v } else { v })
}

fn looks_like_timestamp(t: &str) -> bool {
    let b = t.as_bytes();
    b.len() >= 8
        && b[..4].iter().all(u8::is_ascii_digit)
        && b[4] == b'-'
        && t[5..]
            .split(['-', 'T', 't', ' '])
            .take(2)
            .all(|s| !s.is_empty() && s.len() <= 2 && s.bytes().all(|c| c.is_ascii_digit()))
}

impl ParamValue {
    /// The value as YAML that ROS 2 (rcl) and rpq_ros read back with the same type.
    ///
    /// ```
    /// use rpq_launch::params::ParamValue;
    /// assert_eq!(ParamValue::Str("10".into()).to_yaml(), "'10'");
    /// assert_eq!(ParamValue::Str("base_link".into()).to_yaml(), "base_link");
    /// assert_eq!(ParamValue::Double(2.0).to_yaml(), "2.0");
    /// assert_eq!(ParamValue::IntList(vec![1, 2]).to_yaml(), "[1, 2]");
    /// ```
    pub fn to_yaml(&self) -> String {
        fn list<T>(items: &[T], f: impl Fn(&T) -> String) -> String {
            format!("[{}]", items.iter().map(f).collect::<Vec<_>>().join(", "))
        }
        match self {
            ParamValue::Bool(b) => b.to_string(),
            ParamValue::Int(i) => i.to_string(),
            ParamValue::Double(f) => yaml_float(*f),
            ParamValue::Str(s) => yaml_string(s),
            ParamValue::BoolList(v) => list(v, |b| b.to_string()),
            ParamValue::IntList(v) => list(v, |i| i.to_string()),
            ParamValue::DoubleList(v) => list(v, |f| yaml_float(*f)),
            ParamValue::StrList(v) => list(v, |s| yaml_string(s)),
        }
    }
}

/// A double that every YAML reader takes as a double: always a `.`, signed exponent.
pub fn yaml_float(f: f64) -> String {
    if f.is_nan() {
        return ".nan".to_string();
    }
    if f.is_infinite() {
        return if f > 0.0 { ".inf" } else { "-.inf" }.to_string();
    }
    let s = format!("{f:?}");
    match s.find('e') {
        Some(p) => {
            let (m, e) = (&s[..p], &s[p + 1..]);
            let m = if m.contains('.') {
                m.to_string()
            } else {
                format!("{m}.0")
            };
            let e = if e.starts_with('-') {
                e.to_string()
            } else {
                format!("+{e}")
            };
            format!("{m}e{e}")
        }
        None => s,
    }
}

/// A string that no YAML reader takes for anything else: plain when obviously safe,
/// otherwise quoted.
pub fn yaml_string(s: &str) -> String {
    const KEYWORDS: [&str; 12] = [
        "true", "false", "yes", "no", "on", "off", "y", "n", "null", "nan", "inf", "infinity",
    ];
    let plain_ok = s.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_' || c == '/')
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '/' | '.' | '-'))
        && !KEYWORDS.contains(&s.to_ascii_lowercase().as_str());
    if plain_ok {
        return s.to_string();
    }
    if s.chars().any(char::is_control) {
        let mut out = String::from("\"");
        for c in s.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\t' => out.push_str("\\t"),
                '\r' => out.push_str("\\r"),
                c if c.is_control() => out.push_str(&format!("\\u{:04x}", c as u32)),
                c => out.push(c),
            }
        }
        out.push('"');
        return out;
    }
    format!("'{}'", s.replace('\'', "''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(text: &str) -> ParamValue {
        typed_value(text, None).unwrap_or_else(|e| panic!("{text:?}: {e}"))
    }

    #[test]
    fn untyped_values_follow_yaml_1_1() {
        assert_eq!(v("10"), ParamValue::Int(10));
        assert_eq!(v("-3"), ParamValue::Int(-3));
        assert_eq!(v("1_000"), ParamValue::Int(1000));
        assert_eq!(v("0x1F"), ParamValue::Int(31));
        assert_eq!(v("010"), ParamValue::Int(8));
        assert_eq!(v("0b101"), ParamValue::Int(5));
        assert_eq!(v("1:30"), ParamValue::Int(90));
        assert_eq!(v("10.0"), ParamValue::Double(10.0));
        assert_eq!(v("1."), ParamValue::Double(1.0));
        assert_eq!(v(".5"), ParamValue::Double(0.5));
        assert_eq!(v("-2.5e-3"), ParamValue::Double(-2.5e-3));
        assert_eq!(v("1.5e+2"), ParamValue::Double(150.0));
        assert_eq!(v(".inf"), ParamValue::Double(f64::INFINITY));
        assert!(matches!(v(".nan"), ParamValue::Double(x) if x.is_nan()));
        // YAML 1.1 needs a dot: these stay strings, as in PyYAML.
        assert_eq!(v("1e5"), ParamValue::Str("1e5".into()));
        assert_eq!(v("1.0e5"), ParamValue::Str("1.0e5".into()));
        assert_eq!(v("true"), ParamValue::Bool(true));
        assert_eq!(v("Yes"), ParamValue::Bool(true));
        assert_eq!(v("off"), ParamValue::Bool(false));
        assert_eq!(v("base_link"), ParamValue::Str("base_link".into()));
        assert_eq!(v("1.2.3"), ParamValue::Str("1.2.3".into()));
        assert_eq!(v("  padded  "), ParamValue::Str("padded".into()));
        assert_eq!(v(""), ParamValue::Str(String::new()));
        assert_eq!(v("'10'"), ParamValue::Str("10".into()));
        assert_eq!(v("\"a\\tb\""), ParamValue::Str("a\tb".into()));
        assert_eq!(v("'it''s'"), ParamValue::Str("it's".into()));
        assert_eq!(v("http://x/y"), ParamValue::Str("http://x/y".into()));
    }

    #[test]
    fn untyped_lists() {
        assert_eq!(v("[1, 2, 3]"), ParamValue::IntList(vec![1, 2, 3]));
        assert_eq!(v("[0.5, 1.0]"), ParamValue::DoubleList(vec![0.5, 1.0]));
        assert_eq!(v("[true, no]"), ParamValue::BoolList(vec![true, false]));
        assert_eq!(
            v("[a, 'b, c', \"d\"]"),
            ParamValue::StrList(vec!["a".into(), "b, c".into(), "d".into()])
        );
        for bad in ["[]", "[1, 2.0]", "[1, a]", "[[1]]", "[1, , 2]", "[1, 2"] {
            assert!(typed_value(bad, None).is_err(), "{bad}");
        }
    }

    #[test]
    fn untyped_refusals() {
        for bad in [
            "~",
            "null",
            "a: b",
            "{a: 1}",
            "&anchor x",
            "*alias",
            "!tag x",
            "- item",
            "x #c",
            "2024-01-05",
            "|",
            "key:",
        ] {
            assert!(typed_value(bad, None).is_err(), "{bad:?} should be refused");
        }
        assert!(typed_value("99999999999999999999", None).is_err());
    }

    #[test]
    fn explicit_types() {
        use ParamType::*;
        assert_eq!(
            typed_value("10", Some(Str)).unwrap(),
            ParamValue::Str("10".into())
        );
        assert_eq!(
            typed_value("true", Some(Str)).unwrap(),
            ParamValue::Str("true".into())
        );
        assert_eq!(
            typed_value("10", Some(Float)).unwrap(),
            ParamValue::Double(10.0)
        );
        assert_eq!(
            typed_value("1e5", Some(Float)).unwrap(),
            ParamValue::Double(1e5)
        );
        assert_eq!(typed_value(" 7 ", Some(Int)).unwrap(), ParamValue::Int(7));
        assert!(typed_value("7.5", Some(Int)).is_err());
        assert!(typed_value("abc", Some(Float)).is_err());
        assert_eq!(
            typed_value("1", Some(Bool)).unwrap(),
            ParamValue::Bool(true)
        );
        assert_eq!(
            typed_value("0", Some(Bool)).unwrap(),
            ParamValue::Bool(false)
        );
        assert_eq!(
            typed_value("on", Some(Bool)).unwrap(),
            ParamValue::Bool(true)
        );
        assert!(typed_value("2", Some(Bool)).is_err());
        assert_eq!(
            typed_value("[1.0, 2.5]", Some(ListOfFloat)).unwrap(),
            ParamValue::DoubleList(vec![1.0, 2.5])
        );
        assert!(typed_value("[1, 2]", Some(ListOfFloat)).is_err());
        assert!(typed_value("5", Some(ListOfInt)).is_err());
        assert_eq!(ParamType::from_identifier("yaml").unwrap(), None);
        assert!(ParamType::from_identifier("double").is_err());
    }

    #[test]
    fn value_sep_lists() {
        let items = |s: &str| s.split(',').map(str::to_string).collect::<Vec<_>>();
        assert_eq!(
            typed_list(&items("1,2,3"), None).unwrap(),
            ParamValue::IntList(vec![1, 2, 3])
        );
        assert_eq!(
            typed_list(&items("1,2"), Some(ParamType::ListOfFloat)).unwrap(),
            ParamValue::DoubleList(vec![1.0, 2.0])
        );
        assert_eq!(
            typed_list(&items("a,b"), None).unwrap(),
            ParamValue::StrList(vec!["a".into(), "b".into()])
        );
        assert!(typed_list(&items("1,b"), None).is_err());
    }

    #[test]
    fn strings_are_quoted_exactly_when_needed() {
        let s = |x: &str| ParamValue::Str(x.into()).to_yaml();
        assert_eq!(s("base_link"), "base_link");
        assert_eq!(s("/robot/joint_states"), "/robot/joint_states");
        assert_eq!(s("10"), "'10'");
        assert_eq!(s("1.5"), "'1.5'");
        assert_eq!(s("true"), "'true'");
        assert_eq!(s("Yes"), "'Yes'");
        assert_eq!(s("nan"), "'nan'");
        assert_eq!(s(""), "''");
        assert_eq!(s("a b"), "'a b'");
        assert_eq!(s("it's"), "'it''s'");
        assert_eq!(s("a: b"), "'a: b'");
        assert_eq!(s("line1\nline2"), "\"line1\\nline2\"");
    }

    /// Writing a value and reading it back untyped gives the same value: the encoding is
    /// what makes `-p name:=<yaml>` keep the launch file's types.
    #[test]
    fn yaml_round_trip() {
        let values = vec![
            ParamValue::Bool(false),
            ParamValue::Int(-42),
            ParamValue::Double(3.0),
            ParamValue::Double(1e-9),
            ParamValue::Double(2.5e20),
            ParamValue::Double(f64::NEG_INFINITY),
            ParamValue::Str("10".into()),
            ParamValue::Str("off".into()),
            ParamValue::Str("a: b # c".into()),
            ParamValue::Str("x\ny\t\"q\"".into()),
            ParamValue::Str("[1, 2]".into()),
            ParamValue::Str("-".into()),
            ParamValue::Str("2024-01-05".into()),
            ParamValue::StrList(vec!["1".into(), "a,b".into(), "it's".into()]),
            ParamValue::DoubleList(vec![1.0, -0.5]),
            ParamValue::IntList(vec![0, 7]),
            ParamValue::BoolList(vec![true]),
        ];
        for value in values {
            let text = value.to_yaml();
            assert_eq!(typed_value(&text, None).unwrap(), value, "{text}");
        }
    }
}
