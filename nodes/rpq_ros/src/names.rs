//! ROS 2 name rules in one place: node names, namespaces, topic and service names, remap rules
//! and parameter names, checked as rcl and rmw check them, and topic/service name expansion and
//! remapping (<https://design.ros2.org/articles/topic_and_service_names.html>).
//!
//! Used by the `--ros-args` parser ([`crate::args`]), the node handle ([`crate::node`]) and the
//! launcher (`rpq_launch`), so that a name the launcher accepts is a name the node accepts.
//!
//! | kind | rule |
//! |---|---|
//! | node name | `[A-Za-z_][A-Za-z0-9_]*`, at most [`NODE_NAME_MAX_LENGTH`] characters |
//! | namespace | `/` or `/tok(/tok)*`, each token like a node name, at most [`NAMESPACE_MAX_LENGTH`] |
//! | topic or service name | tokens of `[A-Za-z0-9_]` not starting with a digit, separated by `/`; a leading `/` (absolute) or `~` / `~/...` (private); `{name}` substitutions; no `//`, no trailing `/` |
//! | fully qualified name | an expanded topic or service name: absolute, no `~` or `{}`, at most [`TOPIC_NAME_MAX_LENGTH`] |
//! | parameter name | `tok(.tok)*`, tokens of `[A-Za-z0-9_/]` |
//!
//! Expansion of a topic or service name for a node:
//!
//! * `/a/b` is absolute and stays as it is;
//! * `b` is relative: `<namespace>/b`;
//! * `~` is the node itself and `~/b` is private: `<namespace>/<node>/b`;
//! * `{node}` and `{ns}` (or `{namespace}`) are substituted.
//!
//! Remap rules are expanded the same way (with the node's final name and namespace) and compared
//! with the expanded name; the first rule that matches gives the result.
//!
//! ```
//! use rpq_ros::names::{resolve, validate_node_name};
//! assert_eq!(resolve("joint_states", "sim", "/arm", std::iter::empty()).unwrap(), "/arm/joint_states");
//! assert_eq!(resolve("~/status", "sim", "/", std::iter::empty()).unwrap(), "/sim/status");
//! assert!(validate_node_name("9lives").is_err());
//! ```

/// A remap rule `[node:]from:=to` (parsed by [`crate::args`], applied by [`resolve`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Remap {
    /// Only for the node of this name, if given.
    pub node: Option<String>,
    /// Name to match (may be relative or `~/private`).
    pub from: String,
    /// Replacement.
    pub to: String,
}

/// Longest node name rmw accepts (`RMW_NODE_NAME_MAX_NAME_LENGTH`), in bytes.
pub const NODE_NAME_MAX_LENGTH: usize = 255;

/// Longest fully qualified topic or service name rmw accepts (`RMW_TOPIC_MAX_NAME_LENGTH`: 255
/// less 8 bytes reserved for the DDS prefixes such as `rt/`), in bytes.
pub const TOPIC_NAME_MAX_LENGTH: usize = 255 - 8;

/// Longest namespace rmw accepts (`RMW_NAMESPACE_MAX_LENGTH`: room left for the shortest topic
/// `/x` under it), in bytes.
pub const NAMESPACE_MAX_LENGTH: usize = TOPIC_NAME_MAX_LENGTH - 2;

/// Whether `tok` is one token of a node name, namespace or fully qualified name:
/// `[A-Za-z_][A-Za-z0-9_]*`.
fn check_token(tok: &str) -> Result<(), String> {
    match tok.chars().next() {
        None => return Err("it is empty".into()),
        Some(c) if c.is_ascii_digit() => return Err(format!("it must not start with {c:?}")),
        Some(_) => {}
    }
    match tok
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '_'))
    {
        Some(c) => Err(format!(
            "it must not contain {c:?} (only letters, digits and '_')"
        )),
        None => Ok(()),
    }
}

/// Checks a node base name (rmw's rule): `[A-Za-z_][A-Za-z0-9_]*`, at most
/// [`NODE_NAME_MAX_LENGTH`] bytes.
pub fn validate_node_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("a node name must not be empty".into());
    }
    check_token(name).map_err(|e| format!("node name {name:?}: {e}"))?;
    if name.len() > NODE_NAME_MAX_LENGTH {
        return Err(format!(
            "a node name must not be longer than {NODE_NAME_MAX_LENGTH} characters"
        ));
    }
    Ok(())
}

