//! Pushing a task's branch to the repository's remote with the person's own git: to a bare
//! repository on disk, and over HTTP to `git http-backend` (with and without a login, the
//! sign-in coming from a credential helper as a person has one set up). Real repositories, the
//! real git binary.
//!
//! The credential settings are the test repository's own (`.git/config`): the push inherits
//! the test's environment, so that is where a person's settings are honestly found. An empty
//! `credential.helper` first drops any helper the machine's own settings name.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use git2::{Oid, Repository, Signature};
use healer::project::push::{push_branch, push_branch_within, remote_for, PushFailure, Remote};

use crate::git_http::GitHttp;
use crate::project_fixtures::{commit_all, git_repo, write_files};

const APP: &[(&str, &str)] = &[("app.py", "print('hello')\n")];

/// The person's repository (with `healer/t1` one commit ahead of main) and an empty bare
/// repository `remote.git` beside it.
struct Setup {
    dir: tempfile::TempDir,
    repo: Repository,
    bare: PathBuf,
}

impl Setup {
    fn new() -> Setup {
        let dir = tempfile::tempdir().expect("temp dir");
        let repo = git_repo(&dir.path().join("app"), APP);
        let bare = dir.path().join("served").join("remote.git");
        Repository::init_bare(&bare).expect("bare repository");
        let setup = Setup { dir, repo, bare };
        setup.task_commit("healer/t1", "fix.py", "print('fixed')\n");
        setup
    }

    fn path(&self) -> &Path {
        self.repo.workdir().expect("work tree")
    }

    /// A commit on `branch`, which starts at main when it does not exist yet.
    fn task_commit(&self, branch: &str, file: &str, text: &str) -> Oid {
        let full = format!("refs/heads/{branch}");
        if self.repo.find_reference(&full).is_err() {
            let main = self.repo.refname_to_id("refs/heads/main").expect("main");
            self.repo
                .reference(&full, main, false, "task branch")
                .expect("branch");
        }
        self.repo.set_head(&full).expect("HEAD on the branch");
        write_files(self.path(), &[(file, text)]);
        commit_all(&self.repo, &format!("task: {file}"))
    }

    /// The branch made again from main (as a rebase or an amend leaves it): a commit that does
    /// not contain the one before.
    fn rewrite(&self, branch: &str) -> Oid {
        let main = self.repo.refname_to_id("refs/heads/main").expect("main");
        self.repo
            .reference(&format!("refs/heads/{branch}"), main, true, "rewrite")
            .expect("reset branch");
        self.task_commit(branch, "fix.py", "print('fixed, rebased')\n")
    }

    fn add_remote(&self, name: &str, url: &str) -> Remote {
        self.repo.remote(name, url).expect("remote");
        Remote {
            name: name.to_string(),
            url: url.to_string(),
        }
    }

    /// Lines appended to the repository's own `.git/config`, as a person's settings.
    fn configure(&self, text: &str) {
        let mut config = std::fs::OpenOptions::new()
            .append(true)
            .open(self.repo.path().join("config"))
            .expect("config");
        config.write_all(text.as_bytes()).expect("config written");
    }

    /// Where the bare repository's `branch` stands.
    fn remote_at(&self, branch: &str) -> Option<Oid> {
        Repository::open_bare(&self.bare)
            .expect("bare")
            .refname_to_id(&format!("refs/heads/{branch}"))
            .ok()
    }
}

#[tokio::test]
async fn a_task_branch_is_pushed_to_a_repository_on_disk() {
    let s = Setup::new();
    let head = s.repo.refname_to_id("refs/heads/healer/t1").expect("t1");
    let remote = s.add_remote("origin", &s.bare.display().to_string());

    let pushed = push_branch(s.path(), &remote, "healer/t1", None)
        .await
        .expect("pushed");

    assert_eq!(pushed.commit, head.to_string());
    assert!(!pushed.forced && !pushed.up_to_date, "{pushed:?}");
    assert_eq!(s.remote_at("healer/t1"), Some(head));
    assert_eq!(s.remote_at("main"), None, "only the task's branch goes");
    let again = push_branch(s.path(), &remote, "healer/t1", None)
        .await
        .expect("pushed again");
    assert!(again.up_to_date, "{again:?}");
}

