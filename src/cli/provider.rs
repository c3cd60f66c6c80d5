//! `healer provider …`: model providers. They only write settings, so they write the store
//! directly (a running engine notices). A key is never an argument: it comes from the provider's
//! environment variable or the OS keyring (`healer provider set-key NAME` reads it from standard
//! input).

use clap::Subcommand;
use healer::events::Bus;
use healer::llm::ollama::LocalServerStatus;
use healer::llm::{settings, ApiKey, Keys, Llm, ModelPrice, ProviderInput, ProviderKind};
use healer::secrets::KeptIn;
use healer::store::Store;
use healer::{Error, Paths, Result};

use crate::print::print_json;
use crate::reach::open;

#[derive(Subcommand)]
pub enum ProviderCommand {
    /// Add a provider, or change the one with that name
    Add {
        name: String,
        /// Its name in the window, as you would write it ("My models"); the name above is its key
        #[arg(long)]
        title: Option<String>,
        /// openai-compatible (OpenAI, OpenRouter, vLLM, LM Studio, llama.cpp), anthropic, ollama, gemini (Gemini CLI sessions only)
        #[arg(long)]
        kind: String,
        /// e.g. https://api.openai.com/v1, https://api.anthropic.com, http://127.0.0.1:11434
        #[arg(long)]
        base_url: Option<String>,
        /// The environment variable holding the key when the keyring has none
        /// (default: OPENAI_API_KEY or ANTHROPIC_API_KEY)
        #[arg(long, value_name = "VAR")]
        key_env: Option<String>,
        /// A model's price in US dollars per million tokens: MODEL=INPUT,OUTPUT[,CACHED];
        /// repeatable
        #[arg(long = "price", value_name = "MODEL=IN,OUT[,CACHED]")]
        prices: Vec<String>,
        #[arg(long)]
        json: bool,
    },
    /// List providers and where each one's key comes from
    List {
        #[arg(long)]
        json: bool,
    },
    /// Ask a provider for its models; exit 1 with the exact error when it fails
    Test {
        name: String,
        #[arg(long)]
        json: bool,
    },
    /// Remove a provider, its tier mappings and its key in the keyring
    Remove {
        name: String,
        #[arg(long)]
        json: bool,
    },
    /// Keep a provider's key in the OS keyring, read from standard input (never an argument)
    SetKey { name: String },
    /// Look for a local Ollama server and list its models
    DetectOllama {
        #[arg(long)]
        json: bool,
    },
    /// Look for a local llama.cpp server (llama-server) and list its model
    DetectLlamaCpp {
        #[arg(long)]
        json: bool,
    },
}

