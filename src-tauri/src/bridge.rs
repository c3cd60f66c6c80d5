//! The bridge from the engine's bus to the webview (typed event `healer-event`) and to desktop
//! notifications.

use healer::events::{Event, EventRecord};
use healer::llm::ThreadText;
use healer::project::StoredStep;
use healer::workflow::runner::OutputChunk;
use serde::{Deserialize, Serialize};
use tauri::{AppHandle, Manager};
use tauri_plugin_notification::NotificationExt;
use tauri_specta::Event as _;
use tokio::sync::broadcast::{self, error::RecvError};

/// Every engine event, as the UI receives it live.
#[derive(Debug, Clone, Serialize, Deserialize, specta::Type, tauri_specta::Event)]
pub struct HealerEvent(pub EventRecord);

/// Events the window missed (the bus ran ahead of the bridge): everything it shows is read again.
#[derive(Debug, Clone, Serialize, Deserialize, specta::Type, tauri_specta::Event)]
pub struct EventsMissed {
    pub count: u64,
}

/// Output of a running attempt, as it is printed (not persisted; the attempt keeps its log).
#[derive(Debug, Clone, Serialize, Deserialize, specta::Type, tauri_specta::Event)]
pub struct RunOutput(pub OutputChunk);

/// Text of a task's thread as the model writes it (the stored message follows when done).
#[derive(Debug, Clone, Serialize, Deserialize, specta::Type, tauri_specta::Event)]
pub struct ThreadTextEvent(pub ThreadText);

/// A step of an agent's session as it is stored (the task page streams them).
#[derive(Debug, Clone, Serialize, Deserialize, specta::Type, tauri_specta::Event)]
pub struct SessionStepEvent(pub StoredStep);

pub async fn forward(
    app: AppHandle,
    events: broadcast::Receiver<EventRecord>,
    output: broadcast::Receiver<OutputChunk>,
    text: broadcast::Receiver<ThreadText>,
    steps: broadcast::Receiver<StoredStep>,
) {
    tokio::join!(
        forward_events(app.clone(), events, text),
        forward_output(app.clone(), output),
        forward_steps(app, steps)
    );
}

async fn forward_steps(app: AppHandle, mut rx: broadcast::Receiver<StoredStep>) {
    loop {
        match rx.recv().await {
            Ok(step) => {
                if let Err(e) = SessionStepEvent(step).emit(&app) {
                    tracing::debug!("cannot send a session step to the window: {e}");
                }
            }
            // The task page re-reads the stored steps when a session ends; nothing is lost.
            Err(RecvError::Lagged(_)) => {}
            Err(RecvError::Closed) => break,
        }
    }
}

/// Send a piece of streamed thread text to the window.
fn send_text(app: &AppHandle, piece: ThreadText) {
    if let Err(e) = ThreadTextEvent(piece).emit(app) {
        tracing::debug!("cannot send thread text to the window: {e}");
    }
}

async fn forward_output(app: AppHandle, mut rx: broadcast::Receiver<OutputChunk>) {
    loop {
        match rx.recv().await {
            Ok(chunk) => {
                if let Err(e) = RunOutput(chunk).emit(&app) {
                    tracing::debug!("cannot send output to the window: {e}");
                }
            }
            // Live output is a view; the full log is stored with the attempt.
            Err(RecvError::Lagged(_)) => {}
            Err(RecvError::Closed) => break,
        }
    }
}

/// Events and streamed thread text in one loop, text first: the engine streams a step's text
/// before it stores the step, so the window gets them in that order too and can drop the
/// streamed text when the stored step arrives.
async fn forward_events(
    app: AppHandle,
    mut events: broadcast::Receiver<EventRecord>,
    mut text: broadcast::Receiver<ThreadText>,
) {
    let mut text_open = true;
    loop {
        let record = tokio::select! {
            biased;
            piece = text.recv(), if text_open => {
                match piece {
                    Ok(piece) => send_text(&app, piece),
                    // Live text is a view; the stored message is complete.
                    Err(RecvError::Lagged(_)) => {}
                    Err(RecvError::Closed) => text_open = false,
                }
                continue;
            }
            record = events.recv() => record,
        };
        match record {
            Ok(record) => {
                // Text already sent before this event was emitted goes out first.
                while let Ok(piece) = text.try_recv() {
                    send_text(&app, piece);
                }
                match &record.event {
                    // A notification that asks a question is shown once, as the question.
                    Event::NotificationCreated { notification }
                        if notification.checkpoint_id.is_none() =>
                    {
                        notify_desktop(&app, &notification.title, &notification.body);
                    }
                    Event::CheckpointCreated { checkpoint }
                        if checkpoint.agent_request.is_some() =>
                    {
                        notify_question(&app, checkpoint);
                    }
                    Event::CheckpointCreated { checkpoint } => {
                        let title = match (&checkpoint.project_task, &checkpoint.workflow_title) {
                            (Some(t), _) => format!(
                                "Healer asks about \u{201c}{}\u{201d} in \u{201c}{}\u{201d}",
                                t.task_title, t.project_name
                            ),
                            (None, Some(w)) => format!(
                                "Healer asks: {} (\u{201c}{w}\u{201d})",
                                checkpoint.trigger.title()
                            ),
                            (None, None) => format!("Healer asks: {}", checkpoint.trigger.title()),
                        };
                        notify_desktop(&app, &title, &checkpoint.recommendation);
                    }
                    _ => {}
                }
                if let Err(e) = HealerEvent(record).emit(&app) {
                    tracing::warn!("cannot send an event to the window: {e}");
                }
            }
            // Every event is stored: the window is told to read everything again, so nothing
            // it shows stays behind.
            Err(RecvError::Lagged(missed)) => {
                tracing::warn!("the window missed {missed} live events; it reads everything again");
                if let Err(e) = (EventsMissed { count: missed }).emit(&app) {
                    tracing::warn!("cannot tell the window it missed events: {e}");
                }
            }
            Err(RecvError::Closed) => break,
        }
    }
}

/// An agent's question, with Allow once and Deny on the notification itself.
fn notify_question(app: &AppHandle, checkpoint: &healer::checkpoint::Checkpoint) {
    let Some(ask) = &checkpoint.agent_request else {
        return;
    };
    let Ok(id) = i32::try_from(checkpoint.id) else {
        return;
    };
    let body = format!(
        "{}
It asks because {}.",
        ask.request.subject(),
        ask.why
    );
    notify(app, &checkpoint.title, &body, Some(id));
}

/// A desktop notification, unless the person is looking at the window already.
fn notify_desktop(app: &AppHandle, title: &str, body: &str) {
    notify(app, title, body, None);
}

/// `question`: the checkpoint it asks, answered with the notification's own buttons.
fn notify(app: &AppHandle, title: &str, body: &str, question: Option<i32>) {
    let focused = app
        .get_webview_window("main")
        .and_then(|w| w.is_focused().ok())
        .unwrap_or(false);
    if focused {
        return;
    }
    let mut builder = app.notification().builder().title(title).body(body);
    if let Some(id) = question {
        builder = builder.id(id).action_type_id(crate::asking::ACTION_TYPE);
    }
    if let Err(e) = builder.show() {
        // No notification service (a bare X session): the notification centre still has it.
        tracing::info!("no desktop notification shown: {e}");
    }
}
