//! Healer's engine: workflows, healing, and everything the desktop app and the `healer` CLI
//! show. No Tauri here: the engine builds and tests without a webview.

pub mod agent;
pub mod approval;
pub mod beneath;
pub mod breakers;
pub mod capped;
pub mod checkpoint;
pub mod client;
pub mod cluster;
pub mod contain;
pub mod deps;
pub mod engine;
pub mod error;
pub mod events;
pub mod failpoint;
pub mod failure;
pub mod forge;
pub mod gateway;
pub mod heal;
pub mod lease;
pub mod llm;
pub mod logging;
pub mod looping;
pub mod maintainer;
pub mod memory;
pub mod notification;
pub mod paths;
pub mod planner;
pub mod project;
pub mod recovery;
pub mod sandbox;
pub mod scheduler;
pub mod secrets;
pub(crate) mod services;
pub mod session;
pub mod spells;
pub mod steering;
pub mod store;
pub mod tasklist;
pub mod workflow;

pub use engine::{AppInfo, Engine};
pub use error::{Error, ErrorCode, ErrorPayload, Result};
pub use events::{Event, EventRecord};
pub use paths::Paths;
