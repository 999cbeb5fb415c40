//! The robot description (URDF text) of a node: from the file its parameter names, or from the
//! latched `robot_description` topic that `robot_state_publisher` (or `robot_sim`) publishes.
//!
//! A file the user names is an explicit choice and wins; with no file (an empty parameter) the
//! node takes the text from the topic, waiting for it up to a timeout. Every error names where
//! the description came from, so `robot_description_file x.urdf: cannot read it: ...` and
//! `topic /robot_description: ...` read the same in every node.
//!
//! The text is parsed by the caller (the transport knows no kinematics):
//!
//! ```no_run
//! # async fn f(node: &mut rpq_ros::node::RosNode) -> Result<(), rpq_ros::error::NodeError> {
//! use rpq_ros::robot_description::RobotDescription;
//! let file = node.params().str("robot_description_file")?.to_string();
//! let description = RobotDescription::load(node, &file).await?;
//! let joints = description.parse(|urdf| {
//!     if urdf.contains("<robot") { Ok(urdf.matches("<joint").count()) } else { Err("no <robot>") }
//! })?;
//! # Ok(()) }
//! ```
//!
//! **Mesh URIs.** A URDF usually names its meshes relative to itself (`../meshes/a.stl`), which
//! only a reader of the file can resolve. Before a node publishes the text,
//! [`RobotDescription::with_resolvable_mesh_uris`] rewrites every `<mesh filename="...">` so
//! that RViz (and any consumer of the topic) finds the file: `package://<pkg>/...` when the URDF
//! lies in an installed package's share directory, else `file://<absolute path>`. A consumer
//! resolves `package://` URIs through the ament index: [`mesh_package_dirs`] lists the
//! packages a description names with their share directories, [`ament_package_share`] finds one.

use std::{
    ops::Range,
    path::{Component, Path, PathBuf},
    pin::pin,
    time::Duration,
};

use futures::StreamExt;

use crate::{error::NodeError, msg::std_msgs::String as StringMsg, node::RosNode, qos};

/// Topic of the URDF text (relative, latched), as `robot_state_publisher` publishes it.
pub const ROBOT_DESCRIPTION_TOPIC: &str = "robot_description";

/// How long [`RobotDescription::load`] waits for the topic: 10 s, time enough for a
/// `robot_state_publisher` started by the same launch file.
pub const TOPIC_TIMEOUT: Duration = Duration::from_secs(10);

/// The URDF text of a robot and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct RobotDescription {
    /// The URDF (XML) text.
    pub urdf: String,
    /// Where it came from, as errors name it: `robot_description_file <file>` or
    /// `topic <fully qualified name>`.
    pub origin: String,
}

impl RobotDescription {
    /// Reads the file `file`; a failure names the file.
    pub fn from_file(file: &str) -> Result<Self, NodeError> {
        let origin = format!("robot_description_file {file}");
        match std::fs::read_to_string(file) {
            Ok(urdf) => Ok(Self { urdf, origin }),
            Err(e) => Err(NodeError::RobotDescription {
                origin,
                reason: format!("cannot read it: {e}"),
            }),
        }
    }

    /// Takes the text from the latched [`ROBOT_DESCRIPTION_TOPIC`] (resolved in `node`'s
    /// namespace and remappings), waiting at most `timeout` for a publisher to send it.
    pub async fn from_topic(node: &mut RosNode, timeout: Duration) -> Result<Self, NodeError> {
        Self::from_named_topic(node, ROBOT_DESCRIPTION_TOPIC, timeout).await
    }

