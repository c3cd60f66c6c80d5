import { act, screen, waitFor, within } from "@testing-library/react";
import { expect, test } from "vitest";
import { events } from "./bindings";
import { callInWords, commandOutput } from "./projectText";
import { FakeHealer } from "./test/fakeHealer";
import { FOLDER, step, task } from "./test/fakeProjects";
import { renderApp } from "./test/renderApp";

function healerWithProject() {
  const healer = new FakeHealer().install();
  healer.projects.projects.push({
    id: 1, name: "greeter", path: FOLDER, created_at: "", updated_at: "",
    settings: { main_branch: "main", agent: "builtin", verify: [{ name: "test", command: "npm test" }] },
  });
  return healer;
}

test("adding a project: the chosen folder is looked at, the detected checks proposed, the engine's problems shown under their field", async () => {
  const healer = new FakeHealer().install();
  const { user } = renderApp("#/projects");

  await user.click(await screen.findByTestId("new-project"));
  await user.click(await screen.findByTestId("pick-folder"));

  const state = await screen.findByTestId("folder-state");
  expect(state).toHaveAttribute("data-state", "ready");
  expect(state).toHaveTextContent("A git repository on branch main.");
  expect(state).toHaveTextContent("Healer recognised a Node project (package.json).");
  expect(state).toHaveTextContent("Runs still work.");
  expect(screen.getByTestId("project-path")).toHaveValue(FOLDER);
  expect(await screen.findByTestId("verify-command-0")).toHaveValue("npm run test");
  expect(screen.getByTestId("field-name")).toHaveValue("greeter");

  // An agent this computer does not have is said so, under the field, in the engine's words.
  await user.click(screen.getByTestId("agent-codex"));
  expect(await screen.findByTestId("field-error-agent")).toHaveTextContent("Codex is not installed on this computer");
  expect(screen.getByTestId("save-project")).toBeDisabled();
  await user.click(screen.getByTestId("agent-builtin"));
  expect(screen.queryByTestId("agent-fields")).toBeNull();
  await user.clear(screen.getByTestId("verify-command-0"));
  expect(await screen.findByTestId("field-error-verify-0")).toHaveTextContent("The command is empty");
  await user.type(screen.getByTestId("verify-command-0"), "npm test");
  await waitFor(() => expect(screen.queryByTestId("field-error-verify-0")).toBeNull());

  await waitFor(() => expect(screen.getByTestId("save-project")).toBeEnabled());
  await user.click(screen.getByTestId("save-project"));
  await screen.findByTestId("page-project");
  const added = healer.callsTo("add_project")[0].args.input as { path: string; settings: { verify: { command: string }[] } };
  expect(added.path).toBe(FOLDER);
  expect(added.settings.verify[0].command).toBe("npm test");
});

test("with no check, the form asks: add one, or say the agent's work may be committed without checks", async () => {
  const healer = new FakeHealer().install();
  const { user } = renderApp("#/projects");
  await user.click(await screen.findByTestId("new-project"));
  await user.click(await screen.findByTestId("pick-folder"));
  await screen.findByTestId("verify-command-0");
  expect(screen.queryByTestId("no-checks")).toBeNull();

  await user.click(screen.getByRole("button", { name: "Remove check test" }));
  const question = await screen.findByTestId("no-checks");
  expect(question).toHaveTextContent("This project has no check yet");
  expect(await within(question).findByTestId("field-error-verify")).toHaveTextContent("commit its work without checks");
  await waitFor(() => expect(screen.getByTestId("save-project")).toBeDisabled());

  expect(screen.getByTestId("start-reopened")).toBeChecked();
  await user.click(within(question).getByTestId("commit-without-checks"));
  await waitFor(() => expect(screen.queryByTestId("field-error-verify")).toBeNull());
  await waitFor(() => expect(screen.getByTestId("save-project")).toBeEnabled());
  await user.click(screen.getByTestId("save-project"));
  await screen.findByTestId("page-project");
  const added = healer.callsTo("add_project")[0].args.input as {
    settings: { verify: unknown[]; commit_without_checks: boolean; start_reopened_tasks: boolean };
  };
  expect(added.settings.verify).toEqual([]);
  expect(added.settings.commit_without_checks).toBe(true);
  // A task Healer reopens starts again by itself unless the person says otherwise.
  expect(added.settings.start_reopened_tasks).toBe(true);
});

test("a folder that is not a repository offers to make it one", async () => {
  const healer = new FakeHealer().install();
  healer.projects.picked = "/home/ada/notes";
  healer.projects.folderState = { kind: "not_a_repository" };
  const { user } = renderApp("#/projects/new");
  await user.click(await screen.findByTestId("pick-folder"));
  const state = await screen.findByTestId("folder-state");
  expect(state).toHaveTextContent("is not a git repository");
  expect(within(state).getByTestId("init-repo")).toHaveTextContent("Make it a git repository");
  expect(screen.queryByTestId("project-form")).toBeNull();
});

