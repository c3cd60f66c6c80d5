//! What steering keeps: the timeline of each task (loops, deliveries, heartbeats, zombies), the
//! messages waiting for a live session, and a session's true last activity and loop verdict.

use rusqlite::{params, OptionalExtension, Row};
use serde::{Deserialize, Serialize};

use super::notifications::unknown_value;
use super::{now, Store};
use crate::error::Result;
use crate::looping::LoopRule;

/// What a timeline entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum SteeringKind {
    /// The loop detector saw a loop.
    Loop,
    /// A message reached the agent.
    Delivery,
    /// The session showed it was alive (noted at most every few minutes).
    Heartbeat,
    /// No activity for too long: the session was ended as stuck.
    Zombie,
    /// The steering model looked at the task's progress and chose an action.
    Judgement,
    /// The person wrote the agent a message.
    Message,
}

const KINDS: [(SteeringKind, &str); 6] = [
    (SteeringKind::Loop, "loop"),
    (SteeringKind::Delivery, "delivery"),
    (SteeringKind::Heartbeat, "heartbeat"),
    (SteeringKind::Zombie, "zombie"),
    (SteeringKind::Judgement, "judgement"),
    (SteeringKind::Message, "message"),
];

/// What the judge chose for a task in progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum JudgeAction {
    /// Let the agent go on (also what an unusable answer counts as).
    Continue,
    /// Tell the agent something, in its live session.
    Steer,
    /// End the agent, keep its work as a snapshot, and put the task back to open.
    Replace,
}

impl JudgeAction {
    pub const ALL: [JudgeAction; 3] = [
        JudgeAction::Continue,
        JudgeAction::Steer,
        JudgeAction::Replace,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            JudgeAction::Continue => "continue",
            JudgeAction::Steer => "steer",
            JudgeAction::Replace => "replace",
        }
    }

    pub fn parse(s: &str) -> Option<JudgeAction> {
        JudgeAction::ALL.into_iter().find(|a| a.as_str() == s)
    }
}

impl SteeringKind {
    pub fn as_str(self) -> &'static str {
        KINDS
            .iter()
            .find(|(k, _)| *k == self)
            .map_or("loop", |(_, s)| s)
    }

    fn parse(s: &str) -> Option<SteeringKind> {
        KINDS.iter().find(|(_, name)| *name == s).map(|(k, _)| *k)
    }
}

/// One entry of a task's steering timeline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct SteeringEntry {
    pub id: i64,
    pub project_id: i64,
    pub task_id: String,
    pub session_id: Option<i64>,
    pub at: String,
    pub kind: SteeringKind,
    pub rule: Option<LoopRule>,
    /// What the agent was told, or the reason.
    pub message: Option<String>,
    pub evidence: Vec<String>,
    /// A sentence for the person.
    pub detail: String,
    /// Model tokens steering spent on it (a loop costs none).
    pub tokens: u64,
    /// A judgement's action.
    pub action: Option<JudgeAction>,
    /// The message this entry put in the session's mailbox: waiting, or delivered and how.
    pub delivery: Option<MessageDelivery>,
}

/// Where a message put in a session's mailbox is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum DeliveryState {
    /// Still in the mailbox: the agent has not had its next chance yet.
    Waiting,
    /// Given to the agent.
    Delivered,
    /// The session ended before it could be given.
    Dropped,
}

/// A message's delivery, as a timeline entry shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct MessageDelivery {
    pub state: DeliveryState,
    /// How it reached the agent: `thread` (the built-in agent's conversation), `hook` (Claude
    /// Code, before its next step), `resume` (Codex, resumed after its turn).
    pub via: Option<String>,
    pub delivered_at: Option<String>,
}

/// An entry to record (the time is now).
#[derive(Debug, Clone)]
pub struct NewSteeringEntry {
    pub project_id: i64,
    pub task_id: String,
    pub session_id: Option<i64>,
    pub kind: SteeringKind,
    pub rule: Option<LoopRule>,
    pub message: Option<String>,
    pub evidence: Vec<String>,
    pub detail: String,
    pub tokens: u64,
    pub action: Option<JudgeAction>,
}

impl NewSteeringEntry {
    pub fn new(
        project_id: i64,
        task_id: &str,
        session_id: Option<i64>,
        kind: SteeringKind,
    ) -> Self {
        NewSteeringEntry {
            project_id,
            task_id: task_id.to_string(),
            session_id,
            kind,
            rule: None,
            message: None,
            evidence: vec![],
            detail: String::new(),
            tokens: 0,
            action: None,
        }
    }
}

/// Who put a message in a session's mailbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum SteeringOrigin {
    /// The free loop detector.
    Loop,
    /// The periodic judge (the steering model).
    Judge,
    /// The person, typing to a live session.
    Person,
}