#[tokio::test]
async fn a_task_branch_is_pushed_over_http() {
    let s = Setup::new();
    let server = GitHttp::serve(s.bare.parent().expect("served folder"));
    // Larger than git's 1 MiB post buffer, so the pack goes as a chunked request.
    std::fs::write(s.path().join("data.bin"), noise(3 << 20)).expect("large file");
    let head = commit_all(&s.repo, "task: data");
    let remote = s.add_remote("origin", &server.url("remote.git"));

    let pushed = push_branch(s.path(), &remote, "healer/t1", None)
        .await
        .expect("pushed");

    assert_eq!(pushed.commit, head.to_string());
    assert_eq!(s.remote_at("healer/t1"), Some(head));
    let seen = server.seen();
    assert!(
        seen.iter().any(|r| r.method == "POST"
            && r.target.ends_with("/git-receive-pack")
            && r.chunked
            && r.status == 200),
        "the pack went in chunks: {seen:?}"
    );
}

/// Bytes that do not compress (a pack of them is as large as they are).
fn noise(len: usize) -> Vec<u8> {
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 32) as u8
        })
        .collect()
}

#[tokio::test]
async fn the_persons_credential_helper_signs_the_push_in() {
    let s = Setup::new();
    let server =
        GitHttp::serve_with_login(s.bare.parent().expect("served"), "ada", "pa55-w0rd-secret");
    let store = s.dir.path().join("credentials");
    let origin = server.origin();
    let with_login = origin.replacen("http://", "http://ada:pa55-w0rd-secret@", 1);
    std::fs::write(&store, format!("{with_login}\n")).expect("credential store");
    s.configure(&format!(
        "[credential]\n\thelper =\n\thelper = store --file {}\n",
        store.display()
    ));
    let head = s.repo.refname_to_id("refs/heads/healer/t1").expect("t1");
    let remote = s.add_remote("origin", &server.url("remote.git"));

    push_branch(s.path(), &remote, "healer/t1", None)
        .await
        .expect("pushed with the stored sign-in");

    assert_eq!(s.remote_at("healer/t1"), Some(head));
    let seen = server.seen();
    assert!(
        seen.iter().any(|r| r.status == 401),
        "asked to sign in: {seen:?}"
    );
    assert!(
        seen.iter()
            .any(|r| r.signed_in && r.target.ends_with("/git-receive-pack") && r.status == 200),
        "{seen:?}"
    );
}

#[tokio::test]
async fn without_a_sign_in_the_push_fails_at_once_with_a_sentence_not_a_prompt() {
    let s = Setup::new();
    let server =
        GitHttp::serve_with_login(s.bare.parent().expect("served"), "ada", "pa55-w0rd-secret");
    s.configure("[credential]\n\thelper =\n");
    let remote = s.add_remote("origin", &server.url("remote.git"));

    let started = Instant::now();
    let refused = push_branch(s.path(), &remote, "healer/t1", None)
        .await
        .expect_err("no sign-in");

    assert!(started.elapsed() < Duration::from_secs(30), "it waited");
    assert_eq!(refused.failure, PushFailure::Auth, "{refused}");
    let said = refused.to_string();
    assert!(
        said.starts_with(&format!(
            "The remote refused your credentials for {}",
            server.url("remote.git")
        )),
        "{said}"
    );
    assert!(said.contains("credential helper or an SSH key"), "{said}");
    assert_eq!(s.remote_at("healer/t1"), None);
}

#[tokio::test]
async fn a_wrong_password_in_the_remote_address_is_refused_and_never_repeated() {
    let s = Setup::new();
    let server =
        GitHttp::serve_with_login(s.bare.parent().expect("served"), "ada", "pa55-w0rd-secret");
    s.configure("[credential]\n\thelper =\n");
    let plain = server.url("remote.git");
    let configured = plain.replacen("http://", "http://ada:wrong-hunter2@", 1);
    s.repo.remote("origin", &configured).expect("remote");
    let remote = remote_for(s.path(), "main")
        .expect("read")
        .expect("a remote");
    assert_eq!(
        remote.url, plain,
        "the address is shown without its password"
    );

    let refused = push_branch(s.path(), &remote, "healer/t1", None)
        .await
        .expect_err("wrong password");

    assert_eq!(refused.failure, PushFailure::Auth, "{refused}");
    let said = refused.to_string();
    assert!(!said.contains("wrong-hunter2"), "{said}");
    assert!(said.contains(&plain), "{said}");
}

