//! A scripted model server on 127.0.0.1 that speaks the real wire formats: OpenAI chat
//! completions and Anthropic Messages (streamed as server-sent events, or as one JSON
//! document), their model lists, and Ollama's /api/tags. It checks the key the way the real
//! services do (answering 401, and echoing the wrong key back as OpenAI does), answers each
//! chat request with the next scripted reply, and records every request it saw.
//!
//! The usage a reply reports is measured, as a provider counts it: the prompt from the size of
//! the request body, the completion from what the reply writes (about 4 characters a token;
//! [`measured`]). A scripted [`Tokens`] value only says how much of the prompt was cached.
//!
//! It runs on a thread and runtime of its own, so sync tests, async tests and the benchmark
//! can all use it; it stops when dropped.

#![allow(dead_code)]

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// One scripted answer to a chat request.
#[derive(Debug, Clone)]
pub enum Reply {
    /// A stream of server-sent events (each item one event's text, blank line included).
    Stream(Vec<String>),
    /// One JSON document, 200.
    Json(Value),
    /// Any status, with headers and a body (errors, 429 with Retry-After …).
    Status {
        status: u16,
        headers: Vec<(String, String)>,
        body: String,
    },
    /// A stream that starts (these events) and then stops: the connection closed in the
    /// middle of the answer (`silent: false`), or kept open with nothing more (`true`).
    Halts { events: Vec<String>, silent: bool },
}

/// A request as the server saw it.
#[derive(Debug, Clone)]
pub struct Seen {
    pub at: Instant,
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Value,
    /// The request body's size in bytes.
    pub bytes: usize,
    /// The usage the answer reported (chat answers only).
    pub reported: Option<Tokens>,
}

impl Seen {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

#[derive(Default)]
struct State {
    replies: VecDeque<Reply>,
    seen: Vec<Seen>,
    key: Option<String>,
    models: Vec<String>,
    /// Models that refuse `max_tokens` as OpenAI's reasoning models do.
    completion_tokens_only: Vec<String>,
    /// Refuses `response_format` as OpenAI does for a model without structured outputs.
    no_answer_schema: bool,
    /// What it answers to llama.cpp's `GET /props` (none: 404, as OpenAI would).
    props: Option<Reply>,
    /// Replies the client hung up on before they were whole.
    hung_up: usize,
}

pub struct ModelServer {
    pub url: String,
    state: Arc<Mutex<State>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl ModelServer {
    /// A server that accepts `key` (none: any or no key).
    pub fn start(key: Option<&str>) -> ModelServer {
        let state = Arc::new(Mutex::new(State {
            key: key.map(str::to_string),
            models: vec!["scripted-small".to_string(), "scripted-large".to_string()],
            ..State::default()
        }));
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let (ready, addr) = std::sync::mpsc::channel();
        let shared = state.clone();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("server runtime");
            runtime.block_on(async move {
                let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
                ready
                    .send(listener.local_addr().expect("addr"))
                    .expect("ready");
                let serve = async {
                    loop {
                        let Ok((socket, _)) = listener.accept().await else {
                            continue;
                        };
                        let _ = socket.set_nodelay(true);
                        tokio::spawn(serve_connection(socket, shared.clone()));
                    }
                };
                tokio::select! {
                    _ = serve => {}
                    _ = stopped => {}
                }
            });
        });
        let addr = addr.recv().expect("server started");
        ModelServer {
            url: format!("http://{addr}"),
            state,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// Queue the answers to the next chat requests, in order.
    pub fn script(&self, replies: impl IntoIterator<Item = Reply>) {
        self.lock().replies.extend(replies);
    }

    /// `model` answers as OpenAI's reasoning models do: a request with `max_tokens` gets
    /// their 400 (and uses no scripted reply); `max_completion_tokens` is served.
    pub fn refuse_max_tokens(&self, model: &str) {
        self.lock().completion_tokens_only.push(model.to_string());
    }

    /// Answer a request with a `response_format` with OpenAI's 400 for a model that has no
    /// structured outputs (and use no scripted reply).
    pub fn refuse_answer_schema(&self) {
        self.lock().no_answer_schema = true;
    }

    /// How many replies the client stopped reading before their end (it hung up).
    pub fn hung_up(&self) -> usize {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).hung_up
    }

    /// Answer llama.cpp's `GET /props` with `reply` from now on.
    pub fn set_props(&self, reply: Reply) {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).props = Some(reply);
    }

