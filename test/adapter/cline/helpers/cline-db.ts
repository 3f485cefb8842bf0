/**
 * Builds real WAL-mode `sessions.db` files the way the Cline CLI does (DDL from docs/cline-format.md §6),
 * and fingerprints directories so tests can prove a reader created or changed nothing.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";

/** The `sessions` table exactly as cline@3.0.65 creates it. */
export const CLINE_SESSIONS_DDL = `CREATE TABLE sessions (
  session_id TEXT PRIMARY KEY, source TEXT NOT NULL, pid INTEGER NOT NULL, started_at TEXT NOT NULL,
  ended_at TEXT, exit_code INTEGER, status TEXT NOT NULL, status_lock INTEGER NOT NULL DEFAULT 0,
  interactive INTEGER NOT NULL, provider TEXT NOT NULL, model TEXT NOT NULL, cwd TEXT NOT NULL,
  workspace_root TEXT NOT NULL, team_name TEXT, enable_tools INTEGER NOT NULL, enable_spawn INTEGER NOT NULL,
  enable_teams INTEGER NOT NULL, parent_session_id TEXT, parent_agent_id TEXT, agent_id TEXT,
  conversation_id TEXT, is_subagent INTEGER NOT NULL DEFAULT 0, prompt TEXT, metadata_json TEXT,
  transcript_path TEXT NOT NULL DEFAULT '', hook_path TEXT NOT NULL, messages_path TEXT, updated_at TEXT NOT NULL);
CREATE TABLE subagent_spawn_queue (id INTEGER PRIMARY KEY AUTOINCREMENT, root_session_id TEXT NOT NULL,
  parent_agent_id TEXT NOT NULL, task TEXT, system_prompt TEXT, created_at TEXT NOT NULL, consumed_at TEXT);`;

/** A pre-migration table: none of the columns Cline later added with ALTER TABLE. */
export const OLD_SESSIONS_DDL = `CREATE TABLE sessions (
  session_id TEXT PRIMARY KEY, source TEXT NOT NULL, pid INTEGER NOT NULL, started_at TEXT NOT NULL,
  ended_at TEXT, exit_code INTEGER, status TEXT NOT NULL, status_lock INTEGER NOT NULL DEFAULT 0,
  interactive INTEGER NOT NULL, provider TEXT NOT NULL, model TEXT NOT NULL, cwd TEXT NOT NULL,
  team_name TEXT, enable_tools INTEGER NOT NULL, enable_spawn INTEGER NOT NULL, enable_teams INTEGER NOT NULL,
  prompt TEXT, hook_path TEXT NOT NULL, updated_at TEXT NOT NULL);`;

/** The migrations, in the order Cline's ALTER TABLEs append them. */
export const MIGRATED_COLUMNS_DDL = [
  "ALTER TABLE sessions ADD COLUMN workspace_root TEXT NOT NULL DEFAULT ''",
  "ALTER TABLE sessions ADD COLUMN parent_session_id TEXT",
  "ALTER TABLE sessions ADD COLUMN parent_agent_id TEXT",
  "ALTER TABLE sessions ADD COLUMN agent_id TEXT",
  "ALTER TABLE sessions ADD COLUMN conversation_id TEXT",
  "ALTER TABLE sessions ADD COLUMN is_subagent INTEGER NOT NULL DEFAULT 0",
  "ALTER TABLE sessions ADD COLUMN messages_path TEXT",
  "ALTER TABLE sessions ADD COLUMN metadata_json TEXT",
  "ALTER TABLE sessions ADD COLUMN transcript_path TEXT NOT NULL DEFAULT ''",
];

export type SqlValue = string | number | null;

/** A full row for CLINE_SESSIONS_DDL; `overrides` may also carry columns of older layouts. */
export function sessionRow(id: string, overrides: Record<string, SqlValue> = {}): Record<string, SqlValue> {
  return {
    session_id: id,
    source: "cli",
    pid: 4242,
    started_at: "2026-11-30T05:56:40.000Z",
    ended_at: null,
    exit_code: null,
    status: "completed",
    status_lock: 0,
    interactive: 0,
    provider: "anthropic",
    model: "claude-sonnet-4-5-20250929",
    cwd: `/work/${id}`,
    workspace_root: `/work/${id}`,
    team_name: null,
    enable_tools: 1,
    enable_spawn: 1,
    enable_teams: 1,
    parent_session_id: null,
    parent_agent_id: null,
    agent_id: null,
    conversation_id: null,
    is_subagent: 0,
    prompt: "PROMPT TEXT THAT MUST NEVER BE READ",
    metadata_json: JSON.stringify({ usage: { inputTokens: 9592, outputTokens: 37 } }),
    transcript_path: "",
    hook_path: "",
    messages_path: `/home/u/.cline/data/sessions/${id}/${id}.messages.json`,
    updated_at: "2026-11-30T05:56:41.000Z",
    ...overrides,
  };
}

/** Inserts rows, naming only the given keys (so it works for any table layout). */
export function insertRows(conn: Database.Database, rows: readonly Record<string, SqlValue>[]): void {
  for (const row of rows) {
    const cols = Object.keys(row);
    conn
      .prepare(`INSERT INTO sessions (${cols.join(", ")}) VALUES (${cols.map((c) => `@${c}`).join(", ")})`)
      .run(row);
  }
}

export interface WriterOptions {
  readonly ddl?: string;
  readonly pageSize?: number;
  /** 0 (default) keeps every commit in the -wal, as a Cline process that never checkpoints. */
  readonly autocheckpoint?: number;
}

