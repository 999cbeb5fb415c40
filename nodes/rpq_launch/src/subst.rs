//! The `$(name arg ...)` substitution language of ROS 2 launch files.
//!
//! [`parse_template`] follows the grammar of ROS 2's launch frontend (`grammar.lark` of the
//! `launch` package): text with embedded `$(name args...)`, arguments separated by one space,
//! an argument either unquoted (substitutions and text without spaces, quotes or unescaped
//! parentheses) or one quoted string (`'...'` or `"..."`, substitutions allowed inside).
//! A backslash escapes the next character everywhere.
//!
//! [`split_command_line`] splits an `args="..."` attribute into arguments the way ROS 2 does:
//! text is split like a POSIX shell (`shlex`), substitution results are never split.

use std::fmt;

use crate::limits::MAX_SUBSTITUTION_DEPTH;

/// A piece of text with substitutions, as written in an attribute.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Template(pub Vec<Part>);

/// One part of a [`Template`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    /// Literal text (escapes already removed).
    Text(String),
    /// A `$(name args...)` substitution.
    Call(Call),
}

/// A `$(name args...)` substitution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    /// Substitution name (`var`, `env`, `find-pkg-share`, ...).
    pub name: String,
    /// Arguments, each itself a template.
    pub args: Vec<Template>,
}

/// A syntax error, with the character offset where it was noticed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    /// Character offset into the text.
    pub offset: usize,
    /// What is wrong.
    pub reason: String,
}

impl fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (at character {})", self.reason, self.offset + 1)
    }
}

impl Template {
    /// A template that is only literal text.
    pub fn text(text: impl Into<String>) -> Self {
        Template(vec![Part::Text(text.into())])
    }

    /// The literal text if the template has no substitution.
    pub fn as_literal(&self) -> Option<String> {
        let mut out = String::new();
        for part in &self.0 {
            match part {
                Part::Text(t) => out.push_str(t),
                Part::Call(_) => return None,
            }
        }
        Some(out)
    }

    /// Visits every substitution call, nested ones included, outermost first.
    pub fn visit_calls<E>(&self, f: &mut impl FnMut(&Call) -> Result<(), E>) -> Result<(), E> {
        for part in &self.0 {
            if let Part::Call(call) = part {
                f(call)?;
                for arg in &call.args {
                    arg.visit_calls(f)?;
                }
            }
        }
        Ok(())
    }

    fn push_text(&mut self, text: String) {
        if text.is_empty() {
            return;
        }
        if let Some(Part::Text(last)) = self.0.last_mut() {
            last.push_str(&text);
        } else {
            self.0.push(Part::Text(text));
        }
    }
}

