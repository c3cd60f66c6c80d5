//! The situations a project's run can fail in. A `Failure` carries its scenario as text (the
//! pipeline stores and matches text, so script runs keep theirs); projects name theirs with
//! this enum, and the healer service's rules (the next issue's spells) match on it.

use serde::{Deserialize, Serialize};

use super::FailureClass;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, specta::Type)]
pub enum ProjectScenario {
    /// The init script failed on a type check (`tsc`, `mypy`, `cargo check` …).
    InitScriptTypecheckFailure,
    /// The init script failed on tests.
    InitScriptTestFailure,
    /// The init script failed for anything else: a missing tool, a failed install, no network.
    InitScriptEnvironmentFailure,
    /// The agent finished, and a verification command failed.
    VerificationFailed,
    /// The agent ended its session without finishing the task: it gave up, or hit its token,
    /// step or malformed-reply bound.
    SubtaskFailed,
    /// The agent stopped showing any activity (no new step, transcript line or hook call) for
    /// longer than steering allows, and was ended.
    SubtaskStuck,
    /// The agent's process failed: it could not start, exited non-zero, printed a stream that
    /// could not be read, or ran past its time limit.
    RuntimeError,
    /// A check on the pull request Healer opened for the task's branch failed on the host.
    PullRequestCheckFailed,
}

impl ProjectScenario {
    pub const ALL: [ProjectScenario; 8] = [
        ProjectScenario::InitScriptTypecheckFailure,
        ProjectScenario::InitScriptTestFailure,
        ProjectScenario::InitScriptEnvironmentFailure,
        ProjectScenario::VerificationFailed,
        ProjectScenario::SubtaskFailed,
        ProjectScenario::SubtaskStuck,
        ProjectScenario::RuntimeError,
        ProjectScenario::PullRequestCheckFailed,
    ];

    /// As stored in `Failure::scenario` (and matched by rules).
    pub fn as_str(self) -> &'static str {
        match self {
            ProjectScenario::InitScriptTypecheckFailure => "InitScriptTypecheckFailure",
            ProjectScenario::InitScriptTestFailure => "InitScriptTestFailure",
            ProjectScenario::InitScriptEnvironmentFailure => "InitScriptEnvironmentFailure",
            ProjectScenario::VerificationFailed => "VerificationFailed",
            ProjectScenario::SubtaskFailed => "SubtaskFailed",
            ProjectScenario::SubtaskStuck => "SubtaskStuck",
            ProjectScenario::RuntimeError => "RuntimeError",
            ProjectScenario::PullRequestCheckFailed => "PullRequestCheckFailed",
        }
    }

    pub fn parse(s: &str) -> Option<ProjectScenario> {
        ProjectScenario::ALL.into_iter().find(|p| p.as_str() == s)
    }

    /// What happened, for a person.
    pub fn describe(self) -> &'static str {
        match self {
            ProjectScenario::InitScriptTypecheckFailure => {
                "the init script failed on a type check before the agent started"
            }
            ProjectScenario::InitScriptTestFailure => {
                "the init script failed on tests before the agent started"
            }
            ProjectScenario::InitScriptEnvironmentFailure => {
                "the init script could not prepare the worktree"
            }
            ProjectScenario::VerificationFailed => "the agent's change did not pass verification",
            ProjectScenario::SubtaskFailed => "the agent stopped without finishing the task",
            ProjectScenario::SubtaskStuck => {
                "the agent showed no activity for too long and was ended as stuck"
            }
            ProjectScenario::RuntimeError => "the agent itself failed",
            ProjectScenario::PullRequestCheckFailed => "a check failed on the task's pull request",
        }
    }

    /// What happened, for a person, given the class the runner found: a verification that
    /// could not run (the environment) was no verdict on the agent's change.
    pub fn describe_for(self, class: FailureClass) -> &'static str {
        match (self, class) {
            (ProjectScenario::VerificationFailed, FailureClass::Environment) => {
                "a check could not run on this computer"
            }
            _ => self.describe(),
        }
    }

    /// The class the pipeline starts from; the runner may say better (a time limit).
    pub fn class(self) -> FailureClass {
        match self {
            ProjectScenario::InitScriptTypecheckFailure
            | ProjectScenario::InitScriptTestFailure
            | ProjectScenario::VerificationFailed
            | ProjectScenario::PullRequestCheckFailed
            | ProjectScenario::SubtaskFailed => FailureClass::Logic,
            ProjectScenario::InitScriptEnvironmentFailure => FailureClass::Environment,
            ProjectScenario::SubtaskStuck => FailureClass::Timeout,
            ProjectScenario::RuntimeError => FailureClass::Unknown,
        }
    }

    /// Which of the three init-script scenarios a failed init script's output shows. A
    /// type checker's own error lines win (tsc's `error TS2322`, rustc's `error[E0308]`, mypy's
    /// `file.py:3: error: … [code]`, pyright's `- error:`), then what shows the machine is not
    /// ready (a missing command or module, a permission, the network), then a test runner's
    /// failure (pytest, jest, cargo test, go test, node's test runner). Anything else is the
    /// environment: the script could not prepare the worktree.
    pub fn of_init_output(output: &str) -> ProjectScenario {
        if patterns().typecheck.iter().any(|re| re.is_match(output)) {
            ProjectScenario::InitScriptTypecheckFailure
        } else if patterns().environment.iter().any(|re| re.is_match(output)) {
            ProjectScenario::InitScriptEnvironmentFailure
        } else if patterns().tests.iter().any(|re| re.is_match(output)) {
            ProjectScenario::InitScriptTestFailure
        } else {
            ProjectScenario::InitScriptEnvironmentFailure
        }
    }
}

