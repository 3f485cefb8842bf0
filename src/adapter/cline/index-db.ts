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
import { type IndexRow, openImage, type QueryOutcome, queryIndex } from "./index-query.ts";
import {
  errnoOf,
  hasHotJournal,
  messageOf,
  type Retried,
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
  /** How it was read: always an in-memory image here; "none" when nothing could be read. */
  readonly strategy: "live-wal" | "in-memory" | "private-copy" | "none";
  /** One line naming the file and the fix, when status != ok (or when rows were skipped). */
  readonly problem?: string;
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

function corrupt(dbPath: string, e: unknown): IndexReadResult {
  return failure(
    "corrupt",
    dbPath,
    `${dbPath} is not a readable SQLite database (${errnoOf(e) ?? "error"}: ${messageOf(e)}); restore it or let Cline recreate it; ${WALK_NOTE}`,
    "in-memory",
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
  if (hot) {
    return failure(
      "locked",
      dbPath,
      `${dbPath}-journal holds an unfinished transaction; it is read again once Cline completes or reopens the database`,
    );
  }
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

/**
 * Reads the `sessions` table of `<dbDir>/sessions.db` (committed rows, including those only in
 * `sessions.db-wal`). Creates, locks and modifies nothing on disk; never rejects.
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
    let taken: Retried<Snapshot> | undefined;
    try {
      taken = await retryUntil(() => trySnapshot(dbPath, walPath), timeoutMs);
    } catch (e) {
      return ioFailure(dbPath, e);
    }
    if (taken.value === null) {
      return failure(
        "locked",
        dbPath,
        `${dbPath} kept changing while being read (${taken.attempts} attempts in ${timeoutMs} ms: Cline is checkpointing); it is read again on the next scan`,
      );
    }
    const opened = openSnapshot(dbPath, walPath, taken.value);
    // The snapshot's buffers (the whole index, twice with a WAL) are garbage from here on, before
    // the rows are built: SQLite holds its own copy of the image.
    taken = undefined;
    if (!("conn" in opened)) return opened;
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
        "in-memory",
      );
    }
    const result: IndexReadResult = { status: "ok", dbPath, rows: outcome.rows, strategy: "in-memory" };
    return outcome.skipped === 0
      ? result
      : { ...result, problem: `${dbPath}: skipped ${outcome.skipped} sessions rows without a session_id` };
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
): IndexReader {
  let last: { key: string; dbDir: string; at: number; result: Promise<IndexReadResult> } | undefined;
  return async (dbDir) => {
    const db = join(dbDir, SESSIONS_DB);
    const key = `${statKey(db)}|${statKey(`${db}-wal`)}`;
    if (last !== undefined && last.dbDir === dbDir && last.key === key) {
      const cached = await last.result;
      if (cached.status === "ok" || now() - last.at < FAILED_READ_REUSE_MS) return cached;
    }
    const entry = { key, dbDir, at: now(), result: Promise.resolve(read(dbDir)) };
    last = entry;
    return entry.result;
  };
}
