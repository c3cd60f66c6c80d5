//! Tauri commands for projects: the add-project form, the board, the task page and its live
//! session. Each a one-line adapter over an engine method.

use healer::engine::{Acceptance, CommentsSent, Discarded};
use healer::project::finish::AcceptHow;
use healer::project::{
    FolderCheck, Project, ProjectDetail, ProjectInput, ProjectSummary, SessionDetail,
    SessionRecord, Task, TaskDetail, TaskEdit, TaskStatus,
};
use healer::steering::LiveSession;
use healer::store::{ApprovalRule, HealerConfig, PullRequestRecord, ReviewComment};
use healer::workflow::FieldProblem;
use healer::ErrorPayload;
use tauri::State;

use crate::state::AppState;

type CmdResult<T> = Result<T, ErrorPayload>;

/// What a folder is and what Healer proposes for it.
#[tauri::command]
#[specta::specta]
pub async fn check_project_folder(
    state: State<'_, AppState>,
    path: String,
) -> CmdResult<FolderCheck> {
    Ok(state.engine()?.check_project_folder(&path).await?)
}

/// Make the folder a git repository with a first commit, then look again.
#[tauri::command]
#[specta::specta]
pub async fn init_project_folder(
    state: State<'_, AppState>,
    path: String,
) -> CmdResult<FolderCheck> {
    Ok(state.engine()?.init_project_folder(&path).await?)
}

/// Problems under each field of the form; empty when it can be saved.
#[tauri::command]
#[specta::specta]
pub fn validate_project(
    state: State<'_, AppState>,
    input: ProjectInput,
    id: Option<i64>,
) -> CmdResult<Vec<FieldProblem>> {
    Ok(state.engine()?.validate_project(&input, id)?)
}

#[tauri::command]
#[specta::specta]
pub fn add_project(state: State<'_, AppState>, input: ProjectInput) -> CmdResult<Project> {
    Ok(state.engine()?.add_project(input)?)
}

#[tauri::command]
#[specta::specta]
pub fn update_project(
    state: State<'_, AppState>,
    id: i64,
    input: ProjectInput,
) -> CmdResult<Project> {
    Ok(state.engine()?.update_project(id, input)?)
}

#[tauri::command]
#[specta::specta]
pub fn remove_project(state: State<'_, AppState>, id: i64) -> CmdResult<()> {
    Ok(state.engine()?.remove_project(id)?)
}

#[tauri::command]
#[specta::specta]
pub fn list_projects(state: State<'_, AppState>) -> CmdResult<Vec<ProjectSummary>> {
    Ok(state.engine()?.list_projects()?)
}

#[tauri::command]
#[specta::specta]
pub fn get_project(state: State<'_, AppState>, id: i64) -> CmdResult<ProjectDetail> {
    Ok(state.engine()?.project_detail(id)?)
}

#[tauri::command]
#[specta::specta]
pub fn get_project_task(
    state: State<'_, AppState>,
    project_id: i64,
    task_id: String,
) -> CmdResult<TaskDetail> {
    Ok(state.engine()?.task_detail(project_id, &task_id)?)
}

#[tauri::command]
#[specta::specta]
pub fn add_project_task(
    state: State<'_, AppState>,
    project_id: i64,
    edit: TaskEdit,
) -> CmdResult<Task> {
    Ok(state.engine()?.add_task(project_id, edit)?)
}

#[tauri::command]
#[specta::specta]
pub fn edit_project_task(
    state: State<'_, AppState>,
    project_id: i64,
    task_id: String,
    edit: TaskEdit,
) -> CmdResult<Task> {
    Ok(state.engine()?.edit_task(project_id, &task_id, edit)?)
}

/// Put a task before another (taking its priority), or last of its column.
#[tauri::command]
#[specta::specta]
pub fn move_project_task(
    state: State<'_, AppState>,
    project_id: i64,
    task_id: String,
    before: Option<String>,
) -> CmdResult<Task> {
    Ok(state
        .engine()?
        .move_task(project_id, &task_id, before.as_deref())?)
}

/// Close, reopen or block a task by hand.
#[tauri::command]
#[specta::specta]
pub fn set_project_task_status(
    state: State<'_, AppState>,
    project_id: i64,
    task_id: String,
    status: TaskStatus,
    reason: Option<String>,
) -> CmdResult<Task> {
    Ok(state
        .engine()?
        .set_task_status(project_id, &task_id, status, reason)?)
}

/// Start the agent on a task (the next ready one without `task_id`); its steps stream.
#[tauri::command]
#[specta::specta]
pub fn run_project_task(
    state: State<'_, AppState>,
    project_id: i64,
    task_id: Option<String>,
) -> CmdResult<SessionRecord> {
    Ok(state
        .engine()?
        .run_project(project_id, task_id.as_deref())?)
}

/// Every project's sessions, newest first.
#[tauri::command]
#[specta::specta]
pub fn list_past_sessions(
    state: State<'_, AppState>,
) -> CmdResult<Vec<healer::store::PastSession>> {
    Ok(state.engine()?.session_history()?)
}

/// Write the agent of a running session a message; it reaches the agent at its next chance.
#[tauri::command]
#[specta::specta]
pub fn say_to_session(
    state: State<'_, AppState>,
    session_id: i64,
    text: String,
) -> CmdResult<healer::store::SteeringEntry> {
    Ok(state.engine()?.say_to_session(session_id, &text)?)
}

/// Stop a running session; its worktree is kept.
#[tauri::command]
#[specta::specta]
pub fn stop_session(state: State<'_, AppState>, session_id: i64) -> CmdResult<()> {
    Ok(state.engine()?.stop_session(session_id)?)
}