impl SteeringOrigin {
    fn as_str(self) -> &'static str {
        match self {
            SteeringOrigin::Loop => "loop",
            SteeringOrigin::Judge => "judge",
            SteeringOrigin::Person => "person",
        }
    }
}

/// A message for a live session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct SteeringMessage {
    pub id: i64,
    pub session_id: i64,
    pub text: String,
    pub created_at: String,
    /// Who wrote it: Healer's steering (a loop, the judge) or the person.
    pub origin: SteeringOrigin,
}

impl SteeringMessage {
    /// The message as the agent receives it: said to come from Healer or from the person, so
    /// the agent knows it is not the task changing.
    pub fn for_agent(&self) -> String {
        match self.origin {
            SteeringOrigin::Person => crate::session::person_text(&self.text),
            SteeringOrigin::Loop | SteeringOrigin::Judge => {
                crate::session::steering_text(&self.text)
            }
        }
    }
}

/// Messages as the agent receives them, one after another.
pub fn for_agent(messages: &[SteeringMessage]) -> String {
    messages
        .iter()
        .map(SteeringMessage::for_agent)
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// A session's true heartbeat and its loop verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct SessionPulse {
    /// The last time it produced something new (`None`: nothing yet).
    pub last_activity_at: Option<String>,
    pub loop_rule: Option<LoopRule>,
}

/// The longest message a person may type to a live agent, in characters.
pub const MAX_PERSON_MESSAGE: usize = 4_000;

/// A heartbeat goes on the timeline at most this often; the last activity itself is kept to
/// the millisecond.
pub const HEARTBEAT_NOTE_SECS: i64 = 300;

const ENTRY_COLUMNS: &str = "e.id, e.project_id, e.task_id, e.session_id, e.at, e.kind, e.rule, \
     e.message, e.evidence, e.detail, e.tokens, e.action, e.message_id, m.delivered_at, m.via";

/// The entries with their message's delivery.
const ENTRY_FROM: &str = "steering_events e LEFT JOIN steering_messages m ON m.id = e.message_id";

impl Store {
    pub fn record_steering(&self, new: &NewSteeringEntry) -> Result<SteeringEntry> {
        self.record_steering_telling(new, None)
    }

