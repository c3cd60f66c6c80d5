//! The settings Healer gives opencode, as the JSON of `OPENCODE_CONFIG_CONTENT` (nothing is
//! written into the worktree): the provider configured in Healer (its key only named, as
//! `{env:VAR}`), and what opencode may do without asking.
//!
//! opencode runs as its server, driven by Healer: a tool whose permission is `ask` waits for
//! Healer's reply to its question, which is the project's approvals' (and the person's, when
//! they say to ask). So *Never ask* allows everything, and the asking presets let opencode do
//! on its own only what cannot matter — reading and searching inside the worktree, its own
//! notes; every command, edit and web request is asked (Healer allows the project's checks,
//! the commands it lists and edits in the worktree at once, as for every agent), and what is
//! outside the worktree, git's and Healer's own files, and anything opencode adds later are
//! refused. opencode reads the rules in order and the last one that matches wins, so the
//! JSON is written in order by hand.

use serde_json::Value;

use crate::approval::{ApprovalSettings, Preset};

/// One permission of opencode's: an action, or patterns each with its action (in order).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rule {
    Is(&'static str),
    Patterns(Vec<(String, &'static str)>),
}

/// opencode's permissions for a project's approvals, in order (see the module's note).
pub fn permission(approvals: &ApprovalSettings) -> Vec<(String, Rule)> {
    let rule = |name: &str, rule: Rule| (name.to_string(), rule);
    if approvals.preset == Preset::NeverAsk {
        return vec![rule("*", Rule::Is("allow"))];
    }
    // Every command is Healer's to judge (the project's own and listed ones are allowed at
    // once there): opencode's patterns see a command's whole text, so a listed first word
    // here would let `git -c core.fsmonitor=… status` through unjudged.
    let bash = vec![("*".to_string(), "ask")];
    vec![
        // Anything opencode adds later is refused until Healer knows it.
        rule("*", Rule::Is("deny")),
        rule("read", Rule::Is("allow")),
        rule("list", Rule::Is("allow")),
        rule("glob", Rule::Is("allow")),
        rule("grep", Rule::Is("allow")),
        // Edits inside the worktree are asked (the approvals allow them, or ask the person),
        // never git's or Healer's own files there: a `.git` written by the agent would run
        // its code in the next git command.
        rule(
            "edit",
            Rule::Patterns(
                [
                    ("*", "ask"),
                    (".git", "deny"),
                    (".git/*", "deny"),
                    (".healer", "deny"),
                    (".healer/*", "deny"),
                ]
                .map(|(p, a)| (p.to_string(), a))
                .to_vec(),
            ),
        ),
        rule("todowrite", Rule::Is("allow")),
        rule("todoread", Rule::Is("allow")),
        rule("task", Rule::Is("allow")),
        rule("bash", Rule::Patterns(bash)),
        rule("external_directory", Rule::Is("deny")),
        rule("webfetch", Rule::Is("ask")),
        rule("websearch", Rule::Is("ask")),
        rule("codesearch", Rule::Is("ask")),
    ]
}

/// The permissions as opencode's JSON, in their order.
pub fn permission_json(rules: &[(String, Rule)]) -> String {
    let key = |k: &str| Value::String(k.to_string()).to_string();
    let entries: Vec<String> = rules
        .iter()
        .map(|(name, rule)| {
            let value = match rule {
                Rule::Is(action) => key(action),
                Rule::Patterns(patterns) => format!(
                    "{{{}}}",
                    patterns
                        .iter()
                        .map(|(p, a)| format!("{}:{}", key(p), key(a)))
                        .collect::<Vec<_>>()
                        .join(",")
                ),
            };
            format!("{}:{value}", key(name))
        })
        .collect();
    format!("{{{}}}", entries.join(","))
}

/// The provider entry for a provider configured in Healer (OpenAI's Chat Completions at
/// `base_url`, which includes `/v1`).
pub struct Provider<'a> {
    pub name: &'a str,
    pub base_url: &'a str,
    /// The variable holding the key (or the gateway's pass), when there is one.
    pub key_var: Option<&'a str>,
    pub model: &'a str,
}

/// The whole of `OPENCODE_CONFIG_CONTENT`. `permission`: the JSON of the permissions.
pub fn render(provider: Option<&Provider<'_>>, permission: &str) -> String {
    let mut parts = vec![
        r#""$schema":"https://opencode.ai/config.json""#.to_string(),
        // Nothing shared, no update, no snapshots of the worktree into opencode's folder.
        r#""share":"disabled""#.to_string(),
        r#""autoupdate":false"#.to_string(),
        r#""snapshot":false"#.to_string(),
    ];
    if let Some(p) = provider {
        let mut options = serde_json::json!({ "baseURL": p.base_url });
        if let Some(var) = p.key_var {
            options["apiKey"] = Value::String(format!("{{env:{var}}}"));
        }
        let mut models = serde_json::Map::new();
        models.insert(p.model.to_string(), serde_json::json!({ "name": p.model }));
        let entry = serde_json::json!({
            "npm": "@ai-sdk/openai-compatible",
            "name": p.name,
            "options": options,
            "models": models,
        });
        parts.push(format!(
            r#""provider":{{{}:{entry}}}"#,
            Value::String(PROVIDER_ID.to_string())
        ));
        parts.push(format!(
            r#""model":{}"#,
            Value::String(format!("{PROVIDER_ID}/{}", p.model))
        ));
        parts.push(format!(
            r#""small_model":{}"#,
            Value::String(format!("{PROVIDER_ID}/{}", p.model))
        ));
        // Only Healer's provider: none other opencode knows (and would look for keys of).
        parts.push(format!(
            r#""enabled_providers":[{}]"#,
            Value::String(PROVIDER_ID.to_string())
        ));
    }
    parts.push(format!(r#""permission":{permission}"#));
    format!("{{{}}}", parts.join(","))
}

/// The id of the provider Healer gives opencode (`-m healer/<model>`).
pub const PROVIDER_ID: &str = "healer";

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(preset: Preset, allowed: &[&str]) -> ApprovalSettings {
        ApprovalSettings {
            preset,
            allowed: allowed.iter().map(|s| s.to_string()).collect(),
            ..ApprovalSettings::default()
        }
    }

    #[test]
    fn the_projects_approvals_become_opencodes_permissions_in_order() {
        let never = permission(&settings(Preset::NeverAsk, &["make"]));
        assert_eq!(permission_json(&never), r#"{"*":"allow"}"#);

        let risky = permission(&settings(Preset::AskRisky, &["python3", "make lint"]));
        let json = permission_json(&risky);
        assert!(json.starts_with(r#"{"*":"deny","read":"allow""#), "{json}");
        // Listed commands are judged by Healer, never allowed by opencode's patterns.
        assert!(json.contains(r#""bash":{"*":"ask"}"#), "{json}");
        assert!(
            json.contains(
                r#""edit":{"*":"ask",".git":"deny",".git/*":"deny",".healer":"deny",".healer/*":"deny"}"#
            ),
            "{json}"
        );
        assert!(json.contains(r#""webfetch":"ask""#), "{json}");
        assert!(json.contains(r#""external_directory":"deny""#), "{json}");
        let parsed: Value = serde_json::from_str(&json).expect("JSON");
        assert_eq!(parsed["bash"]["*"], "ask");
        let every = permission_json(&permission(&settings(Preset::AskEvery, &["python3"])));
        assert_eq!(every, json, "the preset is Healer's to apply");
    }

    #[test]
    fn the_config_names_the_key_variable_never_the_key() {
        let config = render(
            Some(&Provider {
                name: "scripted \"one\"",
                base_url: "http://127.0.0.1:9/v1",
                key_var: Some("HEALER_OPENCODE_API_KEY"),
                model: "m-1",
            }),
            r#"{"*":"allow"}"#,
        );
        let parsed: Value = serde_json::from_str(&config).expect("JSON");
        let provider = &parsed["provider"]["healer"];
        assert_eq!(
            provider["options"]["apiKey"],
            "{env:HEALER_OPENCODE_API_KEY}"
        );
        assert_eq!(provider["options"]["baseURL"], "http://127.0.0.1:9/v1");
        assert_eq!(provider["name"], "scripted \"one\"");
        assert_eq!(provider["models"]["m-1"]["name"], "m-1");
        assert_eq!(parsed["model"], "healer/m-1");
        assert_eq!(parsed["permission"]["*"], "allow");
        let without = render(None, r#"{"*":"deny"}"#);
        let parsed: Value = serde_json::from_str(&without).expect("JSON");
        assert!(parsed.get("provider").is_none());
    }
}
