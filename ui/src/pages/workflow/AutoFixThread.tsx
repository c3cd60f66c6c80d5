import { useState } from "react";
import { toApiError } from "../../api";
import { autofixStatusHint, autofixStatusLabel, autofixStatusTone, autofixSummary, versionChange } from "../../autofixText";
import type { AutoFixDetail, Runtime, ThreadMessage } from "../../bindings";
import { Collapsible } from "../../components/Collapsible";
import { FencedText } from "../../components/FencedText";
import { ArrowLeftIcon } from "../../components/icons";
import { InlineError } from "../../components/InlineError";
import { SkeletonList } from "../../components/Loading";
import { StatusBadge } from "../../components/StatusBadge";
import { newestId, useLiveThreadText } from "../../liveThreads";
import { tokens } from "../../modelText";
import { useAutofix } from "../../taskQueries";
import { orphanResults, resultsByCall } from "../../threadText";
import { fullTime, relativeTime, useNow } from "../../time";
import { autofixHref, runHref } from "../../usePage";
import { versionText } from "../../workflowText";
import { FixOutcome } from "./FixOutcome";
import { isLong, Step, ToolStep } from "./ToolSteps";

function BackToList({ workflowId }: { workflowId: number }) {
  return (
    <a className="back-link" href={autofixHref(workflowId)}>
      <ArrowLeftIcon size={16} />
      All auto-fixes
    </a>
  );
}

/** The failed run in the person's words: which run, of which version, and how it ended. */
function failedSentence({ fix, failed_summary }: AutoFixDetail): string {
  const run = fix.run_number !== null ? `Run #${fix.run_number}` : "A run";
  const version = fix.from_version ? ` of version ${versionText(fix.from_version)}` : "";
  const how = failed_summary?.trim().replace(/\.$/, "");
  return how ? `${run}${version} failed: ${how}.` : `${run}${version} failed.`;
}

/** What Healer told the repair assistant about the failure (the evidence), folded until asked. */
function PromptSent({ text }: { text: string }) {
  const [open, setOpen] = useState(false);
  return (
    <div className="prompt-sent" data-testid="autofix-prompt">
      <button type="button" className="link-button" aria-expanded={open} onClick={() => setOpen(!open)}>
        {open ? "Hide what Healer told the repair assistant" : "Show what Healer told the repair assistant"}
      </button>
      {open && (
        <Collapsible long={isLong(text)} more="Show all of it">
          <FencedText text={text} brief />
        </Collapsible>
      )}
    </div>
  );
}

/** The maintainer's standing instructions: the same for every task, so folded away. */
function Instructions({ text }: { text: string }) {
  const [open, setOpen] = useState(false);
  return (
    <li className="thread-instructions">
      <button type="button" className="link-button" aria-expanded={open} onClick={() => setOpen(!open)}>
        {open ? "Hide instructions" : "Show instructions"}
      </button>
      {open && <pre className="instructions-text">{text}</pre>}
    </li>
  );
}

function Facts({ detail, workflowId }: { detail: AutoFixDetail; workflowId: number }) {
  const { fix } = detail;
  const now = useNow();
  const change = versionChange(fix);
  return (
    <div className="card autofix-header">
      <div className="autofix-heading">
        <h2 className="section-title">{fix.from_version ? `Repair of version ${versionText(fix.from_version)}` : "Repair"}</h2>
        <StatusBadge
          tone={autofixStatusTone[fix.status]}
          label={autofixStatusLabel[fix.status]}
          title={autofixStatusHint[fix.status]}
          live={fix.status === "working"}
        />
      </div>
      <p className="autofix-summary" data-testid="autofix-summary">
        {autofixSummary(fix, detail.thread.messages.reduce((n, m) => n + m.tool_calls.filter((c) => c.name === "eval").length, 0))}
      </p>
      <p className="autofix-facts">
        {change && <span className="autofix-versions">{change}</span>}
        <span>{tokens(fix.tokens)} tokens</span>
        <span>
          Started{" "}
          <time dateTime={fix.created_at} title={fullTime(fix.created_at)}>
            {relativeTime(fix.created_at, now)}
          </time>
        </span>
        {fix.run_id !== null && <a href={runHref(workflowId, fix.run_id)}>See the failed run</a>}
      </p>
    </div>
  );
}

