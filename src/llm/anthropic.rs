//! Anthropic Messages: tool use, streamed text (`content_block_delta`), usage from
//! `message_start` (input, cache) and `message_delta` (output).

use std::collections::HashMap;

use async_trait::async_trait;
use reqwest::header::HeaderValue;
use serde_json::{json, Value};

use super::chat::{
    Allowance, ChatMessage, ChatReply, ChatRequest, ModelClient, OnText, PartialCalls, ToolCall,
    CUT_OFF,
};
use super::http::{self, bad_response, Caller, Connection};
use super::Usage;
use crate::error::LlmError;

/// The Messages API version Healer speaks.
const API_VERSION: &str = "2023-06-01";

pub struct AnthropicClient {
    pub(crate) conn: Connection,
}

impl AnthropicClient {
    fn authorised(&self, builder: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        let builder = builder.header("anthropic-version", API_VERSION);
        match self
            .conn
            .key
            .as_ref()
            .map(|k| HeaderValue::from_str(k.expose()))
        {
            Some(Ok(mut value)) => {
                value.set_sensitive(true);
                builder.header("x-api-key", value)
            }
            // A key that is not a valid header value is sent as none; the provider says 401.
            _ => builder,
        }
    }
}

#[async_trait]
impl ModelClient for AnthropicClient {
    async fn chat(
        &self,
        request: &ChatRequest<'_>,
        on_text: OnText<'_>,
    ) -> Result<ChatReply, LlmError> {
        let caller = self.conn.caller(request.model);
        let url = self.conn.provider.url("/v1/messages");
        let body = request_body(request);
        let response = http::send(&caller, &url, || {
            http::json_body(self.authorised(self.conn.http.post(&url)), &body)
        })
        .await?;
        let mut allowance = Allowance::for_tokens(request.max_tokens);
        if !http::is_event_stream(&response) {
            let value = http::read_json(&caller, response).await?;
            let reply = whole_reply(&value).within(&mut allowance);
            if !reply.text.is_empty() {
                on_text(&reply.text);
            }
            return Ok(reply);
        }
        let mut stream = StreamState {
            allowance,
            ..StreamState::default()
        };
        http::read_events(&caller, response, |event| {
            let value = http::event_json(&caller, &event.data)?;
            let ended = stream.take(&caller, &value, on_text)?;
            Ok(ended || stream.allowance.is_cut())
        })
        .await?;
        Ok(stream.finish())
    }

    async fn list_models(&self) -> Result<Vec<String>, LlmError> {
        let caller = self.conn.caller("");
        let url = self.conn.provider.url("/v1/models");
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

fn request_body(request: &ChatRequest<'_>) -> Value {
    // Anthropic wants user and assistant turns to alternate: consecutive messages of one role
    // (tool results, a nudge after them) become one turn.
    let mut turns: Vec<(&str, Vec<Value>)> = Vec::new();
    for message in request.messages {
        let (role, blocks) = match message {
            ChatMessage::User { text } => ("user", vec![json!({"type": "text", "text": text})]),
            ChatMessage::Assistant { text, tool_calls } => {
                let mut blocks = Vec::new();
                if !text.trim().is_empty() {
                    blocks.push(json!({"type": "text", "text": text}));
                }
                for call in tool_calls {
                    blocks.push(json!({
                        "type": "tool_use", "id": call.id, "name": call.name,
                        "input": input_object(&call.arguments),
                    }));
                }
                ("assistant", blocks)
            }
            ChatMessage::ToolResult {
                call_id,
                content,
                is_error,
                ..
            } => (
                "user",
                vec![json!({
                    "type": "tool_result", "tool_use_id": call_id,
                    "content": content, "is_error": is_error,
                })],
            ),
        };
        if blocks.is_empty() {
            continue;
        }
        match turns.last_mut() {
            Some((last, content)) if *last == role => content.extend(blocks),
            _ => turns.push((role, blocks)),
        }
    }
    let mut body = json!({
        "model": request.model,
        "max_tokens": request.max_tokens,
        "messages": turns.into_iter()
            .map(|(role, content)| json!({"role": role, "content": content}))
            .collect::<Vec<_>>(),
        "stream": true,
    });
    if !request.system.is_empty() {
        body["system"] = json!(request.system);
    }
    if let Some(t) = request.temperature {
        body["temperature"] = json!(t);
    }
    if !request.tools.is_empty() {
        body["tools"] = request
            .tools
            .iter()
            .map(
                |t| json!({"name": t.name, "description": t.description, "input_schema": t.schema}),
            )
            .collect();
    }
    body
}

/// The model's arguments as the object Anthropic expects back; text that is not an object
/// (the model's mistake, already answered with a tool error) goes back as an empty one.
fn input_object(arguments: &str) -> Value {
    match serde_json::from_str::<Value>(arguments) {
        Ok(v @ Value::Object(_)) => v,
        _ => json!({}),
    }
}

fn n(v: Option<&Value>) -> u64 {
    v.and_then(Value::as_u64).unwrap_or(0)
}

/// Input as Anthropic counts it excludes cache reads and writes; Healer's prompt tokens
/// include them (as OpenAI's do), with the reads also counted as cached.
fn start_usage(u: &Value) -> Usage {
    let read = n(u.get("cache_read_input_tokens"));
    Usage {
        prompt_tokens: n(u.get("input_tokens"))
            .saturating_add(read)
            .saturating_add(n(u.get("cache_creation_input_tokens"))),
        completion_tokens: n(u.get("output_tokens")),
        cached_tokens: read,
    }
}

fn whole_reply(value: &Value) -> ChatReply {
    let mut reply = ChatReply {
        usage: value.get("usage").map(start_usage).unwrap_or_default(),
        finish_reason: value
            .get("stop_reason")
            .and_then(Value::as_str)
            .map(str::to_string),
        ..ChatReply::default()
    };
    for block in value
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => {
                reply.text.push_str(
                    block
                        .get("text")
                        .and_then(Value::as_str)
                        .unwrap_or_default(),
                );
            }
            Some("tool_use") => reply.tool_calls.push(ToolCall {
                id: block
                    .get("id")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                name: block
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                arguments: block.get("input").map(Value::to_string).unwrap_or_default(),
            }),
            _ => {}
        }
    }
    reply
}

