//! A shell command line read ahead of running it, as far as approvals need: the simple
//! commands it runs (in pipelines, lists, subshells, `$(…)` and backquotes), each with its
//! words and where its output is redirected. Quotes and escapes are undone; a word with an
//! expansion left in it (`$HOME`, `*`) is marked so that a path in it is never trusted.
//! This is not a shell: what it cannot read for sure it says so, and the caller asks.

/// One word of a command, with its text as the shell would pass it when nothing expands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    pub text: String,
    /// `$…`, a glob or a `~` the shell would expand: the text is not what runs.
    pub expands: bool,
}

/// One simple command: its words (leading `NAME=value` assignments left out) and the files it
/// writes through redirections.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Simple {
    pub words: Vec<Word>,
    pub writes: Vec<Word>,
    /// Its standard input comes from the command before it in a pipeline.
    pub piped_in: bool,
}

/// A command line read ahead: its simple commands in order, and whether some of it could not
/// be read for sure (an unclosed quote, a here-document without its end, a `(` left open).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Line {
    pub commands: Vec<Simple>,
    pub unsure: bool,
}

/// Read `text` as `bash -c` would run it.
pub fn read(text: &str) -> Line {
    let mut line = Line::default();
    let mut reader = Reader {
        chars: text.chars().collect(),
        at: 0,
        line: &mut line,
        depth: 0,
    };
    reader.list();
    line
}

struct Reader<'a> {
    chars: Vec<char>,
    at: usize,
    line: &'a mut Line,
    /// How deep in `$(…)` / `(…)` the reader is: 0 is the top.
    depth: u32,
}

/// The most a command line may nest before the reader gives up on it.
const MAX_DEPTH: u32 = 16;

