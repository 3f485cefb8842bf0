/**
 * Prices and the cost of one usage event, exactly as Cline computes `metrics.cost`
 * (docs/cline-format.md §11; @cline/llms 0.0.86):
 *
 *   max(0, in - cr - cw)/1e6*input + out/1e6*output + cr/1e6*(cacheRead ?? 0) + cw/1e6*(cacheWrite ?? 1.25*input)
 *
 * Our events already carry the uncached input as a component (the cache rule subtracted the
 * cache counts when they were a subset), so the first term is `input/1e6*price.input`.
 * A model with no known price has an UNKNOWN cost, never zero.
 */
import {
  type CatalogPrice,
  CLINE_LLMS_CATALOG,
  type GeneratedCatalog,
} from "./catalog/cline-llms-0.0.86.generated.ts";

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
  /** model -> the provider-agnostic fallback choice, precomputed from `byProvider`. */
  readonly anyProvider: ReadonlyMap<string, { readonly provider: string; readonly price: Price }>;
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

function isAllZero(p: Price): boolean {
  return p.input === 0 && p.output === 0 && (p.cacheRead ?? 0) === 0 && (p.cacheWrite ?? 0) === 0;
}

function samePrice(a: Price, b: Price): boolean {
  return (
    a.input === b.input &&
    a.output === b.output &&
    a.cacheRead === b.cacheRead &&
    a.cacheWrite === b.cacheWrite
  );
}

/**
 * The model makers' own APIs in the catalog, makers first and the two that also resell other
 * makers' models (mistral, alibaba) last. A maker's list price is the reference its resellers
 * mark up or down from, so it is the best provider-agnostic estimate when the maker lists the id.
 */
export const VENDOR_PROVIDERS: readonly string[] = Object.freeze([
  "openai-native",
  "anthropic",
  "gemini",
  "xai",
  "deepseek",
  "moonshot",
  "minimax",
  "zai",
  "xiaomi",
  "mistral",
  "alibaba",
]);

const byId = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The provider-agnostic choice among providers listing one model id, deterministic:
 *  1. all-zero listings are ignored (a free plan elsewhere says nothing about this event);
 *  2. the first listing provider in `preferred` order (the model makers' APIs);
 *  3. otherwise the price listed by the most providers, ties to the smallest provider id.
 */
export function pickAnyProvider(
  listings: ReadonlyArray<{ readonly provider: string; readonly price: Price }>,
  preferred: readonly string[],
): { readonly provider: string; readonly price: Price } | undefined {
  const paid = listings.filter((l) => !isAllZero(l.price));
  for (const p of preferred) {
    const hit = paid.find((l) => l.provider === p);
    if (hit) return hit;
  }
  let best: { provider: string; price: Price; count: number } | undefined;
  for (const l of [...paid].sort((a, b) => byId(a.provider, b.provider))) {
    const count = paid.filter((o) => samePrice(o.price, l.price)).length;
    if (!best || count > best.count) best = { provider: l.provider, price: l.price, count };
  }
  return best && { provider: best.provider, price: best.price };
}

export interface PriceTableSpec {
  readonly source: string;
  readonly byProvider: ReadonlyMap<string, ReadonlyMap<string, Price>>;
  readonly providerAliases?: ReadonlyMap<string, readonly string[]>;
  readonly vendorPrefixes?: ReadonlyMap<string, string>;
  readonly preferredProviders?: readonly string[];
}

/** Builds a table and its provider-agnostic index. */
export function buildPriceTable(spec: PriceTableSpec): PriceTable {
  const preferredProviders = spec.preferredProviders ?? [];
  const listings = new Map<string, { provider: string; price: Price }[]>();
  for (const [provider, models] of spec.byProvider) {
    if (provider === ANY_PROVIDER) continue;
    for (const [model, price] of models) {
      const list = listings.get(model) ?? [];
      list.push({ provider, price });
      listings.set(model, list);
    }
  }
  const anyProvider = new Map<string, { provider: string; price: Price }>();
  for (const [model, list] of listings) {
    const choice = pickAnyProvider(list, preferredProviders);
    if (choice) anyProvider.set(model, choice);
  }
  return {
    source: spec.source,
    byProvider: spec.byProvider,
    providerAliases: spec.providerAliases ?? new Map(),
    vendorPrefixes: spec.vendorPrefixes ?? new Map(),
    preferredProviders,
    anyProvider,
  };
}

function fromTuple(t: CatalogPrice): Price {
  const [input, output, cacheRead, cacheWrite] = t;
  return Object.freeze({
    input,
    output,
    ...(cacheRead === null ? {} : { cacheRead }),
    ...(cacheWrite === null ? {} : { cacheWrite }),
  });
}

/** The table Cline itself prices with: the bundled catalog of a pinned @cline/llms. */
export function catalogPriceTable(catalog: GeneratedCatalog = CLINE_LLMS_CATALOG): PriceTable {
  const byProvider = new Map<string, Map<string, Price>>();
  for (const group of [catalog.prices, catalog.derived]) {
    for (const [provider, models] of Object.entries(group)) {
      const row = byProvider.get(provider) ?? new Map<string, Price>();
      for (const [model, tuple] of Object.entries(models)) row.set(model, fromTuple(tuple));
      byProvider.set(provider, row);
    }
  }
  return buildPriceTable({
    source: `${catalog.source} (${catalog.generatedFrom})`,
    byProvider,
    providerAliases: new Map(Object.entries(catalog.providerAliases)),
    vendorPrefixes: new Map(Object.entries(catalog.vendorPrefixes)),
    preferredProviders: VENDOR_PROVIDERS,
  });
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

/**
 * Applies user prices over a table. An entry for a provider replaces or adds that provider's
 * model. A "*" entry stands for the model under ANY provider: it replaces the model wherever
 * the table lists it and answers for providers that do not. Provider-specific overrides beat
 * "*" overrides, which beat the base table.
 */
export function mergePrices(
  base: PriceTable,
  override: ReadonlyMap<string, ReadonlyMap<string, Price>>,
  label = "overrides",
): PriceTable {
  const byProvider = new Map<string, Map<string, Price>>();
  for (const [provider, models] of base.byProvider) byProvider.set(provider, new Map(models));
  const wildcard = override.get(ANY_PROVIDER);
  if (wildcard) {
    for (const [provider, models] of byProvider) {
      if (provider === ANY_PROVIDER) continue;
      for (const [model, price] of wildcard) if (models.has(model)) models.set(model, price);
    }
    const row = byProvider.get(ANY_PROVIDER) ?? new Map<string, Price>();
    for (const [model, price] of wildcard) row.set(model, price);
    byProvider.set(ANY_PROVIDER, row);
  }
  for (const [provider, models] of override) {
    if (provider === ANY_PROVIDER) continue;
    const row = byProvider.get(provider) ?? new Map<string, Price>();
    for (const [model, price] of models) row.set(model, price);
    byProvider.set(provider, row);
  }
  return buildPriceTable({
    source: `${base.source} + ${label}`,
    byProvider,
    providerAliases: base.providerAliases,
    vendorPrefixes: base.vendorPrefixes,
    preferredProviders: base.preferredProviders,
  });
}