/// Removes backslash escapes: `\x` becomes `x` (a trailing lone backslash and a backslash
/// before a line break stay), as ROS 2's `replace_escaped_characters` does.
pub fn unescape(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.peek() {
                Some(&n) if n != '\n' => {
                    out.push(n);
                    chars.next();
                }
                _ => out.push(c),
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Quote {
    None,
    Single,
    Double,
}

struct Parser<'a> {
    s: &'a [char],
    i: usize,
    /// Substitutions open at the cursor (bounded by [`MAX_SUBSTITUTION_DEPTH`]).
    depth: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<char> {
        self.s.get(self.i).copied()
    }

    fn prev_is_backslash(&self) -> bool {
        self.i > 0 && self.s[self.i - 1] == '\\'
    }

    /// `$(` at the cursor that is not escaped by a preceding backslash.
    fn at_call(&self) -> bool {
        self.peek() == Some('$')
            && self.s.get(self.i + 1) == Some(&'(')
            && !self.prev_is_backslash()
    }

    fn err<T>(&self, reason: impl Into<String>) -> Result<T, SyntaxError> {
        Err(SyntaxError {
            offset: self.i,
            reason: reason.into(),
        })
    }

    /// `$(` IDENTIFIER (` ` arguments)? `)` in the given quoting context, at most
    /// [`MAX_SUBSTITUTION_DEPTH`] deep (the parser recurses once per level).
    fn call(&mut self, quote: Quote) -> Result<Call, SyntaxError> {
        if self.depth >= MAX_SUBSTITUTION_DEPTH {
            return self.err(format!(
                "substitutions nested deeper than {MAX_SUBSTITUTION_DEPTH} levels \
                 (rpq_launch's limit)"
            ));
        }
        self.depth += 1;
        let call = self.call_body(quote);
        self.depth -= 1;
        call
    }

    fn call_body(&mut self, quote: Quote) -> Result<Call, SyntaxError> {
        debug_assert!(self.at_call());
        self.i += 2;
        let start = self.i;
        match self.peek() {
            Some(c) if c.is_ascii_alphabetic() => {}
            _ => return self.err("expected a substitution name after '$('"),
        }
        while let Some(c) = self.peek() {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                self.i += 1;
            } else {
                break;
            }
        }
        let name: String = self.s[start..self.i].iter().collect();
        let mut args = Vec::new();
        match self.peek() {
            Some(')') => {
                self.i += 1;
                return Ok(Call { name, args });
            }
            Some(' ') => self.i += 1,
            None => return self.err(format!("unterminated $({name} ...): missing ')'")),
            Some(c) => {
                return self.err(format!(
                    "unexpected '{c}' after substitution name '{name}' (expected ' ' or ')')"
                ))
            }
        }
        loop {
            match self.peek() {
                Some(' ') => return self.err("arguments must be separated by exactly one space"),
                Some(')') => return self.err("empty argument before ')'"),
                None => return self.err(format!("unterminated $({name} ...): missing ')'")),
                _ => {}
            }
            args.push(self.value(quote)?);
            match self.peek() {
                Some(' ') => self.i += 1,
                Some(')') => {
                    self.i += 1;
                    return Ok(Call { name, args });
                }
                None => return self.err(format!("unterminated $({name} ...): missing ')'")),
                Some(c) => return self.err(format!("unexpected '{c}' in argument of $({name})")),
            }
        }
    }

    /// One argument value.
    fn value(&mut self, quote: Quote) -> Result<Template, SyntaxError> {
        if quote == Quote::None {
            match self.peek() {
                Some('\'') => return self.quoted('\''),
                Some('"') => return self.quoted('"'),
                _ => {}
            }
        }
        let mut t = Template::default();
        let mut raw = String::new();
        while let Some(c) = self.peek() {
            if self.at_call() {
                t.push_text(unescape(&std::mem::take(&mut raw)));
                let call = self.call(quote)?;
                t.0.push(Part::Call(call));
                continue;
            }
            match c {
                '\\' => {
                    raw.push(c);
                    self.i += 1;
                    if let Some(n @ ('\'' | '"')) = self.peek() {
                        raw.push(n);
                        self.i += 1;
                    }
                }
                ' ' => break,
                '(' | ')' if self.prev_is_backslash() => {
                    raw.push(c);
                    self.i += 1;
                }
                ')' => break,
                '(' => return self.err("unescaped '(' inside a substitution argument"),
                '\'' if quote != Quote::Double => {
                    return self.err("unexpected quote inside a substitution argument")
                }
                '"' if quote != Quote::Single => {
                    return self.err("unexpected quote inside a substitution argument")
                }
                _ => {
                    raw.push(c);
                    self.i += 1;
                }
            }
        }
        t.push_text(unescape(&raw));
        Ok(t)
    }

    /// A quoted template `'...'` or `"..."` (an argument value in unquoted context).
    fn quoted(&mut self, q: char) -> Result<Template, SyntaxError> {
        let context = if q == '\'' {
            Quote::Single
        } else {
            Quote::Double
        };
        self.i += 1;
        let mut t = Template::default();
        let mut raw = String::new();
        loop {
            let Some(c) = self.peek() else {
                return self.err(format!("missing closing {q}"));
            };
            if self.at_call() {
                t.push_text(unescape(&std::mem::take(&mut raw)));
                let call = self.call(context)?;
                t.0.push(Part::Call(call));
                continue;
            }
            if c == '\\' {
                raw.push(c);
                self.i += 1;
                if self.peek() == Some(q) {
                    raw.push(q);
                    self.i += 1;
                }
                continue;
            }
            self.i += 1;
            if c == q {
                break;
            }
            raw.push(c);
        }
        t.push_text(unescape(&raw));
        if t.0.is_empty() {
            t.0.push(Part::Text(String::new()));
        }
        Ok(t)
    }
}

/// Parses an attribute value into text and substitutions.
///
/// ```
/// use rpq_launch::subst::{parse_template, Part};
/// let t = parse_template("$(find-pkg-share robot_sim)/config/$(var robot).yaml").unwrap();
/// assert_eq!(t.0.len(), 4);
/// assert!(matches!(&t.0[1], Part::Text(s) if s == "/config/"));
/// ```
pub fn parse_template(text: &str) -> Result<Template, SyntaxError> {
    let chars: Vec<char> = text.chars().collect();
    let mut p = Parser {
        s: &chars,
        i: 0,
        depth: 0,
    };
    let mut t = Template::default();
    let mut raw = String::new();
    while p.peek().is_some() {
        if p.at_call() {
            t.push_text(unescape(&std::mem::take(&mut raw)));
            let call = p.call(Quote::None)?;
            t.0.push(Part::Call(call));
        } else {
            raw.push(chars[p.i]);
            p.i += 1;
        }
    }
    t.push_text(unescape(&raw));
    Ok(t)
}

