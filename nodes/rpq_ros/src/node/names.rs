//! Topic and service name expansion and remapping, following rcl
//! (<https://design.ros2.org/articles/topic_and_service_names.html>).
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
//! use rpq_ros::node::names::resolve;
//! assert_eq!(resolve("joint_states", "sim", "/arm", std::iter::empty()).unwrap(), "/arm/joint_states");
//! assert_eq!(resolve("~/status", "sim", "/", std::iter::empty()).unwrap(), "/sim/status");
//! ```

use crate::args::Remap;

/// Checks a topic or service name as written in code or in a remap rule (before expansion).
pub fn validate_topic(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("a topic or service name must not be empty".into());
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '/' | '~' | '{' | '}')))
    {
        return Err(format!("name {name:?} must not contain {c:?}"));
    }
    if let Some(pos) = name.find('~') {
        if pos != 0 || !(name.len() == 1 || name[1..].starts_with('/')) {
            return Err(format!(
                "name {name:?}: '~' may only start the name, as `~` or `~/...`"
            ));
        }
    }
    if name.contains("//") {
        return Err(format!("name {name:?} must not contain '//'"));
    }
    if name.ends_with('/') {
        return Err(format!("name {name:?} must not end with '/'"));
    }
    let mut depth = 0i32;
    for c in name.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            _ => {}
        }
        if !(0..=1).contains(&depth) {
            return Err(format!("name {name:?} has unbalanced or nested braces"));
        }
    }
    if depth != 0 {
        return Err(format!("name {name:?} has unbalanced braces"));
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
    validate_fully_qualified(&collapsed).map_err(|e| format!("name {name:?} expands to {e}"))?;
    Ok(collapsed)
}

fn validate_fully_qualified(fqn: &str) -> Result<(), String> {
    if !fqn.starts_with('/') || fqn.len() < 2 || fqn.ends_with('/') {
        return Err(format!(
            "{fqn:?}, which is not a valid fully qualified name"
        ));
    }
    for tok in fqn[1..].split('/') {
        let ok = !tok.is_empty()
            && !tok.starts_with(|c: char| c.is_ascii_digit())
            && tok.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !ok {
            return Err(format!("{fqn:?}, whose token {tok:?} is not valid"));
        }
    }
    Ok(())
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
