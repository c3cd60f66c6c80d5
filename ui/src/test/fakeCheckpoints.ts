// The fake engine's checkpoints: the questions Healer stops to ask, listed and decided as the
// engine does (src/engine/checkpoints.rs), with the same events.
import type {
  Checkpoint,
  CheckpointList,
  CheckpointOption,
  CheckpointTrigger,
  ErrorPayload,
  Event,
  EventRecord,
  Run,
  RunDetail,
} from "../bindings";
import type { FakeWorkflow } from "./fakeHealer";
import { triggerTitle as triggerTitles } from "../checkpointText";

/** What the fake checkpoints need of the fake engine. */
export type Engine = {
  kept(workflowId: number): FakeWorkflow;
  happen(event: Event): Promise<EventRecord>;
  addRun(workflowId: number, run: Partial<Run> & { status: Run["status"] }): RunDetail;
};

/** As checkpoint::standard_options. */
export function standardOptions(): CheckpointOption[] {
  return [
    { label: "Proceed", description: "Run it again now", action: { kind: "proceed" }, recommended: false },
    {
      label: "Skip", description: "Leave this run as it is and go on with the next scheduled one",
      action: { kind: "skip" }, recommended: false,
    },
    { label: "Pause", description: "Stop running it until you resume it", action: { kind: "pause" }, recommended: false },
  ];
}

/** A checkpoint to store: `recommend` is the 1-based option Healer recommends (default 1). */
export type CheckpointSpec = Partial<Omit<Checkpoint, "id">> & { trigger: CheckpointTrigger; recommend?: number };

export class FakeCheckpoints {
  items: Checkpoint[] = [];
  /** Makes decide_checkpoint wait until resolved, to see what shows meanwhile. */
  decideGate: Promise<void> | null = null;
  private nextId = 1;

  constructor(private engine: Engine) {}

  /** A checkpoint stored as if Healer raised it before the window opened. */
  add(spec: CheckpointSpec): Checkpoint {
    const checkpoint = this.make(spec);
    this.items.push(checkpoint);
    return checkpoint;
  }

  /** A checkpoint as the engine would describe it, not stored (for an event about one). */
  make({ recommend = 1, ...fields }: CheckpointSpec): Checkpoint {
    const workflowId = fields.workflow_id ?? null;
    const options = (fields.options ?? standardOptions()).map((o, i) => ({ ...o, recommended: i === recommend - 1 }));
    const runId = fields.run_id ?? null;
    const run = workflowId === null || runId === null ? undefined : this.engine.kept(workflowId).runs.find((r) => r.run.id === runId);
    return {
      id: this.nextId++, workflow_id: workflowId, run_id: null, run_number: run?.run.number ?? null, task_id: null,
      title: fields.title ?? triggerTitles[fields.trigger ?? "hiccup"],
      workflow_title: workflowId === null ? null : this.engine.kept(workflowId).workflow.title,
      signature: null, context: "", recommendation: `${options[recommend - 1].label} — it is what was planned`,
      created_at: new Date().toISOString(), decision: null, affected: [], ...fields, project_task: fields.project_task ?? null, agent_request: fields.agent_request ?? null, options,
    };
  }

  /** Raises a checkpoint and says so, as Healer does when it stops to ask. */
  async raise(spec: CheckpointSpec): Promise<Checkpoint> {
    const checkpoint = this.add(spec);
    await this.engine.happen({ kind: "checkpoint_created", checkpoint });
    return checkpoint;
  }

  list(): CheckpointList {
    const pending = this.items.filter((c) => !c.decision).sort((a, b) => a.id - b.id);
    const decided = this.items
      .filter((c) => c.decision)
      .sort((a, b) => b.decision!.decided_at.localeCompare(a.decision!.decided_at) || b.id - a.id);
    return { pending, decided };
  }

