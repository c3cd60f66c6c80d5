//! The HTTP part both clients share: one reqwest client (rustls), sending with retries on 429
//! and 5xx (honouring Retry-After), and turning a failed status into a typed error.

use std::time::Duration;

use rand::Rng;
use reqwest::header::HeaderMap;
use serde::{Deserialize, Serialize};

use super::keys::{scrub, ApiKey};
use super::provider::Provider;
use super::sse::{SseEvent, SseParser};
use crate::error::LlmError;

/// How long connecting to a provider may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a provider may stay silent in the middle of an answer.
const READ_TIMEOUT: Duration = Duration::from_secs(120);
/// The largest answer read as one JSON document (the streamed ones are cut by what the model
/// may write; see `chat::Allowance`).
const MAX_JSON_BYTES: usize = 8 << 20;
/// How much of an error body is kept in a message.
const DETAIL_CHARS: usize = 300;

/// Retries of one model call: a named setting (`llm.retry`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct RetrySettings {
    /// Attempts in all, the first included.
    pub max_attempts: u32,
    /// The first backoff; it doubles each time (with jitter).
    pub base_delay_ms: u32,
    /// The longest wait between attempts. A Retry-After asking for more is not waited for:
    /// the call fails as rate limited, saying how long the provider asked.
    pub max_delay_ms: u32,
}

impl Default for RetrySettings {
    fn default() -> Self {
        RetrySettings {
            max_attempts: 4,
            base_delay_ms: 500,
            max_delay_ms: 30_000,
        }
    }
}

pub fn build_client() -> Result<reqwest::Client, LlmError> {
    reqwest::Client::builder()
        .connect_timeout(CONNECT_TIMEOUT)
        .read_timeout(READ_TIMEOUT)
        .user_agent(concat!("healer/", env!("CARGO_PKG_VERSION")))
        // A model API answers where it is asked; a redirect would carry the key (an
        // `x-api-key` header survives one to another host) somewhere else.
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| LlmError::Network {
            provider: "(all)".to_string(),
            url: String::new(),
            attempts: 0,
            detail: format!("cannot set up HTTP: {e}"),
        })
}

/// Who is being called, for error messages and scrubbing.
/// What every provider client holds: the HTTP client, the provider, its key and the retry
/// rules. The wire formats differ; this does not.
pub struct Connection {
    pub(crate) http: reqwest::Client,
    pub(crate) provider: Provider,
    pub(crate) key: Option<ApiKey>,
    pub(crate) retry: RetrySettings,
}

impl Connection {
    pub(crate) fn caller<'a>(&'a self, model: &'a str) -> Caller<'a> {
        Caller {
            provider: &self.provider.name,
            model,
            key: self.key.as_ref(),
            // A provider that needs no key reads none from the default variable.
            key_var: if self.provider.needs_key() {
                self.provider
                    .key_env
                    .as_deref()
                    .or(self.provider.kind.default_key_env())
            } else {
                self.provider.key_env.as_deref()
            },
            retry: self.retry,
        }
    }
}

pub struct Caller<'a> {
    pub provider: &'a str,
    pub model: &'a str,
    pub key: Option<&'a ApiKey>,
    /// Where a key would be read from, for the error when a keyless request is refused.
    pub key_var: Option<&'a str>,
    pub retry: RetrySettings,
}

/// A JSON request body as it is sent: serialised, with every known secret redacted (the key
/// belongs in the auth header only, never in the conversation).
pub fn json_body(
    builder: reqwest::RequestBuilder,
    body: &serde_json::Value,
) -> reqwest::RequestBuilder {
    let text = crate::secrets::redact_owned(body.to_string());
    builder
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .body(text)
}

