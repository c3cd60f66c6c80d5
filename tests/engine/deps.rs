//! Each workflow in its own environment, with the real registries: a missing module is
//! installed from PyPI or npm into the workflow's own venv or node_modules, becomes a minor
//! version by Healer, and the re-run passes — with no request to the model; a package that does
//! not exist stops at an ENVIRONMENT checkpoint with the installer's error; two workflows keep
//! two versions of one package; the machine's own packages are never touched.
//!
//! Small pure-Python and pure-JS packages (tomli, iniconfig, is-number) keep the installs fast;
//! every test has its own data folder, so they run in parallel.

use std::process::Command;

use healer::checkpoint::{CheckpointAction, CheckpointTrigger};
use healer::deps::{EnvironmentState, ProposalSource};
use healer::memory::FixVerdict;
use healer::workflow::{Author, RunStatus, Runtime, Version};

use crate::maintainer::{bed, Bed};
use crate::workflows::input;

/// Reads TOML with tomli, which this machine's Python does not have.
const NEEDS_TOMLI: &str = "import json, os\nimport tomli\nfrom importlib.metadata import version\n\
     data = tomli.loads('answer = 42')\nprint('tomli', version('tomli'), data)\n\
     json.dump({'tomli': version('tomli'), 'answer': data['answer']}, open(os.environ['HEALER_RESULT'], 'w'))\n";

/// A package no registry holds.
const NO_SUCH: &str = "healer_no_such_package_zz9";

fn no_model_asked(bed: &Bed) {
    assert!(
        bed.server.chats().is_empty(),
        "no request may reach the model: {:?}",
        bed.server
            .chats()
            .iter()
            .map(|s| &s.path)
            .collect::<Vec<_>>()
    );
}

/// The machine's Python packages: `pip list` when the machine has pip, else the names in its
/// site-packages folders.
fn machine_packages() -> String {
    let pip = Command::new("python3")
        .args([
            "-m",
            "pip",
            "list",
            "--format=freeze",
            "--disable-pip-version-check",
        ])
        .output()
        .expect("python3");
    if pip.status.success() {
        return String::from_utf8_lossy(&pip.stdout).into_owned();
    }
    let dirs = Command::new("python3")
        .args([
            "-c",
            "import site; print('\\n'.join(site.getsitepackages()))",
        ])
        .output()
        .expect("python3");
    let mut names: Vec<String> = String::from_utf8_lossy(&dirs.stdout)
        .lines()
        .flat_map(|dir| std::fs::read_dir(dir).into_iter().flatten().flatten())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names.join("\n")
}

