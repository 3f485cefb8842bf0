import { afterEach, describe, expect, it } from "vitest";
import { call, event, finalObservation, observation } from "../helpers/events.ts";
import { commitCaptures, fillLedger, requestCapture, type TempLedger, tempLedger } from "./helpers/ledger.ts";
import { type Harness, harness, hrToNs, sumValues } from "./helpers/sdk.ts";

let t: TempLedger | undefined;
const open: Harness[] = [];
afterEach(async () => {
  for (const h of open.splice(0)) await h.shutdown();
  t?.dispose();
  t = undefined;
});
const track = (h: Harness): Harness => {
  open.push(h);
  return h;
};

const TOKENS = "cline.token.usage";
const inputOf = (pts: { attributes: Record<string, unknown>; value: number }[]) =>
  sumValues(pts.filter((p) => p.attributes.type === "input") as never);

function ledgerInput(l: TempLedger["ledger"]): number {
  return l.usageSeries().reduce((x, r) => x + r.input, 0);
}

describe("LedgerMetricProducer, cumulative (real SDK reader + exporter)", () => {
  it("exports the ledger's series totals with the persisted stream start", async () => {
    t = tempLedger();
    fillLedger(t.ledger, { sessions: 5 });
    const h = track(harness(t.ledger));
    await h.flush();
    const pts = h.lastPoints(TOKENS);
    expect(pts).toHaveLength(t.ledger.usageSeries().length * 4);
    expect(inputOf(pts as never)).toBe(ledgerInput(t.ledger));
    for (const p of pts) expect(hrToNs(p.startTime)).toBe(t.ledger.streamStartNs);
    expect(sumValues(h.lastPoints("cline.requests"))).toBe(t.ledger.counts().events);
    expect(sumValues(h.lastPoints("cline.tool.calls"))).toBe(t.ledger.counts().calls);
  });

  it("a re-export re-sends the same totals; new events grow them; start time never moves", async () => {
    t = tempLedger();
    fillLedger(t.ledger, { sessions: 3 });
    const h = track(harness(t.ledger));
    await h.flush();
    const first = inputOf(h.lastPoints(TOKENS) as never);
    await h.flush();
    expect(inputOf(h.lastPoints(TOKENS) as never)).toBe(first);
    t.ledger.commit(
      observation([event("extra", { sessionId: "new", dedupKey: "cline|new|lead|x", input: 7 })]),
    );
    await h.flush();
    expect(inputOf(h.lastPoints(TOKENS) as never)).toBe(first + 7);
    const starts = new Set(h.allPoints(TOKENS).map((p) => hrToNs(p.startTime)));
    expect([...starts]).toEqual([t.ledger.streamStartNs]);
  });

  it("a restart (new process, same ledger) continues the same streams with the same totals", async () => {
    t = tempLedger();
    fillLedger(t.ledger, { sessions: 4 });
    const before = track(harness(t.ledger));
    await before.flush();
    const a = before.lastPoints(TOKENS);
    await before.shutdown();
    open.splice(open.indexOf(before), 1);
    const l2 = t.reopen();
    const after = track(harness(l2));
    await after.flush();
    const b = after.lastPoints(TOKENS);
    const view = (pts: typeof a) =>
      pts.map((p) => [JSON.stringify(p.attributes), p.value, hrToNs(p.startTime).toString()]).sort();
    expect(view(b)).toEqual(view(a));
  });

  it("is not bound by the SDK's 2000-series cardinality limit (no overflow series)", async () => {
    t = tempLedger();
    fillLedger(t.ledger, { sessions: 700, eventsPerSession: 2 });
    const h = track(harness(t.ledger));
    await h.flush();
    const pts = h.lastPoints(TOKENS);
    expect(pts.length).toBe(t.ledger.usageSeries().length * 4);
    expect(pts.length).toBeGreaterThan(2000);
    for (const p of pts) expect(p.attributes).not.toHaveProperty("otel.metric.overflow");
    expect(inputOf(pts as never)).toBe(ledgerInput(t.ledger));
  });
});

