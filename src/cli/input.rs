//! What a person hands a command: a script file (or standard input), `NAME=VALUE` pairs, a
//! runtime's name, and a yes on the terminal.

use std::io::{IsTerminal, Read, Write};
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

/// The script at `path` (`-`: standard input), read with the size cap: a file larger than a
/// workflow's script may be (or endless, like /dev/zero) is refused after reading one byte
/// more than the cap, never read whole.
pub fn read_script(path: &PathBuf) -> Result<String> {
    let cap = healer::workflow::MAX_SCRIPT_BYTES;
    let limit = u64::try_from(cap).unwrap_or(u64::MAX).saturating_add(1);
    let mut bytes = Vec::new();
    let (read, shown) = if path.as_os_str() == "-" {
        let read = std::io::stdin().take(limit).read_to_end(&mut bytes);
        (read, "standard input".to_string())
    } else {
        let read = std::fs::File::open(path).and_then(|f| f.take(limit).read_to_end(&mut bytes));
        (read, path.display().to_string())
    };
    read.map_err(|e| Error::io(format!("cannot read the script {shown}"), e))?;
    if bytes.len() > cap {
        return Err(Error::InvalidInput(format!(
            "the script {shown} is larger than {}, the most a workflow's script may be; keep \
             data in a file beside the script and read that",
            healer::workflow::size(cap)
        )));
    }
    String::from_utf8(bytes).map_err(|_| {
        Error::InvalidInput(format!(
            "the script {shown} is not UTF-8 text; save it as UTF-8 and try again"
        ))
    })
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
    healer::capped::read_line(&mut stdin.lock(), &mut answer)?;
    if matches!(answer.trim(), "y" | "Y" | "yes") {
        Ok(())
    } else {
        Err(Error::InvalidInput("not deleted".to_string()))
    }
}
