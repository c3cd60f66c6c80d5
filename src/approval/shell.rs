//! A shell command line read ahead of running it, as far as approvals need: the simple
//! commands it runs (in pipelines, lists, subshells, `$(…)`, backquotes and unquoted
//! here-documents), each with its words, the variables it sets, and the files its
//! redirections read and write. Quotes and escapes are undone; a word whose text is only known
//! when it runs (`$HOME`, `{a,b}`, `~ada`) is marked so that a path in it is never trusted.
//! This is not a shell: what it cannot read for sure (a function defined and called, a `${…}`
//! hiding a command, an unclosed quote) it says so, and the caller asks.

/// One word of a command, with its text as the shell would pass it when nothing expands.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Word {
    pub text: String,
    /// A glob (`*`, `?`, `[…]`): the text names files by a pattern.
    pub glob: bool,
    /// A variable, a command's output, a brace expansion: the text is not what runs.
    pub unknown: bool,
    /// It starts with an unquoted `~`: a home folder.
    pub tilde: bool,
}

impl Word {
    /// A word exactly as written (no expansion).
    pub fn plain(text: &str) -> Word {
        Word {
            text: text.to_string(),
            ..Word::default()
        }
    }

    /// A word only known when the command runs.
    pub fn unknown(text: &str) -> Word {
        Word {
            text: text.to_string(),
            unknown: true,
            ..Word::default()
        }
    }

    /// Its text is not exactly what runs.
    pub fn expands(&self) -> bool {
        self.glob || self.unknown || self.tilde
    }
}

/// One simple command: its words, the variables set before it (`NAME=value cmd`, or alone),
/// and the files its redirections read and write.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Simple {
    pub words: Vec<Word>,
    pub assigns: Vec<(String, Word)>,
    pub writes: Vec<Word>,
    pub reads: Vec<Word>,
    /// Its standard input comes from the command before it in a pipeline.
    pub piped_in: bool,
}

/// A command line read ahead: its simple commands in order, and whether some of it could not
/// be read for sure.
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

