//! What failed is not tried again: a fix whose code equals (whitespace aside) one already
//! recorded as failed for the error is refused by the tool, and a workflow whose repair gave up
//! stops costing tokens until the person acts.

use healer::workflow::{Runtime, Version};
use serde_json::json;

use crate::maintainer::{bed, tool, BROKEN};
use crate::memory::still_broken;
use crate::model_server::{openai, TOKENS};
use crate::workflows::input;

/// The tool results the model was sent in a request.
fn tool_results(seen: &crate::model_server::Seen) -> Vec<String> {
    seen.body["messages"]
        .as_array()
        .map(|ms| {
            ms.iter()
                .filter(|m| m["role"] == "tool")
                .filter_map(|m| m["content"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn a_fix_already_tried_and_failed_is_refused_by_the_tool() {
    let bed = bed(false, true).await;
    let engine = &bed.engine;
    let w = engine
        .create_workflow(input("Sales total", Runtime::Python3, BROKEN))
        .expect("w");
    let tried = still_broken(1);
    // The same code with other spacing: blank lines, wider gaps, trailing blanks.
    let again = format!(
        "{}   \n\n",
        tried.replace('\n', "\n\n").replace(" = ", "  =  ")
    );
    assert_ne!(tried, again);
    bed.server.script([
        tool("fix", json!({"code": tried, "comment": "Add a comment"})),
        openai::text("Done.", TOKENS),
        tool(
            "fix",
            json!({"code": again, "comment": "Add a comment again"}),
        ),
        openai::text("I see no other way to repair it.", TOKENS),
    ]);
    let healed = engine.run_until_healed(w.id).await.expect("healed");
    let chats = bed.server.chats();
    assert_eq!(chats.len(), 4, "{}", healed.outcome);
    let refused = tool_results(&chats[3]).join("\n");
    assert!(
        refused.contains("the fix was not applied: it is the same code")
            && refused.contains("version 1.1 of \u{201c}Sales total\u{201d}")
            && refused.contains("tried for this error and failed"),
        "{refused}"
    );
    let versions: Vec<Version> = engine
        .versions(w.id)
        .expect("versions")
        .iter()
        .map(|v| v.version)
        .collect();
    assert_eq!(
        versions.len(),
        2,
        "the repeated fix was not stored: {versions:?}"
    );
    let thread = engine
        .autofix_detail(healed.fixes[1].task_id)
        .expect("detail")
        .thread;
    assert!(thread
        .messages
        .iter()
        .any(|m| m.is_error && m.content.contains("same code")));
}
