//! Model providers as a person configures them: a name, a wire format, a base URL, which
//! environment variable holds the key when no keyring is available, and optional prices.

use serde::{Deserialize, Serialize};

use super::keys::KeySource;

/// The wire format a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum ProviderKind {
    /// OpenAI chat completions: OpenAI, OpenRouter, vLLM, LM Studio, llama.cpp server.
    OpenaiCompatible,
    /// Anthropic Messages.
    Anthropic,
    /// A local Ollama server: chat over its OpenAI-compatible /v1, models from /api/tags.
    Ollama,
    /// Google's Gemini API (`generateContent`): for Gemini CLI sessions through Healer's model
    /// gateway; Healer's own repairs do not call it.
    Gemini,
}

impl ProviderKind {
    pub const ALL: [ProviderKind; 4] = [
        ProviderKind::OpenaiCompatible,
        ProviderKind::Anthropic,
        ProviderKind::Ollama,
        ProviderKind::Gemini,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ProviderKind::OpenaiCompatible => "openai-compatible",
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::Ollama => "ollama",
            ProviderKind::Gemini => "gemini",
        }
    }

    /// "openai-compatible", "openai_compatible", "openai" …
    pub fn parse(s: &str) -> Option<Self> {
        match s.trim().to_ascii_lowercase().replace('_', "-").as_str() {
            "openai-compatible" | "openai" => Some(ProviderKind::OpenaiCompatible),
            "anthropic" => Some(ProviderKind::Anthropic),
            "ollama" => Some(ProviderKind::Ollama),
            "gemini" | "google" => Some(ProviderKind::Gemini),
            _ => None,
        }
    }

    pub fn default_base_url(self) -> &'static str {
        match self {
            ProviderKind::OpenaiCompatible => "https://api.openai.com/v1",
            ProviderKind::Anthropic => "https://api.anthropic.com",
            ProviderKind::Ollama => super::ollama::DEFAULT_URL,
            ProviderKind::Gemini => "https://generativelanguage.googleapis.com",
        }
    }

    /// The environment variable read when the provider names none.
    pub fn default_key_env(self) -> Option<&'static str> {
        match self {
            ProviderKind::OpenaiCompatible => Some("OPENAI_API_KEY"),
            ProviderKind::Anthropic => Some("ANTHROPIC_API_KEY"),
            ProviderKind::Ollama => None,
            ProviderKind::Gemini => Some("GEMINI_API_KEY"),
        }
    }

    /// A local Ollama answers without a key.
    fn always_needs_key(self) -> bool {
        !matches!(self, ProviderKind::Ollama)
    }
}

/// The price of a model, in US dollars per million tokens.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct ModelPrice {
    pub model: String,
    pub input_per_mtok: f64,
    pub output_per_mtok: f64,
    /// Cached prompt tokens; the input price when not given.
    pub cached_input_per_mtok: Option<f64>,
}

/// A configured provider. Holds no key: see [`super::keys`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct Provider {
    /// Its short unique key ("my-models"): what tiers and the CLI name it by.
    pub name: String,
    /// Its name as the person wrote it ("My models"); the key when none was given.
    pub title: String,
    pub kind: ProviderKind,
    pub base_url: String,
    /// The environment variable holding the key when the keyring has none.
    pub key_env: Option<String>,
    pub prices: Vec<ModelPrice>,
    pub created_at: String,
    pub updated_at: String,
}

impl Provider {
    /// The environment variable to read for the key, if any.
    pub fn key_var(&self) -> Option<String> {
        self.key_env
            .clone()
            .or_else(|| self.kind.default_key_env().map(str::to_string))
    }

    pub fn price(&self, model: &str) -> Option<&ModelPrice> {
        self.prices.iter().find(|p| p.model == model)
    }

    /// Whether a request may go without a key: Ollama, and an OpenAI-compatible server on
    /// this computer or the local network (llama.cpp, LM Studio, vLLM at home) unless the
    /// person named a key variable for it. Such a server that asks for a key after all says
    /// so with a 401, and the error then says where to put one.
    pub fn needs_key(&self) -> bool {
        match self.kind {
            ProviderKind::OpenaiCompatible => self.key_env.is_some() || !self.is_local(),
            kind => kind.always_needs_key(),
        }
    }

