//! OpenAI chat completions (and every server that speaks it: OpenRouter, vLLM, LM Studio,
//! llama.cpp, Ollama's /v1): tool calling, streamed text, usage in the last streamed chunk
//! (`stream_options.include_usage`). A server that answers with one JSON document instead of
//! a stream is read too.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde_json::{json, Value};

use super::chat::{
    Allowance, ChatMessage, ChatReply, ChatRequest, ModelClient, OnText, PartialCalls, ToolCall,
    CUT_OFF,
};
use super::http::{self, bad_response, Caller, Connection};
use super::local::ServerFacts;
use super::provider::ProviderKind;
use super::Usage;
use crate::error::LlmError;

pub struct OpenAiClient {
    pub(crate) conn: Connection,
    /// Models found to refuse `max_tokens` in this process, so each is asked twice only once.
    pub(crate) learned: CompletionLimitModels,
    /// Providers found to refuse `response_format`, so each is asked twice only once.
    pub(crate) unstructured: UnstructuredProviders,
    /// What servers at home said about themselves.
    pub(crate) known: super::local::KnownServers,
}

/// Models whose server refused a schema for the answer (provider name and model): they are
/// asked with the prompt alone from then on, and every answer is validated as always.
pub type UnstructuredProviders = Arc<Mutex<HashSet<(String, String)>>>;

/// Which models take `max_completion_tokens` instead of `max_tokens`, as learned from their
/// refusals (provider name and model). Shared by every client of one engine.
pub type CompletionLimitModels = Arc<Mutex<HashSet<(String, String)>>>;

/// OpenAI's reasoning models (o1, o3, o4-mini, gpt-5 …) refuse `max_tokens` with a 400 and
/// take `max_completion_tokens`; older servers (vLLM, llama.cpp, Ollama) know only the
/// former. So a known family gets the new name from the start, and any other model the old
/// one, and a model that refuses it is asked once more with the new name (and remembered).
/// `openai/o3` (OpenRouter's names) counts as o3.
pub fn wants_completion_tokens(model: &str) -> bool {
    let name = model
        .rsplit('/')
        .next()
        .unwrap_or(model)
        .to_ascii_lowercase();
    let family = |prefix: &str| {
        name.strip_prefix(prefix)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with(['-', '.']))
    };
    ["o1", "o3", "o4"].iter().any(|p| family(p)) || name.starts_with("gpt-5")
}

/// Whether a refusal is the server not taking a schema for its answer (an older server, or a
/// schema it cannot enforce).
fn refuses_answer_schema(error: &LlmError) -> bool {
    let LlmError::Rejected {
        status: 400 | 422,
        detail,
        ..
    } = error
    else {
        return false;
    };
    let detail = detail.to_ascii_lowercase();
    [
        "response_format",
        "json_schema",
        "structured output",
        "grammar",
    ]
    .iter()
    .any(|word| detail.contains(word))
}

/// Whether a refusal is the one that asks for `max_completion_tokens` ("Unsupported
/// parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens'
/// instead.").
fn asks_for_completion_tokens(error: &LlmError) -> bool {
    matches!(error, LlmError::Rejected { status: 400, detail, .. }
        if detail.contains("max_completion_tokens") && detail.contains("max_tokens"))
}

impl OpenAiClient {
    /// Ollama keeps the OpenAI-compatible API under /v1; the others are configured with it.
    fn endpoint(&self, path: &str) -> String {
        match self.conn.provider.kind {
            ProviderKind::Ollama => self.conn.provider.url(&format!("/v1{path}")),
            _ => self.conn.provider.url(path),
        }
    }

    fn lock_learned(&self) -> std::sync::MutexGuard<'_, HashSet<(String, String)>> {
        self.learned.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// What the server at home says about itself for `model`, read once.
    async fn facts(&self, model: &str) -> ServerFacts {
        let key = (self.conn.provider.name.clone(), model.to_string());
        if let Some(known) = self.lock_known().get(&key) {
            return *known;
        }
        let Some(facts) = super::local::read(&self.conn.http, &self.conn.provider, model).await
        else {
            // Not up yet, or too slow: asked again on the next call.
            return ServerFacts::default();
        };
        tracing::info!(
            provider = %key.0,
            model = %key.1,
            context = ?facts.context_tokens,
            native_tools = facts.native_tools,
            "read what the server at home says about itself"
        );
        self.lock_known().insert(key, facts);
        facts
    }

