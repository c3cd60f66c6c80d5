// A stand-in for the Rust side, installed behind Tauri's own IPC mock so the generated bindings,
// the event plumbing and api.ts all run for real in tests.
import { mockIPC } from "@tauri-apps/api/mocks";
import {
  events,
  type AppInfo,
  type Attempt,
  type Budgets,
  type ConnectionTest,
  type ErrorCode,
  type ErrorPayload,
  type Event,
  type EventRecord,
  type FieldProblem,
  type HealRecord,
  type KeySource,
  type Notification,
  type LocalServerStatus,
  type OutputChunk,
  type Provider,
  type ProviderInput,
  type ProviderKind,
  type ProviderView,
  type Run,
  type RunDetail,
  type SaveOutcome,
  type Schedule,
  type SchedulePreview,
  type ScriptVersion,
  type LiveSession,
  type PastSession,
  type SteeringModelSetting,
  type SteeringModelView,
  type SteeringSettings,
  type Tier,
  type TierSetting,
  type TierUsage,
  type TierView,
  type UsageReport,
  type Version,
  type Workflow,
  type WorkflowDetail,
  type WorkflowInput,
  type WorkflowSummary,
} from "../bindings";
import { FakeCheckpoints } from "./fakeCheckpoints";
import { FakeDesktop } from "./fakeDesktop";
import { FakeDeps } from "./fakeDeps";
import { FakeMemory } from "./fakeMemory";
import { FakeProjects } from "./fakeProjects";
import { FakeCluster } from "./fakeCluster";
import { FakeSecrets } from "./fakeSecrets";
import { FakeTasks } from "./fakeTasks";

export type Call = { cmd: string; args: Record<string, unknown> };

export function minutesAgo(minutes: number): string {
  return new Date(Date.now() - minutes * 60_000).toISOString();
}

/** A workflow as the fake engine keeps it. */
export type FakeWorkflow = {
  workflow: Workflow;
  /** Oldest first. */
  versions: ScriptVersion[];
  /** Oldest first. */
  runs: RunDetail[];
  next_run_at: string | null;
};

const RETRY_DEFAULT = {
  initial_ms: 1000, coefficient: 2, max_interval_ms: 100_000, max_attempts: 3, jitter: true, retry_on: ["transient" as const],
};

/** As the engine words a schedule (only the shapes the tests use). */
export function describeSchedule(schedule: Schedule): string {
  switch (schedule.kind) {
    case "manual":
      return "Only when run by hand";
    case "interval": {
      const { seconds } = schedule;
      if (seconds % 3600 === 0) return seconds === 3600 ? "Every hour" : `Every ${seconds / 3600} hours`;
      if (seconds % 60 === 0) return seconds === 60 ? "Every minute" : `Every ${seconds / 60} minutes`;
      return `Every ${seconds} seconds`;
    }
    case "cron": {
      const daily = /^\d+ \d+ \* \* \*$/.test(schedule.expression);
      const [minute, hour, , , weekday] = schedule.expression.split(" ");
      const at = `${(hour ?? "").padStart(2, "0")}:${(minute ?? "").padStart(2, "0")}`;
      if (daily) return `Every day at ${at}`;
      if (weekday === "1") return `At ${at}, only on Monday`;
      if (weekday === "1-5") return `At ${at}, Monday through Friday`;
      return `Cron: ${schedule.expression}`;
    }
  }
}

/** As Schedule::preview (the shapes the tests use): the words, and the next two due times. */
export function previewLikeEngine(schedule: Schedule, now: Date): SchedulePreview {
  if (schedule.kind === "manual") return { valid: true, meaning: describeSchedule(schedule), next: [] };
  if (schedule.kind === "interval") {
    const step = schedule.seconds * 1000;
    return {
      valid: true, meaning: describeSchedule(schedule),
      next: [1, 2].map((n) => new Date(now.getTime() + n * step).toISOString()),
    };
  }
  const fields = schedule.expression.trim().split(/\s+/);
  if (fields.length === 6 && /^\d+ \d+ \* \* \* \*$/.test(schedule.expression.trim())) {
    const [, minute] = fields;
    const next = new Date(now);
    next.setMinutes(Number(minute), Number(fields[0]), 0);
    if (next <= now) next.setHours(next.getHours() + 1);
    return {
      valid: true,
      meaning: `At minute ${Number(minute)} past every hour. It has six fields, so the first is seconds: second minute hour day month weekday`,
      next: [next, new Date(next.getTime() + 3_600_000)].map((d) => d.toISOString()),
    };
  }
  if (!/^\d+ \d+ \* \* \*$/.test(schedule.expression.trim())) {
    return {
      valid: false, next: [],
      meaning: `“${schedule.expression}” is not a cron expression: write five fields, minute hour day month weekday, like “0 7 * * *” for every day at 07:00`,
    };
  }
  const [minute, hour] = fields.map(Number);
  const next = new Date(now);
  next.setHours(hour, minute, 0, 0);
  if (next <= now) next.setDate(next.getDate() + 1);
  const after = new Date(next);
  after.setDate(after.getDate() + 1);
  return { valid: true, meaning: describeSchedule(schedule), next: [next.toISOString(), after.toISOString()] };
}

