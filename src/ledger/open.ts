import {
  chmodSync,
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { deriveInstanceId } from "./identity.ts";
import { LedgerError } from "./ledger-error.ts";
import { ledgerVersion, migrate } from "./migrate.ts";
import { SCHEMA_VERSION } from "./schema.ts";

export { LedgerError } from "./ledger-error.ts";

export const LEDGER_FILE = "ledger.sqlite";
const LOCK_FILE = "ledger.lock";
const PID_FILE = "ledger.pid";
/**
 * Present while a writer has the ledger open; removed by a clean close. Found at open, it
 * means the last writer died (crash, kill -9, power loss): the one time an integrity check
 * of the whole file is worth its O(ledger size) cost.
 */
const DIRTY_FILE = "ledger.dirty";
/**
 * The writer's SQLite page cache, in KiB (better-sqlite3's build defaults to 16 MB per
 * connection). The ledger's hot pages are the right-hand edges of its indexes, which fit in a
 * few MB; the rest is read once and served by the OS page cache. Measured on the 10,000-session
 * backfill: 16 MB -> 4 MB saves ~12 MB of peak RSS at the same CPU time (docs/performance.md).
 */
export const WRITER_CACHE_KIB = 4096;

export interface OpenOptions {
  /** Open for reading only, without the single-writer lock (report while a daemon runs). */
  readonly readOnly?: boolean;
  readonly now?: () => number;
  /** Cap the ledger's size in pages (SQLITE_FULL beyond it): simulates a full disk in tests. */
  readonly maxPageCount?: number;
  /**
   * Run `PRAGMA quick_check` (O(ledger size)) on this open: "auto" (default) only after an
   * unclean shutdown of the last writer, "always" on request (`--check-ledger`), "never".
   */
  readonly integrityCheck?: "auto" | "always" | "never";
  /**
   * What the ledger's data comes from besides this host (the Cline directories it reads): a NEW
   * ledger records an instance id derived from both (`deriveInstanceId`), so a ledger rebuilt
   * on the same machine for the same data keeps its identity. Absent: a random UUID.
   */
  readonly identity?: readonly string[];
}

/** An open ledger database: the connection, its single-writer lock and its schema version. */
export interface OpenedDb {
  readonly path: string;
  readonly db: Database.Database;
  readonly lock: WriterLock | undefined;
  /** `user_version` at open (after migration for a writer: always SCHEMA_VERSION). */
  readonly version: number;
  /** Whether this open ran the integrity check. */
  readonly checked: boolean;
}

/** Opens (creating and migrating if writable) the ledger in `stateDir`. Throws LedgerError with a fix. */
export function openLedgerDb(stateDir: string, opts: OpenOptions = {}): OpenedDb {
  const now = opts.now ?? Date.now;
  const path = join(stateDir, LEDGER_FILE);
  if (opts.readOnly) {
    if (!existsSync(path))
      throw new LedgerError(
        `no ledger at ${path} yet: run \`cline-otel report\` or \`cline-otel run\` once`,
        "io",
      );
    // A reader cannot tell a crashed writer from a running one: check only on request.
    const check = opts.integrityCheck === "always";
    const db = openDb(path, true, check);
    let version: number;
    try {
      version = ledgerVersion(db, path);
      if (version === 0)
        throw new LedgerError(
          `the ledger ${path} is still being created by another cline-otel process; try again in a moment`,
          "io",
        );
    } catch (e) {
      db.close();
      throw e;
    }
    return { path, db, lock: undefined, version, checked: check };
  }
  ensurePrivateDir(stateDir);
  const lock = acquireLock(stateDir);
  try {
    const created = !existsSync(path);
    if (created) closeSync(openSync(path, "a", 0o600));
    chmodSync(path, 0o600);
    const mode = opts.integrityCheck ?? "auto";
    const check = mode === "always" || (mode === "auto" && !created && lock.wasDirty);
    const db = openDb(path, false, check);
    try {
      const identity = opts.identity;
      // node:crypto loaded here, not with the module: every command opens the ledger, few create one.
      const randomUUID = () => process.getBuiltinModule("node:crypto").randomUUID();
      migrate(db, path, now, identity === undefined ? randomUUID : () => deriveInstanceId(identity));
      if (opts.maxPageCount !== undefined) db.pragma(`max_page_count = ${Math.trunc(opts.maxPageCount)}`);
    } catch (e) {
      db.close();
      throw e;
    }
    lock.markDirty();
    return { path, db, lock, version: SCHEMA_VERSION, checked: check };
  } catch (e) {
    lock.release(false);
    throw e;
  }
}

function ensurePrivateDir(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    // A state dir we own is private: it holds project paths and session ids.
    if ((statSync(dir).mode & 0o077) !== 0) chmodSync(dir, 0o700);
  } catch (e) {
    throw new LedgerError(
      `cannot use state dir ${dir}: ${(e as Error).message} (set --state-dir or CLINE_OTEL_STATE_DIR)`,
      "io",
    );
  }
}

