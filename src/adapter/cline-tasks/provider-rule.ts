import type { Components } from "../types.ts";

/**
 * Whether an `api_req_started` entry's `tokensIn` holds the cache counts, per provider of the
 * legacy core: each provider handler decides what it reports as `inputTokens`, which becomes
 * `tokensIn`. The table and its source citations: docs/cline-format.md §15.5.
 *   includes: tokensIn = prompt tokens, cacheReads and cacheWrites are part of it (OpenAI style)
 *   excludes: tokensIn = the non-cached input only (Anthropic style, or the handler subtracts)
 *   none:     the handler reports no cache counts at all (either rule gives the same answer)
 */
export type ProviderRule = "includes" | "excludes" | "none";

export const PROVIDER_RULES: Readonly<Record<string, ProviderRule>> = Object.freeze({
  openai: "includes",
  lmstudio: "includes",
  xai: "includes",
  zai: "includes",
  fireworks: "includes",
  hicap: "includes",
  doubao: "includes",
  qwen: "includes",
  litellm: "includes",
  oca: "includes",
  requesty: "includes",
  "openai-codex": "includes",
  anthropic: "excludes",
  bedrock: "excludes",
  vertex: "excludes",
  gemini: "excludes",
  "openai-native": "excludes",
  deepseek: "excludes",
  groq: "excludes",
  moonshot: "excludes",
  openrouter: "excludes",
  cline: "excludes",
  "vercel-ai-gateway": "excludes",
  aihubmix: "excludes",
  minimax: "excludes",
  "claude-code": "excludes",
  asksage: "none",
  baseten: "none",
  cerebras: "none",
  dify: "none",
  "huawei-cloud-maas": "none",
  huggingface: "none",
  mistral: "none",
  nebius: "none",
  nousResearch: "none",
  ollama: "none",
  "qwen-code": "none",
  sambanova: "none",
  sapaicore: "none",
  together: "none",
  wandb: "none",
  "vscode-lm": "none",
});

export interface RecordedTokens {
  readonly tokensIn: number;
  readonly tokensOut: number;
  readonly cacheReads: number;
  readonly cacheWrites: number;
}

export interface TaskComponents extends Components {
  /** Why the provider's rule could not be applied as written (reported), or undefined. */
  readonly anomaly?: "unknown-provider" | "cache-exceeds-input" | "unexpected-cache" | "running-total";
}

/**
 * Providers whose handler reports, for a response without usage, a running total instead
 * (the legacy core then asks the handler's getApiStreamUsage and adds it to the request):
 * asksage answers the account's monthly token count, stored as tokensIn with tokensOut 0
 * (docs/cline-format.md §15.5, fixtures/cline-tasks/asksage-cache).
 */
const RUNNING_TOTAL_WITHOUT_USAGE: ReadonlySet<string> = new Set(["asksage"]);

/** Providers whose recorded `cost` is not in dollars: asksage's is its `asksage_tokens` count. */
const COST_NOT_DOLLARS: ReadonlySet<string> = new Set(["asksage"]);

/** Whether a request's recorded `cost` can be kept as Cline's cost in dollars. */
export function recordsDollarCost(providerId: string): boolean {
  return !COST_NOT_DOLLARS.has(providerId);
}

function subset(t: RecordedTokens): TaskComponents {
  const cache = t.cacheReads + t.cacheWrites;
  return {
    input: t.tokensIn - cache,
    output: t.tokensOut,
    cacheRead: t.cacheReads,
    cacheWrite: t.cacheWrites,
    total: t.tokensIn + t.tokensOut,
    cacheBranch: "subset",
  };
}

function additive(t: RecordedTokens): TaskComponents {
  return {
    input: t.tokensIn,
    output: t.tokensOut,
    cacheRead: t.cacheReads,
    cacheWrite: t.cacheWrites,
    total: t.tokensIn + t.tokensOut + t.cacheReads + t.cacheWrites,
    cacheBranch: "additive",
  };
}

/**
 * The four components of one request by its provider's rule. A provider not in the table gets
 * the rule that cannot double count (the cache counts taken out of tokensIn whenever they fit in
 * it), and is reported; so is a count that contradicts the provider's rule.
 */
export function taskComponents(providerId: string, t: RecordedTokens): TaskComponents {
  const rule = Object.hasOwn(PROVIDER_RULES, providerId) ? PROVIDER_RULES[providerId] : undefined;
  const cache = t.cacheReads + t.cacheWrites;
  if (RUNNING_TOTAL_WITHOUT_USAGE.has(providerId) && t.tokensOut === 0 && t.tokensIn > 0) {
    // Every answered request has output: without it, tokensIn is the running total, never added.
    return {
      ...subset({ tokensIn: 0, tokensOut: 0, cacheReads: 0, cacheWrites: 0 }),
      anomaly: "running-total",
    };
  }
  if (rule === "excludes") return additive(t);
  if (rule === "includes") {
    // Cache beyond tokensIn cannot be part of it: counted on top rather than as negative input.
    return cache <= t.tokensIn ? subset(t) : { ...additive(t), anomaly: "cache-exceeds-input" };
  }
  if (rule === "none" && cache === 0) return subset(t);
  const fallback = cache <= t.tokensIn ? subset(t) : additive(t);
  return { ...fallback, anomaly: rule === "none" ? "unexpected-cache" : "unknown-provider" };
}