    pub fn set_models(&self, models: &[&str]) {
        self.lock().models = models.iter().map(|m| m.to_string()).collect();
    }

    /// Every request seen so far.
    pub fn seen(&self) -> Vec<Seen> {
        self.lock().seen.clone()
    }

    /// The chat requests seen so far.
    pub fn chats(&self) -> Vec<Seen> {
        self.seen()
            .into_iter()
            .filter(|s| s.method == "POST" && s.path != "/api/show")
            .collect()
    }

    /// The usage the chat answers reported, summed.
    pub fn reported(&self) -> Tokens {
        self.seen()
            .iter()
            .filter_map(|s| s.reported)
            .fold(Tokens::default(), |a, t| Tokens {
                prompt: a.prompt + t.prompt,
                completion: a.completion + t.completion,
                cached: a.cached + t.cached,
            })
    }

    /// The usage each scripted answer reported, in order: the turns of a model loop, without
    /// Claude Code's side requests (titles, summaries) that the server answers on its own.
    pub fn turn_usage(&self) -> Vec<Tokens> {
        self.chats()
            .iter()
            .filter(|s| !is_claude_code_side_request(s, is_anthropic(s)))
            .filter_map(|s| s.reported)
            .collect()
    }

    pub fn unused_replies(&self) -> usize {
        self.lock().replies.len()
    }

    /// Forget replies no request used.
    pub fn clear_replies(&self) {
        self.lock().replies.clear();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

async fn serve_connection(mut socket: TcpStream, state: Arc<Mutex<State>>) {
    let mut buffer = Vec::new();
    loop {
        let Some((head_len, content_length)) = read_head(&mut socket, &mut buffer).await else {
            return;
        };
        while buffer.len() < head_len + content_length {
            let mut chunk = [0u8; 16 * 1024];
            match socket.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buffer.extend_from_slice(&chunk[..n]),
            }
        }
        let head = String::from_utf8_lossy(&buffer[..head_len]).to_string();
        let body = buffer[head_len..head_len + content_length].to_vec();
        buffer.drain(..head_len + content_length);
        let mut seen = parse_request(&head, &body);
        let (reply, reported) = measured(answer(&state, &seen), seen.bytes);
        seen.reported = reported;
        state
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .seen
            .push(seen);
        if write_reply(&mut socket, reply).await.is_err() {
            state.lock().unwrap_or_else(|p| p.into_inner()).hung_up += 1;
            return;
        }
    }
}

/// Read until the end of the head; returns its length (with the blank line) and the body's.
async fn read_head(socket: &mut TcpStream, buffer: &mut Vec<u8>) -> Option<(usize, usize)> {
    loop {
        if let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buffer[..end]).to_ascii_lowercase();
            let length = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0);
            return Some((end + 4, length));
        }
        let mut chunk = [0u8; 16 * 1024];
        match socket.read(&mut chunk).await {
            Ok(0) | Err(_) => return None,
            Ok(n) => buffer.extend_from_slice(&chunk[..n]),
        }
    }
}

fn parse_request(head: &str, body: &[u8]) -> Seen {
    let mut lines = head.split("\r\n");
    let first = lines.next().unwrap_or_default();
    let mut parts = first.split_whitespace();
    let method = parts.next().unwrap_or_default().to_string();
    let path = parts.next().unwrap_or_default().to_string();
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    Seen {
        at: Instant::now(),
        method,
        path,
        headers,
        body: serde_json::from_slice(body).unwrap_or(Value::Null),
        bytes: body.len(),
        reported: None,
    }
}

