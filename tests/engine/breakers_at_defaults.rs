//! The cost and review breakers at their shipped defaults, with real scripts and usage the
//! scripted server measures from each request: 150,000 healing tokens a day per workflow, and
//! more than 5 fixes in 7 days.

use healer::breakers::BreakerSettings;
use healer::checkpoint::CheckpointTrigger;
use healer::memory::DecisionKind;
use healer::notification::NotificationKind;
use healer::workflow::{RunStatus, Runtime};
use serde_json::json;

use crate::maintainer::{bed, tool};
use crate::model_server::{openai, TOKENS};
use crate::workflows::input;

/// A script that logs 200 long lines on each stream and then fails on a KeyError: what the
/// maintainer reads is large, as a real job's logs are. `n` only changes a comment.
fn loud(n: u32) -> String {
    format!(
        "import json, sys\n# try {n}\nfor i in range(200):\n    print(f'{{i:04d}} order read: ' + 'x' * 380)\n    print(f'{{i:04d}} warning: ' + 'y' * 385, file=sys.stderr)\ndata = {{\"totl\": 3}}\nprint(json.dumps({{\"total\": data[\"total\"]}}))\n"
    )
}

#[tokio::test]
async fn repairs_that_read_large_logs_stop_at_the_daily_allowance() {
    let defaults = BreakerSettings::default();
    assert_eq!(defaults.daily_healing_tokens, 150_000);
    let bed = bed(false, true).await;
    let engine = &bed.engine;
    let w = engine
        .create_workflow(input("Loud report", Runtime::Python3, &loud(0)))
        .expect("w");
    // Each repair reads the logs twice (eval, fix): about 55,000 tokens. Its closing sentence
    // would cross the per-task cap (60,000), so it is not asked for; the fix stands.
    let mut replies = Vec::new();
    for n in 1..=3 {
        replies.push(tool("eval", json!({"code": loud(n)})));
        replies.push(tool(
            "fix",
            json!({"code": loud(n), "comment": format!("Try {n}")}),
        ));
    }
    bed.server.script(replies);
    engine.run_until_healed(w.id).await.expect("healed");
    let pending = engine.checkpoints().expect("list").pending;
    let cost = pending
        .iter()
        .find(|c| c.trigger == CheckpointTrigger::Cost)
        .expect("the cost breaker asks");
    let used = bed.server.reported().total();
    assert!(used >= 150_000, "{used}");
    assert!(
        cost.context.contains(&format!(
            "used {used} tokens today (the allowance is 150000)"
        )),
        "{}",
        cost.context
    );
    let fixes = engine.autofixes(w.id).expect("fixes");
    assert_eq!(
        fixes.len(),
        3,
        "the repair over the allowance did not start"
    );
    assert!(engine
        .decisions(10)
        .expect("decisions")
        .iter()
        .any(|d| d.kind == DecisionKind::Cost));
}

#[tokio::test]
async fn a_workflow_fixed_six_times_in_a_week_is_flagged_for_review() {
    assert_eq!(BreakerSettings::default().review_fixes, 5);
    let bed = bed(false, true).await;
    let engine = &bed.engine;
    // The data's field keeps being renamed; each repair reads the new name and runs green.
    let reads = |key: &str| {
        format!("import json\ndata = json.load(open('data.json'))\nprint(json.dumps({{\"total\": data[\"{key}\"]}}))\n")
    };
    let w = engine
        .create_workflow(input("Sales total", Runtime::Python3, &reads("k0")))
        .expect("w");
    let folder = bed.paths.workflow_dir(w.id);
    for n in 1..=6 {
        std::fs::write(folder.join("data.json"), format!("{{\"k{n}\": {n}}}")).expect("data");
        bed.server.script([
            tool(
                "fix",
                json!({"code": reads(&format!("k{n}")), "comment": format!("Read k{n}")}),
            ),
            openai::text("Done.", TOKENS),
        ]);
        let healed = engine.run_until_healed(w.id).await.expect("healed");
        assert_eq!(
            healed.last.status,
            RunStatus::Succeeded,
            "{}",
            healed.outcome
        );
        let flagged = engine.find_workflow("sales-total").expect("w").review;
        assert_eq!(flagged, n > 5, "after {n} fixes");
    }
    let n = engine
        .notifications()
        .expect("list")
        .items
        .into_iter()
        .find(|n| n.kind == NotificationKind::Review)
        .expect("review notification");
    assert!(n.body.contains("6 times in the last 7 days"), "{}", n.body);
}