test("the board shows each column, the task list's problems by line, and the progress log without anything unsafe", async () => {
  const healer = healerWithProject();
  healer.projects.tasks = [
    task("t1", "Add dark mode", { priority: 1 }),
    task("t2", "Fix login", { status: "in_progress", note: "Healer's built-in agent is working on it" }),
    task("t3", "Old chore", { status: "closed", commit: "0123456789abcdef", closed_reason: "Done: commit 0123456, merged into main" }),
  ];
  healer.projects.problems = [{ line: 4, kind: "invalid_json", message: "Line 4: not valid JSON (EOF while parsing an object at line 1 column 30); the line is kept as it is until you fix it" }];
  healer.projects.progress = '# Progress\n\nDid **things**.\n\n<script>window.pwned = 1</script>\n\n<img src=x onerror="window.pwned = 2">\n';
  renderApp("#/projects/1");

  const board = await screen.findByTestId("board");
  expect(within(within(board).getByTestId("column-open")).getByTestId("task-card")).toHaveTextContent("Add dark mode");
  expect(within(board).getByTestId("column-open")).toHaveTextContent("Runs next");
  expect(within(board).getByTestId("column-in_progress")).toHaveTextContent("working on it");
  expect(within(board).getByTestId("column-closed")).toHaveTextContent("Committed 0123456");
  expect(screen.getByTestId("task-problems")).toHaveTextContent("Line 4: not valid JSON");

  const log = screen.getByTestId("progress-log");
  expect(log.querySelector("strong")).toHaveTextContent("things");
  expect(log.querySelector("script")).toBeNull();
  expect(log.querySelector("img")).toBeNull();
  expect((window as unknown as { pwned?: number }).pwned).toBeUndefined();
});

test("a running session streams its steps in plain words, and Stop stops it", async () => {
  const healer = healerWithProject();
  healer.projects.tasks = [task("t1", "Greet properly", { status: "in_progress" })];
  healer.projects.session(7, "t1", "running", [
    step("Worktree ready on a new branch healer/t1 from main's last commit (abc1234).", { source: "system" }),
    step("Your task: Greet properly", { source: "user" }),
    step("Let me read the greeting first."),
    step("", { kind: "tool_call", tool: "read_file", arguments: '{"path":"greet.py"}', call_id: "c1" }),
  ]);
  const { user } = renderApp("#/projects/1/tasks/t1");

  const steps = await screen.findByTestId("session-steps");
  expect(steps).toHaveTextContent("Read greet.py");
  expect(steps).toHaveTextContent("Working…");
  expect(steps).not.toHaveTextContent("{");

  // The engine stores the result and the next call: they arrive live.
  await act(async () => {
    await events.sessionStepEvent.emit({ session_id: 7, seq: 5, step: step("def greet(name): ...", { kind: "tool_result", tool: "read_file", call_id: "c1" }) });
    await events.sessionStepEvent.emit({
      session_id: 7, seq: 6,
      step: step("", { kind: "tool_call", tool: "Bash", arguments: '{"command":"pytest -q"}', call_id: "c2" }),
    });
  });
  await waitFor(() => expect(screen.getByTestId("session-steps")).toHaveTextContent("Ran a command"));
  expect(screen.getByTestId("session-steps")).toHaveTextContent("pytest -q");
  expect(screen.getByTestId("session-steps")).toHaveTextContent("def greet(name)");

  await user.click(screen.getByTestId("stop-session"));
  await waitFor(() => expect(healer.projects.stopped).toEqual([7]));
});

test("tool calls and command output are said in words", () => {
  const call = (tool: string, args: object) => callInWords(step("", { kind: "tool_call", tool, arguments: JSON.stringify(args) }));
  expect(call("edit_file", { path: "src/a.ts" }).title).toBe("Edited src/a.ts");
  expect(call("Edit", { file_path: "src/a.ts" }).title).toBe("Edited src/a.ts");
  expect(call("Grep", { pattern: "TODO" }).title).toBe("Searched for “TODO”");
  expect(call("exec_command", { cmd: "ls" })).toEqual({ title: "Ran a command", code: "ls" });
  // opencode's and Gemini CLI's tools, in the same words.
  expect(call("bash", { command: "make", description: "Build" })).toEqual({ title: "Ran a command", code: "make" });
  expect(call("edit", { filePath: "/w/greet.py" }).title).toBe("Edited /w/greet.py");
  expect(call("run_shell_command", { command: "ls" })).toEqual({ title: "Ran a command", code: "ls" });
  expect(call("replace", { file_path: "greet.py" }).title).toBe("Edited greet.py");
  expect(call("mystery", { depth: 2 })).toEqual({ title: "Used mystery", code: "depth: 2" });
  expect(callInWords(step("", { kind: "tool_call", tool: "read_file", arguments: "not json" })).title).toBe("Read a file");

  const out = commandOutput(
    "exit code 0 after 0.6 s · memory limited · writes confined to the worktree and its temp folder (Landlock)\n\nstdout:\n```text\nHello, Ada!\n```\n\nstderr: (empty)",
  );
  expect(out).toBe("Finished with exit code 0 after 0.6 s\n\nIt printed:\nHello, Ada!");
});

