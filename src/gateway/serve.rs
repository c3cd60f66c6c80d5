//! The gateway's HTTP side: each request's pass checked, only model requests let through, the
//! real key put in place of the pass, the answer streamed back as it comes while the meter
//! reads what it used.

use std::convert::Infallible;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full, Limited, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::header::{HeaderMap, HeaderName, HeaderValue, AUTHORIZATION, CONTENT_TYPE};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio_util::sync::CancellationToken;

use super::meter::Meter;
use super::{Grant, Holder, Inner};
use crate::llm::ProviderKind;

pub(super) type Body = UnsyncBoxBody<Bytes, std::io::Error>;

/// The largest request an agent may send (a long conversation with its files).
const MAX_REQUEST: usize = 64 * 1024 * 1024;

/// What may follow the provider's base path: the model endpoints agents call, nothing else of
/// the provider's API (its files, its billing) is reachable with the real key.
/// What an agent may ask of the provider, exactly (after the provider's own base path): a
/// model call (POST), or the list of models (GET). Anything else — batches, files, stored
/// completions, fine-tuned models, another method — is not passed, since the real key would
/// go with it.
const MODEL_CALLS: [&str; 8] = [
    "/v1/messages",
    "/messages",
    "/v1/messages/count_tokens",
    "/messages/count_tokens",
    "/responses",
    "/v1/responses",
    "/chat/completions",
    "/v1/chat/completions",
];
const MODEL_LISTS: [&str; 2] = ["/models", "/v1/models"];

/// Whether `method` on `rest` (the path after the provider's base path) is a model request. A
/// path with a dot segment, an encoded character or a backslash is never one: the URL library
/// would resolve it to somewhere else.
fn is_model_request(method: &hyper::Method, rest: &str, kind: ProviderKind) -> bool {
    if rest.contains('%') || rest.contains('\\') {
        return false;
    }
    if rest
        .split('/')
        .any(|segment| segment == "." || segment == "..")
    {
        return false;
    }
    // Each provider only its own API's calls: its key goes with them.
    match (method, kind) {
        (&hyper::Method::POST, ProviderKind::Gemini) => gemini_model(rest).is_some(),
        (&hyper::Method::GET, ProviderKind::Gemini) => GEMINI_LISTS.contains(&rest),
        (&hyper::Method::POST, _) => MODEL_CALLS.contains(&rest),
        (&hyper::Method::GET, _) => MODEL_LISTS.contains(&rest),
        _ => false,
    }
}

/// Gemini's model calls name the model in the path: `/v1beta/models/<model>:<method>`.
const GEMINI_METHODS: [&str; 3] = ["streamGenerateContent", "generateContent", "countTokens"];
const GEMINI_LISTS: [&str; 2] = ["/v1beta/models", "/v1/models"];

/// The model of a Gemini model call (`/v1beta/models/gemini-2.5-flash:generateContent`), when
/// `rest` is exactly one: a plain model name and one of the calls, nothing else.
fn gemini_model(rest: &str) -> Option<&str> {
    let call = rest
        .strip_prefix("/v1beta/models/")
        .or_else(|| rest.strip_prefix("/v1/models/"))?;
    let (model, method) = call.split_once(':')?;
    let plain = !model.is_empty()
        && model
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_'));
    (plain && GEMINI_METHODS.contains(&method)).then_some(model)
}

const X_API_KEY: HeaderName = HeaderName::from_static("x-api-key");
/// Google's API key header (Gemini CLI sends its key, here the session's pass, in it).
const X_GOOG_API_KEY: HeaderName = HeaderName::from_static("x-goog-api-key");

/// The header a worker's forwarder carries its token in (the gateway's listener for workers
/// lets nothing through without a token the control room made; never passed on).
pub(super) const X_HEALER_WORKER: HeaderName = HeaderName::from_static("x-healer-worker");

/// Whether a worker's token is one the control room made (the listener for workers).
pub type WorkerCheck = Arc<dyn Fn(&str) -> bool + Send + Sync>;

pub(super) async fn serve(
    listener: tokio::net::TcpListener,
    inner: Arc<Inner>,
    cancel: CancellationToken,
    workers: Option<WorkerCheck>,
) {
    loop {
        let accepted = tokio::select! {
            () = cancel.cancelled() => break,
            accepted = listener.accept() => accepted,
        };
        let Ok((stream, _)) = accepted else {
            continue;
        };
        let inner = inner.clone();
        let cancel = cancel.clone();
        let workers = workers.clone();
        let workers_listener = workers.is_some();
        tokio::spawn(async move {
            let service = service_fn(move |request: Request<Incoming>| {
                let inner = inner.clone();
                let known = match &workers {
                    None => true,
                    Some(check) => request
                        .headers()
                        .get(X_HEALER_WORKER)
                        .and_then(|v| v.to_str().ok())
                        .is_some_and(|token| check(token.trim())),
                };
                async move {
                    if !known {
                        return Ok::<_, Infallible>(refuse(
                            StatusCode::UNAUTHORIZED,
                            "authentication_error",
                            "Healer's model gateway did not recognise this worker: give it a \
                             token the control room made for it.",
                        ));
                    }
                    Ok::<_, Infallible>(handle(&inner, request, workers_listener).await)
                }
            });
            let connection = http1::Builder::new().serve_connection(TokioIo::new(stream), service);
            tokio::select! {
                () = cancel.cancelled() => {}
                _ = connection => {}
            }
        });
    }
}

