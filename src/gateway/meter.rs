//! What an answer used, read from the answer itself as it streams by: Anthropic's
//! `message_start` / `message_delta` events, OpenAI's `response.completed` (Responses) or a
//! final chunk's `usage` (Chat Completions), or a whole JSON body's `usage`. Linear in the
//! answer's size (each byte is looked at once); a line longer than [`MAX_LINE`] is skipped
//! (no usage event is that long).

use serde_json::Value;

use crate::llm::Usage;

/// The longest event line read for usage.
pub const MAX_LINE: usize = 1024 * 1024;
/// The most of a plain JSON answer kept to read its usage.
const MAX_BODY: usize = 16 * 1024 * 1024;

/// Reads one answer's usage as it passes.
#[derive(Debug, Default)]
pub struct Meter {
    stream: bool,
    line: Vec<u8>,
    skipping: bool,
    body: Vec<u8>,
    usage: Usage,
    /// Bytes that passed.
    pub bytes: u64,
}

impl Meter {
    /// A meter for an answer that is an event stream (`text/event-stream`) or not.
    pub fn new(stream: bool) -> Meter {
        Meter {
            stream,
            ..Meter::default()
        }
    }

    pub fn push(&mut self, chunk: &[u8]) {
        self.bytes += chunk.len() as u64;
        if !self.stream {
            if self.body.len() + chunk.len() <= MAX_BODY {
                self.body.extend_from_slice(chunk);
            }
            return;
        }
        let mut rest = chunk;
        while let Some(at) = memchr::memchr(b'\n', rest) {
            let (head, tail) = rest.split_at(at);
            if !self.skipping {
                self.line.extend_from_slice(head);
                self.take_line();
            }
            self.line.clear();
            self.skipping = false;
            rest = tail.get(1..).unwrap_or_default();
        }
        if !self.skipping {
            if self.line.len() + rest.len() > MAX_LINE {
                self.line.clear();
                self.skipping = true;
            } else {
                self.line.extend_from_slice(rest);
            }
        }
    }

    fn take_line(&mut self) {
        let line = String::from_utf8_lossy(&self.line);
        let Some(data) = line.trim_end_matches('\r').strip_prefix("data:") else {
            return;
        };
        if let Ok(value) = serde_json::from_str::<Value>(data.trim()) {
            merge(&mut self.usage, &value);
        }
    }

    /// What the answer used, once it has ended.
    pub fn finish(mut self) -> Usage {
        if self.stream {
            if !self.line.is_empty() && !self.skipping {
                self.take_line();
            }
        } else if let Ok(value) = serde_json::from_slice::<Value>(&self.body) {
            match &value {
                // Gemini's stream asked for without `alt=sse`: one JSON array of its chunks.
                Value::Array(chunks) => chunks.iter().for_each(|c| merge(&mut self.usage, c)),
                _ => merge(&mut self.usage, &value),
            }
        }
        self.usage
    }
}

