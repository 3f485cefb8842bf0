/**
 * Team attributes on the data (README "Teams"): resource attributes copied onto every data point,
 * log record and span (CLINE_OTEL_COPY_RESOURCE_ATTRIBUTES), so `sum by (team_id)` works in
 * PromQL, where the resource lives only in `target_info`, and in Honeycomb without joins. They
 * are constant for a process: one process's series keep their count (docs/metrics.md "Cardinality").
 */
import type { TeamsConfig } from "../config/teams.ts";
import type { RepositoryLookup } from "../vcs/repository.ts";
import type { Attrs } from "./attributes.ts";

/** What events and spans carry besides their own attributes (all of it: they are not series). */
export interface DataAttributes {
  readonly constant: Attrs;
  readonly repositoryOf?: RepositoryLookup;
}

/** The listed keys the resource has, as strings (a number or boolean given there is kept as text). */
export function copiedAttributes(
  resource: Readonly<Record<string, unknown>>,
  keys: readonly string[],
): Attrs {
  const out: Record<string, string> = {};
  for (const k of keys) {
    const v = resource[k];
    if (typeof v === "string" || typeof v === "number" || typeof v === "boolean") out[k] = String(v);
  }
  return Object.freeze(out);
}

/** The copies metric series carry: `user.*` only when OTEL_METRICS_INCLUDE_USER is on. */
export function metricCopies(copies: Attrs, teams: Pick<TeamsConfig, "metrics">): Attrs {
  if (teams.metrics.user) return copies;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(copies)) if (!k.startsWith("user.")) out[k] = v;
  return Object.freeze(out);
}
