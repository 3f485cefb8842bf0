/**
 * A git remote URL -> the OTel `vcs.*` attributes, with every credential dropped first. Remotes
 * carry tokens (`https://user:token@host/...`, `ssh://user:pw@host/...`, `?private_token=...`):
 * only the host and the path are kept, so nothing secret can reach the ledger, a log or a payload.
 */

export interface Repository {
  /** `https://<host>/<path>` without user info, port, query, fragment or `.git`. */
  readonly url: string;
  readonly name: string;
  /** Everything before the name (GitLab subgroups included): `org` or `group/sub`. */
  readonly owner: string;
}

/** scp-like syntax `[user@]host:path` (no scheme; git's own rule: a colon before any slash). */
const SCP_LIKE = /^(?:[^@/]+@)?([^:/]+):(?!\/\/)(.+)$/;

/** Host and path of a remote, or undefined for a local path / unparsable text (nothing to name). */
function hostAndPath(remote: string): { host: string; path: string } | undefined {
  const text = remote.trim();
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) {
    // Unparsable text names no repository.
    if (!URL.canParse(text)) return undefined;
    const u = new URL(text);
    if (u.protocol === "file:" || u.hostname === "") return undefined;
    // u.username / u.password / u.search / u.hash / u.port are dropped here, never copied.
    return { host: u.hostname.toLowerCase(), path: decodePath(u.pathname) };
  }
  const scp = SCP_LIKE.exec(text);
  if (scp === null) return undefined;
  // A Windows drive letter (C:\repo) is a local path, not a host.
  if ((scp[1] as string).length === 1) return undefined;
  return { host: (scp[1] as string).toLowerCase(), path: (scp[2] as string).split(/[?#]/)[0] as string };
}

function decodePath(p: string): string {
  try {
    return decodeURIComponent(p);
  } catch {
    // Not valid percent-encoding: keep the raw path (it is still only a path).
    return p;
  }
}

/** The repository a remote names, or undefined (local path, no path, unparsable). */
export function parseRemote(remote: string): Repository | undefined {
  const hp = hostAndPath(remote);
  if (hp === undefined) return undefined;
  const segments = hp.path
    .split("/")
    .map((s) => s.trim())
    .filter((s) => s !== "" && s !== "." && s !== "..");
  const last = segments.pop();
  if (last === undefined) return undefined;
  const name = last.replace(/\.git$/i, "");
  if (name === "") return undefined;
  const owner = segments.join("/");
  const path = owner === "" ? name : `${owner}/${name}`;
  return { url: `https://${hp.host}/${path}`, name, owner };
}
