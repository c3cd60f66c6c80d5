//! What a text shows: the patterns of resource, environment and transient failures, found in one
//! pass over the output however many there are, with the HTTP statuses said in it (`status.rs`).
//! Each pattern's and each status's class is what fixes the failure it names (docs/classes.md):
//! more memory, disk or time → resource; the machine, a file, the configuration or a credential
//! → environment; waiting → transient.

use super::status::http_statuses;
use crate::failure::FailureClass;

/// How a pattern counts when it is found in the text.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Anywhere.
    Phrase,
    /// As a whole word: `ECONNREFUSED`, not `my_eperm`.
    Token,
}

/// Lowercase ASCII patterns; the text is lowercased before matching.
const PATTERNS: &[(&str, FailureClass, Kind)] = {
    use FailureClass::{Environment as Env, Resource as Res, Transient as Tra};
    use Kind::{Phrase, Token};
    &[
        ("out of memory", Res, Phrase),
        ("cannot allocate memory", Res, Phrase),
        ("allocation failed", Res, Phrase),
        ("enomem", Res, Token),
        // A full disk or quota, a file size limit, a process's limits: more of it fixes them.
        ("no space left on device", Res, Phrase),
        ("disk quota exceeded", Res, Phrase),
        ("[errno 28]", Res, Phrase),
        ("enospc", Res, Token),
        ("edquot", Res, Token),
        ("file too large", Res, Phrase),
        ("file size limit exceeded", Res, Phrase),
        ("[errno 27]", Res, Phrase),
        ("efbig", Res, Token),
        ("too many open files", Res, Phrase),
        ("[errno 24]", Res, Phrase),
        ("emfile", Res, Token),
        ("enfile", Res, Token),
        ("can't start new thread", Res, Phrase),
        ("cpu time limit exceeded", Res, Phrase),
        // A child the script ran was killed by the kernel (Python's CalledProcessError "died
        // with <Signals.SIGKILL: 9>", Node's `signal: 'SIGKILL'`) or hit a CPU or file limit.
        ("died with <signals.sigkill", Res, Phrase),
        ("died with <signals.sigxcpu", Res, Phrase),
        ("died with <signals.sigxfsz", Res, Phrase),
        ("signal: 'sigkill'", Res, Phrase),
        ("signal: 'sigabrt'", Res, Phrase),
        ("signal: 'sigbus'", Res, Phrase),
        ("signal: 'sigsegv'", Res, Phrase),
        ("signal: 'sigxcpu'", Res, Phrase),
        ("signal: 'sigxfsz'", Res, Phrase),
        // A write the disk or a file size limit cut short (see also `lookalike::short_write`).
        ("short write", Res, Phrase),
        ("no module named", Env, Phrase),
        ("cannot find module", Env, Phrase),
        ("cannot find package", Env, Phrase),
        ("module_not_found", Env, Phrase),
        ("command not found", Env, Phrase),
        ("permission denied", Env, Phrase),
        ("operation not permitted", Env, Phrase),
        ("[errno 13]", Env, Phrase),
        ("read-only file system", Env, Phrase),
        // SQLite's words for a database file or folder it may not write or cannot open.
        ("readonly database", Env, Phrase),
        ("read-only database", Env, Phrase),
        ("unable to open database file", Env, Phrase),
        ("eacces", Env, Token),
        ("eperm", Env, Token),
        ("erofs", Env, Token),
        // A file or folder the script expects is not on this machine.
        ("no such file or directory", Env, Phrase),
        ("[errno 2]", Env, Phrase),
        ("enoent", Env, Token),
        // Configuration the script needs is not set.
        ("is not set", Env, Phrase),
        ("parameter null or not set", Env, Phrase),
        ("environment variable", Env, Phrase),
        // A credential that is wrong, missing or expired (and its HTTP statuses, in
        // `http_statuses`).
        ("invalid api key", Env, Phrase),
        ("incorrect api key", Env, Phrase),
        ("invalid_api_key", Env, Phrase),
        ("api key is invalid", Env, Phrase),
        ("authentication failed", Env, Phrase),
        ("invalid credentials", Env, Phrase),
        ("invalid token", Env, Phrase),
        ("invalid_token", Env, Phrase),
        ("token expired", Env, Phrase),
        ("token has expired", Env, Phrase),
        ("access denied", Env, Phrase),
        ("connection refused", Tra, Phrase),
        ("connection reset", Tra, Phrase),
        ("connection aborted", Tra, Phrase),
        ("connection timed out", Tra, Phrase),
        ("read timed out", Tra, Phrase),
        ("operation timed out", Tra, Phrase),
        ("remote end closed connection", Tra, Phrase),
        ("temporary failure in name resolution", Tra, Phrase),
        ("name or service not known", Tra, Phrase),
        ("nodename nor servname", Tra, Phrase),
        ("no address associated with hostname", Tra, Phrase),
        ("could not resolve host", Tra, Phrase),
        ("failed to connect to", Tra, Phrase),
        ("network is unreachable", Tra, Phrase),
        ("no route to host", Tra, Phrase),
        ("socket.gaierror", Tra, Phrase),
        ("socket.timeout", Tra, Phrase),
        ("und_err_connect_timeout", Tra, Phrase),
        ("und_err_socket", Tra, Phrase),
        ("aborted due to timeout", Tra, Phrase),
        // A lock another process holds: waiting for it fixes the failure.
        ("database is locked", Tra, Phrase),
        ("database table is locked", Tra, Phrase),
        ("resource temporarily unavailable", Tra, Phrase),
        ("is held by another", Tra, Phrase),
        ("locked by another", Tra, Phrase),
        ("could not get lock", Tra, Phrase),
        ("could not acquire lock", Tra, Phrase),
        ("unable to acquire lock", Tra, Phrase),
        ("another instance is running", Tra, Phrase),
        ("another run is still", Tra, Phrase),
        ("eagain", Tra, Token),
        ("ewouldblock", Tra, Token),
        // The program's own words for a passing problem.
        ("temporarily unavailable", Tra, Phrase),
        ("try again later", Tra, Phrase),
        ("rate limit", Tra, Phrase),
        ("econnrefused", Tra, Token),
        ("econnreset", Tra, Token),
        ("econnaborted", Tra, Token),
        ("epipe", Tra, Token),
        ("etimedout", Tra, Token),
        ("enotfound", Tra, Token),
        ("eai_again", Tra, Token),
        ("enetunreach", Tra, Token),
        ("ehostunreach", Tra, Token),
        // Reason phrases of 429 and 5xx, said without their number. requests prints "503
        // Server Error: … for url" (a 4xx says "Client Error").
        ("too many requests", Tra, Phrase),
        ("internal server error", Tra, Phrase),
        ("bad gateway", Tra, Phrase),
        ("service unavailable", Tra, Phrase),
        ("gateway timeout", Tra, Phrase),
        (" server error:", Tra, Phrase),
        // urllib3's retries of error responses ran out (its statuses, when it names them, are
        // read by `http_statuses`).
        ("too many error responses", Tra, Phrase),
    ]
};

