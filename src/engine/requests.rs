//! Requests from other processes: noticed through the data folder's file events and
//! `PRAGMA data_version`, claimed once, acted on, answered in the store. The requests are the
//! engine's own vocabulary: `client` only writes them.

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::{to_json, Handle, HealedRun, COMMIT_SETTLE, REQUEST_SAFETY_POLL};

/// After a failed claim (the database locked), when to try again.
const CLAIM_RETRY: Duration = Duration::from_millis(250);

/// How often writing an answer is tried while the database is locked (with growing pauses up
/// to 5 s each: about 2 minutes in all).
const ANSWER_TRIES: u32 = 30;
use crate::checkpoint::Checkpoint;
use crate::deps::Dependencies;
use crate::error::{Error, ErrorPayload, Result};
use crate::heal::HealRecord;
use crate::planner::PlannerChat;
use crate::project::{AddProject, Project, SessionRecord};
use crate::workflow::{RunDetail, ScriptVersion, Workflow, WorkflowInput};

/// What another process can ask the engine to do. Workflows are named by name or id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Request {
    Ping,
    SendTestAlert,
    CreateWorkflow {
        input: Box<WorkflowInput>,
        /// The packages its first version declares.
        #[serde(default)]
        requirements: Vec<String>,
    },
    SaveScript {
        workflow: String,
        code: String,
        comment: String,
        /// The packages the new version declares (`None`: those of the one that runs).
        #[serde(default)]
        requirements: Option<Vec<String>>,
    },
    /// Install the active version's packages again, into a fresh environment.
    ReinstallDependencies {
        workflow: String,
    },
    SetPaused {
        workflow: String,
        paused: bool,
    },
    DeleteWorkflow {
        workflow: String,
    },
    /// Run now and answer when the run has finished (`until_healed`: and when the heal its
    /// failure starts is over too).
    RunWorkflow {
        workflow: String,
        #[serde(default)]
        until_healed: bool,
    },
    /// Decide a checkpoint (`option` 1-based; `None`: the recommended one).
    DecideCheckpoint {
        id: i64,
        option: Option<u32>,
        notes: Option<String>,
    },
    /// One planner turn in the workflow's chat, answered when it is over.
    Replan {
        workflow: String,
        message: String,
    },
    LoadExamples,
    /// "Try auto-fix again" on a workflow whose repair gave up.
    RetryAutofix {
        workflow: String,
    },
    /// Add a project from a folder: what is detected, with what the person named instead.
    AddProject {
        add: Box<AddProject>,
    },
    RemoveProject {
        project: String,
    },
    /// Start an agent on a task (the next ready one without `task`); with `wait`, answered
    /// when the session has ended.
    RunProject {
        project: String,
        task: Option<String>,
        #[serde(default)]
        wait: bool,
    },
    StopSession {
        id: i64,
    },
    /// Accept a task's work into the main branch (`how`: the project's way when `None`).
    AcceptTask {
        project: String,
        task: String,
        #[serde(default)]
        how: Option<crate::project::finish::AcceptHow>,
    },
    /// Start the agent on resolving a conflict with the main branch, then accept.
    ResolveConflict {
        project: String,
        task: String,
        #[serde(default)]
        how: Option<crate::project::finish::AcceptHow>,
        #[serde(default)]
        wait: bool,
    },
    /// Discard a task's work (pinned as a snapshot first).
    DiscardTask {
        project: String,
        task: String,
    },
    /// Comment on lines of a task's change (kept until sent).
    CommentOnLines {
        project: String,
        task: String,
        path: String,
        line_start: u32,
        line_end: u32,
        text: String,
    },
    /// The task's comments; with `send`, those that wait go to the agent first.
    ReviewComments {
        project: String,
        task: String,
        #[serde(default)]
        send: bool,
    },
    /// Push a task's branch and open its pull request.
    OpenPullRequest {
        project: String,
        task: String,
        #[serde(default)]
        api_url: Option<String>,
    },
    /// Put a healer snapshot back into its task's worktree.
    RestoreSnapshot {
        id: i64,
    },
    /// An agent's hook: may the agent of session `session` do this, or must the person be
    /// asked? Answered at once (the hook then waits for the person's answer in the store).
    AskAgent {
        session: i64,
        call_id: Option<String>,
        request: crate::approval::AgentRequest,
        /// The longest the question may wait (what the agent gives its hook).
        #[serde(default)]
        limit_secs: Option<u32>,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Response {
    Pong {
        pid: u32,
        role: String,
    },
    TestAlert {
        heal: Box<HealRecord>,
    },
    Workflow {
        workflow: Box<Workflow>,
    },
    Version {
        version: Box<ScriptVersion>,
    },
    Run {
        detail: Box<RunDetail>,
    },
    Healed {
        healed: Box<HealedRun>,
    },
    Chat {
        chat: Box<PlannerChat>,
    },
    Checkpoint {
        checkpoint: Box<Checkpoint>,
    },
    Workflows {
        workflows: Vec<Workflow>,
    },
    Dependencies {
        dependencies: Box<Dependencies>,
    },
    Heal {
        heal: Box<HealRecord>,
    },
    Project {
        project: Box<Project>,
    },
    Session {
        session: Box<SessionRecord>,
    },
    /// What accepting a task's work came to.
    Accepted {
        acceptance: super::Acceptance,
    },
    Discarded {
        discarded: super::Discarded,
    },
    PullRequest {
        pull_request: Box<crate::store::PullRequestRecord>,
    },
    Comment {
        comment: Box<crate::store::ReviewComment>,
    },
    /// The task's comments, and what sending them came to when they were sent.
    Comments {
        comments: Vec<crate::store::ReviewComment>,
        #[serde(default)]
        sent: Option<super::CommentsSent>,
    },
    /// What the engine did, in a sentence.
    Said {
        text: String,
    },
    /// What became of an agent's request.
    AgentAnswer {
        answer: super::AgentAnswer,
    },
    Done,
}

/// Act on one request as the engine.
pub(super) async fn perform(engine: &Handle, request: Request) -> Result<Response> {
    let find = |name: &str| engine.find_workflow(name).map(|w| w.id);
    Ok(match request {
        Request::Ping => Response::Pong {
            pid: std::process::id(),
            role: engine.inner.role.clone(),
        },
        Request::SendTestAlert => Response::TestAlert {
            heal: Box::new(engine.send_test_alert().await?),
        },
        Request::CreateWorkflow {
            input,
            requirements,
        } => Response::Workflow {
            workflow: Box::new(engine.create_workflow_with(*input, requirements)?),
        },
        Request::ReinstallDependencies { workflow } => Response::Dependencies {
            dependencies: Box::new(engine.reinstall_dependencies(find(&workflow)?).await?),
        },
        Request::SaveScript {
            workflow,
            code,
            comment,
            requirements,
        } => {
            // The CLI's save is a person's save: the same syntax check as in the window.
            match engine
                .save_edited_script_with(find(&workflow)?, &code, &comment, None, requirements)
                .await?
            {
                super::SaveOutcome::Saved { version } => Response::Version {
                    version: Box::new(version),
                },
                super::SaveOutcome::Invalid { message } => {
                    return Err(Error::InvalidInput(format!(
                        "nothing was saved: the syntax check found a mistake:\n{message}"
                    )))
                }
                super::SaveOutcome::Conflict { newer, .. } => {
                    return Err(Error::InvalidInput(format!(
                        "nothing was saved: version {} appeared meanwhile",
                        newer.version
                    )))
                }
            }
        }
        Request::SetPaused { workflow, paused } => Response::Workflow {
            workflow: Box::new(engine.set_paused(find(&workflow)?, paused)?),
        },
        Request::DeleteWorkflow { workflow } => {
            engine.delete_workflow(find(&workflow)?)?;
            Response::Done
        }
        Request::RunWorkflow {
            workflow,
            until_healed: false,
        } => Response::Run {
            detail: Box::new(engine.run_and_wait(find(&workflow)?).await?),
        },
        Request::RunWorkflow {
            workflow,
            until_healed: true,
        } => Response::Healed {
            healed: Box::new(engine.run_until_healed(find(&workflow)?).await?),
        },
        Request::DecideCheckpoint { id, option, notes } => Response::Checkpoint {
            checkpoint: Box::new(
                engine
                    .decide_checkpoint(id, option, notes.as_deref())
                    .await?,
            ),
        },
        Request::Replan { workflow, message } => Response::Chat {
            chat: Box::new(engine.replan_and_wait(find(&workflow)?, &message).await?),
        },
        Request::LoadExamples => Response::Workflows {
            workflows: engine.load_examples()?,
        },
        Request::RetryAutofix { workflow } => Response::Heal {
            heal: Box::new(engine.retry_autofix(find(&workflow)?).await?),
        },
        Request::AddProject { add } => Response::Project {
            project: Box::new(engine.add_project_from(*add).await?),
        },
        Request::RemoveProject { project } => {
            engine.remove_project(engine.find_project(&project)?.id)?;
            Response::Done
        }
        Request::RunProject {
            project,
            task,
            wait,
        } => {
            let id = engine.find_project(&project)?.id;
            // An engine that only lives for this command must see the session through.
            let session = if wait || !engine.inner.scheduling {
                engine.run_project_and_wait(id, task.as_deref()).await?
            } else {
                engine.run_project(id, task.as_deref())?
            };
            Response::Session {
                session: Box::new(session),
            }
        }
        Request::StopSession { id } => {
            engine.stop_session(id)?;
            Response::Done
        }
        Request::AcceptTask { project, task, how } => Response::Accepted {
            acceptance: engine
                .accept_task(engine.find_project(&project)?.id, &task, how)
                .await?,
        },
        Request::ResolveConflict {
            project,
            task,
            how,
            wait,
        } => {
            let id = engine.find_project(&project)?.id;
            let session = engine.resolve_conflict_with_agent(id, &task, how)?;
            let session = if wait || !engine.inner.scheduling {
                engine.wait_session(session.id).await?
            } else {
                session
            };
            Response::Session {
                session: Box::new(session),
            }
        }
        Request::OpenPullRequest {
            project,
            task,
            api_url,
        } => Response::PullRequest {
            pull_request: Box::new(
                engine
                    .open_pull_request(engine.find_project(&project)?.id, &task, api_url.as_deref())
                    .await?,
            ),
        },
        Request::CommentOnLines {
            project,
            task,
            path,
            line_start,
            line_end,
            text,
        } => Response::Comment {
            comment: Box::new(
                engine
                    .add_review_comment(
                        engine.find_project(&project)?.id,
                        &task,
                        &path,
                        line_start,
                        line_end,
                        &text,
                    )
                    .await?,
            ),
        },
        Request::ReviewComments {
            project,
            task,
            send,
        } => {
            let project = engine.find_project(&project)?.id;
            let sent = if send {
                let sent = engine.send_review_comments(project, &task)?;
                // A command's own engine stops when it answers: the session it started ends
                // first (as `project run` without a daemon).
                if !engine.inner.scheduling {
                    engine.wait_session(sent.session_id).await?;
                }
                Some(sent)
            } else {
                None
            };
            Response::Comments {
                comments: engine.review_comments(project, &task).await?,
                sent,
            }
        }
        Request::DiscardTask { project, task } => Response::Discarded {
            discarded: engine
                .discard_task_work(engine.find_project(&project)?.id, &task)
                .await?,
        },
        Request::RestoreSnapshot { id } => Response::Said {
            text: engine.restore_snapshot(id).await?,
        },
        Request::AskAgent {
            session,
            call_id,
            request,
            limit_secs,
        } => Response::AgentAnswer {
            answer: engine.ask_agent(session, call_id.as_deref(), request, limit_secs)?,
        },
    })
}

/// Watch the data folder for writes made by other processes and answer their requests.
/// Each request is acted on in a task of its own (a run can take minutes); all of them stop
/// when the engine does.
pub(super) async fn serve_requests(engine: Handle, cancel: CancellationToken) {
    serve(engine, cancel, None).await;
}

/// An engine a command started for itself answers only the hooks of the agents it runs: their
/// questions must reach the person whichever engine runs the session.
pub(super) async fn serve_agent_hooks(engine: Handle, cancel: CancellationToken) {
    serve(engine, cancel, Some("ask_agent")).await;
}

async fn serve(engine: Handle, cancel: CancellationToken, only: Option<&'static str>) {
    let (tx, mut rx) = tokio::sync::mpsc::channel::<()>(1);
    let watcher = watch_store_files(engine.services.paths.data_dir().to_path_buf(), tx);
    if let Err(e) = &watcher {
        tracing::warn!(
            "cannot watch the data folder ({e}); checking for requests every few seconds instead"
        );
    }
    let mut working = JoinSet::new();
    let mut seen_version = engine.services.store.data_version().ok();
    // A claim that failed (the database locked by another process) is tried again soon,
    // whatever wakes the loop or not: a request must never wait for an unrelated write.
    let mut retry = !claim_pending(&engine, &mut working, only);
    loop {
        let wait = if retry {
            CLAIM_RETRY
        } else {
            REQUEST_SAFETY_POLL
        };
        let woken_by_file = tokio::select! {
            () = cancel.cancelled() => break,
            _ = rx.recv() => true,
            () = tokio::time::sleep(wait) => false,
            Some(_) = working.join_next(), if !working.is_empty() => continue,
        };
        if retry {
            retry = !claim_pending(&engine, &mut working, only);
            continue;
        }
        // The file event comes with the write to the WAL, a moment before the commit is
        // published in the shared index (which makes no file event): look again shortly after.
        let looks = if woken_by_file {
            COMMIT_SETTLE.as_slice()
        } else {
            &[Duration::ZERO]
        };
        for pause in looks {
            tokio::time::sleep(*pause).await;
            // Only writes by other connections change data_version: our own writes wake the
            // watcher too, but cost a pragma and nothing more.
            let version = engine.services.store.data_version().ok();
            if version == seen_version {
                continue;
            }
            seen_version = version;
            // Another process changed the store: schedules may have changed too.
            engine.services.wake.scheduler.notify_one();
            retry = !claim_pending(&engine, &mut working, only);
            break;
        }
    }
    working.abort_all();
    while working.join_next().await.is_some() {}
    // This engine holds the lease: every request still taken is one it abandons now. Its
    // asker is told at once rather than at the next start.
    let stopped =
        super::failed_result("the Healer engine was stopped before it finished this; try again");
    if let Err(e) = engine.services.store.fail_taken_requests(&stopped) {
        tracing::warn!("could not answer the requests left at shutdown: {e}");
    }
    drop(watcher);
}

/// Claim every pending request, oldest first, each exactly once, and act on it. `false` when
/// the requests could not be read (to be tried again).
fn claim_pending(engine: &Handle, working: &mut JoinSet<()>, only: Option<&str>) -> bool {
    loop {
        let row = match engine.services.store.claim_request_of(only) {
            Ok(Some(row)) => row,
            Ok(None) => return true,
            Err(e) => {
                tracing::warn!("cannot read requests now, trying again shortly: {e}");
                return false;
            }
        };
        let engine = engine.clone();
        working.spawn(async move {
            let answer = match serde_json::from_str::<Request>(&row.payload) {
                Ok(request) => perform(&engine, request).await.map_err(ErrorPayload::from),
                Err(e) => Err(ErrorPayload::from(Error::InvalidInput(format!(
                    "this engine does not understand request {}: {e}",
                    row.id
                )))),
            };
            let (ok, result) = match answer {
                Ok(response) => (true, to_json(&response)),
                Err(error) => (false, to_json(&error)),
            };
            // The asker is waiting for this row: a locked database delays the answer, never
            // loses it.
            let mut pause = CLAIM_RETRY;
            for _ in 0..ANSWER_TRIES {
                match engine.services.store.answer_request(row.id, ok, &result) {
                    Ok(()) => return,
                    Err(e) if e.is_locked() => {
                        tokio::time::sleep(pause).await;
                        pause = (pause * 2).min(Duration::from_secs(5));
                    }
                    Err(e) => {
                        tracing::error!("cannot answer request {}: {e}", row.id);
                        return;
                    }
                }
            }
            tracing::error!(
                "cannot answer request {}: the database stayed locked",
                row.id
            );
        });
    }
}

fn watch_store_files(
    dir: PathBuf,
    tx: tokio::sync::mpsc::Sender<()>,
) -> notify::Result<notify::RecommendedWatcher> {
    use notify::Watcher;
    let mut watcher = notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
        if let Ok(event) = res {
            let touches_db = event.paths.iter().any(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("healer.db"))
            });
            if touches_db {
                // A full channel already holds a wake-up; one is enough.
                let _ = tx.try_send(());
            }
        }
    })?;
    watcher.watch(&dir, notify::RecursiveMode::NonRecursive)?;
    Ok(watcher)
}
