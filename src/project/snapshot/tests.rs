use super::*;
use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

fn repo_with_files(dir: &Path) -> Repository {
    let repo = Repository::init(dir).expect("test setup");
    std::fs::write(dir.join("a.txt"), "one\n").expect("test setup");
    std::fs::create_dir_all(dir.join("src")).expect("test setup");
    std::fs::write(dir.join("src/lib.rs"), "fn main() {}\n").expect("test setup");
    std::fs::write(dir.join(".gitignore"), "target/\n").expect("test setup");
    crate::project::init_with_first_commit(dir).expect("test setup");
    repo
}

/// Every file under `dir` (not `.git`, not ignored `target/`, not `.healer/`) with its
/// bytes and executable bit.
fn files(dir: &Path) -> BTreeMap<PathBuf, (Vec<u8>, bool)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("test setup") {
            let p = e.expect("test setup").path();
            let rel = p.strip_prefix(dir).expect("test setup").to_path_buf();
            let first = rel
                .components()
                .next()
                .expect("test setup")
                .as_os_str()
                .to_owned();
            if first == ".git" || first == "target" || first == ".healer" {
                continue;
            }
            if p.is_dir() {
                stack.push(p);
            } else {
                let exec = p.metadata().expect("test setup").permissions().mode() & 0o111 != 0;
                out.insert(rel, (std::fs::read(&p).expect("test setup"), exec));
            }
        }
    }
    out
}

fn dirty(dir: &Path) {
    std::fs::write(dir.join("a.txt"), "one\nchanged by the agent\n").expect("test setup");
    std::fs::remove_file(dir.join("src/lib.rs")).expect("test setup");
    std::fs::create_dir_all(dir.join("new/deep")).expect("test setup");
    std::fs::write(
        dir.join("new/deep/untracked.bin"),
        [0u8, 159, 146, 150, 255],
    )
    .expect("test setup");
    std::fs::write(dir.join("run.sh"), "#!/bin/sh\necho hi\n").expect("test setup");
    std::fs::set_permissions(dir.join("run.sh"), std::fs::Permissions::from_mode(0o755))
        .expect("test setup");
    std::fs::create_dir_all(dir.join("target")).expect("test setup");
    std::fs::write(dir.join("target/build.o"), "ignored").expect("test setup");
}

#[test]
fn a_restored_snapshot_matches_every_file_byte_for_byte_untracked_included() {
    let tmp = tempfile::tempdir().expect("test setup");
    let dir = tmp.path();
    let repo = repo_with_files(dir);
    let index_before = std::fs::read(dir.join(".git/index")).expect("test setup");
    let head_before = repo
        .head()
        .expect("test setup")
        .target()
        .expect("test setup");
    dirty(dir);
    let pinned_files = files(dir);

    let pinned = pin(dir, "t-1", "before a rewind").expect("test setup");
    assert_eq!(pinned.ref_name, "refs/healer/snapshots/t-1/1");
    assert_eq!(pinned.seq, 1);
    // Pinning left the real index and HEAD alone.
    assert_eq!(
        std::fs::read(dir.join(".git/index")).expect("test setup"),
        index_before
    );
    assert_eq!(
        repo.head()
            .expect("test setup")
            .target()
            .expect("test setup"),
        head_before
    );
    assert_eq!(files(dir), pinned_files);

    // Something else happens to the worktree: back to its commit, then more changes.
    std::fs::write(dir.join("a.txt"), "one\n").expect("test setup");
    std::fs::write(dir.join("src/lib.rs"), "fn main() {}\n").expect("test setup");
    std::fs::remove_dir_all(dir.join("new")).expect("test setup");
    std::fs::remove_file(dir.join("run.sh")).expect("test setup");
    std::fs::write(dir.join("later.txt"), "written after the snapshot").expect("test setup");

    let restored = restore(dir, "t-1", &pinned.commit).expect("test setup");
    assert_eq!(files(dir), pinned_files, "every file back, byte for byte");
    assert!(restored.written >= 3, "{restored:?}");
    assert_eq!(restored.removed, 2, "later.txt and the tracked src/lib.rs");
    // The ignored build output was left alone.
    assert_eq!(
        std::fs::read(dir.join("target/build.o")).expect("test setup"),
        b"ignored"
    );
    // What the restore replaced is itself pinned, so it can be had back.
    let previous = restored.previous.expect("test setup");
    assert_eq!(previous.seq, 2);
    restore(dir, "t-1", &previous.commit).expect("test setup");
    assert_eq!(
        std::fs::read(dir.join("later.txt")).expect("test setup"),
        b"written after the snapshot"
    );
    assert_eq!(
        list(dir, "t-1")
            .expect("test setup")
            .iter()
            .map(|p| p.seq)
            .collect::<Vec<_>>(),
        vec![1, 2, 3]
    );
}

