//! How a session follows its agent's program, whatever its version: the version read and
//! kept as the session starts (and said when Healer was not tested with it), a line of its
//! stream Healer does not understand kept as a raw step and counted, and a session of which
//! Healer understood nothing ending with a sentence naming the agent and its version
//! (docs/agents.md, "An agent update never breaks a session silently").

use super::run::{system_step, Ctx};
use crate::agent::{Agent, SessionEnd};
use crate::error::Result;
use crate::session::{AgentKind, SessionStatus};

/// The most of a line Healer did not understand that its raw step keeps.
const RAW_LINE_CHARS: usize = 2_000;

impl Ctx<'_> {
    /// Read the version of the agent's program once per session: stored on the session, and
    /// said on it when Healer was not tested with that version.
    pub(super) async fn read_version(&self, agent: &dyn Agent, program: Option<&std::path::Path>) {
        if self.version.get().is_some() {
            return;
        }
        let said = match agent.program_for(program) {
            Some(program) => crate::agent::installed::version(&program).await,
            None => None,
        };
        if let Some(said) = &said {
            let store = &self.projects.services.store;
            if let Err(e) = store.set_agent_version(self.session_id, said) {
                tracing::warn!(
                    session_id = self.session_id,
                    "the version was not kept: {e}"
                );
            }
            if let Some(note) = crate::agent::installed::untested_note(agent.kind(), said) {
                let _ = self.note(&note);
            }
        }
        let _ = self.version.set(said);
    }

    /// "Claude Code 9.9.9": the agent and the version its program said, as far as known.
    fn agent_named(&self, kind: AgentKind) -> String {
        crate::agent::installed::named(kind, self.version.get().cloned().flatten().as_deref())
    }

    /// The end as the person reads it when the agent's stream had lines Healer did not
    /// understand: a session of which Healer understood none ends saying it could not follow
    /// the agent (named with its version), never as a quiet "exited without saying".
    pub(super) fn followed(&self, kind: AgentKind, end: SessionEnd) -> SessionEnd {
        use std::sync::atomic::Ordering::Relaxed;
        let raw = self.raw.load(Relaxed);
        if raw == 0 || matches!(end.status, SessionStatus::Stopped | SessionStatus::TimedOut) {
            return end;
        }
        let (lines, were) = if raw == 1 {
            ("line", "was")
        } else {
            ("lines", "were")
        };
        if self.understood.load(Relaxed) == 0 && end.status != SessionStatus::Finished {
            let tested = crate::agent::installed::tested_version(kind)
                .map(|v| format!(" (Healer was tested with {v})"))
                .unwrap_or_default();
            return SessionEnd {
                status: SessionStatus::Failed,
                program_failed: true,
                summary: format!(
                    "Healer could not follow {}: none of the {raw} {lines} it wrote {were} of a \
                     kind Healer knows{tested}, so Healer cannot tell what it did or how it \
                     ended. What it changed is kept in the task's worktree. Use the version \
                     Healer was tested with, or a Healer that knows this one.",
                    self.agent_named(kind)
                ),
                ..end
            };
        }
        let _ = self.note(&format!(
            "{raw} {lines} of {}'s output {were} not understood; the session keeps what Healer \
             did not understand as it came.",
            self.agent_named(kind)
        ));
        end
    }

    /// A line of the agent's stream Healer does not understand: counted and kept as a step.
    /// Not a sign of life: a stream Healer cannot follow ends by the stuck rule.
    pub(super) fn take_raw(&self, line: &str) -> Result<()> {
        self.raw.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.projects
            .services
            .store
            .count_raw_line(self.session_id)?;
        // The key out before the cut, so that no part of it is kept.
        let line = self.scrub(line);
        let mut text: String = line.chars().take(RAW_LINE_CHARS).collect();
        if text.len() < line.len() {
            text.push('…');
        }
        self.record(system_step(format!(
            "{} wrote a line Healer does not understand, kept as it came:\n{text}",
            self.agent_named(self.project.settings.agent)
        )))
    }
}

/// The commands that run without asking under "ask before anything risky", as the project
/// has them: its checks, its init script, and the commands it lists.
pub(super) fn runs_freely(settings: &crate::store::ProjectSettings) -> Vec<String> {
    let mut commands: Vec<String> = settings.verify.iter().map(|c| c.command.clone()).collect();
    commands.extend(settings.init_script.clone());
    commands.extend(settings.approvals.allowed.iter().cloned());
    commands
}
