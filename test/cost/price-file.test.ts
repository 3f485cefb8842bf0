import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  formatIssue,
  loadPriceFile,
  PriceFileError,
  type PriceFileIssue,
  parsePriceFile,
} from "../../src/cost/price-file.ts";
import {
  catalogPriceTable,
  computeCost,
  lookupPrice,
  mergePrices,
  resolvePrice,
} from "../../src/cost/prices.ts";

const dir = mkdtempSync(join(tmpdir(), "cline-otel-prices-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const EXAMPLE = `{
  "prices": {
    "anthropic": {
      "claude-sonnet-4-5-20250929": { "input": 2, "output": 10, "cacheRead": 0.2, "cacheWrite": 2.5 }
    },
    "my-gateway": {
      "house-model": { "input": 1, "output": 2 }
    },
    "*": {
      "gpt-4.1": { "input": 1.5, "output": 6, "cacheRead": 0.375 }
    }
  }
}
`;

/** Line and column of the first `needle` after `after`, counted independently of the parser. */
function posOf(text: string, needle: string, after = ""): { line: number; column: number } {
  const offset = text.indexOf(needle, after ? text.indexOf(after) : 0);
  if (offset < 0) throw new Error(`${needle} not in the text`);
  const lines = text.slice(0, offset).split("\n");
  return { line: lines.length, column: (lines[lines.length - 1] as string).length + 1 };
}

function issuesOf(text: string): readonly PriceFileIssue[] {
  const r = parsePriceFile(text, "prices.json");
  if (r.ok) throw new Error("expected the file to be rejected");
  return r.issues;
}

describe("parsePriceFile", () => {
  it("reads provider, wildcard and partial entries", () => {
    const r = parsePriceFile(EXAMPLE, "prices.json");
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.overrides.get("anthropic")?.get("claude-sonnet-4-5-20250929")).toEqual({
      input: 2,
      output: 10,
      cacheRead: 0.2,
      cacheWrite: 2.5,
    });
    // Absent cache prices stay absent: Cline's defaults apply to them.
    expect(r.overrides.get("my-gateway")?.get("house-model")).toEqual({ input: 1, output: 2 });
    expect(r.overrides.get("*")?.get("gpt-4.1")).toEqual({ input: 1.5, output: 6, cacheRead: 0.375 });
  });

  it("accepts an empty price list and a leading BOM", () => {
    expect(parsePriceFile('{"prices":{}}', "p.json").ok).toBe(true);
    expect(parsePriceFile('\uFEFF{"prices":{}}', "p.json").ok).toBe(true);
  });

  it("reports invalid JSON with its line and column", () => {
    const text = '{\n  "prices": {\n    "a": { "m": { "input": 1, "output": 2, } }\n  }\n}\n';
    const [i, ...rest] = issuesOf(text);
    expect(rest).toEqual([]);
    const at = posOf(text, "} }");
    expect(at.line).toBe(3);
    expect(i).toMatchObject({ path: "prices.json", ...at });
    expect(i?.message).toMatch(/^invalid JSON: expected a property name in double quotes, found "}"/);
    expect(formatIssue(i as PriceFileIssue)).toBe(`prices.json:3:${at.column}: ${i?.message}`);
  });

  it("reports unterminated input at the end", () => {
    const [i] = issuesOf('{"prices": {');
    expect(i).toMatchObject({ line: 1, column: 13 });
    expect(i?.message).toMatch(/end of input/);
  });

  it("reports a negative price at the value", () => {
    const text = '{\n  "prices": {\n    "a": {\n      "m": { "input": -1, "output": 2 }\n    }\n  }\n}';
    const [i, ...rest] = issuesOf(text);
    expect(rest).toEqual([]);
    expect(i).toMatchObject(posOf(text, "-1"));
    expect(i?.line).toBe(4);
    expect(i?.message).toBe('"input" of a/m must not be negative, got -1');
  });

  it("reports a non-numeric price, naming what it got", () => {
    const text = '{"prices": {"a": {"m": {"input": "3", "output": null}}}}';
    const issues = issuesOf(text);
    expect(issues.map((i) => [i.column, i.message])).toEqual([
      [posOf(text, '"3"').column, '"input" of a/m must be a number (USD per million tokens), got string'],
      [posOf(text, "null").column, '"output" of a/m must be a number (USD per million tokens), got null'],
    ]);
  });

  it("reports a non-finite number", () => {
    const [i] = issuesOf('{"prices": {"a": {"m": {"input": 1e999, "output": 1}}}}');
    expect(i?.message).toBe('"input" of a/m must be a finite number');
  });

  it("reports unknown keys at the key, at every level", () => {
    const text = '{\n"prices": {"a": {"m": {"input": 1, "output": 2, "cacheReads": 1}}},\n"version": 2\n}';
    const issues = issuesOf(text);
    expect(issues.map((i) => `${i.line}:${i.column} ${i.message}`)).toEqual([
      '3:1 unknown key "version" (expected "prices")',
      `2:${posOf(text, '"cacheReads"').column} unknown key "cacheReads" in the price of a/m (expected input, output, cacheRead, cacheWrite)`,
    ]);
  });

  it("reports missing input and output prices at the price object", () => {
    const text = '{"prices": {"a": {\n  "m": {"cacheRead": 1}}}}';
    const issues = issuesOf(text);
    expect(posOf(text, '{"cacheRead"')).toEqual({ line: 2, column: 8 });
    expect(issues.map((i) => `${i.line}:${i.column} ${i.message}`)).toEqual([
      '2:8 the price of a/m is missing "input" (input and output are required)',
      '2:8 the price of a/m is missing "output" (input and output are required)',
    ]);
  });

  it("reports wrong shapes, duplicates, empty ids and a missing prices key", () => {
    expect(issuesOf("[]")[0]?.message).toBe("the file must be an object, got an array");
    expect(issuesOf("{}")[0]?.message).toBe('missing "prices"');
    expect(issuesOf('{"prices": []}')[0]?.message).toBe('"prices" must be an object, got an array');
    expect(issuesOf('{"prices": {"a": 3}}')[0]?.message).toBe('provider "a" must be an object, got number');
    expect(issuesOf('{"prices": {"a": {"m": 3}}}')[0]?.message).toBe(
      "the price of a/m must be an object, got number",
    );
    expect(issuesOf('{"prices": {"": {}}}')[0]?.message).toMatch(/empty provider id/);
    expect(issuesOf('{"prices": {"a": {"": {"input": 1, "output": 1}}}}')[0]?.message).toMatch(
      /empty model id/,
    );
    const dup = issuesOf('{"prices": {"a": {}, "a": {}}}');
    expect(dup[0]).toMatchObject({ column: 22, message: 'duplicate key "a" in "prices"' });
    expect(posOf('{"prices": {"a": {}, "a": {}}}', '"a"', "},")).toEqual({ line: 1, column: 22 });
  });

  it("keeps columns right after a BOM", () => {
    const text = '\uFEFF{"prices": {"a": {"m": {"input": -2, "output": 1}}}}';
    const [i] = issuesOf(text);
    // Editors do not show the BOM, so it does not count as a column.
    expect(i?.column).toBe(posOf(text, "-2").column - 1);
  });
});

describe("loadPriceFile", () => {
  it("loads a valid file", () => {
    const path = join(dir, "ok.json");
    writeFileSync(path, EXAMPLE);
    expect(loadPriceFile(path).get("my-gateway")?.get("house-model")).toEqual({ input: 1, output: 2 });
  });

  it("throws a PriceFileError naming the file, line and problem", () => {
    const path = join(dir, "bad.json");
    const text = '{\n  "prices": {\n    "a": { "m": { "input": 1, "output": -3 } }\n  }\n}';
    writeFileSync(path, text);
    const at = posOf(text, "-3");
    let caught: unknown;
    try {
      loadPriceFile(path);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(PriceFileError);
    const e = caught as PriceFileError;
    expect(e.path).toBe(path);
    expect(e.message).toBe(
      `invalid price file: ${path}:${at.line}:${at.column}: "output" of a/m must not be negative, got -3`,
    );
    expect(e.issues).toHaveLength(1);
  });

  it("lists every problem when there are several", () => {
    const path = join(dir, "worse.json");
    writeFileSync(path, '{"prices": {"a": {"m": {"input": -1}}}, "x": 1}');
    expect(() => loadPriceFile(path)).toThrow(/\(3 problems\):\n {2}.*worse\.json:1:/);
  });

  it("throws a PriceFileError when the file cannot be read", () => {
    const path = join(dir, "missing.json");
    expect(() => loadPriceFile(path)).toThrow(PriceFileError);
    expect(() => loadPriceFile(path)).toThrow(`${path}: cannot read: ENOENT`);
  });
});

describe("mergePrices", () => {
  const base = catalogPriceTable();
  const parsed = parsePriceFile(EXAMPLE, "prices.json");
  if (!parsed.ok) throw new Error("example must parse");
  const merged = mergePrices(base, parsed.overrides, "prices.json");

  it("overrides a catalog price for its provider", () => {
    expect(resolvePrice(merged, "anthropic", "claude-sonnet-4-5-20250929")).toMatchObject({
      via: "exact",
      price: { input: 2, output: 10, cacheRead: 0.2, cacheWrite: 2.5 },
    });
    const usd = computeCost(
      { input: 1_000_000, output: 0, cacheRead: 0, cacheWrite: 0 },
      lookupPrice(merged, "anthropic", "claude-sonnet-4-5-20250929") ?? { input: Number.NaN, output: 0 },
    );
    expect(usd).toBe(2);
  });

  it("adds models and providers the catalog lacks", () => {
    expect(lookupPrice(base, "my-gateway", "house-model")).toBeUndefined();
    expect(resolvePrice(merged, "my-gateway", "house-model")).toMatchObject({ via: "exact" });
  });

  it('applies "*" to every provider listing the model and to providers that do not', () => {
    const p = { input: 1.5, output: 6, cacheRead: 0.375 };
    expect(lookupPrice(base, "openai-native", "gpt-4.1")?.input).toBe(2);
    expect(resolvePrice(merged, "openai-native", "gpt-4.1")).toMatchObject({ via: "exact", price: p });
    expect(resolvePrice(merged, "unheard-of", "gpt-4.1")).toMatchObject({
      via: "any-provider-override",
      price: p,
    });
  });

  it('lets a provider-specific override beat a "*" override', () => {
    const r = parsePriceFile(
      '{"prices": {"*": {"m": {"input": 9, "output": 9}}, "x": {"m": {"input": 1, "output": 1}}}}',
      "p.json",
    );
    if (!r.ok) throw new Error("must parse");
    const t = mergePrices(base, r.overrides);
    expect(lookupPrice(t, "x", "m")?.input).toBe(1);
    expect(lookupPrice(t, "y", "m")?.input).toBe(9);
  });

  it("leaves the base table untouched and labels the source", () => {
    expect(lookupPrice(base, "anthropic", "claude-sonnet-4-5-20250929")?.input).toBe(3);
    expect(merged.source).toBe(`${base.source} + prices.json`);
  });
});
