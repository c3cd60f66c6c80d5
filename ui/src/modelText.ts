// Words and numbers a person reads about model providers, tiers, budgets and usage.
import type { KeySource, ModelPrice, ProviderKind, Tier } from "./bindings";
import type { Tone } from "./eventText";

export const providerKinds: ProviderKind[] = ["openai_compatible", "anthropic", "ollama", "gemini"];

export const providerKindLabel: Record<ProviderKind, string> = {
  openai_compatible: "OpenAI-compatible",
  anthropic: "Anthropic",
  ollama: "Ollama",
  gemini: "Gemini API",
};

export const providerKindHint: Record<ProviderKind, string> = {
  openai_compatible: "OpenAI, OpenRouter, vLLM, LM Studio",
  anthropic: "Claude, through the Messages API",
  ollama: "A local server; no key needed",
  gemini: "Google's models, for Gemini CLI sessions only",
};

/** The address the engine uses when none is given (the same as the engine's). */
export const defaultBaseUrl: Record<ProviderKind, string> = {
  openai_compatible: "https://api.openai.com/v1",
  anthropic: "https://api.anthropic.com",
  ollama: "http://127.0.0.1:11434",
  gemini: "https://generativelanguage.googleapis.com",
};

/** The variable read for the key when the provider names none. */
export const defaultKeyEnv: Record<ProviderKind, string | null> = {
  openai_compatible: "OPENAI_API_KEY",
  anthropic: "ANTHROPIC_API_KEY",
  ollama: null,
  gemini: "GEMINI_API_KEY",
};

export const tiers: Tier[] = ["cheap", "standard", "deep"];

export const tierLabel: Record<Tier, string> = { cheap: "Cheap", standard: "Standard", deep: "Deep" };

export const tierPurpose: Record<Tier, string> = {
  cheap: "First tries at repairs, small frequent jobs",
  standard: "Second tries, the Re-plan chat",
  deep: "A repair's last try",
};

export const keyTone: Record<KeySource["source"], Tone> = {
  keyring: "good",
  file: "good",
  env: "good",
  not_needed: "neutral",
  missing: "bad",
};

/** The engine's words are written for a terminal line; on screen they start a sentence. */
export function capitalised(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** "12,340". */
export function tokens(count: number): string {
  return count.toLocaleString();
}

/** "5k", "1.5M": for a budget's round numbers. */
export function shortTokens(count: number): string {
  if (count >= 1_000_000 && count % 100_000 === 0) return `${count / 1_000_000}M`;
  if (count >= 1_000 && count % 100 === 0) return `${count / 1_000}k`;
  return tokens(count);
}

/** "$0.42", and for the fractions of a cent cheap models cost, "$0.0031". */
export function usd(amount: number): string {
  if (amount === 0 || amount >= 0.01) {
    return amount.toLocaleString("en-US", { style: "currency", currency: "USD", minimumFractionDigits: 2, maximumFractionDigits: 2 });
  }
  if (amount < 0.0001) return "under $0.0001";
  return `$${amount.toPrecision(2).replace(/0+$/, "")}`;
}

/** "$0.15" per million tokens, as prices are usually quoted. */
export function pricePerMillion(amount: number | null): string {
  if (amount === null) return "—";
  return `$${amount.toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 4 })}`;
}

/** "gpt-4o-mini: $0.15 in, $0.60 out, $0.075 cached". */
export function describePrice(price: ModelPrice): string {
  const parts = [`${pricePerMillion(price.input_per_mtok)} in`, `${pricePerMillion(price.output_per_mtok)} out`];
  if (price.cached_input_per_mtok !== null) parts.push(`${pricePerMillion(price.cached_input_per_mtok)} cached`);
  return `${price.model}: ${parts.join(", ")}`;
}

/** A YYYY-MM-DD day as "Saturday, 22 November". */
export function dayText(day: string): string {
  const [year, month, date] = day.split("-").map(Number);
  if (!year || !month || !date) return day;
  return new Date(year, month - 1, date).toLocaleDateString(undefined, { weekday: "long", day: "numeric", month: "long" });
}

/** Whole percent of `used` in `cap`, kept to 0–100 for a bar. */
export function percent(used: number, cap: number): number {
  if (cap <= 0) return used > 0 ? 100 : 0;
  return Math.min(100, Math.round((used / cap) * 100));
}

/** "My OpenAI" → "my-openai": the name the engine keeps (letters, digits, '-', '_', '.'). */
export function slugOf(name: string): string {
  const slug = name
    .trim()
    .toLowerCase()
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .replace(/[^a-z0-9._-]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 40);
  return slug || "provider";
}
