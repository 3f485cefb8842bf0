/**
 * What Cline's own OpenTelemetry export (the VS Code extension 3.33+, docs/backends.md "Cline's own
 * OpenTelemetry export") sends and reads, as written in its source, cline/cline at v3.89.2:
 *  - metric names: `TelemetryService.METRICS` in apps/vscode/src/services/telemetry/TelemetryService.ts
 *    (src/services/telemetry/TelemetryService.ts before the move to apps/, cline/cline#10961), each
 *    recorded through recordCounter (a monotonic Counter, no unit), recordHistogram (no unit) or
 *    recordGauge, on meter "cline", resource service.name "cline" and service.version only
 *    (providers/opentelemetry/OpenTelemetryClientProvider.ts);
 *  - environment variables: getRuntimeOtelConfig() in apps/vscode/src/shared/services/config/otel-config.ts
 *    (src/shared/services/config/otel-config.ts before the move).
 * Copied as data (names), for the tests that our names and variables never meet Cline's.
 */

/** Monotonic counters (recordCounter): `cline.*.total` and the AI-output line counts (3.71+). */
export const CLINE_COUNTERS: readonly string[] = [
  "cline.turns.total",
  "cline.tokens.input.total",
  "cline.tokens.output.total",
  "cline.cost.total",
  "cline.cache.write.tokens.total",
  "cline.cache.read.tokens.total",
  "cline.cache.hits.total",
  "cline.tool.calls.total",
  "cline.errors.total",
  "cline.hooks.executions.total",
  "cline.hooks.failures.total",
  "cline.hooks.cancellations.total",
  "cline.hooks.context_modifications.total",
  "cline.hooks.cache.accesses.total",
  ...["accepted", "rejected"].flatMap((d) =>
    ["lines_added", "lines_deleted", "lines_changed", "files_created", "files_deleted", "files_moved"].map(
      (k) => `cline.ai_output.${d}.${k}.total`,
    ),
  ),
];

/** Histograms (recordHistogram). */
export const CLINE_HISTOGRAMS: readonly string[] = [
  "cline.turns.per_task",
  "cline.tokens.input.per_response",
  "cline.tokens.output.per_response",
  "cline.cost.per_event",
  "cline.cache.write.tokens.per_event",
  "cline.cache.read.tokens.per_event",
  "cline.tool.calls.per_task",
  "cline.errors.per_task",
  "cline.api.ttft.seconds",
  "cline.api.duration.seconds",
  "cline.api.throughput.tokens_per_second",
  "cline.hooks.duration.seconds",
  "cline.grpc.response.size_bytes",
];

/** Gauges (recordGauge). */
export const CLINE_GAUGES: readonly string[] = ["cline.workspace.active_roots"];

/** The data-point attributes Cline's tool-call counter carries (toolAttributes). */
export const CLINE_TOOL_CALL_ATTRIBUTES = ["ulid", "tool", "model", "success", "autoApproved"] as const;

/** Every `CLINE_OTEL_*` variable the extension reads at run time (getRuntimeOtelConfig, 3.49+; HEADERS 3.67.1+). */
export const CLINE_OTEL_VARIABLES: readonly string[] = [
  "CLINE_OTEL_TELEMETRY_ENABLED",
  "CLINE_OTEL_METRICS_EXPORTER",
  "CLINE_OTEL_LOGS_EXPORTER",
  "CLINE_OTEL_EXPORTER_OTLP_PROTOCOL",
  "CLINE_OTEL_EXPORTER_OTLP_ENDPOINT",
  "CLINE_OTEL_EXPORTER_OTLP_METRICS_PROTOCOL",
  "CLINE_OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
  "CLINE_OTEL_EXPORTER_OTLP_LOGS_PROTOCOL",
  "CLINE_OTEL_EXPORTER_OTLP_LOGS_ENDPOINT",
  "CLINE_OTEL_METRIC_EXPORT_INTERVAL",
  "CLINE_OTEL_EXPORTER_OTLP_INSECURE",
  "CLINE_OTEL_LOG_BATCH_SIZE",
  "CLINE_OTEL_LOG_BATCH_TIMEOUT",
  "CLINE_OTEL_LOG_MAX_QUEUE_SIZE",
  "CLINE_OTEL_EXPORTER_OTLP_HEADERS",
];

/**
 * The OTLP -> Prometheus name of a metric as Prometheus' otlptranslator builds it with suffixes
 * (UnderscoreEscapingWithSuffixes, the Collector's prometheus and remote-write exporters, Prometheus'
 * and Mimir's OTLP receivers): split at every character outside [a-zA-Z0-9:], add the unit (none
 * here), and for a monotonic counter drop every `total` token and append one. A histogram's series
 * add `_bucket`, `_sum`, `_count`. (With UTF-8 names, NoUTF8EscapingWithSuffixes, the name keeps its
 * dots but the same `_total` rule applies: `cline.tool.calls_total` for both producers.)
 */
export function otlpToPrometheus(name: string, kind: "counter" | "histogram" | "gauge"): string[] {
  const tokens = name.split(/[^a-zA-Z0-9:]+/).filter((t) => t !== "");
  if (kind === "counter") return [[...tokens.filter((t) => t !== "total"), "total"].join("_")];
  const base = tokens.join("_");
  return kind === "histogram" ? [`${base}_bucket`, `${base}_sum`, `${base}_count`] : [base];
}

/** Every Prometheus series name Cline's own export produces. */
export function clinePrometheusNames(): string[] {
  return [
    ...CLINE_COUNTERS.flatMap((n) => otlpToPrometheus(n, "counter")),
    ...CLINE_HISTOGRAMS.flatMap((n) => otlpToPrometheus(n, "histogram")),
    ...CLINE_GAUGES.flatMap((n) => otlpToPrometheus(n, "gauge")),
  ];
}
