//! The machine's pyenv, where it has one, is outside Healer but inside these tests' way: the real
//! Claude Code runs every command in a login shell, whose profile runs `pyenv init` and with it
//! `pyenv rehash`, which holds a lock file while it works. A session ended while that shell
//! starts (every test ends its sessions) leaves the lock behind, and from then on every
//! `python3` through a pyenv shim waits a minute for it — and the tests that run Python time
//! out. While this test binary runs, a lock older than any real rehash is removed.

use std::path::PathBuf;
use std::sync::Once;
use std::time::{Duration, SystemTime};

/// Start the watch once per test binary (a no-op where there is no pyenv).
pub fn guard() {
    static START: Once = Once::new();
    START.call_once(|| {
        let Some(lock) = lock_path() else { return };
        std::thread::spawn(move || loop {
            remove_if_stale(&lock);
            std::thread::sleep(Duration::from_secs(1));
        });
    });
}

fn lock_path() -> Option<PathBuf> {
    let root = std::env::var_os("PYENV_ROOT")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".pyenv")))?;
    let shims = root.join("shims");
    shims.is_dir().then(|| shims.join(".pyenv-shim"))
}

/// A rehash writes its few hundred shims in well under a second; a lock older than 10 s is
/// one a killed rehash left (the ones waiting for it cannot tell, and would wait a minute).
fn remove_if_stale(lock: &PathBuf) {
    let Ok(meta) = std::fs::metadata(lock) else {
        return;
    };
    let stale = meta
        .modified()
        .ok()
        .and_then(|m| SystemTime::now().duration_since(m).ok())
        .is_some_and(|age| age > Duration::from_secs(10));
    if stale {
        let _ = std::fs::remove_file(lock);
    }
}