#[derive(Default)]
struct StreamState {
    text: String,
    calls: PartialCalls,
    /// Content block index → tool call slot.
    blocks: HashMap<u64, usize>,
    usage: Usage,
    finish_reason: Option<String>,
    allowance: Allowance,
}

impl StreamState {
    /// Returns `Ok(true)` at `message_stop`.
    fn take(
        &mut self,
        caller: &Caller<'_>,
        event: &Value,
        on_text: OnText<'_>,
    ) -> Result<bool, LlmError> {
        match event
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default()
        {
            "message_start" => {
                if let Some(u) = event.pointer("/message/usage") {
                    self.usage = start_usage(u);
                }
            }
            "content_block_start" => {
                let block = event.get("content_block").unwrap_or(&Value::Null);
                if block.get("type").and_then(Value::as_str) == Some("tool_use") {
                    let slot = self.blocks.len();
                    let call = self
                        .calls
                        .at(slot)
                        .ok_or_else(|| bad_response(caller, "too many tool calls in one answer"))?;
                    call.id = super::chat::short_name(
                        block.get("id").and_then(Value::as_str).unwrap_or_default(),
                    );
                    call.name = super::chat::short_name(
                        block
                            .get("name")
                            .and_then(Value::as_str)
                            .unwrap_or_default(),
                    );
                    self.blocks.insert(n(event.get("index")), slot);
                }
            }
            "content_block_delta" => {
                let delta = event.get("delta").unwrap_or(&Value::Null);
                match delta.get("type").and_then(Value::as_str) {
                    Some("text_delta") => {
                        let piece = self.allowance.admit(
                            delta
                                .get("text")
                                .and_then(Value::as_str)
                                .unwrap_or_default(),
                        );
                        if !piece.is_empty() {
                            self.text.push_str(piece);
                            on_text(piece);
                        }
                    }
                    Some("input_json_delta") => {
                        let slot = self.blocks.get(&n(event.get("index"))).copied();
                        let call = slot.and_then(|s| self.calls.at(s)).ok_or_else(|| {
                            bad_response(
                                caller,
                                "tool input arrived for a block that was not started",
                            )
                        })?;
                        call.arguments.push_str(
                            self.allowance.admit(
                                delta
                                    .get("partial_json")
                                    .and_then(Value::as_str)
                                    .unwrap_or_default(),
                            ),
                        );
                    }
                    _ => {}
                }
            }
            "message_delta" => {
                if let Some(reason) = event.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.finish_reason = Some(reason.to_string());
                }
                if let Some(out) = event
                    .pointer("/usage/output_tokens")
                    .and_then(Value::as_u64)
                {
                    // Cumulative: the last one is the total.
                    self.usage.completion_tokens = out;
                }
            }
            "message_stop" => return Ok(true),
            "error" => {
                let kind = event
                    .pointer("/error/type")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let message = event
                    .pointer("/error/message")
                    .and_then(Value::as_str)
                    .unwrap_or("no details")
                    .to_string();
                if kind == "overloaded_error" {
                    return Err(LlmError::Server {
                        provider: caller.provider.to_string(),
                        status: 529,
                        attempts: 1,
                        detail: super::http::shorten(
                            &super::keys::scrub(&message, caller.key),
                            300,
                        ),
                    });
                }
                return Err(bad_response(
                    caller,
                    format!("the provider reported an error mid-answer: {message}"),
                ));
            }
            _ => {}
        }
        Ok(false)
    }

    fn finish(self) -> ChatReply {
        let mut tool_calls = self.calls.finish();
        // A tool call with no input streamed means an empty object.
        for call in &mut tool_calls {
            if call.arguments.trim().is_empty() {
                call.arguments = "{}".to_string();
            }
        }
        ChatReply {
            text: self.text,
            tool_calls,
            usage: self.usage,
            finish_reason: if self.allowance.is_cut() {
                Some(CUT_OFF.to_string())
            } else {
                self.finish_reason
            },
            unusable: false,
        }
    }
}