    /// Takes the text from the latched topic `topic` (a robot's description in another
    /// namespace, such as `/left/robot_description`), waiting at most `timeout`.
    pub async fn from_named_topic(
        node: &mut RosNode,
        topic: &str,
        timeout: Duration,
    ) -> Result<Self, NodeError> {
        let name = node.resolve_name(topic)?;
        let origin = format!("topic {name}");
        let sub = node.subscription::<StringMsg>(topic, qos::latched())?;
        let mut stream = pin!(sub.async_stream());
        let first = tokio::time::timeout(timeout, async {
            loop {
                match stream.next().await {
                    Some(Ok((msg, _))) => return Ok(msg.data),
                    // a sample that does not decode: wait for the next one
                    Some(Err(e)) => node.logger().warn(format!("{origin}: {e}")),
                    None => return Err("the subscription ended".to_string()),
                }
            }
        })
        .await;
        match first {
            Ok(Ok(urdf)) => Ok(Self { urdf, origin }),
            Ok(Err(reason)) => Err(NodeError::RobotDescription { origin, reason }),
            Err(_) => Err(NodeError::RobotDescription {
                origin,
                reason: format!(
                    "nothing received within {} s (is robot_state_publisher running? or set \
                     robot_description_file)",
                    timeout.as_secs_f64()
                ),
            }),
        }
    }

    /// The description from `file` if it is not empty, else from the topic within
    /// [`TOPIC_TIMEOUT`] (see the module docs).
    pub async fn load(node: &mut RosNode, file: &str) -> Result<Self, NodeError> {
        if file.is_empty() {
            Self::from_topic(node, TOPIC_TIMEOUT).await
        } else {
            Self::from_file(file)
        }
    }

    /// Parses the text with `parse`; its error becomes a [`NodeError::RobotDescription`] that
    /// names the origin.
    pub fn parse<T, E: std::fmt::Display>(
        &self,
        parse: impl FnOnce(&str) -> Result<T, E>,
    ) -> Result<T, NodeError> {
        parse(&self.urdf).map_err(|e| self.error(e.to_string()))
    }

    /// A [`NodeError::RobotDescription`] for this description: the node cannot use it for
    /// `reason`.
    pub fn error(&self, reason: impl Into<String>) -> NodeError {
        NodeError::RobotDescription {
            origin: self.origin.clone(),
            reason: reason.into(),
        }
    }

    /// The description with every `<mesh filename="...">` turned into a URI that a reader of
    /// the text alone can resolve, `urdf_file` being the file the text was read from (relative
    /// paths are taken against the working directory, as [`RobotDescription::from_file`] does).
    ///
    /// * a relative file name, when `urdf_file` lies below `<prefix>/share/<pkg>/` and the
    ///   ament index of `<prefix>` lists `<pkg>` (an installed package), and the mesh lies
    ///   below that share directory too: `package://<pkg>/<path below share/<pkg>>`;
    /// * any other relative file name: `file://<absolute path>`, symbolic links and `..`
    ///   resolved (a mesh that does not exist keeps its lexically normalised path: finding it
    ///   is the consumer's business, as it was before);
    /// * an absolute path: `file://<path>`;
    /// * `package://`, `file://` or any other URI, and an empty name: unchanged.
    ///
    /// Only the values of `filename` attributes of `<mesh>` elements change (outside comments
    /// and CDATA sections); every other byte of the text stays as it was. Fails, naming the
    /// origin, if `urdf_file` has no absolute form or a `<mesh>` tag is not well formed.
    ///
    /// ```
    /// use std::path::Path;
    /// use rpq_ros::robot_description::RobotDescription;
    /// let d = RobotDescription {
    ///     urdf: r#"<robot name="r"><link name="a"><visual><geometry>
    ///   <mesh filename="/opt/m/a.stl" scale="1 1 1"/></geometry></visual></link></robot>"#.into(),
    ///     origin: "test".into(),
    /// };
    /// let d = d.with_resolvable_mesh_uris(Path::new("/nonexistent/urdf/r.urdf"))?;
    /// assert!(d.urdf.contains(r#"<mesh filename="file:///opt/m/a.stl" scale="1 1 1"/>"#));
    /// # Ok::<(), rpq_ros::NodeError>(())
    /// ```
    pub fn with_resolvable_mesh_uris(self, urdf_file: &Path) -> Result<Self, NodeError> {
        let file = std::path::absolute(urdf_file)
            .map(|p| normalize(&p))
            .map_err(|e| {
                self.error(format!("cannot make {} absolute: {e}", urdf_file.display()))
            })?;
        let spans = mesh_filename_spans(&self.urdf).map_err(|e| self.error(e))?;
        let dir = file.parent().unwrap_or(Path::new("/"));
        let package = installed_package(&file);
        let mut out = String::with_capacity(self.urdf.len() + 64 * spans.len());
        let mut copied = 0;
        for span in spans {
            let raw = &self.urdf[span.clone()];
            let name = xml_unescape(raw);
            let Some(uri) = resolvable_uri(&name, dir, package.as_ref()) else {
                continue;
            };
            out.push_str(&self.urdf[copied..span.start]);
            // the attribute's own quote character is the byte before the value
            let quote = self.urdf.as_bytes()[span.start - 1] as char;
            out.push_str(&xml_escape(&uri, quote));
            copied = span.end;
        }
        out.push_str(&self.urdf[copied..]);
        Ok(Self {
            urdf: out,
            origin: self.origin,
        })
    }
}

