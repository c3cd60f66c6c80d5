//! One call's HTTP, shared by the three hosts: the token in the host's own header (marked
//! sensitive, so it never shows in debug output), answers read to a cap, the rate limit each
//! answer states remembered for [`Polled`], and a failed status turned into a sentence.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use reqwest::header::{HeaderName, HeaderValue, ACCEPT, AUTHORIZATION, LOCATION};
use reqwest::Method;
use serde_json::Value;
use url::Url;

use super::answer::{host_message, log_text};
use super::error::ForgeError;
use super::limits::{asked_wait, is_rate_limit, LONGEST_WAIT};
use super::{Forge, ForgeKind, Polled, Result, ANSWER_BYTES, LOG_TAIL_BYTES, POLL_EVERY};

const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// One request and its answer, body included: a host that dribbles a log forever is cut off.
const CALL_TIMEOUT: Duration = Duration::from_secs(60);
/// The most of a log read while looking for its end.
const LOG_READ_BYTES: usize = 32 * 1024 * 1024;

/// The headers every GitHub request carries: its JSON media type and the API version these
/// wire formats were written against.
const GITHUB_ACCEPT: &str = "application/vnd.github+json";
const GITHUB_API_VERSION: &str = "2022-11-28";

/// One use of the API with one token: a pull request opened, or one poll.
pub(super) struct Call<'a> {
    pub forge: &'a Forge,
    token: String,
    auth: (HeaderName, HeaderValue),
    http: reqwest::Client,
    /// The longest wait any answer of this call asked for, in milliseconds.
    asked_ms: AtomicU64,
}

/// An answer as read: the status, the body (whole up to [`ANSWER_BYTES`], or a log's tail).
pub(super) struct Reply {
    pub status: u16,
    pub body: Vec<u8>,
    /// The body went past [`ANSWER_BYTES`] and was not read whole.
    too_large: bool,
    /// Where a redirect that was not followed points.
    location: Option<Url>,
    /// How long a rate limit asks to wait (429, or 403 from GitHub), when it is one.
    limited: Option<Duration>,
}

/// How a body is read.
#[derive(Clone, Copy)]
enum Read {
    /// Whole, up to [`ANSWER_BYTES`].
    Whole,
    /// Its last [`LOG_TAIL_BYTES`], reading no more than [`LOG_READ_BYTES`].
    Tail,
}

impl<'a> Call<'a> {
    pub fn new(forge: &'a Forge, token: &str) -> Result<Call<'a>> {
        let host = forge.kind.name();
        let token = token.trim().to_string();
        if token.is_empty() {
            return Err(ForgeError::Setup(format!(
                "Healer has no token for {host}: add one for {} in the project's settings",
                forge.repo_path
            )));
        }
        let auth = match forge.kind {
            ForgeKind::GitHub => (AUTHORIZATION, format!("Bearer {token}")),
            ForgeKind::GitLab => (HeaderName::from_static("private-token"), token.clone()),
            ForgeKind::Forgejo => (AUTHORIZATION, format!("token {token}")),
        };
        let mut value = HeaderValue::from_str(&auth.1).map_err(|_| {
            ForgeError::Setup(format!(
                "the token for {host} has characters a token cannot have (a line break?): \
                 paste it again in the project's settings"
            ))
        })?;
        value.set_sensitive(true);
        let http = reqwest::Client::builder()
            .connect_timeout(CONNECT_TIMEOUT)
            .timeout(CALL_TIMEOUT)
            .user_agent(concat!("healer/", env!("CARGO_PKG_VERSION")))
            .redirect(same_origin_redirects())
            .build()
            .map_err(|e| ForgeError::Setup(format!("Healer could not set up HTTP: {e}")))?;
        Ok(Call {
            forge,
            token,
            auth: (auth.0, value),
            http,
            asked_ms: AtomicU64::new(0),
        })
    }

    pub fn host(&self) -> &'static str {
        self.forge.kind.name()
    }

    pub fn repo(&self) -> &str {
        &self.forge.repo_path
    }

    /// `value`, with the wait the answers so far asked for.
    pub fn polled<T>(&self, value: T) -> Polled<T> {
        let asked = Duration::from_millis(self.asked_ms.load(Ordering::Relaxed));
        Polled {
            value,
            wait_at_least: asked.max(POLL_EVERY),
        }
    }

    /// The API's URL for `segments`, each percent-encoded (a GitLab project path's '/'
    /// included, as its API wants: `group%2Fsub%2Frepo`).
    pub fn endpoint(&self, segments: &[&str]) -> Result<Url> {
        let mut url = self.forge.api_base.clone();
        url.set_query(None);
        url.set_fragment(None);
        match url.path_segments_mut() {
            Ok(mut path) => {
                path.pop_if_empty().extend(segments);
            }
            Err(()) => {
                return Err(ForgeError::Setup(format!(
                    "the API address {} cannot have paths under it",
                    self.forge.api_base
                )))
            }
        }
        Ok(url)
    }

