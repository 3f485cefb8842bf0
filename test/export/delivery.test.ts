import { ValueType } from "@opentelemetry/api";
import { AggregationTemporality, DataPointType, type ResourceMetrics } from "@opentelemetry/sdk-metrics";
import { afterEach, describe, expect, it } from "vitest";
import {
  commitDelivery,
  describeExportError,
  healthTransition,
  splitByPoints,
} from "../../src/export/delivery.ts";
import { buildResource } from "../../src/export/resource.ts";
import { event, observation } from "../helpers/events.ts";
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

describe("healthTransition (log once)", () => {
  it.each([
    [false, true, false, undefined],
    [false, false, true, "failing"],
    [true, false, true, undefined],
    [true, true, false, "recovered"],
  ] as const)("failing=%s, ok=%s -> failing=%s, event=%s", (failing, ok, next, ev) => {
    expect(healthTransition(failing, ok)).toEqual({ failing: next, event: ev });
  });
});

/** The shape of the SDK's OTLPExporterError: message = HTTP status text, code, response body. */
const httpError = (message: string, code: number, data: string) =>
  Object.assign(new Error(message), { code, data });

describe("describeExportError", () => {
  it.each([
    [httpError("Unauthorized", 401, "bad key"), "HTTP 401 Unauthorized"],
    [new Error("connect ECONNREFUSED 127.0.0.1:4318"), "connect ECONNREFUSED 127.0.0.1:4318"],
    [
      new Error("Export failed with retryable status"),
      "the endpoint kept answering 429/502/503/504 (retried within the export timeout)",
    ],
    [undefined, "unknown error"],
  ])("%s -> %s", (e, text) => {
    expect(describeExportError(e)).toBe(text);
  });

  it("never includes the response body (which could echo a header)", () => {
    const e = httpError("Forbidden", 403, "api-key=SECRET-123 rejected");
    expect(describeExportError(e)).not.toContain("SECRET");
  });
});

describe("commitDelivery", () => {
  it("delta: compare-and-set on the watermark the collection started from", () => {
    t = tempLedger();
    const l = t.ledger;
    const base = l.getExportState("x");
    const next = { ...base, eventWatermark: 5, callWatermark: 2, windowStartNs: 99n, lastSuccessMs: 10 };
    expect(commitDelivery(l, { base, next }, "delta")).toBe("committed");
    expect(l.getExportState("x")).toMatchObject({ eventWatermark: 5, callWatermark: 2, windowStartNs: 99n });
    // A second delivery read from the old base overlapped the committed window: refused.
    expect(commitDelivery(l, { base, next: { ...next, eventWatermark: 7 } }, "delta")).toBe("stale");
    expect(l.getExportState("x").eventWatermark).toBe(5);
  });

  it("cumulative: state only moves forward", () => {
    t = tempLedger();
    const l = t.ledger;
    const base = l.getExportState("y");
    commitDelivery(l, { base, next: { ...base, eventWatermark: 9, lastSuccessMs: 50 } }, "cumulative");
    commitDelivery(l, { base, next: { ...base, eventWatermark: 3, lastSuccessMs: 20 } }, "cumulative");
    expect(l.getExportState("y")).toMatchObject({ eventWatermark: 9, lastSuccessMs: 50 });
  });

  it("delta: the capture watermark is part of the compare-and-set and commits with the others", () => {
    t = tempLedger();
    const l = t.ledger;
    const base = l.getExportState("x");
    const next = { ...base, eventWatermark: 5, captureWatermark: 4, lastSuccessMs: 10 };
    expect(commitDelivery(l, { base, next }, "delta")).toBe("committed");
    expect(l.getExportState("x").captureWatermark).toBe(4);
    expect(l.getExportState("x").eventWatermark).toBe(5);
    // Read from an older capture watermark (events unchanged since): an overlapping window, refused.
    const b2 = l.getExportState("x");
    expect(
      commitDelivery(
        l,
        { base: { ...b2, captureWatermark: 0 }, next: { ...b2, eventWatermark: 6, captureWatermark: 9 } },
        "delta",
      ),
    ).toBe("stale");
    expect(l.getExportState("x").captureWatermark).toBe(4);
    expect(l.getExportState("x").eventWatermark).toBe(5);
  });

  it("cumulative: the capture watermark only moves forward", () => {
    t = tempLedger();
    const l = t.ledger;
    const base = l.getExportState("y");
    commitDelivery(l, { base, next: { ...base, captureWatermark: 8 } }, "cumulative");
    commitDelivery(l, { base, next: { ...base, captureWatermark: 3 } }, "cumulative");
    expect(l.getExportState("y").captureWatermark).toBe(8);
  });

  it("all watermarks are one export-state row: one write per delivery, all of them or none", () => {
    t = tempLedger();
    const l = t.ledger;
    const base = l.getExportState("x");
    const put = l.putExportState.bind(l);
    const writes: unknown[] = [];
    l.putExportState = (s) => {
      writes.push(s);
      put(s);
    };
    const next = { ...base, eventWatermark: 5, callWatermark: 2, captureWatermark: 4 };
    expect(commitDelivery(l, { base, next }, "delta")).toBe("committed");
    expect(writes).toHaveLength(1);
    expect(l.getExportState("x")).toMatchObject({ eventWatermark: 5, callWatermark: 2, captureWatermark: 4 });
    l.putExportState = () => {
      throw new Error("disk full");
    };
    const b2 = l.getExportState("x");
    expect(() =>
      commitDelivery(l, { base: b2, next: { ...b2, eventWatermark: 9, captureWatermark: 9 } }, "delta"),
    ).toThrow("disk full");
    expect(l.getExportState("x")).toMatchObject({ eventWatermark: 5, captureWatermark: 4 });
  });
});