#[tokio::test]
async fn a_missing_python_module_is_installed_into_the_workflows_venv_and_it_runs_green() {
    let before = machine_packages();
    assert!(
        !before.to_lowercase().contains("tomli=="),
        "this test needs a machine whose Python lacks tomli"
    );
    let bed = bed(false, true).await;
    let w = bed
        .engine
        .create_workflow(input("Settings reader", Runtime::Python3, NEEDS_TOMLI))
        .expect("create");

    let healed = bed.engine.run_until_healed(w.id).await.expect("healed");
    assert_eq!(healed.first.run.status, RunStatus::Failed);
    assert!(
        healed.first.run.summary.contains("No module named 'tomli'"),
        "{}",
        healed.first.run.summary
    );
    assert_eq!(
        healed.last.status,
        RunStatus::Succeeded,
        "{}",
        healed.outcome
    );
    assert_eq!(healed.last.version, Version { major: 1, minor: 1 });
    assert!(
        healed.outcome.starts_with("Healed: installed tomli "),
        "{}",
        healed.outcome
    );

    let fixed = bed.engine.version(w.id, healed.last.version).expect("1.1");
    assert_eq!(fixed.author, Author::Healer);
    assert!(
        fixed.change_comment.starts_with("installed tomli 2."),
        "{}",
        fixed.change_comment
    );
    assert_eq!(fixed.requirements.len(), 1);
    assert!(
        fixed.requirements[0].starts_with("tomli==2."),
        "{:?}",
        fixed.requirements
    );
    assert_eq!(
        fixed.code, NEEDS_TOMLI,
        "the code is the same; only the packages differ"
    );
    let first = bed.engine.version(w.id, Version::FIRST).expect("1.0");
    assert!(first.requirements.is_empty());

    // The re-run kept what pip printed, and its result came from the venv's tomli.
    let rerun = bed.engine.run_detail(healed.last.id).expect("re-run");
    let setup = rerun.setup.expect("the install is kept with the run");
    assert!(setup.contains("pip install"), "{setup}");
    assert!(setup.contains("Successfully installed tomli"), "{setup}");
    let result = rerun.attempts[0].result.clone().expect("result");
    assert!(result.contains("\"answer\":42"), "{result}");

    let venv = bed.paths.workflow_dir(w.id).join(".venv");
    assert!(venv.join("bin").join("python").exists());
    let deps = bed.engine.dependencies(w.id).expect("dependencies");
    assert_eq!(deps.state, EnvironmentState::Ready);
    assert_eq!(deps.packages.len(), 1);
    assert_eq!(deps.packages[0].name, "tomli");
    assert!(deps.packages[0].installed.is_some());
    assert!(
        deps.lock.iter().any(|l| l.starts_with("tomli==")),
        "{:?}",
        deps.lock
    );
    assert!(
        deps.interpreter.starts_with("Python 3"),
        "{}",
        deps.interpreter
    );

    // Healing memory: the signature maps to the package that fixed it, and the next workflow
    // with the same import is offered it when its script is saved.
    let runs = bed.engine.runs(w.id, None, 10).expect("runs");
    assert_eq!(runs.len(), 2, "the failed run and the re-run, nothing more");
    let pattern = bed.engine.patterns(10).expect("patterns").remove(0);
    let remembered = bed.engine.package_fixes(&pattern.signature).expect("fixes");
    assert_eq!(remembered.len(), 1);
    assert_eq!(remembered[0].package, "tomli");
    assert_eq!(remembered[0].result, FixVerdict::Success);
    let offered = bed
        .engine
        .propose_packages(&Runtime::Python3, "import tomli\n", None)
        .await
        .expect("propose");
    assert_eq!(offered.len(), 1);
    assert_eq!(offered[0].package, "tomli");
    assert_eq!(offered[0].source, ProposalSource::Memory);

    no_model_asked(&bed);
    assert_eq!(
        machine_packages(),
        before,
        "the machine's own packages are untouched"
    );
}

#[tokio::test]
async fn a_missing_node_package_is_installed_into_its_node_modules_and_it_runs_green() {
    let bed = bed(false, true).await;
    let code =
        "const isNumber = require(\"is-number\");\nconsole.log(\"is 5 a number?\", isNumber(5));\n";
    let w = bed
        .engine
        .create_workflow(input("Number check", Runtime::Node, code))
        .expect("create");

    let healed = bed.engine.run_until_healed(w.id).await.expect("healed");
    assert!(
        healed
            .first
            .run
            .summary
            .contains("Cannot find module 'is-number'"),
        "{}",
        healed.first.run.summary
    );
    assert_eq!(
        healed.last.status,
        RunStatus::Succeeded,
        "{}",
        healed.outcome
    );
    let fixed = bed.engine.version(w.id, healed.last.version).expect("1.1");
    assert_eq!(fixed.author, Author::Healer);
    assert!(
        fixed.change_comment.starts_with("installed is-number "),
        "{}",
        fixed.change_comment
    );
    assert!(
        fixed.requirements[0].starts_with("is-number@"),
        "{:?}",
        fixed.requirements
    );
    let folder = bed.paths.workflow_dir(w.id);
    assert!(folder.join("node_modules/is-number/package.json").is_file());
    assert!(folder.join("package-lock.json").is_file());
    let rerun = bed.engine.run_detail(healed.last.id).expect("re-run");
    assert!(rerun.attempts[0].stdout.contains("is 5 a number? true"));
    let deps = bed.engine.dependencies(w.id).expect("dependencies");
    assert_eq!(deps.state, EnvironmentState::Ready);
    assert!(
        deps.lock.iter().any(|l| l.starts_with("is-number@")),
        "{:?}",
        deps.lock
    );
    no_model_asked(&bed);
}

