//! The layers of `src/`, kept. docs/architecture.md holds the one table (layer, module, job);
//! these tests read it, then every `.rs` file of the library, and fail — naming the file and the
//! line — when a module uses a module of a higher layer, or when a module has no line in the
//! table. People and the test read the same table, so the two cannot drift.
//!
//! A use is any path that reaches another top-level module: `crate::x` in a `use` line or inline
//! (`crate::engine::Inner`), a group (`use crate::{a, b}`), or `super::` climbing to the crate
//! root. Comments and string literals are not code and are skipped. `src/cli/` is the `healer`
//! binary, a crate of its own on top of everything: it is not checked.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Module name → layer (0 is the bottom), from the table in docs/architecture.md: its rows
/// are `| <layer> | \`<module>\` | <job> |`.
fn layer_table(doc: &str) -> BTreeMap<String, u32> {
    let mut table = BTreeMap::new();
    for line in doc.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let (Some(layer), Some(module)) = (cells.get(1), cells.get(2)) else {
            continue;
        };
        let digits: String = layer.chars().take_while(char::is_ascii_digit).collect();
        let (Ok(layer), Some(name)) = (digits.parse::<u32>(), module.split('`').nth(1)) else {
            continue;
        };
        table.insert(name.trim_end_matches('/').to_string(), layer);
    }
    table
}

/// The top-level module a file under `src/` belongs to (`store/heals.rs` → `store`), and how
/// deep its own module sits (`store` 1, `store::heals` 2).
fn module_of(rel: &str) -> (String, usize) {
    let parts: Vec<&str> = rel.trim_end_matches(".rs").split('/').collect();
    let top = parts.first().copied().unwrap_or_default().to_string();
    (top, parts.len())
}