/// Send the request `build` makes until it gets a success, a failure not worth retrying, or
/// runs out of attempts. A success is returned unread (it may be a stream).
pub async fn send(
    caller: &Caller<'_>,
    url: &str,
    build: impl Fn() -> reqwest::RequestBuilder,
) -> Result<reqwest::Response, LlmError> {
    let attempts = caller.retry.max_attempts.max(1);
    let mut attempt = 0;
    loop {
        attempt += 1;
        let last = attempt >= attempts;
        tracing::debug!(provider = caller.provider, url, attempt, "model call");
        let wait = match build().send().await {
            Ok(response) if response.status().is_success() => return Ok(response),
            Ok(response) => {
                let status = response.status().as_u16();
                let asked = retry_after(response.headers());
                let body = error_body(response).await;
                let error = status_error(caller, status, &body, attempt, asked);
                if !matches!(status, 429 | 500..=599) || last {
                    return Err(error);
                }
                match asked {
                    Some(wait) if wait > max_delay(caller) => return Err(error),
                    Some(wait) => wait,
                    None => backoff(caller, attempt),
                }
            }
            Err(e) => {
                // Connected and then silent is a provider that hangs, not one out of reach.
                let error = if e.is_timeout() && !e.is_connect() {
                    stalled(caller, &e, attempt)
                } else {
                    LlmError::Network {
                        provider: caller.provider.to_string(),
                        url: shown_url(url),
                        attempts: attempt,
                        detail: scrub(&describe_reqwest(&e), caller.key),
                    }
                };
                if last || !(e.is_connect() || e.is_timeout() || e.is_request()) {
                    return Err(error);
                }
                backoff(caller, attempt)
            }
        };
        tracing::info!(
            provider = caller.provider,
            attempt,
            wait_ms = wait.as_millis() as u64,
            "model call will be retried"
        );
        tokio::time::sleep(wait).await;
    }
}

/// Read a streamed answer, handing each event to `on_event` until it returns `Ok(true)` (the
/// stream's own end) or the body ends.
pub async fn read_events(
    caller: &Caller<'_>,
    mut response: reqwest::Response,
    mut on_event: impl FnMut(SseEvent) -> Result<bool, LlmError>,
) -> Result<(), LlmError> {
    let mut parser = SseParser::default();
    loop {
        let chunk = response.chunk().await.map_err(|e| stalled(caller, &e, 1))?;
        let Some(chunk) = chunk else {
            if let Some(event) = parser.finish() {
                on_event(event)?;
            }
            return Ok(());
        };
        let events = parser
            .feed(&chunk)
            .map_err(|detail| bad_response(caller, detail))?;
        for event in events {
            if on_event(event)? {
                return Ok(());
            }
        }
    }
}

/// Whether a success is a stream of events (else one JSON document).
pub fn is_event_stream(response: &reqwest::Response) -> bool {
    response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"))
}

/// Read a whole JSON answer.
pub async fn read_json(
    caller: &Caller<'_>,
    mut response: reqwest::Response,
) -> Result<serde_json::Value, LlmError> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| stalled(caller, &e, 1))? {
        if body.len() + chunk.len() > MAX_JSON_BYTES {
            return Err(bad_response(
                caller,
                format!(
                    "the answer is larger than {} MB; the rest was not read",
                    MAX_JSON_BYTES >> 20
                ),
            ));
        }
        body.extend_from_slice(&chunk);
    }
    let text = String::from_utf8_lossy(&body);
    serde_json::from_str(&text).map_err(|e| {
        bad_response(
            caller,
            format!("not JSON ({e}): {}", shorten(&text, DETAIL_CHARS)),
        )
    })
}

/// The first bytes of an error's body: enough for any provider's message, and a server that
/// sends megabytes with its error is not read further.
async fn error_body(mut response: reqwest::Response) -> String {
    const MAX_ERROR_BYTES: usize = 64 * 1024;
    let mut body = Vec::new();
    while let Ok(Some(chunk)) = response.chunk().await {
        let room = MAX_ERROR_BYTES - body.len();
        body.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if body.len() >= MAX_ERROR_BYTES {
            break;
        }
    }
    String::from_utf8_lossy(&body).into_owned()
}