test("choosing opencode or Gemini CLI: only the providers that speak their API, and the form says which questions the agent cannot ask", async () => {
  const healer = new FakeHealer().install();
  healer.addProvider({ name: "openai", kind: "openai_compatible" });
  healer.addProvider({ name: "anthropic-work", kind: "anthropic" });
  healer.addProvider({ name: "google", kind: "gemini" });
  const { user } = renderApp("#/projects/new");
  await user.click(await screen.findByTestId("pick-folder"));
  await user.click(await screen.findByTestId("agent-opencode"));
  const fields = await screen.findByTestId("agent-fields");
  expect(within(fields).getByTestId("field-agent-program")).toHaveAttribute("placeholder", "/usr/local/bin/opencode");
  // opencode asks through its server: nothing to warn about.
  expect(screen.queryByTestId("agent-cannot-ask")).not.toBeInTheDocument();
  await user.click(within(fields).getByTestId("agent-healer-provider"));
  const select = within(fields).getByTestId("field-agent-provider");
  expect(within(select).getAllByRole("option").map((o) => o.textContent)).toEqual(["openai"]);
  await user.click(screen.getByTestId("preset-ask_every"));
  expect(screen.queryByTestId("agent-cannot-ask")).not.toBeInTheDocument();

  await user.click(screen.getByTestId("agent-gemini-cli"));
  const gemini = await screen.findByTestId("agent-fields");
  await user.click(within(gemini).getByTestId("agent-healer-provider"));
  expect(within(within(gemini).getByTestId("field-agent-provider")).getAllByRole("option").map((o) => o.textContent)).toEqual(["google"]);
  expect(screen.getByTestId("agent-cannot-ask")).toHaveTextContent("every command it wants to run is refused without asking");
  await user.click(screen.getByTestId("preset-ask_risky"));
  expect(screen.getByTestId("agent-cannot-ask")).toHaveTextContent(
    "Gemini CLI cannot stop to ask you in a session Healer runs, so your choice here decides for it: it edits files in the task's folder and runs the project's checks and the commands listed below",
  );
  await user.click(screen.getByTestId("preset-never_ask"));
  expect(screen.queryByTestId("agent-cannot-ask")).not.toBeInTheDocument();
});

test("choosing Claude Code: its own sign-in or a provider of Healer's that speaks its API, its tools, and the project says plainly who works on it", async () => {
  const healer = new FakeHealer().install();
  healer.addProvider({ name: "openai", kind: "openai_compatible" });
  healer.addProvider({ name: "anthropic-work", kind: "anthropic" });
  const { user } = renderApp("#/projects/new");
  await user.click(await screen.findByTestId("pick-folder"));
  await user.click(await screen.findByTestId("agent-claude-code"));

  const fields = await screen.findByTestId("agent-fields");
  expect(within(fields).getByTestId("agent-own-login")).toBeChecked();
  expect(within(fields).getByTestId("agent-model-hint")).toHaveTextContent("Claude Code uses the account or key it is signed in with on this computer.");
  expect(within(fields).getByTestId("field-agent-program")).toHaveAttribute("placeholder", "/usr/bin/claude");
  // While it asks first (the default), each tool call is let through by Healer, not by a list.
  expect(screen.getByTestId("preset-ask_risky")).toBeChecked();
  expect(within(fields).queryByTestId("field-allowed-tools")).not.toBeInTheDocument();
  await user.click(screen.getByTestId("preset-never_ask"));
  expect(screen.getByTestId("never-ask-warning")).toHaveTextContent("runs without you seeing it first");
  expect(within(fields).getByTestId("field-allowed-tools")).toHaveValue("Bash, Read, Edit, Write, Glob, Grep");

  // Only the provider that speaks Anthropic's API is offered.
  await user.click(within(fields).getByTestId("agent-healer-provider"));
  const select = within(fields).getByTestId("field-agent-provider");
  expect(within(select).getAllByRole("option").map((o) => o.textContent)).toEqual(["anthropic-work"]);
  expect(within(fields).getByTestId("agent-model-hint")).toHaveTextContent("gets a pass that works only for its session");
  // A session on Healer's provider has a spending cap, on by default, in money.
  expect(within(fields).getByTestId("field-cap-dollars")).toHaveValue("5.00");
  expect(within(fields).getByTestId("field-cap-tokens")).toHaveValue("5,000,000");
  expect(within(fields).getByTestId("spending-cap-hint")).toHaveTextContent("At the cap it stops the agent");
  await user.clear(within(fields).getByTestId("field-cap-dollars"));
  await user.type(within(fields).getByTestId("field-cap-dollars"), "$2.50");
  await user.type(within(fields).getByTestId("field-model"), "claude-sonnet-4-5");
  await user.clear(within(fields).getByTestId("field-allowed-tools"));
  await user.type(within(fields).getByTestId("field-allowed-tools"), "Bash(git diff, git log), Edit");

  await waitFor(() => expect(screen.getByTestId("save-project")).toBeEnabled());
  await user.click(screen.getByTestId("save-project"));
  await screen.findByTestId("page-project");
  const added = healer.callsTo("add_project")[0].args.input as { settings: Record<string, unknown> };
  expect(added.settings).toMatchObject({
    agent: "claude-code",
    agent_provider: "anthropic-work",
    model: "claude-sonnet-4-5",
    allowed_tools: ["Bash(git diff, git log)", "Edit"],
    agent_program: null,
    session_cap_cents: 250,
    session_cap_tokens: 5000000,
    approvals: { preset: "never_ask" },
  });
  expect(await screen.findByTestId("project-agent")).toHaveTextContent(
    "Claude Code works on the tasks, using the model provider \u201canthropic-work\u201d set up in Healer (model claude-sonnet-4-5).",
  );
});

