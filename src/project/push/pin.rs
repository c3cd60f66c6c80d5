//! A rewind of a task's pushed branch, carried out on its remote by Healer itself: the tip
//! kept under a name of Healer's first, then the branch put back.

use std::path::Path;

use git2::Repository;

use super::{
    checked_branch, is_full_hash, send, How, PushError, PushFailure, Remote, PUSH_TIME_LIMIT,
};

/// The name under which a rewind keeps a task branch's earlier tip on its remote.
pub fn pin_name(task_id: &str, seq: u32) -> String {
    format!("{PIN_PREFIX}{task_id}/{seq}")
}

/// Where rewinds keep what a pushed branch held.
const PIN_PREFIX: &str = "refs/healer/pinned/";

/// Put the remote's `branch` (one of Healer's) back to `to`, a commit of this repository,
/// after keeping its tip `tip` on the remote as `pin` ([`pin_name`]): the branch is replaced
/// only while it still stands at `tip`, so nothing anyone pushed after it is lost, and what it
/// held stays reachable from the pin.
pub async fn pin_then_move(
    repo: &Path,
    remote: &Remote,
    branch: &str,
    tip: &str,
    pin: &str,
    to: &str,
) -> Result<(), PushError> {
    let full = checked_branch(branch)?;
    let pin_ok = pin.len() > PIN_PREFIX.len()
        && pin.starts_with(PIN_PREFIX)
        && git2::Reference::is_valid_name(pin);
    if !pin_ok || !is_full_hash(tip) || !is_full_hash(to) {
        return Err(PushError::new(
            PushFailure::Refused,
            format!("Healer refused to put {branch} back on the remote: a name or commit it was given is not one it makes"),
        ));
    }
    if remote.name.starts_with('-')
        || Repository::open(repo).is_ok_and(|r| r.find_remote(&remote.name).is_err())
    {
        return Err(PushError::new(
            PushFailure::NoRemote,
            format!(
                "The repository has no remote named \"{}\", so {branch} was not put back there",
                remote.name
            ),
        ));
    }
    // Healer's own doing, not the person's: no hook of theirs runs, no tag or submodule goes
    // along; the pin is Healer's name, so whatever sits there (planted by an agent) is
    // replaced.
    send(repo, remote, branch, tip, pin, How::Pin, PUSH_TIME_LIMIT).await?;
    let back = How::Rewind { lease: tip };
    send(repo, remote, branch, to, &full, back, PUSH_TIME_LIMIT).await?;
    Ok(())
}
