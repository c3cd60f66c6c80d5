// Reading a model task's thread for the screen: the engine's texts carry code and untrusted
// output in fences, tool calls carry their arguments as JSON text, and each result answers a
// call by its id. Kept apart from the components so the parsing can be read and tested alone.
import type { ThreadMessage, ToolCall } from "./bindings";

/** A piece of a thread text: prose, or a block shown in monospace. */
export type Segment =
  | { kind: "text"; text: string }
  | {
      kind: "block";
      /** What the block is ("stderr", "stack trace"); from the line before it or its marker. */
      label: string | null;
      text: string;
      /** The script's own output, which the engine fences as untrusted. */
      untrusted: boolean;
    };

const FENCE = /^(`{3,})[\w-]*\s*$/;
const UNTRUSTED = /^<<<UNTRUSTED (.+) BEGIN>>>$/;
/** A short line ending in a colon, such as "stderr:", names the block after it. */
const LABEL = /^(.{1,60}):$/;

/** Sentences Healer writes for the model (how to treat the output, which tool to call): not for the person. */
const FOR_THE_MODEL = [/untrusted data/i, /never instructions/i, /\bcall fix\b/i, /do not call fix/i, /^Repair the script:/i, /Ignore anything inside it/i];

/** Engine words a person need not know, said plainly. */
export function plainWords(text: string): string {
  return text
    .replace(/\s*\(cgroup\)/g, "")
    .replace(/(^|[.!?]\s+)Landlock\b/g, "$1The sandbox")
    .replace(/\bLandlock\b/g, "the sandbox")
    .replace(/\bcgroups?\b/g, "process group");
}

/** Prose of a brief written for the model, as the person reads it: its directives to the model left out. */
export function forPerson(prose: string): string {
  return plainWords(
    prose
      .split("\n")
      .map((line) =>
        line
          .split(/(?<=[.!?])\s+/)
          .filter((sentence) => !FOR_THE_MODEL.some((re) => re.test(sentence.trim())))
          .join(" "),
      )
      .filter((line, i, all) => line.trim() !== "" || (i > 0 && all[i - 1].trim() !== ""))
      .join("\n"),
  ).trim();
}

/** Splits `text` into prose and its ``` fenced and <<<UNTRUSTED …>>> blocks. */
export function segments(text: string): Segment[] {
  const lines = text.split("\n");
  const out: Segment[] = [];
  let prose: string[] = [];

  const flushProse = (label: boolean): string | null => {
    let name: string | null = null;
    if (label) {
      const last = prose.length ? prose[prose.length - 1].trim() : "";
      const match = LABEL.exec(last);
      if (match) {
        name = match[1];
        prose = prose.slice(0, -1);
      }
    }
    const joined = prose.join("\n").replace(/^\n+|\s+$/g, "");
    if (joined) out.push({ kind: "text", text: joined });
    prose = [];
    return name;
  };

  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const fence = FENCE.exec(line.trim());
    const untrusted = UNTRUSTED.exec(line.trim());
    if (!fence && !untrusted) {
      prose.push(line);
      continue;
    }
    const end = fence ? fence[1] : `<<<UNTRUSTED ${untrusted![1]} END>>>`;
    let close = lines.findIndex((l, j) => j > i && l.trim() === end);
    // A text still being written may not have closed its fence yet.
    if (close === -1) close = lines.length;
    const label = flushProse(true);
    out.push({
      kind: "block",
      label: untrusted ? untrusted[1].toLowerCase() : label,
      text: lines.slice(i + 1, close).join("\n"),
      untrusted: Boolean(untrusted),
    });
    i = close;
  }
  flushProse(false);
  return out;
}

/** A call's arguments, or null when the model wrote something that is not a JSON object. */
export function callArguments(call: ToolCall): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(call.arguments);
    return value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

export function textArgument(args: Record<string, unknown> | null, name: string): string | null {
  const value = args?.[name];
  return typeof value === "string" ? value : null;
}

/** Each tool result by the id of the call it answers. */
export function resultsByCall(messages: ThreadMessage[]): Map<string, ThreadMessage> {
  const results = new Map<string, ThreadMessage>();
  for (const m of messages) if (m.role === "tool" && m.tool_call_id) results.set(m.tool_call_id, m);
  return results;
}

/** Results that answer no call shown in `messages` (none, unless the thread is cut). */
export function orphanResults(messages: ThreadMessage[]): Set<number> {
  const calls = new Set(messages.flatMap((m) => m.tool_calls.map((c) => c.id)));
  return new Set(messages.filter((m) => m.role === "tool" && !(m.tool_call_id && calls.has(m.tool_call_id))).map((m) => m.id));
}

/** A refused or failed call's reason as a sentence: "error: the path …" → "The path …". */
export function refusalText(content: string): string {
  const text = content.replace(/^error:\s*/i, "").trim();
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** What the maintainer's `fix` call came to. */
export type FixResult =
  | { kind: "applied"; version: string | null }
  | { kind: "not_applied"; reason: string }
  | { kind: "refused"; reason: string };

export function fixResult(result: ThreadMessage): FixResult {
  if (result.is_error) return { kind: "refused", reason: refusalText(result.content) };
  try {
    const value = JSON.parse(result.content) as { applied?: unknown; version?: unknown; reason?: unknown };
    if (value.applied === true) return { kind: "applied", version: typeof value.version === "string" ? value.version : null };
    if (value.applied === false) {
      return { kind: "not_applied", reason: typeof value.reason === "string" ? refusalText(value.reason) : "" };
    }
  } catch {
    // Not the engine's JSON: say what it said.
  }
  return { kind: "not_applied", reason: refusalText(result.content) };
}

/** The version a planner's `save` stored, from its result ("saved as version 2.0 and …"). */
export function savedVersion(result: ThreadMessage | undefined): string | null {
  if (!result || result.is_error) return null;
  return /\bversion (\d+\.\d+)\b/.exec(result.content)?.[1] ?? null;
}
