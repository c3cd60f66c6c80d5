import { useId, useRef, useState } from "react";
import { toApiError } from "../../api";
import type { ConnectionTest, Tier } from "../../bindings";
import { InlineError } from "../../components/InlineError";
import { SecretsFileChoice, useKeptWhere } from "../../components/SecretsFileChoice";
import { Spinner } from "../../components/Loading";
import { tierLabel, tiers } from "../../modelText";
import { useSaveProvider, useSetProviderKey, useSetTier, useSkipSetup, useTestProvider } from "../../queries";
import { toast } from "../../toasts";
import { navigate, pageHref, settingsHref } from "../../usePage";
import { choices, defaultBudget, defaultModel, slugOf, type Choice } from "./setupChoices";

/** One sentence per tier: what it is used for. */
const tierSentence: Record<Tier, string> = {
  cheap: "Cheap: the first try at every repair, and small, frequent jobs like sorting out why a run failed. A small, fast model is right.",
  standard: "Standard: a repair's second try when the first did not hold, and the Re-plan chat. A capable everyday model.",
  deep: "Deep: a repair's last try, after the others did not hold. Your strongest model.",
};

/**
 * The first step for someone who has never set up a model: choose where the models are, give
 * the key (kept in the keyring, or read from an environment variable where there is none), test
 * it, and choose a model for each tier. Every step can be skipped.
 */
