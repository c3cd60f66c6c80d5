// Healing memory and safety decisions as the engine records them: a KeyError repaired three
// ways (one worked, one failed, one waits for its re-run), errors with no fix yet, a workflow
// flagged for review and rolled back by Healer, and the decisions log that tells of it.
import { FakeHealer, minutesAgo } from "./fakeHealer";

const HOUR = 60;
const DAY = 24 * HOUR;

export const KEY_ERROR = "3f9c2a71b04e8d15";
export const CONNECTION_ERROR = "a81d5e07c2b94f36";
export const MISSING_MODULE = "c4f0b1e9d7a26853";

export const KEY_ERROR_TEXT = `KeyError: 'total'
File "main.py", in <module>
report = summarise(orders)
File "main.py", in summarise
total += order["total"]`;

const SCRIPT = `import json

orders = json.load(open("orders.json"))


def summarise(orders):
    total = 0
    for order in orders:
        total += order["total"]
    return total


print(summarise(orders))
`;

/** The diff that worked: the shop's export renamed "total" to "amount". */
export const WORKED_DIFF = `--- original
+++ modified
@@ -6,7 +6,7 @@
 def summarise(orders):
     total = 0
     for order in orders:
-        total += order["total"]
+        total += order["amount"]
     return total
 
 
`;

const FAILED_DIFF = `--- original
+++ modified
@@ -6,7 +6,7 @@
 def summarise(orders):
     total = 0
     for order in orders:
-        total += order["total"]
+        total += order.get("total", "0")
     return total
 
 
`;

const PENDING_DIFF = `--- original
+++ modified
@@ -7,5 +7,7 @@
     total = 0
     for order in orders:
+        if "total" not in order:
+            continue
         total += order["total"]
     return total
 
`;

export const SURVIVORS_REASON =
  "3 runs left processes running after Healer ended them (the last: run 31). Scheduled runs are paused until you resume them.";

export const FORENSICS = "/home/ada/.local/share/healer/forensics/weekly-sales-report-2026-11-20T08-14-03-512Z.json";

/** A fake engine with a memory of three errors, a workflow Healer flagged and rolled back, and its decisions log. */
export function healerWithMemory() {
  const healer = new FakeHealer().install();
  const sales = healer.addWorkflow({ title: "Weekly sales report", code: SCRIPT, review: true, fix_count: 0 }).workflow.id;
  const rates = healer.addWorkflow({ title: "Exchange rates" }).workflow.id;
  const invoices = healer.addWorkflow({ title: "Monthly invoices", code: SCRIPT }).workflow.id;

  const fixed = SCRIPT.replace('order["total"]', 'order["amount"]');
  healer.addVersion(sales, fixed, "Read the order amount from the new “amount” field", { major: 1, minor: 1 }, { kind: "task", task_id: 41 }, minutesAgo(2 * DAY + 20 * HOUR));
  healer.addVersion(sales, SCRIPT.replace('order["total"]', 'order.get("total", "0")'), "Default missing totals to 0", { major: 1, minor: 2 }, { kind: "task", task_id: 44 }, minutesAgo(2 * DAY));
  healer.addVersion(sales, fixed, "Rolled back to 1.1 after 3 failed repairs", { major: 1, minor: 3 }, { kind: "healer" }, minutesAgo(3 * HOUR));

  const { memory } = healer;
  memory.addPattern({
    signature: MISSING_MODULE, error_type: "ModuleNotFoundError",
    normalized: "ModuleNotFoundError: No module named 'requests'\nFile \"main.py\", in <module>\nimport requests",
    first_seen: minutesAgo(3 * DAY), last_seen: minutesAgo(3 * DAY), count: 1,
  });
  memory.addPattern({
    signature: CONNECTION_ERROR, error_type: "requests.exceptions.ConnectionError",
    normalized:
      "requests.exceptions.ConnectionError: HTTPSConnectionPool(host='api.frankfurter.app', port=<port>): Max retries exceeded with url: /latest?<query>",
    first_seen: minutesAgo(6 * DAY), last_seen: minutesAgo(DAY + 2 * HOUR), count: 5,
  });
  memory.addPattern({
    signature: KEY_ERROR, error_type: "KeyError", normalized: KEY_ERROR_TEXT,
    first_seen: minutesAgo(6 * DAY), last_seen: minutesAgo(2 * HOUR), count: 14,
  });
  const worked = memory.addFix(KEY_ERROR, {
    workflow_id: sales, task_id: 41, description: "Read the order amount from the new “amount” field",
    diff: WORKED_DIFF, result: "success", created_at: minutesAgo(2 * DAY + 20 * HOUR), settled_at: minutesAgo(2 * DAY + 20 * HOUR - 5),
  });
  const failed = memory.addFix(KEY_ERROR, {
    workflow_id: sales, task_id: 44, description: "Default missing totals to 0", diff: FAILED_DIFF,
    result: "failed", created_at: minutesAgo(2 * DAY), settled_at: minutesAgo(2 * DAY - 4),
  });
  const pending = memory.addFix(KEY_ERROR, {
    workflow_id: invoices, task_id: 52, description: "Skip orders that have no total", diff: PENDING_DIFF,
    result: "pending", created_at: minutesAgo(5),
  });

  memory.addDecision({
    kind: "review", workflow_id: sales, summary: "Fixed 6 times in 7 days: flagged for review", created_at: minutesAgo(3 * DAY),
  });
  memory.addDecision({
    kind: "fix_rolled_back", workflow_id: sales, summary: "1.2 rolled back to the code of 1.1 as 1.3",
    detail:
      "Rolled back the automatic fix that made 1.2: its re-run failed with a different error (TypeError: unsupported operand type(s) for +=: 'int' and 'str')",
    created_at: minutesAgo(2 * DAY - 5),
  });
  memory.addDecision({
    kind: "systemic", summary: "The same error in 3 workflows within the hour; repairs for it paused (checkpoint 5)",
    detail: CONNECTION_ERROR, created_at: minutesAgo(DAY + 2 * HOUR),
  });
  memory.addDecision({
    kind: "cost", workflow_id: rates, summary: "Healing used 51200 of 50000 tokens today; checkpoint 6 asks", created_at: minutesAgo(DAY),
  });
  memory.addDecision({
    kind: "catastrophic_rollback", workflow_id: sales, summary: "Rolled back to 1.1 after 3 failed repairs",
    detail: `1.2 → 1.3 (the code of 1.1). What happened is kept in ${FORENSICS}`, created_at: minutesAgo(3 * HOUR),
  });
  memory.addDecision({ kind: "survivors", summary: SURVIVORS_REASON, created_at: minutesAgo(2 * HOUR) });
  memory.addDecision({ kind: "scheduler_resumed", summary: "Scheduled runs resumed", created_at: minutesAgo(HOUR) });

  return { healer, sales, rates, invoices, worked, failed, pending };
}
