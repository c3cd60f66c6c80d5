import { useEffect, useId, useRef, useState, type FormEvent } from "react";
import type { ScriptVersion, Version, WorkflowDetail } from "../../bindings";
import { InlineError } from "../../components/InlineError";
import { CodeEditor } from "../../components/LazyCode";
import { ScriptVariablesHelp } from "../../components/ScriptVariablesHelp";
import { Spinner } from "../../components/Loading";
import { SYNTAX_CHECK_DELAY_MS, useSaveScript, useSyntaxCheck, useVersions } from "../../queries";
import { toast } from "../../toasts";
import { versionText } from "../../workflowText";
import { ConflictDialog } from "./ConflictDialog";
import { PackageOffers, usePackageOffers } from "./PackageOffers";

/** The script being edited, and the version the editor opened it from. */
export type Draft = { code: string; base: Version };

/** `value` once it has stopped changing for `ms`. */
function useSettled<T>(value: T, ms: number): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(timer);
  }, [value, ms]);
  return settled;
}

export function ScriptTab({
  detail,
  draft,
  onDraft,
  onSaved,
}: {
  detail: WorkflowDetail;
  draft: Draft | null;
  onDraft: (draft: Draft | null) => void;
  onSaved: (before: ScriptVersion, saved: ScriptVersion) => void;
}) {
  const { workflow, active } = detail;
  const versions = useVersions(workflow.id);
  const save = useSaveScript(workflow.id);
  const [comment, setComment] = useState("");
  const [conflict, setConflict] = useState<ScriptVersion | null>(null);
  const [refused, setRefused] = useState<string | null>(null);
  const commentId = useId();
  const hintId = useId();
  const form = useRef<HTMLFormElement>(null);

  const code = draft?.code ?? active.code;
  const changed = draft !== null && code !== active.code;
  const empty = code.trim().length === 0;
  const highest = Math.max(active.version.major, ...(versions.data ?? []).map((v) => v.version.major));
  const next = `${highest + 1}.0`;
  const settled = useSettled(code, SYNTAX_CHECK_DELAY_MS);
  const check = useSyntaxCheck(workflow.id, changed && !empty && settled === code ? settled : null);
  const problem = changed ? (refused ?? (check.data && settled === code ? check.data : null)) : null;
  const canSave = changed && !empty && !save.isPending && problem === null;
  const packages = usePackageOffers(workflow.runtime, changed && !empty ? code : null, workflow.id);

  function store(base: Version | null) {
    const before = active;
    // The ticked packages join the ones the running version declares; none ticked keeps those.
    const requirements = packages.chosen.length > 0 ? [...active.requirements, ...packages.chosen] : null;
    save.mutate(
      { code, comment: comment.trim(), base, requirements },
      {
        onSuccess: (outcome) => {
          switch (outcome.kind) {
            case "saved":
              setComment("");
              setConflict(null);
              toast(`Saved as version ${versionText(outcome.version.version)}. It runs from now on.`);
              onSaved(before, outcome.version);
              break;
            case "conflict":
              setConflict(outcome.newer);
              break;
            case "invalid":
              setRefused(outcome.message);
              break;
          }
        },
      },
    );
  }

  function submit(event?: FormEvent) {
    event?.preventDefault();
    if (!canSave) return;
    store(draft?.base ?? active.version);
  }

  // Ctrl+S saves, as in any editor.
  const submitRef = useRef(submit);
  useEffect(() => {
    submitRef.current = submit;
  });
  useEffect(() => {
    function onKey(event: KeyboardEvent) {
      if ((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === "s") {
        event.preventDefault();
        submitRef.current();
      }
    }
    window.addEventListener("keydown", onKey, true);
    return () => window.removeEventListener("keydown", onKey, true);
  }, []);

  let hint = `Version ${versionText(active.version)} is the one that runs. Saving makes your changes version ${next}, which runs from then on.`;
  if (empty) hint = "The script is empty; write something for it to do before saving.";

  return (
    <form className="card script-card" onSubmit={submit} ref={form}>
      <div className="script-file">
        <span className="path">{workflow.entry}</span>
        <span className="muted">{changed ? "Edited — not saved yet" : `Version ${versionText(active.version)}`}</span>
      </div>
      <CodeEditor
        value={code}
        onChange={(value) => {
          setRefused(null);
          onDraft(value === active.code ? null : { code: value, base: draft?.base ?? active.version });
        }}
        runtime={workflow.runtime}
        label={`Script ${workflow.entry}`}
        describedBy={hintId}
        invalid={empty || problem !== null}
      />
      <div className="script-footer">
        {problem !== null && (
          <div className="syntax-problem" role="alert" data-testid="syntax-problem">
            <strong>This would not run: the syntax check found a mistake. Fix it to save.</strong>
            <pre>{problem}</pre>
          </div>
        )}
        <p className={empty ? "field-hint field-error-text" : "field-hint"} id={hintId}>
          {hint}
          {changed && check.isFetching && <span className="muted"> Checking the syntax…</span>}
        </p>
        <PackageOffers offers={packages.offers} declined={packages.declined} onToggle={packages.toggle} version={next} />
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
          <button type="submit" className="button button-primary" data-testid="save-script" disabled={!canSave} title="Ctrl+S">
            {save.isPending && <Spinner />}
            Save as version {next}
          </button>
        </div>
      </div>
      {conflict && (
        <ConflictDialog
          newer={conflict}
          mine={code}
          next={`${Math.max(highest, conflict.version.major) + 1}.0`}
          runtime={workflow.runtime}
          onKeep={() => store(conflict.version)}
          onDiscard={() => {
            setConflict(null);
            onDraft(null);
            toast(`Your changes were dropped; version ${versionText(conflict.version)} is the one that runs.`);
          }}
          onCancel={() => setConflict(null)}
        />
      )}
    </form>
  );
}