#[tokio::test]
async fn a_package_that_does_not_exist_stops_at_a_checkpoint_with_pips_own_error() {
    let bed = bed(false, true).await;
    let code = format!("import {NO_SUCH}\nprint('never')\n");
    let w = bed
        .engine
        .create_workflow(input("Mystery", Runtime::Python3, &code))
        .expect("create");
    let healed = bed.engine.run_until_healed(w.id).await.expect("healed");
    assert_eq!(healed.last.status, RunStatus::Failed);

    let pending = bed.engine.checkpoints().expect("list").pending;
    assert_eq!(pending.len(), 1);
    let c = &pending[0];
    assert_eq!(c.trigger, CheckpointTrigger::Environment);
    assert_eq!(c.title, "A package could not be installed");
    assert!(
        c.context
            .contains(&format!("install the package {NO_SUCH}")),
        "{}",
        c.context
    );
    assert!(
        c.context.contains(&format!(
            "ERROR: No matching distribution found for {NO_SUCH}"
        )),
        "pip's exact error: {}",
        c.context
    );
    // Short diagnostics: the interpreter, the environment's packages, the one failing import.
    assert!(c.context.contains("Interpreter: Python 3"), "{}", c.context);
    assert!(
        c.context.contains("Its packages: none installed yet"),
        "{}",
        c.context
    );
    assert!(
        c.context
            .contains(&format!("The failing import (line 1): import {NO_SUCH}")),
        "{}",
        c.context
    );
    assert!(
        !c.context.contains("Installed Python modules"),
        "not the machine's list"
    );
    let labels: Vec<&str> = c.options.iter().map(|o| o.label.as_str()).collect();
    assert_eq!(labels, ["Try another package name\u{2026}", "Pause"]);
    assert_eq!(c.options[0].action, CheckpointAction::InstallPackage);
    assert_eq!(c.options[c.recommended() as usize - 1].label, "Pause");
    no_model_asked(&bed);

    // A name an installer would read as an option is refused, and nothing is decided.
    let refused = bed
        .engine
        .decide_checkpoint(c.id, Some(1), Some("--index-url=http://127.0.0.1:9/"))
        .await;
    assert!(refused.is_err());
    assert!(bed.engine.checkpoint(c.id).expect("c").decision.is_none());
    let empty = bed.engine.decide_checkpoint(c.id, Some(1), None).await;
    assert!(empty
        .expect_err("an empty name is refused")
        .to_string()
        .contains("give the name"));
}

#[tokio::test]
async fn try_another_package_name_installs_it_as_a_version_and_runs_again_until_the_default_limit()
{
    let bed = bed(false, true).await;
    // Nothing provides this module, so every package named for it installs and still fails.
    let code = format!("import {NO_SUCH}\n");
    let w = bed
        .engine
        .create_workflow(input("Mystery", Runtime::Python3, &code))
        .expect("create");
    bed.engine.run_until_healed(w.id).await.expect("first run");

    // The default limit is 3 packages between two green runs; the fourth failure asks why.
    for (n, named) in ["tomli", "iniconfig", "six"].iter().enumerate() {
        let c = bed.engine.checkpoints().expect("list").pending.remove(0);
        assert_eq!(c.title, "A package could not be installed", "{}", c.context);
        let decided = bed
            .engine
            .decide_checkpoint(c.id, Some(1), Some(named))
            .await
            .expect("decide");
        let outcome = decided.decision.expect("decided").outcome;
        let minor = u32::try_from(n + 1).expect("small");
        assert!(
            outcome.starts_with(&format!("Healer installed {named} ")),
            "{outcome}"
        );
        assert!(
            outcome.contains(&format!("as version 1.{minor}")),
            "{outcome}"
        );
        let version = bed
            .engine
            .version(w.id, Version { major: 1, minor })
            .expect("version");
        assert_eq!(version.author, Author::Healer);
        assert_eq!(
            version.requirements.len(),
            n + 1,
            "{:?}",
            version.requirements
        );
        // Its run is queued; run it here (this engine has no scheduler).
        bed.engine.work_queued_runs(w.id).await.expect("re-run");
    }
    let last = bed.engine.checkpoints().expect("list").pending.remove(0);
    assert!(
        last.context
            .contains("Healer installed 3 packages for it since it last ran well"),
        "{}",
        last.context
    );
    no_model_asked(&bed);
}