/// Checks an absolute namespace (rmw's rule): `/` or `/tok(/tok)*` with tokens like node names,
/// at most [`NAMESPACE_MAX_LENGTH`] bytes.
pub fn validate_namespace(ns: &str) -> Result<(), String> {
    if !ns.starts_with('/') {
        return Err(format!(
            "namespace {ns:?} must be absolute (start with '/')"
        ));
    }
    if ns == "/" {
        return Ok(());
    }
    if ns.ends_with('/') {
        return Err(format!("namespace {ns:?} must not end with '/'"));
    }
    for tok in ns[1..].split('/') {
        if tok.is_empty() {
            return Err(format!("namespace {ns:?} must not contain '//'"));
        }
        check_token(tok).map_err(|e| format!("namespace {ns:?}: token {tok:?}: {e}"))?;
    }
    if ns.len() > NAMESPACE_MAX_LENGTH {
        return Err(format!(
            "namespace {ns:?} is longer than {NAMESPACE_MAX_LENGTH} characters"
        ));
    }
    Ok(())
}

/// Checks a topic or service name as written in code or in a remap rule, before expansion
/// (rcl's `rcl_validate_topic_name`, plus no `//`, which rcl finds only after expansion).
pub fn validate_topic(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("a topic or service name must not be empty".into());
    }
    if name.ends_with('/') {
        return Err(format!("name {name:?} must not end with '/'"));
    }
    if name.contains("//") {
        return Err(format!("name {name:?} must not contain '//'"));
    }
    let mut open: Option<usize> = None;
    for (i, c) in name.char_indices() {
        match c {
            '~' if i != 0 => {
                return Err(format!(
                    "name {name:?}: '~' may only start the name, as `~` or `~/...`"
                ))
            }
            '~' => {}
            '{' if open.is_some() => {
                return Err(format!("name {name:?} has nested braces"));
            }
            '{' => open = Some(i),
            '}' if open.is_none() => {
                return Err(format!("name {name:?} has unbalanced braces"));
            }
            '}' => open = None,
            '/' if open.is_some() => {
                return Err(format!(
                    "name {name:?}: a substitution must not contain '/'"
                ));
            }
            c if c.is_ascii_digit() && open == Some(i.wrapping_sub(1)) => {
                return Err(format!(
                    "name {name:?}: a substitution must not start with a digit"
                ));
            }
            c if c.is_ascii_alphanumeric() || matches!(c, '_' | '/') => {}
            c => return Err(format!("name {name:?} must not contain {c:?}")),
        }
    }
    if open.is_some() {
        return Err(format!("name {name:?} has unbalanced braces"));
    }
    if name.len() > 1 && name.starts_with('~') && !name[1..].starts_with('/') {
        return Err(format!(
            "name {name:?}: '~' may only start the name, as `~` or `~/...`"
        ));
    }
    for tok in name.split('/') {
        if tok.starts_with(|c: char| c.is_ascii_digit()) {
            return Err(format!(
                "name {name:?}: token {tok:?} must not start with a digit"
            ));
        }
    }
    Ok(())
}

/// Checks a fully qualified topic or service name (rmw's `rmw_validate_full_topic_name`): `/`
/// followed by `/`-separated tokens like node names, at most [`TOPIC_NAME_MAX_LENGTH`] bytes.
pub fn validate_full_topic_name(fqn: &str) -> Result<(), String> {
    if !fqn.starts_with('/') || fqn.len() < 2 || fqn.ends_with('/') {
        return Err(format!(
            "{fqn:?}, which is not a valid fully qualified name"
        ));
    }
    for tok in fqn[1..].split('/') {
        if check_token(tok).is_err() {
            return Err(format!("{fqn:?}, whose token {tok:?} is not valid"));
        }
    }
    if fqn.len() > TOPIC_NAME_MAX_LENGTH {
        return Err(format!(
            "{fqn:?}, which is longer than {TOPIC_NAME_MAX_LENGTH} characters"
        ));
    }
    Ok(())
}

/// Checks a parameter name as given to `-p` or in a launch file: `tok(.tok)*`, each token
/// non-empty and made of `[A-Za-z0-9_/]` (rcl's parameter override rule).
pub fn validate_parameter_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("the parameter name is empty".into());
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '/')))
    {
        return Err(format!("parameter name {name:?} must not contain {c:?}"));
    }
    if name.split('.').any(str::is_empty) {
        return Err(format!(
            "parameter name {name:?} must not start or end with '.' nor contain '..'"
        ));
    }
    Ok(())
}

/// Checks a remap rule `from:=to` (without a node prefix): the special rules `__node:=name` (or
/// `__name`) and `__ns:=/namespace`, or topic/service names on both sides.
pub fn validate_remap(from: &str, to: &str) -> Result<(), String> {
    match from {
        "__node" | "__name" => validate_node_name(to),
        "__ns" => validate_namespace(to),
        _ if from.starts_with("__") => Err(format!(
            "unknown special name {from:?} (expected __node, __name or __ns)"
        )),
        _ => {
            validate_topic(from)?;
            validate_topic(to)
        }
    }
}

