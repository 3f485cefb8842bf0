/**
 * The protocol, endpoint and header settings apply to every signal: the log (events) and span
 * exporters (src/export/signals/otlp.ts) built from `resolveOtlpSettings("logs" | "traces", …)`
 * reach their own gRPC service or HTTP path with the same headers. (What the events and spans
 * contain is tested with them.)
 */
import { LoggerProvider, SimpleLogRecordProcessor } from "@opentelemetry/sdk-logs";
import { SimpleSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import { afterEach, describe, expect, it } from "vitest";
import { resolveOtlpSettings } from "../../src/config/otlp.ts";
import { createOtlpMetricExporter } from "../../src/export/otlp-exporters.ts";
import { createOtlpLogExporter, createOtlpSpanExporter } from "../../src/export/signals/otlp.ts";
import { LOGS_EXPORT_PATH, startGrpcReceiver, TRACES_EXPORT_PATH } from "./helpers/grpc-receiver.ts";
import { startReceiver } from "./helpers/otlp-receiver.ts";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const env = (protocol: string, endpoint: string) => ({
  OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
  OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
  OTEL_EXPORTER_OTLP_HEADERS: "x-api-key=k1",
  OTEL_EXPORTER_OTLP_TIMEOUT: "3000",
});
const shared = { fileHeaders: {}, fileVia: "the headers file", cwd: "/tmp" };

async function emitLog(signalEnv: Record<string, string>): Promise<void> {
  const exporter = await createOtlpLogExporter(resolveOtlpSettings("logs", signalEnv, shared));
  const provider = new LoggerProvider({ processors: [new SimpleLogRecordProcessor({ exporter })] });
  provider.getLogger("t").emit({ body: "e", eventName: "cline.test" });
  await provider.forceFlush();
  await provider.shutdown();
}

async function emitSpan(signalEnv: Record<string, string>): Promise<void> {
  const exporter = await createOtlpSpanExporter(resolveOtlpSettings("traces", signalEnv, shared));
  const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
  provider.getTracer("t").startSpan("s").end();
  await provider.forceFlush();
  await provider.shutdown();
}

describe("logs and traces share the OTLP settings", () => {
  it.each([
    ["logs", LOGS_EXPORT_PATH, emitLog],
    ["traces", TRACES_EXPORT_PATH, emitSpan],
  ] as const)("%s over gRPC reach their service with the headers as metadata", async (_s, path, emit) => {
    const rx = await startGrpcReceiver({ path });
    cleanups.push(() => rx.close());
    await emit(env("grpc", rx.url));
    expect(rx.requests).toHaveLength(1);
    expect(rx.requests[0]?.code).toBe(0);
    expect(rx.requests[0]?.metadata["x-api-key"]).toBe("k1");
  });

  it.each([
    ["logs", "/v1/logs", emitLog],
    ["traces", "/v1/traces", emitSpan],
  ] as const)("%s over HTTP reach %s of the base endpoint with the headers", async (_s, path, emit) => {
    const rx = await startReceiver();
    cleanups.push(() => rx.close());
    const base = rx.url.replace("/v1/metrics", "");
    for (const protocol of ["http/protobuf", "http/json"]) await emit(env(protocol, base));
    expect(rx.requests.map((r) => [r.path, r.protocol, r.headers["x-api-key"]])).toEqual([
      [path, "protobuf", "k1"],
      [path, "json", "k1"],
    ]);
  });

  it("the metric exporter refuses another signal's settings (their URL is that signal's)", async () => {
    await expect(createOtlpMetricExporter(resolveOtlpSettings("logs", {}, shared), "delta")).rejects.toThrow(
      /settings for logs used for a metrics exporter/,
    );
  });
});
