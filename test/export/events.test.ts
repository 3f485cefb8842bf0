/**
 * Events (OTLP logs) through the SDK's real log exporters (http/protobuf and http/json) to an
 * in-process receiver: the contract of each record, and exactly once through outages
 * (503, refused connections) and restarts.
 */
import { afterEach, describe, expect, it } from "vitest";
import { buildPriceLookup } from "../../src/export/price-lookup.ts";
import { SignalPipeline } from "../../src/export/signals/pipeline.ts";
import { createLogger } from "../../src/util/log.ts";
import { LEAD_PATH, leadDoc, observe, ROOT } from "../helpers/signal-docs.ts";
import { signalsTestConfig, testResource } from "./helpers/config.ts";
import { type TempLedger, tempLedger } from "./helpers/ledger.ts";
import { type Receiver, startReceiver } from "./helpers/otlp-receiver.ts";

let t: TempLedger | undefined;
let rx: Receiver | undefined;
const pipelines: SignalPipeline[] = [];
afterEach(async () => {
  for (const p of pipelines.splice(0)) await p.shutdown();
  await rx?.close();
  rx = undefined;
  t?.dispose();
  t = undefined;
});

const priceOf = buildPriceLookup(undefined);

async function pipeline(
  env: Record<string, string>,
  logs: string[] = [],
  now?: () => number,
): Promise<SignalPipeline> {
  if (!t) throw new Error("setup first");
  const cfg = signalsTestConfig({ OTEL_LOGS_EXPORTER: "otlp", OTEL_EXPORTER_OTLP_TIMEOUT: "1000", ...env });
  const p = await SignalPipeline.create(cfg, t.ledger, {
    logger: createLogger("debug", (l) => logs.push(l)),
    priceOf,
    project: "path",
    resource: testResource(t.ledger),
    serviceVersion: "9.9.9",
    ...(now ? { now } : {}),
  });
  pipelines.push(p);
  return p;
}

const key = (l: { attributes: Readonly<Record<string, unknown>> }) =>
  `${String(l.attributes["cline.message.id"] ?? "")}/${String(l.attributes["gen_ai.tool.call.id"] ?? "")}`;

for (const protocol of ["http/protobuf", "http/json"] as const) {
  describe(`events over ${protocol}`, () => {
    it("one cline.api_request per usage event and one cline.tool_call per call, attributes as documented", async () => {
      t = tempLedger();
      rx = await startReceiver();
      const { t0, doc } = leadDoc();
      t.ledger.commit(observe(doc));
      const p = await pipeline({
        OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: rx.logsUrl,
        OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
      });
      expect(await p.flush()).toEqual({ ok: true });
      expect(rx.requests.every((r) => r.path === "/v1/logs")).toBe(true);
      const req = rx.logs.filter((l) => l.eventName === "cline.api_request");
      const tools = rx.logs.filter((l) => l.eventName === "cline.tool_call");
      expect(req.map((l) => l.attributes["cline.message.id"])).toEqual([
        "msg_a1",
        "msg_a2",
        "msg_a3",
        "msg_a4",
      ]);
      expect(tools.map((l) => l.attributes["gen_ai.tool.call.id"]).sort()).toEqual([
        "toolu_1",
        "toolu_2",
        "toolu_3",
      ]);
      const first = req[0];
      expect(first?.timeNs).toBe(BigInt(t0 + 1200) * 1_000_000n);
      expect(first?.attributes).toEqual({
        "session.id": ROOT,
        "cline.session.root_id": ROOT,
        "cline.agent": "lead",
        "cline.client": "cli",
        "cline.project": "/work/ws",
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "claude-sonnet-4-5-20250929",
        "gen_ai.provider.name": "anthropic",
        "cline.message.id": "msg_a1",
        // ALL input: 200 uncached + 600 cache read + 200 cache write.
        "gen_ai.usage.input_tokens": 1000,
        "gen_ai.usage.output_tokens": 100,
        "gen_ai.usage.cache_read.input_tokens": 600,
        "gen_ai.usage.cache_creation.input_tokens": 200,
        "cline.cost.unpriced": false,
        "cline.cost.usd": expect.closeTo((200 * 3 + 100 * 15 + 600 * 0.3 + 200 * 3.75) / 1e6, 12),
        "cline.tool_calls": 2,
        "cline.duration_ms": 1200,
      });
      const failed = tools.find((l) => l.attributes["gen_ai.tool.call.id"] === "toolu_2");
      expect(failed?.timeNs).toBe(BigInt(t0 + 1200) * 1_000_000n);
      expect(failed?.severityNumber).toBe(13);
      expect(failed?.attributes).toMatchObject({
        "gen_ai.tool.name": "read_files",
        "gen_ai.operation.name": "execute_tool",
        "cline.message.id": "msg_a1",
        "cline.usage.known": true,
        "cline.tool.share.divisor": 2,
        "cline.tool.share.input_tokens": 500,
        "cline.tool.share.output_tokens": 50,
        "cline.tool.outcome": "failure",
        "cline.tool.cancelled": false,
        "cline.duration_ms": 300,
        "error.type": "tool_error",
      });
      // The resource is the metrics' resource: the ledger's persisted instance id.
      expect(first?.resource["service.instance.id"]).toBe(t.ledger.instanceId);
      expect(first?.resource["service.name"]).toBe("cline-otel");
      // Linked to the spans: 16-byte trace id of the root session, 8-byte span id.
      expect(first?.traceId).toMatch(/^[0-9a-f]{32}$/);
      expect(new Set(rx.logs.map((l) => l.traceId)).size).toBe(1);
      expect(first?.spanId).toMatch(/^[0-9a-f]{16}$/);
    });
  });
}