    /// A GET whose JSON answer is wanted; `what` names what a 404 means is missing.
    pub async fn get_json(&self, url: Url, what: &str) -> Result<Value> {
        let reply = self
            .exchange(Method::GET, url, None, true, Read::Whole)
            .await?;
        self.json(reply, what)
    }

    /// A request with a JSON body, its answer returned whatever its status, for the caller
    /// to look at first (a 422 that means "it exists already").
    pub async fn send_json(&self, method: Method, url: Url, body: &Value) -> Result<Reply> {
        self.exchange(method, url, Some(body), true, Read::Whole)
            .await
    }

    /// The JSON of a successful `reply`, else its failure as a sentence.
    pub fn json(&self, reply: Reply, what: &str) -> Result<Value> {
        if !(200..300).contains(&reply.status) {
            return Err(self.failure(&reply, what));
        }
        if reply.too_large {
            return Err(self.bad_answer(format!(
                "it is larger than the {} MiB Healer reads",
                ANSWER_BYTES / (1024 * 1024)
            )));
        }
        serde_json::from_slice(&reply.body)
            .map_err(|_| self.bad_answer("it is not JSON".to_string()))
    }

    /// The end of a log at `url`: asked with the token; a redirect elsewhere (GitHub sends
    /// logs from its storage, with a signed address) is followed without it. `None` when the
    /// host has none to give (expired, not allowed): a missing log never fails a poll.
    pub async fn log_tail(&self, url: Url) -> Option<String> {
        let reply = self
            .exchange(Method::GET, url, None, true, Read::Tail)
            .await
            .ok()?;
        let reply = match (reply.status, reply.location.clone()) {
            // Only to a signed https address (or the host itself, or plain http when the host's
            // own API is plain http): an https host's answer does not send Healer to a
            // plain-http service on the person's network.
            (300..=399, Some(elsewhere))
                if elsewhere.scheme() == "https"
                    || elsewhere.scheme() == self.forge.api_base.scheme()
                    || elsewhere.host_str() == self.forge.api_base.host_str() =>
            {
                self.exchange(Method::GET, elsewhere, None, false, Read::Tail)
                    .await
                    .ok()?
            }
            _ => reply,
        };
        if !(200..300).contains(&reply.status) {
            tracing::debug!(
                host = self.host(),
                status = reply.status,
                "a failed check's log was not given"
            );
            return None;
        }
        let text = log_text(&reply.body, |t| self.scrub(t));
        if text.trim().is_empty() {
            return None;
        }
        if !reply.too_large {
            return Some(text);
        }
        // The end shown is not the log's own end: say so, within the bound.
        let note = format!(
            "[the log is longer than the {} MiB Healer reads: this is the end of its beginning]\n",
            LOG_READ_BYTES / (1024 * 1024)
        );
        let room = LOG_TAIL_BYTES.saturating_sub(note.len());
        Some(format!("{note}{}", super::answer::tail(&text, room)))
    }

    /// `text` without the token, and without any secret Healer knows.
    pub fn scrub(&self, text: &str) -> String {
        let text = text.replace(self.token.as_str(), crate::secrets::REDACTED);
        crate::secrets::redact_owned(text)
    }

    pub fn bad_answer(&self, detail: String) -> ForgeError {
        ForgeError::BadAnswer {
            host: self.host(),
            repo: self.repo().to_string(),
            detail,
        }
    }

    /// A failed status as a sentence; `what` names what a 404 means is missing.
    pub fn failure(&self, reply: &Reply, what: &str) -> ForgeError {
        let host = self.host();
        let repo = self.repo().to_string();
        if let Some(wait) = reply.limited {
            return ForgeError::RateLimited { host, repo, wait };
        }
        let detail = host_message(&reply.body).map(|m| self.scrub(&m));
        let status = reply.status;
        match status {
            401 | 403 => ForgeError::Refused {
                host,
                repo,
                status,
                detail,
            },
            404 => ForgeError::NotFound {
                host,
                what: what.to_string(),
            },
            500..=599 => ForgeError::HostFailed {
                host,
                repo,
                status,
                detail,
            },
            _ => ForgeError::Rejected {
                host,
                repo,
                status,
                detail,
            },
        }
    }

