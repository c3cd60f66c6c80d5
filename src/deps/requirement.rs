//! One declared package in the runtime's own notation — `PyYAML==6.0.2` for pip, `left-pad@1.3.0`
//! for npm — checked strictly: a requirement becomes an installer argument, so nothing that an
//! installer would read as an option, a URL or a path gets through.

use super::names::valid_package_name;
use super::Ecosystem;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requirement {
    pub name: String,
    /// pip: a version specifier ("==6.0.2", ">=1,<2") or ""; npm: a version or range ("1.3.0",
    /// "^1.3.0") or "".
    pub spec: String,
}

impl Requirement {
    pub fn new(name: &str, spec: &str) -> Requirement {
        Requirement {
            name: name.to_string(),
            spec: spec.to_string(),
        }
    }

    /// Read one line; the error says what is wrong with it, for the person.
    pub fn parse(ecosystem: Ecosystem, line: &str) -> Result<Requirement, String> {
        let line = line.trim();
        let (name, spec) = match ecosystem {
            Ecosystem::Python => {
                let end = line
                    .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
                    .unwrap_or(line.len());
                let (name, rest) = line.split_at(end);
                (name, rest.trim())
            }
            // A scoped name starts with '@': the version's '@' is the last one after it.
            Ecosystem::Node => match line.get(1..).and_then(|rest| rest.rfind('@')) {
                Some(at) => {
                    let (name, rest) = line.split_at(at + 1);
                    (name, rest.strip_prefix('@').unwrap_or(rest).trim())
                }
                None => (line, ""),
            },
        };
        if !valid_package_name(ecosystem, name) {
            return Err(format!(
                "\u{201c}{line}\u{201d} is not a {} package name",
                ecosystem.tool()
            ));
        }
        let spec_ok = match ecosystem {
            Ecosystem::Python => {
                spec.chars().all(|c| {
                    c.is_ascii_alphanumeric()
                        || matches!(c, '.' | '*' | '<' | '>' | '=' | '!' | '~' | ',' | ' ' | '+')
                }) && (spec.is_empty() || spec.starts_with(['=', '<', '>', '!', '~']))
            }
            Ecosystem::Node => {
                spec.chars().all(|c| {
                    c.is_ascii_alphanumeric()
                        || matches!(
                            c,
                            '.' | '*' | '<' | '>' | '=' | '^' | '~' | '|' | ' ' | '-' | '+'
                        )
                }) && !spec.starts_with('-')
            }
        };
        if !spec_ok {
            return Err(format!(
                "\u{201c}{spec}\u{201d} is not a version Healer can ask {} for",
                ecosystem.tool()
            ));
        }
        Ok(Requirement::new(name, spec))
    }

    /// The line as the runtime writes it.
    pub fn line(&self, ecosystem: Ecosystem) -> String {
        match ecosystem {
            Ecosystem::Python => format!("{}{}", self.name, self.spec),
            Ecosystem::Node if self.spec.is_empty() => self.name.clone(),
            Ecosystem::Node => format!("{}@{}", self.name, self.spec),
        }
    }

    /// The exact version this asks for, when it pins one ("==6.0.2", "1.3.0").
    pub fn pinned_version(&self) -> Option<String> {
        let spec = self.spec.trim();
        let version = spec.strip_prefix("==").unwrap_or(spec);
        let exact = !version.is_empty()
            && version
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+'))
            && version.starts_with(|c: char| c.is_ascii_digit());
        exact.then(|| version.to_string())
    }
}

/// Every requirement of a stored list (one a line; blank lines and `#` comments are skipped).
pub fn parse_requirements(ecosystem: Ecosystem, text: &str) -> Result<Vec<Requirement>, String> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| Requirement::parse(ecosystem, l))
        .collect()
}

/// The stored form: one a line, in the order given.
pub fn requirements_text(ecosystem: Ecosystem, requirements: &[Requirement]) -> String {
    requirements
        .iter()
        .map(|r| r.line(ecosystem))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_read_in_each_runtimes_notation() {
        let py = Requirement::parse(Ecosystem::Python, "PyYAML==6.0.2").expect("pip line");
        assert_eq!((py.name.as_str(), py.spec.as_str()), ("PyYAML", "==6.0.2"));
        assert_eq!(py.pinned_version().as_deref(), Some("6.0.2"));
        let range = Requirement::parse(Ecosystem::Python, "six >=1.15, <2").expect("range");
        assert_eq!(range.pinned_version(), None);
        let scoped = Requirement::parse(Ecosystem::Node, "@slack/webhook@7.0.4").expect("scoped");
        assert_eq!(
            (scoped.name.as_str(), scoped.spec.as_str()),
            ("@slack/webhook", "7.0.4")
        );
        assert_eq!(scoped.line(Ecosystem::Node), "@slack/webhook@7.0.4");
        let bare = Requirement::parse(Ecosystem::Node, "@slack/webhook").expect("bare scoped");
        assert_eq!(
            (bare.name.as_str(), bare.spec.as_str()),
            ("@slack/webhook", "")
        );
        let caret = Requirement::parse(Ecosystem::Node, "left-pad@^1.3.0").expect("caret");
        assert_eq!(caret.pinned_version(), None);
    }

    #[test]
    fn what_an_installer_would_read_as_an_option_a_url_or_a_path_is_refused() {
        for line in [
            "-r /etc/passwd",
            "--index-url=http://evil",
            "git+https://x/y.git",
            "./local",
            "pkg @ https://x/y.whl",
            "pkg; os_name=='nt'",
            "",
        ] {
            assert!(
                Requirement::parse(Ecosystem::Python, line).is_err(),
                "{line}"
            );
        }
        for line in [
            "--registry=http://evil",
            "x@file:../y",
            "x@git+ssh://h/r",
            "x@http://h/t.tgz",
            "../local",
            "x@-y",
        ] {
            assert!(Requirement::parse(Ecosystem::Node, line).is_err(), "{line}");
        }
    }

    #[test]
    fn a_stored_list_round_trips() {
        let text = "PyYAML==6.0.2\n# a comment\n\nsix";
        let list = parse_requirements(Ecosystem::Python, text).expect("list");
        assert_eq!(list.len(), 2);
        assert_eq!(
            requirements_text(Ecosystem::Python, &list),
            "PyYAML==6.0.2\nsix"
        );
    }
}
