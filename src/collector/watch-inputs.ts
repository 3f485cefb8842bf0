/**
 * What a DirWatcher refresh depends on, remembered between refreshes, so that the daemon's sweep
 * (a refresh after every pass) costs a stat of each sources root instead of a readdir of it and a
 * rebuild of the whole watched set: at 10,000 task folders that rebuild was ~60 ms of the idle
 * minute's ~350 ms (a CPU profile of the idle daemon), next to a stat walk of 75 ms.
 *
 * A sources root's listing is kept with the root's mark (src/adapter/listings.ts: a new or removed
 * folder changes the root's mtime and ctime) and trusted only once confirmed, i.e. taken at least
 * LISTING_CONFIRM_MS after the root's last change (a change in the same clock tick keeps the mark).
 */
import { readdirSync, statSync } from "node:fs";
import { dirMark, LISTING_CONFIRM_MS, sameMark } from "../adapter/listings.ts";
import { dirPrefix } from "../util/dir-prefix.ts";
import { flatConcat } from "../util/flat.ts";

/** One sources root's folders as last listed, with the root's mark then. */
export interface HeldSubdirectories {
  readonly mark: string;
  /** Wall-clock ms read before the stat that gave `mark`. */
  readonly takenMs: number;
  readonly dirs: readonly string[];
}

/**
 * The folders of `root` (none when it does not exist yet): the held listing when the root's mark
 * is unchanged and the listing confirmed, else a fresh readdir, held in `memo`. `fresh` tells the
 * caller the listing may differ from the last one. Throws readdir's errors but ENOENT/ENOTDIR.
 */
export function rememberedSubdirectories(
  root: string,
  memo: Map<string, HeldSubdirectories>,
  now: () => number = Date.now,
): { readonly dirs: readonly string[]; readonly fresh: boolean } {
  const takenMs = now();
  const s = statSync(root, { throwIfNoEntry: false });
  if (s === undefined || !s.isDirectory()) {
    const had = memo.delete(root);
    return { dirs: [], fresh: had };
  }
  const held = memo.get(root);
  if (
    held !== undefined &&
    held.takenMs - Math.max(s.mtimeMs, s.ctimeMs) >= LISTING_CONFIRM_MS &&
    sameMark(held.mark, s)
  ) {
    return { dirs: held.dirs, fresh: false };
  }
  let dirs: string[];
  try {
    // Held for the daemon's life (30,000 folders: ~1 MB less as flat strings, flatConcat).
    const under = dirPrefix(root);
    dirs = readdirSync(root, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => flatConcat(under, d.name));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== "ENOENT" && code !== "ENOTDIR") throw e;
    memo.delete(root);
    return { dirs: [], fresh: true };
  }
  memo.set(root, { mark: dirMark(s), takenMs, dirs });
  return { dirs, fresh: true };
}

/** Whether two sets of directories hold the same members (the sources' folders of two passes). */
export function sameDirSet(prev: ReadonlySet<string> | undefined, next: ReadonlySet<string>): boolean {
  // The same set object: the loop hands the last one on while its discovery found the same sources.
  if (prev === next) return true;
  if (prev === undefined || prev.size !== next.size) return false;
  for (const d of next) if (!prev.has(d)) return false;
  return true;
}
