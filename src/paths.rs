//! Where Healer keeps its data: one folder (the platform's data dir, or `HEALER_DATA_DIR`).

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// The environment variable that moves the data folder.
pub const DATA_DIR_ENV: &str = "HEALER_DATA_DIR";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Paths {
    data_dir: PathBuf,
}

impl Paths {
    pub fn new(data_dir: impl Into<PathBuf>) -> Self {
        Paths {
            data_dir: data_dir.into(),
        }
    }

    /// `HEALER_DATA_DIR` when set, else the platform's data folder (~/.local/share/healer).
    pub fn from_env() -> Result<Self> {
        if let Some(dir) = std::env::var_os(DATA_DIR_ENV).filter(|d| !d.is_empty()) {
            return Ok(Paths::new(dir));
        }
        directories::ProjectDirs::from("", "", "healer")
            .map(|dirs| Paths::new(dirs.data_dir()))
            .ok_or_else(|| {
                Error::data_dir(
                    PathBuf::from("~"),
                    "no home folder was found to keep data in".to_string(),
                )
            })
    }

    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// A short mark of this data folder (a digest of its path): `HEALER_INSTANCE` in every
    /// run's environment, and part of the name a workflow's secret is kept under, so that two
    /// data folders' processes and secrets are never taken for each other's.
    pub fn instance_mark(&self) -> String {
        use sha2::{Digest, Sha256};
        let digest = Sha256::digest(self.data_dir().to_string_lossy().as_bytes());
        digest.iter().take(6).map(|b| format!("{b:02x}")).collect()
    }

    pub fn db(&self) -> PathBuf {
        self.data_dir.join("healer.db")
    }

    pub fn log_dir(&self) -> PathBuf {
        self.data_dir.join("logs")
    }

    /// Each workflow's folder (its entry script and any extra files) lives in here.
    pub fn workflows_dir(&self) -> PathBuf {
        self.data_dir.join("workflows")
    }

    pub fn workflow_dir(&self, workflow_id: i64) -> PathBuf {
        self.workflows_dir().join(workflow_id.to_string())
    }

    /// The whole output of a workflow's recent attempts (the database keeps a capped copy).
    pub fn run_logs_dir(&self, workflow_id: i64) -> PathBuf {
        self.log_dir().join("runs").join(workflow_id.to_string())
    }

    /// Where the control groups of running attempts are recorded until they end (so that the
    /// next start ends what a crash left).
    pub fn groups_dir(&self) -> PathBuf {
        self.data_dir.join("groups")
    }

    /// Run ends the store could not take when they happened, kept until it can (a full disk,
    /// a database locked too long).
    pub fn pending_dir(&self) -> PathBuf {
        self.data_dir.join("pending")
    }

    /// Agent sessions' ATIF trajectories, written when Healer points at one (a follow-up task,
    /// a session a healer spell started): `session-<id>.json`.
    pub fn trajectories_dir(&self) -> PathBuf {
        self.data_dir.join("trajectories")
    }

    pub fn session_trajectory(&self, session_id: i64) -> PathBuf {
        self.trajectories_dir()
            .join(format!("session-{session_id}.json"))
    }

    pub fn lock_file(&self) -> PathBuf {
        self.data_dir.join("engine.lock")
    }

    /// Create the folders. Fails with a message naming the folder when it cannot be written.
    pub fn ensure(&self) -> Result<()> {
        for dir in [self.data_dir.clone(), self.log_dir()] {
            std::fs::create_dir_all(&dir)
                .map_err(|e| Error::data_dir(dir.clone(), e.to_string()))?;
        }
        Ok(())
    }
}
