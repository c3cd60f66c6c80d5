//! The engine's side of an agent's questions: a hook's request judged (and the person asked),
//! the person's answer carried out — the live session hears it; a session Healer's stop ended
//! is resumed with it — a question nobody answered denied at its limit, and what start-up
//! finds half done.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::Handle;
use crate::approval::{AgentAsk, AgentRequest, ApprovalStatus};
use crate::checkpoint::{Checkpoint, CheckpointAction};
use crate::error::Result;
use crate::events::Event;
use crate::services::Heard;
use crate::session::SessionStatus;
use crate::store::{ApprovalRecord, ApprovalRule};
use crate::tasklist::TaskStatus;

/// What became of an agent's request, as a hook hears it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AgentAnswer {
    /// It may go ahead.
    Allowed,
    /// The person is asked; the answer will be in the store under `id`.
    Asked { id: i64, deadline_at: String },
    /// It may not (the session that asked has ended).
    Refused { reason: String },
}

impl Handle {
    /// An agent of a running session wants to do `request`: allowed, or the person is asked.
    pub fn ask_agent(
        &self,
        session_id: i64,
        call_id: Option<&str>,
        request: AgentRequest,
        limit_secs: Option<u32>,
    ) -> Result<AgentAnswer> {
        Ok(
            match self
                .services
                .ask_agent(session_id, call_id, request, limit_secs)?
            {
                Heard::Allowed => AgentAnswer::Allowed,
                Heard::Asked(asked) => AgentAnswer::Asked {
                    id: asked.ask.id,
                    deadline_at: asked.ask.deadline_at,
                },
                Heard::Refused(reason) => AgentAnswer::Refused { reason },
            },
        )
    }

    /// Every question a session's agent asked, oldest first.
    pub fn session_questions(&self, session_id: i64) -> Result<Vec<AgentAsk>> {
        self.services.store.session_approvals(session_id)
    }

    /// What the person allowed for good in a project by answering (and for its tasks).
    pub fn approval_rules(&self, project_id: i64) -> Result<Vec<ApprovalRule>> {
        self.services.store.project_approval_rules(project_id)
    }

    /// Take back something the person allowed for good.
    pub fn remove_approval_rule(&self, project_id: i64, rule_id: i64) -> Result<()> {
        let store = &self.services.store;
        store.remove_approval_rule(project_id, rule_id)?;
        let project = store.project(project_id)?;
        self.services.bus.emit(Event::ProjectChanged {
            project_id,
            name: project.name,
            what: "a command its agent may run without asking was taken back".to_string(),
        })?;
        Ok(())
    }

    /// The person answered an agent's question (from its checkpoint): recorded, and carried
    /// to the agent. Called before the checkpoint itself is marked decided, so an answer is
    /// never lost between the two (start-up settles either half).
    pub(super) fn answer_question(
        &self,
        approval: &ApprovalRecord,
        action: CheckpointAction,
        notes: Option<&str>,
    ) -> Result<String> {
        let said = self
            .services
            .answer_agent(approval, action, notes)?
            .unwrap_or_else(|| "It was answered already".to_string());
        // Killed here, the answer is recorded and its checkpoint not: the next start settles it.
        crate::failpoint::hit("approval.answered");
        Ok(match self.carry_answers(approval.ask.session_id)? {
            Some(carried) => format!("{said}. {carried}"),
            None => said,
        })
    }

    /// Deny every question whose time is up as of `now` (the engine looks every minute; tests
    /// pass a later clock), and carry answers to sessions Healer's stop ended. Returns the
    /// questions denied.
    pub async fn expire_questions(&self, now: DateTime<Utc>) -> Result<Vec<i64>> {
        let store = &self.services.store;
        let mut denied = Vec::new();
        for approval in store.waiting_approvals()? {
            let due = DateTime::parse_from_rfc3339(&approval.ask.deadline_at)
                .map(|d| d.with_timezone(&Utc))
                .map_or(true, |d| d <= now);
            if !due {
                continue;
            }
            let Some(said) = self.services.expire_agent_question(&approval)? else {
                continue;
            };
            denied.push(approval.ask.id);
            if let Some(checkpoint) = approval.checkpoint_id {
                self.close_question(checkpoint, &said)?;
            }
            self.carry_answers(approval.ask.session_id)?;
        }
        self.carry_pending_answers()?;
        Ok(denied)
    }

    /// The checkpoint of a question Healer denied: closed as the deny option, not learnt from.
    fn close_question(&self, checkpoint_id: i64, outcome: &str) -> Result<()> {
        let store = &self.services.store;
        let checkpoint = store.checkpoint(checkpoint_id)?;
        let deny = option_number(&checkpoint, CheckpointAction::Deny);
        if store.close_unanswered(checkpoint_id, deny, outcome)? {
            self.services.bus.emit(Event::CheckpointDecided {
                checkpoint_id,
                trigger: checkpoint.trigger,
                workflow_id: None,
                run_id: None,
                choice: "Deny".to_string(),
                outcome: outcome.to_string(),
            })?;
        }
        Ok(())
    }

