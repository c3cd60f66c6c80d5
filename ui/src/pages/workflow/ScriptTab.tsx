import { useId, useState, type FormEvent } from "react";
import type { ScriptVersion, WorkflowDetail } from "../../bindings";
import { InlineError } from "../../components/InlineError";
import { CodeEditor } from "../../components/LazyCode";
import { ScriptVariablesHelp } from "../../components/ScriptVariablesHelp";
import { Spinner } from "../../components/Loading";
import { useSaveScript, useVersions } from "../../queries";
import { versionText } from "../../workflowText";

export function ScriptTab({
  detail,
  draft,
  onDraft,
  onSaved,
}: {
  detail: WorkflowDetail;
  draft: string | null;
  onDraft: (code: string | null) => void;
  onSaved: (before: ScriptVersion, saved: ScriptVersion) => void;
}) {
  const { workflow, active } = detail;
  const versions = useVersions(workflow.id);
  const save = useSaveScript(workflow.id);
  const [comment, setComment] = useState("");
  const commentId = useId();
  const hintId = useId();

  const code = draft ?? active.code;
  const changed = code !== active.code;
  const empty = code.trim().length === 0;
  const highest = Math.max(active.version.major, ...(versions.data ?? []).map((v) => v.version.major));
  const next = `${highest + 1}.0`;
  const canSave = changed && !empty && !save.isPending;

  function submit(event: FormEvent) {
    event.preventDefault();
    if (!canSave) return;
    save.mutate(
      { code, comment: comment.trim() },
      {
        onSuccess: (saved) => {
          setComment("");
          onSaved(active, saved);
        },
      },
    );
  }

  let hint = `Version ${versionText(active.version)} is the one that runs. Saving makes your changes version ${next}, which runs from then on.`;
  if (empty) hint = "The script is empty; write something for it to do before saving.";

  return (
    <form className="card script-card" onSubmit={submit}>
      <div className="script-file">
        <span className="path">{workflow.entry}</span>
        <span className="muted">
          {changed ? "Edited — not saved yet" : `Version ${versionText(active.version)}`}
        </span>
      </div>
      <CodeEditor
        value={code}
        onChange={(value) => onDraft(value === active.code ? null : value)}
        runtime={workflow.runtime}
        label={`Script ${workflow.entry}`}
        describedBy={hintId}
        invalid={empty}
      />
      <div className="script-footer">
        <p className={empty ? "field-hint field-error-text" : "field-hint"} id={hintId}>
          {hint}
        </p>
        <ScriptVariablesHelp />
        <div className="field">
          <label className="field-label" htmlFor={commentId}>
            What changed?
          </label>
          <input
            id={commentId}
            className="input"
            value={comment}
            onChange={(e) => setComment(e.target.value)}
            placeholder="For example: read the new “amount” field"
            maxLength={200}
            data-testid="script-comment"
          />
        </div>
        {save.isError && <InlineError lead="The script couldn't be saved." error={save.error} />}
        <div className="form-actions">
          {changed && (
            <button type="button" className="button" onClick={() => onDraft(null)} disabled={save.isPending}>
              Discard changes
            </button>
          )}
          <button type="submit" className="button button-primary" data-testid="save-script" disabled={!canSave}>
            {save.isPending && <Spinner />}
            Save as version {next}
          </button>
        </div>
      </div>
    </form>
  );
}