#[tokio::test]
async fn two_workflows_keep_two_versions_of_one_package_and_both_run_green() {
    let bed = bed(false, true).await;
    let mut ids = Vec::new();
    for pinned in ["tomli==2.0.1", "tomli==2.2.1"] {
        let w = bed
            .engine
            .create_workflow_with(
                input(&format!("Reader {pinned}"), Runtime::Python3, NEEDS_TOMLI),
                vec![pinned.to_string()],
            )
            .expect("create with packages");
        ids.push((w.id, pinned.trim_start_matches("tomli==")));
    }
    for (id, wanted) in &ids {
        let run = bed.engine.run_and_wait(*id).await.expect("run");
        assert_eq!(run.run.status, RunStatus::Succeeded, "{}", run.run.summary);
        let result = run.attempts[0].result.clone().expect("result");
        assert!(
            result.contains(&format!("\"tomli\":\"{wanted}\"")),
            "{result}"
        );
        // Declared at creation: the first run installed them, and kept what pip printed.
        assert!(run
            .setup
            .expect("setup")
            .contains("Successfully installed tomli"));
        assert_eq!(run.run.version, Version::FIRST, "no new version was needed");
        let deps = bed.engine.dependencies(*id).expect("deps");
        assert_eq!(deps.packages[0].installed.as_deref(), Some(*wanted));
    }
    no_model_asked(&bed);
}

#[tokio::test]
async fn declared_packages_that_cannot_be_installed_fail_the_run_before_the_script_and_ask() {
    let bed = bed(false, true).await;
    let w = bed
        .engine
        .create_workflow_with(
            input("Declared wrong", Runtime::Python3, "print('hello')\n"),
            vec![NO_SUCH.to_string()],
        )
        .expect("create");
    let run = bed.engine.run_and_wait(w.id).await.expect("run");
    assert_eq!(run.run.status, RunStatus::Failed);
    assert!(
        run.run.summary.contains("could not be installed"),
        "{}",
        run.run.summary
    );
    let attempt = &run.attempts[0];
    assert!(attempt
        .note
        .as_deref()
        .unwrap_or_default()
        .contains("The script did not run"));
    assert!(run.setup.expect("setup").contains(NO_SUCH));
    let c = bed.engine.checkpoints().expect("list").pending.remove(0);
    assert_eq!(c.title, "Its packages could not be installed");
    assert!(
        c.context.contains("No matching distribution found"),
        "{}",
        c.context
    );
    no_model_asked(&bed);
    let deps = bed.engine.dependencies(w.id).expect("deps");
    assert_eq!(deps.state, EnvironmentState::Failed);
    assert!(deps.error.unwrap_or_default().contains(NO_SUCH));
}

#[tokio::test]
async fn saving_a_script_offers_the_imports_its_environment_lacks_under_their_package_names() {
    let bed = bed(false, false).await;
    let w = bed
        .engine
        .create_workflow(input("Report", Runtime::Python3, "print(1)\n"))
        .expect("create");
    std::fs::write(bed.paths.workflow_dir(w.id).join("helpers.py"), "X = 1\n").expect("helper");
    let code = "import json, os\nimport yaml\nfrom bs4 import BeautifulSoup\nimport requests.adapters\n\
                import helpers\nfrom . import sibling\ntry:\n    import ujson\nexcept ImportError:\n    ujson = None\n\
                from dateutil import parser\n";
    let offered = bed
        .engine
        .propose_packages(&Runtime::Python3, code, Some(w.id))
        .await
        .expect("propose");
    let pairs: Vec<(&str, &str, u32, ProposalSource)> = offered
        .iter()
        .map(|p| (p.module.as_str(), p.package.as_str(), p.line, p.source))
        .collect();
    assert_eq!(
        pairs,
        [
            ("yaml", "PyYAML", 2, ProposalSource::Table),
            ("bs4", "beautifulsoup4", 3, ProposalSource::Table),
            ("requests", "requests", 4, ProposalSource::SameName),
            ("dateutil", "python-dateutil", 11, ProposalSource::Table),
        ],
        "the standard library, the file beside it, a relative import and an optional import are not offered; the machine's own packages do not count"
    );

    // The person confirms two: they are part of the new version, and the diff can show them.
    let saved = bed
        .engine
        .save_edited_script_with(
            w.id,
            code,
            "read the config",
            None,
            Some(vec!["PyYAML".to_string(), "requests>=2".to_string()]),
        )
        .await
        .expect("save");
    let healer::engine::SaveOutcome::Saved { version } = saved else {
        panic!("saved: {saved:?}");
    };
    assert_eq!(version.requirements, ["PyYAML", "requests>=2"]);
    let deps = bed.engine.dependencies(w.id).expect("deps");
    assert_eq!(deps.state, EnvironmentState::NotInstalled);
    // Declared packages are no longer offered.
    let again = bed
        .engine
        .propose_packages(&Runtime::Python3, code, Some(w.id))
        .await
        .expect("propose");
    assert_eq!(
        again.iter().map(|p| p.package.as_str()).collect::<Vec<_>>(),
        ["beautifulsoup4", "python-dateutil"]
    );
    // What an installer would misread is refused, and nothing is saved.
    let bad = bed
        .engine
        .save_edited_script_with(
            w.id,
            code,
            "x",
            None,
            Some(vec!["-r /etc/passwd".to_string()]),
        )
        .await;
    assert!(bad.is_err());
    // Restoring 1.0 brings back its (empty) package list with its code.
    let restored = bed
        .engine
        .restore_version(w.id, Version::FIRST)
        .expect("restore");
    assert!(restored.requirements.is_empty());
}

