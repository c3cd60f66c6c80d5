//! The control room's side of a session that runs on the cluster (issue 42): instead of the
//! worktree and the agent here, a `HealerSession` workflow on the project's queue, whose worker
//! clones the repository from its remote, works, and pushes `healer/<task>`. The session is
//! supervised as if it ran here: its steps come back in the worker's heartbeats and go through
//! the same path as a local agent's (stored, shown live, the loop detector, the steering
//! judge's view); the person's messages and steering's guidance go out as signals; Stop
//! cancels the workflow. When it ends, the pushed branch is brought into the task's worktree
//! here, where review and accepting work as for any session, and a failure becomes the same
//! `Failure` in the pipeline.

use std::time::Duration;

use temporalio_client::{
    WorkflowCancelOptions, WorkflowDescribeOptions, WorkflowGetResultOptions,
    WorkflowIdConflictPolicy, WorkflowIdReusePolicy, WorkflowSignalOptions, WorkflowStartOptions,
};

mod git;

pub(crate) use git::rewind_pushed;
use git::{fetch_into, is_ancestor, main_commit, only_parent_of, reset_to, unpack_to};

use super::agent_setup;
use super::prompt::{read_progress, task_prompt};
use super::run::Ctx;
use super::settle::Ending;
use crate::agent::AgentUpdate;
use crate::cluster::session_flow::{
    new_session_id, GatewayPass, HealerSession, SessionInput, SessionResult, StepWindow,
    WorkerEnding, STEP_CHARS,
};
use crate::error::{Error, Result};
use crate::failure::{FailureClass, ProjectScenario};
use crate::session::SessionStatus;
use crate::store::RunsOn;

/// How often the control room reads the session's newest steps from the cluster.
const LOOK_EVERY: Duration = Duration::from_millis(200);
/// The most steps one window may carry (a worker sends far fewer: its windows are bounded in
/// bytes).
const MAX_WINDOW_STEPS: usize = 4096;
/// The most of a worker's summary or a failure's message that is kept.
const SUMMARY_CHARS: usize = 4000;
/// How long a stopped session may take to end on its worker.
const STOP_PATIENCE: Duration = Duration::from_secs(30);

