//! Word lists the readers consult, as `matches!` (which compiles to a switch on the length, then
//! compares).

use super::bytes::lowercase;

/// Words after which any number names the cause and is kept (any case): `[Errno 111]`,
/// `exit code 2`, `exit status 1`, `signal 9`, `curl: (7)`, `HTTP 404`.
pub(super) fn is_cause_lead(word: &[u8]) -> bool {
    let mut buf = [0; 16];
    matches!(
        lowercase(word, &mut buf),
        Some(
            b"errno"
                | b"winerror"
                | b"code"
                | b"status"
                | b"exit"
                | b"exitcode"
                | b"exit_code"
                | b"returncode"
                | b"return_code"
                | b"rc"
                | b"signal"
                | b"sig"
                | b"signum"
                | b"statuscode"
                | b"status_code"
                | b"errorcode"
                | b"error_code"
                | b"curl"
                | b"http"
                | b"https"
        )
    )
}

/// Words after which a 3-digit HTTP status is kept (any case): `HTTP Error 404`,
/// `<Response [404]>`.
pub(super) fn is_status_lead(word: &[u8]) -> bool {
    let mut buf = [0; 16];
    matches!(
        lowercase(word, &mut buf),
        Some(b"error" | b"err" | b"response")
    )
}

/// First words of HTTP reason phrases (any case): a status (100–599) just before one is kept
/// (`404 Client Error`, `503 Service Unavailable`, `200 OK`).
pub(super) fn is_reason_word(word: &[u8]) -> bool {
    let mut buf = [0; 16];
    matches!(
        lowercase(word, &mut buf),
        Some(
            b"ok"
                | b"created"
                | b"accepted"
                | b"moved"
                | b"found"
                | b"see"
                | b"not"
                | b"temporary"
                | b"permanent"
                | b"bad"
                | b"unauthorized"
                | b"payment"
                | b"forbidden"
                | b"method"
                | b"proxy"
                | b"request"
                | b"conflict"
                | b"gone"
                | b"length"
                | b"precondition"
                | b"payload"
                | b"uri"
                | b"unsupported"
                | b"range"
                | b"expectation"
                | b"misdirected"
                | b"unprocessable"
                | b"locked"
                | b"failed"
                | b"too"
                | b"upgrade"
                | b"internal"
                | b"gateway"
                | b"service"
                | b"variant"
                | b"insufficient"
                | b"loop"
                | b"network"
                | b"client"
                | b"server"
        )
    )
}

/// Units glued to a number that make it a duration: `12ms`, `1.5s`, `3m`, `1h2m3s`.
pub(super) fn is_duration_unit(unit: &[u8]) -> bool {
    matches!(
        unit,
        b"ns"
            | b"us"
            | b"\xc2\xb5s"
            | b"ms"
            | b"s"
            | b"sec"
            | b"secs"
            | b"m"
            | b"min"
            | b"mins"
            | b"h"
            | b"hr"
            | b"hrs"
            | b"d"
    )
}

/// Units after a number and a blank that make it a duration: `12 ms`, `3.2 s`, `3 seconds`.
pub(super) fn is_duration_word(word: &[u8]) -> bool {
    matches!(
        word,
        b"ns"
            | b"us"
            | b"\xc2\xb5s"
            | b"ms"
            | b"s"
            | b"sec"
            | b"secs"
            | b"second"
            | b"seconds"
            | b"min"
            | b"mins"
            | b"minute"
            | b"minutes"
            | b"hr"
            | b"hrs"
            | b"hour"
            | b"hours"
            | b"day"
            | b"days"
            | b"millisecond"
            | b"milliseconds"
            | b"microsecond"
            | b"microseconds"
            | b"nanosecond"
            | b"nanoseconds"
    )
}

/// Units that make a number a size, glued (`10MB`) or after a blank (`1024 bytes`).
pub(super) fn is_size_unit(unit: &[u8]) -> bool {
    matches!(
        unit,
        b"B" | b"KB"
            | b"kB"
            | b"MB"
            | b"GB"
            | b"TB"
            | b"KiB"
            | b"MiB"
            | b"GiB"
            | b"TiB"
            | b"K"
            | b"M"
            | b"G"
            | b"bytes"
            | b"byte"
    )
}

/// A month's name, short or long (`Jan`, `Sept`, `January`).
pub(super) fn is_month(w: &[u8]) -> bool {
    matches!(
        w,
        b"Jan"
            | b"Feb"
            | b"Mar"
            | b"Apr"
            | b"May"
            | b"Jun"
            | b"Jul"
            | b"Aug"
            | b"Sep"
            | b"Sept"
            | b"Oct"
            | b"Nov"
            | b"Dec"
            | b"January"
            | b"February"
            | b"March"
            | b"April"
            | b"June"
            | b"July"
            | b"August"
            | b"September"
            | b"October"
            | b"November"
            | b"December"
    )
}

/// A weekday's name, short or long (`Tue`, `Tuesday`).
pub(super) fn is_weekday(w: &[u8]) -> bool {
    matches!(
        w,
        b"Mon"
            | b"Tue"
            | b"Wed"
            | b"Thu"
            | b"Fri"
            | b"Sat"
            | b"Sun"
            | b"Monday"
            | b"Tuesday"
            | b"Wednesday"
            | b"Thursday"
            | b"Friday"
            | b"Saturday"
            | b"Sunday"
    )
}
