//! Codex on the person's own login. Healer keeps a Codex home of its own per project (it
//! rewrites its config before each session), so the login the person made with `codex login`
//! in `~/.codex` is not there. Healer links that login's file into the project's home rather
//! than copying it: a ChatGPT login refreshes its tokens in place, and a copy would fall
//! behind (or sign the person's own Codex out when its refresh token is used up).

use std::path::{Path, PathBuf};

const AUTH_FILE: &str = "auth.json";

/// Link `~/.codex/auth.json` (or `$CODEX_HOME` of Healer's own environment) into
/// `codex_home`, unless it holds a login of its own. Nothing to link is fine: Codex then says
/// it is not logged in, in its own words.
pub(super) fn share(codex_home: &Path, home: Option<&Path>) {
    let here = codex_home.join(AUTH_FILE);
    if here.symlink_metadata().is_ok() {
        return;
    }
    let Some(theirs) = persons_login(home) else {
        return;
    };
    if same_folder(&theirs, codex_home) {
        return;
    }
    if let Err(e) = std::os::unix::fs::symlink(&theirs, &here) {
        tracing::warn!(
            "Codex's login was not shared with {}: {e}",
            codex_home.display()
        );
    }
}

/// The person's Codex login file, if there is one.
fn persons_login(home: Option<&Path>) -> Option<PathBuf> {
    let folder = std::env::var_os("CODEX_HOME")
        .map(PathBuf::from)
        .or_else(|| home.map(|h| h.join(".codex")))
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".codex")))?;
    let file = folder.join(AUTH_FILE);
    file.is_file().then_some(file)
}

fn same_folder(file: &Path, folder: &Path) -> bool {
    let real = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    file.parent().map(real) == Some(real(folder))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_persons_login_is_linked_once_and_a_homes_own_login_is_left_alone() {
        let dir = tempfile::tempdir().expect("temp dir");
        let home = dir.path().join("home");
        std::fs::create_dir_all(home.join(".codex")).expect("dirs");
        std::fs::write(home.join(".codex/auth.json"), "{\"tokens\":{}}").expect("login");
        let project_home = dir.path().join("codex");
        std::fs::create_dir_all(&project_home).expect("dirs");

        share(&project_home, Some(&home));
        let link = project_home.join("auth.json");
        assert_eq!(
            std::fs::read_link(&link).expect("a link"),
            home.join(".codex/auth.json")
        );
        // A write through the link reaches the person's file: a refreshed token stays theirs.
        std::fs::write(&link, "{\"tokens\":{\"fresh\":1}}").expect("write");
        assert!(std::fs::read_to_string(home.join(".codex/auth.json"))
            .expect("theirs")
            .contains("fresh"));

        let other = dir.path().join("other");
        std::fs::create_dir_all(&other).expect("dirs");
        std::fs::write(other.join("auth.json"), "{\"own\":1}").expect("own login");
        share(&other, Some(&home));
        assert!(std::fs::symlink_metadata(other.join("auth.json"))
            .expect("file")
            .is_file());
    }
}
