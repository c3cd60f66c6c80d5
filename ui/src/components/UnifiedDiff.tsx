import { diffStats, parseUnifiedDiff, type DiffLine } from "../diffText";
import { plural } from "../workflowText";

const sign: Record<"context" | "removed" | "added", string> = { context: " ", removed: "-", added: "+" };

/** Said before a changed line, for people who do not see its colour or sign. */
const spoken: Record<"context" | "removed" | "added", string> = { context: "", removed: "Removed: ", added: "Added: " };

function Line({ line }: { line: DiffLine }) {
  if (line.kind === "hunk" || line.kind === "note") {
    return (
      <div className={`diff-line diff-${line.kind}`} data-line={line.kind}>
        <span className="diff-gap">{line.text}</span>
      </div>
    );
  }
  return (
    <div className={`diff-line diff-${line.kind}`} data-line={line.kind}>
      <span className="diff-number" aria-hidden="true">
        {line.old ?? ""}
      </span>
      <span className="diff-number" aria-hidden="true">
        {line.new ?? ""}
      </span>
      <span className="diff-sign" aria-hidden="true">
        {sign[line.kind]}
      </span>
      <span className="diff-code">
        {spoken[line.kind] && <span className="visually-hidden">{spoken[line.kind]}</span>}
        {line.text || " "}
      </span>
    </div>
  );
}

/**
 * A unified diff as a person reads it: removed lines in red with -, added lines in green with +,
 * unchanged lines around them, and the line numbers before and after.
 */
export function UnifiedDiff({ diff, label = "What changed" }: { diff: string; label?: string }) {
  const lines = parseUnifiedDiff(diff);
  if (!lines.some((l) => l.kind === "added" || l.kind === "removed")) {
    return <p className="muted diff-none">This fix changed nothing that can be shown.</p>;
  }
  const { added, removed } = diffStats(lines);
  return (
    <figure className="unified-diff" data-testid="unified-diff">
      <figcaption className="unified-diff-caption">
        <span>{label}</span>
        {added > 0 && <span className="diff-stat diff-stat-added">{plural(added, "line")} added</span>}
        {removed > 0 && <span className="diff-stat diff-stat-removed">{plural(removed, "line")} removed</span>}
      </figcaption>
      <div className="unified-diff-lines" tabIndex={0} role="group" aria-label={label}>
        {lines.map((line, i) => (
          <Line key={i} line={line} />
        ))}
      </div>
    </figure>
  );
}
