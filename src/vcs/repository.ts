/**
 * The `vcs.*` attributes of a session's workspace (OTel VCS semantic conventions), looked up once
 * per workspace path per process. Only what `parseRemote` rebuilt from host and path is kept: the
 * raw remote URL (credentials and all) never leaves `lookup`.
 */
import { readGitRemote } from "./git-dir.ts";
import { parseRemote } from "./remote-url.ts";

export const VCS_ATTR = {
  url: "vcs.repository.url.full",
  name: "vcs.repository.name",
  owner: "vcs.owner.name",
  /** The branch HEAD names when cline-otel first reads the workspace (events and spans only). */
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

const NONE: RepositoryAttributes = Object.freeze({ series: Object.freeze({}), all: Object.freeze({}) });

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

/**
 * A cached lookup (a workspace's repository is read once per process: a series must not change
 * attributes between exports). An unreadable workspace counts as none, reported once through
 * `onError` (the data is still exported, without `vcs.*`).
 */
export function createRepositoryLookup(
  onError: (workspace: string, e: unknown) => void,
  read: (workspace: string) => RepositoryAttributes = repositoryAttributes,
): RepositoryLookup {
  const cache = new Map<string, RepositoryAttributes>();
  return (workspace) => {
    let hit = cache.get(workspace);
    if (hit === undefined) {
      try {
        hit = read(workspace);
      } catch (e) {
        onError(workspace, e);
        hit = NONE;
      }
      cache.set(workspace, hit);
    }
    return hit;
  };
}