    async fn exchange(
        &self,
        method: Method,
        url: Url,
        body: Option<&Value>,
        authorised: bool,
        read: Read,
    ) -> Result<Reply> {
        let mut request = self.http.request(method, url.clone());
        if authorised {
            request = request.header(self.auth.0.clone(), self.auth.1.clone());
            request = match self.forge.kind {
                ForgeKind::GitHub => request
                    .header(ACCEPT, GITHUB_ACCEPT)
                    .header("x-github-api-version", GITHUB_API_VERSION),
                ForgeKind::GitLab | ForgeKind::Forgejo => {
                    request.header(ACCEPT, "application/json")
                }
            };
        }
        if let Some(body) = body {
            request = request.json(body);
        }
        let mut response = request.send().await.map_err(|e| self.unreachable(&e))?;
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let (body, too_large) = match read {
            Read::Whole => read_capped(&mut response, ANSWER_BYTES).await,
            Read::Tail => read_tail(&mut response).await,
        }
        .map_err(|e| self.unreachable(&e))?;
        let asked = asked_wait(&headers, SystemTime::now());
        if let Some(wait) = asked {
            let ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX);
            self.asked_ms.fetch_max(ms, Ordering::Relaxed);
        }
        let limited = is_rate_limit(status, &headers, &body).then(|| {
            asked
                .filter(|w| !w.is_zero())
                .unwrap_or(POLL_EVERY)
                .min(LONGEST_WAIT)
        });
        let location = headers
            .get(LOCATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|to| url.join(to).ok());
        Ok(Reply {
            status,
            body,
            too_large,
            location,
            limited,
        })
    }

    fn unreachable(&self, e: &reqwest::Error) -> ForgeError {
        let api = &self.forge.api_base;
        let api_host = match (api.host_str(), api.port()) {
            (Some(h), Some(p)) => format!("{h}:{p}"),
            (Some(h), None) => h.to_string(),
            _ => api.to_string(),
        };
        ForgeError::Unreachable {
            host: self.host(),
            api_host,
            detail: why_no_answer(e),
        }
    }
}

/// A redirect is followed only to the same scheme, host and port: GitLab's `PRIVATE-TOKEN`
/// header would go with it anywhere else. GitHub moves a renamed repository's API within
/// api.github.com, so that one is followed.
fn same_origin_redirects() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let same = attempt
            .previous()
            .first()
            .is_some_and(|first| first.origin() == attempt.url().origin());
        if same && attempt.previous().len() <= 5 {
            attempt.follow()
        } else {
            attempt.stop()
        }
    })
}

/// The body up to `cap` bytes, and whether there was more.
async fn read_capped(
    response: &mut reqwest::Response,
    cap: usize,
) -> std::result::Result<(Vec<u8>, bool), reqwest::Error> {
    if response
        .content_length()
        .is_some_and(|n| n > u64::try_from(cap).unwrap_or(u64::MAX))
    {
        return Ok((Vec::new(), true));
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await? {
        let room = cap - body.len();
        if chunk.len() > room {
            body.extend_from_slice(&chunk[..room]);
            return Ok((body, true));
        }
        body.extend_from_slice(&chunk);
    }
    Ok((body, false))
}

/// The last [`LOG_TAIL_BYTES`] of the body, reading at most [`LOG_READ_BYTES`] (then the
/// tail is of what was read, and the flag says so).
async fn read_tail(
    response: &mut reqwest::Response,
) -> std::result::Result<(Vec<u8>, bool), reqwest::Error> {
    let mut tail: Vec<u8> = Vec::new();
    let mut read = 0usize;
    while let Some(chunk) = response.chunk().await? {
        read = read.saturating_add(chunk.len());
        tail.extend_from_slice(&chunk);
        if tail.len() > 2 * LOG_TAIL_BYTES {
            tail.drain(..tail.len() - LOG_TAIL_BYTES);
        }
        if read >= LOG_READ_BYTES {
            break;
        }
    }
    if tail.len() > LOG_TAIL_BYTES {
        tail.drain(..tail.len() - LOG_TAIL_BYTES);
    }
    Ok((tail, read >= LOG_READ_BYTES))
}

/// Why no answer came, in a few words (the chain of causes is for the log).
fn why_no_answer(e: &reqwest::Error) -> String {
    let mut chain = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(cause) = source {
        chain.push_str(": ");
        chain.push_str(&cause.to_string());
        source = cause.source();
    }
    tracing::debug!(error = %chain, "a forge call got no answer");
    let chain = chain.to_ascii_lowercase();
    let has = |words: &[&str]| words.iter().any(|w| chain.contains(w));
    if has(&["connection refused"]) {
        "the connection was refused".to_string()
    } else if has(&["dns error", "failed to lookup", "name or service not known"]) {
        "its name does not resolve".to_string()
    } else if e.is_timeout() || has(&["timed out"]) {
        format!(
            "it did not answer within {} seconds",
            CALL_TIMEOUT.as_secs()
        )
    } else if has(&["certificate", "tls", "handshake"]) {
        "its secure connection could not be checked".to_string()
    } else if e.is_body() || e.is_decode() {
        "the answer broke off".to_string()
    } else {
        "the connection failed".to_string()
    }
}
