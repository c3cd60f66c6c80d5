//! The built-in agent's file tools: read_file, list_files, write_file, edit_file. Every path
//! goes through the [`Workspace`], so nothing outside the task's worktree is read or written.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{json, Value};

use super::workspace::Workspace;
use crate::error::{Error, Result};
use crate::llm::Tool;

/// The most of one file read_file returns.
const MAX_READ_BYTES: usize = 256 * 1024;
/// The most entries list_files returns.
const MAX_LIST_ENTRIES: usize = 500;

fn text_arg<'a>(args: &'a Value, name: &str) -> &'a str {
    args.get(name).and_then(Value::as_str).unwrap_or_default()
}

pub struct ReadFile(pub Arc<Workspace>);
pub struct ListFiles(pub Arc<Workspace>);
pub struct WriteFile(pub Arc<Workspace>);
pub struct EditFile(pub Arc<Workspace>);

#[async_trait]
impl Tool for ReadFile {
    fn name(&self) -> &str {
        "read_file"
    }
    fn description(&self) -> &str {
        "Read a text file of the worktree. Optional: first_line (1-based) and max_lines to read part of a long file."
    }
    fn schema(&self) -> Value {
        json!({"type": "object", "properties": {
            "path": {"type": "string", "description": "relative to the worktree"},
            "first_line": {"type": "integer", "minimum": 1},
            "max_lines": {"type": "integer", "minimum": 1}},
            "required": ["path"], "additionalProperties": false})
    }
    async fn call(&self, args: Value) -> Result<String> {
        let rel = text_arg(&args, "path");
        let path = self.0.existing(rel)?;
        if path.is_dir() {
            return Err(Error::InvalidInput(format!(
                "{rel} is a folder; list_files shows what is in it"
            )));
        }
        let bytes = std::fs::read(&path).map_err(|e| Error::io(format!("cannot read {rel}"), e))?;
        if bytes.iter().take(8192).any(|b| *b == 0) {
            return Ok(format!("{rel} is a binary file of {} bytes", bytes.len()));
        }
        let text = String::from_utf8_lossy(&bytes);
        let first = args.get("first_line").and_then(Value::as_u64).unwrap_or(1);
        let max = args.get("max_lines").and_then(Value::as_u64);
        let total = text.lines().count();
        let mut out = if first > 1 || max.is_some() {
            let skip = usize::try_from(first - 1).unwrap_or(usize::MAX);
            let take = max
                .and_then(|m| usize::try_from(m).ok())
                .unwrap_or(usize::MAX);
            let part: Vec<&str> = text.lines().skip(skip).take(take).collect();
            format!(
                "[lines {}–{} of {total}]\n{}",
                first,
                skip + part.len(),
                part.join("\n")
            )
        } else {
            text.into_owned()
        };
        if out.len() > MAX_READ_BYTES {
            let mut end = MAX_READ_BYTES;
            while !out.is_char_boundary(end) {
                end -= 1;
            }
            out.truncate(end);
            out.push_str(&format!(
                "\n[cut at {MAX_READ_BYTES} bytes; read the rest with first_line and max_lines]"
            ));
        }
        Ok(out)
    }
}

#[async_trait]
impl Tool for ListFiles {
    fn name(&self) -> &str {
        "list_files"
    }
    fn description(&self) -> &str {
        "List the files and folders under a folder of the worktree (default: all of it), skipping what .gitignore ignores. Folders end with /."
    }
    fn schema(&self) -> Value {
        json!({"type": "object", "properties": {
            "path": {"type": "string", "description": "a folder relative to the worktree; default ."},
            "max_depth": {"type": "integer", "minimum": 1}},
            "additionalProperties": false})
    }
    async fn call(&self, args: Value) -> Result<String> {
        let rel = match text_arg(&args, "path") {
            "" => ".",
            other => other,
        };
        let dir = self.0.existing(rel)?;
        let depth = args
            .get("max_depth")
            .and_then(Value::as_u64)
            .and_then(|d| usize::try_from(d).ok());
        let ws = self.0.clone();
        tokio::task::spawn_blocking(move || list(&ws, &dir, depth))
            .await
            .map_err(|e| Error::Internal(format!("listing stopped: {e}")))
    }
}

