import { afterEach, describe, expect, it } from "vitest";
import { event, observation } from "../helpers/events.ts";
import { fillLedger, type TempLedger, tempLedger } from "./helpers/ledger.ts";
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
      at(ms: number) {
        clock = ms;
      },
    };
  }
  const sessionsOf = (h: Harness) =>
    [...new Set(h.lastPoints("cline.requests").map((p) => String(p.attributes["session.id"])))].sort();
  const commit = (l: TempLedger["ledger"], session: string, id: string) =>
    l.commit(observation([event(id, { sessionId: session, dedupKey: `cline|${session}|lead|${id}` })]));

  it("drops an idle series only after it was delivered, and resumes it with the same start time", async () => {
    const { h, ledger, at } = setup();
    commit(ledger, "old", "a");
    at(1_000_010);
    await h.flush(); // delivers "old"
    at(1_000_000 + TTL + 500);
    commit(ledger, "fresh", "b");
    at(1_000_000 + TTL + 600);
    await h.flush();
    expect(sessionsOf(h)).toEqual(["fresh"]);
    // "old" changes again: it is back, with its full total and the same stream start.
    at(1_000_000 + TTL + 700);
    commit(ledger, "old", "c");
    at(1_000_000 + TTL + 800);
    await h.flush();
    expect(sessionsOf(h)).toEqual(["fresh", "old"]);
    const old = h.lastPoints("cline.requests").find((p) => p.attributes["session.id"] === "old");
    expect(old?.value).toBe(2);
    expect(hrToNs(old?.startTime ?? [0, 0])).toBe(ledger.streamStartNs);
  });

  it("keeps an idle series that was never delivered since its last update", async () => {
    const { h, ledger, at } = setup();
    commit(ledger, "old", "a");
    h.scripted.fail = true;
    at(1_000_010);
    await h.flush(); // not delivered
    h.scripted.fail = false;
    at(1_000_000 + TTL + 500);
    commit(ledger, "fresh", "b");
    at(1_000_000 + TTL + 600);
    await h.flush();
    expect(sessionsOf(h)).toEqual(["fresh", "old"]);
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
