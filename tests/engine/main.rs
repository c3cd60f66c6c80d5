//! Engine integration tests: real SQLite files in temp dirs, real processes. One test binary
//! for the crate (faster to link than one per file).

mod agent_claude;
mod agent_codex;
mod agent_fixtures;
mod agent_gemini;
mod agent_opencode;
mod agent_opencode_live;
mod agent_transcripts;
mod agent_updates;
mod approvals;
mod architecture;
mod breakers_at_defaults;
mod checkpoint_cli;
mod checkpoints;
mod class_corpus;
mod classify;
mod cli;
mod cluster;
mod cluster_bed;
mod cluster_sessions;
mod cluster_trust;
mod deps;
mod engine;
mod failed_approaches;
mod faults;
mod fix_judgement;
mod gateway;
mod git_http;
mod glance;
mod heal_story;
mod healer_defaults;
mod healer_durable;
mod healer_service;
mod hostile_repos;
mod lease;
mod llama_server;
mod llm_anthropic;
mod llm_budgets;
mod llm_cli;
mod llm_completion_tokens;
mod llm_fixtures;
mod llm_keys;
mod llm_local;
mod llm_misbehaving;
mod llm_openai;
mod maintainer;
mod maintainer_cli;
mod maintainer_provider;
mod maintainer_weak_model;
mod memory;
mod model_server;
mod people;
mod pipeline;
mod project_agent_fixtures;
mod project_agents;
mod project_cli;
mod project_comments;
mod project_finishing;
mod project_fixtures;
mod project_pull_request;
mod project_push;
mod project_review;
mod project_runs;
mod project_tasks;
mod projects;
mod pyenv_guard;
mod recovery_hint;
mod repair_budget;
mod retry_wait;
mod rollback;
mod signatures;
mod steering_check;
mod steering_hooks;
mod steering_judge;
mod steering_live;
mod steering_own;
mod store;
mod survivors;
mod systemic;
mod typical_repair;
mod workflow_cli;
mod workflow_secrets;
mod workflows;

use std::path::Path;

use healer::Paths;

/// A fresh data folder for one test.
pub fn data_dir() -> (tempfile::TempDir, Paths) {
    let dir = tempfile::tempdir().expect("temp dir");
    let paths = Paths::new(dir.path().join("data"));
    paths.ensure().expect("data dir");
    (dir, paths)
}

pub fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).expect("readable file")
}
