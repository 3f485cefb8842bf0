import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import type { GeneratedCatalog } from "../../../src/cost/catalog/cline-llms-0.0.86.generated.ts";
import { catalogPriceTable, resolvePrice } from "../../../src/cost/prices.ts";
import {
  CatalogExtractError,
  claudeCodeAliases,
  clineNumber,
  extractCatalog,
} from "../../../tools/catalog/extract.ts";
import { renderCatalog } from "../../../tools/catalog/render.ts";

/** A minified-bundle-shaped snippet with the two literals the extractor looks for. */
const BUNDLE = `
var x=1;function f(e){return e*2}
var Cc;var sw=j(()=>{Cc={version:1790000000000,providers:{
  anthropic:{"claude-b":{id:"claude-b",releaseDate:"2026-01-01",pricing:{input:3,output:15,cacheRead:0.3,cacheWrite:3.75}},
             "claude-a-sonnet":{id:"claude-a-sonnet",releaseDate:"2026-02-01",pricing:{input:2,output:10,cacheRead:0.2,cacheWrite:2.5}},
             "claude-old-sonnet":{id:"claude-old-sonnet",releaseDate:"2025-01-01",pricing:{input:9,output:9}}},
  "openai-native":{"gpt-x":{id:"gpt-x",capabilities:["tools"],reasoningOptions:[{type:"toggle"}],supports:!0,
                   pricing:{input:"1.5",output:6,cacheRead:0.375,cacheWrite:0}},
                   "no-price":{id:"no-price"},
                   "half-price":{id:"half-price",pricing:{input:1}},
                   "tiered":{id:"tiered",pricing:{input:1,output:2,tiers:[{above:2e5,input:2,output:4}]}}},
  "vercel-ai-gateway":{"zai/glm":{id:"zai/glm",pricing:{input:1,output:3,cacheRead:-0,cacheWrite:0}}}
}}});
var Dc;var So=j(()=>{Dc=[{modelsDevKey:"openai",generatedProviderId:"openai-native",runtimeProviderId:"openai-native"},
 {modelsDevKey:"openai",generatedProviderId:"openai-native",runtimeProviderId:"openai-codex"},
 {modelsDevKey:"anthropic",generatedProviderId:"anthropic",runtimeProviderId:"claude-code"},
 {modelsDevKey:"ollama",runtimeProviderId:"ollama-cloud"},
 {modelsDevKey:"openrouter",generatedProviderId:"openrouter",runtimeProviderId:"cline"},
 {modelsDevKey:"vercel",generatedProviderId:"vercel-ai-gateway"}]});
`;

