//! What a script imports that is neither the standard library nor part of the workflow's
//! folder, and whether its environment has it. Python is read by the interpreter's own parser
//! (`ast`, which runs nothing) against its own `sys.stdlib_module_names`; Node by its import
//! forms against the interpreter's own list of builtins.

mod node;

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use serde::Deserialize;
use tokio::io::AsyncWriteExt;

use super::installer::installer_env;
use super::{python, Ecosystem};

/// How long reading a script's imports may take.
const READ_LIMIT: Duration = Duration::from_secs(20);

/// One import a script makes of something outside the standard library and its own folder.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Import {
    /// A top-level Python module ("yaml"), or a Node specifier ("@slack/webhook").
    pub module: String,
    /// 1-based.
    pub line: u32,
    /// The workflow's environment has it.
    pub installed: bool,
}

/// Reads the imports with the interpreter's parser. Imports inside a `try` that catches
/// ImportError are optional ones and left out; so are relative imports and modules that are
/// files or folders beside the script. `installed` is asked of the workflow's own venv (when
/// it has none, nothing outside the standard library is installed: the machine's packages are
/// not the workflow's).
const PYTHON_SCANNER: &str = r#"
import ast, importlib.util, json, os, sys
folder = sys.argv[1]
try:
    tree = ast.parse(sys.stdin.read())
except SyntaxError as e:
    print(json.dumps({"error": f"line {e.lineno}: {e.msg}"}))
    sys.exit(0)
optional = set()
for node in ast.walk(tree):
    if isinstance(node, ast.Try):
        caught = set()
        for h in node.handlers:
            kinds = h.type.elts if isinstance(h.type, ast.Tuple) else [h.type]
            for k in kinds:
                if k is None or (isinstance(k, ast.Name) and k.id in ("ImportError", "ModuleNotFoundError", "Exception")):
                    caught.add(True)
        if caught:
            for stmt in node.body:
                for inner in ast.walk(stmt):
                    optional.add(id(inner))
found = {}
for node in ast.walk(tree):
    if id(node) in optional:
        continue
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
        names = [node.module]
    else:
        continue
    for name in names:
        top = name.split(".")[0]
        if top in sys.stdlib_module_names or top in found:
            continue
        if os.path.exists(os.path.join(folder, top + ".py")) or os.path.isdir(os.path.join(folder, top)):
            continue
        found[top] = node.lineno
out = []
for top, line in sorted(found.items(), key=lambda kv: kv[1]):
    try:
        installed = importlib.util.find_spec(top) is not None
    except Exception:
        installed = False
    out.append({"module": top, "line": line, "installed": installed})
print(json.dumps({"imports": out}))
"#;

#[derive(Deserialize)]
struct Scanned {
    #[serde(default)]
    imports: Vec<Import>,
    error: Option<String>,
}

/// The script's imports from outside the standard library and its folder, in line order. An
/// `Err` says why they could not be read (a syntax error, no interpreter).
pub async fn read_imports(
    ecosystem: Ecosystem,
    code: &str,
    folder: &Path,
) -> Result<Vec<Import>, String> {
    match ecosystem {
        Ecosystem::Python => python_imports(code, folder).await,
        Ecosystem::Node => Ok(node::imports(code, folder).await),
    }
}

async fn python_imports(code: &str, folder: &Path) -> Result<Vec<Import>, String> {
    let own = python::venv_python(folder);
    // Without a venv of its own, -S leaves the machine's site-packages out.
    let (program, flags) = if own.exists() {
        (own.to_string_lossy().into_owned(), vec!["-I"])
    } else {
        ("python3".to_string(), vec!["-I", "-S"])
    };
    let mut cmd = tokio::process::Command::new(&program);
    cmd.args(&flags)
        .arg("-c")
        .arg(PYTHON_SCANNER)
        .arg(folder)
        .env_clear()
        .envs(installer_env())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("{program} could not be started to read the imports: {e}"))?;
    if let Some(mut stdin) = child.stdin.take() {
        let code = code.to_string();
        // Written from a task: a large script must not block on a full pipe while we wait.
        tokio::spawn(async move {
            let _ = stdin.write_all(code.as_bytes()).await;
        });
    }
    let output = tokio::time::timeout(READ_LIMIT, child.wait_with_output())
        .await
        .map_err(|_| {
            format!(
                "reading the imports took longer than {} s",
                READ_LIMIT.as_secs()
            )
        })?
        .map_err(|e| format!("reading the imports failed: {e}"))?;
    let text = String::from_utf8_lossy(&output.stdout);
    let scanned: Scanned = serde_json::from_str(text.trim()).map_err(|_| {
        format!(
            "the imports could not be read: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        )
    })?;
    match scanned.error {
        Some(error) => Err(format!("the script does not parse ({error})")),
        None => Ok(scanned.imports),
    }
}
