//! A script's environment: built, never inherited. The engine's own variables stay with the
//! engine (a provider key among them would otherwise reach every script, and every fix a model
//! writes); a script gets a safe base of the person's session, the variables its workflow
//! declares, and Healer's own.

use crate::secrets::looks_secret;

/// The PATH given when the engine has none.
const DEFAULT_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// Variables of the person's session a script may rely on (where it finds programs, its home,
/// its language and time zone, the desktop and agents it talks to, the proxy it must use).
const BASE: [&str; 27] = [
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "TZ",
    "TMPDIR",
    "DISPLAY",
    "WAYLAND_DISPLAY",
    "XDG_RUNTIME_DIR",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_CACHE_HOME",
    "XDG_STATE_HOME",
    "XDG_CONFIG_DIRS",
    "XDG_DATA_DIRS",
    "DBUS_SESSION_BUS_ADDRESS",
    "SSH_AUTH_SOCK",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "ALL_PROXY",
];

/// The safe base from the engine's environment (`parent` reads it): the names above and the
/// locale's `LC_*`, never a name that looks secret.
pub fn base(parent: &[(String, String)]) -> Vec<(String, String)> {
    let mut vars: Vec<(String, String)> = parent
        .iter()
        .filter(|(name, _)| {
            (BASE.contains(&name.as_str()) || name.starts_with("LC_")) && !looks_secret(name)
        })
        .filter(|(name, value)| !name.contains(['=', '\0']) && !value.contains('\0'))
        .cloned()
        .collect();
    if !vars
        .iter()
        .any(|(name, value)| name == "PATH" && !value.is_empty())
    {
        vars.retain(|(name, _)| name != "PATH");
        vars.push(("PATH".to_string(), DEFAULT_PATH.to_string()));
    }
    vars
}

/// The engine's environment as text (names or values that are not UTF-8 are left out).
pub fn engine_environment() -> Vec<(String, String)> {
    std::env::vars_os()
        .filter_map(|(n, v)| Some((n.into_string().ok()?, v.into_string().ok()?)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn the_base_keeps_the_session_and_drops_keys_and_the_rest() {
        let parent = pairs(&[
            ("PATH", "/opt/bin:/usr/bin"),
            ("HOME", "/home/ann"),
            ("LC_TIME", "fr_FR.UTF-8"),
            ("OPENAI_API_KEY", "sk-x"),
            ("GITHUB_TOKEN", "ghp"),
            ("CARGO_HOME", "/c"),
            ("HEALER_DATA_DIR", "/d"),
        ]);
        let base = base(&parent);
        let names: Vec<&str> = base.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["PATH", "HOME", "LC_TIME"]);
    }

    #[test]
    fn a_missing_path_gets_a_sane_default() {
        let base = base(&pairs(&[("PATH", "")]));
        assert_eq!(base, pairs(&[("PATH", DEFAULT_PATH)]));
    }
}
