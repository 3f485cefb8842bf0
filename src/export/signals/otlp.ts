/**
 * The SDK's OTLP log and span exporters, built from resolved settings (src/config/otlp.ts) the
 * way the metric exporter is (src/export/otlp-exporters.ts): every option explicit, and only the
 * chosen protocol's exporter loaded.
 */
import type { LogRecordExporter } from "@opentelemetry/sdk-logs";
import type { SpanExporter } from "@opentelemetry/sdk-trace";
import type { OtlpSettings } from "../../config/otlp.ts";
import { grpcExporterOptions as grpcOptions, httpExporterOptions as httpOptions } from "../otlp-exporters.ts";

export async function createOtlpLogExporter(s: OtlpSettings): Promise<LogRecordExporter> {
  if (s.protocol === "grpc") {
    const { OTLPLogExporter } = await import("@opentelemetry/exporter-logs-otlp-grpc");
    return new OTLPLogExporter(await grpcOptions(s));
  }
  const { OTLPLogExporter } =
    s.protocol === "http/json"
      ? await import("@opentelemetry/exporter-logs-otlp-http")
      : await import("@opentelemetry/exporter-logs-otlp-proto");
  return new OTLPLogExporter(httpOptions(s));
}

export async function createOtlpSpanExporter(s: OtlpSettings): Promise<SpanExporter> {
  if (s.protocol === "grpc") {
    const { OTLPTraceExporter } = await import("@opentelemetry/exporter-trace-otlp-grpc");
    return new OTLPTraceExporter(await grpcOptions(s));
  }
  const { OTLPTraceExporter } =
    s.protocol === "http/json"
      ? await import("@opentelemetry/exporter-trace-otlp-http")
      : await import("@opentelemetry/exporter-trace-otlp-proto");
  return new OTLPTraceExporter(httpOptions(s));
}
