//! `healer checkpoint list|decide`: the person's decisions from the command line. Without an
//! option, `decide` shows the checkpoint and asks (Enter takes the recommended option); it reads
//! lines, so it works when standard input is not a terminal, and exits 2 when it is closed.

use std::io::{BufRead, IsTerminal, Write};

use clap::Subcommand;
use healer::checkpoint::{Checkpoint, CheckpointAction};
use healer::client::{Request, Response};
use healer::{Error, Paths, Result};

use crate::print::print_json;
use crate::reach::{act, open, unexpected};

/// How long deciding waits for a running engine.
/// Long enough for "Try another package name…", which installs before it answers.
const DECIDE_WAIT: std::time::Duration = std::time::Duration::from_secs(360);

#[derive(Subcommand)]
pub enum CheckpointCommand {
    /// Pending checkpoints (oldest first), then past decisions
    List {
        #[arg(long)]
        json: bool,
    },
    /// Decide a checkpoint; without OPTION, show it and ask
    Decide {
        id: i64,
        /// The option's number (as listed)
        option: Option<u32>,
        /// Why (kept with the decision)
        #[arg(long)]
        notes: Option<String>,
        #[arg(long)]
        json: bool,
    },
}

pub async fn run(command: CheckpointCommand, paths: &Paths) -> Result<bool> {
    match command {
        CheckpointCommand::List { json } => {
            let store = open(paths)?;
            let list = healer::checkpoint::CheckpointList {
                pending: store.pending_checkpoints()?,
                decided: store.decided_checkpoints(20)?,
            };
            if json {
                return print_json(&list);
            }
            if list.pending.is_empty() {
                println!("No checkpoint is waiting for you.");
            }
            for c in &list.pending {
                println!("{}", c.formatted());
                println!(
                    "  decide with: healer checkpoint decide {} [OPTION]\n",
                    c.id
                );
            }
            if !list.decided.is_empty() {
                println!("Past decisions:");
            }
            for c in &list.decided {
                println!("  {}", decided_line(c));
            }
            Ok(true)
        }
        CheckpointCommand::Decide {
            id,
            option,
            notes,
            json,
        } => {
            let (option, notes) = match option {
                Some(option) => (option, notes),
                None => {
                    let checkpoint = open(paths)?.checkpoint(id)?;
                    if checkpoint.decision.is_some() {
                        return Err(Error::InvalidInput(format!(
                            "checkpoint {id} was decided already: {}",
                            decided_line(&checkpoint)
                        )));
                    }
                    print!("{}", checkpoint.formatted());
                    let stdin = std::io::stdin();
                    let mut lines = stdin.lock();
                    let option = ask_option(&checkpoint, &mut lines)?;
                    let wants_package = usize::try_from(option)
                        .ok()
                        .and_then(|n| checkpoint.options.get(n.saturating_sub(1)))
                        .is_some_and(|o| o.action == CheckpointAction::InstallPackage);
                    // "Try another package name…" needs the name: it is what gets installed.
                    let notes = match notes {
                        Some(n) => Some(n),
                        None if wants_package => ask_line("Package name: ", &mut lines, true)?,
                        None => ask_line("Notes (optional, Enter to skip): ", &mut lines, false)?,
                    };
                    (option, notes)
                }
            };
            let request = Request::DecideCheckpoint {
                id,
                option: Some(option),
                notes,
            };
            let Response::Checkpoint { checkpoint } = act(paths, request, DECIDE_WAIT).await?
            else {
                return unexpected();
            };
            if json {
                return print_json(&checkpoint);
            }
            println!("{}", decided_line(&checkpoint));
            Ok(true)
        }
    }
}

/// Exit status of `project run --wait` when Healer waits for the person's answer and there is
/// no terminal to ask it on.
pub const WAITS_FOR_ANSWER: i32 = 3;

