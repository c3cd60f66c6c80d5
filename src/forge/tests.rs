//! Remotes read as hosts: every shape git writes, credentials dropped, a self-hosted host's
//! API named by the person, and a sentence for what cannot be read.

use super::*;

fn read(remote: &str) -> Forge {
    read_remote(remote, None).unwrap_or_else(|e| panic!("{remote}: {e}"))
}

fn refused(remote: &str, api: Option<&str>) -> String {
    match read_remote(remote, api) {
        Ok(forge) => panic!("{remote} was read as {forge:?}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn a_github_remote_in_every_shape_git_writes_is_one_repository() {
    for remote in [
        "https://github.com/octo/app.git",
        "https://github.com/octo/app",
        "https://github.com/octo/app/",
        "https://github.com/octo/app.git/",
        "  https://GitHub.com/octo/app.git\n",
        "git@github.com:octo/app.git",
        "git@github.com:octo/app",
        "github.com:octo/app.git",
        "ssh://git@github.com/octo/app.git",
        "ssh://git@github.com:22/octo/app",
        "git://github.com/octo/app.git",
        "https://x-access-token:ghs_secret@github.com/octo/app.git",
    ] {
        let forge = read(remote);
        assert_eq!(forge.kind, ForgeKind::GitHub, "{remote}");
        assert_eq!(
            forge.api_base.as_str(),
            "https://api.github.com/",
            "{remote}"
        );
        assert_eq!(forge.web_base.as_str(), "https://github.com/", "{remote}");
        assert_eq!(forge.repo_path, "octo/app", "{remote}");
    }
}

#[test]
fn credentials_written_into_a_remote_are_never_kept_nor_shown() {
    let secret = "hunter2-very-secret";
    for remote in [
        format!("https://alice:{secret}@gitlab.com/group/sub/app.git"),
        format!("http://alice:{secret}@127.0.0.1:8080/o/app.git"),
        format!("alice:{secret}@gitlab.com:group/app.git"),
        format!("ssh://alice:{secret}@gitea.example.org:2222/o/app.git"),
    ] {
        let forge = read_remote(&remote, Some("http://127.0.0.1:8080/api/v4"))
            .unwrap_or_else(|e| panic!("{e}"));
        let all = format!("{forge:?}");
        assert!(!all.contains(secret) && !all.contains("alice"), "{all}");
    }
    for remote in [
        format!("https://alice:{secret}@git.example.com/o/app.git"),
        format!("https://alice:{secret}@github.com/o/app/tree/main"),
        format!("https://alice:{secret}@github.com/"),
        format!("alice:{secret}@github.com:o/a%pp.git"),
    ] {
        let said = refused(&remote, None);
        assert!(!said.contains(secret) && !said.contains("alice"), "{said}");
    }
    let api = format!("https://bob:{secret}@git.example.com/api/v4");
    let forge = read_remote("git@git.example.com:o/app.git", Some(&api)).expect("read");
    assert_eq!(forge.api_base.as_str(), "https://git.example.com/api/v4");
}

#[test]
fn gitlab_keeps_nested_groups_and_an_ssh_port_is_not_the_webs() {
    let forge = read("ssh://git@gitlab.example.com:2222/group/sub/app.git");
    assert_eq!(forge.kind, ForgeKind::GitLab);
    assert_eq!(forge.repo_path, "group/sub/app");
    assert_eq!(forge.api_base.as_str(), "https://gitlab.example.com/api/v4");
    assert_eq!(forge.web_base.as_str(), "https://gitlab.example.com/");

    let forge = read("https://gitlab.com/group/app");
    assert_eq!(forge.kind, ForgeKind::GitLab);
    assert_eq!(forge.api_base.as_str(), "https://gitlab.com/api/v4");

    let forge = read("http://gitlab.lan:8929/team/app.git");
    assert_eq!(forge.api_base.as_str(), "http://gitlab.lan:8929/api/v4");
    assert_eq!(forge.web_base.as_str(), "http://gitlab.lan:8929/");
}

#[test]
fn codeberg_forgejo_and_gitea_hosts_speak_the_forgejo_api() {
    let forge = read("https://codeberg.org/octo/app.git");
    assert_eq!(forge.kind, ForgeKind::Forgejo);
    assert_eq!(forge.api_base.as_str(), "https://codeberg.org/api/v1");
    let forge = read("git@gitea.example.org:octo/app.git");
    assert_eq!(forge.kind, ForgeKind::Forgejo);
    assert_eq!(forge.api_base.as_str(), "https://gitea.example.org/api/v1");
    let forge = read("http://forgejo.lan:3000/octo/app");
    assert_eq!(forge.api_base.as_str(), "http://forgejo.lan:3000/api/v1");
    assert_eq!(ForgeKind::Forgejo.name(), "Forgejo");
}

#[test]
fn an_api_address_the_person_gives_names_the_kind_by_its_path() {
    let remote = "http://127.0.0.1:4567/octo/app.git";
    let gitlab = read_remote(remote, Some("http://127.0.0.1:4567/api/v4/")).expect("gitlab");
    assert_eq!(gitlab.kind, ForgeKind::GitLab);
    assert_eq!(gitlab.api_base.as_str(), "http://127.0.0.1:4567/api/v4");
    assert_eq!(gitlab.web_base.as_str(), "http://127.0.0.1:4567/");
    let forgejo = read_remote(remote, Some("http://127.0.0.1:4567/api/v1")).expect("forgejo");
    assert_eq!(forgejo.kind, ForgeKind::Forgejo);
    let ghe = read_remote(
        "git@ghe.example.com:octo/app.git",
        Some("https://ghe.example.com/api/v3"),
    )
    .expect("enterprise");
    assert_eq!(ghe.kind, ForgeKind::GitHub);
    assert_eq!(ghe.web_base.as_str(), "https://ghe.example.com/");
    assert_eq!(ghe.api_base.as_str(), "https://ghe.example.com/api/v3");
    // A blank setting is no setting.
    assert_eq!(
        read_remote("https://github.com/o/r", Some("  "))
            .expect("github")
            .kind,
        ForgeKind::GitHub
    );
}

#[test]
fn an_unknown_host_asks_for_its_api_address_by_name() {
    let said = refused("git@git.example.com:octo/app.git", None);
    assert!(said.contains("git.example.com"), "{said}");
    assert!(said.contains("https://git.example.com/api/v4"), "{said}");
    assert!(
        said.contains("/api/v1") && said.contains("/api/v3"),
        "{said}"
    );
    let said = refused(
        "https://git.example.com/octo/app",
        Some("https://git.example.com/rest"),
    );
    assert!(said.starts_with("Healer cannot tell which API"), "{said}");
    let said = refused(
        "https://git.example.com/octo/app",
        Some("ftp://git.example.com/api/v4"),
    );
    assert!(said.contains("http or https"), "{said}");
}

#[test]
fn a_folder_or_a_path_that_is_not_a_repository_is_refused_with_a_sentence() {
    for remote in [
        "/srv/git/app.git",
        "../app",
        "file:///srv/git/app.git",
        "C:\\repos\\app",
    ] {
        let said = refused(remote, None);
        assert!(said.contains("folder on this computer"), "{remote}: {said}");
    }
    assert!(refused("", None).contains("empty"));
    assert!(refused("https://github.com/octo", None).contains("owner/repo"));
    assert!(refused("https://github.com/octo/app/extra", None).contains("owner/repo"));
    assert!(refused("https://github.com/octo/../app", None).contains("owner/repo"));
    assert!(refused("https://github.com/octo/a%20pp", None).contains("owner/repo"));
    assert!(refused("svn://github.com/octo/app", None).contains("svn://"));
}

#[test]
fn overall_is_a_failure_if_any_failed_and_pending_until_every_check_is_done() {
    let check = |state| Check {
        name: "c".to_string(),
        state,
        url: None,
        log: None,
    };
    assert_eq!(Checks::new(vec![]).overall, CheckState::Pending);
    let mixed = vec![check(CheckState::Pending), check(CheckState::Failure)];
    assert_eq!(Checks::new(mixed).overall, CheckState::Failure);
    let waiting = vec![check(CheckState::Success), check(CheckState::Pending)];
    assert_eq!(Checks::new(waiting).overall, CheckState::Pending);
    let green = vec![check(CheckState::Success), check(CheckState::Success)];
    assert_eq!(Checks::new(green).overall, CheckState::Success);
}

#[test]
fn waits_are_said_in_words() {
    use std::time::Duration;
    assert_eq!(error::in_words(Duration::from_secs(45)), "45 seconds");
    assert_eq!(error::in_words(Duration::from_secs(600)), "10 minutes");
    assert_eq!(error::in_words(Duration::from_secs(3 * 3600)), "3 hours");
    let limited = ForgeError::RateLimited {
        host: "GitHub",
        repo: "o/r".to_string(),
        wait: Duration::from_secs(10),
    };
    assert_eq!(limited.wait(), Some(POLL_EVERY));
    let engine: crate::error::Error = limited.into();
    assert!(engine
        .to_string()
        .starts_with("GitHub asks Healer to wait 10 seconds"));
}

/// The engine polls from spawned tasks: each call's future must be `Send`.
#[test]
fn every_call_can_run_on_a_spawned_task() {
    fn spawnable<T: Send>(_: &T) {}
    let forge = read("https://github.com/octo/app");
    let pr = PullRequest {
        number: 1,
        url: String::new(),
        state: PrState::Open,
        head_sha: None,
    };
    let draft = Draft {
        title: String::new(),
        body: String::new(),
        head: "b".to_string(),
        base: "main".to_string(),
    };
    spawnable(&forge.open_pull_request("t", &draft));
    spawnable(&forge.pull_request("t", 1));
    spawnable(&forge.checks("t", &pr));
}
