//! The bounded agent loop: system prompt + messages + tools → model → tool calls checked
//! against their schemas → tools run → results appended → again, until the model answers
//! without tool calls or a bound is reached (steps, tokens, time, malformed replies in a row).
//! Every step is stored in the task's thread and published on the bus; every call's usage is
//! recorded against the task and the day, and no call is made that would cross a cap.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use super::agent_run::{AgentOutcome, AgentRun, StopReason};
use super::budget::{self, estimate_tokens, MIN_COMPLETION_TOKENS};
use super::chat::{ChatMessage, ChatReply, ChatRequest, ToolCall, Usage};
use super::thread::{MessageRole, NewMessage, TaskStatus, ThreadMessage, ThreadText};
use super::tools::Rejected;
use super::usage::{today, UsageRecord};
use super::{settings, Llm};
use crate::error::LlmError;
use crate::error::Result;
use crate::events::Event;
use crate::secrets::redact_owned;

/// The most characters of one tool result the model is given (and the thread keeps).
const MAX_TOOL_RESULT_CHARS: usize = 20_000;

/// What the model is told after a reply it could not use.
const NUDGE: &str = "Your last reply had no usable answer or tool call. Call one of the tools with arguments that match its schema, or give your answer as you were asked to.";

impl Llm {
    /// Run the loop for `run.task_id`. A bound ends it with `Ok` and a [`StopReason`]; a
    /// failed call or a cap that refuses one ends it with the typed error. Either way the
    /// task is finished with a summary.
    pub async fn run_agent(&self, run: AgentRun) -> Result<AgentOutcome> {
        let task_id = run.task_id;
        let result = self.drive(run).await;
        let (status, summary) = match &result {
            Ok(outcome) => (
                match outcome.stop {
                    StopReason::Answered => TaskStatus::Finished,
                    _ => TaskStatus::Stopped,
                },
                summary(outcome),
            ),
            Err(e) => (TaskStatus::Failed, e.to_string()),
        };
        self.inner.store.finish_task(task_id, status, &summary)?;
        self.emit(Event::TaskFinished {
            task_id,
            status,
            summary,
        })?;
        result
    }

