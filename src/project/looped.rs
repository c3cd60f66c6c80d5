//! The loop detector on a live session: every step the agent produces goes through it as it is
//! stored, at zero tokens. On a loop the rule that fired is recorded on the session and on its
//! task's steering timeline with its evidence, and — when the agent can be told mid-session —
//! a plain message goes into the session's mailbox, delivered at the agent's next chance (the
//! built-in agent: its next model call). Past `max_loop_messages` a loop is recorded only:
//! an agent that ignores three messages is not helped by a fourth.

use std::sync::{Arc, Mutex};

use super::run::Ctx;
use crate::agent::{Agent, ModelEndpoint, SessionEnd};
use crate::error::Result;
use crate::looping::{Detection, Detector};
use crate::session::{AgentKind, SessionStatus, SessionStep};
use crate::store::{NewSteeringEntry, SteeringKind, SteeringOrigin};

/// The detector's state for one running session.
#[derive(Default)]
pub(super) struct LiveLoops {
    detector: Mutex<Detector>,
    told: Mutex<u32>,
}

/// Times one session resumes its agent to deliver steering messages after a turn.
const MAX_RESUMES: u32 = 3;

impl Ctx<'_> {
    /// An agent that can only be told between turns (Codex; or any agent a message reached
    /// too late for its hooks) is resumed with the messages waiting when its turn ends, at
    /// most [`MAX_RESUMES`] times.
    pub(super) async fn resume_with_messages(
        &self,
        agent: Arc<dyn Agent>,
        endpoint: Option<ModelEndpoint>,
        mut end: SessionEnd,
    ) -> Result<SessionEnd> {
        if self.project.settings.agent == AgentKind::Builtin {
            return Ok(end);
        }
        let store = &self.projects.services.store;
        for _ in 0..MAX_RESUMES {
            let Some(id) = end.agent_session_id.clone() else {
                break;
            };
            if end.status != SessionStatus::Finished
                || self.cancel.is_cancelled()
                || !store.steering_waiting(self.session_id)?
            {
                break;
            }
            let messages = store.take_steering_messages(self.session_id, "resume")?;
            let text = crate::store::for_agent(&messages);
            if text.is_empty() {
                break;
            }
            self.note("Resuming the agent with a message for it.")?;
            end = self
                .run_agent(agent.clone(), text, endpoint.clone(), Some(id))
                .await?;
        }
        Ok(end)
    }

    /// Whether steering can put a message into this session while it runs: the built-in
    /// agent (its next user message), Claude Code when its hooks are in place (before its next
    /// step), Codex (resumed with the message after its turn).
    pub(super) fn can_be_told(&self) -> bool {
        match self.project.settings.agent {
            AgentKind::Builtin | AgentKind::Codex | AgentKind::OpenCode | AgentKind::GeminiCli => {
                true
            }
            // On the cluster, messages go to the worker as signals (Claude Code's hooks there).
            AgentKind::ClaudeCode => {
                self.agent_settings.get().is_some()
                    || matches!(
                        self.project.settings.runs_on,
                        crate::store::RunsOn::Cluster { .. }
                    )
            }
        }
    }

    /// Run the detector over one new step; a loop is recorded and, within the bound, told.
    pub(super) fn check_loop(&self, step: &SessionStep) -> Result<()> {
        let found = {
            let mut detector = self
                .loops
                .detector
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            detector.push(step)
        };
        match found {
            Some(detection) => self.looped(&detection),
            None => Ok(()),
        }
    }

    fn looped(&self, detection: &Detection) -> Result<()> {
        let store = &self.projects.services.store;
        let settings = store.steering_settings()?;
        if !settings.enabled {
            return Ok(());
        }
        store.set_session_loop(self.session_id, Some(detection.rule))?;
        let can = self.can_be_told();
        let tell = can && {
            let mut told = self.loops.told.lock().unwrap_or_else(|p| p.into_inner());
            let under = *told < settings.max_loop_messages;
            if under {
                *told += 1;
            }
            under
        };
        let mut entry = NewSteeringEntry::new(
            self.project.id,
            &self.task.id,
            Some(self.session_id),
            SteeringKind::Loop,
        );
        entry.rule = Some(detection.rule);
        entry.message = Some(detection.message.clone());
        entry.evidence = detection.evidence.clone();
        entry.detail = if tell {
            format!(
                "The agent went in circles ({}), so Healer wrote it what it saw (the message below). No model was asked.",
                detection.rule.describe()
            )
        } else if can {
            format!(
                "The agent went in circles again ({}). Healer already told it {} times, so this one is only noted.",
                detection.rule.describe(),
                settings.max_loop_messages
            )
        } else {
            format!(
                "The agent went in circles ({}). Healer cannot send this agent a message while it works, so this is only noted.",
                detection.rule.describe()
            )
        };
        store.record_steering_telling(
            &entry,
            tell.then_some((
                self.session_id,
                SteeringOrigin::Loop,
                detection.message.as_str(),
            )),
        )?;
        tracing::info!(
            session_id = self.session_id,
            rule = detection.rule.as_str(),
            told = tell,
            "the agent is looping"
        );
        Ok(())
    }

    /// Messages still waiting when the session ends are never delivered: marked so.
    pub(super) fn drop_undelivered(&self) {
        let store = &self.projects.services.store;
        if let Err(e) = store.take_steering_messages(self.session_id, "dropped") {
            tracing::warn!(
                session_id = self.session_id,
                "waiting messages were not closed: {e}"
            );
        }
    }
}