#[test]
fn a_snapshot_is_taken_while_another_git_process_holds_the_index_lock() {
    let tmp = tempfile::tempdir().expect("test setup");
    let dir = tmp.path();
    repo_with_files(dir);
    dirty(dir);
    let expected = files(dir);
    std::fs::write(dir.join(".git/index.lock"), "").expect("test setup");
    let pinned = pin(dir, "t-2", "locked").expect("test setup");
    std::fs::remove_file(dir.join("a.txt")).expect("test setup");
    restore(dir, "t-2", &pinned.commit).expect("test setup");
    assert_eq!(files(dir), expected);
    assert!(
        dir.join(".git/index.lock").exists(),
        "the other process's lock is kept"
    );
}

#[test]
fn healers_own_folder_is_neither_pinned_nor_rewritten() {
    let tmp = tempfile::tempdir().expect("test setup");
    let dir = tmp.path();
    repo_with_files(dir);
    std::fs::create_dir_all(dir.join(".healer")).expect("test setup");
    std::fs::write(dir.join(".healer/tasks.jsonl"), "before\n").expect("test setup");
    let pinned = pin(dir, "t-3", "x").expect("test setup");
    std::fs::write(dir.join(".healer/tasks.jsonl"), "after\n").expect("test setup");
    std::fs::write(dir.join("a.txt"), "changed").expect("test setup");
    restore(dir, "t-3", &pinned.commit).expect("test setup");
    assert_eq!(
        std::fs::read(dir.join(".healer/tasks.jsonl")).expect("test setup"),
        b"after\n"
    );
    assert_eq!(
        std::fs::read(dir.join("a.txt")).expect("test setup"),
        b"one\n"
    );
}

#[test]
fn a_deleted_worktree_is_said_plainly() {
    let tmp = tempfile::tempdir().expect("test setup");
    let gone = tmp.path().join("gone");
    let err = pin(&gone, "t-4", "x").expect_err("an error");
    assert!(err.to_string().contains("gone"), "{err}");
    assert!(matches!(err, Error::NotFound { .. }));
}

#[test]
fn a_snapshot_of_a_worktree_is_kept_in_the_main_repository() {
    let tmp = tempfile::tempdir().expect("test setup");
    let main = tmp.path().join("main");
    std::fs::create_dir_all(&main).expect("test setup");
    repo_with_files(&main);
    let slot = tmp.path().join("slot");
    super::super::worktree::prepare(&main, "master", "t-5", &slot)
        .or_else(|_| super::super::worktree::prepare(&main, "main", "t-5", &slot))
        .expect("test setup");
    std::fs::write(slot.join("wip.txt"), "work in progress").expect("test setup");
    let pinned = pin(&slot, "t-5", "x").expect("test setup");
    let seen = all_refs(&main).expect("test setup");
    assert_eq!(seen, vec![(pinned.ref_name.clone(), pinned.commit.clone())]);
}

