/**
 * A workspace's git remote and branch, read from its git files: git is never run, nothing is
 * written (readFileSync / statSync only). Handles a plain `.git` directory, a `.git` file with
 * `gitdir:` (worktrees and submodules), a worktree's `commondir` (the shared config), and
 * `HEAD` (`ref: refs/heads/<branch>`; a detached HEAD has no branch).
 */
import { readFileSync, type Stats, statSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";

export interface GitFiles {
  /** The worktree's own git dir (its HEAD). */
  readonly gitDir: string;
  /** Where `config` is: the git dir, or a worktree's common dir. */
  readonly commonDir: string;
}

export interface GitRemote {
  /** The remote's raw URL: may hold credentials, strip before use (remote-url.ts). */
  readonly url: string | undefined;
  readonly branch: string | undefined;
}

/** Bytes read of a git file at most: configs are small; a huge one is not worth a read. */
const MAX_FILE = 256 * 1024;

/** Absent (or a file in the way of the path): undefined; any other error is the caller's to report. */
function statOf(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    throw e;
  }
}

function readSmall(path: string): string | undefined {
  const st = statOf(path);
  if (st === undefined || !st.isFile() || st.size > MAX_FILE) return undefined;
  return readFileSync(path, "utf8");
}

function isDir(path: string): boolean {
  return statOf(path)?.isDirectory() ?? false;
}

/** The git dir a `.git` file points at (`gitdir: <path>`, relative to the file's folder). */
function gitDirFromFile(text: string, folder: string): string | undefined {
  const m = /^gitdir:\s*(.+?)\s*$/m.exec(text);
  if (m === null) return undefined;
  const p = m[1] as string;
  return isAbsolute(p) ? p : resolve(folder, p);
}

/** The git files of the repository holding `cwd` (walking up), or undefined outside any. */
export function findGitFiles(cwd: string): GitFiles | undefined {
  if (!isAbsolute(cwd)) return undefined;
  let dir = resolve(cwd);
  for (;;) {
    const dotGit = join(dir, ".git");
    let gitDir: string | undefined;
    if (isDir(dotGit)) gitDir = dotGit;
    else {
      const text = readSmall(dotGit);
      if (text !== undefined) gitDir = gitDirFromFile(text, dir);
    }
    if (gitDir !== undefined) {
      const common = readSmall(join(gitDir, "commondir"))?.trim();
      const commonDir = common === undefined || common === "" ? gitDir : resolve(gitDir, common);
      return { gitDir, commonDir };
    }
    const up = dirname(dir);
    if (up === dir) return undefined;
    dir = up;
  }
}

/**
 * The URL of remote `origin`, else of the first remote, from a git config text. Only the
 * `[remote "..."]` sections' `url` keys are looked at; includes are not followed.
 */
export function remoteUrl(config: string): string | undefined {
  let section: string | undefined;
  const urls = new Map<string, string>();
  for (const raw of config.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#") || line.startsWith(";")) continue;
    const head = /^\[\s*remote\s+"([^"]*)"\s*\]/i.exec(line);
    if (head !== null) {
      section = head[1] as string;
      continue;
    }
    if (line.startsWith("[")) {
      section = undefined;
      continue;
    }
    if (section === undefined || urls.has(section)) continue;
    const kv = /^url\s*=\s*(.*)$/i.exec(line);
    if (kv !== null) urls.set(section, (kv[1] as string).replace(/^"(.*)"$/, "$1").trim());
  }
  return urls.get("origin") ?? urls.values().next().value;
}

/** The branch HEAD names, undefined when detached or unreadable. */
export function headBranch(head: string | undefined): string | undefined {
  const m = head === undefined ? null : /^ref:\s*refs\/heads\/(.+?)\s*$/m.exec(head);
  return m === null ? undefined : (m[1] as string);
}

/** The remote URL and branch of the repository holding `cwd`; both undefined outside a repository. */
export function readGitRemote(cwd: string): GitRemote {
  const files = findGitFiles(cwd);
  if (files === undefined) return { url: undefined, branch: undefined };
  const config = readSmall(join(files.commonDir, "config"));
  return {
    url: config === undefined ? undefined : remoteUrl(config),
    branch: headBranch(readSmall(join(files.gitDir, "HEAD"))),
  };
}