/// The prefixes listed in an `AMENT_PREFIX_PATH` value, in order (empty entries skipped).
pub fn ament_prefixes(value: &str) -> Vec<PathBuf> {
    value
        .split(':')
        .filter(|s| !s.is_empty())
        .map(PathBuf::from)
        .collect()
}

/// The first of `prefixes` whose ament index lists `package`
/// (`<prefix>/share/ament_index/resource_index/packages/<package>` exists), as `ros2 pkg
/// prefix` finds it. `None` for a name that cannot be a package (empty, `.`, `..`, with `/`).
pub fn ament_package_prefix<'a>(prefixes: &'a [PathBuf], package: &str) -> Option<&'a PathBuf> {
    if package.is_empty() || package == "." || package == ".." || package.contains('/') {
        return None;
    }
    prefixes.iter().find(|prefix| {
        prefix
            .join("share/ament_index/resource_index/packages")
            .join(package)
            .exists()
    })
}

/// The share directory (`<prefix>/share/<package>`) of `package` in the ament index of the
/// process's `AMENT_PREFIX_PATH`, as `ament_index_python`'s `get_package_share_directory`
/// finds it; `None` when no prefix lists it (or the variable is unset).
pub fn ament_package_share(package: &str) -> Option<PathBuf> {
    let prefixes = ament_prefixes(&std::env::var("AMENT_PREFIX_PATH").unwrap_or_default());
    ament_package_prefix(&prefixes, package).map(|p| p.join("share").join(package))
}

/// The packages named by the `package://` mesh URIs of `urdf` (in order of first use, each
/// once), whatever the ament index says.
pub fn mesh_packages(urdf: &str) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for span in mesh_filename_spans(urdf).unwrap_or_default() {
        let name = xml_unescape(&urdf[span]);
        if let Some(rest) = name.strip_prefix("package://") {
            let package = rest.split('/').next().unwrap_or_default();
            if !package.is_empty() && !names.iter().any(|n| n == package) {
                names.push(package.to_string());
            }
        }
    }
    names
}

/// Every package named by the `package://` mesh URIs of `urdf` with its share directory from
/// the ament index ([`ament_package_share`]), for a consumer's mesh resolver (e.g.
/// `rpq_kinematics::MeshResolver::with_package(name, dir)`). A package the index does not list
/// is left out, so the consumer's own error names the URI it cannot resolve.
pub fn mesh_package_dirs(urdf: &str) -> Vec<(String, PathBuf)> {
    mesh_packages(urdf)
        .into_iter()
        .filter_map(|name| ament_package_share(&name).map(|dir| (name, dir)))
        .collect()
}

/// `path` with `.` dropped and `..` applied to the components before it (no file-system
/// access, so symbolic links are not followed).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push(c);
                }
            }
            other => out.push(other),
        }
    }
    out
}

/// The installed package whose share directory holds `file` (absolute, normalised): the
/// nearest ancestor `<prefix>/share/<pkg>` whose prefix's ament index lists `<pkg>`.
fn installed_package(file: &Path) -> Option<(String, PathBuf)> {
    file.ancestors().skip(1).find_map(|dir| {
        let share = dir.parent()?;
        if share.file_name()? != "share" {
            return None;
        }
        let name = dir.file_name()?.to_str()?;
        let prefix = share.parent()?.to_path_buf();
        ament_package_prefix(std::slice::from_ref(&prefix), name)
            .map(|_| (name.to_string(), dir.to_path_buf()))
    })
}