/// Expands `name` to a fully qualified name for the node `node` in namespace `namespace`.
pub fn expand(name: &str, node: &str, namespace: &str) -> Result<String, String> {
    validate_topic(name)?;
    let ns_prefix = if namespace == "/" { "" } else { namespace };
    let mut s = name.to_string();
    for (key, val) in [
        ("{node}", node),
        ("{ns}", namespace),
        ("{namespace}", namespace),
    ] {
        s = s.replace(key, val);
    }
    if s.contains('{') {
        return Err(format!(
            "name {name:?}: unknown substitution (only {{node}}, {{ns}} and {{namespace}} exist)"
        ));
    }
    let full = if s == "~" {
        format!("{ns_prefix}/{node}")
    } else if let Some(rest) = s.strip_prefix("~/") {
        format!("{ns_prefix}/{node}/{rest}")
    } else if s.starts_with('/') {
        s
    } else {
        format!("{ns_prefix}/{s}")
    };
    // Substituting "/" for {ns} can leave doubled slashes.
    let mut collapsed = String::with_capacity(full.len());
    for c in full.chars() {
        if !(c == '/' && collapsed.ends_with('/')) {
            collapsed.push(c);
        }
    }
    validate_full_topic_name(&collapsed).map_err(|e| format!("name {name:?} expands to {e}"))?;
    Ok(collapsed)
}

/// Expands `name` and applies the first matching remap rule, as rcl does.
pub fn resolve<'a>(
    name: &str,
    node: &str,
    namespace: &str,
    remaps: impl IntoIterator<Item = &'a Remap>,
) -> Result<String, String> {
    let expanded = expand(name, node, namespace)?;
    for rule in remaps {
        if expand(&rule.from, node, namespace)? == expanded {
            return expand(&rule.to, node, namespace);
        }
    }
    Ok(expanded)
}