#[tokio::test]
async fn a_node_scripts_imports_are_offered_without_builtins() {
    let bed = bed(false, false).await;
    let code = "import fs from 'node:fs';\nimport path from 'path';\nconst { IncomingWebhook } = require('@slack/webhook');\nconst map = require('lodash/map');\n";
    let offered = bed
        .engine
        .propose_packages(&Runtime::Node, code, None)
        .await
        .expect("propose");
    assert_eq!(
        offered
            .iter()
            .map(|p| p.package.as_str())
            .collect::<Vec<_>>(),
        ["@slack/webhook", "lodash"]
    );
    assert!(bed
        .engine
        .propose_packages(&Runtime::Bash, "curl x\n", None)
        .await
        .expect("bash")
        .is_empty());
}

#[tokio::test]
async fn an_auto_fixs_evaluation_sees_the_workflows_own_packages() {
    use crate::maintainer::tool;
    use crate::model_server::{openai, TOKENS};
    let bed = bed(false, true).await;
    let code = "import tomli\ndata = tomli.loads('a = 1')\nprint(data['b'])\n";
    let w = bed
        .engine
        .create_workflow_with(
            input("Config", Runtime::Python3, code),
            vec!["tomli".to_string()],
        )
        .expect("create");
    let probe = "import sys, tomli\nprint('prefix', sys.prefix)\nprint(tomli.loads('a = 1'))\n";
    bed.server.script([
        tool("eval", serde_json::json!({ "code": probe })),
        openai::text(
            "The data has no b; I need to know what it should read.",
            TOKENS,
        ),
    ]);
    bed.engine.run_until_healed(w.id).await.expect("healed");
    let chats = bed.server.chats();
    assert_eq!(
        chats.len(),
        2,
        "the maintainer evaluated once, then answered"
    );
    let results: Vec<String> = chats[1].body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "tool")
        .filter_map(|m| m["content"].as_str().map(str::to_string))
        .collect();
    let eval = results.first().expect("the eval's result");
    assert!(eval.contains("exit code 0"), "{eval}");
    assert!(
        eval.contains("{'a': 1}"),
        "tomli came from the workflow's venv: {eval}"
    );
    assert!(eval.contains(".venv"), "{eval}");
}

#[tokio::test]
async fn the_missing_module_example_heals_itself_at_zero_tokens() {
    let bed = bed(false, true).await;
    let examples = bed.engine.load_examples().expect("examples");
    let digest = examples
        .iter()
        .find(|w| w.name == "team-chat-digest")
        .expect("the missing-module example");
    let healed = bed
        .engine
        .run_until_healed(digest.id)
        .await
        .expect("healed");
    assert!(
        healed
            .first
            .run
            .summary
            .contains("Cannot find module '@slack/webhook'"),
        "{}",
        healed.first.run.summary
    );
    assert_eq!(
        healed.last.status,
        RunStatus::Succeeded,
        "{}",
        healed.outcome
    );
    let fixed = bed
        .engine
        .version(digest.id, healed.last.version)
        .expect("1.1");
    assert!(
        fixed
            .change_comment
            .starts_with("installed @slack/webhook "),
        "{}",
        fixed.change_comment
    );
    let rerun = bed.engine.run_detail(healed.last.id).expect("re-run");
    assert!(
        rerun.attempts[0].stdout.contains("Digest ready"),
        "{}",
        rerun.attempts[0].stdout
    );
    no_model_asked(&bed);
}
