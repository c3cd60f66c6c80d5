//! The module a failed run could not find, read from what Python and Node say about it.

use std::sync::OnceLock;

use regex::Regex;

use super::names::node_package;
use super::Ecosystem;

fn patterns() -> &'static [(Ecosystem, Regex)] {
    static PATTERNS: OnceLock<Vec<(Ecosystem, Regex)>> = OnceLock::new();
    PATTERNS.get_or_init(|| {
        [
            (Ecosystem::Python, r"No module named '([A-Za-z0-9_.]+)'"),
            (Ecosystem::Python, r"No module named ([A-Za-z0-9_.]+)"),
            (Ecosystem::Node, r"Cannot find module '([^'\s]+)'"),
            (Ecosystem::Node, r"Cannot find package '([^'\s]+)'"),
        ]
        .into_iter()
        .filter_map(|(e, p)| Regex::new(p).ok().map(|r| (e, r)))
        .collect()
    })
}

/// The top-level module (Python) or the package (Node) that `text` says is missing. `None` when
/// it says no such thing, or names a file of the script's own (`./helpers`).
pub fn missing_module(ecosystem: Ecosystem, text: &str) -> Option<String> {
    patterns()
        .iter()
        .filter(|(e, _)| *e == ecosystem)
        .find_map(|(_, pattern)| pattern.captures(text)?.get(1))
        .and_then(|m| match ecosystem {
            Ecosystem::Python => m.as_str().split('.').next().map(str::to_string),
            Ecosystem::Node => node_package(m.as_str()),
        })
        .filter(|m| !m.is_empty())
}

/// The script's line that imports `module`: its number and text, for the person to see.
pub fn failing_import_line(code: &str, module: &str) -> Option<(u32, String)> {
    code.lines().enumerate().find_map(|(i, line)| {
        let trimmed = line.trim();
        let python = trimmed.starts_with(&format!("import {module}"))
            || trimmed.starts_with(&format!("from {module}"))
            || trimmed.contains(&format!(", {module}"));
        let node = trimmed.contains(&format!("\"{module}"))
            || trimmed.contains(&format!("'{module}"))
            || trimmed.contains(&format!("`{module}"));
        let imports = trimmed.contains("import") || trimmed.contains("require");
        ((python || node) && imports).then(|| {
            (
                u32::try_from(i + 1).unwrap_or(u32::MAX),
                trimmed.to_string(),
            )
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_and_node_say_which_module_is_missing() {
        assert_eq!(
            missing_module(Ecosystem::Python, "No module named 'yaml.constructor'").as_deref(),
            Some("yaml")
        );
        assert_eq!(
            missing_module(Ecosystem::Python, "ImportError: No module named six").as_deref(),
            Some("six")
        );
        assert_eq!(
            missing_module(
                Ecosystem::Node,
                "Cannot find module '@slack/webhook'\nRequire stack:\n- /x/main.js"
            )
            .as_deref(),
            Some("@slack/webhook")
        );
        assert_eq!(
            missing_module(
                Ecosystem::Node,
                "Cannot find package 'left-pad' imported from /x/main.mjs"
            )
            .as_deref(),
            Some("left-pad")
        );
        assert_eq!(
            missing_module(Ecosystem::Node, "Cannot find module './helpers'"),
            None
        );
        assert_eq!(missing_module(Ecosystem::Python, "KeyError: 'total'"), None);
    }

    #[test]
    fn the_failing_import_is_found_in_the_script() {
        let py = "import json\nimport yaml\n";
        assert_eq!(
            failing_import_line(py, "yaml"),
            Some((2, "import yaml".to_string()))
        );
        let js = "// digest\nconst { IncomingWebhook } = require(\"@slack/webhook\");\n";
        assert_eq!(
            failing_import_line(js, "@slack/webhook").map(|(n, _)| n),
            Some(2)
        );
    }
}