/** Opens `<dir>/sessions.db` as Cline does: WAL mode, tables created. The caller closes it. */
export function openWriter(dir: string, opts: WriterOptions = {}): Database.Database {
  mkdirSync(dir, { recursive: true });
  const conn = new Database(join(dir, "sessions.db"));
  if (opts.pageSize !== undefined) conn.pragma(`page_size = ${opts.pageSize}`);
  conn.pragma("journal_mode = WAL");
  conn.pragma(`wal_autocheckpoint = ${opts.autocheckpoint ?? 0}`);
  conn.exec(opts.ddl ?? CLINE_SESSIONS_DDL);
  return conn;
}

/**
 * Writes rows from a child process that exits WITHOUT closing the database, which is how a
 * Cline process leaves `sessions.db-wal` and `sessions.db-shm` behind.
 */
export function writeAndAbandon(dir: string, rows: readonly Record<string, SqlValue>[]): void {
  mkdirSync(dir, { recursive: true });
  const script = `
    const Database = require(${JSON.stringify(BETTER_SQLITE3)});
    const conn = new Database(${JSON.stringify(join(dir, "sessions.db"))});
    conn.pragma("journal_mode = WAL");
    conn.pragma("wal_autocheckpoint = 0");
    conn.exec(${JSON.stringify(CLINE_SESSIONS_DDL)});
    for (const row of ${JSON.stringify(rows)}) {
      const cols = Object.keys(row);
      conn.prepare("INSERT INTO sessions (" + cols.join(",") + ") VALUES (" + cols.map((c) => "@" + c).join(",") + ")").run(row);
    }
    process.exit(0);`;
  execFileSync(process.execPath, ["-e", script], { stdio: "pipe" });
}

/** Resolved entry of better-sqlite3, for child processes that run plain CommonJS. */
export const BETTER_SQLITE3 = createRequire(import.meta.url).resolve("better-sqlite3");

export interface FileEntry {
  readonly size: number;
  readonly sha256: string;
}

/** Every entry of `dir` with size and content hash ("dir" for subdirectories). */
export function listing(dir: string): Record<string, FileEntry | "dir"> {
  const out: Record<string, FileEntry | "dir"> = {};
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) {
      out[name] = "dir";
      continue;
    }
    const bytes = readFileSync(p);
    out[name] = { size: bytes.length, sha256: createHash("sha256").update(bytes).digest("hex") };
  }
  return out;
}

export function tempDir(prefix = "cline-index-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/** Copies the named files of `from` (those that exist) into a fresh temp dir. */
export function copyFiles(from: string, names: readonly string[]): string {
  const to = tempDir("cline-index-copy-");
  for (const n of names) if (existsSync(join(from, n))) copyFileSync(join(from, n), join(to, n));
  return to;
}

/**
 * The oracle: what real SQLite sees in the given db/wal bytes, read from a private copy (our own
 * temp dir, where SQLite may create whatever it likes).
 */
export function sqliteOracle(db: Buffer, wal: Buffer | null): { sessionId: string; messagesPath: unknown }[] {
  const dir = tempDir("cline-index-oracle-");
  try {
    writeFileSync(join(dir, "sessions.db"), db);
    if (wal !== null) writeFileSync(join(dir, "sessions.db-wal"), wal);
    const conn = new Database(join(dir, "sessions.db"));
    try {
      return conn
        .prepare(
          "SELECT session_id AS sessionId, messages_path AS messagesPath FROM sessions ORDER BY session_id",
        )
        .all() as { sessionId: string; messagesPath: unknown }[];
    } finally {
      conn.close();
    }
  } finally {
    removeDir(dir);
  }
}

/** SQLite's WAL checksum, for re-encoding test WALs (validated by sqliteOracle accepting them). */
function checksum(bigEndian: boolean, buf: Buffer, start: number, len: number, seed: [number, number]) {
  let [s1, s2] = seed;
  for (let i = start; i < start + len; i += 8) {
    const x0 = bigEndian ? buf.readUInt32BE(i) : buf.readUInt32LE(i);
    const x1 = bigEndian ? buf.readUInt32BE(i + 4) : buf.readUInt32LE(i + 4);
    s1 = (s1 + x0 + s2) >>> 0;
    s2 = (s2 + x1 + s1) >>> 0;
  }
  return [s1, s2] as [number, number];
}

/**
 * Re-encodes every frame of a WAL with the given checksum byte order (and optionally another
 * format version), recomputing the header and cumulative frame checksums.
 */
export function reencodeWal(wal: Buffer, opts: { bigEndian: boolean; version?: number }): Buffer {
  const out = Buffer.from(wal);
  const pageSize = out.readUInt32BE(8);
  out.writeUInt32BE(opts.bigEndian ? 0x377f0683 : 0x377f0682, 0);
  if (opts.version !== undefined) out.writeUInt32BE(opts.version, 4);
  let sum = checksum(opts.bigEndian, out, 0, 24, [0, 0]);
  out.writeUInt32BE(sum[0], 24);
  out.writeUInt32BE(sum[1], 28);
  for (let off = 32; off + 24 + pageSize <= out.length; off += 24 + pageSize) {
    sum = checksum(opts.bigEndian, out, off, 8, sum);
    sum = checksum(opts.bigEndian, out, off + 24, pageSize, sum);
    out.writeUInt32BE(sum[0], off + 16);
    out.writeUInt32BE(sum[1], off + 20);
  }
  return out;
}
