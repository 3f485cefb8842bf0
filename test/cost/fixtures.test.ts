/**
 * Our computed cost against the cost the real Cline CLI stored, for every assistant message
 * with a recorded `metrics.cost` in the real-CLI fixtures. Fails when there is none at all,
 * so it cannot pass vacuously.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { catalogPriceTable, computeCost, resolvePrice } from "../../src/cost/prices.ts";

const ROOT = fileURLToPath(new URL("../../fixtures/cline", import.meta.url));

interface Metrics {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  cost?: number;
}

interface Message {
  id: string;
  role: string;
  modelInfo?: { id?: string; provider?: string };
  metrics?: Metrics;
}

function documents(): string[] {
  if (!existsSync(ROOT)) return [];
  return readdirSync(ROOT, { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".messages.json"))
    .sort()
    .map((f) => join(ROOT, f));
}

/** The seed's cache rule, applied here independently of the adapter's implementation. */
function components(m: Metrics) {
  const cache = m.cacheReadTokens + m.cacheWriteTokens;
  return {
    input: cache <= m.inputTokens ? m.inputTokens - cache : m.inputTokens,
    output: m.outputTokens,
    cacheRead: m.cacheReadTokens,
    cacheWrite: m.cacheWriteTokens,
  };
}

describe("computed cost vs the cost the real Cline CLI stored", () => {
  it("matches every recorded metrics.cost in fixtures/cline (relative error < 1e-9)", () => {
    const table = catalogPriceTable();
    const mismatches: string[] = [];
    let checked = 0;
    for (const path of documents()) {
      const doc = JSON.parse(readFileSync(path, "utf8")) as { messages?: Message[] };
      for (const msg of doc.messages ?? []) {
        const m = msg.metrics;
        if (msg.role !== "assistant" || !m || typeof m.cost !== "number") continue;
        checked += 1;
        const where = `${path} ${msg.id} (${msg.modelInfo?.provider}/${msg.modelInfo?.id})`;
        const match = resolvePrice(table, msg.modelInfo?.provider ?? "", msg.modelInfo?.id ?? "");
        if (!match) {
          mismatches.push(`${where}: Cline stored ${m.cost}, we have no price`);
          continue;
        }
        const ours = computeCost(components(m), match.price);
        // Cline stores a difference of running totals, so compare with a relative tolerance.
        const err = m.cost === 0 ? Math.abs(ours) : Math.abs(ours - m.cost) / Math.abs(m.cost);
        if (!(err < 1e-9))
          mismatches.push(`${where}: Cline stored ${m.cost}, we computed ${ours} (via ${match.via})`);
      }
    }
    expect(checked, `no assistant message with metrics.cost under ${ROOT}`).toBeGreaterThan(0);
    expect(mismatches).toEqual([]);
  });

  it("finds no price Cline would have used where Cline stored no cost", () => {
    // Cline prices every model its catalog (or its runtime aliases) prices; where it stored
    // metrics without a cost, only our estimates (vendor-prefix, any-provider) may find one.
    const table = catalogPriceTable();
    const wrong: string[] = [];
    let checked = 0;
    for (const path of documents()) {
      const doc = JSON.parse(readFileSync(path, "utf8")) as { messages?: Message[] };
      for (const msg of doc.messages ?? []) {
        if (msg.role !== "assistant" || !msg.metrics || typeof msg.metrics.cost === "number") continue;
        checked += 1;
        const match = resolvePrice(table, msg.modelInfo?.provider ?? "", msg.modelInfo?.id ?? "");
        if (match && ["exact", "provider-alias", "cline-free"].includes(match.via)) {
          wrong.push(`${path} ${msg.id}: no cost stored, but we price it via ${match.via}`);
        }
      }
    }
    expect(checked, `no assistant message without metrics.cost under ${ROOT}`).toBeGreaterThan(0);
    expect(wrong).toEqual([]);
  });
});
