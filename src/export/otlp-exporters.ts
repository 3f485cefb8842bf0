/**
 * The SDK's OTLP exporters built from resolved settings (src/config/otlp.ts): every option is
 * passed explicitly (URL, headers or metadata, timeout, compression, TLS), so the SDK's own
 * reading of OTEL_EXPORTER_OTLP_* can only ever add a header we resolved from the same
 * variables, never change one (it gives explicit options precedence, key by key).
 */
import { type ChannelCredentials, credentials, Metadata } from "@grpc/grpc-js";
import { OTLPMetricExporter as OtlpGrpcExporter } from "@opentelemetry/exporter-metrics-otlp-grpc";
import {
  AggregationTemporalityPreference,
  OTLPMetricExporter as OtlpJsonExporter,
} from "@opentelemetry/exporter-metrics-otlp-http";
import { OTLPMetricExporter as OtlpProtoExporter } from "@opentelemetry/exporter-metrics-otlp-proto";
import { CompressionAlgorithm } from "@opentelemetry/otlp-exporter-base";
import type { PushMetricExporter } from "@opentelemetry/sdk-metrics";
import type { Temporality } from "../config/config.ts";
import type { OtlpSettings } from "../config/otlp.ts";

/** gRPC channel credentials: plaintext, or TLS with the configured CA and client pair. */
export function grpcCredentials(s: OtlpSettings): ChannelCredentials {
  if (s.tls === undefined) return credentials.createInsecure();
  const pem = (f: { pem: string } | undefined) => (f === undefined ? null : Buffer.from(f.pem));
  return credentials.createSsl(pem(s.tls.ca), pem(s.tls.clientKey), pem(s.tls.clientCertificate));
}

/** The headers as gRPC metadata (keys were validated and lowercased by the config). */
export function grpcMetadata(s: OtlpSettings): Metadata {
  const m = new Metadata();
  for (const [k, v] of Object.entries(s.headers)) m.set(k, v);
  return m;
}

/**
 * Node http(s).Agent options. Always given (even without TLS files) so the SDK never builds
 * its own agent from the certificate variables.
 */
export function httpAgentOptions(s: OtlpSettings): {
  keepAlive: true;
  ca?: string;
  cert?: string;
  key?: string;
} {
  const tls = s.tls;
  return {
    keepAlive: true,
    ...(tls?.ca ? { ca: tls.ca.pem } : {}),
    ...(tls?.clientCertificate ? { cert: tls.clientCertificate.pem } : {}),
    ...(tls?.clientKey ? { key: tls.clientKey.pem } : {}),
  };
}

function compression(s: OtlpSettings): CompressionAlgorithm {
  return s.compression === "gzip" ? CompressionAlgorithm.GZIP : CompressionAlgorithm.NONE;
}

/** Options of the SDK's gRPC exporters, for any signal (logs and spans: src/export/signals/otlp.ts). */
export function grpcExporterOptions(s: OtlpSettings) {
  return {
    url: s.endpoint,
    metadata: grpcMetadata(s),
    credentials: grpcCredentials(s),
    compression: compression(s),
    timeoutMillis: s.timeoutMs,
  };
}

/** Options of the SDK's HTTP exporters, JSON or protobuf (any signal). */
export function httpExporterOptions(s: OtlpSettings) {
  return {
    url: s.endpoint,
    headers: { ...s.headers },
    timeoutMillis: s.timeoutMs,
    compression: compression(s),
    httpAgentOptions: httpAgentOptions(s),
  };
}

function assertSignal(s: OtlpSettings, signal: OtlpSettings["signal"]): void {
  // Settings of another signal carry its URL: metrics would be posted to /v1/logs.
  if (s.signal !== signal) throw new Error(`OTLP settings for ${s.signal} used for a ${signal} exporter`);
}

export function createOtlpMetricExporter(s: OtlpSettings, temporality: Temporality): PushMetricExporter {
  assertSignal(s, "metrics");
  const temporalityPreference =
    temporality === "delta"
      ? AggregationTemporalityPreference.DELTA
      : AggregationTemporalityPreference.CUMULATIVE;
  if (s.protocol === "grpc")
    return new OtlpGrpcExporter({ ...grpcExporterOptions(s), temporalityPreference });
  const options = { ...httpExporterOptions(s), temporalityPreference };
  return s.protocol === "http/json" ? new OtlpJsonExporter(options) : new OtlpProtoExporter(options);
}
