/**
 * The SDK's OTLP exporters built from resolved settings (src/config/otlp.ts): every option is
 * passed explicitly (URL, headers or metadata, timeout, compression, TLS), so the SDK's own
 * reading of OTEL_EXPORTER_OTLP_* can only ever add a header we resolved from the same
 * variables, never change one (it gives explicit options precedence, key by key).
 * Only the chosen protocol's exporter is loaded (each is its own package, gRPC with @grpc/grpc-js:
 * ~30-60 ms of start-up for the ones a run does not use).
 */
import type { ChannelCredentials, Metadata } from "@grpc/grpc-js";
import { CompressionAlgorithm } from "@opentelemetry/otlp-exporter-base";
import type { PushMetricExporter } from "@opentelemetry/sdk-metrics";
import type { Temporality } from "../config/config.ts";
import type { OtlpSettings } from "../config/otlp.ts";

type Grpc = typeof import("@grpc/grpc-js");

/** gRPC channel credentials: plaintext, or TLS with the configured CA and client pair. */
function grpcCredentials(grpc: Grpc, s: OtlpSettings): ChannelCredentials {
  const { credentials } = grpc;
  if (s.tls === undefined) return credentials.createInsecure();
  const pem = (f: { pem: string } | undefined) => (f === undefined ? null : Buffer.from(f.pem));
  return credentials.createSsl(pem(s.tls.ca), pem(s.tls.clientKey), pem(s.tls.clientCertificate));
}

/** The headers as gRPC metadata (keys were validated and lowercased by the config). */
function grpcMetadata(grpc: Grpc, s: OtlpSettings): Metadata {
  const m = new grpc.Metadata();
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
export async function grpcExporterOptions(s: OtlpSettings) {
  const grpc = await import("@grpc/grpc-js");
  return {
    url: s.endpoint,
    metadata: grpcMetadata(grpc, s),
    credentials: grpcCredentials(grpc, s),
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

export async function createOtlpMetricExporter(
  s: OtlpSettings,
  temporality: Temporality,
): Promise<PushMetricExporter> {
  assertSignal(s, "metrics");
  // The preference enum lives in the HTTP package, which the proto and gRPC exporters build on.
  const http = await import("@opentelemetry/exporter-metrics-otlp-http");
  const temporalityPreference =
    temporality === "delta"
      ? http.AggregationTemporalityPreference.DELTA
      : http.AggregationTemporalityPreference.CUMULATIVE;
  if (s.protocol === "grpc") {
    const { OTLPMetricExporter } = await import("@opentelemetry/exporter-metrics-otlp-grpc");
    return new OTLPMetricExporter({ ...(await grpcExporterOptions(s)), temporalityPreference });
  }
  const options = { ...httpExporterOptions(s), temporalityPreference };
  if (s.protocol === "http/json") return new http.OTLPMetricExporter(options);
  const { OTLPMetricExporter } = await import("@opentelemetry/exporter-metrics-otlp-proto");
  return new OTLPMetricExporter(options);
}
