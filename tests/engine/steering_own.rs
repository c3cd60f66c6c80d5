//! The sessions a person runs themselves (opt-in): the real Claude Code CLI, run offline with
//! a temporary HOME, goes in circles; the transcript it writes there is what Healer watches.
//! Off (the default), Healer does not look; on, the Sessions list shows the session with its
//! verdict, the person is told once, and the transcript is never written to.

use std::time::Duration;

use healer::engine::EngineOptions;
use healer::lease::Lease;
use healer::llm::Keys;
use healer::looping::LoopRule;
use healer::steering::SessionOrigin;
use healer::store::SteeringSettings;
use healer::Engine;

use crate::agent_fixtures::workspace;
use crate::project_fixtures::eventually;
use crate::steering_check::{bash, transcript_of};

#[tokio::test]
async fn a_persons_own_looping_claude_code_session_is_listed_and_told_once_never_written() {
    let ws = workspace();
    let root = ws.home.join(".claude").join("projects");
    let paths = healer::Paths::new(ws.dir.path().join("data"));
    paths.ensure().expect("data dir");
    let lease = Lease::acquire(&paths, "test").expect("lease");
    let options = EngineOptions {
        keys: Some(Keys::env_only()),
        claude_projects: Some(root.clone()),
        ..EngineOptions::default()
    };
    let engine = Engine::start_with_lease(paths.clone(), "test", lease, options)
        .await
        .expect("engine");
    assert!(
        !SteeringSettings::default().watch_own_sessions,
        "off unless the person turns it on"
    );

    // Off: a session of the person's is not looked at.
    let first = transcript_of(
        &ws,
        (0..4)
            .map(|_| bash("Let me run the check.", "cat config.ini"))
            .collect(),
    )
    .await;
    assert!(first.starts_with(&root), "{}", first.display());
    let live = engine.live_sessions(chrono::Utc::now()).expect("live");
    assert!(
        live.iter().all(|s| s.origin != SessionOrigin::Person),
        "{live:?}"
    );

    let settings = SteeringSettings {
        watch_own_sessions: true,
        ..SteeringSettings::default()
    };
    engine.set_steering_settings(settings).expect("on");
    // The watcher is on within its look at the setting.
    tokio::time::sleep(Duration::from_secs(3)).await;

    // On: a new session that loops is seen as it is written.
    let looping = transcript_of(
        &ws,
        (0..4)
            .map(|_| bash("Let me run the check.", "cat config.ini"))
            .collect(),
    )
    .await;
    let before = std::fs::read(&looping).expect("transcript");
    let note = eventually("the person is told", Duration::from_secs(30), || {
        engine
            .notifications()
            .ok()?
            .items
            .into_iter()
            .find(|n| n.title.contains("Claude Code sessions is going in circles"))
    })
    .await;
    assert!(
        note.body.contains(&ws.repo.display().to_string()),
        "{}",
        note.body
    );
    assert!(note.body.contains("cat config.ini"), "{}", note.body);

    let live = engine.live_sessions(chrono::Utc::now()).expect("live");
    let mine: Vec<_> = live
        .iter()
        .filter(|s| s.origin == SessionOrigin::Person)
        .collect();
    assert_eq!(
        mine.len(),
        2,
        "both sessions wrote within the last 30 minutes: {mine:?}"
    );
    assert!(mine.iter().all(|s| matches!(
        s.loop_rule,
        Some(LoopRule::Repeat | LoopRule::RepeatedError)
    )));
    assert!(mine
        .iter()
        .all(|s| s.last_activity_at.is_some() && s.session_id.is_none()));
    // Not live any more 31 minutes later.
    let later = engine
        .live_sessions(chrono::Utc::now() + chrono::Duration::minutes(31))
        .expect("live");
    assert!(later.iter().all(|s| s.origin != SessionOrigin::Person));

    // Told once per session: the same session changing again brings no new notification.
    let count = || {
        engine
            .notifications()
            .expect("notifications")
            .items
            .iter()
            .filter(|n| n.title.contains("going in circles"))
            .count()
    };
    tokio::time::sleep(Duration::from_secs(2)).await;
    let told = count();
    assert!((1..=2).contains(&told), "{told}");
    assert_eq!(
        std::fs::read(&looping).expect("transcript"),
        before,
        "never written"
    );
    std::fs::write(&looping, &before).expect("the same bytes again");
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(count(), told);

    // The history on the Sessions page lists them too, with their loop notes.
    let history = engine.own_session_history().expect("history");
    assert_eq!(history.len(), 2, "{history:?}");
    assert!(history.iter().all(|s| s
        .loop_message
        .as_deref()
        .is_some_and(|m| m.contains("cat config.ini"))));
    // Watching turned off: nothing of the person's is read, now or from before.
    engine
        .set_steering_settings(SteeringSettings::default())
        .expect("off");
    assert!(engine.own_session_history().expect("history").is_empty());
}

