//! The one layer through which everything in Healer that thinks talks to a model: providers
//! (OpenAI-compatible incl. Ollama, Anthropic) over real HTTP, tiers instead of model names,
//! budgets and caps, usage per task and per day, keys kept out of every file, and a bounded
//! tool-using agent loop whose every step is stored in its task's thread and published.

mod agent;
mod agent_run;
mod answer;
mod anthropic;
pub mod atif;
mod budget;
mod chat;
mod http;
mod keys;
pub mod llama_cpp;
mod local;
pub mod ollama;
mod openai;
mod provider;
pub mod settings;
pub mod sse;
pub mod steering_model;
mod thread;
mod tiers;
mod tools;
mod usage;

use std::sync::{Arc, Mutex, OnceLock};

use serde::{Deserialize, Serialize};
use tokio::sync::broadcast;

use crate::error::{Error, ErrorPayload, Result};
use crate::events::{Bus, Event};
use crate::store::Store;

pub use crate::error::{BudgetCap, LlmError};
pub use agent_run::{AgentOutcome, AgentRun, Inbox, LoopSettings, StopReason};
pub use answer::json_answer;
pub use anthropic::AnthropicClient;
pub use budget::{allowance, cost, estimate_tokens, Budgets, Spent, MIN_COMPLETION_TOKENS};
pub use chat::{
    ChatMessage, ChatReply, ChatRequest, ModelClient, OnText, ToolCall, ToolSpec, Usage,
};
use http::Connection;
pub use http::{build_client, RetrySettings};
pub use keys::{scrub, ApiKey, KeySource, Keys, KEYRING_ENV};
pub use ollama::LocalServerStatus;
pub use openai::{wants_completion_tokens, OpenAiClient};
pub use provider::{check_input, ModelPrice, Provider, ProviderInput, ProviderKind, ProviderView};
pub use steering_model::{
    SteeringModel, SteeringModelSetting, SteeringModelSource, SteeringModelView, JUDGE_MAX_TOKENS,
    STEERING_MODEL_KEY, STEERING_MODEL_RULE,
};
pub use thread::{
    MessageRole, NewMessage, Task, TaskKind, TaskStatus, TaskThread, ThreadMessage, ThreadText,
};
pub use tiers::{Tier, TierChoice, TierSetting, TierView};
pub use tools::{Rejected, Tool, ToolSet};
pub use usage::{today, TierUsage, UsageRecord, UsageReport, UsageTotals};

/// How far a live thread view may fall behind the streamed text; the stored thread is whole.
const TEXT_CAPACITY: usize = 4096;

/// What the connection test found: the models, or the exact error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct ConnectionTest {
    pub provider: String,
    pub ok: bool,
    pub models: Vec<String>,
    pub error: Option<ErrorPayload>,
    pub key: KeySource,
}

/// The model layer. Cheap to clone.
#[derive(Clone)]
pub struct Llm {
    inner: Arc<LlmInner>,
}

struct LlmInner {
    store: Store,
    bus: Bus,
    keys: Keys,
    http: OnceLock<reqwest::Client>,
    text: broadcast::Sender<ThreadText>,
    ollama_url: String,
    ollama: Mutex<Option<LocalServerStatus>>,
    llama_cpp_url: String,
    completion_limit_models: openai::CompletionLimitModels,
    unstructured: openai::UnstructuredProviders,
    known_servers: local::KnownServers,
}

/// Every provider key this process could read from its environment is redacted from now on,
/// even before (or without) a model call: a script could print it from elsewhere.
fn remember_keys_in_env(store: &Store) {
    let mut vars: Vec<String> = crate::secrets::PROVIDER_KEY_VARS
        .iter()
        .map(|v| v.to_string())
        .collect();
    if let Ok(providers) = store.list_providers() {
        vars.extend(providers.iter().filter_map(|p| p.key_var()));
    }
    for var in vars {
        if let Some(value) = crate::secrets::env_var(&var) {
            crate::secrets::remember(&value);
        }
    }
}

impl Llm {
    /// Keys from the keyring (unless `HEALER_KEYRING=off`), Healer's secrets file in `data_dir`
    /// once chosen, or the environment; Ollama where
    /// `HEALER_OLLAMA_URL` says, else on 127.0.0.1:11434.
    pub fn new(store: Store, bus: Bus, data_dir: &std::path::Path) -> Llm {
        Llm::with(store, bus, Keys::new(data_dir), ollama::base_url_from_env())
    }

