use std::path::Path;

use git2::{Repository, WorktreeAddOptions};

use super::open_folder;

/// A repository with one commit and a linked worktree `slot` on branch `healer/t`, as Healer
/// makes them; returns (main checkout, worktree folder).
fn repository_with_worktree(dir: &Path, slot: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    let main = dir.join("repo");
    std::fs::create_dir_all(&main).expect("test setup");
    std::fs::write(main.join("a.txt"), "one\n").expect("test setup");
    crate::project::init_with_first_commit(&main).expect("test setup");
    let repo = Repository::open(&main).expect("test setup");
    let head = repo
        .head()
        .and_then(|h| h.peel_to_commit())
        .expect("test setup");
    let branch = repo
        .branch(&format!("healer/{slot}"), &head, false)
        .expect("test setup");
    let folder = dir.join("slots").join(slot);
    std::fs::create_dir_all(folder.parent().expect("parent")).expect("test setup");
    let mut options = WorktreeAddOptions::new();
    options.reference(Some(branch.get()));
    repo.worktree(&format!("healer-{slot}"), &folder, Some(&options))
        .expect("test setup");
    (main, folder)
}

fn refused(folder: &Path) -> String {
    match open_folder(folder) {
        Ok(repo) => panic!(
            "opened {} with git data at {}",
            folder.display(),
            repo.path().display()
        ),
        Err(e) => e.to_string(),
    }
}

#[test]
fn a_worktree_git_made_opens_on_its_own_branch_with_its_own_files() {
    let dir = tempfile::tempdir().expect("test setup");
    let (_, folder) = repository_with_worktree(dir.path(), "s1");
    let repo = open_folder(&folder).expect("opens");
    assert_eq!(
        std::fs::canonicalize(repo.workdir().expect("workdir")).expect("real"),
        std::fs::canonicalize(&folder).expect("real")
    );
    assert_eq!(
        repo.head().expect("head").shorthand(),
        Ok("healer/s1"),
        "the worktree's own HEAD"
    );
}

#[test]
fn a_plain_checkout_opens_and_one_whose_settings_move_its_files_is_refused() {
    let dir = tempfile::tempdir().expect("test setup");
    let (main, _) = repository_with_worktree(dir.path(), "s1");
    assert!(open_folder(&main).is_ok());
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).expect("test setup");
    Repository::open(&main)
        .and_then(|r| r.config())
        .and_then(|mut c| c.set_str("core.worktree", &elsewhere.display().to_string()))
        .expect("test setup");
    let why = refused(&main);
    assert!(why.contains("working files elsewhere"), "{why}");
}

#[test]
fn a_worktree_whose_git_file_names_the_persons_repository_is_refused() {
    let dir = tempfile::tempdir().expect("test setup");
    let (main, folder) = repository_with_worktree(dir.path(), "s1");
    std::fs::write(
        folder.join(".git"),
        format!("gitdir: {}\n", main.join(".git").display()),
    )
    .expect("test setup");
    let why = refused(&folder);
    assert!(why.contains("Healer will not use the git data"), "{why}");
}

#[test]
fn a_worktree_whose_git_file_names_another_worktree_is_refused() {
    let dir = tempfile::tempdir().expect("test setup");
    let (main, folder) = repository_with_worktree(dir.path(), "s1");
    let repo = Repository::open(&main).expect("test setup");
    let head = repo
        .head()
        .and_then(|h| h.peel_to_commit())
        .expect("test setup");
    let other_branch = repo.branch("main-too", &head, false).expect("test setup");
    let other = dir.path().join("slots/s2");
    let mut options = WorktreeAddOptions::new();
    options.reference(Some(other_branch.get()));
    repo.worktree("healer-s2", &other, Some(&options))
        .expect("test setup");
    std::fs::write(
        folder.join(".git"),
        format!(
            "gitdir: {}\n",
            main.join(".git/worktrees/healer-s2").display()
        ),
    )
    .expect("test setup");
    let why = refused(&folder);
    assert!(why.contains("another folder's worktree"), "{why}");
}

