//! Comments on the lines of an agent's change: kept as the person writes them, sent to the
//! agent as one message (into its live session, or a session that picks the task up again on
//! its branch), and shown as addressed once the agent's next change touches their lines.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::secrets::blocking;
use super::Handle;
use crate::error::{Error, Result};
use crate::project::TaskStatus;
use crate::session::SessionStatus;
use crate::store::{now, NewReviewComment, ReviewComment, MAX_PERSON_MESSAGE};

/// The longest comment, in characters.
pub const MAX_COMMENT: usize = 2_000;
/// The most lines of a file one comment quotes back to the agent.
const EXCERPT_LINES: usize = 12;
/// The most characters of one quoted line.
const EXCERPT_LINE_CHARS: usize = 160;
/// The most comments one message carries (the message must fit what a person may write).
const MAX_SENT: usize = 20;

/// What sending the comments came to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct CommentsSent {
    pub count: u32,
    /// The session they went to (the live one, or the one that picked the task up again).
    pub session_id: i64,
    pub said: String,
}

impl Handle {
    /// Keep a comment on lines `line_start..=line_end` of `path` as the task's change shows it
    /// now (its working copy while the agent works, else its last commit).
    pub async fn add_review_comment(
        &self,
        project_id: i64,
        task_id: &str,
        path: &str,
        line_start: u32,
        line_end: u32,
        text: &str,
    ) -> Result<ReviewComment> {
        let text = crate::secrets::redact_owned(text.trim().to_string());
        if text.is_empty() {
            return Err(Error::InvalidInput(
                "write what the agent should change".to_string(),
            ));
        }
        if text.chars().count() > MAX_COMMENT {
            return Err(Error::InvalidInput(format!(
                "a comment may be at most {MAX_COMMENT} characters"
            )));
        }
        let (first, last) = (line_start.min(line_end), line_start.max(line_end));
        if first == 0 {
            return Err(Error::InvalidInput("lines are counted from 1".to_string()));
        }
        let project = self.services.store.project(project_id)?;
        let review = self.review_task(project_id, task_id).await?;
        let file = review
            .files
            .iter()
            .find(|f| f.path == path)
            .ok_or_else(|| {
                Error::InvalidInput(format!(
                    "{path} is not among the files the agent changed in this task"
                ))
            })?;
        let Some(after) = file.after.as_deref().filter(|_| file.shown) else {
            return Err(Error::InvalidInput(format!(
                "{path} has no lines to comment on here (it was deleted, or is not text)"
            )));
        };
        let lines: Vec<&str> = after.lines().collect();
        if last as usize > lines.len() {
            return Err(Error::InvalidInput(format!(
                "{path} has {} lines; line {last} is not one of them",
                lines.len()
            )));
        }
        let excerpt: String = lines[first as usize - 1..last as usize]
            .iter()
            .take(EXCERPT_LINES)
            .map(|line| line.chars().take(EXCERPT_LINE_CHARS).collect::<String>())
            .collect::<Vec<_>>()
            .join("\n");
        let excerpt = crate::secrets::redact_owned(excerpt);
        let content = after.to_string();
        let repo_path = project.path.clone();
        let blob = blocking(move || {
            let repo = git2::Repository::open(&repo_path)
                .map_err(|e| crate::project::git_error("cannot open the repository", e))?;
            repo.blob(content.as_bytes())
                .map(|oid| oid.to_string())
                .map_err(|e| crate::project::git_error("cannot keep the file as it read", e))
        })
        .await?;
        self.services.store.add_review_comment(&NewReviewComment {
            project_id,
            task_id: task_id.to_string(),
            path: path.to_string(),
            line_start: first,
            line_end: last,
            excerpt,
            blob,
            text,
        })
    }

    /// The task's comments, those the agent's change has touched since they were sent marked
    /// addressed.
    pub async fn review_comments(
        &self,
        project_id: i64,
        task_id: &str,
    ) -> Result<Vec<ReviewComment>> {
        let comments = self.services.store.review_comments(project_id, task_id)?;
        let waiting: Vec<&ReviewComment> = comments
            .iter()
            .filter(|c| c.sent_at.is_some() && c.addressed_at.is_none())
            .collect();
        if waiting.is_empty() {
            return Ok(comments);
        }
        let project = self.services.store.project(project_id)?;
        let review = self.review_task(project_id, task_id).await?;
        let asked: Vec<(i64, String, String, u32, u32)> = waiting
            .iter()
            .map(|c| {
                (
                    c.id,
                    c.path.clone(),
                    c.blob.clone(),
                    c.line_start,
                    c.line_end,
                )
            })
            .collect();
        let repo_path = project.path.clone();
        let touched = blocking(move || {
            // Off the async threads: a file may be read from the task's folder.
            let now_reads: Vec<(i64, String, Now, u32, u32)> = asked
                .into_iter()
                .map(|(id, path, blob, start, end)| {
                    let current = match review.files.iter().find(|f| f.path == path) {
                        Some(file) => match &file.after {
                            Some(after) => Now::Reads(after.clone()),
                            None => Now::Gone,
                        },
                        // Not part of the change shown (a session's own change since it
                        // started): the file as the task's folder holds it.
                        None => review
                            .worktree
                            .as_deref()
                            .map_or(Now::Unknown, |folder| on_disk(Path::new(folder), &path)),
                    };
                    (id, blob, current, start, end)
                })
                .collect();
            let repo = git2::Repository::open(&repo_path)
                .map_err(|e| crate::project::git_error("cannot open the repository", e))?;
            Ok(now_reads
                .into_iter()
                .filter(|(_, blob, current, start, end)| {
                    let current = match current {
                        Now::Reads(text) => text,
                        Now::Gone => return true,
                        Now::Unknown => return false,
                    };
                    let Ok(before) = git2::Oid::from_str(blob).and_then(|oid| repo.find_blob(oid))
                    else {
                        return false;
                    };
                    lines_touched(before.content(), current.as_bytes(), *start, *end)
                })
                .map(|(id, ..)| id)
                .collect::<Vec<_>>())
        })
        .await?;
        for id in &touched {
            self.services.store.mark_review_comment_addressed(*id)?;
        }
        if touched.is_empty() {
            Ok(comments)
        } else {
            self.services.store.review_comments(project_id, task_id)
        }
    }

