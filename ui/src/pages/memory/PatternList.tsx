import type { Pattern } from "../../bindings";
import { EmptyState } from "../../components/EmptyState";
import { ChevronRightIcon, MemoryIcon } from "../../components/icons";
import { InlineError } from "../../components/InlineError";
import { SkeletonList } from "../../components/Loading";
import { usePatterns } from "../../memoryQueries";
import { errorTypeLabel, firstLine, fixesText, fixesTone, seenText } from "../../memoryText";
import { fullTime, relativeTime, useNow } from "../../time";
import { memoryHref } from "../../usePage";

function PatternRow({ pattern, now }: { pattern: Pattern; now: number }) {
  const line = firstLine(pattern);
  return (
    <li>
      <a
        className="pattern-row"
        href={memoryHref(pattern.signature)}
        data-testid="pattern-row"
        data-signature={pattern.signature}
      >
        <span className="pattern-main">
          <span className="pattern-type">{errorTypeLabel(pattern)}</span>
          <span className="pattern-line" title={line}>
            {line}
          </span>
        </span>
        <span className="pattern-meta">
          <span className="pattern-seen" data-testid="pattern-seen">
            {seenText(pattern.count)}
            <span aria-hidden="true"> · </span>
            last{" "}
            <time dateTime={pattern.last_seen} title={fullTime(pattern.last_seen)}>
              {relativeTime(pattern.last_seen, now)}
            </time>
          </span>
          <span className={`status-text tone-${fixesTone(pattern)}`} data-testid="pattern-fixes">
            {fixesText(pattern)}
          </span>
        </span>
        <ChevronRightIcon size={16} />
      </a>
    </li>
  );
}

export function PatternList() {
  const patterns = usePatterns();
  const now = useNow();
  if (patterns.isPending) return <SkeletonList rows={4} label="Loading what Healer remembers" />;
  if (patterns.isError) {
    return <InlineError lead="Memory couldn't be loaded." error={patterns.error} onRetry={() => void patterns.refetch()} />;
  }
  if (patterns.data.length === 0) {
    return (
      <div className="card">
        <EmptyState icon={<MemoryIcon size={28} />} title="Nothing remembered yet">
          <p>
            When a repair works, Healer remembers it: the same error next time is fixed at once, without asking a
            model.
          </p>
          <p>Each error Healer sees is listed here, with how often it happened and every repair tried for it.</p>
        </EmptyState>
      </div>
    );
  }
  return (
    <ul className="card list pattern-list" aria-label="Errors Healer remembers, most recent first">
      {patterns.data.map((pattern) => (
        <PatternRow key={pattern.signature} pattern={pattern} now={now} />
      ))}
    </ul>
  );
}
