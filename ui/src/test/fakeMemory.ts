// The fake engine's healing memory and safety breakers (src/store/memory.rs, src/breakers): the
// error signatures with the fixes tried for them, the decisions log, and the scheduler's pause,
// answering the same commands and sending the same events as the engine.
import type {
  ErrorPayload,
  Event,
  EventRecord,
  LoggedDecision,
  Notification,
  Pattern,
  PatternDetail,
  PatternFix,
} from "../bindings";
import type { FakeWorkflow } from "./fakeHealer";

/** What the fake memory needs of the fake engine. */
export type Engine = {
  kept(workflowId: number): FakeWorkflow;
  happen(event: Event): Promise<EventRecord>;
  notification(title: string, body: string, fields?: Partial<Notification>): Notification;
};

export type PatternSpec = Partial<Omit<Pattern, "fixes" | "successes">> & { signature: string; normalized: string };

export type FixSpec = Partial<Omit<PatternFix, "id" | "signature" | "workflow_title">> & { diff: string };

/** As the engine's `log_decision` stores it; `workflow_title` comes from the workflow. */
export type DecisionSpec = Partial<Omit<LoggedDecision, "id" | "workflow_title">> & { kind: string; summary: string };

export class FakeMemory {
  /** In the order they were first seen. */
  patterns: Pattern[] = [];
  /** Oldest first. */
  fixes: PatternFix[] = [];
  /** Oldest first, as logged. */
  decisions: LoggedDecision[] = [];
  /** Why scheduled runs are paused (the `scheduler.paused` setting); null: they are not. */
  schedulerPause: string | null = null;
  private nextFix = 1;
  private nextDecision = 1;

  constructor(private engine: Engine) {}

  /** A signature remembered as if before the window opened; its fix counts follow its fixes. */
  addPattern(spec: PatternSpec): Pattern {
    const at = new Date().toISOString();
    const pattern: Pattern = {
      error_type: null, first_seen: at, last_seen: at, count: 1, ...spec, fixes: 0, successes: 0, pending: 0,
    };
    this.patterns.push(pattern);
    return pattern;
  }

  /** A fix tried for `signature`, stored as if before the window opened. */
  addFix(signature: string, spec: FixSpec): PatternFix {
    this.pattern(signature);
    const workflowId = spec.workflow_id ?? null;
    const fix: PatternFix = {
      id: this.nextFix++, signature, workflow_id: workflowId,
      workflow_title: workflowId === null ? null : this.engine.kept(workflowId).workflow.title,
      task_id: null, description: "", code_hash: "9d4e1c2b7a3f6e05", result: "pending",
      created_at: new Date().toISOString(), settled_at: null, ...spec,
    };
    this.fixes.push(fix);
    return fix;
  }

  /** A decision logged as if before the window opened. */
  addDecision(spec: DecisionSpec): LoggedDecision {
    const workflowId = spec.workflow_id ?? null;
    const decision: LoggedDecision = {
      id: this.nextDecision++, workflow_id: workflowId,
      workflow_title: workflowId === null ? null : this.engine.kept(workflowId).workflow.title,
      detail: "", created_at: new Date().toISOString(), ...spec,
    };
    this.decisions.push(decision);
    return decision;
  }

  /** As breakers::tripped: the decision is logged and the bus told, its summary as the detail. */
  async trip(spec: DecisionSpec): Promise<LoggedDecision> {
    const decision = this.addDecision(spec);
    await this.engine.happen({
      kind: "breaker_tripped", breaker: decision.kind, workflow_id: decision.workflow_id, detail: decision.summary,
    });
    return decision;
  }

  /** As the survivors breaker: scheduled runs pause, the person is told, and the breaker trips. */
  async pauseScheduler(reason: string): Promise<void> {
    this.schedulerPause = reason;
    const notification = this.engine.notification(
      "Scheduled runs are paused",
      `${reason} Resume in Workflows when the scripts are fixed.`,
      { kind: "safety" },
    );
    await this.engine.happen({ kind: "notification_created", notification });
    await this.trip({ kind: "survivors", summary: reason });
  }

  /** As breakers::resume_scheduler. */
  async resumeScheduler(): Promise<null> {
    this.schedulerPause = null;
    await this.trip({ kind: "scheduler_resumed", summary: "Scheduled runs resumed" });
    return null;
  }

  private pattern(signature: string): Pattern {
    const found = this.patterns.find((p) => p.signature === signature.trim());
    if (!found) throw { code: "not_found", message: `error signature ${signature} not found` } satisfies ErrorPayload;
    return found;
  }

  /** As the store's PATTERN_COLUMNS: fix counts come from the fixes. */
  private counted(pattern: Pattern): Pattern {
    const fixes = this.fixes.filter((f) => f.signature === pattern.signature);
    return { ...pattern, fixes: fixes.length, successes: fixes.filter((f) => f.result === "success").length, pending: fixes.filter((f) => f.result === "pending").length };
  }

  private detail(signature: string): PatternDetail {
    const pattern = this.counted(this.pattern(signature));
    const fixes = this.fixes.filter((f) => f.signature === pattern.signature).sort((a, b) => b.id - a.id);
    return { pattern, fixes };
  }

  /** Answers `cmd` if it is one of the memory or breaker commands; `undefined` otherwise. */
  handle(cmd: string, args: Record<string, unknown>): (() => unknown) | undefined {
    switch (cmd) {
      case "list_patterns":
        return () =>
          this.patterns.map((p) => this.counted(p)).sort((a, b) => b.last_seen.localeCompare(a.last_seen));
      case "get_pattern":
        return () => this.detail(args.signature as string);
      case "list_decisions":
        return () => [...this.decisions].sort((a, b) => b.id - a.id);
      case "get_scheduler_pause":
        return () => this.schedulerPause;
      case "resume_scheduler":
        return () => this.resumeScheduler();
      default:
        return undefined;
    }
  }
}
