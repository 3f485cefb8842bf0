/**
 * Price tables (docs/prices.md): Cline's bundled catalog of a pinned @cline/llms, and a user's
 * overrides merged over it. The lookup and the cost arithmetic are in ./lookup.ts (re-exported
 * here), so what only prices rows loads no catalog.
 */
import {
  type CatalogPrice,
  clineLlmsCatalog,
  type GeneratedCatalog,
} from "./catalog/cline-llms-0.0.86.generated.ts";
import { ANY_PROVIDER, type AnyProviderIndex, type Price, type PriceTable } from "./lookup.ts";

export {
  ANY_PROVIDER,
  type AnyProviderIndex,
  type CostComponents,
  computeCost,
  effectiveCachePrices,
  isClineFree,
  lookupPrice,
  type Price,
  type PriceMatch,
  type PriceTable,
  type PriceVia,
  resolvePrice,
  ZERO_PRICE,
} from "./lookup.ts";

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

/**
 * The provider-agnostic choice (pickAnyProvider) of a model, computed at its first lookup and kept:
 * a report prices a handful of models, and choosing for all 6,000 of the catalog up front was
 * about half of building the table (issue 30: 0.04 s of an idle `report`).
 */
export function lazyAnyProvider(
  byProvider: ReadonlyMap<string, ReadonlyMap<string, Price>>,
  preferred: readonly string[],
): AnyProviderIndex {
  const chosen = new Map<string, { readonly provider: string; readonly price: Price } | null>();
  return {
    get(model) {
      let choice = chosen.get(model);
      if (choice === undefined) {
        const listings: { provider: string; price: Price }[] = [];
        for (const [provider, models] of byProvider) {
          if (provider === ANY_PROVIDER) continue;
          const price = models.get(model);
          if (price !== undefined) listings.push({ provider, price });
        }
        choice = pickAnyProvider(listings, preferred) ?? null;
        chosen.set(model, choice);
      }
      return choice ?? undefined;
    },
  };
}

/** Builds a table; its provider-agnostic index is computed per model when asked (lazyAnyProvider). */
export function buildPriceTable(spec: PriceTableSpec): PriceTable {
  const preferredProviders = spec.preferredProviders ?? [];
  const anyProvider = lazyAnyProvider(spec.byProvider, preferredProviders);
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

type CatalogModelsRecord = Readonly<Record<string, CatalogPrice>>;

/**
 * One provider's models of the catalog as a map whose prices are made at their first lookup: a
 * report prices a handful of models, and converting all 6,384 up front was most of building the
 * table (issue 30, the idle report). `layers`: later ones win (`derived` over `prices`), and the
 * order of iteration is a Map's filled layer by layer. Iterating builds the whole map once.
 */
class CatalogModels implements ReadonlyMap<string, Price> {
  private readonly made = new Map<string, Price>();
  private whole: Map<string, Price> | undefined;

  constructor(private readonly layers: readonly CatalogModelsRecord[]) {}

  private tuple(model: string): CatalogPrice | undefined {
    for (let i = this.layers.length - 1; i >= 0; i--) {
      const layer = this.layers[i] as CatalogModelsRecord;
      // Own keys only: a model id such as "constructor" is no price.
      if (Object.hasOwn(layer, model)) return layer[model];
    }
    return undefined;
  }

  get(model: string): Price | undefined {
    let price = this.made.get(model);
    if (price === undefined) {
      const t = this.tuple(model);
      if (t === undefined) return undefined;
      price = fromTuple(t);
      this.made.set(model, price);
    }
    return price;
  }

  has(model: string): boolean {
    return this.tuple(model) !== undefined;
  }

  private all(): Map<string, Price> {
    if (this.whole === undefined) {
      const m = new Map<string, Price>();
      for (const layer of this.layers)
        for (const model of Object.keys(layer)) m.set(model, this.get(model) as Price);
      this.whole = m;
    }
    return this.whole;
  }

  get size(): number {
    return this.all().size;
  }
  forEach(f: (value: Price, key: string, map: ReadonlyMap<string, Price>) => void, thisArg?: unknown): void {
    for (const [k, v] of this.all()) f.call(thisArg, v, k, this);
  }
  entries(): ReturnType<Map<string, Price>["entries"]> {
    return this.all().entries();
  }
  keys(): ReturnType<Map<string, Price>["keys"]> {
    return this.all().keys();
  }
  values(): ReturnType<Map<string, Price>["values"]> {
    return this.all().values();
  }
  [Symbol.iterator](): ReturnType<Map<string, Price>["entries"]> {
    return this.all().entries();
  }
}

/** The table Cline itself prices with: the bundled catalog of a pinned @cline/llms. */
export function catalogPriceTable(catalog: GeneratedCatalog = clineLlmsCatalog()): PriceTable {
  const layers = new Map<string, CatalogModelsRecord[]>();
  for (const group of [catalog.prices, catalog.derived]) {
    for (const provider of Object.keys(group)) {
      const row = layers.get(provider) ?? [];
      row.push(group[provider] as CatalogModelsRecord);
      layers.set(provider, row);
    }
  }
  const byProvider = new Map<string, ReadonlyMap<string, Price>>();
  for (const [provider, row] of layers) byProvider.set(provider, new CatalogModels(row));
  return buildPriceTable({
    source: `${catalog.source} (${catalog.generatedFrom})`,
    byProvider,
    providerAliases: new Map(Object.entries(catalog.providerAliases)),
    vendorPrefixes: new Map(Object.entries(catalog.vendorPrefixes)),
    preferredProviders: VENDOR_PROVIDERS,
  });
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
