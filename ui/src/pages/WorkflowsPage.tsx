import { useState } from "react";
import type { WorkflowSummary } from "../bindings";
import { EmptyState } from "../components/EmptyState";
import { PlusIcon, SparkleIcon, WorkflowsIcon } from "../components/icons";
import { InlineError } from "../components/InlineError";
import { SkeletonList, Spinner } from "../components/Loading";
import { PageHeader } from "../components/PageHeader";
import { ReviewBadge } from "../components/ReviewBadge";
import { RunningBadge } from "../components/StatusBadge";
import { WorkflowStatusBadge } from "../components/WorkflowStatusBadge";
import { useLoadExamples, useProviders, useSetupSkipped, useSkipSetup, useTiers, useWorkflows } from "../queries";
import { fullTime, relativeTime, useNow } from "../time";
import { newWorkflowHref, setupHref, workflowHref } from "../usePage";
import { findWorkflows, needsYou, statusFilterLabel, statusFilters, type StatusFilter } from "../workflowFinding";
import { futureTime, runStatusLabel, runStatusTone, versionText } from "../workflowText";

const steps = [
  { title: "Runs on schedule", text: "Healer starts each workflow's script when it is due." },
  { title: "Notices what broke", text: "When a run fails, Healer works out what kind of failure it is." },
  { title: "Repairs, then tells you", text: "It applies a remedy and reports what it did in Activity and Notifications." },
];

function LastRun({ workflow, now }: { workflow: WorkflowSummary; now: number }) {
  const run = workflow.last_run;
  if (!run) return <span className="cell-empty">Not run yet</span>;
  const at = run.finished_at ?? run.started_at ?? run.queued_at;
  return (
    <>
      <span className="cell-line">
        <span className={`status-text tone-${runStatusTone[run.status]}`}>{runStatusLabel[run.status]}</span>
        <span className="cell-sep" aria-hidden="true">
          ·
        </span>
        <time dateTime={at} title={fullTime(at)}>
          {relativeTime(at, now)}
        </time>
      </span>
      <span className="cell-detail" title={run.summary || undefined}>
        {run.summary || (run.status === "queued" ? "Waiting to start" : run.status === "running" ? "In progress" : "")}
      </span>
    </>
  );
}

function NextRun({ workflow, now }: { workflow: WorkflowSummary; now: number }) {
  if (!workflow.next_run_at || workflow.status === "paused") {
    return (
      <span className="cell-empty" aria-label="No next run">
        —
      </span>
    );
  }
  return (
    <time dateTime={workflow.next_run_at} title={fullTime(workflow.next_run_at)}>
      {futureTime(workflow.next_run_at, now)}
    </time>
  );
}

function WorkflowRow({ workflow, now }: { workflow: WorkflowSummary; now: number }) {
  return (
    <li>
      <a
        className="workflow-row"
        href={workflowHref(workflow.id)}
        data-testid="workflow-row"
        data-name={workflow.name}
        data-status={workflow.status}
        data-busy={String(workflow.busy)}
        data-healing={String(workflow.healing)}
        data-review={String(workflow.review)}
      >
        <span className="cell cell-main">
          <span className="workflow-title" title={workflow.title}>
            {workflow.title}
          </span>
          <span className="cell-line">
            <WorkflowStatusBadge status={workflow.status} healing={workflow.healing} />
            {workflow.review && <ReviewBadge />}
            {workflow.busy && <RunningBadge />}
            <span className="cell-detail">{workflow.schedule_text}</span>
          </span>
        </span>
        <span className="cell cell-last">
          <LastRun workflow={workflow} now={now} />
        </span>
        <span className="cell cell-next">
          <NextRun workflow={workflow} now={now} />
        </span>
        <span className="cell cell-version">v{versionText(workflow.version)}</span>
      </a>
    </li>
  );
}

function Finder({ all }: { all: WorkflowSummary[] }) {
  const [words, setWords] = useState("");
  const [filter, setFilter] = useState<StatusFilter>("all");
  const shown = findWorkflows(all, words, filter);
  return (
    <>
      <div className="workflow-finder">
        <input
          className="input finder-search"
          type="search"
          placeholder="Search workflows"
          aria-label="Search workflows"
          value={words}
          onChange={(e) => setWords(e.target.value)}
          data-testid="workflow-search"
        />
        <div className="finder-filters" role="group" aria-label="Show">
          {statusFilters.map((f) => (
            <button
              key={f}
              type="button"
              className={f === filter ? "chip-button selected" : "chip-button"}
              aria-pressed={f === filter}
              data-testid={`filter-${f}`}
              onClick={() => setFilter(f)}
            >
              {statusFilterLabel[f]}
            </button>
          ))}
        </div>
      </div>
      {shown.length === 0 ? (
        <p className="muted tab-note" data-testid="no-match">
          No workflow matches. <button type="button" className="link-button" onClick={() => { setWords(""); setFilter("all"); }}>Show all</button>
        </p>
      ) : (
        <WorkflowTable workflows={shown} />
      )}
    </>
  );
}