    pub fn with(store: Store, bus: Bus, keys: Keys, ollama_url: String) -> Llm {
        remember_keys_in_env(&store);
        let (text, _) = broadcast::channel(TEXT_CAPACITY);
        Llm {
            inner: Arc::new(LlmInner {
                store,
                bus,
                keys,
                http: OnceLock::new(),
                text,
                ollama_url,
                ollama: Mutex::new(None),
                llama_cpp_url: llama_cpp::base_url_from_env(),
                completion_limit_models: Default::default(),
                unstructured: Default::default(),
                known_servers: Default::default(),
            }),
        }
    }

    pub fn store(&self) -> &Store {
        &self.inner.store
    }

    fn emit(&self, event: Event) -> Result<()> {
        self.inner.bus.emit(event).map(|_| ())
    }

    /// The HTTP client, built on first use (loading TLS roots costs a little).
    fn http(&self) -> Result<reqwest::Client> {
        if let Some(client) = self.inner.http.get() {
            return Ok(client.clone());
        }
        let client = http::build_client()?;
        Ok(self.inner.http.get_or_init(|| client).clone())
    }

    /// Streamed assistant text of every running loop.
    pub fn subscribe_text(&self) -> broadcast::Receiver<ThreadText> {
        self.inner.text.subscribe()
    }

    /// Where `provider`'s key comes from (blocking: may ask the keyring).
    async fn key_for(&self, provider: &Provider) -> (Option<ApiKey>, KeySource) {
        let keys = self.inner.keys.clone();
        let provider = provider.clone();
        tokio::task::spawn_blocking(move || keys.resolve(&provider))
            .await
            .unwrap_or_else(|_| (None, KeySource::Missing { var: String::new() }))
    }

    /// A client for `provider`, with its key; a provider that needs a key and has none is an
    /// error that says where to put one.
    pub async fn client_for(&self, provider: &Provider) -> Result<Box<dyn ModelClient>> {
        let (key, source) = self.key_for(provider).await;
        if let KeySource::Missing { var } = source {
            return Err(LlmError::MissingKey {
                provider: provider.name.clone(),
                env_var: var,
            }
            .into());
        }
        self.client_with(provider, key)
    }

    fn client_with(
        &self,
        provider: &Provider,
        key: Option<ApiKey>,
    ) -> Result<Box<dyn ModelClient>> {
        let http = self.http()?;
        let retry = settings::retry(&self.inner.store)?;
        let provider = provider.clone();
        Ok(match provider.kind {
            ProviderKind::Gemini => return Err(gemini_for_agents_only(&provider.name)),
            ProviderKind::Anthropic => Box::new(AnthropicClient {
                conn: Connection {
                    http,
                    provider,
                    key,
                    retry,
                },
            }),
            ProviderKind::OpenaiCompatible | ProviderKind::Ollama => Box::new(OpenAiClient {
                conn: Connection {
                    http,
                    provider,
                    key,
                    retry,
                },
                learned: self.inner.completion_limit_models.clone(),
                unstructured: self.inner.unstructured.clone(),
                known: self.inner.known_servers.clone(),
            }),
        })
    }

    /// What a call for `tier` would use now.
    pub fn resolve_tier(&self, tier: Tier) -> Result<TierChoice> {
        let store = &self.inner.store;
        Ok(tiers::resolve(
            tier,
            &store.tier_settings()?,
            &store.list_providers()?,
        )?)
    }

    pub async fn providers(&self) -> Result<Vec<ProviderView>> {
        let mut views = Vec::new();
        for provider in self.inner.store.list_providers()? {
            let (_, key) = self.key_for(&provider).await;
            views.push(ProviderView {
                key_text: key.describe(),
                provider,
                key,
            });
        }
        Ok(views)
    }

    pub fn save_provider(&self, input: &ProviderInput) -> Result<Provider> {
        settings::save_provider(&self.inner.store, input)?;
        let provider = self.inner.store.provider(input.name.trim())?;
        self.emit(Event::LlmSettingsChanged {
            what: format!("provider \u{201c}{}\u{201d} saved", provider.title),
        })?;
        Ok(provider)
    }

