/**
 * Reads Cline's `<db>/sessions.db` discovery index without touching anything on disk.
 *
 * Why not a read-only SQLite connection on Cline's file: opening a WAL-mode database whose `-wal`
 * and `-shm` are absent makes SQLite CREATE both (even with SQLITE_OPEN_READONLY), `-wal` without
 * `-shm` creates `-shm`, and checking for them first is a race (Cline's last connection deletes
 * them on close, between our check and SQLite's own). So no connection to Cline's file is ever
 * made. Instead the committed state is rebuilt in memory, exactly as SQLite's WAL recovery does:
 *   1. snapshot the bytes of `sessions.db` and `sessions.db-wal` (O_RDONLY; `-shm` is never opened);
 *   2. apply every WAL frame up to the last valid commit frame (salts and cumulative checksums
 *      verified, frames of uncommitted or torn transactions ignored) onto the database image;
 *   3. mark the image as rollback-mode (header bytes 18/19 := 1) and deserialize it into an
 *      in-memory, read-only better-sqlite3 connection; select the index columns by name.
 * A snapshot is retried when the WAL header or the database file changed while it was read (a
 * checkpoint or WAL restart ran concurrently): within one WAL generation every page a checkpoint
 * writes to the database is also in the WAL read afterwards, so the overlay hides torn pages.
 */
import { statSync } from "node:fs";
import { join } from "node:path";
import type Database from "better-sqlite3";
import { type CopySnapshot, prepareCopy, privateCopyDir, tryCopySnapshot } from "./index-copy.ts";
import { type IndexRow, openImage, type QueryOutcome, queryIndex } from "./index-query.ts";
import {
  errnoOf,
  hasHotJournal,
  messageOf,
  type Retried,
  readHead,
  retryUntil,
  type Snapshot,
  trySnapshot,
} from "./index-snapshot.ts";
import { applyWal } from "./index-wal.ts";

export { type IndexRow, SELECTED_COLUMNS } from "./index-query.ts";
export { type FileMark, type Retried, retryUntil, snapshotIsConsistent } from "./index-snapshot.ts";
export { applyWal, type WalReplay } from "./index-wal.ts";

export type IndexStatus = "ok" | "missing" | "locked" | "corrupt" | "unreadable" | "no-sessions-table";

export interface IndexReadResult {
  readonly status: IndexStatus;
  readonly dbPath: string;
  readonly rows: readonly IndexRow[];
  /** How it was read: a private copy on disk, else an image in memory; "none" when nothing could be read. */
  readonly strategy: "private-copy" | "in-memory" | "remembered" | "none";
  /** One line naming the file and the fix, when status != ok (or when rows were skipped). */
  readonly problem?: string;
  /**
   * Set when the index could not be read from a private copy (readFromCopy), only from memory, or
   * when a killed read's copy could not be removed.
   */
  readonly copyProblem?: string;
  /** Set when a read could not be remembered for the next process (index-cache.ts). */
  readonly cacheProblem?: string;
}

export const SESSIONS_DB = "sessions.db";

/** Default bound on retrying a snapshot that a concurrent checkpoint kept invalidating. */
const DEFAULT_BUSY_TIMEOUT_MS = 2000;

const WALK_NOTE = "sessions are still found by walking the sessions directory";

function failure(
  status: Exclude<IndexStatus, "ok">,
  dbPath: string,
  problem: string,
  strategy: IndexReadResult["strategy"] = "none",
): IndexReadResult {
  return { status, dbPath, rows: [], strategy, problem };
}

function ioFailure(dbPath: string, e: unknown): IndexReadResult {
  const code = errnoOf(e);
  // Name the file that failed (it may be the -wal or -journal), not just the database.
  const path =
    typeof e === "object" && e !== null && "path" in e && typeof e.path === "string" ? e.path : dbPath;
  if (code === "ENOENT") {
    return failure("missing", dbPath, `${path} does not exist (Cline has not run yet here?); ${WALK_NOTE}`);
  }
  const fix =
    code === "EACCES" || code === "EPERM"
      ? "grant this user read permission on it and its -wal file"
      : code === "EISDIR"
        ? "it is a directory, not a database; check CLINE_DB_DATA_DIR"
        : "check the file and the disk";
  return failure("unreadable", dbPath, `cannot read ${path} (${code ?? messageOf(e)}): ${fix}; ${WALK_NOTE}`);
}

function corrupt(
  dbPath: string,
  e: unknown,
  strategy: IndexReadResult["strategy"] = "in-memory",
): IndexReadResult {
  return failure(
    "corrupt",
    dbPath,
    `${dbPath} is not a readable SQLite database (${errnoOf(e) ?? "error"}: ${messageOf(e)}); restore it or let Cline recreate it; ${WALK_NOTE}`,
    strategy,
  );
}

/**
 * The snapshot as an open in-memory connection (its committed WAL applied), or why not. The
 * snapshot is this read's own, so its database buffer becomes the image when no WAL frame applies
 * (applyWal `owned`); nothing here outlives the call but the connection.
 */
