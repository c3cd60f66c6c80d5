// The fake engine's model tasks: auto-fixes (maintainer threads) and each workflow's chat with
// the planner, answering the same commands and sending the same events as the engine.
import {
  events,
  type AutoFix,
  type AutoFixDetail,
  type AutoFixStatus,
  type Event,
  type EventRecord,
  type PlannerChat,
  type Task,
  type TaskStatus,
  type ThreadMessage,
  type Version,
} from "../bindings";
import type { FakeWorkflow } from "./fakeHealer";
import { answer, toolStep, type StepSpec } from "./fakeThreads";

/** What the fake tasks need of the fake engine. */
export type Engine = {
  kept(workflowId: number): FakeWorkflow;
  happen(event: Event): Promise<EventRecord>;
  addVersion(workflowId: number, code: string, comment: string, version: Version, author: { kind: "planner" }): unknown;
};

/** One turn of the planner: its answer, and the tools it used on the way. */
export type PlannerTurn = StepSpec[];

const PLANNER_NO_MODEL = "no model is configured for any tier: add a provider in Settings → Models";

export class FakeTasks {
  tasks = new Map<number, { task: Task; messages: ThreadMessage[] }>();
  autofixes: (AutoFix & { failed_code: string | null; fixed_code: string | null })[] = [];
  /** How the planner answers a message; `null`: no model is configured, so it cannot. */
  planner: ((message: string) => PlannerTurn) | null = (message) => [
    answer(`I read your message (“${message}”). Tell me more about what should change.`),
  ];
  /** Makes the planner's turn wait until resolved, to see the chat while it thinks. */
  plannerGate: Promise<void> | null = null;
  private busy = new Set<number>();
  private nextTask = 40;
  private nextMessage = 1;
  private nextItem = 1;

  constructor(private engine: Engine) {}

  startTask(kind: Task["kind"], title: string, workflowId: number, status: TaskStatus = "running"): Task {
    const task: Task = {
      id: this.nextTask++, kind, title, workflow_id: workflowId, status, summary: "",
      created_at: new Date().toISOString(), finished_at: null,
    };
    this.tasks.set(task.id, { task, messages: [] });
    return task;
  }

  /** Stores a step of task `taskId`'s thread, as if before the window opened. */
  store(taskId: number, spec: StepSpec): ThreadMessage {
    const kept = this.tasks.get(taskId)!;
    const message: ThreadMessage = {
      id: this.nextMessage++, task_id: taskId, at: new Date().toISOString(), role: spec.role, content: spec.content ?? "",
      tool_calls: spec.tool_calls ?? [], tool_call_id: spec.tool_call_id ?? null, tool_name: spec.tool_name ?? null,
      is_error: spec.is_error ?? false, provider: spec.role === "assistant" ? "openrouter" : null,
      model: spec.role === "assistant" ? "small-coder" : null, usage: spec.usage ?? null,
    };
    kept.messages.push(message);
    return message;
  }

  /** Stores a step and says so, as the agent loop does. */
  async add(taskId: number, spec: StepSpec): Promise<ThreadMessage> {
    const m = this.store(taskId, spec);
    const summary = m.role === "tool" ? `${m.tool_name} returned` : m.tool_calls.length ? "called a tool" : "answered";
    await this.engine.happen({ kind: "task_message_added", task_id: taskId, message_id: m.id, role: m.role, summary });
    return m;
  }

  /** Model text of task `taskId`'s next step, as it streams. */
  async stream(taskId: number, text: string): Promise<void> {
    await events.threadTextEvent.emit({ task_id: taskId, text });
  }