/// The lines of `output` a type checker wrote as errors (tsc, rustc, mypy, pyright, go), in
/// order, at most `max`.
pub fn type_error_lines(output: &str, max: usize) -> Vec<String> {
    static LINE: std::sync::OnceLock<Option<regex::Regex>> = std::sync::OnceLock::new();
    let Some(re) = LINE
        .get_or_init(|| {
            regex::Regex::new(
                r"error TS\d{4,5}:|^error\[E\d{4}\]|^\s*-->\s|^\S+\.pyi?:\d+(:\d+)?: error: |^\s*\S+\.pyi?:\d+:\d+ - error: |^\S+\.go:\d+:\d+: ",
            )
            .ok()
        })
        .as_ref()
    else {
        return vec![];
    };
    output
        .lines()
        .filter(|l| re.is_match(l))
        .take(max)
        .map(|l| l.trim_end().to_string())
        .collect()
}

struct Patterns {
    typecheck: Vec<regex::Regex>,
    environment: Vec<regex::Regex>,
    tests: Vec<regex::Regex>,
}

fn patterns() -> &'static Patterns {
    static PATTERNS: std::sync::OnceLock<Patterns> = std::sync::OnceLock::new();
    PATTERNS.get_or_init(|| {
        let all = |list: &[&str]| {
            list.iter()
                .filter_map(|p| regex::Regex::new(p).ok())
                .collect::<Vec<_>>()
        };
        Patterns {
            typecheck: all(&[
                // tsc: `src/a.ts(3,7): error TS2322: …` or `src/a.ts:3:7 - error TS2322: …`
                r"error TS\d{4,5}:",
                // rustc / cargo check: `error[E0308]: mismatched types`
                r"(?m)^error\[E\d{4}\]",
                // mypy: `app.py:3: error: Incompatible return value type … [return-value]`
                r"(?m)^\S+\.pyi?:\d+(:\d+)?: error: .*\[[a-z-]+\]\s*$",
                r"(?m)^Found \d+ errors? in \d+ files? \(checked",
                // pyright: `  /p/app.py:3:12 - error: Type "int" is not assignable …`
                r"(?m)^\s*\S+\.pyi?:\d+:\d+ - error: ",
                r"(?m)^\d+ errors?, \d+ warnings?, \d+ (informations?|notes?)",
                // go vet / go build type errors: `./main.go:5:9: cannot use "x" (untyped string constant) as int value`
                r"(?m)^\S+\.go:\d+:\d+: cannot use ",
            ]),
            environment: all(&[
                r"(?m): command not found\s*$",
                r"(?m)^.*: No such file or directory\s*$",
                r"ModuleNotFoundError: No module named",
                r"Error: Cannot find module '",
                r"(?i)permission denied",
                r"EACCES",
                r"(?i)could not resolve host",
                r"(?i)temporary failure in name resolution",
                r"ENOTFOUND|ECONNREFUSED|ETIMEDOUT|EAI_AGAIN",
                r"(?i)network is unreachable",
                r"(?i)connection refused",
                r"(?i)no space left on device",
            ]),
            tests: all(&[
                // pytest: `==== 1 failed, 4 passed in 0.12s ====`, `FAILED test_a.py::test_x`
                r"(?m)^=+ .*\d+ failed",
                r"(?m)^FAILED \S+::",
                // cargo test
                r"test result: FAILED\.",
                // jest / vitest
                r"(?m)^Tests:\s+\d+ failed",
                r"(?m)^\s*(FAIL|×|✕) ",
                // go test
                r"(?m)^--- FAIL: ",
                r"(?m)^FAIL\s",
                // node --test / TAP
                r"(?m)^# fail [1-9]",
                r"(?m)^not ok \d+",
                // unittest
                r"(?m)^FAILED \((failures|errors)=",
                r"AssertionError",
            ]),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ProjectScenario::*;

    #[test]
    fn names_round_trip() {
        for s in ProjectScenario::ALL {
            assert_eq!(ProjectScenario::parse(s.as_str()), Some(s));
        }
    }

    /// Output as the tools print it (copied from real runs).
    #[test]
    fn type_checkers_output_is_a_typecheck_failure() {
        let of = ProjectScenario::of_init_output;
        let tsc =
            "src/greet.ts(3,7): error TS2322: Type 'number' is not assignable to type 'string'.\n";
        assert_eq!(of(tsc), InitScriptTypecheckFailure);
        let tsc_pretty = "src/greet.ts:3:7 - error TS2322: Type 'number' is not assignable to type 'string'.\n\n3 const s: string = 1;\n        ~\n\nFound 1 error in src/greet.ts:3\n";
        assert_eq!(of(tsc_pretty), InitScriptTypecheckFailure);
        let tsc_module = "src/a.ts(1,19): error TS2307: Cannot find module './b' or its corresponding type declarations.";
        assert_eq!(
            of(tsc_module),
            InitScriptTypecheckFailure,
            "a module tsc cannot find is the code's"
        );
        let rustc = "    Checking greet v0.1.0 (/w)\nerror[E0308]: mismatched types\n --> src/lib.rs:2:5\n  |\n1 | pub fn n() -> u32 {\n  |               --- expected `u32` because of return type\n2 |     \"one\"\n  |     ^^^^^ expected `u32`, found `&str`\n\nFor more information about this error, try `rustc --explain E0308`.\nerror: could not compile `greet` (lib) due to 1 previous error\n";
        assert_eq!(of(rustc), InitScriptTypecheckFailure);
        let mypy = "greet.py:2: error: Incompatible return value type (got \"int\", expected \"str\")  [return-value]\nFound 1 error in 1 file (checked 2 source files)\n";
        assert_eq!(of(mypy), InitScriptTypecheckFailure);
        let pyright = "/w/greet.py\n  /w/greet.py:2:12 - error: Type \"Literal[1]\" is not assignable to return type \"str\"\n    \"Literal[1]\" is not assignable to \"str\" (reportReturnType)\n1 error, 0 warnings, 0 informations \n";
        assert_eq!(of(pyright), InitScriptTypecheckFailure);
    }

    #[test]
    fn test_runners_failures_are_a_test_failure() {
        let of = ProjectScenario::of_init_output;
        let pytest = "test_greet.py F                                                          [100%]\n\n=================================== FAILURES ===================================\n__________________________________ test_greet __________________________________\n\n    def test_greet():\n>       assert greet('Ada') == 'Hello, Ada!'\nE       AssertionError: assert 'Hi Ada' == 'Hello, Ada!'\n\ntest_greet.py:4: AssertionError\n=========================== short test summary info ============================\nFAILED test_greet.py::test_greet - AssertionError: assert 'Hi Ada' == 'Hello, Ada!'\n============================== 1 failed in 0.03s ===============================\n";
        assert_eq!(of(pytest), InitScriptTestFailure);
        let jest = "FAIL src/greet.test.js\n  ● greets\n\n    expect(received).toBe(expected) // Object.is equality\n\nTests:       1 failed, 1 total\nSnapshots:   0 total\n";
        assert_eq!(of(jest), InitScriptTestFailure);
        let cargo = "running 2 tests\ntest tests::adds ... ok\ntest tests::greets ... FAILED\n\nfailures:\n\n---- tests::greets stdout ----\nthread 'tests::greets' panicked at src/lib.rs:9:9:\nassertion `left == right` failed\n\ntest result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n\nerror: test failed, to rerun pass `--lib`\n";
        assert_eq!(of(cargo), InitScriptTestFailure);
        let gotest = "--- FAIL: TestGreet (0.00s)\n    greet_test.go:8: got \"Hi Ada\", want \"Hello, Ada!\"\nFAIL\nexit status 1\nFAIL\tgreet\t0.002s\n";
        assert_eq!(of(gotest), InitScriptTestFailure);
        let unittest = "F\n======================================================================\nFAIL: test_greet (test_greet.GreetTest.test_greet)\n----------------------------------------------------------------------\nTraceback (most recent call last):\nAssertionError: 'Hi Ada' != 'Hello, Ada!'\n\nFAILED (failures=1)\n";
        assert_eq!(of(unittest), InitScriptTestFailure);
    }

    #[test]
    fn a_machine_that_is_not_ready_is_an_environment_failure() {
        let of = ProjectScenario::of_init_output;
        assert_eq!(
            of("./init.sh: line 3: npm: command not found\n"),
            InitScriptEnvironmentFailure
        );
        assert_eq!(
            of("bash: line 1: tsc: command not found"),
            InitScriptEnvironmentFailure,
            "tsc missing is not a type error"
        );
        assert_eq!(
            of("Traceback (most recent call last):\n  File \"/w/setup_db.py\", line 1, in <module>\n    import psycopg2\nModuleNotFoundError: No module named 'psycopg2'\n"),
            InitScriptEnvironmentFailure
        );
        assert_eq!(
            of("ImportError while importing test module '/w/test_greet.py'.\nE   ModuleNotFoundError: No module named 'requests'\n=========================== short test summary info ============================\nERROR test_greet.py\n!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!\n=============================== 1 error in 0.05s ===============================\n"),
            InitScriptEnvironmentFailure,
            "a test run that cannot import its module is the machine's"
        );
        assert_eq!(
            of("mkdir: cannot create directory '/opt/cache': Permission denied\n"),
            InitScriptEnvironmentFailure
        );
        assert_eq!(
            of("npm ERR! code EACCES\nnpm ERR! syscall mkdir\n"),
            InitScriptEnvironmentFailure
        );
        assert_eq!(of("npm ERR! code ENOTFOUND\nnpm ERR! network request to https://registry.npmjs.org/left-pad failed, reason: getaddrinfo ENOTFOUND registry.npmjs.org\n"), InitScriptEnvironmentFailure);
        assert_eq!(of("fatal: unable to access 'https://github.com/x/y.git/': Could not resolve host: github.com\n"), InitScriptEnvironmentFailure);
        assert_eq!(of("pip: ERROR: Could not find a version that satisfies the requirement nonexistent-pkg-xyz\n"), InitScriptEnvironmentFailure, "anything else: the script could not prepare");
    }
}