/// Splits text like Python's `shlex.split` (POSIX mode, no comments).
pub fn shell_split(text: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_token = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if in_token {
                    out.push(std::mem::take(&mut cur));
                    in_token = false;
                }
            }
            '\'' => {
                in_token = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(x) => cur.push(x),
                        None => return Err("no closing quotation".to_string()),
                    }
                }
            }
            '"' => {
                in_token = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.peek() {
                            Some(&n @ ('"' | '\\')) => {
                                cur.push(n);
                                chars.next();
                            }
                            _ => cur.push('\\'),
                        },
                        Some(x) => cur.push(x),
                        None => return Err("no closing quotation".to_string()),
                    }
                }
            }
            '\\' => {
                in_token = true;
                match chars.next() {
                    Some(n) => cur.push(n),
                    None => return Err("no escaped character".to_string()),
                }
            }
            _ => {
                in_token = true;
                cur.push(c);
            }
        }
    }
    if in_token {
        out.push(cur);
    }
    Ok(out)
}

/// Splits a command-line attribute (`args`, `ros_args`, `launch-prefix`) into arguments,
/// as ROS 2's `ExecuteProcess._parse_cmdline` does: literal text is split like a shell,
/// a substitution's result always stays inside one argument.
pub fn split_command_line(t: &Template) -> Result<Vec<Template>, String> {
    let mut result: Vec<Template> = Vec::new();
    let mut arg: Vec<Part> = Vec::new();
    for part in &t.0 {
        match part {
            Part::Text(text) => {
                if text.is_empty() {
                    continue;
                }
                let tokens = shell_split(text)?;
                if tokens.is_empty() {
                    // Only spaces: separates what comes before from what comes after.
                    result.push(Template(std::mem::take(&mut arg)));
                    continue;
                }
                if text.starts_with(char::is_whitespace) && !arg.is_empty() {
                    result.push(Template(std::mem::take(&mut arg)));
                }
                arg.push(Part::Text(tokens[0].clone()));
                if tokens.len() > 1 {
                    result.push(Template(std::mem::take(&mut arg)));
                    arg.push(Part::Text(tokens[tokens.len() - 1].clone()));
                }
                if tokens.len() > 2 {
                    for middle in &tokens[1..tokens.len() - 1] {
                        result.push(Template::text(middle.clone()));
                    }
                }
                if text.ends_with(char::is_whitespace) {
                    result.push(Template(std::mem::take(&mut arg)));
                }
            }
            Part::Call(_) => arg.push(part.clone()),
        }
    }
    if !arg.is_empty() {
        result.push(Template(arg));
    }
    // ROS 2 turns leading whitespace before a substitution into an empty argument (""); such
    // entries have no parts at all and are dropped here, an explicit '' is kept.
    result.retain(|t| !t.0.is_empty());
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(name: &str, args: Vec<Template>) -> Part {
        Part::Call(Call {
            name: name.to_string(),
            args,
        })
    }

    fn text(s: &str) -> Part {
        Part::Text(s.to_string())
    }

    #[test]
    fn plain_text_is_one_part() {
        assert_eq!(
            parse_template("hello world").unwrap().0,
            vec![text("hello world")]
        );
        assert_eq!(parse_template("").unwrap().0, vec![]);
        assert_eq!(parse_template("cost $5").unwrap().0, vec![text("cost $5")]);
    }

    #[test]
    fn substitutions_with_text_around() {
        let t = parse_template("$(find-pkg-share robot_sim)/config/$(var robot).yaml").unwrap();
        assert_eq!(
            t.0,
            vec![
                call("find-pkg-share", vec![Template::text("robot_sim")]),
                text("/config/"),
                call("var", vec![Template::text("robot")]),
                text(".yaml"),
            ]
        );
    }

    #[test]
    fn no_argument_and_nested_substitutions() {
        let t = parse_template("$(dirname)/$(env HOME $(var fallback))").unwrap();
        assert_eq!(
            t.0,
            vec![
                call("dirname", vec![]),
                text("/"),
                call(
                    "env",
                    vec![
                        Template::text("HOME"),
                        Template(vec![call("var", vec![Template::text("fallback")])]),
                    ]
                ),
            ]
        );
    }

    #[test]
    fn quoted_arguments_keep_spaces_and_hold_substitutions() {
        let t = parse_template("$(env GREETING 'hello $(var who) !')").unwrap();
        assert_eq!(
            t.0,
            vec![call(
                "env",
                vec![
                    Template::text("GREETING"),
                    Template(vec![
                        text("hello "),
                        call("var", vec![Template::text("who")]),
                        text(" !"),
                    ]),
                ]
            )]
        );
        let t = parse_template("$(var x \"a b\")").unwrap();
        assert_eq!(
            t.0,
            vec![call(
                "var",
                vec![Template::text("x"), Template::text("a b")]
            )]
        );
        let t = parse_template("$(var x '')").unwrap();
        assert_eq!(
            t.0,
            vec![call("var", vec![Template::text("x"), Template::text("")])]
        );
    }

    #[test]
    fn escapes() {
        assert_eq!(
            parse_template("\\$(var x)").unwrap().0,
            vec![text("$(var x)")]
        );
        assert_eq!(
            parse_template("$(var a\\(b\\))").unwrap().0,
            vec![call("var", vec![Template::text("a(b)")])]
        );
        assert_eq!(parse_template("a\\\\b").unwrap().0, vec![text("a\\b")]);
        assert_eq!(unescape("trailing\\"), "trailing\\");
    }

    #[test]
    fn syntax_errors() {
        for bad in [
            "$(var x",
            "$(var  x)",
            "$(var x )",
            "$( var x)",
            "$(1abc)",
            "$(var a(b))",
            "$(var a'b)",
            "$(var 'unterminated)",
            "$(var x)$(",
        ] {
            assert!(parse_template(bad).is_err(), "{bad:?} should be rejected");
        }
    }

    #[test]
    fn deep_nesting_is_a_syntax_error_not_a_stack_overflow() {
        let nested = |n: usize| format!("{}x{}", "$(var ".repeat(n), ")".repeat(n));
        assert!(parse_template(&nested(MAX_SUBSTITUTION_DEPTH)).is_ok());
        for n in [MAX_SUBSTITUTION_DEPTH + 1, 100_000] {
            let e = parse_template(&nested(n)).unwrap_err();
            assert!(e.reason.contains("nested deeper than 32 levels"), "{e}");
        }
    }

    #[test]
    fn visit_calls_sees_nested() {
        let t = parse_template("$(env A $(var b)) $(anon n)").unwrap();
        let mut names = Vec::new();
        t.visit_calls(&mut |c: &Call| -> Result<(), ()> {
            names.push(c.name.clone());
            Ok(())
        })
        .unwrap();
        assert_eq!(names, vec!["env", "var", "anon"]);
    }

    #[test]
    fn shell_split_like_python_shlex() {
        assert_eq!(shell_split("  a b\tc ").unwrap(), vec!["a", "b", "c"]);
        assert_eq!(
            shell_split("'a b' \"c d\" e\\ f").unwrap(),
            vec!["a b", "c d", "e f"]
        );
        assert_eq!(shell_split("x'y'\"z\"").unwrap(), vec!["xyz"]);
        assert_eq!(shell_split("''").unwrap(), vec![""]);
        assert_eq!(shell_split("\"a\\\"b\\n\"").unwrap(), vec!["a\"b\\n"]);
        assert!(shell_split("'open").is_err());
        assert!(shell_split("\"open").is_err());
        assert_eq!(shell_split("   ").unwrap(), Vec::<String>::new());
    }

    fn literal_args(cmd: &str) -> Vec<String> {
        split_command_line(&parse_template(cmd).unwrap())
            .unwrap()
            .iter()
            .map(|t| t.as_literal().unwrap_or_else(|| "<subst>".to_string()))
            .collect()
    }

    #[test]
    fn command_line_split_text_only() {
        assert_eq!(
            literal_args("--rate 10 'two words'"),
            vec!["--rate", "10", "two words"]
        );
        assert!(literal_args("").is_empty());
    }

    #[test]
    fn command_line_keeps_substitution_results_whole() {
        let args =
            split_command_line(&parse_template("--file $(var f)/x.yaml -v").unwrap()).unwrap();
        assert_eq!(args.len(), 3);
        assert_eq!(args[0].as_literal().unwrap(), "--file");
        assert_eq!(
            args[1].0,
            vec![call("var", vec![Template::text("f")]), text("/x.yaml")]
        );
        assert_eq!(args[2].as_literal().unwrap(), "-v");

        let args = split_command_line(&parse_template("$(var a) $(var b)").unwrap()).unwrap();
        assert_eq!(args.len(), 2);
        let args = split_command_line(&parse_template("$(var a)$(var b)").unwrap()).unwrap();
        assert_eq!(args.len(), 1);
        let args = split_command_line(&parse_template(" $(var a) ").unwrap()).unwrap();
        assert_eq!(args.len(), 1);
        assert_eq!(literal_args("a '' b"), vec!["a", "", "b"]);
        let args = split_command_line(&parse_template("pre$(var a) mid last").unwrap()).unwrap();
        assert_eq!(args.len(), 3);
        assert_eq!(
            args[0].0,
            vec![text("pre"), call("var", vec![Template::text("a")])]
        );
        assert_eq!(args[1].as_literal().unwrap(), "mid");
        assert_eq!(args[2].as_literal().unwrap(), "last");
    }

    #[test]
    fn command_line_unbalanced_quote_is_an_error() {
        assert!(split_command_line(&parse_template("'$(var a) b'").unwrap()).is_err());
    }
}
