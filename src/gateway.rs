//! The model gateway: an agent never holds a real model key. For each session that uses a
//! provider configured in Healer, the gateway on 127.0.0.1 issues a pass — an address and a
//! token valid only for that session — which the agent is given instead of the provider's
//! address and key (Claude Code's `ANTHROPIC_BASE_URL` / `ANTHROPIC_API_KEY`, a Codex
//! `model_providers` entry). The gateway checks the token, adds the real key, forwards to the
//! provider, streams the answer back, counts the tokens and their cost from what the provider
//! answered, stops the session at the project's spending cap, and refuses the token once the
//! session has ended. So nothing the agent runs — the repository's tests, a hook, a planted
//! settings file — can read the key or send it elsewhere (docs/decisions.md, issue 36).

mod forward;
mod meter;
mod serve;

use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use tokio_util::sync::CancellationToken;

use crate::error::{Error, Result};
use crate::llm::{ApiKey, ModelPrice, ProviderKind, Usage};

pub use forward::forwarder;
pub use meter::Meter;
pub use serve::WorkerCheck;

/// The most a session may spend on its model before Healer stops it: money where the model has
/// a price in Healer, tokens where it has none. 0 is no cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct SpendCap {
    /// In US cents.
    pub cents: u32,
    /// Prompt and completion tokens of models without a price.
    pub tokens: u64,
}

/// The caps a project has unless its settings say otherwise.
pub use crate::store::{DEFAULT_SESSION_CAP_CENTS, DEFAULT_SESSION_CAP_TOKENS};

/// What a session has used through the gateway.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Spent {
    pub usage: Usage,
    /// What the priced part cost, in dollars.
    pub cost_usd: f64,
    /// Tokens of requests whose model has no price.
    pub unpriced_tokens: u64,
}

impl SpendCap {
    /// Why `spent` is past this cap, in a sentence for the session; `None` while within it.
    pub fn passed_by(&self, spent: &Spent) -> Option<String> {
        if self.cents > 0 && spent.cost_usd * 100.0 >= f64::from(self.cents) {
            return Some(format!(
                "Healer stopped the agent: this session had spent ${:.2} on the model, past the \
                 project's cap of ${:.2} a session. Raise the cap in the project's settings to let \
                 it go further.",
                spent.cost_usd,
                f64::from(self.cents) / 100.0
            ));
        }
        if self.tokens > 0 && spent.unpriced_tokens >= self.tokens {
            return Some(format!(
                "Healer stopped the agent: this session had used {} tokens of a model that has no \
                 price in Healer, past the project's cap of {} tokens a session. Raise the cap in \
                 the project's settings to let it go further.",
                thousands(spent.unpriced_tokens),
                thousands(self.tokens)
            ));
        }
        None
    }
}

/// `12345678` as `12,345,678`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Told each answer's use and its cost (`None`: the model has no price).
pub type OnUse = Box<dyn Fn(&Usage, Option<f64>) + Send + Sync>;

/// What a session's pass lets through, and what it reports back.
pub struct GrantSpec {
    pub session_id: i64,
    /// A session on a worker: its pass is good on the listener for workers (and only such
    /// passes are: a pass of a session here is never taken from the network).
    pub for_workers: bool,
    /// The provider's base URL in the agent's own convention (Anthropic's without `/v1`, an
    /// OpenAI-style one up to and including `/v1`).
    pub upstream: String,
    pub kind: ProviderKind,
    pub key: Option<ApiKey>,
    pub prices: Vec<ModelPrice>,
    pub cap: SpendCap,
    /// Called after each answer with what it used (to store on the session).
    pub on_use: OnUse,
    /// Called once when the session passes its cap, with the sentence saying so.
    pub on_cap: Box<dyn Fn(String) + Send + Sync>,
}

struct Grant {
    spec: GrantSpec,
    spent: Mutex<Spent>,
    /// Set once the cap was passed: later requests are refused.
    over: Mutex<Option<String>>,
}

type TokenHash = [u8; 32];

/// How many ended sessions' passes are remembered, to say "this session has ended" rather than
/// "not a pass" (both are refused).
const ENDED_KEPT: usize = 1024;

#[derive(Default)]
struct Passes {
    open: HashMap<TokenHash, Arc<Grant>>,
    ended: VecDeque<TokenHash>,
}

struct Inner {
    passes: Mutex<Passes>,
    client: reqwest::Client,
}

/// The gateway of one engine: a listener on 127.0.0.1 until `cancel`.
#[derive(Clone)]
pub struct Gateway {
    inner: Arc<Inner>,
    addr: SocketAddr,
}

/// A session's pass: its address and token for the agent. Dropping it ends the session's
/// grant; the token is refused from then on.
pub struct SessionPass {
    /// The address to give the agent, in its own convention (the path of the provider's base
    /// URL kept).
    pub base_url: String,
    /// The session's token (sent by the agent as its "API key").
    pub token: ApiKey,
    hash: TokenHash,
    inner: Arc<Inner>,
}

