//! What a person hands a command: a script file (or standard input), `NAME=VALUE` pairs, a
//! runtime's name, and a yes on the terminal.

use std::io::{BufRead, IsTerminal, Read, Write};
use std::path::PathBuf;

use healer::workflow::{EnvVar, Runtime};
use healer::{Error, Result};

pub fn parse_runtime(text: &str) -> Runtime {
    match text.trim() {
        "python3" | "python" => Runtime::Python3,
        "node" | "nodejs" => Runtime::Node,
        "bash" | "sh" => Runtime::Bash,
        other => Runtime::Custom {
            command: other.to_string(),
        },
    }
}

pub fn parse_env(pairs: &[String]) -> Result<Vec<EnvVar>> {
    pairs
        .iter()
        .map(|pair| {
            let (name, value) = pair.split_once('=').ok_or_else(|| {
                Error::InvalidInput(format!("--env {pair:?}: write it as NAME=VALUE"))
            })?;
            Ok(EnvVar {
                name: name.to_string(),
                value: value.to_string(),
            })
        })
        .collect()
}

pub fn read_script(path: &PathBuf) -> Result<String> {
    if path.as_os_str() == "-" {
        let mut code = String::new();
        std::io::stdin()
            .read_to_string(&mut code)
            .map_err(|e| Error::io("cannot read the script from standard input", e))?;
        return Ok(code);
    }
    std::fs::read_to_string(path)
        .map_err(|e| Error::io(format!("cannot read the script {}", path.display()), e))
}

/// Ask a yes/no question on the terminal; without a terminal, refuse (use --yes).
pub fn confirm(question: &str) -> Result<()> {
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        return Err(Error::InvalidInput(
            "not deleting without confirmation: add --yes to delete from a script".to_string(),
        ));
    }
    print!("{question}");
    let _ = std::io::stdout().flush();
    let mut answer = String::new();
    stdin
        .lock()
        .read_line(&mut answer)
        .map_err(|e| Error::io("cannot read the answer", e))?;
    if matches!(answer.trim(), "y" | "Y" | "yes") {
        Ok(())
    } else {
        Err(Error::InvalidInput("not deleted".to_string()))
    }
}