fn answer(state: &Arc<Mutex<State>>, seen: &Seen) -> Reply {
    let mut state = state.lock().unwrap_or_else(|p| p.into_inner());
    if seen.path == "/api/tags" {
        let models: Vec<_> = state
            .models
            .iter()
            .map(|m| json!({"name": m, "model": m, "size": 1}))
            .collect();
        return Reply::Json(json!({ "models": models }));
    }
    if seen.path == "/props" {
        if let Some(props) = &state.props {
            return props.clone();
        }
    }
    if seen.path == "/props" || seen.path == "/api/show" {
        // What llama.cpp and Ollama say about themselves: this server is neither, and answers
        // as OpenAI does a path it does not have.
        return Reply::Status {
            status: 404,
            headers: vec![],
            body: json!({"error": {"message": format!("Invalid URL (GET {})", seen.path),
                   "type": "invalid_request_error"}})
            .to_string(),
        };
    }
    let anthropic = is_anthropic(seen);
    if let Some(expected) = &state.key {
        if gemini::is_gemini(seen) {
            let given = seen.header("x-goog-api-key").unwrap_or_default();
            if given != expected {
                return gemini::error(400, "API key not valid. Please pass a valid API key.");
            }
        }
        let given = if gemini::is_gemini(seen) {
            expected.clone()
        } else if anthropic {
            seen.header("x-api-key").unwrap_or_default().to_string()
        } else {
            seen.header("authorization")
                .and_then(|v| v.strip_prefix("Bearer "))
                .unwrap_or_default()
                .to_string()
        };
        if &given != expected {
            let body = if anthropic {
                json!({"type": "error", "error": {"type": "authentication_error",
                       "message": format!("invalid x-api-key {given}")}})
            } else {
                // OpenAI echoes (part of) the key it refused.
                json!({"error": {"message": format!("Incorrect API key provided: {given}."),
                       "type": "invalid_request_error", "code": "invalid_api_key"}})
            };
            return Reply::Status {
                status: 401,
                headers: vec![],
                body: body.to_string(),
            };
        }
    }
    if seen.method == "GET" && seen.path.ends_with("/models") {
        let data: Vec<_> = state
            .models
            .iter()
            .map(|m| json!({"id": m, "object": "model", "type": "model"}))
            .collect();
        return Reply::Json(json!({ "object": "list", "data": data }));
    }
    let model = seen.body["model"].as_str().unwrap_or_default();
    if !anthropic
        && seen.body.get("max_tokens").is_some()
        && state.completion_tokens_only.iter().any(|m| m == model)
    {
        // OpenAI's answer, word for word.
        return Reply::Status {
            status: 400,
            headers: vec![],
            body: json!({"error": {
                "message": "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
                "type": "invalid_request_error",
                "param": "max_tokens",
                "code": "unsupported_parameter"
            }})
            .to_string(),
        };
    }
    if !anthropic && state.no_answer_schema && seen.body.get("response_format").is_some() {
        return Reply::Status {
            status: 400,
            headers: vec![],
            body: json!({"error": {
                "message": "Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model.",
                "type": "invalid_request_error",
                "param": "response_format",
                "code": null
            }})
            .to_string(),
        };
    }
    if let Some(side) = claude_code_side_request(seen, anthropic) {
        return side;
    }
    if let Some(side) = gemini::side_request(seen) {
        return side;
    }
    state.replies.pop_front().unwrap_or_else(|| Reply::Status {
        status: 500,
        headers: vec![],
        body: json!({"error": {"message": "the scripted server has no reply left"}}).to_string(),
    })
}

fn is_anthropic(seen: &Seen) -> bool {
    seen.path.starts_with("/v1/messages") || seen.header("anthropic-version").is_some()
}

/// Claude Code's requests without tools (titles, summaries) are not turns of its main loop: a
/// short answer, without taking a scripted reply, so that a script lists only the turns.
fn claude_code_side_request(seen: &Seen, anthropic: bool) -> Option<Reply> {
    if !is_claude_code_side_request(seen, anthropic) {
        return None;
    }
    let t = Tokens {
        prompt: 10,
        completion: 2,
        cached: 0,
    };
    Some(if seen.body["stream"] == true {
        anthropic::text("Scripted session", t)
    } else {
        anthropic::whole_text("Scripted session", t)
    })
}

fn is_claude_code_side_request(seen: &Seen, anthropic: bool) -> bool {
    let claude_code = seen.header("x-app") == Some("cli")
        || seen
            .header("user-agent")
            .is_some_and(|a| a.starts_with("claude-cli/"));
    let has_tools = seen.body["tools"]
        .as_array()
        .is_some_and(|tools| !tools.is_empty());
    anthropic
        && claude_code
        && seen.method == "POST"
        && !has_tools
        && seen.path.starts_with("/v1/messages")
        && !seen.path.contains("count_tokens")
}