#[tauri::command]
#[specta::specta]
pub fn get_session(state: State<'_, AppState>, session_id: i64) -> CmdResult<SessionDetail> {
    Ok(state.engine()?.session_detail(session_id)?)
}

/// A project's healer settings (the defaults when none were saved).
#[tauri::command]
#[specta::specta]
pub fn get_healer_config(state: State<'_, AppState>, project_id: i64) -> CmdResult<HealerConfig> {
    Ok(state.engine()?.healer_config(project_id)?)
}

#[tauri::command]
#[specta::specta]
pub fn set_healer_config(
    state: State<'_, AppState>,
    project_id: i64,
    config: HealerConfig,
) -> CmdResult<HealerConfig> {
    Ok(state.engine()?.set_healer_config(project_id, config)?)
}

/// Put a snapshot back into its task's worktree; what Healer did, in a sentence.
#[tauri::command]
#[specta::specta]
pub async fn restore_snapshot(state: State<'_, AppState>, id: i64) -> CmdResult<String> {
    Ok(state.engine()?.restore_snapshot(id).await?)
}

/// What a project's agent may do without asking because the person allowed it by answering
/// (for the project, and for each task).
#[tauri::command]
#[specta::specta]
pub fn list_approval_rules(
    state: State<'_, AppState>,
    project_id: i64,
) -> CmdResult<Vec<ApprovalRule>> {
    Ok(state.engine()?.approval_rules(project_id)?)
}

/// Take back something the person allowed for good.
#[tauri::command]
#[specta::specta]
pub fn remove_approval_rule(
    state: State<'_, AppState>,
    project_id: i64,
    rule_id: i64,
) -> CmdResult<()> {
    Ok(state.engine()?.remove_approval_rule(project_id, rule_id)?)
}

/// The Sessions page: every live session, Healer's and (when watched) the person's own.
#[tauri::command]
#[specta::specta]
pub fn list_live_sessions(state: State<'_, AppState>) -> CmdResult<Vec<LiveSession>> {
    Ok(state.engine()?.live_sessions_now()?)
}

/// Accept a task's work into the main branch (`how`: the project's way when `None`); what it
/// came to — accepted, a conflict (which files), a check that failed, or left and why.
#[tauri::command]
#[specta::specta]
pub async fn accept_task(
    state: State<'_, AppState>,
    project_id: i64,
    task_id: String,
    how: Option<AcceptHow>,
) -> CmdResult<Acceptance> {
    Ok(state
        .engine()?
        .accept_task(project_id, &task_id, how)
        .await?)
}

/// *Ask the agent to resolve it*: a session on the task's branch with the main branch merged
/// in, accepted once green.
#[tauri::command]
#[specta::specta]
pub fn resolve_conflict(
    state: State<'_, AppState>,
    project_id: i64,
    task_id: String,
    how: Option<AcceptHow>,
) -> CmdResult<SessionRecord> {
    Ok(state
        .engine()?
        .resolve_conflict_with_agent(project_id, &task_id, how)?)
}

/// Discard a task's work (pinned as a snapshot first).
#[tauri::command]
#[specta::specta]
pub async fn discard_task_work(
    state: State<'_, AppState>,
    project_id: i64,
    task_id: String,
) -> CmdResult<Discarded> {
    Ok(state
        .engine()?
        .discard_task_work(project_id, &task_id)
        .await?)
}

/// Keep a comment on lines of a task's change (sent later, with the others).
#[tauri::command]
#[specta::specta]
pub async fn add_review_comment(
    state: State<'_, AppState>,
    project_id: i64,
    task_id: String,
    path: String,
    line_start: u32,
    line_end: u32,
    text: String,
) -> CmdResult<ReviewComment> {
    Ok(state
        .engine()?
        .add_review_comment(project_id, &task_id, &path, line_start, line_end, &text)
        .await?)
}

/// The task's comments, those the agent's change touched since they were sent marked answered.
#[tauri::command]
#[specta::specta]
pub async fn list_review_comments(
    state: State<'_, AppState>,
    project_id: i64,
    task_id: String,
) -> CmdResult<Vec<ReviewComment>> {
    Ok(state
        .engine()?
        .review_comments(project_id, &task_id)
        .await?)
}

/// Forget a comment not sent yet.
#[tauri::command]
#[specta::specta]
pub async fn delete_review_comment(state: State<'_, AppState>, comment_id: i64) -> CmdResult<()> {
    Ok(state.engine()?.delete_review_comment(comment_id)?)
}

/// Send the comments that wait to the agent, as one message.
#[tauri::command]
#[specta::specta]
pub async fn send_review_comments(
    state: State<'_, AppState>,
    project_id: i64,
    task_id: String,
) -> CmdResult<CommentsSent> {
    Ok(state.engine()?.send_review_comments(project_id, &task_id)?)
}

/// Push the task's branch and open its pull request (or find the one already open for it).
#[tauri::command]
#[specta::specta]
pub async fn open_pull_request(
    state: State<'_, AppState>,
    project_id: i64,
    task_id: String,
    api_url: Option<String>,
) -> CmdResult<PullRequestRecord> {
    Ok(state
        .engine()?
        .open_pull_request(project_id, &task_id, api_url.as_deref())
        .await?)
}

/// Keep the token this project's pull requests are opened with (in the secrets keep).
#[tauri::command]
#[specta::specta]
pub async fn set_project_token(
    state: State<'_, AppState>,
    project_id: i64,
    token: String,
) -> CmdResult<()> {
    Ok(state.engine()?.set_project_token(project_id, token).await?)
}
