import { useState } from "react";
import type { Runtime, ScriptVersion } from "../../bindings";
import { Dialog } from "../../components/Dialog";
import { VersionDiff } from "../../components/LazyCode";
import { authorBy, versionText } from "../../workflowText";

/**
 * The script moved on while the person edited an older version: say which version appeared and
 * by whom, and let them compare, keep theirs as the next major, or drop theirs. Nothing is
 * saved over anything without this question.
 */
export function ConflictDialog({
  newer,
  mine,
  next,
  runtime,
  onKeep,
  onDiscard,
  onCancel,
}: {
  newer: ScriptVersion;
  mine: string;
  /** The version the person's code becomes when kept ("3.0"). */
  next: string;
  runtime: Runtime;
  onKeep: () => void;
  onDiscard: () => void;
  onCancel: () => void;
}) {
  const [comparing, setComparing] = useState(false);
  const which = `${versionText(newer.version)} ${authorBy(newer.author)}`;
  return (
    <Dialog
      title={`This script changed while you were editing (${which})`}
      onCancel={onCancel}
      wide={comparing}
      actions={
        <>
          <button type="button" className="button" data-testid="conflict-compare" onClick={() => setComparing((c) => !c)}>
            {comparing ? "Hide comparison" : "Compare"}
          </button>
          <button type="button" className="button" data-testid="conflict-discard" onClick={onDiscard}>
            Discard mine
          </button>
          <button type="button" className="button button-primary" data-testid="conflict-keep" data-autofocus onClick={onKeep}>
            Keep mine as {next}
          </button>
        </>
      }
    >
      <div data-testid="conflict-dialog">
        <p>
          Version {which} appeared after you started editing. Your changes are still here: compare them with it,
          keep yours as version {next}, or drop yours and go on from {versionText(newer.version)}.
        </p>
        {comparing && (
          <div className="conflict-diff" data-testid="conflict-diff">
            <p className="muted">
              From version {versionText(newer.version)} to your changes:
            </p>
            <VersionDiff before={newer.code} after={mine} runtime={runtime} />
          </div>
        )}
      </div>
    </Dialog>
  );
}
