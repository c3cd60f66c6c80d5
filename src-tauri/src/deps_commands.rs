//! Tauri commands for each workflow's own environment: the Dependencies tab, the packages
//! offered when a script is saved, Reinstall. Each a one-line adapter over an engine method.

use healer::deps::{Dependencies, PackageFix, ProposedPackage};
use healer::workflow::Runtime;
use healer::ErrorPayload;
use tauri::State;

use crate::state::AppState;

type CmdResult<T> = Result<T, ErrorPayload>;

/// What the workflow's active version declares, what is installed, and the last install's log.
#[tauri::command]
#[specta::specta]
pub fn get_dependencies(state: State<'_, AppState>, id: i64) -> CmdResult<Dependencies> {
    Ok(state.engine()?.dependencies(id)?)
}

/// Install the active version's packages again, into a fresh environment.
#[tauri::command]
#[specta::specta]
pub async fn reinstall_dependencies(
    state: State<'_, AppState>,
    id: i64,
) -> CmdResult<Dependencies> {
    Ok(state.engine()?.reinstall_dependencies(id).await?)
}

/// The packages `code` imports that the workflow's environment lacks (`id`: none yet, for a
/// workflow being created).
#[tauri::command]
#[specta::specta]
pub async fn propose_packages(
    state: State<'_, AppState>,
    runtime: Runtime,
    code: String,
    id: Option<i64>,
) -> CmdResult<Vec<ProposedPackage>> {
    Ok(state
        .engine()?
        .propose_packages(&runtime, &code, id)
        .await?)
}

/// Packages installed for an error signature (the Memory page).
#[tauri::command]
#[specta::specta]
pub fn list_package_fixes(
    state: State<'_, AppState>,
    signature: String,
) -> CmdResult<Vec<PackageFix>> {
    Ok(state.engine()?.package_fixes(&signature)?)
}