/// An error in the shape both Anthropic's and OpenAI's clients read (`error.message`).
pub(super) fn refuse(status: StatusCode, kind: &str, message: &str) -> Response<Body> {
    let body = serde_json::json!({
        "type": "error",
        "error": {"type": kind, "message": message, "code": kind},
    });
    let mut response = Response::new(
        Full::new(Bytes::from(body.to_string()))
            .map_err(|never| match never {})
            .boxed_unsync(),
    );
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// The pass a request carries: as an API key (`x-api-key`, `x-goog-api-key`) or a bearer
/// token.
fn pass_of(headers: &HeaderMap) -> Option<&str> {
    for header in [X_API_KEY, X_GOOG_API_KEY] {
        if let Some(key) = headers.get(header).and_then(|v| v.to_str().ok()) {
            return Some(key.trim());
        }
    }
    headers
        .get(AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim)
}

async fn handle(inner: &Inner, request: Request<Incoming>, from_workers: bool) -> Response<Body> {
    let grant = match pass_of(request.headers()).map(|t| inner.holder(t)) {
        Some(Holder::Open(grant)) if grant.spec.for_workers == from_workers => grant,
        Some(Holder::Ended) => {
            return refuse(
                StatusCode::FORBIDDEN,
                "permission_error",
                "Healer's model gateway refused this request: the session this pass was made \
                 for has ended, and a pass is good for one session only.",
            )
        }
        _ => {
            return refuse(
                StatusCode::UNAUTHORIZED,
                "authentication_error",
                "Healer's model gateway did not recognise this request's pass: only an agent \
                 session Healer started can use it.",
            )
        }
    };
    if let Some(why) = grant.over_cap() {
        return refuse(StatusCode::FORBIDDEN, "permission_error", &why);
    }
    match forward(inner, &grant, request).await {
        Ok(response) => response,
        Err(response) => response,
    }
}

async fn forward(
    inner: &Inner,
    grant: &Arc<Grant>,
    request: Request<Incoming>,
) -> Result<Response<Body>, Response<Body>> {
    let upstream = url::Url::parse(&grant.spec.upstream).map_err(|_| {
        refuse(
            StatusCode::BAD_GATEWAY,
            "api_error",
            "the provider's address is not a URL",
        )
    })?;
    let base_path = upstream.path().trim_end_matches('/');
    let path = request.uri().path().to_string();
    let not_passed = || {
        refuse(
            StatusCode::NOT_FOUND,
            "not_found_error",
            "Healer's model gateway passes only model requests (messages, responses, chat \
             completions, the list of models) to the provider.",
        )
    };
    let allowed = path
        .strip_prefix(base_path)
        .is_some_and(|rest| is_model_request(request.method(), rest, grant.spec.kind));
    if !allowed {
        return Err(not_passed());
    }
    let mut target = upstream.clone();
    target.set_path(&path);
    target.set_query(request.uri().query());
    // Where the request really goes, once the URL library has read it, is what was allowed.
    if target.path() != path {
        return Err(not_passed());
    }
    let method = request.method().clone();
    let headers = outgoing_headers(request.headers(), grant);
    let body = Limited::new(request.into_body(), MAX_REQUEST)
        .collect()
        .await
        .map_err(|_| {
            refuse(
                StatusCode::PAYLOAD_TOO_LARGE,
                "request_too_large",
                "the request is larger than Healer's model gateway passes (64 MB)",
            )
        })?
        .to_bytes();
    let mut json = serde_json::from_slice::<serde_json::Value>(&body).ok();
    // Gemini names the model in the path, which is what the provider charges for; a `model`
    // in its body would only be what the agent says.
    let model = match grant.spec.kind {
        ProviderKind::Gemini => path
            .strip_prefix(base_path)
            .and_then(gemini_model)
            .map(str::to_string),
        _ => json
            .as_ref()
            .and_then(|v| v.get("model").and_then(|m| m.as_str()).map(str::to_string)),
    }
    .unwrap_or_default();
    // A streamed chat completion reports its usage only when asked to: it is always asked,
    // so the meter counts what the stream spent.
    let body = match json.as_mut() {
        Some(serde_json::Value::Object(fields))
            if path.ends_with("/chat/completions")
                && fields.get("stream").and_then(serde_json::Value::as_bool) == Some(true) =>
        {
            fields.insert(
                "stream_options".to_string(),
                serde_json::json!({ "include_usage": true }),
            );
            Bytes::from(serde_json::to_vec(fields).unwrap_or_else(|_| body.to_vec()))
        }
        _ => body,
    };
    let mut answer = inner
        .client
        .request(method, target.as_str())
        .headers(headers)
        .body(body)
        .send()
        .await
        .map_err(|e| {
            let said = crate::secrets::redact_owned(crate::error::without_os_error_numbers(
                &e.to_string(),
            ));
            refuse(
                StatusCode::BAD_GATEWAY,
                "api_error",
                &format!("Healer's model gateway could not reach the provider: {said}"),
            )
        })?;
    let stream = answer
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.contains("event-stream"));
    let mut response = Response::builder().status(answer.status());
    for (name, value) in answer.headers() {
        if !hop_by_hop(name) {
            response = response.header(name, value);
        }
    }
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<Frame<Bytes>, std::io::Error>>(8);
    let grant = grant.clone();
    tokio::spawn(async move {
        let mut meter = Meter::new(stream);
        loop {
            match answer.chunk().await {
                Ok(Some(chunk)) => {
                    meter.push(&chunk);
                    if tx.send(Ok(Frame::data(chunk))).await.is_err() {
                        break; // the agent went away: what came so far still counts
                    }
                }
                Ok(None) => break,
                Err(e) => {
                    let _ = tx.send(Err(std::io::Error::other(e.to_string()))).await;
                    break;
                }
            }
        }
        let usage = meter.finish();
        if usage.total() > 0 {
            grant.count(&model, &usage);
        }
    });
    let frames = futures::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|frame| (frame, rx))
    });
    response
        .body(StreamBody::new(frames).boxed_unsync())
        .map_err(|e| refuse(StatusCode::BAD_GATEWAY, "api_error", &e.to_string()))
}

