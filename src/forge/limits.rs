//! What a host's headers say about its rate limit: how long to wait before asking again, and
//! whether a refusal is a rate limit rather than a refused token (GitHub answers both with 403).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use reqwest::header::HeaderMap;

use super::answer::host_message;

/// The longest a rate limit is believed: GitHub's and GitLab's windows are an hour at most,
/// so a header asking for more is wrong, and Healer asks again after this.
pub(super) const LONGEST_WAIT: Duration = Duration::from_secs(3600);

/// How long the answer's headers ask Healer to wait: `retry-after` (seconds or an HTTP date),
/// or, once no request is left (`x-ratelimit-remaining: 0` on GitHub, `ratelimit-remaining: 0`
/// on GitLab), until the reset time (epoch seconds). At most [`LONGEST_WAIT`].
pub(super) fn asked_wait(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let text = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    let now_secs = now.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let retry = text("retry-after").and_then(|v| match v.parse::<u64>() {
        Ok(secs) => Some(Duration::from_secs(secs)),
        Err(_) => {
            let at = chrono::DateTime::parse_from_rfc2822(v).ok()?;
            let at = u64::try_from(at.timestamp()).ok()?;
            Some(Duration::from_secs(at.saturating_sub(now_secs)))
        }
    });
    let spent = ["x-ratelimit-remaining", "ratelimit-remaining"]
        .iter()
        .any(|name| text(name) == Some("0"));
    let reset = spent
        .then(|| {
            ["x-ratelimit-reset", "ratelimit-reset"]
                .iter()
                .find_map(|name| text(name)?.parse::<u64>().ok())
        })
        .flatten()
        .map(|at| Duration::from_secs(at.saturating_sub(now_secs)));
    let wait = match (retry, reset) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    };
    wait.map(|w| w.min(LONGEST_WAIT))
}

/// A 429, or a 403 that GitHub means as a rate limit (its headers say so, or its message).
pub(super) fn is_rate_limit(status: u16, headers: &HeaderMap, body: &[u8]) -> bool {
    match status {
        429 => true,
        403 => {
            let spent = ["x-ratelimit-remaining", "ratelimit-remaining"]
                .iter()
                .any(|n| headers.get(*n).and_then(|v| v.to_str().ok()) == Some("0"));
            let says =
                host_message(body).is_some_and(|m| m.to_ascii_lowercase().contains("rate limit"));
            spent || headers.contains_key("retry-after") || says
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use reqwest::header::{HeaderName, HeaderValue};

    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(
                HeaderName::from_bytes(name.as_bytes()).expect("name"),
                HeaderValue::from_str(value).expect("value"),
            );
        }
        map
    }

    #[test]
    fn a_spent_rate_limit_waits_until_its_reset_and_a_remaining_one_does_not() {
        let now = UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let spent = headers(&[
            ("x-ratelimit-remaining", "0"),
            ("x-ratelimit-reset", "1700000600"),
        ]);
        assert_eq!(asked_wait(&spent, now), Some(Duration::from_secs(600)));
        let left = headers(&[
            ("x-ratelimit-remaining", "12"),
            ("x-ratelimit-reset", "1700000600"),
        ]);
        assert_eq!(asked_wait(&left, now), None);
        let gitlab = headers(&[
            ("ratelimit-remaining", "0"),
            ("ratelimit-reset", "1700000090"),
        ]);
        assert_eq!(asked_wait(&gitlab, now), Some(Duration::from_secs(90)));
    }

    #[test]
    fn retry_after_is_read_in_seconds_or_as_a_date_and_never_past_an_hour() {
        let now = UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let secs = headers(&[("retry-after", "120")]);
        assert_eq!(asked_wait(&secs, now), Some(Duration::from_secs(120)));
        // 1_700_000_300 is Tue, 14 Nov 2023 22:18:20 GMT.
        let date = headers(&[("retry-after", "Tue, 14 Nov 2023 22:18:20 GMT")]);
        assert_eq!(asked_wait(&date, now), Some(Duration::from_secs(300)));
        let absurd = headers(&[("retry-after", "99999999")]);
        assert_eq!(asked_wait(&absurd, now), Some(LONGEST_WAIT));
        assert_eq!(asked_wait(&headers(&[("retry-after", "soon")]), now), None);
    }

    #[test]
    fn a_403_is_a_rate_limit_only_when_it_says_so() {
        let plain = headers(&[]);
        assert!(!is_rate_limit(
            403,
            &plain,
            br#"{"message":"Bad credentials"}"#
        ));
        assert!(is_rate_limit(
            403,
            &plain,
            br#"{"message":"You have exceeded a secondary rate limit."}"#
        ));
        assert!(is_rate_limit(
            403,
            &headers(&[("x-ratelimit-remaining", "0")]),
            b""
        ));
        assert!(is_rate_limit(429, &plain, b""));
        assert!(!is_rate_limit(500, &plain, b""));
    }
}
