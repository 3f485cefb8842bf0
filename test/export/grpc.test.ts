/**
 * OTLP/gRPC through the SDK's own gRPC exporter against a real gRPC server (plaintext here; TLS
 * and mTLS in grpc-tls.test.ts): what arrives equals the ledger, in both temporalities, through
 * UNAVAILABLE answers and a receiver restart, exactly as over HTTP (otlp.test.ts).
 */
import { status } from "@grpc/grpc-js";
import { afterEach, describe, expect, it } from "vitest";
import { ExportPipeline } from "../../src/export/pipeline.ts";
import { createLogger } from "../../src/util/log.ts";
import { event, observation } from "../helpers/events.ts";
import { exportTestConfig } from "./helpers/config.ts";
import { expectClose, expectedTotals, ledgerTokensByType, priceOf } from "./helpers/expected.ts";
import { type GrpcReceiver, startByteCounter, startGrpcReceiver } from "./helpers/grpc-receiver.ts";
import { fillLedger, type TempLedger, tempLedger } from "./helpers/ledger.ts";
import { cumulativeTotals, deltaTotals, startReceiver, sumBy } from "./helpers/otlp-receiver.ts";

let t: TempLedger | undefined;
let rx: GrpcReceiver | undefined;
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  await rx?.close();
  rx = undefined;
  t?.dispose();
  t = undefined;
});

function config(env: Record<string, string>) {
  return exportTestConfig({ OTEL_EXPORTER_OTLP_PROTOCOL: "grpc", ...env });
}

async function start(env: Record<string, string>, logs: string[] = []) {
  if (!t || !rx) throw new Error("setup first");
  const cfg = config({ OTEL_EXPORTER_OTLP_ENDPOINT: rx.url, ...env });
  const p = await ExportPipeline.start(cfg.export, t.ledger, {
    logger: createLogger("debug", (l) => logs.push(l)),
    priceOf,
    serviceVersion: "9.9.9",
  });
  cleanups.push(() => p.shutdown().then(() => undefined));
  return p;
}

