//! Output capture with a cap: the first and last bytes are kept, the middle is counted.

use std::collections::VecDeque;

/// Bytes kept from the start of a stream.
pub const CAPTURE_HEAD: usize = 64 * 1024;
/// Bytes kept from the end of a stream.
pub const CAPTURE_TAIL: usize = 64 * 1024;

/// A stream as stored: readable text (invalid UTF-8 replaced), and how much was cut.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Captured {
    pub text: String,
    pub cut: u64,
}

impl Captured {
    pub fn from_text(text: &str) -> Self {
        Captured {
            text: text.to_string(),
            cut: 0,
        }
    }
}

#[derive(Default)]
pub struct Capture {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    cut: u64,
}

impl Capture {
    pub fn push(&mut self, mut bytes: &[u8]) {
        let room = CAPTURE_HEAD.saturating_sub(self.head.len());
        if room > 0 {
            let take = room.min(bytes.len());
            self.head
                .extend_from_slice(bytes.get(..take).unwrap_or_default());
            bytes = bytes.get(take..).unwrap_or_default();
        }
        self.tail.extend(bytes);
        let over = self.tail.len().saturating_sub(CAPTURE_TAIL);
        if over > 0 {
            self.tail.drain(..over);
            self.cut += over as u64;
        }
    }

    pub fn finish(mut self) -> Captured {
        if self.cut > 0 {
            self.cut_at_line_ends();
        }
        let mut text = String::from_utf8_lossy(&self.head).into_owned();
        if self.cut > 0 {
            // "bytes cut" is what the evidence parser recognises as this marker.
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(&format!(
                "… {} bytes cut by Healer ({}; the first {} KiB and the last {} KiB are kept) …\n",
                self.cut,
                human_bytes(self.cut),
                CAPTURE_HEAD / 1024,
                CAPTURE_TAIL / 1024
            ));
        }
        let tail: Vec<u8> = self.tail.into_iter().collect();
        text.push_str(&String::from_utf8_lossy(&tail));
        Captured {
            text,
            cut: self.cut,
        }
    }
}

impl Capture {
    /// The marker goes between whole lines: the head's unfinished last line and the tail's
    /// first partial line are cut too (unless a line is longer than [`LINE_SNAP`]).
    fn cut_at_line_ends(&mut self) {
        if let Some(end) = self.head.iter().rposition(|&b| b == b'\n') {
            let partial = self.head.len() - end - 1;
            if partial <= LINE_SNAP {
                self.head.truncate(end + 1);
                self.cut += partial as u64;
            }
        }
        if let Some(start) = self
            .tail
            .iter()
            .take(LINE_SNAP + 1)
            .position(|&b| b == b'\n')
        {
            self.tail.drain(..=start);
            self.cut += start as u64 + 1;
        }
    }
}

/// The longest partial line moved into the cut so that the marker falls between lines.
const LINE_SNAP: usize = 4096;

fn human_bytes(n: u64) -> String {
    const MIB: u64 = 1024 * 1024;
    if n >= MIB {
        format!("{:.1} MiB", n as f64 / MIB as f64)
    } else if n >= 1024 {
        format!("{:.1} KiB", n as f64 / 1024.0)
    } else {
        format!("{n} bytes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_output_is_kept_whole() {
        let mut c = Capture::default();
        c.push(b"hello ");
        c.push(b"world");
        assert_eq!(c.finish(), Captured::from_text("hello world"));
    }

    #[test]
    fn large_output_keeps_head_and_tail_and_says_what_was_cut() {
        let mut c = Capture::default();
        c.push(&[b'a'; CAPTURE_HEAD]);
        c.push(&[b'b'; 1_000_000]);
        c.push(b"the end");
        let out = c.finish();
        assert_eq!(out.cut, 1_000_000 + 7 - CAPTURE_TAIL as u64);
        assert!(out.text.starts_with(&"a".repeat(CAPTURE_HEAD)));
        assert!(out.text.ends_with("bbbthe end"));
        assert!(
            out.text.contains("cut by Healer"),
            "{}",
            &out.text[CAPTURE_HEAD..CAPTURE_HEAD + 100]
        );
    }

    #[test]
    fn the_cut_marker_falls_between_whole_lines() {
        let mut c = Capture::default();
        let lines: String = (0..20_000).map(|i| format!("line {i}\n")).collect();
        c.push(lines.as_bytes());
        let out = c.finish();
        let marker = out
            .text
            .lines()
            .position(|l| l.contains("cut by Healer"))
            .expect("a marker line");
        let all: Vec<&str> = out.text.lines().collect();
        assert!(all[marker - 1].starts_with("line "), "{}", all[marker - 1]);
        assert!(all[marker + 1].starts_with("line "), "{}", all[marker + 1]);
        // Every kept line is a whole line of the output.
        for line in all
            .iter()
            .filter(|l| !l.contains("cut by Healer") && !l.is_empty())
        {
            let n: usize = line
                .trim_start_matches("line ")
                .parse()
                .expect("whole line");
            assert!(n < 20_000);
        }
        assert_eq!(
            out.cut as usize,
            lines.len()
                - out
                    .text
                    .lines()
                    .filter(|l| l.starts_with("line "))
                    .map(|l| l.len() + 1)
                    .sum::<usize>()
        );
    }

    #[test]
    fn invalid_utf8_stays_readable() {
        let mut c = Capture::default();
        c.push(&[0x66, 0x6f, 0xff, 0xfe, 0x6f]);
        assert_eq!(c.finish().text, "fo\u{fffd}\u{fffd}o");
    }
}
