//! `healer provider …`, `healer tier …`, `healer usage` and `healer task export-atif` as a
//! person runs them, against a scripted model server.

use std::process::{Command, Output, Stdio};

use healer::llm::{ProviderKind, Tier, ToolSet};
use healer::Paths;
use serde_json::Value;

use crate::cli::text;
use crate::data_dir;
use crate::llm_fixtures::{fix_request, setup};
use crate::model_server::{openai, ModelServer, TOKENS};

fn healer(paths: &Paths, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_healer"));
    cmd.env("HEALER_DATA_DIR", paths.data_dir())
        .env("HEALER_KEYRING", "off")
        .env_remove("HEALER_LOG")
        .stdin(Stdio::null())
        .args(args);
    for (name, value) in env {
        cmd.env(name, value);
    }
    cmd.output().expect("healer runs")
}

fn json(out: &Output) -> Value {
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", text(&out.stdout)))
}

#[test]
fn a_person_adds_a_provider_tests_it_maps_tiers_and_reads_usage() {
    let (_tmp, paths) = data_dir();
    let server = ModelServer::start(Some("sk-cli-key"));
    let base = format!("{}/v1", server.url);
    let key = [("MY_ROUTER_KEY", "sk-cli-key")];

    let added = json(&healer(
        &paths,
        &[
            "provider",
            "add",
            "router",
            "--kind",
            "openai-compatible",
            "--base-url",
            &base,
            "--key-env",
            "MY_ROUTER_KEY",
            "--price",
            "scripted-small=0.15,0.6",
            "--json",
        ],
        &key,
    ));
    assert_eq!(added["provider"]["kind"], "openai_compatible");
    assert_eq!(added["key"]["source"], "env");
    assert_eq!(added["key"]["var"], "MY_ROUTER_KEY");
    assert_eq!(added["provider"]["prices"][0]["output_per_mtok"], 0.6);

    // Without the variable set, the list says where the key would come from.
    let listed = healer(&paths, &["provider", "list"], &[]);
    assert!(
        text(&listed.stdout)
            .contains("no key yet: set one (it is kept in the OS keyring) or export MY_ROUTER_KEY"),
        "{}",
        text(&listed.stdout)
    );

    let tested = healer(&paths, &["provider", "test", "router"], &key);
    assert_eq!(tested.status.code(), Some(0), "{}", text(&tested.stderr));
    let said = text(&tested.stdout);
    assert!(
        said.contains("connected (key from $MY_ROUTER_KEY), 2 model(s)"),
        "{said}"
    );
    assert!(said.contains("scripted-small"), "{said}");

    // A wrong key: exit 1 and the exact error, never the key.
    let refused = healer(
        &paths,
        &["provider", "test", "router", "--json"],
        &[("MY_ROUTER_KEY", "sk-typo")],
    );
    assert_eq!(refused.status.code(), Some(1));
    let refused: Value = serde_json::from_slice(&refused.stdout).expect("json");
    assert_eq!(refused["error"]["code"], "model_auth");
    assert!(!refused.to_string().contains("sk-typo"));

    let set = healer(
        &paths,
        &["tier", "set", "cheap", "router", "scripted-small"],
        &[],
    );
    assert_eq!(set.status.code(), Some(0), "{}", text(&set.stderr));
    assert!(text(&set.stdout)
        .contains("cheap tier → router / scripted-small (5000 tokens written per attempt)"));
    let tiers = json(&healer(&paths, &["tier", "list", "--json"], &[]));
    assert_eq!(tiers[0]["setting"]["model"], "scripted-small");
    assert_eq!(
        tiers[2]["resolves_to"]["used"], "cheap",
        "deep falls back to cheap"
    );
    let unknown = healer(&paths, &["tier", "set", "cheap", "nobody", "m"], &[]);
    assert_eq!(unknown.status.code(), Some(1));
    assert!(text(&unknown.stderr).contains("provider \"nobody\" not found"));

    let usage = json(&healer(&paths, &["usage", "--json"], &[]));
    assert_eq!(usage["total"]["calls"], 0);
    assert_eq!(usage["budgets"]["per_day_tokens"], 1_000_000);

    let bad_kind = healer(&paths, &["provider", "add", "x", "--kind", "cohere"], &[]);
    assert_eq!(bad_kind.status.code(), Some(1));
    assert!(text(&bad_kind.stderr).contains("use openai-compatible, anthropic, ollama or gemini"));

    let removed = healer(&paths, &["provider", "remove", "router"], &[]);
    assert_eq!(removed.status.code(), Some(0), "{}", text(&removed.stderr));
    assert_eq!(
        json(&healer(&paths, &["provider", "list", "--json"], &[])),
        serde_json::json!([])
    );
    let tiers = json(&healer(&paths, &["tier", "list", "--json"], &[]));
    assert_eq!(tiers[0]["setting"], Value::Null, "its tiers went with it");
}

