import { useCallback, useEffect, useId, useRef, useState, type KeyboardEvent } from "react";
import { createPortal } from "react-dom";
import type { Checkpoint } from "../bindings";
import { keyHint, moreWaiting, recommendedIndex, triggerTone } from "../checkpointText";
import { quietFor } from "../inputQuiet";
import { useNow } from "../time";
import { AgentRequestView } from "./AgentRequestView";
import { CheckpointContext } from "./CheckpointContext";
import { keepTabInside } from "./focusTrap";
import { InlineError } from "./InlineError";
import { settingsHref } from "../usePage";
import { RelativeTime } from "./RelativeTime";

/**
 * The dialog takes keys and clicks once the person has been still this long. A key or a click
 * meant for what was on screen a moment before (a digit typed in the script, a second Enter or
 * click after deciding the previous question) must not answer a question nobody has read yet.
 * A question that appears while nobody is typing or clicking is ready at once.
 */
export const ARM_MS = 500;

/** The workflows a question about several of them concerns: each option acts on all of them. */
export function AffectedWorkflows({ checkpoint }: { checkpoint: Checkpoint }) {
  if (checkpoint.affected.length === 0) return null;
  const names = checkpoint.affected.map((a) => `“${a.title}”`);
  const listed = names.length > 1 ? `${names.slice(0, -1).join(", ")} and ${names[names.length - 1]}` : names[0];
  return (
    <p className="checkpoint-affected" data-testid="checkpoint-affected">
      <strong>Failed with it:</strong> {listed}. Your choice applies to each of them.
    </p>
  );
}

/** What the person had chosen and written when the engine refused their decision. */
export type Draft = { option: number; notes: string };

const SELECTED = '[data-selected="true"]';

/**
 * One question Healer stopped to ask, over everything else until it is answered.
 *
 * Keys (once it is ready, see ARM_MS): a number decides with that option at once; Enter
 * decides with the highlighted option, which is the recommended one until the arrow keys or Tab
 * move to another; clicking an option decides with it. Nothing else does anything: Escape does
 * not close it, and Space does not press the focused option. In the notes field keys type as
 * usual, except that Enter decides with the highlighted option (Shift+Enter starts a new line).
 */