/// The URI a mesh file name becomes (see [`RobotDescription::with_resolvable_mesh_uris`]), or
/// `None` when it stays as it is.
fn resolvable_uri(name: &str, dir: &Path, package: Option<&(String, PathBuf)>) -> Option<String> {
    if name.is_empty() || name.contains("://") {
        return None;
    }
    let path = Path::new(name);
    if path.is_absolute() {
        return Some(format!("file://{name}"));
    }
    let mesh = normalize(&dir.join(path));
    if let Some((pkg, share)) = package {
        if let Ok(inner) = mesh.strip_prefix(share) {
            let inner: Vec<_> = inner.iter().map(|c| c.to_string_lossy()).collect();
            return Some(format!("package://{pkg}/{}", inner.join("/")));
        }
    }
    let mesh = mesh.canonicalize().unwrap_or(mesh);
    Some(format!("file://{}", mesh.display()))
}

/// Byte ranges of the values of the `filename` attributes of the `<mesh>` tags of `xml`
/// (comments, CDATA sections and processing instructions skipped), in text order; an error
/// names the line of a `<mesh>` tag that is not well formed.
fn mesh_filename_spans(xml: &str) -> Result<Vec<Range<usize>>, String> {
    let bytes = xml.as_bytes();
    let line = |at: usize| xml[..at].matches('\n').count() + 1;
    let mut spans = Vec::new();
    let mut i = 0;
    while let Some(off) = xml[i..].find('<') {
        let at = i + off;
        let rest = &xml[at..];
        let skip = [("<!--", "-->"), ("<![CDATA[", "]]>"), ("<?", "?>")]
            .iter()
            .find(|(open, _)| rest.starts_with(open));
        if let Some((open, close)) = skip {
            i = match rest[open.len()..].find(close) {
                Some(end) => at + open.len() + end + close.len(),
                None => xml.len(),
            };
            continue;
        }
        let is_mesh = rest.starts_with("<mesh")
            && rest[5..]
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_whitespace() || c == '/' || c == '>');
        if !is_mesh {
            i = at + 1;
            continue;
        }
        // attributes up to the end of the tag, honouring quotes
        let bad = |what: &str| format!("line {}: <mesh> tag {what}", line(at));
        let mut j = at + 5;
        loop {
            while j < bytes.len() && bytes[j].is_ascii_whitespace() {
                j += 1;
            }
            match bytes.get(j) {
                None => return Err(bad("is not closed")),
                Some(b'>') => break,
                Some(b'/') if bytes.get(j + 1) == Some(&b'>') => break,
                Some(_) => {}
            }
            let name_start = j;
            while j < bytes.len() && !bytes[j].is_ascii_whitespace() && !b"=/>".contains(&bytes[j])
            {
                j += 1;
            }
            let name = &xml[name_start..j];
            while j < bytes.len() && bytes[j].is_ascii_whitespace() {
                j += 1;
            }
            if name.is_empty() || bytes.get(j) != Some(&b'=') {
                return Err(bad(&format!("has an attribute `{name}` without a value")));
            }
            j += 1;
            while j < bytes.len() && bytes[j].is_ascii_whitespace() {
                j += 1;
            }
            let quote = match bytes.get(j) {
                Some(&q @ (b'"' | b'\'')) => q,
                _ => return Err(bad(&format!("has an unquoted value of `{name}`"))),
            };
            let value_start = j + 1;
            let Some(len) = xml[value_start..].find(quote as char) else {
                return Err(bad(&format!("has an unterminated value of `{name}`")));
            };
            if name == "filename" {
                spans.push(value_start..value_start + len);
            }
            j = value_start + len + 1;
        }
        i = j;
    }
    Ok(spans)
}