impl Ctx<'_> {
    /// Run this session on the cluster and say how it ended.
    pub(super) async fn drive_on_cluster(&self) -> Result<Ending> {
        let settings = &self.project.settings;
        let RunsOn::Cluster { queue } = &settings.runs_on else {
            return Err(Error::Internal("not a project on the cluster".to_string()));
        };
        let refused = |why: String| {
            Ok(Ending::failed(
                ProjectScenario::RuntimeError,
                FailureClass::Environment,
                SessionStatus::Failed,
                why,
                None,
            ))
        };
        let services = &self.projects.services;
        let (cluster, client) = match crate::cluster::cluster_client(services).await {
            Ok(found) => found,
            Err(e) => return refused(format!("The session could not go to the cluster: {e}")),
        };
        let queue = if queue.trim().is_empty() {
            cluster.queue.clone()
        } else {
            queue.trim().to_string()
        };
        let remote =
            match super::push::remote_for(&self.repo, &settings.main_branch)? {
                Some(remote) => remote,
                None => return refused(
                    "The session could not go to the cluster: the repository has no remote for \
                     workers to fetch it from and push the task's branch to"
                        .to_string(),
                ),
            };
        let base = main_commit(&self.repo, &settings.main_branch)?;
        services.store.set_session_base(self.session_id, &base)?;
        let endpoint = match agent_setup::endpoint(&services.llm, settings).await {
            Ok(Some(endpoint)) => endpoint,
            Ok(None) => {
                return refused(format!(
                    "{} was not started on the cluster: a worker never holds a model key or a \
                     sign-in, so the project must use a model provider configured in Healer (its \
                     settings, “Model”), which workers reach through Healer's model gateway",
                    settings.agent.name()
                ))
            }
            Err(why) => return refused(why),
        };
        if let Err(why) = self.projects.worker_gateway().await {
            return refused(why);
        }
        let pass = self.open_pass(&endpoint, true).await?;
        let _ = self.secret.set(pass.token.clone());
        let path = url::Url::parse(&pass.base_url)
            .map(|u| u.path().trim_end_matches('/').to_string())
            .unwrap_or_default();
        let prompt = match &self.resume {
            Some(resume) => resume.message.clone(),
            None => task_prompt(&self.task, &settings.verify, &read_progress(&self.repo)),
        };
        let temporal_id = new_session_id(services.instance(), self.project.id, self.session_id);
        let input = SessionInput {
            sealed_for: temporal_id.clone(),
            instance: services.instance().to_string(),
            session_id: self.session_id,
            project: self.project.name.clone(),
            task_id: self.task.id.clone(),
            task_title: self.task.title.clone(),
            prompt,
            // The agent's own earlier session lived in a worker's scratch folder: a message
            // starts a new one.
            resume: None,
            verify: self.resume.as_ref().is_none_or(|r| r.verify),
            settings: settings.clone(),
            remote: remote.url.clone(),
            base: base.clone(),
            model: Some(GatewayPass {
                provider: endpoint.provider.clone(),
                kind: endpoint.kind,
                path,
                token: pass.token.expose().to_string(),
            }),
        };
        self.note(&format!(
            "Sent to the cluster (queue {queue}): a worker fetches the repository from {} and \
             works on the branch {}.",
            remote.url,
            super::worktree::branch_name(&self.task.id)
        ))?;
        // Kept before it starts: a control room that dies while it runs cancels it at its next
        // start (`cancel_orphaned`).
        services
            .store
            .set_session_cluster_id(self.session_id, &temporal_id)?;
        let options = WorkflowStartOptions::new(queue.clone(), temporal_id.clone())
            .id_reuse_policy(WorkflowIdReusePolicy::RejectDuplicate)
            .id_conflict_policy(WorkflowIdConflictPolicy::UseExisting)
            .build();
        if let Err(e) = client
            .start_workflow(HealerSession::run, input, options)
            .await
        {
            return refused(format!("The cluster did not start the session: {e}"));
        }
        let result = self.follow(&client, &temporal_id).await;
        // The worker is done: its pass is refused from here on.
        drop(pass);
        let result = match result {
            Ok(result) => result,
            Err(why) => return refused(why),
        };
        self.ending_of(result, &remote, &base).await
    }

    /// Follow the session on the cluster until it ends: its steps into the session, the
    /// mailbox out as signals, Stop as a cancellation.
    async fn follow(
        &self,
        client: &temporalio_client::Client,
        temporal_id: &str,
    ) -> std::result::Result<SessionResult, String> {
        let handle = client.get_workflow_handle::<HealerSession>(temporal_id.to_string());
        let result = handle.get_result(WorkflowGetResultOptions::default());
        tokio::pin!(result);
        // However the cluster behaves (a workflow task that keeps failing, no worker at all),
        // the control room waits no longer than the session may take, and a minute.
        let deadline = tokio::time::sleep(
            crate::cluster::session_flow::session_limit(&self.project.settings)
                + crate::cluster::session_flow::SESSION_HEARTBEAT_TIMEOUT
                + Duration::from_secs(60),
        );
        tokio::pin!(deadline);
        let mut seen = 0u64;
        let mut look = tokio::time::interval(LOOK_EVERY);
        let store = &self.projects.services.store;
        loop {
            tokio::select! {
                done = &mut result => {
                    return match done {
                        Ok(result) if result.ran_as == temporal_id => {
                            if let Some(outcome) = &result.outcome {
                                self.take_window(&outcome.tail, &mut seen, temporal_id);
                            }
                            Ok(result)
                        }
                        Ok(_) => Err("The cluster's answer was another session's, so it was not believed".to_string()),
                        Err(e) => {
                            // Anyone who can reach the cluster can fail a workflow with any
                            // words: they are logged, not stored.
                            tracing::warn!(session_id = self.session_id, "no result from the cluster: {e}");
                            // It is not left running there without anyone following it.
                            let _ = handle
                                .terminate(temporalio_client::WorkflowTerminateOptions::builder().reason("no readable result".to_string()).build())
                                .await;
                            Err("The cluster could not say how the session went: its workflow ended without a result Healer can read".to_string())
                        }
                    };
                }
                () = &mut deadline => {
                    let _ = handle
                        .terminate(temporalio_client::WorkflowTerminateOptions::builder().reason("past its time".to_string()).build())
                        .await;
                    return Err("The session on the cluster did not end within its time limits, so Healer ended it".to_string());
                }
                () = self.cancel.cancelled() => {
                    let _ = handle
                        .cancel(WorkflowCancelOptions::builder().reason("stopped in the control room".to_string()).build())
                        .await;
                    // Whatever happens on the worker, the control room waits no longer than this.
                    let waited = tokio::time::timeout(STOP_PATIENCE, &mut result).await;
                    if let Ok(Ok(result)) = waited {
                        if let Some(outcome) = &result.outcome {
                            self.take_window(&outcome.tail, &mut seen, temporal_id);
                        }
                        return Ok(result);
                    }
                    return Ok(SessionResult { ran_as: temporal_id.to_string(), outcome: None, lost: None, stopped: true });
                }
                _ = look.tick() => {
                    if let Ok(description) = handle.describe(WorkflowDescribeOptions::default()).await {
                        for pending in &description.raw().pending_activities {
                            if let Some(details) = &pending.heartbeat_details {
                                if let Some(window) = window_of(client, details) {
                                    self.take_window(&window, &mut seen, temporal_id);
                                }
                            }
                        }
                    }
                    // A read first: most looks find nothing, and taking is a write.
                    let waiting = store.steering_waiting(self.session_id).unwrap_or(false);
                    let messages = match waiting {
                        true => store.take_steering_messages(self.session_id, "cluster").unwrap_or_default(),
                        false => Vec::new(),
                    };
                    let text = crate::store::for_agent(&messages);
                    if !text.is_empty() {
                        if let Err(e) = handle.signal(HealerSession::tell, text, WorkflowSignalOptions::default()).await {
                            tracing::warn!(session_id = self.session_id, "a message did not reach the cluster: {e}");
                        }
                    }
                }
            }
        }
    }

    /// The steps of `window` not seen yet, as a local agent's steps are taken.
    fn take_window(&self, window: &StepWindow, seen: &mut u64, temporal_id: &str) {
        // Only this session's window, and only as much as a worker sends: anything else is not
        // believed.
        if window.for_session != temporal_id
            || window.steps.len() > MAX_WINDOW_STEPS
            || window.from > seen.saturating_add(MAX_WINDOW_STEPS as u64 * 64)
        {
            tracing::warn!(
                session_id = self.session_id,
                "a window of steps that is not this session's was ignored"
            );
            return;
        }
        if window.from > *seen {
            let _ = self.note(&format!(
                "({} steps on the worker came and went between two looks and are not shown.)",
                window.from - *seen
            ));
            *seen = window.from;
        }
        for (i, step) in window.steps.iter().enumerate() {
            let number = window.from.saturating_add(i as u64);
            if number < *seen {
                continue;
            }
            let mut step = step.clone();
            cut(&mut step.text, STEP_CHARS);
            if let Some(arguments) = step.arguments.as_mut() {
                cut(arguments, STEP_CHARS);
            }
            for small in [&mut step.tool, &mut step.call_id, &mut step.model]
                .into_iter()
                .flatten()
            {
                cut(small, 200);
            }
            if let Err(e) = self.take(AgentUpdate::Step(step)) {
                tracing::warn!(session_id = self.session_id, "a step was not stored: {e}");
            }
            *seen = number + 1;
        }
    }

    /// How a session on the cluster ended, for the session and its task.
    async fn ending_of(
        &self,
        result: SessionResult,
        remote: &super::push::Remote,
        base: &str,
    ) -> Result<Ending> {
        if result.stopped || self.cancel.is_cancelled() {
            if let Err(why) = self.bring_back(remote, base, None, None).await {
                tracing::warn!(session_id = self.session_id, "{why}");
            }
            return Ok(self.cancelled());
        }
        let Some(outcome) = result.outcome else {
            let why = result
                .lost
                .unwrap_or_else(|| "it ended without a word".to_string());
            self.note(&format!(
                "The worker running this session was lost ({why}); whatever it pushed stays on the branch, and the next session continues from there on any worker."
            ))?;
            if let Err(why) = self.bring_back(remote, base, None, None).await {
                tracing::warn!(session_id = self.session_id, "{why}");
            }
            return Ok(Ending::Lost {
                reason: format!("The worker running it was lost ({why})"),
            });
        };
        // The agent's own session is not kept: its transcripts were in the worker's scratch
        // folder, so a later session starts a new one with the message.
        let kept = match outcome.ending {
            WorkerEnding::Green { .. } => None,
            _ => outcome.kept.as_deref(),
        };
        let brought = self
            .bring_back(remote, base, outcome.pushed.as_deref(), kept)
            .await;
        // What the worker wrote is bounded before it is stored or reaches a repair prompt.
        let mut summary = self.scrub(&outcome.summary);
        cut(&mut summary, SUMMARY_CHARS);
        let failed = |scenario, class, status, evidence| {
            Ok(Ending::failed(
                scenario,
                class,
                status,
                summary.clone(),
                evidence,
            ))
        };
        match outcome.ending {
            WorkerEnding::Green { commit } => match brought {
                Ok(Some(here)) if here == commit => {
                    self.commit(self.project.settings.merge, None, &summary)
                        .await
                }
                Ok(_) => failed(
                    ProjectScenario::RuntimeError,
                    FailureClass::Environment,
                    SessionStatus::Failed,
                    Some(crate::failure::Evidence {
                        error_type: None,
                        message: "The work passed its checks on the worker, but the branch on \
                                  the remote is not the commit the worker checked, so nothing \
                                  was accepted"
                            .to_string(),
                        stack: None,
                    }),
                ),
                Err(why) => failed(
                    ProjectScenario::RuntimeError,
                    FailureClass::Environment,
                    SessionStatus::Failed,
                    Some(crate::failure::Evidence {
                        error_type: None,
                        message: format!("The work passed its checks on the worker, but {why}"),
                        stack: None,
                    }),
                ),
            },
            WorkerEnding::HandedBack => Ok(Ending::HandedBack { summary }),
            WorkerEnding::NoChange => Ok(Ending::NoChange { summary }),
            WorkerEnding::Unchecked => Ok(Ending::Unchecked),
            WorkerEnding::Stopped => Ok(self.cancelled()),
            WorkerEnding::NotRun => failed(
                ProjectScenario::RuntimeError,
                FailureClass::Environment,
                SessionStatus::Failed,
                None,
            ),
            WorkerEnding::AgentFailed {
                status,
                exit_code,
                program_failed,
            } => {
                let crashed = program_failed || exit_code.is_some_and(|c| c != 0);
                let (scenario, class) = match (status, crashed) {
                    (SessionStatus::TimedOut, _) => {
                        (ProjectScenario::RuntimeError, FailureClass::Timeout)
                    }
                    (_, true) => (ProjectScenario::RuntimeError, FailureClass::Unknown),
                    (_, false) => (ProjectScenario::SubtaskFailed, FailureClass::Logic),
                };
                Ok(Ending::Failed {
                    scenario,
                    class,
                    status,
                    exit_code,
                    summary,
                    evidence: None,
                })
            }
            WorkerEnding::CheckFailed {
                init,
                could_not_run,
                mut evidence,
            } => {
                cut(&mut evidence.message, SUMMARY_CHARS);
                if let Some(stack) = evidence.stack.as_mut() {
                    cut(stack, STEP_CHARS);
                }
                let scenario = if init {
                    ProjectScenario::of_init_output(evidence.stack.as_deref().unwrap_or_default())
                } else {
                    ProjectScenario::VerificationFailed
                };
                let class = if could_not_run {
                    FailureClass::Environment
                } else if init {
                    scenario.class()
                } else {
                    FailureClass::Logic
                };
                failed(scenario, class, SessionStatus::Failed, Some(evidence))
            }
        }
    }

    /// Changes in the task's worktree here that Healer did not leave there (someone edited the
    /// work opened here) are kept as a snapshot before the worker's branch is brought in over
    /// them.
    async fn keep_changes_here(&self) -> std::result::Result<(), String> {
        let (store, project, path, task) = (
            self.projects.services.store.clone(),
            self.project.id,
            self.worktree.clone(),
            self.task.id.clone(),
        );
        let kept = tokio::task::spawn_blocking(move || {
            if !super::snapshot::changed_since_remembered(&path)? {
                return Ok(None);
            }
            let reason = "changes in the task's worktree here, kept before the branch a worker pushed was brought in";
            super::snapshot::take(&store, project, &path, &task, reason).map(Some)
        })
        .await
        .map_err(|e| format!("the worktree's changes could not be read: {e}"))?
        .map_err(|e| format!("the worktree's changes could not be kept, so the branch was left as it is: {e}"))?;
        if let Some(snap) = kept {
            let _ = self.note(&format!(
                "The task's worktree here had changes of someone's: they are kept as snapshot {} before the worker's branch was brought in.",
                snap.seq
            ));
        }
        Ok(())
    }

    /// The task's worktree here, at the branch as the remote has it: review, accepting and the
    /// healer service work on it as on any session's. The person's own checkout is not
    /// touched. `Ok(Some(commit))`: the worktree stands at it; `Ok(None)`: the remote has no
    /// such branch; `Err`: why it could not be brought in.
    async fn bring_back(
        &self,
        remote: &super::push::Remote,
        base: &str,
        pushed: Option<&str>,
        kept: Option<&str>,
    ) -> std::result::Result<Option<String>, String> {
        let (repo, main, task, path) = (
            self.repo.clone(),
            self.project.settings.main_branch.clone(),
            self.task.id.clone(),
            self.worktree.clone(),
        );
        let prepared = tokio::task::spawn_blocking(move || {
            super::worktree::prepare(&repo, &main, &task, &path)
        })
        .await
        .map_err(|e| format!("the task's worktree could not be made: {e}"))?;
        prepared.map_err(|e| format!("the task's worktree could not be made: {e}"))?;
        let branch = super::worktree::branch_name(&self.task.id);
        // What the remote has is what is brought in (from where the worker pushed); the
        // worker's word is only compared.
        let Some(fetched) = fetch_into(&self.worktree, &remote.url, &branch).await else {
            return Ok(None);
        };
        if let Some(said) = pushed.filter(|said| *said != fetched) {
            let _ = self.note(&format!(
                "The worker said it pushed {}, but the remote has {}: what the remote has is used.",
                said.get(..7).unwrap_or("something else"),
                &fetched[..7]
            ));
        }
        if fetched == base {
            return Ok(Some(fetched));
        }
        // The worker's commit of what the agent left unchecked is, here, what a session here
        // leaves: changes not committed on top of the branch, for the healer service's spells
        // (a rewind of them is carried to the remote) and the review.
        let unchecked = match kept.filter(|k| *k == fetched) {
            Some(_) => only_parent_of(&self.worktree, &fetched).await,
            None => None,
        };
        let at = unchecked.as_deref().unwrap_or(&fetched);
        // Commits of the branch here that the pushed one lacks are not thrown away.
        if !is_ancestor(&self.worktree, "HEAD", at).await {
            return Err(format!(
                "the branch {branch} here has commits that the one on the remote lacks, so it was left as it is"
            ));
        }
        self.keep_changes_here().await?;
        reset_to(&self.worktree, &fetched).await?;
        if let Some(parent) = &unchecked {
            unpack_to(&self.worktree, parent).await?;
            let path = self.worktree.clone();
            let remembered =
                tokio::task::spawn_blocking(move || super::snapshot::remember_files(&path)).await;
            if !matches!(remembered, Ok(Ok(()))) {
                tracing::warn!(
                    session_id = self.session_id,
                    "the worktree's files were not noted"
                );
            }
            let _ = self.note(&format!(
                "The branch {branch} as the worker pushed it is in the task's worktree here: what the agent left unchecked ({}) as changes not yet committed, on top of {}.",
                &fetched[..7],
                &parent[..7]
            ));
        } else {
            let _ = self.note(&format!(
                "The branch {branch} as the worker pushed it ({}) is in the task's worktree here.",
                &fetched[..7]
            ));
        }
        Ok(Some(fetched))
    }
}