async fn write_reply(socket: &mut TcpStream, reply: Reply) -> std::io::Result<()> {
    match reply {
        Reply::Json(value) => {
            let body = value.to_string();
            let head = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
                body.len()
            );
            socket.write_all(head.as_bytes()).await?;
            socket.write_all(body.as_bytes()).await
        }
        Reply::Status {
            status,
            headers,
            body,
        } => {
            let mut head = format!(
                "HTTP/1.1 {status} Scripted\r\ncontent-type: application/json\r\ncontent-length: {}\r\n",
                body.len()
            );
            for (name, value) in headers {
                head.push_str(&format!("{name}: {value}\r\n"));
            }
            head.push_str("\r\n");
            socket.write_all(head.as_bytes()).await?;
            socket.write_all(body.as_bytes()).await
        }
        Reply::Stream(events) => {
            let length: usize = events.iter().map(String::len).sum();
            let head = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\ncontent-length: {length}\r\n\r\n"
            );
            socket.write_all(head.as_bytes()).await?;
            // Event by event, as a real server streams them.
            for event in events {
                socket.write_all(event.as_bytes()).await?;
                socket.flush().await?;
            }
            Ok(())
        }
        Reply::Halts { events, silent } => {
            // The length promises more than ever comes.
            let length: usize = events.iter().map(String::len).sum::<usize>() + 4096;
            let head = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\ncontent-length: {length}\r\n\r\n"
            );
            socket.write_all(head.as_bytes()).await?;
            for event in events {
                socket.write_all(event.as_bytes()).await?;
                socket.flush().await?;
            }
            if silent {
                tokio::time::sleep(Duration::from_secs(24 * 3600)).await;
            }
            // Closed mid-answer: the connection is not used again.
            Err(std::io::Error::other("halted"))
        }
    }
}

/// The tokens a reply reports. Scripted replies are built with [`TOKENS`]; the server replaces
/// the prompt and completion counts with measured ones before answering ([`measured`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tokens {
    pub prompt: u64,
    pub completion: u64,
    pub cached: u64,
}

impl Tokens {
    pub fn total(&self) -> u64 {
        self.prompt + self.completion
    }
}

/// What scripted replies are built with: their counts are placeholders that [`measured`]
/// replaces; `cached` (at most the measured prompt) is what the cache served.
pub const TOKENS: Tokens = Tokens {
    prompt: 120,
    completion: 30,
    cached: 20,
};

/// About four characters a token, rounded up, as the engine estimates too.
fn tokens_of(chars: usize) -> u64 {
    (chars as u64).div_ceil(4)
}