    async fn drive(&self, mut run: AgentRun) -> Result<AgentOutcome> {
        let store = &self.inner.store;
        let mut inbox = run.inbox.take();
        // Stored first: what was asked stays in the thread even when no model can answer.
        if !run.system.is_empty() && run.history.is_empty() {
            self.record(run.task_id, NewMessage::system(&run.system))?;
        }
        for message in &run.messages {
            self.record(run.task_id, NewMessage::from_chat(message))?;
        }
        let choice = match run.choice.take() {
            Some(choice) => choice,
            None => self.resolve_tier(run.tier)?,
        };
        if let Some(note) = &choice.fallback {
            tracing::info!(task_id = run.task_id, "{note}");
        }
        let limits = match run.limits {
            Some(l) => l,
            None => {
                let mut limits = settings::loop_settings(store)?;
                // The tier's time budget stands for the loop's own (a slow model at home).
                if let Some(minutes) = choice.minutes {
                    limits.max_duration_secs = minutes.saturating_mul(60);
                }
                limits
            }
        };
        let budgets = settings::budgets(store)?;
        let client = self.client_for(&choice.provider).await?;
        let price = choice.provider.price(&choice.model).cloned();
        // The budget counts what the model writes; what it reads (the prompt, sent again with
        // every step) is held by the per-task and daily caps in `budget::allowance`.
        let token_limit = run.max_tokens.unwrap_or(u64::from(choice.budget_tokens));
        let temperature = choice.temperature.or(run.temperature);
        let deadline = Instant::now() + Duration::from_secs(u64::from(limits.max_duration_secs));
        let specs = run.tools.specs();

        let mut conversation = run.history;
        conversation.extend(run.messages);
        let mut prompt_chars = run.system.len()
            + conversation.iter().map(chars).sum::<usize>()
            + specs
                .iter()
                .map(|s| s.name.len() + s.description.len() + s.schema.to_string().len())
                .sum::<usize>();

        let mut outcome = AgentOutcome {
            task_id: run.task_id,
            stop: StopReason::Answered,
            answer: None,
            steps: 0,
            usage: Usage::default(),
            invalid_tool_calls: 0,
            malformed_replies: 0,
            unreadable: None,
            tools_run: 0,
            elapsed_secs: 0,
            tokens_per_sec: None,
            choice,
        };
        let mut in_a_row = 0u32;
        let mut unreadable_in_a_row = 0u32;
        // How fast the model writes, for "answers too slowly": the time spent waiting for it,
        // and what it streamed (a call cut by the time limit returns no usage).
        let began = Instant::now();
        let model_ms = AtomicU64::new(0);
        let streamed = Arc::new(AtomicU64::new(0));
        let stop = |mut outcome: AgentOutcome, reason| {
            outcome.stop = reason;
            outcome.elapsed_secs = began.elapsed().as_secs();
            let waited = model_ms.load(Ordering::Relaxed) as f64 / 1000.0;
            let written = outcome
                .usage
                .completion_tokens
                .max(estimate_tokens(streamed.load(Ordering::Relaxed) as usize));
            outcome.tokens_per_sec = (waited >= 1.0).then(|| written as f64 / waited);
            Ok(outcome)
        };
        loop {
            for text in inbox.as_mut().map(|take| take()).unwrap_or_default() {
                let message = ChatMessage::User { text };
                self.record(run.task_id, NewMessage::from_chat(&message))?;
                prompt_chars += chars(&message);
                conversation.push(message);
            }
            if outcome.steps >= limits.max_steps {
                return stop(outcome, StopReason::StepLimit);
            }
            let estimate = estimate_tokens(prompt_chars);
            let left = token_limit.saturating_sub(outcome.usage.completion_tokens);
            if left < u64::from(MIN_COMPLETION_TOKENS) {
                return stop(outcome, StopReason::TokenLimit);
            }
            let mut wanted = u32::try_from(left).unwrap_or(u32::MAX);
            let spent = store.spent(Some(run.task_id), &today())?;
            if let Some(cap) = run.task_tokens {
                // The caller's own tokens per task, what is read counted too, like the caps.
                let Some(room) = budget::room(cap, spent.task_tokens, estimate) else {
                    return stop(outcome, StopReason::TokenLimit);
                };
                wanted = wanted.min(u32::try_from(room).unwrap_or(u32::MAX));
            }
            let max_tokens = budget::allowance(&budgets, spent, estimate, wanted, price.as_ref())?;

            let task_id = run.task_id;
            let text = self.inner.text.clone();
            let counted = streamed.clone();
            let on_text = move |piece: &str| {
                counted.fetch_add(piece.len() as u64, Ordering::Relaxed);
                // No live viewer is not an error: the stored message follows.
                let _ = text.send(ThreadText {
                    task_id,
                    text: crate::secrets::redact(piece).into_owned(),
                });
            };
            let request = ChatRequest {
                model: &outcome.choice.model,
                system: &run.system,
                messages: &conversation,
                tools: &specs,
                max_tokens,
                temperature,
                answer_schema: run.answer_schema.as_ref(),
            };
            let asked = Instant::now();
            let streamed_before = streamed.load(Ordering::Relaxed);
            let answered = tokio::time::timeout_at(deadline, client.chat(&request, &on_text)).await;
            model_ms.fetch_add(
                u64::try_from(asked.elapsed().as_millis()).unwrap_or(u64::MAX),
                Ordering::Relaxed,
            );
            // What this call streamed, spent even when no reply comes of it.
            let written = streamed.load(Ordering::Relaxed) - streamed_before;
            let reply = match answered {
                Err(_) => {
                    // Cut by the time limit: what it read and wrote so far was still spent.
                    let usage =
                        self.account_cut(&outcome, written, estimate, price.as_ref(), asked)?;
                    outcome.usage.add(usage);
                    if written == 0 && !outcome.choice.provider.is_local() {
                        // A hosted model that sent nothing at all until the limit hangs; one
                        // at home may still be reading a long prompt.
                        return Err(LlmError::Stalled {
                            provider: outcome.choice.provider.name.clone(),
                            detail: "nothing came before the time limit".to_string(),
                        }
                        .into());
                    }
                    return stop(outcome, StopReason::TimeLimit);
                }
                Ok(Err(LlmError::BadResponse { detail, .. })) => {
                    // The call was answered, so what it read and streamed was spent.
                    let usage =
                        self.account_cut(&outcome, written, estimate, price.as_ref(), asked)?;
                    outcome.usage.add(usage);
                    tracing::warn!(task_id, "unreadable model reply: {detail}");
                    outcome.malformed_replies += 1;
                    outcome.unreadable = Some(detail);
                    in_a_row += 1;
                    unreadable_in_a_row += 1;
                    if in_a_row >= limits.max_malformed_replies {
                        // Only the provider's unreadable answers in the row: its fault.
                        let reason = if unreadable_in_a_row == in_a_row {
                            StopReason::UnreadableReplies
                        } else {
                            StopReason::MalformedReplies
                        };
                        return stop(outcome, reason);
                    }
                    continue;
                }
                Ok(Err(e @ LlmError::Stalled { .. })) => {
                    self.account_cut(&outcome, written, estimate, price.as_ref(), asked)?;
                    return Err(e.into());
                }
                Ok(Err(e)) => return Err(e.into()),
                Ok(Ok(reply)) => redacted(reply),
            };
            unreadable_in_a_row = 0;
            outcome.steps += 1;
            let usage =
                self.account(&outcome, &reply, estimate, price.as_ref(), asked.elapsed())?;
            outcome.usage.add(usage);
            self.record(
                task_id,
                NewMessage {
                    role: MessageRole::Assistant,
                    content: reply.text.clone(),
                    tool_calls: reply.tool_calls.clone(),
                    provider: Some(outcome.choice.provider.name.clone()),
                    model: Some(outcome.choice.model.clone()),
                    usage: Some(usage),
                    ..NewMessage::default()
                },
            )?;
            let assistant = ChatMessage::Assistant {
                text: reply.text.clone(),
                tool_calls: reply.tool_calls.clone(),
            };
            prompt_chars += chars(&assistant);
            conversation.push(assistant);

            if reply.tool_calls.is_empty() {
                if !reply.unusable && !reply.text.trim().is_empty() {
                    outcome.answer = Some(reply.text);
                    return stop(outcome, StopReason::Answered);
                }
                outcome.malformed_replies += 1;
                in_a_row += 1;
                if in_a_row >= limits.max_malformed_replies {
                    return stop(outcome, StopReason::MalformedReplies);
                }
                let nudge = ChatMessage::User {
                    text: NUDGE.to_string(),
                };
                self.record(task_id, NewMessage::nudge(NUDGE))?;
                prompt_chars += chars(&nudge);
                conversation.push(nudge);
                continue;
            }

            let mut usable = 0;
            let mut timed_out = false;
            let mut finished: Option<String> = None;
            for call in &reply.tool_calls {
                let (content, is_error) = if timed_out {
                    (
                        "error: not run, the time limit was reached".to_string(),
                        true,
                    )
                } else {
                    match run.tools.check(call) {
                        Err(Rejected(why)) => {
                            outcome.invalid_tool_calls += 1;
                            (format!("error: {why}"), true)
                        }
                        Ok((tool, args)) => {
                            usable += 1;
                            let ends = tool.ends_loop();
                            match tokio::time::timeout_at(deadline, tool.call(args)).await {
                                Err(_) => {
                                    timed_out = true;
                                    (
                                        "error: the time limit was reached while the tool ran"
                                            .to_string(),
                                        true,
                                    )
                                }
                                Ok(Ok(text)) => {
                                    if ends {
                                        finished = Some(redact_owned(text.clone()));
                                    }
                                    (cap(redact_owned(text)), false)
                                }
                                Ok(Err(e)) => (cap(redact_owned(format!("error: {e}"))), true),
                            }
                        }
                    }
                };
                let result = tool_result(call, content, is_error);
                self.record(task_id, NewMessage::from_chat(&result))?;
                prompt_chars += chars(&result);
                conversation.push(result);
            }
            outcome.tools_run += usable;
            if timed_out {
                return stop(outcome, StopReason::TimeLimit);
            }
            if let Some(answer) = finished {
                outcome.answer = Some(answer);
                return stop(outcome, StopReason::Answered);
            }
            if usable == 0 {
                outcome.malformed_replies += 1;
                in_a_row += 1;
                if in_a_row >= limits.max_malformed_replies {
                    return stop(outcome, StopReason::MalformedReplies);
                }
            } else {
                in_a_row = 0;
            }
        }
    }

