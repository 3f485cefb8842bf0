import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { resolveCaptureDirs } from "../adapter/cline/captures/paths.ts";
import {
  type ClinePathFlags,
  type ClinePaths,
  isWithin,
  type ResolvedPath,
  resolveClinePaths,
} from "../adapter/cline/paths.ts";
import type { TaskRoot } from "../adapter/cline-tasks/types.ts";
import type { LogLevel } from "../util/log.ts";
import { type Env, envStr } from "./env.ts";
import { type HeadersFileRef, readHeadersFile } from "./headers-file.ts";
import { type OtlpSettings, resolveOtlpSettings } from "./otlp.ts";
import { boolValue, ConfigError, oneOf, parseKeyValueList, positiveNumber } from "./parse.ts";
import { resolveQuietMs, resolveSignalsConfig, type SignalsConfig } from "./signals.ts";
import { resolveTaskRoots, TASK_ROOT_ENV } from "./task-roots.ts";
import { resolveTeamsConfig, type TeamsConfig } from "./teams.ts";

export type { LogLevel } from "../util/log.ts";
export type { OtlpProtocol, OtlpSettings } from "./otlp.ts";
export { boolValue, ConfigError, oneOf, parseKeyValueList, positiveNumber } from "./parse.ts";

export type ProjectMode = "path" | "basename" | "hash" | "none";
export type ExporterName = "otlp" | "prometheus" | "console" | "none";
export type Temporality = "cumulative" | "delta";

export interface ExportConfig {
  /** Empty when exporting is off (`none`, or OTEL_SDK_DISABLED=true). */
  readonly exporters: readonly Exclude<ExporterName, "none">[];
  /** The metrics signal's OTLP settings (src/config/otlp.ts). Header values are secrets. */
  readonly otlp: OtlpSettings;
  readonly intervalMs: number;
  readonly timeoutMs: number;
  readonly temporality: Temporality;
  readonly prometheus: { readonly host: string; readonly port: number };
  readonly serviceName: string;
  readonly resourceAttributes: Readonly<Record<string, string>>;
  readonly includeSessionId: boolean;
  readonly project: ProjectMode;
  /** A series unchanged for this long, and already delivered, stops being reported. */
  readonly seriesTtlMs: number;
  /** Events (OTLP logs) and traces: both off unless OTEL_LOGS_EXPORTER / OTEL_TRACES_EXPORTER say. */
  readonly signals: SignalsConfig;
  /** User, copied resource attributes, repository, what metric series carry (src/config/teams.ts). */
  readonly teams: TeamsConfig;
}

export interface Config {
  readonly cline: ClinePaths;
  readonly stateDir: ResolvedPath;
  readonly pollIntervalMs: number;
  readonly watch: boolean;
  readonly logLevel: LogLevel;
  readonly prices: string | undefined;
  readonly export: ExportConfig;
  /** Where Cline's provider-request captures may be (resolveCaptureDirs); none needs to exist. */
  readonly captureDirs: readonly ResolvedPath[];
  /** Where the task format may be (src/config/task-roots.ts); none needs to exist. */
  readonly taskRoots: readonly TaskRoot[];
  /** The quiet time (resolveQuietMs): every writer ends what a quiet document left open by it. */
  readonly quietMs: number;
}

/** Flags as commander hands them over (all optional strings/booleans). */
export interface Flags extends ClinePathFlags {
  readonly stateDir?: string | undefined;
  readonly pollInterval?: string | undefined;
  readonly watch?: boolean | undefined;
  readonly logLevel?: string | undefined;
  readonly project?: string | undefined;
  readonly sessionId?: boolean | undefined;
  readonly prices?: string | undefined;
  readonly captureDir?: string | undefined;
  readonly headersFile?: string | undefined;
  /** `--task-root` (repeatable): a task-format root to read. */
  readonly taskRoot?: readonly string[] | undefined;
  /** `--skip-task-root` (repeatable): a root not to read. */
  readonly skipTaskRoot?: readonly string[] | undefined;
  /** `--only-task-roots`: only the named roots, none of the default ones. */
  readonly onlyTaskRoots?: boolean | undefined;
}

/** Re-exported for the importers of config.ts (the config modules read env.ts directly). */
export { type Env, envStr };

export function defaultStateDir(env: Env, home: string): ResolvedPath {
  const xdg = envStr(env, "XDG_STATE_HOME");
  return xdg !== undefined
    ? { path: join(resolve(xdg), "cline-otel"), origin: "default", via: "$XDG_STATE_HOME/cline-otel" }
    : {
        path: join(home, ".local", "state", "cline-otel"),
        origin: "default",
        via: "~/.local/state/cline-otel",
      };
}

