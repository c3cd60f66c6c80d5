import type { ReactNode } from "react";
import { toApiError } from "../../api";
import type { PatternDetail } from "../../bindings";
import { ArrowLeftIcon } from "../../components/icons";
import { InlineError } from "../../components/InlineError";
import { SkeletonList } from "../../components/Loading";
import { usePackageFixes, usePattern } from "../../memoryQueries";
import { errorTypeLabel, fixesText, fixesTone, seenText } from "../../memoryText";
import { fullTime, relativeTime, useNow } from "../../time";
import { memoryHref } from "../../usePage";
import { PackageFixList } from "./PackageFixList";
import { PatternFixCard } from "./PatternFixCard";

function BackToMemory() {
  return (
    <a className="back-link" href={memoryHref()}>
      <ArrowLeftIcon size={16} />
      Memory
    </a>
  );
}

function Fact({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className="header-fact">
      <dt>{label}</dt>
      <dd>{children}</dd>
    </div>
  );
}

function When({ iso, now }: { iso: string; now: number }) {
  return (
    <time dateTime={iso} title={fullTime(iso)}>
      {relativeTime(iso, now)}
    </time>
  );
}

function Loaded({ detail }: { detail: PatternDetail }) {
  const { pattern, fixes } = detail;
  const now = useNow();
  const packages = usePackageFixes(pattern.signature).data ?? [];
  return (
    <div className="pattern-detail" data-testid="pattern-detail" data-signature={pattern.signature}>
      <header className="workflow-header">
        <BackToMemory />
        <h1 className="page-title pattern-title">{errorTypeLabel(pattern)}</h1>
        <p className="page-description">
          {seenText(pattern.count)}. <span className={`status-text tone-${fixesTone(pattern)}`}>{fixesText(pattern)}</span>.
        </p>
      </header>

      <section className="card pattern-card" aria-labelledby="pattern-text-title">
        <h2 className="section-title" id="pattern-text-title">
          The error, as Healer recognises it
        </h2>
        <pre className="pattern-text" data-testid="pattern-text" tabIndex={0}>
          {pattern.normalized}
        </pre>
        <p className="field-hint">
          Numbers, file paths and times are replaced by placeholders such as &lt;n&gt;, so the same problem is
          recognised each time it happens.
        </p>
        <dl className="header-facts pattern-facts">
          <Fact label="First seen">
            <When iso={pattern.first_seen} now={now} />
          </Fact>
          <Fact label="Last seen">
            <When iso={pattern.last_seen} now={now} />
          </Fact>
          <Fact label="Times seen">{pattern.count}</Fact>
          <Fact label="Signature">
            <code className="signature" data-testid="pattern-signature" title="A short fingerprint of the error text">
              {pattern.signature}
            </code>
          </Fact>
        </dl>
      </section>

      <PackageFixList list={packages} now={now} />

      {(fixes.length > 0 || packages.length === 0) && <h2 className="section-label">Fixes tried, newest first</h2>}
      {fixes.length === 0 ? (
        packages.length === 0 && (
        <p className="muted tab-note">
          No repair has been tried for this error yet. When one is, and the next run succeeds, Healer uses it again
          right away if the error comes back.
        </p>
        )
      ) : (
        <ol className="pattern-fixes" aria-label="Fixes tried, newest first">
          {fixes.map((fix) => (
            <PatternFixCard key={fix.id} fix={fix} now={now} />
          ))}
        </ol>
      )}
    </div>
  );
}

/** One error Healer remembers, with every fix tried for it. */
export function PatternDetailView({ signature }: { signature: string }) {
  const detail = usePattern(signature);
  if (detail.isPending) {
    return (
      <>
        <BackToMemory />
        <SkeletonList rows={3} label="Loading the error" />
      </>
    );
  }
  if (detail.isError) {
    const error = toApiError(detail.error);
    return (
      <>
        <BackToMemory />
        {error.code === "not_found" ? (
          <div className="card gone" data-testid="pattern-gone">
            <h1 className="section-title">Healer doesn't remember this error</h1>
            <p className="muted">Its signature is not in Healer's memory. Go back to the list to see the errors it knows.</p>
          </div>
        ) : (
          <InlineError lead="This error couldn't be loaded." error={error} onRetry={() => void detail.refetch()} />
        )}
      </>
    );
  }
  return <Loaded detail={detail.data} />;
}
