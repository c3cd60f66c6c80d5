//! One session on opencode's server (`opencode serve` on 127.0.0.1, a password of its own,
//! started in the worktree): Healer creates opencode's session (or continues it), gives it the
//! prompt, and follows the server's event stream until the session is idle with nothing more
//! to say to it.
//!
//! - The session's parts become steps as they finish, through the same reader as a line of
//!   `opencode run --format json` (a text part once it ends, a tool part once it is done, a
//!   model call's start and finish); a part of a kind Healer does not know is a raw line.
//! - A question (`permission.asked`) is answered by the project's approvals, or waits for the
//!   person, while the stream goes on; opencode hears a refusal's reason.
//! - A message waiting in the session's mailbox (steering, the person's) is given to opencode
//!   while it works (`prompt_async`): it reads it before its next model call.

use std::time::Duration;

use serde_json::{json, Value};
use tokio::sync::mpsc;
use tokio::task::JoinSet;

use super::events::{Events, Seen};
use super::follow::{Follow, Next};
use crate::agent::{AgentUpdate, SessionChannel};
use crate::approval::AgentRequest;
use crate::llm::sse::SseParser;

/// The user the server's password goes with (opencode's default).
const USER: &str = "opencode";

/// How long the server may take to say where it listens.
pub(super) const START_WAIT: Duration = Duration::from_secs(60);

/// How long one request to the server may take (not the event stream).
const REQUEST_WAIT: Duration = Duration::from_secs(30);

/// Times a session's unanswered messages are given again when it goes idle.
const MAX_GIVEN_AGAIN: u32 = 2;

/// How often the mailbox is looked at while opencode works.
const MAILBOX_EVERY: Duration = Duration::from_millis(500);

/// Where the server said it listens, from its line "opencode server listening on http://…".
pub(super) fn listening_at(line: &str) -> Option<String> {
    let at = line.find("listening on ")? + "listening on ".len();
    let url = line[at..].split_whitespace().next()?;
    let url = url.trim_end_matches('/');
    (url.starts_with("http://127.0.0.1:") || url.starts_with("http://localhost:"))
        .then(|| url.to_string())
}

/// The server of one session.
#[derive(Clone)]
pub(super) struct Server {
    base: String,
    password: String,
    client: reqwest::Client,
}

impl Server {
    pub fn new(base: String, password: String) -> Result<Server, String> {
        let client = reqwest::Client::builder()
            .no_proxy()
            .build()
            .map_err(|e| format!("no HTTP client: {e}"))?;
        Ok(Server {
            base,
            password,
            client,
        })
    }

    fn request(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        self.client
            .request(method, format!("{}{path}", self.base))
            .basic_auth(USER, Some(&self.password))
    }