/// Parse one streamed event's JSON.
pub fn event_json(caller: &Caller<'_>, data: &str) -> Result<serde_json::Value, LlmError> {
    serde_json::from_str(data).map_err(|e| {
        bad_response(
            caller,
            format!("a streamed event is not JSON ({e}): {}", shorten(data, 120)),
        )
    })
}

pub fn bad_response(caller: &Caller<'_>, detail: impl AsRef<str>) -> LlmError {
    LlmError::BadResponse {
        provider: caller.provider.to_string(),
        // A provider writes what it likes here (a whole event of megabytes): a line of it.
        detail: shorten(&scrub(detail.as_ref(), caller.key), DETAIL_CHARS),
    }
}

fn max_delay(caller: &Caller<'_>) -> Duration {
    Duration::from_millis(u64::from(caller.retry.max_delay_ms))
}

fn backoff(caller: &Caller<'_>, attempt: u32) -> Duration {
    let base = u64::from(caller.retry.base_delay_ms);
    let exp = base.saturating_mul(1u64 << attempt.saturating_sub(1).min(16));
    // Up to a quarter more, so that many callers do not retry in step.
    let jitter = rand::rng().random_range(0..=exp / 4);
    Duration::from_millis(exp.saturating_add(jitter)).min(max_delay(caller))
}

/// `retry-after-ms` (OpenAI), else `retry-after` in seconds or as an HTTP date.
pub fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let text = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    if let Some(ms) = text("retry-after-ms").and_then(|v| v.parse::<f64>().ok()) {
        return (ms.is_finite() && ms >= 0.0).then(|| Duration::from_millis(ms as u64));
    }
    let value = text("retry-after")?;
    if let Ok(secs) = value.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs));
    }
    let at = chrono::DateTime::parse_from_rfc2822(value).ok()?;
    let wait = at.signed_duration_since(chrono::Utc::now());
    Some(wait.to_std().unwrap_or(Duration::ZERO))
}

/// The typed error for a failed status; `body` is the provider's error text.
pub fn status_error(
    caller: &Caller<'_>,
    status: u16,
    body: &str,
    attempts: u32,
    asked: Option<Duration>,
) -> LlmError {
    let detail = scrub(&error_detail(body), caller.key);
    let provider = caller.provider.to_string();
    if is_context_length(body) {
        return LlmError::ContextLength {
            provider,
            model: caller.model.to_string(),
            detail,
        };
    }
    match status {
        // A server at home, tried without a key, wants one after all.
        401 if caller.key.is_none() => match caller.key_var {
            Some(var) => LlmError::MissingKey {
                provider,
                env_var: var.to_string(),
            },
            None => LlmError::KeyAsked { provider },
        },
        401 | 403 => LlmError::Auth {
            provider,
            status,
            detail,
        },
        404 => LlmError::NotFound { provider, detail },
        429 => LlmError::RateLimited {
            provider,
            attempts,
            retry_after_secs: asked.map(|d| d.as_secs_f64().ceil() as u64),
            detail,
        },
        500..=599 => LlmError::Server {
            provider,
            status,
            attempts,
            detail,
        },
        _ => LlmError::Rejected {
            provider,
            status,
            detail,
        },
    }
}

/// The message inside `{"error": {"message": …}}` (both formats), else the body, shortened.
fn error_detail(body: &str) -> String {
    let parsed: Option<serde_json::Value> = serde_json::from_str(body).ok();
    let message = parsed.as_ref().and_then(|v| {
        v.pointer("/error/message")
            .or_else(|| v.get("error"))
            .or_else(|| v.get("message"))
            .and_then(|m| m.as_str())
            .map(str::to_string)
    });
    if message.is_none() && looks_like_a_web_page(body) {
        // A whole HTML page (a wrong address, a proxy's error page) says nothing in a sentence.
        return match page_title(body) {
            Some(title) => format!(
                "the server answered with a web page (\u{201c}{title}\u{201d}), not a model's answer"
            ),
            None => "the server answered with a web page, not a model's answer".to_string(),
        };
    }
    let text = message.unwrap_or_else(|| body.trim().to_string());
    if text.is_empty() {
        return "no details given".to_string();
    }
    shorten(&text, DETAIL_CHARS)
}

