//! What a session on a worker keeps while it works: its steps (sent back in heartbeats), the
//! messages for its agent, and the box its Claude Code hooks read there.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::cluster::session_flow::{StepWindow, STEP_CHARS, WINDOW_BYTES};
use crate::llm::{scrub, ApiKey};
use crate::session::{SessionStep, StepSource};

/// What a Claude Code hook on a worker reads: the project's approvals with where the session
/// works, and (in `mail/`) the messages for the agent. Written by the worker into the
/// session's scratch folder; the agent can write there too, as it can write Healer's store at
/// home (the same trust: it is its own session).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct WorkerBox {
    pub approvals: crate::approval::ApprovalSettings,
    pub worktree: PathBuf,
    pub tmp: PathBuf,
    pub home: Option<PathBuf>,
    pub checks: Vec<String>,
}

impl WorkerBox {
    const FILE: &'static str = "approvals.json";

    pub fn place(&self) -> crate::approval::Place {
        crate::approval::Place {
            worktree: self.worktree.clone(),
            tmp: self.tmp.clone(),
            home: self.home.clone(),
            checks: self.checks.clone(),
        }
    }

    pub fn read(dir: &Path) -> Result<WorkerBox, String> {
        let text = crate::capped::read_file(&dir.join(Self::FILE), 1024 * 1024, "the worker's box")
            .map_err(|e| e.to_string())?;
        serde_json::from_slice(&text).map_err(|e| e.to_string())
    }

    pub(super) fn write(&self, dir: &Path) -> std::io::Result<()> {
        std::fs::create_dir_all(dir.join("mail"))?;
        let text = serde_json::to_vec(self).map_err(std::io::Error::other)?;
        std::fs::write(dir.join(Self::FILE), text)
    }
}

/// The messages waiting in a worker box's mail, taken (oldest first).
pub fn take_mail(dir: &Path) -> Vec<String> {
    let mail = dir.join("mail");
    let mut names: Vec<PathBuf> = std::fs::read_dir(&mail)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "txt"))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
        .into_iter()
        .filter_map(|path| {
            let text = std::fs::read_to_string(&path).ok();
            std::fs::remove_file(&path).ok()?;
            text
        })
        .collect()
}

/// What a session on a worker says as it goes, and the messages that reach it.
#[derive(Default)]
pub struct SessionSink {
    steps: Mutex<Vec<SessionStep>>,
    told: Mutex<VecDeque<String>>,
    /// Secrets scrubbed from every step (the session's pass).
    pub(super) secret: Mutex<Option<ApiKey>>,
    /// The box of the agent's hooks, when it has them: messages go into its mail.
    pub(super) mailbox: std::sync::OnceLock<PathBuf>,
    sent: std::sync::atomic::AtomicU64,
    /// The execution the steps are for (named in every window).
    pub for_session: Mutex<String>,
    pub changed: tokio::sync::Notify,
}

impl SessionSink {
    /// Keep a step (its text cut to what crosses Temporal, the pass scrubbed).
    pub fn push(&self, mut step: SessionStep) {
        let secret = lock(&self.secret).clone();
        step.text = scrub(&step.text, secret.as_ref());
        step.arguments = step.arguments.map(|a| scrub(&a, secret.as_ref()));
        if let Some((cut, _)) = step.text.char_indices().nth(STEP_CHARS) {
            let rest = step.text.len() - cut;
            step.text.truncate(cut);
            step.text.push_str(&format!(
                "\n[{rest} more bytes were not sent from the worker]"
            ));
        }
        if let Some(args) = step.arguments.as_mut() {
            if let Some((cut, _)) = args.char_indices().nth(STEP_CHARS) {
                args.truncate(cut);
            }
        }
        lock(&self.steps).push(step);
        self.changed.notify_one();
    }

    pub(super) fn note(&self, text: impl Into<String>) {
        self.push(crate::agent::text_step(StepSource::System, text.into()));
    }

    /// How many steps there are.
    pub fn len(&self) -> u64 {
        lock(&self.steps).len() as u64
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The newest steps that fit in one heartbeat, in order.
    pub fn window(&self) -> StepWindow {
        let steps = lock(&self.steps);
        let mut bytes = 0;
        let mut from = steps.len();
        while from > 0 {
            let size = steps[from - 1].text.len()
                + steps[from - 1].arguments.as_ref().map_or(0, String::len)
                + 256;
            if bytes + size > WINDOW_BYTES && from < steps.len() {
                break;
            }
            bytes += size;
            from -= 1;
        }
        StepWindow {
            for_session: lock(&self.for_session).clone(),
            from: from as u64,
            steps: steps[from..].to_vec(),
        }
    }

    /// A message for the agent arrived (through the workflow's signal).
    pub fn tell(&self, message: String) {
        if let Some(dir) = self.mailbox.get() {
            let n = self.sent.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let part = dir.join("mail").join(format!(".{n:06}"));
            let written = super::write_new(&part, message.as_bytes()).and_then(|()| {
                std::fs::rename(&part, dir.join("mail").join(format!("{n:06}.txt")))
            });
            if written.is_ok() {
                return;
            }
        }
        lock(&self.told).push_back(message);
        self.changed.notify_one();
    }

    /// Messages the agent has not had (from its hooks' mail too).
    pub(super) fn take_told(&self) -> Vec<String> {
        // Oldest first: what was queued before the hooks' mail existed, then the mail.
        let mut told: Vec<String> = lock(&self.told).drain(..).collect();
        told.extend(self.mailbox.get().map(|d| take_mail(d)).unwrap_or_default());
        told
    }
}

pub(super) fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_carries_the_newest_steps_within_the_shipped_bound_and_says_where_they_start() {
        let sink = SessionSink::default();
        *lock(&sink.for_session) = "healer-x-p1-s1-0".to_string();
        // Forty steps past the cut: each is kept at STEP_CHARS.
        for n in 0..40 {
            sink.push(crate::agent::text_step(
                StepSource::Agent,
                format!("{n} {}", "x".repeat(STEP_CHARS * 2)),
            ));
        }
        let window = sink.window();
        let bytes: usize = window.steps.iter().map(|s| s.text.len()).sum();
        assert!(bytes <= WINDOW_BYTES, "{bytes}");
        assert!(window.steps.len() >= 10, "{}", window.steps.len());
        assert_eq!(window.from + window.steps.len() as u64, 40);
        assert!(window.steps[0]
            .text
            .starts_with(&format!("{} ", window.from)));
        assert!(window
            .steps
            .iter()
            .all(|s| s.text.contains("more bytes were not sent")));
        assert_eq!(window.for_session, "healer-x-p1-s1-0");
        // One step larger than a window on its own is still sent (cut), never nothing.
        let lone = SessionSink::default();
        lone.push(crate::agent::text_step(
            StepSource::Agent,
            "y".repeat(WINDOW_BYTES * 2),
        ));
        assert_eq!(lone.window().steps.len(), 1);
    }
}