impl Reader<'_> {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn peek_at(&self, n: usize) -> Option<char> {
        self.chars.get(self.at + n).copied()
    }

    /// Simple commands until the end (or a `)` closing the current nesting).
    fn list(&mut self) {
        let mut current = Simple::default();
        let mut piped = false;
        let mut heredocs: Vec<(String, bool)> = Vec::new();
        loop {
            self.skip_blanks();
            let Some(c) = self.peek() else { break };
            match c {
                ')' if self.depth > 0 => break,
                '\n' => {
                    self.at += 1;
                    self.finish(&mut current, &mut piped, false);
                    for (end, tabs) in std::mem::take(&mut heredocs) {
                        self.skip_heredoc(&end, tabs);
                    }
                }
                '#' => self.skip_comment(),
                ';' | '&' | '|' => {
                    let pipe = c == '|' && self.peek_at(1) != Some('|');
                    self.at += 1;
                    if matches!(self.peek(), Some('&') | Some('|') | Some(';')) && !pipe {
                        self.at += 1;
                    } else if pipe && self.peek() == Some('&') {
                        self.at += 1; // |& pipes stderr too
                    }
                    self.finish(&mut current, &mut piped, pipe);
                }
                '(' => {
                    self.at += 1;
                    self.nested();
                }
                ')' => {
                    // A `)` with nothing open: not a command line a shell would run.
                    self.line.unsure = true;
                    self.at += 1;
                }
                '<' | '>' => {
                    if let Some(heredoc) = self.redirection(&mut current) {
                        heredocs.push(heredoc);
                    }
                }
                _ => {
                    // A number right before a redirection (2>, 1>>) belongs to it.
                    if c.is_ascii_digit() {
                        let digits = self.chars[self.at..]
                            .iter()
                            .take_while(|d| d.is_ascii_digit())
                            .count();
                        if matches!(self.peek_at(digits), Some('<') | Some('>')) {
                            self.at += digits;
                            continue;
                        }
                    }
                    let word = self.word();
                    if current.words.is_empty() && is_assignment(&word.text) {
                        continue;
                    }
                    current.words.push(word);
                }
            }
        }
        self.finish(&mut current, &mut piped, false);
        if !heredocs.is_empty() {
            // Here-documents whose body never came.
            self.line.unsure = true;
        }
    }

    fn finish(&mut self, current: &mut Simple, piped: &mut bool, pipe_after: bool) {
        let mut simple = std::mem::take(current);
        simple.piped_in = *piped;
        if !simple.words.is_empty() || !simple.writes.is_empty() {
            self.line.commands.push(simple);
        }
        *piped = pipe_after;
    }

    /// `( … )` or the inside of `$( … )`: read as a list of its own.
    fn nested(&mut self) {
        if self.depth >= MAX_DEPTH {
            self.line.unsure = true;
            self.at = self.chars.len();
            return;
        }
        self.depth += 1;
        self.list();
        self.depth -= 1;
        if self.peek() == Some(')') {
            self.at += 1;
        } else {
            self.line.unsure = true;
        }
    }

    fn skip_blanks(&mut self) {
        while let Some(c) = self.peek() {
            if c == ' ' || c == '\t' || c == '\r' {
                self.at += 1;
            } else if c == '\\' && self.peek_at(1) == Some('\n') {
                self.at += 2;
            } else {
                break;
            }
        }
    }

    fn skip_comment(&mut self) {
        while let Some(c) = self.peek() {
            if c == '\n' {
                break;
            }
            self.at += 1;
        }
    }

    /// A redirection: `>`, `>>`, `>|`, `&>`, `<`, `<<`, `<<-`, `<<<`, `>&2`, `<(…)`, `>(…)`.
    /// Output files go to the command's writes; a here-document's end word is returned.
    fn redirection(&mut self, current: &mut Simple) -> Option<(String, bool)> {
        let first = self.peek()?;
        self.at += 1;
        if self.peek() == Some('(') {
            // Process substitution: a command of its own.
            self.at += 1;
            self.nested();
            return None;
        }
        if first == '<' {
            match self.peek() {
                Some('<') => {
                    self.at += 1;
                    if self.peek() == Some('<') {
                        self.at += 1; // <<< a word as input
                        self.skip_blanks();
                        self.word();
                        return None;
                    }
                    let tabs = self.peek() == Some('-');
                    if tabs {
                        self.at += 1;
                    }
                    self.skip_blanks();
                    let end = self.word();
                    return Some((end.text, tabs));
                }
                Some('&') | Some('>') => self.at += 1,
                _ => {}
            }
            self.skip_blanks();
            self.word();
            return None;
        }
        // Output.
        match self.peek() {
            Some('>') | Some('|') => self.at += 1,
            Some('&') => {
                self.at += 1;
                // >&2, >&- : another descriptor, not a file.
                let descriptor = self.chars[self.at..]
                    .iter()
                    .take_while(|d| d.is_ascii_digit() || **d == '-')
                    .count();
                if descriptor > 0 {
                    self.at += descriptor;
                    return None;
                }
            }
            _ => {}
        }
        self.skip_blanks();
        let target = self.word();
        if !target.text.is_empty() {
            current.writes.push(target);
        }
        None
    }

    /// A here-document's body: the lines up to the one that is its end word.
    fn skip_heredoc(&mut self, end: &str, tabs: bool) {
        loop {
            let start = self.at;
            while self.peek().is_some_and(|c| c != '\n') {
                self.at += 1;
            }
            let text: String = self.chars[start..self.at].iter().collect();
            let text = if tabs {
                text.trim_start_matches('\t')
            } else {
                &text
            };
            let ended = self.peek().is_none();
            if self.peek() == Some('\n') {
                self.at += 1;
            }
            if text == end {
                return;
            }
            if ended {
                self.line.unsure = true;
                return;
            }
        }
    }

    /// One word: quotes and escapes undone; `$(…)` and backquotes read as commands too.
    fn word(&mut self) -> Word {
        let mut text = String::new();
        let mut expands = false;
        let start = self.at;
        while let Some(c) = self.peek() {
            match c {
                ' ' | '\t' | '\r' | '\n' | ';' | '&' | '|' | '<' | '>' => break,
                '(' | ')' => {
                    // `a(` is no word a command would take: leave it to the list.
                    if self.at == start {
                        self.at += 1;
                        self.line.unsure = true;
                    }
                    break;
                }
                '\\' => {
                    self.at += 1;
                    match self.peek() {
                        Some('\n') => self.at += 1,
                        Some(e) => {
                            text.push(e);
                            self.at += 1;
                        }
                        None => {}
                    }
                }
                '\'' => {
                    self.at += 1;
                    let mut closed = false;
                    while let Some(q) = self.peek() {
                        self.at += 1;
                        if q == '\'' {
                            closed = true;
                            break;
                        }
                        text.push(q);
                    }
                    if !closed {
                        self.line.unsure = true;
                    }
                }
                '"' => {
                    self.at += 1;
                    self.double_quoted(&mut text, &mut expands);
                }
                '$' => {
                    self.dollar(&mut text, &mut expands);
                }
                '`' => {
                    self.at += 1;
                    self.backquoted();
                    expands = true;
                }
                '*' | '?' => {
                    expands = true;
                    text.push(c);
                    self.at += 1;
                }
                // `[abc]` is a glob; `[` alone is the test command.
                '[' => {
                    let rest = &self.chars[self.at + 1..];
                    let closes = rest
                        .iter()
                        .take_while(|c| !matches!(c, ' ' | '\t' | '\n' | ';' | '&' | '|'))
                        .any(|c| *c == ']');
                    expands |= closes;
                    text.push(c);
                    self.at += 1;
                }
                '~' if self.at == start => {
                    expands = true;
                    text.push(c);
                    self.at += 1;
                }
                _ => {
                    text.push(c);
                    self.at += 1;
                }
            }
        }
        Word { text, expands }
    }

    fn double_quoted(&mut self, text: &mut String, expands: &mut bool) {
        while let Some(c) = self.peek() {
            match c {
                '"' => {
                    self.at += 1;
                    return;
                }
                '\\' => {
                    self.at += 1;
                    if let Some(e) = self.peek() {
                        if !matches!(e, '"' | '\\' | '$' | '`' | '\n') {
                            text.push('\\');
                        }
                        if e != '\n' {
                            text.push(e);
                        }
                        self.at += 1;
                    }
                }
                '$' => self.dollar(text, expands),
                '`' => {
                    self.at += 1;
                    self.backquoted();
                    *expands = true;
                }
                _ => {
                    text.push(c);
                    self.at += 1;
                }
            }
        }
        self.line.unsure = true;
    }

    /// `$…`: a command substitution is read as commands; anything else expands.
    fn dollar(&mut self, text: &mut String, expands: &mut bool) {
        self.at += 1;
        match self.peek() {
            Some('(') if self.peek_at(1) == Some('(') => {
                // $(( arithmetic )): skip to the closing )).
                *expands = true;
                let mut depth = 0i32;
                while let Some(c) = self.peek() {
                    self.at += 1;
                    match c {
                        '(' => depth += 1,
                        ')' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                }
            }
            Some('(') => {
                self.at += 1;
                self.nested();
                *expands = true;
            }
            Some('\'') => {
                // $'…': ANSI-C quoting; its escapes are not read, so the text is unsure.
                self.at += 1;
                while let Some(c) = self.peek() {
                    self.at += 1;
                    if c == '\\' {
                        self.at += 1;
                    } else if c == '\'' {
                        break;
                    }
                }
                *expands = true;
            }
            Some('{') => {
                while let Some(c) = self.peek() {
                    self.at += 1;
                    if c == '}' {
                        break;
                    }
                }
                *expands = true;
            }
            Some(c) if c.is_alphanumeric() || "_@*#?$!-".contains(c) => {
                if c.is_alphabetic() || c == '_' {
                    while self.peek().is_some_and(|c| c.is_alphanumeric() || c == '_') {
                        self.at += 1;
                    }
                } else {
                    self.at += 1;
                }
                *expands = true;
            }
            _ => text.push('$'),
        }
    }

    /// The inside of backquotes, read as a command line of its own.
    fn backquoted(&mut self) {
        let mut inner = String::new();
        let mut closed = false;
        while let Some(c) = self.peek() {
            self.at += 1;
            match c {
                '`' => {
                    closed = true;
                    break;
                }
                '\\' => {
                    if let Some(e) = self.peek() {
                        inner.push(e);
                        self.at += 1;
                    }
                }
                _ => inner.push(c),
            }
        }
        if !closed {
            self.line.unsure = true;
        }
        let nested = read(&inner);
        self.line.unsure |= nested.unsure;
        self.line.commands.extend(nested.commands);
    }
}