describe("events: exactly once", () => {
  it("a 503 outage delivers nothing twice and loses nothing; the failure is logged once", async () => {
    t = tempLedger();
    rx = await startReceiver(() => 503);
    t.ledger.commit(observe(leadDoc().doc));
    const logs: string[] = [];
    const p = await pipeline({ OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: rx.logsUrl }, logs);
    const out = await p.flush();
    expect(out.ok).toBe(false);
    expect(await p.flush()).toMatchObject({ ok: false });
    expect(rx.logs).toHaveLength(0);
    expect(logs.filter((l) => l.includes("are failing"))).toHaveLength(1);
    rx.setStatus(() => 200);
    expect(await p.flush()).toEqual({ ok: true });
    expect(await p.flush()).toEqual({ ok: true });
    expect(rx.logs).toHaveLength(7);
    expect(new Set(rx.logs.map(key)).size).toBe(7);
    expect(logs.some((l) => l.includes("recovered"))).toBe(true);
  });

  it("refused connections: nothing lost, delivered once the collector is back", async () => {
    t = tempLedger();
    rx = await startReceiver();
    const deadUrl = rx.logsUrl;
    await rx.close();
    t.ledger.commit(observe(leadDoc().doc));
    const down = await pipeline({ OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: deadUrl });
    expect((await down.flush()).ok).toBe(false);
    await down.shutdown();
    rx = await startReceiver();
    const up = await pipeline({ OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: rx.logsUrl });
    // Another port is another destination: its own watermark, the whole history.
    expect(await up.flush()).toEqual({ ok: true });
    expect(rx.logs).toHaveLength(7);
  });

  it("restart: stop, write more, restart, only the new records are sent", async () => {
    t = tempLedger();
    rx = await startReceiver();
    const { t0, doc } = leadDoc({ cancelled: true });
    t.ledger.commit(observe(doc, LEAD_PATH, 100));
    const env = { OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: rx.logsUrl };
    // The document is still active (toolu_3 is running): its call is not final yet.
    const a = await pipeline(env, [], () => t0 + 11_500);
    expect(await a.shutdown()).toEqual({ ok: true });
    expect(rx.logs.map(key)).toHaveLength(5); // 3 requests, 2 finished calls
    t.reopen();
    t.ledger.commit(observe(leadDoc().doc, LEAD_PATH, 200));
    const b = await pipeline(env, [], () => t0 + 13_500);
    expect(await b.shutdown()).toEqual({ ok: true });
    expect(rx.logs).toHaveLength(7);
    expect(new Set(rx.logs.map(key)).size).toBe(7);
    expect(rx.logs.find((l) => l.attributes["gen_ai.tool.call.id"] === "toolu_3")?.attributes).toMatchObject({
      "cline.tool.outcome": "success",
      "cline.duration_ms": 1500,
    });
  });

  it("a call whose result never appears is sent after the quiet time, cancelled, ending at its document's last ts", async () => {
    t = tempLedger();
    rx = await startReceiver();
    const { t0, doc } = leadDoc({ cancelled: true });
    t.ledger.commit(observe(doc));
    const p = await pipeline(
      { OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: rx.logsUrl, CLINE_OTEL_QUIET_TIME: "60" },
      [],
      () => t0 + 11_000 + 60_000,
    );
    expect(await p.flush()).toEqual({ ok: true });
    expect(rx.logs.find((l) => l.attributes["gen_ai.tool.call.id"] === "toolu_3")?.attributes).toMatchObject({
      "cline.tool.outcome": "unknown",
      "cline.tool.cancelled": true,
      "cline.duration_ms": 0,
    });
  });

  it("history goes out in bounded batches; CLINE_OTEL_SIGNALS_FROM=now skips it", async () => {
    t = tempLedger();
    rx = await startReceiver();
    t.ledger.commit(observe(leadDoc().doc));
    const p = await pipeline({
      OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: rx.logsUrl,
      OTEL_BLRP_MAX_EXPORT_BATCH_SIZE: "2",
    });
    expect(await p.flush()).toEqual({ ok: true });
    expect(rx.logs).toHaveLength(7);
    expect(rx.requests.length).toBeGreaterThanOrEqual(4);
    const now = await pipeline({
      OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: `${rx.baseUrl}/other/v1/logs`,
      CLINE_OTEL_SIGNALS_FROM: "now",
    });
    expect(await now.flush()).toEqual({ ok: true });
    expect(rx.logs).toHaveLength(7);
  });

  it("with OTEL_LOGS_EXPORTER unset nothing is built and nothing is sent", async () => {
    t = tempLedger();
    t.ledger.commit(observe(leadDoc().doc));
    const p = await pipeline({ OTEL_LOGS_EXPORTER: "none" });
    expect(p.enabled).toBe(false);
    expect(await p.flush()).toEqual({ ok: true });
  });
});
