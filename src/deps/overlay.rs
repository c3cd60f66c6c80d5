//! What a workflow's own environment adds to the variables its script runs with. One function,
//! used by the run, the sandbox's evaluations and syntax checks alike, so the three see the same
//! packages.

use std::path::Path;

use super::{python, NODE_MODULES_DIR, VENV_DIR};
use crate::workflow::{EnvVar, Runtime};

/// The variables that put the workflow's environment in front: for Python, its venv's `bin`
/// first on PATH (so `python3` is the venv's) and `VIRTUAL_ENV`; for Node, its `node_modules` on
/// `NODE_PATH` (a sandbox copy runs outside the folder) and `node_modules/.bin` on PATH.
/// `base_path` is the PATH the script would otherwise get. Empty when the workflow has no
/// environment of its own (a shell workflow, or nothing installed yet).
pub fn run_environment(runtime: &Runtime, folder: &Path, base_path: &str) -> Vec<EnvVar> {
    let var = |name: &str, value: String| EnvVar {
        name: name.to_string(),
        value,
    };
    let front = |dir: &Path| {
        let dir = dir.to_string_lossy();
        if base_path.is_empty() {
            dir.into_owned()
        } else {
            format!("{dir}:{base_path}")
        }
    };
    match runtime {
        Runtime::Python3 if python::venv_python(folder).exists() => {
            let venv = folder.join(VENV_DIR);
            vec![
                var("PATH", front(&venv.join("bin"))),
                var("VIRTUAL_ENV", venv.to_string_lossy().into_owned()),
            ]
        }
        Runtime::Node if folder.join(NODE_MODULES_DIR).is_dir() => {
            let modules = folder.join(NODE_MODULES_DIR);
            vec![
                var("PATH", front(&modules.join(".bin"))),
                var("NODE_PATH", modules.to_string_lossy().into_owned()),
            ]
        }
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_is_added_without_an_environment() {
        let dir = tempfile::tempdir().expect("tmp");
        assert!(run_environment(&Runtime::Python3, dir.path(), "/usr/bin").is_empty());
        assert!(run_environment(&Runtime::Node, dir.path(), "/usr/bin").is_empty());
        assert!(run_environment(&Runtime::Bash, dir.path(), "/usr/bin").is_empty());
    }

    #[test]
    fn node_modules_go_on_node_path_and_their_tools_first_on_path() {
        let dir = tempfile::tempdir().expect("tmp");
        std::fs::create_dir(dir.path().join(NODE_MODULES_DIR)).expect("mkdir");
        let vars = run_environment(&Runtime::Node, dir.path(), "/usr/bin");
        let path = vars.iter().find(|v| v.name == "PATH").expect("PATH");
        assert!(
            path.value.ends_with("node_modules/.bin:/usr/bin"),
            "{}",
            path.value
        );
        assert!(vars.iter().any(|v| v.name == "NODE_PATH"));
    }
}
