// Comments on the agent's lines: the person selects lines on the new side of a file, writes
// what should change, and the comments gather until "Send to the agent" sends them as one
// message. Each shows whether it waits, was sent, or was answered by the agent's next change.
import { useState } from "react";
import type { ReviewComment } from "../../bindings";
import { InlineError } from "../../components/InlineError";
import { Spinner } from "../../components/Loading";
import { useAddReviewComment, useDeleteReviewComment, useSendReviewComments } from "../../projectQueries";
import { toast } from "../../toasts";
import { plural } from "../../workflowText";

export type Lines = { from: number; to: number };

export function linesWords({ from, to }: Lines): string {
  return from === to ? `line ${from}` : `lines ${from}–${to}`;
}

function stateOf(comment: ReviewComment): { words: string; tone: string } {
  if (comment.addressed_at) return { words: "Answered: the agent changed these lines", tone: "answered" };
  if (comment.sent_at) return { words: "Sent to the agent", tone: "sent" };
  return { words: "Waiting to be sent", tone: "waiting" };
}

/** The count of comments waiting, and the button that sends them. */
export function SendComments({ projectId, taskId, comments }: { projectId: number; taskId: string; comments: ReviewComment[] }) {
  const send = useSendReviewComments(projectId, taskId);
  const waiting = comments.filter((c) => !c.sent_at).length;
  if (waiting === 0 && !send.isError) return null;
  return (
    <div className="comments-send" data-testid="comments-send">
      {waiting > 0 && (
        <>
          <span>{plural(waiting, "comment")} waiting to be sent.</span>
          <button
            type="button"
            className="button button-primary button-small"
            disabled={send.isPending}
            onClick={() => send.mutateAsync().then((sent) => toast(sent.said), () => undefined)}
            data-testid="send-comments"
          >
            {send.isPending && <Spinner />}
            Send to the agent
          </button>
        </>
      )}
      {send.isError && <InlineError lead="The comments were not sent." error={send.error} />}
    </div>
  );
}

/** A file's comments, and the form for the lines the person selected. */
export function FileComments({
  projectId,
  taskId,
  path,
  comments,
  picked,
  onDone,
}: {
  projectId: number;
  taskId: string;
  path: string;
  comments: ReviewComment[];
  picked: Lines | null;
  onDone: () => void;
}) {
  const add = useAddReviewComment(projectId, taskId);
  const remove = useDeleteReviewComment(projectId, taskId);
  const [writing, setWriting] = useState(false);
  const [text, setText] = useState("");
  const mine = comments.filter((c) => c.path === path);
  const save = () => {
    if (!picked || !text.trim()) return;
    add.mutate(
      { path, from: picked.from, to: picked.to, text: text.trim() },
      {
        onSuccess: () => {
          setText("");
          setWriting(false);
          onDone();
        },
      },
    );
  };
  return (
    <div className="file-comments" data-testid="file-comments">
      {writing && picked ? (
        <form
          className="comment-form"
          onSubmit={(e) => {
            e.preventDefault();
            save();
          }}
        >
          <label>
            <span>Your comment on {linesWords(picked)}</span>
            <textarea
              value={text}
              rows={3}
              autoFocus
              onChange={(e) => setText(e.target.value)}
              onKeyDown={(e) => {
                if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) save();
                if (e.key === "Escape") setWriting(false);
              }}
              placeholder="What should the agent change here?"
              data-testid="comment-text"
            />
          </label>
          <div className="comment-form-actions">
            <button type="submit" className="button button-primary button-small" disabled={!text.trim() || add.isPending} data-testid="save-comment">
              {add.isPending && <Spinner />}
              Keep the comment
            </button>
            <button type="button" className="button button-small" onClick={() => setWriting(false)}>
              Cancel
            </button>
          </div>
          {add.isError && <InlineError lead="The comment was not kept." error={add.error} />}
        </form>
      ) : (
        <p className="comment-hint muted">
          {picked ? (
            <button type="button" className="button button-small" onClick={() => setWriting(true)} data-testid="comment-on-lines">
              Comment on {linesWords(picked)}
            </button>
          ) : (
            "Select a line on the right to comment on it."
          )}
        </p>
      )}
      {mine.length > 0 && (
        <ul className="comment-list">
          {mine.map((c) => {
            const state = stateOf(c);
            return (
              <li key={c.id} className="comment" data-testid="review-comment" data-state={state.tone}>
                <div className="comment-head">
                  <span className="comment-lines">{linesWords({ from: c.line_start, to: c.line_end })}</span>
                  <span className={`comment-state comment-state-${state.tone}`}>{state.words}</span>
                  {!c.sent_at && (
                    <button type="button" className="link-button" onClick={() => remove.mutate(c.id)} aria-label={`Remove the comment on ${linesWords({ from: c.line_start, to: c.line_end })}`}>
                      Remove
                    </button>
                  )}
                </div>
                <p className="comment-text">{c.text}</p>
              </li>
            );
          })}
        </ul>
      )}
    </div>
  );
}
