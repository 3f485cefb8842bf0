/**
 * The floor of an idle pass: noticing that nothing changed takes at least a readdir of the
 * sessions directory, a readdir of each session directory and a stat of each document
 * (nanosecond mtime, size, inode: what a checkpoint compares).
 */
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";

const SUFFIX = ".messages.json";

/** Returns the number of documents stat'ed. */
export function statWalk(sessionsDir: string): number {
  let n = 0;
  for (const d of readdirSync(sessionsDir, { withFileTypes: true })) {
    if (!d.isDirectory()) continue;
    const dir = join(sessionsDir, d.name);
    for (const f of readdirSync(dir)) {
      if (!f.endsWith(SUFFIX)) continue;
      statSync(join(dir, f), { bigint: true });
      n++;
    }
  }
  return n;
}
