// Words a person reads about projects, tasks and agent sessions, kept in one place.
import type { AcceptHow, AgentKind, Preset, ProjectSettings, ProjectTaskStatus, SessionModelUse, SessionStatus, SessionStep } from "./bindings";
import type { Tone } from "./eventText";

export const agentLabel: Record<AgentKind, string> = {
  builtin: "Healer's built-in agent",
  "claude-code": "Claude Code",
  codex: "Codex",
  opencode: "opencode",
  "gemini-cli": "Gemini CLI",
};

/** The version number in what an agent's program said of itself ("2.1.328 (Claude Code)"). */
export function agentVersion(said: string | null): string | null {
  return said?.match(/\d+\.\d+(\.\d+)?/)?.[0] ?? null;
}

/** The program an agent runs, as its placeholder in the project form. */
export const agentProgramName: Record<AgentKind, string> = {
  builtin: "",
  "claude-code": "claude",
  codex: "codex",
  opencode: "opencode",
  "gemini-cli": "gemini",
};

/**
 * What an agent cannot ask the person in a session Healer runs, when it cannot: the project's
 * choice of what it may do decides instead. `null`: it asks as the choice says.
 */
export function cannotAsk(agent: AgentKind, preset: Preset): string | null {
  if (agent !== "gemini-cli") return null;
  const name = agentLabel[agent];
  if (preset === "never_ask") return null;
  if (preset === "ask_every")
    return `${name} cannot stop to ask you in a session Healer runs, so your choice here decides for it: it edits files in the task's folder, and every command it wants to run is refused without asking (it is told so). To let it run the project's checks and the commands you list, choose “Ask before anything risky”.`;
  return `${name} cannot stop to ask you in a session Healer runs, so your choice here decides for it: it edits files in the task's folder and runs the project's checks and the commands listed below; anything else it wants to run is refused without asking, and it is told so.`;
}

/** Who works on a project's tasks, and on which model, in one sentence. */
export function workedBy(settings: ProjectSettings): string {
  const agent = settings.agent ?? "builtin";
  if (agent === "builtin") return "Healer's built-in agent works on the tasks, with the model tiers set in Settings.";
  const model = settings.model ? ` (model ${settings.model})` : "";
  const source = settings.agent_provider
    ? `the model provider \u201c${settings.agent_provider}\u201d set up in Healer${model}`
    : `its own sign-in on this computer${model}`;
  return `${agentLabel[agent]} works on the tasks, using ${source}.`;
}

export const columnTitle: Record<ProjectTaskStatus, string> = {
  open: "Open",
  in_progress: "In progress",
  blocked: "Blocked",
  closed: "Closed",
};

export const columnOrder: ProjectTaskStatus[] = ["open", "in_progress", "blocked", "closed"];

export const sessionStatusLabel: Record<SessionStatus, string> = {
  running: "Working",
  finished: "Finished",
  failed: "Failed",
  timed_out: "Ran out of time",
  stopped: "Stopped",
  interrupted: "Interrupted",
};

export const sessionStatusTone: Record<SessionStatus, Tone> = {
  running: "working",
  finished: "good",
  failed: "bad",
  timed_out: "bad",
  stopped: "contained",
  interrupted: "contained",
};

/** A priority as a person says it: 0 is the most urgent. */
export function priorityLabel(priority: number): string {
  if (priority <= 0) return "Urgent";
  if (priority === 1) return "High";
  if (priority === 2) return "Normal";
  return "Low";
}

/** The arguments of a tool call, read leniently: an agent's text is not always JSON. */
export function callArgs(step: SessionStep): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(step.arguments ?? "{}");
    return parsed && typeof parsed === "object" && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

function text(args: Record<string, unknown>, ...names: string[]): string {
  for (const name of names) {
    const value = args[name];
    if (typeof value === "string" && value.trim()) return value.trim();
  }
  return "";
}

