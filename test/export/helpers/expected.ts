/**
 * What a backend must hold for a ledger: every series' total by the exporter's own translation
 * (attributes included), and a comparison that names the series that differ.
 */
import { expect } from "vitest";
import { buildPriceLookup } from "../../../src/export/price-lookup.ts";
import { METRIC_IDS, METRICS, translate } from "../../../src/export/translate.ts";
import type { Ledger } from "../../../src/ledger/ledger.ts";
import { attrKey } from "./otlp-receiver.ts";

export const priceOf = buildPriceLookup(undefined);

/** `includeSessionId` false: the series folded without session.id (summed by translate). */
export function expectedTotals(ledger: Ledger, includeSessionId = true): Map<string, Map<string, number>> {
  const pts = translate(
    ledger.usageSeries(),
    ledger.toolSeries(),
    { project: "path", includeSessionId, priceOf },
    ledger.signals?.toolOutcomes.series() ?? [],
    ledger.edits.series(),
  );
  const out = new Map<string, Map<string, number>>();
  for (const id of METRIC_IDS) {
    out.set(METRICS[id].name, new Map((pts.get(id) ?? []).map((p) => [attrKey(p.attributes), p.value])));
  }
  return out;
}

export function expectClose(got: ReadonlyMap<string, number>, want: ReadonlyMap<string, number>): void {
  expect([...got.keys()].sort()).toEqual([...want.keys()].sort());
  for (const [k, v] of want) expect(got.get(k), k).toBeCloseTo(v, 9);
}

/**
 * The token totals by `type`, summed straight from the ledger's usage columns: a check of the
 * received totals independent of the exporter's translation.
 */
export function ledgerTokensByType(ledger: Ledger): Record<string, number> {
  const rows = ledger.usageSeries();
  return {
    input: rows.reduce((x, r) => x + r.input, 0),
    output: rows.reduce((x, r) => x + r.output, 0),
    cache_read: rows.reduce((x, r) => x + r.cacheRead, 0),
    cache_write: rows.reduce((x, r) => x + r.cacheWrite, 0),
  };
}
