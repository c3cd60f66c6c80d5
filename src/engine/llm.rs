//! The engine's model API: Settings (providers, keys, tiers, budgets, usage), tasks' threads,
//! and the agent loop other parts of the engine run. Each is a one-line adapter away from a
//! Tauri command.

use tokio::sync::broadcast;

use super::Handle;
use crate::error::Result;
use crate::llm::{
    AgentOutcome, AgentRun, ApiKey, Budgets, ConnectionTest, Llm, LocalServerStatus, Provider,
    ProviderInput, ProviderView, SteeringModelSetting, SteeringModelView, Task, TaskKind,
    TaskThread, ThreadText, Tier, TierChoice, TierSetting, TierView, UsageReport,
};
use crate::store::SteeringSettings;

impl Handle {
    /// The model layer itself, for engine parts that run loops.
    pub fn llm(&self) -> &Llm {
        &self.services.llm
    }

    /// Every provider with where its key comes from (keyring, environment, missing).
    pub async fn providers(&self) -> Result<Vec<ProviderView>> {
        self.services.llm.providers().await
    }

    /// Add a provider, or change the one with that name.
    pub fn save_provider(&self, input: ProviderInput) -> Result<Provider> {
        self.services.llm.save_provider(&input)
    }

    /// Remove a provider, its tier mappings and its keyring entry.
    pub async fn remove_provider(&self, name: &str) -> Result<()> {
        self.services.llm.remove_provider(name).await
    }

    /// Keep a provider's key in the OS keyring. The key goes nowhere else.
    pub async fn set_provider_key(&self, name: &str, key: String) -> Result<()> {
        self.services.llm.set_key(name, ApiKey::new(key)).await
    }

    pub async fn forget_provider_key(&self, name: &str) -> Result<()> {
        self.services.llm.forget_key(name).await
    }

    /// "Test connection": the provider's models, or the exact error.
    pub async fn test_provider(&self, name: &str) -> Result<ConnectionTest> {
        self.services.llm.test_provider(name).await
    }

    /// Look for a local Ollama server now ("Detect" in Settings).
    pub async fn detect_ollama(&self) -> Result<LocalServerStatus> {
        self.services.llm.detect_ollama().await
    }

    /// What the engine found at start-up (or since), without a new probe.
    pub async fn ollama_status(&self) -> Result<LocalServerStatus> {
        self.services.llm.ollama_status().await
    }

    /// Look for a local llama.cpp server now ("Look again" in Settings).
    pub async fn detect_llama_cpp(&self) -> Result<LocalServerStatus> {
        self.services.llm.detect_llama_cpp().await
    }

    pub fn tiers(&self) -> Result<Vec<TierView>> {
        self.services.llm.tiers()
    }

    pub fn set_tier(&self, setting: TierSetting) -> Result<()> {
        self.services.llm.set_tier(&setting)
    }

    pub fn clear_tier(&self, tier: Tier) -> Result<()> {
        self.services.llm.clear_tier(tier)
    }

    /// What a call for `tier` would use now (and whether it falls back).
    pub fn resolve_tier(&self, tier: Tier) -> Result<TierChoice> {
        self.services.llm.resolve_tier(tier)
    }

    /// The steering model: what is named, what is used now, and the rule.
    pub fn steering_model(&self) -> Result<SteeringModelView> {
        self.services.llm.steering_model_view()
    }

    /// Name the steering model, or (`None`) leave the choice to the rule.
    pub fn set_steering_model(&self, setting: Option<SteeringModelSetting>) -> Result<()> {
        self.services.llm.set_steering_model(setting.as_ref())
    }

    /// Steering's bounds: the judge's interval, the stuck limit, loop messages, own sessions.
    pub fn steering_settings(&self) -> Result<SteeringSettings> {
        self.services.store.steering_settings()
    }

    pub fn set_steering_settings(&self, settings: SteeringSettings) -> Result<()> {
        self.services.store.set_steering_settings(&settings)
    }

    pub fn llm_budgets(&self) -> Result<Budgets> {
        self.services.llm.budgets()
    }

    pub fn set_llm_budgets(&self, budgets: Budgets) -> Result<()> {
        self.services.llm.set_budgets(&budgets)
    }

    /// Today's usage and cost per tier, with the caps.
    pub fn usage_today(&self) -> Result<UsageReport> {
        self.services.llm.usage_report(&crate::llm::today())
    }

    pub fn tasks(&self, limit: u32) -> Result<Vec<Task>> {
        self.services.store.list_tasks(limit)
    }

    pub fn task_thread(&self, task_id: i64) -> Result<TaskThread> {
        self.services.llm.thread(task_id)
    }

    /// The task's thread as ATIF-v1.7 JSON.
    pub fn export_atif(&self, task_id: i64) -> Result<String> {
        self.services.llm.export_atif(task_id)
    }

    /// Assistant text as it streams, for threads shown live.
    pub fn subscribe_thread_text(&self) -> broadcast::Receiver<ThreadText> {
        self.services.llm.subscribe_text()
    }

    pub fn start_task(
        &self,
        kind: TaskKind,
        title: &str,
        workflow_id: Option<i64>,
    ) -> Result<Task> {
        self.services.llm.start_task(kind, title, workflow_id)
    }

    /// Run a bounded agent loop in a task's thread.
    pub async fn run_agent(&self, run: AgentRun) -> Result<AgentOutcome> {
        self.services.llm.run_agent(run).await
    }
}