const dir = mkdtempSync(join(tmpdir(), "cline-otel-catalog-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("extractCatalog", () => {
  const cat = extractCatalog(BUNDLE, "dist/index.js");

  it("keeps models with numeric input AND output prices, as Cline prices them", () => {
    expect(cat.catalogVersion).toBe(1790000000000);
    expect(cat.prices.anthropic?.["claude-b"]).toEqual([3, 15, 0.3, 3.75]);
    // A numeric string counts (Cline coerces it); an absent cache price stays null (Cline's default).
    expect(cat.prices["openai-native"]?.["gpt-x"]).toEqual([1.5, 6, 0.375, 0]);
    expect(cat.prices.anthropic?.["claude-old-sonnet"]).toEqual([9, 9, null, null]);
    expect(cat.prices["openai-native"]?.["no-price"]).toBeUndefined();
    expect(cat.prices["openai-native"]?.["half-price"]).toBeUndefined();
    expect(cat.stats).toMatchObject({
      providers: 3,
      models: 8,
      distinctModelIds: 8,
      priced: 6,
      unpriced: ["openai-native/half-price", "openai-native/no-price"],
      missingCacheRead: 2,
      missingCacheWrite: 2,
      stringPrices: 1,
    });
  });

  it("flags pricing with keys beyond the four Cline reads (tiers), and ignores them like Cline", () => {
    expect(cat.stats.nonstandardPricing).toEqual(["openai-native/tiered"]);
    expect(cat.prices["openai-native"]?.tiered).toEqual([1, 2, null, null]);
  });

  it("derives runtime provider aliases and vendor prefixes from Cline's mapping table", () => {
    expect(cat.providerAliases).toEqual({
      "openai-codex": ["openai-native"],
      "claude-code": ["anthropic"],
      // cline's list also carries vercel-ai-gateway's zai/ models (code, not table, in 0.0.86).
      cline: ["openrouter", "vercel-ai-gateway"],
    });
    expect(cat.vendorPrefixes).toEqual({ openai: "openai-native", vercel: "vercel-ai-gateway" });
  });

  it("derives claude-code's aliases from the newest matching anthropic model", () => {
    expect(cat.derived["claude-code"]).toEqual({ sonnet: [2, 10, 0.2, 2.5] });
  });

  it("sorts providers and models so the output is stable", () => {
    expect(Object.keys(cat.prices)).toEqual(["anthropic", "openai-native", "vercel-ai-gateway"]);
    expect(Object.keys(cat.prices.anthropic ?? {})).toEqual([
      "claude-a-sonnet",
      "claude-b",
      "claude-old-sonnet",
    ]);
  });

  it("refuses anything that is not a plain literal, rather than evaluating it", () => {
    const evil = BUNDLE.replace("input:3,", "input:require('fs').x,");
    expect(() => extractCatalog(evil, "dist/index.js")).toThrow(CatalogExtractError);
    expect(() => extractCatalog(evil, "dist/index.js")).toThrow(/dist\/index\.js:\d+:\d+: not a literal/);
    const spread = BUNDLE.replace('anthropic:{"claude-b"', 'anthropic:{...other,"claude-b"');
    expect(() => extractCatalog(spread, "dist/index.js")).toThrow(/not a plain literal property/);
  });

  it("fails loudly when the catalog is missing or ambiguous", () => {
    expect(() => extractCatalog("var a={version:1};", "x.js")).toThrow(/found 0/);
    const twice = `${BUNDLE};var Other={version:2,providers:{}};`;
    expect(() => extractCatalog(twice, "x.js")).toThrow(
      /expected exactly one the model catalog literal.*found 2/,
    );
  });

  it("renders a module that imports back to the same prices", async () => {
    const file = join(dir, "catalog.generated.ts");
    writeFileSync(file, renderCatalog(cat, { source: "@cline/llms@test", generatedFrom: "dist/index.js" }));
    const mod = (await import(pathToFileURL(file).href)) as { clineLlmsCatalog: () => GeneratedCatalog };
    const g = mod.clineLlmsCatalog();
    expect(g.source).toBe("@cline/llms@test");
    expect(Object.isFrozen(g.prices["openai-native"]?.["gpt-x"])).toBe(true);
    const t = catalogPriceTable(g);
    expect(resolvePrice(t, "openai-codex", "gpt-x")).toMatchObject({
      via: "provider-alias",
      price: { input: 1.5, output: 6, cacheRead: 0.375, cacheWrite: 0 },
    });
    expect(resolvePrice(t, "anthropic", "claude-old-sonnet")?.price).toEqual({ input: 9, output: 9 });
    expect(resolvePrice(t, "claude-code", "sonnet")?.price.input).toBe(2);
  });
});

describe("clineNumber", () => {
  it("accepts finite numbers and non-blank numeric strings only", () => {
    expect(clineNumber(3)).toBe(3);
    expect(clineNumber(" 2.5 ")).toBe(2.5);
    expect(clineNumber("")).toBeUndefined();
    expect(clineNumber("  ")).toBeUndefined();
    expect(clineNumber("abc")).toBeUndefined();
    expect(clineNumber(Number.POSITIVE_INFINITY)).toBeUndefined();
    expect(clineNumber(null)).toBeUndefined();
  });
});

describe("claudeCodeAliases", () => {
  it("orders by release date, newest first, then by id", () => {
    const models = {
      "claude-opus-a": { releaseDate: "2026-01-01" },
      "claude-opus-b": { releaseDate: "2026-01-01" },
      "claude-haiku-x": {},
      "claude-haiku-y": { releaseDate: "2020-01-01" },
    };
    const prices = {
      "claude-opus-a": [1, 1, null, null],
      "claude-opus-b": [2, 2, null, null],
      "claude-haiku-x": [3, 3, null, null],
      "claude-haiku-y": [4, 4, null, null],
    } as const;
    expect(claudeCodeAliases(models, prices)).toEqual({
      opus: [1, 1, null, null],
      haiku: [4, 4, null, null],
    });
  });
});

describe("the shipped code", () => {
  it("never imports the catalog generator or `typescript` (devDependencies are not installed for users)", () => {
    const root = join(import.meta.dirname, "../../../src");
    const offenders: string[] = [];
    const walk = (dir: string): void => {
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        const p = join(dir, e.name);
        if (e.isDirectory()) walk(p);
        else if (p.endsWith(".ts")) {
          const text = readFileSync(p, "utf8");
          if (/from\s+["'](typescript|[^"']*tools\/[^"']*)["']/.test(text)) offenders.push(p);
        }
      }
    };
    walk(root);
    expect(offenders).toEqual([]);
  });
});
