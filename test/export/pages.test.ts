/**
 * A cumulative export read in pages (src/export/pages.ts), through the real SDK reader and the
 * CommittingExporter: the same totals as one whole collection, every series once, each request
 * within the page size, each acknowledged page kept (the next export resumes after it), the export
 * state committed once the last page is delivered, and ingestion free to commit between two pages.
 */
import type { ResourceMetrics } from "@opentelemetry/sdk-metrics";
import { afterEach, describe, expect, it } from "vitest";
import { POINTS_PER_ROW } from "../../src/export/pages.ts";
import { event, observation } from "../helpers/events.ts";
import { leadDoc, messagesDoc, observe } from "../helpers/signal-docs.ts";
import { delivered } from "./helpers/delivered.ts";
import { fillLedger, type TempLedger, tempLedger } from "./helpers/ledger.ts";
import { type Harness, harness } from "./helpers/sdk.ts";

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

const PAGE = 4 * POINTS_PER_ROW;

/** Sessions read from real documents (scanner + parser): they carry GenAI histogram series too. */
function documentSessions(ledger: TempLedger["ledger"], n: number): void {
  const { doc } = leadDoc();
  for (let i = 0; i < n; i++) {
    const sid = `17960182${String(i).padStart(5, "0")}_pages`;
    ledger.commit(observe(messagesDoc(doc.messages, "lead", sid), `/s/${sid}/${sid}.messages.json`));
  }
}

const pointsIn = (b: ResourceMetrics): number =>
  b.scopeMetrics.flatMap((s) => s.metrics).reduce((x, m) => x + m.dataPoints.length, 0);

describe("cumulative export in pages", () => {
  it("delivers exactly the totals of one whole collection, each series once, in requests within the page", async () => {
    t = tempLedger();
    fillLedger(t.ledger, { sessions: 40 });
    documentSessions(t.ledger, 15);
    expect(t.ledger.signals?.genaiSeries().length ?? 0).toBeGreaterThan(0);
    const whole = track(harness(t.ledger, { exporter: "whole" }));
    const paged = track(
      harness(t.ledger, { exporter: "paged", pagePoints: PAGE, maxPointsPerRequest: PAGE }),
    );
    await whole.flush();
    await paged.flush();
    const want = delivered(whole.scripted.memory.getMetrics());
    const got = delivered(paged.scripted.memory.getMetrics());
    expect(whole.scripted.calls).toBe(1);
    expect(got.dups).toBe(0);
    expect(got.byMetric).toEqual(want.byMetric);
    // Usage, tool and GenAI series are all paged.
    const total = [...want.byMetric.values()].reduce((x, s) => x + s.size, 0);
    expect(paged.scripted.calls).toBeGreaterThanOrEqual(Math.ceil(total / PAGE));
    for (const b of paged.scripted.memory.getMetrics()) expect(pointsIn(b)).toBeLessThanOrEqual(PAGE);
    expect(t.ledger.getExportState("paged").lastSuccessMs).toBeGreaterThan(0);
  });

  it("a request failing mid-batch keeps the pages acknowledged before it; the next export resumes after them, then commits", async () => {
    t = tempLedger();
    fillLedger(t.ledger, { sessions: 20 });
    documentSessions(t.ledger, 5);
    const h = track(harness(t.ledger, { exporter: "paged", pagePoints: PAGE }));
    h.scripted.failAt = 2;
    await h.flush();
    expect(h.scripted.calls).toBe(3); // the failure ended the batch
    expect(t.ledger.getExportState("paged").lastSuccessMs).toBe(0);
    expect(t.ledger.backfills?.get("paged")?.delivered).toBe((2 * PAGE) / POINTS_PER_ROW);
    expect(h.exporter.outcomeSince(0).ok).toBe(false);
    const acked = h.scripted.memory.getMetrics().slice();
    await h.flush();
    const again = h.scripted.memory.getMetrics().slice(acked.length);
    const whole = track(harness(t.ledger, { exporter: "whole" }));
    await whole.flush();
    const want = delivered(whole.scripted.memory.getMetrics()).byMetric;
    // The two acknowledged requests are not sent again; with them, every series exactly once.
    expect(delivered(again).dups).toBe(0);
    const both = delivered([...acked, ...again]);
    expect(both.dups).toBe(0);
    expect(both.byMetric).toEqual(want);
    expect(t.ledger.getExportState("paged").lastSuccessMs).toBeGreaterThan(0);
    expect(t.ledger.backfills?.get("paged")).toBeUndefined();
  });

  it("ingestion may commit between two pages: the export succeeds and the change is in the next one", async () => {
    let now = Date.parse("2026-12-01T10:00:00Z");
    t = tempLedger(() => now);
    fillLedger(t.ledger, { sessions: 20 });
    const h = track(harness(t.ledger, { exporter: "paged", pagePoints: PAGE, now: () => now }));
    const inner = h.scripted.export.bind(h.scripted);
    let wrote = false;
    h.scripted.export = (metrics, cb) => {
      if (!wrote) {
        wrote = true;
        now += 1000;
        // A series updated after the read started, while the batch is half sent.
        t?.ledger.commit(
          observation([event("late", { sessionId: "late", dedupKey: "cline|late|lead|late", input: 7 })]),
        );
      }
      inner(metrics, cb);
    };
    await h.flush();
    expect(h.exporter.outcomeSince(0).ok).toBe(true);
    expect(h.scripted.calls).toBeGreaterThan(2);
    now += 1000;
    await h.flush();
    const late = h
      .lastPoints("cline.token.usage")
      .filter((p) => p.attributes["session.id"] === "late" && p.attributes.type === "input");
    expect(late.map((p) => p.value)).toEqual([7]);
  });

  it("reads nothing past the TTL once delivered: an idle history sends no request", async () => {
    let now = Date.parse("2026-12-01T10:00:00Z");
    t = tempLedger(() => now);
    fillLedger(t.ledger, { sessions: 10, timestampMs: now - 30 * 86_400_000 });
    now += 1000; // the export reads after the ingestion (a change in the same ms counts as undelivered)
    const h = track(harness(t.ledger, { exporter: "paged", pagePoints: PAGE, now: () => now }));
    await h.flush();
    const first = h.scripted.calls;
    expect(first).toBeGreaterThan(1);
    now += 60_000;
    await h.flush();
    expect(h.scripted.calls).toBe(first);
    expect(h.exporter.outcomeSince(0).ok).toBe(true);
  });
});
