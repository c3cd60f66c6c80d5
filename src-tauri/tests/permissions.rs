//! Every command the shell registers is one the window may call: listed in build.rs (so Tauri
//! generates its `allow-<command>` permission) and granted in capabilities/default.json. A
//! command missing from either is refused at run time ("not allowed. Command not found") while
//! every test with the fake engine passes — this holds the three lists together.

fn between<'a>(text: &'a str, start: &str, end: &str) -> &'a str {
    let from = text.find(start).map(|i| i + start.len()).unwrap_or(0);
    let rest = text.get(from..).unwrap_or_default();
    rest.get(..rest.find(end).unwrap_or(rest.len()))
        .unwrap_or_default()
}

#[test]
fn every_registered_command_is_allowed_to_the_window() {
    let root = env!("CARGO_MANIFEST_DIR");
    let read = |file: &str| {
        std::fs::read_to_string(format!("{root}/{file}")).expect("a file of the shell")
    };
    let lib = read("src/lib.rs");
    let registered: Vec<String> = between(&lib, "collect_commands![", "])")
        .split(',')
        .filter_map(|entry| entry.trim().rsplit("::").next())
        .filter(|name| !name.is_empty())
        .map(str::to_string)
        .collect();
    assert!(registered.len() > 50, "{registered:?}");
    let build = read("build.rs");
    let listed = between(&build, ".commands(&[", "])");
    let capabilities: serde_json::Value =
        serde_json::from_str(&read("capabilities/default.json")).expect("JSON");
    let granted: Vec<&str> = capabilities["permissions"]
        .as_array()
        .expect("permissions")
        .iter()
        .filter_map(|p| p.as_str())
        .collect();
    for name in &registered {
        assert!(
            listed.contains(&format!("\"{name}\"")),
            "{name} is registered but not listed in build.rs"
        );
        let permission = format!("allow-{}", name.replace('_', "-"));
        assert!(
            granted.contains(&permission.as_str()),
            "{name} is registered but {permission} is not in capabilities/default.json"
        );
    }
}
