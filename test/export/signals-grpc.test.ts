/**
 * Events and spans over OTLP/gRPC (the SDK's grpc log and span exporters) to an in-process gRPC
 * receiver: delivered once, through an outage (UNAVAILABLE), with the per-signal endpoint.
 */
import { status } from "@grpc/grpc-js";
import { afterEach, describe, expect, it } from "vitest";
import { buildPriceLookup } from "../../src/export/price-lookup.ts";
import { SignalPipeline } from "../../src/export/signals/pipeline.ts";
import { createLogger } from "../../src/util/log.ts";
import { leadDoc, observe } from "../helpers/signal-docs.ts";
import { signalsTestConfig, testResource } from "./helpers/config.ts";
import {
  type GrpcReceiver,
  LOGS_EXPORT_PATH,
  startGrpcReceiver,
  TRACES_EXPORT_PATH,
} from "./helpers/grpc-receiver.ts";
import { type TempLedger, tempLedger } from "./helpers/ledger.ts";

let t: TempLedger | undefined;
const receivers: GrpcReceiver[] = [];
const pipelines: SignalPipeline[] = [];
afterEach(async () => {
  for (const p of pipelines.splice(0)) await p.shutdown();
  for (const r of receivers.splice(0)) await r.close();
  t?.dispose();
  t = undefined;
});

async function pipeline(env: Record<string, string>): Promise<SignalPipeline> {
  if (!t) throw new Error("setup first");
  const cfg = signalsTestConfig({
    OTEL_EXPORTER_OTLP_PROTOCOL: "grpc",
    OTEL_EXPORTER_OTLP_TIMEOUT: "1500",
    ...env,
  });
  const p = await SignalPipeline.create(cfg, t.ledger, {
    logger: createLogger("error", () => {}),
    priceOf: buildPriceLookup(undefined),
    project: "path",
    resource: testResource(t.ledger),
    serviceVersion: "9.9.9",
  });
  pipelines.push(p);
  return p;
}

describe("events and traces over OTLP/gRPC", () => {
  it("delivers every record and span once, through an UNAVAILABLE outage", async () => {
    t = tempLedger();
    t.ledger.commit(observe(leadDoc().doc));
    const logsRx = await startGrpcReceiver({ path: LOGS_EXPORT_PATH, policy: () => status.UNAVAILABLE });
    const spansRx = await startGrpcReceiver({ path: TRACES_EXPORT_PATH });
    receivers.push(logsRx, spansRx);
    const p = await pipeline({
      OTEL_LOGS_EXPORTER: "otlp",
      OTEL_TRACES_EXPORTER: "otlp",
      OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: logsRx.url,
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: spansRx.url,
    });
    const down = await p.flush();
    expect(down.ok).toBe(false);
    expect(logsRx.logs).toHaveLength(0);
    // Traces were delivered meanwhile: their own watermark.
    expect(spansRx.spans.length).toBeGreaterThan(0);
    logsRx.setStatus(() => status.OK);
    expect(await p.flush()).toEqual({ ok: true });
    expect(await p.flush()).toEqual({ ok: true });
    expect(logsRx.logs.map((l) => l.eventName).sort()).toEqual([
      ...Array(4).fill("cline.api_request"),
      ...Array(3).fill("cline.tool_call"),
    ]);
    const ids = spansRx.spans.map((s) => s.spanId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(spansRx.spans.find((s) => s.attributes["gen_ai.tool.call.id"] === "toolu_2")?.statusCode).toBe(2);
  });
});