pub async fn run(command: ProviderCommand, paths: &Paths) -> Result<bool> {
    let store = open(paths)?;
    match command {
        ProviderCommand::Add {
            name,
            title,
            kind,
            base_url,
            key_env,
            prices,
            json,
        } => {
            let kind = ProviderKind::parse(&kind).ok_or_else(|| {
                Error::InvalidInput(format!(
                    "unknown kind \"{kind}\": use openai-compatible, anthropic, ollama or gemini"
                ))
            })?;
            let input = ProviderInput {
                name,
                title,
                kind,
                base_url,
                key_env,
                prices: prices
                    .iter()
                    .map(|p| parse_price(p))
                    .collect::<Result<_>>()?,
            };
            let provider = settings::save_provider(&store, &input)?;
            let view = llm_for(&store, paths).providers().await?;
            let shown = view.into_iter().find(|v| v.provider.name == provider.name);
            if json {
                return print_json(&shown);
            }
            if let Some(v) = shown {
                println!(
                    "Saved provider \"{}\" ({}, {}): {}",
                    v.provider.name,
                    v.provider.kind.as_str(),
                    v.provider.base_url,
                    v.key_text
                );
            }
            Ok(true)
        }
        ProviderCommand::List { json } => {
            let views = llm_for(&store, paths).providers().await?;
            if json {
                return print_json(&views);
            }
            if views.is_empty() {
                println!("No providers yet. Add one with `healer provider add`.");
            }
            for v in &views {
                println!(
                    "{:<20} {:<18} {:<40} {}",
                    v.provider.name,
                    v.provider.kind.as_str(),
                    v.provider.base_url,
                    v.key_text
                );
            }
            Ok(true)
        }
        ProviderCommand::Test { name, json } => {
            let test = llm_for(&store, paths).test_provider(&name).await?;
            if json {
                print_json(&test)?;
                return Ok(test.ok);
            }
            match &test.error {
                None => {
                    println!(
                        "{}: connected ({}), {} model(s):",
                        test.provider,
                        test.key.describe(),
                        test.models.len()
                    );
                    for model in &test.models {
                        println!("  {model}");
                    }
                }
                Some(error) => println!("{}: {}", test.provider, error.message),
            }
            Ok(test.ok)
        }
        ProviderCommand::Remove { name, json } => {
            settings::remove_provider(&store, &name)?;
            if let Err(e) = Keys::new(paths.data_dir()).forget(&name) {
                eprintln!("healer: the keyring entry could not be removed: {e}");
            }
            if json {
                return print_json(&serde_json::json!({"removed": name}));
            }
            println!("Removed provider \"{name}\" and the tiers that used it.");
            Ok(true)
        }
        ProviderCommand::SetKey { name } => {
            store.provider(&name)?;
            let text = healer::capped::read_stdin_text(
                healer::capped::SECRET_BYTES,
                "the key on standard input",
            )?;
            let key = ApiKey::new(text);
            if key.expose().is_empty() {
                return Err(Error::InvalidInput(
                    "no key on standard input: pipe it in, e.g. `healer provider set-key NAME < keyfile`"
                        .to_string(),
                ));
            }
            let kept = Keys::new(paths.data_dir()).store(&name, &key)?;
            println!(
                "Kept the key of \"{name}\" in {}.",
                match kept {
                    KeptIn::Keyring => "the OS keyring",
                    KeptIn::File => "Healer's secrets file",
                }
            );
            Ok(true)
        }
        ProviderCommand::DetectOllama { json } => {
            let status = llm_for(&store, paths).detect_ollama().await?;
            print_found("Ollama", &status, json)
        }
        ProviderCommand::DetectLlamaCpp { json } => {
            let status = llm_for(&store, paths).detect_llama_cpp().await?;
            print_found("llama.cpp's server", &status, json)
        }
    }
}

/// What looking for a server at home found; `Ok(false)` when it is not there.
fn print_found(name: &str, status: &LocalServerStatus, json: bool) -> Result<bool> {
    if json {
        print_json(status)?;
    } else if status.running {
        println!(
            "{name} at {}: {} model(s)",
            status.base_url,
            status.models.len()
        );
        for model in &status.models {
            println!("  {model}");
        }
    } else {
        println!(
            "No {name}: {}",
            status.detail.as_deref().unwrap_or("no answer")
        );
    }
    Ok(status.running)
}

fn llm_for(store: &Store, paths: &Paths) -> Llm {
    Llm::new(store.clone(), Bus::new(store.clone()), paths.data_dir())
}

/// "gpt-4o-mini=0.15,0.6[,0.075]" (US dollars per million tokens).
fn parse_price(text: &str) -> Result<ModelPrice> {
    let bad = || {
        Error::InvalidInput(format!(
            "price \"{text}\" is not MODEL=INPUT,OUTPUT[,CACHED] (dollars per million tokens)"
        ))
    };
    let (model, numbers) = text.split_once('=').ok_or_else(bad)?;
    let numbers: Vec<f64> = numbers
        .split(',')
        .map(|n| n.trim().parse::<f64>().map_err(|_| bad()))
        .collect::<Result<_>>()?;
    match numbers.as_slice() {
        [input, output] | [input, output, _] if !model.trim().is_empty() => Ok(ModelPrice {
            model: model.trim().to_string(),
            input_per_mtok: *input,
            output_per_mtok: *output,
            cached_input_per_mtok: numbers.get(2).copied(),
        }),
        _ => Err(bad()),
    }
}
