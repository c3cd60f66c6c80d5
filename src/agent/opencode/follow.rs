//! What opencode's server says, event by event, for one session (see `serve`): which part is
//! done and becomes a line of the `run --format json` reader, which question to answer and what
//! it asks, when the session stopped working, and which message given while it worked no
//! model call answered.

use std::collections::{HashMap, HashSet};

use serde_json::{json, Value};

use crate::approval::AgentRequest;

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

/// What the stream's state makes of one event.
pub(super) enum Next {
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
    /// Something other than Healer answered a question for good (Healer never answers
    /// "always"): a command the agent ran reached its server. The session cannot be trusted.
    Tampered,
}

/// Where a tool call under way runs its command, by its message and call id.
struct Input {
    part: String,
    kept: Value,
    /// Another part came with the same ids.
    twice: bool,
}

pub(super) struct Follow {
    session: String,
    /// The input of each tool call seen (a question names its call).
    inputs: HashMap<String, Input>,
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
    pub fn new(session: String) -> Follow {
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

    /// The session works on something (since it was last given anything).
    pub fn busy(&self) -> bool {
        self.busy
    }

    /// `text` was given to the session.
    pub fn given(&mut self, text: &str) {
        self.unseen += 1;
        self.given.push(text.to_string());
    }

    /// What was given and not answered by a model call, to give again (all of it, in order:
    /// they cannot be told apart once stored); the count starts over.
    pub fn unread(&mut self) -> Option<String> {
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

    pub fn event(&mut self, event: &Value) -> Next {
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
            "permission.replied" if str_of(props, "reply") == "always" => Next::Tampered,
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
                let call = format!("{}/{}", text("messageID"), text("callID"));
                match status {
                    Some("completed" | "error") => {
                        self.inputs.remove(&call);
                        "tool_use"
                    }
                    _ => {
                        // Only where a command runs is kept (a file's whole text is not);
                        // two calls under one id are a call Healer cannot tell apart.
                        if let Some(input) = part.pointer("/state/input") {
                            let kept = json!({"command": input.get("command"),
                                "workdir": input.get("workdir")});
                            let entry = self.inputs.entry(call).or_insert(Input {
                                part: id.clone(),
                                kept: kept.clone(),
                                twice: false,
                            });
                            if entry.part != id {
                                entry.twice = true;
                            }
                            entry.kept = kept;
                        }
                        return Next::Nothing;
                    }
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
        let call = asked
            .get("tool")
            .map(|t| format!("{}/{}", str_of(t, "messageID"), str_of(t, "callID")));
        let input = call.and_then(|c| self.inputs.get(&c));
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
                // What the question says is what the tool runs; where, from the call's input
                // when that is the same command (and no other call shares its id).
                let command = metadata
                    .get("command")
                    .and_then(Value::as_str)
                    .ok_or_else(unreadable)?;
                // (A call still pending has no input yet: only its question says.)
                let said = input.and_then(|i| i.kept.get("command").and_then(Value::as_str));
                if input.is_some_and(|i| i.twice) || said.is_some_and(|c| c != command) {
                    return Err(unreadable());
                }
                let cwd = input
                    .and_then(|i| i.kept.get("workdir"))
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
                // Every file the question names, each judged: a patch may write several, and
                // move one elsewhere (`movePath`).
                let mut paths = patterns;
                let files = metadata.get("files").and_then(Value::as_array);
                let named = metadata.get("filepath").into_iter().chain(
                    files.into_iter().flatten().flat_map(|f| {
                        ["filePath", "movePath"]
                            .into_iter()
                            .filter_map(|k| f.get(k))
                    }),
                );
                for path in named.filter_map(Value::as_str) {
                    if !paths.iter().any(|p| p == path) {
                        paths.push(path.to_string());
                    }
                }
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

fn str_of<'a>(value: &'a Value, key: &str) -> &'a str {
    value.get(key).and_then(Value::as_str).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

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
            "id": "prt_1", "sessionID": "ses_1", "messageID": "m", "type": "tool", "tool": "bash",
            "callID": "c1", "state": {"status": "running",
            "input": {"command": "ls", "workdir": "src"}}}}});
        assert!(matches!(f.event(&running), Next::Nothing));
        let asked = json!({"type": "permission.asked", "properties": {"id": "per_1",
            "sessionID": "ses_1", "permission": "bash", "patterns": ["ls"],
            "metadata": {"command": "ls"}, "tool": {"messageID": "m", "callID": "c1"}}});
        match f.event(&asked) {
            Next::Ask { id, requests } => {
                assert_eq!(id, "per_1");
                assert_eq!(
                    requests,
                    Ok(vec![AgentRequest::Command {
                        command: "ls".to_string(),
                        cwd: Some("src".to_string())
                    }])
                );
            }
            _ => panic!("a question"),
        }
        assert!(matches!(f.event(&asked), Next::Nothing), "asked once");
        let done = json!({"type": "message.part.updated", "properties": {"part": {
            "id": "prt_1", "sessionID": "ses_1", "messageID": "m", "type": "tool", "tool": "bash",
            "callID": "c1", "state": {"status": "completed", "input": {"command": "ls"},
            "output": "a"}}}});
        assert!(matches!(f.event(&done), Next::Line(l) if l.contains("\"tool_use\"")));
        assert!(matches!(f.event(&done), Next::Nothing), "shown once");
        let unknown = json!({"type": "message.part.updated", "properties": {"part": {
            "id": "prt_2", "sessionID": "ses_1", "type": "hologram"}}});
        assert!(matches!(f.event(&unknown), Next::Line(l) if l.contains("part:hologram")));
    }

    #[test]
    fn a_question_answered_for_good_by_anyone_is_tampering() {
        let mut f = follow();
        let replied = |reply: &str| {
            json!({"type": "permission.replied", "properties": {"sessionID": "ses_9",
            "requestID": "per_1", "reply": reply}})
        };
        assert!(matches!(f.event(&replied("once")), Next::Nothing));
        assert!(matches!(f.event(&replied("always")), Next::Tampered));
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
    fn a_command_is_judged_as_the_question_says_it_runs_and_two_calls_under_one_id_are_refused() {
        let mut f = follow();
        let part = |id: &str, command: &str| {
            json!({"type": "message.part.updated", "properties": {"part": {
            "id": id, "sessionID": "ses_1", "messageID": "m", "type": "tool", "tool": "bash",
            "callID": "dup", "state": {"status": "running", "input": {"command": command}}}}})
        };
        let asked = json!({"permission": "bash", "metadata": {"command": "curl x"},
            "tool": {"messageID": "m", "callID": "dup"}});
        f.event(&part("prt_1", "curl x"));
        assert_eq!(
            f.requests(&asked),
            Ok(vec![AgentRequest::Command {
                command: "curl x".to_string(),
                cwd: None
            }])
        );
        // A second call under the same id, harmless: the question is not judged as it.
        f.event(&part("prt_2", "ls"));
        assert!(f.requests(&asked).is_err());
    }

    #[test]
    fn a_question_that_cannot_be_read_is_refused() {
        let f = follow();
        let asked =
            json!({"permission": "bash", "patterns": ["rm -rf /"], "tool": {"callID": "zz"}});
        assert!(f.requests(&asked).is_err(), "no command in its metadata");
        let asked = json!({"permission": "edit", "patterns": [], "metadata": {}});
        assert!(f.requests(&asked).is_err());
        // A patch's every file is judged, where it moves one too.
        let asked = json!({"permission": "edit", "patterns": ["a.py", "../../.bashrc"],
            "metadata": {"filepath": "/w/a.py", "diff": "+x",
            "files": [{"filePath": "/w/a.py", "movePath": ".git/hooks/pre-commit"}]}});
        let paths: Vec<String> = f
            .requests(&asked)
            .expect("read")
            .into_iter()
            .map(|r| match r {
                AgentRequest::Edit { path, .. } => path,
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(
            paths,
            ["a.py", "../../.bashrc", "/w/a.py", ".git/hooks/pre-commit"]
        );
    }
}