    /// Forget a comment that was not sent yet.
    pub fn delete_review_comment(&self, comment_id: i64) -> Result<()> {
        self.services.store.delete_review_comment(comment_id)
    }

    /// Send the comments that wait as one message: into the task's live session, else a
    /// session that picks the task up again on its branch (the agent's own session resumed
    /// where it has one).
    pub fn send_review_comments(&self, project_id: i64, task_id: &str) -> Result<CommentsSent> {
        let project = self.services.store.project(project_id)?;
        let waiting: Vec<ReviewComment> = self
            .services
            .store
            .review_comments(project_id, task_id)?
            .into_iter()
            .filter(|c| c.sent_at.is_none())
            .take(MAX_SENT)
            .collect();
        if waiting.is_empty() {
            return Err(Error::InvalidInput(
                "no comment waits to be sent".to_string(),
            ));
        }
        // As many as fit one message (the rest wait for the next sending).
        let waiting = &waiting[..fitting(&waiting)];
        let message = comments_message(waiting);
        let ids: Vec<i64> = waiting.iter().map(|c| c.id).collect();
        let sessions = self
            .services
            .store
            .list_sessions(project_id, Some(task_id), 50)?;
        let count = u32::try_from(ids.len()).unwrap_or(u32::MAX);
        let comments = crate::workflow::count(ids.len(), "comment", "comments");
        if let Some(live) = sessions.iter().find(|s| s.status == SessionStatus::Running) {
            self.say_to_session(live.id, &message)?;
            self.services
                .store
                .mark_review_comments_sent(&ids, live.id)?;
            return Ok(CommentsSent {
                count,
                session_id: live.id,
                said: format!("Sent {comments} to the agent while it works."),
            });
        }
        let task = self.finishing_task(&project, task_id)?;
        if task.status == TaskStatus::Closed {
            self.projects().modify_tasks(
                &project,
                "a task was opened for the person's comments",
                |file| {
                    file.update(task_id, &now(), |t| {
                        t.status = TaskStatus::Open;
                        t.closed_reason = None;
                        t.note = Some("The agent is asked to answer your comments".to_string());
                    })
                },
            )?;
        }
        let resumable = sessions.first().filter(|s| s.agent_session_id.is_some());
        let session = match resumable {
            Some(previous) => self.resume_session(project_id, task_id, previous.id, &message)?,
            None => self.projects().run_with_message(
                &project,
                task_id,
                project.settings.agent,
                &message,
                true,
                None,
            )?,
        };
        self.services
            .store
            .mark_review_comments_sent(&ids, session.id)?;
        Ok(CommentsSent {
            count,
            session_id: session.id,
            said: format!(
                "Sent {comments} to the agent: it picks the task up again on its branch."
            ),
        })
    }
}

/// A commented file as the task's work holds it now.
enum Now {
    Reads(String),
    /// Deleted: every line of it was touched.
    Gone,
    /// Not to be read (not a regular text file of sensible size, or no folder to read it in).
    Unknown,
}

/// The largest file read to see whether a comment was answered.
const READ_BYTES: u64 = 1024 * 1024;

/// `path` in the task's folder: a regular file only (not a link the agent put there), read
/// within [`READ_BYTES`].
fn on_disk(folder: &Path, path: &str) -> Now {
    if Path::new(path)
        .components()
        .any(|c| !matches!(c, std::path::Component::Normal(_)))
    {
        return Now::Unknown;
    }
    let file = folder.join(path);
    // Not through a folder the agent linked elsewhere.
    let inside = file
        .parent()
        .and_then(|p| std::fs::canonicalize(p).ok())
        .zip(std::fs::canonicalize(folder).ok())
        .is_some_and(|(parent, root)| parent.starts_with(root));
    if !inside {
        return match std::fs::symlink_metadata(&file) {
            Err(e)
                if e.kind() == std::io::ErrorKind::NotFound
                    && file.parent().is_some_and(Path::exists) =>
            {
                Now::Gone
            }
            _ => Now::Unknown,
        };
    }
    match std::fs::symlink_metadata(&file) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Now::Gone,
        Ok(meta) if meta.file_type().is_file() && meta.len() <= READ_BYTES => {
            std::fs::read_to_string(&file).map_or(Now::Unknown, Now::Reads)
        }
        _ => Now::Unknown,
    }
}

