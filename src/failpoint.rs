//! Crash points for tests: when `HEALER_FAILPOINT` names a point, the process aborts there,
//! as abruptly as `kill -9` (no destructors, no commit). Used to prove that multi-step changes
//! are all or nothing. Without the variable a point costs one environment look-up.

/// The variable naming the point at which to abort.
pub const FAILPOINT_VAR: &str = "HEALER_FAILPOINT";

/// Abort the process here if `HEALER_FAILPOINT` is `name`.
pub fn hit(name: &str) {
    if std::env::var_os(FAILPOINT_VAR).is_some_and(|v| v == name) {
        eprintln!("healer: aborting at failpoint {name}");
        std::process::abort();
    }
}

/// Panic here (an ordinary, unwinding panic, as a bug would) if `HEALER_FAILPOINT` is
/// `panic:<name>`: proves that what is meant to survive a bug in one step does.
pub fn panic_at(name: &str) {
    let Some(value) = std::env::var_os(FAILPOINT_VAR) else {
        return;
    };
    if value.to_str().and_then(|v| v.strip_prefix("panic:")) == Some(name) {
        panic!("failpoint {name}");
    }
}