describe("CommittingExporter", () => {
  it("logs once when exports start failing and once when they recover, not every tick", async () => {
    t = tempLedger();
    t.ledger.commit(observation([event("a")]));
    h = harness(t.ledger);
    h.scripted.fail = true;
    for (let i = 0; i < 5; i++) await h.flush();
    h.scripted.fail = false;
    for (let i = 0; i < 3; i++) await h.flush();
    h.scripted.fail = true;
    await h.flush();
    const warn = h.logs.filter((l) => l.includes("warn") && l.includes("failing"));
    const info = h.logs.filter((l) => l.includes("recovered"));
    expect(warn).toHaveLength(2);
    expect(info).toHaveLength(1);
    expect(warn[0]).toContain("memory");
    expect(warn[0]).toContain("Service Unavailable");
  });

  it("commits only what a successful export carried", async () => {
    t = tempLedger();
    t.ledger.commit(observation([event("a")]));
    h = harness(t.ledger);
    h.scripted.fail = true;
    await h.flush();
    expect(t.ledger.getExportState("memory").lastSuccessMs).toBe(0);
    expect(t.ledger.getExportState("memory").eventWatermark).toBe(0);
    h.scripted.fail = false;
    await h.flush();
    expect(t.ledger.getExportState("memory").lastSuccessMs).toBeGreaterThan(0);
    expect(t.ledger.getExportState("memory").eventWatermark).toBe(1);
  });

  it("outcomeSince judges the exports after a mark; nothing attempted is ok; sealed sends nothing", async () => {
    t = tempLedger();
    t.ledger.commit(observation([event("a")]));
    h = harness(t.ledger);
    let m = h.exporter.mark();
    expect(h.exporter.outcomeSince(m)).toEqual({ ok: true });
    h.scripted.fail = true;
    await h.flush();
    expect(h.exporter.outcomeSince(m)).toEqual({ ok: false, reason: "Service Unavailable" });
    h.scripted.fail = false;
    await h.flush();
    expect(h.exporter.outcomeSince(m)).toEqual({ ok: true });
    m = h.exporter.mark();
    h.exporter.seal();
    await h.flush();
    expect(h.scripted.memory.getMetrics()).toHaveLength(1);
  });
});

describe("buildResource", () => {
  const cfg = { serviceName: "cline-otel", resourceAttributes: {} };
  it("carries the ledger's instance id, version and host", () => {
    const r = buildResource(cfg, "inst-1", "1.2.3", "box").attributes;
    expect(r).toMatchObject({
      "service.name": "cline-otel",
      "service.version": "1.2.3",
      "host.name": "box",
      "service.instance.id": "inst-1",
    });
    expect(r["telemetry.sdk.language"]).toBe("nodejs");
  });

  it("OTEL_RESOURCE_ATTRIBUTES adds and overrides; OTEL_SERVICE_NAME wins for service.name", () => {
    const r = buildResource(
      {
        serviceName: "mine",
        resourceAttributes: { "service.name": "theirs", "deployment.environment": "dev" },
      },
      "i",
      "1",
      "h",
    ).attributes;
    expect(r["service.name"]).toBe("mine");
    expect(r["deployment.environment"]).toBe("dev");
    const r2 = buildResource(
      { ...cfg, resourceAttributes: { "service.name": "theirs" } },
      "i",
      "1",
      "h",
    ).attributes;
    expect(r2["service.name"]).toBe("theirs");
  });
});