test("a task shows how Healer kept its agent moving, in plain words", async () => {
  const healer = healerWithProject();
  healer.projects.tasks = [task("t1", "Run the check", { status: "in_progress" })];
  healer.projects.session(7, "t1", "running", [
    step("Your task: Run the check", { source: "user" }),
    step("Healer, which watches this session, says: Run the tests before editing greet.py again.", { source: "user" }),
  ]);
  const base = { project_id: 1, task_id: "t1", session_id: 7, at: "2026-11-25T10:00:00.000Z", rule: null, message: null, evidence: [], detail: "", tokens: 0, action: null, delivery: null };
  healer.projects.steering = [
    {
      ...base, id: 1, kind: "loop", rule: "repeated-error",
      message: "You ran `bash check.sh` 3 times and it failed each time; stop re-running it.",
      evidence: ["ran `bash check.sh` → error: config.ini missing"],
      detail: "The agent went in circles, so Healer wrote it what it saw (the message below). No model was asked.",
      delivery: { state: "delivered", via: "thread", delivered_at: "2026-11-25T10:00:02.000Z" },
    },
    { ...base, id: 2, kind: "delivery", message: "You ran `bash check.sh` 3 times …", detail: "Delivered as the next message of the agent's conversation" },
    { ...base, id: 3, kind: "zombie", message: "The agent produced nothing new for 30 minutes", detail: "The session was ended and the task is open again." },
    { ...base, id: 6, kind: "heartbeat", detail: "The agent showed signs of life." },
    { ...base, id: 7, kind: "heartbeat", detail: "The agent showed signs of life again." },
    {
      ...base, id: 4, kind: "judgement", action: "steer", tokens: 812,
      message: "Run the tests before editing greet.py again.",
      detail: "The steering model saw the agent drifting and wrote it what to do (the message below).",
      delivery: { state: "delivered", via: "hook", delivered_at: "2026-11-25T10:05:00.000Z" },
    },
    {
      ...base, id: 5, kind: "judgement", action: "steer", tokens: 640,
      message: "Commit what passes before starting the next file.",
      detail: "The steering model saw the agent drifting and wrote it what to do (the message below).",
      delivery: { state: "waiting", via: null, delivered_at: null },
    },
  ];
  renderApp("#/projects/1/tasks/t1");

  const timeline = await screen.findByTestId("steering-timeline");
  expect(timeline).toHaveTextContent("The same step failing again and again");
  // Quoted commands read as code, never as raw backticks.
  expect(timeline).toHaveTextContent("You ran bash check.sh 3 times");
  expect(timeline.textContent).not.toContain("`");
  expect(within(timeline).getAllByText("bash check.sh", { selector: "code" }).length).toBeGreaterThan(0);
  expect(timeline).toHaveTextContent("error: config.ini missing");
  expect(timeline).toHaveTextContent("Told the agent");
  expect(timeline).toHaveTextContent("Ended as stuck");
  // Its agent works on it now: only the latest "Still working" shows.
  expect(within(timeline).getAllByText("Still working")).toHaveLength(1);
  expect(timeline).toHaveTextContent("signs of life again");
  expect(timeline).not.toHaveTextContent("signs of life.");
  expect(timeline).not.toHaveTextContent("repeated-error");
  expect(timeline).not.toHaveTextContent("zombie");
  expect(timeline).toHaveTextContent("Progress checked: told the agent what to change");
  expect(timeline).toHaveTextContent("Run the tests before editing greet.py again.");
  // A message says where it is: delivered, and how; or still on its way.
  const deliveries = within(timeline).getAllByTestId("steering-delivery");
  expect(deliveries.map((d) => d.dataset.state)).toEqual(["delivered", "delivered", "waiting"]);
  expect(deliveries[0]).toHaveTextContent("Delivered to the agent as the next message of its conversation");
  expect(deliveries[1]).toHaveTextContent("Delivered to the agent before its next step");
  expect(deliveries[2]).toHaveTextContent("Waiting to reach the agent at its next chance.");
  expect(timeline).toHaveTextContent("Progress checked: a message for the agent is on its way");
  expect(timeline).not.toHaveTextContent("judgement");
  // In the session, a delivered message reads as Healer's, not as the task's prompt.
  const steered = (await screen.findAllByTestId("session-step")).find((s) => s.dataset.kind === "steered");
  expect(steered).toHaveTextContent("Healer told the agent");
  expect(steered).toHaveTextContent("Run the tests before editing greet.py again.");
  expect(steered).not.toHaveTextContent("which watches this session");
});

