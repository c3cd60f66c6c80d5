//! Tauri commands for reviewing an agent's change: a session's or a task's diff, and opening
//! its worktree in the person's editor or a terminal (the desktop's default handlers, or the
//! editor command chosen in Settings).

use healer::project::review::ChangeReview;
use healer::{Error, ErrorCode, ErrorPayload};
use tauri::{AppHandle, State};
use tauri_plugin_opener::OpenerExt;

use crate::state::AppState;

type CmdResult<T> = Result<T, ErrorPayload>;

#[tauri::command]
#[specta::specta]
pub async fn review_session(
    state: State<'_, AppState>,
    session_id: i64,
) -> CmdResult<ChangeReview> {
    Ok(state.engine()?.review_session(session_id).await?)
}

#[tauri::command]
#[specta::specta]
pub async fn review_task(
    state: State<'_, AppState>,
    project_id: i64,
    task_id: String,
) -> CmdResult<ChangeReview> {
    Ok(state.engine()?.review_task(project_id, &task_id).await?)
}

#[tauri::command]
#[specta::specta]
pub fn get_editor_command(state: State<'_, AppState>) -> CmdResult<Option<String>> {
    Ok(state.engine()?.editor_command()?)
}

#[tauri::command]
#[specta::specta]
pub fn set_editor_command(state: State<'_, AppState>, command: String) -> CmdResult<()> {
    Ok(state.engine()?.set_editor_command(&command)?)
}

/// Opens a session's worktree in the editor the person chose (else the desktop's default
/// handler for a folder), or in a terminal there.
#[tauri::command]
#[specta::specta]
pub async fn open_worktree(
    app: AppHandle,
    state: State<'_, AppState>,
    session_id: i64,
    terminal: bool,
) -> CmdResult<()> {
    let engine = state.engine()?;
    let path = engine.session_worktree(session_id).await?;
    if terminal {
        let program = healer::engine::terminal_program().ok_or_else(|| ErrorPayload {
            code: ErrorCode::NotFound,
            message: "no terminal program was found on this computer (such as x-terminal-emulator or xterm)".to_string(),
        })?;
        return spawn(std::process::Command::new(program).current_dir(&path));
    }
    match engine.editor_command()? {
        Some(command) => {
            let (program, args) = healer::engine::editor_invocation(&command, &path)
                .ok_or_else(|| Error::InvalidInput("the editor command is empty".to_string()))?;
            spawn(
                std::process::Command::new(program)
                    .args(args)
                    .current_dir(&path),
            )
        }
        None => app
            .opener()
            .open_path(path.display().to_string(), None::<&str>)
            .map_err(|e| ErrorPayload {
                code: ErrorCode::Io,
                message: format!(
                    "the desktop could not open the folder: {}; choose an editor in Settings \
                     to open it with",
                    crate::state::opener_failure(&e)
                ),
            }),
    }
}

/// Started and left to run on its own (its exit is reaped on a thread).
fn spawn(command: &mut std::process::Command) -> CmdResult<()> {
    let mut child = command
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map_err(|e| Error::io("the program could not be started", e))?;
    std::thread::spawn(move || child.wait());
    Ok(())
}

/// Writes a session's steps as an ATIF trajectory file and shows it in the file manager.
#[tauri::command]
#[specta::specta]
pub fn export_session_trajectory(
    app: AppHandle,
    state: State<'_, AppState>,
    session_id: i64,
) -> CmdResult<String> {
    let path = state.engine()?.export_session_trajectory(session_id)?;
    if let Err(e) = app.opener().reveal_item_in_dir(&path) {
        tracing::warn!("could not show {} in the file manager: {e}", path.display());
    }
    Ok(path.display().to_string())
}

/// The person's own Claude Code sessions Healer watched, newest first.
#[tauri::command]
#[specta::specta]
pub fn list_own_past_sessions(
    state: State<'_, AppState>,
) -> CmdResult<Vec<healer::steering::LiveSession>> {
    Ok(state.engine()?.own_session_history()?)
}
