import { useState } from "react";
import type { ChangeReview as Review, ReviewComment, ReviewFile, Runtime } from "../../bindings";
import { InlineError } from "../../components/InlineError";
import { VersionDiff } from "../../components/LazyCode";
import { SkeletonList } from "../../components/Loading";
import { useOpenWorktree, useReviewComments, useSessionReview, useTaskReview } from "../../projectQueries";
import { plural } from "../../workflowText";
import { FileComments, SendComments, type Lines } from "./ReviewComments";

/** Where comments on a task's lines are kept (a task's review; a session's has none). */
type Commenting = { projectId: number; taskId: string; comments: ReviewComment[] };

const howLabel: Record<string, string> = {
  added: "New file",
  deleted: "Deleted",
  modified: "Changed",
  renamed: "Renamed",
  "changed type": "Changed type",
};

/** The colouring the side-by-side view gives a file, from its name. */
function runtimeOf(path: string): Runtime {
  const name = path.toLowerCase();
  if (name.endsWith(".py")) return { kind: "python3" };
  if (/\.(m?js|cjs|jsx|ts|tsx)$/.test(name)) return { kind: "node" };
  if (/\.(sh|bash)$/.test(name)) return { kind: "bash" };
  return { kind: "custom", command: "" };
}

function FileRow({
  file,
  open,
  onToggle,
  commenting,
}: {
  file: ReviewFile;
  open: boolean;
  onToggle: () => void;
  commenting?: Commenting;
}) {
  const [picked, setPicked] = useState<Lines | null>(null);
  const canComment = commenting && file.shown && file.after != null;
  const count = commenting?.comments.filter((c) => c.path === file.path).length ?? 0;
  return (
    <li className={open ? "review-file open" : "review-file"} data-testid="review-file" data-path={file.path}>
      <button type="button" className="review-file-head" aria-expanded={open} onClick={onToggle}>
        <span className="review-file-path mono">
          {file.old_path ? `${file.old_path} → ${file.path}` : file.path}
        </span>
        <span className="review-file-how muted">{howLabel[file.how] ?? file.how}</span>
        <span className="diff-stat diff-stat-added" aria-label={`${plural(file.added, "line")} added`}>
          +{file.added}
        </span>
        <span className="diff-stat diff-stat-removed" aria-label={`${plural(file.removed, "line")} removed`}>
          −{file.removed}
        </span>
        {count > 0 && <span className="muted">{plural(count, "comment")}</span>}
      </button>
      {open &&
        (file.shown && !file.before && !file.after ? (
          <p className="muted review-file-hidden">An empty file.</p>
        ) : file.shown ? (
          <VersionDiff
            before={file.before ?? ""}
            after={file.after ?? ""}
            runtime={runtimeOf(file.path)}
            onSelectLines={canComment ? (from, to) => setPicked({ from, to }) : undefined}
          />
        ) : (
          <p className="muted review-file-hidden">This file is not text, or too large to show here.</p>
        ))}
      {open && canComment && commenting && (
        <FileComments
          projectId={commenting.projectId}
          taskId={commenting.taskId}
          path={file.path}
          comments={commenting.comments}
          picked={picked}
          onDone={() => setPicked(null)}
        />
      )}
    </li>
  );
}

/**
 * What an agent changed, file by file, each opening side by side like a workflow's versions;
 * with buttons that open its working copy in the person's editor or a terminal.
 */
export function ChangeReview({
  review,
  loading,
  error,
  title,
  commenting,
}: {
  review: Review | undefined;
  loading: boolean;
  error: unknown;
  title: string;
  commenting?: Commenting;
}) {
  const [open, setOpen] = useState<string | null | undefined>(undefined);
  const openWorktree = useOpenWorktree();
  if (loading) return <SkeletonList rows={2} label="Loading what changed" />;
  if (error != null) return <InlineError lead="What changed couldn't be read." error={error} />;
  if (!review) return null;
  const files = review.files;
  const added = files.reduce((n, f) => n + f.added, 0);
  const removed = files.reduce((n, f) => n + f.removed, 0);
  // The first file is open until the person chooses.
  const opened = open === undefined ? (files[0]?.path ?? null) : open;
  const where =
    review.of === "commit"
      ? `In commit ${review.commit ?? ""}.`
      : review.of === "worktree"
        ? "In the working copy as it is now, against where the task started."
        : "";
  return (
    <section className="card change-review" data-testid="change-review" data-of={review.of} aria-label={title}>
      <div className="change-review-head">
        <div>
          <h2 className="section-title">{title}</h2>
          {files.length > 0 ? (
            <p className="muted" data-testid="change-review-summary">
              {plural(files.length + review.more_files, "file")} changed · {plural(added, "line")} added ·{" "}
              {plural(removed, "line")} removed. {where}
            </p>
          ) : (
            <p className="muted" data-testid="change-review-summary">
              {review.of === "nothing" ? "Nothing to show: no commit, and the working copy is gone." : "No change yet."}
            </p>
          )}
        </div>
        {review.worktree && review.session_id !== null && (
          <div className="change-review-actions">
            <button
              type="button"
              className="button button-small"
              onClick={() => openWorktree.mutate({ sessionId: review.session_id ?? 0, terminal: false })}
              data-testid="open-in-editor"
            >
              Open in editor
            </button>
            <button
              type="button"
              className="button button-small"
              onClick={() => openWorktree.mutate({ sessionId: review.session_id ?? 0, terminal: true })}
              data-testid="open-terminal"
            >
              Open a terminal here
            </button>
          </div>
        )}
      </div>
      {openWorktree.isError && <InlineError lead="It did not open." error={openWorktree.error} />}
      {commenting && <SendComments projectId={commenting.projectId} taskId={commenting.taskId} comments={commenting.comments} />}
      {files.length > 0 && (
        <ul className="review-files">
          {files.map((file) => (
            <FileRow
              key={file.path}
              file={file}
              open={opened === file.path}
              onToggle={() => setOpen(opened === file.path ? null : file.path)}
              commenting={commenting}
            />
          ))}
        </ul>
      )}
      {review.more_files > 0 && <p className="muted">And {plural(review.more_files, "more file")} not listed.</p>}
    </section>
  );
}

/** A session's own change (on its page, or an earlier session of a task). */
export function SessionChange({ sessionId, running }: { sessionId: number; running: boolean }) {
  const review = useSessionReview(sessionId, running);
  return <ChangeReview review={review.data} loading={review.isPending} error={review.error} title="What this session changed" />;
}

/** A task's change: its running session's working copy, else its last commit. */
export function TaskChange({ projectId, taskId, running }: { projectId: number; taskId: string; running: boolean }) {
  const review = useTaskReview(projectId, taskId, running);
  const comments = useReviewComments(projectId, taskId, running);
  return (
    <ChangeReview
      review={review.data}
      loading={review.isPending}
      error={review.error}
      title="What the agent changed"
      commenting={{ projectId, taskId, comments: comments.data ?? [] }}
    />
  );
}
