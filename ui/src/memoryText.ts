// Words a person reads about Healer's memory of errors and the fixes tried for them.
import type { FixVerdict, Pattern } from "./bindings";
import type { Tone } from "./eventText";
import { plural } from "./workflowText";

/** The error's kind as the script reported it ("KeyError"), or a plain stand-in. */
export function errorTypeLabel(pattern: Pattern): string {
  return pattern.error_type?.trim() || "Error without a name";
}

/**
 * The first line of the normalised text, without the error type it starts with when that is
 * shown beside it already ("KeyError: 'total'" → "'total'").
 */
export function firstLine(pattern: Pattern): string {
  const line = pattern.normalized.split("\n", 1)[0].trim();
  const type = pattern.error_type?.trim();
  if (type && line.startsWith(`${type}: `)) {
    const rest = line.slice(type.length + 2).trim();
    if (rest) return rest;
  }
  return line;
}

/** "Seen once", "Seen 14 times". */
export function seenText(count: number): string {
  return count === 1 ? "Seen once" : `Seen ${count} times`;
}

/**
 * "No fixes yet", "1 fix, 1 worked", "3 fixes, 2 worked", "1 fix being checked": a fix whose
 * re-run has not said yet is neither worked nor failed.
 */
export function fixesText(pattern: Pattern): string {
  if (pattern.fixes === 0) return "No fixes yet";
  const settled = pattern.fixes - pattern.pending;
  const checking = pattern.pending > 0 ? `${plural(pattern.pending, "fix", "fixes")} being checked` : "";
  if (settled === 0) return checking;
  const said = `${plural(settled, "fix", "fixes")}, ${pattern.successes} worked`;
  return checking ? `${said}; ${pattern.pending} more being checked` : said;
}

export function fixesTone(pattern: Pattern): Tone {
  if (pattern.successes > 0) return "good";
  return pattern.fixes - pattern.pending > 0 ? "bad" : "neutral";
}

export const verdictLabel: Record<FixVerdict, string> = {
  pending: "Waiting for its re-run",
  success: "Worked",
  failed: "Failed",
};

export const verdictTone: Record<FixVerdict, Tone> = {
  pending: "working",
  success: "good",
  failed: "bad",
};

export const verdictHint: Record<FixVerdict, string> = {
  pending: "The workflow runs again with this fix; its result decides whether Healer trusts it",
  success: "The run after this fix succeeded. Healer applies it at once if the same error comes back",
  failed: "The run after this fix still failed, or the fix was undone. Healer will not try it again",
};
