/**
 * An export of many requests to a backend that cuts request k (its connection destroyed, nothing
 * stored), for every k, through the real OTLP/HTTP exporters: what was acknowledged before k
 * stays delivered (the next export resumes after it, never from the start), the backend ends with
 * the ledger's totals exactly, delta never sends a delivered point twice, and the same for the
 * events (logs) and traces queues. Then the stop deadline and a closed ledger under an export.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Temporality } from "../../src/config/config.ts";
import { ExportPipeline, otlpExporterKey } from "../../src/export/pipeline.ts";
import { SignalPipeline } from "../../src/export/signals/pipeline.ts";
import type { BackfillProgress, Ledger } from "../../src/ledger/ledger.ts";
import { createLogger } from "../../src/util/log.ts";
import { RECENT_MS } from "../helpers/recent.ts";
import { exportTestConfig, signalsTestConfig, testResource } from "./helpers/config.ts";
import { expectClose, expectedTotals, priceOf } from "./helpers/expected.ts";
import { fillLedger, type TempLedger, tempLedger } from "./helpers/ledger.ts";
import { attrKey, CUT, type ReceivedPoint, type Receiver, startReceiver } from "./helpers/otlp-receiver.ts";

let t: TempLedger | undefined;
let rx: Receiver | undefined;
const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
  await rx?.close();
  rx = undefined;
  t?.dispose();
  t = undefined;
});

/** 24 points a request: a few sessions make an export of several requests. */
const PAGE_POINTS = 24;
const WINDOW_ROWS = 6;
const SESSIONS = 6;

/** Whether the metric series carry session.id (false: folded series, read by group key). */
let sessionIds = true;

async function metricsPipeline(temporality: Temporality, logs: string[] = []): Promise<ExportPipeline> {
  if (!t || !rx) throw new Error("setup first");
  const cfg = exportTestConfig({
    OTEL_METRICS_INCLUDE_SESSION_ID: String(sessionIds),
    OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: rx.url,
    OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE: temporality,
    // Short enough that a cut request is not retried (the SDK's first backoff is ~1 s).
    OTEL_EXPORTER_OTLP_TIMEOUT: "400",
  });
  const p = await ExportPipeline.start(cfg.export, t.ledger, {
    logger: createLogger("debug", (l) => logs.push(l)),
    priceOf,
    serviceVersion: "9.9.9",
    pagePoints: PAGE_POINTS,
    windowRows: WINDOW_ROWS,
  });
  closers.push(() => p.shutdown());
  return p;
}

/** The backend's view: cumulative keeps the latest value per series, delta sums every point. */
function backendTotals(
  points: readonly ReceivedPoint[],
  temporality: Temporality,
): Map<string, Map<string, number>> {
  const out = new Map<string, Map<string, number>>();
  for (const p of points) {
    if (p.kind !== "sum" || !p.metric.startsWith("cline.")) continue;
    let m = out.get(p.metric);
    if (m === undefined) {
      m = new Map();
      out.set(p.metric, m);
    }
    const k = attrKey(p.attributes);
    m.set(k, temporality === "delta" ? (m.get(k) ?? 0) + p.value : p.value);
  }
  return out;
}

function expectBackendHoldsLedger(temporality: Temporality): void {
  if (!t || !rx) throw new Error("setup first");
  const got = backendTotals(rx.points, temporality);
  for (const [metric, want] of expectedTotals(t.ledger, sessionIds)) {
    if (want.size === 0) continue;
    expectClose(got.get(metric) ?? new Map(), want);
  }
}

/** Requests of one export of a fresh ledger to a backend that accepts everything. */
async function requestsOfWholeExport(temporality: Temporality): Promise<number> {
  t = tempLedger();
  rx = await startReceiver();
  fillLedger(t.ledger, { sessions: SESSIONS, timestampMs: RECENT_MS });
  const p = await metricsPipeline(temporality);
  expect(await p.flush()).toEqual({ ok: true });
  const n = rx.requests.length;
  for (const c of closers.splice(0)) await c();
  await rx.close();
  rx = undefined;
  t.dispose();
  t = undefined;
  return n;
}

const VARIANTS = [
  ["cumulative", true],
  ["cumulative", false],
  ["delta", true],
  ["delta", false],
] as const;

