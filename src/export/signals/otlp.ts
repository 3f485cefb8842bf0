/**
 * The SDK's OTLP log and span exporters, built from resolved settings (src/config/otlp.ts) the
 * way the metric exporter is (src/export/otlp-exporters.ts): every option explicit.
 */
import { OTLPLogExporter as OtlpGrpcLogExporter } from "@opentelemetry/exporter-logs-otlp-grpc";
import { OTLPLogExporter as OtlpJsonLogExporter } from "@opentelemetry/exporter-logs-otlp-http";
import { OTLPLogExporter as OtlpProtoLogExporter } from "@opentelemetry/exporter-logs-otlp-proto";
import { OTLPTraceExporter as OtlpGrpcTraceExporter } from "@opentelemetry/exporter-trace-otlp-grpc";
import { OTLPTraceExporter as OtlpJsonTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as OtlpProtoTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import type { LogRecordExporter } from "@opentelemetry/sdk-logs";
import type { SpanExporter } from "@opentelemetry/sdk-trace";
import type { OtlpSettings } from "../../config/otlp.ts";
import { grpcExporterOptions as grpcOptions, httpExporterOptions as httpOptions } from "../otlp-exporters.ts";

export function createOtlpLogExporter(s: OtlpSettings): LogRecordExporter {
  if (s.protocol === "grpc") return new OtlpGrpcLogExporter(grpcOptions(s));
  return s.protocol === "http/json"
    ? new OtlpJsonLogExporter(httpOptions(s))
    : new OtlpProtoLogExporter(httpOptions(s));
}

export function createOtlpSpanExporter(s: OtlpSettings): SpanExporter {
  if (s.protocol === "grpc") return new OtlpGrpcTraceExporter(grpcOptions(s));
  return s.protocol === "http/json"
    ? new OtlpJsonTraceExporter(httpOptions(s))
    : new OtlpProtoTraceExporter(httpOptions(s));
}