/** What a tool call did, in a sentence, and the one thing worth showing with it (a command). */
export function callInWords(step: SessionStep): { title: string; code: string | null } {
  const args = callArgs(step);
  // opencode names its paths filePath; Gemini CLI file_path or dir_path.
  const path = text(args, "path", "file_path", "notebook_path", "filePath", "dir_path");
  const tool = step.tool ?? "a tool";
  switch (tool) {
    case "read_file":
    case "Read":
    case "read":
      return { title: path ? `Read ${path}` : "Read a file", code: null };
    case "list_files":
    case "LS":
    case "list":
    case "list_directory":
      return { title: path && path !== "." ? `Looked at the files in ${path}` : "Looked at the project's files", code: null };
    case "Glob":
    case "glob":
      return { title: `Looked for files matching ${text(args, "pattern")}`, code: null };
    case "search":
    case "Grep":
    case "grep":
    case "grep_search":
      return { title: `Searched for “${text(args, "pattern")}”`, code: null };
    case "write_file":
    case "Write":
    case "write":
      return { title: path ? `Wrote ${path}` : "Wrote a file", code: null };
    case "edit_file":
    case "Edit":
    case "MultiEdit":
    case "edit":
    case "replace":
      return { title: path ? `Edited ${path}` : "Edited a file", code: null };
    case "run_command":
    case "Bash":
    case "exec_command":
    case "shell":
    case "bash":
    case "run_shell_command":
      return { title: "Ran a command", code: text(args, "command", "cmd") || null };
    case "finish":
      return { title: "Said the task is done", code: null };
    default: {
      const lines = Object.entries(args)
        .filter(([, v]) => typeof v === "string" || typeof v === "number" || typeof v === "boolean")
        .map(([k, v]) => `${k}: ${String(v)}`);
      return { title: `Used ${tool}`, code: lines.length ? lines.join("\n") : null };
    }
  }
}

/** "3 minutes" / "42 seconds", for how long something ran. */
export function durationText(from: string, to: string | null): string {
  const end = to ? Date.parse(to) : Date.now();
  const secs = Math.max(0, Math.round((end - Date.parse(from)) / 1000));
  if (secs < 60) return `${secs} second${secs === 1 ? "" : "s"}`;
  const mins = Math.round(secs / 60);
  return `${mins} minute${mins === 1 ? "" : "s"}`;
}

/** The short form of a commit, as git shows it. */
export function shortCommit(commit: string): string {
  return commit.slice(0, 7);
}

/**
 * What a command printed, as the person reads it: how it ended, then its output, without the
 * sandbox's fences and empty streams.
 */
export function commandOutput(text: string): string {
  const [head, ...rest] = text.split("\n");
  const ending = head.split(" · ")[0];
  const body = rest
    .filter((line) => !/^`{3,}/.test(line.trim()))
    .filter((line) => !/^(stdout|stderr): \(empty\)$/.test(line.trim()))
    .join("\n")
    .replace(/^(stdout|stderr)( \(\d+ bytes cut\))?:$/gm, (_, stream: string, cut?: string) =>
      `${stream === "stdout" ? "It printed" : "It also printed, on its error output"}${cut ? ` (${cut.trim().slice(1, -1)})` : ""}:`,
    )
    .trim();
  const ended = ending.startsWith("exit code") ? `Finished with ${ending}` : capitalised(ending);
  return body ? `${ended}\n\n${body}` : ended;
}

function capitalised(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** Tools whose result only repeats what the step already says when it worked. */
export const quietWhenDone = new Set(["edit_file", "write_file", "Edit", "Write", "MultiEdit", "finish"]);

/** A count of tokens as a person reads it: "12,345 tokens". */
export function tokensText(n: number): string {
  return `${n.toLocaleString("en-US")} token${n === 1 ? "" : "s"}`;
}

/** Money as a person reads it: "$0.42"; under a cent, "less than a cent". */
export function dollarsText(usd: number): string {
  if (usd > 0 && usd < 0.005) return "less than a cent";
  return `$${usd.toFixed(2)}`;
}

/** What a session used of its model, in one sentence (Healer counted it on the way). */
export function modelUseText(use: SessionModelUse, running: boolean): string {
  const usd = use.cost_usd ?? 0;
  const verb = running ? "So far it has asked" : "It asked";
  const asked = `${verb} the model ${use.requests} time${use.requests === 1 ? "" : "s"}: ${tokensText(use.prompt_tokens)} read, ${tokensText(use.completion_tokens)} written`;
  const priced = usd > 0 || use.unpriced_tokens === 0;
  const cost = priced ? `, costing ${dollarsText(usd)}` : "";
  const unpriced = use.unpriced_tokens > 0 ? ` (the model has no price in Healer, so ${priced ? "part of it is" : "it is"} counted in tokens)` : "";
  return `${asked}${cost}${unpriced}.`;
}

/** How accepted work goes into the main branch, in the words of the task's Accept button. */
export const acceptHowWords: Record<AcceptHow, string> = {
  fast_forward: "Add its commits as they are",
  merge: "Join them with a merge commit",
  squash: "Squash them into one commit",
};