test("a task shows what Healer did when it failed, in words, and the put-aside work can be brought back", async () => {
  const healer = healerWithProject();
  healer.projects.tasks = [task("t1", "Greet properly", { status: "blocked" }), task("t2", "Follow up: Greet properly")];
  healer.projects.session(7, "t1", "failed", [step("Your task: Greet properly", { source: "user" })]);
  healer.projects.snapshots = [
    {
      id: 3, project_id: 1, task_id: "t1", seq: 1, ref_name: "refs/healer/snapshots/t1/1", commit_id: "9f8e7d6c5b4a",
      worktree: "/data/worktrees/1/slot-1", reason: "before a rewind", created_at: new Date().toISOString(), restored_at: null,
    },
  ];
  healer.projects.heals = [
    {
      id: 5, project_id: 1, task_id: "t1", session_id: 7, heal_id: 2, scenario: "VerificationFailed", status: "contained",
      reason: "rewound; blocked", snapshot_id: 3, followup_task: "t2", signature: "abc", started_at: new Date().toISOString(), ended_at: new Date().toISOString(), waiting_checkpoint: null,
      spells: [
        { spell: "rewind_uncommitted_changes", success: true, summary: "The worktree is back at its last commit", started_at: "", finished_at: "" },
        { spell: "mark_task_blocked_with_followup", success: true, summary: "The task is blocked with the reason", started_at: "", finished_at: "" },
      ],
    },
  ];
  renderApp("#/projects/1/tasks/t1");

  const card = await screen.findByTestId("healer-card");
  expect(card).toHaveTextContent("The agent's change did not pass the checks");
  expect(card).toHaveTextContent("Put the files back as they were at the last save point");
  expect(card).toHaveTextContent("Paused the task and wrote a follow-up task");
  expect(card).toHaveTextContent("Made safe");
  expect(card).not.toHaveTextContent("rewind_uncommitted_changes");
  expect(card).not.toHaveTextContent("refs/healer");
  expect(within(card).getByTestId("followup-link")).toHaveAttribute("href", "#/projects/1/tasks/t2");

  within(card).getByTestId("restore-snapshot").click();
  await within(card).findByTestId("restore-done");
  expect(healer.callsTo("restore_snapshot")[0]?.args).toMatchObject({ id: 3 });
});

test("while Healer waits for the person's answer, the card says so, links to the question, and offers nothing to bring back", async () => {
  const healer = healerWithProject();
  healer.projects.tasks = [task("t1", "Greet properly")];
  healer.projects.session(7, "t1", "failed", [step("Your task: Greet properly", { source: "user" })]);
  healer.projects.snapshots = [
    {
      id: 3, project_id: 1, task_id: "t1", seq: 1, ref_name: "refs/healer/snapshots/t1/1", commit_id: "9f8e7d6c5b4a",
      worktree: "/data/worktrees/1/slot-1", reason: "before a rewind", created_at: new Date().toISOString(), restored_at: null,
    },
  ];
  healer.projects.heals = [
    {
      id: 5, project_id: 1, task_id: "t1", session_id: 7, heal_id: 2, scenario: "VerificationFailed", status: "waiting",
      reason: "Healer asked you before undoing anything", snapshot_id: 3, followup_task: null, signature: "abc",
      started_at: new Date().toISOString(), ended_at: null, waiting_checkpoint: 4,
      spells: [{ spell: "verify_again", success: false, summary: "Ran the checks again: test failed", started_at: "", finished_at: "" }],
    },
  ];
  renderApp("#/projects/1/tasks/t1");

  const card = await screen.findByTestId("healer-card");
  expect(card).toHaveTextContent("Waiting for your answer");
  expect(card).toHaveTextContent("Ran the failing check again");
  expect(card).toHaveTextContent("failed again");
  expect(card).not.toHaveTextContent("verify_again");
  expect(card).toHaveTextContent("nothing has been undone yet");
  expect(card).not.toHaveTextContent("put aside");
  expect(within(card).queryByTestId("restore-snapshot")).toBeNull();
  expect(within(card).getByTestId("healer-question-link")).toHaveAttribute("href", "#/checkpoints");
});

test("a project's settings say in words when Healer steps in, and save the choices", async () => {
  const healer = healerWithProject();
  renderApp("#/projects/1/settings");
  const form = await screen.findByTestId("healer-settings");
  expect(form).toHaveTextContent("When a task fails");
  expect(form).toHaveTextContent("Ask me first");
  expect(form).not.toHaveTextContent("rewind_uncommitted_changes");
  // What Healer may do is said before it happened, not as a report.
  expect(form).toHaveTextContent("Pause a task that keeps failing and write a follow-up task");
  expect(form).not.toHaveTextContent("Paused the task");
  expect(form).toHaveTextContent("Times Healer may try to repair one task");
  expect(form).not.toHaveTextContent("one agent session");
  expect(within(form).getByTestId("healer-mode-conservative-radio")).toBeChecked();
  expect(within(form).getByTestId("healer-onStuckSubtask")).not.toBeChecked();
  within(form).getByTestId("healer-mode-aggressive").click();
  within(form).getByTestId("healer-may-rewind_to_last_green_commit").click();
  // One Save for the whole page: Healer's part is saved with the project's.
  expect(screen.getAllByRole("button", { name: /save/i })).toHaveLength(1);
  expect(within(form).queryByRole("button")).toBeNull();
  (await screen.findByTestId("save-project")).click();
  await waitFor(() => expect(healer.callsTo("set_healer_config")).toHaveLength(1));
  await waitFor(() => expect(healer.callsTo("update_project")).toHaveLength(1));
  expect(healer.callsTo("set_healer_config")[0]?.args).toMatchObject({
    projectId: 1,
    config: { mode: "aggressive", forbiddenSpells: ["rewind_to_last_green_commit"], maxInvocationsPerSubtask: 1 },
  });
});

