import { useLayoutEffect, useRef, useState } from "react";
import type { EventRecord, PlannerChat } from "../../bindings";
import { AlertIcon } from "../../components/icons";
import { InlineError } from "../../components/InlineError";
import { SkeletonList, Spinner } from "../../components/Loading";
import { newestId, useLiveThreadText } from "../../liveThreads";
import { capitalised } from "../../modelText";
import { useEvents } from "../../queries";
import { usePlannerChat, useSendPlannerMessage } from "../../taskQueries";
import { settingsHref, setupHref } from "../../usePage";
import { Bubble, ChatMessages, RepairQuestion } from "./ChatMessages";
import { ChatComposer } from "./ChatComposer";

/** How the chat's last turn ended, when it ended without an answer. */
type Failure = { eventId: number; failed: boolean; summary: string };

/**
 * The chat answer carries no word of a turn that failed (no model, a cap, a provider error), so
 * it is read from the engine's events: the chat task's newest step or end, if that is a failure.
 */
function lastTurnFailure(events: EventRecord[] | undefined, taskId: number | null): Failure | null {
  if (!events || taskId === null) return null;
  for (const { id, event } of events) {
    if (event.kind === "task_message_added" && event.task_id === taskId) return null;
    if (event.kind === "task_finished" && event.task_id === taskId) {
      if (event.status !== "failed" && event.status !== "stopped") return null;
      return { eventId: id, failed: event.status === "failed", summary: event.summary };
    }
  }
  return null;
}

/** A message the person sent that the chat does not show yet: after `users` messages of theirs. */
type Sent = { text: string; users: number; afterEvent: number };

const personMessages = (chat: PlannerChat) => chat.messages.filter((m) => m.role === "user").length;

function FailureNote({ failure }: { failure: Failure }) {
  const reason = capitalised(failure.summary.trim());
  return (
    <div className="inline-error chat-failure" role="alert" data-testid="chat-failure">
      <AlertIcon size={18} />
      <div className="inline-error-text">
        <strong>{failure.failed ? "The planner could not answer." : "The planner stopped before it answered."} </strong>
        {reason}
        {failure.failed &&
          (/no model/i.test(reason) ? (
            <>
              {" "}
              <a href={setupHref}>Set up a model</a>
            </>
          ) : (
            <>
              {" "}
              <a href={settingsHref("models")}>Check the model settings</a>
            </>
          ))}
      </div>
    </div>
  );
}

function Conversation({ chat, workflowId, focus }: { chat: PlannerChat; workflowId: number; focus: boolean }) {
  const send = useSendPlannerMessage(workflowId);
  const events = useEvents();
  const live = useLiveThreadText(chat.task_id, newestId(chat.messages));
  const [sent, setSent] = useState<Sent | null>(null);
  const list = useRef<HTMLOListElement>(null);

  const unseen = sent && personMessages(chat) <= sent.users ? sent : null;
  const failure = lastTurnFailure(events.data, chat.task_id);
  const thinking = chat.busy || send.isPending;
  const showFailure = failure && !thinking && !(sent && sent.afterEvent >= failure.eventId);

  // Keep the newest message in view as the conversation grows.
  useLayoutEffect(() => {
    const element = list.current;
    if (element) element.scrollTop = element.scrollHeight;
  }, [chat.messages.length, live, thinking, unseen]);

  function onSend(message: string, done: () => void) {
    const before = { users: personMessages(chat), afterEvent: events.data?.[0]?.id ?? 0 };
    send.mutate(message, {
      onSuccess: () => {
        setSent({ text: message, ...before });
        done();
      },
    });
  }

  const empty = chat.messages.length === 0 && !unseen;
  const asked = chat.maintainer_question;
  return (
    <>
      {asked !== null && !unseen && (
        <ol className="chat-messages chat-carried" aria-label="Waiting for your answer">
          <RepairQuestion text={asked} waiting />
        </ol>
      )}
      {empty ? (
        asked === null && (
        <div className="chat-empty">
          <p>
            Tell the planner what this workflow should do, or what should change. It can rewrite the script (as a new
            version you can compare) and change when it runs, and it asks you when something is unclear.
          </p>
        </div>
        )
      ) : (
        <ol className="chat-messages" ref={list} aria-label="Conversation">
          <ChatMessages messages={chat.messages} workflowId={workflowId} answered={chat.answered_question} />
          {unseen && (
            <Bubble from="person" pending>
              {unseen.text}
            </Bubble>
          )}
          {live && (
            <Bubble from="planner" pending>
              {live}
            </Bubble>
          )}
        </ol>
      )}
      {thinking && (
        <p className="chat-thinking" role="status">
          <Spinner /> The planner is thinking…
        </p>
      )}
      {showFailure && <FailureNote failure={failure} />}
      {send.isError && <InlineError lead="The message couldn't be sent." error={send.error} />}
      <ChatComposer
        question={chat.question !== null ? "planner" : asked !== null ? "repair" : null}
        canSend={!chat.busy}
        sending={send.isPending}
        focus={focus}
        onSend={onSend}
      />
    </>
  );
}

/** The workflow's chat with the planner: what Re-plan opens. */
export function ChatTab({ workflowId, focus }: { workflowId: number; focus: boolean }) {
  const chat = usePlannerChat(workflowId);
  let body;
  if (chat.isPending) body = <SkeletonList rows={2} label="Loading the chat" />;
  else if (chat.isError) {
    body = <InlineError lead="The chat couldn't be loaded." error={chat.error} onRetry={() => void chat.refetch()} />;
  } else body = <Conversation chat={chat.data} workflowId={workflowId} focus={focus} />;

  return (
    <section className="card chat-card" data-testid="planner-chat" aria-labelledby="chat-title">
      <div className="chat-header">
        <h2 className="section-title" id="chat-title">
          Chat with the planner
        </h2>
        <p className="muted">
          Say in your own words what this workflow should do. The planner changes its script or schedule when you
          agree, and tells you here.
        </p>
      </div>
      {body}
    </section>
  );
}