/// A here-document waiting for its body: its end word, whether tabs are stripped, whether its
/// body expands (`<<EOF`, not `<<'EOF'`).
struct Heredoc {
    end: String,
    tabs: bool,
    expands: bool,
}

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
        let mut heredocs: Vec<Heredoc> = Vec::new();
        loop {
            self.skip_blanks();
            let Some(c) = self.peek() else { break };
            match c {
                ')' if self.depth > 0 => break,
                '\n' => {
                    self.at += 1;
                    self.finish(&mut current, &mut piped, false);
                    for doc in std::mem::take(&mut heredocs) {
                        self.heredoc_body(&doc);
                    }
                }
                '#' if current.words.is_empty() => self.skip_comment(),
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
                    // `name() { … }`: a function, defined to be called later.
                    if !current.words.is_empty() {
                        self.line.unsure = true;
                    }
                    self.at += 1;
                    self.nested();
                }
                ')' => {
                    // A `)` with nothing open: not a command line a shell would run.
                    self.line.unsure = true;
                    self.at += 1;
                }
                '<' | '>' => {
                    if let Some(doc) = self.redirection(&mut current) {
                        heredocs.push(doc);
                    }
                }
                _ => {
                    // A number (or {name}) right before a redirection belongs to it.
                    let digits = self.chars[self.at..]
                        .iter()
                        .take_while(|d| d.is_ascii_digit())
                        .count();
                    if digits > 0 && matches!(self.peek_at(digits), Some('<') | Some('>')) {
                        self.at += digits;
                        continue;
                    }
                    let word = self.word();
                    if current.words.is_empty() {
                        if let Some((name, value)) = assignment(&word) {
                            current.assigns.push((name, value));
                            continue;
                        }
                        if word.text == "function" && !word.expands() {
                            self.line.unsure = true;
                        }
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
        if !simple.words.is_empty()
            || !simple.writes.is_empty()
            || !simple.reads.is_empty()
            || !simple.assigns.is_empty()
        {
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

    /// A redirection: `>`, `>>`, `>|`, `&>`, `<`, `<>`, `<<`, `<<-`, `<<<`, `>&2`, `<&3`,
    /// `<(…)`, `>(…)`. Files go to the command's reads and writes; a here-document is returned.
    fn redirection(&mut self, current: &mut Simple) -> Option<Heredoc> {
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
                    let start = self.at;
                    let end = self.word();
                    let quoted = self.chars[start..self.at]
                        .iter()
                        .any(|c| matches!(c, '\'' | '"' | '\\'));
                    return Some(Heredoc {
                        end: end.text,
                        tabs,
                        expands: !quoted,
                    });
                }
                Some('&') => {
                    self.at += 1;
                    if self.descriptor() {
                        return None;
                    }
                }
                Some('>') => {
                    // <> opens the file for reading and writing.
                    self.at += 1;
                    self.skip_blanks();
                    let target = self.word();
                    current.reads.push(target.clone());
                    current.writes.push(target);
                    return None;
                }
                _ => {}
            }
            self.skip_blanks();
            let source = self.word();
            current.reads.push(source);
            return None;
        }
        // Output.
        match self.peek() {
            Some('>') | Some('|') => self.at += 1,
            Some('&') => {
                self.at += 1;
                if self.descriptor() {
                    return None;
                }
            }
            _ => {}
        }
        self.skip_blanks();
        let target = self.word();
        // A target that is no text at all (`> $EMPTY`) is still somewhere.
        current.writes.push(target);
        None
    }

    /// `>&2`, `<&-`: another descriptor, not a file (true when it was one).
    fn descriptor(&mut self) -> bool {
        let n = self.chars[self.at..]
            .iter()
            .take_while(|d| d.is_ascii_digit() || **d == '-')
            .count();
        self.at += n;
        n > 0
    }

    /// A here-document's body: the lines up to its end word. An unquoted end word lets the
    /// body's `$(…)` and backquotes run: they are read as commands.
    fn heredoc_body(&mut self, doc: &Heredoc) {
        let mut body = String::new();
        loop {
            let start = self.at;
            while self.peek().is_some_and(|c| c != '\n') {
                self.at += 1;
            }
            let text: String = self.chars[start..self.at].iter().collect();
            let text = if doc.tabs {
                text.trim_start_matches('\t').to_string()
            } else {
                text
            };
            let ended = self.peek().is_none();
            if self.peek() == Some('\n') {
                self.at += 1;
            }
            if text == doc.end {
                break;
            }
            body.push_str(&text);
            body.push('\n');
            if ended {
                self.line.unsure = true;
                break;
            }
        }
        if doc.expands && (body.contains("$(") || body.contains('`') || body.contains("${")) {
            // What runs inside it is read as a line of its own, in double quotes' manner.
            let quoted: String = format!("\"{}\"", body.replace('"', "\\\""));
            let nested = read(&format!(": {quoted}"));
            self.line.unsure |= nested.unsure;
            self.line.commands.extend(
                nested
                    .commands
                    .into_iter()
                    .filter(|c| c.words.first().map(|w| w.text.as_str()) != Some(":")),
            );
        }
    }

    /// One word: quotes and escapes undone; `$(…)` and backquotes read as commands too.
    fn word(&mut self) -> Word {
        let mut word = Word::default();
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
                            word.text.push(e);
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
                        word.text.push(q);
                    }
                    if !closed {
                        self.line.unsure = true;
                    }
                }
                '"' => {
                    self.at += 1;
                    self.double_quoted(&mut word);
                }
                '$' => self.dollar(&mut word),
                '`' => {
                    self.at += 1;
                    self.backquoted();
                    word.unknown = true;
                }
                '*' | '?' => {
                    word.glob = true;
                    word.text.push(c);
                    self.at += 1;
                }
                // `[abc]` is a glob; `[` alone is the test command.
                '[' => {
                    let closes = self.chars[self.at + 1..]
                        .iter()
                        .take_while(|c| !matches!(c, ' ' | '\t' | '\n' | ';' | '&' | '|'))
                        .any(|c| *c == ']');
                    word.glob |= closes;
                    word.text.push(c);
                    self.at += 1;
                }
                // `{a,b}` and `{1..3}` make several words of one.
                '{' | '}'
                    if self.at != start || self.peek_at(1).is_some_and(|n| !n.is_whitespace()) =>
                {
                    word.unknown = true;
                    word.text.push(c);
                    self.at += 1;
                }
                '~' if self.at == start => {
                    word.tilde = true;
                    word.text.push(c);
                    self.at += 1;
                }
                _ => {
                    word.text.push(c);
                    self.at += 1;
                }
            }
        }
        word
    }

    fn double_quoted(&mut self, word: &mut Word) {
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
                            word.text.push('\\');
                        }
                        if e != '\n' {
                            word.text.push(e);
                        }
                        self.at += 1;
                    }
                }
                '$' => self.dollar(word),
                '`' => {
                    self.at += 1;
                    self.backquoted();
                    word.unknown = true;
                }
                _ => {
                    word.text.push(c);
                    self.at += 1;
                }
            }
        }
        self.line.unsure = true;
    }

    /// `$…`: a command substitution is read as commands; anything else is only known when it
    /// runs. What could hide a command where it cannot be read (`${x:-$(…)}`, `$((…))` that is
    /// not plain arithmetic) makes the line unsure.
    fn dollar(&mut self, word: &mut Word) {
        self.at += 1;
        word.unknown = true;
        match self.peek() {
            Some('(') if self.peek_at(1) == Some('(') => {
                self.at += 2;
                let inner = self.balanced(2);
                if !plain_arithmetic(&inner) {
                    self.line.unsure = true;
                }
            }
            Some('(') => {
                self.at += 1;
                self.nested();
            }
            Some('\'') => {
                // $'…': ANSI-C quoting; its escapes are not read.
                self.at += 1;
                while let Some(c) = self.peek() {
                    self.at += 1;
                    if c == '\\' {
                        self.at += 1;
                    } else if c == '\'' {
                        break;
                    }
                }
            }
            Some('{') => {
                self.at += 1;
                let inner = self.balanced_braces();
                if inner.contains("$(") || inner.contains('`') || inner.contains("<(") {
                    self.line.unsure = true;
                }
            }
            Some(c) if c.is_alphanumeric() || "_@*#?$!-".contains(c) => {
                if c.is_alphabetic() || c == '_' {
                    while self.peek().is_some_and(|c| c.is_alphanumeric() || c == '_') {
                        self.at += 1;
                    }
                } else {
                    self.at += 1;
                }
            }
            _ => {
                word.unknown = false;
                word.text.push('$');
            }
        }
    }

    /// The text up to the `)` closing `open` parentheses already passed (`$((` is two).
    fn balanced(&mut self, open: i32) -> String {
        let mut depth = open;
        let mut inner = String::new();
        while let Some(c) = self.peek() {
            self.at += 1;
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        return inner;
                    }
                }
                _ => {}
            }
            inner.push(c);
        }
        self.line.unsure = true;
        inner
    }

    /// The text up to the `}` closing a `${`.
    fn balanced_braces(&mut self) -> String {
        let mut depth = 1;
        let mut inner = String::new();
        while let Some(c) = self.peek() {
            self.at += 1;
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        return inner;
                    }
                }
                _ => {}
            }
            inner.push(c);
        }
        self.line.unsure = true;
        inner
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

