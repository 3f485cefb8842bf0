/**
 * Cold reads without touching anything but our own corpus: each file's cached pages are
 * dropped with GNU dd's `iflag=nocache count=0` (posix_fadvise DONTNEED on that file only),
 * after `sync -f` wrote back the freshly generated (dirty, hence undroppable) pages. No global
 * `drop_caches`: other processes on the machine keep their cache.
 */
import { spawnSync } from "node:child_process";

const BATCH = 400;

/** Whether cold runs are possible here (GNU dd with iflag=nocache). */
export function canEvict(): boolean {
  const r = spawnSync("dd", ["if=/dev/null", "iflag=nocache", "count=0", "status=none"]);
  return r.status === 0;
}

/** Writes back and drops the page cache of exactly these files. Throws when dd fails. */
export function evict(files: readonly string[], fsRoot: string): void {
  const s = spawnSync("sync", ["-f", fsRoot]);
  if (s.status !== 0) throw new Error(`sync -f ${fsRoot} failed: ${s.stderr}`);
  for (let i = 0; i < files.length; i += BATCH) {
    const r = spawnSync(
      "sh",
      [
        "-c",
        'for f; do dd if="$f" iflag=nocache count=0 status=none || exit 1; done',
        "evict",
        ...files.slice(i, i + BATCH),
      ],
      { encoding: "utf8" },
    );
    if (r.status !== 0) throw new Error(`dd iflag=nocache failed: ${r.stderr}`);
  }
}