/// The reply with its usage replaced by what a provider would count: the prompt from the size of
/// the request body, the completion from the text and tool arguments the reply writes. Every
/// `usage` object in the reply is rewritten, whatever wire format it is in (OpenAI's
/// `prompt_tokens`, Anthropic's and the Responses API's `input_tokens` / `output_tokens`).
fn measured(reply: Reply, request_bytes: usize) -> (Reply, Option<Tokens>) {
    fn documents(reply: &Reply) -> Vec<Value> {
        match reply {
            Reply::Json(value) => vec![value.clone()],
            Reply::Stream(events) => events
                .iter()
                .flat_map(|e| e.lines())
                .filter_map(|l| l.strip_prefix("data: "))
                .filter_map(|d| serde_json::from_str(d).ok())
                .collect(),
            Reply::Status { .. } | Reply::Halts { .. } => Vec::new(),
        }
    }
    /// Characters the model wrote. A lifecycle event that repeats the whole response under
    /// `response` (the Responses API) is not counted twice.
    fn written(value: &Value, key: Option<&str>) -> usize {
        match value {
            Value::String(s) => match key {
                Some("content" | "text" | "arguments" | "partial_json" | "delta") => s.len(),
                _ => 0,
            },
            Value::Array(items) => items.iter().map(|v| written(v, key)).sum(),
            Value::Object(map) => map
                .iter()
                .filter(|(k, _)| !matches!(k.as_str(), "usage" | "response"))
                .map(|(k, v)| written(v, Some(k)))
                .sum(),
            _ => 0,
        }
    }
    fn scripted_cached(value: &Value) -> Option<u64> {
        match value {
            Value::Object(map) => map
                .get("cached_tokens")
                .or_else(|| map.get("cache_read_input_tokens"))
                .and_then(Value::as_u64)
                .or_else(|| map.values().find_map(scripted_cached)),
            Value::Array(items) => items.iter().find_map(scripted_cached),
            _ => None,
        }
    }
    fn patch(value: &mut Value, t: Tokens, in_usage: bool) {
        match value {
            Value::Object(map) => {
                if in_usage {
                    let anthropic = map.contains_key("cache_read_input_tokens");
                    for (k, v) in map.iter_mut() {
                        let n = match k.as_str() {
                            "prompt_tokens" => t.prompt,
                            "input_tokens" if anthropic => t.prompt - t.cached,
                            "input_tokens" => t.prompt,
                            "completion_tokens" | "output_tokens" => t.completion,
                            "total_tokens" | "totalTokenCount" => t.total(),
                            "promptTokenCount" => t.prompt,
                            "candidatesTokenCount" => t.completion,
                            "cached_tokens" | "cache_read_input_tokens" => t.cached,
                            _ => {
                                patch(v, t, true);
                                continue;
                            }
                        };
                        *v = json!(n);
                    }
                } else {
                    for (k, v) in map.iter_mut() {
                        patch(v, t, k == "usage" || k == "usageMetadata");
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| patch(v, t, in_usage)),
            _ => {}
        }
    }
    let docs = documents(&reply);
    if docs.is_empty() {
        return (reply, None);
    }
    let prompt = tokens_of(request_bytes);
    let t = Tokens {
        prompt,
        completion: tokens_of(docs.iter().map(|d| written(d, None)).sum()).max(1),
        cached: docs
            .iter()
            .find_map(scripted_cached)
            .unwrap_or(0)
            .min(prompt),
    };
    let reply = match reply {
        Reply::Json(mut value) => {
            patch(&mut value, t, false);
            Reply::Json(value)
        }
        Reply::Stream(events) => Reply::Stream(
            events
                .into_iter()
                .map(|event| {
                    event
                        .split_inclusive('\n')
                        .map(|line| {
                            match line.strip_prefix("data: ").map(|d| {
                                (
                                    serde_json::from_str::<Value>(d.trim_end()),
                                    d.ends_with('\n'),
                                )
                            }) {
                                Some((Ok(mut value), newline)) => {
                                    patch(&mut value, t, false);
                                    format!("data: {value}{}", if newline { "\n" } else { "" })
                                }
                                _ => line.to_string(),
                            }
                        })
                        .collect()
                })
                .collect(),
        ),
        other => other,
    };
    (reply, Some(t))
}

/// Text cut into pieces, as a model streams it.
fn pieces(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars.chunks(7).map(|c| c.iter().collect()).collect()
}

pub mod openai {
    use super::*;

    fn event(value: Value) -> String {
        format!("data: {value}\n\n")
    }

    fn chunk(delta: Value, finish: Option<&str>) -> String {
        event(json!({
            "id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "scripted",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }))
    }

    fn usage_chunk(t: Tokens) -> String {
        event(json!({
            "id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "scripted",
            "choices": [],
            "usage": {"prompt_tokens": t.prompt, "completion_tokens": t.completion,
                      "total_tokens": t.prompt + t.completion,
                      "prompt_tokens_details": {"cached_tokens": t.cached}},
        }))
    }

    /// A streamed answer in text.
    pub fn text(text: &str, t: Tokens) -> Reply {
        let mut events = vec![chunk(json!({"role": "assistant", "content": ""}), None)];
        events.extend(
            pieces(text)
                .iter()
                .map(|p| chunk(json!({"content": p}), None)),
        );
        events.push(chunk(json!({}), Some("stop")));
        events.push(usage_chunk(t));
        events.push("data: [DONE]\n\n".to_string());
        Reply::Stream(events)
    }

    /// A streamed reply calling tools: (id, name, arguments text).
    pub fn tool_calls(calls: &[(&str, &str, &str)], t: Tokens) -> Reply {
        let mut events = vec![chunk(json!({"role": "assistant", "content": null}), None)];
        for (index, (id, name, args)) in calls.iter().enumerate() {
            events.push(chunk(
                json!({"tool_calls": [{"index": index, "id": id, "type": "function",
                        "function": {"name": name, "arguments": ""}}]}),
                None,
            ));
            for piece in pieces(args) {
                events.push(chunk(
                    json!({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}),
                    None,
                ));
            }
        }
        events.push(chunk(json!({}), Some("tool_calls")));
        events.push(usage_chunk(t));
        events.push("data: [DONE]\n\n".to_string());
        Reply::Stream(events)
    }

    /// A stream that begins to say `text` and then breaks off (`silent: false`) or goes
    /// quiet with the connection open (`true`).
    pub fn halts(text: &str, silent: bool) -> Reply {
        Reply::Halts {
            events: vec![
                chunk(json!({"role": "assistant", "content": ""}), None),
                chunk(json!({"content": text}), None),
            ],
            silent,
        }
    }

    /// One JSON document (a server that does not stream).
    pub fn whole_text(text: &str, t: Tokens) -> Reply {
        Reply::Json(json!({
            "id": "chatcmpl-2", "object": "chat.completion", "created": 1, "model": "scripted",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                         "finish_reason": "stop"}],
            "usage": {"prompt_tokens": t.prompt, "completion_tokens": t.completion,
                      "prompt_tokens_details": {"cached_tokens": t.cached}},
        }))
    }

    pub fn error(status: u16, message: &str, headers: &[(&str, &str)]) -> Reply {
        Reply::Status {
            status,
            headers: headers
                .iter()
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect(),
            body: json!({"error": {"message": message, "type": "scripted"}}).to_string(),
        }
    }
}

pub mod anthropic {
    use super::*;

    fn event(name: &str, value: Value) -> String {
        format!("event: {name}\ndata: {value}\n\n")
    }

    /// Message ids are unique, as Anthropic's are (Claude Code tells calls apart by them).
    static NEXT_MESSAGE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

    fn start(t: Tokens) -> String {
        let id = NEXT_MESSAGE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        event(
            "message_start",
            json!({"type": "message_start", "message": {
                "id": format!("msg_{id}"), "type": "message", "role": "assistant", "model": "scripted",
                "content": [], "stop_reason": null,
                "usage": {"input_tokens": t.prompt - t.cached, "cache_read_input_tokens": t.cached,
                          "cache_creation_input_tokens": 0, "output_tokens": 1}}}),
        )
    }

    fn end(stop_reason: &str, t: Tokens) -> Vec<String> {
        vec![
            event(
                "message_delta",
                json!({"type": "message_delta", "delta": {"stop_reason": stop_reason},
                       "usage": {"output_tokens": t.completion}}),
            ),
            event("message_stop", json!({"type": "message_stop"})),
        ]
    }

    fn text_block(index: usize, text: &str) -> Vec<String> {
        let mut events = vec![event(
            "content_block_start",
            json!({"type": "content_block_start", "index": index,
                   "content_block": {"type": "text", "text": ""}}),
        )];
        events.push(event("ping", json!({"type": "ping"})));
        for piece in pieces(text) {
            events.push(event(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": index,
                       "delta": {"type": "text_delta", "text": piece}}),
            ));
        }
        events.push(event(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": index}),
        ));
        events
    }

    /// One JSON document (a request with `stream: false`).
    pub fn whole_text(text: &str, t: Tokens) -> Reply {
        Reply::Json(json!({
            "id": "msg_2", "type": "message", "role": "assistant", "model": "scripted",
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn", "stop_sequence": null,
            "usage": {"input_tokens": t.prompt - t.cached, "cache_read_input_tokens": t.cached,
                      "cache_creation_input_tokens": 0, "output_tokens": t.completion},
        }))
    }

    /// A stream whose events are not JSON (a broken proxy, a truncated body).
    pub fn garbage() -> Reply {
        Reply::Stream(vec![
            "event: message_start\ndata: {this is not json\n\n".to_string(),
            "event: content_block_delta\ndata: ]]]\n\n".to_string(),
        ])
    }

    pub fn error(status: u16, message: &str) -> Reply {
        Reply::Status {
            status,
            headers: vec![],
            body: json!({"type": "error", "error": {"type": "api_error", "message": message}})
                .to_string(),
        }
    }

    pub fn text(text: &str, t: Tokens) -> Reply {
        let mut events = vec![start(t)];
        events.extend(text_block(0, text));
        events.extend(end("end_turn", t));
        Reply::Stream(events)
    }

    /// Some text, then tool calls: (id, name, input JSON text).
    pub fn tool_calls(said: &str, calls: &[(&str, &str, &str)], t: Tokens) -> Reply {
        let mut events = vec![start(t)];
        events.extend(text_block(0, said));
        for (i, (id, name, input)) in calls.iter().enumerate() {
            let index = i + 1;
            events.push(event(
                "content_block_start",
                json!({"type": "content_block_start", "index": index,
                       "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}),
            ));
            for piece in pieces(input) {
                events.push(event(
                    "content_block_delta",
                    json!({"type": "content_block_delta", "index": index,
                           "delta": {"type": "input_json_delta", "partial_json": piece}}),
                ));
            }
            events.push(event(
                "content_block_stop",
                json!({"type": "content_block_stop", "index": index}),
            ));
        }
        events.extend(end("tool_use", t));
        Reply::Stream(events)
    }
}

/// The OpenAI Responses API (`POST /v1/responses`), as Codex reads it: each output item
/// announced (`response.output_item.added`), message text streamed in deltas, the item whole
/// (`response.output_item.done`), then `response.completed` with the usage.
pub mod responses {
    use super::*;

    /// One output item of a scripted response.
    #[derive(Debug, Clone)]
    pub enum Item {
        /// An assistant message.
        Text(String),
        /// A function call: (call id, name, arguments JSON text) — Codex's `exec_command`.
        Call(String, String, String),
        /// A freeform tool call: (call id, name, input) — Codex's `apply_patch`.
        Custom(String, String, String),
        /// A reasoning summary.
        Reasoning(String),
    }

    pub fn text(text: &str) -> Item {
        Item::Text(text.to_string())
    }

    pub fn call(call_id: &str, name: &str, arguments: &str) -> Item {
        Item::Call(call_id.to_string(), name.to_string(), arguments.to_string())
    }

    /// Codex's shell tool running `cmd` (and waiting up to 30 s before it yields).
    pub fn exec(call_id: &str, cmd: &str) -> Item {
        let arguments = json!({"cmd": cmd, "yield_time_ms": 30_000}).to_string();
        Item::Call(call_id.to_string(), "exec_command".to_string(), arguments)
    }

    pub fn patch(call_id: &str, patch: &str) -> Item {
        Item::Custom(
            call_id.to_string(),
            "apply_patch".to_string(),
            patch.to_string(),
        )
    }

    fn event(value: Value) -> String {
        let name = value["type"].as_str().unwrap_or_default().to_string();
        format!("event: {name}\ndata: {value}\n\n")
    }

    fn whole(index: usize, item: &Item) -> Value {
        let id = format!("item_{index}");
        match item {
            Item::Text(text) => json!({"type": "message", "id": id, "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": []}]}),
            Item::Call(call_id, name, arguments) => json!({"type": "function_call", "id": id,
                "call_id": call_id, "name": name, "arguments": arguments, "status": "completed"}),
            Item::Custom(call_id, name, input) => json!({"type": "custom_tool_call", "id": id,
                "call_id": call_id, "name": name, "input": input, "status": "completed"}),
            Item::Reasoning(text) => json!({"type": "reasoning", "id": id,
                "summary": [{"type": "summary_text", "text": text}]}),
        }
    }

    /// A streamed response holding `items`, costing `t`.
    pub fn reply(items: &[Item], t: Tokens) -> Reply {
        let mut events = vec![event(json!({"type": "response.created",
            "response": {"id": "resp_1", "status": "in_progress"}}))];
        let mut output = Vec::new();
        for (index, item) in items.iter().enumerate() {
            let done = whole(index, item);
            let added = match item {
                Item::Text(_) => json!({"type": "message", "id": format!("item_{index}"),
                    "role": "assistant", "status": "in_progress", "content": []}),
                _ => done.clone(),
            };
            events.push(event(json!({"type": "response.output_item.added",
                "output_index": index, "item": added})));
            if let Item::Text(text) = item {
                for piece in pieces(text) {
                    events.push(event(json!({"type": "response.output_text.delta",
                        "item_id": format!("item_{index}"), "output_index": index,
                        "content_index": 0, "delta": piece})));
                }
            }
            events.push(event(json!({"type": "response.output_item.done",
                "output_index": index, "item": done})));
            output.push(done);
        }
        events.push(event(json!({"type": "response.completed", "response": {
            "id": "resp_1", "status": "completed", "output": output,
            "usage": {"input_tokens": t.prompt,
                      "input_tokens_details": {"cached_tokens": t.cached},
                      "output_tokens": t.completion,
                      "output_tokens_details": {"reasoning_tokens": 0},
                      "total_tokens": t.prompt + t.completion}}})));
        Reply::Stream(events)
    }

    /// A stream that breaks off before `response.completed`, after one message.
    pub fn cut_short(text: &str) -> Reply {
        Reply::Stream(vec![
            event(json!({"type": "response.created", "response": {"id": "resp_1"}})),
            event(
                json!({"type": "response.output_item.done", "output_index": 0,
                "item": whole(0, &Item::Text(text.to_string()))}),
            ),
        ])
    }

    pub fn error(status: u16, message: &str) -> Reply {
        Reply::Status {
            status,
            headers: vec![],
            body: json!({"error": {"message": message, "type": "server_error"}}).to_string(),
        }
    }
}

/// Wait until `f` holds (bounded).
/// Google's Gemini API (`POST /v1beta/models/<model>:streamGenerateContent?alt=sse`), as Gemini
/// CLI reads it: the model's parts in chunks, the last with `finishReason` and `usageMetadata`
/// (rewritten with measured counts). The key comes in `x-goog-api-key`.
pub mod gemini {
    use super::*;

    pub fn is_gemini(seen: &Seen) -> bool {
        seen.path.starts_with("/v1beta/")
    }

    /// The model a request names in its path.
    pub fn model(seen: &Seen) -> Option<&str> {
        let rest = seen.path.strip_prefix("/v1beta/models/")?;
        rest.split(':').next()
    }

    /// One event (Google ends them with `\r\n\r\n`; the usage rewriting keeps `\n` only).
    fn event(value: Value) -> String {
        format!("data: {value}\n\n")
    }

    fn chunk(parts: Vec<Value>, last: Option<Tokens>) -> String {
        let mut candidate = json!({"content": {"role": "model", "parts": parts}, "index": 0});
        let mut value = json!({"modelVersion": "scripted"});
        if let Some(t) = last {
            candidate["finishReason"] = json!("STOP");
            value["usageMetadata"] = json!({"promptTokenCount": t.prompt,
                "candidatesTokenCount": t.completion, "totalTokenCount": t.total()});
        }
        value["candidates"] = json!([candidate]);
        event(value)
    }

    /// Words, streamed in pieces.
    pub fn text(text: &str, t: Tokens) -> Reply {
        let pieces = pieces(text);
        let n = pieces.len();
        Reply::Stream(
            pieces
                .into_iter()
                .enumerate()
                .map(|(i, p)| chunk(vec![json!({"text": p})], (i + 1 == n).then_some(t)))
                .collect(),
        )
    }

    /// Words (none: only the calls), then calls of Gemini CLI's tools: (name, arguments).
    pub fn calls(said: &str, calls: &[(&str, Value)], t: Tokens) -> Reply {
        let mut events: Vec<String> = pieces(said)
            .into_iter()
            .map(|p| chunk(vec![json!({"text": p})], None))
            .collect();
        let parts = calls
            .iter()
            .map(|(name, args)| json!({"functionCall": {"name": name, "args": args}}))
            .collect();
        events.push(chunk(parts, Some(t)));
        Reply::Stream(events)
    }

    /// Google's error body.
    pub fn error(status: u16, message: &str) -> Reply {
        let name = match status {
            400 => "INVALID_ARGUMENT",
            401 => "UNAUTHENTICATED",
            429 => "RESOURCE_EXHAUSTED",
            _ => "INTERNAL",
        };
        Reply::Status {
            status,
            headers: vec![],
            body: json!({"error": {"code": status, "message": message, "status": name}})
                .to_string(),
        }
    }

    /// Gemini CLI's requests that are not turns of its loop (counting tokens, its JSON checks
    /// of who speaks next or whether it loops): answered without taking a scripted reply.
    pub fn side_request(seen: &Seen) -> Option<Reply> {
        if !is_gemini(seen) {
            return None;
        }
        if seen.path.contains(":countTokens") {
            return Some(Reply::Json(json!({"totalTokens": seen.bytes.div_ceil(4)})));
        }
        let config = &seen.body["generationConfig"];
        let json_answer = config["responseMimeType"] == "application/json"
            || !config["responseJsonSchema"].is_null()
            || !config["responseSchema"].is_null();
        if !json_answer {
            return None;
        }
        let said = json!({"next_speaker": "user", "reasoning": "scripted",
            "unproductive_state_confidence": 0.0, "unproductive_state_analysis": "none"});
        let value = json!({"candidates": [{"content": {"role": "model",
            "parts": [{"text": said.to_string()}]}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 2,
            "totalTokenCount": 12}, "modelVersion": "scripted"});
        Some(if seen.path.contains("alt=sse") {
            Reply::Stream(vec![event(value)])
        } else {
            Reply::Json(value)
        })
    }
}

pub fn eventually(what: &str, timeout: Duration, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    while !f() {
        assert!(Instant::now() < deadline, "{what} did not happen in time");
        std::thread::sleep(Duration::from_millis(20));
    }
}