    /// Record `new` and, with `tell`, put its message in the session's mailbox (from `tell`'s
    /// origin) — one transaction, the entry pointing at the message so it can say where it is.
    pub fn record_steering_telling(
        &self,
        new: &NewSteeringEntry,
        tell: Option<(i64, SteeringOrigin, &str)>,
    ) -> Result<SteeringEntry> {
        let evidence = serde_json::to_string(&new.evidence).unwrap_or_else(|_| "[]".to_string());
        let at = now();
        let id = self.call(|c| {
            let tx = c.transaction()?;
            let message_id = match tell {
                Some((session_id, origin, text)) => {
                    tx.execute(
                        "INSERT INTO steering_messages (session_id, origin, text, created_at) VALUES (?1, ?2, ?3, ?4)",
                        params![session_id, origin.as_str(), text, at],
                    )?;
                    Some(tx.last_insert_rowid())
                }
                None => None,
            };
            tx.execute(
                "INSERT INTO steering_events (project_id, task_id, session_id, at, kind, rule,
                     message, evidence, detail, tokens, action, message_id)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
                params![
                    new.project_id,
                    new.task_id,
                    new.session_id,
                    at,
                    new.kind.as_str(),
                    new.rule.map(LoopRule::as_str),
                    new.message,
                    evidence,
                    new.detail,
                    i64::try_from(new.tokens).unwrap_or(i64::MAX),
                    new.action.map(JudgeAction::as_str),
                    message_id,
                ],
            )?;
            let id = tx.last_insert_rowid();
            tx.commit()?;
            Ok(id)
        })?;
        self.steering_entry(id)
    }

    pub fn steering_entry(&self, id: i64) -> Result<SteeringEntry> {
        let sql = format!("SELECT {ENTRY_COLUMNS} FROM {ENTRY_FROM} WHERE e.id = ?1");
        self.call(|c| c.query_row(&sql, [id], entry_from_row))
    }

    /// A task's timeline, oldest first.
    pub fn steering_timeline(&self, project_id: i64, task_id: &str) -> Result<Vec<SteeringEntry>> {
        let sql = format!(
            "SELECT {ENTRY_COLUMNS} FROM {ENTRY_FROM} WHERE e.project_id = ?1 AND e.task_id = ?2 ORDER BY e.id"
        );
        self.call(|c| {
            let mut stmt = c.prepare_cached(&sql)?;
            let rows = stmt
                .query_map(params![project_id, task_id], entry_from_row)?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(rows)
        })
    }

    /// The person writes the agent of a live session a message: it waits in the session's
    /// mailbox for the agent's next chance (its conversation, Claude Code's hook, Codex's
    /// resume) and shows on the task's timeline as waiting, then delivered. A known secret in
    /// it is redacted first.
    pub fn say_to_session(&self, session_id: i64, text: &str) -> Result<SteeringEntry> {
        let text = crate::secrets::redact_owned(text.trim().to_string());
        if text.is_empty() {
            return Err(crate::error::Error::InvalidInput(
                "write what the agent should know".to_string(),
            ));
        }
        if text.chars().count() > MAX_PERSON_MESSAGE {
            return Err(crate::error::Error::InvalidInput(format!(
                "a message to the agent may be at most {MAX_PERSON_MESSAGE} characters; put longer notes in the task's description"
            )));
        }
        let session = self.session(session_id)?;
        if session.status != crate::session::SessionStatus::Running {
            return Err(crate::error::Error::InvalidInput(format!(
                "the agent on \u{201c}{}\u{201d} is not working now, so a message cannot reach it; run the task again and write to the new session",
                session.task_title
            )));
        }
        let mut entry = NewSteeringEntry::new(
            session.project_id,
            &session.task_id,
            Some(session_id),
            SteeringKind::Message,
        );
        entry.message = Some(text.clone());
        entry.detail = "You wrote the agent a message.".to_string();
        self.record_steering_telling(&entry, Some((session_id, SteeringOrigin::Person, &text)))
    }

    /// A message for session `session_id`, delivered at its next chance.
    pub fn queue_steering_message(
        &self,
        session_id: i64,
        origin: SteeringOrigin,
        text: &str,
    ) -> Result<i64> {
        self.call(|c| {
            c.execute(
                "INSERT INTO steering_messages (session_id, origin, text, created_at) VALUES (?1, ?2, ?3, ?4)",
                params![session_id, origin.as_str(), text, now()],
            )?;
            Ok(c.last_insert_rowid())
        })
    }

    /// Whether a message waits for the session.
    pub fn steering_waiting(&self, session_id: i64) -> Result<bool> {
        self.call(|c| {
            c.query_row(
                "SELECT EXISTS (SELECT 1 FROM steering_messages WHERE session_id = ?1 AND delivered_at IS NULL)",
                [session_id],
                |r| r.get(0),
            )
        })
    }

    /// Take the messages waiting for the session, marking them delivered `via` and recording
    /// each delivery on the task's timeline — in one transaction, so no message is delivered
    /// twice.
    pub fn take_steering_messages(
        &self,
        session_id: i64,
        via: &str,
    ) -> Result<Vec<SteeringMessage>> {
        let at = now();
        self.call(|c| {
            let tx = c.transaction()?;
            let owner: Option<(i64, String)> = tx
                .query_row(
                    "SELECT project_id, task_id FROM agent_sessions WHERE id = ?1",
                    [session_id],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .optional()?;
            let Some((project_id, task_id)) = owner else {
                return Ok(vec![]);
            };
            let taken = {
                let mut stmt = tx.prepare_cached(
                    "UPDATE steering_messages SET delivered_at = ?2, via = ?3
                     WHERE session_id = ?1 AND delivered_at IS NULL
                     RETURNING id, session_id, text, created_at, origin",
                )?;
                let rows = stmt
                    .query_map(params![session_id, at, via], |r| {
                        Ok(SteeringMessage {
                            id: r.get(0)?,
                            session_id: r.get(1)?,
                            text: r.get(2)?,
                            created_at: r.get(3)?,
                            origin: match r.get::<_, String>(4)?.as_str() {
                                "person" => SteeringOrigin::Person,
                                "judge" => SteeringOrigin::Judge,
                                _ => SteeringOrigin::Loop,
                            },
                        })
                    })?
                    .collect::<rusqlite::Result<Vec<_>>>()?;
                rows
            };
            let mut taken = taken;
            taken.sort_by_key(|m| m.id);
            if via != "dropped" {
                // A person's message has an entry of its own, which shows it delivered.
                for message in taken.iter().filter(|m| m.origin != SteeringOrigin::Person) {
                    tx.execute(
                        "INSERT INTO steering_events (project_id, task_id, session_id, at, kind, message, detail)
                         VALUES (?1, ?2, ?3, ?4, 'delivery', ?5, ?6)",
                        params![project_id, task_id, session_id, at, message.text, delivery_detail(via)],
                    )?;
                }
            }
            tx.commit()?;
            Ok(taken)
        })
    }

    /// The session produced something new at `at` (a step, a hook call, a transcript line):
    /// its last activity moves forward, and a heartbeat goes on the timeline when the last one
    /// there is older than [`HEARTBEAT_NOTE_SECS`]. Healer's own ticks never call this.
    pub fn touch_session(&self, session_id: i64, at: &str, source: &str) -> Result<()> {
        self.call(|c| {
            let tx = c.transaction()?;
            let changed = tx.execute(
                "UPDATE agent_sessions SET last_activity_at = ?2
                 WHERE id = ?1 AND status = 'running' AND (last_activity_at IS NULL OR last_activity_at < ?2)",
                params![session_id, at],
            )?;
            if changed > 0 {
                let last: Option<String> = tx
                    .query_row(
                        "SELECT max(at) FROM steering_events WHERE session_id = ?1 AND kind = 'heartbeat'",
                        [session_id],
                        |r| r.get(0),
                    )?;
                let due = last.as_deref().is_none_or(|last| seconds_between(last, at) >= HEARTBEAT_NOTE_SECS);
                if due {
                    tx.execute(
                        "INSERT INTO steering_events (project_id, task_id, session_id, at, kind, detail)
                         SELECT project_id, task_id, id, ?2, 'heartbeat', ?3 FROM agent_sessions WHERE id = ?1",
                        params![session_id, at, format!("The agent is still at work ({source})")],
                    )?;
                }
            }
            tx.commit()?;
            Ok(())
        })
    }

    pub fn session_pulse(&self, session_id: i64) -> Result<SessionPulse> {
        self.call(|c| {
            c.query_row(
                "SELECT last_activity_at, loop_rule FROM agent_sessions WHERE id = ?1",
                [session_id],
                |r| {
                    let rule: Option<String> = r.get(1)?;
                    Ok(SessionPulse {
                        last_activity_at: r.get(0)?,
                        loop_rule: rule.as_deref().and_then(LoopRule::parse),
                    })
                },
            )
        })
    }

    pub fn set_session_loop(&self, session_id: i64, rule: Option<LoopRule>) -> Result<()> {
        self.call(|c| {
            c.execute(
                "UPDATE agent_sessions SET loop_rule = ?2 WHERE id = ?1",
                params![session_id, rule.map(LoopRule::as_str)],
            )
        })?;
        Ok(())
    }
}