/// Take the larger of each count: Anthropic's counts arrive across events (input first, the
/// output growing), OpenAI's once.
fn merge(usage: &mut Usage, event: &Value) {
    let found = ["usage", "message", "response"].iter().find_map(|k| {
        let inner = event.get(*k)?;
        match *k {
            "usage" => Some(inner),
            _ => inner.get("usage"),
        }
    });
    let n = |v: Option<&Value>| v.and_then(Value::as_u64).unwrap_or(0);
    // Gemini: `usageMetadata` on its chunks (the last carries the whole call's counts).
    if let Some(g) = event.get("usageMetadata").filter(|u| u.is_object()) {
        let prompt = n(g.get("promptTokenCount"));
        let completion = n(g.get("candidatesTokenCount")) + n(g.get("thoughtsTokenCount"));
        usage.prompt_tokens = usage.prompt_tokens.max(prompt);
        usage.completion_tokens = usage.completion_tokens.max(completion);
        usage.cached_tokens = usage.cached_tokens.max(n(g.get("cachedContentTokenCount")));
        return;
    }
    let Some(u) = found.filter(|u| u.is_object()) else {
        return;
    };
    let cache_read = n(u.get("cache_read_input_tokens"));
    let cache_made = n(u.get("cache_creation_input_tokens"));
    let prompt = n(u.get("input_tokens").or(u.get("prompt_tokens"))) + cache_read + cache_made;
    let completion = n(u.get("output_tokens").or(u.get("completion_tokens")));
    let cached = cache_read
        .max(n(u.pointer("/input_tokens_details/cached_tokens")))
        .max(n(u.pointer("/prompt_tokens_details/cached_tokens")));
    usage.prompt_tokens = usage.prompt_tokens.max(prompt);
    usage.completion_tokens = usage.completion_tokens.max(completion);
    usage.cached_tokens = usage.cached_tokens.max(cached);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anthropic_events_split_anywhere_give_the_answers_usage() {
        let stream = concat!(
            "event: message_start\n",
            "data: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":120,\"cache_read_input_tokens\":30,\"output_tokens\":1}}}\n\n",
            "event: content_block_delta\n",
            "data: {\"type\":\"content_block_delta\",\"delta\":{\"text\":\"hi\"}}\n\n",
            "event: message_delta\n",
            "data: {\"type\":\"message_delta\",\"usage\":{\"output_tokens\":42}}\n\n",
        );
        for cut in [1, 7, 50, stream.len()] {
            let mut meter = Meter::new(true);
            for piece in stream.as_bytes().chunks(cut) {
                meter.push(piece);
            }
            let usage = meter.finish();
            assert_eq!(usage.prompt_tokens, 150, "cut {cut}");
            assert_eq!(usage.completion_tokens, 42);
            assert_eq!(usage.cached_tokens, 30);
        }
    }

    #[test]
    fn a_gemini_stream_gives_its_last_chunks_usage() {
        let mut meter = Meter::new(true);
        meter.push(b"data: {\"candidates\":[],\"usageMetadata\":{\"promptTokenCount\":90,\"candidatesTokenCount\":3}}\r\n\r\n");
        meter.push(b"data: {\"candidates\":[],\"usageMetadata\":{\"promptTokenCount\":90,\"candidatesTokenCount\":12,\"thoughtsTokenCount\":5,\"cachedContentTokenCount\":40}}\r\n\r\n");
        let usage = meter.finish();
        assert_eq!(
            (
                usage.prompt_tokens,
                usage.completion_tokens,
                usage.cached_tokens
            ),
            (90, 17, 40)
        );
        // Asked for without `alt=sse`, the same chunks come as one JSON array: counted alike.
        let mut whole = Meter::new(false);
        whole.push(br#"[{"usageMetadata":{"promptTokenCount":90,"candidatesTokenCount":3}},{"usageMetadata":{"promptTokenCount":90,"candidatesTokenCount":12}}]"#);
        let usage = whole.finish();
        assert_eq!((usage.prompt_tokens, usage.completion_tokens), (90, 12));
    }

    #[test]
    fn an_openai_answer_streamed_or_whole_gives_its_usage_and_a_huge_line_costs_nothing() {
        let mut meter = Meter::new(true);
        meter.push(b"data: {\"type\":\"response.completed\",\"response\":{\"usage\":{\"input_tokens\":10,\"output_tokens\":5,\"input_tokens_details\":{\"cached_tokens\":4}}}}\n\n");
        let huge = vec![b'x'; MAX_LINE * 3];
        meter.push(b"data: ");
        meter.push(&huge);
        meter.push(b"\n");
        let usage = meter.finish();
        assert_eq!(
            (
                usage.prompt_tokens,
                usage.completion_tokens,
                usage.cached_tokens
            ),
            (10, 5, 4)
        );
        let mut whole = Meter::new(false);
        whole.push(br#"{"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":3}}"#);
        let usage = whole.finish();
        assert_eq!((usage.prompt_tokens, usage.completion_tokens), (7, 3));
    }
}
