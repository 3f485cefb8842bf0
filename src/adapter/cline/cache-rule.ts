import type { Components } from "../types.ts";

export interface StoredMetrics {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly cacheReadTokens: number;
  readonly cacheWriteTokens: number;
}

/**
 * The seed's subset-or-additive rule, decided per event. Whether cache counts sit
 * inside inputTokens is a property of the provider behind the request, not of Cline,
 * and the only evidence is the numbers: if the cache counts fit inside inputTokens
 * they are a subset and come out of the input component; otherwise they cannot be one
 * and are added. Either way the four components sum to exactly the stored total.
 */
export function applyCacheRule(m: StoredMetrics): Components {
  const cache = m.cacheReadTokens + m.cacheWriteTokens;
  if (cache <= m.inputTokens) {
    return {
      input: m.inputTokens - cache,
      output: m.outputTokens,
      cacheRead: m.cacheReadTokens,
      cacheWrite: m.cacheWriteTokens,
      total: m.inputTokens + m.outputTokens,
      cacheBranch: "subset",
    };
  }
  return {
    input: m.inputTokens,
    output: m.outputTokens,
    cacheRead: m.cacheReadTokens,
    cacheWrite: m.cacheWriteTokens,
    total: m.inputTokens + m.outputTokens + cache,
    cacheBranch: "additive",
  };
}