/// How many of `waiting` (oldest first) fit one message; at least one (a comment and its
/// excerpt are capped to fit alone).
fn fitting(waiting: &[ReviewComment]) -> usize {
    let mut n = waiting.len();
    while n > 1 && comments_message(&waiting[..n]).chars().count() > MAX_PERSON_MESSAGE {
        n -= 1;
    }
    n
}

/// One message with every comment: where, the lines as they read, what the person wrote.
fn comments_message(comments: &[ReviewComment]) -> String {
    let mut out = format!(
        "The person reviewed your change and left {} on its lines. Answer each one in the code, then keep the project's checks passing.\n",
        crate::workflow::count(comments.len(), "comment", "comments")
    );
    for (i, c) in comments.iter().enumerate() {
        let at = if c.line_start == c.line_end {
            format!("{}, line {}", c.path, c.line_start)
        } else {
            format!("{}, lines {}\u{2013}{}", c.path, c.line_start, c.line_end)
        };
        let quoted: String = c.excerpt.lines().map(|l| format!("   > {l}\n")).collect();
        out.push_str(&format!("\n{}. {at}:\n{quoted}   {}\n", i + 1, c.text));
    }
    out
}

/// Whether a change from `before` to `after` touches lines `start..=end` of `before` (a line
/// changed or removed among them, or one added between them or right after).
fn lines_touched(before: &[u8], after: &[u8], start: u32, end: u32) -> bool {
    // Only the changed lines themselves: no context lines around them.
    let mut options = git2::DiffOptions::new();
    options.context_lines(0);
    let Ok(patch) = git2::Patch::from_buffers(before, None, after, None, Some(&mut options)) else {
        return false;
    };
    (0..patch.num_hunks()).any(|h| {
        let Ok((hunk, _)) = patch.hunk(h) else {
            return false;
        };
        let (old_start, old_lines) = (hunk.old_start(), hunk.old_lines());
        if old_lines == 0 {
            // An insertion after line `old_start`.
            old_start + 1 >= start && old_start <= end
        } else {
            old_start <= end && old_start + old_lines > start
        }
    })
}

#[cfg(test)]
mod tests {
    use super::lines_touched;

    #[test]
    fn a_change_touches_the_commented_lines_only_when_it_changes_inserts_or_removes_among_them() {
        let before = b"one\ntwo\nthree\nfour\nfive\n";
        // Line 2 changed: touches 2..=3, not 4..=5.
        let after = b"one\nTWO\nthree\nfour\nfive\n";
        assert!(lines_touched(before, after, 2, 3));
        assert!(!lines_touched(before, after, 4, 5));
        // A line inserted after line 3: touches 3..=3 and 4..=4 (right around), not 1..=1.
        let inserted = b"one\ntwo\nthree\nnew\nfour\nfive\n";
        assert!(lines_touched(before, inserted, 3, 3));
        assert!(lines_touched(before, inserted, 4, 4));
        assert!(!lines_touched(before, inserted, 1, 1));
        // Line 5 removed.
        let removed = b"one\ntwo\nthree\nfour\n";
        assert!(lines_touched(before, removed, 5, 5));
        assert!(!lines_touched(before, removed, 1, 2));
        // Nothing changed.
        assert!(!lines_touched(before, before, 1, 5));
    }

    #[test]
    fn one_message_names_each_comment_with_its_lines_and_fits_a_persons_message() {
        let comment = |id: i64, start: u32, end: u32| crate::store::ReviewComment {
            id,
            project_id: 1,
            task_id: "t1".to_string(),
            path: "greet.py".to_string(),
            line_start: start,
            line_end: end,
            excerpt: "x".repeat(1400),
            blob: String::new(),
            text: "Use an f-string.".to_string(),
            created_at: String::new(),
            sent_at: None,
            sent_session_id: None,
            addressed_at: None,
        };
        let one = super::comments_message(&[crate::store::ReviewComment {
            excerpt: "    return 'Hello ' + name".to_string(),
            ..comment(1, 2, 2)
        }]);
        assert!(one.contains("left 1 comment on its lines"), "{one}");
        assert!(
            one.contains(
                "1. greet.py, line 2:\n   >     return 'Hello ' + name\n   Use an f-string."
            ),
            "{one}"
        );
        let many = super::comments_message(&[comment(1, 2, 4), comment(2, 7, 7)]);
        assert!(many.contains("greet.py, lines 2\u{2013}4"), "{many}");
        assert!(many.chars().count() <= crate::store::MAX_PERSON_MESSAGE);
        // A third long one waits for the next sending rather than being cut off.
        let three = [comment(1, 2, 4), comment(2, 7, 7), comment(3, 9, 9)];
        assert_eq!(super::fitting(&three), 2);
        assert_eq!(super::fitting(&three[..1]), 1);
    }
}
