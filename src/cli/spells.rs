//! The healer service's CLI: `healer scan` (stuck tasks), `healer heals` (its invocations,
//! with outcome and spells), `healer snapshot list|restore`.

use std::time::Duration;

use clap::Subcommand;
use healer::client::{Request, Response};
use healer::spells::{self, StuckKind};
use healer::{Paths, Result};

use crate::print::print_json;
use crate::reach::{act, open, unexpected};

#[derive(Subcommand)]
pub enum SnapshotCommand {
    /// Snapshots Healer pinned before it rewound a task's worktree, newest first
    List {
        /// Only this project's
        #[arg(long)]
        project: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Put a snapshot back into its task's worktree (what is there now is pinned first)
    Restore {
        id: i64,
        #[arg(long)]
        json: bool,
    },
}

/// `healer scan`: tasks in progress for too long, and failures that keep coming back.
pub fn scan(paths: &Paths, json: bool) -> Result<bool> {
    let store = open(paths)?;
    let report = spells::scan(&store, chrono::Utc::now())?;
    if json {
        return print_json(&report);
    }
    if report.tasks.is_empty() {
        println!("No task looks stuck.");
    }
    for t in &report.tasks {
        let what = match t.kind {
            StuckKind::TooLong => "in progress too long",
            StuckKind::Repeated => "failing the same way",
            StuckKind::Unattended => "in progress, nobody on it",
        };
        println!(
            "{} / {} ({}): {what} — {}",
            t.project, t.task_id, t.title, t.detail
        );
    }
    Ok(true)
}

/// `healer heals`: the healer service's invocations, newest first.
pub fn heals(paths: &Paths, project: Option<String>, limit: u32, json: bool) -> Result<bool> {
    let store = open(paths)?;
    let project_id = match project {
        Some(name) => Some(store.project_by_name(&name)?.id),
        None => None,
    };
    let invocations = store.invocations(project_id, None, limit)?;
    if json {
        return print_json(&invocations);
    }
    if invocations.is_empty() {
        println!("The healer service has not stepped in yet.");
    }
    for inv in &invocations {
        let spells: Vec<String> = inv
            .spells
            .iter()
            .map(|s| format!("{} {}", s.spell, if s.success { "✓" } else { "✗" }))
            .collect();
        println!(
            "#{} task {} {} → {}{}: {}",
            inv.id,
            inv.task_id,
            inv.scenario,
            inv.status.as_str(),
            if spells.is_empty() {
                String::new()
            } else {
                format!(" [{}]", spells.join(", "))
            },
            inv.reason
        );
    }
    Ok(true)
}

pub async fn snapshot(command: SnapshotCommand, paths: &Paths) -> Result<bool> {
    match command {
        SnapshotCommand::List { project, json } => {
            let store = open(paths)?;
            let project_id = match project {
                Some(name) => Some(store.project_by_name(&name)?.id),
                None => None,
            };
            let snaps = store.snapshots(project_id, None)?;
            if json {
                return print_json(&snaps);
            }
            if snaps.is_empty() {
                println!("No snapshots yet.");
            }
            for s in &snaps {
                println!(
                    "{} task {} {} ({}) {}{}",
                    s.id,
                    s.task_id,
                    s.ref_name,
                    s.commit_id.get(..7).unwrap_or(&s.commit_id),
                    s.reason,
                    s.restored_at
                        .as_ref()
                        .map(|at| format!(" — restored {at}"))
                        .unwrap_or_default()
                );
            }
            Ok(true)
        }
        SnapshotCommand::Restore { id, json } => {
            match act(
                paths,
                Request::RestoreSnapshot { id },
                Duration::from_secs(120),
            )
            .await?
            {
                Response::Said { text } if json => {
                    print_json(&serde_json::json!({"restored": id, "said": text}))
                }
                Response::Said { text } => {
                    println!("{text}");
                    Ok(true)
                }
                _ => unexpected(),
            }
        }
    }
}
