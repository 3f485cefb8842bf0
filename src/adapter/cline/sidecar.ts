import { statSync } from "node:fs";
import { join } from "node:path";
import { isWrongType } from "../../scan/schema.ts";
import type { ListingMemo } from "../listings.ts";
import type { Problem } from "../types.ts";
import { statKey } from "./index-db.ts";
import { sidecarSchema } from "./schema.ts";

/** What a sidecar says of its session: the project and the writer's label (raw, see client.ts). */
export interface SidecarFacts {
  readonly cwd: string | undefined;
  readonly source: string | undefined;
}

/** One sidecar's facts, with the key (size, mtime, inode) of the sidecar they were read from. */
export interface SidecarEntry extends SidecarFacts {
  readonly key: string;
}

/** Sidecar cwds remembered across passes, by sidecar path (a Map will do). */
export interface SidecarCache {
  get(path: string): SidecarEntry | undefined;
  set(path: string, entry: SidecarEntry): unknown;
}

/**
 * A SidecarCache kept in a listing memo (src/adapter/listings.ts): with the ledger's store, an
 * unindexed session's cwd outlives the process, and a later one stats the sidecar instead of
 * scanning it. The memo's mark is the sidecar's key; entries are the JSON `[cwd, source]` (null
 * for absent). An entry of the older form ("" or "=" + cwd, no source) is a miss: scanned again.
 */
export function persistedSidecars(memo: ListingMemo): SidecarCache {
  return {
    get(path) {
      const l = memo.get(path);
      if (l === undefined) return undefined;
      const facts = decodeFacts(l.entries);
      return facts === undefined ? undefined : { key: l.mark, ...facts };
    },
    set(path, e) {
      memo.put(path, {
        mark: e.key,
        takenMs: memo.now(),
        entries: JSON.stringify([e.cwd ?? null, e.source ?? null]),
      });
    },
  };
}

function decodeFacts(entries: string): SidecarFacts | undefined {
  if (!entries.startsWith("[")) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(entries);
  } catch (e) {
    // A damaged entry is a miss (the sidecar is scanned again), never a wrong project.
    if (e instanceof SyntaxError) return undefined;
    throw e;
  }
  const field = (x: unknown): string | undefined | null =>
    x === null ? undefined : typeof x === "string" ? x : null;
  if (!Array.isArray(v) || v.length !== 2) return undefined;
  const cwd = field(v[0]);
  const source = field(v[1]);
  return cwd === null || source === null ? undefined : { cwd, source };
}

function regularFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    // Absent (sub-agent folders have none) or unreadable: no sidecar; a read problem is the scan's.
    return false;
  }
}

const NOTHING: SidecarFacts = { cwd: undefined, source: undefined };

/**
 * The project and source of a root session from its sidecar `<sessionDir>/<rootId>.json`: `cwd`
 * and `source` only (docs/cline-format.md §5.1), read with the allow-list scanner, so the prompt
 * and the running totals in `metadata` are never decoded. Each undefined when there is no sidecar
 * or no such field. A torn or unreadable sidecar is a problem and is not cached (tried again next
 * time). With a cache, a sidecar is scanned again only when its size, mtime or inode changed.
 */
export async function readSidecar(
  sessionDir: string,
  rootId: string,
  problems: Problem[],
  cache?: SidecarCache,
): Promise<SidecarFacts> {
  const path = join(sessionDir, `${rootId}.json`);
  const key = cache === undefined ? "" : statKey(path);
  const hit = cache?.get(path);
  if (hit !== undefined && hit.key === key) return { cwd: hit.cwd, source: hit.source };
  let facts = NOTHING;
  if (regularFile(path)) {
    // The scanner is loaded when a sidecar is read: `paths` on a tree without one never needs it.
    const { scanFile } = await import("../../scan/scanner.ts");
    try {
      const v = (await scanFile(path, sidecarSchema)).value;
      if (v !== undefined && !isWrongType(v)) {
        facts = {
          cwd: typeof v.cwd === "string" ? v.cwd : undefined,
          source: typeof v.source === "string" ? v.source : undefined,
        };
      }
    } catch (e) {
      problems.push({ path, code: "unreadable-sidecar", detail: (e as Error).message });
      return NOTHING;
    }
  }
  cache?.set(path, { key, ...facts });
  return facts;
}