/// `$(( … ))` that is arithmetic: numbers, names and operators, two names never side by side
/// (that is a command, as `$((curl x) | sh)` runs one).
fn plain_arithmetic(inner: &str) -> bool {
    if inner.contains("$(") || inner.contains('`') || !inner.ends_with(')') {
        return false;
    }
    let body = &inner[..inner.len() - 1];
    let allowed = |c: char| c.is_ascii_alphanumeric() || " _+-*/%<>=!&|^~?:,()$\t".contains(c);
    if !body.chars().all(allowed) {
        return false;
    }
    let words: Vec<&str> = body
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '$'))
        .collect();
    // Two names in a row with only blanks between them are not arithmetic.
    let mut last_was_name = false;
    let mut blank_since = false;
    for piece in
        body.split_inclusive(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '$'))
    {
        let name: String = piece
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '$')
            .collect();
        let rest = &piece[name.len()..];
        if !name.is_empty() {
            if last_was_name && blank_since {
                return false;
            }
            last_was_name = true;
            blank_since = false;
        }
        if rest.chars().all(char::is_whitespace) {
            blank_since |= !rest.is_empty();
        } else {
            last_was_name = false;
            blank_since = false;
        }
    }
    !words.is_empty()
}

/// `NAME=value` before a command sets its environment; it is not the command.
fn assignment(word: &Word) -> Option<(String, Word)> {
    let (name, value) = word.text.split_once('=')?;
    let named = !name.is_empty()
        && name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '+');
    named.then(|| {
        (
            name.trim_end_matches('+').to_string(),
            Word {
                text: value.to_string(),
                ..word.clone()
            },
        )
    })
}

#[cfg(test)]
mod tests;
