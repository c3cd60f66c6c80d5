//! The engine's API for running on more computers (Settings → "Run on more computers", the
//! workflow page's "Runs on" picker, Stop on a run in progress on the cluster).

use super::Handle;
use crate::cluster::{self, ClusterSettings, ClusterStatus, QueueWorkers, RunsOn};
use crate::error::Result;
use crate::events::Event;

impl Handle {
    /// The connection, whether the cluster answers, and the workers of each queue in use.
    pub async fn cluster_status(&self) -> Result<ClusterStatus> {
        let keep = self.services.llm.keep();
        cluster::cluster_status(&self.services.store, &keep, self.services.instance()).await
    }

    /// Ask the cluster at `settings` whether it answers and who polls its queue, saving nothing.
    pub async fn test_cluster(&self, settings: ClusterSettings) -> Result<QueueWorkers> {
        let keep = self.services.llm.keep();
        cluster::test_cluster(&keep, self.services.instance(), &settings).await
    }

    /// Connect: saved only when the cluster answers.
    pub async fn connect_cluster(&self, settings: ClusterSettings) -> Result<ClusterStatus> {
        let keep = self.services.llm.keep();
        let status = cluster::connect_cluster(
            &self.services.store,
            &keep,
            self.services.instance(),
            settings,
        )
        .await?;
        self.services.bus.emit(Event::ClusterChanged {
            what: "connected to the cluster".to_string(),
        })?;
        Ok(status)
    }

    /// Bring every workflow back to this computer and forget the cluster.
    pub async fn disconnect_cluster(&self) -> Result<Vec<String>> {
        let keep = self.services.llm.keep();
        let back =
            cluster::disconnect_cluster(&self.services.store, &keep, self.services.instance())
                .await?;
        self.services.wake.scheduler.notify_one();
        self.services.bus.emit(Event::ClusterChanged {
            what: "every workflow runs on this computer again".to_string(),
        })?;
        Ok(back)
    }

    /// Where a workflow runs.
    pub fn runs_on(&self, workflow_id: i64) -> Result<RunsOn> {
        cluster::runs_on(&self.services.store, workflow_id)
    }

    /// Choose where a workflow runs (the cluster needs a connection).
    pub fn set_runs_on(&self, workflow_id: i64, runs_on: RunsOn) -> Result<RunsOn> {
        let chosen = cluster::set_runs_on(&self.services.store, workflow_id, runs_on)?;
        let workflow = self.services.store.workflow(workflow_id)?;
        self.services.wake.scheduler.notify_one();
        self.services.bus.emit(Event::WorkflowChanged {
            workflow_id,
            title: workflow.title,
            what: match &chosen {
                RunsOn::Local => "runs on this computer".to_string(),
                RunsOn::Cluster { queue } => format!("runs on the cluster (queue {queue})"),
            },
        })?;
        Ok(chosen)
    }

    /// Stop a run in progress on the cluster: its attempt is cancelled and the worker ends the
    /// script's processes; the run is then stored as stopped.
    pub async fn stop_run(&self, run_id: i64) -> Result<()> {
        let keep = self.services.llm.keep();
        cluster::stop_cluster_run(
            &self.services.store,
            &keep,
            self.services.instance(),
            run_id,
        )
        .await
    }

    /// Save the cluster key for workers (readable by its owner only) where the person chose
    /// (`to`, from the window's save dialog), else in the Downloads folder; the file's path.
    pub async fn export_cluster_key(&self, to: Option<std::path::PathBuf>) -> Result<String> {
        let (folder, name) = match to {
            Some(path) => {
                let name = path
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .filter(|n| !n.is_empty())
                    .ok_or_else(|| {
                        crate::error::Error::InvalidInput(
                            "choose a file name for the key".to_string(),
                        )
                    })?;
                let folder = path
                    .parent()
                    .map(std::path::Path::to_path_buf)
                    .unwrap_or_default();
                (folder, name)
            }
            None => (
                super::logs::downloads_folder()?,
                "healer-cluster.key".to_string(),
            ),
        };
        let keep = self.services.llm.keep();
        let instance = self.services.instance().to_string();
        let key = tokio::task::spawn_blocking(move || {
            crate::cluster::connection::control_key(&keep, &instance)
        })
        .await
        .map_err(|e| crate::error::Error::Internal(format!("the key task failed: {e}")))??;
        std::fs::create_dir_all(&folder).map_err(|e| {
            crate::error::Error::io(format!("cannot create {}", folder.display()), e)
        })?;
        let path = folder.join(name);
        crate::cluster::connection::write_key_file(&path, &key)?;
        Ok(path.display().to_string())
    }

    /// Where workers reach the model gateway for agent sessions, and the workers that may.
    pub fn worker_gateway(&self) -> Result<cluster::gateway_access::WorkerGateway> {
        cluster::gateway_access::worker_gateway(&self.services.store)
    }

    /// Let workers reach the model gateway on `listen` (host:port).
    pub fn open_gateway_to_workers(
        &self,
        listen: &str,
    ) -> Result<cluster::gateway_access::WorkerGateway> {
        let gateway = cluster::gateway_access::open_to_workers(&self.services.store, listen)?;
        self.services.bus.emit(Event::ClusterChanged {
            what: "workers reach the model gateway".to_string(),
        })?;
        Ok(gateway)
    }

    /// A new token for worker `name` (shown once; only its hash is kept).
    pub fn make_worker_token(&self, name: &str) -> Result<String> {
        let token = cluster::gateway_access::make_worker_token(&self.services.store, name)?;
        self.services.bus.emit(Event::ClusterChanged {
            what: format!("a token for the worker {}", name.trim()),
        })?;
        Ok(token)
    }

    /// Take back worker `name`'s token: refused from now on.
    pub fn forget_worker_token(
        &self,
        name: &str,
    ) -> Result<cluster::gateway_access::WorkerGateway> {
        cluster::gateway_access::forget_worker(&self.services.store, name)?;
        self.services.bus.emit(Event::ClusterChanged {
            what: format!("the worker {}'s token taken back", name.trim()),
        })?;
        self.worker_gateway()
    }
}
