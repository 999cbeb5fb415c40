//! The crate's error type and source locations.

use std::fmt;
use std::path::PathBuf;

/// A place in a launch file: file, 1-based line and column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Span {
    /// The launch file, as it was opened.
    pub file: String,
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub column: u32,
}

impl Span {
    /// A span for a whole file (line and column unknown).
    pub fn file(file: impl Into<String>) -> Self {
        Span {
            file: file.into(),
            line: 0,
            column: 0,
        }
    }
}

impl fmt::Display for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}", self.file)
        } else {
            write!(f, "{}:{}:{}", self.file, self.line, self.column)
        }
    }
}

/// Everything that can go wrong while reading, resolving or running a launch file.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    /// The file is not well-formed XML.
    #[error("{file}: not a well-formed XML launch file: {message}")]
    Xml {
        /// The launch file.
        file: String,
        /// What the XML parser said.
        message: String,
    },
    /// A tag that rpq_launch does not support (or that ROS 2 does not know).
    #[error("{span}: unsupported tag <{tag}>: {hint}")]
    UnsupportedTag {
        /// Where.
        span: Span,
        /// The tag.
        tag: String,
        /// Why, and what to use instead.
        hint: String,
    },
    /// An attribute that the tag does not support.
    #[error("{span}: unsupported attribute '{attribute}' on <{tag}> (supported: {supported})")]
    UnsupportedAttribute {
        /// Where.
        span: Span,
        /// The tag.
        tag: String,
        /// The attribute.
        attribute: String,
        /// The attributes the tag supports.
        supported: String,
    },
    /// A required attribute is missing.
    #[error("{span}: <{tag}> requires the attribute '{attribute}'")]
    MissingAttribute {
        /// Where.
        span: Span,
        /// The tag.
        tag: String,
        /// The missing attribute.
        attribute: String,
    },
    /// An attribute value that cannot be used.
    #[error("{span}: invalid value for '{attribute}' on <{tag}>: {reason}")]
    InvalidAttribute {
        /// Where.
        span: Span,
        /// The tag.
        tag: String,
        /// The attribute.
        attribute: String,
        /// Why.
        reason: String,
    },
    /// An element that is malformed as a whole (text content, conflicting attributes, ...).
    #[error("{span}: {reason}")]
    InvalidElement {
        /// Where.
        span: Span,
        /// Why.
        reason: String,
    },
    /// A `$(...)` expression that does not follow the ROS 2 substitution grammar.
    #[error("{span}: bad substitution syntax in \"{text}\": {reason}")]
    SubstitutionSyntax {
        /// Where.
        span: Span,
        /// The attribute text.
        text: String,
        /// Why.
        reason: String,
    },
    /// A substitution rpq_launch does not support.
    #[error("{span}: unsupported substitution $({name} ...): {hint}")]
    UnsupportedSubstitution {
        /// Where.
        span: Span,
        /// The substitution name.
        name: String,
        /// Why, and what to use instead.
        hint: String,
    },
    /// A supported substitution that could not be evaluated.
    #[error("{span}: $({name} ...) failed: {reason}")]
    SubstitutionFailed {
        /// Where.
        span: Span,
        /// The substitution name.
        name: String,
        /// Why.
        reason: String,
    },
    /// A declared launch argument without default that nobody set.
    #[error("{span}: required launch argument '{name}' was not given{description} (pass it as {name}:=<value>)")]
    MissingArgument {
        /// Where the argument is declared.
        span: Span,
        /// Argument name.
        name: String,
        /// ` (description: ...)` or empty.
        description: String,
    },
    /// An `<include>` does not pass an argument the included file requires.
    #[error("{span}: included file '{file}' requires the argument '{name}', which this <include> does not pass (given: [{given}])")]
    IncludeMissingArgument {
        /// Where the include is.
        span: Span,
        /// The included file.
        file: String,
        /// The argument name.
        name: String,
        /// Argument names the include passes, comma separated.
        given: String,
    },
    /// `name:=value` on the command line for an argument no launch file declares.
    #[error("unknown launch argument(s): {}; valid arguments: {}", .unknown.join(", "), list_or_none(.valid))]
    UnknownArguments {
        /// The unknown names.
        unknown: Vec<String>,
        /// All declared names.
        valid: Vec<String>,
    },
    /// A launch argument value outside its `<choice>` list.
    #[error("{span}: launch argument '{name}' has value '{value}'; valid choices: {}", .choices.join(", "))]
    InvalidChoice {
        /// Where the argument is declared.
        span: Span,
        /// Argument name.
        name: String,
        /// The given value.
        value: String,
        /// Allowed values.
        choices: Vec<String>,
    },
    /// An `if`/`unless` expression that is not true/false/1/0.
    #[error("{span}: condition evaluated to '{value}'; expected one of true, false, 1, 0")]
    InvalidCondition {
        /// Where.
        span: Span,
        /// The evaluated expression.
        value: String,
    },
    /// A node executable that was found nowhere.
    #[error("{span}: executable '{executable}' of package '{package}' not found; searched: {}", list_or_none(.searched))]
    ExecutableNotFound {
        /// Where the node is declared.
        span: Span,
        /// Package.
        package: String,
        /// Executable.
        executable: String,
        /// Places searched, with the reason each was rejected.
        searched: Vec<String>,
    },
    /// A package that was found nowhere.
    #[error("package '{package}' not found; searched: {}", list_or_none(.searched))]
    PackageNotFound {
        /// Package.
        package: String,
        /// Places searched.
        searched: Vec<String>,
    },
    /// A launch file that cannot be located or is not an XML launch file.
    #[error("launch file '{file}': {reason}")]
    BadLaunchFile {
        /// The file name.
        file: String,
        /// Why.
        reason: String,
    },
    /// A `<param>` that cannot be turned into a ROS parameter.
    #[error("{span}: invalid parameter '{name}': {reason}")]
    InvalidParameter {
        /// Where.
        span: Span,
        /// Parameter name (or file).
        name: String,
        /// Why.
        reason: String,
    },
    /// A node name or namespace that ROS would refuse.
    #[error("{span}: invalid {what} '{value}': {reason}")]
    InvalidName {
        /// Where.
        span: Span,
        /// "node name" or "namespace".
        what: String,
        /// The value.
        value: String,
        /// Why.
        reason: String,
    },
    /// An include that would include itself again.
    #[error("{span}: including '{}' again would recurse forever", .path.display())]
    IncludeCycle {
        /// Where the include is.
        span: Span,
        /// The file.
        path: PathBuf,
    },
    /// A file that could not be read.
    #[error("cannot read '{}': {source}", .path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// An input beyond one of rpq_launch's size or nesting limits (see the crate's README,
    /// "Limits"): refused with its place instead of exhausting the stack or memory.
    #[error("{span}: {reason}")]
    Limit {
        /// Where (the file alone when the whole file is refused).
        span: Span,
        /// Which limit, with its value.
        reason: String,
    },
    /// Bad command line.
    #[error("{0}")]
    Usage(String),
    /// The process supervisor could not be set up.
    #[error("cannot supervise processes: {0}")]
    Supervisor(String),
}

fn list_or_none(items: &[String]) -> String {
    if items.is_empty() {
        "(none)".to_string()
    } else {
        items.join(", ")
    }
}
