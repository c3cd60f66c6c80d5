//! A local Ollama server: found at start-up and from Settings, so a person with a local model
//! needs no key. Its models come from `/api/tags`; chat goes through its OpenAI-compatible /v1.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Where Ollama listens unless told otherwise.
pub const DEFAULT_URL: &str = "http://127.0.0.1:11434";

/// Looks elsewhere for Ollama (another port, a test's scripted server).
pub const OLLAMA_URL_ENV: &str = "HEALER_OLLAMA_URL";

/// How long detection waits: a local server answers at once or is not there.
const DETECT_TIMEOUT: Duration = Duration::from_secs(2);

/// What detection found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct LocalServerStatus {
    pub base_url: String,
    pub running: bool,
    pub models: Vec<String>,
    /// Why it is not running, or what went wrong reading its models.
    pub detail: Option<String>,
}

/// `HEALER_OLLAMA_URL`, else the default.
pub fn base_url_from_env() -> String {
    url_from_env(OLLAMA_URL_ENV, DEFAULT_URL)
}

/// A server's address from `var`, else `default`.
pub(crate) fn url_from_env(var: &str, default: &str) -> String {
    std::env::var(var)
        .ok()
        .filter(|v| !v.trim().is_empty())
        .unwrap_or_else(|| default.to_string())
}

/// Ask `base_url` for its models.
pub async fn detect(http: &reqwest::Client, base_url: &str) -> LocalServerStatus {
    match tokio::time::timeout(DETECT_TIMEOUT, list_models(http, base_url)).await {
        Ok(Ok(models)) => LocalServerStatus {
            base_url: base_url.to_string(),
            running: true,
            models,
            detail: None,
        },
        Ok(Err(detail)) => LocalServerStatus {
            base_url: base_url.to_string(),
            running: false,
            models: vec![],
            detail: Some(detail),
        },
        Err(_) => LocalServerStatus {
            base_url: base_url.to_string(),
            running: false,
            models: vec![],
            detail: Some(format!(
                "no answer from {base_url} within {}s",
                DETECT_TIMEOUT.as_secs()
            )),
        },
    }
}

/// The model names `/api/tags` lists; the error is a sentence.
pub async fn list_models(http: &reqwest::Client, base_url: &str) -> Result<Vec<String>, String> {
    let url = format!("{}/api/tags", base_url.trim_end_matches('/'));
    let mut response = http
        .get(&url)
        .send()
        .await
        .map_err(|e| format!("no Ollama at {base_url} ({})", root_cause(&e)))?;
    if !response.status().is_success() {
        return Err(format!(
            "{url} answered HTTP {}: not an Ollama server?",
            response.status().as_u16()
        ));
    }
    // A list of models is kilobytes: a server sending more is not Ollama.
    const MAX_LIST_BYTES: usize = 4 << 20;
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| format!("{url} broke off its model list ({})", root_cause(&e)))?
    {
        if body.len() + chunk.len() > MAX_LIST_BYTES {
            return Err(format!("{url} answered with more than a model list"));
        }
        body.extend_from_slice(&chunk);
    }
    let value: Value = serde_json::from_slice(&body)
        .map_err(|e| format!("{url} did not answer with Ollama's model list: {e}"))?;
    let models = value
        .get("models")
        .and_then(Value::as_array)
        .ok_or_else(|| format!("{url} answered without a \"models\" list"))?;
    Ok(super::local::listed_names(models.iter().filter_map(|m| {
        m.get("name")
            .or_else(|| m.get("model"))
            .and_then(Value::as_str)
    })))
}

fn root_cause(e: &reqwest::Error) -> String {
    let mut cause: &dyn std::error::Error = e;
    while let Some(next) = cause.source() {
        cause = next;
    }
    crate::error::without_os_error_numbers(&cause.to_string())
}