    /// A request answered with JSON (or nothing); an error status is an error, in words.
    async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> Result<Value, String> {
        let mut request = self.request(method, path).timeout(REQUEST_WAIT);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request
            .send()
            .await
            .map_err(|e| format!("opencode's server did not answer {path}: {e}"))?;
        let status = response.status();
        let text = response.text().await.unwrap_or_default();
        if !status.is_success() {
            let said: String = text.chars().take(300).collect();
            return Err(format!(
                "opencode's server answered {path} with {status}: {said}"
            ));
        }
        Ok(serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    /// The session to work in: `resume`'s (it must exist), else a new one titled `title`.
    async fn session(&self, resume: Option<&str>, title: &str) -> Result<String, String> {
        if let Some(id) = resume {
            let found = self
                .call(
                    reqwest::Method::GET,
                    &format!("/session/{}", segment(id)),
                    None,
                )
                .await
                .map_err(|e| {
                    format!("opencode's earlier session {id} could not be continued: {e}")
                })?;
            return match found.get("id").and_then(Value::as_str) {
                Some(same) if same == id => Ok(id.to_string()),
                _ => Err(format!("opencode's earlier session {id} was not found")),
            };
        }
        let made = self
            .call(
                reqwest::Method::POST,
                "/session",
                Some(json!({ "title": title })),
            )
            .await?;
        made.get("id")
            .and_then(Value::as_str)
            .filter(|id| !id.is_empty())
            .map(str::to_string)
            .ok_or_else(|| "opencode's server made a session without an id".to_string())
    }

    /// Give the session `text`; it starts working, or reads it before its next model call.
    async fn prompt(&self, session: &str, text: &str, model: Option<&Value>) -> Result<(), String> {
        let mut body = json!({ "parts": [{ "type": "text", "text": text }] });
        if let Some(model) = model {
            body["model"] = model.clone();
        }
        self.call(
            reqwest::Method::POST,
            &format!("/session/{}/prompt_async", segment(session)),
            Some(body),
        )
        .await
        .map(|_| ())
    }

    /// The questions waiting for an answer, as the events that asked them.
    async fn waiting_questions(&self) -> Vec<Value> {
        match self.call(reqwest::Method::GET, "/permission", None).await {
            Ok(Value::Array(waiting)) => waiting
                .into_iter()
                .map(|asked| json!({"type": "permission.asked", "properties": asked}))
                .collect(),
            _ => Vec::new(),
        }
    }

    /// Answer a question: allowed once, or refused with the reason opencode tells the model.
    async fn reply(&self, request: &str, refused: Option<&str>) -> Result<(), String> {
        let body = match refused {
            None => json!({ "reply": "once" }),
            Some(why) => json!({ "reply": "reject", "message": why }),
        };
        self.call(
            reqwest::Method::POST,
            &format!("/permission/{}/reply", segment(request)),
            Some(body),
        )
        .await
        .map(|_| ())
    }
}

/// An id as one segment of a path: only what opencode's ids are made of passes.
fn segment(id: &str) -> String {
    id.chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
        .collect()
}

/// How following the session ended.
pub(super) enum Driven {
    /// The session went idle with nothing more to give it.
    Idle { session: String },
    /// The server went away or would not do what it was asked, in words.
    Lost {
        why: String,
        session: Option<String>,
    },
}

/// What a session on the server needs from the adapter.
pub(super) struct Drive<'a> {
    pub server: Server,
    pub prompt: &'a str,
    pub resume: Option<&'a str>,
    pub title: String,
    /// `{"providerID", "modelID"}` when a model is named.
    pub model: Option<Value>,
    pub channel: Option<SessionChannel>,
    pub updates: &'a mpsc::UnboundedSender<AgentUpdate>,
}

/// Follow one session on the server to its end (see the module's note).
pub(super) async fn drive(d: Drive<'_>, events: &mut Events) -> Driven {
    let lost = |why: String, session: Option<String>| Driven::Lost { why, session };
    // The stream is open before anything is asked, so nothing it says is missed.
    let mut stream = match d
        .server
        .request(reqwest::Method::GET, "/event")
        .header("accept", "text/event-stream")
        .send()
        .await
    {
        Ok(r) if r.status().is_success() => r,
        Ok(r) => {
            return lost(
                format!(
                    "opencode's server refused its event stream ({})",
                    r.status()
                ),
                None,
            )
        }
        Err(e) => {
            return lost(
                format!("opencode's event stream could not be opened: {e}"),
                None,
            )
        }
    };
    let session = match d.server.session(d.resume, &d.title).await {
        Ok(session) => session,
        Err(why) => return lost(why, None),
    };
    let _ = d.updates.send(AgentUpdate::Started {
        agent_session_id: session.clone(),
        transcript: None,
    });
    if let Err(why) = d.server.prompt(&session, d.prompt, d.model.as_ref()).await {
        return lost(why, Some(session));
    }
    let mut follow = Follow::new(session.clone());
    let mut given_again = 0;
    let mut parser = SseParser::default();
    let mut asks: JoinSet<Result<(), String>> = JoinSet::new();
    let mut mailbox = tokio::time::interval(MAILBOX_EVERY);
    mailbox.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            chunk = stream.chunk() => {
                let bytes = match chunk {
                    Ok(Some(bytes)) => bytes,
                    Ok(None) => return lost("opencode's server ended its event stream".to_string(), Some(session)),
                    Err(e) => return lost(format!("opencode's event stream broke: {e}"), Some(session)),
                };
                let parsed: Vec<Value> = match parser.feed(&bytes) {
                    Ok(parsed) => parsed
                        .into_iter()
                        .map(|e| serde_json::from_str(&e.data).unwrap_or(Value::String(e.data)))
                        .collect(),
                    // An event larger than Healer reads (a question about a huge file's
                    // change, a whole file written): passed over, and the questions waiting
                    // are read from the server instead, so none is left unanswered.
                    Err(why) => {
                        tracing::warn!("opencode's event stream: {why}; the event is passed over");
                        parser.skip_event();
                        d.server.waiting_questions().await
                    }
                };
                for event in parsed {
                    let Value::Object(_) = event else {
                        let line = event.as_str().unwrap_or_default();
                        events_line(events, d.updates, line, &d.server.password);
                        continue;
                    };
                    match follow.event(&event) {
                        Next::Nothing => {}
                        Next::Line(line) => events_line(events, d.updates, &line, &d.server.password),
                        Next::Ask { id, requests } => {
                            let server = d.server.clone();
                            let channel = d.channel.clone();
                            asks.spawn(async move {
                                let refused = answer(channel.as_ref(), requests).await;
                                server.reply(&id, refused.as_deref()).await
                            });
                        }
                        Next::Tampered => {
                            return lost(
                                "a question of opencode's was answered \"always\" by something \
                                 other than Healer: a command it ran reached its server, so \
                                 Healer ended the session"
                                    .to_string(),
                                Some(session),
                            );
                        }
                        Next::Idle => {
                            // A message given while it worked that it did not read (it had
                            // just decided to stop) is given again, twice at most (a session
                            // that never answers is not fed forever); then what waits since.
                            let unread = follow.unread().filter(|_| given_again < MAX_GIVEN_AGAIN);
                            given_again += u32::from(unread.is_some());
                            let waiting = d.channel.as_ref().and_then(|c| c.0.take_messages("live"));
                            if let Some(text) = &waiting {
                                say(d.updates, text);
                            }
                            let text = [unread, waiting].into_iter().flatten().collect::<Vec<_>>().join("\n\n");
                            if text.is_empty() {
                                return Driven::Idle { session };
                            }
                            follow.given(&text);
                            if let Err(why) = d.server.prompt(&session, &text, d.model.as_ref()).await {
                                return lost(why, Some(session));
                            }
                        }
                    }
                }
            }
            Some(done) = asks.join_next(), if !asks.is_empty() => {
                if let Ok(Err(why)) = done {
                    tracing::warn!("an answer did not reach opencode: {why}");
                }
            }
            _ = mailbox.tick() => {
                let waiting = d.channel.as_ref().is_some_and(|c| c.0.waiting());
                if waiting && follow.busy() {
                    if let Some(text) = d.channel.as_ref().and_then(|c| c.0.take_messages("live")) {
                        say(d.updates, &text);
                        follow.given(&text);
                        if let Err(why) = d.server.prompt(&session, &text, d.model.as_ref()).await {
                            return lost(why, Some(session));
                        }
                    }
                }
            }
        }
    }
}