  /** As Handle::decide_checkpoint: records the decision, does what the option says, and says so. */
  async decide(id: number, option: number, notes: string | null): Promise<Checkpoint> {
    await this.decideGate;
    const checkpoint = this.items.find((c) => c.id === id);
    if (!checkpoint) throw { code: "not_found", message: `checkpoint ${id} not found` } satisfies ErrorPayload;
    if (checkpoint.decision) throw { code: "invalid_input", message: `checkpoint ${id} was decided already` } satisfies ErrorPayload;
    const chosen = checkpoint.options[option - 1];
    if (!chosen) {
      throw {
        code: "invalid_input", message: `there is no option ${option}: choose 1 to ${checkpoint.options.length}`,
      } satisfies ErrorPayload;
    }
    if (chosen.action.kind === "install_package" && !notes?.trim()) {
      throw { code: "invalid_input", message: "give the name of the pip package that provides it" } satisfies ErrorPayload;
    }
    const ask = checkpoint.agent_request;
    if (ask) {
      const kind = chosen.action.kind;
      ask.status = kind === "deny" ? "denied" : "allowed";
      ask.scope = kind === "allow_once" ? "once" : kind === "allow_task" ? "task" : kind === "allow_always" ? "project" : null;
      ask.reason = kind === "deny" ? notes?.trim() || null : null;
      ask.answered_at = new Date().toISOString();
    }
    const outcome = ask
      ? ask.status === "denied"
        ? "You denied it: the agent is told and goes on"
        : "You allowed it: the agent goes ahead"
      : checkpoint.workflow_id === null
        ? `Healer goes on as you chose: ${chosen.label}`
        : await this.actOn(checkpoint, chosen, notes);
    checkpoint.decision = { option, notes: notes?.trim() || null, decided_at: new Date().toISOString(), outcome };
    await this.engine.happen({
      kind: "checkpoint_decided", checkpoint_id: id, trigger: checkpoint.trigger, workflow_id: checkpoint.workflow_id,
      run_id: checkpoint.run_id, choice: chosen.label, outcome,
    });
    return checkpoint;
  }

  private async actOn(checkpoint: Checkpoint, chosen: CheckpointOption, notes: string | null): Promise<string> {
    const kept = this.engine.kept(checkpoint.workflow_id!);
    const runAgain = () => {
      if (kept.runs.some((r) => r.run.status === "queued" || r.run.status === "running")) return "A run was open already";
      const run = this.engine.addRun(kept.workflow.id, {
        status: "queued", trigger: "checkpoint", started_at: null, finished_at: null, queued_at: new Date().toISOString(),
      });
      return `Run ${run.run.id} started`;
    };
    switch (chosen.action.kind) {
      case "proceed":
        return runAgain();
      case "skip": {
        const run = kept.runs.find((r) => r.run.id === checkpoint.run_id);
        if (run) run.run.skipped = true;
        if (kept.workflow.status === "needs_attention") kept.workflow.status = "active";
        const next =
          kept.workflow.status === "paused"
            ? "it stays paused until you resume it"
            : kept.workflow.schedule.kind === "manual"
              ? "it runs again when you run it"
              : "the next scheduled run goes ahead";
        return run ? `Run ${run.run.id} skipped; ${next}` : `Skipped; ${next}`;
      }
      case "pause":
        kept.workflow.status = "paused";
        await this.engine.happen({ kind: "workflow_changed", workflow_id: kept.workflow.id, title: kept.workflow.title, what: "paused" });
        return "Paused until you resume it";
      case "allow_tokens":
        return `Allowed ${chosen.action.tokens} more tokens today. ${runAgain()}`;
      case "install_package":
        return `Healer installed ${notes?.trim() ?? "the package"} 1.0.0 as version 1.1; it runs again now`;
      case "allow_once":
      case "allow_task":
      case "allow_always":
      case "deny":
        return "Nothing was done";
    }
  }

  /** Answers `cmd` if it is one of the checkpoint commands; `undefined` otherwise. */
  handle(cmd: string, args: Record<string, unknown>): (() => unknown) | undefined {
    switch (cmd) {
      case "list_checkpoints":
        return () => this.list();
      case "decide_checkpoint":
        return () => this.decide(args.id as number, args.option as number, args.notes as string | null);
      default:
        return undefined;
    }
  }
}