/// The agent's headers as the provider gets them: its pass and anything about the connection
/// left out, the real key put in (as the provider's API wants it), no compression asked for
/// (the meter reads the answer as it passes).
fn outgoing_headers(incoming: &HeaderMap, grant: &Grant) -> HeaderMap {
    let mut headers = HeaderMap::new();
    for (name, value) in incoming {
        let dropped = hop_by_hop(name)
            || name == AUTHORIZATION
            || name == X_API_KEY
            || name == X_GOOG_API_KEY
            || name == X_HEALER_WORKER
            || name == hyper::header::HOST
            || name == hyper::header::ACCEPT_ENCODING;
        if !dropped {
            headers.append(name.clone(), value.clone());
        }
    }
    if let Some(key) = &grant.spec.key {
        let (name, value) = match grant.spec.kind {
            ProviderKind::Anthropic => (X_API_KEY, key.expose().to_string()),
            ProviderKind::Gemini => (X_GOOG_API_KEY, key.expose().to_string()),
            _ => (AUTHORIZATION, format!("Bearer {}", key.expose())),
        };
        if let Ok(mut value) = HeaderValue::from_str(&value) {
            value.set_sensitive(true);
            headers.insert(name, value);
        }
    }
    headers
}

pub(super) fn hop_by_hop(name: &HeaderName) -> bool {
    use hyper::header::{CONNECTION, CONTENT_LENGTH, TE, TRAILER, TRANSFER_ENCODING, UPGRADE};
    [
        CONNECTION,
        CONTENT_LENGTH,
        TE,
        TRAILER,
        TRANSFER_ENCODING,
        UPGRADE,
    ]
    .contains(name)
        || name.as_str() == "keep-alive"
        || name.as_str() == "proxy-connection"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gemini_provider_passes_only_gemini_model_calls_and_the_others_never_them() {
        let post = hyper::Method::POST;
        let gemini = ProviderKind::Gemini;
        for call in [
            "/v1beta/models/gemini-2.5-flash:streamGenerateContent",
            "/v1beta/models/scripted:generateContent",
            "/v1/models/gemini-2.5-pro:countTokens",
        ] {
            assert!(is_model_request(&post, call, gemini), "{call}");
            assert!(
                !is_model_request(&post, call, ProviderKind::OpenaiCompatible),
                "{call}"
            );
        }
        for not_a_call in [
            "/v1beta/models/gemini:embedContent",
            "/v1beta/files",
            "/v1beta/models/../files:generateContent",
            "/v1beta/models/a/b:generateContent",
            "/v1beta/models/:generateContent",
            "/v1beta/models/x%2F:generateContent",
            "/chat/completions",
            "/v1/messages",
        ] {
            assert!(!is_model_request(&post, not_a_call, gemini), "{not_a_call}");
        }
        assert!(is_model_request(
            &hyper::Method::GET,
            "/v1beta/models",
            gemini
        ));
        assert!(!is_model_request(
            &hyper::Method::DELETE,
            "/v1beta/models/x:generateContent",
            gemini
        ));
        assert_eq!(
            gemini_model("/v1beta/models/gemini-2.5-flash:streamGenerateContent"),
            Some("gemini-2.5-flash")
        );
    }
}