for (const [temporality, withSessionIds] of VARIANTS) {
  const series = withSessionIds ? "series by session" : "folded series (no session.id)";
  describe(`${temporality}, ${series}: a backend that cuts request k`, () => {
    beforeEach(() => {
      sessionIds = withSessionIds;
    });
    afterEach(() => {
      sessionIds = true;
    });

    it("keeps what was acknowledged before k, for every k; the next export sends only the rest", async () => {
      const n = await requestsOfWholeExport(temporality);
      expect(n).toBeGreaterThanOrEqual(4);
      for (let k = 0; k < n; k++) {
        t = tempLedger();
        rx = await startReceiver((i) => (i >= k ? CUT : 200));
        fillLedger(t.ledger, { sessions: SESSIONS, timestampMs: RECENT_MS });
        const p = await metricsPipeline(temporality);
        const first = await p.flush();
        expect(first.ok, `k=${k}`).toBe(false);
        const acked = rx.requests.filter((r) => r.status === 200).length;
        expect(acked, `k=${k}`).toBe(k);
        rx.setStatus(() => 200);
        const before = rx.requests.length;
        expect(await p.flush(), `k=${k}`).toEqual({ ok: true });
        // Resumed after the acknowledged requests: the cut one and those after it, no more.
        expect(rx.requests.length - before, `k=${k}`).toBe(n - k);
        expectBackendHoldsLedger(temporality);
        for (const c of closers.splice(0)) await c();
        await rx.close();
        rx = undefined;
        t.dispose();
        t = undefined;
      }
    });

    it("what was acknowledged survives a restart (a new process over the same ledger)", async () => {
      const n = await requestsOfWholeExport(temporality);
      t = tempLedger();
      rx = await startReceiver((i) => (i >= 2 ? CUT : 200));
      fillLedger(t.ledger, { sessions: SESSIONS, timestampMs: RECENT_MS });
      const p = await metricsPipeline(temporality);
      expect((await p.flush()).ok).toBe(false);
      for (const c of closers.splice(0)) await c();
      t.reopen();
      rx.setStatus(() => 200);
      const before = rx.requests.length;
      const q = await metricsPipeline(temporality);
      expect(await q.flush()).toEqual({ ok: true });
      expect(rx.requests.length - before).toBe(n - 2);
      expectBackendHoldsLedger(temporality);
    });
  });
}

describe("cumulative: after the backfill", () => {
  it("an idle history is sent once: the export after the resumed pass sends nothing", async () => {
    const day = 86_400_000;
    let now = Date.parse("2026-12-01T10:00:00Z");
    t = tempLedger(() => now);
    rx = await startReceiver((i) => (i >= 2 ? CUT : 200));
    fillLedger(t.ledger, { sessions: SESSIONS, timestampMs: now - 30 * day });
    now += 1000;
    const cfg = exportTestConfig({
      OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: rx.url,
      OTEL_EXPORTER_OTLP_TIMEOUT: "400",
    });
    const p = await ExportPipeline.start(cfg.export, t.ledger, {
      logger: createLogger("error", () => {}),
      priceOf,
      serviceVersion: "9.9.9",
      pagePoints: PAGE_POINTS,
      now: () => now,
    });
    closers.push(() => p.shutdown());
    expect((await p.flush()).ok).toBe(false);
    const key = otlpExporterKey(rx.url);
    expect(t.ledger.backfills?.get(key)?.afterId).toBeGreaterThan(0);
    expect(t.ledger.getExportState(key).lastSuccessMs).toBe(0);
    rx.setStatus(() => 200);
    now += 1000;
    expect(await p.flush()).toEqual({ ok: true });
    expect(t.ledger.backfills?.get(key)).toBeUndefined();
    expectBackendHoldsLedger("cumulative");
    const delivered = rx.requests.length;
    now += 1000;
    expect(await p.flush()).toEqual({ ok: true });
    // Only cline-otel's own health counters (an SDK counter is always exported) may follow.
    expect(rx.points.filter((x) => x.request >= delivered && x.metric.startsWith("cline."))).toEqual([]);
  });
});

