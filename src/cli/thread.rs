//! `healer thread …`: model threads (a workflow's auto-fix threads, the planner's chat, the
//! built-in agent's work), step by step, and ATIF export. `healer task …` was the old name; a
//! project's tasks are `healer project tasks`.

use std::path::PathBuf;

use clap::Subcommand;
use healer::llm;
use healer::{Error, Paths, Result};

use crate::print::{print_json, print_message};
use crate::reach::open;

#[derive(Subcommand)]
pub enum ThreadCommand {
    /// The newest threads (with --workflow: that workflow's auto-fix threads)
    List {
        #[arg(long, default_value_t = 20)]
        limit: u32,
        /// Only this workflow's auto-fix threads
        #[arg(long, value_name = "NAME")]
        workflow: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// A thread, step by step
    Show {
        id: i64,
        #[arg(long)]
        json: bool,
    },
    /// Write the thread as an ATIF-v1.7 trajectory (to standard output, or --out)
    ExportAtif {
        id: i64,
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
}

pub fn run(command: ThreadCommand, paths: &Paths) -> Result<bool> {
    let store = open(paths)?;
    match command {
        ThreadCommand::List {
            limit,
            workflow: Some(name),
            json,
        } => crate::heal::workflow_tasks(paths, &name, limit, json),
        ThreadCommand::List { limit, json, .. } => {
            let tasks = store.list_tasks(limit)?;
            if json {
                return print_json(&tasks);
            }
            if tasks.is_empty() {
                println!("No threads yet.");
            }
            for t in &tasks {
                println!(
                    "#{:<5} {:<11} {:<11} {}  {}",
                    t.id,
                    t.kind.as_str(),
                    t.status.as_str(),
                    t.title,
                    t.summary
                );
            }
            Ok(true)
        }
        ThreadCommand::Show { id, json } => {
            let thread = store.thread(id)?;
            if json {
                return print_json(&thread);
            }
            println!(
                "Thread {} ({}, {}): {}",
                thread.task.id,
                thread.task.kind.as_str(),
                thread.task.status.as_str(),
                thread.task.title
            );
            for m in &thread.messages {
                print_message(m);
            }
            if !thread.task.summary.is_empty() {
                println!("  → {}", thread.task.summary);
            }
            Ok(true)
        }
        ThreadCommand::ExportAtif { id, out } => {
            let text = llm::atif::export(&store, id)?;
            match out {
                Some(path) => {
                    std::fs::write(&path, format!("{text}\n"))
                        .map_err(|e| Error::io(format!("cannot write {}", path.display()), e))?;
                    eprintln!("Wrote the trajectory of thread {id} to {}", path.display());
                }
                None => println!("{text}"),
            }
            Ok(true)
        }
    }
}
