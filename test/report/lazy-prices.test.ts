/**
 * The price table is built only when a row of the report needs a price (buildReportWithoutPrices):
 * a window without usage is answered without it, the same report as with it; any priced row
 * means "build it with prices", so no row is ever shown unpriced for want of the table.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogPriceTable } from "../../src/cost/prices.ts";
import { Ledger } from "../../src/ledger/ledger.ts";
import type { GroupDim } from "../../src/report/dims.ts";
import { buildReport, buildReportWithoutPrices } from "../../src/report/report.ts";
import { zoneNamed } from "../../src/report/time/zone.ts";
import { call, event, observation } from "../helpers/events.ts";

const DAY = 86_400_000;
const T0 = Date.UTC(2026, 10, 1);
let dir: string;
let ledger: Ledger;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "report-lazy-prices-"));
  ledger = Ledger.open(dir);
  const e1 = event("e1", { timestampMs: T0 + 1000, input: 10, toolCallCount: 1 });
  const e2 = event("e2", { timestampMs: T0 + 2 * DAY, input: 20, model: "no-such-model" });
  ledger.commit(observation([e1, e2], [call("c1", e1.dedupKey, 1, { timestampMs: e1.timestampMs })]));
});
afterAll(() => {
  ledger.close();
  rmSync(dir, { recursive: true, force: true });
});

const zone = zoneNamed("UTC");
const views: readonly (readonly GroupDim[])[] = [[], ["day"], ["model"], ["tool"], ["project", "week"]];

describe("a report without the price table", () => {
  it.each(views)("a window without usage is the same report as with prices (--by %j)", (...by) => {
    const opts = { fromMs: T0 + 10 * DAY, toMs: T0 + 40 * DAY, zone };
    const without = buildReportWithoutPrices(ledger, by, opts);
    expect(without).toBeDefined();
    expect(without).toEqual(buildReport(ledger, by, catalogPriceTable(), opts));
    expect(without?.totals.events).toBe(0);
  });

  it.each(views)("any usage in the window needs the prices, even an unpriceable model (--by %j)", (...by) => {
    for (const [fromMs, toMs] of [
      [T0, T0 + 40 * DAY],
      [T0 + DAY, T0 + 40 * DAY], // only the event of an unknown model: its cost is "unknown", known only from the table
    ] as const) {
      expect(buildReportWithoutPrices(ledger, by, { fromMs, toMs, zone })).toBeUndefined();
      const priced = buildReport(ledger, by, catalogPriceTable(), { fromMs, toMs, zone });
      expect(priced.totals.events).toBeGreaterThan(0);
    }
  });
});