/// The person runs the real opencode themselves (their own data folder, a provider of their
/// own on the scripted server) and it goes in circles: watched, it is listed with its verdict
/// and told once; its database is never written by Healer.
#[tokio::test]
async fn a_persons_own_looping_opencode_session_is_listed_and_told_once_never_written() {
    use crate::model_server::{openai, ModelServer, TOKENS};
    let ws = workspace();
    let share = ws.dir.path().join("share");
    let db = share.join("opencode").join("opencode.db");
    let paths = healer::Paths::new(ws.dir.path().join("data"));
    paths.ensure().expect("data dir");
    let lease = Lease::acquire(&paths, "test").expect("lease");
    let options = EngineOptions {
        keys: Some(Keys::env_only()),
        claude_projects: Some(ws.home.join(".claude").join("projects")),
        opencode_db: Some(db.clone()),
        ..EngineOptions::default()
    };
    let engine = Engine::start_with_lease(paths.clone(), "test", lease, options)
        .await
        .expect("engine");
    engine
        .set_steering_settings(SteeringSettings {
            watch_own_sessions: true,
            ..SteeringSettings::default()
        })
        .expect("on");
    tokio::time::sleep(Duration::from_secs(3)).await;

    let server = ModelServer::start(Some("person-key"));
    let call = serde_json::json!({"command": "cat config.ini", "description": "Read the config"})
        .to_string();
    let mut replies: Vec<_> = (0..4)
        .map(|n| openai::tool_calls(&[(&format!("call_{n}"), "bash", &call)], TOKENS))
        .collect();
    replies.push(openai::text("I could not read it.", TOKENS));
    server.script(replies);
    let config = serde_json::json!({
        "provider": {"mine": {
            "npm": "@ai-sdk/openai-compatible",
            "name": "Mine",
            "options": {"baseURL": format!("{}/v1", server.url), "apiKey": "{env:PERSON_KEY}"},
            "models": {"scripted-model": {"name": "scripted-model"}}
        }},
        "permission": {"bash": "allow", "edit": "allow"}
    });
    let mut run = tokio::process::Command::new(crate::agent_fixtures::opencode());
    run.args(["run", "--format", "json", "-m", "mine/scripted-model"])
        .current_dir(&ws.repo)
        // opencode takes its folder from PWD, as a shell sets it.
        .env("PWD", &ws.repo)
        .env("HOME", &ws.home)
        .env("XDG_DATA_HOME", &share)
        .env("XDG_CONFIG_HOME", ws.dir.path().join("config"))
        .env("XDG_CACHE_HOME", ws.dir.path().join("cache"))
        .env("XDG_STATE_HOME", ws.dir.path().join("state"))
        .env("OPENCODE_CONFIG_CONTENT", config.to_string())
        .env("PERSON_KEY", "person-key")
        .env("OPENCODE_DISABLE_AUTOUPDATE", "1")
        .env("OPENCODE_DISABLE_MODELS_FETCH", "1")
        .env("OPENCODE_DISABLE_PROJECT_CONFIG", "1")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true);
    let mut child = run.spawn().expect("opencode starts");
    {
        use tokio::io::AsyncWriteExt;
        let mut stdin = child.stdin.take().expect("stdin");
        stdin
            .write_all(b"Read config.ini and tell me what it says.")
            .await
            .expect("prompt");
    }
    let status = tokio::time::timeout(Duration::from_secs(90), child.wait())
        .await
        .expect("opencode ends")
        .expect("status");
    assert!(status.success(), "{status:?}");
    assert!(
        db.is_file(),
        "opencode keeps its sessions in {}",
        db.display()
    );

    let note = eventually("the person is told", Duration::from_secs(30), || {
        engine
            .notifications()
            .ok()?
            .items
            .into_iter()
            .find(|n| n.title.contains("opencode sessions is going in circles"))
    })
    .await;
    assert!(
        note.body.contains(&ws.repo.display().to_string()),
        "{}",
        note.body
    );
    assert!(note.body.contains("cat config.ini"), "{}", note.body);
    let live = engine.live_sessions(chrono::Utc::now()).expect("live");
    let mine: Vec<_> = live
        .iter()
        .filter(|s| s.origin == SessionOrigin::Person)
        .collect();
    assert_eq!(mine.len(), 1, "{mine:?}");
    assert_eq!(mine[0].agent, healer::session::AgentKind::OpenCode);
    assert!(mine[0].loop_rule.is_some(), "{:?}", mine[0]);
    let history = engine.own_session_history().expect("history");
    assert_eq!(history.len(), 1, "{history:?}");

    // Told once: opencode's database changing again brings no new notification.
    let bytes = std::fs::read(&db).expect("db");
    std::fs::write(share.join("opencode").join("touch"), "x").expect("a change");
    tokio::time::sleep(Duration::from_secs(2)).await;
    let told = engine
        .notifications()
        .expect("notifications")
        .items
        .iter()
        .filter(|n| n.title.contains("opencode sessions is going in circles"))
        .count();
    assert_eq!(told, 1);
    assert_eq!(std::fs::read(&db).expect("db"), bytes, "never written");
}
