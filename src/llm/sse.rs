//! Server-sent events, as both providers stream them: `event:` and `data:` lines, an empty
//! line ending each event. Bytes arrive in arbitrary pieces; this keeps the unfinished tail.
//! Each byte is looked at once however the pieces fall (a server may send one event of
//! megabytes in thousands of pieces), and completed events leave the buffer once per piece.

/// The most bytes one event may hold before the stream is judged broken.
const MAX_EVENT_BYTES: usize = 8 * 1024 * 1024;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` name, when the server gave one (Anthropic does, OpenAI does not).
    pub name: Option<String>,
    pub data: String,
}

#[derive(Debug, Default)]
pub struct SseParser {
    buffer: Vec<u8>,
    /// How far into `buffer` no event's end begins: the next search starts here.
    scanned: usize,
    /// Bytes looked at for an event's end, in all: what keeps the parsing linear, told.
    examined: usize,
    /// The event under way is being passed over (see [`SseParser::skip_event`]).
    skipping: bool,
}

impl SseParser {
    /// Feed a piece of the body; returns the events it completed.
    pub fn feed(&mut self, bytes: &[u8]) -> Result<Vec<SseEvent>, String> {
        self.buffer.extend_from_slice(bytes);
        if self.skipping {
            match event_end(&self.buffer, 0) {
                Some((end, skip)) => {
                    self.buffer.drain(..end + skip);
                    self.skipping = false;
                    self.scanned = 0;
                }
                None => {
                    // A separator may be cut between pieces: its first bytes stay.
                    let keep = self.buffer.len().saturating_sub(3);
                    self.buffer.drain(..keep);
                    return Ok(Vec::new());
                }
            }
        }
        let mut events = Vec::new();
        let mut start = 0;
        let mut from = self.scanned;
        while let Some((end, skip)) = event_end(&self.buffer, from) {
            self.examined += end + skip - from;
            let text = std::str::from_utf8(&self.buffer[start..end])
                .map_err(|_| "the stream is not UTF-8".to_string())?;
            if let Some(event) = parse_event(text) {
                events.push(event);
            }
            start = end + skip;
            from = start;
        }
        self.examined += self.buffer.len() - from.min(self.buffer.len());
        self.buffer.drain(..start);
        // A separator may be cut between this piece and the next: look again at its last bytes.
        self.scanned = self.buffer.len().saturating_sub(3);
        if self.buffer.len() > MAX_EVENT_BYTES {
            return Err(format!(
                "one streamed event is larger than {MAX_EVENT_BYTES} bytes"
            ));
        }
        Ok(events)
    }

    /// After an event too large to read (`feed`'s error): pass over the rest of it, and read
    /// the events after it. For a stream that goes on (a server's events), not a model's
    /// answer, where a broken event is a broken answer.
    pub fn skip_event(&mut self) {
        let keep = self.buffer.len().saturating_sub(3);
        self.buffer.drain(..keep);
        self.scanned = 0;
        self.skipping = true;
    }

    /// The body ended: whatever is left is the last event (a server may omit the blank line).
    pub fn finish(&mut self) -> Option<SseEvent> {
        let rest = std::mem::take(&mut self.buffer);
        parse_event(&String::from_utf8_lossy(&rest))
    }
}

/// Where the first event ending at or after `from` ends (its length, and how many separator
/// bytes follow it): a blank line, "\n\n" or "\r\n\r\n".
fn event_end(buffer: &[u8], from: usize) -> Option<(usize, usize)> {
    let mut i = from;
    while let Some(offset) = buffer.get(i..)?.iter().position(|&b| b == b'\n') {
        let at = i + offset;
        match buffer.get(at + 1) {
            Some(b'\n') => return Some((at, 2)),
            Some(b'\r')
                if at > 0 && buffer[at - 1] == b'\r' && buffer.get(at + 2) == Some(&b'\n') =>
            {
                return Some((at - 1, 4))
            }
            _ => i = at + 1,
        }
    }
    None
}

fn parse_event(text: &str) -> Option<SseEvent> {
    let mut name = None;
    let mut data: Vec<&str> = Vec::new();
    for line in text.lines() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.is_empty() || line.starts_with(':') {
            continue;
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        match field {
            "event" => name = Some(value.to_string()),
            "data" => data.push(value),
            _ => {}
        }
    }
    if data.is_empty() && name.is_none() {
        return None;
    }
    Some(SseEvent {
        name,
        data: data.join("\n"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_too_large_is_passed_over_and_the_next_one_read() {
        let mut p = SseParser::default();
        let big = vec![b'x'; MAX_EVENT_BYTES + 10];
        assert!(p.feed(b"data: ").is_ok());
        assert!(p.feed(&big).is_err());
        p.skip_event();
        assert_eq!(p.feed(b"xxxx\n").unwrap_or_default(), vec![]);
        let events = p.feed(b"\ndata: {\"next\":1}\n\n").unwrap_or_default();
        assert_eq!(
            events,
            vec![SseEvent {
                name: None,
                data: "{\"next\":1}".to_string()
            }]
        );
    }

    #[test]
    fn events_split_across_pieces_are_put_back_together() {
        let mut p = SseParser::default();
        assert!(p
            .feed(b"event: message_start\nda")
            .unwrap_or_default()
            .is_empty());
        let events = p
            .feed(b"ta: {\"a\":1}\n\n: ping\n\ndata: [DONE]\r\n\r\n")
            .unwrap_or_default();
        assert_eq!(
            events,
            vec![
                SseEvent {
                    name: Some("message_start".to_string()),
                    data: "{\"a\":1}".to_string()
                },
                SseEvent {
                    name: None,
                    data: "[DONE]".to_string()
                }
            ]
        );
    }

    #[test]
    fn a_separator_cut_between_pieces_is_found() {
        let mut p = SseParser::default();
        let mut seen = Vec::new();
        for piece in [
            &b"data: a\r\n\r"[..],
            b"\ndata: b\n",
            b"\ndata: c\r",
            b"\n\r\n",
        ] {
            seen.extend(
                p.feed(piece)
                    .unwrap_or_default()
                    .into_iter()
                    .map(|e| e.data),
            );
        }
        assert_eq!(seen, ["a", "b", "c"]);
    }

    #[test]
    fn a_large_event_in_small_pieces_is_read_in_linear_time() {
        // 4 MiB in 1 KiB pieces: rescanning the whole buffer per piece took close to a minute.
        let body = format!("data: {}\n\n", "x".repeat(4 << 20));
        let mut p = SseParser::default();
        let mut events = Vec::new();
        for piece in body.as_bytes().chunks(1024) {
            events.extend(p.feed(piece).unwrap_or_default());
        }
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].data.len(), 4 << 20);
        // Each byte once, and the last three of each piece again (a separator may be cut).
        assert!(
            p.examined <= body.len() + 3 * body.len() / 1024 + 3,
            "{}",
            p.examined
        );
    }

    #[test]
    fn an_event_past_the_limit_is_refused() {
        let mut p = SseParser::default();
        let piece = vec![b'x'; 1 << 20];
        let mut refused = None;
        for _ in 0..9 {
            if let Err(e) = p.feed(&piece) {
                refused = Some(e);
                break;
            }
        }
        assert!(refused.is_some_and(|e| e.contains("larger than")));
    }

    #[test]
    fn a_last_event_without_a_blank_line_is_kept() {
        let mut p = SseParser::default();
        assert!(p.feed(b"data: x").unwrap_or_default().is_empty());
        assert_eq!(p.finish().map(|e| e.data), Some("x".to_string()));
    }
}
