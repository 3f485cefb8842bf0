import { createHash } from "node:crypto";
import { lstatSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import { join, relative } from "node:path";

/**
 * A fingerprint of a whole directory tree: every name, type, mode, size, mtime (ns)
 * and content. `-shm` files that already existed are compared by name only: SQLite's
 * reader protocol is the one touch the read-only rule allows on them.
 */
export function treeFingerprint(root: string, opts: { shmByNameOnly?: boolean } = {}): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const p = join(dir, name);
      const st = lstatSync(p, { bigint: true });
      const rel = relative(root, p);
      if (opts.shmByNameOnly && name.endsWith("-shm")) {
        out.set(rel, "shm");
        continue;
      }
      const head = `${st.mode}:${st.size}:${st.mtimeNs}`;
      if (st.isSymbolicLink()) out.set(rel, `${head}:link:${readlinkSync(p)}`);
      else if (st.isDirectory()) {
        out.set(rel, `${head}:dir`);
        walk(p);
      } else out.set(rel, `${head}:${createHash("sha256").update(readFileSync(p)).digest("hex")}`);
    }
  };
  walk(root);
  return out;
}