#[test]
fn a_recorded_snapshot_is_restored_by_its_id_and_a_ref_left_unrecorded_is_found() {
    let tmp = tempfile::tempdir().expect("test setup");
    let dir = tmp.path().join("repo");
    std::fs::create_dir_all(&dir).expect("test setup");
    repo_with_files(&dir);
    let store = Store::open(&tmp.path().join("h.db")).expect("test setup");
    let p = store
        .insert_project("p", &dir.display().to_string(), &Default::default())
        .expect("test setup");
    dirty(&dir);
    let expected = files(&dir);
    let snap = take(&store, p.id, &dir, "t-6", "before a rewind").expect("test setup");
    assert_eq!(snap.ref_name, "refs/healer/snapshots/t-6/1");
    std::fs::write(dir.join("a.txt"), "rewound").expect("test setup");
    let restored = restore_recorded(&store, snap.id).expect("test setup");
    assert_eq!(files(&dir), expected);
    assert!(store
        .snapshot(snap.id)
        .expect("test setup")
        .restored_at
        .is_some());
    // The state the restore replaced is recorded as a snapshot too.
    let all = store
        .snapshots(Some(p.id), Some("t-6"))
        .expect("test setup");
    assert_eq!(all.len(), 2);
    assert_eq!(
        all[0].ref_name,
        restored.previous.expect("test setup").ref_name
    );

    // A pin whose recording never happened (Healer killed between the two).
    let orphan = pin(&dir, "t-7", "x").expect("test setup");
    let wt = dir.display().to_string();
    let found = record_unrecorded(&store, p.id, &dir, &|task| {
        (task == "t-7").then(|| wt.clone())
    })
    .expect("test setup");
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].ref_name, orphan.ref_name);
    assert_eq!(found[0].task_id, "t-7");
    assert_eq!(found[0].seq, 1);
    assert!(record_unrecorded(&store, p.id, &dir, &|_| None)
        .expect("test setup")
        .is_empty());
}

/// A branch with a green commit, red work committed after it, and more changes not
/// committed; pinned, rewound to the green commit (another git program holding the index
/// when `locked`), and the pinned snapshot restored.
fn rewind_story(locked: bool) {
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = tmp.path();
    let repo = repo_with_files(dir);
    let green = repo.head().expect("head").target().expect("oid");
    let at_green = files(dir);
    // The agent committed red work itself, then changed more.
    std::fs::write(dir.join("a.txt"), "red\n").expect("write");
    let mut index = repo.index().expect("index");
    index
        .add_all(["*"], IndexAddOption::DEFAULT, None)
        .expect("add");
    index.write().expect("index");
    let tree = repo
        .find_tree(index.write_tree().expect("tree"))
        .expect("tree");
    let who = Signature::now("a", "a@a").expect("sig");
    let parent = repo.find_commit(green).expect("commit");
    let red = repo
        .commit(Some("HEAD"), &who, &who, "red", &tree, &[&parent])
        .expect("commit");
    dirty(dir);
    let before = files(dir);
    let lock = dir.join(".git/index.lock");
    if locked {
        std::fs::write(&lock, "").expect("test setup");
    }

    let pinned = pin(dir, "t-8", "before going back").expect("pin");
    let done = rewind(dir, &green.to_string(), true).expect("rewind");
    assert_eq!(done.index_left.is_some(), locked, "{:?}", done.index_left);
    assert_eq!(
        lock.exists(),
        locked,
        "the other program's lock is left alone"
    );
    assert_eq!(files(dir), at_green, "the files of the green commit");
    assert_eq!(
        repo.head().expect("head").target(),
        Some(green),
        "the branch moved back"
    );
    // The red commit is still reachable: the snapshot's parent.
    let snap = repo
        .find_commit(Oid::from_str(&pinned.commit).expect("oid"))
        .expect("snapshot");
    assert_eq!(snap.parent_id(0).expect("parent"), red);
    restore(dir, "t-8", &pinned.commit).expect("restore");
    assert_eq!(files(dir), before);
}

#[test]
fn a_rewind_to_an_older_commit_moves_the_branch_and_the_snapshot_keeps_what_came_after() {
    rewind_story(false);
}

#[test]
fn a_rewind_to_an_older_commit_works_while_another_git_program_holds_the_index() {
    rewind_story(true);
}
