//! A git remote URL read as a host, its API and a repository path. Remotes come in many shapes
//! (`https://github.com/o/r.git`, `git@github.com:o/r.git`, `ssh://git@host:2222/g/s/r`); a
//! user name and password written into one are dropped here and never kept, so nothing that
//! holds a [`Forge`] can leak them.

use url::Url;

use super::{Forge, ForgeError, ForgeKind, Result};

/// Reads `remote_url` (as `git remote get-url` prints it). `api_url` is the API address a
/// person named for a self-hosted host (`https://git.example.com/api/v4`); without it the
/// kind is known from the host's name (github.com, gitlab.com or a name with "gitlab",
/// codeberg.org or a name with "forgejo" or "gitea").
pub fn read_remote(remote_url: &str, api_url: Option<&str>) -> Result<Forge> {
    let place = Place::read(remote_url)?;
    let web_base = place.web_base()?;
    let api_url = api_url.map(str::trim).filter(|a| !a.is_empty());
    let (kind, api_base) = match api_url {
        Some(api) => from_api_url(api)?,
        None => place.known_host()?,
    };
    let repo_path = place.segments.join("/");
    if kind != ForgeKind::GitLab && place.segments.len() != 2 {
        return Err(ForgeError::Setup(format!(
            "{} repositories are named owner/repo, but the remote {} names \u{201c}{repo_path}\u{201d}",
            kind.name(),
            place.shown
        )));
    }
    Ok(Forge {
        kind,
        api_base,
        web_base,
        repo_path,
    })
}

/// What a remote says, without its credentials.
struct Place {
    /// The web site's scheme: `http` only when the remote itself is plain http.
    scheme: &'static str,
    host: String,
    /// The web port, kept only for an http(s) remote (an ssh port is not the web's).
    port: Option<u16>,
    /// The repository path's parts, without `.git`.
    segments: Vec<String>,
    /// The remote as it may be shown: without a user name or password.
    shown: String,
}

impl Place {
    fn read(remote: &str) -> Result<Place> {
        let remote = remote.trim();
        if remote.is_empty() {
            return Err(ForgeError::Setup(
                "the project's remote address is empty: add the repository's address as the remote first"
                    .to_string(),
            ));
        }
        if remote.contains("://") {
            Place::from_url(remote)
        } else {
            Place::from_scp(remote)
        }
    }

    /// `scheme://[user[:password]@]host[:port]/path`.
    fn from_url(remote: &str) -> Result<Place> {
        let mut url = Url::parse(remote).map_err(|_| {
            ForgeError::Setup(
                "the project's remote address cannot be read as a web address: check the repository's remote in your git settings"
                    .to_string(),
            )
        })?;
        // Before anything is shown or kept.
        let _ = url.set_password(None);
        let _ = url.set_username("");
        let shown = url.to_string();
        let (scheme, keep_port) = match url.scheme() {
            "https" => ("https", true),
            "http" => ("http", true),
            "ssh" | "git" | "git+ssh" | "ssh+git" => ("https", false),
            "file" => return Err(local_folder(&shown)),
            other => {
                return Err(ForgeError::Setup(format!(
                    "the remote {shown} uses {other}://, which Healer cannot open pull requests through: \
                     use the repository's https or ssh address"
                )))
            }
        };
        let host = match url.host_str() {
            Some(h) if !h.is_empty() => h.to_ascii_lowercase(),
            _ => return Err(local_folder(&shown)),
        };
        let port = if keep_port { url.port() } else { None };
        let segments = repo_segments(url.path(), &shown)?;
        Ok(Place {
            scheme,
            host,
            port,
            segments,
            shown,
        })
    }

    /// git's scp-like form `[user@]host:path`.
    fn from_scp(remote: &str) -> Result<Place> {
        // Credentials end at the last '@': a repository path never holds one, a password may
        // hold '/' or ':'.
        let after_user = remote.rfind('@').map_or(0, |at| at + 1);
        let rest = &remote[after_user..];
        let Some((host, path)) = rest.split_once(':') else {
            return Err(local_folder("the project's remote"));
        };
        // A path before the colon, or a drive letter (`C:\…`), is a folder on this computer.
        if host.is_empty() || host.contains(['/', '\\']) || host.len() == 1 {
            return Err(local_folder("the project's remote"));
        }
        let host = host.to_ascii_lowercase();
        let shown = format!("{host}:{path}");
        if !host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
        {
            return Err(ForgeError::Setup(format!(
                "the remote {shown} does not name a host Healer can read"
            )));
        }
        let segments = repo_segments(path, &shown)?;
        Ok(Place {
            scheme: "https",
            host,
            port: None,
            segments,
            shown,
        })
    }

