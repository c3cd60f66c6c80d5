//! An agent's question answered from its desktop notification, without opening the window:
//! Allow once or Deny (a click on the notification itself opens the question in the window).

use healer::checkpoint::{Checkpoint, CheckpointAction};
use tauri::{AppHandle, Manager};
use tauri_plugin_notification::{Action, ActionType, NotificationExt};

use crate::state::AppState;

/// The kind of notification that carries the two answers.
pub const ACTION_TYPE: &str = "agent-question";
const ALLOW: &str = "allow_once";
const DENY: &str = "deny";

/// Register the answers and what they do.
pub fn register(app: &AppHandle) {
    let notification = app.notification();
    let types = vec![ActionType::builder(ACTION_TYPE)
        .actions(vec![
            Action::builder(ALLOW, "Allow once").build(),
            Action::builder(DENY, "Deny").build(),
        ])
        .build()];
    if let Err(e) = notification.register_action_types(types) {
        tracing::warn!("a question's notification will have no buttons: {e}");
        return;
    }
    let app = app.clone();
    let answered = notification.on_action(move |performed| {
        let Some(id) = performed.notification().map(|n| i64::from(n.id())) else {
            return;
        };
        let action = match performed.action_id() {
            ALLOW => CheckpointAction::AllowOnce,
            DENY => CheckpointAction::Deny,
            // A click on the notification: the question, in the window.
            _ => {
                crate::window::open(&app);
                return;
            }
        };
        let app = app.clone();
        tauri::async_runtime::spawn(async move { answer(&app, id, action).await });
    });
    if let Err(e) = answered {
        tracing::warn!("a question's notification cannot be answered: {e}");
    }
}

async fn answer(app: &AppHandle, checkpoint_id: i64, action: CheckpointAction) {
    let state = app.state::<AppState>();
    let Ok(engine) = state.engine() else {
        return;
    };
    let option = engine
        .checkpoint(checkpoint_id)
        .ok()
        .as_ref()
        .and_then(|c: &Checkpoint| option_of(c, action));
    let Some(option) = option else {
        return;
    };
    if let Err(e) = engine
        .decide_checkpoint(checkpoint_id, Some(option), None)
        .await
    {
        tracing::warn!("the answer from a notification was not recorded: {e}");
    }
}

/// The 1-based number of the question's option doing `action`, if it is an agent's question.
fn option_of(checkpoint: &Checkpoint, action: CheckpointAction) -> Option<u32> {
    checkpoint.agent_request.as_ref()?;
    checkpoint
        .options
        .iter()
        .position(|o| o.action == action)
        .and_then(|i| u32::try_from(i + 1).ok())
}