    /// Record a call that was answered but gave no reply (cut by the time limit, broken off,
    /// unreadable): the prompt it read and the `written` bytes it streamed were still spent.
    fn account_cut(
        &self,
        outcome: &AgentOutcome,
        written: u64,
        prompt_estimate: u64,
        price: Option<&super::ModelPrice>,
        asked: Instant,
    ) -> Result<Usage> {
        let cut = ChatReply {
            usage: Usage {
                prompt_tokens: prompt_estimate,
                completion_tokens: estimate_tokens(usize::try_from(written).unwrap_or(usize::MAX))
                    .max(1),
                cached_tokens: 0,
            },
            ..ChatReply::default()
        };
        self.account(outcome, &cut, prompt_estimate, price, asked.elapsed())
    }

    /// Record a call's usage (estimated when the provider reported none) against the task
    /// and the day.
    fn account(
        &self,
        outcome: &AgentOutcome,
        reply: &ChatReply,
        prompt_estimate: u64,
        price: Option<&super::ModelPrice>,
        waited: Duration,
    ) -> Result<Usage> {
        let written = reply.text.len()
            + reply
                .tool_calls
                .iter()
                .map(|c| c.name.len() + c.arguments.len())
                .sum::<usize>();
        let usage = if reply.usage == Usage::default() {
            Usage {
                prompt_tokens: prompt_estimate,
                completion_tokens: estimate_tokens(written),
                cached_tokens: 0,
            }
        } else {
            // What arrived counts, whatever the server says it sent: a token is rarely more
            // than eight bytes, so a claim below that is not believed.
            let floor = (written as u64).div_ceil(8);
            Usage {
                completion_tokens: reply.usage.completion_tokens.max(floor),
                ..reply.usage
            }
        };
        self.inner.store.record_usage(&UsageRecord {
            task_id: Some(outcome.task_id),
            tier: outcome.choice.used,
            provider: outcome.choice.provider.name.clone(),
            model: outcome.choice.model.clone(),
            usage,
            cost_usd: price.map(|p| budget::cost(&usage, p)),
            local: outcome.choice.provider.is_local(),
            duration_ms: u64::try_from(waited.as_millis()).unwrap_or(u64::MAX),
        })?;
        Ok(usage)
    }

