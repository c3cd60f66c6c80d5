// What Claude Code, Codex, opencode or Gemini CLI needs besides being chosen: where its model comes from (the
// person's own sign-in, or a provider set up in Healer whose key goes to the agent only), the
// model's name, the tools Claude Code may use, and where its program is.
import { useId } from "react";
import type { FieldProblem, InstalledAgent, ProviderView } from "../../bindings";
import { FieldProblems } from "../../components/FieldProblems";
import { settingsHref } from "../../usePage";
import { useProviders } from "../../queries";
import { agentLabel, agentProgramName } from "../../projectText";
import { cents, type ProjectForm } from "./projectFormModel";

/**
 * The providers an agent can talk to: Claude Code only Anthropic's API, Gemini CLI only Google's,
 * Codex and opencode OpenAI's (or Ollama's).
 */
function fits(agent: ProjectForm["agent"], view: ProviderView): boolean {
  const kind = view.provider.kind;
  if (agent === "claude-code") return kind === "anthropic";
  if (agent === "gemini-cli") return kind === "gemini";
  return kind === "openai_compatible" || kind === "ollama";
}

/** The kind of provider to add for an agent, in words. */
function kindWordFor(agent: ProjectForm["agent"]): string {
  if (agent === "claude-code") return "Anthropic";
  if (agent === "gemini-cli") return "Gemini API";
  return "OpenAI-compatible or Ollama";
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
  const ids = { provider: useId(), model: useId(), tools: useId(), program: useId(), cap: useId(), capTokens: useId() };
  const providers = useProviders();
  const name = agentLabel[form.agent];
  const usable = (providers.data ?? []).filter((v) => fits(form.agent, v));
  const own = form.agentProvider === "";
  const kindWord = kindWordFor(form.agent);

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
            : `Healer keeps the provider's key itself: ${name} gets a pass that works only for its session, and its requests go to the provider through Healer.`}
          {usable.length === 0 && (
            <>
              {" "}
              To use a provider of Healer's, add an {kindWord} provider in <a href={settingsHref("models")}>Settings → Models</a>.
            </>
          )}
        </p>
        <FieldProblems problems={under("agentProvider")} id={`${ids.provider}-error`} testId="field-error-agent-provider" />
      </div>
      {!own && <SpendingCap form={form} change={change} under={under} ids={ids} />}
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
      {form.agent === "claude-code" && form.preset === "never_ask" && (
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
          placeholder={installed?.program ?? `/path/to/${agentProgramName[form.agent]}`}
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

/** The session's spending cap: money where the model has a price in Healer, tokens where not. */
function SpendingCap({
  form,
  change,
  under,
  ids,
}: {
  form: ProjectForm;
  change: (fields: Partial<ProjectForm>) => void;
  under: (field: string) => FieldProblem[];
  ids: { cap: string; capTokens: string };
}) {
  const noMoneyCap = cents(form.capDollars) === 0;
  const noTokenCap = form.capTokens.replace(/[\s,_]/g, "") === "0";
  return (
    <div className="field" data-testid="spending-cap">
      <label className="field-label" htmlFor={ids.cap}>
        Stop a session after it spends
      </label>
      <div className="inline-fields">
        <span className="input-prefix">$</span>
        <input
          id={ids.cap}
          className="input narrow"
          inputMode="decimal"
          value={form.capDollars}
          onChange={(e) => change({ capDollars: e.target.value })}
          aria-invalid={under("capDollars").length > 0}
          data-testid="field-cap-dollars"
        />
        <span className="muted">on the model, or uses</span>
        <input
          id={ids.capTokens}
          className="input narrow"
          inputMode="numeric"
          aria-label="Tokens a session may use of a model with no price"
          value={form.capTokens}
          onChange={(e) => change({ capTokens: e.target.value })}
          aria-invalid={under("capTokens").length > 0}
          data-testid="field-cap-tokens"
        />
        <span className="muted">tokens of a model with no price</span>
      </div>
      <p className="field-hint" data-testid="spending-cap-hint">
        {noMoneyCap || noTokenCap
          ? "With 0 there is no cap: a session may spend as much as its work takes."
          : "Healer counts every request on its way to the provider. At the cap it stops the agent and the task waits for you; its work is kept."}
      </p>
      <FieldProblems problems={[...under("capDollars"), ...under("capTokens")]} id={`${ids.cap}-error`} testId="field-error-cap" />
    </div>
  );
}
