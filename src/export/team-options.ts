/**
 * The teams settings (src/config/teams.ts) as the metric producers and the events and traces
 * need them: one repository cache shared by all (a workspace read again only when its git files
 * changed, looked at once per collection pass), the copied resource
 * attributes, and what metric series carry (OTEL_METRICS_INCLUDE_*).
 */
import type { Resource } from "@opentelemetry/resources";
import type { ExportConfig } from "../config/config.ts";
import type { Logger } from "../util/log.ts";
import { RepositoryCache } from "../vcs/repository-cache.ts";
import { PRODUCER_ATTRIBUTE } from "./attributes.ts";
import { copiedAttributes, type DataAttributes, metricCopies } from "./team-attributes.ts";
import type { PriceLookup, TranslateOptions } from "./translate.ts";

export interface TeamOptions {
  /** Events and spans: every copied attribute and the repository with its branch. */
  readonly data: DataAttributes;
  readonly translate: (priceOf: PriceLookup) => TranslateOptions;
  /** A collection pass ended: the repositories' git files are looked at again when next asked for. */
  readonly nextPass: () => void;
}

export function teamOptions(
  cfg: Pick<ExportConfig, "teams" | "project" | "includeSessionId">,
  resource: Resource,
  logger: Logger,
): TeamOptions {
  const teams = cfg.teams;
  const copies = copiedAttributes(resource.attributes, teams.copyResourceAttributes);
  const repositories = teams.repository
    ? new RepositoryCache({
        onError: (workspace, e) =>
          // Once per workspace while it fails (the cache keeps the miss): its data goes out without vcs.*.
          logger.warn(`cannot read the git config of ${workspace}: ${(e as Error).message ?? String(e)}`),
      })
    : undefined;
  const repositoryOf = repositories?.lookup;
  const metricCopy = metricCopies(copies, teams);
  return {
    nextPass: () => repositories?.nextPass(),
    data: repositoryOf === undefined ? { constant: copies } : { constant: copies, repositoryOf },
    translate: (priceOf) => ({
      // OTEL_METRICS_INCLUDE_PROJECT=false: no project on series; events and spans keep it.
      project: teams.metrics.project ? cfg.project : "none",
      includeSessionId: cfg.includeSessionId,
      priceOf,
      // The producer last: a copied resource attribute of that name cannot change what queries select.
      constant: { ...metricCopy, ...PRODUCER_ATTRIBUTE },
      ...(teams.metrics.repository && repositoryOf !== undefined ? { repositoryOf } : {}),
    }),
  };
}
