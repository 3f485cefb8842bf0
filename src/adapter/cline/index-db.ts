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
import { closeSync, openSync, readFileSync, readSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import type Database from "better-sqlite3";

/**
 * better-sqlite3 is required when an index is there to read, not at import: `paths` and a
 * discovery of a machine where Cline never ran load none of its 14 modules.
 */
const requireModule = createRequire(import.meta.url);

export interface IndexRow {
  readonly sessionId: string;
  /** As stored (absolute normally); null when the column is absent or NULL. */
  readonly messagesPath: string | null;
  readonly cwd: string | null;
  readonly isSubagent: boolean;
  readonly parentSessionId: string | null;
  readonly agentId: string | null;
  readonly provider: string | null;
  readonly model: string | null;
  readonly startedAt: string | null;
}

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

const WAL_MAGIC = 0x377f0682;
const WAL_VERSION = 3007000;
const WAL_HEADER_BYTES = 32;
const FRAME_HEADER_BYTES = 24;
const SQLITE_MAGIC = Buffer.from("SQLite format 3\0", "latin1");
const JOURNAL_MAGIC = Buffer.from([0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7]);
/** Refuse to build images beyond this; a real index is a few MB. */
const MAX_IMAGE_BYTES = 1024 * 1024 * 1024;

/**
 * The index columns we read, by name. `metadata_json` and `prompt` are deliberately absent: they
 * hold running usage totals and prompt text, which must never be read.
 */
const TEXT_COLUMNS = {
  messagesPath: "messages_path",
  cwd: "cwd",
  parentSessionId: "parent_session_id",
  agentId: "agent_id",
  provider: "provider",
  model: "model",
  startedAt: "started_at",
} as const;
const SESSION_ID_COLUMN = "session_id";
const IS_SUBAGENT_COLUMN = "is_subagent";

/** Every column name the reader may select; exported so tests can pin the allow-list. */
export const SELECTED_COLUMNS: readonly string[] = [
  SESSION_ID_COLUMN,
  IS_SUBAGENT_COLUMN,
  ...Object.values(TEXT_COLUMNS),
];

export interface WalReplay {
  /** Database image with the committed WAL applied and its header switched to rollback mode. */
  readonly image: Buffer;
  /** Valid WAL frames up to and including the last commit frame. */
  readonly framesApplied: number;
  /** Set when the WAL is a format SQLite itself refuses to open. */
  readonly error?: string;
}

const LITTLE_ENDIAN_HOST = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/** SQLite's WAL checksum (walChecksumBytes): pairs of 32-bit words, accumulated. */
function walChecksum(
  bigEndian: boolean,
  buf: Buffer,
  start: number,
  length: number,
  seed: readonly [number, number],
): [number, number] {
  let s1 = seed[0];
  let s2 = seed[1];
  const at = buf.byteOffset + start;
  if (bigEndian !== LITTLE_ENDIAN_HOST && at % 4 === 0) {
    // Native word order and aligned: a typed-array view is ~5x faster than readUInt32*.
    const words = new Uint32Array(buf.buffer, at, length / 4);
    for (let i = 0; i < words.length; i += 2) {
      s1 = (s1 + (words[i] as number) + s2) >>> 0;
      s2 = (s2 + (words[i + 1] as number) + s1) >>> 0;
    }
    return [s1, s2];
  }
  const end = start + length;
  for (let i = start; i < end; i += 8) {
    const x0 = bigEndian ? buf.readUInt32BE(i) : buf.readUInt32LE(i);
    const x1 = bigEndian ? buf.readUInt32BE(i + 4) : buf.readUInt32LE(i + 4);
    s1 = (s1 + x0 + s2) >>> 0;
    s2 = (s2 + x1 + s1) >>> 0;
  }
  return [s1, s2];
}

/** Bytes 18/19 == 2 mark WAL mode; a deserialized image must say rollback (1) or SQLite refuses it. */
function toRollbackMode(image: Buffer): void {
  if (image.length < 100 || !image.subarray(0, 16).equals(SQLITE_MAGIC)) return;
  if (image[18] === 2) image[18] = 1;
  if (image[19] === 2) image[19] = 1;
}

/**
 * Applies the committed part of a WAL to a database image, mirroring SQLite's walIndexRecover:
 * a bad magic, page size or header checksum means the WAL holds nothing; frames are read in order
 * until the first one whose salt or cumulative checksum fails; only frames up to the last commit
 * frame (non-zero "database size") count, and that commit's size is the database size.
 * Never mutates its inputs.
 */
export function applyWal(db: Buffer, wal: Buffer | null): WalReplay {
  const base = (): WalReplay => {
    const image = Buffer.from(db);
    toRollbackMode(image);
    return { image, framesApplied: 0 };
  };
  if (wal === null || wal.length < WAL_HEADER_BYTES) return base();
  const magic = wal.readUInt32BE(0);
  const pageSize = wal.readUInt32BE(8);
  if (
    (magic & 0xfffffffe) >>> 0 !== WAL_MAGIC ||
    pageSize & (pageSize - 1) ||
    pageSize < 512 ||
    pageSize > 65536
  ) {
    return base();
  }
  const bigEndian = (magic & 1) === 1;
  let sum = walChecksum(bigEndian, wal, 0, 24, [0, 0]);
  if (sum[0] !== wal.readUInt32BE(24) || sum[1] !== wal.readUInt32BE(28)) return base();
  if (wal.readUInt32BE(4) !== WAL_VERSION) {
    return { ...base(), error: `unsupported WAL format version ${wal.readUInt32BE(4)}` };
  }

  const salt = wal.subarray(16, 24);
  const frameBytes = FRAME_HEADER_BYTES + pageSize;
  const frames: { pgno: number; data: number }[] = [];
  let committedFrames = 0;
  let committedPages = 0;
  for (let off = WAL_HEADER_BYTES; off + frameBytes <= wal.length; off += frameBytes) {
    if (!wal.subarray(off + 8, off + 16).equals(salt)) break;
    const pgno = wal.readUInt32BE(off);
    if (pgno === 0) break;
    sum = walChecksum(bigEndian, wal, off, 8, sum);
    sum = walChecksum(bigEndian, wal, off + FRAME_HEADER_BYTES, pageSize, sum);
    if (sum[0] !== wal.readUInt32BE(off + 16) || sum[1] !== wal.readUInt32BE(off + 20)) break;
    frames.push({ pgno, data: off + FRAME_HEADER_BYTES });
    const dbSize = wal.readUInt32BE(off + 4);
    if (dbSize !== 0) {
      committedFrames = frames.length;
      committedPages = dbSize;
    }
  }
  if (committedFrames === 0) return base();
  if (committedPages * pageSize > MAX_IMAGE_BYTES) {
    return { ...base(), error: `WAL commit claims ${committedPages} pages of ${pageSize} bytes` };
  }

  const image = Buffer.alloc(committedPages * pageSize);
  db.copy(image, 0, 0, Math.min(db.length, image.length));
  // Frame order = commit order, so a later frame of the same page wins, as in SQLite's lookup.
  for (let i = 0; i < committedFrames; i++) {
    const f = frames[i] as { pgno: number; data: number };
    if (f.pgno > committedPages) continue;
    wal.copy(image, (f.pgno - 1) * pageSize, f.data, f.data + pageSize);
  }
  toRollbackMode(image);
  return { image, framesApplied: committedFrames };
}

function errnoOf(e: unknown): string | undefined {
  return typeof e === "object" && e !== null && "code" in e && typeof e.code === "string"
    ? e.code
    : undefined;
}

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** Reads the first `n` bytes of an optional file; null when it does not exist. */
function readHead(path: string, n: number): Buffer | null {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (e) {
    if (errnoOf(e) === "ENOENT") return null;
    throw e;
  }
  try {
    const buf = Buffer.alloc(n);
    let got = 0;
    while (got < n) {
      const r = readSync(fd, buf, got, n - got, got);
      if (r === 0) break;
      got += r;
    }
    return buf.subarray(0, got);
  } finally {
    closeSync(fd);
  }
}

function readOptional(path: string): Buffer | null {
  try {
    return readFileSync(path);
  } catch (e) {
    if (errnoOf(e) === "ENOENT") return null;
    throw e;
  }
}

/** The identity and change marks of a file, as `statSync(path, { bigint: true })` gives them. */
export interface FileMark {
  readonly ino: bigint;
  readonly dev: bigint;
  readonly size: bigint;
  readonly mtimeNs: bigint;
  readonly ctimeNs: bigint;
}

/**
 * Whether bytes read between two marks form one consistent snapshot. The essential test is the
 * WAL header (its presence, salts and checksum): within one WAL generation every page a
 * checkpoint writes into the database is also in the WAL read afterwards, so the overlay hides a
 * torn database read; a restart or truncation changes the header and loses that guarantee. An
 * unchanged database file is required as well, which also covers a WAL that came and went.
 */
export function snapshotIsConsistent(
  dbBefore: FileMark,
  dbAfter: FileMark,
  walHeadBefore: Buffer | null,
  walAfter: Buffer | null,
): boolean {
  const sameDb =
    dbBefore.ino === dbAfter.ino &&
    dbBefore.dev === dbAfter.dev &&
    dbBefore.size === dbAfter.size &&
    dbBefore.mtimeNs === dbAfter.mtimeNs &&
    dbBefore.ctimeNs === dbAfter.ctimeNs;
  if (!sameDb) return false;
  if (walHeadBefore === null || walAfter === null) return walHeadBefore === walAfter;
  return walHeadBefore.equals(walAfter.subarray(0, Math.min(walAfter.length, WAL_HEADER_BYTES)));
}

interface Snapshot {
  readonly db: Buffer;
  readonly wal: Buffer | null;
}

/** One attempt at a consistent (db, wal) byte snapshot; null when a writer moved underneath. */
function trySnapshot(dbPath: string, walPath: string): Snapshot | null {
  const before = statSync(dbPath, { bigint: true });
  const head = readHead(walPath, WAL_HEADER_BYTES);
  const db = readFileSync(dbPath);
  const wal = readOptional(walPath);
  const after = statSync(dbPath, { bigint: true });
  return snapshotIsConsistent(before, after, head, wal) ? { db, wal } : null;
}

function sleepMs(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export interface Retried<T> {
  readonly value: T | null;
  readonly attempts: number;
}

/**
 * Calls `attempt` until it returns a value or `timeoutMs` has passed, at least once, pausing
 * 5, 10, 20, 40, then 50 ms in between. The pauses are timers, never a blocking wait: while Cline
 * checkpoints, the daemon keeps answering Prometheus scrapes and signals.
 */
export async function retryUntil<T>(
  attempt: () => T | null,
  timeoutMs: number,
  sleep: (ms: number) => Promise<void> = sleepMs,
): Promise<Retried<T>> {
  const deadline = Date.now() + timeoutMs;
  for (let attempts = 1, pause = 5; ; attempts++, pause = Math.min(pause * 2, 50)) {
    const value = attempt();
    if (value !== null) return { value, attempts };
    const left = deadline - Date.now();
    if (left <= 0) return { value: null, attempts };
    await sleep(Math.min(pause, left));
  }
}

/** A rollback-mode database with a hot journal may hold a half-written transaction. */
function hasHotJournal(dbPath: string, db: Buffer): boolean {
  if (db.length >= 20 && db[18] === 2) return false;
  const head = readHead(`${dbPath}-journal`, JOURNAL_MAGIC.length);
  return head?.equals(JOURNAL_MAGIC) === true;
}

function textOf(v: unknown): string | null {
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "bigint") return String(v);
  return null;
}

function flagOf(v: unknown): boolean {
  if (typeof v === "number") return v !== 0;
  if (typeof v === "bigint") return v !== 0n;
  if (typeof v === "string") return v !== "" && v !== "0";
  return false;
}

function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

type QueryOutcome =
  | { readonly kind: "rows"; readonly rows: IndexRow[]; readonly skipped: number }
  | { readonly kind: "no-table"; readonly why: string };

/** Runs the index query against an in-memory image. Throws SqliteError on a damaged image. */
function queryImage(image: Buffer): QueryOutcome {
  const Sqlite = requireModule("better-sqlite3") as typeof Database;
  const conn = new Sqlite(image, { readonly: true });
  try {
    conn.pragma("query_only = 1");
    const kind = conn
      .prepare("SELECT type FROM sqlite_schema WHERE name = 'sessions' COLLATE NOCASE")
      .pluck()
      .get();
    if (kind !== "table") {
      return {
        kind: "no-table",
        why: kind === undefined ? "has no sessions table" : `has sessions as a ${kind}`,
      };
    }
    const present = new Set(
      (conn.prepare("SELECT name FROM pragma_table_info('sessions')").pluck().all() as unknown[])
        .filter((n): n is string => typeof n === "string")
        .map((n) => n.toLowerCase()),
    );
    if (!present.has(SESSION_ID_COLUMN))
      return { kind: "no-table", why: "has a sessions table without session_id" };

    const wanted = SELECTED_COLUMNS.filter((c) => present.has(c));
    const sql = `SELECT ${wanted.map(quoteIdent).join(", ")} FROM sessions ORDER BY ${quoteIdent(SESSION_ID_COLUMN)}`;
    const raw = conn.prepare(sql).all() as Record<string, unknown>[];
    const rows: IndexRow[] = [];
    let skipped = 0;
    for (const r of raw) {
      const sessionId = textOf(r[SESSION_ID_COLUMN]);
      if (sessionId === null || sessionId === "") {
        skipped++;
        continue;
      }
      rows.push({
        sessionId,
        messagesPath: textOf(r[TEXT_COLUMNS.messagesPath]),
        cwd: textOf(r[TEXT_COLUMNS.cwd]),
        isSubagent: flagOf(r[IS_SUBAGENT_COLUMN]),
        parentSessionId: textOf(r[TEXT_COLUMNS.parentSessionId]),
        agentId: textOf(r[TEXT_COLUMNS.agentId]),
        provider: textOf(r[TEXT_COLUMNS.provider]),
        model: textOf(r[TEXT_COLUMNS.model]),
        startedAt: textOf(r[TEXT_COLUMNS.startedAt]),
      });
    }
    return { kind: "rows", rows, skipped };
  } finally {
    conn.close();
  }
}

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
    let taken: Retried<Snapshot>;
    try {
      taken = await retryUntil(() => trySnapshot(dbPath, walPath), timeoutMs);
    } catch (e) {
      return ioFailure(dbPath, e);
    }
    const snap = taken.value;
    if (snap === null) {
      return failure(
        "locked",
        dbPath,
        `${dbPath} kept changing while being read (${taken.attempts} attempts in ${timeoutMs} ms: Cline is checkpointing); it is read again on the next scan`,
      );
    }

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

    const replay = applyWal(snap.db, snap.wal);
    if (replay.error !== undefined) {
      return failure("corrupt", dbPath, `${walPath}: ${replay.error}; ${WALK_NOTE}`, "in-memory");
    }
    let outcome: QueryOutcome;
    try {
      outcome = queryImage(replay.image);
    } catch (e) {
      const code = errnoOf(e);
      return failure(
        "corrupt",
        dbPath,
        `${dbPath} is not a readable SQLite database (${code ?? "error"}: ${messageOf(e)}); restore it or let Cline recreate it; ${WALK_NOTE}`,
        "in-memory",
      );
    }
    if (outcome.kind === "no-table") {
      const what = snap.db.length === 0 && replay.framesApplied === 0 ? "is empty (0 bytes) and so " : "";
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