fn list(ws: &Workspace, dir: &std::path::Path, depth: Option<usize>) -> String {
    let mut walk = ignore::WalkBuilder::new(dir);
    walk.hidden(false)
        .max_depth(depth)
        .sort_by_file_name(|a, b| a.cmp(b))
        .filter_entry(|e| e.file_name() != ".git");
    let mut lines = Vec::new();
    let mut more = 0usize;
    for entry in walk.build().flatten() {
        if entry.depth() == 0 {
            continue;
        }
        if lines.len() >= MAX_LIST_ENTRIES {
            more += 1;
            continue;
        }
        let slash = if entry.file_type().is_some_and(|t| t.is_dir()) {
            "/"
        } else {
            ""
        };
        lines.push(format!("{}{slash}", ws.relative(entry.path())));
    }
    if lines.is_empty() {
        return "(empty)".to_string();
    }
    if more > 0 {
        lines.push(format!(
            "[{more} more not listed; list a folder or use max_depth]"
        ));
    }
    lines.join("\n")
}

#[async_trait]
impl Tool for WriteFile {
    fn name(&self) -> &str {
        "write_file"
    }
    fn description(&self) -> &str {
        "Write a whole file of the worktree (created, or replaced). For a small change to an existing file, edit_file is safer."
    }
    fn schema(&self) -> Value {
        json!({"type": "object", "properties": {
            "path": {"type": "string"}, "content": {"type": "string"}},
            "required": ["path", "content"], "additionalProperties": false})
    }
    async fn call(&self, args: Value) -> Result<String> {
        let rel = text_arg(&args, "path");
        let content = text_arg(&args, "content");
        let path = self.0.writable(rel)?;
        let existed = path.exists();
        std::fs::write(&path, content).map_err(|e| Error::io(format!("cannot write {rel}"), e))?;
        Ok(format!(
            "{} {rel} ({} bytes)",
            if existed { "Replaced" } else { "Created" },
            content.len()
        ))
    }
}

#[async_trait]
impl Tool for EditFile {
    fn name(&self) -> &str {
        "edit_file"
    }
    fn description(&self) -> &str {
        "Replace one piece of text in a file: `search` must occur exactly once in the file (copy it exactly, spaces and line breaks included); it becomes `replace`."
    }
    fn schema(&self) -> Value {
        json!({"type": "object", "properties": {
            "path": {"type": "string"}, "search": {"type": "string", "minLength": 1},
            "replace": {"type": "string"}},
            "required": ["path", "search", "replace"], "additionalProperties": false})
    }
    async fn call(&self, args: Value) -> Result<String> {
        let rel = text_arg(&args, "path");
        let search = text_arg(&args, "search");
        let replace = text_arg(&args, "replace");
        let existing = self.0.existing(rel)?;
        let path = self.0.writable(&self.0.relative(&existing))?;
        let text = std::fs::read_to_string(&path)
            .map_err(|e| Error::io(format!("cannot read {rel} as text"), e))?;
        match text.matches(search).count() {
            0 => Err(Error::InvalidInput(format!(
                "the search text was not found in {rel}; read_file it again and copy the lines exactly (spaces and line breaks count)"
            ))),
            1 => {
                let changed = text.replacen(search, replace, 1);
                std::fs::write(&path, &changed)
                    .map_err(|e| Error::io(format!("cannot write {rel}"), e))?;
                Ok(format!("Edited {rel}: 1 place changed"))
            }
            n => Err(Error::InvalidInput(format!(
                "the search text occurs {n} times in {rel}; include more of the lines around it so it occurs once"
            ))),
        }
    }
}
