import { useId } from "react";
import type { Runtime, ScriptVersion, Version } from "../../bindings";
import { InlineError } from "../../components/InlineError";
import { SkeletonList, Spinner } from "../../components/Loading";
import { VersionDiff } from "../../components/LazyCode";
import { useRestoreVersion, useVersions } from "../../queries";
import { toast } from "../../toasts";
import { fullTime, relativeTime, useNow } from "../../time";
import { authorLabel, versionText } from "../../workflowText";

/** Two versions to compare, by their text ("1.1"). */
export type Comparison = { from: string; to: string };

/** The active version against the one before it; the newest two when none is active. */
function defaultComparison(versions: ScriptVersion[]): Comparison | null {
  if (versions.length < 2) return null;
  const activeIndex = versions.findIndex((v) => v.active);
  const to = activeIndex > 0 ? activeIndex : versions.length - 1;
  return { from: versionText(versions[to - 1].version), to: versionText(versions[to].version) };
}

function byText(versions: ScriptVersion[], text: string): ScriptVersion | undefined {
  return versions.find((v) => versionText(v.version) === text);
}

/** Selecting a version compares it with the one before it (the first with the one after it). */
function comparisonFor(versions: ScriptVersion[], index: number): Comparison {
  const other = index > 0 ? index - 1 : index + 1;
  const [from, to] = other < index ? [other, index] : [index, other];
  return { from: versionText(versions[from].version), to: versionText(versions[to].version) };
}

function VersionItem({
  version,
  selected,
  onSelect,
  now,
}: {
  version: ScriptVersion;
  selected: boolean;
  onSelect: () => void;
  now: number;
}) {
  const text = versionText(version.version);
  return (
    <li>
      <button
        type="button"
        className={selected ? "version-item selected" : "version-item"}
        data-testid="version-item"
        data-version={text}
        data-active={String(version.active)}
        aria-pressed={selected}
        onClick={onSelect}
        title={`Show what changed in version ${text}`}
      >
        <span className="version-number">{text}</span>
        <span className="version-text">
          <span className="version-comment">{version.change_comment || "No comment"}</span>
          <span className="version-meta">
            <span className={`version-author author-${version.author.kind}`}>{authorLabel(version.author)}</span>
            <span aria-hidden="true">·</span>
            <time dateTime={version.created_at} title={fullTime(version.created_at)}>
              {relativeTime(version.created_at, now)}
            </time>
          </span>
        </span>
        {version.active && (
          <span className="status-badge tone-good active-version" title="This version runs">
            <span className="status-dot" aria-hidden="true" />
            Active
          </span>
        )}
      </button>
    </li>
  );
}

function VersionSelect({
  label,
  value,
  versions,
  onChange,
}: {
  label: string;
  value: string;
  versions: ScriptVersion[];
  onChange: (text: string) => void;
}) {
  const id = useId();
  return (
    <span className="compare-select">
      <label htmlFor={id}>{label}</label>
      <select id={id} className="select" value={value} onChange={(e) => onChange(e.target.value)}>
        {versions.map((v) => {
          const text = versionText(v.version);
          return (
            <option key={v.id} value={text}>
              {text}
              {v.active ? " (active)" : ""}
            </option>
          );
        })}
      </select>
    </span>
  );
}

/** One click brings an earlier version back, as the next major ("restored from 1.0"). */
function RestoreButton({ workflowId, version, onRestored }: { workflowId: number; version: ScriptVersion; onRestored: (v: ScriptVersion) => void }) {
  const restore = useRestoreVersion(workflowId);
  if (version.active) return null;
  const text = versionText(version.version);
  return (
    <>
      <button
        type="button"
        className="button button-small"
        data-testid="restore-version"
        data-version={text}
        disabled={restore.isPending}
        onClick={() =>
          restore.mutate(version.version, {
            onSuccess: (saved) => {
              toast(`Version ${text} is back, as version ${versionText(saved.version)}. It runs from now on.`);
              onRestored(saved);
            },
          })
        }
      >
        {restore.isPending && <Spinner />}
        Restore {text}
      </button>
      {restore.isError && <InlineError lead={`Version ${text} couldn't be restored.`} error={restore.error} />}
    </>
  );
}

