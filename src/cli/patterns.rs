//! `healer patterns list|show`: the healing memory — error signatures and the fixes tried.

use clap::Subcommand;
use healer::{Paths, Result};

use crate::print::print_json;
use crate::reach::open;

#[derive(Subcommand)]
pub enum PatternsCommand {
    /// Error signatures, most recently seen first
    List {
        #[arg(long, default_value_t = 50)]
        limit: u32,
        #[arg(long)]
        json: bool,
    },
    /// One signature with every fix tried for it (their diffs)
    Show {
        signature: String,
        #[arg(long)]
        json: bool,
    },
}

pub fn run(command: PatternsCommand, paths: &Paths) -> Result<bool> {
    let store = open(paths)?;
    match command {
        PatternsCommand::List { limit, json } => {
            let patterns = store.patterns(limit)?;
            if json {
                return print_json(&patterns);
            }
            if patterns.is_empty() {
                println!("No error seen yet.");
            }
            for p in &patterns {
                let first = p.normalized.lines().next().unwrap_or_default();
                println!(
                    "{}  seen {}×, last {}  fixes {} ({} worked)\n    {first}",
                    p.signature, p.count, p.last_seen, p.fixes, p.successes
                );
            }
            Ok(true)
        }
        PatternsCommand::Show { signature, json } => {
            let detail = store.pattern(&signature)?;
            if json {
                return print_json(&detail);
            }
            let p = &detail.pattern;
            println!(
                "Signature {} — seen {} times, first {}, last {}",
                p.signature, p.count, p.first_seen, p.last_seen
            );
            println!("{}\n", p.normalized);
            if detail.fixes.is_empty() {
                println!("No fix tried yet.");
            }
            for f in &detail.fixes {
                println!(
                    "Fix {} ({}) in {} by task {}: {} — {}",
                    f.id,
                    f.created_at,
                    f.workflow_title.as_deref().unwrap_or("a deleted workflow"),
                    f.task_id.map_or_else(|| "?".to_string(), |t| t.to_string()),
                    f.description,
                    f.result.as_str()
                );
                println!("{}", f.diff.trim_end());
            }
            Ok(true)
        }
    }
}