    fn lock_known(
        &self,
    ) -> std::sync::MutexGuard<'_, std::collections::HashMap<(String, String), ServerFacts>> {
        self.known.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn lock_unstructured(&self) -> std::sync::MutexGuard<'_, HashSet<(String, String)>> {
        self.unstructured.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn authorised(&self, builder: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match &self.conn.key {
            // bearer_auth marks the header sensitive, so it never shows in Debug output.
            Some(key) => builder.bearer_auth(key.expose()),
            None => builder,
        }
    }
}

#[async_trait]
impl ModelClient for OpenAiClient {
    async fn chat(
        &self,
        request: &ChatRequest<'_>,
        on_text: OnText<'_>,
    ) -> Result<ChatReply, LlmError> {
        let caller = self.conn.caller(request.model);
        let url = self.endpoint("/chat/completions");
        let key = (self.conn.provider.name.clone(), request.model.to_string());
        let learned = self.lock_learned().contains(&key);
        let new_name = learned || wants_completion_tokens(request.model);
        let provider = &self.conn.provider;
        let schemas_refused = self.lock_unstructured().contains(&key);
        let structured = request.answer_schema.is_some() && !schemas_refused;
        let facts = if provider.is_local() {
            self.facts(request.model).await
        } else {
            ServerFacts::default()
        };
        let shape = Shape {
            one_call_per_turn: provider.is_local(),
            structured,
            steps: !facts.native_tools && !request.tools.is_empty() && !schemas_refused,
            context: facts.context_tokens,
            no_repeats: facts.llama_cpp,
        };
        let send = |new_name: bool, shape: Shape| {
            let body = request_body(request, new_name, shape);
            let url = &url;
            let caller = &caller;
            async move {
                http::send(caller, url, || {
                    http::json_body(self.authorised(self.conn.http.post(url)), &body)
                })
                .await
            }
        };
        let mut shape = shape;
        let response = match send(new_name, shape).await {
            Err(e) if !new_name && asks_for_completion_tokens(&e) => {
                tracing::info!(
                    provider = %key.0,
                    model = %key.1,
                    "the model takes max_completion_tokens; asking again with it"
                );
                self.lock_learned().insert(key);
                send(true, shape).await?
            }
            Err(LlmError::ContextLength { .. }) if shape.context.is_some_and(|c| c > 512) => {
                // The guess of the prompt's tokens was short for this model's tokenizer: once
                // more, fitted into half.
                shape.context = shape.context.map(|c| c / 2);
                tracing::info!(provider = %key.0, "the prompt did not fit the server's context; cut further");
                send(new_name, shape).await?
            }
            Err(e) if (shape.structured || shape.steps) && refuses_answer_schema(&e) => {
                tracing::info!(
                    provider = %key.0,
                    model = %key.1,
                    "the server takes no schema for its answer; asking with the prompt alone from now on"
                );
                self.lock_unstructured().insert(key.clone());
                shape.structured = false;
                shape.steps = false;
                send(new_name, shape).await?
            }
            other => other?,
        };
        let mut allowance = Allowance::for_tokens(request.max_tokens);
        if !http::is_event_stream(&response) {
            let value = http::read_json(&caller, response).await?;
            let reply = whole_reply(&caller, &value)?.within(&mut allowance);
            if !reply.text.is_empty() {
                on_text(&reply.text);
            }
            return Ok(if shape.steps {
                super::local::read_step(reply)
            } else {
                reply
            });
        }
        let mut stream = StreamState {
            allowance,
            ..StreamState::default()
        };
        http::read_events(&caller, response, |event| {
            if event.data.trim() == "[DONE]" {
                return Ok(true);
            }
            let chunk = http::event_json(&caller, &event.data)?;
            stream.take(&caller, &chunk, on_text)?;
            Ok(stream.allowance.is_cut())
        })
        .await?;
        Ok(if shape.steps {
            super::local::read_step(stream.finish())
        } else {
            stream.finish()
        })
    }

    async fn list_models(&self) -> Result<Vec<String>, LlmError> {
        if self.conn.provider.kind == ProviderKind::Ollama {
            return super::ollama::list_models(&self.conn.http, &self.conn.provider.base_url)
                .await
                .map_err(|detail| LlmError::Network {
                    provider: self.conn.provider.name.clone(),
                    url: super::http::shown_url(&self.conn.provider.base_url),
                    attempts: 1,
                    detail,
                });
        }
        let caller = self.conn.caller("");
        let url = self.endpoint("/models");
        let response =
            http::send(&caller, &url, || self.authorised(self.conn.http.get(&url))).await?;
        let value = http::read_json(&caller, response).await?;
        let models = value
            .get("data")
            .and_then(Value::as_array)
            .ok_or_else(|| bad_response(&caller, "the models list has no \"data\""))?;
        Ok(models
            .iter()
            .filter_map(|m| m.get("id").and_then(Value::as_str).map(str::to_string))
            .collect())
    }
}

