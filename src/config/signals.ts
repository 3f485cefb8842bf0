/**
 * Settings of the events (OTLP logs) and traces signals, resolved once from the standard
 * environment (OTEL_LOGS_EXPORTER, OTEL_TRACES_EXPORTER, OTEL_BLRP_* / OTEL_BSP_*, and the
 * OTLP settings of src/config/otlp.ts for each signal) and cline-otel's own variables.
 * Both signals are off unless asked for: they are new, and a backend must be ready for them.
 */
import { type Env, envStr } from "./env.ts";
import { type OtlpSettings, resolveOtlpSettings, type SharedOtlpInput } from "./otlp.ts";
import { ConfigError, oneOf, positiveNumber } from "./parse.ts";

export type SignalExporterName = "otlp" | "console";

export interface SignalConfig {
  /** Empty = the signal is off (`none`, the default, or OTEL_SDK_DISABLED=true). */
  readonly exporters: readonly SignalExporterName[];
  /** Resolved only when `otlp` is among the exporters. Header values are secrets. */
  readonly otlp: OtlpSettings | undefined;
  /** How often queued records are sent (OTEL_BLRP_SCHEDULE_DELAY / OTEL_BSP_SCHEDULE_DELAY). */
  readonly scheduleDelayMs: number;
  /** Records per export request (OTEL_BLRP_MAX_EXPORT_BATCH_SIZE / OTEL_BSP_MAX_EXPORT_BATCH_SIZE). */
  readonly maxBatchSize: number;
}

export interface SignalsConfig {
  readonly logs: SignalConfig;
  readonly traces: SignalConfig;
  /**
   * A document with nothing newer than this is over: its open turns end and its calls without
   * a result are exported as cancelled (CLINE_OTEL_QUIET_TIME, seconds).
   */
  readonly quietMs: number;
  /**
   * `history`: on first enable, everything already in the ledger is sent (in bounded batches);
   * `now`: only records whose time is from the first enable on (CLINE_OTEL_SIGNALS_FROM).
   */
  readonly from: "history" | "now";
}

/** Upper bound of a batch: 2,000 records of ~1.5 KB stay far below a collector's 20 MiB limit. */
const MAX_BATCH = 2000;

function exporters(env: Env, name: string, disabled: boolean): SignalExporterName[] {
  const names = (envStr(env, name) ?? "none")
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "")
    .map((s) => oneOf(s, ["otlp", "console", "none"] as const, name));
  if (disabled || names.includes("none")) return [];
  return [...new Set(names)].filter((n): n is SignalExporterName => n !== "none");
}

function signal(kind: "logs" | "traces", env: Env, shared: SharedOtlpInput, disabled: boolean): SignalConfig {
  const prefix = kind === "logs" ? "OTEL_BLRP" : "OTEL_BSP";
  const list = exporters(env, kind === "logs" ? "OTEL_LOGS_EXPORTER" : "OTEL_TRACES_EXPORTER", disabled);
  const delayVar = `${prefix}_SCHEDULE_DELAY`;
  const delayRaw = envStr(env, delayVar);
  const batchVar = `${prefix}_MAX_EXPORT_BATCH_SIZE`;
  const batchRaw = envStr(env, batchVar);
  const maxBatchSize =
    batchRaw === undefined ? 512 : Math.trunc(positiveNumber(batchRaw, batchVar, "records"));
  if (maxBatchSize < 1 || maxBatchSize > MAX_BATCH) {
    throw new ConfigError(`${batchVar} is "${batchRaw}"; give a number of records from 1 to ${MAX_BATCH}`);
  }
  return Object.freeze({
    exporters: Object.freeze(list),
    otlp: list.includes("otlp") ? resolveOtlpSettings(kind, env, shared) : undefined,
    // The SDK defaults: 1 s for logs, 5 s for spans.
    scheduleDelayMs:
      delayRaw === undefined
        ? kind === "logs"
          ? 1000
          : 5000
        : positiveNumber(delayRaw, delayVar, "milliseconds"),
    maxBatchSize,
  });
}

/**
 * The quiet time (CLINE_OTEL_QUIET_TIME, seconds; default 15 min): a call without its result, and
 * a turn, is over once its document has had nothing newer for this long. Shared by the exporters'
 * sweep and every writer's commit path (a document already quiet when read is final at once), so
 * `report` and `run` apply the one rule.
 */
export function resolveQuietMs(env: Env): number {
  const quietRaw = envStr(env, "CLINE_OTEL_QUIET_TIME");
  return quietRaw === undefined
    ? 900_000
    : positiveNumber(quietRaw, "CLINE_OTEL_QUIET_TIME", "seconds") * 1000;
}

export function resolveSignalsConfig(env: Env, shared: SharedOtlpInput, sdkDisabled: boolean): SignalsConfig {
  const fromRaw = envStr(env, "CLINE_OTEL_SIGNALS_FROM") ?? "history";
  return Object.freeze({
    logs: signal("logs", env, shared, sdkDisabled),
    traces: signal("traces", env, shared, sdkDisabled),
    quietMs: resolveQuietMs(env),
    from: oneOf(fromRaw, ["history", "now"] as const, "CLINE_OTEL_SIGNALS_FROM"),
  });
}

/** Signals off: what a configuration without the signals resolves to (tests, `report`). */
export const SIGNALS_OFF: SignalsConfig = Object.freeze({
  logs: Object.freeze({
    exporters: Object.freeze([]),
    otlp: undefined,
    scheduleDelayMs: 1000,
    maxBatchSize: 512,
  }),
  traces: Object.freeze({
    exporters: Object.freeze([]),
    otlp: undefined,
    scheduleDelayMs: 5000,
    maxBatchSize: 512,
  }),
  quietMs: 900_000,
  from: "history",
});
