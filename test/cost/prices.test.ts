import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { clineLlmsCatalog } from "../../src/cost/catalog/cline-llms-0.0.86.generated.ts";
import {
  ANY_PROVIDER,
  buildPriceTable,
  catalogPriceTable,
  computeCost,
  effectiveCachePrices,
  isClineFree,
  lazyAnyProvider,
  lookupPrice,
  type Price,
  pickAnyProvider,
  resolvePrice,
  VENDOR_PROVIDERS,
  ZERO_PRICE,
} from "../../src/cost/prices.ts";

const table = catalogPriceTable();
const SONNET_45: Price = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 };

/** Cline's cost function on RAW stored metrics, transcribed from docs/cline-format.md §11. */
function clineCost(
  m: { inputTokens: number; outputTokens: number; cacheReadTokens: number; cacheWriteTokens: number },
  p: Price,
): number {
  const cr = p.cacheRead ?? 0;
  const cw = p.cacheWrite ?? p.input * 1.25;
  return (
    (Math.max(0, m.inputTokens - m.cacheReadTokens - m.cacheWriteTokens) / 1e6) * p.input +
    (m.outputTokens / 1e6) * p.output +
    (m.cacheReadTokens / 1e6) * cr +
    (m.cacheWriteTokens / 1e6) * cw
  );
}

const table1 = (rows: Record<string, Record<string, Price>>, preferred: readonly string[] = []) =>
  buildPriceTable({
    source: "test",
    byProvider: new Map(Object.entries(rows).map(([p, ms]) => [p, new Map(Object.entries(ms))])),
    preferredProviders: preferred,
  });

describe("computeCost", () => {
  it("reproduces the Anthropic example of docs/cline-format.md §4.5 (221 uncached, 7002 read, 729 written, 323 out)", () => {
    // Cline stored inputTokens 7952 = 221 + 7002 + 729; the subset branch leaves input 221.
    const usd = computeCost({ input: 221, output: 323, cacheRead: 7002, cacheWrite: 729 }, SONNET_45);
    expect(Math.abs(usd - 0.01034235) / 0.01034235).toBeLessThan(1e-12);
  });

  it("reproduces the stored-message example of docs/cline-format.md §4.5 (inputTokens 840, cache write 719, output 313)", () => {
    const usd = computeCost({ input: 840 - 719, output: 313, cacheRead: 0, cacheWrite: 719 }, SONNET_45);
    expect(Math.abs(usd - 0.00775425) / 0.00775425).toBeLessThan(1e-12);
  });

  it("is bit-identical to Cline's formula for every subset-branch event", () => {
    const price = fc.record({
      input: fc.double({ min: 0, max: 200, noNaN: true }),
      output: fc.double({ min: 0, max: 600, noNaN: true }),
      cacheRead: fc.option(fc.double({ min: 0, max: 50, noNaN: true }), { nil: undefined }),
      cacheWrite: fc.option(fc.double({ min: 0, max: 250, noNaN: true }), { nil: undefined }),
    });
    const tokens = fc.nat({ max: 2_000_000 });
    fc.assert(
      fc.property(tokens, tokens, tokens, tokens, price, (a, b, out, extra, p) => {
        const m = { inputTokens: a + b + extra, outputTokens: out, cacheReadTokens: a, cacheWriteTokens: b };
        const ours = computeCost({ input: extra, output: out, cacheRead: a, cacheWrite: b }, p);
        expect(ours).toBe(clineCost(m, p));
      }),
    );
  });

  it("applies Cline's defaults when cache prices are absent: reads free, writes at 1.25 x input", () => {
    const p: Price = { input: 2, output: 8 };
    expect(effectiveCachePrices(p)).toEqual({ cacheRead: 0, cacheWrite: 2.5 });
    const usd = computeCost({ input: 0, output: 0, cacheRead: 1_000_000, cacheWrite: 1_000_000 }, p);
    expect(usd).toBe(2.5);
  });

  it("keeps an explicit zero cache price (the catalog's 0 is not 'absent')", () => {
    const p: Price = { input: 2, output: 8, cacheRead: 0.5, cacheWrite: 0 };
    expect(computeCost({ input: 0, output: 0, cacheRead: 0, cacheWrite: 1_000_000 }, p)).toBe(0);
  });

  it("prices output at the output rate and input at the input rate", () => {
    expect(computeCost({ input: 1_000_000, output: 0, cacheRead: 0, cacheWrite: 0 }, SONNET_45)).toBe(3);
    expect(computeCost({ input: 0, output: 1_000_000, cacheRead: 0, cacheWrite: 0 }, SONNET_45)).toBe(15);
  });
});

