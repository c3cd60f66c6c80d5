//! The agent asks, the person decides: a request the project's preset does not let an agent do
//! on its own becomes a question — stored first (it outlives the engine), shown as a
//! checkpoint with a recommendation from this project's past answers to the same kind of
//! request, and a step of the session. Its answer is recorded the same way, whoever gives it
//! (the person, or the time limit).

use super::Services;
use crate::approval::{
    judge, AgentAsk, AgentRequest, ApprovalScope, ApprovalStatus, Place, Verdict,
};
use crate::checkpoint::{
    CheckpointAction, CheckpointOption, CheckpointTrigger, NewCheckpoint, Situation,
};
use crate::error::{Error, Result};
use crate::session::{AgentKind, SessionStatus, SessionStep, StepKind, StepSource};
use crate::store::{now, ApprovalRecord, NewApproval, Project, SessionRecord, StoredStep};

/// What became of a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Heard {
    /// It may go ahead.
    Allowed,
    /// It waits for the person (or was answered already, for a call asked about before).
    Asked(Box<ApprovalRecord>),
    /// It may not: the session that asked is not running (a hook left over, a forged call).
    Refused(String),
}

impl Services {
    /// Where a session works, for judging its requests.
    pub(crate) fn place_of(&self, session: &SessionRecord, project: &Project) -> Place {
        crate::store::place_for(self.paths.data_dir(), session, project)
    }

    /// Judge what a running session's agent wants to do; ask the person when the project's
    /// preset says so. `call_id` is the agent's own id for the tool call: asking again about
    /// the same call finds the same question.
    pub(crate) fn ask_agent(
        &self,
        session_id: i64,
        call_id: Option<&str>,
        request: AgentRequest,
        limit_secs: Option<u32>,
    ) -> Result<Heard> {
        let store = &self.store;
        let session = store.session(session_id)?;
        if session.status != SessionStatus::Running {
            return Ok(Heard::Refused(format!(
                "the session this request came from has ended ({})",
                session.summary
            )));
        }
        if let Some(call) = call_id {
            // The same call asked about again (a hook run twice): the same question. Another
            // request under a reused id is a question of its own.
            if let Some(asked) = store
                .approval_of_call(session_id, call)?
                .filter(|a| a.ask.request == request)
            {
                return Ok(Heard::Asked(Box::new(asked)));
            }
        }
        let project = store.project(session.project_id)?;
        let rules = store.approval_rules(project.id, &session.task_id)?;
        let place = self.place_of(&session, &project);
        let asking = match judge(&project.settings.approvals, &rules, &place, &request) {
            Verdict::Allow => return Ok(Heard::Allowed),
            Verdict::Ask(asking) => asking,
        };
        // Answered "allow once" while Healer was stopped: the agent asks again on resuming.
        if let Some(earlier) = store.unused_allow(project.id, &session.task_id, &request)? {
            if store.use_approval(earlier.ask.id)? {
                self.session_note(
                    session_id,
                    &format!("Allowed, as you answered: {}", request.subject()),
                );
                return Ok(Heard::Allowed);
            }
        }
        // Never longer than the agent waits for its hook (its limit was set when it started).
        let secs = match limit_secs {
            Some(hook) => hook.min(project.settings.approvals.time_limit_secs),
            None => project.settings.approvals.time_limit_secs,
        };
        let limit = chrono::Duration::seconds(i64::from(secs));
        let deadline = crate::store::rfc3339(chrono::Utc::now() + limit);
        let agent = session.agent.as_str();
        let approval = store.insert_approval(&NewApproval {
            project_id: project.id,
            task_id: &session.task_id,
            session_id,
            agent,
            call_id,
            request: &request,
            why: &asking.why,
            rule: &asking.rule,
            deadline_at: &deadline,
        })?;
        let id = approval.ask.id;
        self.raise_checkpoint_then(question(&project, &session, &approval.ask), |checkpoint| {
            store.set_approval_checkpoint(id, checkpoint)
        })?;
        self.session_note(
            session_id,
            &format!(
                "Waiting for your answer: {} wants to {} — it asks because {}.",
                session.agent.name(),
                wants(&request),
                asking.why
            ),
        );
        Ok(Heard::Asked(Box::new(store.approval(id)?)))
    }