describe("OTLP/gRPC, plaintext", () => {
  it("received totals equal the ledger, series by series, with resource and stream start", async () => {
    t = tempLedger();
    fillLedger(t.ledger, { sessions: 40 });
    rx = await startGrpcReceiver();
    const p = await start({});
    expect(p.describe()).toEqual([`otlp ${rx.url}`]);
    expect(await p.flush()).toEqual({ ok: true });
    // One or more pages (src/export/pages.ts), every one accepted.
    expect([...new Set(rx.requests.map((r) => r.code))]).toEqual([status.OK]);
    for (const [name, series] of expectedTotals(t.ledger))
      expectClose(cumulativeTotals(rx.points, name), series);
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
      expect(x.resource["service.version"]).toBe("9.9.9");
    }
  });

  it("the default endpoint is localhost:4317 and the signal endpoint's path is ignored", () => {
    expect(config({}).export.otlp.endpoint).toBe("http://localhost:4317");
    expect(
      config({ OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: "http://c:4317/v1/metrics" }).export.otlp.endpoint,
    ).toBe("http://c:4317");
  });

  it("UNAVAILABLE loses nothing: reported once, the next export re-sends the totals", async () => {
    t = tempLedger();
    fillLedger(t.ledger, { sessions: 5 });
    rx = await startGrpcReceiver({ policy: () => status.UNAVAILABLE });
    const logs: string[] = [];
    const p = await start({}, logs);
    const down1 = await p.flush();
    const down2 = await p.flush();
    expect(down1).toMatchObject({ ok: false, failures: [{ target: rx.url }] });
    expect(JSON.stringify(down1)).toContain("gRPC 14 UNAVAILABLE");
    expect(down2.ok).toBe(false);
    expect(rx.points).toEqual([]);
    rx.setStatus(() => status.OK);
    t.ledger.commit(observation([event("late", { sessionId: "late", dedupKey: "cline|late|lead|late" })]));
    expect(await p.flush()).toEqual({ ok: true });
    for (const [name, series] of expectedTotals(t.ledger))
      expectClose(cumulativeTotals(rx.points, name), series);
    expect(logs.filter((l) => l.includes("are failing"))).toHaveLength(1);
    expect(logs.filter((l) => l.includes("recovered"))).toHaveLength(1);
  });

  it("a receiver that goes away and comes back on the same port gets everything, exactly once (delta)", async () => {
    t = tempLedger();
    fillLedger(t.ledger, { sessions: 3 });
    rx = await startGrpcReceiver();
    const logs: string[] = [];
    const p = await start({ OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE: "delta" }, logs);
    expect(await p.flush()).toEqual({ ok: true });
    await rx.stop();
    fillLedger(t.ledger, { sessions: 3, offset: 3 });
    const down = await p.flush();
    expect(down.ok).toBe(false);
    expect(JSON.stringify(down)).toMatch(/gRPC 14 UNAVAILABLE/);
    fillLedger(t.ledger, { sessions: 3, offset: 6 });
    await rx.restart();
    // The gRPC channel reconnects with backoff (1 s at first), so an export right after the
    // restart may still fail, as a daemon's next tick would: retry like the next ticks.
    let up = await p.flush();
    for (let i = 0; !up.ok && i < 20; i++) {
      await new Promise((r) => setTimeout(r, 250));
      up = await p.flush();
    }
    expect(up).toEqual({ ok: true });
    for (const [name, series] of expectedTotals(t.ledger)) expectClose(deltaTotals(rx.points, name), series);
    expect(logs.filter((l) => l.includes("are failing"))).toHaveLength(1);
    expect(logs.filter((l) => l.includes("recovered"))).toHaveLength(1);
  });

  it("delta through intermittent UNAVAILABLE: the accepted windows sum to the ledger and chain", async () => {
    t = tempLedger();
    rx = await startGrpcReceiver({ policy: (i) => (i % 3 === 1 ? status.UNAVAILABLE : status.OK) });
    const p = await start({ OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE: "delta" });
    for (let round = 0; round < 6; round++) {
      fillLedger(t.ledger, { sessions: 3, offset: round * 3 });
      await p.flush();
    }
    rx.setStatus(() => status.OK);
    await p.flush();
    expect(rx.requests.some((r) => r.code === status.UNAVAILABLE)).toBe(true);
    const ours = rx.points.filter((x) => x.scope === "cline-otel");
    expect(ours.every((x) => x.temporality === "delta")).toBe(true);
    for (const [name, series] of expectedTotals(t.ledger)) expectClose(deltaTotals(rx.points, name), series);
    const windows = [...new Set(ours.map((x) => `${x.startNs}-${x.timeNs}`))].map((w) =>
      w.split("-").map(BigInt),
    );
    for (let i = 1; i < windows.length; i++) expect(windows[i]?.[0]).toBe(windows[i - 1]?.[1]);
  });

  it("one flush drains a delta backlog larger than a window, exactly once", async () => {
    t = tempLedger();
    fillLedger(t.ledger, { sessions: 1200 });
    rx = await startGrpcReceiver();
    // The receiver decodes in this process: a generous deadline, so a loaded CI machine cannot fail it.
    const p = await start({
      OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE: "delta",
      OTEL_EXPORTER_OTLP_TIMEOUT: "20000",
    });
    expect(await p.flush()).toEqual({ ok: true });
    expect(rx.requests.length).toBeGreaterThanOrEqual(3);
    for (const [name, series] of expectedTotals(t.ledger)) expectClose(deltaTotals(rx.points, name), series);
  });

  it("the export timeout bounds a receiver that never answers (DEADLINE_EXCEEDED)", async () => {
    t = tempLedger();
    fillLedger(t.ledger, { sessions: 2 });
    rx = await startGrpcReceiver({ policy: () => "hang" });
    const p = await start({ OTEL_EXPORTER_OTLP_METRICS_TIMEOUT: "400" });
    const t0 = performance.now();
    const out = await p.flush();
    expect(performance.now() - t0).toBeLessThan(5000);
    expect(out.ok).toBe(false);
    expect(JSON.stringify(out)).toContain("DEADLINE_EXCEEDED");
  });
});

