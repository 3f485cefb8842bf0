/**
 * The configuration the export tests share: resolved as the CLI resolves it, with directories no
 * test reads, a one-hour metric interval (tests flush by hand), a 1.5 s OTLP timeout, no
 * `user.name` (whoever runs the tests; test/export/teams.test.ts covers it) and `session.id` on
 * the metric series (the default; set here too so that a change of default cannot silently fold
 * them), so what a backend received compares series by series with the ledger's rows (the team
 * setting, off, is tested where it matters: test/export/fold.test.ts, backfill.test.ts,
 * default-series.test.ts); a test's own variables come last and win.
 */
import type { Resource } from "@opentelemetry/resources";
import { type Config, resolveConfig } from "../../../src/config/config.ts";
import { resolveSignalsConfig, type SignalsConfig } from "../../../src/config/signals.ts";
import { buildResource } from "../../../src/export/resource.ts";
import type { Ledger } from "../../../src/ledger/ledger.ts";

export function exportTestConfig(env: Record<string, string>): Config {
  return resolveConfig(
    { stateDir: "/tmp/unused-state", sessionsDir: "/tmp/unused-sessions", dbDir: "/tmp/unused-db" },
    {
      OTEL_METRIC_EXPORT_INTERVAL: "3600000",
      OTEL_EXPORTER_OTLP_TIMEOUT: "1500",
      CLINE_OTEL_USER: "",
      // The old name: a test's OTEL_METRICS_INCLUDE_SESSION_ID or CLINE_OTEL_INCLUDE_SESSION_ID wins.
      CLINE_OTEL_INCLUDE_SESSION_ID: "true",
      ...env,
    },
    "/tmp",
    "/tmp",
  );
}

/** The events and traces settings from `env` alone (no headers file). */
export function signalsTestConfig(env: Record<string, string>): SignalsConfig {
  return resolveSignalsConfig(env, { fileHeaders: {}, fileVia: "the headers file", cwd: "/tmp" }, false);
}

/** The resource of a test pipeline: default service name, version 9.9.9, host `host-a`. */
export function testResource(ledger: Ledger): Resource {
  return buildResource(exportTestConfig({}).export, ledger.instanceId, "9.9.9", "host-a");
}
