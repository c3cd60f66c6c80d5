//! A Node script's imports: `require("x")`, `import … from "x"`, `import "x"`, `import("x")`
//! and `export … from "x"`, read outside comments, against Node's own list of builtins.

use std::path::Path;
use std::sync::OnceLock;
use std::time::Duration;

use regex::Regex;

use super::super::installer;
use super::super::names::node_package;
use super::super::NODE_MODULES_DIR;
use super::Import;

/// Used when `node` cannot be asked (it is what the runs use, so this is rarely needed).
const FALLBACK_BUILTINS: &[&str] = &[
    "assert",
    "async_hooks",
    "buffer",
    "child_process",
    "cluster",
    "console",
    "constants",
    "crypto",
    "dgram",
    "diagnostics_channel",
    "dns",
    "domain",
    "events",
    "fs",
    "http",
    "http2",
    "https",
    "inspector",
    "module",
    "net",
    "os",
    "path",
    "perf_hooks",
    "process",
    "punycode",
    "querystring",
    "readline",
    "repl",
    "stream",
    "string_decoder",
    "sys",
    "timers",
    "tls",
    "trace_events",
    "tty",
    "url",
    "util",
    "v8",
    "vm",
    "wasi",
    "worker_threads",
    "zlib",
];

fn patterns() -> &'static [Regex] {
    static PATTERNS: OnceLock<Vec<Regex>> = OnceLock::new();
    PATTERNS.get_or_init(|| {
        [
            r#"\brequire\s*\(\s*['"]([^'"\n]+)['"]\s*\)"#,
            r#"\bimport\s*\(\s*['"]([^'"\n]+)['"]\s*\)"#,
            r#"\bimport\s+(?:[\w$*{}\s,]+?\s+from\s+)?['"]([^'"\n]+)['"]"#,
            r#"\bexport\s+(?:\*|\{[^}]*\})\s*(?:as\s+[\w$]+\s+)?from\s+['"]([^'"\n]+)['"]"#,
        ]
        .iter()
        .filter_map(|p| Regex::new(p).ok())
        .collect()
    })
}

pub(super) async fn imports(code: &str, folder: &Path) -> Vec<Import> {
    let builtins = builtins().await;
    let code = without_comments(code);
    let mut found: Vec<Import> = Vec::new();
    for pattern in patterns() {
        for captures in pattern.captures_iter(&code) {
            let Some(specifier) = captures.get(1) else {
                continue;
            };
            let text = specifier.as_str();
            let bare = text.strip_prefix("node:").unwrap_or(text);
            let top = bare.split('/').next().unwrap_or(bare);
            if text.starts_with("node:") || builtins.iter().any(|b| b == bare || b == top) {
                continue;
            }
            let Some(package) = node_package(text) else {
                continue;
            };
            let line = line_of(&code, specifier.start());
            match found.iter_mut().find(|i| i.module == package) {
                Some(known) => known.line = known.line.min(line),
                None => found.push(Import {
                    installed: folder
                        .join(NODE_MODULES_DIR)
                        .join(&package)
                        .join("package.json")
                        .is_file(),
                    module: package,
                    line,
                }),
            }
        }
    }
    found.sort_by_key(|i| i.line);
    found
}

/// Node's builtin modules, asked of `node` once.
async fn builtins() -> &'static [String] {
    static BUILTINS: OnceLock<Vec<String>> = OnceLock::new();
    if let Some(list) = BUILTINS.get() {
        return list;
    }
    let ran = installer::run(
        "node",
        &[
            "-p".to_string(),
            "require('module').builtinModules.join('\\n')".to_string(),
        ],
        &std::env::temp_dir(),
        Duration::from_secs(20),
    )
    .await;
    let list: Vec<String> = if ran.ok {
        ran.output
            .lines()
            .map(|l| l.trim().to_string())
            .filter(|l| !l.is_empty())
            .collect()
    } else {
        FALLBACK_BUILTINS.iter().map(|b| (*b).to_string()).collect()
    };
    BUILTINS.get_or_init(|| list)
}

fn line_of(code: &str, offset: usize) -> u32 {
    let before = code.get(..offset).unwrap_or(code);
    u32::try_from(before.matches('\n').count() + 1).unwrap_or(u32::MAX)
}

/// The code with `//` and `/* */` comments blanked (newlines kept, so lines still count), and
/// strings and template literals left alone.
fn without_comments(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut chars = code.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '/' if chars.peek() == Some(&'/') => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            '/' if chars.peek() == Some(&'*') => {
                chars.next();
                let mut last = ' ';
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                    }
                    if last == '*' && c == '/' {
                        break;
                    }
                    last = c;
                }
                out.push(' ');
            }
            '\'' | '"' | '`' => {
                out.push(c);
                let mut escaped = false;
                for s in chars.by_ref() {
                    out.push(s);
                    if escaped {
                        escaped = false;
                    } else if s == '\\' {
                        escaped = true;
                    } else if s == c || (s == '\n' && c != '`') {
                        break;
                    }
                }
            }
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn every_import_form_is_read_and_builtins_comments_and_paths_are_not() {
        let dir = tempfile::tempdir().expect("tmp");
        let code = r#"const { IncomingWebhook } = require("@slack/webhook");
import fs from "node:fs";
import path from "path";
// const ignored = require("in-a-comment");
/* import x from "in-a-block"; */
import {
  map,
  filter,
} from "lodash/fp";
import "side-effect";
const later = await import('dynamic-pkg');
export * from "re-exported";
const local = require("./helpers");
"#;
        let found = imports(code, dir.path()).await;
        let names: Vec<(&str, u32)> = found.iter().map(|i| (i.module.as_str(), i.line)).collect();
        assert_eq!(
            names,
            [
                ("@slack/webhook", 1),
                ("lodash", 9),
                ("side-effect", 10),
                ("dynamic-pkg", 11),
                ("re-exported", 12),
            ]
        );
        assert!(found.iter().all(|i| !i.installed));
    }
}
