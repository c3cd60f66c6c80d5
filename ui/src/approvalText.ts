// Words a person reads about what an agent asked: what it wants, why it asked, how it was answered.
import type { AgentAsk, AgentKind, AgentRequest, ApprovalSettings, Preset } from "./bindings";
import { agentLabel } from "./projectText";

/**
 * Text an agent wrote, shown so that what runs is what is seen: control characters and the
 * ones that reorder or hide text (bidirectional overrides, zero-width marks) are shown as
 * their code, never acted on by the page.
 */
export function visible(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]/g, (c) =>
    `⟨U+${c.codePointAt(0)?.toString(16).toUpperCase().padStart(4, "0")}⟩`,
  );
}

/** "Claude Code", from how a question names its agent. */
export function askingAgent(ask: AgentAsk): string {
  return agentLabel[ask.agent as AgentKind] ?? "The agent";
}

/** What it wants, as the lead of the dialog: "wants to run this command". */
export function wantsLead(request: AgentRequest): string {
  switch (request.kind) {
    case "command":
      return "wants to run this command";
    case "edit":
      return "wants to change this file";
    case "read":
      return "wants to read this file";
    case "tool":
      return `wants to use its tool ${request.name}`;
  }
}

/** What it wants, in a line: the command, or the file. */
export function wantsLine(request: AgentRequest): string {
  switch (request.kind) {
    case "command":
      return request.command;
    case "edit":
    case "read":
      return request.path;
    case "tool":
      return request.detail || request.name;
  }
}

/** "It asks because it reaches the network (curl)." */
export function whySentence(ask: AgentAsk): string {
  return `It asks because ${ask.why.replace(/\.$/, "")}.`;
}

/** "14:32" — a time of today in 24 hours. */
function clock(iso: string): string {
  return new Date(Date.parse(iso)).toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit", hourCycle: "h23" });
}

/** What happens when nobody answers: "If nobody answers by 14:32 (in 28 minutes), it is denied." */
export function deadlineSentence(ask: AgentAsk, now: number): string {
  const left = Math.max(0, Date.parse(ask.deadline_at) - now);
  const minutes = Math.round(left / 60_000);
  const inWords = minutes <= 0 ? "any moment now" : minutes === 1 ? "in a minute" : `in ${minutes} minutes`;
  return `If nobody answers by ${clock(ask.deadline_at)} (${inWords}), it is denied — never allowed.`;
}

/** How a question ended, for the session's page. */
export function answerWords(ask: AgentAsk): string {
  switch (ask.status) {
    case "waiting":
      return "Waiting for your answer";
    case "allowed":
      return ask.scope === "task" ? "Allowed for the rest of this task" : ask.scope === "project" ? "Always allowed in this project" : "Allowed once";
    case "denied":
      return ask.reason ? `Denied: “${ask.reason}”` : "Denied";
    case "expired":
      return "Denied: nobody answered in time";
  }
}

export const presetLabel: Record<Preset, string> = {
  ask_risky: "Ask before anything risky",
  ask_every: "Ask before every command",
  never_ask: "Never ask",
};

export const presetHint: Record<Preset, string> = {
  ask_risky:
    "Edits inside the task's working copy and the project's checks run freely. Reaching the network, installing packages, deleting or writing outside the working copy, running as another user, or a command not on the list below asks you first.",
  ask_every: "Every command the agent wants to run asks you first. Edits inside the task's working copy still run freely.",
  never_ask: "The agent runs anything it wants on this computer, without asking you. You accept that risk for this project.",
};

/** "30 minutes", "1 hour". */
export function limitWords(secs: number): string {
  if (secs >= 3600 && secs % 3600 === 0) return secs === 3600 ? "1 hour" : `${secs / 3600} hours`;
  if (secs >= 60 && secs % 60 === 0) return secs === 60 ? "1 minute" : `${secs / 60} minutes`;
  return `${secs} seconds`;
}

/** The project's approvals in a sentence, for its page. */
export function approvalsSummary(settings: ApprovalSettings): string {
  if (settings.preset === "never_ask") return "The agent never asks: it may run anything on this computer.";
  const what = settings.preset === "ask_every" ? "before every command" : "before anything risky";
  return `The agent asks you ${what}; a question nobody answers within ${limitWords(settings.time_limit_secs ?? 1800)} is denied.`;
}