    /// Store a step of the thread and publish it.
    fn record(&self, task_id: i64, message: NewMessage) -> Result<ThreadMessage> {
        let stored = self.inner.store.add_message(task_id, &message)?;
        self.emit(Event::TaskMessageAdded {
            task_id,
            message_id: stored.id,
            role: stored.role,
            summary: stored.summary(),
        })?;
        Ok(stored)
    }
}

fn tool_result(call: &ToolCall, content: String, is_error: bool) -> ChatMessage {
    ChatMessage::ToolResult {
        call_id: call.id.clone(),
        name: call.name.clone(),
        content,
        is_error,
    }
}

fn chars(message: &ChatMessage) -> usize {
    match message {
        ChatMessage::User { text } => text.len(),
        ChatMessage::Assistant { text, tool_calls } => {
            text.len()
                + tool_calls
                    .iter()
                    .map(|c| c.id.len() + c.name.len() + c.arguments.len())
                    .sum::<usize>()
        }
        ChatMessage::ToolResult {
            call_id, content, ..
        } => call_id.len() + content.len(),
    }
}

/// Keep a tool's output within what the model is given, saying what was cut.
/// A model's reply as the engine keeps and acts on it: a known secret in its text or its tool
/// calls (a model may repeat what it was shown) is redacted.
fn redacted(mut reply: ChatReply) -> ChatReply {
    reply.text = redact_owned(reply.text);
    for call in &mut reply.tool_calls {
        call.arguments = redact_owned(std::mem::take(&mut call.arguments));
    }
    reply
}

fn cap(text: String) -> String {
    match text.char_indices().nth(MAX_TOOL_RESULT_CHARS) {
        Some((cut, _)) => format!(
            "{}\n[cut: {} more characters]",
            &text[..cut],
            text[cut..].chars().count()
        ),
        None => text,
    }
}

fn summary(outcome: &AgentOutcome) -> String {
    let mut text = format!(
        "{} after {} step(s), {} tokens",
        capitalised(outcome.stop.describe()),
        outcome.steps,
        outcome.usage.total()
    );
    if outcome.invalid_tool_calls > 0 {
        text.push_str(&format!(
            ", {} invalid tool call(s)",
            outcome.invalid_tool_calls
        ));
    }
    if let Some(note) = &outcome.choice.fallback {
        text.push_str(&format!(" ({note})"));
    }
    text
}

fn capitalised(s: &str) -> String {
    crate::workflow::capitalise(s)
}