    /// Whether the server runs on this computer or the local network, where a token costs
    /// time rather than money.
    pub fn is_local(&self) -> bool {
        self.kind == ProviderKind::Ollama || is_local_address(&self.base_url)
    }

    pub(crate) fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base_url.trim_end_matches('/'))
    }
}

/// A loopback or private address, `localhost`, a name with no dot (a machine on the local
/// network), or one under a name kept for local networks.
pub fn is_local_address(base_url: &str) -> bool {
    let Ok(url) = reqwest::Url::parse(base_url.trim()) else {
        return false;
    };
    let local_v4 = |ip: std::net::Ipv4Addr| {
        let [a, b, ..] = ip.octets();
        ip.is_loopback()
            || ip.is_private()
            || ip.is_link_local()
            || ip.is_unspecified()
            // 100.64.0.0/10: carrier-grade NAT, and the addresses of a tailnet.
            || (a == 100 && (64..128).contains(&b))
    };
    match url.host() {
        Some(url::Host::Ipv4(ip)) => local_v4(ip),
        Some(url::Host::Ipv6(ip)) => {
            let first = ip.segments()[0];
            ip.to_ipv4_mapped().is_some_and(local_v4)
                || ip.is_loopback()
                || ip.is_unspecified()
                || (first & 0xfe00) == 0xfc00
                || (first & 0xffc0) == 0xfe80
        }
        Some(url::Host::Domain(name)) => {
            let name = name.trim_end_matches('.').to_ascii_lowercase();
            !name.contains('.')
                || [
                    ".localhost",
                    ".local",
                    ".lan",
                    ".home.arpa",
                    ".internal",
                    ".ts.net",
                ]
                .iter()
                .any(|suffix| name.ends_with(suffix))
        }
        None => false,
    }
}

/// What a person enters to add or change a provider.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct ProviderInput {
    pub name: String,
    /// Its name as the person wrote it, when that differs from `name`.
    #[serde(default)]
    pub title: Option<String>,
    pub kind: ProviderKind,
    /// The kind's usual address when empty.
    pub base_url: Option<String>,
    pub key_env: Option<String>,
    #[serde(default)]
    pub prices: Vec<ModelPrice>,
}

/// A provider as Settings shows it: its configuration and where its key comes from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct ProviderView {
    pub provider: Provider,
    pub key: KeySource,
    pub key_text: String,
}

