//! Where in the script a failure happened, for "did the fix make it fail earlier?": the line of
//! every frame of the entry file, outermost first (the call path, which orders failures the way
//! the script runs), and whether it failed while loading (a syntax error, an import).

use std::path::Path;

use super::Evidence;

/// The entry file's frames, outermost first: Python's traceback order, Node's `at` lines
/// reversed, a shell's `main.sh: line N:`. Empty when the evidence names no line of it.
pub fn entry_frames(evidence: &Evidence, entry: &str) -> Vec<u32> {
    let text = match &evidence.stack {
        Some(stack) => format!("{stack}\n{}", evidence.message),
        None => evidence.message.clone(),
    };
    let ours =
        |path: &str| Path::new(path.trim()).file_name().and_then(|n| n.to_str()) == Some(entry);
    let mut python = Vec::new();
    let mut node = Vec::new();
    let mut shell = Vec::new();
    for line in text.lines() {
        let t = line.trim();
        if let Some(rest) = t.strip_prefix("File \"") {
            // File "/x/main.py", line 12, in total
            if let Some((path, after)) = rest.split_once('"') {
                let n = after
                    .trim_start_matches(", line ")
                    .split(|c: char| !c.is_ascii_digit())
                    .next()
                    .and_then(|d| d.parse().ok());
                if let (true, Some(n)) = (ours(path), n) {
                    python.push(n);
                }
            }
        } else if let Some(rest) = t.strip_prefix("at ") {
            // at total (/x/main.js:12:5) or at /x/main.js:12:5
            let place = rest
                .rsplit_once('(')
                .map_or(rest, |(_, p)| p.trim_end_matches(')'));
            let mut parts = place.rsplitn(3, ':');
            let (_col, line, path) = (parts.next(), parts.next(), parts.next());
            if let (Some(path), Some(Ok(n))) = (path, line.map(str::parse)) {
                if ours(path.trim_start_matches("file://")) {
                    node.push(n);
                }
            }
        } else if let Some((path, rest)) = t.split_once(": line ") {
            let n = rest
                .split(|c: char| !c.is_ascii_digit())
                .next()
                .and_then(|d| d.parse().ok());
            if let (true, Some(n)) = (ours(path), n) {
                shell.push(n);
            }
        }
    }
    node.reverse();
    [python, node, shell]
        .into_iter()
        .find(|frames| !frames.is_empty())
        .unwrap_or_default()
}

/// Whether the failure stopped the script from loading: a syntax error, or an import or module
/// that cannot be found.
pub fn broke_loading(evidence: &Evidence) -> bool {
    let name = evidence
        .error_type
        .as_deref()
        .map(|t| t.rsplit('.').next().unwrap_or(t))
        .unwrap_or_default();
    if matches!(
        name,
        "SyntaxError" | "IndentationError" | "TabError" | "ImportError" | "ModuleNotFoundError"
    ) {
        return true;
    }
    let message = evidence.message.to_ascii_lowercase();
    [
        "cannot find module",
        "err_module_not_found",
        "syntax error near unexpected token",
        "syntax error: unexpected end of file",
    ]
    .iter()
    .any(|p| message.contains(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn evidence(error_type: Option<&str>, message: &str, stack: Option<&str>) -> Evidence {
        Evidence {
            error_type: error_type.map(str::to_string),
            message: message.to_string(),
            stack: stack.map(str::to_string),
        }
    }

    #[test]
    fn frames_of_the_entry_file_outermost_first() {
        let py = evidence(
            Some("KeyError"),
            "'total'",
            Some("File \"/d/w/1/main.py\", line 30, in <module>\n    main()\nFile \"/d/w/1/main.py\", line 25, in main\n    step()\nFile \"/usr/lib/python3/json/__init__.py\", line 293, in load\nFile \"/d/w/1/main.py\", line 12, in step\n    x = row['total']"),
        );
        assert_eq!(entry_frames(&py, "main.py"), [30, 25, 12]);
        let js = evidence(
            Some("TypeError"),
            "Cannot read properties of undefined",
            Some("    at total (/d/w/1/main.js:12:5)\n    at main (/d/w/1/main.js:20:3)\n    at Object.<anonymous> (/d/w/1/main.js:24:1)\n    at Module._compile (node:internal/modules/cjs/loader:1554:14)"),
        );
        assert_eq!(entry_frames(&js, "main.js"), [24, 20, 12]);
        let sh = evidence(None, "main.sh: line 7: totl: unbound variable", None);
        assert_eq!(entry_frames(&sh, "main.sh"), [7]);
        assert!(entry_frames(&sh, "other.sh").is_empty());
    }

    #[test]
    fn a_syntax_error_or_a_missing_import_broke_loading() {
        assert!(broke_loading(&evidence(
            Some("ModuleNotFoundError"),
            "No module named 'x'",
            None
        )));
        assert!(broke_loading(&evidence(
            Some("Error"),
            "Cannot find module 'left-pad'",
            None
        )));
        assert!(!broke_loading(&evidence(Some("KeyError"), "'total'", None)));
    }
}