/// The step window a heartbeat carried, opened (the client's codec has unsealed it already).
fn window_of(
    client: &temporalio_client::Client,
    details: &temporalio_common::protos::temporal::api::common::v1::Payloads,
) -> Option<StepWindow> {
    use temporalio_client::NamespacedClient;
    use temporalio_common::data_converters::{DecodablePayloads, SerializationContextData};
    DecodablePayloads::new(
        details.payloads.clone(),
        client.data_converter().payload_converter().clone(),
        SerializationContextData::None,
    )
    .deserialize::<StepWindow>()
    .ok()
}

impl super::runner::Projects {
    /// The address the model gateway listens on for workers, opened on first use; `Err` is a
    /// sentence for the session when workers cannot reach it.
    pub(super) async fn worker_gateway(&self) -> std::result::Result<std::net::SocketAddr, String> {
        let store = &self.services.store;
        let access =
            crate::cluster::gateway_access::worker_gateway(store).map_err(|e| e.to_string())?;
        let Some(listen) = access.listen else {
            return Err("The session could not go to the cluster: Healer's model gateway is not open to workers. In Settings → More computers, give the address workers reach this computer on, and a token for each worker".to_string());
        };
        let gateway = self.gateway().await.map_err(|e| e.to_string())?;
        let services = self.services.clone();
        let cancel = self.shutdown.child_token();
        self.worker_gateway
            .get_or_try_init(|| async move {
                let check: crate::gateway::WorkerCheck = std::sync::Arc::new(move |token: &str| {
                    crate::cluster::gateway_access::knows_worker(&services.store, token)
                });
                gateway.open_to_workers(&listen, check, cancel).await
            })
            .await
            .copied()
            .map_err(|e| format!("The session could not go to the cluster: {e}"))
    }
}