test("leaving a changed project form, a new task or a task being edited asks first; Run waits for the edit", async () => {
  const healer = healerWithProject();
  healer.projects.tasks = [task("t1", "Add dark mode")];
  const { user } = renderApp("#/projects/1/settings");

  // The project's settings, one field changed.
  const name = await screen.findByTestId("field-name");
  const before = (name as HTMLInputElement).value;
  await user.type(name, " two");
  await user.click(screen.getByTestId("nav-activity"));
  expect(await screen.findByRole("alertdialog")).toHaveTextContent("Leave without saving your changes?");
  expect(screen.getByRole("alertdialog")).toHaveTextContent("Your changes to the project's settings are not saved yet.");
  expect(window.location.hash).toBe("#/projects/1/settings");
  await user.click(screen.getByTestId("leave-stay"));
  expect(screen.getByTestId("field-name")).toHaveValue(`${before} two`);
  await user.click(screen.getByTestId("nav-activity"));
  await user.click(await screen.findByTestId("leave-discard"));
  await screen.findByTestId("page-activity");

  // A new task typed on the board.
  window.location.hash = "#/projects/1";
  await user.click(await screen.findByTestId("add-task"));
  // Greyed out, with why beside it.
  expect(screen.getByTestId("task-save")).toBeDisabled();
  expect(screen.getByTestId("task-save-why")).toHaveTextContent("Give the task a title to add it.");
  await user.type(await screen.findByTestId("task-title"), "Add a README");
  expect(screen.queryByTestId("task-save-why")).not.toBeInTheDocument();
  await user.click(screen.getByTestId("nav-workflows"));
  expect(await screen.findByRole("alertdialog")).toHaveTextContent("The new task's details are not saved yet.");
  await user.click(screen.getByTestId("leave-stay"));
  expect(screen.getByTestId("task-title")).toHaveValue("Add a README");
  await user.click(screen.getByRole("button", { name: "Cancel" }));

  // A task being edited: Run waits until the edit is saved or cancelled, and leaving asks.
  window.location.hash = "#/projects/1/tasks/t1";
  await user.click(await screen.findByTestId("edit-task"));
  await user.type(await screen.findByTestId("task-description"), "Use the system setting.");
  expect(screen.getByTestId("run-task")).toBeDisabled();
  expect(screen.getByTestId("run-task")).toHaveAttribute("title", "Save or cancel your changes to the task first");
  await user.click(screen.getByTestId("nav-activity"));
  expect(await screen.findByRole("alertdialog")).toHaveTextContent("Your changes to the task are not saved yet.");
  await user.click(screen.getByTestId("leave-discard"));
  await screen.findByTestId("page-activity");
});

test("Ctrl+K finds projects and tasks, Ctrl+N on a board adds a task, and a project can be removed after a question", async () => {
  const healer = healerWithProject();
  healer.projects.tasks = [task("t1", "Add dark mode"), task("t2", "Fix login")];
  const { user } = renderApp("#/workflows");
  await screen.findByTestId("page-workflows");

  await user.keyboard("{Control>}k{/Control}");
  await user.type(await screen.findByTestId("quick-jump-input"), "login");
  await waitFor(() => expect(screen.getAllByTestId("quick-jump-item").map((i) => i.textContent)).toEqual([expect.stringContaining("Fix login")]));
  await user.keyboard("{Enter}");
  await waitFor(() => expect(window.location.hash).toBe("#/projects/1/tasks/t2"));
  await user.keyboard("{Control>}k{/Control}");
  const name = healer.projects.projects[0]?.name ?? "";
  await user.type(await screen.findByTestId("quick-jump-input"), name);
  await waitFor(() => expect(screen.getAllByTestId("quick-jump-item").map((i) => i.textContent)).toContain(`Project \u201c${name}\u201d`));
  await user.keyboard("{Escape}");

  window.location.hash = "#/projects/1";
  await screen.findByTestId("board");
  await user.keyboard("{Control>}n{/Control}");
  expect(await screen.findByTestId("task-form")).toBeInTheDocument();
  expect(window.location.hash).toBe("#/projects/1");
  await user.click(screen.getByRole("button", { name: "Cancel" }));

  window.location.hash = "#/projects/1/settings";
  await user.click(await screen.findByTestId("remove-project"));
  const dialog = await screen.findByRole("alertdialog");
  expect(dialog).toHaveTextContent(`Remove \u201c${name}\u201d from Healer?`);
  expect(dialog).toHaveTextContent("The repository, its files and its branches are not touched");
  await user.click(screen.getByTestId("remove-project-confirm"));
  await waitFor(() => expect(healer.callsTo("remove_project")).toHaveLength(1));
  await waitFor(() => expect(window.location.hash).toBe("#/projects"));
});

test("the person writes a running agent a message: it is sent, shows as waiting on the timeline, and reads as theirs in the session", async () => {
  const healer = healerWithProject();
  healer.projects.tasks = [task("t1", "Greet properly", { status: "in_progress" })];
  healer.projects.session(7, "t1", "running", [
    step("Your task: Greet properly", { source: "user" }),
    step("The person you are working for writes (through Healer): Keep the old greeting for Ada.", { source: "user" }),
  ]);
  const { user } = renderApp("#/projects/1/tasks/t1");
  const steps = await screen.findByTestId("session-steps");
  const theirs = within(steps).getAllByTestId("session-step").find((s) => s.dataset.kind === "person");
  expect(theirs).toHaveTextContent("You told the agent");
  expect(theirs).toHaveTextContent("Keep the old greeting for Ada.");
  expect(theirs).not.toHaveTextContent("through Healer");

  await user.type(screen.getByTestId("say-text"), "Use the date helper in utils.py.");
  await user.click(screen.getByTestId("say-send"));
  expect(await screen.findByTestId("say-sent")).toHaveTextContent("It reaches the agent at its next chance");
  expect(healer.callsTo("say_to_session")[0]?.args).toEqual({ sessionId: 7, text: "Use the date helper in utils.py." });
  expect(screen.getByTestId("say-text")).toHaveValue("");
  const timeline = await screen.findByTestId("steering-timeline");
  await waitFor(() => expect(timeline).toHaveTextContent("You wrote the agent"));
  expect(within(timeline).getByTestId("steering-delivery")).toHaveTextContent("Waiting to reach the agent at its next chance.");
});