fn delivery_detail(via: &str) -> String {
    match via {
        "thread" => "Delivered as the next message of the agent's conversation".to_string(),
        "hook" => "Delivered to the agent before its next step".to_string(),
        "resume" => "Delivered when the agent was resumed after its turn".to_string(),
        "live" => "Delivered into the agent's session while it worked".to_string(),
        other => format!("Delivered ({other})"),
    }
}

/// Whole seconds from `from` to `to` (RFC 3339); 0 when either cannot be read.
fn seconds_between(from: &str, to: &str) -> i64 {
    let parse = |s: &str| chrono::DateTime::parse_from_rfc3339(s).ok();
    match (parse(from), parse(to)) {
        (Some(a), Some(b)) => (b - a).num_seconds(),
        _ => 0,
    }
}

fn entry_from_row(r: &Row<'_>) -> rusqlite::Result<SteeringEntry> {
    let kind: String = r.get(5)?;
    let rule: Option<String> = r.get(6)?;
    let evidence: String = r.get(8)?;
    let tokens: i64 = r.get(10)?;
    let action: Option<String> = r.get(11)?;
    Ok(SteeringEntry {
        id: r.get(0)?,
        project_id: r.get(1)?,
        task_id: r.get(2)?,
        session_id: r.get(3)?,
        at: r.get(4)?,
        kind: SteeringKind::parse(&kind).ok_or_else(|| unknown_value(5, &kind))?,
        rule: rule.as_deref().and_then(LoopRule::parse),
        message: r.get(7)?,
        evidence: serde_json::from_str(&evidence).unwrap_or_default(),
        detail: r.get(9)?,
        tokens: u64::try_from(tokens).unwrap_or(0),
        action: action.as_deref().and_then(JudgeAction::parse),
        delivery: delivery_of(r)?,
    })
}

fn delivery_of(r: &Row<'_>) -> rusqlite::Result<Option<MessageDelivery>> {
    let message_id: Option<i64> = r.get(12)?;
    let delivered_at: Option<String> = r.get(13)?;
    let via: Option<String> = r.get(14)?;
    Ok(message_id.map(|_| {
        let state = match (delivered_at.as_ref(), via.as_deref()) {
            (None, _) => DeliveryState::Waiting,
            (Some(_), Some("dropped")) => DeliveryState::Dropped,
            (Some(_), _) => DeliveryState::Delivered,
        };
        MessageDelivery {
            state,
            via: via.filter(|v| v != "dropped"),
            delivered_at,
        }
    }))
}