fn looks_like_a_web_page(body: &str) -> bool {
    let start: String = body.trim_start().chars().take(200).collect();
    let lower = start.to_ascii_lowercase();
    lower.starts_with("<!doctype html") || lower.starts_with("<html") || lower.contains("<html")
}

/// The text of a page's `<title>`, shortened.
fn page_title(body: &str) -> Option<String> {
    let lower = body.to_ascii_lowercase();
    let start = lower.find("<title")?;
    let open_end = start + lower[start..].find('>')? + 1;
    let close = open_end + lower[open_end..].find("</title")?;
    let title = body
        .get(open_end..close)?
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    (!title.is_empty()).then(|| shorten(&title, 80))
}

pub fn shorten(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

/// Providers word it differently: OpenAI's code, Anthropic's "prompt is too long", the
/// servers' "maximum context length", llama.cpp's "the request exceeds the available context
/// size" (its type `exceed_context_size_error`), Ollama's "input length exceeds".
fn is_context_length(body: &str) -> bool {
    let lower = body.to_ascii_lowercase();
    [
        "context_length_exceeded",
        "maximum context length",
        "context length",
        "context window",
        "prompt is too long",
        "exceeds the available context size",
        "exceed_context_size",
        "input length exceeds",
    ]
    .iter()
    .any(|needle| lower.contains(needle))
}

/// An address as an error says it: without a login or a query, where a secret may sit.
pub fn shown_url(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut parsed) => {
            // Neither fails on an http(s) address; one that cannot hold them has none.
            let _ = parsed.set_username("");
            let _ = parsed.set_password(None);
            parsed.set_query(None);
            parsed.set_fragment(None);
            parsed.to_string()
        }
        Err(_) => "the provider's address".to_string(),
    }
}

/// A provider that was reached and then went silent (`READ_TIMEOUT`) or dropped the
/// connection in the middle of its answer.
fn stalled(caller: &Caller<'_>, e: &reqwest::Error, attempts: u32) -> LlmError {
    let what = if e.is_timeout() {
        format!("nothing came for {} s", READ_TIMEOUT.as_secs())
    } else {
        format!(
            "the answer broke off: {}",
            scrub(&describe_reqwest(e), caller.key)
        )
    };
    LlmError::Stalled {
        provider: caller.provider.to_string(),
        detail: if attempts > 1 {
            format!("{what}; {attempts} attempts")
        } else {
            what
        },
    }
}

fn describe_reqwest(e: &reqwest::Error) -> String {
    // A connection that could not be made, in a sentence naming where (the chain of causes,
    // "tcp connect error: …", is for the log).
    if e.is_connect() || e.is_timeout() {
        let chain = chain_text(e).to_ascii_lowercase();
        let place = e
            .url()
            .and_then(|u| {
                u.host_str().map(|h| {
                    format!(
                        "{h}{}",
                        u.port().map(|p| format!(":{p}")).unwrap_or_default()
                    )
                })
            })
            .unwrap_or_else(|| "the address".to_string());
        if chain.contains("connection refused") {
            return format!("nothing answers at {place} (the connection was refused)");
        }
        if chain.contains("dns error") || chain.contains("failed to lookup address") {
            return format!("{place} could not be found (the name does not resolve)");
        }
        if e.is_timeout() || chain.contains("timed out") {
            return format!("{place} did not answer in time");
        }
        if chain.contains("certificate") || chain.contains("tls") {
            return format!("a secure connection to {place} could not be made (its certificate was not accepted)");
        }
    }
    crate::error::without_os_error_numbers(&chain_text(e))
}

