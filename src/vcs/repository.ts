/**
 * The `vcs.*` attributes of a session's workspace (OTel VCS semantic conventions). Only what `parseRemote` rebuilt from host and path is kept: the
 * raw remote URL (credentials and all) never leaves `lookup`.
 */
import { readGitRemote } from "./git-dir.ts";
import { parseRemote } from "./remote-url.ts";

export const VCS_ATTR = {
  url: "vcs.repository.url.full",
  name: "vcs.repository.name",
  owner: "vcs.owner.name",
  /** The branch HEAD names when the record is exported (events and spans only). */
  branch: "vcs.ref.head.name",
} as const;

/** The keys that may go on metric series (the branch does not: it would split every series). */
export const VCS_SERIES_KEYS = [VCS_ATTR.url, VCS_ATTR.name, VCS_ATTR.owner] as const;

export interface RepositoryAttributes {
  /** url, name, owner: empty when the workspace has no (usable) remote. */
  readonly series: Readonly<Record<string, string>>;
  /** `series` plus the branch, where HEAD names one. */
  readonly all: Readonly<Record<string, string>>;
}

export const NONE: RepositoryAttributes = Object.freeze({
  series: Object.freeze({}),
  all: Object.freeze({}),
});

export type RepositoryLookup = (workspace: string) => RepositoryAttributes;

/** What one workspace's git files say, credentials stripped; nothing when there is no remote. */
export function repositoryAttributes(workspace: string): RepositoryAttributes {
  if (workspace === "") return NONE;
  const remote = readGitRemote(workspace);
  const repo = remote.url === undefined ? undefined : parseRemote(remote.url);
  const series: Record<string, string> = {};
  if (repo !== undefined) {
    series[VCS_ATTR.url] = repo.url;
    series[VCS_ATTR.name] = repo.name;
    if (repo.owner !== "") series[VCS_ATTR.owner] = repo.owner;
  }
  const all: Record<string, string> = { ...series };
  if (remote.branch !== undefined) all[VCS_ATTR.branch] = remote.branch;
  return Object.freeze({ series: Object.freeze(series), all: Object.freeze(all) });
}
