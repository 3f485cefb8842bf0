/**
 * The index read from a private copy on disk instead of an image in memory (index-db.ts): the
 * snapshot of `sessions.db` is a file copy in a temp dir of our own (the kernel copies it: no byte
 * of it passes through this process), the committed WAL frames are written onto the copy, and a
 * read-only connection on the copy reads the rows page by page through the OS cache. Measured at
 * 30,000 sessions (a 17 MB index): the in-memory image costs the index twice (our buffer, then
 * SQLite's own copy of it), and glibc keeps much of it after it is freed (docs/performance.md,
 * "Nothing held for a next pass, and the index read from a private copy"). Nothing under Cline's
 * directories is opened for writing: the copy and its connection are ours, in a dir only this user
 * can enter, and deleted after the read (a killed read's copy by a later read: sweepStaleCopies).
 * Its bytes are never decoded here: the connection selects the allow-listed columns alone
 * (index-query.ts).
 */
import {
  chmodSync,
  closeSync,
  copyFileSync,
  fstatSync,
  ftruncateSync,
  lstatSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readSync,
  rmSync,
  writeSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { snapshotWith } from "./index-snapshot.ts";
import { committedWal, SQLITE_MAGIC } from "./index-wal.ts";

/** A consistent copy of the database file at `copy`, with the WAL bytes read alongside it. */
export interface CopySnapshot {
  readonly copy: string;
  readonly wal: Buffer | null;
}

/**
 * One attempt at a consistent (db, wal) snapshot, the database copied to `copy` (overwritten);
 * null when a writer moved underneath (the same test as trySnapshot's).
 */
export function tryCopySnapshot(dbPath: string, walPath: string, copy: string): CopySnapshot | null {
  const taken = snapshotWith(dbPath, walPath, () => {
    copyFileSync(dbPath, copy);
    // The copy keeps the source's mode: a read-only sessions.db (0444) would refuse the WAL's frames.
    chmodSync(copy, 0o600);
  });
  return taken === null ? null : { copy, wal: taken.wal };
}

/**
 * Writes the committed WAL frames (committedWal) onto the database file `fd`, sized to the last
 * commit, and switches its header to rollback mode (bytes 18/19: 2 -> 1), so a plain read-only
 * connection reads the committed state and makes no -wal or -shm. Returns the frames applied.
 */
export function applyWalToFile(fd: number, wal: Buffer | null): { framesApplied: number; error?: string } {
  const c = committedWal(wal);
  if (c.pages > 0 && wal !== null) {
    ftruncateSync(fd, c.pages * c.pageSize);
    // Frame order = commit order, so a later frame of the same page wins, as in SQLite's lookup.
    for (const f of c.frames) {
      if (f.pgno > c.pages) continue;
      writeSync(fd, wal, f.data, c.pageSize, (f.pgno - 1) * c.pageSize);
    }
  }
  if (fstatSync(fd).size >= 100) {
    const head = Buffer.alloc(20);
    readSync(fd, head, 0, 20, 0);
    if (head.subarray(0, 16).equals(SQLITE_MAGIC)) {
      if (head[18] === 2) writeSync(fd, Buffer.from([1]), 0, 1, 18);
      if (head[19] === 2) writeSync(fd, Buffer.from([1]), 0, 1, 19);
    }
  }
  return { framesApplied: c.frames.length, ...(c.error === undefined ? {} : { error: c.error }) };
}

/** The prefix of the private temp dirs: `<prefix><pid>-` and mkdtemp's six characters. */
export const COPY_DIR_PREFIX = "cline-otel-index-";

/** The pid a copy dir's name carries, or undefined for a name that is not one of ours. */
export function copyDirOwner(name: string): number | undefined {
  const m = /^cline-otel-index-(\d+)-[^-]{6}$/.exec(name);
  return m === null ? undefined : Number(m[1]);
}

/** Whether process `pid` is gone (signal 0: ESRCH). Another user's process (EPERM) is not. */
export function processGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "ESRCH";
  }
}

/**
 * Removes the copy dirs of reads that were killed before their own `dispose` (kill -9 in the
 * ~0.1 s a read holds one): this user's, whose process is gone. By the owner's pid, not by age: a
 * clock that jumps (or a filesystem whose times come from another clock) must never make a
 * running read's copy look old. Returns the dirs it could not remove, named in the caller's
 * problem, so a copy of the index never lingers unsaid.
 */
export function sweepStaleCopies(base: string, gone: (pid: number) => boolean = processGone): string[] {
  const uid = process.getuid?.();
  const kept: string[] = [];
  for (const name of readdirSync(base)) {
    const pid = copyDirOwner(name);
    if (pid === undefined || pid === process.pid || !gone(pid)) continue;
    const path = join(base, name);
    const s = lstatSync(path, { throwIfNoEntry: false });
    if (s === undefined || !s.isDirectory() || (uid !== undefined && s.uid !== uid)) continue;
    try {
      rmSync(path, { recursive: true, force: true });
    } catch (e) {
      kept.push(`${path} (${(e as NodeJS.ErrnoException).code ?? String(e)})`);
    }
  }
  return kept;
}

/**
 * A private temp dir (mode 0700) for one read's copy; `dispose` removes it and what it holds.
 * `stale`: leftovers of killed reads that could not be removed (sweepStaleCopies).
 */
export function privateCopyDir(): {
  readonly dir: string;
  readonly dispose: () => void;
  readonly stale: readonly string[];
} {
  const base = tmpdir();
  const stale = sweepStaleCopies(base);
  const dir = mkdtempSync(join(base, `${COPY_DIR_PREFIX}${process.pid}-`));
  return { dir, dispose: () => rmSync(dir, { recursive: true, force: true }), stale };
}

/** The copy's WAL applied in place (see applyWalToFile). */
export function prepareCopy(snap: CopySnapshot): { framesApplied: number; error?: string } {
  const fd = openSync(snap.copy, "r+");
  try {
    return applyWalToFile(fd, snap.wal);
  } finally {
    closeSync(fd);
  }
}