/// reqwest's Display names the URL and the kind; the source chain says what really failed.
fn chain_text(e: &reqwest::Error) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_in_an_error_carries_no_login_and_no_query() {
        assert_eq!(
            shown_url("https://me:s3cret@llm.example:8443/v1/chat/completions?key=abc#x"),
            "https://llm.example:8443/v1/chat/completions"
        );
        assert_eq!(shown_url("not a url"), "the provider's address");
    }
    use reqwest::header::HeaderValue;

    #[test]
    fn a_web_page_for_an_answer_is_said_in_a_sentence_with_its_title() {
        let page = "<!DOCTYPE html>\n<html><head><title>404 Not\n Found</title></head><body><h1>Not Found</h1><p>The requested URL was not found on this server.</p></body></html>";
        assert_eq!(
            error_detail(page),
            "the server answered with a web page (\u{201c}404 Not Found\u{201d}), not a model's answer"
        );
        assert_eq!(
            error_detail("<html><body>Bad gateway</body></html>"),
            "the server answered with a web page, not a model's answer"
        );
        assert_eq!(
            error_detail(r#"{"error": {"message": "model not found"}}"#),
            "model not found"
        );
    }

    #[tokio::test]
    async fn a_connection_nobody_answers_is_said_with_where_not_as_a_chain_of_causes() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .expect("a free port");
        let e = reqwest::Client::new()
            .get(format!("http://127.0.0.1:{port}/v1/models"))
            .send()
            .await
            .expect_err("nothing listens there");
        assert_eq!(
            describe_reqwest(&e),
            format!("nothing answers at 127.0.0.1:{port} (the connection was refused)")
        );
    }

    #[test]
    fn retry_after_reads_milliseconds_seconds_and_dates() {
        let mut h = HeaderMap::new();
        h.insert("retry-after", HeaderValue::from_static("2"));
        assert_eq!(retry_after(&h), Some(Duration::from_secs(2)));
        h.insert("retry-after-ms", HeaderValue::from_static("150"));
        assert_eq!(retry_after(&h), Some(Duration::from_millis(150)));
        let mut h = HeaderMap::new();
        h.insert(
            "retry-after",
            HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"),
        );
        assert_eq!(retry_after(&h), Some(Duration::ZERO), "a date in the past");
    }

    #[test]
    fn statuses_become_typed_errors_and_context_length_is_recognised() {
        let caller = Caller {
            provider: "p",
            model: "m",
            key: None,
            key_var: Some("LOCAL_KEY"),
            retry: RetrySettings::default(),
        };
        let e = status_error(&caller, 401, r#"{"error":{"message":"no key"}}"#, 1, None);
        assert!(
            matches!(e, LlmError::MissingKey { ref env_var, .. } if env_var == "LOCAL_KEY"),
            "a keyless request refused asks for a key: {e:?}"
        );
        let unnamed = Caller {
            key_var: None,
            ..caller
        };
        let e = status_error(&unnamed, 401, r#"{"error":{"message":"no key"}}"#, 1, None);
        assert!(matches!(e, LlmError::KeyAsked { .. }), "{e:?}");
        assert!(!e.to_string().contains("OPENAI_API_KEY"), "{e}");
        let key = ApiKey::new("sk-local");
        let keyed = Caller {
            key: Some(&key),
            ..caller
        };
        let e = status_error(&keyed, 401, r#"{"error":{"message":"bad key"}}"#, 1, None);
        assert!(matches!(e, LlmError::Auth { ref detail, .. } if detail == "bad key"));
        // llama.cpp's own words and type (tools/server/server-common: format_error_response).
        let e = status_error(
            &caller,
            400,
            r#"{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":5000,"n_ctx":2048}}"#,
            1,
            None,
        );
        assert!(matches!(e, LlmError::ContextLength { .. }), "{e:?}");
        let e = status_error(
            &caller,
            400,
            r#"{"error":{"message":"too long","code":"context_length_exceeded"}}"#,
            1,
            None,
        );
        assert!(matches!(e, LlmError::ContextLength { .. }));
        let e = status_error(&caller, 400, "nope", 1, None);
        assert!(matches!(e, LlmError::Rejected { status: 400, .. }));
    }
}
