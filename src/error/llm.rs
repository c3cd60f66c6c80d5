//! What can go wrong with a model call, typed so that callers can decide: retry, pause and ask,
//! or tell the person what to fix. No variant ever holds a key: texts that come back from a
//! provider are scrubbed of it before they are put in one (see `scrub` in `llm/keys.rs`).
//!
//! These live with the engine's errors, which wrap them, so that the bottom layer needs nothing
//! above it; `llm` re-exports them.

use serde::{Deserialize, Serialize};

use super::ErrorCode;

/// Which budget a refused call would have crossed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum BudgetCap {
    /// The total tokens of one task.
    Task,
    /// The total tokens of today, across tasks.
    DayTokens,
    /// The total cost of today, across tasks (priced models only).
    DayCost,
}

impl BudgetCap {
    pub fn as_str(self) -> &'static str {
        match self {
            BudgetCap::Task => "task",
            BudgetCap::DayTokens => "day_tokens",
            BudgetCap::DayCost => "day_cost",
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            BudgetCap::Task => "the per-task token cap",
            BudgetCap::DayTokens => "the daily token cap",
            BudgetCap::DayCost => "the daily cost cap",
        }
    }
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LlmError {
    #[error("{provider} refused the key (HTTP {status}: {detail}). Set a valid key in Settings → Models, or in the environment variable the provider names")]
    Auth {
        provider: String,
        status: u16,
        detail: String,
    },

    #[error("{provider}: not found (HTTP 404: {detail}). Check the provider's address and the model name")]
    NotFound { provider: String, detail: String },

    #[error("{provider} is rate limiting Healer (HTTP 429 after {attempts} attempt(s){}): {detail}", wait_hint(*retry_after_secs))]
    RateLimited {
        provider: String,
        attempts: u32,
        retry_after_secs: Option<u64>,
        detail: String,
    },

    #[error("{provider} failed (HTTP {status} after {attempts} attempt(s)): {detail}")]
    Server {
        provider: String,
        status: u16,
        attempts: u32,
        detail: String,
    },

    #[error("{provider}: the conversation is longer than {model} can read ({detail}). Use a tier whose model has a larger context, or give it less to read")]
    ContextLength {
        provider: String,
        model: String,
        detail: String,
    },

    #[error("{provider} refused the request (HTTP {status}): {detail}")]
    Rejected {
        provider: String,
        status: u16,
        detail: String,
    },

    #[error("cannot reach {provider} at {url} after {attempts} attempt(s): {detail}")]
    Network {
        provider: String,
        url: String,
        attempts: u32,
        detail: String,
    },

    /// Connected, then nothing more came: a server that hangs, or one that closed the
    /// connection in the middle of an answer. Not "cannot reach": it was reached.
    #[error("{provider} stopped answering ({detail})")]
    Stalled { provider: String, detail: String },

    #[error("{provider}'s answer could not be read: {detail}")]
    BadResponse { provider: String, detail: String },

    #[error(
        "no model is set up: add a provider and choose a model for a tier in Settings → Models"
    )]
    NoModelConfigured,

    #[error("budget exceeded: {} ({limit}; {used} used, this call needs up to {needed}). The call was not made: raise the cap in Settings → Models → Budgets, or wait", cap.describe())]
    BudgetExceeded {
        cap: BudgetCap,
        /// The cap, in its unit ("20000 tokens", "$5.00").
        limit: String,
        used: String,
        needed: String,
    },

    #[error("{provider} needs a key and none was found: set it in Settings → Models, or export {env_var}")]
    MissingKey { provider: String, env_var: String },

    /// A server at home, asked without a key, wants one.
    #[error("{provider} asks for a key and none is set for it: set one in Settings → Models (a key from the environment is read only from a variable named for this provider)")]
    KeyAsked { provider: String },

    #[error("the OS keyring cannot be used: {0}")]
    Keyring(String),

    #[error("this computer has no keyring service, so the key cannot be kept there: keep it in Healer's own secrets file (Settings → Models), or put it in the provider's environment variable and restart Healer")]
    NoKeyring,
}

fn wait_hint(secs: Option<u64>) -> String {
    match secs {
        Some(s) => format!("; it asked to wait {s}s"),
        None => String::new(),
    }
}

impl LlmError {
    /// The provider is down, overloaded or hanging: the request itself was fine and may well
    /// work later. A repair waits for such a provider instead of giving up on the error.
    pub fn is_outage(&self) -> bool {
        matches!(
            self,
            LlmError::RateLimited { .. }
                | LlmError::Server { .. }
                | LlmError::Network { .. }
                | LlmError::Stalled { .. }
        )
    }

    /// The provider named in the error, when it is the provider's doing.
    pub fn provider(&self) -> Option<&str> {
        match self {
            LlmError::Auth { provider, .. }
            | LlmError::NotFound { provider, .. }
            | LlmError::RateLimited { provider, .. }
            | LlmError::Server { provider, .. }
            | LlmError::ContextLength { provider, .. }
            | LlmError::Rejected { provider, .. }
            | LlmError::Network { provider, .. }
            | LlmError::Stalled { provider, .. }
            | LlmError::BadResponse { provider, .. }
            | LlmError::MissingKey { provider, .. }
            | LlmError::KeyAsked { provider } => Some(provider),
            _ => None,
        }
    }

    pub fn code(&self) -> ErrorCode {
        match self {
            LlmError::Auth { .. } => ErrorCode::ModelAuth,
            LlmError::NotFound { .. } => ErrorCode::ModelNotFound,
            LlmError::RateLimited { .. } => ErrorCode::ModelRateLimited,
            LlmError::Server { .. } => ErrorCode::ModelServer,
            LlmError::ContextLength { .. } => ErrorCode::ModelContextLength,
            LlmError::Rejected { .. } => ErrorCode::ModelRejected,
            LlmError::Network { .. } => ErrorCode::ModelNetwork,
            LlmError::Stalled { .. } => ErrorCode::ModelStalled,
            LlmError::BadResponse { .. } => ErrorCode::ModelBadResponse,
            LlmError::NoModelConfigured => ErrorCode::NoModelConfigured,
            LlmError::BudgetExceeded { .. } => ErrorCode::BudgetExceeded,
            LlmError::MissingKey { .. } | LlmError::KeyAsked { .. } => ErrorCode::MissingKey,
            LlmError::Keyring(_) => ErrorCode::Keyring,
            LlmError::NoKeyring => ErrorCode::NoKeyring,
        }
    }
}
