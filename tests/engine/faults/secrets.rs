//! A provider key never reaches a script, the sandbox, the store, a log, an event, a
//! notification or a model request — whatever hostile code does to find it. The key is a canary:
//! a value that exists only in the engine's environment (as `--key-env` names it) — and, as if
//! it had been pasted there, in a file the workflow reads, so that redaction is proven for the
//! key arriving from elsewhere. The hostile code prints what it finds *reversed*, so that a find is caught even
//! if redaction hid the plain value: containment and redaction are each proven on their own.

use std::path::Path;
use std::process::Command;

use healer::engine::EngineOptions;
use healer::lease::Lease;
use healer::llm::{Keys, ProviderInput, ProviderKind, Tier, TierSetting};
use healer::workflow::Runtime;
use healer::{Engine, Paths};
use serde_json::json;

use super::{files_under, healer, holds, is_root, Daemon, Figures};
use crate::cli::text;
use crate::maintainer::tool;
use crate::model_server::{openai, ModelServer, TOKENS};
use crate::workflows::input;

const CANARY_VAR: &str = "HEALER_CANARY_PROVIDER_CRED";

/// Looks for the canary everywhere sandboxed code could: the engine's environment block, every
/// process's environment, the engine's memory, and its own environment. Prints each find
/// reversed (so redaction cannot hide a leak from the test), or how it was refused.
const HOSTILE: &str = r#"
import os, re
PATTERN = re.compile(rb"sk-canary-[0-9a-f]{32}")
found = {}
def look(label, data):
    hits = sorted(set(m.group(0)[::-1].decode() for m in PATTERN.finditer(data)))
    found[label] = ", ".join(hits) if hits else "nothing"
engine = os.getppid()
try:
    look("engine environ", open(f"/proc/{engine}/environ", "rb").read())
except Exception as e:
    found["engine environ"] = "refused " + type(e).__name__
hits = []
for pid in [p for p in os.listdir("/proc") if p.isdigit()]:
    try:
        data = open(f"/proc/{pid}/environ", "rb").read()
    except Exception:
        continue
    hits += [m.group(0)[::-1].decode() for m in PATTERN.finditer(data)]
found["all environs"] = ", ".join(sorted(set(hits))) or "nothing"
try:
    mem = open(f"/proc/{engine}/mem", "rb", 0)
    seen = b""
    for line in open(f"/proc/{engine}/maps"):
        span, perms = line.split()[:2]
        start, end = (int(x, 16) for x in span.split("-"))
        if "r" not in perms or end - start > (256 << 20):
            continue
        try:
            mem.seek(start)
            seen += b" ".join(PATTERN.findall(mem.read(end - start)))
        except Exception:
            continue
    look("engine memory", seen)
except Exception as e:
    found["engine memory"] = "refused " + type(e).__name__
found["own environment"] = os.environ.get("CANARY_VAR", "absent")[::-1]
for name in sorted(found):
    print(f"hostile {name}: {found[name]}")
"#;

/// Fails on its data, with the note it read (the planted copy of the key) in the error.
const BROKEN: &str = r#"
import json
note = open("notes.txt").read().strip()
data = {"totl": 3}
if "total" not in data:
    raise KeyError(f"total (the note says {note})")
print(json.dumps({"total": data["total"]}))
"#;

/// Fails differently (its own signature, so the first fix is not remembered for it).
const BROKEN_TOO: &str = r#"
note = open("notes.txt").read().strip()
raise ValueError(f"no rows (the note says {note})")
"#;

fn canary() -> String {
    format!("sk-canary-{:032x}", rand::random::<u128>())
}

fn hostile() -> String {
    HOSTILE.replace("CANARY_VAR", CANARY_VAR)
}

/// The fixed script: prints what the hostile code finds, the planted note, and its result.
fn fixed() -> String {
    format!(
        "{}\nnote = open(\"notes.txt\").read().strip()\nprint(\"the note says\", note)\nimport json\nprint(json.dumps({{\"total\": 3}}))\n",
        hostile()
    )
}