const catalog = clineLlmsCatalog();

describe("catalog table", () => {
  it("is generated from @cline/llms@0.0.86 and frozen", () => {
    expect(catalog.source).toBe("@cline/llms@0.0.86");
    expect(catalog.generatedFrom).toBe("dist/index.js");
    expect(Object.isFrozen(catalog)).toBe(true);
    expect(Object.isFrozen(catalog.prices)).toBe(true);
    expect(Object.isFrozen(catalog.prices.anthropic)).toBe(true);
    expect(Object.isFrozen(catalog.prices.anthropic?.["claude-sonnet-4-5-20250929"])).toBe(true);
  });

  it("holds only finite, non-negative prices", () => {
    let n = 0;
    for (const models of Object.values(catalog.prices)) {
      for (const t of Object.values(models)) {
        for (const v of t) if (v !== null) expect(Number.isFinite(v) && v >= 0).toBe(true);
        n += 1;
      }
    }
    expect(n).toBeGreaterThan(1000);
  });

  it("its lazy rows are the eager conversion of the catalog: derived over prices, in a Map's order", () => {
    const eager = new Map<string, Map<string, Price>>();
    for (const group of [catalog.prices, catalog.derived]) {
      for (const [provider, models] of Object.entries(group)) {
        const row = eager.get(provider) ?? new Map<string, Price>();
        for (const [model, [input, output, cacheRead, cacheWrite]] of Object.entries(models))
          row.set(model, {
            input,
            output,
            ...(cacheRead === null ? {} : { cacheRead }),
            ...(cacheWrite === null ? {} : { cacheWrite }),
          });
        eager.set(provider, row);
      }
    }
    const fresh = catalogPriceTable();
    expect([...fresh.byProvider.keys()]).toEqual([...eager.keys()]);
    for (const [provider, row] of eager) {
      const lazy = fresh.byProvider.get(provider) as ReadonlyMap<string, Price>;
      // Looked up first (the lazy path), then iterated (the whole map), each the same.
      for (const [model, price] of row) {
        expect(lazy.has(model)).toBe(true);
        expect(lazy.get(model)).toEqual(price);
      }
      expect(lazy.size).toBe(row.size);
      expect([...lazy]).toEqual([...row]);
      expect(lazy.get("constructor")).toBeUndefined();
      expect(lazy.has("__proto__")).toBe(false);
    }
    // claude-code's derived opus is not anthropic's (derived wins for its provider only).
    expect(fresh.byProvider.get("claude-code")?.get("opus")).toEqual({
      input: 4,
      output: 20,
      cacheRead: 0.2,
      cacheWrite: 5,
    });
  });

  it("prices anthropic claude-sonnet-4-5-20250929 at $3 / $15 / $0.30 / $3.75 (docs/cline-format.md §4.5)", () => {
    expect(resolvePrice(table, "anthropic", "claude-sonnet-4-5-20250929")).toEqual({
      price: SONNET_45,
      via: "exact",
      provider: "anthropic",
      model: "claude-sonnet-4-5-20250929",
    });
  });
});

