import type { AgentAsk } from "../bindings";
import { askingAgent, deadlineSentence, visible, wantsLead, whySentence } from "../approvalText";
import { useNow } from "../time";

/**
 * What an agent asked to do, as the checkpoint dialog shows it: the command as it will run (or
 * the file and a preview of the change), why it asked, and what happens when nobody answers.
 */
export function AgentRequestView({ ask }: { ask: AgentAsk }) {
  const now = useNow(15_000);
  const { request } = ask;
  return (
    <div className="agent-request" data-testid="agent-request" data-kind={request.kind}>
      <p className="agent-request-lead">
        {askingAgent(ask)} {wantsLead(request)}:
      </p>
      {request.kind === "command" && (
        <pre className="agent-request-command" data-testid="agent-request-command" tabIndex={0} aria-label="The command">
          {visible(request.command)}
        </pre>
      )}
      {(request.kind === "edit" || request.kind === "read") && (
        <p className="agent-request-path" data-testid="agent-request-path">
          <code>{visible(request.path)}</code>
        </p>
      )}
      {request.kind === "edit" && request.preview.trim() && (
        <pre className="agent-request-preview" data-testid="agent-request-preview" tabIndex={0} aria-label="The change">
          {visible(request.preview)}
        </pre>
      )}
      {request.kind === "tool" && request.detail && (
        <pre className="agent-request-command" data-testid="agent-request-command" tabIndex={0}>
          {visible(request.detail)}
        </pre>
      )}
      <p className="agent-request-why" data-testid="agent-request-why">
        {whySentence(ask)}
      </p>
      {ask.status === "waiting" && (
        <p className="agent-request-deadline muted" data-testid="agent-request-deadline">
          {deadlineSentence(ask, now)}
        </p>
      )}
    </div>
  );
}
