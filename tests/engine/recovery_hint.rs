//! The recovery hint reaches someone: the script gets it (HEALER_RECOVERY_HINT), the run keeps
//! it, and every repair of the workflow's failures until it runs green again is told it.

use healer::workflow::{RunStatus, RunTrigger, Runtime};
use serde_json::json;

use crate::maintainer::{bed, tool};
use crate::memory::still_broken;
use crate::model_server::{openai, TOKENS};
use crate::workflows::input;

/// Without the hint it stops at a program the machine lacks; with it, it gets further and fails on the
/// shape of its data.
const NEEDS_A_HINT: &str = "import json, os, subprocess, sys\nif not os.environ.get('HEALER_RECOVERY_HINT'):\n    sys.exit(subprocess.run('healer-hint-missing-tool', shell=True).returncode)\ndata = {\"totl\": 3}\nprint(json.dumps({\"total\": data[\"total\"]}))\n";

#[tokio::test]
async fn the_hint_reaches_the_script_the_run_and_every_repair_after_it() {
    let bed = bed(false, true).await;
    let engine = &bed.engine;
    let w = engine
        .create_workflow(input("Rates", Runtime::Python3, NEEDS_A_HINT))
        .expect("w");
    let hint = "The tool is optional: run without it, using the mirror";
    bed.server.script([
        openai::text(
            &json!({"action": "alternative", "hint": hint, "reasoning": "the tool is optional"})
                .to_string(),
            TOKENS,
        ),
        tool(
            "fix",
            json!({"code": still_broken(1), "comment": "Try one"}),
        ),
        openai::text("Done.", TOKENS),
        openai::text("I found no fix.", TOKENS),
    ]);
    engine.run_until_healed(w.id).await.expect("healed");
    let runs = engine.runs(w.id, None, 10).expect("runs");
    let hinted = runs
        .iter()
        .find(|r| r.trigger == RunTrigger::Recovery)
        .expect("the run with the hint");
    assert_eq!(hinted.hint.as_deref(), Some(hint));
    assert_eq!(hinted.status, RunStatus::Failed);
    assert_eq!(
        hinted.class,
        Some(healer::failure::FailureClass::Logic),
        "the script read the hint and got past the missing tool"
    );
    let chats = bed.server.chats();
    assert_eq!(chats.len(), 4);
    let told = format!("suggested for this failure (the script gets it as HEALER_RECOVERY_HINT when Healer runs it with the hint): {hint}");
    // The repair of the hinted run, and the repair after its fix's re-run (which had no hint).
    for repair in [&chats[1], &chats[3]] {
        let context = repair.body["messages"].to_string();
        assert!(context.contains(&told), "{context}");
    }
    // The thread keeps it for the person to read.
    let fix = engine
        .autofixes(w.id)
        .expect("fixes")
        .pop()
        .expect("the first repair");
    let thread = engine.autofix_detail(fix.task_id).expect("detail").thread;
    assert!(thread.messages.iter().any(|m| m.content.contains(hint)));
}