/// `text` with comments and the insides of string and character literals blanked out; line
/// breaks are kept, so offsets still give line numbers.
fn code_only(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        let ident_before = i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_');
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(chars[i]));
                    i += 1;
                }
            }
        } else if c == 'r' && !ident_before && matches!(next, Some('"') | Some('#')) {
            // A raw string: r"…", r#"…"#, and so on.
            let hashes = chars[i + 1..].iter().take_while(|&&h| h == '#').count();
            if chars.get(i + 1 + hashes) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            let close: String = std::iter::once('"')
                .chain("#".repeat(hashes).chars())
                .collect();
            let close: Vec<char> = close.chars().collect();
            i += 2 + hashes;
            out.push_str(&" ".repeat(2 + hashes));
            while i < chars.len() && !chars[i..].starts_with(&close) {
                out.push(blank(chars[i]));
                i += 1;
            }
            out.push_str(&" ".repeat(close.len()));
            i += close.len();
        } else if c == '"' {
            out.push(' ');
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    out.push(' ');
                    i += 1;
                }
                if let Some(&ch) = chars.get(i) {
                    out.push(blank(ch));
                }
                i += 1;
            }
            out.push(' ');
            i += 1;
        } else if c == '\'' && (next == Some('\\') || chars.get(i + 2) == Some(&'\'')) {
            // A character literal ('"', '\''), not a lifetime.
            out.push(' ');
            i += 1;
            if chars.get(i) == Some(&'\\') {
                out.push(' ');
                i += 1;
            }
            while i < chars.len() && chars[i] != '\'' {
                out.push(' ');
                i += 1;
            }
            out.push(' ');
            i += 1;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// The spans of inline modules (`mod tests { … }`): a `super::` inside one climbs one level
/// less far.
fn inline_modules(code: &str) -> Vec<(usize, usize)> {
    let bytes = code.as_bytes();
    let mut spans = Vec::new();
    for (at, _) in code.match_indices("mod ") {
        if at > 0 && (bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_') {
            continue;
        }
        let rest = &code[at + 4..];
        let name_len = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let after = rest[name_len..].trim_start();
        if name_len == 0 || !after.starts_with('{') {
            continue; // `mod name;`: a file of its own
        }
        let open = code.len() - after.len();
        let mut level = 0;
        for (k, ch) in code[open..].char_indices() {
            match ch {
                '{' => level += 1,
                '}' => {
                    level -= 1;
                    if level == 0 {
                        spans.push((open, open + k));
                        break;
                    }
                }
                _ => {}
            }
        }
    }
    spans
}

/// Every top-level module a file's code names, with the line it is named on. `depth` is how
/// deep the file's own module sits.
fn uses(code: &str, depth: usize) -> Vec<(usize, String)> {
    let inline = inline_modules(code);
    let line_of = |at: usize| code[..at].matches('\n').count() + 1;
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let mut found = Vec::new();
    let bytes = code.as_bytes();
    for (at, _) in code
        .match_indices("crate::")
        .chain(code.match_indices("super::"))
    {
        if at > 0 && (bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_') {
            continue;
        }
        if code[..at].ends_with("super::") {
            // The rest of a `super::super::…` chain: counted from its first `super`.
            continue;
        }
        let mut rest = &code[at..];
        if rest.starts_with("super::") {
            let mut climbs = 0;
            while let Some(tail) = rest.strip_prefix("super::") {
                climbs += 1;
                rest = tail;
            }
            let nested = inline.iter().filter(|(s, e)| *s < at && at < *e).count();
            if climbs < depth + nested {
                continue; // still inside its own top-level module
            }
        } else {
            rest = &rest["crate::".len()..];
        }
        if let Some(group) = rest.strip_prefix('{') {
            // `crate::{a, b::c, d::{e, f}}`: the names at the group's first level.
            let mut level = 0;
            let mut start = true;
            for (k, ch) in group.char_indices() {
                match ch {
                    '{' => level += 1,
                    '}' if level == 0 => break,
                    '}' => level -= 1,
                    ',' if level == 0 => start = true,
                    c if start && (c.is_alphanumeric() || c == '_') => {
                        let name = ident(&group[k..]);
                        if name != "self" {
                            found.push((line_of(code.len() - group.len() + k), name));
                        }
                        start = false;
                    }
                    _ => {}
                }
            }
        } else {
            let name = ident(rest);
            if !name.is_empty() && name != "self" {
                found.push((line_of(at), name));
            }
        }
    }
    found.sort();
    found
}

/// What is wrong with one file, each as `path:line: why`.
fn check_file(rel: &str, text: &str, layers: &BTreeMap<String, u32>) -> Vec<String> {
    let (own, depth) = module_of(rel);
    let Some(&own_layer) = layers.get(&own) else {
        return vec![format!(
            "src/{rel}: the module `{own}` has no line in the layer table of \
             docs/architecture.md — add it to the layer where it belongs"
        )];
    };
    let mut problems = Vec::new();
    for (line, used) in uses(&code_only(text), depth) {
        if used == own {
            continue;
        }
        match layers.get(&used) {
            None => problems.push(format!(
                "src/{rel}:{line}: uses `{used}`, which has no line in the layer table of \
                 docs/architecture.md — add it to the layer where it belongs"
            )),
            Some(&layer) if layer > own_layer => problems.push(format!(
                "src/{rel}:{line}: `{own}` (layer {own_layer}) uses `{used}` (layer {layer}), \
                 a higher layer — move what it needs down, or hand it down (see docs/architecture.md)"
            )),
            Some(_) => {}
        }
    }
    problems
}

fn library_files(dir: &Path, root: &Path, into: &mut Vec<(String, PathBuf)>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("src/ is readable")
        .map(|e| e.expect("a directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        let rel = path
            .strip_prefix(root)
            .expect("under src/")
            .to_string_lossy()
            .replace('\\', "/");
        if rel == "cli" || rel == "lib.rs" {
            continue; // the binary, and the crate root that lists the modules
        }
        if path.is_dir() {
            library_files(&path, root, into);
        } else if rel.ends_with(".rs") {
            into.push((rel, path));
        }
    }
}

fn table() -> BTreeMap<String, u32> {
    let doc = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/architecture.md");
    let table = layer_table(&std::fs::read_to_string(&doc).expect("docs/architecture.md"));
    assert!(
        table.len() > 10,
        "the layer table in docs/architecture.md could not be read"
    );
    table
}

/// A file that grows past this many lines is split by job (issue 24): one file, one job.
const MOST_LINES: usize = 700;

#[test]
fn no_source_file_is_over_700_lines() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    library_files(&src, &src, &mut files);
    let mut cli = Vec::new();
    library_files(&src.join("cli"), &src, &mut cli);
    let long: Vec<String> = files
        .iter()
        .chain(&cli)
        .filter_map(|(rel, path)| {
            let lines = std::fs::read_to_string(path)
                .expect("a source file")
                .lines()
                .count();
            (lines > MOST_LINES).then(|| format!("src/{rel}: {lines} lines"))
        })
        .collect();
    assert!(
        long.is_empty(),
        "split these by job (at most {MOST_LINES} lines each):\n{}",
        long.join("\n")
    );
}

#[test]
fn no_module_uses_one_from_a_higher_layer() {
    let layers = table();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    library_files(&src, &src, &mut files);
    assert!(files.len() > 50, "src/ has only {} files?", files.len());
    let problems: Vec<String> = files
        .iter()
        .flat_map(|(rel, path)| {
            let text = std::fs::read_to_string(path).expect("a source file");
            check_file(rel, &text, &layers)
        })
        .collect();
    assert!(problems.is_empty(), "\n{}\n", problems.join("\n"));
}

#[test]
fn the_check_names_the_file_and_line_of_a_use_from_above() {
    let layers = table();
    let text = "//! crate::engine in a comment is fine\n\
                use crate::store::Store;\n\
                use crate::{error::Result, heal::Pipeline};\n\
                const S: &str = \"crate::engine\";\n\
                fn f() -> Option<&'static crate::engine::Handle> { None }\n";
    let problems = check_file("scheduler/example.rs", text, &layers);
    assert_eq!(problems.len(), 2, "{problems:#?}");
    assert!(problems[0].starts_with("src/scheduler/example.rs:3: `scheduler`"));
    assert!(problems[0].contains("uses `heal`"));
    assert!(problems[1].starts_with("src/scheduler/example.rs:5: "));
    assert!(problems[1].contains("uses `engine`"));
    let climbing = check_file(
        "heal/plan.rs",
        "use super::super::maintainer::Maintain;",
        &layers,
    );
    assert_eq!(climbing.len(), 1, "{climbing:#?}");
    // In an inline module, `super` is the file's own module, not the one above it.
    let tests = "#[cfg(test)]\nmod tests {\n    use super::*;\n    use super::Pipeline;\n}\n";
    assert!(check_file("heal.rs", tests, &layers).is_empty());
}

#[test]
fn a_module_without_a_line_in_the_table_is_named() {
    let layers = table();
    let problems = check_file("gadgets.rs", "use crate::store::Store;", &layers);
    assert_eq!(problems.len(), 1);
    assert!(problems[0].contains("`gadgets` has no line in the layer table"));
}
