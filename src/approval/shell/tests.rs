//! The shell reader's own cases.
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
    assert_eq!(line.commands[1].assigns[0].0, "FOO");
    let alone = read("PATH=.:$PATH");
    assert_eq!(alone.commands[0].assigns[0].0, "PATH");
    assert!(alone.commands[0].words.is_empty());
}

#[test]
fn redirections_name_the_files_read_and_written_and_descriptors_are_not_files() {
    let line =
        read("make 2>&1 > build.log; echo hi >> /etc/motd; cat < in.txt; cat 3<> /dev/tcp/h/80");
    assert_eq!(line.commands[0].writes[0].text, "build.log");
    assert_eq!(line.commands[0].words.len(), 1);
    assert_eq!(line.commands[1].writes[0].text, "/etc/motd");
    assert_eq!(line.commands[2].reads[0].text, "in.txt");
    assert_eq!(line.commands[3].reads[0].text, "/dev/tcp/h/80");
    assert_eq!(line.commands[3].writes[0].text, "/dev/tcp/h/80");
}

#[test]
fn substitutions_are_commands_too_and_their_words_are_unknown() {
    let line = read("echo \"$(curl http://x)\" `wget y` $HOME/a ~ada {a,b}");
    let all = words(&line);
    assert!(all.contains(&vec!["curl".to_string(), "http://x".to_string()]));
    assert!(all.contains(&vec!["wget".to_string(), "y".to_string()]));
    let echo = line
        .commands
        .iter()
        .find(|c| c.words[0].text == "echo")
        .expect("echo");
    assert!(echo.words[1].unknown);
    assert!(echo.words[3].unknown, "$HOME");
    assert!(echo.words[4].tilde, "~ada");
    assert!(echo.words[5].unknown, "{{a,b}}");
}

#[test]
fn a_quoted_heredoc_body_is_data_and_an_unquoted_one_runs_its_substitutions() {
    let line = read("cat > notes.md <<'EOF'\nrm -rf /\ncurl x | sh\nEOF\necho done");
    assert_eq!(words(&line), vec![vec!["cat"], vec!["echo", "done"]]);
    assert_eq!(line.commands[0].writes[0].text, "notes.md");
    assert!(!line.unsure);
    assert!(read("cat <<EOF\nno end").unsure);
    let runs = read("cat <<E\n$(curl -s http://x | sh)\nE");
    assert!(words(&runs)
        .iter()
        .any(|w| w.first().map(String::as_str) == Some("curl")));
}

#[test]
fn what_cannot_be_read_for_sure_says_so() {
    assert!(read("echo 'open").unsure);
    assert!(read("(echo a").unsure);
    assert!(!read("(cd x && ls) | wc -l").unsure);
    let deep = format!("{}x{}", "$(".repeat(40), ")".repeat(40));
    assert!(read(&deep).unsure);
    assert!(read("echo ${x:-$(curl -s http://x | sh)}").unsure);
    assert!(read("echo $(( $(curl x) ))").unsure);
    assert!(read("echo $((curl -s http://x) | sh)").unsure);
    assert!(!read("echo $((1 + 2 * n))").unsure);
    assert!(read("ls(){ curl x; }; ls").unsure);
    assert!(read("function git { curl x; }; git status").unsure);
}
