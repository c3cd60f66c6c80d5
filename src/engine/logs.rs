//! "Download full log": the whole output of an attempt, copied from where the engine keeps it
//! into the person's Downloads folder under a name that says what it is.

use std::path::PathBuf;

use super::Handle;
use crate::error::{Error, Result};
use crate::workflow::runner::{full_log_path, OutputStream, FULL_LOG_RUNS_KEPT};

impl Handle {
    /// Copy the full log of one stream of an attempt into the Downloads folder (the home folder
    /// when there is none); returns where it went.
    pub fn export_full_log(
        &self,
        run_id: i64,
        attempt: u32,
        stream: OutputStream,
    ) -> Result<String> {
        self.export_full_log_to(run_id, attempt, stream, &downloads_folder()?)
    }

    /// As [`Handle::export_full_log`], into `folder`.
    pub fn export_full_log_to(
        &self,
        run_id: i64,
        attempt: u32,
        stream: OutputStream,
        folder: &std::path::Path,
    ) -> Result<String> {
        let run = self.services.store.run(run_id)?;
        let workflow = self.services.store.workflow(run.workflow_id)?;
        let source = full_log_path(
            &self.services.paths.run_logs_dir(run.workflow_id),
            run_id,
            attempt,
            stream,
        );
        if !source.exists() {
            return Err(Error::NotFound {
                what: format!(
                    "the full log of run {run_id} (Healer keeps the whole output of the last \
                     {FULL_LOG_RUNS_KEPT} runs of each workflow; the page still shows its start \
                     and end)"
                ),
            });
        }
        let which = match stream {
            OutputStream::Stdout => "output",
            OutputStream::Stderr => "error-output",
        };
        // Named as the window names the run (#1, #2 … of this workflow), not by its id.
        let number = if run.number > 0 {
            i64::from(run.number)
        } else {
            run_id
        };
        let target = free_name(
            folder,
            &format!("{}-run-{number}-try-{attempt}-{which}", workflow.name),
        );
        std::fs::create_dir_all(folder)
            .map_err(|e| Error::io(format!("cannot create {}", folder.display()), e))?;
        std::fs::copy(&source, &target)
            .map_err(|e| Error::io(format!("cannot copy the log to {}", target.display()), e))?;
        Ok(target.display().to_string())
    }
}

pub(super) fn downloads_folder() -> Result<PathBuf> {
    let dirs = directories::UserDirs::new().ok_or_else(|| {
        Error::data_dir(
            PathBuf::from("~"),
            "no home folder was found to save the log in".to_string(),
        )
    })?;
    Ok(dirs
        .download_dir()
        .map_or_else(|| dirs.home_dir().join("Downloads"), PathBuf::from))
}

/// `<stem>.log`, or `<stem> (2).log` … when that name is taken.
fn free_name(folder: &std::path::Path, stem: &str) -> PathBuf {
    let mut path = folder.join(format!("{stem}.log"));
    let mut n = 2;
    while path.exists() {
        path = folder.join(format!("{stem} ({n}).log"));
        n += 1;
    }
    path
}
