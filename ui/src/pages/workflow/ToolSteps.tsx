// The maintainer's tool calls as steps of its thread: each call with what came of it.
import type { ReactNode } from "react";
import type { Runtime, ThreadMessage, ToolCall } from "../../bindings";
import { Collapsible } from "../../components/Collapsible";
import { FencedText } from "../../components/FencedText";
import { CheckIcon } from "../../components/icons";
import { VersionDiff } from "../../components/LazyCode";
import { Spinner } from "../../components/Loading";
import { StatusBadge } from "../../components/StatusBadge";
import { callArguments, fixResult, refusalText, textArgument } from "../../threadText";

/** Code longer than this many lines starts folded. */
const LONG_LINES = 14;

export function isLong(text: string): boolean {
  return text.split("\n").length > LONG_LINES;
}

/** One step of a thread: a marker, a heading, and what happened. */
export function Step({
  kind,
  title,
  badge,
  testId,
  children,
}: {
  kind: string;
  title: ReactNode;
  badge?: ReactNode;
  testId?: string;
  children?: ReactNode;
}) {
  return (
    <li className={`thread-step step-${kind}`} data-testid={testId}>
      <span className="step-marker" aria-hidden="true" />
      <div className="step-content">
        <div className="step-heading">
          <h3 className="step-title">{title}</h3>
          {badge}
        </div>
        {children}
      </div>
    </li>
  );
}

/** The call was refused (bad arguments, a failed check) or the tool failed: said plainly. */
function Refusal({ result }: { result: ThreadMessage }) {
  return (
    <p className="step-refusal" data-testid="step-refusal">
      {refusalText(result.content)}
    </p>
  );
}

function refusedBadge(result: ThreadMessage | undefined) {
  return result?.is_error ? <StatusBadge tone="bad" label="Refused" /> : undefined;
}

function Pending({ working }: { working: boolean }) {
  return working ? (
    <p className="step-pending">
      <Spinner /> Running…
    </p>
  ) : (
    <p className="step-pending muted">No result was recorded.</p>
  );
}

function CodeBlock({ code, label }: { code: string; label?: string }) {
  return (
    <Collapsible long={isLong(code)} more="Show all of the code" less="Show less of the code">
      <figure className="fenced-block">
        {label && (
          <figcaption className="fenced-caption">
            <span className="fenced-label">{label}</span>
          </figcaption>
        )}
        <pre className="fenced-code" tabIndex={0}>
          {code}
        </pre>
      </figure>
    </Collapsible>
  );
}

type StepProps = { call: ToolCall; result: ThreadMessage | undefined; working: boolean };

function EvalStep({ call, result, working }: StepProps) {
  const args = callArguments(call);
  const input = textArgument(args, "input");
  return (
    <Step kind="eval" title="Tried the code on a safe copy" badge={refusedBadge(result)} testId="thread-eval">
      <CodeBlock code={textArgument(args, "code") ?? call.arguments} />
      {input && <CodeBlock code={input} label="Input" />}
      {!result ? (
        <Pending working={working} />
      ) : result.is_error ? (
        <Refusal result={result} />
      ) : (
        <div className="eval-output" data-testid="eval-output">
          <FencedText text={result.content} />
        </div>
      )}
    </Step>
  );
}

function FixStep({
  call,
  result,
  working,
  failedCode,
  failedVersion,
  runtime,
}: StepProps & { failedCode: string | null; failedVersion: string | null; runtime: Runtime }) {
  const args = callArguments(call);
  const code = textArgument(args, "code") ?? "";
  const comment = textArgument(args, "comment");
  const outcome = result ? fixResult(result) : null;
  return (
    <Step kind="fix" title="Proposed a fix" badge={refusedBadge(result)} testId="thread-fix">
      {comment && <p className="fix-comment">{comment}</p>}
      <div className="fix-diff" data-testid="fix-diff">
        <div className="diff-sides" aria-hidden="true">
          <span>{failedVersion ? `Version ${failedVersion}, which failed` : "The version that failed"}</span>
          <span>The fix</span>
        </div>
        {failedCode !== null ? <VersionDiff before={failedCode} after={code} runtime={runtime} /> : <CodeBlock code={code} />}
      </div>
      {!outcome && <Pending working={working} />}
      {outcome?.kind === "applied" && (
        <p className="step-result tone-good">
          <CheckIcon size={16} />
          {outcome.version ? `Saved as version ${outcome.version}; a re-run is queued.` : "Saved; a re-run is queued."}
        </p>
      )}
      {outcome?.kind === "not_applied" && <p className="step-result tone-neutral">Not applied. {outcome.reason}</p>}
      {outcome?.kind === "refused" && result && <Refusal result={result} />}
    </Step>
  );
}

function ReadStep({ result, working, title }: Omit<StepProps, "call"> & { title: string }) {
  return (
    <Step kind="read" title={title} badge={refusedBadge(result)}>
      {!result ? (
        <Pending working={working} />
      ) : result.is_error ? (
        <Refusal result={result} />
      ) : (
        <CodeBlock code={result.content || "(empty)"} />
      )}
    </Step>
  );
}

/** A tool call with its result; `result` is undefined while the tool runs. */
export function ToolStep({
  failedCode,
  failedVersion,
  runtime,
  ...props
}: StepProps & { failedCode: string | null; failedVersion: string | null; runtime: Runtime }) {
  const { call } = props;
  switch (call.name) {
    case "eval":
      return <EvalStep {...props} />;
    case "fix":
      return <FixStep {...props} failedCode={failedCode} failedVersion={failedVersion} runtime={runtime} />;
    case "read_file": {
      const path = textArgument(callArguments(call), "path") ?? "a file";
      return <ReadStep {...props} title={path === "." ? "Looked at the workflow's folder" : `Read ${path}`} />;
    }
    case "list_versions":
      return <ReadStep {...props} title="Looked at the script's versions" />;
    default:
      return <ReadStep {...props} title={`Used ${call.name}`} />;
  }
}