  /** An auto-fix with its thread, stored as if it happened before the window opened. */
  addAutofix(
    workflowId: number,
    fields: Partial<AutoFix> & { status: AutoFixStatus; thread?: StepSpec[]; failed_code?: string | null; fixed_code?: string | null },
  ): AutoFix {
    const { workflow } = this.engine.kept(workflowId);
    const { thread = [], failed_code = null, fixed_code = null, ...rest } = fields;
    const task = this.startTask("maintainer", `Auto-fix: ${workflow.title}`, workflowId, fields.status === "working" ? "running" : "finished");
    for (const step of thread) this.store(task.id, step);
    const run = this.engine.kept(workflowId).runs.find((r) => r.run.id === rest.run_id);
    const fix: AutoFix = {
      task_id: task.id, workflow_id: workflowId, title: task.title, run_id: null, run_number: run?.run.number ?? null,
      from_version: { major: 1, minor: 0 },
      to_version: null, fix_comment: null, summary: "", tokens: 0, created_at: task.created_at, finished_at: null, rerun: null, ...rest,
    };
    this.autofixes.push({ ...fix, failed_code, fixed_code });
    return fix;
  }

  /** A logic failure puts the workflow in maintenance, as the Maintain remedy does. */
  async startMaintenance(workflowId: number, runId: number): Promise<AutoFix> {
    const kept = this.engine.kept(workflowId);
    kept.workflow.healing = true;
    const fix = this.addAutofix(workflowId, { status: "working", run_id: runId });
    await this.engine.happen({ kind: "maintenance_started", workflow_id: workflowId, task_id: fix.task_id, run_id: runId, title: fix.title });
    return fix;
  }

  async finishMaintenance(taskId: number, status: AutoFixStatus, fields: Partial<AutoFix> = {}): Promise<void> {
    const fix = this.autofixes.find((f) => f.task_id === taskId)!;
    Object.assign(fix, { status, finished_at: new Date().toISOString(), ...fields });
    this.engine.kept(fix.workflow_id!).workflow.healing = false;
    await this.engine.happen({ kind: "maintenance_finished", workflow_id: fix.workflow_id!, task_id: taskId, status, summary: fix.summary });
  }

  private chatTask(workflowId: number): Task | undefined {
    return [...this.tasks.values()].find((t) => t.task.kind === "planner" && t.task.workflow_id === workflowId)?.task;
  }

  /** What the automatic repair said when it gave up, per workflow, until the person answers. */
  maintainerQuestions = new Map<number, string>();

  chat(workflowId: number): PlannerChat {
    this.engine.kept(workflowId);
    const task = this.chatTask(workflowId);
    const messages = task ? this.tasks.get(task.id)!.messages.filter((m) => m.role !== "system") : [];
    // Asked before any of the chat's messages: answered once the person wrote.
    const asked = this.maintainerQuestions.get(workflowId) ?? null;
    const answered = asked !== null && messages.some((m) => m.role === "user");
    return {
      workflow_id: workflowId, task_id: task?.id ?? null, messages, busy: this.busy.has(workflowId), question: openQuestion(messages),
      maintainer_question: answered ? null : asked,
      answered_question: answered && asked !== null ? { text: asked, asked_at: "" } : null,
      last_error: task?.status === "failed" ? task.summary : null,
    };
  }

  private send(workflowId: number, message: string): number {
    const text = message.trim();
    if (!text) throw { code: "invalid_input", message: "write a message first" };
    const { workflow } = this.engine.kept(workflowId);
    const task = this.chatTask(workflowId) ?? this.startTask("planner", `Chat: ${workflow.title}`, workflowId);
    this.busy.add(workflowId);
    // The turn runs in the background; a test that ended meanwhile has nothing left to tell.
    void this.turn(workflowId, task.id, text).catch(() => {});
    return this.nextItem++;
  }

