// The planner chat's conversation: the person's messages on the right, the planner's on the
// left, and what its tools did as small cards between them.
import type { ReactNode } from "react";
import type { AnsweredQuestion, ThreadMessage, ToolCall } from "../../bindings";
import { CheckIcon, HealerNoteIcon } from "../../components/icons";
import { Spinner } from "../../components/Loading";
import { capitalised } from "../../modelText";
import { callArguments, orphanResults, refusalText, resultsByCall, savedVersion, textArgument } from "../../threadText";
import { workflowHref } from "../../usePage";

export function Bubble({ from, children, pending = false }: { from: "person" | "planner"; children: ReactNode; pending?: boolean }) {
  return (
    <li className={`chat-item from-${from}${pending ? " pending" : ""}`} data-testid={`chat-${from}`}>
      <div className="chat-bubble">{children}</div>
    </li>
  );
}

/** A tool the planner used, as a card; or, when it was refused, a quiet line saying why. */
function ToolCard({ call, result, workflowId }: { call: ToolCall; result: ThreadMessage | undefined; workflowId: number }) {
  const args = callArguments(call);
  if (result?.is_error) {
    return (
      <li className="chat-item chat-quiet" data-testid="chat-tool-error">
        {refusalText(result.content)}
      </li>
    );
  }
  switch (call.name) {
    case "save": {
      const version = savedVersion(result);
      const comment = textArgument(args, "comment");
      return (
        <li className="chat-item chat-tool" data-testid="chat-save">
          {result ? <CheckIcon size={16} /> : <Spinner />}
          <span className="chat-tool-text">
            <strong>{!result ? "Saving a new version…" : version ? `Saved version ${version}` : "Saved a new version"}</strong>
            {comment && ` — ${comment}`}
          </span>
          {result && (
            <a className="chat-tool-link" href={workflowHref(workflowId, "versions")}>
              See what changed
            </a>
          )}
        </li>
      );
    }
    case "schedule":
      return (
        <li className="chat-item chat-tool" data-testid="chat-schedule">
          {result ? <CheckIcon size={16} /> : <Spinner />}
          <span className="chat-tool-text">
            {result ? capitalised(result.content) : `Changing the schedule to “${textArgument(args, "schedule") ?? ""}”…`}
          </span>
        </li>
      );
    case "ask":
      return (
        <li className="chat-item chat-question" data-testid="chat-question">
          <span className="chat-question-label">The planner asks</span>
          <p>{textArgument(args, "question")}</p>
        </li>
      );
    default:
      return (
        <li className="chat-item chat-quiet">
          <HealerNoteIcon size={14} /> Used {call.name}
        </li>
      );
  }
}

/** The automatic repair's question, kept in the conversation before the person's answer. */
export function RepairQuestion({ text, waiting }: { text: string; waiting: boolean }) {
  return (
    <li className="chat-item chat-question" data-testid="maintainer-question" data-answered={!waiting}>
      <span className="chat-question-label">{waiting ? "The automatic repair stopped and asks you" : "The automatic repair stopped and asked you"}</span>
      <p>{text}</p>
      {waiting && <span className="field-hint">Your answer goes to the planner, which can change the script with it.</span>}
    </li>
  );
}

/** Every stored step of the chat, in order; the repair's answered question before its answer. */
export function ChatMessages({
  messages,
  workflowId,
  answered = null,
}: {
  messages: ThreadMessage[];
  workflowId: number;
  answered?: AnsweredQuestion | null;
}) {
  const results = resultsByCall(messages);
  const orphans = orphanResults(messages);
  const answerId = answered ? messages.find((m) => m.role === "user" && m.at > answered.asked_at)?.id : undefined;
  return messages.map((m) => {
    switch (m.role) {
      case "system":
        return null;
      case "user":
        return [
          m.id === answerId && answered ? <RepairQuestion key={`q-${m.id}`} text={answered.text} waiting={false} /> : null,
          <Bubble key={m.id} from="person">
            {m.content}
          </Bubble>,
        ];
      case "assistant":
        return [
          m.content.trim() ? (
            <Bubble key={m.id} from="planner">
              {m.content}
            </Bubble>
          ) : null,
          ...m.tool_calls.map((call) => (
            <ToolCard key={`${m.id}-${call.id}`} call={call} result={results.get(call.id)} workflowId={workflowId} />
          )),
        ];
      case "nudge":
        // Healer's own reminder after a reply it could not use: never the person's words.
        return (
          <li key={m.id} className="chat-item chat-quiet" data-testid="chat-nudge">
            Healer asked the planner again: its reply had no usable answer.
          </li>
        );
      case "tool":
        // Results belong to their call's card; one whose call is not shown says only a failure.
        return orphans.has(m.id) && m.is_error ? (
          <li key={m.id} className="chat-item chat-quiet" data-testid="chat-tool-error">
            {refusalText(m.content)}
          </li>
        ) : null;
    }
  });
}