/// A data folder with the scripted provider (key read from `CANARY_VAR`) and two workflows
/// whose folders hold the planted note.
async fn prepared(server: &ModelServer, planted: &str) -> (tempfile::TempDir, Paths) {
    let tmp = tempfile::tempdir().expect("temp dir");
    let paths = Paths::new(tmp.path().join("data"));
    paths.ensure().expect("data dir");
    let lease = Lease::acquire(&paths, "test").expect("lease");
    let options = EngineOptions {
        scheduler: false,
        keys: Some(Keys::env_only()),
        ..EngineOptions::default()
    };
    let engine = Engine::start_with_lease(paths.clone(), "test", lease, options)
        .await
        .expect("engine");
    engine
        .save_provider(ProviderInput {
            name: "scripted".to_string(),
            title: None,
            kind: ProviderKind::OpenaiCompatible,
            base_url: Some(format!("{}/v1", server.url)),
            key_env: Some(CANARY_VAR.to_string()),
            prices: vec![],
        })
        .expect("provider");
    for tier in [Tier::Cheap, Tier::Standard, Tier::Deep] {
        engine
            .set_tier(TierSetting {
                tier,
                provider: "scripted".to_string(),
                model: "scripted-small".to_string(),
                budget_tokens: 20_000,
                temperature: None,
                minutes: None,
            })
            .expect("tier");
    }
    for (title, code) in [
        ("Fixed by the model", BROKEN),
        ("Given up by the model", BROKEN_TOO),
    ] {
        let w = engine
            .create_workflow(input(title, Runtime::Python3, code))
            .expect("create");
        let note = paths.workflow_dir(w.id).join("notes.txt");
        std::fs::write(note, format!("use {planted} for the api\n")).expect("note");
    }
    engine.shutdown().await;
    drop(engine);
    (tmp, paths)
}

/// Who runs the engine: this process's user, or (as root) `nobody`, the way a person's
/// desktop runs it — as a user without privileges.
#[derive(Clone, Copy, PartialEq)]
enum As {
    ThisUser,
    Nobody,
}

/// A command line for the `healer` binary as `who`.
fn command(paths: &Paths, who: As, binary: &Path) -> Command {
    let mut cmd = match who {
        As::ThisUser => healer(paths),
        As::Nobody => {
            let mut cmd = Command::new("setpriv");
            cmd.args([
                "--reuid=65534",
                "--regid=65534",
                "--clear-groups",
                "--inh-caps=-all",
                "--",
            ])
            .arg(binary)
            .env("HEALER_DATA_DIR", paths.data_dir())
            .env("HEALER_KEYRING", "off")
            .env_remove("HEALER_LOG")
            .env_remove("HEALER_FAILPOINT")
            .stdin(std::process::Stdio::null());
            cmd
        }
    };
    cmd.env_remove(CANARY_VAR);
    cmd
}

