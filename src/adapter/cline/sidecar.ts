import { statSync } from "node:fs";
import { join } from "node:path";
import { isWrongType } from "../../scan/schema.ts";
import type { ListingMemo } from "../listings.ts";
import type { Problem } from "../types.ts";
import { statKey } from "./index-db.ts";
import { sidecarSchema } from "./schema.ts";

/** One sidecar's cwd, with the key (size, mtime, inode) of the sidecar it was read from. */
export interface SidecarEntry {
  readonly key: string;
  readonly cwd: string | undefined;
}

/** Sidecar cwds remembered across passes, by sidecar path (a Map will do). */
export interface SidecarCache {
  get(path: string): SidecarEntry | undefined;
  set(path: string, entry: SidecarEntry): unknown;
}

/**
 * A SidecarCache kept in a listing memo (src/adapter/listings.ts): with the ledger's store, an
 * unindexed session's cwd outlives the process, and a later one stats the sidecar instead of
 * scanning it. The memo's mark is the sidecar's key; entries are "" (no cwd) or "=" + cwd.
 */
export function persistedSidecars(memo: ListingMemo): SidecarCache {
  return {
    get(path) {
      const l = memo.get(path);
      return l === undefined
        ? undefined
        : { key: l.mark, cwd: l.entries === "" ? undefined : l.entries.slice(1) };
    },
    set(path, e) {
      memo.put(path, { mark: e.key, takenMs: memo.now(), entries: e.cwd === undefined ? "" : `=${e.cwd}` });
    },
  };
}

function regularFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    // Absent (sub-agent folders have none) or unreadable: no sidecar; a read problem is the scan's.
    return false;
  }
}

/**
 * The project of a root session from its sidecar `<sessionDir>/<rootId>.json`: `cwd` only
 * (docs/cline-format.md §5.1), read with the allow-list scanner, so the prompt and the running
 * totals in `metadata` are never decoded. Undefined when there is no sidecar or no cwd. A torn
 * or unreadable sidecar is a problem and is not cached (tried again next time). With a cache, a
 * sidecar is scanned again only when its size, mtime or inode changed.
 */
export async function readSidecarCwd(
  sessionDir: string,
  rootId: string,
  problems: Problem[],
  cache?: SidecarCache,
): Promise<string | undefined> {
  const path = join(sessionDir, `${rootId}.json`);
  const key = cache === undefined ? "" : statKey(path);
  const hit = cache?.get(path);
  if (hit !== undefined && hit.key === key) return hit.cwd;
  let cwd: string | undefined;
  if (regularFile(path)) {
    // The scanner is loaded when a sidecar is read: `paths` on a tree without one never needs it.
    const { scanFile } = await import("../../scan/scanner.ts");
    try {
      const v = (await scanFile(path, sidecarSchema)).value;
      cwd = v !== undefined && !isWrongType(v) && typeof v.cwd === "string" ? v.cwd : undefined;
    } catch (e) {
      problems.push({ path, code: "unreadable-sidecar", detail: (e as Error).message });
      return undefined;
    }
  }
  cache?.set(path, { key, cwd });
  return cwd;
}
