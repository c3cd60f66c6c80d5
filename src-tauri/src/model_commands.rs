//! Tauri commands for Settings → Models: providers, keys, tiers, budgets and today's usage.
//! Each a one-line adapter over an engine method.

use healer::llm::{
    Budgets, ConnectionTest, LocalServerStatus, Provider, ProviderInput, ProviderView,
    SteeringModelSetting, SteeringModelView, Tier, TierSetting, TierView, UsageReport,
};
use healer::secrets::KeepStatus;
use healer::store::SteeringSettings;
use healer::workflow::WorkflowSecret;
use healer::ErrorPayload;
use tauri::State;

use crate::state::AppState;

type CmdResult<T> = Result<T, ErrorPayload>;

#[tauri::command]
#[specta::specta]
pub async fn list_providers(state: State<'_, AppState>) -> CmdResult<Vec<ProviderView>> {
    Ok(state.engine()?.providers().await?)
}

#[tauri::command]
#[specta::specta]
pub fn save_provider(state: State<'_, AppState>, input: ProviderInput) -> CmdResult<Provider> {
    Ok(state.engine()?.save_provider(input)?)
}

#[tauri::command]
#[specta::specta]
pub async fn remove_provider(state: State<'_, AppState>, name: String) -> CmdResult<()> {
    Ok(state.engine()?.remove_provider(&name).await?)
}

/// Stores the key in the OS keyring; it never reaches the database or a log.
#[tauri::command]
#[specta::specta]
pub async fn set_provider_key(
    state: State<'_, AppState>,
    name: String,
    key: String,
) -> CmdResult<()> {
    Ok(state.engine()?.set_provider_key(&name, key).await?)
}

#[tauri::command]
#[specta::specta]
pub async fn forget_provider_key(state: State<'_, AppState>, name: String) -> CmdResult<()> {
    Ok(state.engine()?.forget_provider_key(&name).await?)
}

/// Whether a keyring service answers here and whether Healer's own secrets file was chosen.
#[tauri::command]
#[specta::specta]
pub async fn keep_status(state: State<'_, AppState>) -> CmdResult<KeepStatus> {
    Ok(state.engine()?.keep_status().await?)
}

/// The person accepted Healer's own secrets file (no keyring service here).
#[tauri::command]
#[specta::specta]
pub async fn choose_secrets_file(state: State<'_, AppState>) -> CmdResult<KeepStatus> {
    Ok(state.engine()?.choose_secrets_file().await?)
}

#[tauri::command]
#[specta::specta]
pub fn list_workflow_secrets(
    state: State<'_, AppState>,
    workflow_id: i64,
) -> CmdResult<Vec<WorkflowSecret>> {
    Ok(state.engine()?.workflow_secrets(workflow_id)?)
}

/// Keeps the value where provider keys are kept; it never comes back to the window.
#[tauri::command]
#[specta::specta]
pub async fn set_workflow_secret(
    state: State<'_, AppState>,
    workflow_id: i64,
    name: String,
    value: String,
) -> CmdResult<WorkflowSecret> {
    Ok(state
        .engine()?
        .set_workflow_secret(workflow_id, name, value)
        .await?)
}

#[tauri::command]
#[specta::specta]
pub async fn remove_workflow_secret(
    state: State<'_, AppState>,
    workflow_id: i64,
    name: String,
) -> CmdResult<()> {
    Ok(state
        .engine()?
        .remove_workflow_secret(workflow_id, name)
        .await?)
}

/// The provider's models, or the exact error.
#[tauri::command]
#[specta::specta]
pub async fn test_provider(state: State<'_, AppState>, name: String) -> CmdResult<ConnectionTest> {
    Ok(state.engine()?.test_provider(&name).await?)
}

#[tauri::command]
#[specta::specta]
pub async fn detect_ollama(state: State<'_, AppState>) -> CmdResult<LocalServerStatus> {
    Ok(state.engine()?.detect_ollama().await?)
}

#[tauri::command]
#[specta::specta]
pub async fn detect_llama_cpp(state: State<'_, AppState>) -> CmdResult<LocalServerStatus> {
    Ok(state.engine()?.detect_llama_cpp().await?)
}

#[tauri::command]
#[specta::specta]
pub fn list_tiers(state: State<'_, AppState>) -> CmdResult<Vec<TierView>> {
    Ok(state.engine()?.tiers()?)
}

#[tauri::command]
#[specta::specta]
pub fn set_tier(state: State<'_, AppState>, setting: TierSetting) -> CmdResult<()> {
    Ok(state.engine()?.set_tier(setting)?)
}

#[tauri::command]
#[specta::specta]
pub fn clear_tier(state: State<'_, AppState>, tier: Tier) -> CmdResult<()> {
    Ok(state.engine()?.clear_tier(tier)?)
}

#[tauri::command]
#[specta::specta]
pub fn get_budgets(state: State<'_, AppState>) -> CmdResult<Budgets> {
    Ok(state.engine()?.llm_budgets()?)
}

#[tauri::command]
#[specta::specta]
pub fn set_budgets(state: State<'_, AppState>, budgets: Budgets) -> CmdResult<()> {
    Ok(state.engine()?.set_llm_budgets(budgets)?)
}

#[tauri::command]
#[specta::specta]
pub fn usage_today(state: State<'_, AppState>) -> CmdResult<UsageReport> {
    Ok(state.engine()?.usage_today()?)
}

#[tauri::command]
#[specta::specta]
pub fn get_steering_model(state: State<'_, AppState>) -> CmdResult<SteeringModelView> {
    Ok(state.engine()?.steering_model()?)
}

#[tauri::command]
#[specta::specta]
pub fn set_steering_model(
    state: State<'_, AppState>,
    setting: Option<SteeringModelSetting>,
) -> CmdResult<()> {
    Ok(state.engine()?.set_steering_model(setting)?)
}

#[tauri::command]
#[specta::specta]
pub fn get_steering_settings(state: State<'_, AppState>) -> CmdResult<SteeringSettings> {
    Ok(state.engine()?.steering_settings()?)
}

#[tauri::command]
#[specta::specta]
pub fn set_steering_settings(
    state: State<'_, AppState>,
    settings: SteeringSettings,
) -> CmdResult<()> {
    Ok(state.engine()?.set_steering_settings(settings)?)
}
