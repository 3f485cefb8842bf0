import { execFileSync, spawn, spawnSync } from "node:child_process";
import {
  chmodSync,
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  statSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import {
  applyWalToFile,
  COPY_DIR_PREFIX,
  copyDirOwner,
  processGone,
} from "../../../src/adapter/cline/index-copy.ts";
import {
  applyWal,
  type IndexReadResult,
  type IndexRow,
  readSessionIndex,
  retryUntil,
  SELECTED_COLUMNS,
  snapshotIsConsistent,
} from "../../../src/adapter/cline/index-db.ts";
import {
  BETTER_SQLITE3,
  CLINE_SESSIONS_DDL,
  copyFiles,
  insertRows,
  listing,
  MIGRATED_COLUMNS_DDL,
  OLD_SESSIONS_DDL,
  openWriter,
  reencodeWal,
  removeDir,
  type SqlValue,
  sessionRow,
  sqliteOracle,
  tempDir,
  writeAndAbandon,
} from "./helpers/cline-db.ts";

const DB = "sessions.db";
const WAL = "sessions.db-wal";
const SHM = "sessions.db-shm";
const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
const MODULE = join(REPO, "src/adapter/cline/index-db.ts");

const dirs: string[] = [];
const writers: Database.Database[] = [];
afterEach(() => {
  for (const w of writers.splice(0)) if (w.open) w.close();
  for (const d of dirs.splice(0)) {
    chmodTree(d);
    removeDir(d);
  }
});

function track(dir: string): string {
  dirs.push(dir);
  return dir;
}

function writer(dir: string, opts?: Parameters<typeof openWriter>[1]): Database.Database {
  const w = openWriter(dir, opts);
  writers.push(w);
  return w;
}

function chmodTree(dir: string): void {
  if (!existsSync(dir)) return;
  execFileSync("chmod", ["-R", "u+rwx", dir]);
}

/** The IndexRow a full Cline row must come back as. */
function expected(row: Record<string, SqlValue>): IndexRow {
  const s = (k: string): string | null => {
    const v = row[k];
    return v === undefined || v === null ? null : String(v);
  };
  return {
    sessionId: String(row.session_id),
    messagesPath: s("messages_path"),
    cwd: s("cwd"),
    isSubagent: row.is_subagent === 1,
    parentSessionId: s("parent_session_id"),
    agentId: s("agent_id"),
    provider: s("provider"),
    model: s("model"),
    startedAt: s("started_at"),
    source: s("source"),
  };
}

function expectedAll(rows: readonly Record<string, SqlValue>[]): IndexRow[] {
  return rows
    .map(expected)
    .sort((a, b) => (a.sessionId < b.sessionId ? -1 : a.sessionId > b.sessionId ? 1 : 0));
}

/** Reads and proves nothing in the directory changed: names, sizes and content hashes, -shm included. */
async function readUntouched(dir: string, opts?: { busyTimeoutMs?: number }): Promise<IndexReadResult> {
  const before = listing(dir);
  const result = await readSessionIndex(dir, opts);
  expect(listing(dir)).toEqual(before);
  return result;
}

/** Rows visible in the main database file alone, i.e. without its WAL. */
function mainFileIds(dir: string): string[] {
  const conn = new Database(applyWal(readFileSync(join(dir, DB)), null).image, { readonly: true });
  try {
    const hasTable = conn.prepare("SELECT 1 FROM sqlite_schema WHERE name = 'sessions'").get() !== undefined;
    if (!hasTable) return [];
    return conn.prepare("SELECT session_id FROM sessions ORDER BY session_id").pluck().all() as string[];
  } finally {
    conn.close();
  }
}

function omit(row: Record<string, SqlValue>, keys: readonly string[]): Record<string, SqlValue> {
  return Object.fromEntries(Object.entries(row).filter(([k]) => !keys.includes(k)));
}

const ids = (r: IndexReadResult): string[] => r.rows.map((x) => x.sessionId);

const subagent = sessionRow("1796018194209_nfmy0__agent_1796018200459_abc123", {
  is_subagent: 1,
  parent_session_id: "1796018194209_nfmy0",
  parent_agent_id: "agent_1796018194300_lead00",
  agent_id: "agent_1796018200459_abc123",
  conversation_id: "conv_1796018200459_abcdefg",
  messages_path: "/home/u/.cline/data/sessions/1796018194209_nfmy0/agent_1796018200459_abc123.messages.json",
});
const roots = [
  sessionRow("1796018194209_nfmy0"),
  sessionRow("1796018200459_9svp0", { provider: "openai-compatible" }),
];

describe("readSessionIndex: WAL states, nothing created or modified", () => {
  it("checkpointed WAL db with no -wal/-shm: all rows, while a naive read-only open creates both files", async () => {
    const dir = track(tempDir());
    const w = writer(dir);
    insertRows(w, [...roots, subagent]);
    w.close(); // last connection: SQLite checkpoints and deletes -wal and -shm
    expect(existsSync(join(dir, WAL))).toBe(false);
    expect(existsSync(join(dir, SHM))).toBe(false);
    const header = readFileSync(join(dir, DB));
    expect([header[18], header[19]]).toEqual([2, 2]); // still a WAL-mode database

    const result = await readUntouched(dir);
    expect(result).toMatchObject({ status: "ok", strategy: "private-copy", dbPath: join(dir, DB) });
    expect(result.problem).toBeUndefined();
    expect(result.rows).toEqual(expectedAll([...roots, subagent]));

    // The trap this module exists for: the obvious read-only open writes next to the database.
    const naive = track(copyFiles(dir, [DB]));
    const conn = new Database(join(naive, DB), { readonly: true, fileMustExist: true });
    conn.pragma("query_only = 1");
    expect(conn.prepare("SELECT count(*) FROM sessions").pluck().get()).toBe(3);
    conn.close();
    expect(existsSync(join(naive, WAL))).toBe(true);
    expect(existsSync(join(naive, SHM))).toBe(true);
  });

  it("live writer with rows only in the -wal; later commits are seen by the next read", async () => {
    const dir = track(tempDir());
    const w = writer(dir);
    insertRows(w, roots);
    expect(mainFileIds(dir)).toEqual([]); // committed, but only in sessions.db-wal
    expect(existsSync(join(dir, SHM))).toBe(true);

    const first = await readUntouched(dir);
    expect(first.status).toBe("ok");
    expect(first.rows).toEqual(expectedAll(roots));

    const later = sessionRow("1796018300000_later", { cwd: "/elsewhere" });
    insertRows(w, [later, subagent]);
    w.prepare("UPDATE sessions SET messages_path = ? WHERE session_id = ?").run(
      "/moved.json",
      roots[0]?.session_id,
    );
    w.prepare("DELETE FROM sessions WHERE session_id = ?").run(roots[1]?.session_id);
    const second = await readUntouched(dir);
    expect(second.rows).toEqual(
      expectedAll([
        { ...(roots[0] as Record<string, SqlValue>), messages_path: "/moved.json" },
        later,
        subagent,
      ]),
    );
    expect(mainFileIds(dir)).toEqual([]);
  });

  it("writer holding BEGIN IMMEDIATE with uncommitted (spilled) inserts: committed rows only, no hang", async () => {
    const dir = track(tempDir());
    const w = writer(dir);
    w.pragma("cache_size = 10"); // forces the open transaction's pages into the -wal before commit
    insertRows(w, roots);
    const walBefore = statSync(join(dir, WAL)).size;
    w.exec("BEGIN IMMEDIATE");
    const pending = Array.from({ length: 300 }, (_, i) =>
      sessionRow(`pending_${i}`, { metadata_json: "x".repeat(3000) }),
    );
    insertRows(w, pending);
    expect(statSync(join(dir, WAL)).size).toBeGreaterThan(walBefore + 500_000); // uncommitted frames on disk

    const started = Date.now();
    const during = await readUntouched(dir, { busyTimeoutMs: 200 });
    expect(Date.now() - started).toBeLessThan(5000);
    expect(during.status).toBe("ok");
    expect(during.rows).toEqual(expectedAll(roots));

    w.exec("COMMIT");
    expect(ids(await readUntouched(dir))).toEqual(
      expectedAll([...roots, ...pending]).map((r) => r.sessionId),
    );
  });

  it("-wal and -shm left behind by a writer that exited: rows read, -shm untouched", async () => {
    const dir = track(tempDir());
    writeAndAbandon(dir, [...roots, subagent]);
    expect(existsSync(join(dir, WAL))).toBe(true);
    expect(existsSync(join(dir, SHM))).toBe(true);
    expect(mainFileIds(dir)).toEqual([]);
    const result = await readUntouched(dir);
    expect(result.status).toBe("ok");
    expect(result.rows).toEqual(expectedAll([...roots, subagent]));
  });

  it("-wal present, -shm absent: rows read, no -shm created", async () => {
    const src = track(tempDir());
    writeAndAbandon(src, [...roots, subagent]);
    const dir = track(copyFiles(src, [DB, WAL]));
    expect(existsSync(join(dir, SHM))).toBe(false);
    const result = await readUntouched(dir);
    expect(result.status).toBe("ok");
    expect(result.rows).toEqual(expectedAll([...roots, subagent]));
    expect(existsSync(join(dir, SHM))).toBe(false);
  });

  it("a WAL with a bad header contributes nothing, as in SQLite", async () => {
    const src = track(tempDir());
    const w = writer(src);
    insertRows(w, roots);
    w.pragma("wal_checkpoint(PASSIVE)"); // roots now also in the main file
    insertRows(w, [subagent]); // only in the -wal, which is replaced by garbage below
    const dir = track(copyFiles(src, [DB]));
    writeFileSync(join(dir, WAL), Buffer.alloc(8192, 0xab));
    expect(outcome(() => sqliteOracle(readFileSync(join(dir, DB)), readFileSync(join(dir, WAL))))).toEqual(
      expectedAll(roots).map((r) => ({ sessionId: r.sessionId, messagesPath: r.messagesPath })),
    );
    const result = await readUntouched(dir);
    expect(result.status).toBe("ok");
    expect(result.rows).toEqual(expectedAll(roots));
  });
});

describe("readSessionIndex: the private copy", () => {
  /** Runs `fn` with TMPDIR set to `dir` (os.tmpdir() reads it on every call). */
  async function withTmp<T>(dir: string, fn: () => Promise<T>): Promise<T> {
    const was = process.env.TMPDIR;
    process.env.TMPDIR = dir;
    try {
      return await fn();
    } finally {
      if (was === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = was;
    }
  }

  it("reads a copy in a temp dir of its own, WAL frames applied, and leaves no file behind", async () => {
    const dir = track(tempDir());
    const w = writer(dir);
    insertRows(w, roots);
    w.pragma("wal_checkpoint(TRUNCATE)");
    // Rows only in the -wal, while the writer is open: they must be applied onto the copy.
    insertRows(w, [subagent]);
    try {
      const tmp = track(tempDir());
      const result = await withTmp(tmp, () => readUntouched(dir));
      expect(result).toMatchObject({ status: "ok", strategy: "private-copy" });
      expect(result.copyProblem).toBeUndefined();
      expect(result.rows).toEqual(expectedAll([...roots, subagent]));
      expect(readdirSync(tmp)).toEqual([]);
    } finally {
      w.close();
    }
  });

  it("without a writable temp dir: the same rows read in memory, and said once with the fix", async () => {
    const dir = track(tempDir());
    const w = writer(dir);
    insertRows(w, [...roots, subagent]);
    try {
      const copied = await readUntouched(dir);
      const gone = join(track(tempDir()), "no-such-dir");
      const result = await withTmp(gone, () => readUntouched(dir));
      expect(result).toMatchObject({ status: "ok", strategy: "in-memory" });
      expect(result.rows).toEqual(copied.rows);
      expect(result.copyProblem).toMatch(/no private temp dir \(ENOENT\).*read in memory instead.*TMPDIR/);
      expect(existsSync(gone)).toBe(false);
    } finally {
      w.close();
    }
  });

  it("a killed read's copy is removed by a later read; a running read's copy is kept whatever its times say", async () => {
    const dir = track(tempDir());
    const w = writer(dir);
    insertRows(w, roots);
    w.close();
    const tmp = track(tempDir());
    // A process that has exited (its pid is gone), and one that runs (our parent).
    const dead = spawnSync(process.execPath, ["-e", ""]).pid as number;
    expect(processGone(dead)).toBe(true);
    const killed = join(tmp, `${COPY_DIR_PREFIX}${dead}-abcdef`);
    const running = join(tmp, `${COPY_DIR_PREFIX}${process.ppid}-ghijkl`);
    const other = join(tmp, `${COPY_DIR_PREFIX}not-ours`);
    for (const d of [killed, running, other]) {
      mkdirSync(d);
      writeFileSync(join(d, DB), "x");
    }
    // Times from another clock (a jump, a network filesystem): the running read's dir looks a
    // year old, the killed one's brand new. Neither decides.
    const yearAgo = (Date.now() - 365 * 86_400_000) / 1000;
    utimesSync(running, yearAgo, yearAgo);
    const result = await withTmp(tmp, () => readUntouched(dir));
    expect(result).toMatchObject({ status: "ok", strategy: "private-copy" });
    expect(result.copyProblem).toBeUndefined();
    expect(readdirSync(tmp).sort()).toEqual(
      [`${COPY_DIR_PREFIX}${process.ppid}-ghijkl`, `${COPY_DIR_PREFIX}not-ours`].sort(),
    );
  });

  it("copyDirOwner reads the pid of our names only", () => {
    expect(copyDirOwner(`${COPY_DIR_PREFIX}123-a1B2c3`)).toBe(123);
    expect(copyDirOwner(`${COPY_DIR_PREFIX}abc-a1B2c3`)).toBeUndefined();
    expect(copyDirOwner(`${COPY_DIR_PREFIX}123-short`)).toBeUndefined();
    expect(copyDirOwner("cline-otel-indexes-123-a1B2c3")).toBeUndefined();
  });

  it("a fault of Cline's own file is named as before, not as a copy's", async () => {
    const dir = track(tempDir());
    writeFileSync(join(dir, DB), "not a database at all, just text that is long enough".repeat(5));
    const result = await readUntouched(dir);
    expect(result.status).toBe("corrupt");
    expect(result.copyProblem).toBeUndefined();
    expect(result.problem).toContain(join(dir, DB));
  });
});

describe("readSessionIndex: schema variants", () => {
  it("older schema without the migrated columns: those fields are null/false", async () => {
    const dir = track(tempDir());
    const w = writer(dir, { ddl: OLD_SESSIONS_DDL });
    const old = [
      "session_id",
      "source",
      "pid",
      "started_at",
      "status",
      "interactive",
      "provider",
      "model",
      "cwd",
      "enable_tools",
      "enable_spawn",
      "enable_teams",
      "prompt",
      "hook_path",
      "updated_at",
    ];
    const pick = (r: Record<string, SqlValue>) => Object.fromEntries(old.map((k) => [k, r[k] ?? null]));
    insertRows(w, roots.map(pick));
    const result = await readUntouched(dir);
    expect(result.status).toBe("ok");
    expect(result.rows).toEqual(
      expectedAll(roots).map((r) => ({ ...r, messagesPath: null, parentSessionId: null, agentId: null })),
    );
  });

  it("migrated columns appended at the end by ALTER TABLE are read by name", async () => {
    const dir = track(tempDir());
    const w = writer(dir, { ddl: OLD_SESSIONS_DDL });
    for (const ddl of MIGRATED_COLUMNS_DDL) w.exec(ddl);
    const cols = w.prepare("SELECT name FROM pragma_table_info('sessions')").pluck().all() as string[];
    expect(cols.slice(-9)).toEqual(MIGRATED_COLUMNS_DDL.map((ddl) => ddl.split(" ")[5]));
    expect(cols.indexOf("messages_path")).toBeGreaterThan(cols.indexOf("updated_at"));
    insertRows(w, [...roots, subagent]);
    const result = await readUntouched(dir);
    expect(result.rows).toEqual(expectedAll([...roots, subagent]));
  });

  it("columns in a shuffled order are read by name", async () => {
    const dir = track(tempDir());
    const w = writer(dir, {
      ddl: `CREATE TABLE sessions (model TEXT, messages_path TEXT, is_subagent INTEGER, cwd TEXT, agent_id TEXT,
        started_at TEXT, source TEXT, parent_session_id TEXT, provider TEXT, metadata_json TEXT, session_id TEXT PRIMARY KEY)`,
    });
    const rows = [...roots, subagent].map((r) =>
      Object.fromEntries(
        [
          "model",
          "messages_path",
          "is_subagent",
          "cwd",
          "agent_id",
          "started_at",
          "source",
          "parent_session_id",
          "provider",
          "metadata_json",
          "session_id",
        ].map((k) => [k, r[k] ?? null]),
      ),
    );
    insertRows(w, rows);
    expect((await readUntouched(dir)).rows).toEqual(expectedAll([...roots, subagent]));
  });

  it("never decodes metadata_json or prompt (here they fail when evaluated: SELECT * would throw)", async () => {
    expect(SELECTED_COLUMNS).not.toContain("metadata_json");
    expect(SELECTED_COLUMNS).not.toContain("prompt");
    const ddl = CLINE_SESSIONS_DDL.replace("prompt TEXT, metadata_json TEXT,", "");
    expect(ddl).not.toBe(CLINE_SESSIONS_DDL);
    const dir = track(tempDir());
    const w = writer(dir, { ddl });
    insertRows(
      w,
      roots.map((r) => omit(r, ["prompt", "metadata_json"])),
    );
    // Added after the rows, so only a reader that evaluates them hits the error.
    w.exec("ALTER TABLE sessions ADD COLUMN prompt TEXT GENERATED ALWAYS AS (json('{')) VIRTUAL");
    w.exec("ALTER TABLE sessions ADD COLUMN metadata_json TEXT GENERATED ALWAYS AS (json('[')) VIRTUAL");
    expect(() => w.prepare("SELECT * FROM sessions").all()).toThrow(/JSON/);
    const result = await readUntouched(dir);
    expect(result.status).toBe("ok");
    expect(result.rows).toEqual(expectedAll(roots));
  });

  it("returns messages_path as stored: relative, NULL, a directory", async () => {
    const dir = track(tempDir());
    const w = writer(dir);
    const rows = [
      sessionRow("a_relative", { messages_path: "a_relative/a_relative.messages.json" }),
      sessionRow("b_null", { messages_path: null }),
      sessionRow("c_dir", { messages_path: dir }),
      sessionRow("d_empty", { messages_path: "" }),
    ];
    insertRows(w, rows);
    const result = await readUntouched(dir);
    expect(result.rows.map((r) => r.messagesPath)).toEqual([
      "a_relative/a_relative.messages.json",
      null,
      dir,
      "",
    ]);
  });

  it("skips and reports rows without a session_id (TEXT PRIMARY KEY admits NULL)", async () => {
    const dir = track(tempDir());
    const w = writer(dir, { ddl: "CREATE TABLE sessions (session_id TEXT PRIMARY KEY, cwd TEXT)" });
    w.exec("INSERT INTO sessions VALUES (NULL, '/a'), ('s1', '/b'), (42, '/c')");
    const result = await readUntouched(dir);
    expect(result.status).toBe("ok");
    expect(result.rows.map((r) => [r.sessionId, r.cwd, r.messagesPath])).toEqual([
      ["42", "/c", null],
      ["s1", "/b", null],
    ]);
    expect(result.problem).toContain("skipped 1");
    expect(result.problem).toContain(join(dir, DB));
  });
});

describe("readSessionIndex: failures are results, never exceptions", () => {
  function realDbBytes(): Buffer {
    const src = track(tempDir());
    const w = writer(src);
    insertRows(
      w,
      Array.from({ length: 40 }, (_, i) => sessionRow(`s${i}`, { metadata_json: "m".repeat(400) })),
    );
    w.close();
    return readFileSync(join(src, DB));
  }

  function withDb(bytes: Buffer | string): string {
    const dir = track(tempDir());
    writeFileSync(join(dir, DB), bytes);
    return dir;
  }

  function expectProblem(
    result: IndexReadResult,
    status: IndexReadResult["status"],
    ...words: string[]
  ): void {
    expect(result.status).toBe(status);
    expect(result.rows).toEqual([]);
    expect(result.problem).toContain(result.dbPath);
    for (const w of words) expect(result.problem).toContain(w);
    expect(result.problem).not.toMatch(/\n/);
  }

  it("random bytes: corrupt", async () => {
    const bytes = Buffer.alloc(8192);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7919 + 13) % 251;
    const dir = withDb(bytes);
    expectProblem(await readUntouched(dir), "corrupt", "not a readable SQLite database");
  });

  it("truncated to its first 1000 bytes: corrupt", async () => {
    const real = realDbBytes();
    expect(real.length).toBeGreaterThan(8192);
    const dir = withDb(real.subarray(0, 1000));
    expectProblem(await readUntouched(dir), "corrupt", "SQLITE_CORRUPT");
  });

  it("truncated after its schema page: corrupt, not a partial answer", async () => {
    const dir = withDb(realDbBytes().subarray(0, 4096 + 100));
    expectProblem(await readUntouched(dir), "corrupt");
  });

  it("empty file: no sessions table, said to be empty", async () => {
    expectProblem(await readUntouched(withDb(Buffer.alloc(0))), "no-sessions-table", "empty (0 bytes)");
  });

  it("a text file: corrupt", async () => {
    expectProblem(
      await readUntouched(withDb("this is not a database\n".repeat(50))),
      "corrupt",
      "SQLITE_NOTADB",
    );
  });

  it("missing file and missing directory: missing", async () => {
    const dir = track(tempDir());
    const r1 = await readUntouched(dir);
    expectProblem(r1, "missing", "does not exist");
    expect(r1.strategy).toBe("none");
    const r2 = await readSessionIndex(join(dir, "no", "such"));
    expectProblem(r2, "missing", "does not exist");
    expect(existsSync(join(dir, "no"))).toBe(false);
  });

  it("sessions.db is a directory: unreadable; dbDir is a file: missing", async () => {
    const dir = track(tempDir());
    mkdirSync(join(dir, DB));
    expectProblem(await readUntouched(dir), "unreadable", "EISDIR");
    writeFileSync(join(dir, "file"), "x");
    expectProblem(await readSessionIndex(join(dir, "file")), "missing", "not a directory");
  });

  it("no sessions table, or sessions as a view: no-sessions-table", async () => {
    const dir = track(tempDir());
    const w = writer(dir, { ddl: "CREATE TABLE teams (id TEXT)" });
    expectProblem(await readUntouched(dir), "no-sessions-table", "has no sessions table");
    w.exec("CREATE VIEW sessions AS SELECT id AS session_id FROM teams");
    expectProblem(await readUntouched(dir), "no-sessions-table", "view");
  });

  it("a WAL of an unknown format version: corrupt (SQLite refuses it too)", async () => {
    const src = track(tempDir());
    writeAndAbandon(src, roots);
    const wal = reencodeWal(readFileSync(join(src, WAL)), { bigEndian: false, version: 3007001 });
    const dir = track(copyFiles(src, [DB]));
    writeFileSync(join(dir, WAL), wal);
    expectProblem(await readUntouched(dir), "corrupt", "unsupported WAL format version 3007001");
    expect(() => sqliteOracle(readFileSync(join(dir, DB)), wal)).toThrow();
  });

  it("a rollback-mode db with a hot journal: locked", async () => {
    const dir = track(tempDir());
    const conn = new Database(join(dir, DB));
    conn.exec(CLINE_SESSIONS_DDL);
    insertRows(conn, roots);
    conn.close();
    writeFileSync(
      join(dir, `${DB}-journal`),
      Buffer.concat([Buffer.from([0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7]), Buffer.alloc(504)]),
    );
    expectProblem(await readUntouched(dir), "locked", "unfinished transaction");
    // A zeroed (persist-mode) journal is not hot.
    writeFileSync(join(dir, `${DB}-journal`), Buffer.alloc(512));
    expect((await readUntouched(dir)).rows).toEqual(expectedAll(roots));
  });
});

/** Rows SQLite finds in the image applyWal builds. */
function queryReplay(db: Buffer, wal: Buffer | null): unknown[] {
  const conn = new Database(applyWal(db, wal).image, { readonly: true });
  try {
    return conn
      .prepare("SELECT session_id AS sessionId, messages_path AS messagesPath FROM sessions ORDER BY 1")
      .all();
  } finally {
    conn.close();
  }
}

/** Rows, or the fact of an error (a WAL cut below its checkpointed part is inconsistent for both). */
function outcome(read: () => unknown[]): unknown[] | "error" {
  try {
    return read();
  } catch (e) {
    if (!(e instanceof Database.SqliteError)) throw e;
    return "error";
  }
}

describe("applyWal against SQLite's own WAL recovery", () => {
  it("big-endian checksums (a WAL from a big-endian host) replay like SQLite", async () => {
    const src = track(tempDir());
    writeAndAbandon(src, [...roots, subagent]);
    const db = readFileSync(join(src, DB));
    const wal = reencodeWal(readFileSync(join(src, WAL)), { bigEndian: true });
    expect(wal.readUInt32BE(0)).toBe(0x377f0683);
    const oracle = sqliteOracle(db, wal);
    expect(oracle.map((r) => r.sessionId)).toEqual(expectedAll([...roots, subagent]).map((r) => r.sessionId));
    const dir = track(copyFiles(src, [DB]));
    writeFileSync(join(dir, WAL), wal);
    expect((await readUntouched(dir)).rows).toEqual(expectedAll([...roots, subagent]));
  });

  it("an empty main file with every page in the WAL", async () => {
    const src = track(tempDir());
    writeAndAbandon(src, roots);
    const wal = readFileSync(join(src, WAL));
    const replay = applyWal(Buffer.alloc(0), wal);
    expect(replay.framesApplied).toBeGreaterThan(0);
    const conn = new Database(replay.image, { readonly: true });
    expect(conn.prepare("SELECT session_id FROM sessions ORDER BY 1").pluck().all()).toEqual(
      expectedAll(roots).map((r) => r.sessionId),
    );
    conn.close();
  });

  it("does not mutate its inputs", async () => {
    const src = track(tempDir());
    writeAndAbandon(src, roots);
    const db = readFileSync(join(src, DB));
    const wal = readFileSync(join(src, WAL));
    const [db0, wal0] = [Buffer.from(db), Buffer.from(wal)];
    applyWal(db, wal);
    applyWal(db, null);
    expect(db.equals(db0) && wal.equals(wal0)).toBe(true);
  });

  it("owned: the caller's database buffer becomes the image when no frame applies (no copy of the index)", async () => {
    const src = track(tempDir());
    writeAndAbandon(src, roots);
    const db = readFileSync(join(src, DB));
    const wal = readFileSync(join(src, WAL));
    // Frames apply: a new image, the inputs untouched.
    const db0 = Buffer.from(db);
    const replayed = applyWal(db, wal, true);
    expect(replayed.framesApplied).toBeGreaterThan(0);
    expect(replayed.image).not.toBe(db);
    expect(db.equals(db0)).toBe(true);
    // No WAL: the very buffer, switched to rollback mode in place; read as the copy would be.
    const copy = applyWal(db, null).image;
    const own = applyWal(db, null, true).image;
    expect(own).toBe(db);
    expect(own.equals(copy)).toBe(true);
    expect([own[18], own[19]]).toEqual([1, 1]);
  });

  it("property: for random histories, page sizes, torn or damaged WAL tails, rows equal SQLite's", async () => {
    const op = fc.oneof(
      fc.record({
        kind: fc.constant("insert" as const),
        n: fc.integer({ min: 1, max: 30 }),
        pad: fc.nat(5000),
      }),
      fc.record({ kind: fc.constant("update" as const), pad: fc.nat(3000) }),
      fc.record({ kind: fc.constant("delete" as const), mod: fc.integer({ min: 2, max: 5 }) }),
      fc.constantFrom("PASSIVE", "RESTART", "TRUNCATE").map((m) => ({ kind: "ckpt" as const, m })),
      fc.constant({ kind: "vacuum" as const }), // shrinks: a commit smaller than earlier frames' pages
    );
    const damage = fc.oneof(
      fc.constant({ kind: "none" as const }),
      fc.record({ kind: fc.constant("cut" as const), at: fc.double({ min: 0, max: 1, noNaN: true }) }),
      fc.record({ kind: fc.constant("flip" as const), at: fc.double({ min: 0, max: 1, noNaN: true }) }),
    );
    let seq = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(512, 1024, 4096, 65536),
        fc.array(op, { minLength: 1, maxLength: 12 }),
        fc.boolean(),
        damage,
        async (pageSize, ops, spill, dmg) => {
          const dir = tempDir();
          try {
            const w = openWriter(dir, { pageSize });
            w.pragma("cache_size = 5");
            try {
              for (const o of ops) {
                if (o.kind === "insert") {
                  insertRows(
                    w,
                    Array.from({ length: o.n }, () =>
                      sessionRow(`p${String(seq++).padStart(6, "0")}`, {
                        metadata_json: "z".repeat(o.pad),
                      }),
                    ),
                  );
                } else if (o.kind === "update") {
                  w.prepare(
                    "UPDATE sessions SET messages_path = ?, metadata_json = ? WHERE rowid % 3 = 0",
                  ).run(`/u/${o.pad}`, "y".repeat(o.pad));
                } else if (o.kind === "delete") {
                  w.prepare("DELETE FROM sessions WHERE rowid % ? = 1").run(o.mod);
                } else if (o.kind === "vacuum") {
                  w.exec("VACUUM");
                } else {
                  w.pragma(`wal_checkpoint(${o.m})`);
                }
              }
              const committed = w.prepare("SELECT session_id FROM sessions ORDER BY 1").pluck().all();
              if (spill) {
                // An uncommitted transaction whose pages spill into the WAL, left open.
                w.exec("BEGIN IMMEDIATE");
                insertRows(w, [sessionRow(`zz_uncommitted_${seq++}`, { metadata_json: "u".repeat(20000) })]);
              }
              const walPath = join(dir, WAL);
              let wal = existsSync(walPath) ? readFileSync(walPath) : null;
              if (wal !== null && wal.length > 0 && dmg.kind !== "none") {
                const at = Math.floor(dmg.at * wal.length);
                wal = dmg.kind === "cut" ? wal.subarray(0, at) : Buffer.from(wal);
                if (dmg.kind === "flip" && at < wal.length) wal[at] = (wal[at] as number) ^ 0x5a;
              }
              const db = readFileSync(join(dir, DB));
              expect(outcome(() => queryReplay(db, wal))).toEqual(outcome(() => sqliteOracle(db, wal)));
              // The private copy's replay (frames written onto a file) is the image, byte for byte.
              const copy = join(dir, "copy.db");
              writeFileSync(copy, db);
              const fd = openSync(copy, "r+");
              let onFile: ReturnType<typeof applyWalToFile>;
              try {
                onFile = applyWalToFile(fd, wal);
              } finally {
                closeSync(fd);
              }
              const inMemory = applyWal(db, wal);
              expect(onFile.error).toBe(inMemory.error);
              expect(onFile.framesApplied).toBe(inMemory.framesApplied);
              expect(readFileSync(copy).equals(inMemory.image)).toBe(true);
              if (dmg.kind === "none") {
                // Undamaged: exactly what the writer itself sees as committed.
                const read = await readSessionIndex(dir);
                expect(read.status).toBe("ok");
                expect(ids(read)).toEqual(committed);
              }
            } finally {
              if (w.inTransaction) w.exec("ROLLBACK");
              w.close();
            }
          } finally {
            removeDir(dir);
          }
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe("readSessionIndex under a concurrent writer process", () => {
  it("every read is ok and sees a committed prefix while the writer inserts and checkpoints", async () => {
    const dir = track(tempDir());
    const w = writer(dir);
    w.close();
    const child = spawn(
      process.execPath,
      [
        "-e",
        `const Database = require(${JSON.stringify(BETTER_SQLITE3)});
         const conn = new Database(${JSON.stringify(join(dir, DB))});
         conn.pragma("journal_mode = WAL"); conn.pragma("wal_autocheckpoint = 20");
         const ins = conn.prepare("INSERT INTO sessions (session_id, source, pid, started_at, status, interactive, provider, model, cwd, workspace_root, enable_tools, enable_spawn, enable_teams, hook_path, messages_path, metadata_json, updated_at) VALUES (?, 'cli', 1, 't', 'completed', 0, 'p', 'm', '/c', '/c', 1, 1, 1, '', ?, ?, 't')");
         const pause = new Int32Array(new SharedArrayBuffer(4));
         const end = Date.now() + 2500;
         for (let i = 0; Date.now() < end; i++) {
           ins.run(String(i).padStart(7, "0"), "/m/" + i, "x".repeat(500 + ((i * 977) % 5000)));
           if (i === 0) process.stdout.write("ready\\n");
           if (i % 37 === 36) conn.pragma("wal_checkpoint(RESTART)");
           if (i % 101 === 100) conn.pragma("wal_checkpoint(TRUNCATE)");
           Atomics.wait(pause, 0, 0, 1);
         }
         conn.close();`,
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    const exited = new Promise<number | null>((ok) => child.on("exit", ok));
    await new Promise<void>((ok, fail) => {
      child.stdout.once("data", () => ok());
      child.once("exit", (code) => fail(new Error(`writer exited early (${code})`)));
    });

    const results: string[][] = [];
    const statuses = new Map<string, number>();
    const until = Date.now() + 2000;
    while (Date.now() < until) {
      const r = await readSessionIndex(dir);
      statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
      results.push(ids(r));
    }
    expect(await exited).toBe(0);

    expect([...statuses.keys()]).toEqual(["ok"]);
    let previous = 0;
    for (const got of results) {
      expect(got).toEqual(Array.from({ length: got.length }, (_, i) => String(i).padStart(7, "0")));
      expect(got.length).toBeGreaterThanOrEqual(previous);
      previous = got.length;
    }
    expect(new Set(results.map((r) => r.length)).size).toBeGreaterThan(5); // really ran concurrently
    // After the writer closed (checkpointed, deleted -wal/-shm) every committed row is still there.
    const final = await readUntouched(dir);
    expect(final.rows.length).toBeGreaterThanOrEqual(previous);
    expect(existsSync(join(dir, WAL))).toBe(false);
  });
});

describe("snapshotIsConsistent", () => {
  const mark = { ino: 7n, dev: 1n, size: 4096n, mtimeNs: 1_000_000n, ctimeNs: 1_000_000n };
  const header = (salt: number): Buffer => {
    const h = Buffer.alloc(32);
    h.writeUInt32BE(0x377f0682, 0);
    h.writeUInt32BE(salt, 16);
    return h;
  };
  const walOf = (salt: number, frames: number): Buffer =>
    Buffer.concat([header(salt), Buffer.alloc(frames * 4120, 1)]);

  it("accepts an unchanged db with the same WAL generation, even if frames were appended", async () => {
    expect(snapshotIsConsistent(mark, { ...mark }, null, null)).toBe(true);
    expect(snapshotIsConsistent(mark, mark, header(1), walOf(1, 0))).toBe(true);
    expect(snapshotIsConsistent(mark, mark, header(1), walOf(1, 5))).toBe(true);
    expect(snapshotIsConsistent(mark, mark, Buffer.alloc(0), Buffer.alloc(0))).toBe(true);
  });

  it("rejects a changed db file, a restarted, truncated, created or deleted WAL", async () => {
    for (const k of ["ino", "dev", "size", "mtimeNs", "ctimeNs"] as const) {
      expect(snapshotIsConsistent(mark, { ...mark, [k]: mark[k] + 1n }, null, null)).toBe(false);
    }
    expect(snapshotIsConsistent(mark, mark, header(1), walOf(2, 3))).toBe(false); // restart: new salt
    expect(snapshotIsConsistent(mark, mark, header(1), Buffer.alloc(0))).toBe(false); // TRUNCATE checkpoint
    expect(snapshotIsConsistent(mark, mark, Buffer.alloc(0), walOf(1, 1))).toBe(false); // new generation
    expect(snapshotIsConsistent(mark, mark, header(1).subarray(0, 12), walOf(1, 1))).toBe(false); // header mid-write
    expect(snapshotIsConsistent(mark, mark, null, walOf(1, 1))).toBe(false); // WAL appeared
    expect(snapshotIsConsistent(mark, mark, header(1), null)).toBe(false); // WAL deleted on close
  });

  it("retryUntil: returns the first value, gives up after the timeout, always tries once", async () => {
    const sleeps: number[] = [];
    const sleep = (ms: number): Promise<void> => {
      sleeps.push(ms);
      return new Promise((r) => setTimeout(r, ms));
    };
    let calls = 0;
    expect(await retryUntil(() => (++calls >= 3 ? "snap" : null), 1000, sleep)).toEqual({
      value: "snap",
      attempts: 3,
    });
    expect(sleeps).toEqual([5, 10]);

    sleeps.length = 0;
    const started = Date.now();
    // 400 ms: the first four pauses (75 ms) stay whole even when a loaded machine's timers overshoot
    // (at 120 ms, CI's load once clipped the fourth to what was left: 38).
    const gaveUp = await retryUntil(() => null, 400, sleep);
    expect(gaveUp.value).toBeNull();
    expect(Date.now() - started).toBeGreaterThanOrEqual(399);
    expect(gaveUp.attempts).toBe(sleeps.length + 1);
    expect(sleeps.slice(0, 4)).toEqual([5, 10, 20, 40]);
    expect(Math.max(...sleeps)).toBeLessThanOrEqual(50);

    calls = 0;
    const never = (): null => {
      calls++;
      return null;
    };
    expect(await retryUntil(never, 0, sleep)).toEqual({ value: null, attempts: 1 });
    expect(calls).toBe(1);
  });

  it("retryUntil: the event loop keeps running while it waits (a scrape is answered meanwhile)", async () => {
    // A timer due in 10 ms must fire while the reader retries for 300 ms, not after.
    let firedAt: number | undefined;
    const started = Date.now();
    setTimeout(() => {
      firedAt = Date.now() - started;
    }, 10);
    const r = await retryUntil(() => null, 300);
    expect(r.value).toBeNull();
    expect(r.attempts).toBeGreaterThan(2);
    expect(firedAt).toBeDefined();
    expect(firedAt as number).toBeLessThan(250);
  });
});

describe("readSessionIndex as a non-root user", () => {
  /** Runs readSessionIndex in a child process as `nobody` (or as ourselves when not root). */
  function readAsOtherUser(dbDir: string): IndexReadResult {
    const isRoot = process.getuid?.() === 0;
    const node = [
      "--import",
      "tsx",
      "--input-type=module",
      "-e",
      `import { readSessionIndex } from ${JSON.stringify(MODULE)};
       process.stdout.write(JSON.stringify(await readSessionIndex(${JSON.stringify(dbDir)})));`,
    ];
    const [cmd, args] = isRoot
      ? ["setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", process.execPath, ...node]]
      : [process.execPath, node];
    const out = execFileSync(cmd as string, args as string[], { cwd: REPO, encoding: "utf8" });
    return JSON.parse(out) as IndexReadResult;
  }

  it("reads a read-only dir (db + wal, no shm) and creates nothing; an unreadable file is reported", async () => {
    const parent = track(tempDir());
    chmodSync(parent, 0o755);
    const src = join(parent, "src");
    writeAndAbandon(src, [...roots, subagent]);
    const ro = join(parent, "ro");
    mkdirSync(ro);
    writeFileSync(join(ro, DB), readFileSync(join(src, DB)));
    writeFileSync(join(ro, WAL), readFileSync(join(src, WAL)));
    chmodSync(join(ro, DB), 0o444);
    chmodSync(join(ro, WAL), 0o444);
    chmodSync(ro, 0o555);
    const before = listing(ro);
    const ok = readAsOtherUser(ro);
    expect(ok.status).toBe("ok");
    expect(ok.rows).toEqual(expectedAll([...roots, subagent]));
    // From the private copy: it keeps the file's mode 0444, so it is made writable before the
    // WAL's frames are written onto it (a read-only tree fell back to memory before).
    expect(ok.strategy).toBe("private-copy");
    expect(ok.copyProblem).toBeUndefined();
    expect(listing(ro)).toEqual(before);

    chmodSync(ro, 0o755);
    chmodSync(join(ro, WAL), 0o000);
    chmodSync(ro, 0o555);
    const denied = readAsOtherUser(ro);
    expect(denied.status).toBe("unreadable");
    expect(denied.problem).toContain("EACCES");
    expect(denied.problem).toContain(join(ro, DB));
    expect(listing(ro)).toEqual(before);
  });
});

describe("one index reader for both surfaces", () => {
  it("a pass over the messages and captures surfaces reads sessions.db once per change", async () => {
    const { createClineAdapter } = await import("../../../src/adapter/cline/adapter.ts");
    const { createClineCapturesAdapter, withCaptures } = await import(
      "../../../src/adapter/cline/captures/collect.ts"
    );
    const { cachedIndexReader } = await import("../../../src/adapter/cline/index-db.ts");
    const dir = track(tempDir());
    const dbDir = join(dir, "db");
    mkdirSync(dbDir);
    const w = writer(dbDir);
    insertRows(w, roots);
    w.close();
    const sessions = join(dir, "sessions");
    mkdirSync(sessions);
    const paths = {
      sessions: { path: sessions, origin: "flag", via: "test" },
      db: { path: dbDir, origin: "flag", via: "test" },
    } as unknown as Parameters<typeof createClineAdapter>[0];
    let reads = 0;
    const readIndex = cachedIndexReader((d) => {
      reads++;
      return readSessionIndex(d);
    });
    const both = withCaptures(
      createClineAdapter(paths, readIndex),
      createClineCapturesAdapter({ dirs: [], cline: paths, readIndex }),
    );
    await both.discover();
    expect(reads).toBe(1);
    await both.discover();
    expect(reads).toBe(1);
    const again = new Database(join(dbDir, DB));
    insertRows(again, [sessionRow("1796018299999_zzzzz")]);
    again.close();
    await both.discover();
    expect(reads).toBe(2);
  });
});
