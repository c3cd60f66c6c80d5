//! "The fix made it worse" means worse, with real scripts: a fix that cures one bug and
//! uncovers the next, later in the script, is kept and the next bug repaired; a passing problem
//! on the re-run is retried, not judged; a fix that fails earlier, or breaks loading, is rolled
//! back; and the fix is re-run even when another run was already open.

use std::net::TcpListener;

use healer::memory::{DecisionKind, FixVerdict};
use healer::workflow::{Author, RunStatus, RunTrigger, Runtime, Version};
use serde_json::json;

use crate::maintainer::{bed, tool, BROKEN, FIXED};
use crate::model_server::{openai, TOKENS};
use crate::workflows::input;

/// Two bugs: line 3 reads a key the data no longer has; line 5 divides by the number of
/// southern rows, which is zero.
const TWO_BUGS: &str = "import json\nrows = [{\"total\": 3, \"region\": \"north\"}]\ntotal = sum(r[\"amount\"] for r in rows)\nprint(\"total\", total)\nshare = total / len([r for r in rows if r[\"region\"] == \"south\"])\nprint(json.dumps({\"total\": total, \"share\": share}))\n";
const FIRST_CURED: &str = "import json\nrows = [{\"total\": 3, \"region\": \"north\"}]\ntotal = sum(r[\"total\"] for r in rows)\nprint(\"total\", total)\nshare = total / len([r for r in rows if r[\"region\"] == \"south\"])\nprint(json.dumps({\"total\": total, \"share\": share}))\n";
const BOTH_CURED: &str = "import json\nrows = [{\"total\": 3, \"region\": \"north\"}]\ntotal = sum(r[\"total\"] for r in rows)\nprint(\"total\", total)\nsouth = [r for r in rows if r[\"region\"] == \"south\"]\nshare = total / len(south) if south else None\nprint(json.dumps({\"total\": total, \"share\": share}))\n";

#[tokio::test]
async fn a_fix_that_gets_the_script_further_is_kept_and_the_next_bug_repaired() {
    let bed = bed(false, true).await;
    let engine = &bed.engine;
    let w = engine
        .create_workflow(input("Regional share", Runtime::Python3, TWO_BUGS))
        .expect("w");
    bed.server.script([
        tool("fix", json!({"code": FIRST_CURED, "comment": "Read total"})),
        openai::text("The rows call it total.", TOKENS),
        tool(
            "fix",
            json!({"code": BOTH_CURED, "comment": "No southern rows: no share"}),
        ),
        openai::text("Guarded the share.", TOKENS),
    ]);
    let healed = engine.run_until_healed(w.id).await.expect("healed");
    assert_eq!(
        healed.last.status,
        RunStatus::Succeeded,
        "{}",
        healed.outcome
    );
    assert_eq!(healed.last.version, Version { major: 1, minor: 2 });
    let authors: Vec<Author> = engine
        .versions(w.id)
        .expect("versions")
        .into_iter()
        .map(|v| v.author)
        .collect();
    assert!(
        !authors.contains(&Author::Healer),
        "nothing was rolled back: {authors:?}"
    );
    assert_eq!(healed.fixes.len(), 2);
    // The second repair was about the new error, in the kept version.
    let second = bed.server.chats()[2].body["messages"].to_string();
    assert!(second.contains("ZeroDivisionError"), "{second}");
    assert!(second.contains("version 1.1"), "{second}");
    assert!(engine
        .decisions(10)
        .expect("decisions")
        .iter()
        .any(|d| d.kind == DecisionKind::FixKept));
    // The first fix held for its error, and that error's heal is resolved by it.
    let first_heal = engine
        .heals(10)
        .expect("heals")
        .into_iter()
        .find(|h| h.summary.contains("Resolved by 1.1"))
        .expect("the KeyError's heal");
    assert_eq!(first_heal.resolved_by, Some(Version { major: 1, minor: 1 }));
    let fixes = engine
        .pattern(&first_heal.signature)
        .expect("pattern")
        .fixes;
    assert_eq!(fixes[0].result, FixVerdict::Success);
}

