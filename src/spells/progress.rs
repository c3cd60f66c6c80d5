//! `update_progress_with_guidance`: a "Healer summary" section appended to progress.md — what
//! failed, what Healer tried, and the next steps it recommends — so the next session (agent or
//! person) starts from it.

use async_trait::async_trait;

use super::{spell_in_words, Spell, SpellContext, SpellReport};
use crate::error::Result;
use crate::failure::ProjectScenario;
use crate::project::append_progress;
use crate::store::now;

pub const NAME: &str = "update_progress_with_guidance";

pub struct ProgressGuidance;

/// Next steps for a scenario, for the person or the next agent.
fn next_steps(scenario: Option<ProjectScenario>, cx: &SpellContext<'_>) -> Vec<String> {
    use ProjectScenario::*;
    let mut steps = match scenario {
        Some(InitScriptTypecheckFailure) => vec![
            "Fix the type errors listed above first; the task's own work waits on a green type check.".to_string(),
        ],
        Some(InitScriptTestFailure) => vec![
            "The tests fail before any change: make the main branch green, then run the task again.".to_string(),
        ],
        Some(InitScriptEnvironmentFailure) => vec![
            "Install what the init script needs on this machine (see its output), then run the task again.".to_string(),
        ],
        Some(VerificationFailed) => vec![
            "Read the failing check's output above; change only what it names.".to_string(),
            "Run the check yourself before finishing.".to_string(),
        ],
        Some(PullRequestCheckFailed) => vec![
            "Read the host's check log above: it ran where the project's checks here did not look; make the project's own checks cover it too.".to_string(),
        ],
        Some(SubtaskFailed) => vec![
            "Split the task into smaller steps, or add what the agent was missing to its description.".to_string(),
        ],
        Some(SubtaskStuck) => vec![
            "The agent went silent: look at its last steps, and give it a narrower task.".to_string(),
        ],
        Some(RuntimeError) | None => vec![
            "Check that the agent program runs on this machine and its model is reachable.".to_string(),
        ],
    };
    if cx.context.failures >= 2 {
        steps.push(format!(
            "This task failed {} times: a person should look before it runs again.",
            cx.context.failures
        ));
    }
    steps
}

#[async_trait]
impl Spell for ProgressGuidance {
    fn name(&self) -> &'static str {
        NAME
    }

    async fn cast(&self, cx: &SpellContext<'_>) -> Result<SpellReport> {
        let scenario = ProjectScenario::parse(&cx.failure.scenario);
        let title = cx
            .context
            .task
            .as_ref()
            .map_or(cx.context.task_id.clone(), |t| t.title.clone());
        let tried: Vec<String> = cx
            .services
            .store
            .invocation(cx.invocation_id)?
            .spells
            .iter()
            .map(|s| {
                format!(
                    "- {} — {}",
                    spell_in_words(&s.spell),
                    s.summary.trim_end_matches('.')
                )
            })
            .collect();
        let output: Vec<&str> = cx.context.failing_output.lines().rev().take(15).collect();
        let output: Vec<&str> = output.into_iter().rev().collect();
        let mut entry = format!(
            "## Healer summary — {} ({}), {}\n\n**What failed:** {}.\n\n```\n{}\n```\n\n**What Healer tried:**\n",
            title,
            cx.context.task_id,
            now().chars().take(16).collect::<String>().replace('T', " "),
            scenario.map_or("it failed", |s| s.describe_for(cx.failure.class)),
            output.join("\n")
        );
        if tried.is_empty() {
            entry.push_str("- nothing before this note\n");
        } else {
            entry.push_str(&tried.join("\n"));
            entry.push('\n');
        }
        entry.push_str("\n**Recommended next steps:**\n");
        for step in next_steps(scenario, cx) {
            entry.push_str(&format!("- {step}\n"));
        }
        let repo = std::path::PathBuf::from(&cx.project.path);
        tokio::task::spawn_blocking(move || append_progress(&repo, &entry))
            .await
            .map_err(|e| {
                crate::error::Error::Internal(format!("the progress note stopped: {e}"))
            })??;
        Ok(SpellReport::done(
            "A Healer summary with next steps was added to the progress notes",
        ))
    }
}