  /** One planner turn, as planner::run_turn and the agent loop run it. */
  private async turn(workflowId: number, taskId: number, message: string): Promise<void> {
    await (this.plannerGate ?? new Promise((resolve) => setTimeout(resolve, 10)));
    const done = async (status: TaskStatus, summary: string, question: string | null, reply: string) => {
      this.busy.delete(workflowId);
      await this.engine.happen({ kind: "task_finished", task_id: taskId, status, summary });
      await this.engine.happen({ kind: "planner_replied", workflow_id: workflowId, task_id: taskId, question, summary: reply });
    };
    if (!this.planner) {
      // The engine fails before it stores anything: the message is not kept.
      await done("failed", PLANNER_NO_MODEL, null, `The planner could not answer: ${PLANNER_NO_MODEL}`);
      return;
    }
    await this.add(taskId, { role: "user", content: message });
    let last = "";
    for (const step of this.planner(message)) {
      if (step.role === "assistant" && step.content) await this.stream(taskId, step.content);
      const stored = await this.add(taskId, step);
      const save = stored.tool_calls.find((c) => c.name === "save");
      if (save) await this.saveVersion(workflowId, JSON.parse(save.arguments) as { code: string; comment: string });
      if (stored.role === "assistant" && stored.content) last = stored.content;
    }
    const messages = this.tasks.get(taskId)!.messages;
    await done("finished", last, openQuestion(messages), last);
  }

  private async saveVersion(workflowId: number, { code, comment }: { code: string; comment: string }) {
    const kept = this.engine.kept(workflowId);
    const version = { major: Math.max(...kept.versions.map((v) => v.version.major)) + 1, minor: 0 };
    this.engine.addVersion(workflowId, code, comment, version, { kind: "planner" });
    await this.engine.happen({
      kind: "version_saved", workflow_id: workflowId, title: kept.workflow.title, version, author: { kind: "planner" }, comment,
    });
  }

  private detail(taskId: number): AutoFixDetail {
    const found = this.autofixes.find((f) => f.task_id === taskId);
    const kept = this.tasks.get(taskId);
    if (!found || !kept) throw { code: "not_found", message: `there is no auto-fix task ${taskId}` };
    const { failed_code, fixed_code, ...fix } = found;
    const run = fix.workflow_id === null ? undefined : this.engine.kept(fix.workflow_id).runs.find((r) => r.run.id === fix.run_id);
    const failed_summary = run?.run.summary.trim() || null;
    return { fix, thread: { task: kept.task, messages: kept.messages }, failed_code, fixed_code, failed_summary };
  }

  /** Answers `cmd` if it is one of the task commands; `undefined` otherwise. */
  handle(cmd: string, args: Record<string, unknown>): (() => unknown) | undefined {
    switch (cmd) {
      case "list_autofixes":
        return () => {
          this.engine.kept(args.workflowId as number);
          return this.autofixes
            .filter((f) => f.workflow_id === args.workflowId)
            .map((f) => this.detail(f.task_id).fix)
            .reverse();
        };
      case "get_autofix":
        return () => this.detail(args.taskId as number);
      case "get_planner_chat":
        return () => this.chat(args.workflowId as number);
      case "send_planner_message":
        return () => this.send(args.workflowId as number, args.message as string);
      case "retry_autofix":
        return () => {
          const workflow = this.engine.kept(args.workflowId as number).workflow;
          const at = new Date().toISOString();
          return {
            id: 1, source: { type: "script_run", workflow_id: workflow.id, run_id: 1 }, scenario: "script-run",
            class: "logic", signature: "0123456789abcdef", summary: "maintain: auto-fix task 9 is repairing it",
            outcome: "contained", interrupted: false, remedies: [], started_at: at, finished_at: at,
            task_id: 9, resolved_by: null, resolved_run_id: null,
          };
        };
      default:
        return undefined;
    }
  }
}

/** As planner::open_question: the last `ask` with no message from the person after it. */
function openQuestion(messages: ThreadMessage[]): string | null {
  for (const m of [...messages].reverse()) {
    if (m.role === "user") return null;
    const ask = [...m.tool_calls].reverse().find((c) => c.name === "ask");
    if (ask) return (JSON.parse(ask.arguments) as { question: string }).question;
  }
  return null;
}

/** A planner step: it saves a new major version with `comment`. */
export function plannerSave(code: string, comment: string, version: string): StepSpec[] {
  return toolStep("save", { code, comment, summary: "Totals last week's orders" }, `saved as version ${version} and made the one that runs`);
}
