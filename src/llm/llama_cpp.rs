//! A local llama.cpp server (`llama-server`): found at start-up and from Settings like Ollama,
//! on its usual port, so a person who runs one needs no key and no typing. It is known by its
//! own description (`GET /props`, which only llama.cpp serves with `default_generation_settings`),
//! not by the port alone (8080 is every web server's); its model comes from its
//! OpenAI-compatible `/v1/models`, which is also where Healer talks to it.

use std::time::Duration;

use serde_json::Value;

use super::local::{listed_names, small_json};
use super::ollama::LocalServerStatus;
use super::provider::is_local_address;

/// Where `llama-server` listens unless told otherwise.
pub const DEFAULT_URL: &str = "http://127.0.0.1:8080";

/// Looks elsewhere for llama.cpp (another port, a test's server).
pub const LLAMA_CPP_URL_ENV: &str = "HEALER_LLAMA_CPP_URL";

/// How long detection waits: a local server answers at once or is not there.
const DETECT_TIMEOUT: Duration = Duration::from_secs(2);

/// `HEALER_LLAMA_CPP_URL`, else the default.
pub fn base_url_from_env() -> String {
    super::ollama::url_from_env(LLAMA_CPP_URL_ENV, DEFAULT_URL)
}

/// Ask `base_url` whether it is llama.cpp's server, and for its model.
pub async fn detect(http: &reqwest::Client, base_url: &str) -> LocalServerStatus {
    let base_url = base_url.trim_end_matches('/').to_string();
    if !is_local_address(&base_url) {
        // "Use llama.cpp" adds a provider that needs no key: only for a server at home.
        return LocalServerStatus {
            detail: Some(format!(
                "{base_url} is not on this computer or its network; add it as a provider instead"
            )),
            base_url,
            running: false,
            models: vec![],
        };
    }
    let looked = tokio::time::timeout(DETECT_TIMEOUT, models(http, &base_url)).await;
    let (running, models, detail) = match looked {
        Ok(Ok(models)) => (true, models, None),
        Ok(Err(detail)) => (false, vec![], Some(detail)),
        Err(_) => (
            false,
            vec![],
            Some(format!(
                "no answer from {base_url} within {}s",
                DETECT_TIMEOUT.as_secs()
            )),
        ),
    };
    LocalServerStatus {
        base_url,
        running,
        models,
        detail,
    }
}

/// The models a llama.cpp server at `base_url` serves; the error is a sentence.
async fn models(http: &reqwest::Client, base_url: &str) -> Result<Vec<String>, String> {
    let props = small_json(http.get(format!("{base_url}/props")))
        .await
        .map_err(|answered| {
            if answered {
                format!("{base_url} answers, but not as llama.cpp's server")
            } else {
                format!("no llama.cpp server at {base_url}")
            }
        })?;
    if props.get("default_generation_settings").is_none() {
        return Err(format!("{base_url} answers, but not as llama.cpp's server"));
    }
    let listed = small_json(http.get(format!("{base_url}/v1/models")))
        .await
        .ok();
    let mut names = listed
        .as_ref()
        .and_then(|l| l.get("data"))
        .and_then(Value::as_array)
        .map(|data| {
            listed_names(
                data.iter()
                    .filter_map(|m| m.get("id").and_then(Value::as_str)),
            )
        })
        .unwrap_or_default();
    if names.is_empty() {
        // An older server lists none: the model file it loaded names it.
        if let Some(path) = props.get("model_path").and_then(Value::as_str) {
            let file = path.rsplit(['/', '\\']).next().unwrap_or(path);
            names = listed_names(std::iter::once(file));
        }
    }
    Ok(names)
}