    /// Record the answer to a question still waiting, the rule it makes, and the step it is in
    /// its session. Returns what was done, in words; `None` when it was answered already.
    pub(crate) fn answer_agent(
        &self,
        approval: &ApprovalRecord,
        action: CheckpointAction,
        notes: Option<&str>,
    ) -> Result<Option<String>> {
        let ask = &approval.ask;
        let (status, scope) = match action {
            CheckpointAction::AllowOnce => (ApprovalStatus::Allowed, Some(ApprovalScope::Once)),
            CheckpointAction::AllowTask => (ApprovalStatus::Allowed, Some(ApprovalScope::Task)),
            CheckpointAction::AllowAlways => {
                (ApprovalStatus::Allowed, Some(ApprovalScope::Project))
            }
            CheckpointAction::Deny => (ApprovalStatus::Denied, None),
            other => {
                return Err(Error::InvalidInput(format!(
                    "an agent's question is answered with allow or deny, not {}",
                    other.key()
                )))
            }
        };
        let notes = notes.map(str::trim).filter(|n| !n.is_empty());
        if !self
            .store
            .answer_approval(ask.id, status, scope, notes, &now())?
        {
            return Ok(None);
        }
        let agent = AgentKind::parse(&ask.agent).map_or("The agent", AgentKind::name);
        let said = match (status, scope) {
            (ApprovalStatus::Allowed, Some(ApprovalScope::Task)) => format!(
                "You allowed it for the rest of this task: {agent} may {} without asking",
                rule_words(&ask.rule)
            ),
            (ApprovalStatus::Allowed, Some(ApprovalScope::Project)) => format!(
                "You allowed it for good in this project: {agent} may {} without asking",
                rule_words(&ask.rule)
            ),
            (ApprovalStatus::Allowed, _) => format!("You allowed it once: {agent} goes ahead"),
            _ => match notes {
                Some(why) => format!("You denied it: {agent} is told “{why}” and goes on"),
                None => format!("You denied it: {agent} is told and goes on"),
            },
        };
        self.session_note(ask.session_id, &format!("{said}."));
        Ok(Some(said))
    }

    /// Deny a question nobody answered by its deadline (never allow it). Returns what was done.
    pub(crate) fn expire_agent_question(
        &self,
        approval: &ApprovalRecord,
    ) -> Result<Option<String>> {
        let reason = crate::approval::unanswered_reason(&approval.ask);
        if !self.store.answer_approval(
            approval.ask.id,
            ApprovalStatus::Expired,
            None,
            Some(&reason),
            &now(),
        )? {
            return Ok(None);
        }
        let said = format!("Denied: {reason}");
        self.session_note(approval.ask.session_id, &format!("{said}."));
        Ok(Some(said))
    }

    /// A line from Healer in a session, stored and shown live (a note that cannot be stored is
    /// only logged: the question itself is stored).
    pub(crate) fn session_note(&self, session_id: i64, text: &str) {
        let step = SessionStep {
            at: now(),
            source: StepSource::System,
            kind: StepKind::Text,
            text: text.to_string(),
            tool: None,
            arguments: None,
            call_id: None,
            is_error: false,
            model: None,
            usage: None,
        };
        match self.store.append_step(session_id, &step) {
            Ok(seq) => {
                let _ = self.session_steps.send(StoredStep {
                    session_id,
                    seq,
                    step,
                });
            }
            Err(e) => tracing::warn!(session_id, "a note was not kept in the session: {e}"),
        }
    }
}

/// "run `npm install`", "change /etc/motd" — what a rule lets the agent do.
fn rule_words(rule: &str) -> String {
    if let Some(path) = rule.strip_prefix("write ") {
        format!("change {path}")
    } else if let Some(path) = rule.strip_prefix("read ") {
        format!("read {path}")
    } else if let Some(path) = rule.strip_prefix("delete ") {
        format!("delete {path}")
    } else {
        format!("run “{rule}”")
    }
}

