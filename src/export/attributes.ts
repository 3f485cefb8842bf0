import { createHash } from "node:crypto";
import { basename } from "node:path";
import type { ProjectMode } from "../config/config.ts";
import { type RepositoryLookup, VCS_SERIES_KEYS } from "../vcs/repository.ts";

/** Attribute keys of the metric contract (docs/metrics.md). Dashboards depend on these names. */
export const ATTR = {
  sessionId: "session.id",
  agent: "cline.agent",
  project: "cline.project",
  model: "gen_ai.request.model",
  provider: "gen_ai.provider.name",
  type: "type",
  toolName: "gen_ai.tool.name",
  usageKnown: "cline.usage.known",
  /** cline.tool.calls: success | failure | rejected | unknown (docs/metrics.md "Tool outcome"). */
  toolOutcome: "cline.tool.outcome",
  /** Which Cline client wrote it: cli, vscode, jetbrains, ... (absent on a series from before v2). */
  client: "cline.client",
  /** File edits (docs/metrics.md "What Cline delivered"), Claude Code's names where it has one. */
  operation: "operation",
  decision: "decision",
  source: "source",
  language: "language",
  /** cline.lines_of_code: "false" for the lines of edits whose files do not hold all they changed. */
  linesExact: "cline.lines.exact",
  /** cline.sessions: new | resumed (Claude Code's `start_type`). */
  startType: "start_type",
} as const;

/**
 * On every metric point cline-otel exports (docs/metrics.md "Query convention"): other programs
 * export `cline_*` names too (Cline's own `cline.tool.calls.total` is `cline_tool_calls_total` in
 * Prometheus, as is our `cline.tool.calls`), so every shipped query selects this label. A point
 * attribute because it is the only thing every OTLP-to-Prometheus path keeps as it is (`job` follows
 * a user's service.name, the scope is dropped by OTLP receivers). Constant: it adds no series.
 */
export const PRODUCER_ATTRIBUTE: Attrs = Object.freeze({ "cline_otel.producer": "cline-otel" });

/**
 * The ONLY attribute keys that ever leave the process on a cline-otel data point. Everything
 * exported passes through `allowListed`, so a new ledger column can never leak by accident.
 */
export const ALLOWED_ATTRIBUTES: ReadonlySet<string> = new Set([...Object.values(ATTR), ...VCS_SERIES_KEYS]);

/** Token component names, the values of the `type` attribute. */
export const TOKEN_TYPES = ["input", "output", "cache_read", "cache_write"] as const;
export type TokenType = (typeof TOKEN_TYPES)[number];

export type Attrs = Readonly<Record<string, string>>;

/** Drops every key that is not on the allow-list (a copy; the input is untouched). */
export function allowListed(attrs: Attrs): Attrs {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(attrs)) if (ALLOWED_ATTRIBUTES.has(k)) out[k] = v;
  return out;
}

/** Hex digits kept of the project digest: 64 bits, collision-free in practice, short on a dashboard. */
const HASH_HEX = 16;

/**
 * The `cline.project` value for a session cwd, or undefined when the attribute is left out
 * (`none`). An unknown cwd stays "" in every mode: hashing "" would look like a real project.
 */
export function renderProject(cwd: string, mode: ProjectMode): string | undefined {
  if (mode === "none") return undefined;
  if (cwd === "") return "";
  switch (mode) {
    case "path":
      return cwd;
    case "basename":
      return basename(cwd) || cwd;
    case "hash":
      return createHash("sha256").update(cwd, "utf8").digest("hex").slice(0, HASH_HEX);
  }
}

/** The keys `seriesDimsAttributes` can set. */
export const SERIES_DIMS_KEYS = [
  ATTR.sessionId,
  ATTR.agent,
  ATTR.project,
  ATTR.model,
  ATTR.provider,
  ATTR.client,
  ...VCS_SERIES_KEYS,
] as const;

/** The session / agent / project / model / provider / client of a series row. */
export interface SeriesDims {
  readonly sessionId: string;
  readonly agent: string;
  readonly project: string;
  readonly model: string;
  readonly provider: string;
  /** '' (a series from before schema v2, or an adapter that does not say): no `cline.client`. */
  readonly client: string;
}

/**
 * `cline.client` onto `out` when the series has one: a series the ledger kept from before schema
 * v2 has client '' and is exported without it, as it always was (its attribute set is its identity).
 */
export function putClient(out: Record<string, string>, client: string): void {
  if (client !== "") out[ATTR.client] = client;
}

/**
 * The attributes every capture and compaction series starts from: `session.id` only when asked
 * for, the agent only when known, the project in its mode, the model and provider.
 */
export function seriesDimsAttributes(
  row: SeriesDims,
  opts: {
    readonly project: ProjectMode;
    readonly includeSessionId: boolean;
    readonly repositoryOf?: RepositoryLookup | undefined;
    readonly constant?: Attrs | undefined;
  },
): Record<string, string> {
  // The copied resource attributes first: the series' own win.
  const out: Record<string, string> = { ...opts.constant };
  if (opts.includeSessionId) out[ATTR.sessionId] = row.sessionId;
  if (row.agent !== "") out[ATTR.agent] = row.agent;
  const project = renderProject(row.project, opts.project);
  if (project !== undefined) out[ATTR.project] = project;
  out[ATTR.model] = row.model;
  out[ATTR.provider] = row.provider;
  putClient(out, row.client);
  if (opts.repositoryOf !== undefined) Object.assign(out, opts.repositoryOf(row.project).series);
  return out;
}

/** Identity of a series: its attributes in key order (stable whatever order they were built in). */
export function seriesKey(attrs: Attrs): string {
  return JSON.stringify(
    Object.keys(attrs)
      .sort()
      .map((k) => [k, attrs[k]]),
  );
}
