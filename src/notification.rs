//! Notifications: what the engine tells the person. Shown in the notification centre and,
//! by the desktop shell, as desktop notifications.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum NotificationKind {
    /// For information only; nothing to do.
    Info,
    /// A heal needed the person to know about it.
    Heal,
    /// The maintainer could not repair a workflow; the person decides (Re-plan).
    MaintenanceFailed,
    /// A repair was needed but no model is configured.
    NoModel,
    /// A workflow was fixed too often lately: a person should look at it.
    Review,
    /// Healer stopped something on its own (a rollback, the scheduler paused).
    Safety,
    /// Good news: an automatic repair held (its re-run passed).
    Repaired,
}

/// A button a notification offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum NotificationAction {
    /// Open the workflow's chat with the planner.
    Replan,
    /// Open Settings → Models.
    OpenSettings,
    /// Lift the hold a repair that gave up left, and start a repair of the last failure now.
    RetryAutofix,
    /// Open the project's task it is about.
    OpenTask,
    /// Open the question Healer asks about it.
    AnswerQuestion,
}

impl NotificationKind {
    pub fn as_str(self) -> &'static str {
        match self {
            NotificationKind::Info => "info",
            NotificationKind::Heal => "heal",
            NotificationKind::MaintenanceFailed => "maintenance_failed",
            NotificationKind::NoModel => "no_model",
            NotificationKind::Review => "review",
            NotificationKind::Safety => "safety",
            NotificationKind::Repaired => "repaired",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [
            NotificationKind::Info,
            NotificationKind::Heal,
            NotificationKind::MaintenanceFailed,
            NotificationKind::NoModel,
            NotificationKind::Review,
            NotificationKind::Safety,
            NotificationKind::Repaired,
        ]
        .into_iter()
        .find(|k| k.as_str() == s)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct Notification {
    pub id: i64,
    pub kind: NotificationKind,
    pub title: String,
    pub body: String,
    pub created_at: String,
    pub read: bool,
    /// The heal that raised it, if any.
    pub heal_id: Option<i64>,
    /// What it is about: the workflow, the failed run, the maintainer task.
    pub workflow_id: Option<i64>,
    pub run_id: Option<i64>,
    pub task_id: Option<i64>,
    /// The buttons it offers.
    pub actions: Vec<NotificationAction>,
    /// How often what it is about happened again since ("failed 3 more times since"), and
    /// when last.
    pub repeats: u32,
    pub repeated_at: Option<String>,
    /// Its cause is gone (the workflow ran green since): it keeps its words, not its buttons.
    pub resolved: bool,
    /// The project's task it is about (the window groups it under the project).
    pub project_id: Option<i64>,
    pub project_name: Option<String>,
    pub project_task: Option<String>,
    /// The question it asks the person to answer.
    pub checkpoint_id: Option<i64>,
}

/// A new notification, before the store gives it an id.
#[derive(Debug, Clone)]
pub struct NewNotification {
    pub kind: NotificationKind,
    pub title: String,
    pub body: String,
    pub heal_id: Option<i64>,
    pub workflow_id: Option<i64>,
    pub run_id: Option<i64>,
    pub task_id: Option<i64>,
    pub actions: Vec<NotificationAction>,
    pub project_id: Option<i64>,
    pub project_task: Option<String>,
    pub checkpoint_id: Option<i64>,
}

impl NewNotification {
    /// About a project's task: grouped under the project, with a button that opens the task.
    pub fn about_task(mut self, project_id: i64, task_id: &str) -> Self {
        self.project_id = Some(project_id);
        self.project_task = Some(task_id.to_string());
        if !self.actions.contains(&NotificationAction::OpenTask) {
            self.actions.push(NotificationAction::OpenTask);
        }
        self
    }

    /// Asking the person this question: its button comes first.
    pub fn asking(mut self, checkpoint_id: i64) -> Self {
        self.checkpoint_id = Some(checkpoint_id);
        self.actions.insert(0, NotificationAction::AnswerQuestion);
        self
    }

    pub fn new(kind: NotificationKind, title: String, body: String) -> Self {
        NewNotification {
            kind,
            title,
            body,
            heal_id: None,
            workflow_id: None,
            run_id: None,
            task_id: None,
            actions: Vec::new(),
            project_id: None,
            project_task: None,
            checkpoint_id: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct NotificationList {
    pub items: Vec<Notification>,
    pub unread: u32,
}