#[test]
fn a_made_up_worktree_entry_is_refused_inside_the_folder_or_out() {
    let dir = tempfile::tempdir().expect("test setup");
    let (main, folder) = repository_with_worktree(dir.path(), "s1");
    // Made up where a sandboxed check can write: inside the worktree, and in a temp folder.
    for (at, expect) in [
        (folder.join("evil/worktrees/healer-s1"), "inside the folder"),
        (
            dir.path().join("tmp/evil/worktrees/healer-s1"),
            "another repository",
        ),
    ] {
        std::fs::create_dir_all(&at).expect("test setup");
        std::fs::write(at.join("HEAD"), "ref: refs/heads/main\n").expect("test setup");
        std::fs::write(
            at.join("commondir"),
            format!("{}\n", main.join(".git").display()),
        )
        .expect("test setup");
        std::fs::write(
            at.join("gitdir"),
            format!("{}\n", folder.join(".git").display()),
        )
        .expect("test setup");
        std::fs::write(folder.join(".git"), format!("gitdir: {}\n", at.display()))
            .expect("test setup");
        let why = refused(&folder);
        assert!(why.contains(expect), "{why}");
    }
}

#[test]
fn a_git_that_is_a_link_or_not_a_git_line_is_refused() {
    let dir = tempfile::tempdir().expect("test setup");
    let (main, folder) = repository_with_worktree(dir.path(), "s1");
    std::fs::remove_file(folder.join(".git")).expect("test setup");
    std::os::unix::fs::symlink(main.join(".git"), folder.join(".git")).expect("test setup");
    assert!(refused(&folder).contains("is a link"));
    std::fs::remove_file(folder.join(".git")).expect("test setup");
    std::fs::write(folder.join(".git"), "[core]\n\tworktree = /\n").expect("test setup");
    assert!(refused(&folder).contains("not one git wrote"));
}

#[test]
fn a_git_folder_that_borrows_the_persons_repository_is_refused() {
    let dir = tempfile::tempdir().expect("test setup");
    let (main, folder) = repository_with_worktree(dir.path(), "s1");
    let person = std::fs::canonicalize(main.join(".git")).expect("real");
    // A .git folder whose commondir is the person's: HEAD of its own, refs and objects theirs.
    std::fs::remove_file(folder.join(".git")).expect("test setup");
    std::fs::create_dir(folder.join(".git")).expect("test setup");
    std::fs::write(
        folder.join(".git/commondir"),
        format!("{}\n", person.display()),
    )
    .expect("test setup");
    std::fs::write(folder.join(".git/HEAD"), "ref: refs/heads/main\n").expect("test setup");
    let why = refused(&folder);
    assert!(why.contains("outside the project's repository"), "{why}");

    // A .git folder of its own whose refs and objects are links into the person's.
    std::fs::remove_dir_all(folder.join(".git")).expect("test setup");
    std::fs::create_dir(folder.join(".git")).expect("test setup");
    std::fs::write(folder.join(".git/HEAD"), "ref: refs/heads/main\n").expect("test setup");
    for linked in ["refs", "objects"] {
        std::os::unix::fs::symlink(person.join(linked), folder.join(".git").join(linked))
            .expect("test setup");
    }
    let why = refused(&folder);
    assert!(why.contains("not a project's repository"), "{why}");
}

#[test]
fn a_made_up_repository_in_a_temp_folder_with_the_persons_refs_is_refused() {
    let dir = tempfile::tempdir().expect("test setup");
    let (main, folder) = repository_with_worktree(dir.path(), "s1");
    let person = std::fs::canonicalize(main.join(".git")).expect("real");
    let evil = dir.path().join("tmp/evil");
    let entry = evil.join("worktrees/x");
    std::fs::create_dir_all(&entry).expect("test setup");
    for linked in ["refs", "objects"] {
        std::os::unix::fs::symlink(person.join(linked), evil.join(linked)).expect("test setup");
    }
    std::fs::write(evil.join("HEAD"), "ref: refs/heads/main\n").expect("test setup");
    std::fs::write(entry.join("HEAD"), "ref: refs/heads/main\n").expect("test setup");
    std::fs::write(entry.join("commondir"), "../..\n").expect("test setup");
    std::fs::write(
        entry.join("gitdir"),
        format!("{}\n", folder.join(".git").display()),
    )
    .expect("test setup");
    std::fs::write(
        folder.join(".git"),
        format!("gitdir: {}\n", entry.display()),
    )
    .expect("test setup");
    let why = refused(&folder);
    assert!(why.contains("not a project's repository"), "{why}");
}