export function SetupPage() {
  const [choice, setChoice] = useState<Choice>(choices[0]);
  const [name, setName] = useState(choices[0].name);
  const [url, setUrl] = useState(choices[0].baseUrl);
  const [keyEnv, setKeyEnv] = useState(choices[0].keyEnv ?? "");
  const [noKeyring, setNoKeyring] = useState(false);
  const [keyKept, setKeyKept] = useState(false);
  const [test, setTest] = useState<ConnectionTest | null>(null);
  const [models, setModels] = useState<Record<Tier, string>>({ cheap: "", standard: "", deep: "" });
  const keyField = useRef<HTMLInputElement>(null);
  const ids = { name: useId(), url: useId(), key: useId(), env: useId() };
  const slug = slugOf(name);
  const saveProvider = useSaveProvider();
  const setKey = useSetProviderKey(slug);
  const testProvider = useTestProvider(slug);
  const setTier = useSetTier();
  const skipSetup = useSkipSetup();
  const keptWhere = useKeptWhere();
  const [finishing, setFinishing] = useState(false);
  const [finishError, setFinishError] = useState<unknown>(null);

  function choose(next: Choice) {
    setChoice(next);
    setName(next.name);
    setUrl(next.baseUrl);
    setKeyEnv(next.keyEnv ?? "");
    setTest(null);
    setKeyKept(false);
    setNoKeyring(false);
  }

  function skip() {
    skipSetup.mutate();
    navigate(pageHref("workflows"));
  }

  /** Saves the provider (with the environment variable), then the key if one was typed. */
  async function saveAll(): Promise<boolean> {
    await saveProvider.mutateAsync({
      name: slug,
      title: name.trim() || null,
      kind: choice.kind,
      base_url: url.trim() || null,
      key_env: choice.keyEnv === null ? null : keyEnv.trim() || null,
      prices: [],
    });
    const field = keyField.current;
    if (field && field.value.trim()) {
      try {
        await setKey.mutateAsync(field);
        setKeyKept(true);
      } catch (error) {
        const code = toApiError(error).code;
        if (code === "keyring" || code === "no_keyring") {
          setNoKeyring(true);
          return false;
        }
        throw error;
      }
    }
    return true;
  }

  async function onTest() {
    setTest(null);
    try {
      // A key that could not be kept is said where it was typed; testing without it says nothing more.
      if (!(await saveAll())) return;
      const result = await testProvider.mutateAsync();
      setTest(result);
      if (result.ok) {
        setModels({
          cheap: defaultModel(choice, "cheap", result.models),
          standard: defaultModel(choice, "standard", result.models),
          deep: defaultModel(choice, "deep", result.models),
        });
      }
    } catch {
      /* shown from the mutations' own error state */
    }
  }

  async function finish() {
    setFinishing(true);
    setFinishError(null);
    try {
      for (const tier of tiers) {
        if (models[tier]) {
          await setTier.mutateAsync({ tier, provider: slug, model: models[tier], budget_tokens: defaultBudget[tier] });
        }
      }
      skipSetup.mutate();
      toast(`Models are set up: ${name.trim() || slug} answers for Healer.`);
      navigate(settingsHref("models"));
    } catch (error) {
      setFinishError(error);
    } finally {
      setFinishing(false);
    }
  }

  const error = saveProvider.error ?? (noKeyring ? null : setKey.error) ?? testProvider.error;
  const needsKey = choice.keyEnv !== null;
  const listed = test?.ok ? test.models : [];

  return (
    <section className="page setup-page" data-testid="page-setup">
      <header className="page-header">
        <div>
          <h1 className="page-title">Set up a model</h1>
          <p className="page-description">
            Healer uses a language model to repair scripts and to talk through changes with you. Choose where your
            models are; it takes a minute. You can skip this and do it later in Settings → Models.
          </p>
        </div>
      </header>

      <section className="card setup-step">
        <h2 className="section-title">1. Where are your models?</h2>
        <div className="setup-choices" role="radiogroup" aria-label="Provider">
          {choices.map((c) => (
            <label key={c.id} className={c.id === choice.id ? "setup-choice selected" : "setup-choice"} data-testid={`setup-choice-${c.id}`}>
              <input type="radio" name="setup-provider" checked={c.id === choice.id} onChange={() => choose(c)} />
              <span className="setup-choice-label">{c.label}</span>
              <span className="setup-choice-hint">{c.hint}</span>
            </label>
          ))}
        </div>
        <div className="field">
          <label className="field-label" htmlFor={ids.name}>
            Name
          </label>
          <input id={ids.name} className="input" value={name} maxLength={40} onChange={(e) => setName(e.target.value)} data-testid="setup-name" />
          <span className="field-hint">Any name you like, to know it by here.</span>
        </div>
        {(choice.id === "other" || choice.id === "ollama") && (
          <div className="field">
            <label className="field-label" htmlFor={ids.url}>
              Address
            </label>
            <input
              id={ids.url}
              className="input"
              value={url}
              placeholder="http://127.0.0.1:8000/v1"
              onChange={(e) => setUrl(e.target.value)}
              data-testid="setup-url"
            />
          </div>
        )}
      </section>

      {needsKey && (
        <section className="card setup-step">
          <h2 className="section-title">2. Your key</h2>
          <div className="field">
            <label className="field-label" htmlFor={ids.key}>
              API key
            </label>
            <input
              id={ids.key}
              ref={keyField}
              className="input"
              type="password"
              autoComplete="off"
              placeholder={
                !keyKept
                  ? "Paste the key here"
                  : test?.error?.code === "model_auth"
                    ? "The kept key was refused: paste the right one"
                    : "Kept"
              }
              data-testid="setup-key"
            />
            <span className="field-hint">{keptWhere}</span>
          </div>
          <SecretsFileChoice
            what="keys"
            onChosen={() => {
              setNoKeyring(false);
              setKey.reset();
              // The key pasted before the choice is kept now, not dropped.
              const field = keyField.current;
              if (field && field.value.trim()) {
                setKey.mutateAsync(field).then(
                  () => setKeyKept(true),
                  () => undefined,
                );
              }
            }}
          />
          {noKeyring && (
            <p className="muted setup-said" role="status" data-testid="setup-no-keyring">
              The key is not kept yet: choose above where Healer keeps it, and the key you pasted is kept there.
            </p>
          )}
          <div className="field">
            <label className="field-label" htmlFor={ids.env}>
              Or read the key from the environment variable
            </label>
            <input id={ids.env} className="input" value={keyEnv} onChange={(e) => setKeyEnv(e.target.value)} data-testid="setup-key-env" />
          </div>
        </section>
      )}

      <section className="card setup-step">
        <h2 className="section-title">{needsKey ? "3." : "2."} Test it</h2>
        <div className="form-actions setup-actions-left">
          <button
            type="button"
            className="button button-primary"
            data-testid="setup-test"
            disabled={testProvider.isPending || saveProvider.isPending || (choice.id === "other" && !url.trim())}
            onClick={() => void onTest()}
          >
            {(testProvider.isPending || saveProvider.isPending) && <Spinner />}
            Test the connection
          </button>
        </div>
        {error != null && <InlineError lead="That did not work." error={error} />}
        {test && !test.ok && test.error && <InlineError lead="The connection test did not pass." error={test.error} />}
        {test?.ok && (
          <p className="result tone-good" role="status" data-testid="setup-test-ok">
            It works: {test.models.length} {test.models.length === 1 ? "model is" : "models are"} available.
          </p>
        )}
      </section>

      {test?.ok && (
        <section className="card setup-step" data-testid="setup-tiers">
          <h2 className="section-title">{needsKey ? "4." : "3."} Choose models</h2>
          <p className="muted">
            Healer never names a model in its work; it asks for a tier, and you choose which model answers each tier. Each
            tier has a budget: the most tokens (pieces of words) one attempt may use, so a repair can never run up a bill.
          </p>
          {tiers.map((tier) => (
            <div className="field setup-tier" key={tier}>
              <label className="field-label">
                {tierLabel[tier]}
                <select
                  className="select"
                  value={models[tier]}
                  data-testid={`setup-tier-${tier}`}
                  onChange={(e) => setModels({ ...models, [tier]: e.target.value })}
                >
                  {listed.map((m) => (
                    <option key={m} value={m}>
                      {m}
                    </option>
                  ))}
                </select>
              </label>
              <span className="field-hint">
                {tierSentence[tier]} Budget: {defaultBudget[tier].toLocaleString()} tokens per attempt.
              </span>
            </div>
          ))}
          {finishError != null && <InlineError lead="The models couldn't be saved." error={finishError} />}
        </section>
      )}

      <div className="form-actions">
        <button type="button" className="button" data-testid="setup-skip" onClick={skip}>
          Skip for now
        </button>
        <button
          type="button"
          className="button button-primary"
          data-testid="setup-finish"
          disabled={!test?.ok || finishing}
          onClick={() => void finish()}
        >
          {finishing && <Spinner />}
          Finish
        </button>
      </div>
    </section>
  );
}