describe("cumulative: a pass that is not resumed starts over", () => {
  const cases: [string, (l: Ledger, key: string, saved: BackfillProgress) => void][] = [
    [
      "begun under other translate options",
      (l, _key, saved) => l.backfills?.put({ ...saved, options: '{"project":"hash"}' }),
    ],
    [
      // A delta export in between (a temporality switch) delivered up to a later time.
      "overtaken by a later delivery (the export state moved past the time it began)",
      (l, key, saved) =>
        l.putExportState({ ...l.getExportState(key), lastSuccessMs: saved.state.lastSuccessMs + 1 }),
    ],
  ];
  for (const [what, change] of cases) {
    it(`${what}: every page again, from the first`, async () => {
      const whole = await requestsOfWholeExport("cumulative");
      t = tempLedger();
      rx = await startReceiver((i) => (i >= 2 ? CUT : 200));
      fillLedger(t.ledger, { sessions: SESSIONS, timestampMs: RECENT_MS });
      const p = await metricsPipeline("cumulative");
      expect((await p.flush()).ok).toBe(false);
      const key = otlpExporterKey(rx.url);
      const saved = t.ledger.backfills?.get(key);
      if (saved === undefined) throw new Error("no progress recorded");
      change(t.ledger, key, saved);
      rx.setStatus(() => 200);
      const before = rx.requests.length;
      expect(await p.flush()).toEqual({ ok: true });
      expect(rx.requests.length - before).toBe(whole);
      expectBackendHoldsLedger("cumulative");
    });
  }
});

describe("stopping and closing under a slow backend", () => {
  it("a stop ends an export in pages after its current request; what was acknowledged is kept, nothing touches the closed ledger", async () => {
    t = tempLedger();
    rx = await startReceiver();
    rx.setDelay(150);
    fillLedger(t.ledger, { sessions: SESSIONS, timestampMs: RECENT_MS });
    const logs: string[] = [];
    const p = await metricsPipeline("cumulative", logs);
    const flushed = p.flush();
    await new Promise((r) => setTimeout(r, 400));
    p.stopWithin(0);
    const outcome = await p.shutdown();
    closers.length = 0;
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) expect(outcome.failures[0]?.reason).toMatch(/stopped before the export was complete/);
    await flushed;
    const key = otlpExporterKey(rx.url);
    const saved = t.ledger.backfills?.get(key);
    expect(saved?.delivered ?? 0).toBeGreaterThan(0);
    t.ledger.close();
    // Nothing still running could write into the closed ledger.
    await new Promise((r) => setTimeout(r, 600));
    expect(logs.join("\n")).not.toMatch(/database connection is not open/);
    t.reopen();
    expect(t.ledger.backfills?.get(key)).toEqual(saved);
  });
});

describe("events and traces: a backend that cuts batch k", () => {
  for (const signal of ["logs", "traces"] as const) {
    it(`${signal}: every record once, for every k; the next flush sends only the rest`, async () => {
      const run = async (k: number | undefined) => {
        t = tempLedger();
        rx = await startReceiver((i) => (k !== undefined && i >= k ? CUT : 200));
        fillLedger(t.ledger, { sessions: 3, timestampMs: RECENT_MS });
        const env: Record<string, string> =
          signal === "logs"
            ? {
                OTEL_LOGS_EXPORTER: "otlp",
                OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: rx.logsUrl,
                OTEL_BLRP_MAX_EXPORT_BATCH_SIZE: "4",
              }
            : {
                OTEL_TRACES_EXPORTER: "otlp",
                OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: rx.tracesUrl,
                OTEL_BSP_MAX_EXPORT_BATCH_SIZE: "4",
              };
        const cfg = signalsTestConfig({ ...env, OTEL_EXPORTER_OTLP_TIMEOUT: "400" });
        const p = await SignalPipeline.create(cfg, t.ledger, {
          logger: createLogger("error", () => {}),
          priceOf,
          project: "path",
          resource: testResource(t.ledger),
          serviceVersion: "9.9.9",
        });
        closers.push(() => p.shutdown());
        return p;
      };
      const ids = () =>
        signal === "logs"
          ? (rx?.logs ?? []).map((l) => `${l.eventName}/${JSON.stringify(l.attributes)}`)
          : (rx?.spans ?? []).map((s) => s.spanId);
      const whole = await run(undefined);
      expect(await whole.flush()).toEqual({ ok: true });
      const n = rx?.requests.length ?? 0;
      const want = ids().sort();
      expect(n).toBeGreaterThanOrEqual(3);
      for (const c of closers.splice(0)) await c();
      await rx?.close();
      t?.dispose();
      for (let k = 0; k < n; k++) {
        const p = await run(k);
        expect((await p.flush()).ok, `k=${k}`).toBe(false);
        rx?.setStatus(() => 200);
        const before = rx?.requests.length ?? 0;
        expect(await p.flush(), `k=${k}`).toEqual({ ok: true });
        expect((rx?.requests.length ?? 0) - before, `k=${k}`).toBe(n - k);
        expect(ids().sort(), `k=${k}`).toEqual(want);
        for (const c of closers.splice(0)) await c();
        await rx?.close();
        rx = undefined;
        t?.dispose();
        t = undefined;
      }
    });
  }
});