/** The headers file named by --headers-file or CLINE_OTEL_HEADERS_FILE, if any. */
function headersFileRef(flags: Flags, env: Env, cwd: string): HeadersFileRef | undefined {
  if (flags.headersFile !== undefined)
    return { path: resolve(cwd, flags.headersFile), via: "--headers-file" };
  const v = envStr(env, "CLINE_OTEL_HEADERS_FILE");
  return v === undefined ? undefined : { path: resolve(cwd, v), via: "CLINE_OTEL_HEADERS_FILE" };
}

function exportConfig(flags: Flags, env: Env, cwd: string): ExportConfig {
  const sdkDisabled = envStr(env, "OTEL_SDK_DISABLED");
  const disabled = sdkDisabled !== undefined && boolValue(sdkDisabled, "OTEL_SDK_DISABLED");
  const names = (envStr(env, "OTEL_METRICS_EXPORTER") ?? "otlp")
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "")
    .map((s) => oneOf(s, ["otlp", "prometheus", "console", "none"] as const, "OTEL_METRICS_EXPORTER"));
  const exporters = disabled || names.includes("none") ? [] : [...new Set(names)].filter((n) => n !== "none");

  const ms = (name: string, fallback: number) => {
    const v = envStr(env, name);
    return v === undefined ? fallback : positiveNumber(v, name, "milliseconds");
  };
  const intervalMs = ms("OTEL_METRIC_EXPORT_INTERVAL", 60_000);
  const timeoutMs = Math.min(ms("OTEL_METRIC_EXPORT_TIMEOUT", 30_000), intervalMs);

  const tempRaw = envStr(env, "OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE") ?? "cumulative";
  const tempName = oneOf(
    tempRaw,
    ["cumulative", "delta", "lowmemory"] as const,
    "OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE",
  );
  // LowMemory means delta for counters, which is all we export.
  const temporality: Temporality = tempName === "cumulative" ? "cumulative" : "delta";

  const promPortRaw = envStr(env, "OTEL_EXPORTER_PROMETHEUS_PORT") ?? "9464";
  const promPort = Number(promPortRaw);
  if (!Number.isInteger(promPort) || promPort < 0 || promPort > 65535) {
    throw new ConfigError(`OTEL_EXPORTER_PROMETHEUS_PORT is "${promPortRaw}"; give a port number 0-65535`);
  }

  const projectRaw = flags.project ?? envStr(env, "CLINE_OTEL_PROJECT") ?? "path";
  const project = oneOf(
    projectRaw,
    ["path", "basename", "hash", "none"] as const,
    flags.project !== undefined ? "--project" : "CLINE_OTEL_PROJECT",
  );
  const teams = resolveTeamsConfig(flags, env);
  const headersFile = headersFileRef(flags, env, cwd);
  const shared = {
    fileHeaders: headersFile === undefined ? {} : readHeadersFile(headersFile),
    fileVia: headersFile === undefined ? "the headers file" : `${headersFile.via} (${headersFile.path})`,
    cwd,
  };
  const ttlRaw = envStr(env, "CLINE_OTEL_SERIES_TTL");
  const seriesTtlMs =
    ttlRaw === undefined
      ? 7 * 24 * 3600_000
      : positiveNumber(ttlRaw, "CLINE_OTEL_SERIES_TTL", "seconds") * 1000;

  return Object.freeze({
    exporters: Object.freeze(exporters),
    otlp: resolveOtlpSettings("metrics", env, shared),
    intervalMs,
    timeoutMs,
    temporality,
    prometheus: Object.freeze({
      host: envStr(env, "OTEL_EXPORTER_PROMETHEUS_HOST") ?? "127.0.0.1",
      port: promPort,
    }),
    serviceName: envStr(env, "OTEL_SERVICE_NAME") ?? "cline-otel",
    resourceAttributes: Object.freeze(
      parseKeyValueList(envStr(env, "OTEL_RESOURCE_ATTRIBUTES") ?? "", "OTEL_RESOURCE_ATTRIBUTES"),
    ),
    includeSessionId: teams.metrics.sessionId,
    project,
    seriesTtlMs,
    signals: resolveSignalsConfig(env, shared, disabled),
    teams,
  });
}