    /// Remove a provider, its tiers, and its key in the keyring.
    pub async fn remove_provider(&self, name: &str) -> Result<()> {
        let title = self.inner.store.provider(name).map(|p| p.title)?;
        settings::remove_provider(&self.inner.store, name)?;
        self.forget_key(name).await?;
        self.emit(Event::LlmSettingsChanged {
            what: format!("provider \u{201c}{title}\u{201d} removed"),
        })
    }

    /// Keep a provider's key in the OS keyring, or Healer's secrets file where no keyring
    /// service runs and the person chose it (never in the database).
    pub async fn set_key(&self, name: &str, key: ApiKey) -> Result<()> {
        let title = self.inner.store.provider(name)?.title;
        let keys = self.inner.keys.clone();
        let owned = name.to_string();
        let kept = tokio::task::spawn_blocking(move || keys.store(&owned, &key))
            .await
            .map_err(|e| Error::Internal(format!("the keyring task failed: {e}")))??;
        self.emit(Event::LlmSettingsChanged {
            what: match kept {
                crate::secrets::KeptIn::Keyring => {
                    format!("key of \u{201c}{title}\u{201d} kept in the OS keyring")
                }
                crate::secrets::KeptIn::File => {
                    format!("key of \u{201c}{title}\u{201d} kept in Healer's secrets file")
                }
            },
        })
    }

    /// Where secret values are kept (provider keys and workflows' secrets alike).
    pub fn keep(&self) -> crate::secrets::Keep {
        self.inner.keys.keep().clone()
    }

    pub async fn forget_key(&self, name: &str) -> Result<()> {
        let keys = self.inner.keys.clone();
        let owned = name.to_string();
        tokio::task::spawn_blocking(move || keys.forget(&owned))
            .await
            .map_err(|e| Error::Internal(format!("the keyring task failed: {e}")))??;
        Ok(())
    }

    /// A provider and its key, for an agent Healer starts with that provider: the key goes
    /// into that agent's process only. A provider that needs a key and has none is an error
    /// that says where to put one.
    pub async fn provider_with_key(&self, name: &str) -> Result<(Provider, Option<ApiKey>)> {
        let provider = self.inner.store.provider(name)?;
        let (key, source) = self.key_for(&provider).await;
        if let KeySource::Missing { var } = source {
            return Err(LlmError::MissingKey {
                provider: provider.name.clone(),
                env_var: var,
            }
            .into());
        }
        Ok((provider, key))
    }

    /// Ask the provider for its models: the list, or the exact error.
    pub async fn test_provider(&self, name: &str) -> Result<ConnectionTest> {
        let provider = self.inner.store.provider(name)?;
        let (key, source) = self.key_for(&provider).await;
        let listed = match &source {
            KeySource::Missing { var } => Err(Error::from(LlmError::MissingKey {
                provider: provider.name.clone(),
                env_var: var.clone(),
            })),
            _ => match self.client_with(&provider, key) {
                Ok(client) => client.list_models().await.map_err(Error::from),
                Err(e) => Err(e),
            },
        };
        Ok(match listed {
            Ok(models) => ConnectionTest {
                provider: provider.name,
                ok: true,
                models,
                error: None,
                key: source,
            },
            Err(e) => ConnectionTest {
                provider: provider.name,
                ok: false,
                models: vec![],
                error: Some(ErrorPayload::from(e)),
                key: source,
            },
        })
    }

    /// Look for a local Ollama server now.
    pub async fn detect_ollama(&self) -> Result<LocalServerStatus> {
        let status = ollama::detect(&self.http()?, &self.inner.ollama_url).await;
        *self.lock_ollama() = Some(status.clone());
        Ok(status)
    }

    /// What the last look for Ollama found (at start-up or since), else look now.
    pub async fn ollama_status(&self) -> Result<LocalServerStatus> {
        let known = self.lock_ollama().clone();
        match known {
            Some(status) => Ok(status),
            None => self.detect_ollama().await,
        }
    }

    /// Look for a local llama.cpp server now (Settings looks when it opens; nothing keeps
    /// what it found).
    pub async fn detect_llama_cpp(&self) -> Result<LocalServerStatus> {
        Ok(llama_cpp::detect(&self.http()?, &self.inner.llama_cpp_url).await)
    }