#[tokio::test]
async fn a_rebased_branch_replaces_the_one_healer_pushed() {
    let s = Setup::new();
    let remote = s.add_remote("origin", &s.bare.display().to_string());
    let first = push_branch(s.path(), &remote, "healer/t1", None)
        .await
        .expect("first push");
    let rebased = s.rewrite("healer/t1");

    let plain = push_branch(s.path(), &remote, "healer/t1", None)
        .await
        .expect_err("a plain push only adds to the branch");
    assert_eq!(plain.failure, PushFailure::Moved, "{plain}");

    let pushed = push_branch(s.path(), &remote, "healer/t1", Some(&first.commit))
        .await
        .expect("pushed with a lease");
    assert!(pushed.forced, "{pushed:?}");
    assert_eq!(pushed.commit, rebased.to_string());
    assert_eq!(s.remote_at("healer/t1"), Some(rebased));
}

#[tokio::test]
async fn a_branch_someone_else_pushed_to_meanwhile_is_not_overwritten() {
    let s = Setup::new();
    let remote = s.add_remote("origin", &s.bare.display().to_string());
    let first = push_branch(s.path(), &remote, "healer/t1", None)
        .await
        .expect("first push");
    // A colleague adds a commit to the remote branch.
    let bare = Repository::open_bare(&s.bare).expect("bare");
    let theirs = {
        let parent = bare
            .find_commit(Oid::from_str(&first.commit).expect("oid"))
            .expect("pushed commit");
        let who = Signature::now("A Colleague", "colleague@example.com").expect("signature");
        bare.commit(
            Some("refs/heads/healer/t1"),
            &who,
            &who,
            "their review fix",
            &parent.tree().expect("tree"),
            &[&parent],
        )
        .expect("their commit")
    };
    s.rewrite("healer/t1");

    let refused = push_branch(s.path(), &remote, "healer/t1", Some(&first.commit))
        .await
        .expect_err("the lease no longer holds");

    assert_eq!(refused.failure, PushFailure::Moved, "{refused}");
    assert!(
        refused.to_string().contains("not where Healer left it"),
        "{refused}"
    );
    assert_eq!(s.remote_at("healer/t1"), Some(theirs));
}

#[tokio::test]
async fn a_remote_that_declines_the_branch_says_why() {
    use std::os::unix::fs::PermissionsExt;
    let s = Setup::new();
    let hook = s.bare.join("hooks").join("pre-receive");
    std::fs::create_dir_all(hook.parent().expect("hooks")).expect("hooks folder");
    std::fs::write(
        &hook,
        "#!/bin/sh\necho 'healer/* branches are protected here' >&2\nexit 1\n",
    )
    .expect("hook");
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).expect("executable");
    let remote = s.add_remote("origin", &s.bare.display().to_string());

    let declined = push_branch(s.path(), &remote, "healer/t1", None)
        .await
        .expect_err("the hook declines");

    assert_eq!(declined.failure, PushFailure::Declined, "{declined}");
    let said = declined.to_string();
    assert!(said.contains("(pre-receive hook declined)"), "{said}");
    assert!(
        said.contains("It said: healer/* branches are protected here."),
        "{said}"
    );
    assert_eq!(s.remote_at("healer/t1"), None);
}

