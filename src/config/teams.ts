/**
 * Who and where, for teams (README "Teams"): the user, the resource attributes copied onto the
 * data, the repository switch, and what goes on metric series (the `OTEL_METRICS_INCLUDE_*`
 * switches, as Claude Code names them). Events and spans always keep every attribute.
 */
import { userInfo } from "node:os";
import { type Env, envStr } from "./env.ts";
import { boolValue, ConfigError } from "./parse.ts";

export const USER_ATTRIBUTE = "user.name";

/** Claude Code's convention for team and cost attributes, plus the user: `sum by (team_id)` without joins. */
export const DEFAULT_COPY_RESOURCE_ATTRIBUTES = ["team.id", "department", "cost_center", USER_ATTRIBUTE];

/** What metric series carry (each a dimension of series count; docs/metrics.md "Cardinality"). */
export interface MetricDimensions {
  readonly sessionId: boolean;
  readonly project: boolean;
  readonly repository: boolean;
  readonly user: boolean;
}

export interface TeamsConfig {
  /** `user.name` on the resource; undefined = left out (`CLINE_OTEL_USER=`, or no OS account). */
  readonly user: string | undefined;
  /** Resource attribute keys copied onto every data point, log record and span, when present. */
  readonly copyResourceAttributes: readonly string[];
  /** `vcs.*` of each session's workspace, read from its git config (CLINE_OTEL_REPOSITORY). */
  readonly repository: boolean;
  readonly metrics: MetricDimensions;
}

export interface TeamsFlags {
  readonly sessionId?: boolean | undefined;
}

/** The OS account; undefined when the system has none for this uid (a container without passwd). */
export function osUser(): string | undefined {
  try {
    const name = userInfo().username.trim();
    return name === "" ? undefined : name;
  } catch {
    // No passwd entry for this uid: nothing to report, and nothing is wrong.
    return undefined;
  }
}

function flag(env: Env, names: readonly string[], fallback: boolean): boolean {
  for (const name of names) {
    const v = envStr(env, name);
    if (v !== undefined) return boolValue(v, name);
  }
  return fallback;
}

/** A comma list of attribute keys; an empty value means none (unlike unset, which is the default). */
function keyList(env: Env, name: string, fallback: readonly string[]): readonly string[] {
  const raw = env[name];
  if (raw === undefined) return fallback;
  const keys = raw
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
  for (const k of keys) {
    if (/[\s=]/.test(k))
      throw new ConfigError(`${name} has "${k}"; give attribute keys like team.id,cost_center`);
  }
  return [...new Set(keys)];
}

export function resolveTeamsConfig(
  flags: TeamsFlags,
  env: Env,
  account: () => string | undefined = osUser,
): TeamsConfig {
  // Set and empty leaves the user out; unset means the OS account.
  const userRaw = env.CLINE_OTEL_USER;
  const user = userRaw === undefined ? account() : userRaw.trim() === "" ? undefined : userRaw.trim();
  const repository = flag(env, ["CLINE_OTEL_REPOSITORY"], false);
  return Object.freeze({
    user,
    copyResourceAttributes: Object.freeze(
      keyList(env, "CLINE_OTEL_COPY_RESOURCE_ATTRIBUTES", DEFAULT_COPY_RESOURCE_ATTRIBUTES),
    ),
    repository,
    metrics: Object.freeze({
      // The flag, then Claude Code's name, then ours (kept from before). On by default, as Claude
      // Code's OTEL_METRICS_INCLUDE_SESSION_ID is; a team's shared backend turns it off (per-session
      // series are ~11x the series: docs/metrics.md "Cardinality"), events and spans keep it.
      sessionId:
        flags.sessionId ??
        flag(env, ["OTEL_METRICS_INCLUDE_SESSION_ID", "CLINE_OTEL_INCLUDE_SESSION_ID"], true),
      project: flag(env, ["OTEL_METRICS_INCLUDE_PROJECT"], true),
      repository: repository && flag(env, ["OTEL_METRICS_INCLUDE_REPOSITORY"], true),
      user: flag(env, ["OTEL_METRICS_INCLUDE_USER"], true),
    }),
  });
}
