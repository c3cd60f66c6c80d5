//! The sandboxed child's environment: built from nothing, never inherited. Only an allow-list
//! of the parent's variables, fixed scratch locations, and the workflow's own variables minus
//! provider keys and anything that looks like a secret.

use std::path::Path;

use crate::workflow::EnvVar;

/// The PATH given when the parent has none.
const DEFAULT_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

pub use crate::secrets::looks_secret;

/// Whether one of the workflow's variables may reach the sandboxed child: not named in
/// `deny` (case-insensitively), not secret-looking, and a name the OS can carry.
pub fn may_pass(name: &str, deny: &[String]) -> bool {
    !name.is_empty()
        && !name.contains(['=', '\0'])
        && !deny.iter().any(|d| d.eq_ignore_ascii_case(name))
        && !looks_secret(name)
}

/// Where the child's HOME, TMPDIR and the result file point.
pub struct Locations<'a> {
    pub home: &'a Path,
    pub tmp: &'a Path,
    pub result: &'a Path,
    /// Marks every process of this run, so that ones that left the process group can be found.
    pub marker: &'a str,
}

/// The complete environment of the child, in order (later entries win).
pub fn child_env(
    parent: impl Fn(&str) -> Option<String>,
    workflow: &[EnvVar],
    deny: &[String],
    at: &Locations<'_>,
) -> Vec<(String, String)> {
    let mut vars: Vec<(String, String)> = Vec::new();
    let path = parent("PATH")
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| DEFAULT_PATH.to_string());
    vars.push(("PATH".to_string(), path));
    for name in ["LANG", "LC_ALL"] {
        let value = parent(name)
            .filter(|v| !v.is_empty())
            .unwrap_or_else(|| "C.UTF-8".to_string());
        vars.push((name.to_string(), value));
    }
    if let Some(tz) = parent("TZ") {
        vars.push(("TZ".to_string(), tz));
    }
    vars.push(("PYTHONUNBUFFERED".to_string(), "1".to_string()));
    vars.push(("PYTHONDONTWRITEBYTECODE".to_string(), "1".to_string()));
    for var in workflow {
        if may_pass(&var.name, deny) && !var.value.contains('\0') {
            vars.push((var.name.clone(), var.value.clone()));
        }
    }
    // Last, so that the workflow's variables cannot point them outside the scratch dir.
    let fixed = [
        ("HOME", at.home.to_string_lossy().into_owned()),
        ("TMPDIR", at.tmp.to_string_lossy().into_owned()),
        ("HEALER_RESULT", at.result.to_string_lossy().into_owned()),
        ("HEALER_SANDBOX", at.marker.to_string()),
    ];
    for (name, value) in fixed {
        vars.retain(|(n, _)| n != name);
        vars.push((name.to_string(), value));
    }
    vars
}

#[cfg(test)]
mod tests {
    use super::*;

    fn var(name: &str, value: &str) -> EnvVar {
        EnvVar {
            name: name.to_string(),
            value: value.to_string(),
        }
    }

    fn value<'a>(vars: &'a [(String, String)], name: &str) -> Option<&'a str> {
        vars.iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    #[test]
    fn denied_and_unusable_names_do_not_pass() {
        let deny = vec!["ACME_PROVIDER_CRED".to_string()];
        assert!(!may_pass("ACME_PROVIDER_CRED", &deny));
        assert!(!may_pass("acme_provider_cred", &deny));
        assert!(!may_pass("", &deny));
        assert!(!may_pass("A=B", &deny));
        assert!(!may_pass("SESSION_TOKEN", &deny));
        assert!(may_pass("CITY", &deny));
    }

    #[test]
    fn environment_is_an_allow_list_with_fixed_scratch_locations() {
        let parent = |name: &str| match name {
            "PATH" => Some("/opt/bin:/usr/bin".to_string()),
            "TZ" => Some("Europe/Paris".to_string()),
            "OPENAI_API_KEY" | "HOME" => Some("parent value".to_string()),
            _ => None,
        };
        let workflow = [
            var("CITY", "Lyon"),
            var("WEATHER_API_KEY", "k"),
            var("ACME_PROVIDER_CRED", "c"),
            var("HOME", "/home/someone"),
        ];
        let at = Locations {
            home: Path::new("/s/home"),
            tmp: Path::new("/s/tmp"),
            result: Path::new("/s/work/.healer/result.json"),
            marker: "m1",
        };
        let vars = child_env(parent, &workflow, &["ACME_PROVIDER_CRED".to_string()], &at);
        assert_eq!(value(&vars, "PATH"), Some("/opt/bin:/usr/bin"));
        assert_eq!(value(&vars, "LANG"), Some("C.UTF-8"));
        assert_eq!(value(&vars, "LC_ALL"), Some("C.UTF-8"));
        assert_eq!(value(&vars, "TZ"), Some("Europe/Paris"));
        assert_eq!(value(&vars, "CITY"), Some("Lyon"));
        assert_eq!(value(&vars, "HOME"), Some("/s/home"));
        assert_eq!(value(&vars, "TMPDIR"), Some("/s/tmp"));
        assert_eq!(value(&vars, "HEALER_SANDBOX"), Some("m1"));
        assert_eq!(value(&vars, "PYTHONDONTWRITEBYTECODE"), Some("1"));
        for gone in ["WEATHER_API_KEY", "ACME_PROVIDER_CRED", "OPENAI_API_KEY"] {
            assert_eq!(value(&vars, gone), None, "{gone}");
        }
        assert_eq!(vars.iter().filter(|(n, _)| n == "HOME").count(), 1);
    }

    #[test]
    fn a_missing_path_gets_a_sane_default() {
        let at = Locations {
            home: Path::new("/h"),
            tmp: Path::new("/t"),
            result: Path::new("/r"),
            marker: "m",
        };
        let vars = child_env(|_| None, &[], &[], &at);
        assert_eq!(value(&vars, "PATH"), Some(DEFAULT_PATH));
        assert_eq!(value(&vars, "TZ"), None);
    }
}