test("a folder path typed in the add form is looked at once the typing pauses, no Enter needed", async () => {
  new FakeHealer().install();
  const { user } = renderApp("#/projects/new");
  expect(await screen.findByTestId("page-add-project")).toHaveTextContent("Healer looks at it as soon as you stop typing");
  await user.type(screen.getByTestId("project-path"), FOLDER);
  const state = await screen.findByTestId("folder-state", {}, { timeout: 3000 });
  expect(state).toHaveAttribute("data-state", "ready");
});

test("a follow-up's failing output shows as code inside the card, its words as sentences", async () => {
  const healer = healerWithProject();
  healer.projects.tasks = [
    task("t2", "Follow up: Greet properly", {
      description:
        "Healer blocked \u201cGreet properly\u201d: the agent's change did not pass verification.\n\nWhat failed (its last lines):\n```\nAssertionError: Hey Ada\n" +
        "x".repeat(400) +
        "\n```\n\nSessions of this task, newest first:\n- \u201cGreet properly\u201d with Claude Code, started 28 Nov 2026 at 10:00 UTC: failed\n\n" +
        "For the agent that picks this up:\n- The blocked task is t1.\n- Its worktree: /data/worktrees/1/slot-1 (branch healer/t1).\n",
    }),
  ];
  const { user } = renderApp("#/projects/1/tasks/t2");
  const text = await screen.findByTestId("task-description-text");
  expect(text.querySelector("pre")).toHaveTextContent("AssertionError: Hey Ada");
  expect(text.querySelector("pre")).toHaveClass("task-description-code");
  expect(text.textContent).not.toContain("```");
  expect(text.querySelector("p")).toHaveTextContent("Healer blocked");
  // Ids and paths are for the agent: folded away until the person opens them.
  const forAgent = within(text).getByTestId("task-for-agent");
  expect(forAgent).not.toHaveAttribute("open");
  expect(within(forAgent).getByText("What the agent that picks this up is given")).toBeVisible();
  await user.click(within(forAgent).getByText("What the agent that picks this up is given"));
  expect(forAgent).toHaveAttribute("open");
  expect(forAgent).toHaveTextContent("/data/worktrees/1/slot-1");
});

test("a check row just added shows no problems until the person types in it or saves", async () => {
  healerWithProject();
  const { user } = renderApp("#/projects/1/settings");
  await screen.findByTestId("verify-command-0");
  await user.click(screen.getByRole("button", { name: /Add a check/ }));
  await screen.findByTestId("verify-command-1");
  // The engine's check runs (it finds the empty row); nothing is shown under the new row yet.
  await new Promise((r) => setTimeout(r, 800));
  expect(screen.queryByTestId("field-error-verify-1")).toBeNull();
  await user.click(screen.getByTestId("save-project"));
  expect(await screen.findByTestId("field-error-verify-1")).toBeInTheDocument();
});

test("a task's page opened for one session (from the Sessions page's history) shows that session", async () => {
  const healer = healerWithProject();
  healer.projects.tasks = [task("t1", "Greet properly")];
  // Each added one is listed first, as the engine lists the newest: the page shows it unless told otherwise.
  healer.projects.session(6, "t1", "failed", [step("The older attempt read greet.py first.")]);
  healer.projects.session(7, "t1", "finished", [step("The newer attempt edited greet.py.")]);
  renderApp("#/projects/1/tasks/t1/sessions/6");
  const steps = await screen.findByTestId("session-steps");
  await waitFor(() => expect(steps).toHaveTextContent("The older attempt read greet.py first."));
  expect(steps).not.toHaveTextContent("The newer attempt");
});

test("after Skip, Pause or a crash nothing was undone, and the card does not say it was", async () => {
  const healer = healerWithProject();
  healer.projects.tasks = [task("t1", "Greet properly")];
  healer.projects.session(7, "t1", "failed", [step("Your task: Greet properly", { source: "user" })]);
  healer.projects.snapshots = [
    {
      id: 3, project_id: 1, task_id: "t1", seq: 1, ref_name: "refs/healer/snapshots/t1/1", commit_id: "9f8e7d6c5b4a",
      worktree: "/data/worktrees/1/slot-1", reason: "kept", created_at: new Date().toISOString(), restored_at: null,
    },
  ];
  healer.projects.heals = [
    {
      id: 5, project_id: 1, task_id: "t1", session_id: 7, heal_id: 2, scenario: "VerificationFailed", status: "contained",
      reason: "You skipped it", snapshot_id: 3, followup_task: null, signature: "abc",
      started_at: new Date().toISOString(), ended_at: new Date().toISOString(), waiting_checkpoint: null,
      spells: [{ spell: "rewind_uncommitted_changes", success: false, summary: "You chose to skip it; the worktree was left as it is", started_at: "", finished_at: "" }],
    },
  ];
  renderApp("#/projects/1/tasks/t1");
  const card = await screen.findByTestId("healer-card");
  expect(within(card).getByTestId("healer-snapshot")).toHaveTextContent("Nothing was undone");
  expect(card).not.toHaveTextContent("before Healer undid it");
  expect(within(card).getByTestId("restore-snapshot")).not.toHaveTextContent("Bring the work back");
});