/// Why a project's sessions cannot run on the cluster as `input` says they should, if they
/// cannot: no connection, no remote for workers, or an agent that does not run on workers.
pub fn cluster_problem(
    store: &crate::store::Store,
    input: &super::ProjectInput,
) -> Option<crate::workflow::FieldProblem> {
    let settings = &input.settings;
    if settings.runs_on == RunsOn::Local {
        return None;
    }
    let said = |message: &str| {
        Some(crate::workflow::FieldProblem {
            field: "runs_on".to_string(),
            message: format!("Its tasks cannot run on the cluster's workers: {message}."),
        })
    };
    let connected = store
        .setting::<crate::cluster::ClusterSettings>(crate::cluster::CLUSTER_SETTINGS)
        .ok()
        .flatten()
        .is_some();
    if !connected {
        return said(
            "this Healer is not connected to one. Connect it first in Settings → More computers",
        );
    }
    if settings.agent == crate::session::AgentKind::Builtin {
        return said("Healer's own agent works only on this computer. Choose Claude Code, Codex, opencode or Gemini CLI");
    }
    let path = std::path::Path::new(input.path.trim());
    match super::push::remote_for(path, &settings.main_branch) {
        Ok(Some(_)) => None,
        _ => said("the repository has no remote (a server such as GitHub, GitLab or your team's) for workers to fetch it from and push the task's branch to"),
    }
}

/// `text` cut to at most `chars` characters.
fn cut(text: &mut String, chars: usize) {
    if let Some((at, _)) = text.char_indices().nth(chars) {
        text.truncate(at);
    }
}

/// A session on the cluster whose control room died while it ran: its workflow is cancelled
/// (in the background, once the engine runs), so that the worker ends the agent and pushes what
/// it did; the session itself was settled as interrupted with its task open again.
pub(crate) fn cancel_orphaned(services: &crate::services::Services, session_id: i64) {
    let Ok(Some(temporal_id)) = services.store.session_cluster_id(session_id) else {
        return;
    };
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return;
    };
    let (store, keep, instance) = (
        services.store.clone(),
        services.llm.keep(),
        services.instance().to_string(),
    );
    runtime.spawn(async move {
        match crate::cluster::cancel_session(&store, &keep, &instance, &temporal_id).await {
            Ok(()) => tracing::info!(session_id, "the session left on the cluster was cancelled"),
            Err(e) => tracing::warn!(
                session_id,
                "the session left on the cluster was not cancelled: {e}"
            ),
        }
    });
}
