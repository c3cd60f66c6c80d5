//! The engine's planner API: the workflow's chat (what Re-plan opens), sending a message to it,
//! and waiting for its answer. The turns themselves run from the inbox (`planner::run_turn`).

use super::Handle;
use crate::error::{Error, Result};
use crate::llm::{MessageRole, TaskKind, TaskStatus};
use crate::planner::{answered_question, maintainer_question, open_question, PlannerChat};

impl Handle {
    /// The workflow's chat with the planner.
    pub fn planner_chat(&self, workflow_id: i64) -> Result<PlannerChat> {
        self.services.store.workflow(workflow_id)?;
        let task_id = self.services.store.planner_task(workflow_id)?;
        let (messages, last_error) = match task_id {
            Some(id) => {
                let thread = self.services.store.thread(id)?;
                let error =
                    (thread.task.status == TaskStatus::Failed).then(|| thread.task.summary.clone());
                let messages = thread
                    .messages
                    .into_iter()
                    .filter(|m| m.role != MessageRole::System)
                    .collect();
                (messages, error)
            }
            None => (Vec::new(), None),
        };
        Ok(PlannerChat {
            workflow_id,
            maintainer_question: maintainer_question(&self.services.store, workflow_id, &messages)?,
            answered_question: answered_question(&self.services.store, workflow_id, &messages)?,
            task_id,
            question: open_question(&messages),
            last_error,
            messages,
            busy: self.services.store.planner_busy(workflow_id)?,
        })
    }

    /// Send the person's message to the planner: its turn is queued (before any maintainer
    /// work of the workflow) and runs in the background. Returns the inbox item's id.
    pub fn replan(&self, workflow_id: i64, message: &str) -> Result<i64> {
        let message = message.trim();
        if message.is_empty() {
            return Err(Error::InvalidInput("write a message first".to_string()));
        }
        let workflow = self.services.store.workflow(workflow_id)?;
        let task_id = match self.services.store.planner_task(workflow_id)? {
            Some(id) => id,
            None => {
                self.services
                    .llm
                    .start_task(
                        TaskKind::Planner,
                        &format!("Chat: {}", workflow.title),
                        Some(workflow_id),
                    )?
                    .id
            }
        };
        let item = self
            .services
            .store
            .insert_planner_item(workflow_id, task_id, message)?;
        self.services.wake.inbox.notify_one();
        Ok(item)
    }

    /// One planner turn, waited for: the chat afterwards.
    pub async fn replan_and_wait(&self, workflow_id: i64, message: &str) -> Result<PlannerChat> {
        let item = self.replan(workflow_id, message)?;
        self.wait_for_item(workflow_id, item).await?;
        self.planner_chat(workflow_id)
    }
}