function Steps({ detail, runtime }: { detail: AutoFixDetail; runtime: Runtime }) {
  const { messages } = detail.thread;
  const working = detail.fix.status === "working";
  const live = useLiveThreadText(working ? detail.fix.task_id : null, newestId(messages));
  const results = resultsByCall(messages);
  const orphans = orphanResults(messages);
  const firstUser = messages.find((m) => m.role === "user");
  const failedVersion = detail.fix.from_version ? versionText(detail.fix.from_version) : null;

  function step(m: ThreadMessage) {
    switch (m.role) {
      case "system":
        return <Instructions key={m.id} text={m.content} />;
      case "user":
        return m === firstUser ? (
          <Step key={m.id} kind="evidence" title="What failed" testId="autofix-evidence">
            <p className="step-text" data-testid="autofix-failed">
              {failedSentence(detail)}
            </p>
            <PromptSent text={m.content} />
          </Step>
        ) : (
          // Later "user" steps are Healer's own nudges to the model, never the person.
          <Step key={m.id} kind="note" title="Healer">
            <p className="step-text">{m.content}</p>
          </Step>
        );
      case "nudge":
        return (
          <Step key={m.id} kind="note" title="Healer">
            <p className="step-text">{m.content}</p>
          </Step>
        );
      case "assistant":
        return [
          m.content.trim() ? (
            <Step key={m.id} kind="model" title="The repair assistant">
              <FencedText text={m.content} />
            </Step>
          ) : null,
          ...m.tool_calls.map((call) => (
            <ToolStep
              key={`${m.id}-${call.id}`}
              call={call}
              result={results.get(call.id)}
              working={working}
              failedCode={detail.failed_code}
              failedVersion={failedVersion}
              runtime={runtime}
            />
          )),
        ];
      case "tool":
        return orphans.has(m.id) ? (
          <Step key={m.id} kind="read" title={`Result of ${m.tool_name ?? "a tool"}`}>
            <FencedText text={m.content} />
          </Step>
        ) : null;
    }
  }

  // The standing instructions come last: the thread opens with what happened, not with a prompt.
  const instructions = messages.filter((m) => m.role === "system");
  return (
    <ol className="thread" data-testid="autofix-thread" aria-label="What the auto-fix did, step by step">
      {messages.filter((m) => m.role !== "system").map(step)}
      {live && (
        <Step kind="model live" title="The repair assistant is writing…">
          <FencedText text={live} />
        </Step>
      )}
      {instructions.map(step)}
    </ol>
  );
}

/** One auto-fix task as it happened: the evidence, every step, and how it ended. */
export function AutoFixThread({ workflowId, taskId, runtime }: { workflowId: number; taskId: number; runtime: Runtime }) {
  const detail = useAutofix(taskId);
  if (detail.isPending) {
    return (
      <>
        <BackToList workflowId={workflowId} />
        <SkeletonList rows={4} label="Loading the auto-fix" />
      </>
    );
  }
  if (detail.isError) {
    const error = toApiError(detail.error);
    return (
      <>
        <BackToList workflowId={workflowId} />
        {error.code === "not_found" ? (
          <div className="card gone">
            <h2 className="section-title">This auto-fix isn't here any more</h2>
            <p className="muted">It may have been deleted with its workflow.</p>
          </div>
        ) : (
          <InlineError lead="The auto-fix couldn't be loaded." error={error} onRetry={() => void detail.refetch()} />
        )}
      </>
    );
  }
  return (
    <>
      <BackToList workflowId={workflowId} />
      <Facts detail={detail.data} workflowId={workflowId} />
      <section className="card thread-card" aria-label="Thread">
        <Steps detail={detail.data} runtime={runtime} />
        <FixOutcome fix={detail.data.fix} workflowId={workflowId} />
      </section>
    </>
  );
}