describe("OTLP/gRPC headers", () => {
  it("travel as metadata (lowercased) and never appear in logs or failure reasons", async () => {
    t = tempLedger();
    t.ledger.commit(observation([event("a")]));
    rx = await startGrpcReceiver({ policy: () => status.UNAUTHENTICATED });
    const logs: string[] = [];
    const p = await start(
      {
        OTEL_EXPORTER_OTLP_HEADERS: "Authorization=Bearer SECRET-xyz,x-tenant=t1",
        OTEL_EXPORTER_OTLP_METRICS_HEADERS: "x-tenant=t2",
      },
      logs,
    );
    const out = await p.flush();
    expect(rx.requests[0]?.metadata).toMatchObject({ authorization: "Bearer SECRET-xyz", "x-tenant": "t2" });
    expect(out.ok).toBe(false);
    expect(JSON.stringify(out)).toContain("UNAUTHENTICATED");
    expect(JSON.stringify(out)).not.toContain("SECRET");
    expect(logs.join("\n")).not.toContain("SECRET");
    expect(logs.join("\n")).toContain(rx.url);
  });
});

describe("OTLP/gRPC compression", () => {
  it("gzip (OTEL_EXPORTER_OTLP_COMPRESSION) shrinks what goes on the wire; the data is the same", async () => {
    const sent: Record<string, number> = {};
    for (const compression of ["none", "gzip"] as const) {
      t = tempLedger();
      fillLedger(t.ledger, { sessions: 200 });
      rx = await startGrpcReceiver();
      const relay = await startByteCounter(rx.port);
      const p = await start({
        OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${relay.port}`,
        OTEL_EXPORTER_OTLP_METRICS_COMPRESSION: compression,
      });
      expect(await p.flush()).toEqual({ ok: true });
      await p.shutdown();
      for (const [name, series] of expectedTotals(t.ledger))
        expectClose(cumulativeTotals(rx.points, name), series);
      sent[compression] = relay.bytes();
      await relay.close();
      await rx.close();
      rx = undefined;
      t.dispose();
      t = undefined;
    }
    // Repetitive attribute sets: measured ~31:1 (3.98 MB -> 127 KB); 3:1 is the bar.
    expect(sent.gzip).toBeGreaterThan(0);
    expect(sent.gzip ?? 0).toBeLessThan((sent.none ?? 0) / 3);
  });
});

describe("the SDK's own environment reading", () => {
  /** What the SDK would read itself if it were allowed to decide; restored after the test. */
  function pollutedProcessEnv() {
    const saved = { ...process.env };
    cleanups.push(() => {
      for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
      Object.assign(process.env, saved);
    });
    Object.assign(process.env, {
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9",
      OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: "http://127.0.0.1:9",
      OTEL_EXPORTER_OTLP_HEADERS: "authorization=WRONG",
      OTEL_EXPORTER_OTLP_TIMEOUT: "1",
      OTEL_EXPORTER_OTLP_COMPRESSION: "gzip",
      OTEL_EXPORTER_OTLP_CERTIFICATE: "/nonexistent/ca.pem",
      OTEL_EXPORTER_OTLP_INSECURE: "false",
    });
  }

  it("cannot override what cline-otel resolved over HTTP either", async () => {
    t = tempLedger();
    fillLedger(t.ledger, { sessions: 4 });
    const http = await startReceiver();
    cleanups.push(() => http.close());
    pollutedProcessEnv();
    const cfg = config({
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf",
      OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: http.url,
      OTEL_EXPORTER_OTLP_HEADERS: "Authorization=RIGHT",
    });
    const p = await ExportPipeline.start(cfg.export, t.ledger, {
      logger: createLogger("debug", () => {}),
      priceOf,
      serviceVersion: "9.9.9",
    });
    cleanups.push(() => p.shutdown().then(() => undefined));
    expect(await p.flush()).toEqual({ ok: true });
    expect(http.requests[0]?.headers.authorization).toBe("RIGHT");
    expect(http.requests[0]?.headers["content-encoding"]).toBeUndefined();
    for (const [name, series] of expectedTotals(t.ledger))
      expectClose(cumulativeTotals(http.points, name), series);
  });

  it("cannot override what cline-otel resolved (endpoint, headers, timeout, TLS, compression)", async () => {
    t = tempLedger();
    fillLedger(t.ledger, { sessions: 4 });
    rx = await startGrpcReceiver();
    pollutedProcessEnv();
    const p = await start({ OTEL_EXPORTER_OTLP_HEADERS: "authorization=RIGHT" });
    expect(await p.flush()).toEqual({ ok: true });
    expect(rx.requests[0]?.metadata.authorization).toBe("RIGHT");
    for (const [name, series] of expectedTotals(t.ledger))
      expectClose(cumulativeTotals(rx.points, name), series);
  });
});