/// Problems with `input`, each a sentence; empty when it can be saved.
pub fn check_input(input: &ProviderInput) -> Vec<String> {
    let mut problems = Vec::new();
    let name = input.name.trim();
    if name.is_empty() || name.len() > 40 {
        problems.push("the name must be 1 to 40 characters".to_string());
    } else if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    {
        problems.push(format!(
            "the name \"{name}\" may hold only letters, digits, '-', '_' and '.'"
        ));
    }
    if let Some(url) = input.base_url.as_deref().filter(|u| !u.trim().is_empty()) {
        let url = url.trim();
        if !(url.starts_with("http://") || url.starts_with("https://")) || url.contains(' ') {
            problems.push(format!(
                "the base URL \"{url}\" must start with http:// or https://"
            ));
        } else if let Err(e) = reqwest::Url::parse(url) {
            problems.push(format!(
                "the base URL \"{url}\" is not a valid address ({e})"
            ));
        }
    }
    if input
        .key_env
        .as_deref()
        .is_some_and(|v| v.trim().is_empty())
    {
        problems.push(
            "the key variable is empty: name one like OPENAI_API_KEY, or leave it out".to_string(),
        );
    }
    if let Some(var) = input.key_env.as_deref().filter(|v| !v.is_empty()) {
        if !var
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
            || var.starts_with(|c: char| c.is_ascii_digit())
        {
            problems.push(format!(
                "the key variable \"{var}\" must be an environment variable name like OPENAI_API_KEY"
            ));
        }
    }
    for price in &input.prices {
        let values = [
            Some(price.input_per_mtok),
            Some(price.output_per_mtok),
            price.cached_input_per_mtok,
        ];
        if values
            .into_iter()
            .flatten()
            .any(|v| !v.is_finite() || v < 0.0)
        {
            problems.push(format!(
                "the price of \"{}\" must be zero or more",
                price.model
            ));
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(name: &str, url: Option<&str>, var: Option<&str>) -> ProviderInput {
        ProviderInput {
            name: name.to_string(),
            title: None,
            kind: ProviderKind::OpenaiCompatible,
            base_url: url.map(str::to_string),
            key_env: var.map(str::to_string),
            prices: vec![],
        }
    }

    #[test]
    fn kinds_parse_the_way_a_person_types_them() {
        assert_eq!(
            ProviderKind::parse("openai-compatible"),
            Some(ProviderKind::OpenaiCompatible)
        );
        assert_eq!(
            ProviderKind::parse("Anthropic"),
            Some(ProviderKind::Anthropic)
        );
        assert_eq!(ProviderKind::parse("gemini"), Some(ProviderKind::Gemini));
        assert_eq!(ProviderKind::parse("cohere"), None);
    }

    #[test]
    fn a_server_at_home_needs_no_key_and_a_hosted_one_does() {
        for url in [
            "http://127.0.0.1:8080/v1",
            "http://localhost:1234/v1",
            "http://192.168.1.20:8000/v1",
            "http://10.0.0.5/v1",
            "http://[::1]:8080/v1",
            "http://[fd12::1]:8080/v1",
            "http://gpu-box:8000/v1",
            "http://llm.home.arpa/v1",
            "http://studio.local:1234/v1",
            "http://0.0.0.0:8080/v1",
            "http://[::]:8080/v1",
            "http://[::ffff:127.0.0.1]:8080/v1",
            "http://[::ffff:192.168.1.9]:8080/v1",
            "http://100.101.102.103:8080/v1",
            "http://gpu.tail1234.ts.net:8080/v1",
            "http://LOCALHOST.:8080/v1",
        ] {
            assert!(is_local_address(url), "{url}");
        }
        for url in [
            "https://api.openai.com/v1",
            "https://openrouter.ai/api/v1",
            "http://8.8.8.8/v1",
            "http://[2001:db8::1]/v1",
            "http://[::ffff:8.8.8.8]/v1",
            "http://100.128.0.1/v1",
            "not a url",
        ] {
            assert!(!is_local_address(url), "{url}");
        }
        let provider = |url: &str, key_env: Option<&str>| Provider {
            name: "p".to_string(),
            title: "p".to_string(),
            kind: ProviderKind::OpenaiCompatible,
            base_url: url.to_string(),
            key_env: key_env.map(str::to_string),
            prices: vec![],
            created_at: String::new(),
            updated_at: String::new(),
        };
        assert!(!provider("http://127.0.0.1:8080/v1", None).needs_key());
        assert!(provider("http://127.0.0.1:8080/v1", Some("LOCAL_KEY")).needs_key());
        assert!(provider("https://api.openai.com/v1", None).needs_key());
    }

    #[test]
    fn a_bad_name_url_or_variable_is_refused_with_a_reason() {
        assert!(check_input(&input("openrouter", Some("https://x/v1"), Some("OR_KEY"))).is_empty());
        assert_eq!(check_input(&input("my provider", None, None)).len(), 1);
        assert_eq!(check_input(&input("p", Some("ftp://x"), None)).len(), 1);
        assert_eq!(check_input(&input("p", None, Some("sk-123"))).len(), 1);
        let broken = check_input(&input("p", Some("http://[::1"), None));
        assert_eq!(broken.len(), 1, "{broken:?}");
        assert!(broken[0].contains("is not a valid address"), "{broken:?}");
        assert!(check_input(&input("p", Some("http://[::1]:11434"), None)).is_empty());
        let empty = check_input(&input("p", None, Some("")));
        assert_eq!(empty.len(), 1, "{empty:?}");
        assert!(empty[0].contains("the key variable is empty"), "{empty:?}");
    }
}