describe("splitByPoints", () => {
  const resource = buildResource({ serviceName: "x", resourceAttributes: {} }, "i", "1", "h");
  const metric = (name: string, n: number) => ({
    descriptor: { name, description: "", unit: "", valueType: ValueType.INT },
    aggregationTemporality: AggregationTemporality.CUMULATIVE,
    dataPointType: DataPointType.SUM as const,
    isMonotonic: true,
    dataPoints: Array.from({ length: n }, (_, i) => ({
      startTime: [0, 0] as [number, number],
      endTime: [1, 0] as [number, number],
      attributes: { i: String(i) },
      value: i,
    })),
  });
  const rm = (...scopes: [string, number[]][]): ResourceMetrics => ({
    resource,
    scopeMetrics: scopes.map(([scope, sizes]) => ({
      scope: { name: scope },
      metrics: sizes.map((n, k) => metric(`${scope}.m${k}`, n)),
    })),
  });
  const shape = (out: ResourceMetrics[]) =>
    out.map((r) =>
      r.scopeMetrics
        .map((s) => `${s.scope.name}:${s.metrics.map((m) => m.dataPoints.length).join("+")}`)
        .join(" "),
    );

  it.each([
    [rm(["a", [3]]), 5, ["a:3"]],
    [rm(["a", [5]]), 5, ["a:5"]],
    [rm(["a", [6]]), 5, ["a:5", "a:1"]],
    [rm(["a", [2, 4]], ["b", [7]]), 5, ["a:2+3", "a:1 b:4", "b:3"]],
    [rm(["a", [0, 2]]), 1, ["a:0+1", "a:1"]],
  ] as const)("%#: max %d", (input, max, want) => {
    const out = splitByPoints(input, max);
    expect(shape(out)).toEqual(want);
    const values = out.flatMap((r) =>
      r.scopeMetrics.flatMap((s) => s.metrics.flatMap((m) => m.dataPoints.map((p) => p.value))),
    );
    const orig = input.scopeMetrics.flatMap((s) =>
      s.metrics.flatMap((m) => m.dataPoints.map((p) => p.value)),
    );
    expect(values).toEqual(orig);
    for (const r of out) expect(r.resource).toBe(resource);
  });
});

describe("CommittingExporter: cumulative batches in bounded requests", () => {
  it("sends every point across requests and commits only when all were delivered", async () => {
    t = tempLedger();
    for (let i = 0; i < 6; i++) {
      t.ledger.commit(
        observation([event(`e${i}`, { sessionId: `s${i}`, dedupKey: `cline|s${i}|lead|e${i}` })]),
      );
    }
    h = harness(t.ledger, { maxPointsPerRequest: 7 });
    h.scripted.failAt = 2; // the third request of the first export fails
    await h.flush();
    expect(h.scripted.calls).toBe(3);
    expect(t.ledger.getExportState("memory").lastSuccessMs).toBe(0);
    await h.flush();
    const batches = h.scripted.memory.getMetrics();
    const perRequest = batches.map((b) =>
      b.scopeMetrics.flatMap((s) => s.metrics).reduce((x, m) => x + m.dataPoints.length, 0),
    );
    expect(Math.max(...perRequest)).toBeLessThanOrEqual(7);
    // 6 series x (4 token types + requests + unpriced) = 36 points in the second, complete export.
    expect(h.lastPoints("cline.token.usage")).toHaveLength(24);
    expect(t.ledger.getExportState("memory").lastSuccessMs).toBeGreaterThan(0);
  });
});

describe("delta windows are bounded and drain in order", () => {
  it("a backlog larger than one window arrives over successive exports, exactly once", async () => {
    t = tempLedger();
    for (let i = 0; i < 10; i++) t.ledger.commit(observation([event(`e${i}`, { input: 1 + i })]));
    h = harness(t.ledger, { temporality: "delta", maxWindowEvents: 4 });
    await h.flush();
    expect(h.lastPoints("cline.requests").reduce((x, p) => x + p.value, 0)).toBe(4);
    expect(h.producer.backlog()).toBe(true);
    await h.flush();
    await h.flush();
    expect(h.producer.backlog()).toBe(false);
    const all = h.allPoints("cline.token.usage").filter((p) => p.attributes.type === "input");
    expect(all.reduce((x, p) => x + p.value, 0)).toBe(55);
  });
});
