//! tracing to stderr, and for long-running processes also to a daily file in the data folder
//! (the last 7 kept). `HEALER_LOG` sets the filter (e.g. `debug`, `healer=trace`).

use std::path::Path;

use tracing_appender::non_blocking::WorkerGuard;
use tracing_appender::rolling::{Builder, Rotation};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{fmt, EnvFilter, Layer};

/// How many daily log files are kept.
pub const KEEP_LOG_FILES: usize = 7;

/// Keeps the file writer flushing; drop it last.
pub struct LogGuard {
    _file: Option<WorkerGuard>,
}

/// Log to stderr at `default_level`, and to files in `log_dir` when given.
pub fn init(default_level: &str, log_dir: Option<&Path>) -> LogGuard {
    let filter =
        || EnvFilter::try_from_env("HEALER_LOG").unwrap_or_else(|_| EnvFilter::new(default_level));
    let stderr = fmt::layer()
        .with_writer(|| Redacting(std::io::stderr()))
        .with_target(false)
        .with_filter(filter());

    let mut problem = None;
    let (file_layer, guard) = match log_dir.map(|dir| {
        Builder::new()
            .rotation(Rotation::DAILY)
            .filename_prefix("healer")
            .filename_suffix("log")
            .max_log_files(KEEP_LOG_FILES)
            .build(dir)
    }) {
        Some(Ok(appender)) => {
            let (writer, guard) = tracing_appender::non_blocking(appender);
            let layer = fmt::layer()
                .with_writer(move || Redacting(writer.clone()))
                .with_ansi(false)
                .with_filter(filter());
            (Some(layer), Some(guard))
        }
        Some(Err(e)) => {
            problem = Some(e.to_string());
            (None, None)
        }
        None => (None, None),
    };

    // A second init (tests, an embedding app) keeps the first subscriber.
    let _ = tracing_subscriber::registry()
        .with(stderr)
        .with(file_layer)
        .try_init();
    if let Some(problem) = problem {
        tracing::warn!("logging to stderr only: cannot write log files: {problem}");
    }
    LogGuard { _file: guard }
}

/// A log writer that redacts every known secret from each line before it is written (the
/// formatter hands over one whole line per write).
struct Redacting<W>(W);

impl<W: std::io::Write> std::io::Write for Redacting<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match std::str::from_utf8(buf) {
            Ok(text) => self
                .0
                .write_all(crate::secrets::redact(text).as_bytes())
                .map(|()| buf.len()),
            Err(_) => self.0.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}
