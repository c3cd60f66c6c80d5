//! Tauri commands for running on more computers: the connection to a Temporal cluster
//! (Settings → "Run on more computers"), where a workflow runs, and Stop on a run there.

use healer::cluster::gateway_access::WorkerGateway;
use healer::cluster::{ClusterSettings, ClusterStatus, QueueWorkers, RunsOn};
use healer::ErrorPayload;
use tauri::State;

use crate::state::AppState;

type CmdResult<T> = Result<T, ErrorPayload>;

#[tauri::command]
#[specta::specta]
pub async fn cluster_status(state: State<'_, AppState>) -> CmdResult<ClusterStatus> {
    Ok(state.engine()?.cluster_status().await?)
}

#[tauri::command]
#[specta::specta]
pub async fn test_cluster(
    state: State<'_, AppState>,
    settings: ClusterSettings,
) -> CmdResult<QueueWorkers> {
    Ok(state.engine()?.test_cluster(settings).await?)
}

#[tauri::command]
#[specta::specta]
pub async fn connect_cluster(
    state: State<'_, AppState>,
    settings: ClusterSettings,
) -> CmdResult<ClusterStatus> {
    Ok(state.engine()?.connect_cluster(settings).await?)
}

#[tauri::command]
#[specta::specta]
pub async fn disconnect_cluster(state: State<'_, AppState>) -> CmdResult<Vec<String>> {
    Ok(state.engine()?.disconnect_cluster().await?)
}

#[tauri::command]
#[specta::specta]
pub fn get_runs_on(state: State<'_, AppState>, workflow_id: i64) -> CmdResult<RunsOn> {
    Ok(state.engine()?.runs_on(workflow_id)?)
}

#[tauri::command]
#[specta::specta]
pub fn set_runs_on(
    state: State<'_, AppState>,
    workflow_id: i64,
    runs_on: RunsOn,
) -> CmdResult<RunsOn> {
    Ok(state.engine()?.set_runs_on(workflow_id, runs_on)?)
}

#[tauri::command]
#[specta::specta]
pub async fn stop_run(state: State<'_, AppState>, run_id: i64) -> CmdResult<()> {
    Ok(state.engine()?.stop_run(run_id).await?)
}

/// Save the cluster key for workers where the person chose in the save dialog (else the
/// Downloads folder); the file's path.
#[tauri::command]
#[specta::specta]
pub async fn export_cluster_key(
    state: State<'_, AppState>,
    path: Option<String>,
) -> CmdResult<String> {
    Ok(state
        .engine()?
        .export_cluster_key(path.map(std::path::PathBuf::from))
        .await?)
}

/// Where workers reach the model gateway for agent sessions, and the workers that may.
#[tauri::command]
#[specta::specta]
pub fn worker_gateway(state: State<'_, AppState>) -> CmdResult<WorkerGateway> {
    Ok(state.engine()?.worker_gateway()?)
}

#[tauri::command]
#[specta::specta]
pub fn open_gateway_to_workers(
    state: State<'_, AppState>,
    listen: String,
) -> CmdResult<WorkerGateway> {
    Ok(state.engine()?.open_gateway_to_workers(&listen)?)
}

/// A new token for a worker, shown once.
#[tauri::command]
#[specta::specta]
pub fn make_worker_token(state: State<'_, AppState>, name: String) -> CmdResult<String> {
    Ok(state.engine()?.make_worker_token(&name)?)
}

#[tauri::command]
#[specta::specta]
pub fn forget_worker_token(state: State<'_, AppState>, name: String) -> CmdResult<WorkerGateway> {
    Ok(state.engine()?.forget_worker_token(&name)?)
}
