import { useId, useState, type FormEvent } from "react";
import { InlineError } from "../components/InlineError";
import { Spinner } from "../components/Loading";
import { useEditorCommand, useSetEditorCommand } from "../projectQueries";
import { toast } from "../toasts";

/** The editor "Open in editor" starts on an agent's working copy; empty: the desktop's default. */
export function EditorSetting() {
  const current = useEditorCommand();
  const save = useSetEditorCommand();
  const [typed, setTyped] = useState<string | null>(null);
  const id = useId();
  const value = typed ?? current.data ?? "";
  const changed = typed !== null && typed.trim() !== (current.data ?? "");

  function submit(event: FormEvent) {
    event.preventDefault();
    if (!changed) return;
    save.mutate(value, {
      onSuccess: () => {
        setTyped(null);
        toast(value.trim() ? `Working copies open with ${value.trim()}.` : "Working copies open with your desktop's default.");
      },
    });
  }

  return (
    <section className="card settings-section" aria-labelledby={`${id}-title`}>
      <h2 className="section-title" id={`${id}-title`}>
        Your editor
      </h2>
      <form className="field" onSubmit={submit}>
        <label className="field-label" htmlFor={id}>
          Command that opens an agent's work
        </label>
        <div className="inline-field">
          <input
            id={id}
            className="input mono"
            value={value}
            placeholder="code"
            spellCheck={false}
            autoCapitalize="off"
            onChange={(e) => setTyped(e.target.value)}
            data-testid="editor-command"
          />
          <button type="submit" className="button" disabled={!changed || save.isPending} data-testid="save-editor-command">
            {save.isPending && <Spinner />}
            Save
          </button>
        </div>
        <span className="field-hint">
          Used by “Open in editor” on a task. Leave it empty to use your desktop's default; the folder goes at the end, or
          where you write {"{path}"}.
        </span>
      </form>
      {save.isError && <InlineError lead="It wasn't saved." error={save.error} />}
    </section>
  );
}