describe("resolvePrice fallbacks", () => {
  it("returns undefined (unknown, never zero) for a model nobody lists", () => {
    expect(resolvePrice(table, "openai-compatible", "mock-model")).toBeUndefined();
    expect(lookupPrice(table, "anthropic", "mock-model")).toBeUndefined();
    expect(lookupPrice(table, "anthropic", "")).toBeUndefined();
  });

  it("does not mistake Object.prototype members for models or providers", () => {
    for (const id of ["constructor", "__proto__", "toString", "hasOwnProperty"]) {
      expect(lookupPrice(table, "anthropic", id)).toBeUndefined();
      expect(lookupPrice(table, id, "claude-sonnet-4-5-20250929")?.input).toBe(3); // any-provider
    }
  });

  it("uses the catalog providers Cline maps a runtime provider to (openai-codex -> openai-native)", () => {
    const direct = lookupPrice(table, "openai-native", "gpt-4.1");
    expect(direct).toBeDefined();
    const m = resolvePrice(table, "openai-codex", "gpt-4.1");
    expect(m?.via).toBe("provider-alias");
    expect(m?.provider).toBe("openai-native");
    expect(m?.price).toEqual(direct);
  });

  it("prices Cline's free models at zero, as Cline stores them", () => {
    expect(isClineFree("cline-pass", "anything/at-all")).toBe(true);
    expect(isClineFree("cline", "cline-free/some-model")).toBe(true);
    expect(isClineFree("cline", "cline-pass/some-model")).toBe(true);
    expect(isClineFree("cline", "vendor/model:free")).toBe(true);
    expect(isClineFree("cline", "anthropic/claude-sonnet-4.5")).toBe(false);
    expect(isClineFree("openrouter", "vendor/model:free")).toBe(false);
    expect(resolvePrice(table, "cline-pass", "not-in-any-catalog")).toMatchObject({
      price: ZERO_PRICE,
      via: "cline-free",
    });
  });

  it("strips a vendor prefix when the vendor lists the rest (anthropic/..., openai/... -> openai-native)", () => {
    const a = resolvePrice(table, "openai-compatible", "anthropic/claude-sonnet-4-5-20250929");
    expect(a).toMatchObject({ via: "vendor-prefix", provider: "anthropic", price: SONNET_45 });
    const o = resolvePrice(table, "litellm", "openai/gpt-4.1");
    expect(o).toMatchObject({ via: "vendor-prefix", provider: "openai-native" });
    expect(o?.price).toEqual(lookupPrice(table, "openai-native", "gpt-4.1"));
  });

  it("falls back to another provider listing the exact model id, preferring the maker's API", () => {
    const m = resolvePrice(table, "openai-compatible", "claude-sonnet-4-5-20250929");
    expect(m).toMatchObject({ via: "any-provider", provider: "anthropic", price: SONNET_45 });
  });

  it("prices claude-code's opus / sonnet / haiku like the anthropic models Cline copies them from", () => {
    for (const alias of ["opus", "sonnet", "haiku"]) {
      const m = resolvePrice(table, "claude-code", alias);
      expect(m?.via).toBe("exact");
      const source = Object.entries(catalog.prices.anthropic ?? {}).find(
        ([id, t]) => id.includes(alias) && t[0] === m?.price.input && t[1] === m?.price.output,
      );
      expect(source).toBeDefined();
    }
  });
});

describe("pickAnyProvider", () => {
  const p = (input: number): Price => ({ input, output: input * 4, cacheRead: 0, cacheWrite: 0 });

  it("prefers providers in the preferred order", () => {
    const l = [
      { provider: "a", price: p(1) },
      { provider: "b", price: p(1) },
      { provider: "maker", price: p(5) },
    ];
    expect(pickAnyProvider(l, ["maker"])?.provider).toBe("maker");
  });

  it("otherwise takes the most common price, ties to the smallest provider id", () => {
    const l = [
      { provider: "z", price: p(2) },
      { provider: "c", price: p(1) },
      { provider: "y", price: p(2) },
      { provider: "b", price: p(3) },
    ];
    expect(pickAnyProvider(l, [])).toEqual({ provider: "y", price: p(2) });
    const tie = [
      { provider: "d", price: p(1) },
      { provider: "c", price: p(2) },
    ];
    expect(pickAnyProvider(tie, [])?.provider).toBe("c");
    expect(pickAnyProvider([...tie].reverse(), [])?.provider).toBe("c");
  });

  it("ignores all-zero listings, and gives up when only those exist", () => {
    const l = [
      { provider: "a", price: ZERO_PRICE },
      { provider: "b", price: ZERO_PRICE },
      { provider: "c", price: p(1) },
    ];
    expect(pickAnyProvider(l, ["a"])?.provider).toBe("c");
    expect(pickAnyProvider([{ provider: "a", price: ZERO_PRICE }], [])).toBeUndefined();
    const t = table1({ "coding-plan": { "free-there": ZERO_PRICE } });
    expect(resolvePrice(t, "somewhere-else", "free-there")).toBeUndefined();
    expect(resolvePrice(t, "coding-plan", "free-there")?.price).toEqual(ZERO_PRICE);
  });

  it("the catalog table prefers the maker APIs listed in VENDOR_PROVIDERS", () => {
    expect(VENDOR_PROVIDERS[0]).toBe("openai-native");
    expect(table.preferredProviders).toBe(VENDOR_PROVIDERS);
  });
});

