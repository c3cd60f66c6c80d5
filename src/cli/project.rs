//! `healer project …`: git repositories with tasks that coding agents work on. Reading commands
//! open the store and the repository; adding, removing and running ask the engine. A task is
//! added straight to the repository's task list (any process may; the engine's watcher sees it).

use std::path::PathBuf;
use std::time::Duration;

use clap::Subcommand;
use healer::client::{Request, Response};
use healer::project::{self, AddProject, TaskEdit};
use healer::session::AgentKind;
use healer::store::{now, MergePolicy, Store, VerifyCommand};
use healer::tasklist::{self, TaskStatus};
use healer::{Error, Paths, Result};

use crate::input::confirm;
use crate::print::print_json;
use crate::reach::{act, open, unexpected};

/// How long `project add` waits for a running engine (detection asks the agents' versions).
const ADD_WAIT: Duration = Duration::from_secs(60);
/// How long `project run --wait` waits for a running engine: the agent's own limit bounds it.
pub(crate) const RUN_WAIT: Duration = Duration::from_secs(24 * 3600);

#[derive(Subcommand)]
pub enum ProjectCommand {
    /// Add a git repository as a project; what is not named is detected
    Add {
        /// The repository's folder
        path: PathBuf,
        #[arg(long)]
        name: Option<String>,
        /// builtin, claude-code, codex, opencode or gemini-cli
        #[arg(long)]
        agent: Option<String>,
        /// For an agent CLI: a model provider set up in Healer (its key goes to the
        /// agent only); without it the agent uses its own login
        #[arg(long)]
        provider: Option<String>,
        /// For an agent CLI: the model's name (default: the agent's own)
        #[arg(long)]
        model: Option<String>,
        /// For an agent CLI: the agent's program, when it is not on PATH
        #[arg(long)]
        program: Option<PathBuf>,
        /// A verification command, NAME=COMMAND; repeatable (replaces the detected ones)
        #[arg(long = "verify", value_name = "NAME=CMD")]
        verify: Vec<String>,
        /// A command run in each new worktree before the agent
        #[arg(long = "init", value_name = "CMD")]
        init: Option<String>,
        /// Leave green work on its branch instead of fast-forwarding the main branch
        #[arg(long)]
        leave_branch: bool,
        /// Make the folder a git repository (git init and a first commit) if it is not one
        #[arg(long)]
        git_init: bool,
        /// With no check found and no --verify: commit an agent's work without checks
        #[arg(long)]
        no_checks: bool,
        /// What the agent may do without asking you: risky (ask before anything risky, the
        /// default), every (ask before every command) or never (never ask)
        #[arg(long, value_name = "risky|every|never")]
        ask: Option<String>,
        /// A command the agent may run without asking (as it starts: `npm test`); repeatable
        #[arg(long = "allow", value_name = "CMD")]
        allow: Vec<String>,
        #[arg(long)]
        json: bool,
    },
    /// Projects with their tasks per column
    List {
        #[arg(long)]
        json: bool,
    },
    /// A project: its repository, settings, board problems and recent sessions
    Show {
        name: String,
        #[arg(long)]
        json: bool,
    },
    /// Where the project's sessions run: local (this computer) or cluster (the workers of
    /// the connected Temporal cluster, which fetch the repository from its remote and push the
    /// task's branch); refused without a connection or a remote
    RunsOn {
        name: String,
        /// local or cluster
        place: String,
        /// The cluster's queue (default: the connection's)
        #[arg(long)]
        queue: Option<String>,
    },
    /// Forget a project (its repository and branches are not touched)
    Remove {
        name: String,
        #[arg(long)]
        yes: bool,
        #[arg(long)]
        json: bool,
    },
    /// The project's tasks, column by column, and what is wrong in its task list
    Tasks {
        name: String,
        #[arg(long)]
        json: bool,
    },
    /// Add a task to a project
    Task {
        #[command(subcommand)]
        command: TaskCommand,
    },
    /// Run the agent on the next ready task (or --task ID)
    Run {
        name: String,
        #[arg(long)]
        task: Option<String>,
        /// Wait for the session to end; exit 1 unless the task was closed
        #[arg(long)]
        wait: bool,
        #[arg(long)]
        json: bool,
    },
    /// Accept a task's work into the main branch (the main branch brought in and the checks
    /// run again first when it moved); exit 1 unless it was accepted
    Accept {
        name: String,
        #[arg(long)]
        task: String,
        /// ff (fast-forward), merge (a merge commit) or squash (one commit); default: the
        /// project's setting
        #[arg(long)]
        how: Option<String>,
        /// On a conflict with the main branch: start the agent on resolving it (then accept)
        #[arg(long)]
        resolve: bool,
        #[arg(long)]
        json: bool,
    },
    /// Push a task's branch to the repository's remote (with your own git sign-in) and open a
    /// pull request for it on GitHub, a merge request on GitLab, or a pull request on Forgejo
    Pr {
        name: String,
        #[arg(long)]
        task: String,
        /// The host's API address, for a self-hosted host whose address does not say which
        /// kind it is (https://git.example.com/api/v4 for GitLab, …/api/v1 for Forgejo)
        #[arg(long)]
        api_url: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Comment on lines of a task's change; comments wait until you send them to the agent
    /// (`healer project comments NAME --task ID --send`)
    Comment {
        name: String,
        #[arg(long)]
        task: String,
        /// The file and line, or lines: greet.py:12 or greet.py:12-15
        #[arg(long)]
        at: String,
        /// What the agent should change there
        text: String,
        #[arg(long)]
        json: bool,
    },
    /// A task's comments and whether the agent answered them; `--send` sends those that wait as
    /// one message (into its running session, or a session that picks the task up again)
    Comments {
        name: String,
        #[arg(long)]
        task: String,
        #[arg(long)]
        send: bool,
        #[arg(long)]
        json: bool,
    },
    /// Keep the token Healer opens this project's pull requests with, read from standard input
    /// (kept in your secrets, never in Healer's database)
    Token { name: String },
    /// Discard a task's work: pinned as a snapshot first (restorable), its branch and folder
    /// removed, the task open again
    Discard {
        name: String,
        #[arg(long)]
        task: String,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand)]
pub enum TaskCommand {
    /// Add a task to the project's task list
    Add {
        /// The project's name
        name: String,
        #[arg(long)]
        title: String,
        #[arg(long, default_value = "")]
        description: String,
        /// What must be true when it is done; repeatable
        #[arg(long)]
        acceptance: Vec<String>,
        /// 0 (most urgent) to 9; default 2
        #[arg(long)]
        priority: Option<i64>,
        /// The id of a task this one waits for; repeatable
        #[arg(long = "dep")]
        deps: Vec<String>,
        #[arg(long)]
        json: bool,
    },
}

pub async fn run(command: ProjectCommand, paths: &Paths) -> Result<bool> {
    match command {
        ProjectCommand::Add {
            path,
            name,
            agent,
            provider,
            model,
            program,
            verify,
            init,
            leave_branch,
            git_init,
            no_checks,
            ask,
            allow,
            json,
        } => {
            let ask = ask
                .map(|a| match a.trim() {
                    "risky" => Ok(healer::approval::Preset::AskRisky),
                    "every" => Ok(healer::approval::Preset::AskEvery),
                    "never" => Ok(healer::approval::Preset::NeverAsk),
                    other => Err(Error::InvalidInput(format!(
                        "--ask {other:?}: choose risky, every or never"
                    ))),
                })
                .transpose()?;
            let agent = agent
                .map(|a| {
                    AgentKind::parse(a.trim()).ok_or_else(|| {
                        Error::InvalidInput(format!(
                            "--agent {a:?}: choose builtin, claude-code, codex, opencode or gemini-cli"
                        ))
                    })
                })
                .transpose()?;
            let verify = if verify.is_empty() {
                None
            } else {
                Some(parse_verify(&verify)?)
            };
            let absolute = std::path::absolute(&path).unwrap_or(path);
            let add = AddProject {
                path: absolute.display().to_string(),
                name,
                agent,
                verify,
                init_script: init,
                merge: leave_branch.then_some(MergePolicy::LeaveBranch),
                provider,
                model,
                program: program
                    .map(|p| std::path::absolute(&p).unwrap_or(p).display().to_string()),
                git_init,
                no_checks,
                ask,
                allow,
            };
            let request = Request::AddProject { add: Box::new(add) };
            match act(paths, request, ADD_WAIT).await? {
                Response::Project { project } if json => print_json(&project),
                Response::Project { project } => {
                    println!("Added \u{201c}{}\u{201d} ({})", project.name, project.path);
                    print_settings(&project.settings);
                    Ok(true)
                }
                _ => unexpected(),
            }
        }
        ProjectCommand::List { json } => {
            let store = open(paths)?;
            let list: Vec<_> = store
                .list_projects()?
                .into_iter()
                .map(|p| project::summary(&store, p))
                .collect::<Result<_>>()?;
            if json {
                return print_json(&list);
            }
            if list.is_empty() {
                println!("No projects yet. Add one with: healer project add PATH");
            }
            for s in &list {
                let c = &s.columns;
                println!(
                    "{:<20} open {:<3} in progress {:<3} blocked {:<3} closed {:<3} {}{}",
                    s.project.name,
                    c.open,
                    c.in_progress,
                    c.blocked,
                    c.closed,
                    s.project.path,
                    if s.problems > 0 {
                        format!("  ({} problem(s) in the task list)", s.problems)
                    } else {
                        String::new()
                    }
                );
            }
            Ok(true)
        }
        ProjectCommand::Show { name, json } => {
            let store = open(paths)?;
            let detail = project::detail(&store, store.project_by_name(&name)?)?;
            if json {
                return print_json(&detail);
            }
            let p = &detail.project;
            println!("{} — {}", p.name, p.path);
            println!("  {}", detail.repo.message);
            for note in &detail.repo.notes {
                println!("  note: {note}");
            }
            print_settings(&p.settings);
            print_problems(&detail.problems);
            if !detail.sessions.is_empty() {
                println!("Sessions:");
                for s in &detail.sessions {
                    println!(
                        "  #{:<5} {:<11} {}  {}",
                        s.id,
                        status_word(s.status),
                        s.task_title,
                        s.summary
                    );
                }
            }
            Ok(true)
        }
        ProjectCommand::Remove { name, yes, json } => {
            if !yes {
                confirm(&format!("Forget the project \u{201c}{name}\u{201d}? Its repository is not touched. [y/N] "))?;
            }
            match act(
                paths,
                Request::RemoveProject {
                    project: name.clone(),
                },
                ADD_WAIT,
            )
            .await?
            {
                Response::Done if json => print_json(&serde_json::json!({"removed": name})),
                Response::Done => {
                    println!("Removed \u{201c}{name}\u{201d}; its repository is as it was");
                    Ok(true)
                }
                _ => unexpected(),
            }
        }
        ProjectCommand::Tasks { name, json } => {
            let store = open(paths)?;
            let detail = project::detail(&store, store.project_by_name(&name)?)?;
            if json {
                return print_json(
                    &serde_json::json!({"tasks": detail.tasks, "problems": detail.problems, "next": detail.next}),
                );
            }
            for status in TaskStatus::ALL {
                let column: Vec<_> = detail
                    .tasks
                    .iter()
                    .filter(|t| t.task.status == status)
                    .collect();
                println!("{} ({})", status.as_str().replace('_', " "), column.len());
                for t in column {
                    let mark = if detail.next.as_deref() == Some(t.task.id.as_str()) {
                        "→"
                    } else {
                        " "
                    };
                    let mut line = format!(
                        "  {mark} {:<8} p{} {}",
                        t.task.id, t.task.priority, t.task.title
                    );
                    if let Some(why) = &t.waiting {
                        line.push_str(&format!("  ({why})"));
                    }
                    if let Some(reason) = &t.task.closed_reason {
                        line.push_str(&format!("  — {reason}"));
                    } else if let Some(note) = &t.task.note {
                        line.push_str(&format!("  — {note}"));
                    }
                    println!("{line}");
                }
            }
            print_problems(&detail.problems);
            Ok(true)
        }
        ProjectCommand::Task { command } => add_task(command, paths),
        ProjectCommand::RunsOn { name, place, queue } => runs_on(paths, &name, &place, queue),
        ProjectCommand::Run {
            name,
            task,
            wait,
            json,
        } => {
            let request = Request::RunProject {
                project: name,
                task,
                wait,
            };
            match act(paths, request, RUN_WAIT).await? {
                Response::Session { session } if json => {
                    print_json(&session)?;
                    Ok(!wait || task_closed(paths, &session))
                }
                Response::Session { session } => {
                    let ended = session.status != healer::session::SessionStatus::Running;
                    if ended {
                        println!(
                            "Session {} on \u{201c}{}\u{201d}: {}",
                            session.id, session.task_title, session.summary
                        );
                        if wait {
                            crate::checkpoint::answer_healer_question(paths, &session).await?;
                        }
                    } else {
                        println!(
                            "Session {} started on \u{201c}{}\u{201d}; follow it with: healer session show {}",
                            session.id, session.task_title, session.id
                        );
                    }
                    Ok(!ended || task_closed(paths, &session))
                }
                _ => unexpected(),
            }
        }
        finishing @ (ProjectCommand::Accept { .. }
        | ProjectCommand::Pr { .. }
        | ProjectCommand::Comment { .. }
        | ProjectCommand::Comments { .. }
        | ProjectCommand::Token { .. }
        | ProjectCommand::Discard { .. }) => super::finishing::run(finishing, paths).await,
    }
}

/// Whether the session's task was closed (its work done and committed): `--wait` exits 1
/// otherwise — a session that ended without a change, or handed back to Healer, did not do it.
fn task_closed(paths: &Paths, session: &healer::store::SessionRecord) -> bool {
    if session.status != healer::session::SessionStatus::Finished {
        return false;
    }
    let Ok(project) = open(paths).and_then(|store| store.project(session.project_id)) else {
        return false;
    };
    tasklist::read_file(&PathBuf::from(&project.path).join(tasklist::TASKS_FILE))
        .ok()
        .and_then(|file| file.task(&session.task_id).map(|t| t.status))
        == Some(TaskStatus::Closed)
}

fn add_task(command: TaskCommand, paths: &Paths) -> Result<bool> {
    let TaskCommand::Add {
        name,
        title,
        description,
        acceptance,
        priority,
        deps,
        json,
    } = command;
    let store: Store = open(paths)?;
    let project = store.project_by_name(&name)?;
    let edit = TaskEdit {
        title,
        description,
        acceptance,
        priority,
        labels: vec![],
        deps,
    };
    let task = tasklist::modify_settled(&PathBuf::from(&project.path), |file| {
        file.add(&edit, &now())
    })?;
    if json {
        return print_json(&task);
    }
    println!(
        "Added task {} to \u{201c}{}\u{201d}: {}",
        task.id, project.name, task.title
    );
    Ok(true)
}

fn parse_verify(pairs: &[String]) -> Result<Vec<VerifyCommand>> {
    pairs
        .iter()
        .map(|pair| {
            let (name, command) = pair.split_once('=').ok_or_else(|| {
                Error::InvalidInput(format!(
                    "--verify {pair:?}: write it as NAME=COMMAND, e.g. test='npm test'"
                ))
            })?;
            Ok(VerifyCommand {
                name: name.trim().to_string(),
                command: command.trim().to_string(),
            })
        })
        .collect()
}

fn print_settings(s: &healer::store::ProjectSettings) {
    println!(
        "  agent: {}  branch: {}  then: {}",
        healer::agent::agent_name(s.agent),
        s.main_branch,
        match s.merge {
            MergePolicy::FastForward => "fast-forward the main branch",
            MergePolicy::LeaveBranch => "leave the branch for review",
        }
    );
    if s.agent != healer::session::AgentKind::Builtin {
        let model = s.model.as_deref().unwrap_or("its default");
        match &s.agent_provider {
            Some(p) => {
                println!("  model: {model}, from the provider \u{201c}{p}\u{201d} set up in Healer")
            }
            None => println!("  model: {model}, on the agent's own login"),
        }
    }
    if s.verify.is_empty() {
        println!("  verification: none");
    }
    for v in &s.verify {
        println!("  verify {}: {}", v.name, v.command);
    }
    if let Some(init) = &s.init_script {
        println!("  init script: {init}");
    }
    let a = &s.approvals;
    match a.preset {
        healer::approval::Preset::NeverAsk => {
            println!("  asks you: never (the agent may run anything on this computer)")
        }
        preset => println!(
            "  asks you: before {} (denied after {} without an answer)",
            if preset == healer::approval::Preset::AskEvery {
                "every command"
            } else {
                "anything risky"
            },
            healer::approval::limit_words(a.time_limit_secs)
        ),
    }
    if !a.allowed.is_empty() {
        println!("  runs without asking: {}", a.allowed.join(", "));
    }
}

fn print_problems(problems: &[healer::tasklist::Problem]) {
    if problems.is_empty() {
        return;
    }
    println!("Problems in {}:", tasklist::TASKS_FILE);
    for p in problems {
        println!("  {}", p.message);
    }
}

pub fn status_word(status: healer::session::SessionStatus) -> &'static str {
    use healer::session::SessionStatus as S;
    match status {
        S::Running => "running",
        S::Finished => "finished",
        S::Failed => "failed",
        S::TimedOut => "timed out",
        S::Stopped => "stopped",
        S::Interrupted => "interrupted",
    }
}