export function CheckpointDialog({
  checkpoint,
  more,
  draft,
  error,
  onDecide,
  onLater,
}: {
  checkpoint: Checkpoint;
  /** How many more are waiting after this one. */
  more: number;
  draft: Draft | null;
  error: unknown;
  /** `option` is 1-based; `notes` null when none were written. */
  onDecide: (option: number, notes: string | null) => void;
  /** Close it without deciding: it stays pending, and `goTo` (a page to look at first) opens. */
  onLater?: (goTo?: string) => void;
}) {
  const pointsToModels = checkpoint.trigger === "cost" || /\bmodel\b/i.test(checkpoint.context);
  const { options } = checkpoint;
  const box = useRef<HTMLDivElement>(null);
  const notesBox = useRef<HTMLTextAreaElement>(null);
  const packageBox = useRef<HTMLInputElement>(null);
  const [needName, setNeedName] = useState(false);
  const titleId = useId();
  const aboutId = useId();
  const keysId = useId();
  const notesId = useId();
  const notesHintId = useId();
  const now = useNow();
  const [selected, setSelected] = useState(() => {
    const start = draft ? draft.option - 1 : recommendedIndex(checkpoint);
    return start >= 0 && start < options.length ? start : 0;
  });
  const [notes, setNotes] = useState(draft?.notes ?? "");
  const [ready, setReady] = useState(() => quietFor() >= ARM_MS);
  const armTimer = useRef<number | undefined>(undefined);
  const armIn = useCallback((wait: number) => {
    window.clearTimeout(armTimer.current);
    armTimer.current = window.setTimeout(() => setReady(true), Math.max(0, wait));
  }, []);
  useEffect(() => {
    if (!ready) armIn(ARM_MS - quietFor());
    return () => window.clearTimeout(armTimer.current);
  }, [ready, armIn]);
  // Still busy: wait for the person to be still again.
  const onInput = () => {
    if (!ready) armIn(ARM_MS);
  };

  // The highlighted option has focus at open, and focus never leaves the dialog while it is open.
  useEffect(() => {
    const focusSelected = () => box.current?.querySelector<HTMLElement>(SELECTED)?.focus();
    focusSelected();
    function onFocusIn(event: FocusEvent) {
      if (box.current && event.target instanceof Node && !box.current.contains(event.target)) focusSelected();
    }
    document.addEventListener("focusin", onFocusIn);
    return () => document.removeEventListener("focusin", onFocusIn);
  }, []);

  function decide(index: number) {
    const text = notes.trim();
    // "Try another package name…" installs what is written: it needs a name first.
    if (options[index]?.action.kind === "install_package" && !text) {
      setSelected(index);
      setNeedName(true);
      window.setTimeout(() => packageBox.current?.focus(), 0);
      return;
    }
    onDecide(index + 1, text ? text : null);
  }

  function optionOf(target: EventTarget): number | null {
    if (!(target instanceof HTMLElement) || !target.matches("[data-option]")) return null;
    return Number(target.dataset.option) - 1;
  }

  function move(from: number, step: number) {
    const next = (from + step + options.length) % options.length;
    box.current?.querySelector<HTMLElement>(`[data-option="${next + 1}"]`)?.focus();
  }

  function onKeyDown(event: KeyboardEvent<HTMLDivElement>) {
    onInput();
    const act = ready && !event.repeat;
    const typing = event.target === notesBox.current || event.target === packageBox.current;
    const focused = optionOf(event.target);
    if (event.key === "Tab") {
      keepTabInside(event, box.current);
    } else if (event.key === "Escape") {
      // It waits for an answer: Escape closes nothing, here or behind it.
      event.preventDefault();
      event.stopPropagation();
    } else if (event.key === "Enter") {
      // Shift+Enter in the notes starts a new line; an input method's Enter is its own.
      if (typing && (event.shiftKey || event.nativeEvent.isComposing)) return;
      event.preventDefault();
      if (act) decide(selected);
    } else if (typing || event.altKey || event.ctrlKey || event.metaKey) {
      // Typing, or a shortcut such as copying the context.
    } else if (/^[1-9]$/.test(event.key) && Number(event.key) <= options.length) {
      event.preventDefault();
      if (act) decide(Number(event.key) - 1);
    } else if (event.key === " " && focused !== null) {
      // Enter and the numbers decide; Space, which would press the button, does nothing.
      event.preventDefault();
    } else if ((event.key === "ArrowDown" || event.key === "ArrowUp") && focused !== null) {
      event.preventDefault();
      move(focused, event.key === "ArrowDown" ? 1 : -1);
    }
  }

  // A button is pressed when Space is let go.
  function onKeyUp(event: KeyboardEvent<HTMLDivElement>) {
    if (event.key === " " && optionOf(event.target) !== null) event.preventDefault();
  }

  const chosen = options[selected];
  return createPortal(
    // A click outside neither closes it nor takes the focus away.
    <div
      className="dialog-backdrop checkpoint-backdrop"
      onPointerDown={onInput}
      onMouseDown={(event) => event.target === event.currentTarget && event.preventDefault()}
    >
      <div
        className="dialog checkpoint-dialog"
        role="dialog"
        aria-modal="true"
        aria-labelledby={titleId}
        aria-describedby={aboutId}
        data-testid="checkpoint-dialog"
        data-checkpoint-id={checkpoint.id}
        data-trigger={checkpoint.trigger}
        data-ready={String(ready)}
        tabIndex={-1}
        ref={box}
        onKeyDown={onKeyDown}
        onKeyUp={onKeyUp}
      >
        <header className="checkpoint-head">
          <span className={`marker tone-${triggerTone[checkpoint.trigger]}`} aria-hidden="true" />
          <div className="checkpoint-heading">
            <h2 className="dialog-title" id={titleId}>
              {checkpoint.title}
            </h2>
            <p className="checkpoint-about" id={aboutId}>
              {checkpoint.project_task
                ? `The task “${checkpoint.project_task.task_title}” of the project “${checkpoint.project_task.project_name}”`
                : checkpoint.workflow_title
                  ? `“${checkpoint.workflow_title}”`
                  : checkpoint.affected.length > 0
                    ? `${checkpoint.affected.length} workflows`
                    : "About Healer itself"}
              <span aria-hidden="true"> · </span>
              <span>
                asked <RelativeTime iso={checkpoint.created_at} now={now} />
              </span>
            </p>
          </div>
          {more > 0 && (
            <span className="checkpoint-more" data-testid="checkpoint-more">
              {moreWaiting(more)}
            </span>
          )}
        </header>
        {/* What happened scrolls by itself, so a long report never pushes the title or the options out of the window. */}
        <div className="checkpoint-scroll" data-testid="checkpoint-scroll">
          {checkpoint.agent_request ? (
            <AgentRequestView ask={checkpoint.agent_request} />
          ) : (
            <CheckpointContext context={checkpoint.context} />
          )}
          <AffectedWorkflows checkpoint={checkpoint} />
        </div>
        <div className="dialog-body checkpoint-body" data-testid="checkpoint-choices">
          <div className="checkpoint-options" role="group" aria-label="Options" aria-describedby={keysId}>
            {options.map((option, i) => (
              <button
                key={i}
                type="button"
                className={i === selected ? "checkpoint-option selected" : "checkpoint-option"}
                data-testid="checkpoint-option"
                data-option={i + 1}
                data-recommended={String(option.recommended)}
                data-selected={String(i === selected)}
                onFocus={() => setSelected(i)}
                onClick={() => ready && decide(i)}
              >
                <kbd className="checkpoint-key">{i + 1}</kbd>
                <span className="checkpoint-option-text">
                  <span className="checkpoint-option-label">
                    {option.label}
                    {option.recommended && <span className="checkpoint-recommended"> (recommended)</span>}
                  </span>
                  <span className="checkpoint-option-description">{option.description}</span>
                </span>
              </button>
            ))}
          </div>
          <p className="checkpoint-recommendation">
            <strong>Healer recommends:</strong> {checkpoint.recommendation}
          </p>
          <p className="field-hint" id={keysId}>
            {keyHint(options.length)}
          </p>
          {chosen?.action.kind === "install_package" ? (
            <div className="field">
              <label className="field-label" htmlFor={notesId}>
                Package name
              </label>
              <input
                id={notesId}
                ref={packageBox}
                className="input mono"
                aria-describedby={notesHintId}
                aria-invalid={needName && !notes.trim()}
                placeholder="For example: python-dateutil"
                spellCheck={false}
                autoComplete="off"
                maxLength={214}
                value={notes}
                data-testid="checkpoint-package"
                onChange={(event) => setNotes(event.target.value)}
              />
              <span className={needName && !notes.trim() ? "field-hint field-error-text" : "field-hint"} id={notesHintId}>
                {needName && !notes.trim()
                  ? "Write the name of the package to install, then press Enter."
                  : "Enter installs it into this workflow's own environment and runs the workflow again."}
              </span>
            </div>
          ) : chosen?.action.kind === "deny" ? (
            <div className="field">
              <label className="field-label" htmlFor={notesId}>
                Why — the agent is told<span className="field-optional">(optional)</span>
              </label>
              <textarea
                id={notesId}
                ref={notesBox}
                className="input checkpoint-notes"
                aria-describedby={notesHintId}
                placeholder="For example: don't download scripts; the library is already in vendor/"
                rows={2}
                maxLength={2000}
                value={notes}
                data-testid="checkpoint-deny-reason"
                onChange={(event) => setNotes(event.target.value)}
              />
              <span className="field-hint" id={notesHintId}>
                Enter denies it and tells the agent · Shift+Enter starts a new line
              </span>
            </div>
          ) : (
            <div className="field">
              <label className="field-label" htmlFor={notesId}>
                Notes<span className="field-optional">(optional)</span>
              </label>
              <textarea
                id={notesId}
                ref={notesBox}
                className="input checkpoint-notes"
                aria-label="Notes (optional)"
                aria-describedby={notesHintId}
                placeholder="Why you chose it; kept with your decision"
                rows={2}
                maxLength={2000}
                value={notes}
                onChange={(event) => setNotes(event.target.value)}
              />
              <span className="field-hint" id={notesHintId}>
                Enter decides with “{chosen?.label}” · Shift+Enter starts a new line
              </span>
            </div>
          )}
          {error != null && <InlineError lead="Your decision wasn't recorded." error={error} />}
          {onLater && (
            <div className="checkpoint-later">
              {pointsToModels && (
                <button
                  type="button"
                  className="button button-small"
                  data-testid="checkpoint-open-models"
                  onClick={() => onLater(settingsHref("models"))}
                >
                  Open Settings → Models
                </button>
              )}
              <button type="button" className="button button-small" data-testid="checkpoint-later" onClick={() => onLater()}>
                Decide later
              </button>
              <span className="field-hint">It stays waiting; a banner and the sidebar keep it in view.</span>
            </div>
          )}
        </div>
      </div>
    </div>,
    document.body,
  );
}
