//! The whole output of an attempt, kept on disk beside the capped copy in the database, so a
//! person can take away a log of any length ("Download full log"). Bounded per stream, and only
//! the newest runs of each workflow are kept.

use std::path::{Path, PathBuf};

use tokio::io::{AsyncWriteExt, BufWriter};

use super::OutputStream;

/// The most bytes of one stream of one attempt kept on disk.
pub const FULL_LOG_MAX_BYTES: u64 = 100 * 1024 * 1024;
/// Bytes held back from the file until more output arrives, so that a secret split across two
/// reads is still whole when it is redacted (longer than any key).
const HELD_BACK_BYTES: usize = 1024;
/// How many runs of each workflow keep their full logs.
pub const FULL_LOG_RUNS_KEPT: usize = 20;

/// `<dir>/<run>-<attempt>-<stream>.log`.
pub fn full_log_path(dir: &Path, run_id: i64, attempt: u32, stream: OutputStream) -> PathBuf {
    let name = match stream {
        OutputStream::Stdout => "stdout",
        OutputStream::Stderr => "stderr",
    };
    dir.join(format!("{run_id}-{attempt}-{name}.log"))
}

/// Writes one stream to its file; a file that cannot be written is given up on quietly (the
/// capped copy in the database is still kept), with a warning in Healer's own log.
pub(super) struct FullLog {
    file: Option<BufWriter<tokio::fs::File>>,
    written: u64,
    /// The newest output, not yet redacted and written.
    held: Vec<u8>,
}

impl FullLog {
    pub(super) async fn open(path: Option<PathBuf>) -> FullLog {
        let mut file = None;
        if let Some(path) = path {
            if let Some(dir) = path.parent() {
                let _ = tokio::fs::create_dir_all(dir).await;
            }
            match tokio::fs::File::create(&path).await {
                Ok(f) => file = Some(BufWriter::new(f)),
                Err(e) => tracing::warn!("cannot keep the full log at {}: {e}", path.display()),
            }
        }
        FullLog {
            file,
            written: 0,
            held: Vec::new(),
        }
    }

    /// Keep `bytes` (redacted of known secrets) after what was written before.
    pub(super) async fn write(&mut self, bytes: &[u8]) {
        if self.file.is_none() {
            return;
        }
        self.held.extend_from_slice(bytes);
        if self.held.len() <= 2 * HELD_BACK_BYTES {
            return;
        }
        // A secret still arriving sits in the last bytes: everything before them is final.
        let redacted = crate::secrets::redact_bytes(&self.held).into_owned();
        let cut = redacted.len().saturating_sub(HELD_BACK_BYTES);
        self.held = redacted.get(cut..).unwrap_or_default().to_vec();
        self.write_final(redacted.get(..cut).unwrap_or_default())
            .await;
    }

    async fn write_final(&mut self, bytes: &[u8]) {
        let Some(file) = self.file.as_mut() else {
            return;
        };
        let room = FULL_LOG_MAX_BYTES.saturating_sub(self.written);
        let take = usize::try_from(room).unwrap_or(usize::MAX).min(bytes.len());
        let ok = file
            .write_all(bytes.get(..take).unwrap_or_default())
            .await
            .is_ok();
        self.written += take as u64;
        if !ok || take < bytes.len() {
            if ok {
                let note = format!(
                    "\n… Healer stopped keeping this log at {} MiB …\n",
                    FULL_LOG_MAX_BYTES / (1024 * 1024)
                );
                let _ = file.write_all(note.as_bytes()).await;
            }
            self.held.clear();
            self.shut().await;
        }
    }

    pub(super) async fn close(&mut self) {
        let rest = std::mem::take(&mut self.held);
        if !rest.is_empty() {
            let redacted = crate::secrets::redact_bytes(&rest).into_owned();
            self.write_final(&redacted).await;
        }
        self.shut().await;
    }

    async fn shut(&mut self) {
        if let Some(mut file) = self.file.take() {
            let _ = file.flush().await;
        }
    }
}

/// Remove the full logs of all but the newest [`FULL_LOG_RUNS_KEPT`] runs in `dir`.
pub fn prune_full_logs(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let files: Vec<(i64, PathBuf)> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter_map(|p| {
            let run = p.file_name()?.to_str()?.split('-').next()?.parse().ok()?;
            Some((run, p))
        })
        .collect();
    let mut runs: Vec<i64> = files.iter().map(|(r, _)| *r).collect();
    runs.sort_unstable_by(|a, b| b.cmp(a));
    runs.dedup();
    let Some(&oldest_kept) = runs.get(FULL_LOG_RUNS_KEPT.saturating_sub(1)) else {
        return;
    };
    for (run, path) in files {
        if run < oldest_kept {
            let _ = std::fs::remove_file(path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_newest_runs_keep_their_full_logs() {
        let dir = tempfile::tempdir().expect("dir");
        for run in 1..=25 {
            for stream in [OutputStream::Stdout, OutputStream::Stderr] {
                std::fs::write(full_log_path(dir.path(), run, 1, stream), "x").expect("write");
            }
        }
        prune_full_logs(dir.path());
        let mut left: Vec<String> = std::fs::read_dir(dir.path())
            .expect("read")
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .collect();
        left.sort();
        assert_eq!(left.len(), FULL_LOG_RUNS_KEPT * 2);
        assert!(left.contains(&"6-1-stdout.log".to_string()));
        assert!(!left.contains(&"5-1-stdout.log".to_string()));
    }
}

#[cfg(test)]
mod redaction {
    use super::*;

    #[tokio::test]
    async fn a_secret_split_across_two_reads_is_redacted_in_the_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("out.log");
        let secret = "sk-fulllog-4b1d2c9e8f7a6b5c4d3e2f1a";
        crate::secrets::remember(secret);
        let mut log = FullLog::open(Some(path.clone())).await;
        let filler = "x".repeat(3000);
        let (head, tail) = secret.split_at(10);
        log.write(format!("{filler}{head}").as_bytes()).await;
        log.write(format!("{tail}\n{filler}").as_bytes()).await;
        log.close().await;
        let text = std::fs::read_to_string(&path).expect("log");
        assert!(!text.contains(secret), "the secret reached the file");
        assert!(text.contains(crate::secrets::REDACTED));
        assert_eq!(text.matches('x').count(), 6000, "nothing else was lost");
    }
}
