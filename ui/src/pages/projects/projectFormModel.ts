// The add/edit project form's state: what the person types (numbers as text, rows with keys),
// and the ProjectInput the engine checks and saves.
import type { AcceptHow, AgentKind, BringMainIn, MergePolicy, Preset, ProjectInput, ProjectSettings, Tier } from "../../bindings";

export type VerifyRow = { key: number; name: string; command: string };

export type ProjectForm = {
  path: string;
  name: string;
  mainBranch: string;
  agent: AgentKind;
  verify: VerifyRow[];
  /** With no check: the person says an agent's work may be committed unchecked. */
  commitWithoutChecks: boolean;
  /** A task Healer reopened starts again by itself. */
  startReopened: boolean;
  initScript: string;
  merge: MergePolicy;
  /** How accepted work goes into the main branch, and how the main branch comes in first. */
  acceptHow: AcceptHow;
  bringMainIn: BringMainIn;
  maxParallel: string;
  agentMinutes: string;
  commandMinutes: string;
  tokenBudget: string;
  tier: Tier;
  /** The name of a model provider set up in Healer; empty: the agent's own sign-in. */
  agentProvider: string;
  model: string;
  /** Claude Code's tools, as the person writes them: separated by commas. */
  allowedTools: string;
  agentProgram: string;
  /** The spending cap of a session on a provider of Healer's, in dollars ("5.00"; 0: none). */
  capDollars: string;
  /** …and in tokens, for a model with no price in Healer (0: none). */
  capTokens: string;
  /** What the agent may do without asking. */
  preset: Preset;
  /** Commands that run without asking, one per line (`npm test`, `make`). */
  allowedCommands: string;
  /** How long a question waits for an answer before it is denied. */
  askMinutes: string;
  /** Where its sessions run: here, or on the cluster's workers. */
  runsOn: "local" | "cluster";
  /** What the form does not show, kept as it was. */
  rest: ProjectSettings;
};

let nextKey = 1;

export function verifyRow(name = "", command = ""): VerifyRow {
  return { key: nextKey++, name, command };
}

const minutes = (secs: number | undefined, fallback: number) => String(Math.round((secs ?? fallback) / 60));

export function formFrom(input: ProjectInput): ProjectForm {
  const s = input.settings;
  return {
    path: input.path,
    name: input.name,
    mainBranch: s.main_branch ?? "main",
    agent: s.agent ?? "builtin",
    verify: (s.verify ?? []).map((v) => verifyRow(v.name, v.command)),
    commitWithoutChecks: s.commit_without_checks ?? false,
    startReopened: s.start_reopened_tasks ?? true,
    initScript: s.init_script ?? "",
    merge: s.merge ?? "fast_forward",
    acceptHow: s.finishing?.accept ?? "fast_forward",
    bringMainIn: s.finishing?.bring_main_in ?? "rebase",
    maxParallel: String(s.max_parallel ?? 1),
    agentMinutes: minutes(s.agent_time_limit_secs, 3600),
    commandMinutes: minutes(s.command_time_limit_secs, 900),
    tokenBudget: String(s.token_budget ?? 50000),
    tier: s.tier ?? "standard",
    agentProvider: s.agent_provider ?? "",
    model: s.model ?? "",
    allowedTools: (s.allowed_tools ?? ["Bash", "Read", "Edit", "Write", "Glob", "Grep"]).join(", "),
    agentProgram: s.agent_program ?? "",
    capDollars: ((s.session_cap_cents ?? 500) / 100).toFixed(2),
    capTokens: (s.session_cap_tokens ?? 5000000).toLocaleString("en-US"),
    preset: s.approvals?.preset ?? "ask_risky",
    allowedCommands: (s.approvals?.allowed ?? []).join("\n"),
    askMinutes: minutes(s.approvals?.time_limit_secs, 1800),
    runsOn: s.runs_on?.kind === "cluster" ? "cluster" : "local",
    rest: s,
  };
}

/** A number the person typed; what is not one stays as 0, which the engine then refuses. */
function number(text: string): number {
  const n = Number(text.replace(/[\s,_]/g, ""));
  return Number.isFinite(n) && n >= 0 ? Math.floor(n) : 0;
}

/** Dollars the person typed ("5", "$2.50") as cents; what is not an amount stays 0 (no cap). */
export function cents(text: string): number {
  const n = Number(text.replace(/[\s,$_]/g, ""));
  return Number.isFinite(n) && n >= 0 ? Math.round(n * 100) : 0;
}

/** Tools separated by commas; a comma inside a rule such as Bash(git diff, git log) stays. */
function tools(text: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let current = "";
  for (const c of text) {
    if (c === "(") depth++;
    if (c === ")") depth = Math.max(0, depth - 1);
    if (c === "," && depth === 0) {
      out.push(current.trim());
      current = "";
    } else current += c;
  }
  out.push(current.trim());
  return out.filter((t) => t !== "");
}

export function toInput(form: ProjectForm): ProjectInput {
  return {
    path: form.path,
    name: form.name,
    settings: {
      ...form.rest,
      main_branch: form.mainBranch,
      agent: form.agent,
      verify: form.verify.map(({ name, command }) => ({ name, command })),
      commit_without_checks: form.verify.length === 0 && form.commitWithoutChecks,
      start_reopened_tasks: form.startReopened,
      init_script: form.initScript.trim() ? form.initScript : null,
      merge: form.merge,
      finishing: { accept: form.acceptHow, bring_main_in: form.bringMainIn },
      max_parallel: number(form.maxParallel),
      agent_time_limit_secs: number(form.agentMinutes) * 60,
      command_time_limit_secs: number(form.commandMinutes) * 60,
      token_budget: number(form.tokenBudget),
      tier: form.tier,
      agent_provider: form.agentProvider || null,
      model: form.model.trim() || null,
      allowed_tools: tools(form.allowedTools),
      agent_program: form.agentProgram.trim() || null,
      session_cap_cents: cents(form.capDollars),
      session_cap_tokens: number(form.capTokens),
      approvals: {
        preset: form.preset,
        allowed: form.allowedCommands
          .split("\n")
          .map((line) => line.trim())
          .filter((line) => line !== ""),
        time_limit_secs: number(form.askMinutes) * 60,
      },
      runs_on:
        form.runsOn === "local"
          ? { kind: "local" }
          : { kind: "cluster", queue: form.rest.runs_on?.kind === "cluster" ? form.rest.runs_on.queue : "" },
    },
  };
}

/** The engine's field names, as the form shows them. */
export const fieldOf: Record<string, string> = {
  path: "path",
  name: "name",
  main_branch: "mainBranch",
  agent: "agent",
  init_script: "initScript",
  max_parallel: "maxParallel",
  agent_time_limit_secs: "agentMinutes",
  command_time_limit_secs: "commandMinutes",
  token_budget: "tokenBudget",
  max_steps: "tokenBudget",
  agent_provider: "agentProvider",
  agent_program: "agentProgram",
  model: "model",
  allowed_tools: "allowedTools",
  session_cap_cents: "capDollars",
  session_cap_tokens: "capTokens",
  "approvals.time_limit_secs": "askMinutes",
  "approvals.allowed": "allowedCommands",
  runs_on: "runsOn",
};