    fn authority(&self) -> String {
        match self.port {
            Some(port) => format!("{}:{port}", self.host),
            None => self.host.clone(),
        }
    }

    fn web_base(&self) -> Result<Url> {
        Url::parse(&format!("{}://{}/", self.scheme, self.authority())).map_err(|_| {
            ForgeError::Setup(format!(
                "the remote {} does not name a host Healer can read",
                self.shown
            ))
        })
    }

    /// The kind and API of a host known by its name.
    fn known_host(&self) -> Result<(ForgeKind, Url)> {
        let host = self.host.as_str();
        let (kind, api) = if host == "github.com" || host == "www.github.com" {
            (ForgeKind::GitHub, "https://api.github.com/".to_string())
        } else if host == "gitlab.com" || host.contains("gitlab") {
            let api = format!("{}://{}/api/v4", self.scheme, self.authority());
            (ForgeKind::GitLab, api)
        } else if host == "codeberg.org" || host.contains("forgejo") || host.contains("gitea") {
            let api = format!("{}://{}/api/v1", self.scheme, self.authority());
            (ForgeKind::Forgejo, api)
        } else {
            let root = format!("https://{}", self.authority());
            return Err(ForgeError::Setup(format!(
                "Healer cannot tell whether {host} runs GitHub, GitLab or Forgejo: give the address \
                 of its API, such as {root}/api/v4 for GitLab, \
                 {root}/api/v1 for Forgejo or Gitea, or {root}/api/v3 for GitHub Enterprise"
            )));
        };
        let api = Url::parse(&api).map_err(|_| {
            ForgeError::Setup(format!(
                "the remote {} does not name a host Healer can read",
                self.shown
            ))
        })?;
        Ok((kind, api))
    }
}

/// The kind an API address names by its path; credentials written into it are dropped.
fn from_api_url(api: &str) -> Result<(ForgeKind, Url)> {
    let unreadable = || {
        ForgeError::Setup(
            "the API address given for the project cannot be read as an http or https URL"
                .to_string(),
        )
    };
    let mut url = Url::parse(api).map_err(|_| unreadable())?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        return Err(unreadable());
    }
    let _ = url.set_password(None);
    let _ = url.set_username("");
    url.set_query(None);
    url.set_fragment(None);
    let path = url.path().trim_end_matches('/').to_string();
    url.set_path(if path.is_empty() { "/" } else { &path });
    let lower = path.to_ascii_lowercase();
    let kind = if lower.ends_with("/api/v4") {
        ForgeKind::GitLab
    } else if lower.ends_with("/api/v1") {
        ForgeKind::Forgejo
    } else if lower.ends_with("/api/v3") || url.host_str() == Some("api.github.com") {
        ForgeKind::GitHub
    } else {
        return Err(ForgeError::Setup(format!(
            "Healer cannot tell which API {url} is: a GitLab API ends in /api/v4, a Forgejo or \
             Gitea API in /api/v1, a GitHub Enterprise API in /api/v3"
        )));
    };
    Ok((kind, url))
}

/// The repository path's parts: no `.git`, no empty, `.` or `..` part, only the characters
/// the hosts allow in names.
fn repo_segments(path: &str, shown: &str) -> Result<Vec<String>> {
    let trimmed = path.trim_matches('/');
    let trimmed = trimmed.strip_suffix(".git").unwrap_or(trimmed);
    let trimmed = trimmed.trim_end_matches('/');
    let segments: Vec<String> = trimmed.split('/').map(str::to_string).collect();
    let fine = |s: &String| {
        !s.is_empty()
            && s != "."
            && s != ".."
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
    };
    if segments.len() < 2 || !segments.iter().all(fine) {
        return Err(ForgeError::Setup(format!(
            "the remote {shown} does not name a repository as owner/repo (or group/…/repo)"
        )));
    }
    Ok(segments)
}

fn local_folder(shown: &str) -> ForgeError {
    ForgeError::Setup(format!(
        "{shown} is a folder on this computer, not a repository on GitHub, GitLab or Forgejo: \
         add the hosted repository's address as the remote"
    ))
}
