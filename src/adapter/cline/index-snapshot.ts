/**
 * Opening the index without opening it: byte snapshots of `sessions.db` and its `-wal`
 * (O_RDONLY; `-shm` is never opened), checked for consistency and retried while a writer moves.
 */
import { closeSync, openSync, readFileSync, readSync, statSync } from "node:fs";
import { WAL_HEADER_BYTES } from "./index-wal.ts";

export const JOURNAL_MAGIC = Buffer.from([0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7]);

export function errnoOf(e: unknown): string | undefined {
  return typeof e === "object" && e !== null && "code" in e && typeof e.code === "string"
    ? e.code
    : undefined;
}

export function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** Reads the first `n` bytes of an optional file; null when it does not exist. */
export function readHead(path: string, n: number): Buffer | null {
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

export function readOptional(path: string): Buffer | null {
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

export interface Snapshot {
  readonly db: Buffer;
  readonly wal: Buffer | null;
}

/**
 * One attempt at a consistent snapshot: `takeDb` takes the database (its bytes, or a copy of the
 * file) between two stats, with the WAL's bytes; null when a writer moved underneath.
 */
export function snapshotWith<T>(
  dbPath: string,
  walPath: string,
  takeDb: () => T,
): { readonly db: T; readonly wal: Buffer | null } | null {
  const before = statSync(dbPath, { bigint: true });
  const head = readHead(walPath, WAL_HEADER_BYTES);
  const db = takeDb();
  const wal = readOptional(walPath);
  const after = statSync(dbPath, { bigint: true });
  return snapshotIsConsistent(before, after, head, wal) ? { db, wal } : null;
}

/** One attempt at a consistent (db, wal) byte snapshot; null when a writer moved underneath. */
export function trySnapshot(dbPath: string, walPath: string): Snapshot | null {
  return snapshotWith(dbPath, walPath, () => readFileSync(dbPath));
}

export function sleepMs(ms: number): Promise<void> {
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
export function hasHotJournal(dbPath: string, db: Buffer): boolean {
  if (db.length >= 20 && db[18] === 2) return false;
  const head = readHead(`${dbPath}-journal`, JOURNAL_MAGIC.length);
  return head?.equals(JOURNAL_MAGIC) === true;
}