function WorkflowTable({ workflows }: { workflows: WorkflowSummary[] }) {
  const now = useNow();
  return (
    <div className="card workflow-table">
      <div className="workflow-table-head" aria-hidden="true">
        <span>Workflow</span>
        <span>Last run</span>
        <span>Next run</span>
        <span>Version</span>
      </div>
      <ul className="list" aria-label="Workflows">
        {workflows.map((workflow) => (
          <WorkflowRow key={workflow.id} workflow={workflow} now={now} />
        ))}
      </ul>
    </div>
  );
}

function NoWorkflows() {
  const examples = useLoadExamples();
  return (
    <>
      <div className="card">
        <EmptyState icon={<WorkflowsIcon size={28} />} title="No workflows yet">
          <p>A workflow is a script Healer runs on a schedule — and repairs when it breaks.</p>
          <p>
            Start with four examples that show a healthy run, a network hiccup, a bug and a missing module — or
            write your own.
          </p>
        </EmptyState>
        <div className="empty-state-actions">
          <button
            type="button"
            className="button button-primary"
            data-testid="load-examples"
            onClick={() => examples.mutate()}
            disabled={examples.isPending}
          >
            {examples.isPending ? <Spinner /> : <SparkleIcon size={16} />}
            Load example workflows
          </button>
          <a className="button" href={newWorkflowHref}>
            <PlusIcon size={16} />
            Create a workflow
          </a>
        </div>
        {examples.isError && (
          <div className="empty-state-error">
            <InlineError lead="The examples couldn't be loaded." error={examples.error} />
          </div>
        )}
      </div>

      <h2 className="section-label">How Healer looks after a workflow</h2>
      <ol className="steps">
        {steps.map((step, i) => (
          <li className="step" key={step.title}>
            <span className="step-number">{i + 1}</span>
            <h3 className="step-title">{step.title}</h3>
            <p className="muted">{step.text}</p>
          </li>
        ))}
      </ol>
    </>
  );
}

/** The first-run offer: shown while no model answers any tier, until set up or skipped. */
function SetupOffer() {
  const providers = useProviders();
  const tiers = useTiers();
  const skipped = useSetupSkipped();
  const skip = useSkipSetup();
  if (skipped.data !== false || !providers.data || !tiers.data) return null;
  if (providers.data.length > 0 || tiers.data.some((t) => t.resolves_to !== null)) return null;
  return (
    <div className="card next-step setup-offer" data-testid="setup-offer">
      <div className="next-step-icon">
        <SparkleIcon size={20} />
      </div>
      <div className="next-step-text">
        <h2 className="section-title">Set up a model first</h2>
        <p className="muted">
          With a model, Healer repairs broken scripts and talks changes through with you. It takes a minute.
        </p>
      </div>
      <div className="setup-offer-actions">
        <a className="button button-primary" href={setupHref} data-testid="start-setup">
          Set up
        </a>
        <button
          type="button"
          className="button"
          data-testid="skip-setup"
          onClick={() => skip.mutate()}
        >
          Not now
        </button>
      </div>
    </div>
  );
}

export function WorkflowsPage() {
  const workflows = useWorkflows();

  let body;
  if (workflows.isPending) {
    body = <SkeletonList rows={3} label="Loading workflows" />;
  } else if (workflows.isError) {
    body = (
      <InlineError lead="Workflows couldn't be loaded." error={workflows.error} onRetry={() => void workflows.refetch()} />
    );
  } else if (workflows.data.length === 0) {
    body = <NoWorkflows />;
  } else {
    body = <Finder all={workflows.data} />;
  }
  const waiting = (workflows.data ?? []).filter(needsYou).length;

  return (
    <section className="page" data-testid="page-workflows">
      <PageHeader
        title="Workflows"
        description={
          waiting > 0 ? (
            <span data-testid="needs-you-count">
              <strong>
                {waiting} {waiting === 1 ? "workflow needs" : "workflows need"} you.
              </strong>{" "}
              The scripts Healer runs for you and keeps healthy.
            </span>
          ) : (
            "The scripts Healer runs for you and keeps healthy."
          )
        }
        actions={
          <a className="button button-primary" href={newWorkflowHref} data-testid="new-workflow">
            <PlusIcon size={16} />
            New workflow
          </a>
        }
      />
      <SetupOffer />
      {body}
    </section>
  );
}