async fn canary_stays_inside(who: As) -> Figures {
    let key = canary();
    let planted = key.clone();
    let server = ModelServer::start(Some(&key));
    let (tmp, paths) = prepared(&server, &planted).await;
    let binary = tmp.path().join("healer");
    if who == As::Nobody {
        std::fs::copy(env!("CARGO_BIN_EXE_healer"), &binary).expect("copy the binary");
        let status = Command::new("chown")
            .args(["-R", "65534:65534"])
            .arg(tmp.path())
            .status()
            .expect("chown");
        assert!(status.success());
    }

    // The model runs the hostile code in eval, then applies it as a fix (so it runs as the
    // workflow's script too), then says the planted key back. For the second workflow it runs
    // it again and gives up with the planted key in its explanation.
    server.script([
        tool("eval", json!({"code": hostile()})),
        tool("fix", json!({"code": fixed(), "comment": "Read totl"})),
        openai::text(&format!("Fixed; the note mentioned {planted}."), TOKENS),
        tool("eval", json!({"code": hostile()})),
        openai::text(&format!("No fix: ask who owns {planted}."), TOKENS),
    ]);

    let mut daemon_cmd = command(&paths, who, &binary);
    daemon_cmd
        .arg("daemon")
        .env(CANARY_VAR, &key)
        .env("HEALER_LOG", "trace")
        .stdout(std::process::Stdio::null());
    let stderr = tmp.path().join("daemon-stderr.log");
    let mut daemon = Daemon::start(daemon_cmd, stderr.clone());

    let mut said = Vec::new();
    for name in ["fixed-by-the-model", "given-up-by-the-model"] {
        let out = command(&paths, who, &binary)
            .args(["workflow", "run", name, "--until-healed"])
            .output()
            .expect("healer runs");
        said.push(text(&out.stdout));
        said.push(text(&out.stderr));
    }
    for args in [
        &["events", "--json", "--limit", "1000"][..],
        &["notifications", "--json"][..],
        &["task", "show", "1", "--json"][..],
        &["task", "show", "2", "--json"][..],
        &["workflow", "show", "fixed-by-the-model"][..],
    ] {
        let out = command(&paths, who, &binary)
            .args(args)
            .output()
            .expect("runs");
        said.push(text(&out.stdout));
        said.push(text(&out.stderr));
    }
    daemon.stop();
    let all_said = said.join("\n");

    // The scenario really ran: both evals and the fixed script reported what they tried.
    let chats = server.chats();
    assert_eq!(
        chats.len(),
        5,
        "every scripted reply was asked for: {all_said}"
    );
    let requests: Vec<String> = chats.iter().map(|c| c.body.to_string()).collect();
    let thread = requests.join("\n");
    for probe in [
        "engine environ",
        "all environs",
        "engine memory",
        "own environment",
    ] {
        assert!(
            thread.contains(&format!("hostile {probe}: ")),
            "the eval ran the {probe} probe: {thread}"
        );
    }
    assert!(
        thread.contains("Landlock") || thread.contains("confined"),
        "{thread}"
    );
    // As nobody, the sandbox enters its namespaces through a user namespace: where the machine
    // allows one, the eval says it saw only its own processes.
    if who == As::Nobody {
        let allowed = Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
            .args(["unshare", "--user", "--map-current-user", "--pid", "--fork"])
            .args(["--mount-proc", "--net", "true"])
            .status()
            .is_ok_and(|s| s.success());
        if allowed {
            assert!(thread.contains("it saw only its own processes"), "{thread}");
        } else {
            println!("skipped: user namespaces for nobody: this machine refuses them");
        }
    }
    let store = healer::store::Store::open(&paths.db()).expect("store");
    let w = store
        .workflow_by_name("fixed-by-the-model")
        .expect("workflow");
    let runs = store.list_runs(w.id, None, 10).expect("runs");
    let last = store.run_detail(runs[0].id).expect("detail");
    let output = &last.attempts[0].stdout;
    assert!(output.contains("hostile engine memory: "), "{output}");
    assert!(
        output.contains("the note says use [redacted] for the api"),
        "{output}"
    );
    assert!(
        all_said.contains("the note mentioned [redacted]"),
        "the model's echo of the key was kept redacted: {all_said}"
    );

    // Nowhere: not in any file Healer wrote (database, WAL, logs), not in what the CLI
    // said, not in what the model server received (the key belongs in the auth header only).
    let mut leaks = Vec::new();
    let reversed: String = key.chars().rev().collect();
    let secrets = [&key, &reversed];
    let mut files = files_under(paths.data_dir());
    files.push(stderr.clone());
    assert!(files.iter().any(|f| f.ends_with("healer.db")));
    assert!(
        files.iter().any(|f| f.to_string_lossy().contains("/logs/")),
        "the daemon wrote its log"
    );
    assert!(
        holds(&std::fs::read(&stderr).expect("stderr"), "TRACE"),
        "the daemon logged at trace level, so its silence means something"
    );
    // The notes are where the test itself put the key.
    files.retain(|f| !f.ends_with("notes.txt"));
    for file in &files {
        let bytes = std::fs::read(file).unwrap_or_default();
        for secret in secrets {
            if holds(&bytes, secret) {
                leaks.push(format!("{} holds {secret}", file.display()));
            }
        }
    }
    for secret in secrets {
        if all_said.contains(secret.as_str()) {
            leaks.push(format!("the CLI said {secret}"));
        }
    }
    for seen in server.seen() {
        let mut sent = seen.body.to_string();
        for (name, value) in &seen.headers {
            if name != "authorization" {
                sent.push_str(value);
            }
        }
        for secret in secrets {
            if sent.contains(secret.as_str()) {
                leaks.push(format!("{} {} carried {secret}", seen.method, seen.path));
            }
        }
        if seen.method == "POST" {
            assert_eq!(
                seen.header("authorization"),
                Some(format!("Bearer {key}").as_str()),
                "the key was used where it belongs"
            );
        }
    }
    assert!(leaks.is_empty(), "the key leaked: {leaks:#?}");
    // Four probes in each of two evals and the fixed script, the key printed by the script and
    // in its error, and echoed by the model twice.
    Figures {
        faults: 4 * 3 + 2 + 2,
        secrets_leaked: leaks.len() as u32,
        ..Figures::default()
    }
}

