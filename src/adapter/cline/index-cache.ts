/**
 * The session index, remembered across processes: what `readSessionIndex` last read, kept in the
 * ledger's listings (src/adapter/listings.ts, scope INDEX_SCOPE) with the marks of `sessions.db`
 * and its `-wal`, so a process that finds both unchanged stats two files instead of reading and
 * deserializing the database (5.6 MB at 10,000 sessions) and querying it.
 *
 * Why the marks are enough: every commit of Cline's changes a file's size, mtime or ctime (a WAL
 * append, a checkpoint into the database, a WAL restart or delete), and ctime is set by the kernel
 * on every write. The listings' two traps apply the same way: a read taken less than
 * LISTING_CONFIRM_MS after either file last changed is not stored (a change within the same clock
 * tick would leave the marks equal), and marks compare for equality, never "newer than".
 * Only whole reads are kept (status ok): a locked, corrupt or missing index is read again.
 */
import { statSync } from "node:fs";
import { join } from "node:path";
import { LISTING_CONFIRM_MS, type ListingStore, loadListing } from "../listings.ts";
import { type IndexReadResult, type IndexRow, readSessionIndex, SESSIONS_DB } from "./index-db.ts";

/** Listing scope of the remembered index: one entry, keyed by the database's path. */
export const INDEX_SCOPE = "cline.index";

/** A file's identity and change times as one string, with its last change (ms); absent: the code. */
export function fileMark(path: string): { readonly mark: string; readonly changedMs: number } {
  try {
    const s = statSync(path, { throwIfNoEntry: false });
    if (s === undefined) return { mark: "ENOENT", changedMs: Number.NEGATIVE_INFINITY };
    return {
      mark: `${s.dev}:${s.ino}:${s.size}:${s.mtimeMs}:${s.ctimeMs}`,
      changedMs: Math.max(s.mtimeMs, s.ctimeMs),
    };
  } catch (e) {
    // No WAL right now (Cline's last connection closed), or unreadable: the code is the mark,
    // and the read that follows reports a real failure.
    return { mark: String((e as NodeJS.ErrnoException).code), changedMs: Number.NEGATIVE_INFINITY };
  }
}

/**
 * Stored form: `[3, problem, strings, cells]`: the read's problem line (or null), every distinct
 * text once, and ten integers per row (an index into `strings`, -1 for null; `isSubagent` as
 * 0/1), in IndexRow's field order. A project, model or provider repeated over thousands of
 * sessions is one string (parsed once, shared by the rows): a third of the bytes of a row per
 * object, parsed three times as fast.
 */
// 3: `source` added; an entry of an older format is not this one's, so its rows are read again.
const FORMAT = 3;
const FIELDS = 10;
const SUBAGENT = 3;

export function encodeIndex(result: IndexReadResult): string {
  const ids = new Map<string, number>();
  const strings: string[] = [];
  const id = (v: string | null): number => {
    if (v === null) return -1;
    let i = ids.get(v);
    if (i === undefined) {
      i = strings.length;
      strings.push(v);
      ids.set(v, i);
    }
    return i;
  };
  const cells: number[] = [];
  for (const r of result.rows) {
    cells.push(
      id(r.sessionId),
      id(r.messagesPath),
      id(r.cwd),
      r.isSubagent ? 1 : 0,
      id(r.parentSessionId),
      id(r.agentId),
      id(r.provider),
      id(r.model),
      id(r.startedAt),
      id(r.source),
    );
  }
  return JSON.stringify([FORMAT, result.problem ?? null, strings, cells]);
}

/**
 * The stored read, or undefined when the entry is not one this version wrote whole (then the
 * index is simply read again, and the entry replaced).
 */
export function decodeIndex(dbPath: string, stored: string): IndexReadResult | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(stored);
  } catch (e) {
    if (e instanceof SyntaxError) return undefined;
    throw e;
  }
  if (!Array.isArray(parsed) || parsed.length !== 4 || parsed[0] !== FORMAT) return undefined;
  const [, problem, strings, cells] = parsed as [unknown, unknown, unknown, unknown];
  if (!(problem === null || typeof problem === "string")) return undefined;
  if (!Array.isArray(strings) || !strings.every((v) => typeof v === "string")) return undefined;
  if (!Array.isArray(cells) || cells.length % FIELDS !== 0) return undefined;
  const n = strings.length;
  for (let k = 0; k < cells.length; k++) {
    const c = cells[k];
    const ok =
      k % FIELDS === SUBAGENT
        ? c === 0 || c === 1
        : Number.isInteger(c) && c >= (k % FIELDS === 0 ? 0 : -1) && c < n;
    if (!ok) return undefined;
  }
  const text = (i: number): string | null => (i < 0 ? null : (strings[i] as string));
  const rows: IndexRow[] = [];
  for (let k = 0; k < cells.length; k += FIELDS) {
    const c = cells as number[];
    rows.push({
      sessionId: strings[c[k] as number] as string,
      messagesPath: text(c[k + 1] as number),
      cwd: text(c[k + 2] as number),
      isSubagent: c[k + SUBAGENT] === 1,
      parentSessionId: text(c[k + 4] as number),
      agentId: text(c[k + 5] as number),
      provider: text(c[k + 6] as number),
      model: text(c[k + 7] as number),
      startedAt: text(c[k + 8] as number),
      source: text(c[k + 9] as number),
    });
  }
  return { status: "ok", dbPath, rows, strategy: "remembered", ...(problem !== null ? { problem } : {}) };
}

/**
 * `read` (readSessionIndex) remembered in `store`: answered from the store while the marks of
 * `sessions.db` and `sessions.db-wal` equal those stored with a confirmed read. A failed save
 * costs the next process a read, never a row: it is returned as `cacheProblem`, reported by
 * discovery.
 */
export function persistedIndexRead(
  store: ListingStore,
  read: (dbDir: string) => IndexReadResult | Promise<IndexReadResult> = readSessionIndex,
  now: () => number = Date.now,
): (dbDir: string) => Promise<IndexReadResult> {
  // The store itself, not a memo: a daemon asks again only when the files changed, and keeps no
  // copy of the stored entry (megabytes at 10,000 sessions) between those times.
  return async (dbDir) => {
    const dbPath = join(dbDir, SESSIONS_DB);
    // Taken before the stats: a change after them is stamped later than this (see listings.ts).
    const takenMs = now();
    const db = fileMark(dbPath);
    const wal = fileMark(`${dbPath}-wal`);
    const mark = `${db.mark}|${wal.mark}`;
    const changedMs = Math.max(db.changedMs, wal.changedMs);
    const stored = loadListing(store, INDEX_SCOPE, dbPath);
    if (stored !== undefined && stored.mark === mark && stored.takenMs - changedMs >= LISTING_CONFIRM_MS) {
      const remembered = decodeIndex(dbPath, stored.entries);
      if (remembered !== undefined) return remembered;
    }
    const result = await read(dbDir);
    if (result.status !== "ok" || takenMs - changedMs < LISTING_CONFIRM_MS) return result;
    try {
      store.save(INDEX_SCOPE, new Map([[dbPath, { mark, takenMs, entries: encodeIndex(result) }]]), []);
    } catch (e) {
      return { ...result, cacheProblem: `the index read was not remembered: ${(e as Error).message}` };
    }
    return result;
  };
}