/// "run a command", "change a file outside its working copy" — what it wants, for a sentence.
fn wants(request: &AgentRequest) -> String {
    match request {
        AgentRequest::Command { command, .. } => {
            format!("run “{}”", crate::approval::normalise(command))
        }
        AgentRequest::Edit { path, .. } => format!("change {path}"),
        AgentRequest::Read { path } => format!("read {path}"),
        AgentRequest::Tool { name, detail } if detail.is_empty() => format!("use its tool {name}"),
        AgentRequest::Tool { name, detail } => format!("use its tool {name} ({detail})"),
    }
}

/// The checkpoint that asks: what the agent wants in plain words, why it asks, the four
/// answers, recommended from this project's past answers to the same kind of request.
fn question(project: &Project, session: &SessionRecord, ask: &AgentAsk) -> NewCheckpoint {
    let agent = session.agent.name();
    let title = match &ask.request {
        AgentRequest::Command { .. } => format!("{agent} asks to run a command"),
        AgentRequest::Edit { .. } => format!("{agent} asks to change a file"),
        AgentRequest::Read { .. } => format!("{agent} asks to read a file"),
        AgentRequest::Tool { name, .. } => format!("{agent} asks to use {name}"),
    };
    let what = match &ask.request {
        AgentRequest::Command { command, .. } => format!("wants to run this command:\n\n{command}"),
        AgentRequest::Edit { path, preview } if preview.trim().is_empty() => {
            format!("wants to change {path}.")
        }
        AgentRequest::Edit { path, preview } => format!("wants to change {path}:\n\n{preview}"),
        AgentRequest::Read { path } => format!("wants to read {path}."),
        AgentRequest::Tool { name, detail } => format!("wants to use its tool {name}: {detail}"),
    };
    let context = format!(
        "While working on \u{201c}{}\u{201d} in \u{201c}{}\u{201d}, {agent} {what}\n\nIt asks because {}.",
        session.task_title, project.name, ask.why
    );
    let always = format!(
        "{} in \u{201c}{}\u{201d} from now on",
        capitalised(&rule_words(&ask.rule)),
        project.name
    );
    let once = CheckpointOption::new(
        "Allow once",
        "Let it do this now; it asks again next time",
        CheckpointAction::AllowOnce,
    );
    let deny = CheckpointOption::new(
        "Deny and tell the agent why",
        "It does not happen; the agent hears your reason and goes on",
        CheckpointAction::Deny,
    );
    // A tool Healer does not know can do anything with what it is given: never for good.
    let unknown_tool = matches!(&ask.request, AgentRequest::Tool { name, .. }
        if !matches!(name.as_str(), "WebFetch" | "WebSearch" | "webfetch" | "websearch"));
    let options = if unknown_tool {
        vec![once, deny]
    } else {
        vec![
            once,
            CheckpointOption::new(
                "Allow for this task",
                &format!(
                    "{} without asking until this task is done",
                    capitalised(&rule_words(&ask.rule))
                ),
                CheckpointAction::AllowTask,
            ),
            CheckpointOption::new(
                "Always allow in this project",
                &always,
                CheckpointAction::AllowAlways,
            ),
            deny,
        ]
    };
    NewCheckpoint {
        trigger: CheckpointTrigger::Approval,
        workflow_id: None,
        run_id: None,
        task_id: None,
        signature: Some(format!("approval:{}:{}", project.id, ask.rule)),
        context,
        options,
        affected: vec![],
        situation: Some(Situation {
            title,
            recommend: CheckpointAction::Deny,
            why: "you have not allowed anything like it in this project before".to_string(),
            past: Some("for this kind of request in this project".to_string()),
        }),
        project_task: Some((
            project.id,
            session.task_id.clone(),
            session.task_title.clone(),
        )),
    }
}

fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}
