//! The built-in agent's `search`: ripgrep's own crates (`ignore` to walk the worktree the way
//! git sees it, `grep` to match), so it behaves like `rg` without a binary.

use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use grep::regex::RegexMatcherBuilder;
use grep::searcher::sinks::UTF8;
use grep::searcher::{BinaryDetection, SearcherBuilder};
use serde_json::{json, Value};

use super::workspace::Workspace;
use crate::error::{Error, Result};
use crate::llm::Tool;

/// The most matching lines one search returns.
const MAX_MATCHES: usize = 200;
/// The most characters of one matching line.
const MAX_LINE_CHARS: usize = 300;

pub struct Search(pub Arc<Workspace>);

#[async_trait]
impl Tool for Search {
    fn name(&self) -> &str {
        "search"
    }
    fn description(&self) -> &str {
        "Search the worktree's files for a regular expression (Rust regex syntax; literal: true for plain text), skipping what .gitignore ignores. Prints path:line: text."
    }
    fn schema(&self) -> Value {
        json!({"type": "object", "properties": {
            "pattern": {"type": "string", "minLength": 1},
            "path": {"type": "string", "description": "a file or folder relative to the worktree; default ."},
            "literal": {"type": "boolean"},
            "ignore_case": {"type": "boolean"}},
            "required": ["pattern"], "additionalProperties": false})
    }
    async fn call(&self, args: Value) -> Result<String> {
        let pattern = args
            .get("pattern")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let rel = args.get("path").and_then(Value::as_str).unwrap_or(".");
        let start = self.0.existing(if rel.is_empty() { "." } else { rel })?;
        let flag = |name: &str| args.get(name).and_then(Value::as_bool).unwrap_or(false);
        let (literal, ignore_case) = (flag("literal"), flag("ignore_case"));
        let ws = self.0.clone();
        tokio::task::spawn_blocking(move || search(&ws, &start, &pattern, literal, ignore_case))
            .await
            .map_err(|e| Error::Internal(format!("the search stopped: {e}")))?
    }
}

fn search(
    ws: &Workspace,
    start: &Path,
    pattern: &str,
    literal: bool,
    ignore_case: bool,
) -> Result<String> {
    let matcher = RegexMatcherBuilder::new()
        .fixed_strings(literal)
        .case_insensitive(ignore_case)
        .build(pattern)
        .map_err(|e| {
            Error::InvalidInput(format!(
                "the pattern is not a valid regular expression ({e}); pass literal: true to search for the text itself"
            ))
        })?;
    let mut searcher = SearcherBuilder::new()
        .binary_detection(BinaryDetection::quit(0))
        .line_number(true)
        .build();
    let mut walk = ignore::WalkBuilder::new(start);
    walk.hidden(false)
        .sort_by_file_name(|a, b| a.cmp(b))
        .filter_entry(|e| e.file_name() != ".git");
    let mut hits: Vec<String> = Vec::new();
    let mut more = 0usize;
    for entry in walk.build().flatten() {
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let shown = ws.relative(entry.path());
        let result = searcher.search_path(
            &matcher,
            entry.path(),
            UTF8(|line, text| {
                if hits.len() < MAX_MATCHES {
                    let text = text.trim_end();
                    let cut: String = text.chars().take(MAX_LINE_CHARS).collect();
                    let ellipsis = if cut.len() < text.len() { "…" } else { "" };
                    hits.push(format!("{shown}:{line}: {cut}{ellipsis}"));
                } else {
                    more += 1;
                }
                Ok(true)
            }),
        );
        // A file that vanished or is not UTF-8 is skipped, as rg does.
        let _ = result;
    }
    if hits.is_empty() {
        return Ok(format!("No match for {pattern:?}."));
    }
    if more > 0 {
        hits.push(format!(
            "[{more} more matching lines not shown; narrow the path or the pattern]"
        ));
    }
    Ok(hits.join("\n"))
}
