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