/// An attribute value's text with the five predefined XML entities replaced (other
/// references are kept as written).
fn xml_unescape(value: &str) -> String {
    if !value.contains('&') {
        return value.to_string();
    }
    value
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

/// `text` as an attribute value quoted with `quote`.
fn xml_escape(text: &str, quote: char) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '"' if quote == '"' => out.push_str("&quot;"),
            '\'' if quote == '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_errors_name_the_file() {
        let e = RobotDescription::from_file("/nonexistent/robot.urdf").unwrap_err();
        let text = e.to_string();
        assert!(
            text.starts_with("robot_description_file /nonexistent/robot.urdf: cannot read it: "),
            "{text}"
        );
    }

    fn description(urdf: &str) -> RobotDescription {
        RobotDescription {
            urdf: urdf.to_string(),
            origin: "test".to_string(),
        }
    }

    fn touch(path: &Path) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "").unwrap();
    }

    /// A URDF naming its meshes in every form, with comments and odd spacing around them.
    const URDF: &str = "<?xml version=\"1.0\"?>\n<!-- <mesh filename=\"../in/comment.stl\"/> -->\n\
        <robot name=\"r\">\n  <link name=\"a\"><visual><geometry>\n    \
        <mesh filename=\"../meshes/r/a.stl\" scale=\"1 1 1\"/>\n  </geometry></visual>\n  \
        <collision><geometry><mesh scale='1 1 1'\n filename = '../meshes/r/a b.stl' /></geometry>\
        </collision></link>\n  <link name=\"b\"><visual><geometry>\
        <mesh filename=\"package://other/m/b.stl\"/><mesh filename=\"file:///x/b.stl\"/>\
        <mesh filename=\"/abs/b.stl\"></mesh><meshes filename=\"../not/a/mesh.stl\"/>\
        </geometry></visual></link>\n  <![CDATA[<mesh filename=\"../in/cdata.stl\"/>]]>\n</robot>\n";

    /// `URDF` with its five rewritable names replaced by `a`, `a_space` (for `a b.stl`) and
    /// `abs`, everything else unchanged.
    fn expected(a: &str, a_space: &str) -> String {
        URDF.replace("\"../meshes/r/a.stl\"", &format!("\"{a}\""))
            .replace("'../meshes/r/a b.stl'", &format!("'{a_space}'"))
            .replace("\"/abs/b.stl\"", "\"file:///abs/b.stl\"")
    }

    #[test]
    fn outside_an_install_mesh_names_become_absolute_file_uris() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        touch(&root.join("meshes/r/a.stl"));
        touch(&root.join("meshes/r/a b.stl"));
        // the URDF named through a `..` and relative to nothing in particular
        let urdf_file = root.join("other/../urdf/r.urdf");
        let d = description(URDF)
            .with_resolvable_mesh_uris(&urdf_file)
            .unwrap();
        let a = format!("file://{}", root.join("meshes/r/a.stl").display());
        let a_space = format!("file://{}", root.join("meshes/r/a b.stl").display());
        assert_eq!(d.urdf, expected(&a, &a_space));
        assert_eq!(d.origin, "test");
        // a symbolic link to the mesh directory is resolved; a missing mesh keeps its path
        std::os::unix::fs::symlink(root.join("meshes"), root.join("linked")).unwrap();
        let d =
            description("<mesh filename=\"../linked/r/a.stl\"/><mesh filename=\"../gone.stl\"/>")
                .with_resolvable_mesh_uris(&urdf_file)
                .unwrap();
        assert_eq!(
            d.urdf,
            format!(
                "<mesh filename=\"{a}\"/><mesh filename=\"file://{}\"/>",
                root.join("gone.stl").display()
            )
        );
    }

    #[test]
    fn in_an_installed_share_directory_mesh_names_become_package_uris() {
        let dir = tempfile::tempdir().unwrap();
        let prefix = dir.path().join("install/robot_pkg");
        let share = prefix.join("share/robot_pkg");
        touch(&prefix.join("share/ament_index/resource_index/packages/robot_pkg"));
        let urdf_file = share.join("urdf/r.urdf");
        let d = description(URDF)
            .with_resolvable_mesh_uris(&urdf_file)
            .unwrap();
        assert_eq!(
            d.urdf,
            expected(
                "package://robot_pkg/meshes/r/a.stl",
                "package://robot_pkg/meshes/r/a b.stl"
            )
        );
        assert_eq!(mesh_packages(&d.urdf), ["robot_pkg", "other"]);
        // a mesh outside the share directory is named by its file
        let d = description("<mesh filename=\"../../elsewhere/c.stl\"/>")
            .with_resolvable_mesh_uris(&urdf_file)
            .unwrap();
        let c = normalize(&prefix.join("share/elsewhere/c.stl"));
        assert_eq!(
            d.urdf,
            format!("<mesh filename=\"file://{}\"/>", c.display())
        );
        // share/<pkg> without an ament index entry is no installed package
        let plain = dir.path().join("plain/share/robot_pkg/urdf/r.urdf");
        let d = description("<mesh filename=\"../m.stl\"/>")
            .with_resolvable_mesh_uris(&plain)
            .unwrap();
        assert!(
            d.urdf.starts_with("<mesh filename=\"file:///"),
            "{}",
            d.urdf
        );
    }

    #[test]
    fn xml_entities_in_names_are_read_and_written() {
        let d = description(
            "<mesh filename=\"/a&amp;b/&quot;c&quot;.stl\"/><mesh filename='/d&apos;e.stl'/>",
        )
        .with_resolvable_mesh_uris(Path::new("/r.urdf"))
        .unwrap();
        assert_eq!(
            d.urdf,
            "<mesh filename=\"file:///a&amp;b/&quot;c&quot;.stl\"/><mesh filename='file:///d&apos;e.stl'/>"
        );
    }

    #[test]
    fn malformed_mesh_tags_are_errors_naming_the_line() {
        for (text, what) in [
            ("<robot>\n<mesh filename=\"a.stl\"", "is not closed"),
            (
                "<robot>\n<mesh filename=a.stl/>",
                "unquoted value of `filename`",
            ),
            (
                "<robot>\n<mesh filename=\"a.stl/>",
                "unterminated value of `filename`",
            ),
            (
                "<robot>\n<mesh scale filename=\"a.stl\"/>",
                "attribute `scale` without a value",
            ),
        ] {
            let e = description(text)
                .with_resolvable_mesh_uris(Path::new("/r.urdf"))
                .unwrap_err()
                .to_string();
            assert!(e.starts_with("test: line 2: <mesh> tag "), "{e}");
            assert!(e.contains(what), "{text}: {e}");
        }
        // text without meshes passes through untouched, whatever it holds
        let text = "<robot name=\"x\"><!-- unterminated comment <mesh";
        let d = description(text)
            .with_resolvable_mesh_uris(Path::new("r.urdf"))
            .unwrap();
        assert_eq!(d.urdf, text);
    }

    #[test]
    fn ament_index_lookup() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        touch(&a.join("share/ament_index/resource_index/packages/one"));
        touch(&b.join("share/ament_index/resource_index/packages/one"));
        touch(&b.join("share/ament_index/resource_index/packages/two"));
        let prefixes = ament_prefixes(&format!("{}::/nonexistent:{}", a.display(), b.display()));
        assert_eq!(prefixes.len(), 3);
        assert_eq!(ament_package_prefix(&prefixes, "one"), Some(&a));
        assert_eq!(ament_package_prefix(&prefixes, "two"), Some(&b));
        for missing in ["three", "", "..", "one/x"] {
            assert_eq!(ament_package_prefix(&prefixes, missing), None, "{missing}");
        }
        assert!(ament_prefixes("").is_empty());
        assert_eq!(
            mesh_packages("<mesh filename=\"package://p/a.stl\"/><mesh filename=\"package://q/b\"/><mesh filename=\"package://p/c\"/><mesh filename=\"package:///x\"/>"),
            ["p", "q"]
        );
        // a package no prefix lists is left out
        assert!(
            mesh_package_dirs("<mesh filename=\"package://no_such_package_here/a.stl\"/>")
                .is_empty()
        );
    }

    #[test]
    fn parse_errors_name_the_origin() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("r.urdf");
        std::fs::write(&file, "<robot name=\"r\"/>").unwrap();
        let file = file.to_str().unwrap();
        let d = RobotDescription::from_file(file).unwrap();
        assert_eq!(d.urdf, "<robot name=\"r\"/>");
        assert_eq!(d.parse(|t| Ok::<_, String>(t.len())).unwrap(), 17);
        let e = d.parse(|_| Err::<(), _>("no link")).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("robot_description_file {file}: no link")
        );
    }
}
