import { useRef, useState, type KeyboardEvent } from "react";
import { toApiError } from "../../api";
import type { ScriptVersion, Version, WorkflowDetail } from "../../bindings";
import { InlineError } from "../../components/InlineError";
import { SkeletonList } from "../../components/Loading";
import { isOpenRun, useRuns, useWorkflow } from "../../queries";
import { UnsavedGuard } from "../../components/UnsavedGuard";
import { navigate, routeFromHash, workflowHref, workflowTabs, type WorkflowTab } from "../../usePage";
import { versionText } from "../../workflowText";
import { AutoFixTab } from "./AutoFixTab";
import { ChatTab } from "./ChatTab";
import { RunsTab } from "./RunsTab";
import { ScriptTab, type Draft } from "./ScriptTab";
import { VersionsTab, type Comparison } from "./VersionsTab";
import { BackLink, WorkflowHeader } from "./WorkflowHeader";

const tabLabels: Record<WorkflowTab, string> = {
  runs: "Runs",
  autofix: "Auto-fix",
  versions: "Versions",
  script: "Script",
  chat: "Chat",
};

/** What a tab opens at: a run, an auto-fix task; and whether the chat takes the cursor. */
type TabTarget = { item: number | null; focus: boolean };

function Tabs({ id, current, healing }: { id: number; current: WorkflowTab; healing: boolean }) {
  const refs = useRef<Partial<Record<WorkflowTab, HTMLButtonElement | null>>>({});

  // Arrow keys move between tabs, as in any tab strip.
  function onKeyDown(event: KeyboardEvent) {
    const index = workflowTabs.indexOf(current);
    const step = event.key === "ArrowRight" ? 1 : event.key === "ArrowLeft" ? -1 : 0;
    if (!step) return;
    event.preventDefault();
    const next = workflowTabs[(index + step + workflowTabs.length) % workflowTabs.length];
    navigate(workflowHref(id, next));
    refs.current[next]?.focus();
  }

  return (
    <div className="tabs" role="tablist" aria-label="Workflow" onKeyDown={onKeyDown}>
      {workflowTabs.map((tab) => (
        <button
          key={tab}
          type="button"
          role="tab"
          id={`tab-${tab}`}
          className="tab"
          aria-selected={tab === current}
          aria-controls={`panel-${tab}`}
          tabIndex={tab === current ? 0 : -1}
          data-testid={`tab-${tab}`}
          ref={(element) => {
            refs.current[tab] = element;
          }}
          onClick={() => navigate(workflowHref(id, tab))}
        >
          {tabLabels[tab]}
          {tab === "autofix" && healing && <span className="tab-live" title="An auto-fix is working" aria-hidden="true" />}
        </button>
      ))}
    </div>
  );
}

function LoadedWorkflow({ detail, tab, target }: { detail: WorkflowDetail; tab: WorkflowTab; target: TabTarget }) {
  const id = detail.workflow.id;
  const runs = useRuns(id);
  const newest = runs.data?.pages[0]?.[0];
  const busy = newest !== undefined && isOpenRun(newest.status);
  // The script being edited outlives a visit to another tab.
  const [draft, setDraft] = useState<Draft | null>(null);
  const [comparison, setComparison] = useState<Comparison | null>(null);
  const [justSaved, setJustSaved] = useState<Version | null>(null);

  function onScriptSaved(before: ScriptVersion, saved: ScriptVersion) {
    setDraft(null);
    setComparison({ from: versionText(before.version), to: versionText(saved.version) });
    setJustSaved(saved.version);
    navigate(workflowHref(id, "versions"));
  }

  return (
    <>
      <WorkflowHeader
        detail={detail}
        busy={busy}
        unsaved={draft !== null}
        onRunStarted={() => navigate(workflowHref(id, "runs"))}
      />
      <Tabs id={id} current={tab} healing={detail.workflow.healing} />
      <div className="tab-panel" role="tabpanel" id={`panel-${tab}`} aria-labelledby={`tab-${tab}`}>
        {tab === "runs" && <RunsTab workflowId={id} runs={runs} openRun={target.item} />}
        {tab === "autofix" && <AutoFixTab workflowId={id} runtime={detail.workflow.runtime} taskId={target.item} />}
        {tab === "versions" && (
          <VersionsTab
            workflowId={id}
            runtime={detail.workflow.runtime}
            comparison={comparison}
            onCompare={setComparison}
            justSaved={justSaved}
          />
        )}
        {tab === "script" && <ScriptTab detail={detail} draft={draft} onDraft={setDraft} onSaved={onScriptSaved} />}
        {tab === "chat" && <ChatTab workflowId={id} focus={target.focus} />}
      </div>
      <UnsavedGuard
        dirty={draft !== null}
        what="your edits to the script"
        stays={(hash) => {
          const route = routeFromHash(hash);
          return route.page === "workflows" && route.view === "workflow" && route.id === id;
        }}
        onDiscard={() => setDraft(null)}
      />
    </>
  );
}

export function WorkflowPage({ id, tab, item = null, focus = false }: { id: number; tab: WorkflowTab } & Partial<TabTarget>) {
  const detail = useWorkflow(id);

  let body;
  if (detail.isPending) {
    body = (
      <>
        <BackLink />
        <SkeletonList rows={3} label="Loading the workflow" />
      </>
    );
  } else if (detail.isError) {
    const error = toApiError(detail.error);
    body = (
      <>
        <BackLink />
        {error.code === "not_found" ? (
          <div className="card gone">
            <h1 className="section-title">This workflow isn't here any more</h1>
            <p className="muted">It may have been deleted. Its runs and versions went with it.</p>
          </div>
        ) : (
          <InlineError lead="The workflow couldn't be loaded." error={error} onRetry={() => void detail.refetch()} />
        )}
      </>
    );
  } else {
    body = <LoadedWorkflow detail={detail.data} tab={tab} target={{ item, focus }} />;
  }

  return (
    <section className="page workflow-page" data-testid="page-workflow" data-workflow-id={id}>
      {body}
    </section>
  );
}
