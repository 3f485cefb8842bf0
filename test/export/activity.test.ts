/**
 * cline.active_time, cline.commits, cline.pull_requests and cline.sessions (docs/metrics.md
 * "Active time, commits, pull requests, sessions") through the real SDK reader, from the
 * activity of many sessions: every path (cumulative whole, paged, folded with the session id
 * off, delta in small windows) delivers exactly the totals of the records committed, each
 * attribute set once per cumulative export; a document read again adds nothing.
 */
import type { DataPoint } from "@opentelemetry/sdk-metrics";
import { afterEach, describe, expect, it } from "vitest";
import type { DeliveryRecord, SessionStartRecord } from "../../src/adapter/types.ts";
import { ACTIVITY_METRICS } from "../../src/export/activity.ts";
import { ATTR, seriesKey } from "../../src/export/attributes.ts";
import { POINTS_PER_ROW } from "../../src/export/pages.ts";
import type { Ledger } from "../../src/ledger/ledger.ts";
import { type Gap, timelines } from "../helpers/active-time.ts";
import { finalObservation } from "../helpers/events.ts";
import { type TempLedger, tempLedger } from "./helpers/ledger.ts";
import { type Harness, harness } from "./helpers/sdk.ts";

let t: TempLedger | undefined;
let h: Harness | undefined;
afterEach(async () => {
  await h?.shutdown();
  h = undefined;
  t?.dispose();
  t = undefined;
});

interface Filled {
  readonly gaps: Gap[];
  readonly deliveries: DeliveryRecord[];
  readonly starts: SessionStartRecord[];
}

/** Sessions of activity (deterministic) over `projects` projects, committed as their documents, each read twice. */
function fill(l: Ledger, sessions = 9, ts = Date.now(), projects = 3): Filled {
  const out: Filled = { gaps: [], deliveries: [], starts: [] };
  for (let s = 0; s < sessions; s++) {
    const sessionId = `s${s}`;
    const path = `/s/${sessionId}/${sessionId}.messages.json`;
    const common = {
      sessionId,
      agent: "lead",
      model: s % 2 === 0 ? "m-a" : "m-b",
      provider: "anthropic",
      project: `/work/p${s % projects}`,
      sourcePath: path,
      client: "cli",
    };
    const gaps: Gap[] = Array.from({ length: 5 }, (_, i) => ({
      ...common,
      streamKey: `cline|${sessionId}|lead|active`,
      type: (s + i) % 3 === 0 ? "user" : "agent",
      startMs: ts + i * 10_000,
      durationMs: 250 * (1 + ((s * 5 + i) % 7)),
    }));
    const deliveries: DeliveryRecord[] = Array.from({ length: s % 4 }, (_, i) => ({
      ...common,
      deliveryKey: `cline|${sessionId}|lead|t${i}|${i % 3 === 2 ? "pull_request" : "commit"}|0`,
      callKey: `cline|${sessionId}|lead|t${i}`,
      kind: i % 3 === 2 ? "pull_request" : "commit",
      toolName: "run_commands",
      timestampMs: ts,
    }));
    const starts: SessionStartRecord[] = [
      { ...common, startKey: `cline|${sessionId}|lead|session|new`, startType: "new", timestampMs: ts },
      ...(s % 3 === 1
        ? [
            {
              ...common,
              startKey: `cline|${sessionId}|lead|session|resumed|${ts + 5}`,
              startType: "resumed" as const,
              timestampMs: ts + 5,
            },
          ]
        : []),
    ];
    const source = { adapterId: "cline", path, origin: "walk" as const, hint: {} };
    const obs = {
      ...finalObservation([], [], 100, source),
      activeTime: timelines(gaps),
      deliveries,
      sessionStarts: starts,
    };
    l.commit(obs);
    l.commit({ ...obs, checkpoint: { ...obs.checkpoint, size: 101 } });
    out.gaps.push(...gaps);
    out.deliveries.push(...deliveries);
    out.starts.push(...starts);
  }
  return out;
}

