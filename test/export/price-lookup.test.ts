/**
 * The exporter's price lookup (src/export/price-lookup.ts): a bad price file stops `run` before
 * any work; Cline's catalog is built at the first lookup only (a collection with nothing due
 * prices nothing), once, and the answers are those of the whole table.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { ConfigError } from "../../src/config/config.ts";
import { lookupPrice } from "../../src/cost/index.ts";
import { catalogPriceTable } from "../../src/cost/prices.ts";
import { priceTableFor } from "../../src/cost/table.ts";
import { buildPriceLookup } from "../../src/export/price-lookup.ts";

vi.mock("../../src/cost/prices.ts", async (importOriginal) => {
  const orig = await importOriginal<typeof import("../../src/cost/prices.ts")>();
  return { ...orig, catalogPriceTable: vi.fn(orig.catalogPriceTable) };
});

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "price-lookup-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
beforeEach(() => vi.mocked(catalogPriceTable).mockClear());

describe("buildPriceLookup", () => {
  it("builds no table until the first lookup, then one for all lookups", () => {
    const priceOf = buildPriceLookup(undefined);
    expect(catalogPriceTable).not.toHaveBeenCalled();
    const table = priceTableFor(undefined);
    vi.mocked(catalogPriceTable).mockClear();
    for (const [provider, model] of [
      ["anthropic", "claude-sonnet-4-5-20250929"],
      ["openrouter", "anthropic/claude-sonnet-4.5"],
      ["nobody", "no-such-model"],
      ["anthropic", "claude-sonnet-4-5-20250929"],
    ] as const)
      expect(priceOf(provider, model)).toEqual(lookupPrice(table, provider, model));
    expect(catalogPriceTable).toHaveBeenCalledTimes(1);
  });

  it("a bad price file is refused at once (exit 2), naming the file, before any lookup", () => {
    const bad = join(dir, "bad.json");
    writeFileSync(bad, "{ not json");
    expect(() => buildPriceLookup(bad)).toThrow(ConfigError);
    expect(() => buildPriceLookup(bad)).toThrow(bad);
    expect(() => buildPriceLookup(join(dir, "missing.json"))).toThrow(/cannot read/);
    expect(catalogPriceTable).not.toHaveBeenCalled();
  });

  it("a good price file is merged over the catalog, lazily: its prices win", () => {
    const file = join(dir, "prices.json");
    writeFileSync(
      file,
      JSON.stringify({ prices: { "my-gateway": { "my-model": { input: 1, output: 2 } } } }),
    );
    const priceOf = buildPriceLookup(file);
    expect(catalogPriceTable).not.toHaveBeenCalled();
    expect(priceOf("my-gateway", "my-model")).toEqual(
      lookupPrice(priceTableFor(file), "my-gateway", "my-model"),
    );
    expect(priceOf("my-gateway", "my-model")).toMatchObject({ input: 1, output: 2 });
  });
});