test("what the agent may do without asking: the safe preset by default, the commands listed, the wait, and answers taken back", async () => {
  const healer = healerWithProject();
  healer.projects.approvalRules.push(
    { id: 5, project_id: 1, task_id: null, rule: "npm install", created_at: "" },
    { id: 6, project_id: 1, task_id: "t2", rule: "write /etc/hosts", created_at: "" },
  );
  const { user } = renderApp("#/projects/1/settings");
  const presets = await screen.findByTestId("approval-presets");
  expect(within(presets).getByTestId("preset-ask_risky")).toBeChecked();
  expect(presets).toHaveTextContent("Ask before anything risky (recommended)");
  expect(presets).toHaveTextContent("Edits inside the task's working copy and the project's checks run freely.");
  expect(screen.queryByTestId("never-ask-warning")).not.toBeInTheDocument();
  expect(screen.getByTestId("field-ask-minutes")).toHaveValue("30");

  // What earlier answers allowed, in words, and taken back with a button.
  const rules = await screen.findAllByTestId("approval-rule");
  expect(rules.map((r) => r.textContent)).toEqual([
    "Run “npm install” in every taskTake back",
    "Change /etc/hosts in one taskTake back",
  ]);
  await user.click(within(rules[0]).getByTestId("approval-rule-remove"));
  await waitFor(() => expect(screen.getAllByTestId("approval-rule")).toHaveLength(1));
  expect(healer.callsTo("remove_approval_rule")[0]?.args).toMatchObject({ projectId: 1, ruleId: 5 });

  await user.type(screen.getByTestId("field-allowed-commands"), "make lint{Enter}python3 tools/gen.py");
  await user.clear(screen.getByTestId("field-ask-minutes"));
  await user.type(screen.getByTestId("field-ask-minutes"), "10");
  await user.click(screen.getByTestId("save-project"));
  await waitFor(() => expect(healer.callsTo("update_project")).toHaveLength(1));
  const saved = healer.callsTo("update_project")[0].args.input as { settings: Record<string, unknown> };
  expect(saved.settings.approvals).toEqual({ preset: "ask_risky", allowed: ["make lint", "python3 tools/gen.py"], time_limit_secs: 600 });
});

test("a session whose agent asked says it waits for you, what it asked, until when, and Answer it brings the question back", async () => {
  const healer = healerWithProject();
  healer.projects.tasks = [task("t1", "Install the helper", { status: "in_progress" })];
  const detail = healer.projects.session(7, "t1", "running", [
    step("Waiting for your answer: Claude Code wants to run “npm install left-pad” — it asks because it installs packages (npm install).", { source: "system" }),
  ]);
  const now = Date.now();
  detail.questions = [
    {
      id: 3, session_id: 7, agent: "claude-code", request: { kind: "command", command: "npm install left-pad" },
      why: "it installs packages (npm install)", rule: "npm install", status: "waiting", scope: null, reason: null,
      created_at: new Date(now - 60_000).toISOString(), deadline_at: new Date(now + 29 * 60_000).toISOString(), answered_at: null,
    },
  ];
  renderApp("#/projects/1/tasks/t1");
  const waiting = await screen.findByTestId("session-waiting");
  expect(waiting).toHaveTextContent("Waiting for you. Claude Code asked before it goes on: npm install left-pad");
  expect(waiting).toHaveTextContent(/If nobody answers by \d\d:\d\d \(in 29 minutes\), it is denied — never allowed\./);
  expect(within(waiting).getByTestId("session-answer")).toHaveTextContent("Answer it");
  expect(waiting).not.toHaveTextContent("claude-code");
});

test("a project's tasks move to the cluster's workers from its settings, refused with a sentence without a connection", async () => {
  const healer = healerWithProject();
  const { user } = renderApp("#/projects/1/settings");
  await user.click(await screen.findByTestId("project-runs-on-cluster"));
  expect(await screen.findByTestId("field-error-runs-on")).toHaveTextContent("this Healer is not connected to one");
  expect(screen.getByTestId("save-project")).toBeDisabled();
  expect(healer.projects.projects[0].settings.runs_on).toBeUndefined();
  // Connected: the same choice is saved.
  healer.cluster.settings = { address: "127.0.0.1:7233", namespace: "default", queue: "healer", tls: false, api_key_env: null };
  await user.clear(screen.getByTestId("field-name"));
  await user.type(screen.getByTestId("field-name"), "greeter on workers");
  await waitFor(() => expect(screen.queryByTestId("field-error-runs-on")).toBeNull());
  await waitFor(() => expect(screen.getByTestId("save-project")).toBeEnabled());
  await user.click(screen.getByTestId("save-project"));
  await waitFor(() => expect(healer.projects.projects[0].settings.runs_on).toEqual({ kind: "cluster", queue: "" }));
});