function DiffCard({
  workflowId,
  versions,
  comparison,
  runtime,
  onCompare,
}: {
  workflowId: number;
  versions: ScriptVersion[];
  comparison: Comparison;
  runtime: Runtime;
  onCompare: (comparison: Comparison) => void;
}) {
  const from = byText(versions, comparison.from);
  const to = byText(versions, comparison.to);
  if (!from || !to) return null;
  const side = (v: ScriptVersion) => `${versionText(v.version)} · ${authorLabel(v.author)}${v.active ? " · active" : ""}`;
  return (
    <section className="card diff-card" aria-labelledby="diff-title">
      <div className="diff-toolbar">
        <h2 className="section-title" id="diff-title">
          Changes
        </h2>
        <RestoreButton
          workflowId={workflowId}
          version={to.active ? from : to}
          onRestored={(saved) => {
            const active = versions.find((v) => v.active);
            if (active) onCompare({ from: versionText(active.version), to: versionText(saved.version) });
          }}
        />
        <div className="compare-controls">
          <VersionSelect label="From" value={comparison.from} versions={versions} onChange={(v) => onCompare({ ...comparison, from: v })} />
          <span className="compare-arrow" aria-hidden="true">
            →
          </span>
          <VersionSelect label="to" value={comparison.to} versions={versions} onChange={(v) => onCompare({ ...comparison, to: v })} />
        </div>
      </div>
      <div className="diff-sides" aria-hidden="true">
        <span>{side(from)}</span>
        <span>{side(to)}</span>
      </div>
      <div className="version-diff" data-testid="version-diff" data-from={comparison.from} data-to={comparison.to}>
        {from.id === to.id ? (
          <p className="muted diff-same">Choose two different versions to see what changed.</p>
        ) : (
          <VersionDiff before={from.code} after={to.code} runtime={runtime} />
        )}
      </div>
    </section>
  );
}

export function VersionsTab({
  workflowId,
  runtime,
  comparison,
  onCompare,
  justSaved,
}: {
  workflowId: number;
  runtime: Runtime;
  comparison: Comparison | null;
  onCompare: (comparison: Comparison) => void;
  justSaved: Version | null;
}) {
  const versions = useVersions(workflowId);
  const now = useNow();
  if (versions.isPending) return <SkeletonList rows={3} label="Loading versions" />;
  if (versions.isError) {
    return <InlineError lead="The versions couldn't be loaded." error={versions.error} onRetry={() => void versions.refetch()} />;
  }

  const list = versions.data;
  const chosen =
    comparison && byText(list, comparison.from) && byText(list, comparison.to) ? comparison : defaultComparison(list);

  return (
    <>
      {/* A save is confirmed by its toast; here the new version is selected against the one before. */}
      {justSaved && <span className="visually-hidden">Version {versionText(justSaved)} is new.</span>}
      <ol className="card list version-list" aria-label="Versions, newest first">
        {list
          .map((version, index) => ({ version, index }))
          .reverse()
          .map(({ version, index }) => (
            <VersionItem
              key={version.id}
              version={version}
              now={now}
              selected={chosen?.to === versionText(version.version)}
              onSelect={() => list.length > 1 && onCompare(comparisonFor(list, index))}
            />
          ))}
      </ol>
      {chosen ? (
        <DiffCard workflowId={workflowId} versions={list} comparison={chosen} runtime={runtime} onCompare={onCompare} />
      ) : (
        <p className="muted tab-note">
          There is one version so far. Each time you save the script, or Healer repairs it, a new version is kept
          here and you can compare any two of them side by side.
        </p>
      )}
    </>
  );
}