/// A message given to the agent, as the session's step.
fn say(updates: &mpsc::UnboundedSender<AgentUpdate>, text: &str) {
    let _ = updates.send(AgentUpdate::Step(crate::agent::text_step(
        crate::session::StepSource::User,
        text.to_string(),
    )));
}

/// A line through the `run --format json` reader, what it saw sent on.
/// The server's password is never in a step (a command may print its environment).
fn events_line(
    events: &mut Events,
    updates: &mpsc::UnboundedSender<AgentUpdate>,
    line: &str,
    password: &str,
) {
    let mut seen = Vec::new();
    events.line(line, &mut seen);
    let hide = |text: String| {
        if text.contains(password) {
            text.replace(password, crate::secrets::REDACTED)
        } else {
            text
        }
    };
    for item in seen {
        let update = match item {
            Seen::Raw(line) => AgentUpdate::Raw(hide(line)),
            Seen::Step(mut step) => {
                step.text = hide(step.text);
                step.arguments = step.arguments.map(hide);
                AgentUpdate::Step(step)
            }
        };
        let _ = updates.send(update);
    }
}

/// The project's answer to a question (all its requests allowed, or the first refusal), or a
/// refusal when there is nobody to ask.
async fn answer(
    channel: Option<&SessionChannel>,
    requests: Result<Vec<AgentRequest>, String>,
) -> Option<String> {
    let requests = match requests {
        Ok(requests) => requests,
        Err(why) => return Some(why),
    };
    let Some(channel) = channel else {
        return Some("Nobody supervises this session to ask, so this was not allowed.".to_string());
    };
    for request in requests {
        if let Some(refused) = channel.0.ask(None, request).await {
            return Some(refused);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_servers_address_is_read_from_its_line_and_only_on_this_computer() {
        assert_eq!(
            listening_at("opencode server listening on http://127.0.0.1:41234"),
            Some("http://127.0.0.1:41234".to_string())
        );
        assert_eq!(
            listening_at("opencode server listening on http://10.0.0.2:80"),
            None
        );
        assert_eq!(listening_at("some log line"), None);
    }
}