describe("series TTL (cumulative)", () => {
  const TTL = 1000;
  function setup() {
    let clock = 1_000_000;
    const now = () => clock;
    t = tempLedger(now);
    const h = track(harness(t.ledger, { ttlMs: TTL, now }));
    return {
      h,
      ledger: t.ledger,
      now,
      at(ms: number) {
        clock = ms;
      },
    };
  }
  const sessionsOf = (h: Harness) =>
    [...new Set(h.lastPoints("cline.requests").map((p) => String(p.attributes["session.id"])))].sort();
  /** An event of `session` that happened at `tsMs`, with one tool call. */
  const commit = (l: TempLedger["ledger"], session: string, id: string, tsMs: number) => {
    const e = event(id, { sessionId: session, dedupKey: `cline|${session}|lead|${id}`, timestampMs: tsMs });
    return l.commit(
      finalObservation(
        [e],
        [
          call(`c_${id}`, e.dedupKey, 1, {
            callKey: `cline|${session}|lead|c_${id}`,
            sessionId: session,
            timestampMs: tsMs,
          }),
        ],
      ),
    );
  };

  it("drops an idle series only after it was delivered, and resumes it with the same start time", async () => {
    const { h, ledger, at, now } = setup();
    commit(ledger, "old", "a", now());
    at(1_000_010);
    await h.flush(); // delivers "old"
    at(1_000_000 + TTL + 500);
    commit(ledger, "fresh", "b", now());
    at(1_000_000 + TTL + 600);
    await h.flush();
    expect(sessionsOf(h)).toEqual(["fresh"]);
    // "old" changes again: it is back, with its full total and the same stream start.
    at(1_000_000 + TTL + 700);
    commit(ledger, "old", "c", now());
    at(1_000_000 + TTL + 800);
    await h.flush();
    expect(sessionsOf(h)).toEqual(["fresh", "old"]);
    const old = h.lastPoints("cline.requests").find((p) => p.attributes["session.id"] === "old");
    expect(old?.value).toBe(2);
    expect(hrToNs(old?.startTime ?? [0, 0])).toBe(ledger.streamStartNs);
  });

  it("keeps an idle series that was never delivered since its last update", async () => {
    const { h, ledger, at, now } = setup();
    commit(ledger, "old", "a", now());
    h.scripted.fail = true;
    at(1_000_010);
    await h.flush(); // not delivered
    h.scripted.fail = false;
    at(1_000_000 + TTL + 500);
    commit(ledger, "fresh", "b", now());
    at(1_000_000 + TTL + 600);
    await h.flush();
    expect(sessionsOf(h)).toEqual(["fresh", "old"]);
  });

  const CAPTURES = "cline.request.captures";
  const sessionsIn = (h: Harness, metric: string) =>
    [...new Set(h.lastPoints(metric).map((p) => String(p.attributes["session.id"])))].sort();
  const totalOf = (h: Harness, metric: string, session: string) =>
    sumValues(h.lastPoints(metric).filter((p) => p.attributes["session.id"] === session));

  it("a backfill of old history is delivered once, then drops out, also after a restart", async () => {
    const { h, ledger, at, now } = setup();
    const T0 = 1_000_000 + 50 * TTL;
    at(T0);
    const old = T0 - 5 * TTL;
    commit(ledger, "h1", "a", old);
    commit(ledger, "h2", "b", old);
    commitCaptures(ledger, "/caps/h1", [requestCapture("cap_h1", { sessionId: "h1", timestampMs: old })]);
    at(T0 + 10);
    await h.flush(); // the first export after the backfill: everything is new to the backend
    expect(sessionsOf(h)).toEqual(["h1", "h2"]);
    expect(sessionsIn(h, "cline.tool.calls")).toEqual(["h1", "h2"]);
    expect(sessionsIn(h, CAPTURES)).toEqual(["h1"]);
    at(T0 + 20);
    await h.flush(); // nothing new, nothing within the TTL: nothing is re-sent
    expect(h.scripted.memory.getMetrics().flatMap((b) => b.scopeMetrics)).toHaveLength(1);
    expect(sessionsOf(h)).toEqual([]);
    expect(sessionsIn(h, "cline.tool.calls")).toEqual([]);
    expect(sessionsIn(h, CAPTURES)).toEqual([]);
    // A restart (new process, same ledger): still delivered, still nothing to send.
    await h.shutdown();
    open.splice(open.indexOf(h), 1);
    const l2 = (t as TempLedger).reopen();
    const h2 = track(harness(l2, { ttlMs: TTL, now }));
    at(T0 + 30);
    await h2.flush();
    expect(h2.scripted.memory.getMetrics().flatMap((b) => b.scopeMetrics)).toEqual([]);
  });

  it("a new event in an old series brings it back with its full total and the same start time", async () => {
    const { h, ledger, at, now } = setup();
    const T0 = 1_000_000 + 50 * TTL;
    at(T0);
    const old = T0 - 5 * TTL;
    commit(ledger, "h1", "a", old);
    commit(ledger, "h2", "b", old);
    commitCaptures(ledger, "/caps/1", [requestCapture("cap_1", { sessionId: "h1", timestampMs: old })]);
    at(T0 + 10);
    await h.flush();
    at(T0 + 20);
    await h.flush();
    expect(sessionsOf(h)).toEqual([]);
    at(T0 + 30);
    commit(ledger, "h1", "c", now()); // h1 is active again
    commit(ledger, "h2", "d", old - 1); // h2: one more OLD event (a document read late)
    commitCaptures(ledger, "/caps/2", [requestCapture("cap_2", { sessionId: "h1", timestampMs: now() })]);
    at(T0 + 40);
    await h.flush();
    expect(sessionsOf(h)).toEqual(["h1", "h2"]);
    expect(totalOf(h, "cline.requests", "h1")).toBe(2);
    expect(totalOf(h, "cline.requests", "h2")).toBe(2);
    expect(totalOf(h, "cline.tool.calls", "h1")).toBe(2);
    expect(totalOf(h, CAPTURES, "h1")).toBe(2);
    for (const p of [...h.lastPoints("cline.requests"), ...h.lastPoints(CAPTURES)])
      expect(hrToNs(p.startTime)).toBe(ledger.streamStartNs);
    at(T0 + 50);
    await h.flush(); // h2's late old event was delivered and is old: it drops out again; h1 stays
    expect(sessionsOf(h)).toEqual(["h1"]);
    expect(sessionsIn(h, CAPTURES)).toEqual(["h1"]);
    // Once h1's newest event is older than the TTL, it drops out too.
    at(T0 + 30 + TTL + 1);
    await h.flush();
    expect(sessionsOf(h)).toEqual([]);
  });
});

