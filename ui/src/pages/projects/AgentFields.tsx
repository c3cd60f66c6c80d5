// What Claude Code or Codex needs besides being chosen: where its model comes from (the
// person's own sign-in, or a provider set up in Healer whose key goes to the agent only), the
// model's name, the tools Claude Code may use, and where its program is.
import { useId } from "react";
import type { FieldProblem, InstalledAgent, ProviderView } from "../../bindings";
import { FieldProblems } from "../../components/FieldProblems";
import { settingsHref } from "../../usePage";
import { useProviders } from "../../queries";
import { agentLabel } from "../../projectText";
import type { ProjectForm } from "./projectFormModel";

/** The providers an agent can talk to: Claude Code only Anthropic's API, Codex only OpenAI's. */
function fits(agent: ProjectForm["agent"], view: ProviderView): boolean {
  return agent === "claude-code" ? view.provider.kind === "anthropic" : view.provider.kind !== "anthropic";
}

export function AgentFields({
  form,
  installed,
  change,
  under,
}: {
  form: ProjectForm;
  installed: InstalledAgent | undefined;
  change: (fields: Partial<ProjectForm>) => void;
  under: (field: string) => FieldProblem[];
}) {
  const ids = { provider: useId(), model: useId(), tools: useId(), program: useId() };
  const providers = useProviders();
  const name = agentLabel[form.agent];
  const usable = (providers.data ?? []).filter((v) => fits(form.agent, v));
  const own = form.agentProvider === "";
  const kindWord = form.agent === "claude-code" ? "Anthropic" : "OpenAI-compatible or Ollama";

  return (
    <div className="agent-fields" data-testid="agent-fields">
      <div className="field">
        <span className="field-label">Where {name} gets its model</span>
        <div className="schedule-choices" role="radiogroup" aria-label={`Where ${name} gets its model`}>
          <label className="schedule-choice">
            <input type="radio" name="agent-model" checked={own} onChange={() => change({ agentProvider: "" })} data-testid="agent-own-login" />
            <span>Its own sign-in on this computer</span>
          </label>
          <label className="schedule-choice">
            <input
              type="radio"
              name="agent-model"
              checked={!own}
              disabled={usable.length === 0}
              onChange={() => change({ agentProvider: usable[0]?.provider.name ?? "" })}
              data-testid="agent-healer-provider"
            />
            <span>A model provider set up in Healer</span>
          </label>
        </div>
        {!own && (
          <select
            id={ids.provider}
            className="select narrow-wide"
            value={form.agentProvider}
            onChange={(e) => change({ agentProvider: e.target.value })}
            aria-label="Model provider"
            aria-invalid={under("agentProvider").length > 0}
            data-testid="field-agent-provider"
          >
            {/* A provider removed since it was chosen stays listed, so the problem under it makes sense. */}
            {!usable.some((v) => v.provider.name === form.agentProvider) && <option value={form.agentProvider}>{form.agentProvider}</option>}
            {usable.map((v) => (
              <option key={v.provider.name} value={v.provider.name}>
                {v.provider.name}
              </option>
            ))}
          </select>
        )}
        <p className="field-hint" data-testid="agent-model-hint">
          {own
            ? `${name} uses the account or key it is signed in with on this computer.`
            : `Healer gives the provider's key to ${name} only while it works, and keeps it out of everything it records.`}
          {usable.length === 0 && (
            <>
              {" "}
              To use a provider of Healer's, add an {kindWord} provider in <a href={settingsHref("models")}>Settings → Models</a>.
            </>
          )}
        </p>
        <FieldProblems problems={under("agentProvider")} id={`${ids.provider}-error`} testId="field-error-agent-provider" />
      </div>
      <div className="field">
        <label className="field-label" htmlFor={ids.model}>
          Model <span className="field-optional">optional</span>
        </label>
        <input
          id={ids.model}
          className="input mono narrow-wide"
          value={form.model}
          onChange={(e) => change({ model: e.target.value })}
          placeholder={`${name}'s default`}
          spellCheck={false}
          aria-invalid={under("model").length > 0}
          data-testid="field-model"
        />
        <FieldProblems problems={under("model")} id={`${ids.model}-error`} testId="field-error-model" />
      </div>
      {form.agent === "claude-code" && (
        <div className="field">
          <label className="field-label" htmlFor={ids.tools}>
            Tools it may use
          </label>
          <input
            id={ids.tools}
            className="input mono"
            value={form.allowedTools}
            onChange={(e) => change({ allowedTools: e.target.value })}
            spellCheck={false}
            aria-invalid={under("allowedTools").length > 0}
            data-testid="field-allowed-tools"
          />
          <p className="field-hint">Nobody is there to approve a tool while it works, so it uses only these. Separate them with commas.</p>
          <FieldProblems problems={under("allowedTools")} id={`${ids.tools}-error`} testId="field-error-allowed-tools" />
        </div>
      )}
      <div className="field">
        <label className="field-label" htmlFor={ids.program}>
          Program <span className="field-optional">optional</span>
        </label>
        <input
          id={ids.program}
          className="input mono"
          value={form.agentProgram}
          onChange={(e) => change({ agentProgram: e.target.value })}
          placeholder={installed?.program ?? `/path/to/${form.agent === "claude-code" ? "claude" : "codex"}`}
          spellCheck={false}
          aria-invalid={under("agentProgram").length > 0}
          data-testid="field-agent-program"
        />
        <p className="field-hint">
          {installed?.program ? `Leave it empty to use the one found on this computer, ${installed.program}.` : `Where ${name} is installed, if it is not on the usual path.`}
        </p>
        <FieldProblems problems={under("agentProgram")} id={`${ids.program}-error`} testId="field-error-agent-program" />
      </div>
    </div>
  );
}
