// A unified diff ("--- a", "+++ b", "@@ -1,3 +1,3 @@", then " ", "-" and "+" lines) read into
// lines a person can follow, each with its line number in the old and the new code.

export type DiffLine =
  | { kind: "hunk"; text: string }
  | { kind: "context" | "removed" | "added"; text: string; old: number | null; new: number | null }
  | { kind: "note"; text: string };

const HUNK = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@(.*)$/;

export function parseUnifiedDiff(diff: string): DiffLine[] {
  const lines: DiffLine[] = [];
  let oldLine = 0;
  let newLine = 0;
  let inHunk = false;
  const text = diff.endsWith("\n") ? diff.slice(0, -1) : diff;
  if (!text) return lines;
  for (const line of text.split("\n")) {
    const hunk = HUNK.exec(line);
    if (hunk) {
      oldLine = Number(hunk[1]);
      newLine = Number(hunk[2]);
      inHunk = true;
      lines.push({ kind: "hunk", text: `Around line ${newLine || 1}` });
    } else if (!inHunk) {
      // The file names before the first hunk ("--- original", "+++ modified") say nothing here.
      if (!line.startsWith("--- ") && !line.startsWith("+++ ") && line.trim()) lines.push({ kind: "note", text: line });
    } else if (line.startsWith("+")) {
      lines.push({ kind: "added", text: line.slice(1), old: null, new: newLine++ });
    } else if (line.startsWith("-")) {
      lines.push({ kind: "removed", text: line.slice(1), old: oldLine++, new: null });
    } else if (line.startsWith("\\")) {
      lines.push({ kind: "note", text: "No line break at the end of the file" });
    } else {
      lines.push({ kind: "context", text: line.slice(1), old: oldLine++, new: newLine++ });
    }
  }
  return lines;
}

/** How many lines a diff adds and removes. */
export function diffStats(lines: DiffLine[]): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  for (const line of lines) {
    if (line.kind === "added") added++;
    else if (line.kind === "removed") removed++;
  }
  return { added, removed };
}