function openSnapshot(
  dbPath: string,
  walPath: string,
  snap: Snapshot,
): { readonly conn: Database.Database; readonly empty: boolean } | IndexReadResult {
  let hot: boolean;
  try {
    hot = hasHotJournal(dbPath, snap.db);
  } catch (e) {
    return ioFailure(dbPath, e);
  }
  if (hot) return hotJournal(dbPath);
  const empty = snap.db.length === 0;
  const replay = applyWal(snap.db, snap.wal, true);
  if (replay.error !== undefined) {
    return failure("corrupt", dbPath, `${walPath}: ${replay.error}; ${WALK_NOTE}`, "in-memory");
  }
  try {
    return { conn: openImage(replay.image), empty: empty && replay.framesApplied === 0 };
  } catch (e) {
    return corrupt(dbPath, e);
  }
}

function hotJournal(dbPath: string): IndexReadResult {
  return failure(
    "locked",
    dbPath,
    `${dbPath}-journal holds an unfinished transaction; it is read again once Cline completes or reopens the database`,
  );
}

function keptChanging(dbPath: string, attempts: number, timeoutMs: number): IndexReadResult {
  return failure(
    "locked",
    dbPath,
    `${dbPath} kept changing while being read (${attempts} attempts in ${timeoutMs} ms: Cline is checkpointing); it is read again on the next scan`,
  );
}

/** The rows of an open snapshot (closed here), as the read's result. */
function rowsOf(
  dbPath: string,
  opened: { readonly conn: Database.Database; readonly empty: boolean },
  strategy: IndexReadResult["strategy"],
): IndexReadResult {
  let outcome: QueryOutcome;
  try {
    outcome = queryIndex(opened.conn);
  } catch (e) {
    return corrupt(dbPath, e);
  } finally {
    opened.conn.close();
  }
  if (outcome.kind === "no-table") {
    const what = opened.empty ? "is empty (0 bytes) and so " : "";
    return failure(
      "no-sessions-table",
      dbPath,
      `${dbPath} ${what}${outcome.why}: not a Cline CLI session index (or not written yet); ${WALK_NOTE}`,
      strategy,
    );
  }
  const result: IndexReadResult = { status: "ok", dbPath, rows: outcome.rows, strategy };
  return outcome.skipped === 0
    ? result
    : { ...result, problem: `${dbPath}: skipped ${outcome.skipped} sessions rows without a session_id` };
}

/** The index from an image in memory (the snapshot's bytes, its WAL applied). */
async function readFromImage(dbPath: string, walPath: string, timeoutMs: number): Promise<IndexReadResult> {
  let taken: Retried<Snapshot> | undefined;
  try {
    taken = await retryUntil(() => trySnapshot(dbPath, walPath), timeoutMs);
  } catch (e) {
    return ioFailure(dbPath, e);
  }
  if (taken.value === null) return keptChanging(dbPath, taken.attempts, timeoutMs);
  const opened = openSnapshot(dbPath, walPath, taken.value);
  // The snapshot's buffers (the whole index, twice with a WAL) are garbage from here on, before
  // the rows are built: SQLite holds its own copy of the image.
  taken = undefined;
  if (!("conn" in opened)) return opened;
  return rowsOf(dbPath, opened, "in-memory");
}

/** Why no private copy was read (readFromCopy): the index is then read in memory, the same rows. */
interface NoCopy {
  readonly noCopy: string;
}

/**
 * The index from a private copy on disk (index-copy.ts), or why none could be made or prepared
 * (no writable temp dir, a full disk, or Cline's file itself unreadable): the caller then reads it
 * in memory, which also names any fault of Cline's own files.
 */
async function readFromCopy(
  dbPath: string,
  walPath: string,
  timeoutMs: number,
): Promise<IndexReadResult | NoCopy> {
  let scratch: ReturnType<typeof privateCopyDir>;
  try {
    scratch = privateCopyDir();
  } catch (e) {
    return { noCopy: `no private temp dir (${errnoOf(e) ?? messageOf(e)})` };
  }
  const leftovers = scratch.stale;
  try {
    const copy = join(scratch.dir, SESSIONS_DB);
    let taken: Retried<CopySnapshot>;
    try {
      taken = await retryUntil(() => tryCopySnapshot(dbPath, walPath, copy), timeoutMs);
    } catch (e) {
      return { noCopy: `copying it to ${scratch.dir} failed (${errnoOf(e) ?? messageOf(e)})` };
    }
    if (taken.value === null) return keptChanging(dbPath, taken.attempts, timeoutMs);
    const head = readHead(copy, 20) ?? Buffer.alloc(0);
    let hot: boolean;
    try {
      hot = hasHotJournal(dbPath, head);
    } catch (e) {
      return ioFailure(dbPath, e);
    }
    if (hot) return hotJournal(dbPath);
    let replay: { framesApplied: number; error?: string };
    try {
      replay = prepareCopy(taken.value);
    } catch (e) {
      return { noCopy: `writing the WAL onto the copy failed (${errnoOf(e) ?? messageOf(e)})` };
    }
    if (replay.error !== undefined) {
      return failure("corrupt", dbPath, `${walPath}: ${replay.error}; ${WALK_NOTE}`, "private-copy");
    }
    let conn: Database.Database;
    try {
      conn = openImage(copy);
    } catch (e) {
      return corrupt(dbPath, e, "private-copy");
    }
    const result = rowsOf(
      dbPath,
      { conn, empty: head.length === 0 && replay.framesApplied === 0 },
      "private-copy",
    );
    return leftovers.length === 0
      ? result
      : {
          ...result,
          copyProblem: `copies of the index left by killed reads could not be removed: ${leftovers.join(", ")}; remove them`,
        };
  } finally {
    scratch.dispose();
  }
}

