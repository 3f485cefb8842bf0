/**
 * Series that collapse (session.id off, project none / basename / hash, repository attributes
 * derived from the project), folded in SQL (src/ledger/usage/fold.ts) and read in pages: the export
 * holds exactly what folding every ledger row in JS gives (the reference: translate over all rows,
 * then the TTL), each attribute set once per pass even where renderings collide (two `app`
 * folders, one repository for two paths), through the real SDK reader, paged and whole.
 */
import { afterEach, describe, expect, it } from "vitest";
import { backfillOptions } from "../../src/export/backfill.ts";
import { foldKeyOf } from "../../src/export/fold-key.ts";
import { genaiToMetricData, liveGenai, translateGenai } from "../../src/export/genai/metrics.ts";
import { effectiveEndNs, nsToHrTime, toMetricData } from "../../src/export/metric-data.ts";
import { POINTS_PER_ROW } from "../../src/export/pages.ts";
import { SCOPE_NAME } from "../../src/export/producer.ts";
import { liveSeries, NO_PRICES, type TranslateOptions, translate } from "../../src/export/translate.ts";
import type { Ledger } from "../../src/ledger/ledger.ts";
import { type ByMetric, delivered } from "./helpers/delivered.ts";
import { fillLedger, type TempLedger, tempLedger } from "./helpers/ledger.ts";
import { type Harness, harness } from "./helpers/sdk.ts";

let t: TempLedger | undefined;
const open: Harness[] = [];
afterEach(async () => {
  for (const h of open.splice(0)) await h.shutdown();
  t?.dispose();
  t = undefined;
});

const DAY = 86_400_000;
const TTL = 7 * DAY;
const T0 = Date.parse("2026-12-01T10:00:00Z");

/** Two `app` folders (one basename), one repository for two paths, an unknown cwd. */
const REPOS: Record<string, string> = {
  "/home/a/app": "github.com/o/app",
  "/home/b/app": "github.com/o/app",
};
const repositoryOf = (cwd: string) => {
  const url = REPOS[cwd];
  const series: Record<string, string> = url === undefined ? {} : { "vcs.repository.url.full": url };
  return { series, all: series };
};

const CASES: readonly [string, Partial<TranslateOptions>][] = [
  ["session.id off", { includeSessionId: false }],
  ["project none", { project: "none" }],
  ["session.id off, project none", { includeSessionId: false, project: "none" }],
  ["project basename", { project: "basename" }],
  ["session.id off, project basename (two app folders)", { includeSessionId: false, project: "basename" }],
  ["session.id off, project hash", { includeSessionId: false, project: "hash" }],
  ["session.id off, project none, repository", { includeSessionId: false, project: "none", repositoryOf }],
  [
    "session.id off, project basename, repository",
    { includeSessionId: false, project: "basename", repositoryOf },
  ],
];

/** Old sessions (30 days) in their own projects and in shared ones, recent sessions beside them. */
function fill(ledger: Ledger): void {
  fillLedger(ledger, { sessions: 12, timestampMs: T0 - 30 * DAY, projects: ["/old/only", "/home/a/app"] });
  fillLedger(ledger, {
    sessions: 12,
    offset: 100,
    timestampMs: T0 - DAY,
    projects: ["/home/b/app", "/x/app", "", "/home/a/app"],
  });
}

/** What folding every row in JS exports (the path this replaces), with the TTL of `deliveredBefore`. */
function reference(ledger: Ledger, opts: TranslateOptions, nowMs: number, deliveredBefore: number): ByMetric {
  const points = translate(
    ledger.usageSeries(),
    ledger.toolSeries(),
    opts,
    ledger.signals?.toolOutcomes.series() ?? [],
  );
  for (const [id, s] of points) points.set(id, liveSeries(s, nowMs, TTL, deliveredBefore));
  const genai = liveGenai(
    translateGenai(ledger.signals?.genaiSeries() ?? [], opts),
    nowMs,
    TTL,
    deliveredBefore,
  );
  const end = effectiveEndNs(0n, BigInt(nowMs) * 1_000_000n);
  const metrics = [
    ...toMetricData(points, "cumulative", 0n, end),
    ...genaiToMetricData(genai, "cumulative", nsToHrTime(0n), nsToHrTime(end)),
  ];
  return delivered([
    { resource: { attributes: {} } as never, scopeMetrics: [{ scope: { name: SCOPE_NAME }, metrics }] },
  ]).byMetric;
}

const size = (m: ByMetric) => [...m.values()].reduce((x, s) => x + s.size, 0);

describe("folded series, summed in SQL and read in pages", () => {
  for (const [what, options] of CASES) {
    it(`${what}: the JS fold of every row, each attribute set once, paged and whole; the TTL exact`, async () => {
      let now = T0;
      t = tempLedger(() => now);
      fill(t.ledger);
      now += 1000;
      const translateOpts: TranslateOptions = {
        project: "path",
        includeSessionId: true,
        priceOf: NO_PRICES,
        ...options,
      };
      const page = 2 * POINTS_PER_ROW;
      const paged = harness(t.ledger, {
        exporter: "paged",
        pagePoints: page,
        now: () => now,
        translate: options,
      });
      const whole = harness(t.ledger, { exporter: "whole", now: () => now, translate: options });
      open.push(paged, whole);
      const want = reference(t.ledger, translateOpts, now, 0);
      await paged.flush();
      await whole.flush();
      const got = delivered(paged.scripted.memory.getMetrics());
      expect(got.dups).toBe(0);
      expect(got.byMetric).toEqual(want);
      expect(delivered(whole.scripted.memory.getMetrics()).byMetric).toEqual(want);
      // Not vacuous: read folded, over several pages; without session.id, fewer series than rows.
      expect(foldKeyOf(translateOpts)).toBeDefined();
      expect(paged.scripted.calls).toBeGreaterThan(2);
      if (options.includeSessionId === false)
        expect(want.get("cline.requests")?.size ?? 0).toBeLessThan(t.ledger.usageSeries().length);
      // Delivered: only groups with a recent event are live; a group with old and recent sessions is.
      const firstPaged = paged.scripted.memory.getMetrics().length;
      const firstWhole = whole.scripted.memory.getMetrics().length;
      const deliveredAt = now;
      now += 60_000;
      const live = reference(t.ledger, translateOpts, now, deliveredAt);
      await paged.flush();
      await whole.flush();
      const again = delivered(paged.scripted.memory.getMetrics().slice(firstPaged));
      expect(again.dups).toBe(0);
      expect(again.byMetric).toEqual(live);
      expect(delivered(whole.scripted.memory.getMetrics().slice(firstWhole)).byMetric).toEqual(live);
      expect(size(live)).toBeGreaterThan(0);
      expect(size(live)).toBeLessThan(size(want));
    });
  }
});

describe("the options a folded pass is recorded under", () => {
  it("name its group columns and the repository; the row path's stay those of earlier versions", () => {
    const base: TranslateOptions = { project: "path", includeSessionId: false, priceOf: NO_PRICES };
    const off = backfillOptions(base, { drop: ["session_id"] });
    expect(off).toContain("agent,project,model,provider");
    expect(backfillOptions(base, { drop: ["session_id", "project"] })).not.toBe(off);
    expect(backfillOptions({ ...base, repositoryOf }, { drop: ["session_id"] })).not.toBe(off);
    // A v1 ledger's pass by id resumes under this build.
    expect(backfillOptions({ ...base, includeSessionId: true }, undefined)).toBe(
      '{"project":"path","includeSessionId":true}',
    );
  });
});
