import { statSync } from "node:fs";
import { join } from "node:path";
import { scanFile } from "../../scan/scanner.ts";
import { isWrongType } from "../../scan/schema.ts";
import type { Problem } from "../types.ts";
import { statKey } from "./index-db.ts";
import { sidecarSchema } from "./schema.ts";

/** Sidecar cwds remembered across passes, keyed by the sidecar's size, mtime and inode. */
export type SidecarCache = Map<string, { readonly key: string; readonly cwd: string | undefined }>;

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
