/**
 * The real OTLP exporters (http/json and http/protobuf) against an in-process receiver:
 * what a backend receives equals the ledger, through outages, for both temporalities.
 */
import { afterEach, describe, expect, it } from "vitest";
import { ExportPipeline } from "../../src/export/pipeline.ts";
import { createLogger } from "../../src/util/log.ts";
import { event, observation } from "../helpers/events.ts";
import { exportTestConfig } from "./helpers/config.ts";
import { expectClose, expectedTotals, ledgerTokensByType, priceOf } from "./helpers/expected.ts";
import { fillLedger, type TempLedger, tempLedger } from "./helpers/ledger.ts";
import {
  cumulativeTotals,
  deltaTotals,
  type Receiver,
  startReceiver,
  sumBy,
} from "./helpers/otlp-receiver.ts";

let t: TempLedger | undefined;
let rx: Receiver | undefined;
const pipelines: ExportPipeline[] = [];
afterEach(async () => {
  for (const p of pipelines.splice(0)) await p.shutdown();
  await rx?.close();
  rx = undefined;
  t?.dispose();
  t = undefined;
});

async function start(env: Record<string, string>, logs: string[] = []) {
  if (!t || !rx) throw new Error("setup first");
  const cfg = exportTestConfig({ OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: rx.url, ...env });
  const p = await ExportPipeline.start(cfg.export, t.ledger, {
    logger: createLogger("debug", (l) => logs.push(l)),
    priceOf,
    serviceVersion: "9.9.9",
  });
  pipelines.push(p);
  return p;
}

describe.each(["http/protobuf", "http/json"] as const)("OTLP %s", (protocol) => {
  it("received totals equal the ledger, series by series, with resource and stream start", async () => {
    t = tempLedger();
    fillLedger(t.ledger, { sessions: 40 });
    rx = await startReceiver();
    const p = await start({ OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: protocol });
    expect(await p.flush()).toEqual({ ok: true });
    // One or more pages of at most 2,000 points (src/export/pages.ts), all in the configured encoding.
    expect([...new Set(rx.requests.map((r) => r.protocol))]).toEqual([
      protocol === "http/json" ? "json" : "protobuf",
    ]);
    const want = expectedTotals(t.ledger);
    for (const [name, series] of want) expectClose(cumulativeTotals(rx.points, name), series);
    // An independent check of the token totals, straight from the ledger's columns.
    const byType = sumBy(cumulativeTotals(rx.points, "cline.token.usage"), "type");
    expect(byType).toEqual(ledgerTokensByType(t.ledger));
    const ours = rx.points.filter((x) => x.scope === "cline-otel");
    expect(ours.length).toBeGreaterThan(0);
    for (const x of ours) {
      expect(x.startNs).toBe(t.ledger.streamStartNs);
      expect(x.temporality).toBe("cumulative");
      // The counters; the GenAI histograms (fillLedger's documents have signals) have no such flag.
      if (x.kind === "sum") expect(x.monotonic).toBe(true);
      expect(x.resource["service.instance.id"]).toBe(t.ledger.instanceId);
      expect(x.resource["service.name"]).toBe("cline-otel");
      expect(x.resource["service.version"]).toBe("9.9.9");
    }
    const units = Object.fromEntries(ours.map((x) => [x.metric, x.unit]));
    expect(units).toMatchObject({
      "cline.token.usage": "{token}",
      "cline.cost.usage": "USD",
      "cline.tool.calls": "{call}",
    });
    // Integers stay integers on the wire.
    expect(ours.filter((x) => x.metric === "cline.requests").every((x) => Number.isInteger(x.value))).toBe(
      true,
    );
  });

  it("a collector that is down loses nothing: the failure is reported once, the next export re-sends totals", async () => {
    t = tempLedger();
    fillLedger(t.ledger, { sessions: 5 });
    rx = await startReceiver(() => 503);
    const logs: string[] = [];
    const p = await start({ OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: protocol }, logs);
    const down1 = await p.flush();
    const down2 = await p.flush();
    expect(down1.ok).toBe(false);
    expect(down2.ok).toBe(false);
    expect(rx.points).toEqual([]);
    rx.setStatus(() => 200);
    t.ledger.commit(observation([event("late", { sessionId: "late", dedupKey: "cline|late|lead|late" })]));
    expect(await p.flush()).toEqual({ ok: true });
    for (const [name, series] of expectedTotals(t.ledger))
      expectClose(cumulativeTotals(rx.points, name), series);
    expect(logs.filter((l) => l.includes("are failing"))).toHaveLength(1);
    expect(logs.filter((l) => l.includes("recovered"))).toHaveLength(1);
  });
});

describe("OTLP delta temporality", () => {
  it("through intermittent 503s, the sum of accepted windows equals the ledger exactly", async () => {
    t = tempLedger();
    rx = await startReceiver((i) => (i % 3 === 1 ? 503 : 200));
    const p = await start({ OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE: "delta" });
    for (let round = 0; round < 6; round++) {
      fillLedger(t.ledger, { sessions: 3, offset: round * 3 });
      await p.flush();
    }
    rx.setStatus(() => 200);
    await p.flush();
    expect(rx.requests.some((r) => r.status === 503)).toBe(true);
    const ours = rx.points.filter((x) => x.scope === "cline-otel");
    expect(ours.every((x) => x.temporality === "delta")).toBe(true);
    for (const [name, series] of expectedTotals(t.ledger)) expectClose(deltaTotals(rx.points, name), series);
    // Windows chain: each accepted window starts where the previous accepted one ended.
    const windows = [...new Set(ours.map((x) => `${x.startNs}-${x.timeNs}`))].map((w) =>
      w.split("-").map(BigInt),
    );
    for (let i = 1; i < windows.length; i++) expect(windows[i]?.[0]).toBe(windows[i - 1]?.[1]);
  });
});

describe("OTLP delta backlog", () => {
  it("one flush drains a backlog larger than a window, window after window, exactly once", async () => {
    t = tempLedger();
    const filled = fillLedger(t.ledger, { sessions: 1200 });
    expect(filled.events).toBeGreaterThan(4000);
    rx = await startReceiver();
    // A window of this size can take over the file's 1.5 s request timeout on 2 loaded cores; this
    // test is about windows, not timeouts.
    const p = await start({
      OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE: "delta",
      OTEL_EXPORTER_OTLP_TIMEOUT: "20000",
    });
    expect(await p.flush()).toEqual({ ok: true });
    expect(rx.requests.length).toBeGreaterThanOrEqual(3);
    for (const [name, series] of expectedTotals(t.ledger)) expectClose(deltaTotals(rx.points, name), series);
  });
});

describe("OTLP headers", () => {
  it("are sent, and never appear in logs or failure reasons", async () => {
    t = tempLedger();
    t.ledger.commit(observation([event("a")]));
    rx = await startReceiver(() => 401);
    const logs: string[] = [];
    const p = await start(
      { OTEL_EXPORTER_OTLP_HEADERS: "authorization=Bearer SECRET-xyz,x-tenant=t1" },
      logs,
    );
    const out = await p.flush();
    expect(rx.requests[0]?.headers.authorization).toBe("Bearer SECRET-xyz");
    expect(out.ok).toBe(false);
    expect(JSON.stringify(out)).toContain("401");
    expect(JSON.stringify(out)).not.toContain("SECRET");
    expect(logs.join("\n")).not.toContain("SECRET");
    expect(logs.join("\n")).toContain(rx.url);
  });
});