function expected(f: Filled) {
  const m = new Map<string, number>();
  const put = (k: string, v: number) => m.set(k, (m.get(k) ?? 0) + v);
  for (const g of f.gaps) put(`cline.active_time|${g.type}|${g.project}`, g.durationMs / 1000);
  for (const d of f.deliveries) put(`${ACTIVITY_METRICS[d.kind].name}||${d.project}`, 1);
  for (const s of f.starts) put(`cline.sessions|${s.startType}|${s.project}`, 1);
  return m;
}

function observed(read: (name: string) => DataPoint<number>[]) {
  const m = new Map<string, number>();
  for (const metric of Object.values(ACTIVITY_METRICS))
    for (const p of read(metric.name)) {
      const a = p.attributes;
      const detail = (a[ATTR.type] ?? a[ATTR.startType] ?? "") as string;
      const k = `${metric.name}|${detail}|${a[ATTR.project]}`;
      m.set(k, (m.get(k) ?? 0) + p.value);
    }
  // Sums of seconds: compared to the millisecond.
  for (const [k, v] of m) m.set(k, Math.round(v * 1000) / 1000);
  return m;
}

const CUMULATIVE = {
  whole: {},
  "in pages of one row": { pagePoints: POINTS_PER_ROW, maxPointsPerRequest: POINTS_PER_ROW },
  "session id off (folded)": { translate: { includeSessionId: false } },
} as const;

