//! For tests of what ends with a group: the live processes a token names.

/// Live processes (not zombies) whose command line holds `token`.
pub fn running_with(token: &str) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            String::from_utf8_lossy(&cmdline).contains(token)
        })
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
                stat.rsplit_once(") ")
                    .is_some_and(|(_, rest)| !rest.starts_with('Z') && !rest.starts_with('X'))
            })
        })
        .collect()
}

/// Why a group made in `registry` would not end every process in it, if it would not (no
/// writable cgroup here): such a test says it was skipped rather than pass silently.
pub fn groups_cannot_end_all(registry: &std::path::Path) -> Option<String> {
    let probe = super::GroupSpec {
        registry: registry.to_path_buf(),
        name: format!(
            "probe-{}-{:016x}",
            std::process::id(),
            rand::random::<u64>()
        ),
    }
    .create();
    (!probe.holding.ends_all).then(|| probe.holding.problems.join("; "))
}
