import { useEffect, useId, useRef, useState, type FormEvent, type KeyboardEvent } from "react";
import { Spinner } from "../../components/Loading";

/**
 * Where the person writes to the planner. Enter sends, Shift+Enter starts a new line. While the
 * planner works, the next message can be written but not sent.
 */
export function ChatComposer({
  question,
  canSend,
  sending,
  focus,
  onSend,
}: {
  /** Whose open question the message answers: the planner's, the repair assistant's (a repair that gave up), or none. */
  question: "planner" | "repair" | null;
  canSend: boolean;
  sending: boolean;
  /** Take the cursor when shown (the chat was opened to answer). */
  focus: boolean;
  /** Sends `message`; `done` empties the box once it was sent. */
  onSend: (message: string, done: () => void) => void;
}) {
  const [text, setText] = useState("");
  const box = useRef<HTMLTextAreaElement>(null);
  const hintId = useId();

  useEffect(() => {
    if (focus) box.current?.focus();
  }, [focus]);

  const ready = canSend && !sending && text.trim().length > 0;

  function send(event?: FormEvent) {
    event?.preventDefault();
    if (ready) onSend(text.trim(), () => setText(""));
  }

  function onKeyDown(event: KeyboardEvent<HTMLTextAreaElement>) {
    // Enter while an input method composes a character belongs to the input method.
    if (event.key !== "Enter" || event.shiftKey || event.nativeEvent.isComposing) return;
    event.preventDefault();
    send();
  }

  return (
    <form className="chat-composer" onSubmit={send}>
      <textarea
        ref={box}
        className="input chat-input"
        aria-label="Message to the planner"
        aria-describedby={hintId}
        placeholder={
          question === "repair"
            ? "Answer the repair assistant's question…"
            : question === "planner"
              ? "Answer the planner's question…"
              : "Tell the planner what this workflow should do…"
        }
        rows={3}
        maxLength={4000}
        value={text}
        onChange={(event) => setText(event.target.value)}
        onKeyDown={onKeyDown}
      />
      <div className="chat-composer-footer">
        <span className="field-hint" id={hintId}>
          Enter sends · Shift+Enter starts a new line
        </span>
        <button type="submit" className="button button-primary" data-testid="chat-send" disabled={!ready}>
          {sending && <Spinner />}
          Send
        </button>
      </div>
    </form>
  );
}