/// How a request is put beyond its content.
#[derive(Debug, Clone, Copy)]
struct Shape {
    /// `parallel_tool_calls: false`: a small local model calls a tool reliably only one at a
    /// time (llama.cpp's grammar for one call), and the loop needs only one per turn.
    one_call_per_turn: bool,
    /// The answer's schema goes as `response_format` for the server to enforce.
    structured: bool,
    /// The model's template cannot call tools: each step is asked as one JSON object of
    /// [`super::local::step_schema`] and read back into a tool call.
    steps: bool,
    /// The server's context, which the prompt and the answer are fitted into.
    context: Option<u32>,
    /// llama.cpp's DRY sampler on (`dry_multiplier`, its documented 0.8): a small model's
    /// text that starts repeating itself is steered off the repetition instead of running to
    /// its token limit inside one JSON string.
    no_repeats: bool,
}

/// The request; `completion_tokens` names the output cap `max_completion_tokens` (see
/// [`wants_completion_tokens`]).
fn request_body(request: &ChatRequest<'_>, completion_tokens: bool, shape: Shape) -> Value {
    let mut messages = if shape.steps {
        super::local::step_messages(request.system, request.tools, request.messages)
    } else {
        native_messages(request)
    };
    let tools_bytes = if shape.steps {
        0
    } else {
        request
            .tools
            .iter()
            .map(|t| t.name.len() + t.description.len() + t.schema.to_string().len())
            .sum()
    };
    let max_tokens = match shape.context {
        Some(context) => super::local::fit(&mut messages, tools_bytes, request.max_tokens, context),
        None => request.max_tokens,
    };
    let mut body = json!({
        "model": request.model,
        "messages": messages,
        "stream": true,
        "stream_options": {"include_usage": true},
    });
    if let Some(t) = request.temperature {
        body["temperature"] = json!(t);
    }
    let cap = if completion_tokens {
        "max_completion_tokens"
    } else {
        "max_tokens"
    };
    body[cap] = json!(max_tokens);
    if shape.no_repeats {
        body["dry_multiplier"] = json!(0.8);
    }
    if shape.steps {
        let called = request
            .messages
            .iter()
            .any(|m| matches!(m, ChatMessage::ToolResult { .. }));
        body["response_format"] = json!({
            "type": "json_schema",
            "json_schema": {"name": "step", "strict": true,
                            "schema": super::local::step_schema(request.tools, called)},
        });
        return body;
    }
    if !request.tools.is_empty() {
        body["tools"] = request
            .tools
            .iter()
            .map(|t| {
                json!({"type": "function", "function": {
                    "name": t.name, "description": t.description, "parameters": t.schema,
                }})
            })
            .collect();
        if shape.one_call_per_turn {
            body["parallel_tool_calls"] = json!(false);
        }
    }
    if let Some(schema) = request.answer_schema.filter(|_| shape.structured) {
        body["response_format"] = json!({
            "type": "json_schema",
            "json_schema": {"name": "answer", "strict": true, "schema": schema},
        });
    }
    body
}

/// The conversation in OpenAI's own form: tool calls and their results as such.
fn native_messages(request: &ChatRequest<'_>) -> Vec<Value> {
    let mut messages = Vec::with_capacity(request.messages.len() + 1);
    if !request.system.is_empty() {
        messages.push(json!({"role": "system", "content": request.system}));
    }
    for message in request.messages {
        messages.push(match message {
            ChatMessage::User { text } => json!({"role": "user", "content": text}),
            ChatMessage::Assistant { text, tool_calls } if tool_calls.is_empty() => {
                json!({"role": "assistant", "content": text})
            }
            ChatMessage::Assistant { text, tool_calls } => json!({
                "role": "assistant",
                "content": if text.is_empty() { Value::Null } else { json!(text) },
                "tool_calls": tool_calls.iter().map(|c| json!({
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments},
                })).collect::<Vec<_>>(),
            }),
            ChatMessage::ToolResult {
                call_id, content, ..
            } => json!({"role": "tool", "tool_call_id": call_id, "content": content}),
        });
    }
    messages
}

fn usage(value: &Value) -> Usage {
    let n = |v: Option<&Value>| v.and_then(Value::as_u64).unwrap_or(0);
    Usage {
        prompt_tokens: n(value.get("prompt_tokens")),
        completion_tokens: n(value.get("completion_tokens")),
        cached_tokens: n(value.pointer("/prompt_tokens_details/cached_tokens")),
    }
}