#[tokio::test]
async fn only_healers_own_branches_are_pushed() {
    let s = Setup::new();
    let remote = s.add_remote("origin", &s.bare.display().to_string());
    for branch in [
        "main",
        "feature/x",
        "healer/",
        "healer/../main",
        "healer/a:refs/heads/main",
    ] {
        let refused = push_branch(s.path(), &remote, branch, None)
            .await
            .expect_err("not Healer's branch");
        assert_eq!(refused.failure, PushFailure::Refused, "{branch}: {refused}");
    }
    let main = push_branch(s.path(), &remote, "main", None)
        .await
        .expect_err("main");
    assert!(
        main.to_string()
            .starts_with("Healer pushes only its own task branches (healer/<task>); \"main\""),
        "{main}"
    );
    let short = push_branch(s.path(), &remote, "healer/t1", Some("abc123"))
        .await
        .expect_err("a short id");
    assert_eq!(short.failure, PushFailure::Refused, "{short}");
    assert_eq!(s.remote_at("main"), None);
    assert_eq!(s.remote_at("healer/t1"), None);
}

#[tokio::test]
async fn a_missing_remote_or_branch_is_said_as_such() {
    let s = Setup::new();
    let ghost = Remote {
        name: "upstream".to_string(),
        url: "https://example.com/x.git".to_string(),
    };
    let none = push_branch(s.path(), &ghost, "healer/t1", None)
        .await
        .expect_err("no such remote");
    assert_eq!(none.failure, PushFailure::NoRemote, "{none}");
    assert!(
        none.to_string().contains("no remote named \"upstream\""),
        "{none}"
    );

    let remote = s.add_remote("origin", &s.bare.display().to_string());
    let missing = push_branch(s.path(), &remote, "healer/t9", None)
        .await
        .expect_err("no such branch");
    assert_eq!(missing.failure, PushFailure::NoBranch, "{missing}");
}

#[tokio::test]
async fn an_unreachable_remote_is_said_as_such() {
    let s = Setup::new();
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = closed.local_addr().expect("addr").port();
    drop(closed);
    let remote = s.add_remote("origin", &format!("http://127.0.0.1:{port}/remote.git"));

    let failed = push_branch(s.path(), &remote, "healer/t1", None)
        .await
        .expect_err("nobody listens");

    assert_eq!(failed.failure, PushFailure::Unreachable, "{failed}");
    assert!(
        failed.to_string().contains("could not be reached"),
        "{failed}"
    );
}

#[tokio::test]
async fn a_push_that_hangs_is_stopped_at_its_time_limit() {
    let s = Setup::new();
    // Accepts connections and never answers.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let silent = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    let remote = s.add_remote("origin", &format!("http://{addr}/remote.git"));

    let started = Instant::now();
    let stopped = push_branch_within(s.path(), &remote, "healer/t1", None, Duration::from_secs(2))
        .await
        .expect_err("it hangs");

    assert!(started.elapsed() < Duration::from_secs(10), "not stopped");
    assert_eq!(stopped.failure, PushFailure::TimedOut, "{stopped}");
    assert!(
        stopped
            .to_string()
            .contains("did not finish within 2 seconds"),
        "{stopped}"
    );
    silent.abort();
}

#[test]
fn the_remote_is_where_the_person_pushes_main() {
    let s = Setup::new();
    let chosen = || remote_for(s.path(), "main").expect("read").map(|r| r.name);
    assert_eq!(chosen(), None, "no remote");

    s.repo.remote("backup", "/srv/backup.git").expect("remote");
    assert_eq!(chosen().as_deref(), Some("backup"), "the only one");

    s.repo
        .remote("origin", "https://ada:s3cret@example.com/team/app.git")
        .expect("remote");
    assert_eq!(chosen().as_deref(), Some("origin"), "origin among several");
    let origin = remote_for(s.path(), "main").expect("read").expect("origin");
    assert_eq!(origin.url, "https://example.com/team/app.git");

    s.repo
        .remote("fork", "git@github.com:ada/app.git")
        .expect("remote");
    s.configure("[branch \"main\"]\n\tremote = backup\n\tmerge = refs/heads/main\n");
    assert_eq!(chosen().as_deref(), Some("backup"), "main's upstream");

    s.configure("[remote]\n\tpushDefault = fork\n");
    assert_eq!(chosen().as_deref(), Some("fork"), "where the person pushes");
    let fork = remote_for(s.path(), "main").expect("read").expect("fork");
    assert_eq!(fork.url, "git@github.com:ada/app.git");
}
