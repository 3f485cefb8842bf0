/**
 * The metric contract in the form Prometheus shows it, for both paths the dashboard must work on:
 *  - cline-otel's own pull endpoint (@opentelemetry/exporter-prometheus 0.223.0, PrometheusSerializer):
 *    name and label characters outside [a-zA-Z0-9_] become `_`, monotonic sums get `_total`, the unit
 *    is only a `# UNIT` comment, histograms expose `_bucket{le}`, `_sum`, `_count`;
 *  - the collector's prometheus exporter (contrib 0.159.0, UnderscoreEscapingWithSuffixes): the same,
 *    plus a unit suffix (`USD` -> `_USD`, `By` -> `_bytes`; `{token}`-style annotations add none),
 *    which otel-collector/config.yaml removes by clearing the unit of cline.* metrics first.
 */

/** OTel name -> Prometheus name of each counter (both paths). */
export const COUNTERS: Readonly<Record<string, string>> = {
  "cline.token.usage": "cline_token_usage_total",
  "cline.requests": "cline_requests_total",
  "cline.tool.calls": "cline_tool_calls_total",
  "cline.tool.token.usage": "cline_tool_token_usage_total",
  "cline.cost.usage": "cline_cost_usage_total",
  "cline.tool.cost.usage": "cline_tool_cost_usage_total",
  "cline.requests.unpriced": "cline_requests_unpriced_total",
  // Context compactions (issue 14): strategy agentic | basic, and the reason where Cline records one.
  "cline.compactions": "cline_compactions_total",
  // What Cline delivered (issue 29): file edits by decision, and their lines.
  "cline.lines_of_code": "cline_lines_of_code_total",
  "cline.code_edit.decisions": "cline_code_edit_decisions_total",
  // Active time, commits, pull requests, sessions (issue 29).
  "cline.active_time": "cline_active_time_total",
  "cline.commits": "cline_commits_total",
  "cline.pull_requests": "cline_pull_requests_total",
  "cline.sessions": "cline_sessions_total",
};

/**
 * cline-otel's own health counters (scope cline-otel.health, src/export/pipeline.ts). Their units
 * are `{...}` annotations, which the collector's exporter adds no suffix for: same names on both
 * paths. prometheus-rules.test.ts checks this list against what the pipeline creates.
 */
export const HEALTH_COUNTERS: Readonly<Record<string, string>> = {
  "cline_otel.collector.passes": "cline_otel_collector_passes_total",
  "cline_otel.collector.problems": "cline_otel_collector_problems_total",
  "cline_otel.export.failures": "cline_otel_export_failures_total",
};

/** Prometheus' own series of firing and pending alerts (a gauge, not a counter). */
export const ALERTS_SERIES = "ALERTS";

/** OTel name -> Prometheus base name of each capture histogram (series add _bucket/_sum/_count). */
export const HISTOGRAMS: Readonly<Record<string, string>> = {
  "cline.request.payload.size": "cline_request_payload_size",
  "cline.request.estimated_tokens": "cline_request_estimated_tokens",
  // GenAI semantic-convention histograms (issue 13); the collector config clears their units too.
  "gen_ai.client.token.usage": "gen_ai_client_token_usage",
  "gen_ai.client.operation.duration": "gen_ai_client_operation_duration",
  "cline.tool.duration": "cline_tool_duration",
};

export const HISTOGRAM_SERIES: readonly string[] = Object.values(HISTOGRAMS).flatMap((b) => [
  `${b}_bucket`,
  `${b}_sum`,
  `${b}_count`,
]);

/** Every counter a query may use (histogram series are counters in Prometheus terms). */
export const COUNTER_NAMES: ReadonlySet<string> = new Set([
  ...Object.values(COUNTERS),
  ...HISTOGRAM_SERIES,
  ...Object.values(HEALTH_COUNTERS),
]);

/** Every metric name a dashboard query may use. */
export const METRIC_NAMES: ReadonlySet<string> = new Set([...COUNTER_NAMES, ALERTS_SERIES]);

/** OTel attribute -> Prometheus label. */
export const LABELS: Readonly<Record<string, string>> = {
  "session.id": "session_id",
  "cline.agent": "cline_agent",
  "cline.project": "cline_project",
  "gen_ai.request.model": "gen_ai_request_model",
  "gen_ai.provider.name": "gen_ai_provider_name",
  type: "type",
  "gen_ai.tool.name": "gen_ai_tool_name",
  "cline.usage.known": "cline_usage_known",
  "cline.capture.stage": "cline_capture_stage",
  "cline.compaction.strategy": "cline_compaction_strategy",
  "cline.compaction.reason": "cline_compaction_reason",
  "gen_ai.token.type": "gen_ai_token_type",
  "gen_ai.operation.name": "gen_ai_operation_name",
  "cline.tool.outcome": "cline_tool_outcome",
  // teams: the copied resource attributes and the repository (docs/metrics.md)
  "team.id": "team_id",
  "user.name": "user_name",
  "vcs.repository.url.full": "vcs_repository_url_full",
  // file edits (docs/metrics.md "What Cline delivered")
  operation: "operation",
  decision: "decision",
  source: "source",
  language: "language",
  "cline.lines.exact": "cline_lines_exact",
  // on every point (docs/metrics.md "Query convention")
  "cline_otel.producer": "cline_otel_producer",
  // cline.sessions
  start_type: "start_type",
  // health counters
  code: "code",
  exporter: "exporter",
};

/**
 * Labels a query may name: the contract's, Prometheus' own `le`, `job`, `instance`, and those of
 * its ALERTS series and of our alert rules.
 */
export const LABEL_NAMES: ReadonlySet<string> = new Set([
  ...Object.values(LABELS),
  "le",
  "job",
  "instance",
  "alertname",
  "alertstate",
  "severity",
]);

/** The values of `type` on cline.token.usage and cline.tool.token.usage. */
export const TOKEN_TYPES = ["input", "output", "cache_read", "cache_write"] as const;

/** The same translation the JS exporter applies (dots and other characters -> `_`, runs collapsed). */
export function promName(otelName: string): string {
  return otelName.replace(/[^a-zA-Z0-9_]/g, "_").replace(/_{2,}/g, "_");
}
