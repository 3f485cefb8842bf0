/**
 * Prices and the cost of one usage event, exactly as Cline computes `metrics.cost`
 * (docs/cline-format.md §11; @cline/llms 0.0.86):
 *
 *   max(0, in - cr - cw)/1e6*input + out/1e6*output + cr/1e6*(cacheRead ?? 0) + cw/1e6*(cacheWrite ?? 1.25*input)
 *
 * Our events already carry the uncached input as a component (the cache rule subtracted the
 * cache counts when they were a subset), so the first term is `input/1e6*price.input`.
 * A model with no known price has an UNKNOWN cost, never zero.
 *
 * This module is the lookup and the arithmetic only: what prices rows loads no catalog. The tables
 * (Cline's bundled catalog, a user's overrides) are built in ./prices.ts.
 */

/**
 * USD per million tokens. A missing cache price means "not listed": Cline then charges cache
 * reads at 0 and cache writes at 1.25 x input (see `effectiveCachePrices`).
 */
export interface Price {
  readonly input: number;
  readonly output: number;
  readonly cacheRead?: number;
  readonly cacheWrite?: number;
}

/** The four token components of one event after the cache rule. */
export interface CostComponents {
  readonly input: number;
  readonly output: number;
  readonly cacheRead: number;
  readonly cacheWrite: number;
}

/** Provider key for entries that apply to a model under any provider (user price files only). */
export const ANY_PROVIDER = "*";

export interface PriceTable {
  /** Where the prices came from, e.g. "@cline/llms@0.0.86 + ./prices.json". */
  readonly source: string;
  /** provider (or "*") -> model -> price. */
  readonly byProvider: ReadonlyMap<string, ReadonlyMap<string, Price>>;
  /** Runtime provider id -> further providers in this table whose models it uses. */
  readonly providerAliases: ReadonlyMap<string, readonly string[]>;
  /** Vendor prefix of a `vendor/model` id -> provider key in this table, where they differ. */
  readonly vendorPrefixes: ReadonlyMap<string, string>;
  /** Providers preferred by the provider-agnostic fallback, in order (see `pickAnyProvider`). */
  readonly preferredProviders: readonly string[];
  /** model -> the provider-agnostic fallback choice, from `byProvider` (prices.ts: lazyAnyProvider). */
  readonly anyProvider: AnyProviderIndex;
}

/** The provider-agnostic fallback by model id (a Map will do; the catalog's is computed per model). */
export interface AnyProviderIndex {
  get(model: string): { readonly provider: string; readonly price: Price } | undefined;
}

/** How a price was found, most to least specific. */
export type PriceVia =
  | "exact"
  | "any-provider-override"
  | "cline-free"
  | "provider-alias"
  | "vendor-prefix"
  | "any-provider";

export interface PriceMatch {
  readonly price: Price;
  readonly via: PriceVia;
  /** The table entry used (for cline-free: the event's own provider and model). */
  readonly provider: string;
  readonly model: string;
}

export const ZERO_PRICE: Price = Object.freeze({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0 });

/** Cline's defaults for prices the catalog does not list: cache reads free, writes at 1.25 x input. */
export function effectiveCachePrices(price: Price): {
  readonly cacheRead: number;
  readonly cacheWrite: number;
} {
  return { cacheRead: price.cacheRead ?? 0, cacheWrite: price.cacheWrite ?? price.input * 1.25 };
}

/**
 * USD for one event. Same operations in the same order as Cline's cost function, so for a
 * subset-branch event the result is bit-identical to what Cline computed for that call.
 * Tiered prices do not exist in @cline/llms 0.0.86 (its pricing schema has exactly these four
 * numbers and its cost function takes no context size), so there is no tier to choose.
 */
export function computeCost(c: CostComponents, price: Price): number {
  const { cacheRead, cacheWrite } = effectiveCachePrices(price);
  return (
    (Math.max(0, c.input) / 1e6) * price.input +
    (c.output / 1e6) * price.output +
    (c.cacheRead / 1e6) * cacheRead +
    (c.cacheWrite / 1e6) * cacheWrite
  );
}

/**
 * Cline stores cost 0 for these whatever the catalog says: the cline-pass provider, and on the
 * cline provider the `cline-pass/…`, `cline-free/…` and `…:free` models.
 */
export function isClineFree(provider: string, model: string): boolean {
  if (provider === "cline-pass") return true;
  return (
    provider === "cline" &&
    (model.startsWith("cline-pass/") || model.startsWith("cline-free/") || model.endsWith(":free"))
  );
}

/**
 * Finds the price of `model` as served by `provider`. In order (docs/prices.md):
 *  1. exact: the table lists this provider and model (user overrides already merged in);
 *  2. any-provider-override: a user "*" entry for this model;
 *  3. cline-free: a model Cline itself stores at cost 0;
 *  4. provider-alias: a provider Cline draws this runtime provider's models from
 *     (e.g. openai-codex -> openai-native, cline -> openrouter);
 *  5. vendor-prefix: `vendor/model` where `vendor` names a provider listing `model`
 *     (e.g. "anthropic/claude-sonnet-4-5" behind an OpenAI-compatible gateway);
 *  6. any-provider: another provider lists this exact model id (see `pickAnyProvider`).
 * Returns undefined when none applies: the cost is unknown, not zero.
 */
export function resolvePrice(table: PriceTable, provider: string, model: string): PriceMatch | undefined {
  if (model === "") return undefined;
  const exact = table.byProvider.get(provider)?.get(model);
  if (exact) return { price: exact, via: "exact", provider, model };
  const wildcard = table.byProvider.get(ANY_PROVIDER)?.get(model);
  if (wildcard) return { price: wildcard, via: "any-provider-override", provider: ANY_PROVIDER, model };
  if (isClineFree(provider, model)) return { price: ZERO_PRICE, via: "cline-free", provider, model };
  for (const alias of table.providerAliases.get(provider) ?? []) {
    const hit = table.byProvider.get(alias)?.get(model);
    if (hit) return { price: hit, via: "provider-alias", provider: alias, model };
  }
  const slash = model.indexOf("/");
  if (slash > 0) {
    const vendor = model.slice(0, slash);
    const rest = model.slice(slash + 1);
    const key = table.vendorPrefixes.get(vendor) ?? vendor;
    const hit = key === ANY_PROVIDER ? undefined : table.byProvider.get(key)?.get(rest);
    if (hit) return { price: hit, via: "vendor-prefix", provider: key, model: rest };
  }
  const any = table.anyProvider.get(model);
  if (any) return { price: any.price, via: "any-provider", provider: any.provider, model };
  return undefined;
}

/** The price alone; undefined = unknown cost. */
export function lookupPrice(table: PriceTable, provider: string, model: string): Price | undefined {
  return resolvePrice(table, provider, model)?.price;
}
