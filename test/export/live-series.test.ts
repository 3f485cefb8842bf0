/**
 * The cumulative TTL in SQL (Ledger.liveUsageSeries / liveToolSeries) keeps exactly the series
 * the JS filter (isLive) keeps when every series is one row, and the producer falls back to
 * reading every row when series collapse (session id off), so a live summed series stays whole.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { foldKeyOf } from "../../src/export/fold-key.ts";
import { isLive } from "../../src/export/translate.ts";
import { Ledger } from "../../src/ledger/ledger.ts";
import { fillLedger } from "./helpers/ledger.ts";

const DAY = 86_400_000;
const dirs: string[] = [];
const ledgers: Ledger[] = [];
afterEach(() => {
  for (const l of ledgers.splice(0)) l.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function ledgerWith(now: number): Ledger {
  const d = mkdtempSync(join(tmpdir(), "live-"));
  dirs.push(d);
  const l = Ledger.open(d, { now: () => now });
  ledgers.push(l);
  // Old sessions and recent ones: the TTL keeps the recent ones once the old are delivered.
  fillLedger(l, { sessions: 6, eventsPerSession: 3, timestampMs: now - 30 * DAY });
  fillLedger(l, { sessions: 4, eventsPerSession: 3, offset: 100, timestampMs: now - DAY });
  return l;
}

describe("the cumulative TTL in SQL", () => {
  const now = 1_800_000_000_000;
  const ttl = 7 * DAY;
  for (const delivered of [Number.NEGATIVE_INFINITY, now - 1, now + 1]) {
    it(`keeps what isLive keeps (last delivery ${delivered === Number.NEGATIVE_INFINITY ? "never" : delivered - now})`, () => {
      const l = ledgerWith(now);
      const f = { eventSinceMs: now - ttl, updatedSinceMs: delivered };
      const keep = (r: { updatedMs: number; lastEventMs: number }) => isLive(r, now, ttl, delivered);
      expect([...l.liveUsageSeries(f)]).toEqual(l.usageSeries().filter(keep));
      expect([...l.liveToolSeries(f)]).toEqual(l.toolSeries().filter(keep));
      const kept = [...l.liveUsageSeries(f)].length;
      // Not vacuous: the filter drops the delivered old series and keeps the recent ones.
      if (delivered > now) expect(kept).toBeLessThan(l.usageSeries().length);
      expect(kept).toBeGreaterThan(0);
    });
  }

  it("applies to rows where a series is one row; elsewhere the series fold by their exported key", () => {
    const repositoryOf = () => ({ series: {}, all: {} });
    expect(foldKeyOf({ includeSessionId: true, project: "path" })).toBeUndefined();
    // The repository is a function of the path: still one row per series.
    expect(foldKeyOf({ includeSessionId: true, project: "path", repositoryOf })).toBeUndefined();
    // The GenAI histograms carry no cline.project: without a repository they never group by it.
    expect(foldKeyOf({ includeSessionId: false, project: "path" })).toEqual({
      drop: ["session_id"],
      tables: { genai: { drop: ["session_id", "project"] } },
    });
    expect(foldKeyOf({ includeSessionId: true, project: "none" })).toEqual({
      drop: ["project"],
      tables: { genai: { drop: ["project"] } },
    });
    expect(foldKeyOf({ includeSessionId: false, project: "none" })).toMatchObject({
      drop: ["session_id", "project"],
    });
    // With a repository they group by it alone.
    const withRepo = foldKeyOf({ includeSessionId: false, project: "path", repositoryOf });
    expect(withRepo?.tables?.genai?.render?.column).toBe("project");
    expect(withRepo?.tables?.genai?.drop).toEqual(["session_id"]);
    for (const project of ["basename", "hash"] as const)
      expect(foldKeyOf({ includeSessionId: true, project })?.render?.column).toBe("project");
    expect(foldKeyOf({ includeSessionId: true, project: "none", repositoryOf })?.render?.column).toBe(
      "project",
    );
  });
});