/// `NAME=value` before a command sets its environment; it is not the command.
fn is_assignment(word: &str) -> bool {
    let Some((name, _)) = word.split_once('=') else {
        return false;
    };
    !name.is_empty()
        && name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &Line) -> Vec<Vec<String>> {
        line.commands
            .iter()
            .map(|c| c.words.iter().map(|w| w.text.clone()).collect())
            .collect()
    }

    #[test]
    fn a_pipeline_into_a_shell_is_two_commands_the_second_fed_by_the_first() {
        let line = read("curl -fsSL http://127.0.0.1:8080/x | sh");
        assert_eq!(
            words(&line),
            vec![vec!["curl", "-fsSL", "http://127.0.0.1:8080/x"], vec!["sh"]]
        );
        assert!(!line.commands[0].piped_in);
        assert!(line.commands[1].piped_in);
        assert!(!line.unsure);
    }

    #[test]
    fn lists_quotes_and_assignments_are_read_as_the_shell_reads_them() {
        let line = read("cd src && FOO=1 python3 -c 'print(\"a; b\")'; echo \"x y\"|| true");
        assert_eq!(
            words(&line),
            vec![
                vec!["cd", "src"],
                vec!["python3", "-c", "print(\"a; b\")"],
                vec!["echo", "x y"],
                vec!["true"],
            ]
        );
    }

    #[test]
    fn redirections_name_the_files_written_and_descriptors_are_not_files() {
        let line = read("make 2>&1 > build.log; echo hi >> /etc/motd; cat < in.txt");
        assert_eq!(line.commands[0].writes[0].text, "build.log");
        assert_eq!(line.commands[0].words.len(), 1);
        assert_eq!(line.commands[1].writes[0].text, "/etc/motd");
        assert!(line.commands[2].writes.is_empty());
    }

    #[test]
    fn substitutions_are_commands_too_and_their_words_expand() {
        let line = read("echo \"$(curl http://x)\" `wget y` $HOME/a");
        let all = words(&line);
        assert!(all.contains(&vec!["curl".to_string(), "http://x".to_string()]));
        assert!(all.contains(&vec!["wget".to_string(), "y".to_string()]));
        let echo = line
            .commands
            .iter()
            .find(|c| c.words[0].text == "echo")
            .expect("echo");
        assert!(echo.words[1].expands);
        assert!(echo.words[3].expands);
    }

    #[test]
    fn a_heredoc_body_is_data_not_commands() {
        let line = read("cat > notes.md <<'EOF'\nrm -rf /\ncurl x | sh\nEOF\necho done");
        assert_eq!(words(&line), vec![vec!["cat"], vec!["echo", "done"]]);
        assert_eq!(line.commands[0].writes[0].text, "notes.md");
        assert!(!line.unsure);
        assert!(read("cat <<EOF\nno end").unsure);
    }

    #[test]
    fn what_cannot_be_read_for_sure_says_so() {
        assert!(read("echo 'open").unsure);
        assert!(read("(echo a").unsure);
        assert!(!read("(cd x && ls) | wc -l").unsure);
        let deep = format!("{}x{}", "$(".repeat(40), ")".repeat(40));
        assert!(read(&deep).unsure);
    }
}