describe("ANY_PROVIDER rows", () => {
  it("answer for every provider after exact matches", () => {
    const t = table1({
      [ANY_PROVIDER]: { m: p1(7) },
      x: { m: p1(1) },
    });
    expect(resolvePrice(t, "x", "m")).toMatchObject({ via: "exact", price: p1(1) });
    expect(resolvePrice(t, "y", "m")).toMatchObject({ via: "any-provider-override", price: p1(7) });
  });
});

function p1(input: number): Price {
  return { input, output: input };
}

describe("lazyAnyProvider", () => {
  /** The eager index the catalog table used to build: every model's listings, then one choice each. */
  function eagerIndex(
    byProvider: ReadonlyMap<string, ReadonlyMap<string, Price>>,
    preferred: readonly string[],
  ) {
    const listings = new Map<string, { provider: string; price: Price }[]>();
    for (const [provider, models] of byProvider) {
      if (provider === ANY_PROVIDER) continue;
      for (const [model, price] of models)
        listings.set(model, [...(listings.get(model) ?? []), { provider, price }]);
    }
    const out = new Map<string, { provider: string; price: Price }>();
    for (const [model, list] of listings) {
      const c = pickAnyProvider(list, preferred);
      if (c) out.set(model, c);
    }
    return out;
  }

  it("chooses for every catalog model what the eager index chose, and nothing for unlisted ones", () => {
    const eager = eagerIndex(table.byProvider, VENDOR_PROVIDERS);
    const lazy = lazyAnyProvider(table.byProvider, VENDOR_PROVIDERS);
    expect(eager.size).toBeGreaterThan(1000);
    for (const [model, choice] of eager) expect(lazy.get(model)).toEqual(choice);
    expect(lazy.get("no-such-model-anywhere")).toBeUndefined();
    // Asked again: the same answer (kept), including a miss.
    expect(lazy.get("no-such-model-anywhere")).toBeUndefined();
  });

  it("building a table looks at no provider's models; a lookup looks at each provider once per model", () => {
    const gets: string[] = [];
    const counted = (name: string, models: Map<string, Price>): ReadonlyMap<string, Price> =>
      new Proxy(models, {
        get(target, key) {
          if (key === "get")
            return (m: string) => {
              gets.push(`${name}:${m}`);
              return target.get(m);
            };
          const v = Reflect.get(target, key, target);
          return typeof v === "function" ? v.bind(target) : v;
        },
      });
    let iterated = 0;
    const inner = new Map([
      ["a", counted("a", new Map([["m", p1(2)]]))],
      [
        "b",
        counted(
          "b",
          new Map([
            ["m", p1(3)],
            ["n", p1(4)],
          ]),
        ),
      ],
    ]);
    const byProvider = new Proxy(inner, {
      get(target, key) {
        if (key === Symbol.iterator || key === "entries" || key === "forEach" || key === "values") iterated++;
        const v = Reflect.get(target, key, target);
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
    const t = buildPriceTable({ source: "t", byProvider, preferredProviders: ["b"] });
    expect(iterated).toBe(0);
    expect(gets).toEqual([]);
    expect(t.anyProvider.get("m")).toEqual({ provider: "b", price: p1(3) });
    expect(t.anyProvider.get("m")).toEqual({ provider: "b", price: p1(3) });
    expect(gets).toEqual(["a:m", "b:m"]);
  });
});
