//! Paths, URLs and addresses (e-mail, IPv6): what varies is replaced, what names the place is
//! kept.

use super::bytes::{at, contains};
use super::chunks::trailing_punct_start;
use super::words::word;
use super::{Cx, Mode};

/// A file-system path: absolute (`/x`, `\x`, `C:\x`), home- or dot-relative (`~/x`, `./x`,
/// `../x`), or relative with two separators or a file name (`src/app/main.py`, `lib/x.js`).
/// `and/or`, `application/json` and `I/O` are words, not paths.
pub(super) fn is_path(core: &[u8]) -> bool {
    let first = at(core, 0);
    if first == b'/' || first == b'\\' {
        return core.len() > 1;
    }
    if [&b"~/"[..], b"./", b"../", b".\\", b"..\\"]
        .iter()
        .any(|p| core.starts_with(p))
    {
        return true;
    }
    if first.is_ascii_alphabetic() && at(core, 1) == b':' && matches!(at(core, 2), b'\\' | b'/') {
        return true;
    }
    if first.is_ascii_digit() {
        // 2024/01/02, 3/4: dates and fractions.
        return false;
    }
    let separators = core.iter().filter(|&&b| b == b'/' || b == b'\\').count();
    separators >= 2 || has_extension(base_name(core))
}

pub(super) fn base_name(path: &[u8]) -> &[u8] {
    let start = path
        .iter()
        .rposition(|&b| b == b'/' || b == b'\\')
        .map_or(0, |i| i + 1);
    path.get(start..).unwrap_or_default()
}

/// `main.py`, `example.com`: a dot, then 1 to 6 letters or digits starting with a letter.
pub(super) fn has_extension(name: &[u8]) -> bool {
    let Some(dot) = name.iter().rposition(|&b| b == b'.') else {
        return false;
    };
    let ext = name.get(dot + 1..).unwrap_or_default();
    (1..=6).contains(&ext.len())
        && ext.first().is_some_and(u8::is_ascii_alphabetic)
        && ext.iter().all(u8::is_ascii_alphanumeric)
}

/// `path:12:5` → `path`: the line and column after a file.
pub(super) fn strip_location(mut core: &[u8]) -> &[u8] {
    for _ in 0..2 {
        let digits = core.iter().rev().take_while(|b| b.is_ascii_digit()).count();
        if digits == 0 || digits == core.len() {
            break;
        }
        let colon = core.len() - digits - 1;
        if at(core, colon) != b':' || colon == 0 {
            break;
        }
        core = core.get(..colon).unwrap_or(core);
    }
    core
}

/// `main.py:12`, `main.js:12:5` (and `example.com:8080`) → the name without its numbers.
pub(super) fn strip_file_location(core: &[u8]) -> Option<&[u8]> {
    let stripped = strip_location(core);
    (stripped.len() < core.len() && has_extension(stripped)).then_some(stripped)
}

/// A path becomes its base name, normalised like any word; a directory (`/tmp/x/`) `<path>`.
pub(super) fn path<'a>(core: &'a [u8], cx: &mut Cx<'a>, out: &mut Vec<u8>) {
    let base = base_name(strip_location(core));
    if base.is_empty() {
        out.extend_from_slice(b"<path>");
    } else {
        word(base, 0, base.len(), Mode::Plain, cx, out);
    }
}

/// `scheme://user@host:port/a/123?q=1#f` → `scheme://<user>@host:<port>/a/<n>?<query>`;
/// `file://` URLs are paths.
pub(super) fn url_chunk<'a>(whole: &'a [u8], cx: &mut Cx<'a>, out: &mut Vec<u8>) {
    let (core, tail) = whole.split_at(trailing_punct_start(whole, b".,;:!?"));
    let Some(sep) = core.windows(3).position(|w| w == b"://") else {
        out.extend_from_slice(whole);
        return;
    };
    let (scheme, rest) = (
        core.get(..sep).unwrap_or_default(),
        core.get(sep + 3..).unwrap_or_default(),
    );
    if scheme.eq_ignore_ascii_case(b"file") {
        path(rest, cx, out);
        out.extend_from_slice(tail);
        return;
    }
    out.extend_from_slice(scheme);
    out.extend_from_slice(b"://");
    let authority_end = rest
        .iter()
        .position(|b| matches!(b, b'/' | b'?' | b'#'))
        .unwrap_or(rest.len());
    let (authority, mut rest) = rest.split_at(authority_end);
    let host_port = match authority.iter().rposition(|&b| b == b'@') {
        Some(i) => {
            out.extend_from_slice(b"<user>@");
            authority.get(i + 1..).unwrap_or_default()
        }
        None => authority,
    };
    let port_digits = host_port
        .iter()
        .rev()
        .take_while(|b| b.is_ascii_digit())
        .count();
    let (host, port) = if port_digits > 0
        && port_digits < host_port.len()
        && at(host_port, host_port.len() - port_digits - 1) == b':'
    {
        (
            host_port
                .get(..host_port.len() - port_digits - 1)
                .unwrap_or_default(),
            true,
        )
    } else {
        (host_port, false)
    };
    if host.first() == Some(&b'[') || is_ipv6(host) {
        out.extend_from_slice(b"<ip>");
    } else {
        word(host, 0, host.len(), Mode::Plain, cx, out);
    }
    if port {
        out.extend_from_slice(b":<port>");
    }
    let path_end = rest
        .iter()
        .position(|b| matches!(b, b'?' | b'#'))
        .unwrap_or(rest.len());
    let (url_path, after) = rest.split_at(path_end);
    rest = url_path;
    while let Some(slash) = rest.first().filter(|&&b| b == b'/') {
        out.push(*slash);
        rest = rest.get(1..).unwrap_or_default();
        let end = rest.iter().position(|&b| b == b'/').unwrap_or(rest.len());
        let (segment, next) = rest.split_at(end);
        word(segment, 0, segment.len(), Mode::Plain, cx, out);
        rest = next;
    }
    if after.first() == Some(&b'?') && after.len() > 1 {
        out.extend_from_slice(b"?<query>");
    }
    out.extend_from_slice(tail);
}

/// `name@domain.tld`.
pub(super) fn is_email(core: &[u8]) -> bool {
    let Some(at_sign) = core.iter().position(|&b| b == b'@') else {
        return false;
    };
    let (local, domain) = (
        core.get(..at_sign).unwrap_or_default(),
        core.get(at_sign + 1..).unwrap_or_default(),
    );
    let tld = domain
        .iter()
        .rposition(|&b| b == b'.')
        .and_then(|i| domain.get(i + 1..))
        .unwrap_or_default();
    !local.is_empty()
        && local
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'%' | b'+' | b'-'))
        && domain
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-'))
        && tld.len() >= 2
        && tld.iter().all(u8::is_ascii_alphabetic)
}

/// `::1`, `fe80::1ff:fe23:4567:890a`: hex groups and colons, with a digit, and either `::` or
/// all eight groups.
pub(super) fn is_ipv6(core: &[u8]) -> bool {
    let colons = core.iter().filter(|&&b| b == b':').count();
    colons >= 2
        && core.iter().any(u8::is_ascii_digit)
        && core
            .iter()
            .all(|b| b.is_ascii_hexdigit() || matches!(b, b':' | b'.'))
        && (contains(core, b"::") || colons >= 7)
}
