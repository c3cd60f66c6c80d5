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

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use serde_json::{json, Value};
use tokio::sync::mpsc;
use tokio::task::JoinSet;

use super::events::{Events, Seen};
use crate::agent::{AgentUpdate, SessionChannel};
use crate::approval::AgentRequest;
use crate::llm::sse::SseParser;

/// The user the server's password goes with (opencode's default).
const USER: &str = "opencode";

/// How long the server may take to say where it listens.
pub(super) const START_WAIT: Duration = Duration::from_secs(60);

/// How long one request to the server may take (not the event stream).
const REQUEST_WAIT: Duration = Duration::from_secs(30);

/// How often the mailbox is looked at while opencode works.
const MAILBOX_EVERY: Duration = Duration::from_millis(500);

/// The most of a file's change a question shows.
const PREVIEW_CHARS: usize = 4000;

/// Kinds of parts Healer knows and does not show as steps (the model's reasoning, opencode's
/// own bookkeeping).
const QUIET_PARTS: &[&str] = &[
    "reasoning",
    "file",
    "snapshot",
    "patch",
    "agent",
    "subtask",
    "compaction",
    "retry",
];

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
                let parsed = match parser.feed(&bytes) {
                    Ok(parsed) => parsed,
                    Err(why) => return lost(format!("opencode's event stream: {why}"), Some(session)),
                };
                for event in parsed {
                    let Ok(event) = serde_json::from_str::<Value>(&event.data) else {
                        events_line(events, d.updates, &event.data);
                        continue;
                    };
                    match follow.event(&event) {
                        Next::Nothing => {}
                        Next::Line(line) => events_line(events, d.updates, &line),
                        Next::Ask { id, requests } => {
                            let server = d.server.clone();
                            let channel = d.channel.clone();
                            asks.spawn(async move {
                                let refused = answer(channel.as_ref(), requests).await;
                                server.reply(&id, refused.as_deref()).await
                            });
                        }
                        Next::Idle => {
                            // A message given while it worked that it did not read (it had
                            // just decided to stop) is given again; then what waits since.
                            let unread = follow.unread();
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
                if waiting && follow.busy {
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
fn events_line(events: &mut Events, updates: &mpsc::UnboundedSender<AgentUpdate>, line: &str) {
    let mut seen = Vec::new();
    events.line(line, &mut seen);
    for item in seen {
        let update = match item {
            Seen::Raw(line) => AgentUpdate::Raw(line),
            Seen::Step(step) => AgentUpdate::Step(step),
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

/// What the stream's state makes of one event.
enum Next {
    Nothing,
    /// A line for the `run --format json` reader.
    Line(String),
    /// A question to answer.
    Ask {
        id: String,
        requests: Result<Vec<AgentRequest>, String>,
    },
    /// The session stopped working.
    Idle,
}

struct Follow {
    session: String,
    /// The input of each tool call seen (a question names its call).
    inputs: HashMap<String, Value>,
    /// Parts already shown (a part is sent again each time it changes).
    shown: HashSet<String>,
    /// The session worked since it was last given something.
    busy: bool,
    /// Questions already taken.
    asked: HashSet<String>,
    /// The session's user messages seen.
    users: HashSet<String>,
    /// Every session's user messages (their words are Healer's, shown already).
    user_messages: HashSet<String>,
    /// Messages given while it worked, whose user message is not seen yet.
    unseen: usize,
    /// User messages given while it worked that no model call has answered yet.
    unanswered: HashSet<String>,
    /// The text of the messages given while it worked, until each is answered.
    given: Vec<String>,
}

impl Follow {
    fn new(session: String) -> Follow {
        Follow {
            session,
            inputs: HashMap::new(),
            shown: HashSet::new(),
            busy: false,
            asked: HashSet::new(),
            users: HashSet::new(),
            user_messages: HashSet::new(),
            unseen: 0,
            unanswered: HashSet::new(),
            given: Vec::new(),
        }
    }

    /// `text` was given to the session.
    fn given(&mut self, text: &str) {
        self.unseen += 1;
        self.given.push(text.to_string());
    }

    /// What was given and not answered by a model call, to give again (all of it, in order:
    /// they cannot be told apart once stored); the count starts over.
    fn unread(&mut self) -> Option<String> {
        let unread = self.unseen > 0 || !self.unanswered.is_empty();
        self.unseen = 0;
        self.unanswered.clear();
        let text = std::mem::take(&mut self.given).join("\n\n");
        (unread && !text.is_empty()).then_some(text)
    }

    /// A message of the session was stored: a user message answers to a giving; a model
    /// call's message names the user message it answers.
    fn message(&mut self, info: &Value) {
        let text = |key: &str| info.get(key).and_then(Value::as_str).unwrap_or_default();
        if text("role") == "user" {
            self.user_messages.insert(text("id").to_string());
        }
        if text("sessionID") != self.session {
            return;
        }
        match text("role") {
            "user" if self.users.insert(text("id").to_string()) && self.unseen > 0 => {
                self.unseen -= 1;
                self.unanswered.insert(text("id").to_string());
            }
            "assistant" => {
                // It answers the newest user message, and so all before it (opencode's ids
                // grow with time).
                let parent = text("parentID");
                self.unanswered.retain(|id| id.as_str() > parent);
                if self.unseen == 0 && self.unanswered.is_empty() {
                    self.given.clear();
                }
            }
            _ => {}
        }
    }

    fn event(&mut self, event: &Value) -> Next {
        let kind = event
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let props = event.get("properties").unwrap_or(&Value::Null);
        let of_ours = props.get("sessionID").and_then(Value::as_str) == Some(self.session.as_str());
        match kind {
            "message.part.updated" => self.part(props.get("part").unwrap_or(&Value::Null)),
            "message.updated" => {
                self.message(props.get("info").unwrap_or(&Value::Null));
                Next::Nothing
            }
            "permission.asked" => {
                let id = props
                    .get("id")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string();
                if id.is_empty() || !self.asked.insert(id.clone()) {
                    return Next::Nothing;
                }
                Next::Ask {
                    requests: self.requests(props),
                    id,
                }
            }
            // `session.idle` is the older word for the same.
            "session.idle" if of_ours && self.busy => {
                self.busy = false;
                Next::Idle
            }
            "session.status" if of_ours => {
                match props.pointer("/status/type").and_then(Value::as_str) {
                    Some("idle") if self.busy => {
                        self.busy = false;
                        Next::Idle
                    }
                    Some("idle") | None => Next::Nothing,
                    Some(_) => {
                        self.busy = true;
                        Next::Nothing
                    }
                }
            }
            "session.error" if of_ours => {
                let error = props.get("error").cloned().unwrap_or(Value::Null);
                Next::Line(
                    json!({"type": "error", "sessionID": self.session, "error": error}).to_string(),
                )
            }
            _ => Next::Nothing,
        }
    }

    fn part(&mut self, part: &Value) -> Next {
        let text = |key: &str| part.get(key).and_then(Value::as_str).unwrap_or_default();
        let (id, kind) = (text("id").to_string(), text("type"));
        let of_user = self.user_messages.contains(text("messageID"));
        if id.is_empty() || of_user || self.shown.contains(&id) {
            return Next::Nothing;
        }
        let line_kind = match kind {
            "text" if part.pointer("/time/end").is_some_and(|e| !e.is_null()) => "text",
            "text" => return Next::Nothing,
            "tool" => {
                let status = part.pointer("/state/status").and_then(Value::as_str);
                if let Some(input) = part.pointer("/state/input") {
                    self.inputs
                        .insert(text("callID").to_string(), input.clone());
                }
                match status {
                    Some("completed" | "error") => "tool_use",
                    _ => return Next::Nothing,
                }
            }
            "step-start" => "step_start",
            "step-finish" => "step_finish",
            quiet if QUIET_PARTS.contains(&quiet) => return Next::Nothing,
            // A kind of part this opencode has and Healer does not know: kept raw.
            other => {
                self.shown.insert(id);
                return Next::Line(
                    json!({"type": format!("part:{other}"), "part": part}).to_string(),
                );
            }
        };
        self.shown.insert(id);
        let session = part.get("sessionID").cloned().unwrap_or(Value::Null);
        Next::Line(json!({"type": line_kind, "sessionID": session, "part": part}).to_string())
    }

    /// What a question asks, as approvals judge it; `Err` with why it is refused when it
    /// cannot be read. A command is judged as the tool call will run it.
    fn requests(&self, asked: &Value) -> Result<Vec<AgentRequest>, String> {
        let permission = asked
            .get("permission")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let call = asked.pointer("/tool/callID").and_then(Value::as_str);
        let input = call.and_then(|c| self.inputs.get(c));
        let metadata = asked.get("metadata").unwrap_or(&Value::Null);
        let patterns: Vec<String> = asked
            .get("patterns")
            .and_then(Value::as_array)
            .map(|p| {
                p.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        let unreadable =
            || format!("Healer could not read this {permission} request, so it was not allowed.");
        Ok(match permission {
            "bash" => {
                // The call's own input, as the tool runs it; else what the question says.
                let command = input
                    .and_then(|i| i.get("command"))
                    .or_else(|| metadata.get("command"))
                    .and_then(Value::as_str)
                    .ok_or_else(unreadable)?;
                let cwd = input
                    .and_then(|i| i.get("workdir"))
                    .and_then(Value::as_str)
                    .map(str::to_string);
                vec![AgentRequest::Command {
                    command: command.to_string(),
                    cwd,
                }]
            }
            "edit" => {
                let preview: String = metadata
                    .get("diff")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .chars()
                    .take(PREVIEW_CHARS)
                    .collect();
                let paths = match metadata.get("filepath").and_then(Value::as_str) {
                    Some(path) => vec![path.to_string()],
                    None => patterns,
                };
                if paths.is_empty() {
                    return Err(unreadable());
                }
                paths
                    .into_iter()
                    .map(|path| AgentRequest::Edit {
                        path,
                        preview: preview.clone(),
                    })
                    .collect()
            }
            other => {
                let detail = ["url", "query"]
                    .iter()
                    .find_map(|k| metadata.get(*k).and_then(Value::as_str))
                    .map(str::to_string)
                    .unwrap_or_else(|| patterns.join(", "));
                vec![AgentRequest::Tool {
                    name: other.to_string(),
                    detail,
                }]
            }
        })
    }
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

    fn follow() -> Follow {
        Follow::new("ses_1".to_string())
    }

    #[test]
    fn a_message_given_while_it_worked_and_not_answered_is_given_again() {
        let mut f = follow();
        let message = |id: &str, role: &str, parent: &str| {
            json!({"type": "message.updated",
            "properties": {"info": {"id": id, "sessionID": "ses_1", "role": role, "parentID": parent}}})
        };
        f.event(&message("msg_1", "user", ""));
        f.given("Stop reading config.ini.");
        f.event(&message("msg_2", "assistant", "msg_1"));
        f.event(&message("msg_3", "user", ""));
        assert_eq!(
            f.unread().as_deref(),
            Some("Stop reading config.ini."),
            "not answered"
        );
        f.given("Again.");
        f.event(&message("msg_4", "user", ""));
        f.event(&message("msg_5", "assistant", "msg_4"));
        assert_eq!(f.unread(), None, "answered");
    }

    #[test]
    fn a_part_is_a_line_once_it_is_done_and_once_only() {
        let mut f = follow();
        let running = json!({"type": "message.part.updated", "properties": {"part": {
            "id": "prt_1", "sessionID": "ses_1", "type": "tool", "tool": "bash", "callID": "c1",
            "state": {"status": "running", "input": {"command": "ls"}}}}});
        assert!(matches!(f.event(&running), Next::Nothing));
        let asked = json!({"type": "permission.asked", "properties": {"id": "per_1",
            "sessionID": "ses_1", "permission": "bash", "patterns": ["ls"],
            "tool": {"messageID": "m", "callID": "c1"}}});
        match f.event(&asked) {
            Next::Ask { id, requests } => {
                assert_eq!(id, "per_1");
                assert_eq!(
                    requests,
                    Ok(vec![AgentRequest::Command {
                        command: "ls".to_string(),
                        cwd: None
                    }])
                );
            }
            _ => panic!("a question"),
        }
        assert!(matches!(f.event(&asked), Next::Nothing), "asked once");
        let done = json!({"type": "message.part.updated", "properties": {"part": {
            "id": "prt_1", "sessionID": "ses_1", "type": "tool", "tool": "bash", "callID": "c1",
            "state": {"status": "completed", "input": {"command": "ls"}, "output": "a"}}}});
        assert!(matches!(f.event(&done), Next::Line(l) if l.contains("\"tool_use\"")));
        assert!(matches!(f.event(&done), Next::Nothing), "shown once");
        let unknown = json!({"type": "message.part.updated", "properties": {"part": {
            "id": "prt_2", "sessionID": "ses_1", "type": "hologram"}}});
        assert!(matches!(f.event(&unknown), Next::Line(l) if l.contains("part:hologram")));
    }

    #[test]
    fn the_session_is_over_when_it_goes_idle_after_working() {
        let mut f = follow();
        let status = |t: &str, s: &str| {
            json!({"type": "session.status",
            "properties": {"sessionID": s, "status": {"type": t}}})
        };
        assert!(matches!(f.event(&status("idle", "ses_1")), Next::Nothing));
        assert!(matches!(f.event(&status("busy", "ses_1")), Next::Nothing));
        assert!(
            matches!(f.event(&status("idle", "ses_2")), Next::Nothing),
            "another session"
        );
        assert!(matches!(f.event(&status("idle", "ses_1")), Next::Idle));
    }

    #[test]
    fn a_question_that_cannot_be_read_is_refused() {
        let f = follow();
        let asked =
            json!({"permission": "bash", "patterns": ["rm -rf /"], "tool": {"callID": "zz"}});
        assert!(f.requests(&asked).is_err());
        let asked = json!({"permission": "edit", "patterns": [], "metadata": {}});
        assert!(f.requests(&asked).is_err());
    }
}