/** The engine's checks, close enough for the screens: the same fields and kinds of message. */
export function validateLikeEngine(input: WorkflowInput): FieldProblem[] {
  const problems: FieldProblem[] = [];
  if (!input.title.trim()) problems.push({ field: "title", message: "Give the workflow a title" });
  if (!input.code.trim()) problems.push({ field: "code", message: "The script is empty" });
  if (input.schedule.kind === "interval" && input.schedule.seconds === 0) {
    problems.push({ field: "schedule", message: "Every 0 never comes round: choose at least 10 seconds" });
  } else if (input.schedule.kind === "interval" && input.schedule.seconds < 60) {
    problems.push({ field: "schedule", message: "An interval must be at least 60 seconds" });
  }
  if (input.schedule.kind === "cron") {
    const fields = input.schedule.expression.split(/\s+/).filter(Boolean);
    const minute = Number(fields[0]);
    if (fields.length !== 5) {
      problems.push({ field: "schedule", message: `A cron expression has 5 fields (minute hour day month weekday); this one has ${fields.length}` });
    } else if (fields[0] !== "*" && !(minute >= 0 && minute <= 59)) {
      problems.push({ field: "schedule", message: `Minute ${fields[0]} is out of range (0–59)` });
    }
  }
  if (input.runtime.kind === "custom") {
    if (!input.runtime.command.includes("{file}")) {
      problems.push({ field: "runtime", message: "A custom command must contain {file} where the script goes" });
    } else if (input.runtime.command.startsWith("no-such")) {
      const program = input.runtime.command.split(" ")[0];
      problems.push({ field: "runtime", message: `${program} was not found on PATH. Install it, or choose another runtime` });
    }
  }
  if (input.timeout_secs === 0 || input.timeout_secs > 86_400) {
    problems.push({ field: "timeout_secs", message: "The time limit must be between 1 second and 86400 seconds" });
  }
  for (const v of input.env) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(v.name)) {
      problems.push({ field: "env", message: `"${v.name}" is not a valid variable name (letters, digits and _)` });
    }
  }
  return problems;
}

// Models, as the engine words and checks them (src/llm/provider.rs, keys.rs, tiers.rs).

const DEFAULT_BASE_URL: Record<ProviderKind, string> = {
  openai_compatible: "https://api.openai.com/v1",
  anthropic: "https://api.anthropic.com",
  ollama: "http://127.0.0.1:11434",
  gemini: "https://generativelanguage.googleapis.com",
};

const DEFAULT_KEY_ENV: Record<ProviderKind, string | null> = {
  openai_compatible: "OPENAI_API_KEY",
  anthropic: "ANTHROPIC_API_KEY",
  ollama: null,
  gemini: "GEMINI_API_KEY",
};

const TIERS: Tier[] = ["cheap", "standard", "deep"];
const TIER_RANK: Record<Tier, number> = { cheap: 0, standard: 1, deep: 2 };
const DEFAULT_BUDGET: Record<Tier, number> = { cheap: 5000, standard: 10000, deep: 20000 };