#[tokio::test]
async fn a_provider_key_never_reaches_a_script_the_sandbox_the_store_or_a_request() {
    canary_stays_inside(As::ThisUser)
        .await
        .print("secrets (as this user)");
}

#[tokio::test]
async fn a_provider_key_stays_hidden_when_healer_runs_as_an_ordinary_user() {
    if !is_root() {
        println!("skipped: this already runs as an ordinary user (the test above covers it)");
        return;
    }
    if Command::new("setpriv").arg("--version").output().is_err() {
        println!("skipped: setpriv (util-linux) is not installed, so the engine cannot be started as nobody");
        return;
    }
    canary_stays_inside(As::Nobody)
        .await
        .print("secrets (as nobody)");
}

/// An external agent given a provider of Healer's prints its key (a command that echoes its
/// environment): Claude Code writes the output into its transcript, Codex into its rollout,
/// both in the agent's home in Healer's data folder, where any later agent command of any
/// project could read them. When the session has ended no file of the data folder — agent
/// homes, the session's temp folder, the database, the logs — holds the key.
#[tokio::test]
async fn an_agents_own_files_keep_no_provider_key_after_its_session() {
    use crate::model_server::{anthropic, responses};
    use crate::project_agent_fixtures::agent_bed;
    use healer::session::{AgentKind, SessionStatus};

    let mut leaks = Vec::new();
    for kind in [AgentKind::ClaudeCode, AgentKind::Codex] {
        // Printing the key's variable asks under the default; this test is about the key, so the
        // person here accepts the risk.
        let bed = agent_bed(kind, |s| {
            s.approvals.preset = healer::approval::Preset::NeverAsk;
        })
        .await;
        bed.task("Show the key");
        match kind {
            AgentKind::ClaudeCode => bed.server.script([
                anthropic::tool_calls(
                    "",
                    &[(
                        "toolu_1",
                        "Bash",
                        &json!({"command": "echo key=$ANTHROPIC_API_KEY; env | grep -c API_KEY"})
                            .to_string(),
                    )],
                    TOKENS,
                ),
                anthropic::text("Looked.", TOKENS),
            ]),
            _ => bed.server.script([
                responses::reply(
                    &[responses::exec("c1", "echo key=$HEALER_CODEX_API_KEY")],
                    TOKENS,
                ),
                responses::reply(&[responses::text("Looked.")], TOKENS),
            ]),
        }
        let session = bed
            .engine
            .run_project_and_wait(bed.project.id, None)
            .await
            .expect("run");
        // The check fails (greet() was not fixed); the session itself ran to its end.
        assert_ne!(
            session.status,
            SessionStatus::Running,
            "{}",
            session.summary
        );
        let home = bed.agent_home();
        assert!(
            files_under(&home)
                .iter()
                .any(|f| f.extension().is_some_and(|e| e == "jsonl")),
            "{kind:?} wrote its record in its home"
        );
        for file in files_under(bed.paths.data_dir()) {
            let bytes = std::fs::read(&file).unwrap_or_default();
            if holds(&bytes, crate::maintainer::KEY) {
                leaks.push(format!("{kind:?}: {}", file.display()));
            }
        }
    }
    Figures {
        faults: 2,
        secrets_leaked: leaks.len() as u32,
        ..Figures::default()
    }
    .print("agent homes");
    assert!(leaks.is_empty(), "the key is in: {leaks:?}");
}