/// After `project run --wait`: when the healer service waits for the person's answer about the
/// session's failure, ask it on the terminal as `checkpoint decide` does; without a terminal,
/// print the question and how to answer it, and exit with [`WAITS_FOR_ANSWER`].
pub async fn answer_healer_question(
    paths: &Paths,
    session: &healer::store::SessionRecord,
) -> Result<()> {
    let store = open(paths)?;
    let waiting = store
        .invocations(Some(session.project_id), Some(&session.task_id), 20)?
        .into_iter()
        .find(|inv| inv.session_id == Some(session.id) && inv.waiting_checkpoint.is_some());
    let Some(checkpoint) = waiting.and_then(|inv| inv.waiting_checkpoint) else {
        return Ok(());
    };
    let checkpoint = store.checkpoint(checkpoint)?;
    drop(store);
    println!();
    print!("{}", checkpoint.formatted());
    if !std::io::stdin().is_terminal() {
        let choices: Vec<String> = checkpoint
            .options
            .iter()
            .enumerate()
            .map(|(i, o)| format!("{} ({})", i + 1, o.label))
            .collect();
        println!(
            "Healer waits for your answer. Answer it with: healer checkpoint decide {} OPTION — {}",
            checkpoint.id,
            choices.join(", ")
        );
        let _ = std::io::stdout().flush();
        std::process::exit(WAITS_FOR_ANSWER);
    }
    let stdin = std::io::stdin();
    let mut lines = stdin.lock();
    let option = ask_option(&checkpoint, &mut lines)?;
    drop(lines);
    let request = Request::DecideCheckpoint {
        id: checkpoint.id,
        option: Some(option),
        notes: None,
    };
    let Response::Checkpoint { checkpoint } = act(paths, request, DECIDE_WAIT).await? else {
        return unexpected().map(|_| ());
    };
    println!("{}", decided_line(&checkpoint));
    Ok(())
}

fn decided_line(c: &Checkpoint) -> String {
    match &c.decision {
        Some(d) => {
            let label = usize::try_from(d.option)
                .ok()
                .and_then(|n| n.checked_sub(1))
                .and_then(|i| c.options.get(i))
                .map_or("?", |o| o.label.as_str());
            let notes = d
                .notes
                .as_deref()
                .map(|n| format!(" (notes: {n})"))
                .unwrap_or_default();
            format!(
                "Checkpoint {} ({}): {label}{notes}. {}",
                c.id,
                c.trigger.as_str(),
                d.outcome
            )
        }
        None => format!("Checkpoint {} is pending", c.id),
    }
}

/// Ask until a valid option or an empty line (the recommended one).
fn ask_option(checkpoint: &Checkpoint, lines: &mut impl BufRead) -> Result<u32> {
    let recommended = checkpoint.recommended();
    let count = checkpoint.options.len();
    loop {
        let prompt = format!("Choose 1-{count} [Enter: {recommended}]: ");
        let Some(answer) = ask_line(&prompt, lines, true)? else {
            return Ok(recommended);
        };
        match answer.parse::<u32>() {
            Ok(n) if n >= 1 && usize::try_from(n).is_ok_and(|n| n <= count) => return Ok(n),
            _ => println!("There is no option \u{201c}{answer}\u{201d}: choose 1 to {count}."),
        }
    }
}

/// Print `prompt` and read one line: `None` for an empty one. A closed input ends the
/// command with exit code 2 when an answer is `required`, else it counts as empty.
fn ask_line(prompt: &str, lines: &mut impl BufRead, required: bool) -> Result<Option<String>> {
    print!("{prompt}");
    std::io::stdout()
        .flush()
        .map_err(|e| Error::io("cannot write to standard output", e))?;
    let mut line = String::new();
    let read = healer::capped::read_line(lines, &mut line)?;
    if read == 0 && !required {
        println!();
        return Ok(None);
    }
    if read == 0 {
        println!();
        eprintln!("healer: standard input closed before an answer; nothing was decided");
        std::process::exit(2);
    }
    let answer = line.trim();
    Ok((!answer.is_empty()).then(|| answer.to_string()))
}
