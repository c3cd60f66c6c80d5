//! Tauri commands for healing: the Auto-fix tab, the planner chat (Re-plan) and checkpoints. Each a
//! one-line adapter over an engine method.

use healer::checkpoint::{Checkpoint, CheckpointList};
use healer::heal::HealRecord;
use healer::maintainer::{AutoFix, AutoFixDetail};
use healer::memory::{LoggedDecision, Pattern, PatternDetail};
use healer::planner::PlannerChat;
use healer::ErrorPayload;
use tauri::State;

use crate::state::AppState;

type CmdResult<T> = Result<T, ErrorPayload>;

/// A workflow's auto-fix tasks, newest first.
#[tauri::command]
#[specta::specta]
pub fn list_autofixes(state: State<'_, AppState>, workflow_id: i64) -> CmdResult<Vec<AutoFix>> {
    Ok(state.engine()?.autofixes(workflow_id)?)
}

/// One auto-fix: its thread, and the code before and after.
#[tauri::command]
#[specta::specta]
pub fn get_autofix(state: State<'_, AppState>, task_id: i64) -> CmdResult<AutoFixDetail> {
    Ok(state.engine()?.autofix_detail(task_id)?)
}

/// The workflow's chat with the planner.
#[tauri::command]
#[specta::specta]
pub fn get_planner_chat(state: State<'_, AppState>, workflow_id: i64) -> CmdResult<PlannerChat> {
    Ok(state.engine()?.planner_chat(workflow_id)?)
}

/// Send a message to the planner; its answer arrives as events (`planner_replied`).
#[tauri::command]
#[specta::specta]
pub fn send_planner_message(
    state: State<'_, AppState>,
    workflow_id: i64,
    message: String,
) -> CmdResult<i64> {
    Ok(state.engine()?.replan(workflow_id, &message)?)
}

/// "Try auto-fix again" after a repair gave up: a new repair of the last failure.
#[tauri::command]
#[specta::specta]
pub async fn retry_autofix(state: State<'_, AppState>, workflow_id: i64) -> CmdResult<HealRecord> {
    Ok(state.engine()?.retry_autofix(workflow_id).await?)
}

/// Pending checkpoints (oldest first) and past decisions.
#[tauri::command]
#[specta::specta]
pub fn list_checkpoints(state: State<'_, AppState>) -> CmdResult<CheckpointList> {
    Ok(state.engine()?.checkpoints()?)
}

/// Decide a checkpoint (`option` 1-based); the work it held goes on as the option says
/// ("Try another package name…" installs the package named in `notes` first).
#[tauri::command]
#[specta::specta]
pub async fn decide_checkpoint(
    state: State<'_, AppState>,
    id: i64,
    option: u32,
    notes: Option<String>,
) -> CmdResult<Checkpoint> {
    Ok(state
        .engine()?
        .decide_checkpoint(id, Some(option), notes.as_deref())
        .await?)
}

/// Error signatures Healer remembers, most recently seen first.
#[tauri::command]
#[specta::specta]
pub fn list_patterns(state: State<'_, AppState>) -> CmdResult<Vec<Pattern>> {
    Ok(state.engine()?.patterns(500)?)
}

/// One signature with every fix tried for it.
#[tauri::command]
#[specta::specta]
pub fn get_pattern(state: State<'_, AppState>, signature: String) -> CmdResult<PatternDetail> {
    Ok(state.engine()?.pattern(&signature)?)
}

/// Decisions Healer made on its own (rollbacks, breakers), newest first.
#[tauri::command]
#[specta::specta]
pub fn list_decisions(state: State<'_, AppState>) -> CmdResult<Vec<LoggedDecision>> {
    Ok(state.engine()?.decisions(200)?)
}

/// Why scheduled runs are paused, if a breaker paused them.
#[tauri::command]
#[specta::specta]
pub fn get_scheduler_pause(state: State<'_, AppState>) -> CmdResult<Option<String>> {
    Ok(state.engine()?.scheduler_pause()?)
}

/// Let scheduled runs go again.
#[tauri::command]
#[specta::specta]
pub fn resume_scheduler(state: State<'_, AppState>) -> CmdResult<()> {
    Ok(state.engine()?.resume_scheduler()?)
}
