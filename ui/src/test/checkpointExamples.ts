// Checkpoints as the engine raises them (src/recovery.rs): an environment problem with the
// diagnostics report, a run that keeps failing, and one decided earlier.
import { FakeHealer, minutesAgo } from "./fakeHealer";

export const DIAGNOSTICS = `python3 is installed (Python 3.12.3, at /usr/bin/python3).
Installed Python modules: certifi==2024.2.2 charset-normalizer==3.3.2 idna==3.6 urllib3==2.2.1
The disk that holds the workflow has 244.0 GB free (46% used).
api.frankfurter.app (named in the run's output, port 443) answers.`;

export const ENVIRONMENT_CONTEXT = `“Exchange rates” failed in run 2: ModuleNotFoundError: No module named 'requests' (environment).

Healer's analysis: The script imports the requests module, which is not installed for this Python.

What this machine has:
${DIAGNOSTICS}`;

export const HICCUP_CONTEXT = `“Nightly backup” failed in run 4: stopped after 300 s, its time limit (timeout).
Why Healer is asking: it ran past its time limit.`;

/**
 * A fake engine with two questions waiting (the environment one first, the oldest) and one
 * decided an hour ago.
 */
export function healerWithCheckpoints() {
  const healer = new FakeHealer().install();
  const rates = healer.addWorkflow({ title: "Exchange rates", status: "needs_attention" }).workflow.id;
  const backup = healer.addWorkflow({ title: "Nightly backup" }).workflow.id;
  const sales = healer.addWorkflow({ title: "Weekly sales report", status: "paused" }).workflow.id;
  healer.addRun(rates, { status: "succeeded", summary: "Succeeded in 1.2 s" });
  const ratesRun = healer.addRun(rates, {
    status: "failed", class: "environment", summary: "ModuleNotFoundError: No module named 'requests' (environment)",
  }).run.id;
  healer.addRun(backup, { status: "succeeded", summary: "Succeeded in 41 s" });
  const backupRun = healer.addRun(backup, { status: "failed", class: "timeout", summary: "Timed out after 300 s" }).run.id;

  const decided = healer.checkpoints.add({
    trigger: "hiccup", workflow_id: sales, run_id: null, signature: "logic:KeyError:total", recommend: 1,
    context: "“Weekly sales report” failed in run 1: KeyError: 'total' (logic).\nWhy Healer is asking: Healer could not get past it on its own.",
    recommendation: "Proceed — a failure like this often passes on the next try",
    created_at: minutesAgo(90),
    decision: {
      option: 3, notes: "The shop's export is being migrated this week.", decided_at: minutesAgo(60),
      outcome: "Paused until you resume it",
    },
  });
  const environment = healer.checkpoints.add({
    trigger: "environment", workflow_id: rates, run_id: ratesRun, signature: "environment:ModuleNotFoundError:requests", recommend: 3,
    context: ENVIRONMENT_CONTEXT,
    recommendation: "Pause — it will keep failing until the machine is fixed; resume it when it is",
    created_at: minutesAgo(20),
  });
  const hiccup = healer.checkpoints.add({
    trigger: "hiccup", workflow_id: backup, run_id: backupRun, signature: "timeout:main.py", recommend: 2,
    context: HICCUP_CONTEXT,
    recommendation: "Skip — you chose it 4 of the last 5 times for this workflow",
    created_at: minutesAgo(5),
  });
  return { healer, rates, backup, sales, ratesRun, backupRun, environment, hiccup, decided };
}