describe("cline.active_time, cline.commits, cline.pull_requests, cline.sessions", () => {
  for (const [name, opts] of Object.entries(CUMULATIVE)) {
    it(`cumulative, ${name}: the totals of the records, each attribute set once`, async () => {
      t = tempLedger();
      const f = fill(t.ledger);
      h = harness(t.ledger, { temporality: "cumulative", ...opts });
      await h.flush();
      expect(observed((n) => h?.lastPoints(n) ?? [])).toEqual(expected(f));
      for (const metric of Object.values(ACTIVITY_METRICS)) {
        const points = h.lastPoints(metric.name);
        expect(points.length, metric.name).toBeGreaterThan(0);
        const keys = points.map((p) => seriesKey(p.attributes as Record<string, string>));
        expect(new Set(keys).size, "an attribute set twice in one export").toBe(keys.length);
        const withSession = points.some((p) => p.attributes[ATTR.sessionId] !== undefined);
        expect(withSession).toBe(!("translate" in opts));
      }
      // The usual attributes are there.
      const p = h.lastPoints("cline.active_time")[0];
      expect(p?.attributes).toMatchObject({ [ATTR.provider]: "anthropic", [ATTR.client]: "cli" });
    });
  }

  for (const [name, translate] of [
    ["by series id", {}],
    ["folded (session id off)", { includeSessionId: false }],
  ] as const) {
    it(`cumulative in pages, ${name}: no request holds more than a page, the activity's series included`, async () => {
      t = tempLedger();
      // More activity series than a page holds, folded or not: read whole, they all went into the
      // first request.
      const f = fill(t.ledger, 40, Date.now(), 40);
      const page = 4 * POINTS_PER_ROW;
      h = harness(t.ledger, { temporality: "cumulative", pagePoints: page, translate });
      await h.flush();
      expect(observed((n) => h?.lastPoints(n) ?? [])).toEqual(expected(f));
      const batches = h.scripted.memory.getMetrics();
      const activityPoints = Object.values(ACTIVITY_METRICS).reduce(
        (n, m) => n + (h?.lastPoints(m.name).length ?? 0),
        0,
      );
      expect(activityPoints).toBeGreaterThan(3 * page);
      for (const b of batches) {
        const points = b.scopeMetrics.flatMap((s) => s.metrics).reduce((n, m) => n + m.dataPoints.length, 0);
        expect(points).toBeLessThanOrEqual(page);
      }
      // Each attribute set once across the pages.
      for (const metric of Object.values(ACTIVITY_METRICS)) {
        const keys = h.lastPoints(metric.name).map((p) => seriesKey(p.attributes as Record<string, string>));
        expect(new Set(keys).size, metric.name).toBe(keys.length);
      }
    });
  }

  it("cumulative in pages: a pass cut inside the activity resumes after its acknowledged pages, then commits the activity watermark", async () => {
    t = tempLedger();
    const f = fill(t.ledger, 40, Date.now(), 40);
    const page = 4 * POINTS_PER_ROW;
    h = harness(t.ledger, { temporality: "cumulative", pagePoints: page });
    // The request after the first one that carries activity fails: the pass stops inside its phase.
    const firstActivity = await (async () => {
      const probe = harness(t.ledger, { temporality: "cumulative", pagePoints: page, exporter: "probe" });
      await probe.flush();
      const i = probe.scripted.memory
        .getMetrics()
        .findIndex((b) =>
          b.scopeMetrics.some((s) => s.metrics.some((m) => m.descriptor.name === "cline.sessions")),
        );
      await probe.shutdown();
      return i;
    })();
    expect(firstActivity).toBeGreaterThanOrEqual(0);
    h.scripted.failAt = firstActivity + 1;
    await h.flush();
    expect(t.ledger.backfills?.get("memory")?.phase).toBe("activity");
    const acked = h.scripted.memory.getMetrics().length;
    await h.flush();
    expect(t.ledger.backfills?.get("memory")).toBeUndefined();
    const all = (name: string) => h?.allPoints(name) ?? [];
    // Every activity series exactly once over the two exports: what was acknowledged is not sent again.
    expect(observed(all)).toEqual(expected(f));
    for (const metric of Object.values(ACTIVITY_METRICS)) {
      const keys = all(metric.name).map((p) => seriesKey(p.attributes as Record<string, string>));
      expect(new Set(keys).size, metric.name).toBe(keys.length);
    }
    expect(h.scripted.memory.getMetrics().length).toBeGreaterThan(acked);
    // The collection that began the pass read every activity record: its watermark is committed.
    expect(t.ledger.getExportState("memory").activityWatermark).toBe(t.ledger.maxActivityId());
    expect(t.ledger.maxActivityId()).toBeGreaterThan(0);
  });

  it("delta in windows of 5 records: every window once, the sum the records' totals", async () => {
    t = tempLedger();
    const f = fill(t.ledger);
    h = harness(t.ledger, { temporality: "delta", maxWindowCalls: 5, maxWindowEvents: 5 });
    for (let i = 0; i < 60 && (i === 0 || h.producer.backlog()); i++) await h.flush();
    expect(h.producer.backlog()).toBe(false);
    expect(observed((n) => h?.allPoints(n) ?? [])).toEqual(expected(f));
    // Every activity row delivered (active time is stored summed per timeline, type and hour).
    expect(t.ledger.getExportState("memory").activityWatermark).toBe(t.ledger.maxActivityId());
    expect(t.ledger.maxActivityId()).toBeGreaterThan(f.deliveries.length + f.starts.length);
  });

  it("an idle cumulative export after delivery sends no old activity series again (the TTL judges by event time)", async () => {
    t = tempLedger();
    fill(t.ledger, 2, Date.now() - 30 * 24 * 3600_000);
    // A change in the same millisecond as a collection's read counts as after it (sent again): step past it.
    await new Promise((r) => setTimeout(r, 5));
    h = harness(t.ledger, { temporality: "cumulative", ttlMs: 7 * 24 * 3600_000 });
    await h.flush();
    expect(h.lastPoints("cline.active_time").length).toBeGreaterThan(0);
    await h.flush();
    expect(h.lastPoints("cline.active_time")).toHaveLength(0);
  });
});