#[tokio::test]
async fn a_finished_loop_is_exported_as_an_atif_file_and_counted_in_usage() {
    let s = setup(
        ProviderKind::OpenaiCompatible,
        "HEALER_TEST_KEY_CLI_ATIF",
        "sk-atif",
    )
    .await;
    s.server.script([openai::text("Nothing to fix.", TOKENS)]);
    let outcome = s
        .engine
        .run_agent(fix_request(&s.engine, ToolSet::empty(), Tier::Standard))
        .await
        .expect("answered");
    s.engine.shutdown().await;

    let file = s.tmp.path().join("trajectory.json");
    let id = outcome.task_id.to_string();
    let out = healer(
        &s.paths,
        &[
            "thread",
            "export-atif",
            &id,
            "--out",
            file.to_str().unwrap_or_default(),
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let atif: Value =
        serde_json::from_slice(&std::fs::read(&file).expect("written")).expect("json");
    assert_eq!(atif["schema_version"], "ATIF-v1.7");
    assert_eq!(atif["session_id"], format!("healer-task-{id}"));
    assert_eq!(atif["steps"][2]["message"], "Nothing to fix.");
    let reported = s.server.reported();
    assert_eq!(
        atif["final_metrics"]["total_completion_tokens"],
        reported.completion
    );

    let usage = healer(&s.paths, &["usage"], &[]);
    let said = text(&usage.stdout);
    assert!(
        said.contains(&format!("1 call(s), {} tokens", reported.total())),
        "{said}"
    );
    assert!(said.contains("standard"), "{said}");
    // The old name still works, and says what it is called now.
    let missing = healer(&s.paths, &["task", "export-atif", "999"], &[]);
    assert_eq!(missing.status.code(), Some(1));
    let said = text(&missing.stderr);
    assert!(
        said.contains("`healer task` is now `healer thread`"),
        "{said}"
    );
    assert!(said.contains("task 999 not found"), "{said}");
}

#[test]
fn the_steering_model_follows_its_rule_and_can_be_named_from_the_command_line() {
    let (_tmp, paths) = data_dir();
    // Nothing set up: only the free loop check, said in words.
    let none = json(&healer(&paths, &["tier", "steering", "--json"], &[]));
    assert!(none["resolves_to"].is_null(), "{none}");
    assert!(none["summary"]
        .as_str()
        .is_some_and(|s| s.contains("only the free loop check")));
    assert!(none["rule"]
        .as_str()
        .is_some_and(|s| s.contains("cheapest model you have set up")));

    // Two priced models, neither named: the cheaper steers, even one no tier maps.
    let added = healer(
        &paths,
        &[
            "provider",
            "add",
            "router",
            "--kind",
            "openai-compatible",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--key-env",
            "ROUTER_KEY",
            "--price",
            "big=3,15",
            "--price",
            "small=0.15,0.6",
        ],
        &[],
    );
    assert_eq!(added.status.code(), Some(0), "{}", text(&added.stderr));
    let set = healer(&paths, &["tier", "set", "deep", "router", "big"], &[]);
    assert_eq!(set.status.code(), Some(0), "{}", text(&set.stderr));
    let cheapest = json(&healer(&paths, &["tier", "steering", "--json"], &[]));
    assert_eq!(cheapest["resolves_to"]["model"], "small");
    assert_eq!(cheapest["resolves_to"]["source"], "cheapest");

    // Named: that one, until cleared.
    let named = json(&healer(
        &paths,
        &["tier", "steering", "router", "big", "--json"],
        &[],
    ));
    assert_eq!(named["setting"]["model"], "big");
    assert_eq!(named["resolves_to"]["source"], "named");
    let unknown = healer(&paths, &["tier", "steering", "nowhere", "m"], &[]);
    assert_eq!(unknown.status.code(), Some(1));
    let cleared = json(&healer(
        &paths,
        &["tier", "steering", "--clear", "--json"],
        &[],
    ));
    assert_eq!(cleared["resolves_to"]["model"], "small");
}

#[test]
fn a_provider_keeps_the_persons_words_for_its_name_and_its_key_for_tiers() {
    let (_tmp, paths) = data_dir();
    let added = json(&healer(
        &paths,
        &[
            "provider",
            "add",
            "my-models",
            "--title",
            "My models",
            "--kind",
            "ollama",
            "--json",
        ],
        &[],
    ));
    assert_eq!(added["provider"]["name"], "my-models");
    assert_eq!(added["provider"]["title"], "My models");
    // Changed again without a title: the person's words stay.
    let again = json(&healer(
        &paths,
        &["provider", "add", "my-models", "--kind", "ollama", "--json"],
        &[],
    ));
    assert_eq!(again["provider"]["title"], "My models");
    // One saved without words is shown by its key.
    let plain = json(&healer(
        &paths,
        &["provider", "add", "local", "--kind", "ollama", "--json"],
        &[],
    ));
    assert_eq!(plain["provider"]["title"], "local");
}