/**
 * Reads the `sessions` table of `<dbDir>/sessions.db` (committed rows, including those only in
 * `sessions.db-wal`). Creates, locks and modifies nothing under Cline's directories; never rejects.
 */
export async function readSessionIndex(
  dbDir: string,
  opts?: { busyTimeoutMs?: number },
): Promise<IndexReadResult> {
  const dbPath = join(dbDir, SESSIONS_DB);
  const walPath = `${dbPath}-wal`;
  try {
    try {
      if (!statSync(dbDir).isDirectory()) {
        return failure(
          "missing",
          dbPath,
          `${dbPath}: ${dbDir} is not a directory; point CLINE_DB_DATA_DIR at Cline's db dir`,
        );
      }
    } catch (e) {
      if (errnoOf(e) === "ENOENT") {
        return failure(
          "missing",
          dbPath,
          `${dbPath}: directory ${dbDir} does not exist (Cline has not run yet?); ${WALK_NOTE}`,
        );
      }
      return ioFailure(dbPath, e);
    }
    const timeoutMs = Math.max(0, opts?.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS);
    const fromCopy = await readFromCopy(dbPath, walPath, timeoutMs);
    if (!("noCopy" in fromCopy)) return fromCopy;
    const inMemory = await readFromImage(dbPath, walPath, timeoutMs);
    // Said only when the image read, so the copy's failure was ours (the temp dir), not Cline's file.
    return inMemory.status === "ok" || inMemory.status === "no-sessions-table"
      ? {
          ...inMemory,
          copyProblem: `${fromCopy.noCopy}; read in memory instead (the same rows, the index's size more memory): point TMPDIR at a writable directory`,
        }
      : inMemory;
  } catch (e) {
    // Last resort so the caller never sees an exception; the message says what went wrong.
    return failure(
      "unreadable",
      dbPath,
      `reading ${dbPath} failed unexpectedly: ${messageOf(e)}; ${WALK_NOTE}`,
    );
  }
}

/** Reads the index of a db dir; tests substitute synchronous fakes. */
export type IndexReader = (dbDir: string) => Promise<IndexReadResult>;

/** An IndexReader that keeps its last read; `forget` lets it go (the next call reads again). */
export type CachedIndexReader = IndexReader & { readonly forget: () => void };

/** A file's size, mtime and inode as one string (or the errno code): a change key. */
export function statKey(path: string): string {
  try {
    // No throw for the common absence (a sub-agent folder has no sidecar; no WAL between Cline's
    // runs): an exception costs ~30 µs here, the stat ~5.
    const s = statSync(path, { bigint: true, throwIfNoEntry: false });
    if (s === undefined) return "ENOENT";
    return `${s.size}:${s.mtimeNs}:${s.ino}`;
  } catch (e) {
    // Absent (no WAL right now) or unreadable: the code is part of the key, the read reports it.
    return String(errnoOf(e));
  }
}

/** The stat keys of a db dir's `sessions.db` and its WAL: the same keys, the same rows. */
export function indexKey(dbDir: string): string {
  const db = join(dbDir, SESSIONS_DB);
  return `${statKey(db)}|${statKey(`${db}-wal`)}`;
}

/** How long a failed read (locked, corrupt, ...) of an unchanged index is reused: one pass. */
const FAILED_READ_REUSE_MS = 1000;

/**
 * The one index reader of a process: re-reads `sessions.db` only when it or its WAL changed
 * (size, mtime, inode), so neither an idle pass nor a second surface (the captures' session
 * join) rebuilds the index. A failed read is retried on the next pass, not by the other surface
 * of the same pass. Concurrent callers share one read.
 */
export function cachedIndexReader(
  read: (dbDir: string) => IndexReadResult | Promise<IndexReadResult> = readSessionIndex,
  now: () => number = Date.now,
): CachedIndexReader {
  let last: { key: string; dbDir: string; at: number; result: Promise<IndexReadResult> } | undefined;
  const reader: IndexReader = async (dbDir) => {
    const key = indexKey(dbDir);
    if (last !== undefined && last.dbDir === dbDir && last.key === key) {
      const cached = await last.result;
      if (cached.status === "ok" || now() - last.at < FAILED_READ_REUSE_MS) return cached;
    }
    const entry = { key, dbDir, at: now(), result: Promise.resolve(read(dbDir)) };
    last = entry;
    return entry.result;
  };
  return Object.assign(reader, {
    forget: () => {
      last = undefined;
    },
  });
}