describe("delta temporality: watermark per exporter, advanced only by a successful export", () => {
  it("each export carries only new events; failures carry into the next; nothing lost or doubled", async () => {
    t = tempLedger();
    const l = t.ledger;
    const h = track(harness(l, { temporality: "delta" }));
    const add = (id: string, input: number) =>
      l.commit(observation([event(id, { dedupKey: `cline|s1|lead|${id}`, input })]));

    add("a", 10);
    await h.flush();
    const w1 = h.lastPoints(TOKENS);
    expect(inputOf(w1 as never)).toBe(10);
    expect(hrToNs(w1[0]?.startTime ?? [0, 0])).toBe(l.streamStartNs);
    const end1 = hrToNs(w1[0]?.endTime ?? [0, 0]);
    expect(l.getExportState("memory").eventWatermark).toBe(1);

    add("b", 20);
    h.scripted.fail = true;
    await h.flush(); // the collector is down: nothing committed
    expect(l.getExportState("memory").eventWatermark).toBe(1);
    add("c", 40);
    await h.flush();
    h.scripted.fail = false;
    await h.flush(); // carries b and c together
    const w2 = h.lastPoints(TOKENS);
    expect(inputOf(w2 as never)).toBe(60);
    expect(hrToNs(w2[0]?.startTime ?? [0, 0])).toBe(end1);
    expect(l.getExportState("memory").eventWatermark).toBe(3);

    await h.flush(); // nothing new: no window to export
    // Delivered batches: w1 and w2 (failed exports store nothing).
    expect(h.scripted.memory.getMetrics().length).toBe(2);
    const delivered = inputOf(h.allPoints(TOKENS) as never);
    expect(delivered).toBe(70);
    expect(h.allPoints(TOKENS).every((p) => p.value >= 0)).toBe(true);
  });

  it("a restart continues from the committed watermark", async () => {
    t = tempLedger();
    const h1 = track(harness(t.ledger, { temporality: "delta" }));
    t.ledger.commit(observation([event("a", { input: 5 })]));
    await h1.flush();
    await h1.shutdown();
    open.splice(open.indexOf(h1), 1);
    const l2 = t.reopen();
    l2.commit(observation([event("b", { dedupKey: "cline|s1|lead|b", input: 7 })]));
    const h2 = track(harness(l2, { temporality: "delta" }));
    await h2.flush();
    expect(inputOf(h2.lastPoints(TOKENS) as never)).toBe(7);
  });

  it("reads no new window while an export is still in flight", async () => {
    t = tempLedger();
    const h = track(harness(t.ledger, { temporality: "delta" }));
    t.ledger.commit(observation([event("a")]));
    h.tracker.begin();
    const r = await h.producer.collect();
    expect(r.resourceMetrics.scopeMetrics).toEqual([]);
    h.tracker.end();
    const r2 = await h.producer.collect();
    expect(r2.resourceMetrics.scopeMetrics).toHaveLength(1);
  });
});