/**
 * Resolve the whole configuration once: flags, then standard environment variables,
 * then defaults. The result is frozen; nothing reads process.env after this.
 */
export function resolveConfig(
  flags: Flags,
  env: Env,
  home: string = homedir(),
  cwd: string = process.cwd(),
): Config {
  return Object.freeze({
    ...resolveLocalConfig(flags, env, home, cwd),
    export: exportConfig(flags, env, cwd),
  });
}

/** Everything but where and how to export: what `report` and `paths` need. */
export type LocalConfig = Omit<Config, "export">;

/**
 * The configuration of the commands that do not export (`report`, `paths`): the OTLP settings,
 * headers file and TLS files are not read, so a broken exporter setting never stops a report.
 */
export function resolveLocalConfig(
  flags: Flags,
  env: Env,
  home: string = homedir(),
  cwd: string = process.cwd(),
  platform: NodeJS.Platform = process.platform,
): LocalConfig {
  for (const [name, v] of Object.entries({
    "--cline-dir": flags.clineDir,
    "--data-dir": flags.dataDir,
    "--sessions-dir": flags.sessionsDir,
    "--db-dir": flags.dbDir,
    "--state-dir": flags.stateDir,
    "--capture-dir": flags.captureDir,
    "--headers-file": flags.headersFile,
    ...Object.fromEntries(
      [...(flags.taskRoot ?? []), ...(flags.skipTaskRoot ?? [])].map((v, i) => [`--task-root #${i + 1}`, v]),
    ),
  })) {
    if (v !== undefined && v.trim() === "") throw new ConfigError(`${name} is empty; give a directory path`);
  }
  const cline = resolveClinePaths(flags, env, home, cwd);
  const stateEnv = envStr(env, "CLINE_OTEL_STATE_DIR");
  const stateDir: ResolvedPath =
    flags.stateDir !== undefined
      ? { path: resolve(cwd, flags.stateDir), origin: "flag", via: "--state-dir" }
      : stateEnv !== undefined
        ? { path: resolve(cwd, stateEnv), origin: "env", via: "CLINE_OTEL_STATE_DIR" }
        : defaultStateDir(env, home);
  const captureDirs = resolveCaptureDirs(flags, env, cline, cwd);
  const onlyEnv = envStr(env, TASK_ROOT_ENV.only);
  const onlyTaskRoots =
    flags.onlyTaskRoots ?? (onlyEnv !== undefined && boolValue(onlyEnv, TASK_ROOT_ENV.only));
  const taskRoots = resolveTaskRoots(flags, env, home, cwd, platform, onlyTaskRoots);
  // Read-only principle: our own writes must never land inside Cline's directories.
  for (const p of [cline.root, cline.data, cline.sessions, cline.db, ...captureDirs, ...taskRoots]) {
    if (isWithin(stateDir.path, p.path)) {
      throw new ConfigError(
        `the state dir ${stateDir.path} (${stateDir.via}) is inside Cline's ${p.path}; cline-otel never writes there: choose another --state-dir`,
      );
    }
  }
  const pollRaw = flags.pollInterval ?? envStr(env, "CLINE_OTEL_POLL_INTERVAL");
  const pollIntervalMs =
    pollRaw === undefined
      ? 5000
      : positiveNumber(
          pollRaw,
          flags.pollInterval !== undefined ? "--poll-interval" : "CLINE_OTEL_POLL_INTERVAL",
          "seconds",
        ) * 1000;
  const watchEnv = envStr(env, "CLINE_OTEL_WATCH");
  const watch = flags.watch ?? (watchEnv === undefined ? true : boolValue(watchEnv, "CLINE_OTEL_WATCH"));
  const logRaw = flags.logLevel ?? envStr(env, "CLINE_OTEL_LOG_LEVEL") ?? "info";
  const logLevel = oneOf(
    logRaw,
    ["error", "warn", "info", "debug"] as const,
    flags.logLevel !== undefined ? "--log-level" : "CLINE_OTEL_LOG_LEVEL",
  );
  const pricesRaw = flags.prices ?? envStr(env, "CLINE_OTEL_PRICES");
  return Object.freeze({
    cline,
    stateDir: Object.freeze(stateDir),
    pollIntervalMs,
    watch,
    logLevel,
    prices: pricesRaw === undefined ? undefined : resolve(cwd, pricesRaw),
    captureDirs: Object.freeze(captureDirs),
    taskRoots: Object.freeze(taskRoots),
    quietMs: resolveQuietMs(env),
  });
}
