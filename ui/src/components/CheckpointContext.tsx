import { splitContext } from "../checkpointText";

/**
 * What happened, as the engine wrote it: prose keeps its line breaks, and a machine report
 * (the diagnostics of an environment checkpoint) shows in monospace, scrollable when long.
 */
export function CheckpointContext({ context, id }: { context: string; id?: string }) {
  const { prose, report } = splitContext(context);
  return (
    <div className="checkpoint-context" id={id} data-testid="checkpoint-context">
      {prose && <p className="checkpoint-prose">{prose}</p>}
      {report && (
        <pre className="checkpoint-report" data-testid="checkpoint-report" tabIndex={0} aria-label="What Healer found on this machine">
          {report}
        </pre>
      )}
    </div>
  );
}
