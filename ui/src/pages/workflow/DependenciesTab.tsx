import { useId } from "react";
import type { Dependencies, Runtime } from "../../bindings";
import { InlineError } from "../../components/InlineError";
import { SkeletonList, Spinner } from "../../components/Loading";
import { RelativeTime } from "../../components/RelativeTime";
import { languageOf, stateSentence, versionWords } from "../../packageText";
import { useDependencies, useReinstallDependencies } from "../../queries";
import { useNow } from "../../time";
import { toast } from "../../toasts";

const stateTone: Record<Dependencies["state"], string> = {
  machine: "neutral",
  not_installed: "working",
  ready: "good",
  outdated: "working",
  failed: "bad",
};

const stateLabel: Record<Dependencies["state"], string> = {
  machine: "Uses this machine",
  not_installed: "Not installed yet",
  ready: "Installed",
  outdated: "Changes before the next run",
  failed: "Installation failed",
};

function PackageTable({ deps }: { deps: Dependencies }) {
  return (
    <table className="package-table" data-testid="package-table">
      <thead>
        <tr>
          <th scope="col">Package</th>
          <th scope="col">Asks for</th>
          <th scope="col">Installed</th>
        </tr>
      </thead>
      <tbody>
        {deps.packages.map((p) => (
          <tr key={p.name} data-testid="package-row" data-package={p.name}>
            <td className="package-name">{p.name}</td>
            <td>{versionWords(p.wanted)}</td>
            <td>{p.installed ?? <span className="muted">not yet</span>}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function Details({ summary, children, open = false, testId }: { summary: string; children: string; open?: boolean; testId: string }) {
  return (
    <details className="package-details" open={open} data-testid={testId}>
      <summary>{summary}</summary>
      <pre className="log-text" tabIndex={0}>
        {children}
      </pre>
    </details>
  );
}

/** The workflow's own packages: what its version declares, what is installed, and how it went. */
export function DependenciesTab({ workflowId, runtime }: { workflowId: number; runtime: Runtime }) {
  const deps = useDependencies(workflowId);
  const reinstall = useReinstallDependencies(workflowId);
  const now = useNow();
  const headingId = useId();
  if (deps.isPending) return <SkeletonList rows={2} label="Loading the packages" />;
  if (deps.isError) {
    return <InlineError lead="The packages couldn't be loaded." error={deps.error} onRetry={() => void deps.refetch()} />;
  }
  const d = deps.data;
  const own = d.ecosystem !== null;
  const installable = own && d.packages.length > 0;
  const action = d.state === "ready" || d.state === "failed" ? "Reinstall" : "Install now";

  return (
    <section className="card dependencies-card" aria-labelledby={headingId} data-testid="dependencies" data-state={d.state}>
      <div className="dependencies-head">
        <h2 className="section-title" id={headingId}>
          Packages
        </h2>
        <span className={`status-badge tone-${stateTone[d.state]}`} data-testid="dependencies-state">
          <span className="status-dot" aria-hidden="true" />
          {stateLabel[d.state]}
        </span>
        {installable && (
          <button
            type="button"
            className="button button-small"
            data-testid="reinstall"
            disabled={reinstall.isPending}
            title="Install the packages again into a fresh environment"
            onClick={() =>
              reinstall.mutate(undefined, {
                onSuccess: (after) =>
                  toast(after.state === "ready" ? "The packages were installed again." : "The installation failed; its log says why."),
              })
            }
          >
            {reinstall.isPending && <Spinner />}
            {reinstall.isPending ? "Installing…" : action}
          </button>
        )}
      </div>
      <p className="dependencies-state">{stateSentence(d, runtime)}</p>
      {reinstall.isError && <InlineError lead="The packages couldn't be installed." error={reinstall.error} />}

      {d.error && (
        <div className="syntax-problem" role="alert" data-testid="dependencies-error">
          <strong>{d.ecosystem === "node" ? "npm" : "pip"} said:</strong>
          <pre>{d.error}</pre>
        </div>
      )}

      {d.packages.length > 0 ? (
        <PackageTable deps={d} />
      ) : (
        own && (
          <p className="muted">
            When a script imports a package, Healer offers it as you save; if a run still finds one missing, Healer
            installs it by itself and keeps the change as a new version.
          </p>
        )
      )}

      {own && (d.interpreter || d.built_at) && (
        <dl className="dependencies-facts">
          {d.interpreter && (
            <>
              <dt>{languageOf(runtime)}</dt>
              <dd>{d.interpreter}</dd>
            </>
          )}
          {d.built_at && (
            <>
              <dt>Last installed</dt>
              <dd>
                <RelativeTime iso={d.built_at} now={now} />
              </dd>
            </>
          )}
          {d.state !== "machine" && (
            <>
              <dt>Folder</dt>
              <dd className="path">{d.location}</dd>
            </>
          )}
        </dl>
      )}

      {d.lock.length > 0 && (
        <Details summary={`Everything installed, with exact versions (${d.lock.length})`} testId="dependencies-lock">
          {d.lock.join("\n")}
        </Details>
      )}
      {d.log && (
        <Details summary="What the last installation printed" open={d.state === "failed"} testId="dependencies-log">
          {d.log}
        </Details>
      )}
    </section>
  );
}