/// `healer project runs-on NAME local|cluster [--queue Q]`.
fn runs_on(paths: &Paths, name: &str, place: &str, queue: Option<String>) -> Result<bool> {
    let store = open(paths)?;
    let project = store.project_by_name(name)?;
    let mut settings = project.settings.clone();
    settings.runs_on = super::workflow::parse_place(place, queue)?;
    let input = healer::project::ProjectInput {
        path: project.path.clone(),
        name: project.name.clone(),
        settings: settings.clone(),
    };
    // Refused before anything is saved.
    if let Some(problem) = healer::project::cluster_problem(&store, &input) {
        return Err(healer::Error::InvalidInput(problem.message));
    }
    store.update_project(project.id, &project.name, &settings)?;
    match &settings.runs_on {
        healer::store::RunsOn::Local => {
            println!(
                "The sessions of \u{201c}{}\u{201d} run on this computer.",
                project.name
            )
        }
        healer::store::RunsOn::Cluster { queue } if queue.is_empty() => println!(
            "The sessions of \u{201c}{}\u{201d} run on the cluster's workers.",
            project.name
        ),
        healer::store::RunsOn::Cluster { queue } => println!(
            "The sessions of \u{201c}{}\u{201d} run on the cluster's workers (queue {queue}).",
            project.name
        ),
    }
    Ok(true)
}
