//! `healer secret …`: a workflow's secrets (values its script reads from environment
//! variables, kept in the OS keyring or Healer's own secrets file — never the database), and
//! where secrets are kept on this computer.

use clap::Subcommand;
use healer::secrets::{Keep, KeptIn, FILE_PROTECTS};
use healer::{Error, Paths, Result};

use crate::print::print_json;
use crate::reach::open;

#[derive(Subcommand)]
pub enum SecretCommand {
    /// Keep a secret for a workflow's runs; the value is read from standard input
    Set {
        /// The workflow
        workflow: String,
        /// The environment variable its script reads, such as API_TOKEN
        name: String,
    },
    /// List a workflow's secrets (names only; values are never shown)
    List {
        workflow: String,
        #[arg(long)]
        json: bool,
    },
    /// Forget a workflow's secret and its value
    Remove { workflow: String, name: String },
    /// Where secrets are kept on this computer
    Status {
        #[arg(long)]
        json: bool,
    },
    /// Keep secrets in Healer's own secrets file (for a computer with no keyring service)
    UseFile {
        /// Accept what the file protects against and what not (printed without it)
        #[arg(long)]
        yes: bool,
    },
}

pub async fn run(command: SecretCommand, paths: &Paths) -> Result<bool> {
    let keep = Keep::new(paths.data_dir());
    let mark = paths.instance_mark();
    match command {
        SecretCommand::Set { workflow, name } => {
            let store = open(paths)?;
            let workflow = store.workflow_by_name(&workflow)?;
            let value = healer::capped::read_stdin_text(
                healer::capped::SECRET_BYTES,
                "the value on standard input",
            )?;
            let value = value.trim_end_matches(['\n', '\r']);
            let saved = store.save_workflow_secret(&keep, &mark, workflow.id, &name, value)?;
            println!(
                "Kept {} for \"{}\" in {}. Its runs get it as an environment variable.",
                saved.name,
                workflow.title,
                place(saved.kept_in)
            );
            Ok(true)
        }
        SecretCommand::List { workflow, json } => {
            let store = open(paths)?;
            let workflow = store.workflow_by_name(&workflow)?;
            let list = store.workflow_secrets(workflow.id)?;
            if json {
                return print_json(&list);
            }
            if list.is_empty() {
                println!("\"{}\" has no secrets.", workflow.title);
            }
            for secret in &list {
                println!(
                    "{:<24} in {}, saved {}",
                    secret.name,
                    place(secret.kept_in),
                    secret.saved_at
                );
            }
            Ok(true)
        }
        SecretCommand::Remove { workflow, name } => {
            let store = open(paths)?;
            let workflow = store.workflow_by_name(&workflow)?;
            store.forget_workflow_secret(&keep, &mark, workflow.id, &name)?;
            println!("Forgot {name} of \"{}\".", workflow.title);
            Ok(true)
        }
        SecretCommand::Status { json } => {
            let status = keep.status();
            if json {
                return print_json(&status);
            }
            match status.new_values_go_to {
                Some(kept_in) => println!("New secrets are kept in {}.", place(kept_in)),
                None => println!(
                    "This computer has no keyring service. Keep secrets in Healer's own file \
                     with `healer secret use-file`, or put provider keys in their environment \
                     variables."
                ),
            }
            Ok(true)
        }
        SecretCommand::UseFile { yes } => {
            if !yes {
                println!("{FILE_PROTECTS}\n\nRun again with --yes to use it.");
                return Ok(false);
            }
            keep.choose_file()
                .map_err(|e| Error::Internal(e.to_string()))?;
            println!("Secrets are kept in Healer's own secrets file where no keyring answers.");
            Ok(true)
        }
    }
}

fn place(kept_in: KeptIn) -> &'static str {
    match kept_in {
        KeptIn::Keyring => "the OS keyring",
        KeptIn::File => "Healer's secrets file",
    }
}
