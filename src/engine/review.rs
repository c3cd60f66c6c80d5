//! Reviewing an agent's change from the window: a session's or a task's diff, file by file, and
//! where its worktree is (to open in the person's editor or a terminal), with the editor command
//! the person chose.

use super::Handle;
use crate::error::{Error, Result};
use crate::project::own_copy::{open_own_work, review_folder};
use crate::project::review::{review_session, ChangeReview};
use crate::session::SessionStatus;

/// How far back the person's own sessions are listed in the history.
pub const OWN_HISTORY_DAYS: u64 = 30;

/// The setting that holds the person's editor command ("code", "subl -n {path}").
const EDITOR_SETTING: &str = "editor_command";

impl Handle {
    /// What a session changed: its worktree while it works (or when its work was not
    /// committed), the commit it ended with after.
    pub async fn review_session(&self, session_id: i64) -> Result<ChangeReview> {
        let session = self.services.store.session(session_id)?;
        let project = self.services.store.project(session.project_id)?;
        let review = review_folder(&self.projects().slots_dir(project.id), &session.task_id);
        tokio::task::spawn_blocking(move || {
            review_session(std::path::Path::new(&project.path), &session, &review)
        })
        .await
        .map_err(|e| Error::Internal(format!("the review task failed: {e}")))?
    }

    /// What a task's work changed: its running session's worktree, else the newest session
    /// that left a commit, else the newest session's worktree.
    pub async fn review_task(&self, project_id: i64, task_id: &str) -> Result<ChangeReview> {
        let sessions = self
            .services
            .store
            .list_sessions(project_id, Some(task_id), 50)?;
        let chosen = sessions
            .iter()
            .find(|s| s.status == SessionStatus::Running)
            .or_else(|| sessions.iter().find(|s| s.commit_id.is_some()))
            .or(sessions.first());
        match chosen {
            Some(session) => self.review_session(session.id).await,
            None => Ok(ChangeReview::nothing()),
        }
    }

    /// The folder that holds a session's own work, for the person to open: the worktree
    /// standing on its branch, else a checkout of its branch made for them (its slot went to
    /// a later task). An error with a sentence when nothing of it is left.
    pub async fn session_worktree(&self, session_id: i64) -> Result<std::path::PathBuf> {
        let session = self.services.store.session(session_id)?;
        let project = self.services.store.project(session.project_id)?;
        let review = review_folder(&self.projects().slots_dir(project.id), &session.task_id);
        let found = tokio::task::spawn_blocking(move || {
            open_own_work(
                std::path::Path::new(&project.path),
                std::path::Path::new(&session.worktree),
                &session.branch,
                session.commit_id.as_deref(),
                &review,
            )
        })
        .await
        .map_err(|e| Error::Internal(format!("the checkout task failed: {e}")))??;
        found.ok_or_else(|| {
            Error::InvalidInput(
                "nothing of this task's work is left to open: its branch was removed and it \
                 left no commit"
                    .to_string(),
            )
        })
    }

    /// Write a session's steps as an ATIF trajectory in the data folder's `trajectories/`;
    /// its path.
    pub fn export_session_trajectory(&self, session_id: i64) -> Result<std::path::PathBuf> {
        crate::spells::atif::write_session_trajectory(&self.services, session_id)
    }

    /// The person's own Claude Code and opencode sessions Healer watched (when Settings allow
    /// watching), from the last [`OWN_HISTORY_DAYS`] days, newest first, each with its loop
    /// verdict.
    pub fn own_session_history(&self) -> Result<Vec<crate::steering::LiveSession>> {
        let settings = self.services.store.steering_settings()?;
        if !(settings.enabled && settings.watch_own_sessions) {
            return Ok(Vec::new());
        }
        let back = std::time::Duration::from_secs(OWN_HISTORY_DAYS * 24 * 3600);
        let now = chrono::Utc::now();
        let mut sessions = Vec::new();
        if let Some(root) = self.inner.claude_projects.as_deref() {
            let healer_ids = crate::steering::own::healer_agent_ids(&self.services)?;
            sessions.extend(crate::steering::own::person_sessions(
                root,
                now,
                back,
                &healer_ids,
                &self.inner.own_verdicts,
            ));
        }
        if let Some(db) = self.inner.opencode_db.as_deref() {
            sessions.extend(crate::steering::own_opencode::person_sessions(
                db, now, back,
            ));
        }
        sessions.sort_by(|a, b| b.last_activity_at.cmp(&a.last_activity_at));
        Ok(sessions)
    }

    /// The editor command the person chose, if any.
    pub fn editor_command(&self) -> Result<Option<String>> {
        self.services.store.setting(EDITOR_SETTING)
    }

    /// Choose the editor command (empty: the desktop's default).
    pub fn set_editor_command(&self, command: &str) -> Result<()> {
        let command = command.trim();
        if command.is_empty() {
            return self.services.store.delete_setting(EDITOR_SETTING);
        }
        let program = command.split_whitespace().next().unwrap_or_default();
        if which::which(program).is_err() {
            return Err(Error::InvalidInput(format!(
                "\"{program}\" was not found on this computer: give the command you start your editor with, such as code"
            )));
        }
        self.services
            .store
            .set_setting(EDITOR_SETTING, &command.to_string())
    }
}

/// The program and arguments that open `path` with `command`: `{path}` replaced where it
/// appears, else the path appended.
pub fn editor_invocation(command: &str, path: &std::path::Path) -> Option<(String, Vec<String>)> {
    let path = path.display().to_string();
    let mut words = command.split_whitespace().map(str::to_string);
    let program = words.next()?;
    let mut args: Vec<String> = words.collect();
    if args.iter().any(|a| a.contains("{path}")) {
        for arg in &mut args {
            *arg = arg.replace("{path}", &path);
        }
    } else {
        args.push(path);
    }
    Some((program, args))
}

/// The terminal program to open a folder in: Debian's `x-terminal-emulator`, `$TERMINAL`, or a
/// common one that is installed.
pub fn terminal_program() -> Option<std::path::PathBuf> {
    let candidates = ["x-terminal-emulator"]
        .into_iter()
        .map(str::to_string)
        .chain(crate::secrets::env_var("TERMINAL"))
        .chain(
            [
                "gnome-terminal",
                "konsole",
                "xfce4-terminal",
                "kitty",
                "alacritty",
                "xterm",
            ]
            .into_iter()
            .map(str::to_string),
        );
    for candidate in candidates {
        if let Ok(found) = which::which(&candidate) {
            return Some(found);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_editor_command_takes_the_path_where_it_says_or_at_the_end() {
        let path = std::path::Path::new("/work/tree");
        assert_eq!(
            editor_invocation("code", path),
            Some(("code".to_string(), vec!["/work/tree".to_string()]))
        );
        assert_eq!(
            editor_invocation("subl -n {path}:1", path),
            Some((
                "subl".to_string(),
                vec!["-n".to_string(), "/work/tree:1".to_string()]
            ))
        );
        assert_eq!(editor_invocation("  ", path), None);
    }
}