#[tokio::test]
async fn a_passing_problem_on_the_rerun_is_retried_not_judged() {
    let bed = bed(false, true).await;
    let engine = &bed.engine;
    let closed = {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.local_addr().expect("addr").port()
    };
    // The fix works, but the service it talks to refuses the first three connections: the
    // re-run's own three attempts all meet it.
    let flaky_fix = format!(
        "import json, os, socket\nn = int(open('tries.txt').read()) if os.path.exists('tries.txt') else 0\nopen('tries.txt', 'w').write(str(n + 1))\nif n < 3:\n    socket.create_connection(('127.0.0.1', {closed}), timeout=2)\ndata = {{\"totl\": 3}}\nprint(json.dumps({{\"total\": data[\"totl\"]}}))\n"
    );
    let w = engine
        .create_workflow(input("Sales total", Runtime::Python3, BROKEN))
        .expect("w");
    bed.server.script([
        tool("fix", json!({"code": flaky_fix, "comment": "Read totl"})),
        openai::text("Fixed.", TOKENS),
    ]);
    let healed = engine.run_until_healed(w.id).await.expect("healed");
    assert_eq!(
        healed.last.status,
        RunStatus::Succeeded,
        "{}",
        healed.outcome
    );
    assert_eq!(healed.last.version, Version { major: 1, minor: 1 });
    let runs = engine.runs(w.id, None, 10).expect("runs");
    let shape: Vec<(RunTrigger, RunStatus)> =
        runs.iter().rev().map(|r| (r.trigger, r.status)).collect();
    assert_eq!(
        shape,
        [
            (RunTrigger::Manual, RunStatus::Failed),
            (RunTrigger::Fix, RunStatus::Failed),
            (RunTrigger::Fix, RunStatus::Succeeded)
        ]
    );
    assert_eq!(
        runs[1].class,
        Some(healer::failure::FailureClass::Transient)
    );
    let signature = engine
        .patterns(10)
        .expect("patterns")
        .last()
        .expect("one")
        .signature
        .clone();
    let fixes = engine.pattern(&signature).expect("pattern").fixes;
    assert_eq!(
        fixes[0].result,
        FixVerdict::Success,
        "judged by the run that could"
    );
    assert_eq!(
        bed.server.chats().len(),
        2,
        "no repair of the passing problem"
    );
}

#[tokio::test]
async fn a_fix_that_fails_earlier_or_breaks_loading_is_rolled_back() {
    for (fix, why) in [
        (
            format!(
                "import json\nraise ValueError('a new problem')\n{}",
                &FIXED["import json\n".len()..]
            ),
            "failed earlier in the script than before",
        ),
        (
            format!("import healer_judged_missing_module\n{FIXED}"),
            "the script no longer loads",
        ),
    ] {
        let bed = bed(false, true).await;
        let engine = &bed.engine;
        let w = engine
            .create_workflow(input("Sales total", Runtime::Python3, BROKEN))
            .expect("w");
        bed.server.script([
            tool("fix", json!({"code": fix, "comment": "Rewrite"})),
            openai::text("Rewrote it.", TOKENS),
        ]);
        engine.run_until_healed(w.id).await.expect("healed");
        assert_eq!(
            bed.server.chats().len(),
            2,
            "no repair of the rolled-back fix"
        );
        let active = engine.workflow(w.id).expect("w").active;
        assert_eq!(active.version, Version { major: 1, minor: 2 });
        assert_eq!(active.code, BROKEN);
        assert_eq!(active.author, Author::Healer);
        assert!(
            active.change_comment.contains(why),
            "{}",
            active.change_comment
        );
        let signature = engine
            .patterns(10)
            .expect("patterns")
            .last()
            .expect("one")
            .signature
            .clone();
        let fixes = engine.pattern(&signature).expect("pattern").fixes;
        assert_eq!(fixes[0].result, FixVerdict::Failed);
    }
}

#[tokio::test]
async fn the_fix_is_rerun_even_when_another_run_was_already_open() {
    let bed = bed(false, true).await;
    let engine = &bed.engine;
    let w = engine
        .create_workflow(input("Sales total", Runtime::Python3, BROKEN))
        .expect("w");
    let failed = engine.run_and_wait(w.id).await.expect("run");
    assert_eq!(failed.run.status, RunStatus::Failed);
    // Before the repair works, another run of the old code is queued (the schedule, a click).
    let open = engine.run_now(w.id).expect("queued");
    bed.server.script([
        tool("fix", json!({"code": FIXED, "comment": "Read totl"})),
        openai::text("Fixed.", TOKENS),
    ]);
    engine.work_inbox(w.id).await.expect("the repair");
    let fix = engine.autofixes(w.id).expect("fixes").remove(0);
    assert_eq!(fix.to_version, Some(Version { major: 1, minor: 1 }));
    engine.work_queued_runs(w.id).await.expect("runs");
    let run = engine.run_detail(open).expect("the open run").run;
    assert_eq!(
        run.version,
        Version { major: 1, minor: 1 },
        "it ran the fix"
    );
    assert_eq!(run.trigger, RunTrigger::Fix);
    assert_eq!(run.status, RunStatus::Succeeded);
    let tool_result = bed.server.chats()[1].body["messages"].to_string();
    assert!(
        tool_result.contains(&format!("\\\"rerun_id\\\":{open}")),
        "{tool_result}"
    );
}
