//! Reading what someone hands Healer — standard input, a file named on the command line, a line
//! typed at a prompt — never more than a cap: `/dev/zero` piped into a command, or a file that
//! never ends, is refused after one byte past the cap, with a sentence saying what the cap is.

use std::io::{BufRead, Read};
use std::path::Path;

use crate::error::{Error, Result};

/// The most a secret (a workflow's secret, a provider's key, a token) may be: room for a
/// certificate bundle or a service account's JSON, not for a disk image.
pub const SECRET_BYTES: usize = 64 * 1024;
/// The most a line typed at a prompt may be (an answer, a package name, a note).
pub const LINE_BYTES: usize = 64 * 1024;
/// The most of a failure's raw output `healer errors classify` reads.
pub const OUTPUT_BYTES: usize = 32 * 1024 * 1024;
/// The most a transcript (`healer session check`) may be.
pub const TRANSCRIPT_BYTES: usize = 512 * 1024 * 1024;
/// The most a cluster key file may be (the key is 44 characters).
pub const KEY_FILE_BYTES: usize = 4 * 1024;

/// Everything `reader` holds, up to `cap` bytes; `what` names it in the refusal ("the value on
/// standard input").
pub fn read(reader: impl Read, cap: usize, what: &str) -> Result<Vec<u8>> {
    let limit = u64::try_from(cap).unwrap_or(u64::MAX).saturating_add(1);
    let mut bytes = Vec::new();
    reader
        .take(limit)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(format!("cannot read {what}"), e))?;
    if bytes.len() > cap {
        return Err(too_large(what, cap));
    }
    Ok(bytes)
}

/// [`read`] of the file at `path`.
pub fn read_file(path: &Path, cap: usize, what: &str) -> Result<Vec<u8>> {
    let file = std::fs::File::open(path)
        .map_err(|e| Error::io(format!("cannot read {what} {}", path.display()), e))?;
    read(file, cap, &format!("{what} {}", path.display()))
}

/// [`read`] of standard input, as text.
pub fn read_stdin_text(cap: usize, what: &str) -> Result<String> {
    let bytes = read(std::io::stdin().lock(), cap, what)?;
    String::from_utf8(bytes).map_err(|_| Error::InvalidInput(format!("{what} is not UTF-8 text")))
}

/// One line from `lines` (its newline included, as `read_line` gives it), at most
/// [`LINE_BYTES`]; 0 bytes read means the input closed.
pub fn read_line(lines: &mut impl BufRead, line: &mut String) -> Result<usize> {
    let limit = u64::try_from(LINE_BYTES)
        .unwrap_or(u64::MAX)
        .saturating_add(1);
    let read = lines
        .take(limit)
        .read_line(line)
        .map_err(|e| Error::io("cannot read standard input", e))?;
    if read > LINE_BYTES {
        return Err(too_large("a line of standard input", LINE_BYTES));
    }
    Ok(read)
}

fn too_large(what: &str, cap: usize) -> Error {
    Error::InvalidInput(format!(
        "{what} is larger than {}, the most Healer reads there; nothing was read or kept",
        size(cap)
    ))
}

/// `bytes` in words a person reads: "64 KB", "32 MB".
fn size(bytes: usize) -> String {
    const KB: usize = 1024;
    match bytes {
        b if b >= KB * KB && b % (KB * KB) == 0 => format!("{} MB", b / (KB * KB)),
        b if b >= KB => format!("{} KB", b / KB),
        b => format!("{b} bytes"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endless_input_is_refused_after_the_cap_and_a_small_one_is_read_whole() {
        let endless = std::io::repeat(0);
        let error = read(endless, 1024, "the value on standard input")
            .expect_err("refused")
            .to_string();
        assert!(error.contains("larger than 1 KB"), "{error}");
        assert_eq!(read(&b"sk-key"[..], 1024, "x").expect("read"), b"sk-key");
        let mut line = String::new();
        let mut endless = std::io::BufReader::new(std::io::repeat(b'y'));
        assert!(read_line(&mut endless, &mut line).is_err());
    }
}
