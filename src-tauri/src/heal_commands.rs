//! Tauri commands for healing: the Auto-fix tab and the planner chat (Re-plan). Each a
//! one-line adapter over an engine method.

use healer::maintainer::{AutoFix, AutoFixDetail};
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