export function checkProviderLikeEngine(input: ProviderInput): string[] {
  const problems: string[] = [];
  const name = input.name.trim();
  if (!name || name.length > 40) problems.push("the name must be 1 to 40 characters");
  else if (!/^[A-Za-z0-9._-]+$/.test(name)) problems.push(`the name "${name}" may hold only letters, digits, '-', '_' and '.'`);
  const url = input.base_url?.trim();
  if (url && (!/^https?:\/\//.test(url) || url.includes(" "))) {
    problems.push(`the base URL "${url}" must start with http:// or https://`);
  }
  const variable = input.key_env;
  if (variable && (!/^[A-Z0-9_]+$/.test(variable) || /^\d/.test(variable))) {
    problems.push(`the key variable "${variable}" must be an environment variable name like OPENAI_API_KEY`);
  }
  for (const price of input.prices ?? []) {
    const values = [price.input_per_mtok, price.output_per_mtok, price.cached_input_per_mtok];
    if (values.some((v) => v !== null && (!Number.isFinite(v) || v < 0))) {
      problems.push(`the price of "${price.model}" must be zero or more`);
    }
  }
  return problems;
}

function describeKey(key: KeySource): string {
  switch (key.source) {
    case "keyring":
      return "key from the OS keyring";
    case "file":
      return "key from Healer's secrets file";
    case "env":
      return `key from $${key.var}`;
    case "not_needed":
      return "no key needed";
    case "missing":
      return `no key yet: set one (it is kept in the OS keyring) or export ${key.var}`;
  }
}

export function usageTotals(fields: Partial<UsageReport["total"]> = {}): UsageReport["total"] {
  return { calls: 0, prompt_tokens: 0, completion_tokens: 0, cached_tokens: 0, cost_usd: null, unpriced_calls: 0, local_calls: 0, local_secs: 0, ...fields };
}

export type AttemptSpec = Partial<Attempt> & { status: Attempt["status"] };

export class FakeHealer {
  info: AppInfo = {
    version: "0.1.0",
    data_dir: "/home/ada/.local/share/healer",
    db_path: "/home/ada/.local/share/healer/healer.db",
    log_dir: "/home/ada/.local/share/healer/logs",
    schema_version: 3,
    pid: 4242,
    max_title_chars: 120,
  };
  setupWasSkipped = false;
  /** What the fake's syntax check says about code containing this text (null: passes). */
  syntaxRefuses: { marker: string; message: string } | null = null;
  /** Oldest first, as the engine stores them. */
  stored: EventRecord[] = [];
  notifications: Notification[] = [];
  calls: Call[] = [];
  /** Makes send_test_alert hang until resolved, to see the progress state. */
  testAlertGate: Promise<void> | null = null;
  workflows: FakeWorkflow[] = [];
  /** Replaces the engine-like checks when set. */
  validate: ((input: WorkflowInput) => FieldProblem[]) | null = null;
  // Models
  providers: Provider[] = [];
  /** The OS keyring: keys by provider name. */
  keyring = new Map<string, string>();
  /** Environment variables the engine sees. */
  env: Record<string, string> = {};
  tierSettings: TierSetting[] = [];
  steeringModel: SteeringModelSetting | null = null;
  /** What the Sessions page lists; the person's own only while they are watched. */
  liveSessions: LiveSession[] = [];
  /** The person's own Claude Code sessions the engine would list in the history (when watched). */
  ownPastSessions: LiveSession[] = [];
  exportedTrajectories: number[] = [];
  pastSessions: PastSession[] = [];
  steeringSettings: SteeringSettings = {
    enabled: true, zombie_after_secs: 1800, max_loop_messages: 3, judge_every_secs: 900, watch_own_sessions: false,
  };
  budgets: Budgets = { max_tokens_per_call: 4096, per_task_tokens: 60_000, per_day_tokens: 1_000_000, per_day_cost_usd: 5 };
  usageDay = "2026-11-22";
  usageByTier: TierUsage[] = [];
  ollama: LocalServerStatus = {
    base_url: "http://127.0.0.1:11434", running: false, models: [],
    detail: "error sending request for url (http://127.0.0.1:11434/api/tags): connection refused",
  };
  llamaCpp: LocalServerStatus = {
    base_url: "http://127.0.0.1:8080", running: false, models: [], detail: "no llama.cpp server at http://127.0.0.1:8080",
  };
  /** What testing a provider finds: its models, or the error it answers with. */
  connections = new Map<string, string[] | ErrorPayload>();
  /** Makes set_provider_key hang until resolved. */
  keyGate: Promise<void> | null = null;
  /** Auto-fixes and planner chats. */
  tasks = new FakeTasks(this);
  /** The questions Healer stops to ask; none unless a test adds them. */
  checkpoints = new FakeCheckpoints(this);
  /** Error signatures and their fixes, the decisions log, the scheduler's pause; all empty unless a test adds to them. */
  memory = new FakeMemory(this);
  /** The shell's background settings and window memory. */
  desktop = new FakeDesktop();
  secrets = new FakeSecrets();
  cluster = new FakeCluster(() => this.secrets.place() !== null);
  /** Each workflow's own packages; none installed unless a test adds them. */
  deps = new FakeDeps(this);
  /** Projects, their boards and sessions; none unless a test adds them. */
  projects = new FakeProjects(() => this.cluster.settings !== null);
  private failures = new Map<string, ErrorPayload>();
  private listening: Promise<void> = Promise.resolve();
  private nextHealId = 12;
  private nextId = { workflow: 1, version: 1, run: 1, attempt: 1 };

  install(): this {
    // A copy, as IPC would make: the app must never share objects with the fake engine's state.
    mockIPC(async (cmd, args) => structuredClone(await this.handle(cmd, (args ?? {}) as Record<string, unknown>)), {
      shouldMockEvents: true,
    });
    // Listening can be held back, as a window that is still opening is not listening yet.
    const internals = (window as unknown as { __TAURI_INTERNALS__: { invoke: (cmd: string, ...rest: unknown[]) => Promise<unknown> } })
      .__TAURI_INTERNALS__;
    const invoke = internals.invoke.bind(internals);
    internals.invoke = async (cmd, ...rest) => {
      if (cmd === "plugin:event|listen") await this.listening;
      return invoke(cmd, ...rest);
    };
    return this;
  }

  /** Holds back every listener until the returned function is called; events sent meanwhile reach nobody. */
  holdListening(): () => void {
    let release = () => {};
    this.listening = new Promise((resolve) => (release = resolve));
    return release;
  }

  fail(cmd: string, code: ErrorCode, message: string): this {
    this.failures.set(cmd, { code, message });
    return this;
  }

  callsTo(cmd: string): Call[] {
    return this.calls.filter((call) => call.cmd === cmd);
  }

  /** Stores an event without telling the app, as if it happened before the window opened. */
  record(event: Event, at = new Date().toISOString()): EventRecord {
    const record = { id: this.stored.length + 1, at, event };
    this.stored.push(record);
    if (event.kind === "notification_created") this.notifications.push(event.notification);
    return record;
  }

  /** Stores an event and broadcasts it, as the engine's event bridge does. */
  async happen(event: Event): Promise<EventRecord> {
    const record = this.record(event);
    await events.healerEvent.emit(record);
    return record;
  }

  notification(title: string, body: string, fields: Partial<Notification> = {}): Notification {
    const id = this.notifications.length + 1;
    return {
      id, kind: "info", title, body, created_at: minutesAgo(0), read: false, heal_id: null,
      workflow_id: null, run_id: null, task_id: null, actions: [], resolved: false, repeats: 0, repeated_at: null,
      project_id: null, project_name: null, project_task: null, checkpoint_id: null, ...fields,
    };
  }

  // Workflows

  /** A workflow with version 1.0 of `code`, stored as if made before the window opened. */
  addWorkflow(
    fields: Partial<WorkflowInput> & {
      name?: string; status?: Workflow["status"]; next_run_at?: string | null; healing?: boolean; fix_count?: number;
      review?: boolean;
    } = {},
  ): FakeWorkflow {
    const input: WorkflowInput = {
      title: "Daily report", runtime: { kind: "python3" }, entry: null, schedule: { kind: "manual" }, env: [],
      timeout_secs: 300, retry: null, code: "print('hello')\n", summary: "", ...fields,
    };
    const id = this.nextId.workflow++;
    const created = minutesAgo(60 * 24 * 3);
    const workflow: Workflow = {
      id,
      name: fields.name ?? input.title.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, ""),
      title: input.title,
      runtime: input.runtime,
      entry: input.entry ?? (input.runtime.kind === "python3" ? "main.py" : input.runtime.kind === "node" ? "main.js" : "main.sh"),
      schedule: input.schedule,
      env: input.env,
      timeout_secs: input.timeout_secs,
      retry: input.retry ?? RETRY_DEFAULT,
      status: fields.status ?? "active",
      created_at: created,
      updated_at: created,
      healing: fields.healing ?? false,
      fix_count: fields.fix_count ?? 0,
      review: fields.review ?? false,
    };
    const kept: FakeWorkflow = { workflow, versions: [], runs: [], next_run_at: fields.next_run_at ?? null };
    this.workflows.push(kept);
    this.addVersion(id, input.code, "First version", { major: 1, minor: 0 }, { kind: "person" }, created, input.summary);
    return kept;
  }

  /** Another version of a workflow's script; the newest is the active one. */
  addVersion(
    workflowId: number, code: string, comment: string, version: Version,
    author: ScriptVersion["author"] = { kind: "person" }, at = minutesAgo(30), summary?: string, requirements?: string[],
  ): ScriptVersion {
    const kept = this.kept(workflowId);
    for (const v of kept.versions) v.active = false;
    const stored: ScriptVersion = {
      id: this.nextId.version++, workflow_id: workflowId, version, code, change_comment: comment,
      summary: summary ?? kept.versions[kept.versions.length - 1]?.summary ?? "", author, created_at: at, active: true,
      requirements: requirements ?? kept.versions[kept.versions.length - 1]?.requirements ?? [],
    };
    kept.versions.push(stored);
    return stored;
  }

  /** A run with the given attempts, stored as if it happened before the window opened. */
  addRun(workflowId: number, run: Partial<Run> & { status: Run["status"] }, attempts: AttemptSpec[] = []): RunDetail {
    const kept = this.kept(workflowId);
    const id = this.nextId.run++;
    const at = run.started_at ?? minutesAgo(10);
    const active = kept.versions.find((v) => v.active);
    const stored: RunDetail = {
      run: {
        id, workflow_id: workflowId, number: kept.runs.length + 1,
        version: active?.version ?? { major: 1, minor: 0 }, trigger: "schedule",
        class: null, attempts: attempts.length, queued_at: at, started_at: at, finished_at: at, summary: "",
        skipped: false, hint: null, ...run,
      },
      attempts: attempts.map((a, i) => this.attempt(id, i + 1, a)),
      setup: null,
    };
    kept.runs.push(stored);
    return stored;
  }

  attempt(runId: number, number: number, fields: AttemptSpec): Attempt {
    const finished = fields.status !== "running";
    return {
      id: this.nextId.attempt++, run_id: runId, number, started_at: minutesAgo(10),
      finished_at: finished ? minutesAgo(10) : null, duration_ms: finished ? 1200 : null,
      exit_code: fields.status === "succeeded" ? 0 : finished ? 1 : null, signal: null, timed_out: false,
      class: null, evidence: null, stdout: "", stderr: "", stdout_cut: 0, stderr_cut: 0, result: null, note: null, worker: null,
      ...fields,
    };
  }

  /** Something a running attempt printed, sent as the engine's output bridge does. */
  async print(chunk: OutputChunk): Promise<void> {
    await events.runOutput.emit(chunk);
  }

  // Models

  /** A provider stored as if added before the window opened. */
  addProvider(input: Partial<ProviderInput> & { name: string }): Provider {
    const kind = input.kind ?? "openai_compatible";
    const at = minutesAgo(60);
    const before = this.providers.find((p) => p.name === input.name);
    const provider: Provider = {
      name: input.name, title: input.title?.trim() || before?.title || input.name, kind, base_url: input.base_url || DEFAULT_BASE_URL[kind], key_env: input.key_env ?? null,
      prices: input.prices ?? [], created_at: at, updated_at: at,
    };
    this.providers = [...this.providers.filter((p) => p.name !== provider.name), provider];
    return provider;
  }

  keySource(provider: Provider): KeySource {
    if (this.keyring.has(provider.name)) return { source: this.secrets.keyringService ? "keyring" : "file" };
    const variable = provider.key_env ?? DEFAULT_KEY_ENV[provider.kind];
    if (variable && this.env[variable]) return { source: "env", var: variable };
    if (provider.kind === "ollama") return { source: "not_needed" };
    // A server at home (the engine's rule, simplified to this computer's addresses).
    if (/^https?:\/\/(127\.0\.0\.1|localhost)(:|\/|$)/.test(provider.base_url)) return { source: "not_needed" };
    return { source: "missing", var: variable ?? "" };
  }

  private provider(name: string): Provider {
    const found = this.providers.find((p) => p.name === name);
    if (!found) throw { code: "not_found", message: `there is no provider "${name}"` } satisfies ErrorPayload;
    return found;
  }

  private providerView(provider: Provider): ProviderView {
    const key = this.keySource(provider);
    return { provider, key, key_text: describeKey(key) };
  }

  private tierViews(): TierView[] {
    return TIERS.map((tier) => {
      const setting = this.tierSettings.find((s) => s.tier === tier) ?? null;
      const nearest = [...this.tierSettings].sort(
        (a, b) => Math.abs(TIER_RANK[a.tier] - TIER_RANK[tier]) - Math.abs(TIER_RANK[b.tier] - TIER_RANK[tier]) || TIER_RANK[b.tier] - TIER_RANK[a.tier],
      )[0];
      const provider = nearest && this.providers.find((p) => p.name === nearest.provider);
      const resolves_to = nearest && provider ? {
        requested: tier, used: nearest.tier, provider, model: nearest.model, budget_tokens: nearest.budget_tokens,
        temperature: nearest.temperature ?? null, minutes: nearest.minutes ?? null,
        fallback: nearest.tier === tier ? null
          : `the ${tier} tier is not configured; using the ${nearest.tier} tier (${provider.name} / ${nearest.model})`,
      } : null;
      return { tier, setting, default_budget: DEFAULT_BUDGET[tier], resolves_to };
    });
  }

  /** The engine's rule, simplified: the named model, else the cheap tier's (the fake has no prices). */
  private steeringModelView(): SteeringModelView {
    const cheap = this.tierViews()[0].resolves_to;
    const named = this.steeringModel && this.providers.find((p) => p.name === this.steeringModel?.provider);
    const resolves_to = named && this.steeringModel
      ? { provider: named, model: this.steeringModel.model, source: "named" as const }
      : cheap ? { provider: cheap.provider, model: cheap.model, source: "cheap_tier" as const } : null;
    return {
      setting: this.steeringModel,
      resolves_to,
      summary: resolves_to
        ? `Steering asks ${resolves_to.model} from ${resolves_to.provider.name} (${resolves_to.source === "named" ? "the model you named" : "no model has a price, so the model of the cheap tier"}).`
        : "No model is set up, so only the free loop check watches your agents: nothing is spent, and no one looks at their progress every few minutes.",
      rule: "Healer asks the model you name here; if you name none, it asks the cheapest model you have set up (by price); if there is none, only the free loop check watches your agents.",
    };
  }

  private usageReport(): UsageReport {
    const total = usageTotals();
    for (const { totals } of this.usageByTier) {
      total.calls += totals.calls;
      total.prompt_tokens += totals.prompt_tokens;
      total.completion_tokens += totals.completion_tokens;
      total.cached_tokens += totals.cached_tokens;
      total.unpriced_calls += totals.unpriced_calls;
      total.local_calls += totals.local_calls;
      total.local_secs += totals.local_secs;
      if (totals.cost_usd !== null) total.cost_usd = (total.cost_usd ?? 0) + totals.cost_usd;
    }
    return { day: this.usageDay, total, by_tier: this.usageByTier, budgets: this.budgets };
  }

  private async saveProvider(input: ProviderInput): Promise<Provider> {
    const problems = checkProviderLikeEngine(input);
    if (problems.length) throw { code: "invalid_input", message: problems.join("; ") } satisfies ErrorPayload;
    const before = this.providers.find((p) => p.name === input.name.trim());
    const provider = this.addProvider({ ...input, name: input.name.trim(), base_url: input.base_url?.trim() || null });
    if (before) {
      provider.created_at = before.created_at;
      this.providers = this.providers.map((p) => (p.name === provider.name ? provider : p));
    }
    await this.happen({ kind: "llm_settings_changed", what: `provider "${provider.name}" saved` });
    return provider;
  }

  private testProvider(name: string): ConnectionTest {
    const provider = this.provider(name);
    const key = this.keySource(provider);
    const fail = (error: ErrorPayload): ConnectionTest => ({ provider: name, ok: false, models: [], error, key });
    if (key.source === "missing") {
      return fail({
        code: "missing_key",
        message: `${name} needs a key and none was found: set it in Settings → Model providers (OS keyring), or export ${key.var}`,
      });
    }
    const answer = this.connections.get(name) ?? {
      code: "model_network", message: `cannot reach ${name} at ${provider.base_url}/models after 1 attempt(s): connection refused`,
    };
    return Array.isArray(answer) ? { provider: name, ok: true, models: answer, error: null, key } : fail(answer);
  }

  kept(workflowId: number): FakeWorkflow {
    const kept = this.workflows.find((w) => w.workflow.id === workflowId);
    if (!kept) throw { code: "not_found", message: `there is no workflow ${workflowId}` } satisfies ErrorPayload;
    return kept;
  }

  private summary(kept: FakeWorkflow): WorkflowSummary {
    const { workflow, versions, runs } = kept;
    const last = runs[runs.length - 1];
    return {
      id: workflow.id, name: workflow.name, title: workflow.title, status: workflow.status, runtime: workflow.runtime,
      schedule_text: describeSchedule(workflow.schedule), version: versions.find((v) => v.active)!.version,
      last_run: last ? last.run : null, next_run_at: kept.next_run_at,
      busy: runs.some((r) => r.run.status === "queued" || r.run.status === "running"),
      healing: workflow.healing,
      review: workflow.review,
    };
  }

  private detail(kept: FakeWorkflow): WorkflowDetail {
    return {
      workflow: kept.workflow, active: kept.versions.find((v) => v.active)!,
      schedule_text: describeSchedule(kept.workflow.schedule), next_run_at: kept.next_run_at,
      folder: `${this.info.data_dir}/workflows/${kept.workflow.id}`,
    };
  }

  private problems(input: WorkflowInput): FieldProblem[] {
    return (this.validate ?? validateLikeEngine)(input);
  }

  private async createWorkflow(input: WorkflowInput, requirements: string[] = []): Promise<Workflow> {
    const problems = this.problems(input);
    if (problems.length) throw { code: "invalid_input", message: problems.map((p) => `${p.field}: ${p.message}`).join("; ") };
    const kept = this.addWorkflow(input);
    kept.versions[0].requirements = requirements;
    await this.happen({ kind: "workflow_created", workflow_id: kept.workflow.id, title: kept.workflow.title });
    return kept.workflow;
  }

  private async loadExamples(): Promise<Workflow[]> {
    const daily = (expression: string): Schedule => ({ kind: "cron", expression });
    const examples: Partial<WorkflowInput>[] = [
      { title: "Daily weather summary", schedule: daily("0 7 * * *"), summary: "Summarises yesterday's temperature readings" },
      { title: "Exchange rates", schedule: { kind: "interval", seconds: 3600 }, summary: "Fetches exchange rates from a sometimes-flaky service" },
      { title: "Weekly sales report", schedule: daily("0 9 * * 1"), summary: "Totals last week's orders from the shop's export" },
      { title: "Team chat digest", runtime: { kind: "node" }, schedule: daily("30 8 * * 1-5"), summary: "Posts a morning digest to the team's chat" },
    ];
    const made = [];
    for (const example of examples) {
      made.push(
        await this.createWorkflow({
          runtime: { kind: "python3" }, entry: null, env: [], retry: null, timeout_secs: 60,
          code: "print('example')\n", title: "", schedule: { kind: "manual" }, summary: "", ...example,
        }),
      );
    }
    return made;
  }

  private syntaxProblem(code: string): string | null {
    return this.syntaxRefuses && code.includes(this.syntaxRefuses.marker) ? this.syntaxRefuses.message : null;
  }

  /** As the engine: refused when a newer version than `base` exists or the syntax check fails. */
  private async saveEdited(id: number, code: string, comment: string, base: Version | null, requirements: string[] | null = null): Promise<SaveOutcome> {
    const kept = this.kept(id);
    const newest = [...kept.versions].sort((a, b) => a.version.major - b.version.major || a.version.minor - b.version.minor).at(-1)!;
    if (base && (newest.version.major !== base.major || newest.version.minor !== base.minor)) {
      return { kind: "conflict", base, newer: newest };
    }
    const problem = this.syntaxProblem(code);
    if (problem) return { kind: "invalid", message: problem };
    return { kind: "saved", version: await this.saveScript(id, code, comment, requirements) };
  }

  private async saveScript(id: number, code: string, comment: string, requirements: string[] | null = null): Promise<ScriptVersion> {
    const kept = this.kept(id);
    const major = Math.max(...kept.versions.map((v) => v.version.major)) + 1;
    const saved = this.addVersion(
      id, code, comment.trim() || "Edited by hand", { major, minor: 0 }, { kind: "person" }, minutesAgo(0), undefined, requirements ?? undefined,
    );
    // The person looked at it: a review flag from repeated fixes is done.
    kept.workflow.review = false;
    await this.happen({
      kind: "version_saved", workflow_id: id, title: kept.workflow.title, version: saved.version,
      author: { kind: "person" }, comment: saved.change_comment,
    });
    return saved;
  }

  private async handle(cmd: string, args: Record<string, unknown>): Promise<unknown> {
    this.calls.push({ cmd, args });
    const failure = this.failures.get(cmd);
    // The bindings turn a rejected non-Error value into { status: "error" }, as with Tauri.
    if (failure) throw failure;
    switch (cmd) {
      case "app_info":
        return this.info;
      case "list_events": {
        const before = args.before as number | null;
        const older = this.stored.filter((r) => before === null || r.id < before);
        return older.reverse().slice(0, args.limit as number);
      }
      case "list_notifications": {
        // As Handle::notifications: a notice about a missing model offers the repair once one is set up.
        const modelSetUp = this.tierSettings.length > 0;
        const items = [...this.notifications].reverse().map((n) =>
          n.kind === "no_model" && !n.resolved && modelSetUp
            ? { ...n, body: `${n.body} A model is set up now: Healer can try the repair again.`, actions: ["retry_autofix" as const] }
            : n,
        );
        return { items, unread: items.filter((n) => !n.read).length };
      }
      case "mark_notifications_read": {
        const ids = args.ids as number[];
        for (const n of this.notifications) if (ids.length === 0 || ids.includes(n.id)) n.read = true;
        return null;
      }
      case "send_test_alert":
        return this.healTestAlert();
      case "open_log_folder":
        return null;
      case "list_workflows":
        return this.workflows.map((w) => this.summary(w));
      case "get_workflow":
        return this.detail(this.kept(args.id as number));
      case "validate_workflow":
        return this.problems(args.input as WorkflowInput);
      case "preview_schedule":
        return previewLikeEngine(args.schedule as Schedule, new Date());
      case "create_workflow":
        return this.createWorkflow(args.input as WorkflowInput, (args.requirements as string[] | undefined) ?? []);
      case "update_workflow": {
        const kept = this.kept(args.id as number);
        const input = args.input as WorkflowInput;
        Object.assign(kept.workflow, {
          title: input.title, runtime: input.runtime, schedule: input.schedule, env: input.env,
          timeout_secs: input.timeout_secs, updated_at: minutesAgo(0),
        });
        await this.happen({ kind: "workflow_changed", workflow_id: kept.workflow.id, title: input.title, what: "settings changed" });
        return kept.workflow;
      }
      case "save_script":
        return this.saveEdited(
          args.id as number, args.code as string, args.comment as string, (args.base as Version | null) ?? null,
          (args.requirements as string[] | null | undefined) ?? null,
        );
      case "check_script":
        return this.syntaxProblem(args.code as string);
      case "restore_version": {
        const kept = this.kept(args.id as number);
        const version = args.version as Version;
        const old = kept.versions.find((v) => v.version.major === version.major && v.version.minor === version.minor)!;
        return this.saveScript(kept.workflow.id, old.code, `Restored from ${version.major}.${version.minor}`);
      }
      case "setup_skipped":
        return this.setupWasSkipped;
      case "skip_setup":
        this.setupWasSkipped = true;
        return null;
      case "export_full_log":
        return `/home/ada/Downloads/run-${args.runId as number}-try-${args.attempt as number}-${args.stream as string}.log`;
      case "dismiss_notification": {
        this.notifications = this.notifications.filter((n) => n.id !== (args.id as number));
        return null;
      }
      case "set_workflow_paused": {
        const kept = this.kept(args.id as number);
        kept.workflow.status = args.paused ? "paused" : "active";
        await this.happen({
          kind: "workflow_changed", workflow_id: kept.workflow.id, title: kept.workflow.title,
          what: args.paused ? "paused" : "resumed",
        });
        return kept.workflow;
      }
      case "delete_workflow": {
        const kept = this.kept(args.id as number);
        this.workflows = this.workflows.filter((w) => w !== kept);
        await this.happen({ kind: "workflow_deleted", workflow_id: kept.workflow.id, title: kept.workflow.title });
        return null;
      }
      case "run_workflow_now": {
        const kept = this.kept(args.id as number);
        if (kept.runs.some((r) => r.run.status === "queued" || r.run.status === "running")) {
          throw { code: "invalid_input", message: `"${kept.workflow.title}" is already running; wait for that run to finish` };
        }
        const waiting = this.checkpoints.list().pending.find(
          (c) => c.workflow_id === kept.workflow.id || c.affected.some((a) => a.workflow_id === kept.workflow.id),
        );
        if (waiting) {
          throw {
            code: "invalid_input",
            message: `“${kept.workflow.title}” waits for your decision (${waiting.title.replace(/\.$/, "")}); decide it first: Proceed runs it again`,
          };
        }
        const run = this.addRun(kept.workflow.id, {
          status: "queued", trigger: "manual", started_at: null, finished_at: null, queued_at: minutesAgo(0),
        });
        return run.run.id;
      }
      case "list_runs": {
        const before = args.before as number | null;
        const runs = this.kept(args.workflowId as number).runs.map((r) => r.run);
        return runs.filter((r) => before === null || r.id < before).reverse().slice(0, args.limit as number);
      }
      case "get_run": {
        for (const w of this.workflows) {
          const found = w.runs.find((r) => r.run.id === args.runId);
          if (found) return found;
        }
        throw { code: "not_found", message: `there is no run ${String(args.runId)}` };
      }
      case "list_versions":
        return this.kept(args.workflowId as number).versions;
      case "load_examples":
        return this.loadExamples();
      case "list_providers":
        return this.providers.map((p) => this.providerView(p));
      case "save_provider":
        return this.saveProvider(args.input as ProviderInput);
      case "remove_provider": {
        const name = args.name as string;
        this.provider(name);
        this.providers = this.providers.filter((p) => p.name !== name);
        this.tierSettings = this.tierSettings.filter((s) => s.provider !== name);
        this.keyring.delete(name);
        await this.happen({ kind: "llm_settings_changed", what: `provider "${name}" removed` });
        return null;
      }
      case "set_provider_key": {
        await this.keyGate;
        const name = args.name as string;
        this.provider(name);
        const place = this.secrets.keep(`provider:${name}`, (args.key as string).trim());
        this.keyring.set(name, (args.key as string).trim());
        await this.happen({
          kind: "llm_settings_changed",
          what: `key of "${name}" kept in ${place === "file" ? "Healer's secrets file" : "the OS keyring"}`,
        });
        return null;
      }
      case "forget_provider_key":
        this.keyring.delete(args.name as string);
        return null;
      case "test_provider":
        return this.testProvider(args.name as string);
      case "detect_ollama":
        return this.ollama;
      case "detect_llama_cpp":
        return this.llamaCpp;
      case "list_tiers":
        return this.tierViews();
      case "set_tier": {
        const setting = args.setting as TierSetting;
        if (!setting.model.trim()) throw { code: "invalid_input", message: "the model name is empty" };
        this.provider(setting.provider);
        this.tierSettings = [...this.tierSettings.filter((s) => s.tier !== setting.tier), { ...setting, model: setting.model.trim() }];
        await this.happen({ kind: "llm_settings_changed", what: `${setting.tier} tier → ${setting.provider} / ${setting.model}` });
        return null;
      }
      case "clear_tier": {
        const tier = args.tier as Tier;
        this.tierSettings = this.tierSettings.filter((s) => s.tier !== tier);
        await this.happen({ kind: "llm_settings_changed", what: `${tier} tier unmapped` });
        return null;
      }
      case "get_budgets":
        return this.budgets;
      case "set_budgets": {
        const budgets = args.budgets as Budgets;
        if (!budgets.max_tokens_per_call || !budgets.per_task_tokens || !budgets.per_day_tokens) {
          throw { code: "invalid_input", message: "token caps must be more than zero" };
        }
        if (budgets.per_task_tokens < budgets.max_tokens_per_call) {
          throw {
            code: "invalid_input",
            message: `a task may use at most ${budgets.per_task_tokens} tokens, less than one call may write (${budgets.max_tokens_per_call}): raise the task's cap, or lower the call's`,
          };
        }
        if (budgets.per_day_cost_usd !== null && budgets.per_day_cost_usd < 0) {
          throw { code: "invalid_input", message: "the daily cost cap must be zero or more" };
        }
        this.budgets = budgets;
        await this.happen({ kind: "llm_settings_changed", what: "budgets changed" });
        return null;
      }
      case "usage_today":
        return this.usageReport();
      case "get_steering_model":
        return this.steeringModelView();
      case "set_steering_model":
        this.steeringModel = (args.setting as SteeringModelSetting | null) ?? null;
        return null;
      case "list_live_sessions":
        return this.liveSessions.filter((s) => s.origin === "healer" || this.steeringSettings.watch_own_sessions);
      case "list_own_past_sessions":
        return this.steeringSettings.watch_own_sessions ? this.ownPastSessions : [];
      case "export_session_trajectory":
        this.exportedTrajectories.push(args.sessionId as number);
        return `/data/trajectories/session-${String(args.sessionId)}.json`;
      case "list_past_sessions":
        return this.pastSessions;
      case "get_steering_settings":
        return this.steeringSettings;
      case "set_steering_settings": {
        const settings = args.settings as SteeringSettings;
        if ((settings.judge_every_secs ?? 900) < 60) {
          throw { code: "invalid_input", message: "the steering model looks at a task at most once a minute: set one minute or more" };
        }
        this.steeringSettings = settings;
        return null;
      }
      default: {
        const answer =
          this.tasks.handle(cmd, args) ??
          this.checkpoints.handle(cmd, args) ??
          this.memory.handle(cmd, args) ??
          this.desktop.handle(cmd, args) ??
          this.secrets.handle(cmd, args) ??
          this.cluster.handle(cmd, args) ??
          this.deps.handle(cmd, args) ??
          this.projects.handle(cmd, args);
        if (answer) return answer();
        throw new Error(`FakeHealer: no command ${cmd}`);
      }
    }
  }

  private async healTestAlert(): Promise<HealRecord> {
    await this.testAlertGate;
    const id = this.nextHealId++;
    const started_at = new Date().toISOString();
    const summary = "test alert from Settings";
    await this.happen({
      kind: "heal_started", heal_id: id, source: "self_check", scenario: "test_alert",
      class: "unknown", signature: "self_check:test_alert", summary,
    });
    const notification = this.notification("Test alert handled", "Healer healed a test failure.", { kind: "heal", heal_id: id });
    await this.happen({ kind: "notification_created", notification });
    const detail = "the person was told in a notification";
    await this.happen({ kind: "remedy_applied", heal_id: id, remedy: "record_and_notify", status: "contained", detail });
    await this.happen({ kind: "heal_finished", heal_id: id, outcome: "contained", summary });
    const finished_at = new Date().toISOString();
    return {
      id, source: { type: "self_check" }, scenario: "test_alert", class: "unknown", signature: "self_check:test_alert",
      summary, outcome: "contained", interrupted: false,
      remedies: [{ remedy: "record_and_notify", status: "contained", detail, started_at, finished_at }],
      started_at, finished_at, task_id: null, resolved_by: null, resolved_run_id: null,
    };
  }
}
