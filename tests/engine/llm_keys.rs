//! A provider key stays out of every file Healer writes, every event and every message, even
//! when the provider echoes a refused key back.

use std::path::Path;
use std::sync::Mutex;

use healer::llm::{ProviderKind, Tier, ToolSet};

use crate::cli::text;
use crate::llm_fixtures::{file_tools, fix_request, setup};
use crate::model_server::{openai, TOKENS};

const KEY: &str = "sk-never-stored-4f1e2d9c";
const WRONG: &str = "sk-wrong-never-stored-77aa31";
const VAR: &str = "HEALER_TEST_KEY_NEVER_STORED";

fn files_under(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).expect("read dir").flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(files_under(&path));
        } else {
            out.push(path);
        }
    }
    out
}

fn holds(bytes: &[u8], secret: &str) -> bool {
    bytes.windows(secret.len()).any(|w| w == secret.as_bytes())
}

#[test]
fn a_key_is_never_written_to_the_database_the_logs_or_an_event() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let log_path = std::env::temp_dir().join(format!("healer-key-test-{}.log", std::process::id()));
    let log = std::fs::File::create(&log_path).expect("log file");
    // A global subscriber (no other test in this binary sets one) that writes only while this
    // test records: a thread-local default misses lines logged on other threads and can lose
    // callsites whose interest other tests' threads cached first.
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::Layer;
    static RECORDING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    let layer = tracing_subscriber::fmt::layer()
        .with_ansi(false)
        .with_writer(Mutex::new(log))
        .with_filter(tracing_subscriber::filter::filter_fn(|_| {
            RECORDING.load(std::sync::atomic::Ordering::Relaxed)
        }));
    tracing::subscriber::set_global_default(tracing_subscriber::registry().with(layer))
        .expect("no other test sets a global subscriber");
    RECORDING.store(true, std::sync::atomic::Ordering::Relaxed);
    tracing::callsite::rebuild_interest_cache();

    let (setup, mut said) = runtime.block_on(async {
        let s = setup(ProviderKind::OpenaiCompatible, VAR, KEY).await;
        let mut said: Vec<String> = Vec::new();
        s.server.script([
            openai::tool_calls(&[("c1", "read_file", r#"{"path": "report.py"}"#)], TOKENS),
            openai::text("Looked at it.", TOKENS),
        ]);
        let outcome = s
            .engine
            .run_agent(fix_request(&s.engine, file_tools(&s.work), Tier::Standard))
            .await
            .expect("the loop runs with the key");
        said.push(format!("{outcome:?}"));
        let test = s.engine.test_provider("scripted").await.expect("test");
        assert!(test.ok, "{test:?}");
        said.push(serde_json::to_string(&test).expect("json"));
        said.push(
            serde_json::to_string(&s.engine.providers().await.expect("views")).expect("json"),
        );

        // A wrong key, which the provider echoes back in its error.
        std::env::set_var(VAR, WRONG);
        let error = s
            .engine
            .run_agent(fix_request(&s.engine, ToolSet::empty(), Tier::Standard))
            .await
            .expect_err("refused");
        said.push(error.to_string());
        said.push(format!("{error:?}"));
        let test = s.engine.test_provider("scripted").await.expect("test");
        assert!(!test.ok);
        said.push(serde_json::to_string(&test).expect("json"));
        said.push(
            serde_json::to_string(&s.engine.events(None, 1000).expect("events")).expect("json"),
        );
        said.push(s.engine.export_atif(outcome.task_id).expect("atif"));
        s.engine.shutdown().await;
        (s, said)
    });
    RECORDING.store(false, std::sync::atomic::Ordering::Relaxed);

    // The CLI, at its most verbose, says nothing of it either.
    std::env::set_var(VAR, KEY);
    for args in [
        &["provider", "test", "scripted"][..],
        &["provider", "list", "--json"][..],
        &["thread", "show", "1", "--json"][..],
    ] {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_healer"));
        let out = cmd
            .env("HEALER_DATA_DIR", setup.paths.data_dir())
            .env("HEALER_LOG", "trace")
            .env("HEALER_KEYRING", "off")
            .args(args)
            .output()
            .expect("healer runs");
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            text(&out.stderr)
        );
        said.push(text(&out.stdout));
        said.push(text(&out.stderr));
    }

    let log = std::fs::read(&log_path).expect("log");
    assert!(
        holds(&log, "model call"),
        "the run was logged at trace level, so the check below means something"
    );
    let mut files = files_under(setup.paths.data_dir());
    files.push(log_path.clone());
    assert!(files.iter().any(|f| f.ends_with("healer.db")));
    for file in &files {
        let bytes = std::fs::read(file).expect("readable");
        for secret in [KEY, WRONG] {
            assert!(!holds(&bytes, secret), "{} holds a key", file.display());
        }
    }
    for line in &said {
        assert!(
            !line.contains(KEY) && !line.contains(WRONG),
            "a key leaked: {line}"
        );
    }
    assert!(
        said.iter().any(|l| l.contains("[redacted]")),
        "the echoed key was scrubbed, not dropped silently"
    );
    let _ = std::fs::remove_file(&log_path);
}