impl Drop for SessionPass {
    fn drop(&mut self) {
        let mut passes = lock(&self.inner.passes);
        passes.open.remove(&self.hash);
        passes.ended.push_back(self.hash);
        while passes.ended.len() > ENDED_KEPT {
            passes.ended.pop_front();
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

fn hash(token: &str) -> TokenHash {
    Sha256::digest(token.as_bytes()).into()
}

impl Gateway {
    /// Listen on a free port of 127.0.0.1 until `cancel`.
    pub async fn start(cancel: CancellationToken) -> Result<Gateway> {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
            .await
            .map_err(|e| Error::io("the model gateway could not listen on 127.0.0.1", e))?;
        let addr = listener
            .local_addr()
            .map_err(|e| Error::io("the model gateway has no address", e))?;
        let client = crate::llm::build_client().map_err(Error::from)?;
        let inner = Arc::new(Inner {
            passes: Mutex::new(Passes::default()),
            client,
        });
        tokio::spawn(serve::serve(listener, inner.clone(), cancel, None));
        Ok(Gateway { inner, addr })
    }

    /// Listen for workers on `address` too (an address they can reach), with the same passes:
    /// a request there needs, besides its session's pass, a worker's token that `check`
    /// knows (issue 42: an agent on a worker reaches the model through the control room).
    pub async fn open_to_workers(
        &self,
        address: &str,
        check: WorkerCheck,
        cancel: CancellationToken,
    ) -> Result<SocketAddr> {
        let listener = tokio::net::TcpListener::bind(address).await.map_err(|e| {
            Error::io(
                format!("the model gateway could not listen for workers on {address}"),
                e,
            )
        })?;
        let addr = listener
            .local_addr()
            .map_err(|e| Error::io("the model gateway has no address", e))?;
        tokio::spawn(serve::serve(
            listener,
            self.inner.clone(),
            cancel,
            Some(check),
        ));
        Ok(addr)
    }

    /// A pass for one session.
    pub fn open(&self, spec: GrantSpec) -> Result<SessionPass> {
        let path = url::Url::parse(&spec.upstream)
            .map_err(|e| {
                Error::InvalidInput(format!(
                    "the provider's address “{}” is not a URL: {e}",
                    spec.upstream
                ))
            })?
            .path()
            .trim_end_matches('/')
            .to_string();
        let bytes: [u8; 32] = rand::random();
        let token = format!(
            "healer-session-{}",
            bytes.iter().map(|b| format!("{b:02x}")).collect::<String>()
        );
        let hash = hash(&token);
        crate::secrets::remember(&token);
        let grant = Arc::new(Grant {
            spec,
            spent: Mutex::new(Spent::default()),
            over: Mutex::new(None),
        });
        lock(&self.inner.passes).open.insert(hash, grant);
        Ok(SessionPass {
            base_url: format!("http://{}{path}", self.addr),
            token: ApiKey::new(token),
            hash,
            inner: self.inner.clone(),
        })
    }
}

/// What a request's token is.
enum Holder {
    Open(Arc<Grant>),
    Ended,
    Unknown,
}

impl Inner {
    fn holder(&self, token: &str) -> Holder {
        let hash = hash(token);
        let passes = lock(&self.passes);
        match passes.open.get(&hash) {
            Some(grant) => Holder::Open(grant.clone()),
            None if passes.ended.contains(&hash) => Holder::Ended,
            None => Holder::Unknown,
        }
    }
}

impl Grant {
    /// Count one answer; tell the session when it passes its cap.
    fn count(&self, model: &str, usage: &Usage) {
        let price = self.spec.prices.iter().find(|p| p.model == model);
        let cost = price.map(|p| crate::llm::cost(usage, p));
        let passed = {
            let mut spent = lock(&self.spent);
            spent.usage.prompt_tokens += usage.prompt_tokens;
            spent.usage.completion_tokens += usage.completion_tokens;
            spent.usage.cached_tokens += usage.cached_tokens;
            match cost {
                Some(c) => spent.cost_usd += c,
                None => spent.unpriced_tokens += usage.total(),
            }
            self.spec.cap.passed_by(&spent)
        };
        (self.spec.on_use)(usage, cost);
        if let Some(why) = passed {
            let mut over = lock(&self.over);
            if over.is_none() {
                *over = Some(why.clone());
                drop(over);
                (self.spec.on_cap)(why);
            }
        }
    }

    fn over_cap(&self) -> Option<String> {
        lock(&self.over).clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cap_is_passed_in_money_where_there_is_a_price_and_in_tokens_where_there_is_none() {
        let cap = SpendCap {
            cents: DEFAULT_SESSION_CAP_CENTS,
            tokens: DEFAULT_SESSION_CAP_TOKENS,
        };
        let mut spent = Spent {
            cost_usd: 4.99,
            ..Spent::default()
        };
        assert_eq!(cap.passed_by(&spent), None);
        spent.cost_usd = 5.01;
        let said = cap.passed_by(&spent).expect("past");
        assert!(
            said.contains("$5.01") && said.contains("$5.00 a session"),
            "{said}"
        );
        let tokens = Spent {
            unpriced_tokens: 5_000_000,
            ..Spent::default()
        };
        let said = cap.passed_by(&tokens).expect("past");
        assert!(said.contains("5,000,000 tokens"), "{said}");
        let off = SpendCap {
            cents: 0,
            tokens: 0,
        };
        assert_eq!(off.passed_by(&spent), None);
        assert_eq!(thousands(1_234), "1,234");
        assert_eq!(thousands(999), "999");
    }
}
