//! Tauri commands: each a one-line adapter over an engine method. Errors cross IPC as
//! `{code, message}` (`ErrorPayload`).

use healer::engine::SaveOutcome;
use healer::events::EventRecord;
use healer::heal::HealRecord;
use healer::notification::NotificationList;
use healer::workflow::runner::OutputStream;
use healer::workflow::{
    FieldProblem, Run, RunDetail, Schedule, SchedulePreview, ScriptVersion, Version, Workflow,
    WorkflowDetail, WorkflowInput, WorkflowSummary,
};
use healer::{AppInfo, ErrorPayload};
use tauri::{AppHandle, State};

use crate::state::AppState;

type CmdResult<T> = Result<T, ErrorPayload>;

#[tauri::command]
#[specta::specta]
pub fn app_info(state: State<'_, AppState>) -> CmdResult<AppInfo> {
    Ok(state.engine()?.info()?)
}

#[tauri::command]
#[specta::specta]
pub fn list_events(
    state: State<'_, AppState>,
    before: Option<i64>,
    limit: u32,
) -> CmdResult<Vec<EventRecord>> {
    Ok(state.engine()?.events(before, limit)?)
}

#[tauri::command]
#[specta::specta]
pub fn list_notifications(state: State<'_, AppState>) -> CmdResult<NotificationList> {
    Ok(state.engine()?.notifications()?)
}

/// An empty list marks every notification read.
#[tauri::command]
#[specta::specta]
pub fn mark_notifications_read(state: State<'_, AppState>, ids: Vec<i64>) -> CmdResult<()> {
    Ok(state.engine()?.mark_notifications_read(&ids)?)
}

#[tauri::command]
#[specta::specta]
pub async fn send_test_alert(state: State<'_, AppState>) -> CmdResult<HealRecord> {
    Ok(state.engine()?.send_test_alert().await?)
}

#[tauri::command]
#[specta::specta]
pub fn open_log_folder(app: AppHandle, state: State<'_, AppState>) -> CmdResult<()> {
    crate::state::open_folder(&app, &state.paths().log_dir())
}

#[tauri::command]
#[specta::specta]
pub fn list_workflows(state: State<'_, AppState>) -> CmdResult<Vec<WorkflowSummary>> {
    Ok(state.engine()?.list_workflows()?)
}

#[tauri::command]
#[specta::specta]
pub fn get_workflow(state: State<'_, AppState>, id: i64) -> CmdResult<WorkflowDetail> {
    Ok(state.engine()?.workflow(id)?)
}

/// What a schedule means and when it would next run, shown under the field before saving.
#[tauri::command]
#[specta::specta]
pub fn preview_schedule(schedule: Schedule) -> SchedulePreview {
    schedule.preview_now()
}

/// Problems with a workflow before it is saved; empty when it can be.
#[tauri::command]
#[specta::specta]
pub fn validate_workflow(
    state: State<'_, AppState>,
    input: WorkflowInput,
) -> CmdResult<Vec<FieldProblem>> {
    Ok(state.engine()?.validate_workflow(&input))
}

/// `requirements`: the packages its first version declares (the ones the person confirmed).
#[tauri::command]
#[specta::specta]
pub fn create_workflow(
    state: State<'_, AppState>,
    input: WorkflowInput,
    requirements: Vec<String>,
) -> CmdResult<Workflow> {
    Ok(state.engine()?.create_workflow_with(input, requirements)?)
}

/// Change settings; the code changes only through `save_script`.
#[tauri::command]
#[specta::specta]
pub fn update_workflow(
    state: State<'_, AppState>,
    id: i64,
    input: WorkflowInput,
) -> CmdResult<Workflow> {
    Ok(state.engine()?.update_workflow(id, input)?)
}