    /// A session that asked and was ended by Healer's stop goes on once every question it
    /// asked is answered: its agent is resumed, told the answers. Returns what was done, in
    /// words; `None` when the session is live here (it hears the answer itself) or nothing
    /// waits for it.
    fn carry_answers(&self, session_id: i64) -> Result<Option<String>> {
        let store = &self.services.store;
        if self.projects().is_running(session_id) {
            return Ok(None);
        }
        let session = store.session(session_id)?;
        if session.status != SessionStatus::Interrupted {
            return Ok(None);
        }
        let asked: Vec<ApprovalRecord> = store
            .session_approvals(session_id)?
            .into_iter()
            .filter_map(|a| store.approval(a.id).ok())
            .filter(|a| a.resumed_session.is_none() && a.used_at.is_none())
            .collect();
        if asked.is_empty() {
            return Ok(None);
        }
        if asked
            .iter()
            .any(|a| a.ask.status == ApprovalStatus::Waiting)
        {
            return Ok(Some(
                "The agent goes on once you have answered its other questions".to_string(),
            ));
        }
        let project = store.project(session.project_id)?;
        if !self.inner.scheduling {
            // This engine only lives for one command: the app or the daemon carries it on.
            return Ok(Some(
                "The agent goes on with your answer as soon as Healer runs".to_string(),
            ));
        }
        if !self.projects().has_room(&project) {
            return Ok(Some(format!(
                "The agent goes on with your answer once \u{201c}{}\u{201d} has room for it",
                project.name
            )));
        }
        let mut message = String::from(
            "Healer stopped while you waited for the person's answer, so your session was ended \
             and is resumed now. The answers:",
        );
        for a in &asked {
            let answer = match crate::approval::told_agent(&a.ask) {
                None => "allowed — do it again now if you still need it".to_string(),
                Some(told) => told,
            };
            message.push_str(&format!("\n- {}: {answer}", a.ask.request.subject()));
        }
        message.push_str("\nGo on with the task.");
        let agent = session.agent.name();
        match self
            .projects()
            .resume_session(&project, &session.task_id, session_id, &message)
        {
            Ok(resumed) => {
                for a in &asked {
                    store.set_approval_resumed(a.ask.id, resumed.id)?;
                }
                Ok(Some(format!("{agent} goes on with your answer")))
            }
            Err(e) => {
                // Never held forever: the answers are spent and the task is open again.
                for a in &asked {
                    store.use_approval(a.ask.id)?;
                }
                self.reopen(
                    &project,
                    &session.task_id,
                    &format!("{agent} could not be resumed with your answer: {e}"),
                )?;
                Ok(Some(format!(
                    "{agent} could not go on ({e}); the task is open again"
                )))
            }
        }
    }

    fn reopen(&self, project: &crate::store::Project, task_id: &str, note: &str) -> Result<()> {
        let now = crate::store::now();
        self.projects()
            .modify_tasks(project, "a task is open again", |file| {
                if file
                    .task(task_id)
                    .is_some_and(|t| t.status == TaskStatus::InProgress)
                {
                    file.update(task_id, &now, |t| {
                        t.status = TaskStatus::Open;
                        t.assignee = None;
                        t.note = Some(note.to_string());
                    })?;
                }
                Ok(())
            })?;
        Ok(())
    }

    /// Answers given while their session was not running, not carried yet (no room then, or
    /// an engine stopped while carrying them).
    fn carry_pending_answers(&self) -> Result<()> {
        let store = &self.services.store;
        let mut sessions: Vec<i64> = store
            .answers_not_heard()?
            .into_iter()
            .map(|a| a.ask.session_id)
            .collect();
        sessions.dedup();
        for session in sessions {
            if let Err(e) = self.carry_answers(session) {
                tracing::warn!(session, "an answer could not be carried to its agent: {e}");
            }
        }
        Ok(())
    }

    /// At start: a question whose answer was recorded but whose checkpoint was not (or the
    /// other way round) is made whole, and answers not yet carried are carried.
    pub(super) fn settle_questions(&self) -> Result<()> {
        let store = &self.services.store;
        for approval in store.waiting_approvals()? {
            let Some(checkpoint_id) = approval.checkpoint_id else {
                continue;
            };
            let checkpoint = store.checkpoint(checkpoint_id)?;
            let Some(decision) = &checkpoint.decision else {
                continue;
            };
            let chosen = usize::try_from(decision.option)
                .ok()
                .and_then(|n| n.checked_sub(1))
                .and_then(|i| checkpoint.options.get(i));
            if let Some(option) = chosen {
                self.services
                    .answer_agent(&approval, option.action, decision.notes.as_deref())?;
            }
        }
        for checkpoint in store.pending_checkpoints()? {
            let Some(ask) = &checkpoint.agent_request else {
                continue;
            };
            let action = match (ask.status, ask.scope) {
                (ApprovalStatus::Waiting, _) => continue,
                (ApprovalStatus::Allowed, Some(crate::approval::ApprovalScope::Task)) => {
                    CheckpointAction::AllowTask
                }
                (ApprovalStatus::Allowed, Some(crate::approval::ApprovalScope::Project)) => {
                    CheckpointAction::AllowAlways
                }
                (ApprovalStatus::Allowed, _) => CheckpointAction::AllowOnce,
                (ApprovalStatus::Denied, _) => CheckpointAction::Deny,
                (ApprovalStatus::Expired, _) => {
                    let why = ask.reason.clone().unwrap_or_default();
                    self.close_question(checkpoint.id, &format!("Denied: {why}"))?;
                    continue;
                }
            };
            let number = option_number(&checkpoint, action);
            if store.decide_checkpoint(checkpoint.id, number, action, ask.reason.as_deref())? {
                store.set_checkpoint_outcome(
                    checkpoint.id,
                    "Answered (recorded again after Healer restarted)",
                )?;
            }
        }
        self.carry_pending_answers()
    }
}

/// The 1-based number of the option that does `action` (the first one when none does).
fn option_number(checkpoint: &Checkpoint, action: CheckpointAction) -> u32 {
    checkpoint
        .options
        .iter()
        .position(|o| o.action == action)
        .and_then(|i| u32::try_from(i + 1).ok())
        .unwrap_or(1)
}