describe("capture metrics (cline.request.*) through the producer", () => {
  const CAPTURES = "cline.request.captures";
  const PAYLOAD = "cline.request.payload.size";
  type Hist = { sum: number; count: number };
  const hist = (pts: { value: unknown }[]) =>
    pts.reduce((a, p) => ({ sum: a.sum + (p.value as Hist).sum, count: a.count + (p.value as Hist).count }), {
      sum: 0,
      count: 0,
    });
  /** n captures of session s1, payload 1000 * (i + 1) bytes each. */
  const addCaptures = (l: TempLedger["ledger"], from: number, n: number) =>
    commitCaptures(
      l,
      `/caps/${from}`,
      Array.from({ length: n }, (_, k) =>
        requestCapture(`cap_${from + k}`, { payloadBytes: 1000 * (from + k + 1) }),
      ),
    );
  const payloadTotal = (n: number) =>
    Array.from({ length: n }, (_, i) => 1000 * (i + 1)).reduce((a, b) => a + b, 0);

  it("cumulative: the capture totals with the ledger's stream start, next to the usage metrics", async () => {
    t = tempLedger();
    fillLedger(t.ledger, { sessions: 2 });
    addCaptures(t.ledger, 0, 5);
    const h = track(harness(t.ledger));
    await h.flush();
    expect(sumValues(h.lastPoints(CAPTURES))).toBe(5);
    expect(hist(h.lastPoints(PAYLOAD))).toEqual({ sum: payloadTotal(5), count: 5 });
    for (const p of h.lastPoints(PAYLOAD)) expect(hrToNs(p.startTime)).toBe(t.ledger.streamStartNs);
    expect(sumValues(h.lastPoints("cline.requests"))).toBe(t.ledger.counts().events);
    // Cumulative exports advance the capture watermark too (a switch to delta continues after them).
    expect(t.ledger.getExportState("memory").captureWatermark).toBe(5);
  });

  it("cumulative: splits into bounded requests like the usage metrics, histograms included", async () => {
    t = tempLedger();
    for (let s = 0; s < 30; s++)
      commitCaptures(t.ledger, `/caps/s${s}`, [
        requestCapture(`c${s}`, { sessionId: `s${s}`, payloadBytes: 5000 }),
      ]);
    const h = track(harness(t.ledger, { maxPointsPerRequest: 20 }));
    await h.flush();
    // 30 series x (2 histograms + captures + retries + 3 roles + tool results + reasoning blocks) = 270 points.
    expect(h.scripted.calls).toBe(Math.ceil(270 / 20));
    expect(hist(h.lastPoints(PAYLOAD))).toEqual({ sum: 150_000, count: 30 });
  });

  it("delta: bounded windows drain the backlog; a failed export commits nothing; nothing doubles", async () => {
    t = tempLedger();
    const l = t.ledger;
    const h = track(harness(l, { temporality: "delta", maxWindowCaptures: 3 }));
    addCaptures(l, 0, 7);
    await h.flush(); // captures 1-3
    expect(l.getExportState("memory").captureWatermark).toBe(3);
    expect(hist(h.lastPoints(PAYLOAD)).count).toBe(3);
    h.scripted.fail = true;
    await h.flush(); // 4-6 not delivered: the watermark stays
    expect(l.getExportState("memory").captureWatermark).toBe(3);
    expect(h.producer.backlog()).toBe(true);
    h.scripted.fail = false;
    await h.flush(); // 4-6 again
    await h.flush(); // 7
    expect(l.getExportState("memory").captureWatermark).toBe(7);
    expect(h.producer.backlog()).toBe(false);
    await h.flush(); // nothing new: no window
    const all = h.allPoints(PAYLOAD);
    expect(hist(all)).toEqual({ sum: payloadTotal(7), count: 7 });
    expect(sumValues(h.allPoints(CAPTURES))).toBe(7);
    for (const p of all) expect(p.value).toMatchObject({ min: expect.any(Number), max: expect.any(Number) });
  });

  it("delta: a restart continues from the committed capture watermark", async () => {
    t = tempLedger();
    const h1 = track(harness(t.ledger, { temporality: "delta" }));
    addCaptures(t.ledger, 0, 2);
    await h1.flush();
    await h1.shutdown();
    open.splice(open.indexOf(h1), 1);
    const l2 = t.reopen();
    addCaptures(l2, 2, 1);
    const h2 = track(harness(l2, { temporality: "delta" }));
    await h2.flush();
    expect(hist(h2.lastPoints(PAYLOAD))).toEqual({ sum: 3000, count: 1 });
  });
});

describe("collection errors", () => {
  it("a ledger that cannot be read is reported as a collection error, not a crash", async () => {
    t = tempLedger();
    const h = track(harness(t.ledger));
    t.ledger.close();
    const r = await h.producer.collect();
    expect(r.errors).toHaveLength(1);
    expect(r.resourceMetrics.scopeMetrics).toEqual([]);
    expect(h.producer.failedSince(0)).toBe(true);
  });
});