    fn lock_ollama(&self) -> std::sync::MutexGuard<'_, Option<LocalServerStatus>> {
        self.inner.ollama.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn tiers(&self) -> Result<Vec<TierView>> {
        settings::tier_views(&self.inner.store)
    }

    pub fn set_tier(&self, setting: &TierSetting) -> Result<()> {
        let gemini = self
            .inner
            .store
            .list_providers()?
            .into_iter()
            .any(|p| p.name == setting.provider && p.kind == ProviderKind::Gemini);
        if gemini {
            return Err(gemini_for_agents_only(&setting.provider));
        }
        self.inner.store.set_tier(setting)?;
        self.emit(Event::LlmSettingsChanged {
            what: format!(
                "{} tier → {} / {}",
                setting.tier.as_str(),
                setting.provider,
                setting.model
            ),
        })
    }

    pub fn clear_tier(&self, tier: Tier) -> Result<()> {
        self.inner.store.clear_tier(tier)?;
        self.emit(Event::LlmSettingsChanged {
            what: format!("{} tier unmapped", tier.as_str()),
        })
    }

    /// The model steering asks now: named, else the cheapest configured, else none.
    pub fn steering_model(&self) -> Result<Option<SteeringModel>> {
        steering_model::current(&self.inner.store)
    }

    /// Settings' view of the steering model, with the rule.
    pub fn steering_model_view(&self) -> Result<SteeringModelView> {
        steering_model::view(&self.inner.store)
    }

    /// Name the steering model, or (`None`) go back to the rule's choice.
    pub fn set_steering_model(&self, setting: Option<&SteeringModelSetting>) -> Result<()> {
        steering_model::set(&self.inner.store, setting)?;
        self.emit(Event::LlmSettingsChanged {
            what: match setting {
                Some(s) => format!("steering model → {} / {}", s.provider, s.model.trim()),
                None => "steering model: the cheapest configured".to_string(),
            },
        })
    }

    pub fn budgets(&self) -> Result<Budgets> {
        settings::budgets(&self.inner.store)
    }

    pub fn set_budgets(&self, budgets: &Budgets) -> Result<()> {
        settings::set_budgets(&self.inner.store, budgets)?;
        self.emit(Event::LlmSettingsChanged {
            what: "budgets changed".to_string(),
        })
    }

    pub fn usage_report(&self, day: &str) -> Result<UsageReport> {
        settings::usage_report(&self.inner.store, day)
    }

    /// Open a task whose thread a loop will fill.
    pub fn start_task(
        &self,
        kind: TaskKind,
        title: &str,
        workflow_id: Option<i64>,
    ) -> Result<Task> {
        let task = self.inner.store.insert_task(kind, title, workflow_id)?;
        self.emit(Event::TaskStarted {
            task_id: task.id,
            task_kind: kind,
            title: task.title.clone(),
        })?;
        Ok(task)
    }

    pub fn thread(&self, task_id: i64) -> Result<TaskThread> {
        self.inner.store.thread(task_id)
    }

    /// The task's thread as an ATIF-v1.7 trajectory (pretty JSON).
    pub fn export_atif(&self, task_id: i64) -> Result<String> {
        atif::export(&self.inner.store, task_id)
    }
}

/// Look for Ollama when the engine starts; Settings reads what was found
/// ([`Llm::ollama_status`]) without waiting for a probe.
pub(crate) async fn detect_ollama_at_start(llm: Llm) {
    match llm.detect_ollama().await {
        Ok(status) if status.running => tracing::info!(
            url = %status.base_url,
            models = status.models.len(),
            "Ollama found"
        ),
        Ok(status) => tracing::debug!("no Ollama: {}", status.detail.unwrap_or_default()),
        Err(e) => tracing::debug!("Ollama detection could not run: {e}"),
    }
}

/// Why Healer's own calls do not go to a Gemini API provider: it is there for Gemini CLI.
fn gemini_for_agents_only(name: &str) -> crate::error::Error {
    crate::error::Error::InvalidInput(format!(
        "\u{201c}{name}\u{201d} is a Gemini API provider, which Healer gives to Gemini CLI \
         sessions only; its own repairs need an OpenAI-compatible, Anthropic or Ollama provider"
    ))
}
