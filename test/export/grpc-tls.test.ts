/**
 * TLS and mTLS for OTLP/gRPC and, with the same variables, OTLP/HTTP(S): certificates made by
 * openssl for this run (helpers/tls.ts); servers on 127.0.0.1 with a certificate for that IP.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { resolveConfig } from "../../src/config/config.ts";
import { ExportPipeline } from "../../src/export/pipeline.ts";
import { createLogger } from "../../src/util/log.ts";
import { expectClose, expectedTotals, priceOf } from "./helpers/expected.ts";
import { startGrpcReceiver } from "./helpers/grpc-receiver.ts";
import { fillLedger, type TempLedger, tempLedger } from "./helpers/ledger.ts";
import { cumulativeTotals, deltaTotals, type ReceivedPoint, startReceiver } from "./helpers/otlp-receiver.ts";
import { makeTestPki, type TestPki } from "./helpers/tls.ts";

let pki: TestPki;
beforeAll(() => {
  pki = makeTestPki();
});
afterAll(() => pki.dispose());

let t: TempLedger | undefined;
const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  t?.dispose();
  t = undefined;
});

interface Rx {
  readonly url: string;
  readonly points: ReceivedPoint[];
  readonly count: () => number;
}

type Transport = "grpc" | "http/protobuf";

async function receiver(transport: Transport, mtls: boolean): Promise<Rx> {
  const tls = { key: pki.pem.serverKey, cert: pki.pem.serverCert };
  if (transport === "grpc") {
    const rx = await startGrpcReceiver({
      tls: { ...tls, ...(mtls ? { clientCa: pki.pem.ca, requireClientCert: true } : {}) },
    });
    cleanups.push(() => rx.close());
    return { url: rx.url, points: rx.points, count: () => rx.requests.length };
  }
  const rx = await startReceiver(() => 200, {
    tls: { ...tls, ...(mtls ? { ca: pki.pem.ca, requestCert: true } : {}) },
  });
  cleanups.push(() => rx.close());
  return { url: rx.url, points: rx.points, count: () => rx.requests.length };
}

async function exportOnce(
  transport: Transport,
  url: string,
  env: Record<string, string>,
  logs: string[] = [],
) {
  if (!t) throw new Error("setup first");
  const cfg = resolveConfig(
    { stateDir: "/tmp/unused-state", sessionsDir: "/tmp/unused-sessions", dbDir: "/tmp/unused-db" },
    {
      OTEL_METRIC_EXPORT_INTERVAL: "3600000",
      OTEL_EXPORTER_OTLP_TIMEOUT: "3000",
      OTEL_EXPORTER_OTLP_PROTOCOL: transport,
      OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: url,
      // No user.name: the series keys below are compared exactly (test/export/teams.test.ts has it).
      CLINE_OTEL_USER: "",
      // Series by session: compared with the ledger's rows, series by series.
      OTEL_METRICS_INCLUDE_SESSION_ID: "true",
      ...env,
    },
    "/tmp",
    "/tmp",
  );
  const p = await ExportPipeline.start(cfg.export, t.ledger, {
    logger: createLogger("debug", (l) => logs.push(l)),
    priceOf,
    serviceVersion: "9.9.9",
  });
  cleanups.push(() => p.shutdown());
  return p.flush();
}

describe.each(["grpc", "http/protobuf"] as const)("%s over TLS", (transport) => {
  it("https:// with OTEL_EXPORTER_OTLP_CERTIFICATE: delivered, and equal to the ledger", async () => {
    t = tempLedger();
    fillLedger(t.ledger, { sessions: 20 });
    const rx = await receiver(transport, false);
    expect(rx.url.startsWith("https://127.0.0.1:")).toBe(true);
    expect(await exportOnce(transport, rx.url, { OTEL_EXPORTER_OTLP_CERTIFICATE: pki.files.ca })).toEqual({
      ok: true,
    });
    for (const [name, series] of expectedTotals(t.ledger))
      expectClose(cumulativeTotals(rx.points, name), series);
  });

  it("a server certificate the configured CA did not sign is refused: nothing delivered, reported once", async () => {
    t = tempLedger();
    fillLedger(t.ledger, { sessions: 2 });
    const rx = await receiver(transport, false);
    const logs: string[] = [];
    const out = await exportOnce(
      transport,
      rx.url,
      { OTEL_EXPORTER_OTLP_CERTIFICATE: pki.files.otherCa },
      logs,
    );
    expect(JSON.stringify(out)).toMatch(/unable to verify the first certificate/);
    expect(out.ok).toBe(false);
    expect(rx.points).toEqual([]);
    expect(logs.filter((l) => l.includes("are failing"))).toHaveLength(1);
  });

  it("mTLS: the client certificate and key are presented; without them the server refuses", async () => {
    t = tempLedger();
    fillLedger(t.ledger, { sessions: 10 });
    const rx = await receiver(transport, true);
    const without = await exportOnce(transport, rx.url, { OTEL_EXPORTER_OTLP_CERTIFICATE: pki.files.ca });
    expect(without.ok).toBe(false);
    expect(JSON.stringify(without)).toMatch(/certificate required/);
    expect(rx.points).toEqual([]);
    const withCert = await exportOnce(transport, rx.url, {
      OTEL_EXPORTER_OTLP_METRICS_CERTIFICATE: pki.files.ca,
      OTEL_EXPORTER_OTLP_METRICS_CLIENT_CERTIFICATE: pki.files.clientCert,
      OTEL_EXPORTER_OTLP_METRICS_CLIENT_KEY: pki.files.clientKey,
    });
    expect(withCert).toEqual({ ok: true });
    for (const [name, series] of expectedTotals(t.ledger))
      expectClose(cumulativeTotals(rx.points, name), series);
  });

  it("delta with gzip over mTLS: exactly the ledger", async () => {
    t = tempLedger();
    fillLedger(t.ledger, { sessions: 30 });
    const rx = await receiver(transport, true);
    const out = await exportOnce(transport, rx.url, {
      OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE: "delta",
      OTEL_EXPORTER_OTLP_COMPRESSION: "gzip",
      OTEL_EXPORTER_OTLP_CERTIFICATE: pki.files.ca,
      OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE: pki.files.clientCert,
      OTEL_EXPORTER_OTLP_CLIENT_KEY: pki.files.clientKey,
    });
    expect(out).toEqual({ ok: true });
    expect(rx.count()).toBeGreaterThan(0);
    for (const [name, series] of expectedTotals(t.ledger)) expectClose(deltaTotals(rx.points, name), series);
  });
});

describe("OTLP/HTTP gzip", () => {
  it("OTEL_EXPORTER_OTLP_METRICS_COMPRESSION=gzip sends Content-Encoding: gzip, decoded to the same totals", async () => {
    t = tempLedger();
    fillLedger(t.ledger, { sessions: 50 });
    const rx = await startReceiver();
    cleanups.push(() => rx.close());
    const out = await exportOnce("http/protobuf", rx.url, { OTEL_EXPORTER_OTLP_METRICS_COMPRESSION: "gzip" });
    expect(out).toEqual({ ok: true });
    // Every request (a cumulative export is sent in pages of 2,000 points: more than one here).
    expect(rx.requests.length).toBeGreaterThan(1);
    expect(new Set(rx.requests.map((r) => r.headers["content-encoding"]))).toEqual(new Set(["gzip"]));
    for (const [name, series] of expectedTotals(t.ledger))
      expectClose(cumulativeTotals(rx.points, name), series);
  });
});