/// Tool-call arguments are a JSON string on the wire; a few servers send the object itself.
fn arguments_text(value: Option<&Value>) -> String {
    match value {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    }
}

fn whole_reply(caller: &Caller<'_>, value: &Value) -> Result<ChatReply, LlmError> {
    let choice = value
        .pointer("/choices/0")
        .ok_or_else(|| bad_response(caller, "the answer has no choices"))?;
    let message = choice
        .get("message")
        .ok_or_else(|| bad_response(caller, "the answer's choice has no message"))?;
    let tool_calls = message
        .get("tool_calls")
        .and_then(Value::as_array)
        .map(|calls| {
            calls
                .iter()
                .enumerate()
                .map(|(i, c)| ToolCall {
                    id: c
                        .get("id")
                        .and_then(Value::as_str)
                        .map(str::to_string)
                        .unwrap_or_else(|| format!("call_{i}")),
                    name: c
                        .pointer("/function/name")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string(),
                    arguments: arguments_text(c.pointer("/function/arguments")),
                })
                .collect()
        })
        .unwrap_or_default();
    Ok(ChatReply {
        text: message
            .get("content")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        tool_calls,
        usage: value.get("usage").map(usage).unwrap_or_default(),
        finish_reason: choice
            .get("finish_reason")
            .and_then(Value::as_str)
            .map(str::to_string),
        unusable: false,
    })
}

#[derive(Default)]
struct StreamState {
    text: String,
    calls: PartialCalls,
    usage: Usage,
    finish_reason: Option<String>,
    allowance: Allowance,
}

impl StreamState {
    fn take(
        &mut self,
        caller: &Caller<'_>,
        chunk: &Value,
        on_text: OnText<'_>,
    ) -> Result<(), LlmError> {
        if let Some(error) = chunk.get("error") {
            let message = error
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("no details");
            return Err(bad_response(
                caller,
                format!("the provider reported an error mid-answer: {message}"),
            ));
        }
        if let Some(u) = chunk.get("usage").filter(|u| u.is_object()) {
            self.usage = usage(u);
        }
        let Some(choice) = chunk.pointer("/choices/0") else {
            return Ok(());
        };
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            self.finish_reason = Some(reason.to_string());
        }
        let Some(delta) = choice.get("delta") else {
            return Ok(());
        };
        if let Some(piece) = delta.get("content").and_then(Value::as_str) {
            let piece = self.allowance.admit(piece);
            if !piece.is_empty() {
                self.text.push_str(piece);
                on_text(piece);
            }
        }
        for (position, part) in delta
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let index = part
                .get("index")
                .and_then(Value::as_u64)
                .map_or(position, |i| usize::try_from(i).unwrap_or(usize::MAX));
            let Some(call) = self.calls.at(index) else {
                return Err(bad_response(caller, "a tool call index is out of range"));
            };
            if let Some(id) = part.get("id").and_then(Value::as_str) {
                call.id = super::chat::short_name(id);
            }
            if let Some(name) = part.pointer("/function/name").and_then(Value::as_str) {
                if call.name.is_empty() {
                    call.name = super::chat::short_name(name);
                }
            }
            let arguments = arguments_text(part.pointer("/function/arguments"));
            call.arguments.push_str(self.allowance.admit(&arguments));
        }
        Ok(())
    }

    fn finish(self) -> ChatReply {
        let cut = self.allowance.is_cut();
        ChatReply {
            text: self.text,
            tool_calls: self.calls.finish(),
            usage: self.usage,
            finish_reason: if cut {
                Some(CUT_OFF.to_string())
            } else {
                self.finish_reason
            },
            unusable: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::wants_completion_tokens;

    #[test]
    fn reasoning_families_are_known_by_name_and_others_are_not() {
        for model in [
            "o1",
            "o1-mini",
            "o3",
            "o3-mini-2025-01-31",
            "o4-mini",
            "gpt-5",
            "gpt-5-mini",
            "gpt-5.1",
            "openai/o3",
            "openai/gpt-5-nano",
        ] {
            assert!(wants_completion_tokens(model), "{model}");
        }
        for model in [
            "gpt-4o",
            "gpt-4.1-mini",
            "llama3.1:8b",
            "omni-model",
            "o10",
            "qwen/qwen3-coder",
            "scripted-small",
        ] {
            assert!(!wants_completion_tokens(model), "{model}");
        }
    }
}
