// What the first-run setup offers: five ways to reach a model, each with the engine kind, its
// address, the environment variable its key is read from, and sensible models for each tier.
import type { ProviderKind, Tier } from "../../bindings";
export { slugOf } from "../../modelText";

export type Choice = {
  id: "openai" | "anthropic" | "openrouter" | "ollama" | "other";
  label: string;
  hint: string;
  kind: ProviderKind;
  /** Empty: the person types it. */
  baseUrl: string;
  /** The variable a key is read from when no keyring is there; null: no key needed. */
  keyEnv: string | null;
  /** Preferred models per tier, used when the provider lists them. */
  models: Record<Tier, string[]>;
  name: string;
};

export const choices: Choice[] = [
  {
    id: "openai", label: "OpenAI", hint: "GPT models, with an API key from platform.openai.com",
    kind: "openai_compatible", baseUrl: "https://api.openai.com/v1", keyEnv: "OPENAI_API_KEY", name: "OpenAI",
    models: { cheap: ["gpt-4o-mini", "gpt-4.1-mini"], standard: ["gpt-4o", "gpt-4.1"], deep: ["o3", "gpt-4.1", "gpt-4o"] },
  },
  {
    id: "anthropic", label: "Anthropic", hint: "Claude models, with an API key from console.anthropic.com",
    kind: "anthropic", baseUrl: "https://api.anthropic.com", keyEnv: "ANTHROPIC_API_KEY", name: "Anthropic",
    models: {
      cheap: ["claude-3-5-haiku-latest"],
      standard: ["claude-sonnet-4-0", "claude-3-7-sonnet-latest"],
      deep: ["claude-opus-4-0", "claude-sonnet-4-0"],
    },
  },
  {
    id: "openrouter", label: "OpenRouter", hint: "Many providers' models behind one key from openrouter.ai",
    kind: "openai_compatible", baseUrl: "https://openrouter.ai/api/v1", keyEnv: "OPENROUTER_API_KEY", name: "OpenRouter",
    models: {
      cheap: ["openai/gpt-4o-mini"],
      standard: ["anthropic/claude-sonnet-4", "openai/gpt-4o"],
      deep: ["anthropic/claude-opus-4", "openai/o3"],
    },
  },
  {
    id: "ollama", label: "Ollama on this computer", hint: "Local models: no key, nothing leaves the machine",
    kind: "ollama", baseUrl: "http://127.0.0.1:11434", keyEnv: null, name: "Ollama",
    models: { cheap: [], standard: [], deep: [] },
  },
  {
    id: "other", label: "Another OpenAI-compatible address", hint: "vLLM, LM Studio, llama.cpp server, a company gateway…",
    kind: "openai_compatible", baseUrl: "", keyEnv: "MODELS_API_KEY", name: "My models",
    models: { cheap: [], standard: [], deep: [] },
  },
];

/** The preferred model the provider lists, else the first it lists. */
export function defaultModel(choice: Choice, tier: Tier, listed: string[]): string {
  return choice.models[tier].find((m) => listed.includes(m)) ?? listed[0] ?? "";
}

/** Token budgets per attempt by tier, as the engine's defaults. */
export const defaultBudget: Record<Tier, number> = { cheap: 5000, standard: 10000, deep: 20000 };
