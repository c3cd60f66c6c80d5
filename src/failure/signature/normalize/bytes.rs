//! Byte classes, and the small readers every part of the scanner uses. The readers are marked
//! `#[inline]`: they sit on the hot path of every byte, and in a module of their own they could
//! otherwise land in another codegen unit than their callers and stop being inlined.

/// Byte classes, as bits of [`INFO`].
pub(super) const ALPHA: u8 = 1; // ASCII letters, `_` and the bytes of non-ASCII characters
pub(super) const DIGIT: u8 = 1 << 1;
pub(super) const PUNCT: u8 = 1 << 2; // punctuation that belongs to a chunk: . - / \ : @ + # % ~ $ ? & !
pub(super) const SLASH: u8 = 1 << 3; // / or \ (also PUNCT)
pub(super) const COLON: u8 = 1 << 4; // : (also PUNCT)
pub(super) const AT: u8 = 1 << 5; // @ (also PUNCT)
pub(super) const SPACE: u8 = 1 << 6; // blanks and control characters
pub(super) const DELIM: u8 = 1 << 7; // quotes, brackets and the other separators, copied as they are
pub(super) const CHUNK: u8 = ALPHA | DIGIT | PUNCT;
pub(super) const ESC: u8 = 0x1b;

pub(super) static INFO: [u8; 256] = info_table();

pub(super) const fn info_table() -> [u8; 256] {
    let mut table = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        let b = i as u8;
        table[i] = if b.is_ascii_alphabetic() || b == b'_' || b >= 0x80 {
            ALPHA
        } else if b.is_ascii_digit() {
            DIGIT
        } else if b == b'/' || b == b'\\' {
            PUNCT | SLASH
        } else if b == b':' {
            PUNCT | COLON
        } else if b == b'@' {
            PUNCT | AT
        } else if matches!(
            b,
            b'.' | b'-' | b'+' | b'#' | b'%' | b'~' | b'$' | b'?' | b'&' | b'!'
        ) {
            PUNCT
        } else if b == ESC {
            0
        } else if b <= b' ' || b == 0x7f {
            SPACE
        } else {
            DELIM
        };
        i += 1;
    }
    table
}

#[inline]
pub(super) fn info(b: u8) -> u8 {
    INFO[usize::from(b)]
}

/// The byte at `i`, or 0 (a blank) past the end: lets the readers look ahead without bounds
/// checks of their own.
#[inline]
pub(super) fn at(s: &[u8], i: usize) -> u8 {
    s.get(i).copied().unwrap_or(0)
}

#[inline]
pub(super) fn is_digit_at(s: &[u8], i: usize) -> bool {
    at(s, i).is_ascii_digit()
}

#[inline]
pub(super) fn digits_end(s: &[u8], mut i: usize) -> usize {
    while is_digit_at(s, i) {
        i += 1;
    }
    i
}

#[inline]
pub(super) fn alnum_end(s: &[u8], mut i: usize) -> usize {
    while at(s, i).is_ascii_alphanumeric() {
        i += 1;
    }
    i
}

/// End of a run of [`ALPHA`] bytes (letters, `_`, non-ASCII).
#[inline]
pub(super) fn alpha_end(s: &[u8], mut i: usize) -> usize {
    while info(at(s, i)) & ALPHA != 0 {
        i += 1;
    }
    i
}

#[inline]
pub(super) fn two_digits(s: &[u8], i: usize) -> bool {
    is_digit_at(s, i) && is_digit_at(s, i + 1)
}

#[inline]
pub(super) fn starts_with_ignore_case(s: &[u8], prefix: &[u8]) -> bool {
    s.get(..prefix.len())
        .is_some_and(|head| head.eq_ignore_ascii_case(prefix))
}

#[inline]
pub(super) fn ends_with_ignore_case(s: &[u8], suffix: &[u8]) -> bool {
    s.len() >= suffix.len()
        && s.get(s.len() - suffix.len()..)
            .is_some_and(|tail| tail.eq_ignore_ascii_case(suffix))
}

/// Whether `needle` occurs in `haystack`: a scan for its first byte, then a compare.
pub(super) fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    let Some((&first, rest)) = needle.split_first() else {
        return true;
    };
    let last_start = haystack.len().saturating_sub(rest.len());
    let mut i = 0;
    while let Some(offset) = haystack
        .get(i..last_start)
        .and_then(|h| h.iter().position(|&b| b == first))
    {
        let at = i + offset;
        if haystack.get(at + 1..at + 1 + rest.len()) == Some(rest) {
            return true;
        }
        i = at + 1;
    }
    false
}

/// `word` in ASCII lowercase, in `buf`; None when it is longer than any listed word.
#[inline]
pub(super) fn lowercase<'b>(word: &[u8], buf: &'b mut [u8; 16]) -> Option<&'b [u8]> {
    let dst = buf.get_mut(..word.len())?;
    for (d, s) in dst.iter_mut().zip(word) {
        *d = s.to_ascii_lowercase();
    }
    Some(dst)
}
