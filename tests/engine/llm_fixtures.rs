//! What the model-layer tests share: an engine on a temp data folder pointed at a scripted
//! model server, and small tools that act on a folder the way a maintainer's tools will.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use healer::engine::EngineOptions;
use healer::lease::Lease;
use healer::llm::{
    AgentRun, ChatMessage, Keys, ProviderInput, ProviderKind, Tier, TierSetting, Tool, ToolSet,
};
use healer::{Engine, Error, Paths, Result};
use serde_json::{json, Value};

use crate::data_dir;
use crate::model_server::ModelServer;

pub struct Setup {
    pub tmp: tempfile::TempDir,
    pub paths: Paths,
    pub engine: Engine,
    pub server: ModelServer,
    /// The folder the tools work in.
    pub work: PathBuf,
}

/// An engine (no scheduler) whose `provider` of `kind` points at a scripted server that
/// accepts `key`, read from the environment variable `key_var`; the standard tier maps to
/// it.
pub async fn setup(kind: ProviderKind, key_var: &str, key: &str) -> Setup {
    let (tmp, paths) = data_dir();
    let server = ModelServer::start(Some(key));
    std::env::set_var(key_var, key);
    let lease = Lease::acquire(&paths, "test").expect("lease");
    let options = EngineOptions {
        scheduler: false,
        keys: Some(Keys::env_only()),
        ..EngineOptions::default()
    };
    let engine = Engine::start_with_lease(paths.clone(), "test", lease, options)
        .await
        .expect("engine");
    let base_url = match kind {
        ProviderKind::OpenaiCompatible => format!("{}/v1", server.url),
        _ => server.url.clone(),
    };
    engine
        .save_provider(ProviderInput {
            name: "scripted".to_string(),
            title: None,
            kind,
            base_url: Some(base_url),
            key_env: Some(key_var.to_string()),
            prices: vec![],
        })
        .expect("provider");
    engine
        .set_tier(TierSetting {
            tier: Tier::Standard,
            provider: "scripted".to_string(),
            model: "scripted-large".to_string(),
            budget_tokens: 10_000,
            temperature: None,
            minutes: None,
        })
        .expect("tier");
    let work = tmp.path().join("work");
    std::fs::create_dir_all(&work).expect("work dir");
    std::fs::write(
        work.join("report.py"),
        "total = rows['totl']\nprint(total)\n",
    )
    .expect("script");
    Setup {
        tmp,
        paths,
        engine,
        server,
        work,
    }
}

/// A maintainer-like request: fix the script through the tools.
pub fn fix_request(engine: &Engine, tools: ToolSet, tier: Tier) -> AgentRun {
    let task = engine
        .start_task(healer::llm::TaskKind::Maintainer, "Fix report.py", None)
        .expect("task");
    AgentRun {
        task_id: task.id,
        tier,
        system: "You repair scripts. Use the tools; answer in one sentence when done.".to_string(),
        history: Vec::new(),
        messages: vec![ChatMessage::User {
            text: "report.py fails with KeyError: 'totl'. Fix it.".to_string(),
        }],
        tools,
        limits: None,
        max_tokens: None,
        task_tokens: None,
        inbox: None,
        temperature: None,
        choice: None,
        answer_schema: None,
    }
}

pub fn file_tools(work: &Path) -> ToolSet {
    ToolSet::new(vec![
        Arc::new(ReadFile(work.to_path_buf())),
        Arc::new(EditFile(work.to_path_buf())),
    ])
    .expect("tools")
}

/// A path inside `root` named by the model (untrusted: no absolute paths, no "..").
fn inside(root: &Path, name: &str) -> Result<PathBuf> {
    let relative = Path::new(name);
    if relative.is_absolute()
        || relative
            .components()
            .any(|c| matches!(c, std::path::Component::ParentDir))
    {
        return Err(Error::InvalidInput(format!("{name} is outside the folder")));
    }
    Ok(root.join(relative))
}

pub struct ReadFile(pub PathBuf);

#[async_trait]
impl Tool for ReadFile {
    fn name(&self) -> &str {
        "read_file"
    }
    fn description(&self) -> &str {
        "Read a file of the workflow's folder"
    }
    fn schema(&self) -> Value {
        json!({"type": "object", "properties": {"path": {"type": "string"}},
               "required": ["path"], "additionalProperties": false})
    }
    async fn call(&self, args: Value) -> Result<String> {
        let path = inside(&self.0, args["path"].as_str().unwrap_or_default())?;
        std::fs::read_to_string(&path)
            .map_err(|e| Error::io(format!("cannot read {}", path.display()), e))
    }
}

pub struct EditFile(pub PathBuf);

#[async_trait]
impl Tool for EditFile {
    fn name(&self) -> &str {
        "edit_file"
    }
    fn description(&self) -> &str {
        "Replace one exact piece of text in a file"
    }
    fn schema(&self) -> Value {
        json!({"type": "object",
               "properties": {"path": {"type": "string"}, "old": {"type": "string", "minLength": 1},
                              "new": {"type": "string"}},
               "required": ["path", "old", "new"], "additionalProperties": false})
    }
    async fn call(&self, args: Value) -> Result<String> {
        let path = inside(&self.0, args["path"].as_str().unwrap_or_default())?;
        let old = args["old"].as_str().unwrap_or_default();
        let new = args["new"].as_str().unwrap_or_default();
        let text = std::fs::read_to_string(&path)
            .map_err(|e| Error::io(format!("cannot read {}", path.display()), e))?;
        if !text.contains(old) {
            return Err(Error::InvalidInput(format!("{old:?} is not in the file")));
        }
        std::fs::write(&path, text.replacen(old, new, 1))
            .map_err(|e| Error::io(format!("cannot write {}", path.display()), e))?;
        Ok("edited".to_string())
    }
}