/// Which classes a text shows. One pass over the text, whatever the number of patterns: the
/// output can be a megabyte, and this runs in debug builds too.
pub(super) struct TextShows {
    pub(super) resource: bool,
    pub(super) environment: bool,
    pub(super) transient: bool,
}

impl TextShows {
    pub(super) fn read(text: &str) -> Self {
        let lower = text.to_ascii_lowercase();
        let bytes = lower.as_bytes();
        let by_first = by_first_byte();
        let mut shown = TextShows {
            resource: shell_reports_a_killed_job(text),
            environment: false,
            transient: false,
        };
        if !shown.resource {
            let (environment, transient) = http_statuses(bytes, text);
            shown.environment = environment;
            shown.transient = transient;
        }
        for (at, &b) in bytes.iter().enumerate() {
            if shown.resource {
                // Resource wins over everything else: nothing left to learn.
                break;
            }
            let Some(candidates) = by_first.get(usize::from(b)) else {
                continue;
            };
            for &(pattern, class, kind) in candidates {
                if shown.shows(class) || !bytes.get(at..).is_some_and(|r| r.starts_with(pattern)) {
                    continue;
                }
                let end = at + pattern.len();
                let hit = match kind {
                    Kind::Phrase => true,
                    Kind::Token => {
                        let is_word = |c: &u8| c.is_ascii_alphanumeric() || *c == b'_';
                        let before = at.checked_sub(1).and_then(|i| bytes.get(i));
                        !before.is_some_and(is_word) && !bytes.get(end).is_some_and(is_word)
                    }
                };
                if hit {
                    shown.mark(class);
                }
            }
        }
        shown
    }

    pub(super) fn shows(&self, class: FailureClass) -> bool {
        match class {
            FailureClass::Resource => self.resource,
            FailureClass::Environment => self.environment,
            FailureClass::Transient => self.transient,
            _ => false,
        }
    }

    fn mark(&mut self, class: FailureClass) {
        match class {
            FailureClass::Resource => self.resource = true,
            FailureClass::Environment => self.environment = true,
            FailureClass::Transient => self.transient = true,
            _ => {}
        }
    }
}

/// The patterns by their first byte, built once: `read` runs on every line when the classifier
/// looks for the line that proves a class.
type ByFirst = [Vec<(&'static [u8], FailureClass, Kind)>; 256];

fn by_first_byte() -> &'static ByFirst {
    static TABLE: std::sync::OnceLock<ByFirst> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        let mut by_first: ByFirst = std::array::from_fn(|_| Vec::new());
        for &(pattern, class, kind) in PATTERNS {
            let pattern = pattern.as_bytes();
            if let Some(list) = pattern
                .first()
                .and_then(|&b| by_first.get_mut(usize::from(b)))
            {
                list.push((pattern, class, kind));
            }
        }
        by_first
    })
}

/// A shell's report of a job that died of a signal: `main.sh: line 2: 14417 Killed   python3 …`,
/// or a bare `Killed` / `Segmentation fault (core dumped)` line. Anchored on bash's prefix and the
/// pid, or the whole line, so "Killed 3 stale workers" in a script's own log does not count.
fn shell_reports_a_killed_job(text: &str) -> bool {
    const DEATHS: [&str; 4] = ["Killed", "Segmentation fault", "Bus error", "Aborted"];
    text.lines().any(|line| {
        let t = line.trim();
        if t == "Killed" || t == "Segmentation fault" || t.ends_with("(core dumped)") {
            return DEATHS.iter().any(|d| t.starts_with(d));
        }
        let Some((_, rest)) = line.split_once(": line ") else {
            return false;
        };
        let Some(body) = rest
            .trim_start_matches(|c: char| c.is_ascii_digit())
            .strip_prefix(": ")
        else {
            return false;
        };
        let pid = body.bytes().take_while(u8::is_ascii_digit).count();
        pid > 0
            && body
                .get(pid..)
                .map(str::trim_start)
                .is_some_and(|rest| DEATHS.iter().any(|d| rest.starts_with(d)))
    })
}