/// Saves the code as the next major version (2.0 after 1.3), unless the syntax check refuses
/// it or a newer version than `base` (the one the editor opened) appeared meanwhile.
/// `requirements`: the packages the new version declares (`None`: those of the one that runs).
#[tauri::command]
#[specta::specta]
pub async fn save_script(
    state: State<'_, AppState>,
    id: i64,
    code: String,
    comment: String,
    base: Option<Version>,
    requirements: Option<Vec<String>>,
) -> CmdResult<SaveOutcome> {
    Ok(state
        .engine()?
        .save_edited_script_with(id, &code, &comment, base, requirements)
        .await?)
}

/// The runtime's own syntax check of `code`; null when it passes.
#[tauri::command]
#[specta::specta]
pub async fn check_script(
    state: State<'_, AppState>,
    id: i64,
    code: String,
) -> CmdResult<Option<String>> {
    Ok(state.engine()?.check_script(id, &code).await?)
}

/// An earlier version's code as the next major version ("Restored from 1.0").
#[tauri::command]
#[specta::specta]
pub fn restore_version(
    state: State<'_, AppState>,
    id: i64,
    version: Version,
) -> CmdResult<ScriptVersion> {
    Ok(state.engine()?.restore_version(id, version)?)
}

/// Copies an attempt's whole output into the Downloads folder; returns where it went.
#[tauri::command]
#[specta::specta]
pub fn export_full_log(
    state: State<'_, AppState>,
    run_id: i64,
    attempt: u32,
    stream: OutputStream,
) -> CmdResult<String> {
    Ok(state.engine()?.export_full_log(run_id, attempt, stream)?)
}

/// Whether the person skipped (or finished) the first-run model setup.
#[tauri::command]
#[specta::specta]
pub fn setup_skipped(state: State<'_, AppState>) -> CmdResult<bool> {
    Ok(state.engine()?.setup_skipped()?)
}

#[tauri::command]
#[specta::specta]
pub fn skip_setup(state: State<'_, AppState>) -> CmdResult<()> {
    Ok(state.engine()?.skip_setup()?)
}

#[tauri::command]
#[specta::specta]
pub fn dismiss_notification(state: State<'_, AppState>, id: i64) -> CmdResult<()> {
    Ok(state.engine()?.dismiss_notification(id)?)
}

#[tauri::command]
#[specta::specta]
pub fn set_workflow_paused(
    state: State<'_, AppState>,
    id: i64,
    paused: bool,
) -> CmdResult<Workflow> {
    Ok(state.engine()?.set_paused(id, paused)?)
}

#[tauri::command]
#[specta::specta]
pub fn delete_workflow(state: State<'_, AppState>, id: i64) -> CmdResult<()> {
    Ok(state.engine()?.delete_workflow(id)?)
}

/// Queues a run now and returns its id.
#[tauri::command]
#[specta::specta]
pub fn run_workflow_now(state: State<'_, AppState>, id: i64) -> CmdResult<i64> {
    Ok(state.engine()?.run_now(id)?)
}

#[tauri::command]
#[specta::specta]
pub fn list_runs(
    state: State<'_, AppState>,
    workflow_id: i64,
    before: Option<i64>,
    limit: u32,
) -> CmdResult<Vec<Run>> {
    Ok(state.engine()?.runs(workflow_id, before, limit)?)
}

#[tauri::command]
#[specta::specta]
pub fn get_run(state: State<'_, AppState>, run_id: i64) -> CmdResult<RunDetail> {
    Ok(state.engine()?.run_detail(run_id)?)
}

#[tauri::command]
#[specta::specta]
pub fn list_versions(
    state: State<'_, AppState>,
    workflow_id: i64,
) -> CmdResult<Vec<ScriptVersion>> {
    Ok(state.engine()?.versions(workflow_id)?)
}

#[tauri::command]
#[specta::specta]
pub fn load_examples(state: State<'_, AppState>) -> CmdResult<Vec<Workflow>> {
    Ok(state.engine()?.load_examples()?)
}