/**
 * The single-writer lock: an exclusive SQLite lock on a side file, held for the life of the
 * process. The OS drops it when the process dies, so a crash never leaves a stale lock.
 */
export class WriterLock {
  /** Whether the previous writer left without a clean close (the dirty marker was there). */
  readonly wasDirty: boolean;

  private constructor(
    private readonly db: Database.Database,
    private readonly stateDir: string,
  ) {
    this.wasDirty = existsSync(join(stateDir, DIRTY_FILE));
  }

  /** From now on a death of this process is an unclean shutdown. */
  markDirty(): void {
    writeFileSync(join(this.stateDir, DIRTY_FILE), `${process.pid}\n`, { mode: 0o600 });
  }

  /** Releases the lock; `clean` clears the dirty marker (the ledger was closed properly). */
  release(clean: boolean): void {
    try {
      if (clean) rmSync(join(this.stateDir, DIRTY_FILE), { force: true });
    } finally {
      if (this.db.open) this.db.close();
    }
  }

  /** @internal */
  static fromDb(db: Database.Database, stateDir: string): WriterLock {
    return new WriterLock(db, stateDir);
  }
}

function acquireLock(stateDir: string): WriterLock {
  const lockPath = join(stateDir, LOCK_FILE);
  if (!existsSync(lockPath)) closeSync(openSync(lockPath, "a", 0o600));
  const db = new Database(lockPath, { timeout: 0 });
  try {
    db.pragma("journal_mode = DELETE");
    db.pragma("locking_mode = EXCLUSIVE");
    db.exec("CREATE TABLE IF NOT EXISTS holder (pid INTEGER); DELETE FROM holder;");
    db.prepare("INSERT INTO holder (pid) VALUES (@pid)").run({ pid: process.pid });
  } catch (e) {
    db.close();
    const code = (e as { code?: string }).code ?? "";
    if (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED")) {
      const pid = readHolderPid(stateDir);
      throw new LedgerError(
        `another cline-otel process${pid ? ` (pid ${pid})` : ""} is using the ledger in ${stateDir}; stop it, or give this one its own --state-dir`,
        "locked",
      );
    }
    throw new LedgerError(`cannot lock ${lockPath}: ${(e as Error).message}`, "io");
  }
  writeFileSync(join(stateDir, PID_FILE), `${process.pid}\n`, { mode: 0o600 });
  return WriterLock.fromDb(db, stateDir);
}

/** The pid file is informational only (the lock is the SQLite lock); a missing one is fine. */
export function readHolderPid(stateDir: string): number | undefined {
  const p = join(stateDir, PID_FILE);
  if (!existsSync(p)) return undefined;
  const n = Number.parseInt(readFileSync(p, "utf8").trim(), 10);
  return Number.isSafeInteger(n) && n > 0 ? n : undefined;
}

function openDb(path: string, readOnly: boolean, check: boolean): Database.Database {
  let db: Database.Database | undefined;
  try {
    db = new Database(path, { readonly: readOnly, fileMustExist: readOnly, timeout: 5000 });
    if (!readOnly) {
      // Refused before anything writes to it (a ledger of an older build is left as it is).
      ledgerVersion(db, path);
      db.pragma("journal_mode = WAL");
      db.pragma("synchronous = NORMAL");
      db.pragma(`cache_size = -${WRITER_CACHE_KIB}`);
    }
    if (check) {
      const result = db.pragma("quick_check", { simple: true });
      if (result !== "ok") throw Object.assign(new Error(String(result)), { code: "SQLITE_CORRUPT" });
    } else {
      // Without the check, a file that is not a database at all still fails here, at open.
      db.pragma("schema_version", { simple: true });
    }
    return db;
  } catch (e) {
    db?.close();
    if (e instanceof LedgerError) throw e;
    const code = (e as { code?: string }).code ?? "";
    if (code.startsWith("SQLITE_CORRUPT") || code.startsWith("SQLITE_NOTADB")) {
      throw new LedgerError(
        `the ledger ${path} is corrupt (${(e as Error).message}); it was left untouched. Move it aside (mv ${path} ${path}.corrupt) to start a new ledger, which re-reads all Cline history`,
        "corrupt",
      );
    }
    if (code.startsWith("SQLITE_BUSY")) {
      throw new LedgerError(`the ledger ${path} is busy; another cline-otel is writing it`, "locked");
    }
    throw new LedgerError(`cannot open the ledger ${path}: ${(e as Error).message}`, "io");
  }
}