/// Splits a ROS interface type name `pkg/msg/Name` (or `pkg/Name`) into package and type name,
/// checking that the middle part is `kind` (`"msg"` or `"srv"`).
pub fn split_type_name<'a>(full: &'a str, kind: &str) -> Result<(&'a str, &'a str), String> {
    let parts: Vec<&str> = full.split('/').collect();
    let ok_ident = |s: &str| {
        !s.is_empty()
            && s.starts_with(|c: char| c.is_ascii_alphabetic())
            && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    match parts.as_slice() {
        [pkg, mid, name] if *mid == kind && ok_ident(pkg) && ok_ident(name) => Ok((pkg, name)),
        [pkg, name] if ok_ident(pkg) && ok_ident(name) => Ok((pkg, name)),
        _ => Err(format!(
            "type name {full:?} is not of the form `package/{kind}/Name`"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(node: Option<&str>, from: &str, to: &str) -> Remap {
        Remap {
            node: node.map(str::to_string),
            from: from.into(),
            to: to.into(),
        }
    }

    #[test]
    fn node_names() {
        for good in [
            "a",
            "_x",
            "robot_sim",
            "A9_b",
            &"n".repeat(NODE_NAME_MAX_LENGTH),
        ] {
            assert!(validate_node_name(good).is_ok(), "{good:?} refused");
        }
        for (bad, needle) in [
            ("", "empty"),
            ("9lives", "start"),
            ("a-b", "'-'"),
            ("a/b", "'/'"),
            ("a b", "' '"),
            ("~", "'~'"),
            ("ä", "'ä'"),
        ] {
            let e = validate_node_name(bad).unwrap_err();
            assert!(e.contains(needle), "{bad:?}: {e}");
        }
        // rpq_launch checked the length and rpq_ros::args did not: both do now.
        let long = "n".repeat(NODE_NAME_MAX_LENGTH + 1);
        assert!(validate_node_name(&long).unwrap_err().contains("255"));
    }

    #[test]
    fn namespaces() {
        for good in ["/", "/arm", "/arm/left_1", "/_x/y"] {
            assert!(validate_namespace(good).is_ok(), "{good:?} refused");
        }
        for (bad, needle) in [
            ("arm", "absolute"),
            ("", "absolute"),
            ("/arm/", "end with"),
            ("/a//b", "//"),
            ("/9ns", "start"),
            ("/a b", "' '"),
            ("/a~b", "'~'"),
            ("/a/{ns}", "'{'"),
        ] {
            let e = validate_namespace(bad).unwrap_err();
            assert!(e.contains(needle), "{bad:?}: {e}");
        }
        // rpq_launch had no length limit for namespaces: rmw's applies to both now.
        let long = format!("/{}", "n".repeat(NAMESPACE_MAX_LENGTH));
        assert!(validate_namespace(&long).is_err());
        assert!(validate_namespace(&long[..NAMESPACE_MAX_LENGTH]).is_ok());
    }

    #[test]
    fn topic_names_follow_rcl() {
        for good in [
            "chatter", "/chatter", "~", "~/status", "a/b_2/c", "{node}/x", "/{ns}/x", "{node}",
            "_hidden",
        ] {
            assert!(validate_topic(good).is_ok(), "{good:?} refused");
        }
        for bad in [
            "", "/", "a/", "a//b", "~ping", "a/~", "a~", "1abc", "a/2b", "~/3", "a-b", "spa ce",
            "{node", "a}", "{{node}}", "{a/b}", "{4bar}", "ä",
        ] {
            assert!(validate_topic(bad).is_err(), "{bad:?} accepted");
        }
        assert!(validate_full_topic_name("/a/b").is_ok());
        for bad in ["a", "/", "/a/", "/a//b", "/1a", "/~", "/{node}"] {
            assert!(validate_full_topic_name(bad).is_err(), "{bad:?} accepted");
        }
        let long = format!("/{}", "t".repeat(TOPIC_NAME_MAX_LENGTH));
        assert!(validate_full_topic_name(&long).is_err());
    }

    #[test]
    fn parameter_names() {
        for good in [
            "rate",
            "ctrl.gain",
            "limits.max_linear_velocity",
            "a/b.c",
            "_x",
        ] {
            assert!(validate_parameter_name(good).is_ok(), "{good:?} refused");
        }
        for bad in ["", "a b", "a-b", "a:b", ".a", "a.", "a..b"] {
            assert!(validate_parameter_name(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn remap_rules() {
        assert!(validate_remap("__node", "sim").is_ok());
        assert!(validate_remap("__name", "sim").is_ok());
        assert!(validate_remap("__ns", "/arm").is_ok());
        assert!(validate_remap("chatter", "/talk").is_ok());
        assert!(validate_remap("~/x", "{node}/y").is_ok());
        assert!(validate_remap("__ns", "arm")
            .unwrap_err()
            .contains("absolute"));
        assert!(validate_remap("__node", "9").unwrap_err().contains("start"));
        assert!(validate_remap("__foo", "x").unwrap_err().contains("__foo"));
        assert!(validate_remap("a", "b//c").unwrap_err().contains("//"));
        // rpq_launch passed remaps through unchecked; both places refuse these now.
        assert!(validate_remap("a-b", "c").is_err());
        assert!(validate_remap("a", "").is_err());
    }

    #[test]
    fn expansion_table_from_the_ros2_design_article() {
        // node "my_node" in namespace "/my_ns", as in the design article's table
        let table = [
            ("ping", "/my_ns/ping"),
            ("/ping", "/ping"),
            ("~", "/my_ns/my_node"),
            ("~/ping", "/my_ns/my_node/ping"),
            ("{node}", "/my_ns/my_node"),
            ("{node}/ping", "/my_ns/my_node/ping"),
            ("{ns}/ping", "/my_ns/ping"),
            ("/{node}", "/my_node"),
            ("a/b/c", "/my_ns/a/b/c"),
        ];
        for (input, want) in table {
            assert_eq!(expand(input, "my_node", "/my_ns").unwrap(), want, "{input}");
        }
        assert_eq!(expand("ping", "n", "/").unwrap(), "/ping");
        assert_eq!(expand("~/ping", "n", "/").unwrap(), "/n/ping");
        assert_eq!(expand("{ns}/ping", "n", "/").unwrap(), "/ping");
    }

    #[test]
    fn invalid_names_are_rejected() {
        for bad in [
            "", "/", "a//b", "a/", "~ping", "a/~", "1abc", "a/2b", "a-b", "{foo}", "{node", "a}",
            "spa ce",
        ] {
            assert!(expand(bad, "n", "/ns").is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn remaps_first_match_wins_and_expand_both_sides() {
        let rules = [
            rule(None, "chatter", "/talk"),
            rule(None, "/my_ns/chatter", "/second"),
            rule(None, "~/status", "state"),
            rule(None, "/abs", "~/private"),
        ];
        let r = |name| resolve(name, "n", "/my_ns", &rules).unwrap();
        assert_eq!(r("chatter"), "/talk");
        assert_eq!(r("/my_ns/chatter"), "/talk");
        assert_eq!(r("~/status"), "/my_ns/state");
        assert_eq!(r("/my_ns/n/status"), "/my_ns/state");
        assert_eq!(r("/abs"), "/my_ns/n/private");
        assert_eq!(r("other"), "/my_ns/other");
    }

    #[test]
    fn type_names() {
        assert_eq!(
            split_type_name("sensor_msgs/msg/JointState", "msg").unwrap(),
            ("sensor_msgs", "JointState")
        );
        assert_eq!(
            split_type_name("std_srvs/Trigger", "srv").unwrap(),
            ("std_srvs", "Trigger")
        );
        assert!(split_type_name("std_srvs/srv/Trigger", "msg").is_err());
        assert!(split_type_name("JointState", "msg").is_err());
        assert!(split_type_name("a/msg/B/C", "msg").is_err());
    }
}
